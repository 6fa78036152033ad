#!/usr/bin/env python3
"""Blind held-out round of labelled cases: generator4.jsonl.

Written without reading the scanner or the other corpus files: each case is
a whole plausible file; "secret" files hold exactly one real-looking
credential (sometimes beside hard negatives), "none" files hold none.
Deterministic (fixed seed), stdlib only.

    python3 make_blind_round.py   # writes generator4.jsonl next to this file
"""

import base64
import json
import os
import random
import string
import struct
import uuid
import zlib

SEED = 4404
R = random.Random(SEED)

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
ALNUM = UP + LO + DG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


def rs(alphabet, n):
    return "".join(R.choice(alphabet) for _ in range(n))


def hexs(n):
    return rs(HEX, n)


def uid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def pick(xs):
    return R.choice(xs)


def b64(data):
    return base64.b64encode(data).decode()


def b64u(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


WORDS = """order invoice tenant billing report ledger shipment catalog account
profile session payment refund webhook metric audit inventory customer
export import queue worker scheduler notify search cart pricing quota
""".split()
HOSTS = ["api.internal.example.com", "db-primary.prod.svc.cluster.local",
         "orders.acme-corp.io", "pg-main.c9x2.eu-west-1.rds.amazonaws.com",
         "redis.staging.local", "auth.northwind.dev", "10.20.4.17",
         "billing-db.internal", "mysql.shopfront.net"]
USERS = ["app", "svc_orders", "reporting", "billing_rw", "deploy", "etl_user",
         "webapp", "analytics"]
NAMES = ["alice", "bob", "carol", "dmitri", "eun-ji", "farah", "gustavo",
         "hiro", "ingrid", "jamal"]


def w():
    return pick(WORDS)


def camel(*parts):
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def pascal(*parts):
    return "".join(p.capitalize() for p in parts)


# ---------------------------------------------------------------- filler

def fill_py(n):
    out = []
    for _ in range(n):
        a, b = w(), w()
        k = R.randint(0, 4)
        if k == 0:
            out.append(f"""
def {a}_{b}_total(items):
    total = 0
    for item in items:
        if item.get("{b}_id") is None:
            continue
        total += item.get("amount", 0) * item.get("qty", 1)
    return round(total, 2)
""")
        elif k == 1:
            out.append(f"""
class {pascal(a, b)}Repository:
    def __init__(self, session, table="{a}_{b}s"):
        self.session = session
        self.table = table

    def by_id(self, ident):
        log.debug("loading %s %s", self.table, ident)
        return self.session.query(self.table).filter_by(id=ident).first()
""")
        elif k == 2:
            out.append(f"""
@retry(attempts={R.randint(2, 6)}, backoff={R.choice(['0.5', '1.0', '2.0'])})
def fetch_{a}(client, {b}_id, timeout={R.randint(5, 60)}):
    resp = client.get(f"/v1/{a}s/{{{b}_id}}", timeout=timeout)
    resp.raise_for_status()
    return resp.json()
""")
        elif k == 3:
            out.append(f"""
def parse_{a}_row(row):
    fields = row.strip().split(",")
    if len(fields) < {R.randint(3, 9)}:
        raise ValueError(f"short {a} row: {{row!r}}")
    return {{"{a}": fields[0], "{b}": fields[1], "count": int(fields[2])}}
""")
        else:
            out.append(f"""
MAX_{a.upper()}_BATCH = {R.randint(10, 5000)}
DEFAULT_{b.upper()}_TTL = {R.randint(30, 86400)}
""")
    return "".join(out)


def fill_go(n):
    out = []
    for _ in range(n):
        a, b = w(), w()
        k = R.randint(0, 2)
        if k == 0:
            out.append(f"""
func ({a[0]} *{pascal(a)}Service) {pascal('get', b)}(ctx context.Context, id string) (*{pascal(b)}, error) {{
	row := {a[0]}.db.QueryRowContext(ctx, "SELECT id, name FROM {b}s WHERE id = $1", id)
	var out {pascal(b)}
	if err := row.Scan(&out.ID, &out.Name); err != nil {{
		return nil, fmt.Errorf("{b} %s: %w", id, err)
	}}
	return &out, nil
}}
""")
        elif k == 1:
            out.append(f"""
type {pascal(a, b)} struct {{
	ID        string    `json:"id"`
	{pascal(a)}Name string    `json:"{a}_name"`
	CreatedAt time.Time `json:"created_at"`
	Retries   int       `json:"retries"`
}}
""")
        else:
            out.append(f"""
func {camel('validate', a)}(v string) error {{
	if len(v) == 0 || len(v) > {R.randint(32, 255)} {{
		return errors.New("invalid {a}")
	}}
	return nil
}}
""")
    return "".join(out)


def fill_js(n):
    out = []
    for _ in range(n):
        a, b = w(), w()
        k = R.randint(0, 2)
        if k == 0:
            out.append(f"""
export async function {camel('load', a, b)}(client, id) {{
  const res = await client.get(`/api/{a}/${{id}}/{b}`);
  if (!res.ok) {{
    throw new Error(`{a} ${{id}}: ${{res.status}}`);
  }}
  return res.json();
}}
""")
        elif k == 1:
            out.append(f"""
const {camel(a, 'defaults')} = {{
  pageSize: {R.randint(10, 200)},
  retry: {R.randint(1, 5)},
  sortBy: "{b}",
}};
""")
        else:
            out.append(f"""
function {camel('format', a)}(value) {{
  return new Intl.NumberFormat("en-US", {{ maximumFractionDigits: {R.randint(0, 4)} }}).format(value);
}}
""")
    return "".join(out)


def fill_java(n):
    out = []
    for _ in range(n):
        a, b = w(), w()
        out.append(f"""
    public List<{pascal(b)}> find{pascal(b)}sBy{pascal(a)}(String {a}Id) {{
        if ({a}Id == null || {a}Id.isBlank()) {{
            return Collections.emptyList();
        }}
        return {b}Repository.findAllBy{pascal(a)}Id({a}Id, PageRequest.of(0, {R.randint(10, 500)}));
    }}
""")
    return "".join(out)


def fill_yaml_comment():
    return pick(["# managed by platform team", "# see docs/runbooks/deploy.md",
                 "# do not edit by hand", "# values reviewed in INFRA-" + str(R.randint(100, 9999))])


def fill_md(n):
    out = []
    for _ in range(n):
        a, b = w(), w()
        out.append(pick([
            f"The `{a}` module batches {b} updates and flushes them every {R.randint(2, 60)} seconds.\n",
            f"See the `{a}-{b}` dashboard for latency percentiles.\n",
            f"- Run `make {a}` before opening a pull request.\n",
            f"If the {a} queue backs up, scale the {b} workers first.\n",
        ]))
    return "\n".join(out)


def fill_sh(n):
    out = []
    for _ in range(n):
        a = w()
        out.append(pick([
            f'echo "==> building {a}"\nmake -C services/{a} build\n',
            f'if [ ! -d "$ROOT/{a}" ]; then\n  mkdir -p "$ROOT/{a}"\nfi\n',
            f'for f in "$ROOT"/{a}/*.sql; do\n  psql -f "$f"\ndone\n',
            f'log "restarting {a} ({R.randint(1, 9)} replicas)"\n',
        ]))
    return "\n".join(out)


def fill_tf(n):
    out = []
    for _ in range(n):
        a = w()
        out.append(pick([
            f'''
resource "aws_s3_bucket" "{a}" {{
  bucket = "${{var.prefix}}-{a}-{R.randint(1, 99)}"
  tags   = local.tags
}}
''', f'''
resource "aws_cloudwatch_log_group" "{a}" {{
  name              = "/svc/{a}"
  retention_in_days = {pick([7, 14, 30, 90])}
}}
''', f'''
variable "{a}_count" {{
  type    = number
  default = {R.randint(1, 8)}
}}
'''
        ]))
    return "".join(out)


# ------------------------------------------------------------- secret values

def aws_id():
    return pick(["AKIA", "AKIA", "ASIA"]) + rs(UP + "234567", 16)


def aws_secret():
    return rs(ALNUM + "+/", 40)


def ghp():
    return "ghp_" + rs(ALNUM, 36)


def gh_pat():
    return "github_pat_11" + rs(UP + DG, 20) + "_" + rs(ALNUM, 59)


def glpat():
    return "glpat-" + rs(ALNUM + "-_", 20)


def xoxb():
    return f"xoxb-{R.randint(10**10, 10**12)}-{R.randint(10**11, 10**13)}-{rs(ALNUM, 24)}"


def slack_hook():
    return f"https://hooks.slack.com/services/T{rs(UP + DG, 8)}/B{rs(UP + DG, 10)}/{rs(ALNUM, 24)}"


def stripe_sk():
    return pick(["sk_live_", "rk_live_"]) + "51" + rs(ALNUM, R.choice([22, 97]))


def twilio_sid():
    return "AC" + hexs(32)


def sendgrid():
    return "SG." + rs(B64URL, 22) + "." + rs(B64URL, 43)


def openai():
    return "sk-proj-" + rs(B64URL, 74) + "T3BlbkFJ" + rs(B64URL, 74)


def anthropic():
    return "sk-ant-api03-" + rs(B64URL, 93) + "AA"


def npm_tok():
    return "npm_" + rs(ALNUM, 36)


def pypi_tok():
    return "pypi-AgEIcHlwaS5vcmc" + rs(B64URL, R.randint(60, 140))


def shopify():
    return pick(["shpat_", "shpss_", "shpca_"]) + hexs(32)


def vault_tok():
    return "hvs." + rs(ALNUM, 24)


def password():
    # realistic generated password: no dictionary words
    n = R.randint(16, 28)
    while True:
        p = rs(ALNUM + "!#%^*-_+=~", n)
        if (any(c in DG for c in p) and any(c in UP for c in p)
                and any(c in LO for c in p)):
            return p


def url_password():
    n = R.randint(16, 28)
    return rs(ALNUM, n)


def pem_body(prefix, nbytes):
    body = prefix + b64(rbytes(nbytes))
    return "\n".join(body[i:i + 64] for i in range(0, len(body), 64))


def rsa_private_pem():
    if R.random() < 0.5:
        return ("-----BEGIN RSA PRIVATE KEY-----\n" + pem_body("MIIEpAIBAAKCAQEA", 1180)
                + "\n-----END RSA PRIVATE KEY-----")
    return ("-----BEGIN PRIVATE KEY-----\n" + pem_body("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1180)
            + "\n-----END PRIVATE KEY-----")


def openssh_private():
    pub = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(32)
    blob = (b"openssh-key-v1\x00" + struct.pack(">I", 4) + b"none" + struct.pack(">I", 4) + b"none"
            + struct.pack(">I", 0) + struct.pack(">I", 1) + struct.pack(">I", len(pub)) + pub
            + struct.pack(">I", 152) + rbytes(152))
    body = b64(blob)
    lines = "\n".join(body[i:i + 70] for i in range(0, len(body), 70))
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + lines + "\n-----END OPENSSH PRIVATE KEY-----"


def ssh_ed25519_pub():
    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(32)
    return "ssh-ed25519 " + b64(blob)


def ssh_rsa_pub():
    blob = (b"\x00\x00\x00\x07ssh-rsa" + b"\x00\x00\x00\x03\x01\x00\x01"
            + b"\x00\x00\x01\x01\x00" + rbytes(256))
    return "ssh-rsa " + b64(blob)


def ssh_pub():
    return ssh_ed25519_pub() if R.random() < 0.5 else ssh_rsa_pub()


def jwt(claims):
    h = b64u(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    p = b64u(json.dumps(claims, separators=(",", ":")).encode())
    return f"{h}.{p}.{b64u(rbytes(32))}"


def jwt_claims():
    iat = R.randint(1_700_000_000, 1_760_000_000)
    return {"sub": uid(), "name": pick(NAMES).capitalize() + " " + pick(["Okafor", "Lindqvist", "Tanaka", "Moreau"]),
            "role": pick(["admin", "service", "ops"]), "iss": "https://" + pick(HOSTS[:3]),
            "iat": iat, "exp": iat + R.choice([86400 * 365, 86400 * 3650])}


# ------------------------------------------------------------- cases

CASES = []


def fill_yaml(n):
    out = []
    for a in R.sample(WORDS, min(n, len(WORDS))):
        out.append(pick([
            f"{a}:\n  enabled: {pick(['true', 'false'])}\n  batch_size: {R.randint(10, 1000)}\n  interval: {R.randint(1, 60)}s\n",
            f"logging_{a}:\n  level: {pick(['info', 'debug', 'warn'])}\n  format: json\n  sample_rate: 0.{R.randint(1, 99)}\n",
            f"resources_{a}:\n  requests:\n    cpu: {R.randint(50, 500)}m\n    memory: {R.randint(64, 1024)}Mi\n",
        ]))
    return "".join(out)


def fill_k8s(n):
    out = []
    for _ in range(n):
        a = w()
        out.append(f"""---
apiVersion: v1
kind: Service
metadata:
  name: {a}
  labels:
    app.kubernetes.io/name: {a}
spec:
  type: ClusterIP
  selector:
    app.kubernetes.io/name: {a}
  ports:
    - name: http
      port: {pick([80, 8080, 9090])}
      targetPort: {R.randint(3000, 9000)}
""")
    return "".join(out)


def fill_ini(n):
    out = []
    for a in R.sample(WORDS, min(n, len(WORDS))):
        out.append(f"\n[{a}_worker]\nenabled = {pick(['true', 'false'])}\nworkers = {R.randint(1, 16)}\ntimeout = {R.randint(5, 120)}\nqueue = {a}-{w()}\n")
    return "".join(out)


def fill_toml(n):
    out = []
    for a in R.sample(WORDS, min(n, len(WORDS))):
        out.append(f"\n[{a}.limits]\nenabled = {pick(['true', 'false'])}\nworkers = {R.randint(1, 16)}\ntimeout_secs = {R.randint(5, 120)}\nqueue = \"{a}-{w()}\"\n")
    return "".join(out)


def fill_env(n):
    out = []
    for a in R.sample(WORDS, min(n, len(WORDS))):
        out.append(pick([f"{a.upper()}_WORKERS={R.randint(1, 16)}\n", f"{a.upper()}_ENABLED={pick(['true', 'false'])}\n",
                         f"{a.upper()}_TIMEOUT_MS={R.randint(100, 30000)}\n", f"FEATURE_{a.upper()}={pick(['on', 'off'])}\n"]))
    return "".join(out)


def fill_props(n):
    return "".join(f"app.{w()}.{pick(['timeout', 'pool-size', 'enabled', 'batch'])}={R.randint(1, 500)}\n" for _ in range(n))


def pad(path, text):
    """Grow short files to a realistic length with unrelated, secret-free content."""
    lines = text.count("\n")
    if lines >= 30:
        return text
    need = 30 - lines
    base = os.path.basename(path)
    ext = os.path.splitext(path)[1]
    if not text.endswith("\n"):
        text += "\n"
    if ext == ".py":
        return text + fill_py(need // 6 + 1)
    if ext == ".go":
        return text + fill_go(need // 7 + 1)
    if ext in (".js", ".ts", ".jsx"):
        return text + fill_js(need // 6 + 1)
    if ext == ".sh" or base.endswith(".sh"):
        return text + "\n" + fill_sh(need // 3 + 1)
    if ext == ".md":
        return text + "\n" + fill_md(need // 2 + 1)
    if ext == ".tf":
        return text + fill_tf(need // 4 + 1)
    if ext in (".yaml", ".yml") and "/workflows/" not in path and base != ".gitlab-ci.yml":
        if "kind:" in text or "/templates/" in path:
            return text + fill_k8s(need // 14 + 1)
        return text + fill_yaml(need // 4 + 1)
    if ext in (".ini", ".conf", ".cfg") or base in (".pypirc",):
        return text + fill_ini(need // 6 + 1) if base != ".pypirc" else text
    if ext == ".toml" and base not in ("Cargo.lock", "poetry.lock"):
        return text + fill_toml(need // 6 + 1)
    if base.startswith(".env"):
        return text + fill_env(need)
    if ext == ".properties":
        return text + fill_props(need)
    return text


def case(cls, label, path, text):
    text = pad(path, text)
    base = os.path.basename(path)
    ext = "env" if base.startswith(".env") else (os.path.splitext(path)[1].lstrip(".") or base.lstrip("."))
    CASES.append({"source": "generator-4", "class": cls, "label": label, "ext": ext,
                  "path": path, "origin": f"make_blind_round.py seed {SEED}", "text": text})


# ============================ hard negatives ============================

def neg_changelog():
    for i in range(6):
        ver = f"{R.randint(1, 5)}.{R.randint(0, 30)}.{R.randint(0, 9)}"
        lines = [f"# Changelog\n", f"## [{ver}] - 2025-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}\n"]
        for _ in range(R.randint(8, 20)):
            sha = hexs(pick([7, 7, 8, 10, 12, 40]))
            a, b = w(), w()
            lines.append(pick([
                f"- fix {a} rounding in {b} export ({sha})",
                f"- {a}: retry {b} webhooks on 502 (#{R.randint(100, 4000)}, {sha})",
                f"- Revert \"{a}: cache {b}\" — reverts commit {sha}",
                f"- fixes {sha}: {a} job leaked file handles",
                f"* [`{sha[:7]}`](https://github.com/acme/{a}/commit/{sha}) bump {b} client",
            ]))
        lines.append(f"\n**Full Changelog**: https://github.com/acme/{w()}/compare/{hexs(7)}...{hexs(7)}\n")
        case("changelog-commit-shas", "none", pick(["CHANGELOG.md", "docs/RELEASE_NOTES.md", "HISTORY.md"]),
             "\n".join(lines) + "\n" + fill_md(R.randint(3, 8)))


def neg_blame_ignore():
    for i in range(3):
        lines = ["# Revisions to ignore in git blame (formatting-only commits)",
                 "# Use: git config blame.ignoreRevsFile .git-blame-ignore-revs", ""]
        for _ in range(R.randint(5, 15)):
            lines.append(f"# {pick(['black', 'prettier', 'gofmt', 'rustfmt', 'clang-format'])} over {w()}/")
            lines.append(hexs(40))
            lines.append("")
        case("git-blame-ignore-revs", "none", ".git-blame-ignore-revs", "\n".join(lines))


def neg_revert_msg():
    for i in range(3):
        sha = hexs(40)
        a = w()
        text = f"""Revert "{a}: switch {w()} cache to redis"

This reverts commit {sha}.

The change doubled p99 latency on the {a} endpoint (see incident
INC-{R.randint(1000, 9999)}). Root cause was connection churn; we will retry once
pool sizing lands in {hexs(12)}.

Change-Id: I{hexs(40)}
Reviewed-on: https://review.example.org/c/{a}/+/{R.randint(10000, 99999)}
Signed-off-by: {pick(NAMES).capitalize()} <{pick(NAMES)}@example.org>
"""
        case("revert-commit-message", "none", pick([".git/COMMIT_EDITMSG", "docs/reverts/" + a + ".txt"]), text)


def neg_test_fixtures():
    fakes = [
        ('password', '"test1234"'), ('api_key', '"dummy"'), ('secret', '"changeme"'),
        ('token', '"mock-jwt-token"'), ('github_token', '"ghp_' + "0" * 36 + '"'),
        ('api_key', '"xxxxxxxxxxxxxxxxxxxxxxxx"'), ('stripe_key', '"<YOUR_STRIPE_KEY>"'),
        ('aws_secret_access_key', '"fake-secret-for-tests"'), ('password', '"hunter2"'),
        ('client_secret', '"not-a-real-secret"'), ('token', '"test-token"'),
    ]
    for i in range(8):
        a = w()
        chosen = list({k: (k, v) for k, v in R.sample(fakes, 5)}.values())[:3]
        if i % 3 == 0:
            body = "\n".join(f"        {k}={v}," for k, v in chosen)
            text = f"""import pytest

from app.{a} import {pascal(a)}Client


@pytest.fixture
def client():
    return {pascal(a)}Client(
        base_url="http://localhost:8080",
{body}
    )


def test_{a}_rejects_expired(client, requests_mock):
    requests_mock.get("http://localhost:8080/v1/{a}", status_code=401)
    with pytest.raises(AuthError):
        client.list()


def test_{a}_lists(client, requests_mock):
    requests_mock.get("http://localhost:8080/v1/{a}", json={{"items": []}})
    assert client.list() == []
{fill_py(R.randint(1, 3))}"""
            case("test-fixture-fake-values", "none", f"tests/test_{a}.py", text)
        elif i % 3 == 1:
            body = "\n".join(f"    {camel(*k.split('_'))}: {v}," for k, v in chosen)
            text = f"""import {{ describe, it, expect, vi }} from "vitest";
import {{ create{pascal(a)}Client }} from "../src/{a}";

const fixture = {{
{body}
}};

describe("{a} client", () => {{
  it("sends the auth header", async () => {{
    const fetch = vi.fn().mockResolvedValue({{ ok: true, json: async () => ({{}}) }});
    const c = create{pascal(a)}Client({{ ...fixture, fetch }});
    await c.ping();
    expect(fetch).toHaveBeenCalledOnce();
  }});
}});
{fill_js(R.randint(1, 3))}"""
            case("test-fixture-fake-values", "none", f"src/__tests__/{a}.test.ts", text)
        else:
            body = "\n".join(f"  {k}: {v}" for k, v in chosen)
            text = f"""# Fixture data for integration tests only; values are fakes.
{a}:
  base_url: http://127.0.0.1:{R.randint(3000, 9999)}
{body}
  users:
    - name: {pick(NAMES)}
      email: {pick(NAMES)}@example.com
      password: "password123"
    - name: {pick(NAMES)}
      email: {pick(NAMES)}@example.com
      password: "test1234"
"""
            case("test-fixture-fake-values", "none", f"spec/fixtures/{a}.yml", text)


def neg_ssh_public():
    for i in range(6):
        k = i % 4
        if k == 0:
            lines = [f"# {pick(['bastion', 'deploy', 'build'])} host access"]
            for _ in range(R.randint(3, 8)):
                lines.append(f"{ssh_pub()} {pick(NAMES)}@{pick(['laptop', 'workstation', 'ci-runner'])}")
            case("ssh-public-key-authorized-keys", "none", pick([".ssh/authorized_keys", "ansible/files/authorized_keys"]),
                 "\n".join(lines) + "\n")
        elif k == 1:
            lines = []
            for _ in range(R.randint(3, 8)):
                host = pick(["github.com", "gitlab.com", "bitbucket.org", f"10.0.{R.randint(0, 9)}.{R.randint(2, 250)}",
                             f"git.{w()}.internal"])
                lines.append(f"{host} {ssh_pub()}")
            case("ssh-public-key-known-hosts", "none", pick([".ssh/known_hosts", "deploy/known_hosts"]), "\n".join(lines) + "\n")
        elif k == 2:
            text = f'''resource "aws_key_pair" "{w()}" {{
  key_name   = "{w()}-deployer"
  public_key = "{ssh_pub()} deploy@ci"
}}

resource "aws_instance" "bastion" {{
  ami           = data.aws_ami.ubuntu.id
  instance_type = "t3.micro"
  key_name      = aws_key_pair.{w()}.key_name
}}
{fill_tf(R.randint(2, 5))}'''
            case("ssh-public-key-terraform", "none", "infra/bastion.tf", text)
        else:
            text = f"""{fill_yaml_comment()}
gitSync:
  enabled: true
  repo: git@github.com:acme/{w()}-dags.git
  branch: main
  knownHosts: |
    github.com {ssh_pub()}
  sshKeySecret: airflow-git-ssh
users:
  - name: {pick(NAMES)}
    sshAuthorizedKey: "{ssh_pub()}"
replicaCount: {R.randint(1, 4)}
"""
            case("ssh-public-key-helm-values", "none", "charts/airflow/values.yaml", text)


def neg_pem_public():
    for i in range(4):
        if i % 2 == 0:
            pem = "-----BEGIN PUBLIC KEY-----\n" + pem_body("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 256 + 5) + "\n-----END PUBLIC KEY-----"
            text = f'''package auth

// Public key used to verify tokens issued by the identity service.
// Rotated via the JWKS endpoint; this copy is the offline fallback.
const verifierPublicKeyPEM = `{pem}`
{fill_go(R.randint(2, 4))}'''
            case("pem-public-key", "none", "internal/auth/pubkey.go", text)
        else:
            pem = "-----BEGIN CERTIFICATE-----\n" + pem_body("MIIDdzCCAl+gAwIBAgIU", 860) + "\n-----END CERTIFICATE-----"
            text = f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {w()}-ca-bundle
  namespace: {w()}
data:
  ca.crt: |
""" + "\n".join("    " + l for l in pem.splitlines()) + "\n"
            case("pem-certificate", "none", "k8s/ca-bundle.yaml", text)


def neg_tf_refs():
    for i in range(5):
        a = w()
        text = f'''module "{a}_db" {{
  source  = "terraform-aws-modules/rds/aws"
  version = "~> 6.{R.randint(0, 9)}"

  identifier = "{a}-${{var.env}}"
  username   = var.db_username
  password   = var.db_password
  manage_master_user_password = false
}}

resource "aws_secretsmanager_secret_version" "{a}" {{
  secret_id     = aws_secretsmanager_secret.{a}.id
  secret_string = jsonencode({{
    username = var.db_username
    password = random_password.{a}.result
  }})
}}

resource "random_password" "{a}" {{
  length  = {R.randint(20, 40)}
  special = true
}}

locals {{
  api_token = data.aws_ssm_parameter.{a}_token.value
  client_secret = module.oidc.client_secret
}}

data "aws_ssm_parameter" "{a}_token" {{
  name = "/{a}/${{var.env}}/api_token"
}}

variable "db_password" {{
  type      = string
  sensitive = true
}}
{fill_tf(R.randint(1, 4))}'''
        case("terraform-references", "none", f"infra/{a}/main.tf", text)


def neg_helm_refs():
    for i in range(4):
        a = w()
        text = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{{{ include "{a}.fullname" . }}}}
spec:
  replicas: {{{{ .Values.replicaCount }}}}
  template:
    spec:
      containers:
        - name: {a}
          image: "{{{{ .Values.image.repository }}}}:{{{{ .Values.image.tag }}}}"
          env:
            - name: DATABASE_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {{{{ .Values.db.existingSecret }}}}
                  key: password
            - name: API_TOKEN
              value: {{{{ .Values.apiToken | quote }}}}
            - name: CLIENT_SECRET
              value: "{{{{ required "clientSecret is required" .Values.auth.clientSecret }}}}"
          ports:
            - containerPort: {R.randint(3000, 9000)}
"""
        case("helm-template-references", "none", f"charts/{a}/templates/deployment.yaml", text)


def neg_gha_refs():
    for i in range(5):
        a = w()
        text = f"""name: deploy-{a}
on:
  push:
    branches: [main]
permissions:
  contents: read
  id-token: write
jobs:
  deploy:
    runs-on: ubuntu-latest
    env:
      NPM_TOKEN: ${{{{ secrets.NPM_TOKEN }}}}
      AWS_REGION: eu-west-1
    steps:
      - uses: actions/checkout@{hexs(40)} # v4
      - uses: aws-actions/configure-aws-credentials@v4
        with:
          role-to-assume: arn:aws:iam::{R.randint(10**11, 10**12 - 1)}:role/gha-{a}
          aws-region: ${{{{ env.AWS_REGION }}}}
      - name: login
        run: echo "${{{{ secrets.REGISTRY_PASSWORD }}}}" | docker login ghcr.io -u ${{{{ github.actor }}}} --password-stdin
      - name: deploy
        env:
          SLACK_WEBHOOK_URL: ${{{{ secrets.SLACK_WEBHOOK_URL }}}}
          GITHUB_TOKEN: ${{{{ secrets.GITHUB_TOKEN }}}}
          DB_PASSWORD: ${{{{ secrets.DB_PASSWORD }}}}
        run: ./scripts/deploy.sh {a}
"""
        case("github-actions-secret-refs", "none", f".github/workflows/deploy-{a}.yml", text)


def neg_gitlab_refs():
    for i in range(3):
        a = w()
        text = f"""stages: [build, deploy]

variables:
  DOCKER_DRIVER: overlay2
  IMAGE: $CI_REGISTRY_IMAGE/{a}:$CI_COMMIT_SHORT_SHA

build:
  stage: build
  script:
    - echo "$CI_REGISTRY_PASSWORD" | docker login -u "$CI_REGISTRY_USER" --password-stdin $CI_REGISTRY
    - docker build -t $IMAGE .
    - docker push $IMAGE

deploy:
  stage: deploy
  script:
    - curl --fail -H "PRIVATE-TOKEN: ${{DEPLOY_API_TOKEN}}" "$CI_API_V4_URL/projects/$CI_PROJECT_ID/deployments"
    - helm upgrade --install {a} charts/{a} --set db.password=$DB_PASSWORD
  only: [main]
"""
        case("gitlab-ci-variable-refs", "none", ".gitlab-ci.yml", text)


def neg_k8s_refs():
    for i in range(4):
        a = w()
        text = f"""apiVersion: batch/v1
kind: CronJob
metadata:
  name: {a}-nightly
spec:
  schedule: "{R.randint(0, 59)} {R.randint(0, 23)} * * *"
  jobTemplate:
    spec:
      template:
        spec:
          serviceAccountName: {a}-runner
          containers:
            - name: job
              image: registry.example.com/{a}:1.{R.randint(0, 40)}.{R.randint(0, 9)}
              env:
                - name: PGPASSWORD
                  valueFrom:
                    secretKeyRef:
                      name: {a}-db-credentials
                      key: password
                - name: STRIPE_API_KEY
                  valueFrom:
                    secretKeyRef: {{name: {a}-stripe, key: api-key}}
              envFrom:
                - secretRef:
                    name: {a}-env
          restartPolicy: OnFailure
"""
        case("k8s-secretkeyref", "none", f"k8s/{a}-cronjob.yaml", text)


def neg_vault_ssm():
    for i in range(4):
        a = w()
        acct = R.randint(10**11, 10**12 - 1)
        text = f"""# Where each {a} credential lives. Nothing here is a credential.
secrets:
  database:
    vault_path: secret/data/{a}/prod/postgres
    vault_role: {a}-prod
  stripe:
    aws_secret_arn: arn:aws:secretsmanager:eu-west-1:{acct}:secret:{a}/stripe-api-key-{rs(ALNUM, 6)}
  sendgrid:
    ssm_parameter: /{a}/prod/sendgrid_api_key
    ssm_arn: arn:aws:ssm:eu-west-1:{acct}:parameter/{a}/prod/sendgrid_api_key
  signing_key:
    kms_key_id: arn:aws:kms:eu-west-1:{acct}:key/{uid()}
    azure_key_vault_uri: https://{a}-kv.vault.azure.net/secrets/signing-key
"""
        case("secret-store-references", "none", f"config/{a}-secrets-map.yaml", text)


def neg_env_lookups():
    for i in range(6):
        a = w()
        k = i % 6
        if k == 0:
            text = f"""import os

DATABASE_URL = os.environ["DATABASE_URL"]
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY")
STRIPE_SECRET_KEY = os.getenv("STRIPE_SECRET_KEY", "")
AWS_SECRET_ACCESS_KEY = os.environ.get("AWS_SECRET_ACCESS_KEY")
{fill_py(R.randint(3, 6))}"""
            case("env-lookup-python", "none", f"{a}/settings.py", text)
        elif k == 1:
            text = f"""import {{ Pool }} from "pg";

export const config = {{
  dbPassword: process.env.DB_PASSWORD,
  jwtSecret: process.env.JWT_SECRET ?? "",
  githubToken: process.env["GITHUB_TOKEN"],
  openaiApiKey: process.env.OPENAI_API_KEY!,
}};

export const pool = new Pool({{ connectionString: process.env.DATABASE_URL }});
{fill_js(R.randint(3, 6))}"""
            case("env-lookup-node", "none", f"src/{a}/config.ts", text)
        elif k == 2:
            text = f"""spring.datasource.url=jdbc:postgresql://${{DB_HOST:localhost}}:5432/{a}
spring.datasource.username=${{DB_USER}}
spring.datasource.password=${{DB_PASSWORD}}
spring.security.oauth2.client.registration.keycloak.client-secret=${{KEYCLOAK_CLIENT_SECRET}}
app.jwt.secret=${{JWT_SECRET:}}
app.{a}.page-size={R.randint(10, 200)}
management.endpoints.web.exposure.include=health,info
"""
            case("spring-placeholders", "none", "src/main/resources/application.properties", text)
        elif k == 3:
            text = f"""package config
{fill_go(1)}
func Load() Config {{
	return Config{{
		DBPassword:  os.Getenv("DB_PASSWORD"),
		APIKey:      mustEnv("{a.upper()}_API_KEY"),
		SlackWebhook: os.Getenv("SLACK_WEBHOOK_URL"),
	}}
}}
{fill_go(R.randint(2, 4))}"""
            case("env-lookup-go", "none", "internal/config/config.go", text)
        elif k == 4:
            text = f"""production:
  adapter: postgresql
  database: {a}_production
  username: <%= ENV["DB_USER"] %>
  password: <%= ENV.fetch("DB_PASSWORD") %>
  host: <%= ENV["DB_HOST"] %>
  secret_key_base: <%= Rails.application.credentials.secret_key_base %>
"""
            case("env-lookup-erb", "none", "config/database.yml", text)
        else:
            text = f"""<?php
return [
    'driver' => 'mysql',
    'host' => env('DB_HOST', '127.0.0.1'),
    'database' => env('DB_DATABASE', '{a}'),
    'username' => env('DB_USERNAME', 'forge'),
    'password' => env('DB_PASSWORD', ''),
    'stripe_secret' => getenv('STRIPE_SECRET'),
];
"""
            case("env-lookup-php", "none", "config/database.php", text)


def neg_urls():
    for i in range(5):
        a = w()
        text = pick([
            f"""auth:
  issuer_url: https://login.{a}.example.com/realms/main
  tokenUrl: https://login.{a}.example.com/realms/main/protocol/openid-connect/token
  jwks_url: https://login.{a}.example.com/realms/main/protocol/openid-connect/certs
  passwordResetEndpoint: https://{a}.example.com/account/password/reset
  secretsEndpoint: https://vault.internal:8200/v1/secret
webhook_url: https://hooks.example.com/{a}/events
""",
            f"""const endpoints = {{
  tokenEndpoint: "https://oauth2.googleapis.com/token",
  authUrl: "https://accounts.google.com/o/oauth2/v2/auth",
  apiKeyRotationUrl: "https://{a}.internal/api/keys/rotate",
  secretManagerEndpoint: "https://secretmanager.googleapis.com/v1",
}};
{fill_js(2)}""",
        ])
        is_yaml = text.startswith("auth")
        case("urls-without-credentials", "none", "config/auth.yaml" if is_yaml else "src/endpoints.js", text)


def neg_class_names():
    names = ["OAuth2AccessTokenResponseClientFactory", "get_secret_token", "PasswordEncoderDelegatingFactory",
             "ApiKeyAuthenticationProvider", "JwtSecretResolverImpl", "SecretKeySpecBuilder",
             "refresh_access_token_if_expired", "ClientSecretBasicAuthenticationConverter"]
    for i in range(5):
        a = w()
        x, y = R.sample(names, 2)
        if i % 2 == 0:
            text = f"""<?xml version="1.0" encoding="UTF-8"?>
<beans xmlns="http://www.springframework.org/schema/beans">
  <bean id="{camel(a, 'tokenClient')}" class="com.acme.{a}.security.{x if x[0].isupper() else 'TokenClient'}">
    <property name="tokenProvider" value="{y}"/>
    <property name="secretResolver" ref="{camel(a, 'secretResolver')}"/>
    <property name="passwordEncoder" value="bcryptPasswordEncoder"/>
  </bean>
</beans>
"""
            case("class-names-as-values", "none", "src/main/resources/security-context.xml", text)
        else:
            text = f"""[security]
token_provider = {x}
secret_resolver = {y}
password_hasher = argon2id
api_key_header = X-Api-Key
session_secret_source = vault
"""
            case("class-names-as-values", "none", pick(["setup.cfg", "config/security.ini"]), text)


def neg_masked():
    def m():
        return pick([
            "sk_live_" + "•" * R.randint(4, 12) + str(R.randint(1000, 9999)),
            "*" * R.randint(8, 16),
            "#" * R.randint(8, 16),
            "AKIA" + "*" * 12 + rs(UP, 4),
            "ghp_" + "x" * 36,
            "xoxb-" + "•" * 10,
            "[REDACTED]",
            "<redacted>",
        ])
    for i in range(6):
        a = w()
        if i % 3 == 0:
            text = f"""# {pascal(a)} settings (exported from admin console, values masked)

| Setting | Value |
|---|---|
| Stripe secret key | `{m()}` |
| Database password | `{m()}` |
| Webhook signing secret | `{m()}` |
| AWS access key | `{m()}` |

{fill_md(4)}"""
            case("masked-values", "none", f"docs/{a}-settings.md", text)
        elif i % 3 == 1:
            text = "\n".join([
                f"{R.randint(10, 23)}:{R.randint(10, 59)}:{R.randint(10, 59)} INFO  {a}.client  loaded config api_key={m()} region=eu-west-1",
                f"{R.randint(10, 23)}:{R.randint(10, 59)}:{R.randint(10, 59)} DEBUG {a}.db      connecting postgres://{pick(USERS)}:{pick(['*' * R.randint(4, 12), '#' * R.randint(6, 12), '[REDACTED]', '%2A%2A%2A%2A'])}@{pick(HOSTS)}:5432/{a}",
                f"{R.randint(10, 23)}:{R.randint(10, 59)}:{R.randint(10, 59)} INFO  {a}.auth    token={m()} expires_in=3600",
                f"{R.randint(10, 23)}:{R.randint(10, 59)}:{R.randint(10, 59)} WARN  {a}.http    retrying request_id={uid()}",
            ] + [
                f"{R.randint(10, 23)}:{R.randint(10, 59)}:{R.randint(10, 59)} INFO  {a}.{w()}  "
                + pick([f"processed {R.randint(1, 900)} {w()}s in {R.randint(2, 900)}ms",
                        f"GET /v1/{w()}s 200 request_id={uid()}",
                        f"cache hit key={w()}:{hexs(16)}",
                        f"span={hexs(16)} trace={hexs(32)} ok"])
                for _ in range(R.randint(15, 40))
            ]) + "\n"
            case("masked-values-log", "none", f"logs/{a}.log", text)
        else:
            text = json.dumps({"integration": a, "apiKey": m(), "secret": m(), "lastFour": str(R.randint(1000, 9999)),
                               "enabled": True}, indent=2) + "\n"
            case("masked-values", "none", f"fixtures/{a}-integration.json", text)


def neg_lockfiles():
    for i in range(6):
        k = i % 5
        if k == 0:
            pk = {}
            for _ in range(R.randint(6, 12)):
                n = pick(["lodash", "chalk", "semver", "debug", "ms", "yargs", "picomatch", "tslib", "undici", "zod",
                          "acorn", "ws", "minimatch", "uuid"])
                pk[f"node_modules/{n}"] = {"version": f"{R.randint(1, 9)}.{R.randint(0, 20)}.{R.randint(0, 9)}",
                                           "resolved": f"https://registry.npmjs.org/{n}/-/{n}-1.0.0.tgz",
                                           "integrity": "sha512-" + b64(rbytes(64)), "license": "MIT"}
            text = json.dumps({"name": w(), "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": pk},
                              indent=2) + "\n"
            case("lockfile-integrity", "none", "package-lock.json", text)
        elif k == 1:
            lines = []
            for _ in range(R.randint(8, 16)):
                mod = pick(["github.com/google/uuid", "golang.org/x/sys", "github.com/stretchr/testify",
                            "go.uber.org/zap", "github.com/spf13/cobra", "google.golang.org/grpc"])
                v = f"v{R.randint(0, 2)}.{R.randint(0, 40)}.{R.randint(0, 9)}"
                lines.append(f"{mod} {v} h1:{b64(rbytes(32))}")
                lines.append(f"{mod} {v}/go.mod h1:{b64(rbytes(32))}")
            case("go-sum-hashes", "none", "go.sum", "\n".join(lines) + "\n")
        elif k == 2:
            parts = ["# This file is automatically @generated by Cargo.\nversion = 4\n"]
            for _ in range(R.randint(6, 12)):
                n = pick(["serde", "tokio", "anyhow", "regex", "bytes", "libc", "memchr", "itoa", "syn", "quote"])
                parts.append(f'[[package]]\nname = "{n}"\nversion = "1.{R.randint(0, 50)}.{R.randint(0, 9)}"\n'
                             f'source = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{hexs(64)}"\n')
            case("cargo-lock-checksums", "none", "Cargo.lock", "\n".join(parts))
        elif k == 3:
            parts = []
            for _ in range(R.randint(6, 12)):
                n = pick(["@babel/core", "react", "react-dom", "typescript", "esbuild", "postcss", "vite"])
                v = f"{R.randint(1, 18)}.{R.randint(0, 9)}.{R.randint(0, 9)}"
                parts.append(f'"{n}@^{v}":\n  version "{v}"\n  resolved "https://registry.yarnpkg.com/{n}/-/{n.split("/")[-1]}-{v}.tgz#{hexs(40)}"\n'
                             f'  integrity sha512-{b64(rbytes(64))}\n')
            case("yarn-lock-integrity", "none", "yarn.lock", "# yarn lockfile v1\n\n" + "\n".join(parts))
        else:
            parts = []
            for _ in range(R.randint(5, 10)):
                n = pick(["requests", "urllib3", "idna", "certifi", "charset-normalizer", "pydantic", "click"])
                parts.append(f'[[package]]\nname = "{n}"\nversion = "2.{R.randint(0, 30)}.{R.randint(0, 9)}"\n'
                             f'files = [\n    {{file = "{n}-2.0.0-py3-none-any.whl", hash = "sha256:{hexs(64)}"}},\n'
                             f'    {{file = "{n}-2.0.0.tar.gz", hash = "sha256:{hexs(64)}"}},\n]\n')
            case("poetry-lock-hashes", "none", "poetry.lock", "\n".join(parts))


def neg_docker_digests():
    for i in range(4):
        a = w()
        if i % 2 == 0:
            text = f"""# syntax=docker/dockerfile:1.7
FROM golang:1.{R.randint(20, 23)}-alpine@sha256:{hexs(64)} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/{a} ./cmd/{a}

FROM gcr.io/distroless/static-debian12@sha256:{hexs(64)}
ARG GIT_SHA
ENV GIT_SHA=${{GIT_SHA}}
COPY --from=build /out/{a} /{a}
USER 65532:65532
ENTRYPOINT ["/{a}"]
"""
            case("docker-image-digests", "none", "Dockerfile", text)
        else:
            text = f"""services:
  {a}:
    image: ghcr.io/acme/{a}@sha256:{hexs(64)}
    environment:
      DB_PASSWORD: ${{DB_PASSWORD:?set in .env}}
      API_TOKEN: ${{API_TOKEN}}
      LOG_LEVEL: info
  redis:
    image: redis:7-alpine@sha256:{hexs(64)}
    command: ["redis-server", "--requirepass", "${{REDIS_PASSWORD}}"]
"""
            case("compose-digests-and-interpolation", "none", "docker-compose.yml", text)


def neg_ids():
    for i in range(7):
        a = w()
        k = i % 4
        if k == 0:
            text = json.dumps({"requestId": uid(), "traceId": hexs(32), "spanId": hexs(16),
                               "correlation_id": uid(), "tenantId": uid(), "status": 200,
                               "etag": f'W/"{hexs(16)}"', "durationMs": R.randint(2, 900)}, indent=2) + "\n"
            case("request-trace-ids", "none", f"fixtures/{a}-response.json", text)
        elif k == 1:
            text = f"""HTTP/1.1 200 OK
Content-Type: application/json
ETag: "{hexs(32)}"
X-Request-Id: {uid()}
X-Amzn-Trace-Id: Root=1-{hexs(8)}-{hexs(24)}
traceparent: 00-{hexs(32)}-{hexs(16)}-01
Cache-Control: max-age={R.randint(60, 3600)}
X-Cache-Key: {a}:v2:{hexs(40)}

{{"ok": true}}
"""
            case("http-headers-ids", "none", f"docs/examples/{a}-response.http", text)
        elif k == 2:
            text = f"""apiVersion: v1
kind: Pod
metadata:
  name: {a}-{rs(LO + DG, 10)}-{rs(LO + DG, 5)}
  namespace: {w()}
  uid: {uid()}
  resourceVersion: "{R.randint(10**6, 10**9)}"
  ownerReferences:
    - apiVersion: apps/v1
      kind: ReplicaSet
      name: {a}-{rs(LO + DG, 10)}
      uid: {uid()}
  labels:
    pod-template-hash: {rs(LO + DG, 10)}
status:
  containerStatuses:
    - containerID: containerd://{hexs(64)}
      imageID: ghcr.io/acme/{a}@sha256:{hexs(64)}
"""
            case("k8s-resource-uids", "none", f"debug/{a}-pod.yaml", text)
        else:
            text = f"""-- seed data for local development
INSERT INTO {a}s (id, external_ref, checksum, created_at) VALUES
  ('{uid()}', 'ord_{rs(LO + DG, 14)}', '{hexs(64)}', now()),
  ('{uid()}', 'ord_{rs(LO + DG, 14)}', '{hexs(64)}', now()),
  ('{uid()}', 'ord_{rs(LO + DG, 14)}', '{hexs(64)}', now());

CREATE INDEX idx_{a}_ref ON {a}s (external_ref);
"""
            case("uuid-and-checksum-seed-data", "none", f"db/seeds/{a}.sql", text)


def tiny_png():
    wdt, hgt = R.randint(4, 12), R.randint(4, 12)
    raw = b"".join(b"\x00" + rbytes(wdt * 3) for _ in range(hgt))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", wdt, hgt, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def neg_base64_data():
    for i in range(4):
        a = w()
        if i % 2 == 0:
            text = f""".{a}-icon {{
  width: 16px;
  height: 16px;
  background-image: url("data:image/png;base64,{b64(tiny_png())}");
}}

@font-face {{
  font-family: "{pascal(a)}Sans";
  src: url("data:font/woff2;base64,d09GMgABAAAAA{b64(rbytes(180))}") format("woff2");
}}
"""
            case("base64-image-font-data", "none", f"static/css/{a}.css", text)
        else:
            text = f"""import {{ Image }} from "react-native";

export const PLACEHOLDER = "data:image/png;base64,{b64(tiny_png())}";

export function Avatar({{ uri }}) {{
  return <Image source={{{{ uri: uri ?? PLACEHOLDER }}}} style={{{{ width: 32, height: 32 }}}} />;
}}
"""
            case("base64-image-font-data", "none", f"src/components/{pascal(a)}Avatar.jsx", text)


def neg_csp_nonce():
    for i in range(3):
        n1 = b64(rbytes(16))
        a = w()
        text = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'nonce-{n1}'; style-src 'self' 'sha256-{b64(rbytes(32))}'">
  <link rel="stylesheet" href="/assets/{a}.{hexs(8)}.css" integrity="sha384-{b64(rbytes(48))}" crossorigin="anonymous">
  <title>{pascal(a)}</title>
</head>
<body>
  <div id="root"></div>
  <script nonce="{n1}" src="/assets/{a}.{hexs(8)}.js"></script>
</body>
</html>
"""
        case("csp-nonce-and-sri", "none", "public/index.html", text)


def neg_publishable():
    for i in range(3):
        a = w()
        text = f"""// Browser-side checkout. The publishable key is public by design (Stripe docs).
import {{ loadStripe }} from "@stripe/stripe-js";

const stripePromise = loadStripe("pk_live_51{rs(ALNUM, 97)}");

export async function checkout(sessionId) {{
  const stripe = await stripePromise;
  return stripe.redirectToCheckout({{ sessionId }});
}}
{fill_js(R.randint(2, 4))}"""
        case("stripe-publishable-key-public-by-design", "none", f"web/src/{a}/checkout.js", text)


def neg_object_keys():
    for i in range(4):
        a = w()
        text = f"""{{
  "files": {{
    "main.js": "/static/js/main.{hexs(8)}.js",
    "main.css": "/static/css/main.{hexs(8)}.css",
    "vendor.js": "/static/js/{R.randint(100, 999)}.{hexs(8)}.chunk.js",
    "logo.svg": "/static/media/logo.{hexs(20)}.svg"
  }},
  "uploads": [
    "s3://acme-{a}-uploads/{R.randint(2020, 2025)}/{R.randint(1, 12):02d}/{uid()}/{hexs(32)}.pdf",
    "s3://acme-{a}-uploads/{R.randint(2020, 2025)}/{R.randint(1, 12):02d}/{uid()}/{hexs(32)}.png"
  ],
  "buildId": "{rs(ALNUM + '-_', 21)}"
}}
"""
        case("content-hash-filenames-and-object-keys", "none", "build/asset-manifest.json", text)


def neg_word_pairs():
    for i in range(4):
        a = w()
        text = f"""[{a}]
token_list = "{w()}-{pick(['window', 'bucket', 'ring', 'pool'])}"
session_key_prefix = "{a}-{w()}"
secret_name = "{a}-{w()}-credentials"
password_field = "user_password"
api_key_header = "X-{pascal(a)}-Key"
auth_token_cookie = "{a}_session"
key_rotation = "{pick(['weekly', 'monthly', 'quarterly'])}"
"""
        case("word-pair-config-values", "none", pick(["config/app.toml", f"config/{a}.toml"]), text)


def neg_password_policy():
    for i in range(4):
        a = w()
        text = f"""password_policy:
  password_min_length: {R.randint(8, 16)}
  password_max_age_days: {R.randint(30, 365)}
  require_uppercase: true
  require_symbols: {pick(['true', 'false'])}
  password_history: {R.randint(3, 24)}
  secret_rotation_days: {R.randint(30, 180)}
  token_ttl: {R.randint(5, 60)}m
  max_failed_password_attempts: {R.randint(3, 10)}
lockout:
  duration: {R.randint(5, 60)}m
"""
        case("password-policy-config", "none", f"config/{a}-security.yaml", text)


def neg_i18n():
    for i in range(4):
        a = w()
        if i % 2:
            text = json.dumps({"login": {"password": "Enter your password", "passwordHint": "At least 12 characters",
                                         "forgotPassword": "Forgot your password?", "token": "Enter the 6-digit code",
                                         "apiKeyLabel": "API key", "secretCopied": "Secret copied to clipboard"},
                               "errors": {"wrongPassword": "Incorrect password. Try again."}}, indent=2, ensure_ascii=False) + "\n"
            case("i18n-password-strings", "none", f"locales/{pick(['en', 'en-GB'])}/{a}.json", text)
        else:
            text = f"""login.password=Mot de passe
login.password.placeholder=Saisissez votre mot de passe
login.password.forgot=Mot de passe oublié ?
settings.apiKey.title=Clé d'API
settings.apiKey.regenerate=Régénérer la clé secrète
settings.token.expired=Votre jeton a expiré
"""
            case("i18n-password-strings", "none", "src/main/resources/messages_fr.properties", text)


def neg_env_example():
    def ph(name):
        return pick(["", f"<{name}>", f"your-{name.lower().replace('_', '-')}", "changeme", f"${{{name}}}",
                     "REPLACE_ME", f"<insert {name.lower().replace('_', ' ')} here>"])
    for i in range(5):
        a = w()
        lines = ["# Copy to .env and fill in. Never commit the real .env.", "APP_ENV=development",
                 f"PORT={R.randint(3000, 9000)}",
                 f"DATABASE_URL=postgres://postgres:postgres@localhost:5432/{a}_dev",
                 f"REDIS_URL=redis://localhost:{pick([6379, 6380])}/0"]
        opts = [("STRIPE_SECRET_KEY", pick(["sk_test_your_key_here", "sk_test_...", ph("STRIPE_SECRET_KEY")])),
                ("STRIPE_WEBHOOK_SECRET", pick(["whsec_...", ph("STRIPE_WEBHOOK_SECRET")])),
                ("OPENAI_API_KEY", pick(["<YOUR_OPENAI_KEY>", "sk-...", ph("OPENAI_API_KEY")])),
                ("GITHUB_TOKEN", ph("GITHUB_TOKEN")),
                ("AWS_ACCESS_KEY_ID", ph("AWS_ACCESS_KEY_ID")),
                ("AWS_SECRET_ACCESS_KEY", ph("AWS_SECRET_ACCESS_KEY")),
                ("SENDGRID_API_KEY", pick(["SG.xxxxxxxxxxxxxxxx", ph("SENDGRID_API_KEY")])),
                ("JWT_SECRET", ph("JWT_SECRET")),
                ("SLACK_BOT_TOKEN", pick(["xoxb-your-token", ph("SLACK_BOT_TOKEN")])),
                (f"{a.upper()}_API_KEY", ph(f"{a.upper()}_API_KEY"))]
        for k, v in R.sample(opts, R.randint(6, len(opts))):
            lines.append(f"{k}={v}")
        case("env-example-placeholders", "none", pick([".env.example", ".env.sample", ".env.template"]), "\n".join(lines) + "\n")


def neg_notebook():
    for i in range(3):
        a = w()
        nb = {"cells": [
            {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
             "source": ["import os, hashlib\n", "import pandas as pd\n",
                        f"token = os.environ[\"{a.upper()}_API_TOKEN\"]\n"]},
            {"cell_type": "code", "execution_count": 2, "metadata": {}, "source": [
                f"df = pd.read_parquet(\"s3://acme-{a}/exports/latest.parquet\")\n",
                "df['row_hash'] = df['id'].map(lambda x: hashlib.sha256(str(x).encode()).hexdigest())\n",
                "df.head(3)"],
             "outputs": [{"output_type": "execute_result", "execution_count": 2, "metadata": {},
                          "data": {"text/plain": ["   id                                                         row_hash\n"]
                                   + [f"{j}  {R.randint(1000, 9999)}  {hexs(64)}\n" for j in range(3)]}}]},
            {"cell_type": "markdown", "metadata": {}, "source": [f"Run id `{uid()}`, git `{hexs(40)}`."]},
        ], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}
        case("notebook-hashes-no-secret", "none", f"notebooks/{a}_exploration.ipynb", json.dumps(nb, indent=1) + "\n")


def neg_password_checks():
    for i in range(4):
        a = w()
        if i % 2 == 0:
            text = f"""public sealed class {pascal(a)}PasswordValidator
{{
    private const string PasswordRequiredMessage = "Password is required";
    private const int MinPasswordLength = {R.randint(8, 14)};

    public ValidationResult Validate(string password, string confirmPassword)
    {{
        if (string.IsNullOrEmpty(password)) return ValidationResult.Fail(PasswordRequiredMessage);
        if (password != confirmPassword) return ValidationResult.Fail("Passwords do not match");
        if (password.Length < MinPasswordLength) return ValidationResult.Fail("Password too short");
        var apiKey = _config["Integrations:{pascal(a)}:ApiKey"];
        var secret = await _secretClient.GetSecretAsync("{a}-signing-secret");
        return ValidationResult.Ok;
    }}
}}
"""
            case("password-handling-code", "none", f"src/{pascal(a)}/PasswordValidator.cs", text)
        else:
            text = f"""use secrecy::{{ExposeSecret, SecretString}};

pub struct {pascal(a)}Credentials {{
    pub username: String,
    pub password: SecretString,
}}

impl {pascal(a)}Credentials {{
    pub fn from_env() -> anyhow::Result<Self> {{
        let username = std::env::var("{a.upper()}_USER")?;
        let password = SecretString::from(std::env::var("{a.upper()}_PASSWORD")?);
        Ok(Self {{ username, password }})
    }}

    pub fn is_empty(&self) -> bool {{
        self.password.expose_secret().is_empty()
    }}
}}
"""
            case("password-handling-code", "none", f"src/{a}/credentials.rs", text)


def neg_misc_hashes():
    # checksum files, SRI in package manifests, bcrypt-free
    for i in range(4):
        a = w()
        if i % 2 == 0:
            lines = [f"{hexs(64)}  {a}-{R.randint(1, 3)}.{R.randint(0, 9)}.{R.randint(0, 9)}-{os_}-{arch}.tar.gz"
                     for os_ in ["linux", "darwin", "windows"] for arch in ["amd64", "arm64"]]
            case("release-checksums", "none", "dist/SHA256SUMS", "\n".join(lines) + "\n")
        else:
            text = f"""#!/usr/bin/env bash
set -euo pipefail
VERSION="1.{R.randint(0, 30)}.{R.randint(0, 9)}"
SHA256="{hexs(64)}"
curl -fsSLo /tmp/{a}.tgz "https://github.com/acme/{a}/releases/download/v${{VERSION}}/{a}-linux-amd64.tgz"
echo "${{SHA256}}  /tmp/{a}.tgz" | sha256sum -c -
tar -xzf /tmp/{a}.tgz -C /usr/local/bin
{fill_sh(R.randint(3, 6))}"""
            case("installer-checksum", "none", f"scripts/install-{a}.sh", text)


def neg_docs_placeholders():
    for i in range(4):
        a = w()
        text = f"""# {pascal(a)} API quickstart

Create a token under *Settings → API tokens*, then:

```bash
export {a.upper()}_TOKEN="<your-token>"
curl -H "Authorization: Bearer ${a.upper()}_TOKEN" https://api.{a}.example.com/v1/me
```

Or with the CLI:

```bash
{a} login --token $YOUR_TOKEN
{a} config set api_key YOUR_API_KEY_HERE
```

The response includes a request id such as `{uid()}` which support can trace.

{fill_md(R.randint(3, 6))}"""
        case("docs-placeholder-tokens", "none", f"docs/{a}-quickstart.md", text)


# ============================ secrets ============================

def sec_aws():
    for i in range(6):
        a = w()
        kid, sec = aws_id(), aws_secret()
        k = i % 4
        if k == 0:
            text = f"""[default]
region = eu-west-1
output = json

[profile {a}-prod]
aws_access_key_id = {kid}
aws_secret_access_key = {sec}
region = us-east-1
"""
            case("aws-access-key-pair", "secret", pick(["deploy/aws-credentials", ".aws/credentials"]), text)
        elif k == 1:
            text = f"""import boto3
{fill_py(R.randint(1, 3))}
s3 = boto3.client(
    "s3",
    aws_access_key_id="{kid}",
    aws_secret_access_key="{sec}",
    region_name="eu-central-1",
)
{fill_py(R.randint(2, 4))}"""
            case("aws-access-key-pair", "secret", f"scripts/{a}_upload.py", text)
        elif k == 2:
            text = f'''provider "aws" {{
  region     = "us-west-2"
  access_key = "{kid}"
  secret_key = "{sec}"
}}
{fill_tf(R.randint(2, 5))}'''
            case("aws-access-key-pair", "secret", "infra/provider.tf", text)
        else:
            text = f"""APP_ENV=production
LOG_LEVEL=info
AWS_REGION=eu-west-1
AWS_ACCESS_KEY_ID={kid}
AWS_SECRET_ACCESS_KEY={sec}
S3_BUCKET=acme-{a}-prod
"""
            case("aws-access-key-pair", "secret", ".env", text)


def sec_gcp():
    for i in range(3):
        a = w()
        proj = f"{a}-{w()}-{R.randint(100000, 999999)}"
        sa = {"type": "service_account", "project_id": proj, "private_key_id": hexs(40),
              "private_key": "-----BEGIN PRIVATE KEY-----\n" + pem_body("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1180)
              + "\n-----END PRIVATE KEY-----\n",
              "client_email": f"{a}-deployer@{proj}.iam.gserviceaccount.com", "client_id": str(R.randint(10**20, 10**21)),
              "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
              "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
              "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{a}-deployer%40{proj}.iam.gserviceaccount.com",
              "universe_domain": "googleapis.com"}
        case("gcp-service-account-json", "secret", pick(["gcp-key.json", f"deploy/{a}-sa.json", "credentials/service-account.json"]),
             json.dumps(sa, indent=2) + "\n")


def sec_azure():
    for i in range(3):
        a = w()
        cs = f"DefaultEndpointsProtocol=https;AccountName={a}{rs(LO + DG, 6)};AccountKey={b64(rbytes(64))};EndpointSuffix=core.windows.net"
        if i % 2 == 0:
            text = json.dumps({"Logging": {"LogLevel": {"Default": "Information"}},
                               "ConnectionStrings": {"Storage": cs, "Redis": "localhost:6379"},
                               "AllowedHosts": "*"}, indent=2) + "\n"
            case("azure-storage-connection-string", "secret", "appsettings.Production.json", text)
        else:
            text = f"""using Azure.Storage.Blobs;

public static class {pascal(a)}Storage
{{
    private const string ConnectionString = "{cs}";

    public static BlobContainerClient Container(string name) =>
        new BlobServiceClient(ConnectionString).GetBlobContainerClient(name);
}}
"""
            case("azure-storage-connection-string", "secret", f"src/{pascal(a)}Storage.cs", text)


def sec_github():
    for i in range(5):
        a = w()
        tok = ghp() if i % 2 == 0 else gh_pat()
        k = i % 3
        if k == 0:
            text = f"""#!/usr/bin/env bash
set -euo pipefail
{fill_sh(2)}
GITHUB_TOKEN="{tok}"
curl -fsS -H "Authorization: token $GITHUB_TOKEN" \\
  "https://api.github.com/repos/acme/{a}/releases/latest" | jq -r .tag_name
{fill_sh(R.randint(2, 4))}"""
            case("github-token", "secret", f"scripts/release-{a}.sh", text)
        elif k == 1:
            text = f"""package main

import (
	"context"
	"github.com/google/go-github/v60/github"
)

const ghToken = "{tok}"

func client(ctx context.Context) *github.Client {{
	return github.NewClient(nil).WithAuthToken(ghToken)
}}
{fill_go(R.randint(2, 4))}"""
            case("github-token", "secret", f"cmd/{a}-bot/main.go", text)
        else:
            text = f"""[github]
user = {pick(NAMES)}
token = {tok}

[core]
editor = vim
"""
            case("github-token", "secret", pick([".gitconfig.local", "config/hub.ini"]), text)


def sec_gitlab():
    for i in range(3):
        a = w()
        tok = glpat()
        text = pick([
            f"""include:
  - project: platform/ci-templates
    file: /docker.yml

variables:
  GITLAB_API_TOKEN: "{tok}"
  IMAGE: $CI_REGISTRY_IMAGE/{a}

release:
  script:
    - release-cli create --name "$CI_COMMIT_TAG" --tag-name "$CI_COMMIT_TAG"
""",
            f"""import gitlab

gl = gitlab.Gitlab("https://gitlab.com", private_token="{tok}")
project = gl.projects.get("acme/{a}")
{fill_py(R.randint(2, 4))}""",
        ])
        path = ".gitlab-ci.yml" if text.startswith("include") else f"tools/{a}_mirror.py"
        case("gitlab-token", "secret", path, text)


def sec_slack():
    for i in range(5):
        a = w()
        if i % 2 == 0:
            tok = xoxb()
            text = f"""const {{ WebClient }} = require("@slack/web-api");

const slack = new WebClient("{tok}");

async function notify(channel, text) {{
  await slack.chat.postMessage({{ channel, text }});
}}
{fill_js(R.randint(2, 4))}
module.exports = {{ notify }};
"""
            case("slack-bot-token", "secret", f"src/{a}/notify.js", text)
        else:
            hook = slack_hook()
            text = f"""alertmanager:
  config:
    global:
      resolve_timeout: 5m
    receivers:
      - name: {a}-oncall
        slack_configs:
          - api_url: {hook}
            channel: "#{a}-alerts"
            send_resolved: true
    route:
      receiver: {a}-oncall
      group_wait: 30s
"""
            case("slack-webhook", "secret", "monitoring/values.yaml", text)


def sec_stripe():
    for i in range(4):
        a = w()
        key = stripe_sk()
        if i % 2 == 0:
            text = f"""<?php
require __DIR__ . '/vendor/autoload.php';

\\Stripe\\Stripe::setApiKey('{key}');

function create_{a}_intent(int $amount): \\Stripe\\PaymentIntent {{
    return \\Stripe\\PaymentIntent::create([
        'amount' => $amount,
        'currency' => 'eur',
        'automatic_payment_methods' => ['enabled' => true],
    ]);
}}
"""
            case("stripe-secret-key", "secret", f"src/{a}/payments.php", text)
        else:
            text = f"""# config/initializers/stripe.rb
Rails.configuration.stripe = {{
  publishable_key: ENV["STRIPE_PUBLISHABLE_KEY"],
  secret_key: "{key}"
}}

Stripe.api_key = Rails.configuration.stripe[:secret_key]
Stripe.max_network_retries = {R.randint(1, 4)}
"""
            case("stripe-secret-key", "secret", "config/initializers/stripe.rb", text)


def sec_twilio():
    for i in range(3):
        a = w()
        sid, tok = twilio_sid(), hexs(32)
        text = f"""from twilio.rest import Client

TWILIO_ACCOUNT_SID = "{sid}"
TWILIO_AUTH_TOKEN = "{tok}"
FROM_NUMBER = "+1{R.randint(2000000000, 9999999999)}"

client = Client(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)
{fill_py(R.randint(2, 4))}"""
        case("twilio-credentials", "secret", f"{a}/sms.py", text)


def sec_sendgrid():
    for i in range(3):
        a = w()
        key = sendgrid()
        text = pick([
            f"""SENDGRID_API_KEY={key}
MAIL_FROM=no-reply@{a}.example.com
MAIL_FROM_NAME="{pascal(a)}"
""",
            f"""import sgMail from "@sendgrid/mail";

sgMail.setApiKey("{key}");
{fill_js(R.randint(2, 4))}""",
        ])
        path = ".env.production" if text.startswith("SENDGRID") else f"src/{a}/mailer.ts"
        case("sendgrid-api-key", "secret", path, text)


def sec_openai():
    for i in range(3):
        a = w()
        key = openai()
        text = f"""from openai import OpenAI

client = OpenAI(api_key="{key}")


def summarize_{a}(text: str) -> str:
    resp = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{{"role": "user", "content": f"Summarize: {{text}}"}}],
    )
    return resp.choices[0].message.content
{fill_py(R.randint(1, 3))}"""
        case("openai-api-key", "secret", f"{a}/llm.py", text)


def sec_anthropic():
    for i in range(3):
        a = w()
        key = anthropic()
        if i % 2 == 0:
            text = f"""import Anthropic from "@anthropic-ai/sdk";

const anthropic = new Anthropic({{ apiKey: "{key}" }});

export async function classify{pascal(a)}(text: string) {{
  const msg = await anthropic.messages.create({{
    model: "claude-sonnet-4-5",
    max_tokens: 256,
    messages: [{{ role: "user", content: text }}],
  }});
  return msg.content;
}}
"""
            case("anthropic-api-key", "secret", f"src/{a}/classify.ts", text)
        else:
            text = f"""[llm]
provider = "anthropic"
model = "claude-sonnet-4-5"
api_key = "{key}"
max_tokens = {R.randint(256, 4096)}
"""
            case("anthropic-api-key", "secret", "config/llm.toml", text)


def sec_npm_pypi():
    for i in range(3):
        tok = npm_tok()
        text = f"""registry=https://registry.npmjs.org/
@acme:registry=https://npm.pkg.github.com
//registry.npmjs.org/:_authToken={tok}
save-exact=true
"""
        case("npm-token", "secret", ".npmrc", text)
    for i in range(2):
        tok = pypi_tok()
        text = f"""[distutils]
index-servers =
    pypi

[pypi]
username = __token__
password = {tok}
"""
        case("pypi-token", "secret", ".pypirc", text)


def sec_shopify_dd_vault():
    for i in range(2):
        a = w()
        text = f"""SHOPIFY_SHOP={a}-store.myshopify.com
SHOPIFY_ADMIN_API_ACCESS_TOKEN={shopify()}
SHOPIFY_API_VERSION=2024-10
"""
        case("shopify-token", "secret", ".env", text)
    for i in range(2):
        a = w()
        text = f"""services:
  datadog:
    image: gcr.io/datadoghq/agent:7
    environment:
      DD_API_KEY: {hexs(32)}
      DD_SITE: datadoghq.eu
      DD_LOGS_ENABLED: "true"
  {a}:
    image: ghcr.io/acme/{a}:latest
    depends_on: [datadog]
"""
        case("datadog-api-key-compose", "secret", "docker-compose.yml", text)
    for i in range(2):
        a = w()
        text = f"""#!/bin/sh
export VAULT_ADDR=https://vault.{a}.internal:8200
export VAULT_TOKEN={vault_tok()}
vault kv get -field=password secret/{a}/db
"""
        case("vault-token", "secret", f"scripts/{a}-db-pass.sh", text)


def sec_generic_password():
    for i in range(7):
        a = w()
        pw = password()
        k = i % 5
        if k == 0:
            text = f"""<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <connectionStrings>
    <add name="{pascal(a)}Db" connectionString="Server={pick(HOSTS)};Database={a};User Id={pick(USERS)};Password={pw};Encrypt=True" providerName="System.Data.SqlClient"/>
  </connectionStrings>
  <appSettings>
    <add key="PageSize" value="{R.randint(10, 100)}"/>
  </appSettings>
</configuration>
"""
            case("password-in-connection-string", "secret", "Web.config", text)
        elif k == 1:
            text = f"""spring:
  datasource:
    url: jdbc:mysql://{pick(HOSTS)}:3306/{a}
    username: {pick(USERS)}
    password: "{pw}"
  jpa:
    hibernate:
      ddl-auto: validate
"""
            case("password-in-config", "secret", "src/main/resources/application-prod.yml", text)
        elif k == 2:
            text = f"""[database]
host = {pick(HOSTS)}
port = 5432
user = {pick(USERS)}
password = {pw}
dbname = {a}

[cache]
ttl = {R.randint(60, 600)}
"""
            case("password-in-config", "secret", pick(["config/prod.ini", "etc/app.conf"]), text)
        elif k == 3:
            text = f"""package com.acme.{a};

import java.sql.Connection;
import java.sql.DriverManager;

public class {pascal(a)}Dao {{
    private static final String DB_USER = "{pick(USERS)}";
    private static final String DB_PASSWORD = "{pw}";

    Connection open() throws Exception {{
        return DriverManager.getConnection("jdbc:postgresql://{pick(HOSTS)}/{a}", DB_USER, DB_PASSWORD);
    }}
{fill_java(R.randint(1, 3))}}}
"""
            case("password-in-code", "secret", f"src/main/java/com/acme/{a}/{pascal(a)}Dao.java", text)
        else:
            text = f"""services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: {pick(USERS)}
      POSTGRES_PASSWORD: "{pw}"
      POSTGRES_DB: {a}
    volumes:
      - pgdata:/var/lib/postgresql/data
volumes:
  pgdata: {{}}
"""
            case("password-in-compose-environment", "secret", "deploy/docker-compose.prod.yml", text)


def sec_db_url():
    for i in range(5):
        a = w()
        k = i % 3
        scheme = pick([["postgres", "mysql", "mongodb+srv", "redis"], ["postgres", "postgresql"], ["postgresql", "mysql"]][k])
        host = {"postgres": pick(["pg-main.c9x2.eu-west-1.rds.amazonaws.com", "db-primary.prod.svc.cluster.local", "10.20.4.17"]),
                "postgresql": pick(["pg-main.c9x2.eu-west-1.rds.amazonaws.com", "billing-db.internal"]),
                "mysql": pick(["mysql.shopfront.net", "10.20.4.17"]),
                "mongodb+srv": f"cluster0.{rs(LO + DG, 5)}.mongodb.net",
                "redis": pick(["redis.staging.local", "10.20.4.17"])}[scheme]
        url = f"{scheme}://{pick(USERS)}:{url_password()}@{host}" + ("" if scheme == "mongodb+srv" else (":6379/0" if scheme == "redis" else f"/{a}"))
        if k == 0:
            text = f"{'REDIS_URL' if scheme == 'redis' else ('MONGODB_URI' if scheme.startswith('mongo') else 'DATABASE_URL')}={url}\nRAILS_ENV=production\nRAILS_LOG_TO_STDOUT=1\nWEB_CONCURRENCY={R.randint(2, 8)}\n"
            case("db-url-with-password", "secret", ".env.production", text)
        elif k == 1:
            text = f"""import {{ drizzle }} from "drizzle-orm/node-postgres";
import {{ Pool }} from "pg";

const pool = new Pool({{
  connectionString: "{url}",
  max: {R.randint(5, 40)},
}});

export const db = drizzle(pool);
"""
            case("db-url-with-password", "secret", f"src/db/{a}.ts", text)
        else:
            text = f"""[alembic]
script_location = migrations
sqlalchemy.url = {url}

[loggers]
keys = root,sqlalchemy
"""
            case("db-url-with-password", "secret", "alembic.ini", text)


def sec_jwt():
    for i in range(3):
        a = w()
        tok = jwt(jwt_claims())
        if i % 2 == 0:
            text = f"""import requests

# service token for the {a} sync job
SERVICE_JWT = "{tok}"


def push(records):
    return requests.post(
        "https://{pick(HOSTS[:3])}/v2/{a}/bulk",
        json=records,
        headers={{"Authorization": f"Bearer {{SERVICE_JWT}}"}},
        timeout=30,
    )
{fill_py(R.randint(1, 3))}"""
            case("jwt-hardcoded-service-token", "secret", f"jobs/{a}_sync.py", text)
        else:
            text = f"""package sync

import "net/http"

const bearer = "Bearer {tok}"

func newRequest(url string) (*http.Request, error) {{
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {{
		return nil, err
	}}
	req.Header.Set("Authorization", bearer)
	return req, nil
}}
"""
            case("jwt-hardcoded-service-token", "secret", f"internal/{a}/client.go", text)


def sec_private_keys():
    for i in range(3):
        a = w()
        key = rsa_private_pem()
        if i == 0:
            case("pem-private-key", "secret", pick(["certs/server.key", "deploy/tls.key"]), key + "\n")
        elif i == 1:
            text = f"""# Ansible vars for {a} TLS
{a}_tls_cert_path: /etc/ssl/{a}.crt
{a}_tls_key: |
""" + "\n".join("  " + l for l in key.splitlines()) + "\n"
            case("pem-private-key", "secret", f"ansible/group_vars/{a}.yml", text)
        else:
            text = f"""const fs = require("fs");
const jwt = require("jsonwebtoken");

const PRIVATE_KEY = `{key}`;

module.exports.sign = (claims) => jwt.sign(claims, PRIVATE_KEY, {{ algorithm: "RS256", expiresIn: "1h" }});
"""
            case("pem-private-key", "secret", f"src/{a}/sign.js", text)
    for i in range(2):
        a = w()
        key = openssh_private()
        if i == 0:
            case("openssh-private-key", "secret", pick([".ssh/id_ed25519", "deploy/keys/deploy_key"]), key + "\n")
        else:
            text = f"""name: mirror-{a}
on: [push]
jobs:
  mirror:
    runs-on: ubuntu-latest
    steps:
      - name: setup ssh
        run: |
          mkdir -p ~/.ssh
          cat > ~/.ssh/id_ed25519 <<'EOF'
""" + "\n".join("          " + l for l in key.splitlines()) + f"""
          EOF
          chmod 600 ~/.ssh/id_ed25519
      - run: git push --mirror git@git.{a}.internal:mirror/{a}.git
"""
            case("openssh-private-key", "secret", f".github/workflows/mirror-{a}.yml", text)


def sec_basic_auth():
    for i in range(3):
        a = w()
        cred = b64(f"{pick(USERS)}:{url_password()}".encode())
        if i % 2 == 0:
            text = f"""#!/usr/bin/env bash
set -e
# nightly export from the {a} admin API
curl -fsS -H "Authorization: Basic {cred}" \\
  "https://{pick(HOSTS[:3])}/admin/{a}/export?since=$(date -d yesterday +%F)" > /var/backups/{a}.json
{fill_sh(R.randint(2, 4))}"""
            case("basic-auth-base64-credentials", "secret", f"cron/{a}-export.sh", text)
        else:
            text = json.dumps({"auths": {"registry.acme-corp.io": {"auth": cred}},
                               "credHelpers": {"gcr.io": "gcloud"}}, indent=2) + "\n"
            case("docker-config-auth", "secret", ".docker/config.json", text)


def sec_k8s_secret():
    for i in range(3):
        a = w()
        pw = password()
        text = f"""apiVersion: v1
kind: Secret
metadata:
  name: {a}-credentials
  namespace: {w()}
type: Opaque
data:
  username: {b64(pick(USERS).encode())}
  password: {b64(pw.encode())}
"""
        case("k8s-secret-data-base64", "secret", f"k8s/{a}-secret.yaml", text)


def sec_env_misc():
    for i in range(3):
        text = f"""NODE_ENV=production
PORT={R.randint(3000, 9000)}
SESSION_SECRET={b64(rbytes(32))}
REDIS_URL=redis://localhost:6379
LOG_FORMAT=json
"""
        case("dotenv-session-secret", "secret", pick([".env", ".env.production"]), text)


def sec_notebook():
    for i in range(2):
        a = w()
        key = pick([openai(), aws_id()])
        if key.startswith("sk-"):
            src = ["from openai import OpenAI\n", "import os\n", "client = OpenAI()\n", "print(client.api_key)"]
            out = [key + "\n"]
            cls = "notebook-output-openai-key"
        else:
            src = ["import boto3\n", "s = boto3.Session()\n", "c = s.get_credentials()\n", "print(c.access_key, c.secret_key)"]
            out = [f"{key} {aws_secret()}\n"]
            cls = "notebook-output-aws-keys"
        nb = {"cells": [
            {"cell_type": "markdown", "metadata": {}, "source": [f"# {pascal(a)} analysis"]},
            {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": src,
             "outputs": [{"name": "stdout", "output_type": "stream", "text": out}]},
            {"cell_type": "code", "execution_count": 4, "metadata": {}, "outputs": [],
             "source": [f"df = load_{a}()\n", "df.describe()"]},
        ], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}
        case(cls, "secret", f"notebooks/{a}.ipynb", json.dumps(nb, indent=1) + "\n")


def sec_curl_docs():
    for i in range(3):
        a = w()
        url, tok = pick([("api.github.com/user", ghp()), ("api.stripe.com/v1/charges", "sk_live_51" + rs(ALNUM, 97)),
                         ("gitlab.com/api/v4/user", glpat()), ("slack.com/api/auth.test", xoxb())])
        text = f"""# Debugging the {a} integration

Reproduced on {R.randint(1, 28)} March against prod with:

```bash
curl -s https://{url} \\
  -H "Authorization: Bearer {tok}"
```

The response was a 200 with the expected payload; the failure is on our side.

{fill_md(R.randint(3, 6))}"""
        case("bearer-token-in-docs", "secret", f"docs/debug/{a}.md", text)


def sec_with_negatives():
    # a real secret surrounded by hard negatives (refs, shas, masked, public keys)
    for i in range(4):
        a = w()
        var, tok = pick([("NODE_AUTH_TOKEN", npm_tok()), ("NODE_AUTH_TOKEN", npm_tok()), ("GH_RELEASE_TOKEN", ghp()),
                         ("ANTHROPIC_API_KEY", anthropic()), ("SENDGRID_API_KEY", sendgrid())])
        text = f"""name: publish-{a}
on:
  release:
    types: [published]
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@{hexs(40)}
      - uses: actions/setup-node@{hexs(40)}
        with:
          node-version: 20
      - run: npm ci
      - run: npm publish
        env:
          {var}: {tok}
          OTHER_TOKEN: ${{{{ secrets.OTHER_TOKEN }}}}
          # previous value was ghp_{'•' * 12}, rotated
"""
        case("token-beside-refs-in-workflow", "secret", f".github/workflows/publish-{a}.yml", text)


def neg_more():
    for i in range(2):
        a = w()
        text = f"""plugins {{
    id("com.android.application")
    kotlin("android")
}}

android {{
    namespace = "com.acme.{a}"
    compileSdk = 35
    defaultConfig {{
        applicationId = "com.acme.{a}"
        minSdk = 26
        versionCode = {R.randint(10, 900)}
        versionName = "2.{R.randint(0, 20)}.{R.randint(0, 9)}"
        buildConfigField("String", "API_KEY", "\\"${{project.findProperty("{a}ApiKey") ?: ""}}\\"")
        buildConfigField("String", "SENTRY_DSN", "\\"${{System.getenv("SENTRY_DSN") ?: ""}}\\"")
    }}
    signingConfigs {{
        create("release") {{
            storeFile = file(System.getenv("KEYSTORE_PATH") ?: "release.jks")
            storePassword = System.getenv("KEYSTORE_PASSWORD")
            keyAlias = "upload"
            keyPassword = System.getenv("KEY_PASSWORD")
        }}
    }}
}}
"""
        case("kotlin-gradle-env-refs", "none", "app/build.gradle.kts", text)
    for i in range(3):
        a = w()
        text = f"""-- migrate:up
CREATE TABLE {a}_users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         text NOT NULL UNIQUE,
    password_hash text NOT NULL,
    api_key_hash  bytea,
    reset_token_expires_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);

COMMENT ON COLUMN {a}_users.password_hash IS 'argon2id hash; never store the password';

-- the role password is set by the deploy job from Vault
\\set app_password `echo "$APP_DB_PASSWORD"`
CREATE ROLE {a}_app WITH LOGIN PASSWORD :'app_password';
GRANT SELECT, INSERT, UPDATE ON {a}_users TO {a}_app;

-- migrate:down
DROP TABLE {a}_users;
"""
        case("sql-schema-password-columns", "none", f"db/migrations/20250{R.randint(1, 9)}{R.randint(10, 28)}_{a}_users.sql", text)
    for i in range(2):
        a = w()
        text = f"""# syntax=docker/dockerfile:1.7
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci --omit=dev
ARG SENTRY_AUTH_TOKEN
ENV NODE_ENV=production \\
    API_KEY_FILE=/run/secrets/{a}_api_key
COPY . .
RUN npm run build
CMD ["node", "dist/server.js"]
"""
        case("dockerfile-build-secret-mounts", "none", "Dockerfile", text)


def sec_more():
    for i in range(2):
        a = w()
        text = f"""package com.acme.{a}.net

import okhttp3.Interceptor
import okhttp3.Response

private const val API_SECRET = "{rs(ALNUM, 40)}"

class {pascal(a)}AuthInterceptor : Interceptor {{
    override fun intercept(chain: Interceptor.Chain): Response {{
        val req = chain.request().newBuilder()
            .header("X-Api-Secret", API_SECRET)
            .header("Accept", "application/json")
            .build()
        return chain.proceed(req)
    }}
}}
"""
        case("hardcoded-api-secret-kotlin", "secret", f"app/src/main/java/com/acme/{a}/net/AuthInterceptor.kt", text)
    for i in range(2):
        a = w()
        text = f"""-- bootstrap roles for the {a} reporting replica
CREATE ROLE {a}_reader WITH LOGIN PASSWORD '{url_password()}';
GRANT CONNECT ON DATABASE {a} TO {a}_reader;
GRANT USAGE ON SCHEMA public TO {a}_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO {a}_reader;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO {a}_reader;
"""
        case("sql-role-password", "secret", f"db/bootstrap/{a}_roles.sql", text)
    for i in range(2):
        a = w()
        text = f"""{fill_yaml_comment()}
image:
  repository: ghcr.io/acme/{a}
  tag: "1.{R.randint(0, 40)}.{R.randint(0, 9)}"
postgresql:
  enabled: true
  auth:
    username: {pick(USERS)}
    password: "{password()}"
    database: {a}
ingress:
  enabled: true
  hosts:
    - host: {a}.example.com
      paths: ["/"]
"""
        case("helm-values-password", "secret", f"charts/{a}/values-prod.yaml", text)


def main():
    for f in [neg_changelog, neg_blame_ignore, neg_revert_msg, neg_test_fixtures, neg_ssh_public, neg_pem_public,
              neg_tf_refs, neg_helm_refs, neg_gha_refs, neg_gitlab_refs, neg_k8s_refs, neg_vault_ssm, neg_env_lookups,
              neg_urls, neg_class_names, neg_masked, neg_lockfiles, neg_docker_digests, neg_ids, neg_base64_data,
              neg_csp_nonce, neg_publishable, neg_object_keys, neg_word_pairs, neg_password_policy, neg_i18n,
              neg_env_example, neg_notebook, neg_password_checks, neg_misc_hashes, neg_docs_placeholders, neg_more, sec_more,
              sec_aws, sec_gcp, sec_azure, sec_github, sec_gitlab, sec_slack, sec_stripe, sec_twilio, sec_sendgrid,
              sec_openai, sec_anthropic, sec_npm_pypi, sec_shopify_dd_vault, sec_generic_password, sec_db_url,
              sec_jwt, sec_private_keys, sec_basic_auth, sec_k8s_secret, sec_env_misc, sec_notebook, sec_curl_docs,
              sec_with_negatives]:
        f()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator4.jsonl")
    with open(out, "w", encoding="utf-8") as fh:
        for c in CASES:
            fh.write(json.dumps(c, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
