#!/usr/bin/env python3
"""Second case generator: different templates, languages and seed from
graders/corpus/make_corpus.py, so a fix that only fits the first
generator's phrasing shows here (issue 18).

Writes generator2.jsonl next to this script, one case per line in the
format import.py writes ({"source": "generator-2", "class", "label",
"text", "ext", "origin"}). Deterministic (fixed seed). Every secret is
random characters in a provider's published shape; none is real.

Positives are secrets written the way each language writes them (Go
consts, Java fields, Kotlin vals, TS objects, Terraform/HCL, Dockerfile
ENV, shell exports, .env, JSON, YAML). Negatives are what an honest fix
or ordinary code writes next to them: hashes, UUIDs, commit ids in
changelogs, public keys, placeholders, infrastructure references
(Terraform var./data., Helm values, Actions secrets, secretKeyRef, Vault
paths), URLs without credentials, word-pair config values, test fixtures,
masked values and environment lookups.
"""

import hashlib
import json
import os
import random
import string
import uuid

SEED = 8675309
R = random.Random(SEED)
HERE = os.path.dirname(os.path.abspath(__file__))
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
# Substrings scanners read as placeholders: a random draw containing one
# would be a mislabelled positive, so such draws are redrawn.
BANNED = ("example", "test", "fake", "dummy", "sample", "xxx", "redact", "changeme",
          "your", "1234", "abcd", "token", "secret", "passw", "null", "none", "true",
          "false", "user", "root", "mock", "demo")


def rs(n, alpha=ALNUM):
    while True:
        s = "".join(R.choice(alpha) for _ in range(n))
        if not any(b in s.lower() for b in BANNED) and (not any(c.isdigit() for c in alpha) or any(c.isdigit() for c in s)):
            return s


SECRETS = {
    "aws": lambda: "AKIA" + rs(16, string.ascii_uppercase + "234567"),
    "aws-secret": lambda: rs(40, B64),
    "github": lambda: "ghp_" + rs(36),
    "slack": lambda: f"xoxb-{R.randint(10**11, 10**12 - 1)}-{R.randint(10**11, 10**12 - 1)}-{rs(24)}",
    "stripe": lambda: "sk_live_" + rs(24),
    "google": lambda: "AIza" + rs(35, ALNUM + "-_"),
    "sendgrid": lambda: f"SG.{rs(22, ALNUM + '-_')}.{rs(43, ALNUM + '-_')}",
    "openai": lambda: f"sk-proj-{rs(48, ALNUM + '-_')}",
    "npm": lambda: "npm_" + rs(36),
    "generic": lambda: rs(R.randint(20, 40), ALNUM + "!#%^&*-_"),
    "hexkey": lambda: rs(32, HEX),
}

# name -> key names a program would give that secret
KEYS = {
    "aws": ["AWS_ACCESS_KEY_ID", "awsAccessKeyId", "aws_access_key"],
    "aws-secret": ["AWS_SECRET_ACCESS_KEY", "awsSecretAccessKey", "aws_secret_key"],
    "github": ["GITHUB_TOKEN", "githubToken", "gh_token"],
    "slack": ["SLACK_BOT_TOKEN", "slackToken", "slack_bot_token"],
    "stripe": ["STRIPE_SECRET_KEY", "stripeKey", "stripe_api_key"],
    "google": ["GOOGLE_API_KEY", "mapsApiKey", "google_api_key"],
    "sendgrid": ["SENDGRID_API_KEY", "sendgridKey", "mail_api_key"],
    "openai": ["OPENAI_API_KEY", "openaiKey", "llm_api_key"],
    "npm": ["NPM_TOKEN", "npmToken", "registry_token"],
    "generic": ["DB_PASSWORD", "dbPassword", "admin_password", "clientSecret", "SIGNING_SECRET"],
    "hexkey": ["API_KEY", "apiKey", "webhook_secret", "encryptionKey"],
}

