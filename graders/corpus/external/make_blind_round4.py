#!/usr/bin/env python3
"""Blind held-out corpus, round 4 (generator-7).

Written without reading the scanner's rules: every case is a whole file of the
kind that lives in real repositories as data, artifacts or prose (notebooks,
logs, lockfiles, snapshots, cassettes, dumps, manifests, test vectors...).
"secret" cases hold exactly one live-shaped credential; "none" cases hold only
look-alikes (hashes, ids, placeholders, public keys, ciphertext, test vectors).

Stdlib only, fixed seed, deterministic:  python3 make_blind_round4.py
"""
import base64
import binascii
import hashlib
import hmac
import json
import os
import random
import string
import zlib

SEED = 20261205
RNG = random.Random(SEED)
ORIGIN = "make_blind_round4.py seed %d" % SEED
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator7.jsonl")

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = UP + LO + DG
B64 = AN + "+/"
URL = AN + "-_"
HEXC = "0123456789abcdef"

_seen = set()


def uniq(v):
    assert v not in _seen, v
    _seen.add(v)
    return v


def rs(n, alpha=AN):
    if n == 0:
        return ""
    while True:
        v = "".join(RNG.choice(alpha) for _ in range(n))
        if v not in _seen:
            return uniq(v)


def rhex(n):
    return rs(n, HEXC)


def rbytes(n):
    return bytes(RNG.getrandbits(8) for _ in range(n))


def b64(b):
    return base64.b64encode(b).decode()


def b64url(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def uuid4():
    h = rhex(32)
    h = h[:12] + "4" + h[13:16] + RNG.choice("89ab") + h[17:]
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def wrap(s, n=64):
    return "\n".join(s[i:i + n] for i in range(0, len(s), n))


def pick(seq):
    return RNG.choice(seq)


def ts(day=None):
    d = day or RNG.randint(1, 28)
    return "2024-%02d-%02dT%02d:%02d:%02d.%03dZ" % (
        RNG.randint(1, 12), d, RNG.randint(0, 23), RNG.randint(0, 59),
        RNG.randint(0, 59), RNG.randint(0, 999))


def sha512_integrity():
    return "sha512-" + b64(rbytes(64))


def bcrypt_hash():
    alpha = "./" + AN
    return "$2b$%02d$%s" % (pick([10, 12]), rs(53, alpha))


def argon2_hash():
    return "$argon2id$v=19$m=65536,t=3,p=4$%s$%s" % (
        b64(rbytes(16)).rstrip("="), b64(rbytes(32)).rstrip("="))


def pbkdf2_django():
    return "pbkdf2_sha256$600000$%s$%s" % (rs(22), b64(rbytes(32)))


def git_sha():
    return rhex(40)


def email():
    return "%s.%s@%s" % (pick(["ana", "li", "omar", "jo", "kai", "mira", "ben", "sofia", "yuki", "ravi"]),
                         rs(5, LO), pick(["example.com", "example.org", "acme.test"]))


# ---------------------------------------------------------------- secret makers

B62 = DG + UP + LO


def base62(n, width):
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def gh_pat():
    body = "".join(RNG.choice(AN) for _ in range(30))
    tok = "ghp_" + body + base62(zlib.crc32(body.encode()) & 0xFFFFFFFF, 6)
    return uniq(tok)


def gh_fine():
    return "github_pat_11" + rs(20, UP + DG) + "_" + rs(59)


def stripe_sk():
    return "sk_live_51" + rs(22) + rs(75)


def stripe_rk():
    return "rk_live_51" + rs(22) + rs(75)


def aws_pair():
    return "AKIA" + rs(16, UP + "234567"), rs(40, B64)


def slack_bot():
    return "xoxb-%s-%s-%s" % (rs(12, DG), rs(13, DG), rs(24))


def slack_hook():
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(8, UP + DG), rs(10, UP + DG), rs(24))


def openai_key():
    return "sk-proj-" + rs(64, URL) + "T3BlbkFJ" + rs(64, URL)


def anthropic_key():
    return "sk-ant-api03-" + rs(93, URL) + "AA"


def sendgrid():
    return "SG." + rs(22, URL) + "." + rs(43, URL)


def npm_tok():
    return "npm_" + rs(36)


def pypi_tok():
    return "pypi-AgEIcHlwaS5vcmcCJ" + rs(120, URL)


def glpat():
    return "glpat-" + rs(20, URL)


def hf_tok():
    return "hf_" + rs(34, UP + LO)


def do_tok():
    return "dop_v1_" + rhex(64)


def shopify():
    return "shpat_" + rhex(32)


def dckr():
    return "dckr_pat_" + rs(27, URL)


def grafana():
    return "glsa_" + rs(32) + "_" + rhex(8)


def databricks():
    return "dapi" + rhex(32)


def telegram():
    return "%s:AA%s" % (rs(10, DG), rs(33, URL))


def age_secret():
    return "AGE-SECRET-KEY-1" + rs(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")


def age_public():
    return "age1" + rs(58, "qpzry9x8gf2tvdw0s3jn54khce6mua7l")


def password(n=None):
    n = n or RNG.randint(16, 28)
    return rs(n, AN + "!#%^*-_=+")


def azure_conn():
    return "DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net" % (
        "st" + rs(10, LO + DG), b64(rbytes(64)))


def jwt_hs256(claims):
    hdr = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    pl = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(hmac.new(rbytes(32), (hdr + "." + pl).encode(), hashlib.sha256).digest())
    return uniq(hdr + "." + pl + "." + sig)


def live_jwt():
    return jwt_hs256({"sub": uuid4(), "iss": "https://auth.%s.io/" % rs(6, LO),
                      "aud": "api", "iat": 1764900000 + RNG.randint(0, 9999),
                      "exp": 1893456000 + RNG.randint(0, 99999), "scope": "read write"})


def der_len(n):
    if n < 128:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def der_int(v):
    b = v.to_bytes((v.bit_length() + 8) // 8, "big")
    return b"\x02" + der_len(len(b)) + b


def der_seq(*items):
    body = b"".join(items)
    return b"\x30" + der_len(len(body)) + body


SMALL_PRIMES = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]


def is_probable_prime(n):
    for p in SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(20):
        a = RNG.randrange(2, n - 2)
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def gen_prime(bits):
    while True:
        c = RNG.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
        if is_probable_prime(c):
            return c


def rsa_pem(bits=2048):
    e = 65537
    while True:
        p, q = gen_prime(bits // 2), gen_prime(bits // 2)
        phi = (p - 1) * (q - 1)
        if p != q and phi % e:
            break
    n = p * q
    d = pow(e, -1, phi)
    der = der_seq(der_int(0), der_int(n), der_int(e), der_int(d), der_int(p), der_int(q),
                  der_int(d % (p - 1)), der_int(d % (q - 1)), der_int(pow(q, -1, p)))
    return "-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----" % wrap(b64(der))


def ec_pem():
    der = (b"\x30\x77\x02\x01\x01\x04\x20" + rbytes(32) +
           b"\xa0\x0a\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07\xa1\x44\x03\x42\x00\x04" + rbytes(64))
    return "-----BEGIN EC PRIVATE KEY-----\n%s\n-----END EC PRIVATE KEY-----" % wrap(b64(der))


def sshstr(b):
    return len(b).to_bytes(4, "big") + b


def openssh_ed25519(comment):
    pub = rbytes(32)
    seed = rbytes(32)
    pubblob = sshstr(b"ssh-ed25519") + sshstr(pub)
    chk = rbytes(4)
    priv = chk + chk + sshstr(b"ssh-ed25519") + sshstr(pub) + sshstr(seed + pub) + sshstr(comment.encode())
    pad = 1
    while len(priv) % 8:
        priv += bytes([pad])
        pad += 1
    blob = (b"openssh-key-v1\x00" + sshstr(b"none") + sshstr(b"none") + sshstr(b"") +
            (1).to_bytes(4, "big") + sshstr(pubblob) + sshstr(priv))
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----" % wrap(b64(blob), 70)


def ssh_pub_ed25519(comment):
    return "ssh-ed25519 " + b64(sshstr(b"ssh-ed25519") + sshstr(rbytes(32))) + " " + comment


def ssh_pub_rsa(comment):
    mod = b"\x00" + rbytes(256)
    return "ssh-rsa " + b64(sshstr(b"ssh-rsa") + sshstr(b"\x01\x00\x01") + sshstr(mod)) + " " + comment


def cert_pem():
    body = b"\x30\x82\x03" + bytes([RNG.randint(0x20, 0xff)]) + b"\x30\x82\x02" + rbytes(RNG.randint(700, 900))
    return "-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----" % wrap(b64(body))


def pgp_pub(uid):
    body = b"\x99\x02\x0d\x04" + rbytes(RNG.randint(900, 1200))
    crc = b64(rbytes(3))
    return ("-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: %s\n\n%s\n=%s\n-----END PGP PUBLIC KEY BLOCK-----"
            % (uid, wrap(b64(body)), crc))


def png_b64(n=None):
    return b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rbytes(n or RNG.randint(300, 600)))


SECRET_TOKENS = [
    ("github-pat", gh_pat, "GITHUB_TOKEN"),
    ("github-fine-grained", gh_fine, "GH_TOKEN"),
    ("stripe-secret", stripe_sk, "STRIPE_SECRET_KEY"),
    ("slack-bot", slack_bot, "SLACK_BOT_TOKEN"),
    ("openai", openai_key, "OPENAI_API_KEY"),
    ("anthropic", anthropic_key, "ANTHROPIC_API_KEY"),
    ("sendgrid", sendgrid, "SENDGRID_API_KEY"),
    ("npm", npm_tok, "NPM_TOKEN"),
    ("gitlab", glpat, "GITLAB_TOKEN"),
    ("huggingface", hf_tok, "HF_TOKEN"),
    ("digitalocean", do_tok, "DIGITALOCEAN_TOKEN"),
    ("shopify", shopify, "SHOPIFY_ACCESS_TOKEN"),
    ("grafana", grafana, "GRAFANA_SA_TOKEN"),
    ("databricks", databricks, "DATABRICKS_TOKEN"),
    ("telegram", telegram, "TELEGRAM_BOT_TOKEN"),
    ("stripe-restricted", stripe_rk, "STRIPE_RESTRICTED_KEY"),
]


def any_token():
    kind, fn, env = pick(SECRET_TOKENS)
    return kind, fn(), env


# ---------------------------------------------------------------- notebooks

def nb(cells):
    out = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                        "language_info": {"name": "python", "version": "3.11.%d" % RNG.randint(2, 9)}},
           "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(out, indent=1) + "\n"


def code_cell(src, outputs=None, n=None):
    return {"cell_type": "code", "execution_count": n, "id": rhex(8), "metadata": {},
            "outputs": outputs or [], "source": [l + "\n" for l in src.split("\n")[:-1]] + [src.split("\n")[-1]]}


def md_cell(src):
    return {"cell_type": "markdown", "id": rhex(8), "metadata": {}, "source": [l + "\n" for l in src.split("\n")]}


def stream(text):
    return {"name": "stdout", "output_type": "stream", "text": [l + "\n" for l in text.split("\n")]}


def df_html_rows(k):
    rows = []
    for i in range(k):
        rows.append("<tr><th>%d</th><td>%s</td><td>%s</td><td>%.3f</td></tr>" % (i, uuid4(), rhex(12), RNG.random()))
    return rows


