#!/usr/bin/env python3
"""Generates the labelled accuracy corpus for the secret scanner.

Deterministic: a fixed seed drives every value, so re-running this script
rewrites files/ and labels.json byte for byte. Every secret is synthetic
(random characters in the provider's published shape); none is a real
credential. Run from anywhere: `python3 graders/corpus/make_corpus.py`.

Outputs, next to this script:
  files/          ~100 realistic files in many formats
  labels.json     [{file, line, type, encoding}] one per planted secret
                  occurrence (line 1-based; for multi-line values such as
                  PEM blocks, the line where the value starts)
  negatives.json  [{file, line, kind}] the planted hard negatives, used to
                  name the kind of a false positive in reports

Why planted by generator rather than hand-written: labels must stay exact
when the files change, and the benchmark must not depend on anyone's real
secrets. Hard negatives are the things scanners notoriously flag: hashes,
lockfile integrity, placeholders, masked values, env lookups, images.
"""

import base64
import hashlib
import json
import os
import random
import shutil
import string

SEED = 20251206
R = random.Random(SEED)
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "files")

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
B64 = ALNUM + "+/"
URLB64 = ALNUM + "-_"
HEX = "0123456789abcdef"
# Substrings the scanners treat as placeholders; a random value containing one
# would be a mislabelled positive, so such draws are rejected.
BANNED = ("example", "test", "fake", "dummy", "sample", "xxxx", "redact", "hidden",
          "changeme", "your", "1234", "abcd", "here", "token", "secret", "passw",
          "admin", "null", "none", "true", "false", "user", "root")


def rs(n, alpha=ALNUM):
    while True:
        s = "".join(R.choice(alpha) for _ in range(n))
        low = s.lower()
        if not any(b in low for b in BANNED):
            return s


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# ---------------------------------------------------------------- secrets

def g_aws_id():
    return "AKIA" + rs(16, UP + "234567")


def g_aws_secret():
    return rs(40, B64)


def g_ghp():
    return "ghp_" + rs(36)


def g_gho():
    return "gho_" + rs(36)


def g_ghfg():
    return "github_pat_" + rs(22) + "_" + rs(59)


def g_slack():
    return "xoxb-" + rs(12, DIG) + "-" + rs(13, DIG) + "-" + rs(24)


def g_webhook():
    return "https://hooks.slack.com/services/T" + rs(8, UP + DIG) + "/B" + rs(10, UP + DIG) + "/" + rs(24)


def g_stripe():
    return "sk_live_" + rs(R.choice([24, 32, 99]))


def g_google():
    return "AIza" + rs(35, URLB64)


def g_service():
    return R.choice(["tok_live_", "sk_test_", "svc_live_"]) + rs(32)


def g_jwt():
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": rs(12, DIG), "name": R.choice(["dana", "ravi", "lee", "mo"]),
                                 "iat": 1736150000 + R.randrange(10 ** 6), "scope": "orders:write"}).encode())
    sig = b64url(bytes(R.randrange(256) for _ in range(32)))
    return f"{header}.{payload}.{sig}"


HOSTS = ["db.internal.northwind.io", "pg-prod-2.corp.lan", "10.4.12.7", "orders-db.svc.cluster.local",
         "mongo0.acme-data.net", "redis-cache.prod.acme.cloud", "mq.northwind.io"]


def g_connstr():
    scheme = R.choice(["postgres", "postgresql", "mysql", "mongodb", "redis", "amqp"])
    user = R.choice(["app", "orders_svc", "svc_billing", "reporter", "deploy"])
    port = {"postgres": 5432, "postgresql": 5432, "mysql": 3306, "mongodb": 27017, "redis": 6379, "amqp": 5672}[scheme]
    return f"{scheme}://{user}:{rs(R.randrange(14, 24))}@{R.choice(HOSTS)}:{port}/{R.choice(['orders', 'billing', 'app', '0'])}"


def g_sqlpw():
    return rs(R.randrange(12, 20), ALNUM + "!#%^*")


def g_npm():
    return "npm_" + rs(36)


def g_sendgrid():
    return "SG." + rs(22, URLB64) + "." + rs(43, URLB64)


def g_twilio():
    return "SK" + rs(32, HEX)


def g_openai():
    return "sk-proj-" + rs(74, URLB64) + "T3BlbkFJ" + rs(74, URLB64)


def g_anthropic():
    return "sk-ant-api03-" + rs(93, URLB64) + "AA"


