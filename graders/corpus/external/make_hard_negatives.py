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


def main():
    for gen in (lockfiles, digests_and_hashes, ids, public_material, encrypted,
                references_and_placeholders, words_and_vocab, fixtures_and_vectors, encoded_config, positives, round_two, round_three):
        gen()
    path = os.path.join(HERE, "generator3.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for label, cls, p, ext, text in CASES:
            f.write(json.dumps({"source": "generator-3", "class": cls, "label": label, "text": text,
                                "ext": ext, "path": p, "origin": f"make_hard_negatives.py seed {SEED}"},
                               ensure_ascii=False, sort_keys=True) + "\n")
    n_pos = sum(c[0] == "secret" for c in CASES)
    print(f"generator-3: {len(CASES)} cases ({n_pos} secret, {len(CASES) - n_pos} none)")


if __name__ == "__main__":
    main()