def s_notebook_output_token():
    kind, tok, env = any_token()
    cells = [
        md_cell("# Pull open issues for triage\nUses the REST API, results cached to `data/issues.parquet`."),
        code_cell("import os, requests, pandas as pd\nsession = requests.Session()", n=1),
        code_cell("print(session.headers)\nsession.headers['Authorization'] = f\"Bearer {os.environ['%s']}\"\nprint(dict(session.headers))" % env,
                  [stream("{'User-Agent': 'python-requests/2.31.0', 'Accept-Encoding': 'gzip, deflate', 'Accept': '*/*', 'Connection': 'keep-alive'}\n"
                          "{'User-Agent': 'python-requests/2.31.0', 'Accept-Encoding': 'gzip, deflate', 'Accept': '*/*', 'Connection': 'keep-alive', 'Authorization': 'Bearer %s'}" % tok)], n=2),
        code_cell("df = pd.DataFrame(fetch_all(session))\ndf.head()",
                  [{"data": {"text/html": ["<table>"] + df_html_rows(4) + ["</table>"], "text/plain": ["<DataFrame 4 rows>"]},
                    "execution_count": 3, "metadata": {}, "output_type": "execute_result"}], n=3),
    ]
    return "notebook-output-token", "secret", "ipynb", pick(["notebooks/triage.ipynb", "analysis/issues_export.ipynb", "scratch/api_probe.ipynb"]), nb(cells)


