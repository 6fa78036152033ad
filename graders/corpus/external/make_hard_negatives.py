#!/usr/bin/env python3
"""Third case generator (issue 18): whole, realistic files of hard
negatives the first two generators and the fixed false-positive classes do
not cover, and secrets in file layouts they do not cover.

Written as an adversary of the scanner's precision, by someone who did not
write it: every template is a file a project commits as it is (lockfiles,
manifests, Terraform state, JWKS documents, encrypted-secret files, asset
manifests, HTML with SRI and CSP, crypto test vectors, ...). Different
seed, templates and value draws from make_cases.py.

Writes generator3.jsonl next to this script, one case per line in the
format import.py writes, plus `path`: the file name the case is scanned
as (a lockfile is scanned as `package-lock.json`, not `case.json`, since
file names are part of what a scanner may use and the held-out corpus has
them).

Labels (ours; each class's docstring-like comment says why):
- secret: a live-looking credential an attacker could use: API keys and
  tokens, passwords, private keys, userinfo passwords in URLs, registry
  auth in .npmrc/.pypirc/.netrc/.git-credentials.
- none: public values (public keys, certificates, JWKS moduli, OAuth
  client ids, addresses, object ids, publishable tokens), references
  (env lookups, template expressions, secret-manager references), hashes
  of public content (lockfile integrity, image digests, SRI, LFS oids,
  commit ids), placeholders, ciphertext of a tool built to commit it
  (ansible-vault, SOPS, SealedSecrets: the key that opens it is not in
  the repository), and password *hashes* in fixtures (bcrypt, PBKDF2,
  sha512-crypt): a hash is not the password, and gitleaks and
  detect-secrets report none of them either.
"""

import base64
import hashlib
import json
import os
import random
import string
import uuid

SEED = 20261204
R = random.Random(SEED)
HERE = os.path.dirname(os.path.abspath(__file__))
LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
ALNUM = LOW + UP + DIG
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
# Substrings scanners read as placeholders or fixtures: a positive drawn
# with one would be mislabelled, so such draws are redrawn.
BANNED = ("example", "test", "fake", "dummy", "sample", "xxx", "redact", "changeme",
          "your", "1234", "abcd", "token", "secret", "passw", "null", "none", "true",
          "false", "user", "root", "mock", "demo", "0000", "aaaa", "ffff")


def rs(n, alpha=ALNUM):
    while True:
        s = "".join(R.choice(alpha) for _ in range(n))
        if any(b in s.lower() for b in BANNED):
            continue
        if any(c in DIG for c in alpha) and not any(c in DIG for c in s):
            continue
        if any(c in UP for c in alpha) and any(c in LOW for c in alpha) and not (
                any(c in UP for c in s) and any(c in LOW for c in s)):
            continue
        return s


def hexs(n):
    return rs(n, HEX)


def b64_bytes(n):
    return base64.b64encode(bytes(R.getrandbits(8) for _ in range(n))).decode()


def b64url_bytes(n):
    return base64.urlsafe_b64encode(bytes(R.getrandbits(8) for _ in range(n))).decode().rstrip("=")


def uid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def sha(kind="sha256", data=None):
    data = data if data is not None else rs(16).encode()
    return hashlib.new(kind, data).hexdigest()


def sri(kind="sha512"):
    return f"{kind}-" + base64.b64encode(hashlib.new(kind, rs(20).encode()).digest()).decode()


def wrap(s, n=64):
    return "\n".join(s[i:i + n] for i in range(0, len(s), n))


def bech32_address(hrp="bc"):
    """A segwit v0 address with a valid BIP 173 checksum over random bytes."""
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

    def polymod(values):
        chk = 1
        for v in values:
            top = chk >> 25
            chk = (chk & 0x1ffffff) << 5 ^ v
            for i in range(5):
                chk ^= gen[i] if (top >> i) & 1 else 0
        return chk
    prog = bytes(R.getrandbits(8) for _ in range(20))
    acc, bits, data = 0, 0, [0]
    for b in prog:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    hrp_exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = polymod(hrp_exp + data + [0] * 6) ^ 1
    data += [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[d] for d in data)


def base58check_address(version=0):
    """A legacy address: version byte, 20 random bytes, double-SHA-256 check."""
    body = bytes([version]) + bytes(R.getrandbits(8) for _ in range(20))
    full = body + hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4]
    n = int.from_bytes(full, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(full) - len(full.lstrip(b"\0"))) + out


def der_len(n):
    if n < 128:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def der(tag, body):
    return bytes([tag]) + der_len(len(body)) + body


RSA_OID = bytes.fromhex("06092a864886f70d0101010500")
EC_OID = bytes.fromhex("06072a8648ce3d020106082a8648ce3d030107")