# language -> (ext, template with {k} key and {v} value)
LANGS = {
    "go": ("go", ['const {k} = "{v}"', '\t{k} := "{v}"', 'var {k} = `{v}`',
                  'cfg := Config{{{k}: "{v}"}}']),
    "java": ("java", ['private static final String {k} = "{v}";',
                      'props.setProperty("{k}", "{v}");']),
    "kotlin": ("kt", ['val {k} = "{v}"', 'const val {k}: String = "{v}"']),
    "ts": ("ts", ['export const {k} = "{v}";', "  {k}: '{v}',", 'const {k}: string = `{v}`;']),
    "yaml": ("yaml", ["{k}: {v}", '  {k}: "{v}"', "    - name: {k}\n      value: \"{v}\""]),
    "terraform": ("tf", ['  {k} = "{v}"', 'variable "x" {{\n  default = "{v}"\n}}']),
    "dockerfile": ("Dockerfile", ["ENV {k}={v}", "ARG {k}={v}"]),
    "env": ("env", ["{k}={v}", 'export {k}="{v}"']),
    "json": ("json", ['{{\n  "{k}": "{v}"\n}}', '  "{k}": "{v}",']),
    "shell": ("sh", ['export {k}="{v}"', "{k}='{v}' ./deploy.sh", 'curl -H "Authorization: Bearer {v}" https://api.corp.io']),
}


def positives():
    out = []
    for kind, make in SECRETS.items():
        for lang, (ext, templates) in LANGS.items():
            for tpl in templates:
                if "{k}" not in tpl and kind not in ("github", "openai", "slack"):
                    continue
                k = R.choice(KEYS[kind])
                if ext == "env" or ext == "Dockerfile" or lang == "shell":
                    k = k.upper() if k.isupper() or "_" in k else k
                out.append(("secret", f"{kind}", tpl.format(k=k, v=make()), ext))
    # connection strings with userinfo, private keys
    for lang, ext in (("env", "env"), ("yaml", "yaml"), ("go", "go"), ("json", "json")):
        for scheme in ("postgres", "mysql", "mongodb+srv", "redis", "amqp"):
            url = f"{scheme}://svc_{rs(4, string.ascii_lowercase)}:{rs(18)}@db-{R.randint(1, 9)}.corp.internal:5432/app"
            text = {"env": f"DATABASE_URL={url}", "yaml": f"  url: {url}",
                    "go": f'dsn := "{url}"', "json": f'"connection": "{url}"'}[lang]
            out.append(("secret", "connection-string", text, ext))
    body = "\n".join(rs(64, B64) for _ in range(6))
    for header in ("RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"):
        out.append(("secret", "private-key", f"-----BEGIN {header}-----\n{body}\n-----END {header}-----\n", "pem"))
    return out


WORDS = ["tenant", "window", "orders", "billing", "refresh", "session", "cache", "shadow",
         "primary", "replica", "rotation", "daily", "weekly", "north", "blue", "green"]