def g_azure():
    key = base64.b64encode(bytes(R.randrange(256) for _ in range(64))).decode()
    return (f"DefaultEndpointsProtocol=https;AccountName=nw{rs(8, LO + DIG)};AccountKey={key};"
            "EndpointSuffix=core.windows.net")


def g_generic():
    return rs(R.randrange(18, 32), ALNUM + "-_!@")


def g_pem():
    kind = R.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    raw = bytes(R.randrange(256) for _ in range(R.choice([120, 300, 600])))
    body = base64.b64encode(raw).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----"


GEN = {
    "aws_access_key_id": g_aws_id, "aws_secret_access_key": g_aws_secret, "github_pat": g_ghp,
    "github_oauth": g_gho, "github_fine_grained_pat": g_ghfg, "slack_token": g_slack,
    "slack_webhook": g_webhook, "stripe_secret_key": g_stripe, "google_api_key": g_google,
    "firebase_api_key": g_google, "service_token": g_service, "jwt": g_jwt,
    "connection_string": g_connstr, "npm_token": g_npm, "sendgrid_api_key": g_sendgrid,
    "twilio_api_key": g_twilio, "openai_api_key": g_openai, "anthropic_api_key": g_anthropic,
    "azure_storage_connection_string": g_azure, "generic_secret": g_generic,
}
# Credential-looking names for each type, as people write them.
KEYS = {
    "aws_access_key_id": ["AWS_ACCESS_KEY_ID", "aws_access_key_id"],
    "aws_secret_access_key": ["AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"],
    "github_pat": ["GITHUB_TOKEN", "GH_TOKEN"], "github_oauth": ["GITHUB_OAUTH_TOKEN"],
    "github_fine_grained_pat": ["GITHUB_PAT", "RELEASE_GH_TOKEN"],
    "slack_token": ["SLACK_BOT_TOKEN"], "slack_webhook": ["SLACK_WEBHOOK_URL", "alerts_webhook"],
    "stripe_secret_key": ["STRIPE_SECRET_KEY", "stripe_key"], "google_api_key": ["GOOGLE_MAPS_KEY", "MAPS_API_KEY"],
    "firebase_api_key": ["FIREBASE_API_KEY", "firebaseApiKey"], "service_token": ["PAYMENTS_TOKEN", "LEDGER_API_TOKEN"],
    "jwt": ["SERVICE_JWT", "auth_bearer"], "connection_string": ["DATABASE_URL", "REDIS_URL", "BROKER_URL"],
    "npm_token": ["NPM_TOKEN"], "sendgrid_api_key": ["SENDGRID_API_KEY"], "twilio_api_key": ["TWILIO_API_KEY"],
    "openai_api_key": ["OPENAI_API_KEY"], "anthropic_api_key": ["ANTHROPIC_API_KEY"],
    "azure_storage_connection_string": ["AZURE_STORAGE_CONNECTION_STRING"],
    "generic_secret": ["DB_PASSWORD", "client_secret", "SMTP_PASSWORD", "api_secret", "SIGNING_KEY", "auth_token"],
}
LINE_TYPES = [t for t in GEN]

# ---------------------------------------------------------------- negatives

def n_gitsha():
    return rs(40, HEX)