def spki_rsa(bits=2048):
    """DER SubjectPublicKeyInfo of a random RSA modulus, base64."""
    n = bytes([0x00, 0xC0 | R.getrandbits(6)]) + bytes(R.getrandbits(8) for _ in range(bits // 8 - 1))
    rsakey = der(0x30, der(0x02, n) + der(0x02, b"\x01\x00\x01"))
    return base64.b64encode(der(0x30, der(0x30, RSA_OID) + der(0x03, b"\x00" + rsakey))).decode()


def spki_ec():
    point = b"\x04" + bytes(R.getrandbits(8) for _ in range(64))
    return base64.b64encode(der(0x30, der(0x30, EC_OID) + der(0x03, b"\x00" + point))).decode()


def cert_der():
    """A certificate-shaped DER blob: SEQUENCE { tbsCertificate SEQUENCE {
    [0] version, serial, ... }, sigAlg, signature } with random content."""
    tbs = der(0x30, der(0xA0, der(0x02, b"\x02")) + der(0x02, bytes(R.getrandbits(8) for _ in range(16)))
              + der(0x30, bytes.fromhex("06092a864886f70d01010b0500"))
              + bytes(R.getrandbits(8) for _ in range(300)))
    sig = der(0x03, b"\x00" + bytes(R.getrandbits(8) for _ in range(256)))
    return base64.b64encode(der(0x30, tbs + der(0x30, bytes.fromhex("06092a864886f70d01010b0500")) + sig)).decode()


def pkcs8_rsa():
    """PKCS#8 PrivateKeyInfo-shaped DER: SEQUENCE { INTEGER 0, algId, OCTET STRING }."""
    inner = der(0x30, der(0x02, b"\x00") + b"".join(der(0x02, bytes(R.getrandbits(8) for _ in range(k)))
                                                     for k in (257, 3, 256, 129, 129, 128, 128, 128)))
    return base64.b64encode(der(0x30, der(0x02, b"\x00") + der(0x30, RSA_OID) + der(0x04, inner))).decode()


WORDS = ["orders", "billing", "ledger", "catalog", "search", "payments", "gateway", "profile",
         "inventory", "checkout", "reports", "audit", "notify", "shipping", "pricing", "identity"]
PKGS = ["lodash", "express", "react-dom", "axios", "chalk", "debug", "semver", "uuid", "yargs",
        "commander", "ws", "qs", "ms", "mime", "cookie", "tslib", "zod", "pino"]


def word():
    return R.choice(WORDS)


def ver():
    return f"{R.randint(0, 9)}.{R.randint(0, 30)}.{R.randint(0, 20)}"


CASES = []


def case(label, cls, path, text):
    ext = path.rsplit(".", 1)[-1] if "." in os.path.basename(path) else os.path.basename(path)
    CASES.append((label, cls, path, ext, text))


def neg(cls, path, text):
    case("none", cls, path, text)


def pos(cls, path, text):
    case("secret", cls, path, text)


# ---------------------------------------------------------------- negatives

def lockfiles():
    # npm package-lock with integrity and resolved URLs.
    for _ in range(2):
        deps = {}
        for p in R.sample(PKGS, 6):
            v = ver()
            deps[f"node_modules/{p}"] = {"version": v, "resolved": f"https://registry.npmjs.org/{p}/-/{p}-{v}.tgz",
                                         "integrity": sri(), "license": "MIT"}
        neg("lockfile-integrity", "package-lock.json", json.dumps(
            {"name": word(), "version": ver(), "lockfileVersion": 3, "requires": True,
             "packages": deps}, indent=2))
    # yarn.lock v1: resolved with #sha1, integrity.
    body = "# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n"
    for p in R.sample(PKGS, 5):
        v = ver()
        body += (f'{p}@^{v}:\n  version "{v}"\n  resolved "https://registry.yarnpkg.com/{p}/-/{p}-{v}.tgz#{sha("sha1")}"\n'
                 f'  integrity {sri()}\n\n')
    neg("lockfile-integrity", "yarn.lock", body)
    # go.sum
    mods = ["github.com/spf13/cobra", "golang.org/x/crypto", "github.com/google/uuid", "go.uber.org/zap"]
    lines = []
    for m in mods:
        v = f"v{ver()}"
        lines.append(f"{m} {v} h1:{base64.b64encode(hashlib.sha256(m.encode() + v.encode()).digest()).decode()}")
        lines.append(f"{m} {v}/go.mod h1:{base64.b64encode(hashlib.sha256(m.encode()).digest()).decode()}")
    neg("lockfile-integrity", "go.sum", "\n".join(lines) + "\n")
    # Cargo.lock
    body = "# This file is automatically @generated by Cargo.\nversion = 3\n\n"
    for p in ("serde", "tokio", "regex", "anyhow"):
        body += (f'[[package]]\nname = "{p}"\nversion = "{ver()}"\n'
                 f'source = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{sha()}"\n\n')
    neg("lockfile-integrity", "Cargo.lock", body)
    # pip requirements with hashes (not a *.lock name).
    body = "# pip-compile --generate-hashes requirements.in\n"
    for p in ("requests", "urllib3", "certifi", "idna"):
        body += f"{p}=={ver()} \\\n    --hash=sha256:{sha()} \\\n    --hash=sha256:{sha()}\n"
    neg("lockfile-integrity", "requirements.txt", body)
    # poetry.lock style inline tables under a non-lock name (pyproject export)
    body = "[metadata]\ncontent-hash = \"%s\"\n\n[metadata.files]\n" % sha()
    for p in ("attrs", "click"):
        body += f'{p} = [\n    {{file = "{p}-{ver()}-py3-none-any.whl", hash = "sha256:{sha()}"}},\n]\n'
    neg("lockfile-integrity", "poetry-export.toml", body)
    # composer.lock-like content in a JSON under a different name
    neg("lockfile-integrity", "vendor/installed.json", json.dumps({"packages": [
        {"name": f"acme/{w}", "version": ver(),
         "source": {"type": "git", "url": f"https://github.com/acme/{w}.git", "reference": sha("sha1")},
         "dist": {"type": "zip", "url": f"https://api.github.com/repos/acme/{w}/zipball/{sha('sha1')}",
                  "shasum": ""}} for w in R.sample(WORDS, 3)]}, indent=4))
    # Nix flake.lock
    neg("lockfile-integrity", "flake.lock", json.dumps({"nodes": {"nixpkgs": {"locked": {
        "lastModified": 1701234567, "narHash": sri("sha256"), "owner": "NixOS", "repo": "nixpkgs",
        "rev": sha("sha1"), "type": "github"}}}, "root": "root", "version": 7}, indent=2))
    # Podfile.lock-like, gradle verification-metadata.xml
    neg("lockfile-integrity", "gradle/verification-metadata.xml",
        '<?xml version="1.0" encoding="UTF-8"?>\n<verification-metadata>\n   <components>\n' + "".join(
            f'      <component group="com.acme" name="{w}" version="{ver()}">\n'
            f'         <artifact name="{w}.jar">\n            <sha256 value="{sha()}" origin="Generated by Gradle"/>\n'
            f'         </artifact>\n      </component>\n' for w in R.sample(WORDS, 3)) + "   </components>\n</verification-metadata>\n")


def digests_and_hashes():
    for _ in range(2):
        d = sha()
        neg("image-digest", "Dockerfile", f"FROM node:20-alpine@sha256:{d} AS build\nWORKDIR /app\nCOPY . .\n"
            f"RUN npm ci\nFROM gcr.io/distroless/nodejs20-debian12@sha256:{sha()}\nCOPY --from=build /app /app\n")
        neg("image-digest", "k8s/deployment.yaml",
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {word()}\n  annotations:\n"
            f"    deployment.kubernetes.io/revision: \"4\"\n    kubectl.kubernetes.io/restartedAt: \"2026-11-02T10:14:07Z\"\n"
            f"  uid: {uid()}\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n"
            f"          image: 123456789012.dkr.ecr.eu-west-1.amazonaws.com/{word()}@sha256:{sha()}\n"
            f"          imagePullPolicy: IfNotPresent\n")
    # HTML with SRI and CSP nonce / hashes
    for _ in range(2):
        nonce = b64_bytes(16)
        neg("sri-csp", "public/index.html",
            f'<!doctype html>\n<html>\n<head>\n<meta http-equiv="Content-Security-Policy" content="script-src \'self\' '
            f"'nonce-{nonce}' 'sha256-{base64.b64encode(hashlib.sha256(rs(9).encode()).digest()).decode()}'\">\n"
            f'<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@5.3.2/dist/css/bootstrap.min.css" '
            f'integrity="{sri("sha384")}" crossorigin="anonymous">\n'
            f'<script nonce="{nonce}" src="/static/js/main.{hexs(8)}.js"></script>\n</head>\n</html>\n')
    neg("sri-csp", "nginx/security-headers.conf",
        f"add_header Content-Security-Policy \"default-src 'self'; script-src 'self' "
        f"'sha256-{base64.b64encode(hashlib.sha256(b'a').digest()).decode()}' "
        f"'sha384-{base64.b64encode(hashlib.sha384(b'b').digest()).decode()}'\" always;\n")
    # git LFS pointers
    for _ in range(2):
        neg("lfs-pointer", f"assets/{word()}.psd",
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha()}\nsize {R.randint(10**5, 10**8)}\n")
    # .git-blame-ignore-revs
    neg("commit-list", ".git-blame-ignore-revs",
        "# Reformat with black\n" + sha("sha1") + "\n# Switch to prettier 3\n" + sha("sha1") + "\n" + sha("sha1") + "\n")
    # pinned actions, cache keys
    neg("pinned-action", ".github/workflows/ci.yml",
        "name: ci\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - uses: actions/checkout@{sha('sha1')} # v4.1.1\n"
        f"      - uses: actions/setup-node@{sha('sha1')} # v4.0.0\n"
        "        with:\n          node-version: 20\n"
        f"      - uses: actions/cache@{sha('sha1')}\n        with:\n          path: ~/.npm\n"
        "          key: npm-${{ hashFiles('**/package-lock.json') }}\n"
        "      - run: npm ci && npm test\n        env:\n          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n")
    # go.mod pseudo versions and git-dependency refs
    neg("commit-ref", "go.mod",
        "module github.com/acme/orders\n\ngo 1.22\n\nrequire (\n"
        f"\tgithub.com/acme/ledger v0.0.0-20231012182547-{hexs(12)}\n"
        f"\tgolang.org/x/exp v0.0.0-20240112132812-{hexs(12)}\n)\n"
        f"replace github.com/acme/auth => github.com/acme/auth v1.2.1-0.20240301090000-{hexs(12)}\n")
    neg("commit-ref", "package.json", json.dumps({"name": "web", "version": ver(), "dependencies": {
        "internal-ui": f"git+https://github.com/acme/internal-ui.git#{sha('sha1')}",
        "left-pad": f"github:acme/left-pad#{sha('sha1')}", "react": "^18.2.0"}}, indent=2))
    neg("commit-ref", "Gopkg.lock",
        f'[[projects]]\n  digest = "1:{sha()}"\n  name = "github.com/pkg/errors"\n  packages = ["."]\n'
        f'  revision = "{sha("sha1")}"\n  version = "v0.9.1"\n')
    neg("commit-ref", "deps/submodules.txt",
        "".join(f" {sha('sha1')} vendor/{w} (v{ver()})\n" for w in R.sample(WORDS, 3)))
    # ETags, cache keys, S3 listings
    neg("etag", "tests/fixtures/s3_list_objects.json", json.dumps({"Contents": [
        {"Key": f"exports/{word()}-{R.randint(1, 99)}.csv", "LastModified": "2026-10-01T12:00:00.000Z",
         "ETag": f'"{hashlib.md5(rs(5).encode()).hexdigest()}"', "Size": R.randint(100, 10**6),
         "StorageClass": "STANDARD"} for _ in range(3)]}, indent=2))
    neg("etag", "docs/api/caching.md",
        "## Conditional requests\n\n```http\nHTTP/1.1 200 OK\n"
        f'ETag: "{sha("sha1")}"\nCache-Control: max-age=600\n```\n\nSend it back as `If-None-Match: "{hashlib.md5(b"x").hexdigest()}"`.\n')
    # asset manifest with content hashes in file names
    neg("asset-hash", "build/asset-manifest.json", json.dumps({"files": {
        "main.js": f"/static/js/main.{hexs(20)}.js", "main.css": f"/static/css/main.{hexs(20)}.css",
        "vendor.js": f"/static/js/vendor.{hexs(16)}.chunk.js",
        "runtime.js": f"/_next/static/chunks/webpack-{hexs(16)}.js"},
        "entrypoints": [f"static/js/main.{hexs(20)}.js"]}, indent=2))
    neg("asset-hash", "dist/.vite/manifest.json", json.dumps({"src/main.ts": {
        "file": f"assets/main-{rs(8, ALNUM + '_-')}.js", "css": [f"assets/main-{rs(8, ALNUM + '_-')}.css"],
        "isEntry": True}}, indent=2))
    # checksums in a release script
    neg("checksum", "scripts/install-tools.sh",
        "#!/usr/bin/env bash\nset -euo pipefail\n"
        f"KUBECTL_SHA256=\"{sha()}\"\nHELM_SHA256={sha()}\n"
        "curl -fsSLo kubectl https://dl.k8s.io/release/v1.29.0/bin/linux/amd64/kubectl\n"
        "echo \"${KUBECTL_SHA256}  kubectl\" | sha256sum -c -\n")
    neg("checksum", "Formula/acmectl.rb",
        "class Acmectl < Formula\n  desc \"Acme command line\"\n"
        f"  url \"https://github.com/acme/acmectl/archive/v{ver()}.tar.gz\"\n  sha256 \"{sha()}\"\n"
        "  license \"MIT\"\nend\n")
    neg("checksum", "terraform/.terraform.lock.hcl",
        'provider "registry.terraform.io/hashicorp/aws" {\n  version     = "5.31.0"\n  hashes = [\n'
        f'    "h1:{base64.b64encode(hashlib.sha256(b"x").digest()).decode()}",\n'
        f'    "zh:{sha()}",\n    "zh:{sha()}",\n  ]\n}}\n')


def ids():
    # Terraform state: resource ids, ARNs, lineage, unique ids.
    for _ in range(2):
        neg("cloud-ids", "terraform.tfstate", json.dumps({
            "version": 4, "terraform_version": "1.6.6", "serial": R.randint(1, 300), "lineage": uid(),
            "resources": [
                {"mode": "managed", "type": "aws_security_group", "name": "app", "instances": [{"attributes": {
                    "id": f"sg-{hexs(17)}", "arn": f"arn:aws:ec2:eu-west-1:{R.randint(10**11, 10**12-1)}:security-group/sg-{hexs(17)}",
                    "vpc_id": f"vpc-{hexs(17)}", "owner_id": str(R.randint(10**11, 10**12-1))}}]},
                {"mode": "managed", "type": "aws_iam_role", "name": "task", "instances": [{"attributes": {
                    "arn": f"arn:aws:iam::{R.randint(10**11, 10**12-1)}:role/{word()}-task",
                    "unique_id": "AROA" + rs(17, UP + "234567"), "create_date": "2026-02-11T09:00:00Z"}}]},
                {"mode": "managed", "type": "aws_kms_key", "name": "data", "instances": [{"attributes": {
                    "key_id": uid(), "arn": f"arn:aws:kms:eu-west-1:{R.randint(10**11, 10**12-1)}:key/{uid()}"}}]},
                {"mode": "managed", "type": "aws_instance", "name": "bastion", "instances": [{"attributes": {
                    "id": f"i-{hexs(17)}", "ami": f"ami-{hexs(17)}", "subnet_id": f"subnet-{hexs(17)}",
                    "primary_network_interface_id": f"eni-{hexs(17)}"}}]}]}, indent=2))
    neg("cloud-ids", "infra/iam.tf",
        'data "aws_iam_policy_document" "read" {\n  statement {\n    actions   = ["s3:GetObject"]\n'
        f'    resources = ["arn:aws:s3:::{word()}-exports-{R.randint(10**11, 10**12-1)}/*"]\n  }}\n}}\n\n'
        f'resource "aws_iam_user" "ci" {{\n  name = "ci"\n}}\n# imported: terraform import aws_iam_user.ci ci  (AIDA{rs(17, UP + "234567")})\n'
        f'locals {{\n  kms_key_arn = "arn:aws:kms:us-east-1:{R.randint(10**11, 10**12-1)}:key/mrk-{hexs(32)}"\n}}\n')
    # GUIDs in .NET projects / solution files
    neg("guid", "src/Orders.sln",
        "Microsoft Visual Studio Solution File, Format Version 12.00\n"
        f'Project("{{{uid().upper()}}}") = "Orders.Api", "Orders.Api\\Orders.Api.csproj", "{{{uid().upper()}}}"\nEndProject\n'
        f"Global\n\tGlobalSection(SolutionProperties) = preSolution\n\t\tHideSolutionNode = FALSE\n\tEndGlobalSection\n"
        f"\tGlobalSection(ExtensibilityGlobals) = postSolution\n\t\tSolutionGuid = {{{uid().upper()}}}\n\tEndGlobalSection\nEndGlobal\n")
    neg("guid", "src/Orders.Api/Orders.Api.csproj",
        '<Project Sdk="Microsoft.NET.Sdk.Web">\n  <PropertyGroup>\n    <TargetFramework>net8.0</TargetFramework>\n'
        f"    <UserSecretsId>{uid()}</UserSecretsId>\n    <ProjectGuid>{{{uid().upper()}}}</ProjectGuid>\n"
        "  </PropertyGroup>\n</Project>\n")
    # Stripe / Twilio / Slack object ids (not credentials)
    neg("object-id", "tests/fixtures/stripe_webhook.json", json.dumps({
        "id": "evt_" + rs(24), "object": "event", "type": "invoice.paid", "data": {"object": {
            "id": "in_" + rs(24), "customer": "cus_" + rs(14), "subscription": "sub_" + rs(24),
            "payment_intent": "pi_" + rs(24), "charge": "ch_" + rs(24),
            "lines": {"data": [{"price": {"id": "price_" + rs(24), "product": "prod_" + rs(14)}}]}}}},
        indent=2))
    neg("object-id", "config/billing.yaml",
        f"plans:\n  starter:\n    stripe_price_id: price_{rs(24)}\n    stripe_product: prod_{rs(14)}\n"
        f"  team:\n    stripe_price_id: price_{rs(24)}\n    stripe_product: prod_{rs(14)}\n"
        "stripe_secret_key: ${STRIPE_SECRET_KEY}\n")
    neg("object-id", "src/notify/sms.ts",
        f"// Messaging service and sender, both public identifiers\nexport const MESSAGING_SERVICE_SID = \"MG{hexs(32)}\";\n"
        f"export const FROM_NUMBER_SID = \"PN{hexs(32)}\";\nconst authToken = process.env.TWILIO_AUTH_TOKEN!;\n")
    # OAuth public client ids next to env-var secret references
    neg("oauth-client-id", "src/auth/config.ts",
        "export const authConfig = {\n"
        f"  clientId: \"{R.randint(10**11, 10**12-1)}-{rs(32, LOW + DIG)}.apps.googleusercontent.com\",\n"
        "  clientSecret: process.env.GOOGLE_CLIENT_SECRET,\n  redirectUri: \"https://app.acme.io/auth/callback\",\n"
        "  scopes: [\"openid\", \"email\", \"profile\"],\n};\n")
    neg("oauth-client-id", "web/.env.production",
        f"NEXT_PUBLIC_AUTH0_DOMAIN=acme.eu.auth0.com\nNEXT_PUBLIC_AUTH0_CLIENT_ID={rs(32)}\n"
        f"NEXT_PUBLIC_SENTRY_DSN=https://{hexs(32)}@o{R.randint(10**5, 10**6)}.ingest.sentry.io/{R.randint(10**6, 10**7)}\n"
        f"NEXT_PUBLIC_POSTHOG_KEY=phc_{rs(43)}\n"
        "AUTH0_CLIENT_SECRET=${AUTH0_CLIENT_SECRET}\n")
    neg("oauth-client-id", "config/azure.yaml",
        f"azure:\n  tenant_id: {uid()}\n  subscription_id: {uid()}\n  client_id: {uid()}\n"
        "  client_secret: ${AZURE_CLIENT_SECRET}\n")
    # Blockchain addresses and transaction hashes
    neg("crypto-address", "contracts/deployments/mainnet.json", json.dumps({
        "chainId": 1, "Token": {"address": "0x" + rs(40, HEX + "ABCDEF"), "txHash": "0x" + hexs(64),
                                "blockNumber": R.randint(10**7, 2 * 10**7)},
        "Treasury": {"address": "0x" + rs(40, HEX + "ABCDEF"), "owner": "0x" + hexs(40)}}, indent=2))
    neg("crypto-address", "docs/donate.md",
        f"# Support the project\n\n- BTC: `{bech32_address()}`\n- BTC (legacy): `{base58check_address()}`\n"
        f"- ETH: `0x{rs(40, HEX + 'ABCDEF')}`\n")
    # Mapbox public tokens (pk.), publishable
    payload = base64.urlsafe_b64encode(json.dumps({"u": word(), "a": rs(10, LOW + DIG)}).encode()).decode().rstrip("=")
    neg("publishable-token", "src/map/config.js",
        f"// public (pk.) token, URL-restricted in the Mapbox dashboard\nmapboxgl.accessToken = 'pk.{payload}.{rs(22, B64URL)}';\n")


def public_material():
    # JWKS document
    for _ in range(2):
        neg("jwks", "public/.well-known/jwks.json", json.dumps({"keys": [
            {"kty": "RSA", "use": "sig", "alg": "RS256", "kid": rs(27, B64URL),
             "n": b64url_bytes(256), "e": "AQAB", "x5t": b64url_bytes(20),
             "x5c": [cert_der()]},
            {"kty": "EC", "use": "sig", "crv": "P-256", "kid": hexs(16),
             "x": b64url_bytes(32), "y": b64url_bytes(32)}]}, indent=2))
    # SAML IdP metadata with certificate
    neg("certificate", "config/saml/idp-metadata.xml",
        f'<?xml version="1.0"?>\n<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.acme.io/{uid()}">\n'
        '  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">\n'
        '    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>\n'
        f"      <ds:X509Certificate>{cert_der()}</ds:X509Certificate>\n"
        "    </ds:X509Data></ds:KeyInfo></md:KeyDescriptor>\n  </md:IDPSSODescriptor>\n</md:EntityDescriptor>\n")
    # DKIM record in Terraform / zone file
    neg("dkim", "dns/records.tf",
        'resource "aws_route53_record" "dkim" {\n  zone_id = aws_route53_zone.main.zone_id\n'
        '  name    = "mail._domainkey.acme.io"\n  type    = "TXT"\n'
        f'  records = ["v=DKIM1; k=rsa; p={spki_rsa(1024)}"]\n  ttl     = 300\n}}\n')
    neg("dkim", "dns/acme.io.zone",
        f'default._domainkey IN TXT ( "v=DKIM1; k=rsa; "\n  "p={spki_rsa(2048)}" )\n'
        f'@ IN TXT "google-site-verification={rs(43, B64URL)}"\n')
    # Public key as a bare base64 SPKI under a publicKey name (webhook verification)
    neg("public-key-der", "config/webhooks.yaml",
        f"webhooks:\n  provider: acme-pay\n  # ECDSA P-256 public key published by the provider\n"
        f"  verification_public_key: {spki_ec()}\n  signing_secret: ${{ACME_PAY_WEBHOOK_SECRET}}\n")
    neg("public-key-der", "src/main/resources/application.yml",
        f"jwt:\n  issuer: https://auth.acme.io\n  public-key: {spki_rsa(2048)}\n")
    # known_hosts
    neg("known-hosts", "deploy/known_hosts",
        "".join(f"|1|{b64_bytes(20)}|{b64_bytes(20)} ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{b64_bytes(48)}\n"
                for _ in range(3)))
    # certificate bundle
    neg("certificate", "certs/ca-bundle.crt",
        "".join(f"# {w} root\n-----BEGIN CERTIFICATE-----\n{wrap(cert_der())}\n-----END CERTIFICATE-----\n"
                for w in R.sample(WORDS, 2)))
    # WireGuard / age public values named as public
    neg("public-key-der", "wireguard/peers.conf",
        f"[Peer]\n# laptop\nPublicKey = {b64_bytes(32)}\nAllowedIPs = 10.8.0.2/32\n\n[Peer]\nPublicKey = {b64_bytes(32)}\nAllowedIPs = 10.8.0.3/32\n")


def encrypted():
    # ansible-vault inline
    payload = "\n".join("          " + hexs(80) for _ in range(5))
    neg("ciphertext", "group_vars/prod/vault.yml",
        f"db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n{payload}\napp_user: orders\n")
    # SOPS yaml
    def enc(n):
        return f"ENC[AES256_GCM,data:{b64_bytes(n)},iv:{b64_bytes(32)},tag:{b64_bytes(16)},type:str]"
    neg("ciphertext", "secrets/prod.enc.yaml",
        f"database:\n    password: {enc(18)}\n    user: {enc(6)}\nstripe_key: {enc(32)}\n"
        "sops:\n    kms: []\n    age:\n        - recipient: age1" + rs(58, BECH32) + "\n"
        f"          enc: |\n            -----BEGIN AGE ENCRYPTED FILE-----\n            {b64_bytes(48)}\n            {b64_bytes(48)}\n"
        "            -----END AGE ENCRYPTED FILE-----\n"
        f"    lastmodified: \"2026-11-30T08:12:44Z\"\n    mac: {enc(32)}\n    version: 3.8.1\n")
    # SealedSecret
    neg("ciphertext", "k8s/sealed-db.yaml",
        f"apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: db\n  namespace: {word()}\n"
        f"spec:\n  encryptedData:\n    password: Ag{b64_bytes(400)}\n    api-key: Ag{b64_bytes(420)}\n")
    # PGP message (encrypted file committed with git-crypt/blackbox)
    neg("ciphertext", "keys/deploy.env.gpg.asc",
        f"-----BEGIN PGP MESSAGE-----\n\nhQIMA{wrap(b64_bytes(300))}\n={b64_bytes(3)}\n-----END PGP MESSAGE-----\n")


def references_and_placeholders():
    neg("reference", "docker-compose.yml",
        "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: ${DB_PASSWORD:?set DB_PASSWORD}\n"
        "      POSTGRES_USER: orders\n  api:\n    environment:\n      - DATABASE_URL=postgres://orders:${DB_PASSWORD}@db:5432/orders\n"
        "      - JWT_SECRET=${JWT_SECRET}\n      - STRIPE_API_KEY\n")
    neg("reference", "nomad/api.nomad.hcl",
        'job "api" {\n  group "api" {\n    task "api" {\n      template {\n        data = <<EOH\n'
        '{{ with secret "kv/data/api" }}DB_PASSWORD={{ .Data.data.db_password }}{{ end }}\n'
        'API_TOKEN={{ key "api/token_ref" }}\nEOH\n        destination = "secrets/api.env"\n        env = true\n      }\n    }\n  }\n}\n')
    neg("reference", "cloudformation/db.yaml",
        "Resources:\n  Database:\n    Type: AWS::RDS::DBInstance\n    Properties:\n      MasterUsername: admin\n"
        "      MasterUserPassword: '{{resolve:secretsmanager:prod/db:SecretString:password}}'\n"
        "      KmsKeyId: !Ref DataKey\n  ApiKeyParam:\n    Type: AWS::SSM::Parameter\n    Properties:\n"
        "      Value: !Sub '{{resolve:ssm-secure:/prod/api_key:1}}'\n      Type: String\n")
    neg("reference", "src/settings.py",
        "import os\nfrom pathlib import Path\n\nSECRET_KEY = os.environ[\"DJANGO_SECRET_KEY\"]\n"
        "DATABASES = {\"default\": {\"ENGINE\": \"django.db.backends.postgresql\", \"PASSWORD\": os.environ.get(\"DB_PASSWORD\", \"\"),\n"
        "                          \"HOST\": os.getenv(\"DB_HOST\", \"localhost\")}}\nSTRIPE_API_KEY = env(\"STRIPE_API_KEY\")\n"
        "AWS_SECRET_ACCESS_KEY = config('AWS_SECRET_ACCESS_KEY', default=None)\n")
    neg("reference", "src/main/resources/application.properties",
        "spring.datasource.url=jdbc:postgresql://db:5432/orders\nspring.datasource.username=orders\n"
        "spring.datasource.password=${DB_PASSWORD}\napp.jwt.secret=${JWT_SECRET:}\n"
        "app.stripe.api-key=${vcap.services.stripe.credentials.api_key}\n"
        "management.endpoints.web.exposure.include=health,info\n")
    neg("reference", "k8s/external-secret.yaml",
        "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: api\nspec:\n"
        "  secretStoreRef:\n    name: vault\n    kind: ClusterSecretStore\n  data:\n    - secretKey: STRIPE_API_KEY\n"
        "      remoteRef:\n        key: secret/data/prod/stripe\n        property: api_key\n")
    neg("reference", "deploy.sh",
        "#!/bin/sh\nset -e\nDB_PASSWORD=\"$(aws secretsmanager get-secret-value --secret-id prod/db --query SecretString --output text)\"\n"
        "API_TOKEN=$(vault kv get -field=token secret/ci)\nexport GITHUB_TOKEN=\"$(gh auth token)\"\n"
        "docker login -u ci --password-stdin ghcr.io <<< \"$GITHUB_TOKEN\"\n")
    neg("placeholder", ".env.example",
        "# Copy to .env and fill in\nDATABASE_URL=postgres://USER:PASSWORD@localhost:5432/orders\n"
        "STRIPE_SECRET_KEY=sk_live_REPLACE_WITH_YOUR_KEY\nSENDGRID_API_KEY=<sendgrid-api-key>\nJWT_SECRET=__CHANGE_ME__\n"
        "OPENAI_API_KEY=\nSLACK_BOT_TOKEN=xoxb-...\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    neg("placeholder", "docs/configuration.md",
        "## Credentials\n\n| Variable | Example |\n|---|---|\n| `API_KEY` | `%API_KEY%` |\n| `TOKEN` | `$(TOKEN)` |\n"
        "| `DB_PASSWORD` | `{db_password}` |\n| `GITHUB_TOKEN` | `ghp_<36 characters>` |\n\n"
        "```ini\n[server]\npassword = <password>\napi_key = TODO\n```\n")
    neg("placeholder", "helm/values.yaml",
        "image:\n  repository: ghcr.io/acme/api\n  tag: \"\"\nauth:\n  existingSecret: api-credentials\n"
        "  password: \"\"  # set via --set auth.password or existingSecret\n  apiKey: ~\n"
        "  jwtSecret: null\nredis:\n  auth:\n    enabled: true\n    existingSecretPasswordKey: redis-password\n")


def words_and_vocab():
    neg("i18n", "locales/en.json", json.dumps({
        "auth": {"password_label": "Password", "password_reset_token_expired": "Your password reset link has expired.",
                 "api_key_hint": "Paste the API key from your dashboard", "token_invalid": "This token is no longer valid",
                 "secret_question": "What was the name of your first school?"}}, indent=2))
    neg("i18n", "src/main/resources/messages_de.properties",
        "login.password=Passwort\nlogin.password.invalid=Das eingegebene Passwort ist falsch\n"
        "apikey.created=Der API-Schl\\u00fcssel wurde erstellt\ntoken.expired=Sitzung abgelaufen, bitte erneut anmelden\n")
    neg("oauth-vocab", "config/oauth.yaml",
        "oauth:\n  token_type: bearer\n  grant_type: client_credentials\n  token_endpoint_auth_method: client_secret_basic\n"
        "  response_type: code\n  code_challenge_method: S256\n  access_token_ttl: 3600\n  refresh_token_rotation: enabled\n")
    neg("key-format-regex", "src/lint/secret_patterns.py",
        "PATTERNS = {\n    \"github\": r\"ghp_[A-Za-z0-9]{36}\",\n    \"aws\": r\"AKIA[0-9A-Z]{16}\",\n"
        "    \"slack\": r\"xox[baprs]-[0-9]{10,13}-[0-9]{10,13}-[a-zA-Z0-9]{24}\",\n"
        "    \"stripe\": r\"sk_live_[0-9a-zA-Z]{24,99}\",\n    \"jwt\": r\"eyJ[A-Za-z0-9_-]+\\.eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\",\n}\n")
    neg("key-format-regex", ".gitleaks.toml",
        '[[rules]]\nid = "acme-internal-token"\ndescription = "Acme internal API token"\n'
        'regex = \'\'\'acme_(?:live|test)_[a-zA-Z0-9]{32}\'\'\'\nkeywords = ["acme_live", "acme_test"]\n')


def fixtures_and_vectors():
    def bcrypt():
        return "$2b$12$" + rs(53, ALNUM + "./")
    neg("password-hash", "tests/fixtures/users.json", json.dumps([
        {"id": i, "email": f"{w}@acme.io", "password_hash": bcrypt(), "role": "member"}
        for i, w in enumerate(R.sample(WORDS, 3), 1)], indent=2))
    neg("password-hash", "app/fixtures/auth.json", json.dumps([
        {"model": "auth.user", "pk": 1, "fields": {
            "username": "admin",
            "password": f"pbkdf2_sha256$600000${rs(22)}${base64.b64encode(hashlib.sha256(rs(8).encode()).digest()).decode()}",
            "is_superuser": True}}], indent=2))
    neg("password-hash", "deploy/nginx/.htpasswd",
        f"ops:$apr1${rs(8, ALNUM)}${rs(22, ALNUM + './')}\nci:{bcrypt()}\n")
    neg("password-hash", "tests/data/shadow",
        f"root:$6${rs(16, ALNUM + './')}${rs(86, ALNUM + './')}:19700:0:99999:7:::\n"
        "daemon:*:19700:0:99999:7:::\n")
    neg("password-hash", "db/seeds.sql",
        "INSERT INTO users (email, encrypted_password) VALUES\n"
        f"  ('ops@acme.io', '{bcrypt()}'),\n  ('ci@acme.io', '{bcrypt()}');\n")
    neg("crypto-test-vector", "crypto/hmac_test.go",
        "package crypto\n\n// RFC 4231 test case 2 and NIST AES-128 vectors.\nvar hmacVectors = []struct{ key, data, want string }{\n"
        "\t{\"4a656665\", \"7768617420646f2079612077616e7420666f72206e6f7468696e673f\",\n"
        "\t\t\"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843\"},\n}\n\n"
        "var aesKey = \"2b7e151628aed2a6abf7158809cf4f3c\"\nvar aesPlain = \"6bc1bee22e409f96e93d7e117393172a\"\n"
        "var aesWant = \"3ad77bb40d7a3660a89ecaf32466ef97\"\n")
    neg("crypto-test-vector", "tests/test_cipher.py",
        "import pytest\n\n# Wycheproof-style vector\nVECTOR = {\n"
        f"    \"iv\": \"{hexs(24)}\",\n    \"nonce\": \"{hexs(24)}\",\n    \"aad\": \"{hexs(40)}\",\n"
        f"    \"ciphertext\": \"{hexs(64)}\",\n    \"tag\": \"{hexs(32)}\",\n    \"salt\": \"{hexs(32)}\",\n}}\n\n"
        "def test_roundtrip():\n    assert decrypt(VECTOR) == b\"attack at dawn\"\n")
    neg("test-fixture-uuid", "tests/fixtures/requests.http",
        f"### Get order\nGET https://api.acme.io/orders/{uid()}\nX-Request-Id: {uid()}\nAccept: application/json\n"
        "Authorization: Bearer {{token}}\n")


def encoded_config():
    cfg = f"log_level: info\nfeature_flags:\n  new_checkout: true\n  {word()}_v2: false\nregion: eu-west-1\n"
    neg("base64-config", "k8s/app-config-secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-config\ntype: Opaque\ndata:\n"
        f"  config.yaml: {base64.b64encode(cfg.encode()).decode()}\n  LOG_LEVEL: {base64.b64encode(b'info').decode()}\n"
        f"  REGION: {base64.b64encode(b'eu-west-1').decode()}\n")
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M12 2L{R.randint(2, 20)} 7v10l10 5 10-5V7z" fill="#{hexs(6)}"/></svg>'
    neg("data-uri", "src/styles/icons.css",
        f".icon-logo {{ background-image: url(\"data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()}\"); }}\n"
        f"@font-face {{ font-family: Inter; src: url(data:font/woff2;base64,d09GMgABAAAAA{b64_bytes(120)}) format('woff2'); }}\n")
    neg("data-uri", "src/components/Avatar.tsx",
        "const FALLBACK =\n  \"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" + b64_bytes(12)
        + "\";\nexport const Avatar = ({ src }: { src?: string }) => <img src={src ?? FALLBACK} alt=\"\" />;\n")
    html = f"<p>Hello {{{{name}}}}, your {word()} report is ready.</p>"
    neg("base64-config", "templates/email.json",
        json.dumps({"template_id": "d-" + hexs(32), "subject": "Your report",
                    "html_b64": base64.b64encode(html.encode()).decode()}, indent=2))


def round_two():
    """Second pass of the adversary, after the first round's classes were
    closed: build-tool ids, encoded public certificates, fingerprints,
    CI credential references."""
    # Xcode project: 24-hex uppercase object ids.
    objs = [rs(24, "0123456789ABCDEF") for _ in range(4)]
    neg("build-tool-id", "App.xcodeproj/project.pbxproj",
        "// !$*UTF8*$!\n{\n\tarchiveVersion = 1;\n\tobjects = {\n"
        f"\t\t{objs[0]} /* AppDelegate.swift in Sources */ = {{isa = PBXBuildFile; fileRef = {objs[1]} /* AppDelegate.swift */; }};\n"
        f"\t\t{objs[2]} /* Foundation.framework */ = {{isa = PBXFileReference; lastKnownFileType = wrapper.framework; }};\n"
        f"\t}};\n\trootObject = {objs[3]} /* Project object */;\n}}\n")
    # Unity asset metadata.
    neg("build-tool-id", "Assets/Scripts/Player.cs.meta",
        f"fileFormatVersion: 2\nguid: {hexs(32)}\nMonoImporter:\n  externalObjects: {{}}\n  serializedVersion: 2\n")
    # kubeconfig CA data and a webhook caBundle: base64 of a public PEM.
    ca = base64.b64encode(("-----BEGIN CERTIFICATE-----\n" + wrap(cert_der()) + "\n-----END CERTIFICATE-----\n").encode()).decode()
    neg("encoded-certificate", "k8s/webhook.yaml",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: policy\n"
        f"webhooks:\n  - name: policy.acme.io\n    clientConfig:\n      service:\n        name: policy\n        namespace: system\n      caBundle: {ca}\n")
    neg("encoded-certificate", "deploy/kubeconfig-ci.yaml",
        "apiVersion: v1\nkind: Config\nclusters:\n  - name: prod\n    cluster:\n"
        f"      certificate-authority-data: {ca}\n      server: https://k8s.prod.acme.io:6443\n"
        "users:\n  - name: ci\n    user:\n      exec:\n        apiVersion: client.authentication.k8s.io/v1beta1\n"
        "        command: aws\n        args: [eks, get-token, --cluster-name, prod]\n")
    key = base64.b64encode(("-----BEGIN RSA PRIVATE KEY-----\n" + wrap(b64_bytes(600)) + "\n-----END RSA PRIVATE KEY-----\n").encode()).decode()
    pos("encoded-private-key", "deploy/kubeconfig-admin.yaml",
        f"apiVersion: v1\nkind: Config\nusers:\n  - name: admin\n    user:\n      client-certificate-data: {ca}\n"
        f"      client-key-data: {key}\n")
    # SSH and TLS fingerprints in docs.
    neg("fingerprint", "docs/ssh.md",
        "Verify the host key before the first connection:\n\n```\n"
        f"ED25519 key fingerprint is SHA256:{base64.b64encode(hashlib.sha256(rs(8).encode()).digest()).decode().rstrip('=')}.\n"
        f"RSA key fingerprint is SHA256:{base64.b64encode(hashlib.sha256(rs(8).encode()).digest()).decode().rstrip('=')}.\n```\n")
    neg("fingerprint", ".sops.yaml",
        "creation_rules:\n  - path_regex: secrets/prod/.*\n"
        f"    pgp: '{rs(40, '0123456789ABCDEF')},{rs(40, '0123456789ABCDEF')}'\n"
        f"    kms: 'arn:aws:kms:eu-west-1:{R.randint(10**11, 10**12-1)}:key/{uid()}'\n")
    # CI credential references.
    neg("reference", "Jenkinsfile",
        "pipeline {\n  agent any\n  environment {\n    AWS_CREDS = credentials('aws-prod-deployer')\n  }\n  stages {\n"
        "    stage('notify') {\n      steps {\n        withCredentials([string(credentialsId: 'slack-bot-token', variable: 'SLACK_TOKEN')]) {\n"
        "          sh 'curl -H \"Authorization: Bearer $SLACK_TOKEN\" https://slack.com/api/chat.postMessage'\n"
        "        }\n      }\n    }\n  }\n}\n")
    neg("reference", ".gitlab-ci.yml",
        "deploy:\n  image: alpine\n  script:\n    - echo \"$CI_REGISTRY_PASSWORD\" | docker login -u \"$CI_REGISTRY_USER\" --password-stdin $CI_REGISTRY\n"
        "    - curl --header \"JOB-TOKEN: $CI_JOB_TOKEN\" $CI_API_V4_URL/projects\n  variables:\n    VAULT_AUTH_ROLE: deploy\n")
    # npm metadata, GraphQL persisted queries, Dockerfile checksums.
    neg("commit-ref", "node_modules/@acme/ui/package.json", json.dumps({
        "name": "@acme/ui", "version": ver(), "gitHead": sha("sha1"),
        "_resolved": f"https://npm.acme.io/@acme/ui/-/ui-{ver()}.tgz", "_integrity": sri()}, indent=2))
    neg("hash", "src/graphql/persisted.json", json.dumps({
        "GetOrders": {"version": 1, "sha256Hash": sha()},
        "GetProfile": {"version": 1, "sha256Hash": sha()}}, indent=2))
    neg("checksum", "docker/tools.Dockerfile",
        f"FROM debian:12-slim\nADD --checksum=sha256:{sha()} https://github.com/acme/tool/releases/download/v1.2.0/tool.tgz /tmp/\n"
        "RUN tar -xzf /tmp/tool.tgz -C /usr/local/bin\n")
    # Postman collection with variables.
    neg("reference", "postman/orders.postman_collection.json", json.dumps({
        "info": {"_postman_id": uid(), "name": "Orders"},
        "auth": {"type": "bearer", "bearer": [{"key": "token", "value": "{{access_token}}", "type": "string"}]},
        "item": [{"name": "List", "request": {"method": "GET", "url": "{{base_url}}/orders"}}]}, indent=2))


def nix32(n):
    return rs(n, "0123456789abcdfghijklmnpqrsvwxyz")


def round_three():
    """Third pass: ids and hashes under other names, and committed
    ciphertext of other tools (Rails, Pulumi, Travis, Chef)."""
    oids = [f"{R.randint(0x5a000000, 0x67000000):08x}{hexs(16)}" for _ in range(4)]
    neg("object-id", "tests/fixtures/orders.json", json.dumps([
        {"_id": {"$oid": oids[0]}, "customer": {"$oid": oids[1]}, "total": 1299},
        {"_id": {"$oid": oids[2]}, "customer": {"$oid": oids[3]}, "total": 450}], indent=2))
    neg("object-id", "scripts/migrate.js",
        f'db.orders.updateOne({{ _id: ObjectId("{oids[0]}") }}, {{ $set: {{ owner: ObjectId("{oids[1]}") }} }});\n')
    neg("commit-ref", "deploy/release.env",
        f"SENTRY_RELEASE={sha('sha1')}\nAPP_VERSION={sha('sha1')}\nBUILD_NUMBER=4812\n")
    neg("ciphertext", "config/credentials.yml.enc",
        f"{b64_bytes(180)}--{b64_bytes(12)}--{b64_bytes(16)}")
    pos("rails-master-key", "config/master.key", hexs(32) + "\n")
    neg("checksum", "nix/default.nix",
        "{ pkgs ? import <nixpkgs> {} }:\npkgs.buildGoModule {\n  pname = \"acmectl\";\n  version = \"1.2.0\";\n"
        f"  src = pkgs.fetchFromGitHub {{\n    owner = \"acme\";\n    repo = \"acmectl\";\n    rev = \"{sha('sha1')}\";\n"
        f"    sha256 = \"{nix32(52)}\";\n  }};\n  vendorHash = \"{sri('sha256')}\";\n}}\n")
    neg("checksum", "WORKSPACE",
        'load("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive")\n\nhttp_archive(\n    name = "rules_go",\n'
        f'    sha256 = "{sha()}",\n    urls = ["https://github.com/bazelbuild/rules_go/releases/download/v0.46.0/rules_go-v0.46.0.zip"],\n)\n')
    neg("reference", "infra/azuredeploy.json", json.dumps({
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "parameters": {"adminPassword": {"type": "securestring"}},
        "resources": [{"type": "Microsoft.Sql/servers", "properties": {
            "administratorLogin": "sqladmin", "administratorLoginPassword": "[parameters('adminPassword')]",
            "storageKey": "[listKeys(resourceId('Microsoft.Storage/storageAccounts', variables('storageName')), '2022-09-01').keys[0].value]"}}]},
        indent=2))
    neg("ciphertext", "Pulumi.prod.yaml",
        "config:\n  aws:region: eu-west-1\n  app:dbPassword:\n"
        f"    secure: AAABA{b64_bytes(48)}\n  app:stripeKey:\n    secure: v1:{b64_bytes(12)}:{b64_bytes(40)}\n")
    neg("ciphertext", ".travis.yml",
        "language: node_js\nnode_js: [20]\nenv:\n  global:\n"
        f"    - secure: \"{b64_bytes(256)}\"\ndeploy:\n  provider: npm\n  api_key:\n    secure: {b64_bytes(256)}\n")
    neg("ciphertext", "data_bags/prod/db.json", json.dumps({
        "id": "db", "password": {"encrypted_data": b64_bytes(48), "iv": b64_bytes(12), "auth_tag": b64_bytes(16),
                                 "version": 3, "cipher": "aes-256-gcm"}}, indent=2))
    neg("reference", "web/.npmrc",
        "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\nengine-strict=true\n")
    pos("pulumi-plaintext", "Pulumi.dev.yaml",
        f"config:\n  aws:region: eu-west-1\n  aws:secretKey: {aws_secret()}\n  aws:accessKey: {akia()}\n")


# ---------------------------------------------------------------- positives

def akia():
    return "AKIA" + rs(16, UP + "234567")


def aws_secret():
    return rs(40, B64)


def pw():
    return rs(R.randint(14, 22), ALNUM + "!#%^*-_")


def positives():
    # XML attributes and elements
    pos("xml-attribute", "Web.config",
        '<?xml version="1.0"?>\n<configuration>\n  <appSettings>\n    <add key="Environment" value="Production" />\n'
        f'    <add key="StripeSecretKey" value="sk_live_{rs(24)}" />\n  </appSettings>\n</configuration>\n')
    pos("xml-attribute", "src/main/resources/hibernate.cfg.xml",
        '<hibernate-configuration>\n  <session-factory>\n    <property name="connection.username">orders</property>\n'
        f'    <property name="connection.password">{pw()}</property>\n  </session-factory>\n</hibernate-configuration>\n')
    pos("xml-attribute", ".m2/settings.xml",
        f"<settings>\n  <servers>\n    <server>\n      <id>acme-releases</id>\n      <username>deploy</username>\n"
        f"      <password>{pw()}</password>\n    </server>\n  </servers>\n</settings>\n")
    # INI sections
    pos("ini", ".aws/credentials",
        f"[default]\naws_access_key_id = {akia()}\naws_secret_access_key = {aws_secret()}\nregion = eu-west-1\n")
    pos("ini", "config/app.ini",
        f"[server]\nport = 8080\n\n[database]\nhost = db.internal\nuser = orders\npassword = {pw()}\n")
    pos("ini", "setup.cfg",
        f"[tool:pytest]\naddopts = -q\n\n[sentry]\nauth_token = sntrys_{rs(60, ALNUM)}\n")
    # Java .properties
    pos("properties", "src/main/resources/application-prod.properties",
        f"spring.datasource.url=jdbc:postgresql://db.prod:5432/orders\nspring.datasource.username=orders\n"
        f"spring.datasource.password={pw()}\n")
    pos("properties", "gradle.properties",
        f"org.gradle.jvmargs=-Xmx2g\nsigning.keyId=24875D73\nsigning.password={pw()}\n"
        f"ossrhPassword={pw()}\n")
    # HCL heredoc / tfvars
    pos("hcl", "terraform/prod.tfvars",
        f'region      = "eu-west-1"\ndb_username = "orders"\ndb_password = "{pw()}"\n')
    pos("hcl", "terraform/secrets.tf",
        'resource "aws_secretsmanager_secret_version" "api" {\n  secret_id     = aws_secretsmanager_secret.api.id\n'
        f'  secret_string = <<EOT\n{{"api_key": "{hexs(40)}"}}\nEOT\n}}\n')
    # docker-compose environment lists
    pos("compose-env", "docker-compose.prod.yml",
        "services:\n  api:\n    image: ghcr.io/acme/api:1.4.0\n    environment:\n      - NODE_ENV=production\n"
        f"      - SENDGRID_API_KEY=SG.{rs(22, B64URL)}.{rs(43, B64URL)}\n")
    pos("compose-env", "compose.yaml",
        f"services:\n  db:\n    image: mysql:8\n    environment:\n      MYSQL_ROOT_PASSWORD: {pw()}\n")
    # connection strings, many schemes
    for scheme, port in (("postgresql", 5432), ("mysql", 3306), ("mongodb+srv", None), ("redis", 6379),
                         ("amqps", 5671), ("smtp", 587), ("ftp", 21), ("clickhouse", 9000)):
        u = f"{scheme}://svc_{rs(5, LOW)}:{rs(20)}@{word()}.prod.internal{':' + str(port) if port else ''}/{word()}"
        path = R.choice(["config/prod.yaml", "src/db.go", ".env.production", "settings.toml"])
        text = {"config/prod.yaml": f"database:\n  url: {u}\n", "src/db.go": f'package db\n\nconst dsn = "{u}"\n',
                ".env.production": f"DATABASE_URL={u}\n", "settings.toml": f'[db]\nurl = "{u}"\n'}[path]
        pos("connection-string", path, text)
    pos("connection-string", "appsettings.Production.json", json.dumps({"ConnectionStrings": {
        "Default": f"Server=tcp:{word()}.database.windows.net,1433;Database=orders;User ID=orders_app;Password={pw()};Encrypt=True;"}},
        indent=2))
    pos("connection-string", "src/main/resources/db.properties",
        f"jdbc.url=jdbc:sqlserver://db.prod:1433;databaseName=orders;user=orders;password={pw()}\n")
    pos("connection-string", "config/storage.env",
        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName={word()}prod;AccountKey={b64_bytes(64)};EndpointSuffix=core.windows.net\n")
    # PEM private keys of several types
    for header in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
                   "ENCRYPTED PRIVATE KEY", "PRIVATE KEY"):
        body = pkcs8_rsa() if header == "PRIVATE KEY" else b64_bytes(R.choice([121, 400, 1190]))
        pos("private-key", R.choice(["deploy/id_rsa", "certs/server.key", "keys/signing.pem"]),
            f"-----BEGIN {header}-----\n{wrap(body)}\n-----END {header}-----\n")
    pos("private-key", "keys/release.asc",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBG{wrap(b64_bytes(600))}\n={b64_bytes(3)}\n-----END PGP PRIVATE KEY BLOCK-----\n")
    # JSON service-account file (private key with escaped newlines)
    key = "-----BEGIN PRIVATE KEY-----\n" + wrap(pkcs8_rsa()) + "\n-----END PRIVATE KEY-----\n"
    pos("service-account", "gcp/sa-deployer.json", json.dumps({
        "type": "service_account", "project_id": f"{word()}-prod", "private_key_id": hexs(40),
        "private_key": key, "client_email": f"deployer@{word()}-prod.iam.gserviceaccount.com",
        "client_id": str(R.randint(10**20, 10**21 - 1)), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token"}, indent=2))
    # registry / tool credential files
    pos("npmrc", ".npmrc", f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_{rs(36)}\n")
    pos("npmrc", "frontend/.npmrc",
        f"@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken=ghp_{rs(36)}\nalways-auth=true\n")
    pos("npmrc", ".yarnrc.yml",
        f'npmScopes:\n  acme:\n    npmRegistryServer: "https://acme.jfrog.io/artifactory/api/npm/npm/"\n    npmAuthToken: "{rs(64, ALNUM)}"\n')
    pos("pypirc", ".pypirc",
        f"[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc{rs(70, B64URL)}\n")
    pos("netrc", ".netrc", f"machine api.heroku.com\n  login ops@acme.io\n  password {uid()}\nmachine git.heroku.com\n  login ops@acme.io\n  password {rs(32, ALNUM)}\n")
    pos("git-credentials", ".git-credentials",
        f"https://ci-bot:ghp_{rs(36)}@github.com\nhttps://oauth2:glpat-{rs(20, B64URL)}@gitlab.acme.io\n")
    pos("git-credentials", "ci/clone.sh",
        f"#!/bin/sh\ngit clone https://x-access-token:{rs(40, ALNUM)}@github.com/acme/infra.git\n")
    pos("docker-auth", ".docker/config.json", json.dumps({"auths": {"registry.acme.io": {
        "auth": base64.b64encode(f"deploy:{pw()}".encode()).decode()}}}, indent=2))
    # Kubernetes Secret with stringData / base64 data of a real password
    pos("k8s-secret", "k8s/db-secret.yaml",
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: {pw()}\n")
    pos("k8s-secret", "k8s/api-secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\ntype: Opaque\ndata:\n"
        f"  STRIPE_API_KEY: {base64.b64encode(('sk_live_' + rs(24)).encode()).decode()}\n")
    # HTTP request files, shell history
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(json.dumps({"sub": str(R.randint(1000, 9999)), "iat": 1764800000}).encode()).decode().rstrip("=")
    pos("http-file", "api.http",
        f"### list orders\nGET https://api.acme.io/v1/orders\nAuthorization: Bearer {header}.{body}.{rs(43, B64URL)}\n")
    pos("shell-history", "docs/runbook.md",
        f"## Restore\n\n```sh\nmysql -h db.prod -u admin -p'{pw()}' orders < dump.sql\n```\n")
    pos("shell-history", "scripts/backup.sh",
        f"#!/bin/bash\ncurl -u backup:{rs(24)} https://nexus.acme.io/repository/backups/ -T dump.tgz\n")
    # Provider tokens in new layouts
    pos("provider-token", "src/config/index.ts",
        f"export default {{\n  slack: {{ webhook: 'https://hooks.slack.com/services/T{rs(8, UP + DIG)}/B{rs(8, UP + DIG)}/{rs(24)}' }},\n}};\n")
    pos("provider-token", "bot/config.json",
        json.dumps({"telegram": {"bot_token": f"{R.randint(10**9, 10**10 - 1)}:AA{rs(33, B64URL)}"}}, indent=2))
    pos("provider-token", "ml/train.py",
        f"from huggingface_hub import login\n\nlogin(token=\"hf_{rs(34, ALNUM)}\")\n")
    pos("provider-token", "src/main/kotlin/Config.kt",
        f"object Config {{\n    const val GITLAB = \"glpat-{rs(20, B64URL)}\"\n}}\n")
    pos("provider-token", "services/twilio.rb",
        f"Twilio.configure do |c|\n  c.account_sid = 'AC{hexs(32)}'\n  c.auth_token = '{hexs(32)}'\nend\n")
    pos("provider-token", "cmd/notify/main.go",
        f"package main\n\nvar openaiKey = \"sk-proj-{rs(48, B64URL)}\"\n")
    pos("provider-token", "scripts/release.ps1",
        f"$env:GITHUB_TOKEN = \"github_pat_{rs(22)}_{rs(59)}\"\ngh release create v1.0.0\n")
    pos("provider-token", "config/aws.yaml",
        f"aws:\n  access_key_id: {akia()}\n  secret_access_key: {aws_secret()}\n")
    pos("provider-token", "Makefile",
        f"deploy:\n\tSTRIPE_KEY=rk_live_{rs(24)} ./bin/deploy\n")
    pos("provider-token", "src/App.java",
        f"public class App {{\n  private static final String ANTHROPIC = \"sk-ant-api03-{rs(93, B64URL)}AA\";\n}}\n")
    # generic secrets in new layouts
    pos("generic", "config/secrets.toml", f'[signing]\nhmac_key = "{hexs(64)}"\n')
    pos("generic", "src/lib.rs", f'const WEBHOOK_SECRET: &str = "whsec_{rs(32)}";\n')
    pos("generic", "appsettings.json", json.dumps({"Jwt": {"Issuer": "acme", "Key": rs(48, B64)}}, indent=2))
    pos("generic", "config/redis.conf", f"bind 0.0.0.0\nport 6379\nrequirepass {rs(32)}\n")
    pos("generic", "php/config.php", f"<?php\ndefine('DB_PASSWORD', '{pw()}');\n$config['encryption_key'] = '{rs(32)}';\n")


# ---------------------------------------------------------------- round 4
# Fourth pass of the adversary (written before reading the scanner's rules
# for this round): families of realistic non-secrets no earlier round has,
# and secrets in layouts no source has. Every class is prefixed `r4-` so
# the benchmark's per-class table shows what this round alone scores.
# One line per family says why its label holds.

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid():
    """A ULID: 48-bit time then 80 random bits, Crockford base32."""
    return R.choice("01234567") + rs(25, CROCKFORD)


def b32(n):
    return rs(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


def minisign_public():
    """A minisign public key: base64 of `Ed`, an 8-byte key id and a 32-byte
    Ed25519 key (42 bytes). Draws 31 bytes from R (as the first version of
    round 4 did) and derives the rest, so later draws are unchanged."""
    raw = bytes(R.getrandbits(8) for _ in range(31))
    return base64.b64encode(b"Ed" + raw + hashlib.sha256(raw).digest()[:9]).decode()


def npub():
    """A nostr public key: bech32 `npub1` of 32 bytes with its checksum.
    Draws like the first version of round 4 (a 58-character string) and
    derives the key from it."""
    key = hashlib.sha256(rs(58, BECH32).encode()).digest()
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

    def polymod(values):
        chk = 1
        for v in values:
            top = chk >> 25
            chk = (chk & 0x1ffffff) << 5 ^ v
            for i in range(5):
                chk ^= gen[i] if (top >> i) & 1 else 0
        return chk
    acc, bits, data = 0, 0, []
    for b in key:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    hrp = "npub"
    hrp_exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = polymod(hrp_exp + data + [0] * 6) ^ 1
    data += [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[d] for d in data)


def round_four():
    # r4-migration-revision: Alembic revision ids name a migration; the
    # chain is public schema history (none).
    rev, down = hexs(12), hexs(12)
    neg("r4-migration-revision", f"alembic/versions/{rev}_add_orders_status_index.py",
        f'"""add orders status index\n\nRevision ID: {rev}\nRevises: {down}\nCreate Date: 2026-10-14 09:12:44.118302\n\n"""\n'
        "from alembic import op\nimport sqlalchemy as sa\n\n"
        f"# revision identifiers, used by Alembic.\nrevision = '{rev}'\ndown_revision = '{down}'\nbranch_labels = None\ndepends_on = None\n\n\n"
        "def upgrade() -> None:\n    op.create_index('ix_orders_status', 'orders', ['status'])\n\n\n"
        "def downgrade() -> None:\n    op.drop_index('ix_orders_status', table_name='orders')\n")
    # r4-migration-checksum: Liquibase/Flyway record a checksum of each
    # applied changeset (hash of public SQL) (none).
    neg("r4-migration-checksum", "db/changelog/databasechangelog.csv",
        "ID,AUTHOR,FILENAME,DATEEXECUTED,ORDEREXECUTED,EXECTYPE,MD5SUM,DESCRIPTION,DEPLOYMENT_ID\n" + "".join(
            f"{i},ops,db/changelog/{w}.xml,2026-09-0{i} 10:00:00,{i},EXECUTED,9:{hexs(32)},createTable tableName={w},{R.randint(10**9, 10**10 - 1)}\n"
            for i, w in enumerate(R.sample(WORDS, 3), 1)))
    # r4-sortable-id: ULIDs, KSUIDs and snowflake ids are record keys (none).
    neg("r4-sortable-id", "tests/fixtures/events.ndjson", "".join(
        json.dumps({"id": ulid(), "ksuid": rs(27, ALNUM), "message_id": str(R.randint(10**17, 10**18)),
                    "type": R.choice(["order.created", "order.paid", "refund.issued"]),
                    "ts": f"2026-11-0{R.randint(1, 9)}T1{R.randint(0, 9)}:00:00Z"}) + "\n" for _ in range(4)))
    # r4-request-id: request, trace and CDN ids in a log excerpt (none: they
    # correlate requests, they authorize nothing).
    neg("r4-request-id", "docs/troubleshooting/sample.log",
        "".join(f"2026-11-03T10:1{i}:07.{R.randint(100, 999)}Z INFO http request_id={uid()} trace_id={hexs(32)} span_id={hexs(16)} "
                f"method=GET path=/v1/{word()} status=200 duration_ms={R.randint(3, 900)}\n" for i in range(3))
        + f"traceparent: 00-{hexs(32)}-{hexs(16)}-01\nx-amzn-RequestId: {uid()}\n"
        f"X-Amz-Cf-Id: {rs(52, B64URL)}==\nx-amz-id-2: {b64_bytes(56)}\ncf-ray: {hexs(16)}-FRA\n")
    neg("r4-request-id", "spec/cassettes/orders/create.yml",
        "---\nhttp_interactions:\n- request:\n    method: post\n    uri: https://api.stripe.com/v1/payment_intents\n"
        "    headers:\n      Authorization:\n      - \"<STRIPE_SECRET_KEY>\"\n      Idempotency-Key:\n"
        f"      - {uid()}\n  response:\n    status:\n      code: 200\n    headers:\n      Request-Id:\n      - req_{rs(14)}\n"
        f"      Stripe-Version:\n      - '2024-06-20'\n    body:\n      encoding: UTF-8\n      string: '{{\"id\":\"pi_{rs(24)}\",\"client_secret\":\"pi_{rs(24)}_secret_REDACTED\",\"status\":\"requires_payment_method\"}}'\n"
        "  recorded_at: Tue, 03 Nov 2026 10:12:07 GMT\nrecorded_with: VCR 6.2.0\n")

    # r4-notebook-output: cell ids, execution metadata, PNG output and widget
    # model ids of a Jupyter notebook (none).
    png = "iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA10dzkAAAAOXRFWHRTb2Z0d2FyZQBNYXRwbG90bGliIHZlcnNpb24zLjguMiwgaHR0cHM6Ly9tYXRwbG90bGliLm9yZy8g+/7EAAAACXBIWXMAAA9hAAAPYQGoP6dpAAA" + b64_bytes(420)
    neg("r4-notebook-output", "notebooks/orders_eda.ipynb", json.dumps({
        "cells": [
            {"cell_type": "code", "execution_count": 3, "id": hexs(8), "metadata": {
                "execution": {"iopub.execute_input": "2026-11-02T09:14:11.201Z", "shell.execute_reply": "2026-11-02T09:14:12.877Z"}},
             "outputs": [{"data": {"image/png": png, "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
                          "metadata": {}, "output_type": "display_data"}],
             "source": ["df.groupby('status').total.sum().plot.bar()"]},
            {"cell_type": "code", "execution_count": 4, "id": uid(), "metadata": {}, "outputs": [{
                "data": {"application/vnd.jupyter.widget-view+json": {"model_id": hexs(32), "version_major": 2, "version_minor": 0}},
                "metadata": {}, "output_type": "display_data"}], "source": ["interact(plot_window, days=(1, 90))"]}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {hexs(32): {"model_name": "LayoutModel"}}}}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1))
    # r4-source-map: VLQ mappings and a debug id of a bundler's source map (none).
    vlq = ";".join(",".join(rs(R.randint(4, 8), ALNUM + "+/") for _ in range(R.randint(3, 9))) for _ in range(12))
    neg("r4-source-map", "dist/assets/index-4f2b9c1a.js.map", json.dumps({
        "version": 3, "file": "index-4f2b9c1a.js", "sources": ["../../src/main.ts", "../../src/api/client.ts"],
        "sourcesContent": ["import { createApp } from 'vue'\nconst token = localStorage.getItem('token')\n"],
        "names": ["createApp", "token", "localStorage", "getItem"], "mappings": "AAAA;" + vlq, "debugId": uid()}))
    # r4-minified-bundle: a bundler's chunk-hash map, module ids and an
    # inline font in minified JavaScript (none).
    chunks = ",".join(f'{R.randint(10, 999)}:"{hexs(20)}"' for _ in range(6))
    neg("r4-minified-bundle", "public/build/runtime.min.js",
        f'!function(){{"use strict";var e={{}},t={{}};function n(r){{var o=t[r];if(void 0!==o)return o.exports;var i=t[r]={{exports:{{}}}};'
        f'return e[r](i,i.exports,n),i.exports}}n.u=function(e){{return"static/chunks/"+e+"."+{{{chunks}}}[e]+".js"}},'
        f'n.p="/_next/",n.h=function(){{return"{hexs(20)}"}};var r="@font-face{{font-family:Icons;src:url(data:font/woff2;base64,'
        f'd09GMgABAAAA{b64_bytes(240)}) format(\\"woff2\\")}}";document.head.insertAdjacentHTML("beforeend","<style>"+r+"</style>")}}();\n'
        f"//# sourceMappingURL=runtime.min.js.map\n")
    # r4-generated-code: serialized protobuf descriptors in generated Go and
    # Python (bytes of a public .proto) (none).
    desc = bytes(R.getrandbits(8) for _ in range(96))
    neg("r4-generated-code", "api/orders/v1/orders.pb.go",
        "// Code generated by protoc-gen-go. DO NOT EDIT.\n// source: orders/v1/orders.proto\n\npackage ordersv1\n\n"
        "var file_orders_v1_orders_proto_rawDesc = []byte{\n" + "".join(
            "\t" + ", ".join(f"0x{b:02x}" for b in desc[i:i + 16]) + ",\n" for i in range(0, 96, 16)) + "}\n")
    neg("r4-generated-code", "acme/orders/v1/orders_pb2.py",
        "# -*- coding: utf-8 -*-\n# Generated by the protocol buffer compiler.  DO NOT EDIT!\n"
        "from google.protobuf import descriptor_pool as _descriptor_pool\n\n"
        "DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(b'\\n\\x16orders/v1/orders.proto\\x12\\torders.v1\\\"" +
        "".join(f"\\x{b:02x}" if b < 32 or b > 126 or chr(b) in "'\\" else chr(b) for b in desc) + "')\n")
    # r4-snapshot: CSS-in-JS class hashes and generated ids in a Jest snapshot (none).
    neg("r4-snapshot", "src/components/__snapshots__/OrderCard.test.tsx.snap",
        "// Jest Snapshot v1, https://goo.gl/fbAQLP\n\nexports[`OrderCard renders a paid order 1`] = `\n"
        f'<div\n  class="css-{rs(6, LOW + DIG)}-Card e{rs(6, LOW + DIG)}0"\n  data-testid="order-card"\n>\n'
        f'  <span\n    class="sc-{rs(6, ALNUM)} {rs(6, ALNUM)}"\n    id="mui-{R.randint(100, 999)}"\n  >\n    Paid\n  </span>\n'
        f'  <svg aria-labelledby=":r{rs(2, LOW + DIG)}:" class="MuiSvgIcon-root css-{rs(6, LOW + DIG)}" />\n</div>\n`;\n')

    # r4-publishable-key: Stripe publishable keys, Adyen client keys, Square
    # application ids and PayPal client ids are issued to run in browsers;
    # each vendor documents them as public (none).
    neg("r4-publishable-key", "src/checkout/payments.ts",
        "import { loadStripe } from '@stripe/stripe-js';\n\n"
        f"// Publishable key: safe to expose in client code (Stripe docs).\nexport const stripePromise = loadStripe('pk_live_51{rs(97, ALNUM)}');\n\n"
        f"export const adyenConfig = {{ environment: 'live', clientKey: 'live_{rs(32, UP + DIG)}', locale: 'en-US' }};\n"
        f"export const squareAppId = 'sq0idp-{rs(22, B64URL)}';\n")
    neg("r4-publishable-key", "templates/checkout.html",
        f'<script src="https://www.paypal.com/sdk/js?client-id=A{rs(79, B64URL)}&currency=EUR&intent=capture"></script>\n'
        f'<script src="https://js.stripe.com/v3/"></script>\n<script>const stripe = Stripe("pk_live_{rs(24, ALNUM)}");</script>\n')
    # r4-captcha-site-key: reCAPTCHA/hCaptcha/Turnstile site keys are put in
    # every page's HTML; the server-side secret is separate (none).
    neg("r4-captcha-site-key", "templates/signup.html",
        '<form method="post" action="/signup">\n  <input name="email" type="email" autocomplete="email">\n'
        '  <input name="password" type="password" autocomplete="new-password" minlength="12">\n'
        f'  <div class="g-recaptcha" data-sitekey="6L{R.choice(UP)}{R.choice(ALNUM)}AAAAAA{rs(30, B64URL)}"></div>\n'
        f'  <div class="h-captcha" data-sitekey="{uid()}"></div>\n'
        f'  <div class="cf-turnstile" data-sitekey="0x4AAAAAAA{rs(14, ALNUM)}"></div>\n  <button>Sign up</button>\n</form>\n')
    # r4-search-only-key: Algolia DocSearch search-only keys are meant for
    # the browser (DocSearch's own setup puts them in the config) (none).
    neg("r4-search-only-key", "docusaurus.config.js",
        "// @ts-check\n/** @type {import('@docusaurus/types').Config} */\nconst config = {\n  title: 'Acme Docs',\n"
        "  url: 'https://docs.acme.io',\n  themeConfig: {\n    algolia: {\n"
        f"      appId: '{rs(10, UP + DIG)}',\n      // Public API key: it is safe to commit it\n      apiKey: '{hexs(32)}',\n"
        "      indexName: 'acme',\n      contextualSearch: true,\n    },\n  },\n};\n\nmodule.exports = config;\n")
    # r4-analytics-key: browser analytics write keys/project tokens ship to
    # every visitor (Segment, Mixpanel, Amplitude document them as public) (none).
    neg("r4-analytics-key", "public/index.html",
        "<!doctype html>\n<html><head>\n<script>\n  !function(){var analytics=window.analytics=window.analytics||[];analytics.SNIPPET_VERSION=\"5.2.0\";\n"
        f'  analytics.load("{rs(32, ALNUM)}");analytics.page();}}();\n  mixpanel.init("{hexs(32)}", {{track_pageview: true}});\n'
        f"  amplitude.init('{hexs(32)}');\n  (function(h,o,t,j,a,r){{h._hjSettings={{hjid:{R.randint(10**6, 10**7)},hjsv:6}};}})(window,document);\n"
        f"</script>\n<script async src=\"https://www.googletagmanager.com/gtag/js?id=G-{rs(10, UP + DIG)}\"></script>\n</head></html>\n")
    # r4-feature-flag-client-id: LaunchDarkly client-side ids and Statsig
    # client keys are for browsers (vendors: not secret) (none).
    neg("r4-feature-flag-client-id", "src/flags.ts",
        "import { initialize } from 'launchdarkly-js-client-sdk';\nimport Statsig from 'statsig-js';\n\n"
        f"export const ld = initialize('{hexs(24)}', {{ kind: 'user', key: 'anonymous' }});\n"
        f"await Statsig.initialize('client-{rs(43, ALNUM)}', {{ userID: 'anonymous' }});\n")
    # r4-sentry-dsn: a browser Sentry DSN (its key is public by design) (none).
    neg("r4-sentry-dsn", "sentry.client.config.ts",
        "import * as Sentry from '@sentry/nextjs';\n\nSentry.init({\n"
        f"  dsn: 'https://{hexs(32)}@o{R.randint(10**5, 10**7)}.ingest.us.sentry.io/{R.randint(10**6, 10**7)}',\n"
        "  tracesSampleRate: 0.1,\n  replaysOnErrorSampleRate: 1.0,\n});\n")
    # r4-public-client-config: Amplify's generated config: Cognito pool ids
    # and a web client id without a secret (public by design) (none).
    region = "eu-west-1"
    neg("r4-public-client-config", "src/aws-exports.js",
        "/* eslint-disable */\n// WARNING: DO NOT EDIT. This file is automatically generated by AWS Amplify.\n\nconst awsmobile = {\n"
        f'    "aws_project_region": "{region}",\n    "aws_cognito_identity_pool_id": "{region}:{uid()}",\n'
        f'    "aws_cognito_region": "{region}",\n    "aws_user_pools_id": "{region}_{rs(9, ALNUM)}",\n'
        f'    "aws_user_pools_web_client_id": "{rs(26, LOW + DIG)}",\n    "oauth": {{\n        "domain": "acme-prod.auth.{region}.amazoncognito.com",\n'
        '        "redirectSignIn": "https://app.acme.io/"\n    }\n};\n\nexport default awsmobile;\n')
    # r4-pusher-key: a Pusher app key is public (the app secret is not) (none).
    neg("r4-pusher-key", "resources/js/echo.js",
        "import Echo from 'laravel-echo';\nimport Pusher from 'pusher-js';\nwindow.Pusher = Pusher;\n\nwindow.Echo = new Echo({\n"
        f"    broadcaster: 'pusher',\n    key: '{hexs(20)}',\n    cluster: 'eu',\n    forceTLS: true,\n}});\n")

    # r4-rfc-example: example values printed in RFC 6749, 7636 and OIDC Core;
    # they authorize nothing (none).
    neg("r4-rfc-example", "docs/auth/oauth-flow.md",
        "# Authorization code flow with PKCE\n\nThe values below are the examples from RFC 6749 and RFC 7636.\n\n"
        "```http\nGET /authorize?response_type=code&client_id=s6BhdRkqt3&state=xyz\n"
        "    &redirect_uri=https%3A%2F%2Fclient%2Eexample%2Ecom%2Fcb\n"
        "    &code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256\n```\n\n"
        "```http\nPOST /token\n\ngrant_type=authorization_code&code=SplxlOBeZQQYbYS6WxSbIA\n"
        "&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk\n```\n\n"
        '```json\n{\n  "access_token": "2YotnFZFEjr1zCsicMWpAA",\n  "token_type": "example",\n  "expires_in": 3600,\n'
        '  "refresh_token": "tGzv3JOkF0XG5Qx2TlKWIA"\n}\n```\n\nOpenID Connect adds `nonce=n-0S6_WzA2Mj`.\n')
    # r4-rfc-example: the RFC 7515 A.1 JWS and jwt.io's example token in a
    # test of a JWT library: published vectors (none).
    neg("r4-rfc-example", "tests/test_jws_vectors.py",
        '"""Vectors from RFC 7515 Appendix A.1 and the jwt.io debugger."""\n\n'
        'RFC7515_A1_JWK = {\n    "kty": "oct",\n'
        '    "k": "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",\n}\n'
        'RFC7515_A1_JWS = (\n    "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"\n'
        '    ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"\n'
        '    ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"\n)\n'
        'JWT_IO = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"\n\n\n'
        "def test_rfc7515_a1(jws):\n    assert jws.verify(RFC7515_A1_JWS, RFC7515_A1_JWK)\n")
    # r4-signature-example: HTTP message signatures and webhook MACs are
    # outputs of a key, not the key (none).
    neg("r4-signature-example", "docs/webhooks.md",
        "## Verifying deliveries\n\nEvery delivery is signed:\n\n```http\nPOST /hooks/acme HTTP/1.1\n"
        f"Content-Digest: sha-256=:{base64.b64encode(hashlib.sha256(rs(9).encode()).digest()).decode()}:\n"
        'Signature-Input: sig1=("@method" "content-digest");created=1730626327;keyid="acme-2026"\n'
        f"Signature: sig1=:{b64_bytes(64)}:\nX-Hub-Signature-256: sha256={hexs(64)}\n"
        f"Stripe-Signature: t=1730626327,v1={hexs(64)}\n```\n\nCompute the HMAC with your endpoint secret and compare in constant time.\n")
    # r4-openapi-example: ids, cursors (base64 of "user:<id>"), idempotency
    # keys in an API description's examples (none).
    cursor = base64.b64encode(f"user:U{rs(8, UP + DIG)}".encode()).decode()
    neg("r4-openapi-example", "api/openapi.yaml",
        "openapi: 3.1.0\ninfo:\n  title: Orders API\n  version: 1.4.0\ncomponents:\n  securitySchemes:\n"
        "    bearerAuth:\n      type: http\n      scheme: bearer\n      bearerFormat: JWT\n  schemas:\n    OrderList:\n"
        "      type: object\n      properties:\n        next_cursor:\n          type: string\n"
        f"          example: {cursor}\n        request_id:\n          type: string\n          example: req_{rs(14)}\n"
        f"    Order:\n      properties:\n        id:\n          type: string\n          example: ord_{rs(24)}\n"
        f"        idempotency_key:\n          type: string\n          example: {uid()}\n")
    # r4-graphql-node-id: GitHub/Relay global ids are base64 of "Type:id" (none).
    neg("r4-graphql-node-id", "tests/fixtures/github_push.json", json.dumps({
        "ref": "refs/heads/main", "before": sha("sha1"), "after": sha("sha1"),
        "repository": {"id": R.randint(10**7, 10**9), "node_id": "R_kgDO" + rs(6, ALNUM),
                       "full_name": "acme/orders"},
        "sender": {"login": "octocat", "node_id": base64.b64encode(f"04:User{R.randint(10**5, 10**8)}".encode()).decode()},
        "head_commit": {"id": sha("sha1"), "tree_id": sha("sha1"), "message": "Fix rounding in invoice totals"},
        "installation": {"id": R.randint(10**7, 10**8), "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u" + rs(8, ALNUM)}},
        indent=2))

    # r4-wrapper-checksum: Gradle/Maven wrapper distribution checksums (none).
    neg("r4-wrapper-checksum", "gradle/wrapper/gradle-wrapper.properties",
        "distributionBase=GRADLE_USER_HOME\ndistributionPath=wrapper/dists\n"
        f"distributionSha256Sum={sha()}\ndistributionUrl=https\\://services.gradle.org/distributions/gradle-8.10.2-bin.zip\n"
        "networkTimeout=10000\nzipStoreBase=GRADLE_USER_HOME\nzipStorePath=wrapper/dists\n")
    neg("r4-wrapper-checksum", ".mvn/wrapper/maven-wrapper.properties",
        "wrapperVersion=3.3.2\ndistributionType=only-script\n"
        "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.9/apache-maven-3.9.9-bin.zip\n"
        f"distributionSha256Sum={sha()}\n")
    # r4-lockfile: lockfiles of tools earlier rounds lack (Helm, NuGet,
    # SwiftPM, CocoaPods, pnpm, Composer): hashes of public packages (none).
    neg("r4-lockfile", "charts/api/Chart.lock",
        "dependencies:\n- name: postgresql\n  repository: oci://registry-1.docker.io/bitnamicharts\n  version: 15.5.38\n"
        "- name: redis\n  repository: https://charts.bitnami.com/bitnami\n  version: 19.6.4\n"
        f"digest: sha256:{sha()}\ngenerated: \"2026-10-30T11:02:41.553Z\"\n")
    neg("r4-lockfile", "src/Orders.Api/packages.lock.json", json.dumps({"version": 1, "dependencies": {"net8.0": {
        p: {"type": "Direct", "requested": f"[{ver()}, )", "resolved": ver(),
            "contentHash": base64.b64encode(hashlib.sha512(p.encode() + rs(4).encode()).digest()).decode()}
        for p in ("Dapper", "Npgsql", "Serilog.AspNetCore")}}}, indent=2))
    neg("r4-lockfile", "Package.resolved", json.dumps({"originHash": sha(), "pins": [
        {"identity": p, "kind": "remoteSourceControl", "location": f"https://github.com/{o}/{p}.git",
         "state": {"revision": sha("sha1"), "version": ver()}}
        for o, p in (("apple", "swift-log"), ("Alamofire", "alamofire"), ("pointfreeco", "swift-snapshot-testing"))],
        "version": 3}, indent=2))
    neg("r4-lockfile", "ios/Podfile.lock",
        "PODS:\n  - Alamofire (5.9.1)\n  - Firebase/Core (10.29.0)\n  - SnapKit (5.7.1)\n\nSPEC CHECKSUMS:\n"
        f"  Alamofire: {sha('sha1')}\n  Firebase: {sha('sha1')}\n  SnapKit: {sha('sha1')}\n\n"
        f"PODFILE CHECKSUM: {sha('sha1')}\n\nCOCOAPODS: 1.15.2\n")
    neg("r4-lockfile", "pnpm-lock.yaml",
        "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n\npackages:\n\n" + "".join(
            f"  {p}@{ver()}:\n    resolution: {{integrity: {sri()}}}\n    engines: {{node: '>=14'}}\n\n"
            for p in R.sample(PKGS, 4)))
    neg("r4-lockfile", "composer.lock", json.dumps({
        "_readme": ["This file locks the dependencies of your project to a known state"],
        "content-hash": hexs(32), "packages": [
            {"name": "monolog/monolog", "version": "3.7.0",
             "source": {"type": "git", "url": "https://github.com/Seldaek/monolog.git", "reference": sha("sha1")},
             "dist": {"type": "zip", "url": f"https://api.github.com/repos/Seldaek/monolog/zipball/{sha('sha1')}",
                      "reference": sha("sha1"), "shasum": ""}}]}, indent=4))
    # r4-checksum-file: release checksum lists (none).
    neg("r4-checksum-file", "dist/acmectl_1.4.0_checksums.txt", "".join(
        f"{sha()}  acmectl_1.4.0_{osa}.tar.gz\n" for osa in ("darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64")))
    neg("r4-checksum-file", "SHA512SUMS",
        "".join(f"{sha('sha512')}  release/{w}-{ver()}.zip\n" for w in R.sample(WORDS, 2)))
    # r4-dockerfile-gpg: an official-image Dockerfile: release-key
    # fingerprints and build-arg checksums (none).
    neg("r4-dockerfile-gpg", "docker/node/Dockerfile",
        "FROM debian:bookworm-slim\n\nENV NODE_VERSION 20.18.0\nARG NODE_SHA256=" + sha() + "\n"
        "RUN set -ex \\\n  && for key in \\\n" + "".join(f"    {rs(40, '0123456789ABCDEF')} \\\n" for _ in range(3)) +
        "  ; do \\\n      gpg --batch --keyserver hkps://keys.openpgp.org --recv-keys \"$key\" ; \\\n  done \\\n"
        "  && curl -fsSLO https://nodejs.org/dist/v$NODE_VERSION/node-v$NODE_VERSION-linux-x64.tar.xz \\\n"
        "  && echo \"$NODE_SHA256  node-v$NODE_VERSION-linux-x64.tar.xz\" | sha256sum -c -\n"
        f"ENV GOSU_VERSION 1.17\nENV TINI_SHA256 {sha()}\n")
    # r4-sbom: CycloneDX hashes and serial numbers (none).
    neg("r4-sbom", "sbom/bom.cdx.json", json.dumps({
        "bomFormat": "CycloneDX", "specVersion": "1.5", "serialNumber": f"urn:uuid:{uid()}", "version": 1,
        "components": [{"type": "library", "name": p, "version": v, "purl": f"pkg:npm/{p}@{v}", "bom-ref": f"pkg:npm/{p}@{v}",
                        "hashes": [{"alg": "SHA-512", "content": sha("sha512")}, {"alg": "SHA-1", "content": sha("sha1")}]}
                       for p, v in ((q, ver()) for q in R.sample(PKGS, 3))]}, indent=2))
    # r4-signature-bundle: a Sigstore bundle: signature, Rekor log id and
    # inclusion proof (outputs and public material) (none).
    neg("r4-signature-bundle", "release/acmectl.sigstore.json", json.dumps({
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {"certificate": {"rawBytes": cert_der()}, "tlogEntries": [{
            "logIndex": str(R.randint(10**8, 2 * 10**8)), "logId": {"keyId": b64_bytes(32)},
            "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
            "inclusionPromise": {"signedEntryTimestamp": b64_bytes(71)},
            "inclusionProof": {"rootHash": b64_bytes(32), "hashes": [b64_bytes(32) for _ in range(3)]}}]},
        "messageSignature": {"messageDigest": {"algorithm": "SHA2_256", "digest": b64_bytes(32)}, "signature": b64_bytes(71)}},
        indent=2))
    # r4-debug-ids: build ids and symbol-file module ids in a crash report (none).
    neg("r4-debug-ids", "docs/crashes/2026-11-03-segfault.txt",
        "Crash reason:  SIGSEGV /SEGV_MAPERR\nCrash address: 0x0\n\nThread 0 (crashed)\n"
        f" 0  libacme.so!acme::ledger::post + 0x{hexs(3)}\n    rip = 0x0000{hexs(12)}   rsp = 0x00007ff{hexs(9)}\n\nLoaded modules:\n"
        f"MODULE Linux x86_64 {rs(33, '0123456789ABCDEF')} libacme.so\n"
        f"BuildID[sha1]={sha('sha1')}, for GNU/Linux 3.2.0, stripped\n"
        f"UUID: {uid().upper()} (arm64) Acme.app.dSYM/Contents/Resources/DWARF/Acme\n")
    # r4-game-engine-id: Godot resource uids and import cache names (none).
    neg("r4-game-engine-id", "assets/player.png.import",
        '[remap]\n\nimporter="texture"\ntype="CompressedTexture2D"\n'
        f'uid="uid://{rs(13, LOW + DIG)}"\npath="res://.godot/imported/player.png-{hexs(32)}.ctex"\n\n'
        '[deps]\n\nsource_file="res://assets/player.png"\n'
        f'dest_files=["res://.godot/imported/player.png-{hexs(32)}.ctex"]\n')

    # r4-ciphertext-tool: ejson, dotenvx and dotenv-vault commit ciphertext
    # with a public key; the private key stays outside the repository (none).
    neg("r4-ciphertext-tool", "config/secrets.production.ejson", json.dumps({
        "_public_key": hexs(64),
        "database_password": f"EJ[1:{b64_bytes(32)}:{b64_bytes(24)}:{b64_bytes(30)}]",
        "stripe_api_key": f"EJ[1:{b64_bytes(32)}:{b64_bytes(24)}:{b64_bytes(48)}]"}, indent=2))
    neg("r4-ciphertext-tool", ".env.production",
        "#/-------------------[DOTENV_PUBLIC_KEY]--------------------/\n#/            public-key encryption for .env files          /\n"
        f'#/----------------------------------------------------------/\nDOTENV_PUBLIC_KEY_PRODUCTION="02{hexs(64)}"\n\n'
        f'# .env.production\nDATABASE_URL="encrypted:{b64_bytes(120)}"\nSTRIPE_SECRET_KEY="encrypted:{b64_bytes(110)}"\n')
    neg("r4-ciphertext-tool", ".env.vault",
        "#/-------------------.env.vault---------------------/\n#/         cloud-agnostic vaulting standard         /\n"
        f'#/--------------------------------------------------/\n\n# production\nDOTENV_VAULT_PRODUCTION="{b64_bytes(180)}"\n'
        f'# ci\nDOTENV_VAULT_CI="{b64_bytes(150)}"\n')
    neg("r4-ciphertext-tool", "infra/rds.tf",
        'data "aws_kms_secrets" "db" {\n  secret {\n    name    = "master_password"\n'
        f'    payload = "AQICAHh{b64_bytes(150)}"\n  }}\n}}\n\nresource "aws_db_instance" "main" {{\n'
        '  username = "orders"\n  password = data.aws_kms_secrets.db.plaintext["master_password"]\n}\n')

    # r4-public-key-format: minisign public keys, onion v3 addresses and
    # nostr npub keys are published identities (none).
    neg("r4-public-key-format", "INSTALL.md",
        "## Verify the download\n\n```sh\n"
        f"minisign -Vm acmectl.tar.gz -P {minisign_public()}\n```\n\n"
        f"Mirror over Tor: http://{b32(56).lower()}.onion/\n\nFollow releases on nostr: `{npub()}`\n")
    # r4-domain-verification: TXT verification tokens are published DNS (none).
    neg("r4-domain-verification", "dns/zones/acme.io.tf",
        'resource "cloudflare_record" "verification" {\n  for_each = toset([\n'
        f'    "facebook-domain-verification={rs(30, LOW + DIG)}",\n    "atlassian-domain-verification={rs(64, B64)}",\n'
        f'    "MS=ms{R.randint(10**7, 10**8)}",\n    "apple-domain-verification={rs(16, ALNUM)}",\n'
        f'    "docusign={uid()}",\n    "stripe-verification={hexs(64)}",\n  ])\n'
        '  zone_id = var.zone_id\n  name    = "@"\n  type    = "TXT"\n  content = each.value\n}\n'
        f'resource "cloudflare_record" "github" {{\n  zone_id = var.zone_id\n  name    = "_github-challenge-acme-org"\n  type    = "TXT"\n  content = "{hexs(10)}"\n}}\n')
    # r4-dkim-signature: DKIM/ARC signatures and Message-IDs in a mail
    # fixture: signatures are public outputs (none).
    neg("r4-dkim-signature", "tests/fixtures/mail/receipt.eml",
        f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=acme.io; s=mail;\n\th=from:to:subject:date;\n"
        f"\tbh={base64.b64encode(hashlib.sha256(rs(9).encode()).digest()).decode()};\n\tb={wrap(b64_bytes(256), 70).replace(chr(10), chr(10) + chr(9))}\n"
        f"Message-ID: <CAF{rs(40, B64URL)}@mail.gmail.com>\nFrom: billing@acme.io\nTo: ops@acme.io\nSubject: Your receipt\n\nThanks!\n")
    # r4-saml-signature: SignatureValue/DigestValue of a signed assertion (none).
    neg("r4-saml-signature", "tests/fixtures/saml/response.xml",
        '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_' + hexs(40) + '" Version="2.0">\n'
        '  <ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#">\n    <ds:SignedInfo>\n'
        f'      <ds:Reference URI="#_{hexs(40)}"><ds:DigestValue>{b64_bytes(32)}</ds:DigestValue></ds:Reference>\n'
        f'    </ds:SignedInfo>\n    <ds:SignatureValue>{b64_bytes(256)}</ds:SignatureValue>\n  </ds:Signature>\n</samlp:Response>\n')
    # r4-webauthn: credential ids, COSE public keys, attestation objects (none).
    cdj = base64.urlsafe_b64encode(json.dumps({"type": "webauthn.create", "challenge": b64url_bytes(32),
                                               "origin": "https://app.acme.io"}).encode()).decode().rstrip("=")
    neg("r4-webauthn", "tests/fixtures/webauthn_registration.json", json.dumps({
        "id": b64url_bytes(64), "rawId": b64url_bytes(64), "type": "public-key",
        "response": {"clientDataJSON": cdj, "attestationObject": "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjF" + b64url_bytes(190),
                     "publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + b64url_bytes(64)}}, indent=2))
    # r4-totp-doc-example: the base32 secret printed in authenticator docs (none).
    neg("r4-totp-doc-example", "docs/2fa.md",
        "## Testing two-factor login locally\n\nScan this example URI (from the Google Authenticator key-URI docs):\n\n"
        "`otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXP&issuer=Example`\n")

    # r4-alphabet-constant: id and code alphabets (shuffled or not) are
    # public constants of an encoding (none).
    alpha = list(ALNUM)
    R.shuffle(alpha)
    neg("r4-alphabet-constant", "internal/shortid/shortid.go",
        "package shortid\n\n// Alphabet is shuffled once so ids are not sequential-looking.\n"
        f'const Alphabet = "{"".join(alpha)}"\n\nconst base58Alphabet = "{B58}"\n'
        'const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"\n')
    neg("r4-alphabet-constant", "src/invite/codes.ts",
        "import { customAlphabet } from 'nanoid';\nimport Hashids from 'hashids';\n\n"
        "const CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';\nexport const inviteCode = customAlphabet(CODE_ALPHABET, 10);\n"
        f"export const hashids = new Hashids('orders', 8, '{''.join(R.sample(list(LOW + DIG), 36))}');\n")
    # r4-protocol-constant: published curve parameters and protocol magic
    # values named like keys (none).
    neg("r4-protocol-constant", "crypto/src/curve.rs",
        "//! secp256k1 domain parameters (SEC 2, section 2.4.1).\n\n"
        'pub const FIELD_PRIME: &str = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F";\n'
        'pub const ORDER: &str = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141";\n'
        'pub const GENERATOR_X: &str = "79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798";\n'
        'pub const GENERATOR_Y: &str = "483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8";\n'
        "/// RFC 6455: appended to Sec-WebSocket-Key before hashing.\n"
        'pub const WS_ACCEPT_KEY: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";\n')
    # r4-i18n-format: UI strings about passwords and tokens in gettext,
    # Android, iOS and Rails locale files (none).
    neg("r4-i18n-format", "locale/fr/LC_MESSAGES/django.po",
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n#: accounts/forms.py:42\nmsgid "Password"\nmsgstr "Mot de passe"\n\n'
        '#: accounts/forms.py:57\nmsgid "Your API token has expired"\nmsgstr "Votre jeton d\'API a expiré"\n\n'
        '#: accounts/views.py:12\nmsgid "Enter your secret key"\nmsgstr "Saisissez votre clé secrète"\n')
    neg("r4-i18n-format", "app/src/main/res/values/strings.xml",
        '<?xml version="1.0" encoding="utf-8"?>\n<resources>\n    <string name="app_name">Acme</string>\n'
        '    <string name="password">Password</string>\n    <string name="password_hint">At least 12 characters</string>\n'
        '    <string name="api_key">API key</string>\n    <string name="token_expired">Your session token expired. Sign in again.</string>\n'
        f'    <string name="google_app_id" translatable="false">1:{R.randint(10**11, 10**12)}:android:{hexs(22)}</string>\n</resources>\n')
    neg("r4-i18n-format", "Acme/en.lproj/Localizable.strings",
        '/* Login screen */\n"login.password.placeholder" = "Password";\n"login.apiKey.title" = "Personal access token";\n'
        '"login.apiKey.help" = "Create a token in Settings › Developer and paste it here.";\n"error.token.revoked" = "This token was revoked.";\n')
    neg("r4-i18n-format", "config/locales/devise.en.yml",
        "en:\n  devise:\n    passwords:\n      no_token: \"You can't access this page without coming from a password reset email.\"\n"
        "      send_instructions: \"You will receive an email with instructions on how to reset your password in a few minutes.\"\n"
        "    failure:\n      invalid_token: \"Invalid authentication token.\"\n  activerecord:\n    attributes:\n"
        "      user:\n        password: \"Password\"\n        reset_password_token: \"Reset password token\"\n")
    # r4-form-code: login-form code naming passwords and token storage keys (none).
    neg("r4-form-code", "src/components/LoginForm.tsx",
        "import { z } from 'zod';\n\nconst TOKEN_STORAGE_KEY = 'acme.auth.accessToken';\n"
        "const schema = z.object({\n  email: z.string().email(),\n  password: z.string().min(12, 'Password must be at least 12 characters'),\n});\n\n"
        "export function LoginForm() {\n  const [password, setPassword] = useState('');\n  const passwordFieldId = useId();\n"
        "  return <input id={passwordFieldId} type=\"password\" autoComplete=\"current-password\" value={password}\n"
        "    onChange={(e) => setPassword(e.target.value)} />;\n}\n")
    # r4-cdn-url: font file names, pinned CDN commits, signed image URLs
    # (the signature is an output, the URL is public) (none).
    neg("r4-cdn-url", "src/styles/fonts.css",
        "@font-face {\n  font-family: 'Inter';\n  font-style: normal;\n  font-weight: 400;\n"
        f"  src: url(https://fonts.gstatic.com/s/inter/v13/{rs(40, B64URL)}{rs(20, B64URL)}.woff2) format('woff2');\n}}\n"
        f".hero {{ background: url('https://images.unsplash.com/photo-{R.randint(10**12, 2 * 10**12)}-{hexs(12)}?auto=format&fit=crop&w=1600&q=80'); }}\n"
        f".banner {{ background: url('https://acme.imgix.net/banner.jpg?w=1200&s={hexs(32)}'); }}\n"
        f"@import url('https://cdn.jsdelivr.net/gh/acme/design-tokens@{sha('sha1')}/dist/tokens.css');\n")
    neg("r4-doc-links", "README.md",
        "# Orders service\n\n"
        f"- Design doc: https://docs.google.com/document/d/1{rs(43, B64URL)}/edit\n"
        f"- Capacity sheet: https://docs.google.com/spreadsheets/d/1{rs(43, B64URL)}/edit#gid=0\n"
        f"- Demo: https://www.youtube.com/watch?v={rs(11, B64URL)}\n"
        f"- Maintainer: ![avatar](https://www.gravatar.com/avatar/{hashlib.md5(b'ops@acme.io').hexdigest()}?s=64)\n"
        f"- Runbook diagram: https://res.cloudinary.com/acme/image/upload/s--{rs(8, B64URL)}--/v{R.randint(10**9, 2 * 10**9)}/runbook.png\n")
    # r4-ml-config: seeds, run ids, model revisions and dataset fingerprints (none).
    neg("r4-ml-config", "configs/train.yaml",
        f"seed: {R.randint(1, 2**31)}\nmodel:\n  name: acme/orders-classifier\n  revision: {sha('sha1')}\n"
        f"  checkpoint_sha256: {sha()}\ndata:\n  dataset: acme/orders-2026\n  fingerprint: {hexs(16)}\n"
        f"wandb:\n  project: orders\n  run_id: {rs(8, LOW + DIG)}\n  resume: allow\noptim:\n  lr: 3.0e-4\n  warmup_steps: 500\n")
    # r4-ci-log: a CI log excerpt: cache keys, layer digests, masked values (none).
    neg("r4-ci-log", "docs/ci/example-run.log",
        f"##[group]Run actions/cache@{sha('sha1')}\nCache restored from key: node-cache-Linux-x64-npm-{sha()}\n##[endgroup]\n"
        f"#7 [build 3/6] RUN npm ci\n#7 CACHED\n#9 exporting layers\n#9 writing image sha256:{sha()} done\n"
        f"#9 naming to ghcr.io/acme/orders:{sha('sha1')[:7]} done\nEnv: NPM_TOKEN=***\n"
        f"Artifact orders-dist has been successfully uploaded! Final size is 4812331 bytes. Artifact ID is {R.randint(10**9, 2 * 10**9)}\n")
    # r4-k8s-status: live-object output: uids, container ids, image ids (none).
    neg("r4-k8s-status", "docs/debug/pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: orders-{hexs(10)}-{rs(5, LOW + DIG)}\n  labels:\n    pod-template-hash: {hexs(10)}\n"
        f"  resourceVersion: \"{R.randint(10**7, 10**8)}\"\n  uid: {uid()}\nstatus:\n  containerStatuses:\n  - name: orders\n"
        f"    containerID: containerd://{sha()}\n    image: ghcr.io/acme/orders:1.4.0\n"
        f"    imageID: ghcr.io/acme/orders@sha256:{sha()}\n    ready: true\n")


def round_four_positives():
    """Secrets in layouts no source has (recall guard for round 4)."""
    pos("r4-spring-yaml", "src/main/resources/application-prod.yml",
        "spring:\n  datasource:\n    url: jdbc:postgresql://db.prod.internal:5432/orders\n    username: orders\n"
        f"    password: {pw()}\n  security:\n    oauth2:\n      client:\n        registration:\n          github:\n"
        f"            client-id: Iv1.{hexs(16)}\n            client-secret: {hexs(40)}\n")
    pos("r4-ansible-inventory", "inventory/prod/hosts.ini",
        "[web]\nweb1.prod.internal ansible_host=10.0.1.11\n\n[web:vars]\nansible_user=deploy\n"
        f"ansible_password={pw()}\nansible_become_pass={pw()}\n")
    salts = "".join(f"define( '{k}', '{rs(64, ALNUM + '!@#%^&*()-_[]{{}}<>~+=,.;:/?|')}' );\n"
                    for k in ("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY"))
    pos("r4-wp-config", "wp-config.php",
        "<?php\ndefine( 'DB_NAME', 'wordpress' );\ndefine( 'DB_USER', 'wp_prod' );\n"
        f"define( 'DB_PASSWORD', '{pw()}' );\ndefine( 'DB_HOST', 'localhost' );\n\n{salts}\n$table_prefix = 'wp_';\n")
    pos("r4-rails-database-yml", "config/database.yml",
        "default: &default\n  adapter: postgresql\n  encoding: unicode\n  pool: 5\n\nproduction:\n  <<: *default\n"
        f"  database: orders_production\n  username: orders\n  password: {pw()}\n  host: db.prod.internal\n")
    pos("r4-jenkins-casc", "jenkins/casc/jenkins.yaml",
        "credentials:\n  system:\n    domainCredentials:\n      - credentials:\n          - usernamePassword:\n"
        f"              scope: GLOBAL\n              id: nexus-deploy\n              username: deploy\n              password: \"{pw()}\"\n"
        f"          - string:\n              scope: GLOBAL\n              id: sonar-token\n              secret: \"squ_{hexs(40)}\"\n")
    pos("r4-s3cfg", ".s3cfg",
        f"[default]\naccess_key = DO00{rs(16, UP + DIG)}\nsecret_key = {rs(43, B64)}\nhost_base = fra1.digitaloceanspaces.com\n"
        "host_bucket = %(bucket)s.fra1.digitaloceanspaces.com\nuse_https = True\n")
    tok = json.dumps({"access_token": "ya29.a0" + rs(150, B64URL), "token_type": "Bearer",
                      "refresh_token": "1//0" + rs(99, B64URL), "expiry": "2026-11-04T10:00:00.000Z"})
    pos("r4-rclone", "backup/rclone.conf",
        f"[gdrive]\ntype = drive\nscope = drive\ntoken = {tok}\nteam_drive = \n\n[b2]\ntype = b2\naccount = {hexs(25)}\nkey = K00{rs(28, ALNUM)}\n")
    pos("r4-tfvars-json", "terraform/prod.auto.tfvars.json", json.dumps({
        "region": "eu-west-1", "datadog_api_key": hexs(32), "datadog_app_key": hexs(40)}, indent=2))
    pos("r4-shell-export", "dotfiles/.zshrc",
        "export PATH=\"$HOME/.local/bin:$PATH\"\nexport EDITOR=nvim\n"
        f"export OPENAI_API_KEY=sk-proj-{rs(48, B64URL)}\nexport PGPASSWORD='{pw()}'\nalias k=kubectl\n")
    pos("r4-notebook-key", "notebooks/train.ipynb", json.dumps({
        "cells": [{"cell_type": "code", "execution_count": 1, "id": hexs(8), "metadata": {}, "outputs": [],
                   "source": ["import os\n", f"os.environ[\"WANDB_API_KEY\"] = \"{hexs(40)}\"\n", "import wandb\n", "wandb.login()"]}],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    pos("r4-android-keystore", "android/keystore.properties",
        f"storePassword={pw()}\nkeyPassword={pw()}\nkeyAlias=upload\nstoreFile=../keys/upload-keystore.jks\n")
    pos("r4-laravel-env", ".env",
        f"APP_NAME=Acme\nAPP_ENV=production\nAPP_KEY=base64:{b64_bytes(32)}\nAPP_DEBUG=false\n"
        f"MAIL_MAILER=smtp\nMAIL_HOST=smtp.mailgun.org\nMAIL_USERNAME=postmaster@mg.acme.io\nMAIL_PASSWORD={hexs(32)}-{hexs(8)}-{hexs(8)}\n")
    secret = "".join(f"\\x{R.getrandbits(8):02x}" for _ in range(24))
    pos("r4-flask-bytes", "app/__init__.py",
        f"from flask import Flask\n\napp = Flask(__name__)\napp.secret_key = b'{secret}'\n")
    pos("r4-kafka-jaas", "config/client.properties",
        "bootstrap.servers=pkc-4r087.eu-west-1.aws.confluent.cloud:9092\nsecurity.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{rs(16, UP + DIG)}\" password=\"{rs(64, B64)}\";\n")
    pos("r4-pgpass", "ops/.pgpass",
        f"db.prod.internal:5432:orders:orders_app:{pw()}\n*:5432:*:replicator:{pw()}\n")
    pos("r4-wifi-psk", "rootfs/etc/wpa_supplicant/wpa_supplicant.conf",
        "ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev\nupdate_config=1\ncountry=DE\n\nnetwork={\n"
        f"    ssid=\"acme-warehouse\"\n    psk=\"{pw()}\"\n    key_mgmt=WPA-PSK\n}}\n")
    pos("r4-positional-password", "src/main/java/com/acme/orders/Db.java",
        "package com.acme.orders;\n\nimport java.sql.*;\n\nclass Db {\n  static Connection open() throws SQLException {\n"
        f"    return DriverManager.getConnection(\"jdbc:postgresql://db.prod.internal:5432/orders\", \"orders_app\", \"{pw()}\");\n  }}\n}}\n")
    pos("r4-positional-password", "scripts/export_orders.py",
        "import requests\n\nresp = requests.get(\n    \"https://reports.acme.io/api/export\",\n"
        f"    auth=(\"svc-export\", \"{pw()}\"),\n    timeout=30,\n)\n")
    pos("r4-totp-seed", "scripts/seed_admin.py",
        "from app.models import User\n\nadmin = User.create(email=\"ops@acme.io\", role=\"admin\")\n"
        f"admin.enable_totp(\"otpauth://totp/Acme:ops@acme.io?secret={b32(32)}&issuer=Acme\")\n")
    pos("r4-go-byte-key", "internal/auth/jwt.go",
        f"package auth\n\nvar signingKey = []byte(\"{rs(40, ALNUM + '!#%^*-_')}\")\n")
    pos("r4-env-default", "config/database.php",
        "<?php\n\nreturn [\n    'connections' => [\n        'pgsql' => [\n            'host' => env('DB_HOST', 'db.prod.internal'),\n"
        f"            'password' => env('DB_PASSWORD', '{pw()}'),\n        ],\n    ],\n];\n")
    pos("r4-docker-login", "ci/publish.sh",
        f"#!/bin/sh\nset -e\ndocker login -u deploy -p '{pw()}' registry.acme.io\ndocker push registry.acme.io/orders:$TAG\n")
    pos("r4-helm-values", "charts/orders/values-prod.yaml",
        f"postgresql:\n  auth:\n    username: orders\n    database: orders\n    postgresPassword: {pw()}\n    password: {pw()}\n")


# ---------------------------------------------------------------- round 5
# Fifth pass of the adversary (written before reading the scanner's rules
# for this round): whole files of families no earlier round has (sources of
# other languages, lockfiles of other ecosystems, manifests, CI configs,
# bundles, fixtures, docs, masks, public keys, references, release notes),
# and secrets in layouts no source has. Classes are prefixed `r5-`; one
# line per family says why its label holds.

def spki_rsa_hex_snk():
    """A .NET strong-name public key blob (PublicKeyBlob: 0x0024 header,
    RSA1 magic, exponent, 1024-bit modulus) as hex, as InternalsVisibleTo
    prints it."""
    return ("0024000004800000940000000602000000240000525341310004000001000100"
            + "".join(f"{R.getrandbits(8):02x}" for _ in range(128)))


def age_recipient():
    """An age X25519 recipient: bech32 `age1` of 32 bytes with its checksum."""
    key = bytes(R.getrandbits(8) for _ in range(32))
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

    def polymod(values):
        chk = 1
        for v in values:
            top = chk >> 25
            chk = (chk & 0x1ffffff) << 5 ^ v
            for i in range(5):
                chk ^= gen[i] if (top >> i) & 1 else 0
        return chk
    acc, bits, data = 0, 0, []
    for b in key:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    hrp = "age"
    hrp_exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = polymod(hrp_exp + data + [0] * 6) ^ 1
    data += [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[d] for d in data)


def ssh_pub(kind="ssh-ed25519"):
    """An OpenSSH public key blob with its real wire header and random key."""
    def s(b):
        return len(b).to_bytes(4, "big") + b
    if kind == "ssh-ed25519":
        blob = s(b"ssh-ed25519") + s(bytes(R.getrandbits(8) for _ in range(32)))
    else:
        blob = s(b"ssh-rsa") + s(b"\x01\x00\x01") + s(b"\x00" + bytes(R.getrandbits(8) for _ in range(256)))
    return f"{kind} {base64.b64encode(blob).decode()}"


def b58encode(raw):
    n = int.from_bytes(raw, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def peer_id():
    """A libp2p peer id: base58btc of the identity multihash of an Ed25519
    public key (`00 24 08 01 12 20` + 32 bytes, `12D3KooW…`). Draws a
    44-character string from R (as the first version of round 5 did) and
    derives the key from it, so later draws are unchanged."""
    return b58encode(bytes.fromhex("002408011220") + hashlib.sha256(rs(44, B58).encode()).digest())


def cid_v0():
    """An IPFS CIDv0: base58btc of a sha2-256 multihash (`12 20` + 32
    bytes, `Qm…`). Drawn like peer_id."""
    return b58encode(bytes.fromhex("1220") + hashlib.sha256(rs(44, B58).encode()).digest())


def colon_hex(n, upper=True):
    h = rs(2 * n, "0123456789ABCDEF" if upper else HEX)
    return ":".join(h[i:i + 2] for i in range(0, 2 * n, 2))


def round_five():
    # r5-go-source: a Go package with long exported identifiers, header
    # names, error texts and table constants naming tokens and secrets;
    # every value is a name, a format or a published constant (none).
    neg("r5-go-source", "internal/session/token.go",
        "package session\n\nimport (\n\t\"errors\"\n\t\"net/http\"\n\t\"time\"\n)\n\n"
        "const (\n\tAccessTokenCookieName          = \"__Host-acme_access_token\"\n"
        "\tRefreshTokenHeaderName         = \"X-Acme-Refresh-Token\"\n"
        "\tdefaultAccessTokenLifetime     = 15 * time.Minute\n"
        "\tclientSecretPostAuthMethod     = \"client_secret_post\"\n"
        "\tpasswordResetTokenPurpose      = \"password-reset\"\n"
        "\tsecretRotationAnnotationKey    = \"acme.io/secret-rotated-at\"\n)\n\n"
        "var (\n\tErrAccessTokenSignatureInvalid = errors.New(\"session: access token signature is invalid\")\n"
        "\tErrRefreshTokenReused          = errors.New(\"session: refresh token was already used\")\n)\n\n"
        "// crc32Koopman and the FNV-1a parameters are the published ones.\n"
        "const crc32Koopman = 0xeb31d82e\nconst fnvOffsetBasis64 = 0xcbf29ce484222325\nconst fnvPrime64 = 0x100000001b3\n\n"
        "type TokenPairResponse struct {\n\tAccessToken  string `json:\"access_token\"`\n\tRefreshToken string `json:\"refresh_token,omitempty\"`\n"
        "\tTokenType    string `json:\"token_type\"`\n\tExpiresIn    int    `json:\"expires_in\"`\n}\n\n"
        "func bearerFrom(r *http.Request) string {\n\treturn r.Header.Get(RefreshTokenHeaderName)\n}\n")
    # r5-rust-source: a Rust module with key-length constants, serde renames,
    # header names and an all-zero test key (none).
    neg("r5-rust-source", "crates/auth/src/keys.rs",
        "use serde::{Deserialize, Serialize};\n\npub const SECRET_KEY_LEN: usize = 32;\n"
        "pub const API_TOKEN_HEADER: &str = \"x-acme-api-token\";\npub const SESSION_SECRET_ENV: &str = \"ACME_SESSION_SECRET\";\n\n"
        "#[derive(Debug, Serialize, Deserialize)]\npub struct ClientCredentials {\n    #[serde(rename = \"client_id\")]\n    pub id: String,\n"
        "    #[serde(rename = \"client_secret\", skip_serializing)]\n    pub secret: String,\n}\n\n"
        "pub fn load_signing_key() -> anyhow::Result<[u8; SECRET_KEY_LEN]> {\n"
        "    let hex = std::env::var(SESSION_SECRET_ENV)?;\n    let mut key = [0u8; SECRET_KEY_LEN];\n"
        "    hex::decode_to_slice(hex.trim(), &mut key)?;\n    Ok(key)\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
        "    const ZERO_KEY: &str = \"0000000000000000000000000000000000000000000000000000000000000000\";\n"
        "    const COUNTING_KEY: &str = \"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\";\n\n"
        "    #[test]\n    fn decodes_a_hex_key() {\n        std::env::set_var(SESSION_SECRET_ENV, COUNTING_KEY);\n"
        "        assert_eq!(load_signing_key().unwrap()[31], 0x1f);\n        assert_ne!(ZERO_KEY, COUNTING_KEY);\n    }\n}\n")
    # r5-java-source: Spring code: property placeholders, parameter names,
    # header prefixes and serialVersionUID (none).
    neg("r5-java-source", "src/main/java/com/acme/orders/security/JwtProperties.java",
        "package com.acme.orders.security;\n\nimport org.springframework.beans.factory.annotation.Value;\n"
        "import org.springframework.stereotype.Component;\n\n@Component\npublic class JwtProperties implements java.io.Serializable {\n"
        f"    private static final long serialVersionUID = -{R.randint(10**17, 9 * 10**18)}L;\n"
        "    public static final String AUTHORIZATION_HEADER_PREFIX = \"Bearer \";\n"
        "    public static final String PASSWORD_PARAMETER = \"j_password\";\n"
        "    public static final String CLIENT_SECRET_PROPERTY = \"spring.security.oauth2.client.registration.acme.client-secret\";\n\n"
        "    @Value(\"${app.jwt.secret}\")\n    private String jwtSecret;\n\n"
        "    @Value(\"${app.jwt.refresh-token-validity-seconds:604800}\")\n    private long refreshTokenValiditySeconds;\n\n"
        "    private final String accessTokenConverterBeanName = \"jwtAccessTokenConverterDelegatingFactoryBean\";\n}\n")
    # r5-csharp-source: C# with JSON property names, configuration lookups and
    # an InternalsVisibleTo strong-name *public* key (none).
    neg("r5-csharp-source", "src/Orders.Api/Properties/AssemblyInfo.cs",
        "using System.Runtime.CompilerServices;\n\n"
        f"[assembly: InternalsVisibleTo(\"Orders.Api.Tests, PublicKey={spki_rsa_hex_snk()}\")]\n")
    neg("r5-csharp-source", "src/Orders.Api/Auth/TokenService.cs",
        "using System.Text.Json.Serialization;\n\nnamespace Orders.Api.Auth;\n\npublic sealed class TokenResponse\n{\n"
        "    [JsonPropertyName(\"access_token\")] public string AccessToken { get; init; } = string.Empty;\n"
        "    [JsonPropertyName(\"refresh_token\")] public string? RefreshToken { get; init; }\n}\n\n"
        "public sealed class TokenService(IConfiguration configuration)\n{\n"
        "    private const string ApiKeyHeaderName = \"X-Api-Key\";\n"
        "    private readonly string _signingKey = configuration[\"Jwt:SigningKey\"]\n"
        "        ?? throw new InvalidOperationException(\"Jwt:SigningKey is not configured\");\n"
        "    private readonly string _connectionString = configuration.GetConnectionString(\"OrdersDb\")!;\n"
        "    public const string ClientSecretCredentialProviderTypeName = \"Azure.Identity.ClientSecretCredential\";\n}\n")

    # r5-ecosystem-lock: lockfiles of ecosystems earlier rounds lack (Elixir,
    # Ruby with checksums, Pipenv, Dart, Deno, uv, Julia, R, vcpkg): hashes of
    # public packages and pinned commits (none).
    neg("r5-ecosystem-lock", "mix.lock",
        "%{\n" + "".join(
            f'  "{p}": {{:hex, :{p}, "{ver()}", "{sha()}", [:mix], [], "hexpm", "{sha()}"}},\n'
            for p in ("jason", "plug", "phoenix", "ecto_sql", "telemetry")) + "}\n")
    neg("r5-ecosystem-lock", "Gemfile.lock",
        "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (3.1.8)\n    rails (7.2.1)\n    nokogiri (1.16.7-x86_64-linux)\n\n"
        "PLATFORMS\n  x86_64-linux\n\nDEPENDENCIES\n  rails (~> 7.2)\n\nCHECKSUMS\n"
        f"  rack (3.1.8) sha256={sha()}\n  rails (7.2.1) sha256={sha()}\n  nokogiri (1.16.7-x86_64-linux) sha256={sha()}\n\n"
        "BUNDLED WITH\n   2.5.22\n")
    neg("r5-ecosystem-lock", "Pipfile.lock", json.dumps({
        "_meta": {"hash": {"sha256": sha()}, "pipfile-spec": 6, "requires": {"python_version": "3.12"},
                  "sources": [{"name": "pypi", "url": "https://pypi.org/simple", "verify_ssl": True}]},
        "default": {p: {"hashes": [f"sha256:{sha()}", f"sha256:{sha()}"], "index": "pypi", "version": f"=={ver()}"}
                    for p in ("requests", "pydantic", "sqlalchemy")}}, indent=4))
    neg("r5-ecosystem-lock", "pubspec.lock",
        "# Generated by pub\n# See https://dart.dev/tools/pub/glossary#lockfile\npackages:\n" + "".join(
            f"  {p}:\n    dependency: \"direct main\"\n    description:\n      name: {p}\n"
            f"      sha256: \"{sha()}\"\n      url: \"https://pub.dev\"\n    source: hosted\n    version: \"{ver()}\"\n"
            for p in ("http", "provider", "intl")) + "sdks:\n  dart: \">=3.4.0 <4.0.0\"\n")
    neg("r5-ecosystem-lock", "deno.lock", json.dumps({
        "version": "4", "specifiers": {"jsr:@std/assert@1": "1.0.8", "npm:zod@3": "3.23.8"},
        "jsr": {"@std/assert@1.0.8": {"integrity": sha()}},
        "npm": {"zod@3.23.8": {"integrity": sri()}},
        "remote": {f"https://deno.land/std@0.224.0/{m}.ts": sha() for m in ("path/mod", "fs/mod", "http/server")}}, indent=2))
    neg("r5-ecosystem-lock", "uv.lock",
        "version = 1\nrequires-python = \">=3.12\"\n\n" + "".join(
            f'[[package]]\nname = "{p}"\nversion = "{v}"\nsource = {{ registry = "https://pypi.org/simple" }}\n'
            f'sdist = {{ url = "https://files.pythonhosted.org/packages/{hexs(2)}/{hexs(2)}/{hexs(60)}/{p}-{v}.tar.gz", hash = "sha256:{sha()}", size = {R.randint(10**4, 10**6)} }}\n'
            f'wheels = [\n    {{ url = "https://files.pythonhosted.org/packages/{hexs(2)}/{hexs(2)}/{hexs(60)}/{p}-{v}-py3-none-any.whl", hash = "sha256:{sha()}", size = {R.randint(10**4, 10**6)} }},\n]\n\n'
            for p, v in (("anyio", ver()), ("httpx", ver()))))
    neg("r5-ecosystem-lock", "Manifest.toml",
        "# This file is machine-generated - editing it directly is not advised\n\njulia_version = \"1.10.4\"\nmanifest_format = \"2.0\"\n"
        f"project_hash = \"{sha('sha1')}\"\n\n" + "".join(
            f'[[deps.{p}]]\ndeps = ["Dates"]\ngit-tree-sha1 = "{sha("sha1")}"\nuuid = "{uid()}"\nversion = "{ver()}"\n\n'
            for p in ("JSON3", "DataFrames", "HTTP")))
    neg("r5-ecosystem-lock", "renv.lock", json.dumps({
        "R": {"Version": "4.4.1", "Repositories": [{"Name": "CRAN", "URL": "https://cloud.r-project.org"}]},
        "Packages": {p: {"Package": p, "Version": ver(), "Source": "Repository", "Repository": "CRAN",
                         "Hash": hashlib.md5(p.encode()).hexdigest()} for p in ("dplyr", "ggplot2", "jsonlite")}}, indent=2))
    neg("r5-ecosystem-lock", "vcpkg.json", json.dumps({
        "name": "orders-native", "version-string": "1.4.0", "builtin-baseline": sha("sha1"),
        "dependencies": ["openssl", "zlib", {"name": "curl", "features": ["ssl"]}],
        "overrides": [{"name": "fmt", "version": "10.2.1"}]}, indent=2))
    # r5-precommit-pins: frozen hook revisions are commits of public repos (none).
    neg("r5-precommit-pins", ".pre-commit-config.yaml",
        "repos:\n" + "".join(
            f"  - repo: https://github.com/{r}\n    rev: {sha('sha1')}  # frozen: v{ver()}\n    hooks:\n      - id: {h}\n"
            for r, h in (("pre-commit/pre-commit-hooks", "check-yaml"), ("psf/black", "black"),
                         ("astral-sh/ruff-pre-commit", "ruff"), ("gitleaks/gitleaks", "gitleaks"))))

    # r5-k8s-manifest: a kustomization with image digests and hashed
    # generator names, an Argo CD app pinned to a commit, a Flux status with
    # its revision, and a ConfigMap holding a config file (none).
    neg("r5-k8s-manifest", "deploy/overlays/prod/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: orders\nresources:\n  - ../../base\n"
        "images:\n  - name: ghcr.io/acme/orders\n    newTag: 1.4.0\n"
        f"    digest: sha256:{sha()}\n  - name: ghcr.io/acme/orders-migrate\n    digest: sha256:{sha()}\n"
        "configMapGenerator:\n  - name: orders-config\n    envs: [config.env]\nsecretGenerator:\n  - name: orders-secrets\n"
        "    envs: [secrets.env]   # not committed; created by the pipeline\n"
        f"patches:\n  - target:\n      kind: Deployment\n      name: orders\n    patch: |-\n      - op: replace\n"
        f"        path: /spec/template/spec/volumes/0/configMap/name\n        value: orders-config-{rs(10, 'bcdfghkmt2456789')}\n")
    neg("r5-k8s-manifest", "argocd/apps/orders.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: orders\n  namespace: argocd\n"
        "spec:\n  project: default\n  source:\n    repoURL: https://github.com/acme/deploy.git\n"
        f"    targetRevision: {sha('sha1')}\n    path: apps/orders\n  destination:\n    server: https://kubernetes.default.svc\n"
        f"    namespace: orders\nstatus:\n  sync:\n    revision: {sha('sha1')}\n    status: Synced\n")
    neg("r5-k8s-manifest", "clusters/prod/flux-system/gotk-sync.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\n"
        "spec:\n  interval: 1m0s\n  ref:\n    branch: main\n  secretRef:\n    name: flux-system\n  url: ssh://git@github.com/acme/fleet\n"
        f"status:\n  artifact:\n    digest: sha256:{sha()}\n    revision: main@sha1:{sha('sha1')}\n"
        f"    url: http://source-controller.flux-system.svc.cluster.local./gitrepository/flux-system/flux-system/{sha('sha1')}.tar.gz\n")
    neg("r5-k8s-manifest", "deploy/base/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: orders-nginx\ndata:\n  nginx.conf: |\n"
        "    upstream orders { server 127.0.0.1:8080; keepalive 32; }\n    server {\n      listen 80;\n"
        "      location / {\n        proxy_set_header Authorization $http_authorization;\n        proxy_set_header X-Request-Id $request_id;\n"
        "        proxy_pass http://orders;\n      }\n    }\n  application.yaml: |\n    spring:\n      datasource:\n"
        "        url: jdbc:postgresql://orders-db:5432/orders\n        username: ${DB_USER}\n        password: ${DB_PASSWORD}\n"
        f"    acme:\n      token-cache-key-prefix: orders-token-cache-\n      build-sha: {sha('sha1')}\n")

    # r5-ci-cache: CI configs whose cache keys are templates or lockfile
    # hashes, and SSH key *fingerprints* naming deploy keys (none).
    neg("r5-ci-cache", ".circleci/config.yml",
        "version: 2.1\norbs:\n  node: circleci/node@5.2.0\njobs:\n  build:\n    docker:\n      - image: cimg/node:20.11\n"
        "    steps:\n      - checkout\n      - add_ssh_keys:\n          fingerprints:\n"
        f"            - \"{colon_hex(16, upper=False)}\"\n            - \"SHA256:{base64.b64encode(hashlib.sha256(rs(6).encode()).digest()).decode().rstrip('=')}\"\n"
        "      - restore_cache:\n          keys:\n            - v3-deps-{{ checksum \"package-lock.json\" }}\n            - v3-deps-\n"
        "      - run: npm ci\n      - save_cache:\n          key: v3-deps-{{ checksum \"package-lock.json\" }}\n          paths: [~/.npm]\n")
    neg("r5-ci-cache", "azure-pipelines.yml",
        "trigger: [main]\npool:\n  vmImage: ubuntu-latest\nvariables:\n  npm_config_cache: $(Pipeline.Workspace)/.npm\n"
        "  - group: orders-prod-secrets\nsteps:\n  - task: Cache@2\n    inputs:\n"
        "      key: 'npm | \"$(Agent.OS)\" | package-lock.json'\n      restoreKeys: |\n        npm | \"$(Agent.OS)\"\n"
        "      path: $(npm_config_cache)\n  - script: npm ci && npm run build\n    env:\n      SONAR_TOKEN: $(sonarToken)\n"
        f"  - task: AzureKeyVault@2\n    inputs:\n      azureSubscription: 'acme-prod ({uid()})'\n      KeyVaultName: orders-kv\n      SecretsFilter: 'db-password,api-key'\n")
    neg("r5-ci-cache", ".gitlab/ci/build.gitlab-ci.yml",
        "build:\n  stage: build\n  cache:\n    key:\n      files: [poetry.lock]\n      prefix: $CI_JOB_NAME\n    paths: [.venv/]\n"
        "  script:\n    - poetry install --no-root\n  artifacts:\n    reports:\n      dotenv: build.env\n"
        f"# last green pipeline cache: build-{sha('sha1')}-protected\n")
    # r5-buildkite-plugins: plugin pins and secrets references in Buildkite (none).
    neg("r5-ci-cache", ".buildkite/pipeline.yml",
        "steps:\n  - label: \":docker: build\"\n    plugins:\n"
        f"      - docker-compose#v5.4.1:\n          build: app\n          cache-from: app:ghcr.io/acme/orders:cache-{sha('sha1')[:12]}\n"
        "      - seek-oss/aws-sm#v2.3.2:\n          env:\n            NPM_TOKEN: prod/orders/npm-token\n"
        "    env:\n      BUILDKITE_PLUGIN_S3_CACHE_SAVE: \"true\"\n")

    # r5-i18n-bundle: ICU/FormatJS messages, Fluent, and Angular XLIFF whose
    # message ids are SHA-1 digests of the source text (none).
    neg("r5-i18n-bundle", "src/locale/messages.de.xlf",
        '<?xml version="1.0" encoding="UTF-8" ?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">\n'
        '  <file source-language="en" target-language="de" datatype="plaintext" original="ng2.template">\n    <body>\n' + "".join(
            f'      <trans-unit id="{sha("sha1")}" datatype="html">\n        <source>{s}</source>\n        <target>{t}</target>\n      </trans-unit>\n'
            for s, t in (("Generate a new API token", "Neues API-Token erzeugen"), ("Password", "Passwort"),
                         ("Your secret key was rotated", "Ihr geheimer Schlüssel wurde rotiert"))) +
        "    </body>\n  </file>\n</xliff>\n")
    neg("r5-i18n-bundle", "lang/compiled/en.json", json.dumps({
        rs(6, ALNUM + "+/"): [{"type": 0, "value": "Copy token"}] for _ in range(1)} | {
        "auth.apiKey.revealed": "Your API key: {key}. Store it now, it will not be shown again.",
        "auth.password.strength": "{score, select, 0 {Very weak} 1 {Weak} other {Strong}}",
        "settings.tokens.count": "{count, plural, one {# personal access token} other {# personal access tokens}}"}, indent=2,
        ensure_ascii=False))
    neg("r5-i18n-bundle", "locales/en-US/main.ftl",
        "login-password = Password\n    .placeholder = At least 12 characters\napi-token-created = Token { $name } created. Copy it now.\n"
        "secret-key-label = Secret key\nsecret-key-help =\n    Keep this key private. Anyone with it can act as { $org }.\n")

    # r5-css-svg: CSS modules class hashes, Figma-exported SVG with long path
    # data and gradient ids, and a CSS custom-property theme (none).
    neg("r5-css-svg", "src/icons/logo.svg",
        '<svg width="120" height="32" viewBox="0 0 120 32" fill="none" xmlns="http://www.w3.org/2000/svg">\n'
        f'<g clip-path="url(#clip0_{R.randint(1000, 9999)}_{R.randint(1000, 9999)})">\n'
        '<path fill-rule="evenodd" clip-rule="evenodd" d="' + " ".join(
            f"M{R.randint(0, 120)}.{R.randint(0, 999)} {R.randint(0, 32)}.{R.randint(0, 999)}C{R.randint(0, 120)}.{R.randint(0, 99)} "
            f"{R.randint(0, 32)}.{R.randint(0, 99)} {R.randint(0, 120)} {R.randint(0, 32)}.{R.randint(0, 9)}Z" for _ in range(6)) +
        f'" fill="url(#paint0_linear_{R.randint(1000, 9999)}_{R.randint(1000, 9999)})"/>\n</g>\n<defs>\n'
        '<linearGradient id="paint0_linear" x1="0" y1="0" x2="120" y2="32" gradientUnits="userSpaceOnUse">\n'
        f'<stop stop-color="#{hexs(6)}"/>\n<stop offset="1" stop-color="#{hexs(6)}"/>\n</linearGradient>\n</defs>\n</svg>\n')
    neg("r5-css-svg", "dist/assets/index.module.css",
        "".join(f".Button_{n}__{rs(5, ALNUM + '_-')}{{padding:.5rem 1rem;border-radius:6px}}\n" for n in ("primary", "secondary", "danger")) +
        f":root{{--color-brand:#{hexs(6)};--shadow-token:0 1px 2px rgba(0,0,0,.2);--font-secret-mono:'JetBrains Mono'}}\n"
        f".TokenField_masked__{rs(5, ALNUM)}{{-webkit-text-security:disc;font-family:var(--font-secret-mono)}}\n")

    # r5-inline-wasm: a WebAssembly module inlined as base64 (starts with
    # the `\0asm` magic) in a vendored JS file (none).
    wasm = base64.b64encode(b"\x00asm\x01\x00\x00\x00" + bytes(R.getrandbits(8) for _ in range(300))).decode()
    neg("r5-inline-wasm", "vendor/argon2-browser/argon2-bundled.min.js",
        f'var Module=typeof Module!="undefined"?Module:{{}};var wasmBinaryBase64="{wasm}";'
        'function decode(b){return Uint8Array.from(atob(b),function(c){return c.charCodeAt(0)})}'
        'Module.wasmBinary=decode(wasmBinaryBase64);\n')
    # r5-resx-blob: a .NET resource file with a base64 icon (none).
    ico = base64.b64encode(b"\x00\x00\x01\x00\x01\x00\x10\x10\x00\x00\x01\x00\x20\x00" + bytes(R.getrandbits(8) for _ in range(240))).decode()
    neg("r5-resx-blob", "src/Orders.Desktop/MainForm.resx",
        '<?xml version="1.0" encoding="utf-8"?>\n<root>\n  <data name="ApiKeyLabel.Text" xml:space="preserve">\n    <value>API key</value>\n  </data>\n'
        '  <data name="$this.Icon" type="System.Drawing.Icon, System.Drawing" mimetype="application/x-microsoft.net.object.bytearray.base64">\n'
        f"    <value>\n        {wrap(ico, 76)}\n</value>\n  </data>\n</root>\n")
    # r5-har-capture: a HAR capture of public assets: base64 response bodies
    # and cache validators, no cookies or auth (none).
    gif = base64.b64encode(b"GIF89a\x01\x00\x01\x00\x80\x00\x00" + bytes(R.getrandbits(8) for _ in range(60))).decode()
    neg("r5-har-capture", "tests/fixtures/landing.har", json.dumps({"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "131.0"},
        "entries": [{"request": {"method": "GET", "url": "https://cdn.acme.io/img/pixel.gif", "headers": [{"name": "Accept", "value": "image/*"}]},
                     "response": {"status": 200, "headers": [{"name": "etag", "value": f'W/"{hexs(32)}"'},
                                                              {"name": "x-amz-version-id", "value": rs(32, B64URL)}],
                                  "content": {"mimeType": "image/gif", "encoding": "base64", "text": gif}}}]}}, indent=2))
    # r5-email-attachment: a transactional-email fixture with a base64 PDF
    # attachment (none).
    pdf = base64.b64encode(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\n" + bytes(R.getrandbits(8) for _ in range(150))).decode()
    neg("r5-email-attachment", "tests/fixtures/invoice_email.json", json.dumps({
        "personalizations": [{"to": [{"email": "billing@acme.io"}]}], "from": {"email": "noreply@acme.io"},
        "subject": "Invoice INV-2026-0042", "attachments": [{"content": pdf, "type": "application/pdf",
                                                             "filename": "INV-2026-0042.pdf", "content_id": f"inv{hexs(8)}"}]}, indent=2))

    # r5-test-fake-values: test code with obviously fake credentials (fake,
    # dummy, not-a-real, all-zero, repeated), Stripe's published docs test
    # key, and an unsigned `alg: none` JWT (none: none of them opens anything).
    none_jwt = (base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').decode().rstrip("=") + "." +
                base64.urlsafe_b64encode(b'{"sub":"user-42","role":"admin","exp":4102444800}').decode().rstrip("=") + ".")
    neg("r5-test-fake-values", "tests/conftest.py",
        "import pytest\n\nFAKE_STRIPE_KEY = \"sk_test_4eC39HqLyjWDarjtT1zdp7dc\"  # Stripe's documentation test key\n"
        "DUMMY_GITHUB_TOKEN = \"ghp_\" + \"0\" * 36\n"
        "NOT_A_REAL_PASSWORD = \"not-a-real-password\"\n\n\n@pytest.fixture\ndef settings(monkeypatch):\n"
        "    monkeypatch.setenv(\"STRIPE_SECRET_KEY\", FAKE_STRIPE_KEY)\n    monkeypatch.setenv(\"GITHUB_TOKEN\", DUMMY_GITHUB_TOKEN)\n"
        "    monkeypatch.setenv(\"DB_PASSWORD\", NOT_A_REAL_PASSWORD)\n"
        "    monkeypatch.setenv(\"HMAC_KEY\", \"00\" * 32)\n    return Settings()\n")
    neg("r5-test-fake-values", "src/__tests__/auth.test.ts",
        "import { verify } from '../auth';\n\n"
        f"const UNSIGNED = '{none_jwt}';\n"
        "const FAKE_API_KEY = 'fake-api-key-for-unit-tests';\nconst MOCK_REFRESH_TOKEN = 'mock-refresh-token-0001';\n\n"
        "describe('verify', () => {\n  it('rejects alg none', () => expect(() => verify(UNSIGNED)).toThrow());\n"
        "  it('rejects an unknown key', () => expect(verify('Bearer ' + FAKE_API_KEY)).toBe(false));\n"
        "  it('rejects a refresh token as access token', () => expect(verify(MOCK_REFRESH_TOKEN)).toBe(false));\n});\n")
    neg("r5-test-fake-values", "spec/factories/users.rb",
        "FactoryBot.define do\n  factory :user do\n    sequence(:email) { |n| \"user#{n}@example.com\" }\n"
        "    password { \"Passw0rd!\" }\n    password_confirmation { password }\n"
        "    api_token { \"test_token_#{SecureRandom.hex(4)}\" }\n  end\nend\n")
    neg("r5-test-fake-values", "internal/billing/client_test.go",
        "package billing\n\nimport \"testing\"\n\nconst (\n\ttestAPIKey    = \"sk_test_0000000000000000000000000000\"\n"
        "\ttestWebhookSecret = \"whsec_test_secret\"\n\tdummyAccessKey = \"AKIAXXXXXXXXXXXXXXXX\"\n)\n\n"
        "func TestClientRejectsEmptyKey(t *testing.T) {\n\tif _, err := NewClient(\"\"); err == nil {\n\t\tt.Fatal(\"want error\")\n\t}\n"
        "\tif _, err := NewClient(testAPIKey); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n")

    # r5-doc-howto: docs that show how to set a secret, with placeholders,
    # shell expansions and generators in place of values (none).
    neg("r5-doc-howto", "docs/deploy.rst",
        "Configuring credentials\n=======================\n\nSet the key in your shell before running the CLI::\n\n"
        "    export ACME_API_KEY=<your key>\n    export ACME_API_SECRET=\"${ACME_API_SECRET:?missing}\"\n\n"
        "On Heroku::\n\n    heroku config:set STRIPE_SECRET_KEY=sk_live_... --app orders\n\n"
        "In Kubernetes, generate a random password at creation time::\n\n"
        "    kubectl create secret generic orders-db --from-literal=password=\"$(openssl rand -base64 32)\"\n\n"
        "With GitHub Actions::\n\n    gh secret set NPM_TOKEN --body \"$NPM_TOKEN\"\n\n"
        ".. code-block:: python\n\n    api_key = os.environ[\"ACME_API_KEY\"]\n    client = acme.Client(api_key=api_key)\n")
    neg("r5-doc-howto", "docs/setup.adoc",
        "= Setup\n\n== Secrets\n\n[source,powershell]\n----\n$env:ACME_TOKEN = Read-Host -AsSecureString 'Token'\n"
        "[Environment]::SetEnvironmentVariable('ACME_TOKEN', $null, 'User')\n----\n\n"
        "[source,bash]\n----\nvault kv put secret/orders api_key=@api_key.txt\n"
        "aws configure set aws_secret_access_key \"$AWS_SECRET_ACCESS_KEY\" --profile orders\n"
        "docker run -e API_KEY=\"$API_KEY\" -e DB_PASSWORD ghcr.io/acme/orders:1.4.0\n"
        "echo \"SESSION_SECRET=$(head -c 32 /dev/urandom | base64)\" >> .env\n----\n")
    neg("r5-doc-howto", "man/acmectl-login.1",
        ".TH ACMECTL-LOGIN 1 \"November 2026\"\n.SH NAME\nacmectl-login \\- store an API token\n.SH SYNOPSIS\n"
        ".B acmectl login\n[\\fB\\-\\-token\\fR \\fITOKEN\\fR] [\\fB\\-\\-password\\-stdin\\fR]\n.SH EXAMPLES\n"
        ".nf\necho \"$ACME_TOKEN\" | acmectl login \\-\\-password\\-stdin\nacmectl login \\-\\-token \"$(pass show acme/token)\"\n.fi\n")

    # r5-masked-values: values masked by tools, logs and dashboards: bullets,
    # asterisks, `[FILTERED]`, `(sensitive value)`, a key shown only by its
    # prefix and last four (none).
    neg("r5-masked-values", "log/production.log.sample",
        "Started POST \"/users/sign_in\" for 10.0.3.7 at 2026-11-03 10:12:07 +0000\n"
        "Processing by Users::SessionsController#create as HTML\n"
        "  Parameters: {\"authenticity_token\"=>\"[FILTERED]\", \"user\"=>{\"email\"=>\"ops@acme.io\", \"password\"=>\"[FILTERED]\"}}\n"
        "  Parameters: {\"api_key\"=>\"[FILTERED]\", \"client_secret\"=>\"[FILTERED]\"}\nCompleted 302 Found in 41ms\n")
    neg("r5-masked-values", "docs/terraform-plan.txt",
        "  # aws_db_instance.orders will be updated in-place\n  ~ resource \"aws_db_instance\" \"orders\" {\n"
        "      ~ password = (sensitive value)\n        username = \"orders\"\n    }\n\n"
        "  # random_password.api will be created\n  + resource \"random_password\" \"api\" {\n"
        "      + result  = (sensitive value)\n      + bcrypt_hash = (sensitive value)\n      + length = 32\n    }\n"
        "Changes to Outputs:\n  ~ api_token = (sensitive value)\n")
    neg("r5-masked-values", "docs/api-keys.md",
        "## Your keys\n\n| Name | Key | Created |\n|---|---|---|\n"
        f"| production | `sk_live_••••••••••••••••{R.randint(1000, 9999)}` | 2026-10-01 |\n"
        f"| ci | `sk-proj-...{rs(4, ALNUM)}` | 2026-10-11 |\n| legacy | `AKIA************{rs(4, UP + DIG)}` | 2024-02-03 |\n"
        "| webhook | `whsec_●●●●●●●●●●●●●●●●` | 2026-11-02 |\n| admin | `ghp_####################################` | 2026-11-02 |\n\n"
        "The full value is shown once, when the key is created.\n")
    neg("r5-masked-values", "ci/output/helm-upgrade.log",
        "Release \"orders\" has been upgraded. Happy Helming!\nNAME: orders\nLAST DEPLOYED: Tue Nov  3 10:12:07 2026\n"
        "USER-SUPPLIED VALUES:\npostgresql:\n  auth:\n    password: '*****'\n    postgresPassword: '*****'\n"
        "stripe:\n  secretKey: <redacted>\n  webhookSecret: REDACTED\n")

    # r5-public-keys: OpenSSH public keys with options and certificate
    # authorities, an age recipients file, a signify key, and an Apache
    # KEYS file (public keys are meant to be shared) (none).
    neg("r5-public-keys", "ansible/roles/base/files/authorized_keys",
        f'command="/usr/local/bin/backup-only",no-pty,no-port-forwarding {ssh_pub()} backup@nas\n'
        f'from="10.0.0.0/8" {ssh_pub("ssh-rsa")} ops@laptop\n{ssh_pub()} deploy@ci\n')
    neg("r5-public-keys", "ansible/roles/base/files/ssh_known_ca",
        f"@cert-authority *.acme.io {ssh_pub()} acme-host-ca\n@revoked * {ssh_pub()} old-ci\n")
    neg("r5-public-keys", "secrets/.age-recipients",
        f"# ops team\n{age_recipient()}\n{age_recipient()}\n# ci (ssh key)\n{ssh_pub()} ci@acme\n")
    neg("r5-public-keys", "release/acme.pub",
        "untrusted comment: signify public key\n"
        + base64.b64encode(b"Ed" + bytes(R.getrandbits(8) for _ in range(40))).decode() + "\n")
    pgp_pub = b64_bytes(420)
    neg("r5-public-keys", "KEYS",
        "This file contains the PGP keys of developers who sign releases.\n\n"
        f"pub   rsa4096 2021-03-02 [SC]\n      {rs(40, '0123456789ABCDEF')}\nuid           [ultimate] Ada Ops <ops@acme.io>\n"
        f"sub   rsa4096 2021-03-02 [E]\n\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{wrap('mQINBG' + pgp_pub)}\n={b64_bytes(3)}\n"
        "-----END PGP PUBLIC KEY BLOCK-----\n")
    # r5-cert-pins: public-key pins (HPKP, OkHttp, Android network security
    # config) are hashes of public keys (none).
    def pin():
        return base64.b64encode(hashlib.sha256(rs(12).encode()).digest()).decode()
    neg("r5-cert-pins", "app/src/main/res/xml/network_security_config.xml",
        '<?xml version="1.0" encoding="utf-8"?>\n<network-security-config>\n  <domain-config>\n'
        '    <domain includeSubdomains="true">api.acme.io</domain>\n    <pin-set expiration="2027-01-01">\n'
        f'      <pin digest="SHA-256">{pin()}</pin>\n      <pin digest="SHA-256">{pin()}</pin>\n'
        "    </pin-set>\n  </domain-config>\n</network-security-config>\n")
    neg("r5-cert-pins", "app/src/main/java/com/acme/net/Http.kt",
        "package com.acme.net\n\nimport okhttp3.CertificatePinner\nimport okhttp3.OkHttpClient\n\n"
        "val pinner = CertificatePinner.Builder()\n"
        f"    .add(\"api.acme.io\", \"sha256/{pin()}\")\n    .add(\"api.acme.io\", \"sha256/{pin()}\")\n    .build()\n\n"
        "val client = OkHttpClient.Builder().certificatePinner(pinner).build()\n")
    # r5-app-links: Android asset links (signing-certificate fingerprints),
    # Apple app-site association (team-prefixed app ids) (none).
    neg("r5-app-links", "public/.well-known/assetlinks.json", json.dumps([{
        "relation": ["delegate_permission/common.handle_all_urls"],
        "target": {"namespace": "android_app", "package_name": "io.acme.orders",
                   "sha256_cert_fingerprints": [colon_hex(32), colon_hex(32)]}}], indent=2))
    neg("r5-app-links", "public/.well-known/apple-app-site-association", json.dumps({
        "applinks": {"details": [{"appIDs": [f"{rs(10, UP + DIG)}.io.acme.orders"], "components": [{"/": "/orders/*"}]}]},
        "webcredentials": {"apps": [f"{rs(10, UP + DIG)}.io.acme.orders"]}}, indent=2))
    # r5-p2p-ids: enode URLs, libp2p peer ids and IPFS CIDs are public node
    # keys and content hashes (none).
    neg("r5-p2p-ids", "config/bootnodes.toml",
        "[p2p]\nbootnodes = [\n" + "".join(f'  "enode://{hexs(128)}@{R.randint(1, 223)}.{R.randint(0, 255)}.{R.randint(0, 255)}.{R.randint(1, 254)}:30303",\n' for _ in range(2)) +
        "]\nlibp2p_bootstrap = [\n" + "".join(f'  "/dnsaddr/bootstrap.libp2p.io/p2p/{peer_id()}",\n' for _ in range(2)) +
        f"]\n[assets]\nlogo_cid = \"bafybei{rs(52, 'abcdefghijklmnopqrstuvwxyz234567')}\"\nlegacy_cid = \"{cid_v0()}\"\n")

    # r5-grafana-dashboard: dashboard and datasource uids in exported
    # dashboards (none).
    neg("r5-grafana-dashboard", "grafana/dashboards/orders.json", json.dumps({
        "uid": rs(14, LOW + DIG), "title": "Orders", "version": 12,
        "panels": [{"id": 2, "type": "timeseries", "title": "Token refresh errors",
                    "datasource": {"type": "prometheus", "uid": "P" + rs(15, "0123456789ABCDEF")},
                    "targets": [{"expr": "sum(rate(auth_token_refresh_errors_total[5m]))", "refId": "A"}]}],
        "templating": {"list": [{"name": "ds", "type": "datasource", "query": "prometheus",
                                 "current": {"text": "Mimir", "value": rs(14, LOW + DIG)}}]}}, indent=2))
    # r5-installer-guids: WiX product/upgrade codes and component GUIDs (none).
    neg("r5-installer-guids", "installer/Product.wxs",
        '<Wix xmlns="http://wixtoolset.org/schemas/v4/wxs">\n'
        f'  <Package Name="Acme Orders" Manufacturer="Acme" Version="1.4.0.0" UpgradeCode="{uid().upper()}">\n'
        '    <StandardDirectory Id="ProgramFiles6432Folder">\n      <Directory Id="INSTALLFOLDER" Name="Acme Orders">\n'
        f'        <Component Id="MainExe" Guid="{uid().upper()}">\n          <File Source="Orders.exe" KeyPath="yes" />\n        </Component>\n'
        "      </Directory>\n    </StandardDirectory>\n  </Package>\n</Wix>\n")
    # r5-unreal-ids: Unreal project ids and asset-registry GUIDs (none).
    neg("r5-unreal-ids", "Config/DefaultGame.ini",
        "[/Script/EngineSettings.GeneralProjectSettings]\n"
        f"ProjectID={rs(32, '0123456789ABCDEF')}\nProjectName=Warehouse Sim\nCompanyName=Acme\n\n"
        "[/Script/UnrealEd.ProjectPackagingSettings]\nBuildConfiguration=PPBC_Shipping\n"
        f"+DirectoriesToAlwaysCook=(Path=\"/Game/Maps\")\nDefaultMapGuid={rs(32, '0123456789ABCDEF')}\n")
    # r5-ble-uuids: Bluetooth service and characteristic UUIDs in firmware
    # (public protocol identifiers) (none).
    neg("r5-ble-uuids", "firmware/src/ble_service.h",
        "#pragma once\n/* Nordic UART service and the Heart Rate service (Bluetooth SIG). */\n"
        "#define BT_UUID_NUS_VAL BT_UUID_128_ENCODE(0x6e400001, 0xb5a3, 0xf393, 0xe0a9, 0xe50e24dcca9e)\n"
        "#define HRS_SERVICE_UUID \"0000180d-0000-1000-8000-00805f9b34fb\"\n"
        f"#define ACME_TOKEN_CHAR_UUID \"{uid()}\"\n#define ACME_SECRET_CHAR_UUID_BYTES {{ " +
        ", ".join(f"0x{R.getrandbits(8):02x}" for _ in range(16)) + " }\n")

    # r5-migration-checksum: sqlx offline query data and an Atlas sum file
    # (hashes of public SQL) (none).
    q = "SELECT id, status, total FROM orders WHERE id = $1"
    qh = hashlib.sha256(q.encode()).hexdigest()
    neg("r5-migration-checksum", f".sqlx/query-{qh}.json", json.dumps({
        "db_name": "PostgreSQL", "query": q, "describe": {"columns": [{"ordinal": 0, "name": "id", "type_info": "Uuid"}],
                                                           "parameters": {"Left": ["Uuid"]}, "nullable": [False]},
        "hash": qh}, indent=2))
    neg("r5-migration-checksum", "migrations/atlas.sum",
        f"h1:{base64.b64encode(hashlib.sha256(rs(9).encode()).digest()).decode()}\n" + "".join(
            f"2026{R.randint(1000, 1299)}{R.randint(100000, 235959)}_{w}.sql h1:{base64.b64encode(hashlib.sha256(w.encode()).digest()).decode()}\n"
            for w in ("init", "add_api_keys", "add_password_resets")))
    # r5-hashed-token-column: SQL seeds storing *hashes* of API keys and
    # reset tokens with a visible prefix (a hash is not the key) (none).
    neg("r5-hashed-token-column", "db/seeds/002_api_keys.sql",
        "INSERT INTO api_keys (id, name, key_prefix, key_hash, created_at) VALUES\n" + ",\n".join(
            f"  ('{uid()}', '{w}', 'ak_live_{rs(4, LOW + DIG)}', '{sha()}', '2026-10-0{i}')" for i, w in enumerate(("ci", "reports"), 1)) +
        ";\nINSERT INTO password_reset_tokens (user_id, token_sha256, expires_at) VALUES\n"
        f"  (42, '{sha()}', now() + interval '15 minutes');\n")
    # r5-dvc-pointers: DVC pointer and lock files (md5 of data files) (none).
    neg("r5-dvc-pointers", "data/orders.csv.dvc",
        f"outs:\n- md5: {hexs(32)}\n  size: {R.randint(10**5, 10**9)}\n  hash: md5\n  path: orders.csv\n")
    neg("r5-dvc-pointers", "dvc.lock",
        "schema: '2.0'\nstages:\n  featurize:\n    cmd: python src/featurize.py\n    deps:\n"
        f"    - path: data/orders.csv\n      hash: md5\n      md5: {hexs(32)}\n      size: {R.randint(10**5, 10**9)}\n"
        f"    outs:\n    - path: data/features\n      hash: md5\n      md5: {hexs(32)}.dir\n      nfiles: 4\n")

    # r5-iac-references: Helm templates, Pulumi, CDK, Bicep, Serverless,
    # Ansible lookups, swarm secrets, systemd credentials, and secret-manager
    # paths/ARNs: references to secrets, never their values (none).
    neg("r5-iac-references", "charts/orders/templates/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ include \"orders.fullname\" . }}\ntype: Opaque\ndata:\n"
        "  db-password: {{ .Values.postgresql.auth.password | b64enc | quote }}\n"
        "  session-secret: {{ default (randAlphaNum 48) .Values.sessionSecret | b64enc | quote }}\n"
        "  {{- with .Values.stripe }}\n  stripe-key: {{ required \"stripe.secretKey is required\" .secretKey | b64enc }}\n  {{- end }}\n")
    neg("r5-iac-references", "infra/pulumi/index.ts",
        "import * as pulumi from '@pulumi/pulumi';\nimport * as aws from '@pulumi/aws';\n\nconst config = new pulumi.Config();\n"
        "const dbPassword = config.requireSecret('dbPassword');\n"
        "const apiKeySecret = aws.secretsmanager.getSecretVersionOutput({ secretId: 'prod/orders/api-key' });\n"
        "export const db = new aws.rds.Instance('orders', { username: 'orders', password: dbPassword, instanceClass: 'db.t4g.small' });\n"
        "export const apiKey = apiKeySecret.secretString;\n")
    neg("r5-iac-references", "infra/cdk/lib/orders-stack.ts",
        "const dbSecret = secretsmanager.Secret.fromSecretNameV2(this, 'DbSecret', 'prod/orders/db');\n"
        "new ecs.FargateTaskDefinition(this, 'Task').addContainer('app', {\n  image: ecs.ContainerImage.fromRegistry('ghcr.io/acme/orders:1.4.0'),\n"
        "  secrets: {\n    DB_PASSWORD: ecs.Secret.fromSecretsManager(dbSecret, 'password'),\n"
        "    API_TOKEN: ecs.Secret.fromSsmParameter(ssm.StringParameter.fromSecureStringParameterAttributes(this, 'Tok', { parameterName: '/prod/orders/api_token' })),\n"
        "  },\n});\nconst signingKey = cdk.SecretValue.secretsManager('prod/orders/signing-key');\n")
    neg("r5-iac-references", "infra/main.bicep",
        "@secure()\nparam adminPassword string\nparam keyVaultName string = 'orders-kv'\n\n"
        "resource kv 'Microsoft.KeyVault/vaults@2023-07-01' existing = {\n  name: keyVaultName\n}\n\n"
        "module sql 'sql.bicep' = {\n  name: 'sql'\n  params: {\n    administratorLoginPassword: kv.getSecret('sql-admin-password')\n"
        "    appPassword: adminPassword\n  }\n}\n")
    neg("r5-iac-references", "serverless.yml",
        "service: orders\nprovider:\n  name: aws\n  runtime: nodejs20.x\n  environment:\n"
        "    DB_PASSWORD: ${ssm:/aws/reference/secretsmanager/prod/orders/db~true}\n    STRIPE_SECRET_KEY: ${env:STRIPE_SECRET_KEY}\n"
        "    JWT_SECRET: ${self:custom.secrets.JWT_SECRET}\n"
        f"    API_KEY_SECRET_ARN: arn:aws:secretsmanager:eu-west-1:{R.randint(10**11, 10**12 - 1)}:secret:prod/orders/api-key-{rs(6, ALNUM)}\n"
        "custom:\n  secrets: ${file(./secrets.${opt:stage}.yml)}\n")
    neg("r5-iac-references", "ansible/group_vars/prod/main.yml",
        "db_user: orders\ndb_password: \"{{ vault_db_password }}\"\n"
        "api_token: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/orders:api_token') }}\"\n"
        "ssh_private_key_file: ~/.ssh/id_ed25519\ntls_key_path: /etc/ssl/private/orders.key\n"
        "smtp_password: \"{{ lookup('env', 'SMTP_PASSWORD') }}\"\n")
    neg("r5-iac-references", "stack/docker-stack.yml",
        "services:\n  api:\n    image: ghcr.io/acme/orders:1.4.0\n    secrets:\n      - db_password\n      - source: stripe_key\n"
        "        target: /run/secrets/stripe\n    environment:\n      DB_PASSWORD_FILE: /run/secrets/db_password\n"
        "secrets:\n  db_password:\n    external: true\n  stripe_key:\n    external: true\n")
    neg("r5-iac-references", "deploy/systemd/orders.service",
        "[Unit]\nDescription=Acme orders\n\n[Service]\nExecStart=/usr/local/bin/orders\nDynamicUser=yes\n"
        "LoadCredential=db-password:/etc/orders/credentials/db-password\nLoadCredentialEncrypted=api-token:/etc/orders/credentials/api-token.cred\n"
        "Environment=DB_PASSWORD_FILE=%d/db-password\nEnvironmentFile=-/etc/orders/orders.env\n\n[Install]\nWantedBy=multi-user.target\n")
    neg("r5-iac-references", "infra/gcp/run.tf",
        'resource "google_cloud_run_v2_service" "orders" {\n  name     = "orders"\n  location = "europe-west1"\n  template {\n    containers {\n'
        '      image = "europe-docker.pkg.dev/acme-prod/orders/api:1.4.0"\n      env {\n        name = "DB_PASSWORD"\n'
        '        value_source {\n          secret_key_ref {\n            secret  = google_secret_manager_secret.db_password.secret_id\n'
        '            version = "latest"\n          }\n        }\n      }\n    }\n  }\n}\n'
        f'# projects/{R.randint(10**11, 10**12 - 1)}/secrets/orders-db-password/versions/3\n')

    # r5-url-no-password: URLs and DSNs with a host, a user without password,
    # or a scoped path under credential-ish names (none).
    neg("r5-url-no-password", "config/services.yaml",
        "cache:\n  redis_url: redis://redis-master.cache.svc.cluster.local:6379/0\nqueue:\n  broker_url: amqp://rabbitmq.messaging:5672/%2Forders\n"
        "mongo:\n  connection_string: mongodb://mongo-0.mongo:27017,mongo-1.mongo:27017/orders?replicaSet=rs0&authSource=admin\n"
        "oauth:\n  token_endpoint: https://login.acme.io/oauth2/v2.0/token\n  jwks_uri: https://login.acme.io/.well-known/jwks.json\n"
        "git:\n  secrets_repo: git@github.com:acme/secrets-config.git\n  credentials_helper: ssh://git@git.acme.io:2222/ops/credentials.git\n"
        "npm:\n  auth_registry: https://registry.npmjs.org/@acme%2fauth-client\n  token_url: https://npm.pkg.github.com/@acme/token-client\n")
    neg("r5-url-no-password", "src/db/config.go",
        "package db\n\nconst (\n\tprimaryDSN  = \"postgres://orders@db-primary.internal:5432/orders?sslmode=verify-full\"\n"
        "\treplicaDSN  = \"postgres://db-replica.internal:5432/orders?sslmode=verify-full&application_name=orders-ro\"\n"
        "\tvaultAddr   = \"https://vault.acme.io:8200/v1/auth/kubernetes/login\"\n"
        "\ttokenReviewURL = \"https://kubernetes.default.svc/apis/authentication.k8s.io/v1/tokenreviews\"\n)\n")

    # r5-release-notes: GitHub release notes, conventional-changelog links,
    # Gerrit Change-Id trailers and a pasted `git log` (commit ids) (none).
    neg("r5-release-notes", "docs/releases/v1.4.0.md",
        "## What's Changed\n" + "".join(
            f"* {t} by @{u} in https://github.com/acme/orders/pull/{R.randint(100, 999)}\n"
            for t, u in (("Rotate webhook signing secret without downtime", "ada"), ("Stop logging the access token", "lin"))) +
        "\n### Bug Fixes\n\n" + "".join(
            f"* **auth:** {t} ([{h[:7]}](https://github.com/acme/orders/commit/{h}))\n"
            for t, h in (("refresh token reuse detection", sha("sha1")), ("constant-time password comparison", sha("sha1")))) +
        "\n**Full Changelog**: https://github.com/acme/orders/compare/v1.3.2...v1.4.0\n")
    neg("r5-release-notes", "docs/dev/commit-message.txt",
        "auth: hash API keys at rest\n\nStore sha256(key) instead of the key and compare in constant time.\n\n"
        f"Bug: 4812\nChange-Id: I{sha('sha1')}\nReviewed-on: https://review.acme.io/c/orders/+/{R.randint(10**4, 10**5)}\n"
        f"Signed-off-by: Ada Ops <ops@acme.io>\ngit-svn-id: https://svn.acme.io/repos/orders/trunk@48121 {uid()}\n")
    neg("r5-release-notes", "docs/dev/bisect.md",
        "## Where the token leak in logs came from\n\n```\n$ git log --oneline -4\n" + "".join(
            f"{sha('sha1')[:10]} {m}\n" for m in ("Redact tokens in request logs", "Log request headers for debugging",
                                                   "Bump secret-manager client", "Merge branch 'password-reset'")) +
        f"$ git rev-parse HEAD\n{sha('sha1')}\n```\n")

    # r5-generated-build: a static-export page with the framework's build id
    # and chunk hashes (public in every URL it serves) (none).
    neg("r5-generated-build", "out/index.html",
        '<!DOCTYPE html><html><head><meta charSet="utf-8"/>'
        f'<link rel="preload" href="/_next/static/css/{hexs(16)}.css" as="style"/>'
        f'<script src="/_next/static/chunks/pages/_app-{hexs(16)}.js" defer=""></script></head><body><div id="__next"></div>'
        f'<script id="__NEXT_DATA__" type="application/json">{{"props":{{"pageProps":{{}}}},"page":"/","query":{{}},"buildId":"{rs(21, B64URL)}","nextExport":true,"autoExport":true,"isFallback":false,"scriptLoader":[]}}</script></body></html>\n')

    # r5-algorithm-constants: SHA-256 round constants, an AES S-box prefix
    # and Keccak round constants as hex strings in a C source (none).
    neg("r5-algorithm-constants", "src/crypto/sha256.c",
        "/* FIPS 180-4 section 4.2.2 */\nstatic const uint32_t K[64] = {\n"
        "    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,\n};\n"
        "static const char *SBOX_HEX = \"637c777bf26b6fc53001672bfed7ab76ca82c97dfa5947f0add4a2af9ca472c0\";\n"
        "static const char *KECCAK_RC0_3 = \"000000000000000100000000000080820800000000008a8a8000000080008000\";\n"
        "static const char *SHA256_IV = \"6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19\";\n")


def round_five_positives():
    """Secrets in layouts no source has (recall guard for round 5). Every
    value is random from the fixed seed, assigned to a credential in
    non-test, non-example code or configuration."""
    pos("r5-go-struct-literal", "cmd/orders/main.go",
        "package main\n\nfunc main() {\n\tcfg := payments.Config{\n\t\tEndpoint: \"https://api.payments.acme.io\",\n"
        f"\t\tAPIKey:   \"{rs(40, ALNUM)}\",\n\t\tTimeout:  10 * time.Second,\n\t}}\n\trun(cfg)\n}}\n")
    pos("r5-rust-bearer", "src/bin/sync.rs",
        "fn main() -> anyhow::Result<()> {\n    let client = reqwest::blocking::Client::new();\n"
        f"    let resp = client.get(\"https://api.acme.io/v1/orders\").bearer_auth(\"{rs(48, ALNUM)}\").send()?;\n"
        "    println!(\"{}\", resp.status());\n    Ok(())\n}\n")
    pos("r5-csharp-connection", "src/Orders.Worker/Db.cs",
        "public static class Db\n{\n    public static SqlConnection Open() =>\n"
        f"        new SqlConnection(\"Server=sql.prod.internal;Database=orders;User Id=orders_worker;Password={pw()};TrustServerCertificate=True\");\n}}\n")
    pos("r5-java-props-put", "src/main/java/com/acme/orders/Mail.java",
        "Properties props = new Properties();\nprops.put(\"mail.smtp.host\", \"smtp.acme.io\");\n"
        f"props.put(\"mail.smtp.user\", \"mailer\");\nprops.put(\"mail.smtp.password\", \"{pw()}\");\n")
    pos("r5-gradle-credentials", "build.gradle.kts",
        "repositories {\n    maven {\n        url = uri(\"https://nexus.acme.io/repository/maven-releases/\")\n"
        f"        credentials {{\n            username = \"deploy\"\n            password = \"{pw()}\"\n        }}\n    }}\n}}\n")
    pos("r5-configmap-embedded", "deploy/base/app-configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: orders\ndata:\n  application.properties: |\n"
        "    spring.datasource.url=jdbc:postgresql://orders-db:5432/orders\n    spring.datasource.username=orders\n"
        f"    spring.datasource.password={pw()}\n")
    pos("r5-helm-set", "ci/deploy.sh",
        "#!/bin/sh\nset -eu\nhelm upgrade --install orders ./charts/orders \\\n  --namespace orders \\\n"
        f"  --set postgresql.auth.password={pw()} \\\n  --set image.tag=\"$TAG\"\n")
    pos("r5-ci-env-literal", ".circleci/config.yml",
        "version: 2.1\njobs:\n  deploy:\n    docker:\n      - image: cimg/base:2024.10\n    environment:\n"
        f"      DATADOG_API_KEY: {hexs(32)}\n    steps:\n      - run: ./deploy.sh\n")
    pos("r5-terraform-provider", "infra/providers.tf",
        'terraform {\n  required_providers {\n    cloudflare = { source = "cloudflare/cloudflare" }\n  }\n}\n\n'
        f'provider "cloudflare" {{\n  api_token = "{rs(40, B64URL)}"\n}}\n')
    pos("r5-vault-token", "ops/.vault-token", f"hvs.{rs(90, B64URL)}\n")
    pos("r5-systemd-env", "deploy/systemd/reports.service",
        "[Service]\nExecStart=/usr/local/bin/reports\n"
        f"Environment=\"REPORTS_API_SECRET={rs(32, ALNUM)}\"\nEnvironment=\"LOG_LEVEL=info\"\n")
    pos("r5-supervisor-env", "deploy/supervisord.conf",
        "[program:worker]\ncommand=/app/bin/worker\n"
        f"environment=DB_HOST=\"db.prod.internal\",DB_PASSWORD=\"{pw()}\",QUEUE=\"orders\"\n")
    pos("r5-nginx-header", "deploy/nginx/upstream.conf",
        "location /internal/ {\n    proxy_pass https://reports.acme.io/;\n"
        f"    proxy_set_header X-Api-Key \"{rs(36, ALNUM)}\";\n}}\n")
    pos("r5-haproxy-userlist", "deploy/haproxy.cfg",
        f"userlist stats_users\n    user admin insecure-password {pw()}\n\nlisten stats\n    bind :8404\n    stats enable\n    acl auth_ok http_auth(stats_users)\n")
    pos("r5-elixir-config", "config/prod.exs",
        "import Config\n\nconfig :orders, Orders.Repo,\n  username: \"orders\",\n"
        f"  password: \"{pw()}\",\n  hostname: \"db.prod.internal\"\n\n"
        f"config :orders, OrdersWeb.Endpoint,\n  secret_key_base: \"{rs(64, B64)}\"\n")
    pos("r5-symfony-parameters", "app/config/parameters.yml",
        "parameters:\n    database_host: db.prod.internal\n    database_user: orders\n"
        f"    database_password: {pw()}\n    secret: {hexs(40)}\n")
    pos("r5-aws-positional", "config/initializers/aws.rb",
        f"Aws.config.update(\n  region: 'eu-west-1',\n  credentials: Aws::Credentials.new('{akia()}', '{aws_secret()}')\n)\n")
    pos("r5-plist", "Orders/Secrets.plist",
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
        f'<plist version="1.0">\n<dict>\n\t<key>APIBaseURL</key>\n\t<string>https://api.acme.io</string>\n\t<key>APISecret</key>\n\t<string>{rs(40, ALNUM)}</string>\n</dict>\n</plist>\n')
    pos("r5-powershell-securestring", "scripts/Deploy.ps1",
        f"$password = ConvertTo-SecureString '{pw()}' -AsPlainText -Force\n"
        "$cred = New-Object System.Management.Automation.PSCredential ('ACME\\svc-deploy', $password)\n"
        "Invoke-Command -ComputerName app01 -Credential $cred -ScriptBlock { Restart-Service Orders }\n")
    pos("r5-dotnet-flat-keys", "src/Orders.Api/appsettings.Production.json", json.dumps({
        "Logging:LogLevel:Default": "Information", "Smtp:Host": "smtp.acme.io", "Smtp:Password": pw()}, indent=2))
    pos("r5-sql-create-user", "db/migrations/0007_reporting_role.sql",
        f"CREATE ROLE reporting LOGIN PASSWORD '{pw()}';\nGRANT SELECT ON ALL TABLES IN SCHEMA public TO reporting;\n")
    pos("r5-basic-auth-header", "scripts/export.sh",
        "#!/bin/sh\ncurl -fsS https://reports.acme.io/api/export \\\n"
        f"  -H \"Authorization: Basic {base64.b64encode(f'svc-export:{pw()}'.encode()).decode()}\" -o export.csv\n")


def main():
    for gen in (lockfiles, digests_and_hashes, ids, public_material, encrypted,
                references_and_placeholders, words_and_vocab, fixtures_and_vectors, encoded_config, positives, round_two, round_three,
                round_four, round_four_positives, round_five, round_five_positives):
        gen()
    path = os.path.join(HERE, "generator3.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for label, cls, p, ext, text in CASES:
            # Round 4 is its own source so its floor is held apart from
            # rounds 1-3's (its before-fix figure is the held-out evidence).
            # Round 5 likewise (`generator-3-r5`).
            source = ("generator-3-r4" if cls.startswith("r4-")
                      else "generator-3-r5" if cls.startswith("r5-") else "generator-3")
            f.write(json.dumps({"source": source, "class": cls, "label": label, "text": text,
                                "ext": ext, "path": p, "origin": f"make_hard_negatives.py seed {SEED}"},
                               ensure_ascii=False, sort_keys=True) + "\n")
    n_pos = sum(c[0] == "secret" for c in CASES)
    print(f"generator-3: {len(CASES)} cases ({n_pos} secret, {len(CASES) - n_pos} none)")


if __name__ == "__main__":
    main()