def negatives():
    out = []

    def add(cls, text, ext):
        out.append(("none", cls, text, ext))

    for _ in range(8):
        sha = rs(40, HEX)
        add("commit-id", f"- Fix token refresh race in session middleware ({sha})", "md")
        add("commit-id", f"* Rotate leaked credentials, fixes {sha[:12]}", "md")
        add("commit-id", f"Reverts commit {sha}.", "txt")
    for _ in range(6):
        add("hash", f'  integrity "sha512-{rs(86, B64)}=="', "lock")
        add("hash", f"{hashlib.sha256(rs(10).encode()).hexdigest()}  dist/app.tar.gz", "txt")
        add("hash", f'checksum: "sha256:{hashlib.sha256(rs(12).encode()).hexdigest()}"', "yaml")
        add("uuid", f'tenantId: "{uuid.UUID(int=R.getrandbits(128))}"', "yaml")
        add("uuid", f'String requestId = "{uuid.UUID(int=R.getrandbits(128))}";', "java")
    for _ in range(4):
        key = rs(68, B64)
        add("public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{key} deploy@ci", "pub")
        add("public-key", f'  deploy_public_key: "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{rs(200, B64)} ops@corp"', "yaml")
        add("public-key", "-----BEGIN PUBLIC KEY-----\n" + "\n".join(rs(64, B64) for _ in range(4)) + "\n-----END PUBLIC KEY-----", "pem")
    for k in ("db_password", "api_key", "stripe_secret_key", "github_token", "client_secret"):
        add("infra-reference", f"  password = var.{k}", "tf")
        add("infra-reference", f"  secret_string = data.aws_secretsmanager_secret_version.{k}.secret_string", "tf")
        add("infra-reference", f"  value = local.{k}", "tf")
        add("infra-reference", f"  {k}: {{{{ .Values.{k.replace('_', '')} }}}}", "yaml")
        add("infra-reference", f"          {k.upper()}: ${{{{ secrets.{k.upper()} }}}}", "yaml")
        add("infra-reference", f"{k.upper()}=vault:secret/data/prod/app#{k}", "env")
        add("infra-reference", f'    valueFrom:\n      secretKeyRef:\n        name: app-{k.replace("_", "-")}\n        key: {k}', "yaml")
        add("env-lookup", f'{k} := os.Getenv("{k.upper()}")', "go")
        add("env-lookup", f'val {k} = System.getenv("{k.upper()}")', "kt")
        add("env-lookup", f"const {k} = process.env.{k.upper()};", "ts")
        add("env-lookup", f'{k.upper()}="${{{k.upper()}:?must be set}}"', "sh")
    for _ in range(5):
        host = f"{R.choice(WORDS)}-db.{R.choice(WORDS)}.internal"
        add("url-no-userinfo", f'tokenUrl: "https://auth.{host}/oauth2/token"', "yaml")
        add("url-no-userinfo", f'dbEndpoint = "postgres://{host}:5432/{R.choice(WORDS)}"', "go")
        add("url-no-userinfo", f"AUTH_SERVER_URL=https://{host}/realms/{R.choice(WORDS)}", "env")
    for _ in range(8):
        a, b = R.sample(WORDS, 2)
        add("word-value", f'token_list: "{a}-{b}"', "yaml")
        add("word-value", f'secret_name = "{a}-{b}-credentials"', "tf")
        add("word-value", f'private val passwordPolicy = "{a}_{b}"', "kt")
        add("word-value", f'  "apiKeyHeader": "X-{a.title()}-{b.title()}-Key",', "json")
    for cls_name in ("OAuth2AccessTokenResponseClientFactory", "JwtSecretKeyProvider", "DefaultPasswordEncoderFactories"):
        add("class-name", f"tokenProvider: {cls_name}", "yaml")
        add("class-name", f'private final String secretProvider = "{cls_name}";', "java")
    for v in ("test1234", "mock-jwt-token", "test-token-123", "ghp_" + "0" * 36, "sk_test_" + "x" * 24,
              "fake-api-key", "dummy_password", "<your-api-key>", "REPLACE_ME", "${API_KEY}",
              "changeme", "********", "sk_live_" + "•" * 4 + "9506", "AKIA" + "X" * 16, "xoxb-your-token"):
        add("placeholder-or-fixture", f'"password": "{v}"', "json")
        add("placeholder-or-fixture", f"API_KEY={v}", "env")
    for _ in range(4):
        add("test-fixture", f'  it("rejects a bad token", () => expect(verify("{rs(8, string.ascii_lowercase)}")).toBe(false));', "ts")
    for ext, line in (("Dockerfile", "ENV NODE_ENV=production"), ("sh", 'export PATH="$HOME/.local/bin:$PATH"'),
                      ("yaml", "image: ghcr.io/corp/api@sha256:" + rs(64, HEX)), ("go", 'const tokenHeader = "Authorization"'),
                      ("java", 'private static final String PASSWORD_FIELD = "password";'),
                      ("kt", 'const val SECRET_KEY_ALIAS = "app_signing_key"'),
                      ("tf", 'resource "aws_secretsmanager_secret" "db_password" {'),
                      ("json", '"publicKey": "pk_live_' + rs(24) + '"')):
        add("ordinary-code", line, ext)
    return out


def main():
    rows = positives() + negatives()
    path = os.path.join(HERE, "generator2.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for label, cls, text, ext in rows:
            f.write(json.dumps({"source": "generator-2", "class": cls, "label": label, "text": text,
                                "ext": ext, "origin": f"make_cases.py seed {SEED}"},
                               ensure_ascii=False, sort_keys=True) + "\n")
    pos = sum(r[0] == "secret" for r in rows)
    print(f"generator-2: {len(rows)} cases ({pos} secret, {len(rows) - pos} none)")


if __name__ == "__main__":
    main()