def n_uuid():
    h = rs(32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def n_sha256():
    return rs(64, HEX)


def n_sha512_integrity():
    return "sha512-" + base64.b64encode(bytes(R.randrange(256) for _ in range(64))).decode()


def n_camel():
    words = ["get", "User", "Authentication", "Token", "From", "Request", "Headers", "Secret", "Manager",
             "Provider", "Factory", "Password", "Reset", "Handler", "Credentials", "Resolver", "Key", "Rotation"]
    return R.choice(["get", "resolve", "build", "create"]) + "".join(R.choice(words[1:]) for _ in range(5))


def png_b64(n):
    """Base64 of a PNG-looking image: real signature and IHDR, random body."""
    head = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00@\x00\x00\x00@\x08\x06\x00\x00\x00"
    return base64.b64encode(head + bytes(R.randrange(256) for _ in range(n))).decode()


PLACEHOLDERS = ["YOUR_API_KEY", "changeme", "<your-token-here>", "REPLACE_ME", "xxxxxxxxxxxxxxxx",
                "sk-****************", "[REDACTED]", "********", "AKIAIOSFODNN7EXAMPLE",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "sk_live_<redacted>", "insert-key-here", "dummy-password", "example-token"]


def n_placeholder():
    return R.choice(PLACEHOLDERS)


class Doc:
    """A file being written line by line, with its labels."""

    def __init__(self, path):
        self.path = path
        self.lines = []
        self.labels = []
        self.negs = []

    def add(self, text="", ty=None, enc=None, neg=None):
        line = len(self.lines) + 1
        if ty:
            self.labels.append({"file": self.path, "line": line, "type": ty, "encoding": enc})
        if neg:
            self.negs.append({"file": self.path, "line": line, "kind": neg})
        self.lines.extend(text.split("\n"))
        return line

    def text(self):
        return "\n".join(self.lines) + "\n"


DOCS = []


def new(path):
    d = Doc(path)
    DOCS.append(d)
    return d


def pick_types(n, exclude=()):
    pool = [t for t in LINE_TYPES if t not in exclude]
    return [R.choice(pool) for _ in range(n)]


def val(ty):
    return GEN[ty]()


def key(ty):
    return R.choice(KEYS[ty])


FILLER = [("DEBUG", "false"), ("PORT", "8080"), ("LOG_LEVEL", "info"), ("REGION", "eu-west-1"),
          ("WORKERS", "4"), ("TIMEZONE", "UTC"), ("CACHE_TTL", "300"), ("FEATURE_FLAGS", "checkout,search")]


def neg_assignments():
    """(key, value, kind) triples that look like credentials and are not."""
    out = [
        ("API_KEY", n_placeholder(), "placeholder"),
        ("SECRET_KEY", n_placeholder(), "placeholder"),
        ("BUILD_SHA", n_gitsha(), "git_sha"),
        ("REQUEST_ID", n_uuid(), "uuid"),
        ("ARTIFACT_SHA256", n_sha256(), "checksum"),
        ("TOKEN_HANDLER", n_camel(), "camel_identifier"),
        ("PASSWORD_FILE", "/run/secrets/" + R.choice(["db_password", "api_token"]), "file_path"),
        ("SECRET_KEY_PATH", "/etc/northwind/keys/" + rs(6, LO) + ".pem", "file_path"),
        ("TOKEN_TTL", str(R.choice([300, 3600, 86400])), "number"),
        ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE", "documented_example"),
        ("PASSWORD", "********", "masked"),
        ("OPENAI_API_KEY", "sk-proj-****************************", "masked"),
    ]
    R.shuffle(out)
    return out[:R.randrange(3, 6)]


# ---------------------------------------------------------------- formats
# Each writer takes the secret types to plant and the negatives to include.

def w_env(i):
    d = new(f"svc{i}/.env" if i % 2 else f"deploy/env/{['staging', 'prod', 'dev'][i % 3]}{i}.env")
    d.add(f"# environment for svc{i}, loaded by docker compose")
    for k, v in R.sample(FILLER, 3):
        d.add(f"{k}={v}")
    for t in pick_types(5):
        d.add(f"{key(t).upper()}={val(t)}", ty=t)
    for k, v, kind in neg_assignments():
        d.add(f"{k}={v}", neg=kind)
    d.add("PUBLIC_URL=${BASE_URL}/app", neg="env_reference")
    d.add("DB_PASSWORD=${DB_PASSWORD:?required}", neg="env_reference")


def w_python(i):
    d = new(f"app{i}/settings.py")
    d.add('"""Settings for the orders service."""')
    d.add("import os")
    d.add("")
    d.add(f"DEBUG = {R.choice(['True', 'False'])}")
    d.add('ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]')
    for t in pick_types(4):
        d.add(f'{key(t).upper()} = "{val(t)}"', ty=t)
    d.add('SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]', neg="env_lookup")
    d.add('STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")', neg="env_lookup")
    d.add('DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")', neg="placeholder")
    d.add(f'CACHE_KEY_PREFIX = "orders:{rs(8, LO)}:"')
    for k, v, kind in neg_assignments():
        d.add(f'{k} = "{v}"', neg=kind)
    if i % 3 == 0:
        t = R.choice(["generic_secret", "github_pat", "aws_secret_access_key"])
        v = val(t)
        enc = base64.b64encode(v.encode()).decode()
        d.add(f'_BOOTSTRAP = "{enc}"  # decoded at startup', ty=t, enc="base64")
    if i % 4 == 1:
        pem = g_pem()
        d.add("")
        d.add(f'SIGNING_KEY = """{pem}"""', ty="private_key")
    d.add("")
    d.add("def database_url():")
    d.add('    return f"postgres://{os.environ[\'DB_USER\']}:{os.environ[\'DB_PASSWORD\']}@db:5432/app"',
          neg="env_lookup")


def w_yaml(i):
    d = new(f"config/app{i}.yaml")
    d.add("service:")
    d.add(f"  name: orders-{i}")
    d.add("  replicas: 3")
    d.add("credentials:")
    for t in pick_types(5):
        d.add(f"  {key(t).lower()}: \"{val(t)}\"", ty=t)
    for k, v, kind in neg_assignments():
        d.add(f"  {k.lower()}: \"{v}\"", neg=kind)
    d.add("  vault_path: secret/data/orders/prod", neg="file_path")
    if i % 2 == 0:
        d.add("tls:")
        d.add("  key: |")
        pem = "\n".join("    " + ln for ln in g_pem().split("\n"))
        d.add(pem, ty="private_key")
    d.add(f"image: registry.northwind.io/orders@sha256:{n_sha256()}", neg="checksum")


def w_k8s_secret(i):
    d = new(f"k8s/secret-{i}.yaml")
    d.add("apiVersion: v1")
    d.add("kind: Secret")
    d.add("metadata:")
    d.add(f"  name: orders-{i}")
    d.add(f"  uid: {n_uuid()}", neg="uuid")
    d.add("type: Opaque")
    d.add("data:")
    for t in pick_types(3, exclude=("connection_string",)) + ["connection_string"]:
        enc = base64.b64encode(val(t).encode()).decode()
        d.add(f"  {key(t).lower()}: {enc}", ty=t, enc="base64")
    d.add("  placeholder: " + base64.b64encode(b"changeme").decode(), neg="encoded_placeholder")


def w_json(i):
    d = new(f"config/{['prod', 'staging', 'local'][i % 3]}-{i}.json")
    entries = []
    for t in pick_types(5):
        entries.append((key(t), val(t), t, None))
    for k, v, kind in neg_assignments():
        entries.append((k.lower(), v, None, kind))
    entries.append(("commit", n_gitsha(), None, "git_sha"))
    entries.append(("deploymentId", n_uuid(), None, "uuid"))
    R.shuffle(entries)
    d.add("{")
    d.add(f'  "service": "billing-{i}",')
    for n, (k, v, t, kind) in enumerate(entries):
        comma = "," if n + 1 < len(entries) else ""
        d.add(f'  "{k}": {json.dumps(v)}{comma}', ty=t, neg=kind)
    d.add("}")


def w_gcp_sa(i):
    d = new(f"creds/service-account-{i}.json")
    pem = g_pem().replace("RSA PRIVATE KEY", "PRIVATE KEY").replace("EC PRIVATE KEY", "PRIVATE KEY").replace(
        "OPENSSH PRIVATE KEY", "PRIVATE KEY")
    d.add("{")
    d.add('  "type": "service_account",')
    d.add(f'  "project_id": "northwind-{rs(6, LO + DIG)}",')
    d.add(f'  "private_key_id": "{rs(40, HEX)}",', neg="key_id_hex")
    d.add(f'  "private_key": {json.dumps(pem + chr(10))},', ty="private_key")
    d.add(f'  "client_email": "orders@northwind-{i}.iam.gserviceaccount.com",')
    d.add(f'  "client_id": "{rs(21, DIG)}",', neg="number")
    d.add('  "token_uri": "https://oauth2.googleapis.com/token"')
    d.add("}")


def w_toml(i):
    d = new(f"svc{i}/config.toml")
    d.add("[server]")
    d.add('bind = "0.0.0.0:8080"')
    d.add("[secrets]")
    for t in pick_types(4):
        d.add(f'{key(t).lower()} = "{val(t)}"', ty=t)
    for k, v, kind in neg_assignments():
        d.add(f'{k.lower()} = "{v}"', neg=kind)
    d.add('token_env = "ORDERS_TOKEN"', neg="env_name")


def w_ini(i):
    d = new(f"etc/app{i}.ini")
    d.add("[database]")
    d.add("host = db.internal.northwind.io")
    d.add(f"password = {g_generic()}", ty="generic_secret")
    d.add("[aws]")
    d.add(f"aws_access_key_id = {g_aws_id()}", ty="aws_access_key_id")
    d.add(f"aws_secret_access_key = {g_aws_secret()}", ty="aws_secret_access_key")
    d.add("[mail]")
    t = R.choice(["sendgrid_api_key", "twilio_api_key", "generic_secret"])
    d.add(f"{key(t).lower()} = {val(t)}", ty=t)
    d.add("password = %(MAIL_PASSWORD)s", neg="env_reference")
    for k, v, kind in neg_assignments():
        d.add(f"{k.lower()} = {v}", neg=kind)


def w_docker(i):
    d = new(f"docker/Dockerfile.{i}" if i % 2 else f"svc{i}/Dockerfile")
    d.add(f"FROM python:3.12-slim@sha256:{n_sha256()}", neg="checksum")
    d.add("WORKDIR /app")
    t1, t2 = pick_types(2)
    d.add(f"ENV {key(t1).upper()}={val(t1)}", ty=t1)
    d.add(f"ARG {key(t2).upper()}={val(t2)}", ty=t2)
    d.add("ARG NPM_TOKEN", neg="env_name")
    d.add("RUN --mount=type=secret,id=npm,target=/root/.npmrc npm ci", neg="file_path")
    d.add("ENV API_KEY=${API_KEY}", neg="env_reference")
    d.add("COPY . .")
    d.add('CMD ["gunicorn", "app:app"]')


def w_shell(i):
    d = new(f"scripts/deploy{i}.sh")
    d.add("#!/usr/bin/env bash")
    d.add("set -euo pipefail")
    for t in pick_types(3):
        d.add(f'export {key(t).upper()}="{val(t)}"', ty=t)
    d.add('export GITHUB_TOKEN="${GITHUB_TOKEN:-}"', neg="env_reference")
    d.add(f'git checkout {n_gitsha()}', neg="git_sha")
    d.add(f'echo "{n_sha256()}  release.tar.gz" | sha256sum -c -', neg="checksum")
    if i % 2:
        d.add(f'curl -s -H "Authorization: Bearer {g_jwt()}" https://api.northwind.io/v1/ping', ty="jwt")
    else:
        d.add(f'mysql -u deploy -p"{g_generic()}" orders < schema.sql', ty="generic_secret")
    d.add('curl -u "admin:$ADMIN_PASSWORD" https://ci.northwind.io/api', neg="env_reference")


def w_workflow(i):
    d = new(f".github/workflows/ci{i}.yml")
    d.add(f"name: ci-{i}")
    d.add("on: [push]")
    d.add("jobs:")
    d.add("  build:")
    d.add("    runs-on: ubuntu-latest")
    d.add("    env:")
    d.add("      NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}", neg="env_reference")
    for t in pick_types(2):
        d.add(f"      {key(t).upper()}: {val(t)}", ty=t)
    d.add("    steps:")
    d.add(f"      - uses: actions/checkout@{n_gitsha()}", neg="git_sha")
    d.add(f"      - uses: actions/setup-node@{n_gitsha()} # v4", neg="git_sha")
    d.add("      - run: npm ci && npm test")
    d.add("        env:")
    t = R.choice(["github_pat", "github_fine_grained_pat", "npm_token", "slack_webhook"])
    d.add(f"          {key(t).upper()}: {val(t)}", ty=t)


def w_terraform(i):
    d = new(f"infra/main{i}.tf")
    d.add('provider "aws" {')
    d.add('  region     = "eu-west-1"')
    d.add(f'  access_key = "{g_aws_id()}"', ty="aws_access_key_id")
    d.add(f'  secret_key = "{g_aws_secret()}"', ty="aws_secret_access_key")
    d.add("}")
    d.add('resource "aws_db_instance" "orders" {')
    d.add(f'  password = "{g_generic()}"', ty="generic_secret")
    d.add("  username = var.db_user", neg="env_reference")
    d.add('  kms_key_id = "arn:aws:kms:eu-west-1:123456789012:key/' + n_uuid() + '"', neg="uuid")
    d.add("}")
    d.add('variable "api_token" {')
    d.add("  sensitive = true")
    d.add('  default   = "REPLACE_ME"', neg="placeholder")
    d.add("}")
    if i % 2 == 0:
        d.add('resource "tls_private_key" "imported" {')
        d.add("  pem = <<EOT")
        d.add(g_pem(), ty="private_key")
        d.add("EOT")
        d.add("}")


def w_js(i):
    d = new(f"web/src/config{i}.js")
    d.add("// runtime configuration")
    d.add("export const config = {")
    d.add("  apiBase: process.env.API_BASE,", neg="env_lookup")
    d.add("  stripeKey: process.env.STRIPE_SECRET_KEY,", neg="env_lookup")
    for t in pick_types(4):
        k = key(t)
        d.add(f"  {k}: '{val(t)}',", ty=t)
    d.add(f"  handler: '{n_camel()}',", neg="camel_identifier")
    d.add("};")
    d.add("const firebaseConfig = {")
    d.add(f'  apiKey: "{g_google()}",', ty="firebase_api_key")
    d.add(f'  authDomain: "northwind-{i}.firebaseapp.com",')
    d.add(f'  appId: "1:{rs(12, DIG)}:web:{rs(22, HEX)}",', neg="app_id")
    d.add("};")


def w_minjs(i):
    d = new(f"web/dist/bundle{i}.min.js")
    # Real minifier output: short names, long readable property names,
    # webpack module paths and short content hashes.
    idents = "".join(f"var {rs(1, LO)}{rs(1, ALNUM)}=function(e){{return e.{n_camel()}}};" for _ in range(4))
    idents += f'__webpack_require__.p="/static/js/";n.u=function(e){{return e+"."+{{{R.randrange(999)}:"{rs(20, HEX)}"}}[e]+".chunk.js"}};'
    d.add(f'!function(){{"use strict";{idents}}}();', neg="minified_identifiers")
    d.add('function Qe(t){return t.replace(/[A-Za-z0-9+\\/]{40}/g,"")}var Xr="' + rs(4, LO) + '";',
          neg="minified_identifiers")
    t = R.choice(["google_api_key", "stripe_secret_key", "service_token", "sendgrid_api_key", "jwt"])
    d.add(f'var n={{a:1,b:"{R.choice(["x", "y"])}"}},r={{apiKey:"{val(t)}",env:"production"}};', ty=t)
    d.add(f'//# sourceMappingURL=bundle{i}.min.js.map')


def w_lock_npm(i):
    d = new(f"web{i}/package-lock.json")
    d.add("{")
    d.add(f'  "name": "web{i}",')
    d.add('  "lockfileVersion": 3,')
    d.add('  "packages": {')
    names = ["react", "lodash", "axios", "express", "chalk", "debug", "ms", "semver"]
    for n, name in enumerate(names):
        d.add(f'    "node_modules/{name}": {{')
        d.add(f'      "version": "{R.randrange(1, 19)}.{R.randrange(20)}.{R.randrange(9)}",')
        d.add(f'      "resolved": "https://registry.npmjs.org/{name}/-/{name}-1.0.0.tgz",')
        d.add(f'      "integrity": "{n_sha512_integrity()}"', neg="lockfile_integrity")
        d.add("    }" + ("," if n + 1 < len(names) else ""))
    d.add("  }")
    d.add("}")


def w_gosum(i):
    d = new(f"go{i}/go.sum")
    for mod in ["github.com/pkg/errors", "golang.org/x/sync", "github.com/stretchr/testify", "gopkg.in/yaml.v3"]:
        h = base64.b64encode(bytes(R.randrange(256) for _ in range(32))).decode()
        d.add(f"{mod} v1.{R.randrange(9)}.{R.randrange(9)} h1:{h}", neg="checksum")
        h = base64.b64encode(bytes(R.randrange(256) for _ in range(32))).decode()
        d.add(f"{mod} v1.{R.randrange(9)}.{R.randrange(9)}/go.mod h1:{h}", neg="checksum")


def w_cargolock(i):
    d = new(f"rs{i}/Cargo.lock")
    d.add("version = 3")
    for name in ["serde", "regex", "memchr", "libc"]:
        d.add("")
        d.add("[[package]]")
        d.add(f'name = "{name}"')
        d.add(f'version = "1.0.{R.randrange(200)}"')
        d.add('source = "registry+https://github.com/rust-lang/crates.io-index"')
        d.add(f'checksum = "{n_sha256()}"', neg="checksum")


def w_requirements(i):
    d = new(f"py{i}/requirements.txt")
    for name in ["requests==2.32.3", "flask==3.0.3", "boto3==1.34.0"]:
        d.add(f"{name} \\")
        d.add(f"    --hash=sha256:{n_sha256()} \\", neg="checksum")
        d.add(f"    --hash=sha256:{n_sha256()}", neg="checksum")
    d.add(f"git+https://github.com/northwind/utils.git@{n_gitsha()}#egg=utils", neg="git_sha")
    if i % 2:
        d.add(f"--extra-index-url https://deploy:{g_generic()}@pypi.northwind.io/simple",
              ty="connection_string")


def w_notebook(i):
    d = new(f"notebooks/analysis{i}.ipynb")
    t1, t2 = pick_types(2)
    cells = [
        ("import os, pandas as pd\\n", None, None),
        (f"os.environ['{key(t1).upper()}'] = '{val(t1)}'\\n", t1, None),
        (f"client = Client(api_key='{val(t2)}')\\n", t2, None),
        ("token = os.environ['HF_TOKEN']\\n", None, "env_lookup"),
        (f"run_id = '{n_uuid()}'\\n", None, "uuid"),
    ]
    d.add("{")
    d.add(' "cells": [')
    d.add("  {")
    d.add('   "cell_type": "code",')
    d.add('   "metadata": {},')
    d.add('   "source": [')
    for n, (src, t, kind) in enumerate(cells):
        comma = "," if n + 1 < len(cells) else ""
        d.add(f'    "{src}"{comma}', ty=t, neg=kind)
    d.add("   ],")
    d.add('   "outputs": [{"output_type": "display_data", "data": {"image/png": "'
          + png_b64(300) + '"}}]', neg="base64_image")
    d.add("  }")
    d.add(" ],")
    d.add(' "nbformat": 4,')
    d.add(' "nbformat_minor": 5')
    d.add("}")


def w_markdown(i):
    d = new(f"docs/setup{i}.md")
    d.add(f"# Setting up service {i}")
    d.add("")
    d.add("Copy `.env.example` to `.env` and set your keys:")
    d.add("")
    d.add("```sh")
    d.add("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", neg="documented_example")
    d.add("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", neg="documented_example")
    d.add("export OPENAI_API_KEY=sk-...your-key...", neg="placeholder")
    d.add("export STRIPE_SECRET_KEY=YOUR_API_KEY", neg="placeholder")
    d.add("```")
    d.add("")
    d.add(f"Fixed in commit {n_gitsha()[:12]} (see {n_gitsha()}).", neg="git_sha")
    d.add("")
    d.add("The token is redacted in logs as `ghp_****` and `[REDACTED]`.", neg="masked")
    if i % 2:
        t = R.choice(pick_types(3))
        d.add("")
        d.add("Temporary key for the demo (rotate after!):")
        d.add("")
        d.add(f"    {key(t).upper()}={val(t)}", ty=t)


def w_svg(i):
    d = new(f"web/assets/logo{i}.svg")
    img = png_b64(900)
    d.add('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64">')
    d.add(f'  <image href="data:image/png;base64,{img}" width="64" height="64"/>', neg="base64_image")
    d.add(f'  <path d="M{R.randrange(9)} 0L64 64z" fill="#{rs(6, HEX)}"/>')
    d.add("</svg>")


def w_csv(i):
    d = new(f"data/accounts{i}.csv")
    d.add("id,name,email,api_key,created")
    for n in range(6):
        if n in (1, 4):
            t = R.choice(["stripe_secret_key", "service_token", "openai_api_key", "github_pat", "npm_token"])
            d.add(f"{n},acct{n},acct{n}@northwind.io,{val(t)},2025-01-0{n + 1}", ty=t)
        else:
            d.add(f"{n},acct{n},acct{n}@northwind.io,{n_uuid()},2025-01-0{n + 1}", neg="uuid")


def w_log(i):
    d = new(f"logs/app{i}.log")
    for n in range(8):
        ts = f"2025-01-{6 + n:02d}T09:{R.randrange(60):02d}:00Z"
        r = n % 4
        if r == 0:
            d.add(f"{ts} INFO deploy commit={n_gitsha()} tree={n_gitsha()}", neg="git_sha")
        elif r == 1:
            d.add(f"{ts} INFO request_id={n_uuid()} path=/v1/orders status=200", neg="uuid")
        elif r == 2:
            d.add(f"{ts} DEBUG auth header=Bearer [REDACTED] user=42", neg="masked")
        else:
            t = R.choice(["jwt", "connection_string", "slack_webhook", "anthropic_api_key", "github_oauth"])
            d.add(f"{ts} ERROR retry failed using {val(t)}", ty=t)


def w_sql(i):
    d = new(f"db/migrations/00{i}_users.sql")
    d.add("-- roles for the app")
    d.add(f"CREATE USER app_{i} WITH PASSWORD '{g_sqlpw()}';", ty="sql_password")
    d.add(f"ALTER ROLE reporter PASSWORD '{g_sqlpw()}';", ty="sql_password")
    d.add(f"CREATE USER 'svc'@'%' IDENTIFIED BY '{g_sqlpw()}';", ty="sql_password")
    d.add("ALTER ROLE readonly PASSWORD 'changeme';", neg="placeholder")
    d.add("CREATE USER ci WITH PASSWORD :'ci_password';", neg="env_reference")
    d.add(f"INSERT INTO audit(id, sha) VALUES ('{n_uuid()}', '{n_gitsha()}');", neg="uuid")


def w_pem(i):
    d = new(f"keys/deploy{i}.pem" if i % 2 else f"keys/id_ed{i}")
    d.add(g_pem(), ty="private_key")


def w_pubpem(i):
    d = new(f"keys/ca{i}.crt")
    body = base64.b64encode(bytes(R.randrange(256) for _ in range(400))).decode()
    d.add("-----BEGIN CERTIFICATE-----", neg="certificate")
    for j in range(0, len(body), 64):
        d.add(body[j:j + 64])
    d.add("-----END CERTIFICATE-----")


def w_npmrc(i):
    d = new(f"web{i}/.npmrc")
    d.add("registry=https://registry.npmjs.org/")
    d.add(f"//registry.npmjs.org/:_authToken={g_npm()}", ty="npm_token")
    d.add("//npm.pkg.github.com/:_authToken=${GITHUB_TOKEN}", neg="env_reference")


def w_gitconfig_log(i):
    d = new(f"ops/git-log{i}.txt")
    for _ in range(4):
        d.add(f"commit {n_gitsha()}", neg="git_sha")
        d.add("Author: Dana Whitfield <dana@northwind.io>")
        d.add("Date:   Mon Jan 6 09:14:00 2025 +0000")
        d.add("")
        d.add(f"    Merge {n_gitsha()[:7]} into main", neg="git_sha")
        d.add("")
    d.add(f"index {n_gitsha()[:7]}..{n_gitsha()[:7]} 100644", neg="git_sha")


def w_hexenc(i):
    d = new(f"firmware/blob{i}.h")
    t = R.choice(["generic_secret", "stripe_secret_key", "aws_secret_access_key"])
    d.add("/* generated: do not edit */")
    d.add(f'static const char k_boot[] = "{val(t).encode().hex()}";', ty=t, enc="hex")
    d.add(f'static const char k_build[] = "{n_sha256()}";', neg="checksum")


WRITERS = [
    (w_env, 8), (w_python, 8), (w_yaml, 6), (w_k8s_secret, 4), (w_json, 6), (w_gcp_sa, 2), (w_toml, 4),
    (w_ini, 3), (w_docker, 4), (w_shell, 5), (w_workflow, 4), (w_terraform, 4), (w_js, 4), (w_minjs, 4),
    (w_lock_npm, 2), (w_gosum, 2), (w_cargolock, 2), (w_requirements, 3), (w_notebook, 3), (w_markdown, 5),
    (w_svg, 3), (w_csv, 3), (w_log, 4), (w_sql, 3), (w_pem, 3), (w_pubpem, 2), (w_npmrc, 2),
    (w_gitconfig_log, 2), (w_hexenc, 3),
]


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for writer, count in WRITERS:
        for i in range(1, count + 1):
            writer(i)
    seen = set()
    labels, negs = [], []
    for d in DOCS:
        assert d.path not in seen, d.path
        seen.add(d.path)
        p = os.path.join(OUT, d.path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="\n") as f:
            f.write(d.text())
        labels.extend(d.labels)
        negs.extend(d.negs)
    # One label per (file, line): matching is by line, so two secrets on one
    # line would make recall ambiguous. The writers never do that; check it.
    keys = [(x["file"], x["line"]) for x in labels]
    assert len(keys) == len(set(keys)), "two labels on one line"
    with open(os.path.join(HERE, "labels.json"), "w") as f:
        json.dump(labels, f, indent=1)
        f.write("\n")
    with open(os.path.join(HERE, "negatives.json"), "w") as f:
        json.dump(negs, f, indent=1)
        f.write("\n")
    digest = hashlib.sha256(json.dumps(labels).encode()).hexdigest()[:12]
    types = sorted({x["type"] for x in labels})
    print(f"{len(DOCS)} files, {len(labels)} positives ({len(types)} types), {len(negs)} hard negatives, "
          f"labels {digest}")


if __name__ == "__main__":
    main()