def s_notebook_source_key():
    kind, tok, env = pick([("openai", openai_key(), "OPENAI_API_KEY"), ("huggingface", hf_tok(), "HF_TOKEN"),
                           ("anthropic", anthropic_key(), "ANTHROPIC_API_KEY")])
    cells = [
        md_cell("## Embedding experiment %d\nCompare recall@10 across models." % RNG.randint(2, 9)),
        code_cell("import os\nos.environ[\"%s\"] = \"%s\"  # TODO remove before commit" % (env, tok), n=1),
        code_cell("import matplotlib.pyplot as plt\nplt.plot(recalls)\nplt.title('recall@10')",
                  [{"data": {"image/png": png_b64(), "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
                    "metadata": {}, "output_type": "display_data"}], n=4),
        code_cell("print(run_id, checkpoint_sha)", [stream("%s %s" % (uuid4(), rhex(40)))], n=5),
    ]
    return "notebook-source-key", "secret", "ipynb", pick(["experiments/embeddings.ipynb", "research/eval_models.ipynb", "nb/rag_baseline.ipynb"]), nb(cells)


def s_notebook_env_aws():
    ak, sk = aws_pair()
    out = "\n".join([
        "HOME=/home/jovyan", "JUPYTER_SERVER_ROOT=/home/jovyan", "CONDA_DIR=/opt/conda",
        "AWS_DEFAULT_REGION=eu-west-1", "AWS_ACCESS_KEY_ID=%s" % ak, "AWS_SECRET_ACCESS_KEY=%s" % sk,
        "JPY_SESSION_NAME=%s" % uuid4(), "HOSTNAME=jupyter-%s" % rs(6, LO + DG), "SHELL=/bin/bash"])
    cells = [md_cell("Check the kernel sees the credentials before the S3 sync."),
             code_cell("%env", [stream(out)], n=1),
             code_cell("!aws s3 ls s3://%s-datasets/ | head -3" % rs(6, LO),
                       [stream("2024-03-02 10:11:09   %d part-0000.parquet\n2024-03-02 10:11:10   %d part-0001.parquet" % (RNG.randint(10**6, 10**8), RNG.randint(10**6, 10**8)))], n=2)]
    return "notebook-env-aws", "secret", "ipynb", pick(["notebooks/s3_sync.ipynb", "etl/explore_raw.ipynb"]), nb(cells)


def n_notebook_outputs():
    cells = [
        md_cell("# Training run summary\nSet `WANDB_API_KEY` in your environment (see `.env.example`); never paste it here."),
        code_cell("import os\nassert os.getenv('WANDB_API_KEY'), 'export WANDB_API_KEY=<your-key> first'\nprint(run.id, run.sweep_id, model_sha256)",
                  [stream("%s %s %s" % (rs(8, LO + DG), rs(8, LO + DG), rhex(64)))], n=1),
        code_cell("plt.imshow(confusion)\nplt.colorbar()",
                  [{"data": {"image/png": png_b64(), "text/plain": ["<Figure size 800x600 with 2 Axes>"]},
                    "metadata": {"needs_background": "light"}, "output_type": "display_data"}], n=2),
        code_cell("df[['user_id', 'session_hash', 'score']].head()",
                  [{"data": {"text/html": ["<table>" + "".join(df_html_rows(3)) + "</table>"], "text/plain": ["..."]},
                    "execution_count": 4, "metadata": {}, "output_type": "execute_result"}], n=4),
    ]
    return "notebook-hashes-images", "none", "ipynb", pick(["notebooks/train_summary.ipynb", "reports/eval.ipynb", "docs/tutorial.ipynb", "examples/quickstart.ipynb"]), nb(cells)


def n_notebook_placeholder():
    ph = pick(["sk-...", "<YOUR_OPENAI_API_KEY>", "YOUR_API_KEY_HERE", "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "os.environ[\"OPENAI_API_KEY\"]"])
    src = 'client = OpenAI(api_key=%s)' % (ph if ph.startswith("os.") else '"%s"' % ph)
    cells = [md_cell("## Quickstart\n1. Create a key at https://platform.openai.com/api-keys\n2. Replace the placeholder below (never commit the real key)."),
             code_cell("from openai import OpenAI\n" + src, n=None),
             code_cell("resp = client.chat.completions.create(model='gpt-4o-mini', messages=msgs)\nprint(resp.id, resp.system_fingerprint)",
                       [stream("chatcmpl-%s fp_%s" % (rs(29), rhex(10)))], n=2)]
    return "notebook-placeholder", "none", "ipynb", pick(["examples/openai_quickstart.ipynb", "cookbook/chat_basics.ipynb", "tutorials/01_intro.ipynb"]), nb(cells)


# ---------------------------------------------------------------- logs & traces

LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN"]


def log_lines(k, svc):
    out = []
    for _ in range(k):
        kind = RNG.randint(0, 5)
        t = ts()
        if kind == 0:
            out.append('%s %s [%s] request_id=%s method=GET path=/api/v1/orders/%d status=200 dur_ms=%d' % (t, pick(LEVELS), svc, uuid4(), RNG.randint(1000, 99999), RNG.randint(3, 900)))
        elif kind == 1:
            out.append('%s %s [%s] traceparent=00-%s-%s-01 span=db.query rows=%d' % (t, pick(LEVELS), svc, rhex(32), rhex(16), RNG.randint(0, 500)))
        elif kind == 2:
            out.append('%s %s [%s] login ok user=%s email_sha256=%s' % (t, pick(LEVELS), svc, RNG.randint(1, 99999), rhex(64)))
        elif kind == 3:
            out.append('%s %s [%s] cache miss key=user:%s:profile etag="W/%s"' % (t, pick(LEVELS), svc, RNG.randint(1, 99999), rhex(16)))
        elif kind == 4:
            out.append('%s %s [%s] session expired sid=%s… (truncated) age=%ds' % (t, "INFO", svc, rhex(8), RNG.randint(86400, 900000)))
        else:
            out.append('%s %s [%s] job=%s enqueued queue=mailers attempt=%d' % (t, pick(LEVELS), svc, rs(24, LO + DG), RNG.randint(1, 4)))
    return out


def s_log_live_key():
    svc = pick(["billing", "notifier", "api-gateway", "worker"])
    lines = log_lines(RNG.randint(12, 30), svc)
    kind = RNG.randint(0, 3)
    if kind == 0:
        leak = "%s DEBUG [%s] settings loaded: {'env': 'production', 'region': 'us-east-1', 'stripe_secret_key': '%s', 'timeout': 30}" % (ts(), svc, stripe_sk())
    elif kind == 1:
        leak = "%s DEBUG [%s] outbound POST https://api.sendgrid.com/v3/mail/send headers={'Authorization': 'Bearer %s', 'Content-Type': 'application/json'}" % (ts(), svc, sendgrid())
    elif kind == 2:
        leak = "%s INFO [%s] connecting to postgresql://billing_rw:%s@db-prod-%d.internal:5432/billing sslmode=require" % (ts(), svc, password(), RNG.randint(1, 4))
    else:
        leak = "%s DEBUG [%s] slack client init token=%s channel=#alerts" % (ts(), svc, slack_bot())
    lines.insert(RNG.randint(2, len(lines) - 1), leak)
    return "log-live-key", "secret", "log", pick(["logs/%s-2024-06-0%d.log" % (svc, RNG.randint(1, 9)), "support/bundle/%s.log" % svc, "tmp/debug-%s.log" % svc]), "\n".join(lines) + "\n"


def n_log_ids():
    svc = pick(["checkout", "search", "auth", "media"])
    lines = log_lines(RNG.randint(20, 45), svc)
    lines.insert(3, "%s INFO [%s] issued token for client_id=%s (token not logged; jti=%s)" % (ts(), svc, rs(20, LO + DG), uuid4()))
    lines.insert(7, "%s WARN [%s] rejected Authorization header: Bearer ********** (invalid signature)" % (ts(), svc))
    return "log-request-ids", "none", "log", pick(["logs/%s.log" % svc, "fixtures/logs/%s-sample.log" % svc, "test/data/%s_access.log" % svc]), "\n".join(lines) + "\n"


def n_access_log():
    lines = []
    for _ in range(RNG.randint(15, 35)):
        ip = "10.%d.%d.%d" % (RNG.randint(0, 255), RNG.randint(0, 255), RNG.randint(1, 254))
        path = pick(["/static/app.%s.js" % rhex(8), "/api/session/refresh", "/assets/logo.%s.svg" % rhex(10),
                     "/reset-password?token_id=%s" % uuid4(), "/img/avatar/%s?s=80" % rhex(32)])
        lines.append('%s - - [12/Mar/2024:%02d:%02d:%02d +0000] "GET %s HTTP/1.1" %d %d "-" "Mozilla/5.0" rt=%.3f uid=%s' % (
            ip, RNG.randint(0, 23), RNG.randint(0, 59), RNG.randint(0, 59), path, pick([200, 200, 304, 404]),
            RNG.randint(100, 90000), RNG.random(), rhex(16)))
    return "access-log", "none", "log", pick(["deploy/nginx/sample_access.log", "testdata/access.log"]), "\n".join(lines) + "\n"


def s_stacktrace_password():
    pw = password()
    if RNG.random() < 0.5:
        text = """Traceback (most recent call last):
  File "/srv/app/worker/tasks.py", line 88, in run_export
    engine = create_engine(settings.WAREHOUSE_URL, pool_pre_ping=True)
  File "/srv/app/.venv/lib/python3.11/site-packages/sqlalchemy/engine/create.py", line 552, in create_engine
    u, plugins, kwargs = u._instantiate_plugins(kwargs)
  File "/srv/app/worker/db.py", line 31, in connect
    raise ConnectionError(f"could not connect using {raw_url}")
worker.db.ConnectionError: could not connect using postgresql://etl_loader:%s@warehouse-%s.cluster-%s.eu-west-1.rds.amazonaws.com:5432/analytics
  task_id=%s
  retry=3/5
  trace_id=%s
""" % (pw, rs(4, LO), rs(12, LO + DG), uuid4(), rhex(32))
    else:
        text = """2024-04-11 03:12:55,901 ERROR [main] o.h.engine.jdbc.spi.SqlExceptionHelper - Connection refused
com.zaxxer.hikari.pool.HikariPool$PoolInitializationException: Failed to initialize pool: url=jdbc:mysql://orders-db.prod.internal:3306/orders?user=orders_app&password=%s&useSSL=true
	at com.zaxxer.hikari.pool.HikariPool.throwPoolInitializationException(HikariPool.java:596)
	at com.zaxxer.hikari.pool.HikariPool.checkFailFast(HikariPool.java:582)
	at com.zaxxer.hikari.pool.HikariPool.<init>(HikariPool.java:115)
	at com.zaxxer.hikari.HikariDataSource.<init>(HikariDataSource.java:81)
	at com.example.orders.config.DataSourceConfig.dataSource(DataSourceConfig.java:42)
	at java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)
Caused by: java.net.ConnectException: Connection refused
	at java.base/sun.nio.ch.Net.connect0(Native Method)
	... 41 common frames omitted
[correlationId=%s] [build=%s]
""" % (pw, uuid4(), rhex(7))
    return "stacktrace-password", "secret", pick(["log", "txt"]), pick(["docs/incidents/2024-04-11-export.txt", "bug-reports/export-failure.log", "ci/artifacts/worker-crash.log"]), text


def n_stacktrace_masked():
    text = """Traceback (most recent call last):
  File "/app/api/deps.py", line 41, in get_db
    conn = await pool.acquire()
  File "/usr/local/lib/python3.12/site-packages/asyncpg/pool.py", line 864, in acquire
    return await _acquire_impl()
sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "db" (172.18.0.%d), port 5432 failed: FATAL:  password authentication failed for user "app"
(Background on this error at: https://sqlalche.me/e/20/e3q8)
[SQL: SELECT 1]
engine url: postgresql+psycopg2://app:***@db:5432/app
request_id=%s  session_key_hash=%s
During handling of the above exception, another exception occurred:
  File "/app/api/main.py", line 77, in health
    raise HTTPException(status_code=503, detail="database unavailable")
fastapi.exceptions.HTTPException: 503: database unavailable
  thread 0x%s  heap=%s
""" % (RNG.randint(2, 9), uuid4(), rhex(40), rhex(12), rhex(16))
    return "stacktrace-masked", "none", "txt", pick(["docs/troubleshooting/db-503.txt", "issues/1287-traceback.txt"]), text


def n_go_panic():
    frames = "\n".join("main.%s(0x%s, 0x%s)\n\t/src/cmd/server/%s.go:%d +0x%s" % (
        pick(["handle", "serve", "decode", "dispatch"]), rhex(10), rhex(10), pick(["http", "rpc", "queue"]), RNG.randint(10, 400), rhex(3)) for _ in range(RNG.randint(5, 9)))
    text = "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x%s]\n\ngoroutine %d [running]:\n%s\ncreated by net/http.(*Server).Serve in goroutine 1\n\t/usr/local/go/src/net/http/server.go:3285 +0x4b4\nbuild: vcs.revision=%s vcs.modified=false\n" % (
        rhex(7), RNG.randint(10, 900), frames, rhex(40))
    return "stacktrace-go", "none", "txt", "testdata/panics/nil_deref_%d.txt" % RNG.randint(1, 99), text


# ---------------------------------------------------------------- changelog / docs

def n_changelog():
    lines = ["# Changelog", "", "All notable changes to this project are documented here.", ""]
    for v in range(RNG.randint(3, 6)):
        lines.append("## [%d.%d.%d] - 2024-%02d-%02d" % (RNG.randint(1, 4), RNG.randint(0, 20), RNG.randint(0, 9), RNG.randint(1, 12), RNG.randint(1, 28)))
        lines.append("")
        for _ in range(RNG.randint(2, 5)):
            msg = pick(["Rotate signing keys automatically every 90 days", "Redact `Authorization` headers in debug logs",
                        "Fix token refresh race when two tabs are open", "Store API keys as SHA-256 hashes only",
                        "Bump `jsonwebtoken` to 9.0.2", "Add `--password-stdin` to the login command",
                        "Deprecate `api_key` query parameter in favour of a header"])
            lines.append("- %s ([#%d](https://github.com/acme/%s/pull/%d)) (%s)" % (msg, RNG.randint(100, 9999), pick(["core", "cli", "sdk"]), RNG.randint(100, 9999), rhex(7)))
        lines.append("")
    lines.append("[compare]: https://github.com/acme/core/compare/%s...%s" % (rhex(40), rhex(40)))
    return "changelog-hashes", "none", "md", pick(["CHANGELOG.md", "packages/sdk/CHANGELOG.md", "docs/releases.md"]), "\n".join(lines) + "\n"


def n_release_notes():
    text = """# Release v%d.%d.0

**Full Changelog**: https://github.com/acme/platform/compare/v%d.%d.0...v%d.%d.0

## Security
* The `SECRET_KEY_BASE` in the sample `docker-compose.yml` was the literal `changeme`; the
  compose file now refuses to start until you set it (`openssl rand -hex 64`).
* Tokens are now displayed once as `ac_live_****************%s`; only the last four characters are stored.

## Checksums (sha256)
```
%s  platform_linux_amd64.tar.gz
%s  platform_darwin_arm64.tar.gz
%s  platform_windows_amd64.zip
```

## Container images
ghcr.io/acme/platform@sha256:%s

Signed with cosign; verify with `cosign verify --key cosign.pub ghcr.io/acme/platform:v%d.%d.0`.
""" % (RNG.randint(1, 3), RNG.randint(1, 30), 1, 2, 1, 3, rs(4, DG), rhex(64), rhex(64), rhex(64), rhex(64), 1, 3)
    return "release-notes", "none", "md", pick(["docs/releases/v1.3.0.md", "RELEASE_NOTES.md", ".github/release-template.md"]), text


PLACEHOLDERS = ["<your-token>", "xxxx", "${TOKEN}", "****", "$GITHUB_TOKEN", "YOUR_API_KEY",
                "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "sk_live_XXXXXXXXXXXXXXXXXXXXXXXX", "{{ api_token }}",
                "<REDACTED>", "sk-...", "$(cat ~/.config/acme/token)", "%%API_KEY%%", "xoxb-your-bot-token",
                "AKIAIOSFODNN7EXAMPLE", "glpat-XXXXXXXXXXXXXXXXXXXX", "changeme", "<paste key here>",
                "${{ secrets.NPM_TOKEN }}", "hf_********************************", "__TOKEN__", "[token]"]


def n_readme_placeholders():
    ps = RNG.sample(PLACEHOLDERS, 5)
    text = """# acme-cli

Command-line client for the Acme API.

## Authentication

Create a personal access token in **Settings → Tokens**, then either export it:

```bash
export ACME_TOKEN=%s
acme whoami
```

or pass it explicitly:

```bash
curl -H "Authorization: Bearer %s" https://api.acme.dev/v2/me
acme login --token %s
```

In CI, reference the secret instead of pasting it:

```yaml
env:
  ACME_TOKEN: %s
```

> The server only ever shows the token once. If you lose it, revoke it and create a new one;
> logs print it as `%s`.

## Configuration file

`~/.config/acme/config.toml`:

```toml
[profile.default]
endpoint = "https://api.acme.dev"
token = ""  # filled in by `acme login`
```

Release artifacts are signed; the public key fingerprint is `%s`.
""" % (ps[0], ps[1], ps[2], ps[3], ps[4], ":".join(rhex(40)[i:i + 4] for i in range(0, 40, 4)))
    return "readme-placeholders", "none", "md", pick(["README.md", "docs/authentication.md", "cli/README.md", "docs/getting-started.md"]), text


def n_docs_aws_example():
    text = """# Uploading artifacts to S3

The examples below use the documentation credentials from the AWS docs; replace them with your own.

```ini
[default]
aws_access_key_id = AKIAIOSFODNN7EXAMPLE
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
region = us-west-2
```

```bash
aws s3 cp dist/ s3://my-bucket/releases/%s/ --recursive
```

Expected output includes an ETag per object, e.g. `"%s"`, and a request id such as
`x-amz-request-id: %s`.
""" % (rhex(7), rhex(32), rs(16, UP + DG))
    return "docs-aws-example", "none", "md", pick(["docs/deploy/s3.md", "docs/howto/upload.md"]), text


def s_readme_private_key():
    kind = RNG.randint(0, 2)
    key = [rsa_pem, ec_pem, lambda: openssh_ed25519("deploy@ci-%s" % rs(4, LO))][kind]()
    text = """# Deploying the staging box

1. Save the deploy key below as `~/.ssh/staging_deploy` and `chmod 600` it.
2. Run `make deploy ENV=staging`.

```
%s
```

The host key fingerprint is `SHA256:%s`.

Known issues: the first run takes ~%d minutes because of the image pull
(digest `sha256:%s`).
""" % (key, b64(rbytes(32)).rstrip("="), RNG.randint(3, 9), rhex(64))
    return "readme-private-key", "secret", "md", pick(["docs/deploy.md", "ops/README.md", "infra/staging/NOTES.md"]), text


def s_docs_pasted_config():
    kind, tok, env = any_token()
    text = """---
name: Bug report
about: sync fails after upgrading to 2.4
---

**Describe the bug**
`acme sync` exits with code 3 since 2.4.0.

**Config**
```yaml
endpoint: https://api.acme.dev
retries: 5
%s: %s
cache_dir: /var/cache/acme
```

**Logs**
```
%s ERROR sync: upstream returned 502 request_id=%s
%s ERROR sync: giving up after 5 attempts trace=%s
```

**Version**: 2.4.0 (commit %s)
""" % (env.lower(), tok, ts(), uuid4(), ts(), rhex(32), rhex(7))
    return "docs-pasted-config", "secret", "md", pick(["docs/issues/sync-502.md", "support/tickets/4411.md", "notes/bug-sync.md"]), text


# ---------------------------------------------------------------- lockfiles

def pkgname():
    return pick(["lodash", "react", "chalk", "debug", "ms", "semver", "uuid", "axios", "tslib", "zod", "yaml", "minimist", "commander", "picomatch", "ws"]) + ("" if RNG.random() < 0.6 else "-" + rs(4, LO))


def n_package_lock():
    pk = {"": {"name": "web", "version": "1.0.0", "dependencies": {}}}
    for _ in range(RNG.randint(5, 9)):
        n = pkgname()
        v = "%d.%d.%d" % (RNG.randint(0, 9), RNG.randint(0, 20), RNG.randint(0, 20))
        pk["node_modules/" + n] = {"version": v, "resolved": "https://registry.npmjs.org/%s/-/%s-%s.tgz" % (n, n, v),
                                   "integrity": sha512_integrity(), "license": "MIT"}
    return "package-lock-integrity", "none", "json", pick(["package-lock.json", "web/package-lock.json", "packages/ui/package-lock.json"]), json.dumps(
        {"name": "web", "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": pk}, indent=2) + "\n"


def n_yarn_lock():
    out = ["# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.", "# yarn lockfile v1", ""]
    for _ in range(RNG.randint(5, 10)):
        n = pkgname()
        v = "%d.%d.%d" % (RNG.randint(0, 9), RNG.randint(0, 20), RNG.randint(0, 20))
        out += ['%s@^%s:' % (n, v), '  version "%s"' % v,
                '  resolved "https://registry.yarnpkg.com/%s/-/%s-%s.tgz#%s"' % (n, n, v, rhex(40)),
                '  integrity %s' % sha512_integrity(), ""]
    return "yarn-lock", "none", "lock", "yarn.lock" if RNG.random() < 0.5 else "frontend/yarn.lock", "\n".join(out)


def n_poetry_lock():
    out = ['# This file is automatically @generated by Poetry 1.8.2 and should not be changed by hand.', ""]
    for _ in range(RNG.randint(3, 6)):
        n = pick(["requests", "urllib3", "idna", "certifi", "pydantic", "httpx", "anyio", "rich"])
        v = "%d.%d.%d" % (RNG.randint(0, 9), RNG.randint(0, 20), RNG.randint(0, 20))
        out += ["[[package]]", 'name = "%s"' % n, 'version = "%s"' % v, 'optional = false', 'python-versions = ">=3.8"', "files = [",
                '    {file = "%s-%s-py3-none-any.whl", hash = "sha256:%s"},' % (n, v, rhex(64)),
                '    {file = "%s-%s.tar.gz", hash = "sha256:%s"},' % (n, v, rhex(64)), "]", ""]
    out += ["[metadata]", 'lock-version = "2.0"', 'python-versions = "^3.11"', 'content-hash = "%s"' % rhex(64)]
    return "poetry-lock", "none", "lock", "poetry.lock", "\n".join(out) + "\n"


def n_pipfile_lock():
    d = {"_meta": {"hash": {"sha256": rhex(64)}, "pipfile-spec": 6, "requires": {"python_version": "3.11"},
                   "sources": [{"name": "pypi", "url": "https://pypi.org/simple", "verify_ssl": True}]}, "default": {}, "develop": {}}
    for _ in range(RNG.randint(3, 6)):
        d["default"][pick(["flask", "jinja2", "itsdangerous", "werkzeug", "click", "gunicorn"]) + rs(2, LO)] = {
            "hashes": ["sha256:" + rhex(64), "sha256:" + rhex(64)], "markers": "python_version >= '3.8'",
            "version": "==%d.%d.%d" % (RNG.randint(0, 3), RNG.randint(0, 9), RNG.randint(0, 9))}
    return "pipfile-lock", "none", "lock", "Pipfile.lock", json.dumps(d, indent=4) + "\n"


def n_gemfile_lock():
    gems = [(pick(["rack", "rails", "puma", "nokogiri", "devise", "bcrypt", "jwt", "pg"]) + rs(2, LO), "%d.%d.%d" % (RNG.randint(1, 7), RNG.randint(0, 9), RNG.randint(0, 9))) for _ in range(RNG.randint(4, 7))]
    out = ["GEM", "  remote: https://rubygems.org/", "  specs:"] + ["    %s (%s)" % g for g in gems]
    out += ["", "PLATFORMS", "  x86_64-linux", "", "DEPENDENCIES"] + ["  %s" % g[0] for g in gems]
    out += ["", "CHECKSUMS"] + ["  %s (%s) sha256=%s" % (g[0], g[1], rhex(64)) for g in gems]
    out += ["", "BUNDLED WITH", "   2.5.%d" % RNG.randint(1, 9)]
    return "gemfile-lock", "none", "lock", "Gemfile.lock", "\n".join(out) + "\n"


def n_go_sum():
    out = []
    for _ in range(RNG.randint(6, 12)):
        m = "github.com/%s/%s" % (pick(["spf13", "stretchr", "golang-jwt", "aws", "google"]), rs(6, LO))
        v = "v%d.%d.%d" % (RNG.randint(0, 2), RNG.randint(0, 20), RNG.randint(0, 9))
        out.append("%s %s h1:%s" % (m, v, b64(rbytes(32))))
        out.append("%s %s/go.mod h1:%s" % (m, v, b64(rbytes(32))))
    return "go-sum", "none", "sum", "go.sum", "\n".join(out) + "\n"


def n_cargo_lock():
    out = ["# This file is automatically @generated by Cargo.", "# It is not intended for manual editing.", "version = 3", ""]
    for _ in range(RNG.randint(4, 8)):
        out += ["[[package]]", 'name = "%s"' % (pick(["serde", "ring", "rustls", "hmac", "sha2", "base64"]) + "-" + rs(3, LO)),
                'version = "0.%d.%d"' % (RNG.randint(1, 20), RNG.randint(0, 9)),
                'source = "registry+https://github.com/rust-lang/crates.io-index"', 'checksum = "%s"' % rhex(64), ""]
    return "cargo-lock", "none", "lock", "Cargo.lock", "\n".join(out)


# ---------------------------------------------------------------- snapshots / cassettes

def s_jest_snapshot():
    kind, tok, env = any_token()
    text = """// Jest Snapshot v1, https://goo.gl/fbAQLP

exports[`buildClientConfig production 1`] = `
{
  "baseUrl": "https://api.acme.dev",
  "headers": {
    "Authorization": "Bearer %s",
    "X-Client-Version": "3.2.%d",
  },
  "requestId": "%s",
  "retries": 3,
}
`;

exports[`buildClientConfig renders avatar 1`] = `
<img
  alt="avatar"
  src="https://www.gravatar.com/avatar/%s?s=64"
/>
`;
""" % (tok, RNG.randint(0, 9), uuid4(), rhex(32))
    return "jest-snapshot-token", "secret", "snap", pick(["src/__tests__/__snapshots__/client.test.ts.snap", "packages/sdk/__snapshots__/config.test.js.snap"]), text


def n_jest_snapshot():
    text = """// Jest Snapshot v1, https://goo.gl/fbAQLP

exports[`AuthHeader masks the token 1`] = `
<span
  className="token-preview"
  data-testid="token-%s"
>
  ghp_••••••••••••••••••••••••••••••%s
</span>
`;

exports[`serializeSession 1`] = `
{
  "csrf": "[REDACTED]",
  "expiresAt": "2020-01-01T00:00:00.000Z",
  "id": "%s",
  "token": "<redacted>",
  "userHash": "%s",
}
`;

exports[`Logo renders 1`] = `
<svg
  viewBox="0 0 24 24"
>
  <path
    d="M%d.%d %d.%dL%d %dh%d.%dz"
  />
</svg>
`;
""" % (rs(6, LO), rs(4), uuid4(), rhex(40), RNG.randint(1, 20), RNG.randint(0, 99), RNG.randint(1, 20), RNG.randint(0, 99), RNG.randint(1, 20), RNG.randint(1, 20), RNG.randint(1, 9), RNG.randint(0, 99))
    return "jest-snapshot-redacted", "none", "snap", pick(["src/components/__snapshots__/AuthHeader.test.tsx.snap", "web/__snapshots__/session.test.js.snap"]), text


def cassette(auth_value, extra_req_headers=""):
    body = json.dumps({"id": "cus_" + rs(14), "object": "customer", "created": 1710000000 + RNG.randint(0, 10**6),
                       "email": email(), "invoice_prefix": rs(8, UP + DG)})
    return """interactions:
- request:
    body: email=%s
    headers:
      Accept:
      - application/json
      Authorization:
      - %s
      Content-Type:
      - application/x-www-form-urlencoded
      User-Agent:
      - python-requests/2.31.0%s
    method: POST
    uri: https://api.stripe.com/v1/customers
  response:
    body:
      string: '%s'
    headers:
      Request-Id:
      - req_%s
      Idempotency-Key:
      - %s
      Stripe-Version:
      - '2023-10-16'
    status:
      code: 200
      message: OK
version: 1
""" % (email(), auth_value, extra_req_headers, body, rs(14), uuid4())


def s_vcr_cassette():
    r = RNG.randint(0, 2)
    if r == 0:
        auth = "Bearer " + stripe_sk()
    elif r == 1:
        auth = "Basic " + b64((stripe_rk() + ":").encode())
    else:
        auth = "Bearer " + live_jwt()
    return "vcr-cassette-auth", "secret", "yaml", pick(["tests/cassettes/test_create_customer.yaml", "spec/fixtures/vcr_cassettes/customers/create.yml", "tests/fixtures/cassettes/billing_flow.yaml"]), cassette(auth)


def n_vcr_cassette():
    auth = pick(["<AUTHORIZATION>", "Bearer <STRIPE_SECRET_KEY>", "'**REDACTED**'", "Bearer sk_test_FILTERED", "DUMMY", "Basic RklMVEVSRUQ6RklMVEVSRUQ="])
    return "vcr-cassette-redacted", "none", "yaml", pick(["tests/cassettes/test_list_customers.yaml", "spec/cassettes/customer_update.yml", "test/fixtures/vcr/refunds.yaml"]), cassette(auth)


# ---------------------------------------------------------------- fixtures / seed data

def n_fixture_users():
    users = []
    for i in range(RNG.randint(3, 6)):
        users.append({"model": "accounts.user", "pk": i + 1, "fields": {
            "email": email(), "password": pick([pbkdf2_django(), bcrypt_hash(), argon2_hash()]),
            "is_staff": i == 0, "date_joined": ts(), "api_key_hash": rhex(64), "api_key_prefix": "ak_" + rs(6, LO + DG)}})
    return "fixture-hashed-users", "none", "json", pick(["accounts/fixtures/users.json", "fixtures/dev_users.json", "app/seed/users.json"]), json.dumps(users, indent=2) + "\n"


def n_seed_rb():
    lines = ["# db/seeds.rb -- development data only. Every seeded account's password is \"password\".", ""]
    for _ in range(RNG.randint(4, 8)):
        lines.append('User.create!(email: "%s", encrypted_password: "%s", confirmed_at: Time.current, uuid: "%s")' % (email(), bcrypt_hash(), uuid4()))
    lines += ["", 'ApiClient.create!(name: "local-dev", secret_digest: "%s", last_four: "%s")' % (rhex(64), rs(4, LO + DG))]
    return "seed-bcrypt", "none", "rb", "db/seeds.rb", "\n".join(lines) + "\n"


def s_fixture_live_key():
    users = []
    for i in range(RNG.randint(2, 4)):
        users.append({"id": uuid4(), "email": email(), "password_hash": bcrypt_hash()})
    kind = RNG.randint(0, 2)
    val = [stripe_sk, shopify, databricks][kind]()
    name = ["stripe_secret_key", "shopify_admin_token", "databricks_token"][kind]
    data = {"users": users, "settings": [{"key": "support_email", "value": email()},
                                         {"key": name, "value": val},
                                         {"key": "feature_flags", "value": "beta,new-checkout"}]}
    return "fixture-live-key", "secret", "json", pick(["seed/staging.json", "db/seed_data/tenant_acme.json", "scripts/bootstrap/settings.json"]), json.dumps(data, indent=2) + "\n"


# ---------------------------------------------------------------- generated code

def n_protobuf_pb2():
    blob = rbytes(RNG.randint(300, 700))
    text = '''# -*- coding: utf-8 -*-
# Generated by the protocol buffer compiler.  DO NOT EDIT!
# source: auth/v1/token.proto
# Protobuf Python Version: 4.25.1
"""Generated protocol buffer code."""
from google.protobuf import descriptor as _descriptor
from google.protobuf import descriptor_pool as _descriptor_pool
from google.protobuf import symbol_database as _symbol_database
from google.protobuf.internal import builder as _builder

_sym_db = _symbol_database.Default()


DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(base64.b64decode("%s"))

_globals = globals()
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, _globals)
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'auth.v1.token_pb2', _globals)
if _descriptor._USE_C_DESCRIPTORS == False:
  DESCRIPTOR._options = None
  _globals['_ISSUETOKENREQUEST']._serialized_start=%d
  _globals['_ISSUETOKENREQUEST']._serialized_end=%d
  _globals['_ISSUETOKENRESPONSE']._serialized_start=%d
  _globals['_ISSUETOKENRESPONSE']._serialized_end=%d
''' % (b64(blob), RNG.randint(40, 90), RNG.randint(100, 200), RNG.randint(200, 300), RNG.randint(300, 400))
    return "protobuf-descriptor", "none", "py", pick(["gen/python/auth/v1/token_pb2.py", "api/auth/v1/token_pb2.py"]), "import base64\n" + text


def n_graphql_schema():
    text = """# Generated by codegen on %s -- schema hash %s
type Query {
  viewer: User
  apiKeys(first: Int = 20, after: String): ApiKeyConnection!
}

type Mutation {
  login(email: String!, password: String!): AuthPayload!
  createApiKey(name: String!, scopes: [Scope!]!): CreateApiKeyPayload!
  revokeApiKey(id: ID!): Boolean!
  resetPassword(token: String!, newPassword: String!): Boolean!
}

type AuthPayload {
  accessToken: String!
  refreshToken: String!
  expiresIn: Int!
}

type ApiKey {
  id: ID!
  name: String!
  \"\"\"First 8 characters, e.g. "ak_live_". The full secret is only returned by createApiKey.\"\"\"
  prefix: String!
  lastUsedAt: DateTime
}

type CreateApiKeyPayload {
  apiKey: ApiKey!
  secret: String!
}

enum Scope { READ WRITE ADMIN }
scalar DateTime
""" % (ts(), rhex(40))
    return "graphql-schema", "none", "graphql", pick(["schema.graphql", "api/schema/generated.graphql"]), text


def n_openapi():
    text = """openapi: 3.0.3
info:
  title: Acme Public API
  version: "%d.%d"
servers:
  - url: https://api.acme.dev/v2
components:
  securitySchemes:
    bearerAuth:
      type: http
      scheme: bearer
      bearerFormat: JWT
    apiKeyHeader:
      type: apiKey
      in: header
      name: X-API-Key
  schemas:
    Token:
      type: object
      properties:
        access_token:
          type: string
          example: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.<payload>.<signature>
        api_key:
          type: string
          example: ak_live_xxxxxxxxxxxxxxxxxxxxxxxx
        webhook_secret:
          type: string
          example: whsec_...
        id:
          type: string
          format: uuid
          example: %s
security:
  - bearerAuth: []
paths:
  /tokens:
    post:
      operationId: createToken
      requestBody:
        content:
          application/json:
            example:
              client_id: %s
              client_secret: YOUR_CLIENT_SECRET
      responses:
        "201":
          description: created
          headers:
            X-Request-Id:
              schema: {type: string}
              example: req_%s
""" % (RNG.randint(1, 4), RNG.randint(0, 9), uuid4(), rs(20, LO + DG), rs(14))
    return "openapi-examples", "none", "yaml", pick(["openapi.yaml", "docs/api/openapi.yml", "spec/public-api.yaml"]), text


def minified_common():
    return ('!function(){"use strict";var e={%d:function(e,t,n){n.d(t,{Z:function(){return r}});var r="%s"},%d:function(e){e.exports={hash:"%s",build:"%s"}}};'
            % (RNG.randint(100, 999), rhex(20), RNG.randint(100, 999), rhex(40), rs(8, LO + DG)))


def n_minified_bundle():
    pk = pick(["pk_live_" + rs(24 + 75), "pk.eyJ1IjoiYWNtZSIsImEiOiJ" + rs(20) + "In0." + rs(22, URL)])
    text = minified_common() + 'var o={stripeKey:"%s",sentryRelease:"%s",cdn:"https://cdn.acme.dev/%s/",logo:"data:image/png;base64,%s"};' % (
        pk, rhex(40), rhex(10), png_b64(200)) + 'function a(t){return fetch("/api/"+t,{headers:{"X-CSRF-Token":document.querySelector("meta[name=csrf-token]").content}})}' + \
        'window.__CHUNK_HASHES__=%s}();\n//# sourceMappingURL=main.%s.js.map\n' % (json.dumps({str(i): rhex(20) for i in range(RNG.randint(3, 8))}), rhex(8))
    return "minified-bundle", "none", "js", "public/assets/main.%s.js" % rhex(8), text


def s_minified_bundle():
    r = RNG.randint(0, 2)
    if r == 0:
        ak, sk = aws_pair()
        leak = 'var s3cfg={region:"us-east-1",accessKeyId:"%s",secretAccessKey:"%s",bucket:"uploads-prod"};' % (ak, sk)
    elif r == 1:
        leak = 'var mailer={provider:"sendgrid",apiKey:"%s",from:"noreply@acme.dev"};' % sendgrid()
    else:
        leak = 'var ai={endpoint:"https://api.openai.com/v1",key:"%s",model:"gpt-4o"};' % openai_key()
    text = minified_common() + leak + 'function u(e){return new Promise(function(t){setTimeout(t,e)})}var c="%s";window.__BUILD__="%s"}();\n//# sourceMappingURL=app.%s.js.map\n' % (rhex(64), rhex(40), rhex(8))
    return "minified-bundle-key", "secret", "js", pick(["dist/app.%s.js" % rhex(8), "static/js/main.%s.chunk.js" % rhex(8), "build/bundle.min.js"]), text


def n_sourcemap():
    alpha = AN + "+/"
    mappings = ";".join(",".join("".join(RNG.choice(alpha) for _ in range(RNG.randint(4, 8))) for _ in range(RNG.randint(3, 12))) for _ in range(RNG.randint(30, 60)))
    sm = {"version": 3, "file": "main.%s.js" % rhex(8), "sources": ["webpack://app/./src/auth/token.ts", "webpack://app/./src/api/client.ts"],
          "sourcesContent": ["export const TOKEN_KEY = 'acme.session';\nexport function getToken(): string | null { return localStorage.getItem(TOKEN_KEY); }\n",
                             "const apiKey = process.env.REACT_APP_PUBLIC_KEY ?? '';\nexport default apiKey;\n"],
          "names": ["TOKEN_KEY", "getToken", "apiKey", "localStorage"], "mappings": mappings, "debugId": uuid4()}
    return "sourcemap", "none", "map", "public/assets/main.%s.js.map" % rhex(8), json.dumps(sm) + "\n"


def n_css_font():
    font = b64(b"wOF2\x00\x01\x00\x00" + rbytes(RNG.randint(900, 1600)))
    text = """/*! tailwindcss v3.4.%d | MIT License | https://tailwindcss.com */
@font-face {
  font-family: "Inter var";
  font-weight: 100 900;
  font-display: swap;
  src: url(data:font/woff2;base64,%s) format("woff2");
}
.icon-lock{background-image:url("data:image/svg+xml;base64,%s")}
.btn-primary{--tw-bg-opacity:1;background-color:rgb(37 99 235/var(--tw-bg-opacity))}
/*# sourceMappingURL=app.%s.css.map */
""" % (RNG.randint(0, 9), font, b64(("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 20 20'><path d='M%d %dh%dv%dz'/></svg>" % (RNG.randint(1, 9), RNG.randint(1, 9), RNG.randint(1, 9), RNG.randint(1, 9))).encode()), rhex(8))
    return "css-base64-font", "none", "css", pick(["public/css/app.%s.css" % rhex(8), "assets/fonts.css", "dist/styles.min.css"]), text


def n_svg():
    path = " ".join("%s%d.%d,%d.%d" % (pick("MLCQ"), RNG.randint(0, 99), RNG.randint(0, 99), RNG.randint(0, 99), RNG.randint(0, 99)) for _ in range(RNG.randint(20, 50)))
    text = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="120" viewBox="0 0 120 120">
  <!-- exported by Figma, node id %s -->
  <defs>
    <linearGradient id="g%s" x1="0" x2="1"><stop offset="0" stop-color="#%s"/><stop offset="1" stop-color="#%s"/></linearGradient>
  </defs>
  <path fill="url(#g%s)" d="%s"/>
  <image width="32" height="32" xlink:href="data:image/png;base64,%s"/>
</svg>
""" % (rs(6, DG) + ":" + rs(4, DG), rhex(6), rhex(6), rhex(6), "x", path, png_b64(150))
    return "svg", "none", "svg", pick(["assets/icons/key.svg", "public/img/lock-badge.svg", "docs/img/logo.svg"]), text


def n_i18n():
    d = {"auth": {"password": "Enter your password", "password_confirm": "Confirm password", "forgot": "Forgot your password?",
                  "api_key": "API key", "api_key_help": "Paste the secret token from your dashboard (starts with sk_live_)",
                  "token_expired": "Your session token has expired. Please sign in again.",
                  "secret_shown_once": "Copy this secret now. You won't be able to see it again."},
         "settings": {"two_factor": "Two-factor authentication", "recovery_codes": "Recovery codes", "rotate": "Rotate key",
                      "webhook_secret": "Signing secret"},
         "_meta": {"locale": pick(["en", "de", "fr", "pt-BR"]), "checksum": rhex(32)}}
    if d["_meta"]["locale"] == "de":
        d["auth"]["password"] = "Passwort eingeben"
    return "i18n-locale", "none", "json", "locales/%s/translation.json" % d["_meta"]["locale"], json.dumps(d, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- SQL dumps

def sql_header():
    return """--
-- PostgreSQL database dump
--

-- Dumped from database version 15.%d
-- Dumped by pg_dump version 16.%d

SET statement_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
""" % (RNG.randint(1, 6), RNG.randint(0, 3))


def n_sql_hashes():
    rows = []
    for i in range(RNG.randint(3, 6)):
        rows.append("%d\t%s\t%s\t%s" % (i + 1, email(), pick([bcrypt_hash(), argon2_hash(), pbkdf2_django()]), ts()))
    keys = []
    for i in range(RNG.randint(2, 4)):
        keys.append("%s\t%d\tak_live_%s\t%s\t%s" % (uuid4(), RNG.randint(1, 6), rs(4, LO + DG), rhex(64), ts()))
    text = sql_header() + """
COPY public.users (id, email, password_digest, created_at) FROM stdin;
%s
\\.

-- api_keys store only the SHA-256 of the secret plus a display prefix
COPY public.api_keys (id, user_id, prefix, key_sha256, created_at) FROM stdin;
%s
\\.

SELECT pg_catalog.setval('public.users_id_seq', %d, true);
""" % ("\n".join(rows), "\n".join(keys), RNG.randint(10, 99))
    return "sql-dump-hashes", "none", "sql", pick(["db/dumps/dev_snapshot.sql", "backups/schema_and_seed.sql", "test/fixtures/db.sql"]), text


def n_sql_schema():
    text = """-- migrations/%s_create_sessions.sql
CREATE TABLE sessions (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id         bigint NOT NULL REFERENCES users(id),
    token_hash      bytea NOT NULL,          -- sha256(token); the token itself is never stored
    csrf_secret_enc bytea NOT NULL,          -- AES-GCM with the KMS data key
    expires_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX sessions_token_hash_idx ON sessions (token_hash);

INSERT INTO sessions (id, user_id, token_hash, csrf_secret_enc, expires_at) VALUES
  ('%s', 1, '\\x%s', '\\x%s', '2019-01-01 00:00:00+00'),
  ('%s', 2, '\\x%s', '\\x%s', '2019-01-01 00:00:00+00');
""" % (rs(14, DG), uuid4(), rhex(64), rhex(88), uuid4(), rhex(64), rhex(88))
    return "sql-schema-hashes", "none", "sql", pick(["db/migrations/0007_sessions.sql", "sql/sessions.sql"]), text


def s_sql_dump_conn():
    pw = password()
    text = sql_header() + """
-- Restored on staging with:
--   pg_restore --no-owner -d "postgresql://postgres:%s@staging-db.%s.internal:5432/app" app.dump

COPY public.users (id, email, password_digest, created_at) FROM stdin;
1\t%s\t%s\t%s
2\t%s\t%s\t%s
\\.
""" % (pw, rs(5, LO), email(), bcrypt_hash(), ts(), email(), bcrypt_hash(), ts())
    return "sql-dump-conn-comment", "secret", "sql", pick(["db/dumps/staging.sql", "backups/app_2024_05.sql"]), text


def s_sql_integration():
    r = RNG.randint(0, 1)
    val = slack_bot() if r == 0 else slack_hook()
    text = sql_header() + """
COPY public.integrations (id, workspace_id, provider, %s, created_at) FROM stdin;
%s\t%d\tslack\t%s\t%s
\\.

COPY public.audit_events (id, actor_hash, action, request_id) FROM stdin;
%d\t%s\tintegration.created\t%s
%d\t%s\tintegration.tested\t%s
\\.
""" % ("bot_token" if r == 0 else "webhook_url", uuid4(), RNG.randint(1, 500), val, ts(), RNG.randint(1, 9999), rhex(64), uuid4(), RNG.randint(1, 9999), rhex(64), uuid4())
    return "sql-dump-integration", "secret", "sql", pick(["db/dumps/prod_integrations.sql", "support/export_ws.sql"]), text


# ---------------------------------------------------------------- HAR / curl

def har(auth, cookie):
    h = {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                 "entries": [{"startedDateTime": ts(), "time": RNG.randint(10, 900) + RNG.random(),
                              "request": {"method": "GET", "url": "https://app.acme.dev/api/v3/projects?page=2", "httpVersion": "HTTP/2",
                                          "headers": [{"name": "authorization", "value": auth}, {"name": "cookie", "value": cookie},
                                                      {"name": "x-request-id", "value": uuid4()},
                                                      {"name": "if-none-match", "value": 'W/"%s"' % rhex(32)}],
                                          "queryString": [{"name": "page", "value": "2"}], "headersSize": -1, "bodySize": 0},
                              "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2",
                                           "headers": [{"name": "etag", "value": 'W/"%s"' % rhex(32)}, {"name": "x-trace-id", "value": rhex(32)}],
                                           "content": {"size": 512, "mimeType": "application/json", "encoding": "base64", "text": b64(rbytes(300))},
                                           "redirectURL": "", "headersSize": -1, "bodySize": 512},
                              "cache": {}, "timings": {"send": 0.1, "wait": 80.2, "receive": 1.3}}]}}
    return json.dumps(h, indent=2) + "\n"


def n_har_redacted():
    auth = pick(["Bearer [REDACTED]", "<redacted>", "Bearer ****************", "Bearer ${ACCESS_TOKEN}"])
    cookie = "_ga=GA1.1.%d.%d; session=REDACTED; theme=dark" % (RNG.randint(10**8, 10**9), RNG.randint(10**8, 10**9))
    return "har-redacted", "none", "har", pick(["docs/bug-1432/network.har", "tests/fixtures/projects_page.har"]), har(auth, cookie)


def s_har_live():
    auth = "Bearer " + live_jwt()
    cookie = "_ga=GA1.1.%d.%d; theme=dark" % (RNG.randint(10**8, 10**9), RNG.randint(10**8, 10**9))
    return "har-live-auth", "secret", "har", pick(["docs/bug-1501/capture.har", "support/har/projects_slow.har"]), har(auth, cookie)


def curl_trace(auth_line, extra=""):
    return """$ curl -v https://api.acme.dev/v2/deployments %s
*   Trying 104.18.%d.%d:443...
* Connected to api.acme.dev (104.18.%d.%d) port 443
* ALPN: server accepted h2
* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384
* Server certificate:
*  subject: CN=api.acme.dev
*  SHA256 fingerprint: %s
> GET /v2/deployments HTTP/2
> Host: api.acme.dev
> User-Agent: curl/8.5.0
> %s
> Accept: */*
>
< HTTP/2 200
< content-type: application/json
< x-request-id: %s
< cf-ray: %s-AMS
<
{"deployments":[{"id":"dpl_%s","sha":"%s","state":"READY"}]}
""" % (extra, RNG.randint(0, 255), RNG.randint(0, 255), RNG.randint(0, 255), RNG.randint(0, 255),
       ":".join(rhex(64)[i:i + 2].upper() for i in range(0, 64, 2)), auth_line, uuid4(), rhex(16), rs(24), rhex(40))


def n_curl_redacted():
    a = pick(["Authorization: Bearer ***", "Authorization: [credentials hidden]", "PRIVATE-TOKEN: <your_access_token>", "Authorization: Bearer $TOKEN"])
    return "curl-trace-redacted", "none", "txt", pick(["docs/debugging/curl-verbose.txt", "notes/api-trace.txt"]), curl_trace(a, '-H "Authorization: Bearer $TOKEN"')


def s_curl_live():
    r = RNG.randint(0, 2)
    a = ["Authorization: Bearer " + anthropic_key(), "PRIVATE-TOKEN: " + glpat(), "Authorization: Bearer " + do_tok()][r]
    return "curl-trace-token", "secret", "txt", pick(["docs/debugging/trace-2024-05.txt", "notes/curl-output.txt", "tmp/trace.log"]), curl_trace(a)


# ---------------------------------------------------------------- kubernetes

def k8s_secret(user, pw, name):
    return """apiVersion: v1
kind: Secret
metadata:
  name: %s
  namespace: %s
  labels:
    app.kubernetes.io/name: %s
  annotations:
    checksum/config: %s
type: Opaque
data:
  username: %s
  password: %s
""" % (name, pick(["prod", "default", "payments", "data"]), name.split("-")[0], rhex(64), b64(user.encode()), b64(pw.encode()))


def s_k8s_secret():
    name = pick(["postgres-credentials", "redis-auth", "rabbitmq-admin", "mongo-root"]) 
    return "k8s-secret-real", "secret", "yaml", pick(["k8s/prod/%s.yaml" % name, "deploy/manifests/%s-secret.yaml" % name.split("-")[0], "charts/app/files/%s.yaml" % name]), k8s_secret(pick(["app", "admin", "svc_api"]), password(), name)


def s_k8s_stringdata_token():
    kind, tok, env = any_token()
    text = """apiVersion: v1
kind: Secret
metadata:
  name: ci-bot
  namespace: tooling
type: Opaque
stringData:
  %s: %s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ci-bot
spec:
  template:
    spec:
      containers:
        - name: bot
          image: ghcr.io/acme/ci-bot@sha256:%s
          envFrom:
            - secretRef:
                name: ci-bot
""" % (env, tok, rhex(64))
    return "k8s-stringdata-token", "secret", "yaml", pick(["k8s/tooling/ci-bot.yaml", "ops/ci-bot/all.yaml"]), text


def s_k8s_dockerconfig():
    user = pick(["acme-ci", "deploybot", "release"])
    tok = pick([dckr(), gh_pat()])
    reg = "https://index.docker.io/v1/" if tok.startswith("dckr") else "ghcr.io"
    cfg = json.dumps({"auths": {reg: {"username": user, "password": tok, "auth": b64((user + ":" + tok).encode())}}})
    text = """apiVersion: v1
kind: Secret
metadata:
  name: regcred
  namespace: %s
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: %s
""" % (pick(["apps", "ci", "default"]), b64(cfg.encode()))
    return "k8s-dockerconfigjson", "secret", "yaml", pick(["k8s/base/regcred.yaml", "deploy/regcred-secret.yaml"]), text


def n_k8s_placeholder():
    name = pick(["app-db", "cache-auth", "smtp-relay"]) + "-" + rs(3, LO)
    pw = pick(["changeme", "REPLACE_ME", "password", "<set-in-vault>", "dummy", "example-password", "${DB_PASSWORD}"])
    return "k8s-secret-placeholder", "none", "yaml", pick(["k8s/dev/%s.yaml" % name, "examples/kubernetes/secret.yaml", "charts/app/ci/test-secret.yaml"]), k8s_secret("app", pw, name)


def n_sealed_secret():
    text = """apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: api-credentials
  namespace: prod
spec:
  encryptedData:
    API_TOKEN: %s
    DB_PASSWORD: %s
  template:
    metadata:
      name: api-credentials
      namespace: prod
    type: Opaque
""" % (b64(rbytes(RNG.randint(300, 420))), b64(rbytes(RNG.randint(300, 420))))
    return "k8s-sealed-secret", "none", "yaml", pick(["k8s/prod/sealed-api-credentials.yaml", "clusters/prod/secrets/api.sealed.yaml"]), text


def n_external_secret():
    text = """apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: payments
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: aws-secrets-manager
    kind: ClusterSecretStore
  target:
    name: payments-env
  data:
    - secretKey: STRIPE_SECRET_KEY
      remoteRef:
        key: prod/payments/stripe
        property: secret_key
    - secretKey: DATABASE_URL
      remoteRef:
        key: prod/payments/db
        version: %s
""" % uuid4()
    return "k8s-external-secret", "none", "yaml", "k8s/prod/payments-externalsecret.yaml", text


def n_k8s_configmap():
    text = """apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY: pk_live_%s
  SENTRY_RELEASE: "%s"
  OTEL_EXPORTER_OTLP_ENDPOINT: http://otel-collector:4317
  IMAGE_DIGEST: sha256:%s
  FEATURE_SALT_ID: "%s"
""" % (rs(99), rhex(40), rhex(64), uuid4())
    return "k8s-configmap-public", "none", "yaml", pick(["k8s/web/configmap.yaml", "deploy/web-config.yaml"]), text


# ---------------------------------------------------------------- crypto test vectors

def n_rfc_vectors():
    k1 = b"\x0b" * 20
    v1 = hmac.new(k1, b"Hi There", hashlib.sha256).hexdigest()
    v2 = hmac.new(b"Jefe", b"what do ya want for nothing?", hashlib.sha256).hexdigest()
    k3 = b"\xaa" * 131
    v3 = hmac.new(k3, b"Test Using Larger Than Block-Size Key - Hash Key First", hashlib.sha512).hexdigest()
    text = '''"""RFC 4231 HMAC-SHA-2 test vectors."""
import hmac, hashlib
import pytest

VECTORS = [
    # (key, data, digest, expected)
    (bytes.fromhex("%s"), b"Hi There", "sha256",
     "%s"),
    (b"Jefe", b"what do ya want for nothing?", "sha256",
     "%s"),
    (bytes.fromhex("%s"),
     b"Test Using Larger Than Block-Size Key - Hash Key First", "sha512",
     "%s"),
]


@pytest.mark.parametrize("key,data,alg,expected", VECTORS)
def test_rfc4231(key, data, alg, expected):
    assert hmac.new(key, data, getattr(hashlib, alg)).hexdigest() == expected
''' % (k1.hex(), v1, v2, k3.hex(), v3)
    return "crypto-rfc-vectors", "none", "py", pick(["tests/test_hmac_rfc4231.py", "crypto/tests/vectors_hmac.py"]), text


def n_fips_aes_ed25519():
    text = """// Known-answer tests. Sources: FIPS-197 Appendix C.1, RFC 8032 section 7.1 (TEST 1).
#[cfg(test)]
mod kat {
    use super::*;
    use hex_literal::hex;

    #[test]
    fn aes128_fips197_c1() {
        let key = hex!("000102030405060708090a0b0c0d0e0f");
        let pt = hex!("00112233445566778899aabbccddeeff");
        assert_eq!(aes128_encrypt_block(&key, &pt), hex!("69c4e0d86a7b0430d8cdb78070b4c55a"));
    }

    #[test]
    fn ed25519_rfc8032_test1() {
        let secret = hex!("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
        let public = hex!("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        let sig = sign(&secret, b"");
        assert_eq!(derive_public(&secret), public);
        assert_eq!(
            sig,
            hex!("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        );
    }
}
"""
    return "crypto-kat-vectors", "none", "rs", "src/crypto/kat_tests.rs", text


def n_wycheproof():
    tests = []
    for i in range(RNG.randint(3, 5)):
        tests.append({"tcId": i + 1, "comment": pick(["", "empty message", "modified tag", "long iv"]),
                      "key": rhex(32), "iv": rhex(24), "aad": rhex(RNG.choice([0, 16, 32])),
                      "msg": rhex(RNG.choice([0, 32, 64])), "ct": rhex(32), "tag": rhex(32),
                      "result": pick(["valid", "invalid"]), "flags": []})
    d = {"algorithm": "AES-GCM", "generatorVersion": "0.8r12", "numberOfTests": len(tests),
         "header": ["Test vectors of type AeadTest test authenticated encryption with additional data."],
         "testGroups": [{"ivSize": 96, "keySize": 128, "tagSize": 128, "type": "AeadTest", "tests": tests}]}
    return "crypto-wycheproof", "none", "json", pick(["testvectors/aes_gcm_test.json", "third_party/wycheproof/aes_gcm_test.json", "tests/data/aead/aes_gcm.json"]), json.dumps(d, indent=2) + "\n"


def n_jwk_test_vector():
    text = """{
  "_comment": "RFC 7517 Appendix A.1 style public keys used by the verifier tests; no private members ('d') present.",
  "keys": [
    {"kty": "EC", "crv": "P-256", "x": "%s", "y": "%s", "use": "sig", "kid": "%s"},
    {"kty": "RSA", "n": "%s", "e": "AQAB", "alg": "RS256", "kid": "%s"}
  ]
}
""" % (b64url(rbytes(32)), b64url(rbytes(32)), rhex(16), b64url(rbytes(256)), uuid4())
    return "jwks-public", "none", "json", pick([".well-known/jwks.json", "tests/fixtures/jwks.json"]), text


# ---------------------------------------------------------------- public keys / certs / encrypted

def n_pgp_pub():
    uid = "Acme Release Signing <security@acme.dev>"
    text = "# Release signing key\n\nFingerprint: `%s`\n\n```\n%s\n```\n" % (" ".join(rhex(40)[i:i + 4].upper() for i in range(0, 40, 4)), pgp_pub(uid))
    return "pgp-public-key", "none", pick(["md", "asc"]), pick(["SECURITY.md", "docs/verify-release.md", "KEYS.md"]), text


def n_authorized_keys():
    lines = ["# managed by ansible -- do not edit"]
    for _ in range(RNG.randint(3, 6)):
        c = "%s@%s" % (pick(["ana", "omar", "deploy", "ci", "kai"]), pick(["laptop", "bastion", "ci-runner"]))
        lines.append(pick([ssh_pub_ed25519, ssh_pub_rsa])(c))
    return "ssh-public-keys", "none", "", pick(["ansible/roles/users/files/authorized_keys", "infra/ssh/authorized_keys"]), "\n".join(lines) + "\n"


def n_known_hosts():
    lines = []
    for _ in range(RNG.randint(3, 6)):
        salt, h = b64(rbytes(20)), b64(rbytes(20))
        lines.append("|1|%s|%s %s" % (salt, h, ssh_pub_ed25519("").strip()))
    return "ssh-known-hosts", "none", "", pick(["ci/known_hosts", "deploy/ssh/known_hosts"]), "\n".join(lines) + "\n"


def n_cert():
    text = "# CA bundle for the internal mTLS mesh (public certificates only)\n" + "\n".join(cert_pem() for _ in range(RNG.randint(1, 3))) + "\n"
    return "x509-certificate", "none", pick(["pem", "crt"]), pick(["certs/internal-ca.pem", "config/tls/ca-bundle.crt", "tests/fixtures/server.crt"]), text


def n_sops():
    def enc(n):
        return "ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]" % (b64(rbytes(n)), b64(rbytes(32)), b64(rbytes(16)))
    text = """database:
    user: %s
    password: %s
stripe:
    secret_key: %s
sops:
    kms: []
    age:
        - recipient: %s
          enc: |
            -----BEGIN AGE ENCRYPTED FILE-----
%s
            -----END AGE ENCRYPTED FILE-----
    lastmodified: "%s"
    mac: %s
    unencrypted_suffix: _unencrypted
    version: 3.8.1
""" % (enc(4), enc(24), enc(107), age_public(), "\n".join("            " + l for l in wrap(b64(rbytes(190))).split("\n")), ts(), enc(32))
    return "sops-encrypted", "none", "yaml", pick(["secrets/prod.enc.yaml", "deploy/secrets.sops.yaml", "clusters/prod/values.secret.yaml"]), text


def n_ansible_vault():
    body = rhex(RNG.randint(400, 700))
    text = "$ANSIBLE_VAULT;1.1;AES256\n" + wrap(body.encode().hex()[:len(body)], 80) + "\n"
    return "ansible-vault", "none", "yml", pick(["group_vars/prod/vault.yml", "inventories/prod/host_vars/db1/vault.yml"]), text


def n_age_armored():
    text = "-----BEGIN AGE ENCRYPTED FILE-----\n%s\n-----END AGE ENCRYPTED FILE-----\n" % wrap(b64(b"age-encryption.org/v1\n-> X25519 " + rbytes(RNG.randint(200, 500))))
    return "age-encrypted", "none", "age", pick(["secrets/prod.env.age", "keys/backup.tar.age"]), text


def s_age_key():
    text = "# created: 2024-%02d-%02dT%02d:%02d:%02dZ\n# public key: %s\n%s\n" % (
        RNG.randint(1, 12), RNG.randint(1, 28), RNG.randint(0, 23), RNG.randint(0, 59), RNG.randint(0, 59), age_public(), age_secret())
    return "age-identity", "secret", "txt", pick(["keys.txt", ".sops/age/keys.txt", "ops/age-key.txt"]), text


def n_gitattributes():
    if RNG.random() < 0.5:
        text = """# git-crypt: files below are encrypted in the repository
secrets/** filter=git-crypt diff=git-crypt
*.key filter=git-crypt diff=git-crypt
config/credentials.yml.enc binary
.env.production filter=git-crypt diff=git-crypt
*.png binary
*.lock linguist-generated=true
"""
        return "gitattributes", "none", "", ".gitattributes", text
    text = """# secrets
.env
.env.*
!.env.example
*.pem
*.key
id_rsa*
credentials.json
service-account*.json
.npmrc
secrets/
# build
node_modules/
dist/
target/
"""
    return "gitignore", "none", "", ".gitignore", text


def n_env_example():
    text = """# Copy to .env and fill in. Never commit the real values.
DATABASE_URL=postgres://postgres:postgres@localhost:5432/app_dev
REDIS_URL=redis://localhost:6379/0
STRIPE_SECRET_KEY=sk_live_your_key_here
STRIPE_PUBLISHABLE_KEY=pk_live_%s
OPENAI_API_KEY=
GITHUB_TOKEN=<your-personal-access-token>
SESSION_SECRET=generate-with-openssl-rand-hex-32
SENTRY_DSN=
"""
    return "env-example", "none", "example", pick([".env.example", "config/.env.sample", "docker/.env.template"]), text % rs(99)


# ---------------------------------------------------------------- CSV / CI / misc

def n_csv_ids():
    rows = ["customer_id,charge_id,payment_intent,amount,currency,created,email_hash"]
    for _ in range(RNG.randint(10, 30)):
        rows.append("cus_%s,ch_%s,pi_%s,%d,usd,%s,%s" % (rs(14), rs(24), rs(24), RNG.randint(100, 99999), ts(), rhex(64)))
    return "csv-export-ids", "none", "csv", pick(["data/exports/charges_2024_q2.csv", "reports/stripe_payments.csv"]), "\n".join(rows) + "\n"


def n_csv_users():
    rows = ["id,uuid,username,api_key_last4,session_id_sha1,last_login"]
    for i in range(RNG.randint(10, 25)):
        rows.append("%d,%s,%s,%s,%s,%s" % (i + 1, uuid4(), rs(8, LO), rs(4, LO + DG), rhex(40), ts()))
    return "csv-export-users", "none", "csv", pick(["exports/users.csv", "analysis/data/active_users.csv"]), "\n".join(rows) + "\n"


def s_csv_webhook():
    rows = ["workspace_id,provider,channel,destination,created_at"]
    n = RNG.randint(5, 12)
    leak_at = RNG.randint(0, n - 1)
    for i in range(n):
        dest = slack_hook() if i == leak_at else "(stored in vault: %s)" % uuid4()
        rows.append("%s,slack,#%s,%s,%s" % (uuid4(), pick(["alerts", "deploys", "ops", "sales"]), dest, ts()))
    return "csv-export-webhook", "secret", "csv", pick(["exports/integrations.csv", "data/notification_targets.csv"]), "\n".join(rows) + "\n"


def n_gha_workflow():
    text = """name: release
on:
  push:
    tags: ["v*"]
permissions:
  contents: write
  id-token: write
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@%s # v4.1.1
      - uses: actions/setup-node@%s # v4.0.2
        with:
          node-version: 20
          registry-url: https://registry.npmjs.org
      - run: npm ci
      - run: npm publish --provenance
        env:
          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}
      - uses: docker/login-action@%s
        with:
          registry: ghcr.io
          username: ${{ github.actor }}
          password: ${{ secrets.GITHUB_TOKEN }}
""" % (rhex(40), rhex(40), rhex(40))
    return "gha-workflow-refs", "none", "yml", ".github/workflows/release.yml", text


def s_ci_log():
    r = RNG.randint(0, 1)
    tok = npm_tok() if r == 0 else pypi_tok()
    lines = ["2024-05-%02dT10:%02d:%02d.%07dZ ##[group]Run %s" % (RNG.randint(1, 28), RNG.randint(0, 59), RNG.randint(0, 59), RNG.randint(0, 9999999),
                                                               "npm publish" if r == 0 else "twine upload dist/*")]
    lines += ["2024-05-01T10:00:%02d.%07dZ shell: /usr/bin/bash -e {0}" % (RNG.randint(0, 59), RNG.randint(0, 9999999))]
    lines += ["2024-05-01T10:00:%02d.%07dZ env:" % (RNG.randint(0, 59), RNG.randint(0, 9999999))]
    if r == 0:
        lines += ["2024-05-01T10:00:%02d.%07dZ   NODE_AUTH_TOKEN: %s" % (RNG.randint(0, 59), RNG.randint(0, 9999999), tok)]
    else:
        lines += ["2024-05-01T10:00:%02d.%07dZ   TWINE_USERNAME: __token__" % (RNG.randint(0, 59), RNG.randint(0, 9999999)),
                  "2024-05-01T10:00:%02d.%07dZ   TWINE_PASSWORD: %s" % (RNG.randint(0, 59), RNG.randint(0, 9999999), tok)]
    lines += ["2024-05-01T10:00:%02d.%07dZ ##[endgroup]" % (RNG.randint(0, 59), RNG.randint(0, 9999999))]
    for _ in range(RNG.randint(6, 14)):
        lines.append("2024-05-01T10:01:%02d.%07dZ %s" % (RNG.randint(0, 59), RNG.randint(0, 9999999), pick([
            "npm notice package size: %d kB" % RNG.randint(10, 900), "npm notice shasum: %s" % rhex(40),
            "npm notice integrity: %s" % sha512_integrity()[:40] + "[...]", "Uploading distributions to https://upload.pypi.org/legacy/",
            "View at: https://pypi.org/project/acme-sdk/%d.%d.%d/" % (RNG.randint(0, 3), RNG.randint(0, 9), RNG.randint(0, 9)),
            "Post job cleanup. run_id=%d" % RNG.randint(10**9, 10**10)])))
    return "ci-log-token", "secret", "log", pick(["ci/logs/publish_%d.log" % RNG.randint(1, 999), "artifacts/release-job.txt"]), "\n".join(lines) + "\n"


def n_ci_log_masked():
    lines = ["2024-05-01T10:00:01.0000000Z ##[group]Run npm publish", "2024-05-01T10:00:01.1000000Z env:",
             "2024-05-01T10:00:01.1000000Z   NODE_AUTH_TOKEN: ***", "2024-05-01T10:00:01.1000000Z   GITHUB_TOKEN: ***",
             "2024-05-01T10:00:01.2000000Z ##[endgroup]"]
    for _ in range(RNG.randint(8, 16)):
        lines.append("2024-05-01T10:01:%02d.%07dZ %s" % (RNG.randint(0, 59), RNG.randint(0, 9999999), pick([
            "npm notice shasum: %s" % rhex(40), "npm notice integrity: %s" % sha512_integrity(),
            "Cache restored from key: node-cache-Linux-%s" % rhex(64), "Downloading action sha:%s" % rhex(40),
            "Attestation signed using certificate identity %s" % uuid4()])))
    return "ci-log-masked", "none", "log", pick(["ci/logs/publish_ok.log", "artifacts/job-output.txt"]), "\n".join(lines) + "\n"


def n_html_sri():
    text = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="csrf-token" content="%s">
  <meta http-equiv="Content-Security-Policy" content="script-src 'self' 'nonce-%s'">
  <link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css" integrity="%s" crossorigin="anonymous">
  <script src="https://cdn.jsdelivr.net/npm/htmx.org@1.9.12" integrity="sha384-%s" crossorigin="anonymous"></script>
  <script nonce="%s">window.STRIPE_PK = "pk_live_%s";</script>
</head>
<body>
  <form method="post" action="/login">
    <input type="hidden" name="authenticity_token" value="%s">
    <label>Password <input type="password" name="password" placeholder="Enter your password" autocomplete="current-password"></label>
  </form>
</body>
</html>
""" % (b64(rbytes(32)), b64(rbytes(16)), "sha384-" + b64(rbytes(48)), b64(rbytes(48)), b64(rbytes(16)), rs(99), b64(rbytes(64)))
    return "html-sri-nonce", "none", "html", pick(["tests/fixtures/login_page.html", "spec/fixtures/rendered/login.html", "docs/_build/html/login.html"]), text


def n_webhook_sig_log():
    lines = []
    for _ in range(RNG.randint(10, 20)):
        lines.append("%s INFO webhook received delivery=%s event=push X-Hub-Signature-256=sha256=%s verified=true" % (ts(), uuid4(), rhex(64)))
        if RNG.random() < 0.4:
            lines.append("%s INFO stripe event evt_%s Stripe-Signature: t=%d,v1=%s" % (ts(), rs(24), 1710000000 + RNG.randint(0, 10**6), rhex(64)))
    return "webhook-signature-log", "none", "log", pick(["logs/webhooks.log", "test/fixtures/webhook_deliveries.log"]), "\n".join(lines) + "\n"


def n_docker_compose_digests():
    text = """services:
  api:
    image: ghcr.io/acme/api@sha256:%s
    environment:
      DATABASE_URL: postgres://app:${POSTGRES_PASSWORD:?set me}@db:5432/app
      JWT_SECRET: ${JWT_SECRET}
      STRIPE_SECRET_KEY_FILE: /run/secrets/stripe_key
    secrets: [stripe_key]
  db:
    image: postgres:16@sha256:%s
    environment:
      POSTGRES_PASSWORD_FILE: /run/secrets/pg_password
secrets:
  stripe_key:
    file: ./secrets/stripe_key.txt
  pg_password:
    file: ./secrets/pg_password.txt
""" % (rhex(64), rhex(64))
    return "compose-digests", "none", "yaml", pick(["docker-compose.yml", "deploy/compose.prod.yaml"]), text


def n_jwt_io_doc():
    text = """# How our sessions work

A JWT has three base64url parts. The classic example from jwt.io (signed with the literal
secret `your-256-bit-secret`):

```
eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c
```

Decoded payload: `{"sub": "1234567890", "name": "John Doe", "iat": 1516239022}`.

Our access tokens look the same but are signed with RS256 and expire after 15 minutes;
the refresh token is an opaque 256-bit value stored hashed (`sha256`) in `sessions.token_hash`.
"""
    return "docs-jwt-example", "none", "md", "docs/architecture/sessions.md", text


def s_tfstate():
    r = RNG.randint(0, 2)
    if r == 0:
        attr = {"identifier": "app-prod", "engine": "postgres", "username": "app_admin", "password": password(), "port": 5432}
        rtype, rname = "aws_db_instance", "main"
    elif r == 1:
        ak, sk = aws_pair()
        attr = {"id": ak, "user": "ci-deployer", "secret": sk, "status": "Active", "ses_smtp_password_v4": None}
        rtype, rname = "aws_iam_access_key", "ci"
    else:
        attr = {"name": "acme-prod", "primary_access_key": b64(rbytes(64)), "account_tier": "Standard"}
        rtype, rname = "azurerm_storage_account", "main"
    st = {"version": 4, "terraform_version": "1.7.%d" % RNG.randint(0, 5), "serial": RNG.randint(1, 400), "lineage": uuid4(), "outputs": {},
          "resources": [{"mode": "managed", "type": rtype, "name": rname, "provider": "provider[\"registry.terraform.io/hashicorp/%s\"]" % ("azurerm" if r == 2 else "aws"),
                         "instances": [{"schema_version": 0, "attributes": attr, "sensitive_attributes": [], "private": b64(json.dumps({"schema_version": "1"}).encode())}]}]}
    return "tfstate-secret", "secret", "tfstate", pick(["infra/terraform.tfstate", "terraform/prod/terraform.tfstate", "envs/prod/terraform.tfstate.backup"]), json.dumps(st, indent=2) + "\n"


def n_tfstate():
    attr = {"arn": "arn:aws:s3:::acme-%s" % rs(6, LO), "bucket": "acme-%s" % rs(6, LO), "id": "acme-logs", "hosted_zone_id": rs(14, UP + DG),
            "versioning": [{"enabled": True}], "tags": {"team": "platform"}}
    st = {"version": 4, "terraform_version": "1.7.2", "serial": RNG.randint(1, 400), "lineage": uuid4(), "outputs": {"kms_key_id": {"value": uuid4(), "type": "string"}},
          "resources": [{"mode": "managed", "type": "aws_s3_bucket", "name": "logs", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                         "instances": [{"schema_version": 0, "attributes": attr, "private": b64(rbytes(60))}]}]}
    return "tfstate-clean", "none", "tfstate", "infra/modules/logs/terraform.tfstate", json.dumps(st, indent=2) + "\n"


def s_npmrc_in_docs():
    tok = npm_tok()
    text = """# Publishing from a laptop

Our `.npmrc` on the release machine:

```
registry=https://registry.npmjs.org/
//registry.npmjs.org/:_authToken=%s
always-auth=true
```

Run `npm whoami` to verify, then `npm publish --access public`.
Last published: v%d.%d.%d (shasum %s).
""" % (tok, RNG.randint(1, 4), RNG.randint(0, 9), RNG.randint(0, 9), rhex(40))
    return "docs-npmrc-token", "secret", "md", pick(["docs/release.md", "RELEASING.md"]), text


def s_azure_log():
    lines = log_lines(RNG.randint(8, 16), "uploader")
    lines.insert(RNG.randint(1, len(lines) - 1), "%s DEBUG [uploader] BlobServiceClient.from_connection_string(%r)" % (ts(), azure_conn()))
    return "log-azure-conn", "secret", "log", pick(["logs/uploader-debug.log", "support/uploader.log"]), "\n".join(lines) + "\n"


def s_telegram_notebook():
    tok = telegram()
    cells = [md_cell("Send the nightly metrics digest to the team chat."),
             code_cell("import requests\nBOT = \"%s\"\nCHAT = -100%d" % (tok, RNG.randint(10**9, 10**10)), n=1),
             code_cell("r = requests.post(f'https://api.telegram.org/bot{BOT}/sendMessage', json={'chat_id': CHAT, 'text': digest})\nr.json()['result']['message_id']",
                       [{"data": {"text/plain": ["%d" % RNG.randint(100, 9999)]}, "execution_count": 2, "metadata": {}, "output_type": "execute_result"}], n=2)]
    return "notebook-source-key", "secret", "ipynb", pick(["notebooks/nightly_digest.ipynb", "ops/metrics_bot.ipynb"]), nb(cells)


# ---------------------------------------------------------------- schedule

SCHEDULE = [
    # secret generators
    (s_notebook_output_token, 5), (s_notebook_source_key, 5), (s_notebook_env_aws, 3), (s_telegram_notebook, 2),
    (s_log_live_key, 6), (s_stacktrace_password, 4), (s_azure_log, 2),
    (s_readme_private_key, 4), (s_docs_pasted_config, 4), (s_npmrc_in_docs, 2),
    (s_jest_snapshot, 4), (s_vcr_cassette, 5), (s_fixture_live_key, 4),
    (s_minified_bundle, 4), (s_sql_dump_conn, 4), (s_sql_integration, 3),
    (s_har_live, 3), (s_curl_live, 4), (s_k8s_secret, 4), (s_k8s_stringdata_token, 3), (s_k8s_dockerconfig, 3),
    (s_age_key, 2), (s_csv_webhook, 2), (s_ci_log, 3), (s_tfstate, 3),
    # none generators
    (n_notebook_outputs, 4), (n_notebook_placeholder, 4), (n_log_ids, 4), (n_access_log, 2),
    (n_stacktrace_masked, 3), (n_go_panic, 2), (n_changelog, 3), (n_release_notes, 2),
    (n_readme_placeholders, 5), (n_docs_aws_example, 1), (n_package_lock, 3), (n_yarn_lock, 2),
    (n_poetry_lock, 2), (n_pipfile_lock, 2), (n_gemfile_lock, 2), (n_go_sum, 2), (n_cargo_lock, 2),
    (n_jest_snapshot, 3), (n_vcr_cassette, 4), (n_fixture_users, 3), (n_seed_rb, 2),
    (n_protobuf_pb2, 2), (n_graphql_schema, 2), (n_openapi, 2), (n_minified_bundle, 3), (n_sourcemap, 2),
    (n_css_font, 2), (n_svg, 2), (n_i18n, 2), (n_sql_hashes, 3), (n_sql_schema, 2),
    (n_har_redacted, 2), (n_curl_redacted, 2), (n_k8s_placeholder, 3), (n_sealed_secret, 2),
    (n_external_secret, 1), (n_k8s_configmap, 2), (n_rfc_vectors, 1), (n_fips_aes_ed25519, 1), (n_wycheproof, 2),
    (n_jwk_test_vector, 2), (n_pgp_pub, 2), (n_authorized_keys, 2), (n_known_hosts, 2), (n_cert, 2),
    (n_sops, 2), (n_ansible_vault, 2), (n_age_armored, 2), (n_gitattributes, 2), (n_env_example, 2),
    (n_csv_ids, 2), (n_csv_users, 2), (n_gha_workflow, 2), (n_ci_log_masked, 2), (n_html_sri, 2),
    (n_webhook_sig_log, 2), (n_docker_compose_digests, 2), (n_jwt_io_doc, 1), (n_tfstate, 1),
]


def main():
    cases = []
    for fn, n in SCHEDULE:
        for _ in range(n):
            cls, label, ext, path, text = fn()
            cases.append({"source": "generator-7", "class": cls, "label": label, "ext": ext, "path": path,
                          "origin": ORIGIN, "text": text})
    RNG.shuffle(cases)
    with open(OUT, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    ns = sum(c["label"] == "secret" for c in cases)
    print("wrote %d cases (%d secret, %d none) to %s" % (len(cases), ns, len(cases) - ns, OUT))


if __name__ == "__main__":
    main()
