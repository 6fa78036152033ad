#!/usr/bin/env python3
"""Blind adversarial corpus, round 2 (generator-5).

Written without reading the scanner's source or the other corpus files.
Deterministic: fixed seed, stdlib only. Writes generator5.jsonl next to
this script. Each case is a whole, realistic file; "secret" cases hold
exactly one real-looking secret (hard negatives may sit beside it), "none"
cases hold no real secret at all.

    python3 make_blind_round2.py
"""

import base64
import hashlib
import json
import os
import random
import string
import struct
import urllib.parse
import uuid
import zlib

SEED = 50527
R = random.Random(SEED)
ORIGIN = f"make_blind_round2.py seed {SEED}"

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


def rs(alpha, n):
    return "".join(R.choice(alpha) for _ in range(n))


def pick(xs):
    return R.choice(xs)


def ruuid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def b64(b):
    return base64.b64encode(b).decode()


def b64u(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def password():
    """Random non-word password with mixed classes."""
    while True:
        p = rs(ALNUM + "!#%^*-_+=.", R.randint(16, 26))
        if (any(c in UP for c in p) and any(c in LO for c in p)
                and any(c in DIG for c in p)):
            return p


def sha40():
    return rs(HEX, 40)


# ---------------------------------------------------------------- issuers

def aws_id():
    return pick(["AKIA", "ASIA"]) + rs(UP + "234567", 16)


def aws_secret():
    return rs(ALNUM + "/+", 40)


def gh_token():
    kind = pick(["ghp_", "gho_", "ghs_", "ghu_", "pat"])
    if kind == "pat":
        return "github_pat_11" + rs(UP + DIG, 20) + "_" + rs(ALNUM, 59)
    return kind + rs(ALNUM, 36)


def gitlab_token():
    return pick(["glpat-", "glptt-", "gldt-"]) + rs(ALNUM + "_-", 20)


def slack_token():
    return (pick(["xoxb-", "xoxp-"]) + str(R.randint(10**10, 10**12)) + "-"
            + str(R.randint(10**10, 10**12)) + "-" + rs(ALNUM, 24))


def slack_webhook():
    return ("https://hooks.slack.com/services/T" + rs(UP + DIG, 8) + "/B"
            + rs(UP + DIG, 10) + "/" + rs(ALNUM, 24))


def stripe_secret():
    return pick(["sk_live_", "rk_live_"]) + rs(ALNUM, pick([24, 99]))


def twilio_key():
    return "SK" + rs(HEX, 32)


def sendgrid():
    return "SG." + rs(B64URL, 22) + "." + rs(B64URL, 43)


def openai_key():
    return "sk-proj-" + rs(B64URL, 74) + "T3BlbkFJ" + rs(B64URL, 74)


def anthropic_key():
    return "sk-ant-api03-" + rs(B64URL, 93) + "AA"


def npm_token():
    return "npm_" + rs(ALNUM, 36)


def pypi_token():
    return "pypi-AgEIcHlwaS5vcmc" + rs(B64URL, R.randint(120, 160))


def shopify_token():
    return pick(["shpat_", "shpss_", "shpca_"]) + rs(HEX, 32)


def vault_token():
    return "hvs." + rs(ALNUM + "_-", 24)


def hf_token():
    return "hf_" + rs(UP + LO, 34)


def databricks_token():
    return "dapi" + rs(HEX, 32)


def mailgun_key():
    return "key-" + rs(HEX, 32)


def jwt():
    hdr = {"alg": pick(["HS256", "RS256"]), "typ": "JWT"}
    now = R.randint(1730000000, 1760000000)
    body = {
        "sub": str(R.randint(10000, 9999999)),
        "iss": pick(["https://auth.acme-cloud.io", "https://login.northwind.dev",
                     "https://id.globex.net/oauth2"]),
        "aud": pick(["api", "billing-service", "https://api.initech.com"]),
        "iat": now, "exp": now + pick([3600, 86400, 31536000]),
        "scope": pick(["read write", "admin", "orders:read orders:write"]),
        "email": pick(["ops", "deploy", "m.kowalski", "svc-ci"]) + "@"
        + pick(["acme-cloud.io", "northwind.dev", "globex.net"]),
    }
    sig_len = 43 if hdr["alg"] == "HS256" else 342
    return (b64u(json.dumps(hdr, separators=(",", ":")).encode()) + "."
            + b64u(json.dumps(body, separators=(",", ":")).encode()) + "."
            + rs(B64URL, sig_len))


DER = {
    "RSA PRIVATE KEY": bytes.fromhex("308204a20201000282010100"),
    "PRIVATE KEY": bytes.fromhex("308204bc020100300d06092a864886f70d0101010500048204a6"),
    "EC PRIVATE KEY": bytes.fromhex("307702010104"),
    "PUBLIC KEY": bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100"),
    "CERTIFICATE": bytes.fromhex("308204"),
    "PGP": bytes.fromhex("99020d04"),
}


def pem_body(nbytes, kind=None):
    head = DER.get(kind, b"")
    raw = b64(head + rbytes(nbytes - len(head)))
    return "\n".join(raw[i:i + 64] for i in range(0, len(raw), 64))


def rsa_private_pem():
    kind = pick(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY"])
    n = {"RSA PRIVATE KEY": 1190, "PRIVATE KEY": 1216, "EC PRIVATE KEY": 121}[kind]
    return f"-----BEGIN {kind}-----\n{pem_body(n, kind)}\n-----END {kind}-----"


def openssh_private():
    raw = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none" + rbytes(360)
    enc = b64(raw)
    body = "\n".join(enc[i:i + 70] for i in range(0, len(enc), 70))
    return ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + body
            + "\n-----END OPENSSH PRIVATE KEY-----")


def azure_storage_key():
    return b64(rbytes(64))


def azure_conn():
    acct = pick(["stprod", "acmedata", "logsarchive", "nwassets"]) + rs(LO + DIG, 4)
    return (f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey="
            f"{azure_storage_key()};EndpointSuffix=core.windows.net")


def azure_sas():
    sig = urllib.parse.quote(b64(rbytes(32)), safe="")
    return (f"sv=2022-11-02&ss=b&srt=co&sp=rwdlacx&se=2026-{R.randint(1,12):02d}-"
            f"{R.randint(1,28):02d}T18:00:00Z&st=2025-01-01T00:00:00Z&spr=https&sig={sig}")


def remote_host():
    return pick([
        f"prod-db-{rs(LO + DIG, 4)}.c{rs(LO + DIG, 10)}.eu-west-1.rds.amazonaws.com",
        f"pg-{rs(LO, 6)}.postgres.database.azure.com",
        f"cluster0.{rs(LO + DIG, 5)}.mongodb.net",
        f"db{R.randint(1, 9)}.internal.{pick(['acme-cloud.io', 'northwind.dev'])}",
    ])


def db_url():
    scheme = pick(["postgresql", "postgres", "mysql", "mongodb+srv", "redis"])
    user = pick(["app", "svc_orders", "billing_rw", "analytics", "admin"])
    host = remote_host()
    port = {"postgresql": ":5432", "postgres": ":5432", "mysql": ":3306",
            "mongodb+srv": "", "redis": ":6379"}[scheme]
    pw = password().replace("#", "x").replace("%", "z").replace("+", "p").replace("=", "q")
    return f"{scheme}://{user}:{pw}@{host}{port}/{pick(['app', 'orders', 'core'])}"


def gcp_sa_json():
    proj = pick(["acme-prod", "northwind-data", "globex-ml"]) + "-" + str(R.randint(100000, 999999))
    key = "-----BEGIN PRIVATE KEY-----\n" + pem_body(1216, "PRIVATE KEY") + "\n-----END PRIVATE KEY-----\n"
    sa = pick(["deployer", "bq-loader", "gcs-sync", "terraform"])
    return json.dumps({
        "type": "service_account",
        "project_id": proj,
        "private_key_id": rs(HEX, 40),
        "private_key": key,
        "client_email": f"{sa}@{proj}.iam.gserviceaccount.com",
        "client_id": str(R.randint(10**20, 10**21)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{sa}%40{proj}.iam.gserviceaccount.com",
        "universe_domain": "googleapis.com",
    }, indent=2)


# ------------------------------------------------------- benign material

PROJ = ["orders", "billing", "inventory", "notifier", "gateway", "reports",
        "ledger", "catalog", "shipping", "auth-proxy", "search", "uploader"]
SVC_HOSTS = ["api.acme-cloud.io", "internal.northwind.dev", "svc.globex.net",
             "gateway.initech.com"]


def proj():
    return pick(PROJ)


def semver():
    return f"{R.randint(0, 4)}.{R.randint(0, 30)}.{R.randint(0, 20)}"


def pad_lines(ext, n):
    """Benign filler lines in a file's own syntax."""
    pools = {
        "py": ["", "def _noop():", "    return None", "# keep imports sorted",
               "LOG_LEVEL = \"INFO\"", "MAX_RETRIES = 3", "TIMEOUT_SECONDS = 30"],
        "sh": ["", "# ---", "log() { echo \"[$(date +%T)] $*\"; }", "set -o pipefail"],
        "yaml": ["# ---"],
    }
    pool = pools.get(ext, [""])
    return [pick(pool) for _ in range(n)]


CASES = []


def add(cls, label, ext, path, text):
    assert label in ("secret", "none")
    if not text.endswith("\n"):
        text += "\n"
    CASES.append({"source": "generator-5", "class": cls, "label": label,
                  "ext": ext, "path": path, "origin": ORIGIN, "text": text})


# =================================================================== SECRETS

def s_aws_python():
    kid, sec = aws_id(), aws_secret()
    region = pick(["us-east-1", "eu-west-1", "ap-southeast-2"])
    bucket = f"{proj()}-{pick(['exports', 'artifacts', 'backups'])}-{R.randint(100, 999)}"
    t = f'''"""Nightly export of {bucket} to the analytics account."""
import datetime
import logging

import boto3

log = logging.getLogger(__name__)

REGION = "{region}"
BUCKET = "{bucket}"

# TODO(ops): move to the instance profile
session = boto3.Session(
    aws_access_key_id="{kid}",
    aws_secret_access_key="{sec}",
    region_name=REGION,
)


def export(prefix: str) -> int:
    s3 = session.client("s3")
    today = datetime.date.today().isoformat()
    count = 0
    paginator = s3.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=BUCKET, Prefix=prefix):
        for obj in page.get("Contents", []):
            s3.copy_object(
                Bucket=BUCKET,
                Key=f"archive/{{today}}/{{obj['Key']}}",
                CopySource={{"Bucket": BUCKET, "Key": obj["Key"]}},
            )
            count += 1
    log.info("exported %d objects", count)
    return count


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    export("daily/")
'''
    add("aws-keypair-python", "secret", "py", f"scripts/{pick(['export_s3', 'sync_bucket', 'nightly_export'])}.py", t)


def s_aws_credentials_ini():
    t = f"""[default]
region = {pick(['us-east-1', 'eu-central-1'])}
output = json

[profile {proj()}-readonly]
role_arn = arn:aws:iam::{R.randint(10**11, 10**12 - 1)}:role/ReadOnly
source_profile = default
region = us-west-2

[ci-deployer]
aws_access_key_id = {aws_id()}
aws_secret_access_key = {aws_secret()}

[profile sso-dev]
sso_start_url = https://{pick(['acme', 'northwind', 'globex'])}.awsapps.com/start
sso_region = us-east-1
sso_account_id = {R.randint(10**11, 10**12 - 1)}
sso_role_name = Developer
region = us-east-1
output = yaml

[profile legacy]
credential_process = /usr/local/bin/aws-vault exec legacy --json
"""
    add("aws-credentials-file", "secret", "ini", pick(["deploy/aws/credentials", ".aws/credentials", "infra/ci/aws_credentials"]), t)


def s_gh_actions():
    tok = gh_token()
    t = f"""name: release

on:
  push:
    tags: ["v*"]

permissions:
  contents: write

jobs:
  publish:
    runs-on: ubuntu-latest
    env:
      NODE_VERSION: "20"
      GH_RELEASE_TOKEN: {tok}
    steps:
      - uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11
      - uses: actions/setup-node@60edb5dd545a775178f52524783378180af0d1f8
        with:
          node-version: ${{{{ env.NODE_VERSION }}}}
          cache: npm
      - run: npm ci
      - run: npm run build
      - name: Create release
        run: |
          gh release create "${{GITHUB_REF_NAME}}" dist/*.tgz \\
            --title "${{GITHUB_REF_NAME}}" --generate-notes
        env:
          GH_TOKEN: ${{{{ env.GH_RELEASE_TOKEN }}}}
      - name: Notify
        run: echo "released ${{GITHUB_REF_NAME}}"
"""
    add("github-token-actions", "secret", "yml", ".github/workflows/release.yml", t)


def s_gitlab_ci():
    tok = gitlab_token()
    t = f"""stages:
  - build
  - test
  - deploy

variables:
  DOCKER_DRIVER: overlay2
  IMAGE: $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA
  RENOVATE_TOKEN: "{tok}"

build:
  stage: build
  image: docker:24
  services: [docker:24-dind]
  script:
    - docker login -u "$CI_REGISTRY_USER" -p "$CI_REGISTRY_PASSWORD" "$CI_REGISTRY"
    - docker build -t "$IMAGE" .
    - docker push "$IMAGE"

test:
  stage: test
  image: python:3.12
  script:
    - pip install -r requirements-dev.txt
    - pytest -q

renovate:
  stage: deploy
  image: renovate/renovate:37
  rules:
    - if: $CI_PIPELINE_SOURCE == "schedule"
  script:
    - renovate --platform=gitlab --endpoint=$CI_API_V4_URL --token=$RENOVATE_TOKEN
"""
    add("gitlab-token-ci", "secret", "yml", ".gitlab-ci.yml", t)


def s_slack_go():
    tok = slack_token()
    t = f"""package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

const slackAPI = "https://slack.com/api/chat.postMessage"

// botToken is the {proj()} bot's OAuth token.
const botToken = "{tok}"

type message struct {{
	Channel string `json:"channel"`
	Text    string `json:"text"`
}}

var client = &http.Client{{Timeout: 10 * time.Second}}

func Post(channel, text string) error {{
	body, err := json.Marshal(message{{Channel: channel, Text: text}})
	if err != nil {{
		return err
	}}
	req, _ := http.NewRequest(http.MethodPost, slackAPI, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+botToken)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := client.Do(req)
	if err != nil {{
		return err
	}}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {{
		return fmt.Errorf("slack: %s", resp.Status)
	}}
	return nil
}}
"""
    add("slack-token-go", "secret", "go", "internal/notify/slack.go", t)


def s_slack_webhook_sh():
    t = f"""#!/usr/bin/env bash
set -euo pipefail

# Posts the nightly backup summary to #ops-alerts
WEBHOOK_URL="{slack_webhook()}"
BACKUP_DIR=/var/backups/{proj()}

size=$(du -sh "$BACKUP_DIR" | cut -f1)
count=$(find "$BACKUP_DIR" -type f -mtime -1 | wc -l)
host=$(hostname -f)

payload=$(cat <<EOF
{{
  "text": "Backup on ${{host}}: ${{count}} files, ${{size}} total"
}}
EOF
)

if [[ "$count" -eq 0 ]]; then
  payload='{{"text": ":warning: no backup files produced in the last 24h"}}'
fi

curl -fsS -X POST -H 'Content-type: application/json' \\
  --data "$payload" "$WEBHOOK_URL"

echo "notified"
"""
    add("slack-webhook-shell", "secret", "sh", f"ops/{pick(['notify_backup', 'backup_report'])}.sh", t)


def s_stripe_ruby():
    key = stripe_secret()
    t = f"""# frozen_string_literal: true

require "stripe"

Stripe.api_key = "{key}"
Stripe.max_network_retries = 2

module Billing
  class ChargeCustomer
    def initialize(customer_id, amount_cents, currency: "usd")
      @customer_id = customer_id
      @amount_cents = amount_cents
      @currency = currency
    end

    def call
      Stripe::PaymentIntent.create(
        amount: @amount_cents,
        currency: @currency,
        customer: @customer_id,
        confirm: true,
        off_session: true
      )
    rescue Stripe::CardError => e
      Rails.logger.warn("card declined for #{{@customer_id}}: #{{e.message}}")
      nil
    end
  end
end
"""
    add("stripe-secret-ruby", "secret", "rb", "config/initializers/stripe.rb", t)


def s_twilio_php():
    t = f"""<?php

namespace App\\Services;

use Twilio\\Rest\\Client;

class SmsSender
{{
    private const ACCOUNT_SID = 'AC{rs(HEX, 32)}';
    private const AUTH_TOKEN = '{rs(HEX, 32)}';
    private const FROM = '+1{R.randint(2000000000, 9999999999)}';

    private Client $client;

    public function __construct()
    {{
        $this->client = new Client(self::ACCOUNT_SID, self::AUTH_TOKEN);
    }}

    public function send(string $to, string $body): string
    {{
        $message = $this->client->messages->create($to, [
            'from' => self::FROM,
            'body' => $body,
        ]);

        return $message->sid;
    }}
}}
"""
    add("twilio-auth-token-php", "secret", "php", "app/Services/SmsSender.php", t)


def s_sendgrid_csharp():
    t = f"""using System.Threading.Tasks;
using SendGrid;
using SendGrid.Helpers.Mail;

namespace {pick(['Acme', 'Northwind', 'Globex'])}.Mailer
{{
    public static class Mailer
    {{
        private const string ApiKey = "{sendgrid()}";

        public static async Task<bool> SendAsync(string to, string subject, string html)
        {{
            var client = new SendGridClient(ApiKey);
            var from = new EmailAddress("no-reply@{pick(SVC_HOSTS)}", "Notifications");
            var msg = MailHelper.CreateSingleEmail(
                from,
                new EmailAddress(to),
                subject,
                plainTextContent: null,
                htmlContent: html);
            var response = await client.SendEmailAsync(msg);
            return response.IsSuccessStatusCode;
        }}
    }}
}}
"""
    add("sendgrid-csharp", "secret", "cs", "src/Mailer/Mailer.cs", t)


def s_openai_env():
    t = f"""# local settings for the summariser service
APP_ENV=production
PORT=8080
LOG_LEVEL=info
OPENAI_MODEL=gpt-4o-mini
OPENAI_API_KEY={openai_key()}
OPENAI_TIMEOUT=60
REDIS_URL=redis://localhost:6379/0
CACHE_TTL_SECONDS=900
FEATURE_STREAMING=true
MAX_TOKENS=1024
SENTRY_ENVIRONMENT=production
WORKERS=4
REQUEST_ID_HEADER=X-Request-Id
CORS_ORIGINS=https://app.{pick(SVC_HOSTS)}
RATE_LIMIT_PER_MIN=120
SUMMARY_LANG=en
PROMPT_DIR=/srv/prompts
METRICS_PORT=9102
HEALTHCHECK_PATH=/healthz
"""
    add("openai-key-dotenv", "secret", "env", pick([".env", "deploy/.env.production", "services/summariser/.env"]), t)


def s_anthropic_ts():
    t = f"""import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({{
  apiKey: "{anthropic_key()}",
  maxRetries: 2,
}});

export interface Summary {{
  title: string;
  bullets: string[];
}}

export async function summarise(text: string): Promise<Summary> {{
  const msg = await client.messages.create({{
    model: "claude-3-5-sonnet-latest",
    max_tokens: 512,
    messages: [{{ role: "user", content: `Summarise:\\n\\n${{text}}` }}],
  }});
  const first = msg.content[0];
  const body = first.type === "text" ? first.text : "";
  const [title, ...rest] = body.split("\\n").filter(Boolean);
  return {{
    title: title ?? "",
    bullets: rest.map((l) => l.replace(/^[-*]\\s*/, "")),
  }};
}}
"""
    add("anthropic-key-ts", "secret", "ts", "src/lib/llm.ts", t)


def s_npmrc():
    t = f"""registry=https://registry.npmjs.org/
@{pick(['acme', 'northwind', 'globex'])}:registry=https://npm.pkg.github.com/
always-auth=true
save-exact=true
engine-strict=true
fund=false
audit-level=high
//registry.npmjs.org/:_authToken={npm_token()}
"""
    # pad to a realistic size with comments
    extra = "\n".join(["# see docs/release.md for the publish flow",
                       "# prefer lockfile installs in CI", "progress=false",
                       "loglevel=warn", "prefer-offline=true", "package-lock=true",
                       "strict-ssl=true", "init-license=MIT", "init-author-name=Platform Team",
                       "init-version=0.1.0", "update-notifier=false", "script-shell=/bin/bash"])
    add("npm-token-npmrc", "secret", "npmrc", ".npmrc", t + extra)


def s_pypi_pypirc():
    t = f"""[distutils]
index-servers =
    pypi
    testpypi
    internal

[pypi]
repository = https://upload.pypi.org/legacy/
username = __token__
password = {pypi_token()}

[testpypi]
repository = https://test.pypi.org/legacy/
username = __token__

[internal]
repository = https://pkgs.{pick(SVC_HOSTS)}/simple/
username = ci-publisher

# the internal index uses the keyring backend; nothing stored here
# run `keyring set https://pkgs.example/simple/ ci-publisher` once per machine
# release checklist lives in RELEASING.md
# keep this file out of wheels (see MANIFEST.in)
# test uploads: twine upload -r testpypi dist/*
# prod uploads: twine upload -r pypi dist/*
"""
    add("pypi-token-pypirc", "secret", "ini", ".pypirc", t)


def s_shopify_js():
    t = f"""const fetch = require("node-fetch");

const SHOP = "{pick(['acme-outfitters', 'northwind-goods', 'globex-store'])}.myshopify.com";
const API_VERSION = "2024-07";
const ACCESS_TOKEN = "{shopify_token()}";

async function graphql(query, variables = {{}}) {{
  const res = await fetch(`https://${{SHOP}}/admin/api/${{API_VERSION}}/graphql.json`, {{
    method: "POST",
    headers: {{
      "Content-Type": "application/json",
      "X-Shopify-Access-Token": ACCESS_TOKEN,
    }},
    body: JSON.stringify({{ query, variables }}),
  }});
  if (!res.ok) throw new Error(`shopify ${{res.status}}`);
  return res.json();
}}

async function lowStock(threshold = 5) {{
  const data = await graphql(`{{ products(first: 50) {{ nodes {{ title totalInventory }} }} }}`);
  return data.data.products.nodes.filter((p) => p.totalInventory < threshold);
}}

module.exports = {{ graphql, lowStock }};
"""
    add("shopify-token-js", "secret", "js", "scripts/shopify/inventory.js", t)


def s_datadog_helm():
    t = f"""# values for the datadog chart, production cluster
datadog:
  site: datadoghq.eu
  apiKey: {rs(HEX, 32)}
  clusterName: {proj()}-prod
  logs:
    enabled: true
    containerCollectAll: true
  apm:
    portEnabled: true
  processAgent:
    enabled: true
  tags:
    - env:prod
    - team:platform

clusterAgent:
  enabled: true
  replicas: 2
  metricsProvider:
    enabled: true

agents:
  tolerations:
    - operator: Exists
  resources:
    requests:
      cpu: 200m
      memory: 256Mi
"""
    add("datadog-apikey-helm-values", "secret", "yaml", "deploy/datadog/values-prod.yaml", t)


def s_vault_token_sh():
    t = f"""#!/bin/sh
# bootstrap secrets for the staging namespace
export VAULT_ADDR=https://vault.{pick(SVC_HOSTS)}:8200
export VAULT_TOKEN={vault_token()}
export VAULT_NAMESPACE=admin/staging

set -e

for app in {proj()} {proj()} {proj()}; do
  echo "syncing $app"
  vault kv get -format=json "secret/staging/$app" \\
    | jq -r '.data.data | to_entries[] | "\\(.key)=\\(.value)"' \\
    > "/run/secrets/$app.env"
  chmod 600 "/run/secrets/$app.env"
done

vault token lookup >/dev/null
echo "done"

# Note: tokens here expire after 768h; renew with
#   vault token renew
# Policies attached: staging-read, staging-kv
# Run from the bastion only.
# See runbooks/vault.md
"""
    add("vault-token-shell", "secret", "sh", "ops/bootstrap_staging.sh", t)


def s_hf_notebook():
    tok = hf_token()
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Fine-tune sentiment model\n", "\n", "Loads the dataset and pushes the model to the Hub."]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["from huggingface_hub import login\n", "from datasets import load_dataset\n", "import transformers\n"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [
            {"name": "stdout", "output_type": "stream", "text": ["Token is valid (permission: write).\n", "Login successful\n"]}],
         "source": [f'login(token="{tok}")\n']},
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [
            {"data": {"text/plain": ["DatasetDict({\n", "    train: Dataset({features: ['text', 'label'], num_rows: 25000})\n", "})"]},
             "execution_count": 3, "metadata": {}, "output_type": "execute_result"}],
         "source": ['ds = load_dataset("imdb")\n', "ds"]},
        {"cell_type": "code", "execution_count": 4, "metadata": {}, "outputs": [],
         "source": ['tok = transformers.AutoTokenizer.from_pretrained("distilbert-base-uncased")\n',
                    "enc = ds.map(lambda b: tok(b['text'], truncation=True), batched=True)\n"]},
    ]
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                       "language_info": {"name": "python", "version": "3.11.6"}},
          "nbformat": 4, "nbformat_minor": 5}
    add("huggingface-token-notebook", "secret", "ipynb", f"notebooks/{pick(['finetune', 'train_sentiment'])}.ipynb", json.dumps(nb, indent=1))


def s_notebook_output_secret():
    """Secret appears only in a cell output (printed env)."""
    key = aws_secret()
    cells = [
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["import os\n", "import boto3\n"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [
            {"name": "stdout", "output_type": "stream", "text": [
                "AWS_DEFAULT_REGION=eu-west-1\n",
                f"AWS_SECRET_ACCESS_KEY={key}\n",
                "HOME=/home/jovyan\n"]}],
         "source": ["!env | grep -E '^(AWS|HOME)' | sort\n"]},
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [
            {"data": {"text/plain": ["['raw/', 'curated/', 'tmp/']"]}, "execution_count": 3, "metadata": {}, "output_type": "execute_result"}],
         "source": ["s3 = boto3.client('s3')\n", "[p['Prefix'] for p in s3.list_objects_v2(Bucket='lake', Delimiter='/')['CommonPrefixes']]"]},
    ]
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    add("aws-secret-notebook-output", "secret", "ipynb", "analysis/explore_lake.ipynb", json.dumps(nb, indent=1))


def s_databricks_toml():
    t = f"""[tool.poetry]
name = "{proj()}-jobs"
version = "{semver()}"
description = "Batch jobs"
authors = ["Data Platform <data@northwind.dev>"]

[tool.poetry.dependencies]
python = "^3.11"
pyspark = "3.5.1"
databricks-sdk = "0.29.0"

[tool.jobs.databricks]
host = "https://adb-{R.randint(10**15, 10**16 - 1)}.{R.randint(1, 19)}.azuredatabricks.net"
token = "{databricks_token()}"
cluster_id = "{R.randint(1000, 9999)}-{R.randint(100000, 999999)}-{rs(LO + DIG, 8)}"

[tool.pytest.ini_options]
addopts = "-q"
testpaths = ["tests"]

[build-system]
requires = ["poetry-core"]
build-backend = "poetry.core.masonry.api"
"""
    add("databricks-token-toml", "secret", "toml", "pyproject.toml", t)


def s_mailgun_elixir():
    t = f"""import Config

config :{proj().replace('-', '_')}, MyApp.Mailer,
  adapter: Swoosh.Adapters.Mailgun,
  api_key: "{mailgun_key()}",
  domain: "mg.{pick(SVC_HOSTS)}",
  base_url: "https://api.eu.mailgun.net/v3"

config :logger, level: :info

config :my_app, MyAppWeb.Endpoint,
  url: [host: "app.{pick(SVC_HOSTS)}", port: 443, scheme: "https"],
  cache_static_manifest: "priv/static/cache_manifest.json"

config :my_app, :pool_size, 20

config :swoosh, :api_client, Swoosh.ApiClient.Finch

config :phoenix, :serve_endpoints, true

# Runtime configuration lives in config/runtime.exs
# Do not add per-developer overrides here.
"""
    add("mailgun-key-elixir", "secret", "exs", "config/prod.exs", t)


def s_postmark_json():
    d = {
        "Logging": {"LogLevel": {"Default": "Information", "Microsoft.AspNetCore": "Warning"}},
        "AllowedHosts": "*",
        "Email": {
            "Provider": "Postmark",
            "From": "support@" + pick(SVC_HOSTS),
            "Postmark": {"ServerToken": ruuid(), "MessageStream": "outbound"},
        },
        "Features": {"Signup": True, "Invoices": False},
        "Cors": {"Origins": ["https://app." + pick(SVC_HOSTS)]},
    }
    add("postmark-server-token-appsettings", "secret", "json", "src/Web/appsettings.Production.json", json.dumps(d, indent=2))


def s_heroku_netrc():
    tok = "HRKU-AA" + rs(B64URL, 58)
    email = "deploy@" + pick(["acme-cloud.io", "northwind.dev"])
    t = f"""# ~/.netrc for the deploy runner (generated by heroku login)
machine api.heroku.com
  login {email}
  password {tok}
machine git.heroku.com
  login {email}
  password {tok}
machine github.com
  login deploy-bot
"""
    t += "\n".join([
        "# the github entry uses the credential helper; no password stored",
        "# regenerate with: heroku authorizations:create -d ci",
        "# owner: platform team",
        "# rotated quarterly",
        "# see runbooks/heroku.md",
        "# do not copy to developer laptops",
        "# this runner is ephemeral",
        "# file mode must be 0600",
        "# checked by scripts/check_netrc.sh",
        "# end",
    ])
    add("heroku-token-netrc", "secret", "netrc", "ci/runner/netrc", t)


def s_jwt_http():
    tok = jwt()
    t = f"""### Captured with mitmproxy while debugging the billing sync
GET /v2/invoices?status=open&limit=50 HTTP/1.1
Host: {pick(SVC_HOSTS)}
User-Agent: billing-sync/{semver()}
Accept: application/json
Authorization: Bearer {tok}
X-Request-Id: {ruuid()}
Accept-Encoding: gzip

HTTP/1.1 200 OK
Content-Type: application/json; charset=utf-8
ETag: W/"{rs(HEX, 32)}"
X-Trace-Id: {rs(HEX, 32)}
Cache-Control: no-store
Content-Length: 212

{{
  "data": [
    {{"id": "inv_{rs(DIG, 8)}", "amount": {R.randint(100, 90000)}, "currency": "eur"}},
    {{"id": "inv_{rs(DIG, 8)}", "amount": {R.randint(100, 90000)}, "currency": "eur"}}
  ],
  "has_more": false
}}
"""
    add("jwt-http-capture", "secret", "http", f"docs/debug/{pick(['invoices', 'billing_sync'])}.http", t)


def s_db_url_compose():
    t = f"""version: "3.9"

services:
  api:
    image: ghcr.io/{pick(['acme', 'northwind'])}/{proj()}:{semver()}
    restart: unless-stopped
    ports:
      - "8080:8080"
    environment:
      DATABASE_URL: "{db_url()}"
      LOG_FORMAT: json
      PORT: "8080"
    healthcheck:
      test: ["CMD", "curl", "-f", "http://localhost:8080/healthz"]
      interval: 30s
      timeout: 5s
      retries: 3

  worker:
    image: ghcr.io/{pick(['acme', 'northwind'])}/{proj()}-worker:{semver()}
    depends_on: [api]
    environment:
      QUEUE: default
      CONCURRENCY: "8"

volumes:
  data: {{}}
"""
    add("db-url-compose", "secret", "yml", "docker-compose.prod.yml", t)


def s_password_properties():
    pw = password()
    t = f"""# Application configuration - production
server.port=8443
server.ssl.enabled=true
spring.application.name={proj()}
spring.datasource.url=jdbc:postgresql://{remote_host()}:5432/{proj().replace('-', '_')}
spring.datasource.username=svc_{proj().replace('-', '_')}
spring.datasource.password={pw}
spring.datasource.hikari.maximum-pool-size=20
spring.datasource.hikari.connection-timeout=30000
spring.jpa.hibernate.ddl-auto=validate
spring.jpa.open-in-view=false
spring.flyway.enabled=true
management.endpoints.web.exposure.include=health,info,prometheus
management.endpoint.health.probes.enabled=true
logging.level.root=INFO
logging.level.org.hibernate.SQL=WARN
app.security.password-min-length=12
app.security.password-reset-token-ttl=3600
app.cors.allowed-origins=https://app.{pick(SVC_HOSTS)}
app.feature.new-checkout=true
"""
    add("password-spring-properties", "secret", "properties", "src/main/resources/application-prod.properties", t)


def s_maven_settings():
    t = f"""<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0"
          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xsi:schemaLocation="http://maven.apache.org/SETTINGS/1.2.0 https://maven.apache.org/xsd/settings-1.2.0.xsd">
  <localRepository>${{user.home}}/.m2/repository</localRepository>
  <servers>
    <server>
      <id>nexus-releases</id>
      <username>deployment</username>
      <password>{password()}</password>
    </server>
    <server>
      <id>github</id>
      <username>${{env.GITHUB_ACTOR}}</username>
      <password>${{env.GITHUB_TOKEN}}</password>
    </server>
  </servers>
  <mirrors>
    <mirror>
      <id>nexus</id>
      <mirrorOf>*</mirrorOf>
      <url>https://nexus.{pick(SVC_HOSTS)}/repository/maven-public/</url>
    </mirror>
  </mirrors>
  <profiles>
    <profile>
      <id>release</id>
      <properties>
        <gpg.keyname>{rs(UP + DIG, 16)}</gpg.keyname>
      </properties>
    </profile>
  </profiles>
</settings>
"""
    add("maven-settings-password", "secret", "xml", pick([".mvn/settings.xml", "ci/maven/settings.xml"]), t)


def s_webconfig():
    pw = password().replace("&", "").replace("<", "")
    t = f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <connectionStrings>
    <add name="DefaultConnection"
         connectionString="Server=tcp:{pick(['sql-prod', 'acme-sql'])}{rs(DIG, 2)}.database.windows.net,1433;Initial Catalog={proj()};Persist Security Info=False;User ID=appuser;Password={pw};MultipleActiveResultSets=False;Encrypt=True;TrustServerCertificate=False;Connection Timeout=30;"
         providerName="System.Data.SqlClient" />
  </connectionStrings>
  <appSettings>
    <add key="webpages:Version" value="3.0.0.0" />
    <add key="ClientValidationEnabled" value="true" />
    <add key="UnobtrusiveJavaScriptEnabled" value="true" />
    <add key="PasswordMinLength" value="12" />
  </appSettings>
  <system.web>
    <compilation debug="false" targetFramework="4.8" />
    <httpRuntime targetFramework="4.8" enableVersionHeader="false" />
    <customErrors mode="RemoteOnly" />
  </system.web>
  <system.webServer>
    <httpProtocol>
      <customHeaders>
        <remove name="X-Powered-By" />
      </customHeaders>
    </httpProtocol>
  </system.webServer>
</configuration>
"""
    add("webconfig-connection-string", "secret", "config", "Web.config", t)


def s_private_key_file():
    t = rsa_private_pem()
    add("pem-private-key", "secret", "pem", pick(["deploy/keys/server.key", "certs/api-prod.key", "config/ssl/tls.key"]), t)


def s_private_key_in_yaml():
    key = openssh_private()
    ind = "\n".join("      " + l for l in key.splitlines())
    t = f"""- name: Configure deploy user
  hosts: app_servers
  become: true
  vars:
    deploy_user: deploy
    deploy_key: |
{ind}
  tasks:
    - name: Ensure user exists
      ansible.builtin.user:
        name: "{{{{ deploy_user }}}}"
        shell: /bin/bash

    - name: Install private key
      ansible.builtin.copy:
        content: "{{{{ deploy_key }}}}"
        dest: "/home/{{{{ deploy_user }}}}/.ssh/id_ed25519"
        owner: "{{{{ deploy_user }}}}"
        mode: "0600"
"""
    add("openssh-private-key-ansible", "secret", "yml", "playbooks/deploy_user.yml", t)


def s_k8s_secret_data():
    pw = password()
    t = f"""apiVersion: v1
kind: Secret
metadata:
  name: {proj()}-db
  namespace: {pick(['prod', 'payments', 'default'])}
  labels:
    app.kubernetes.io/name: {proj()}
    app.kubernetes.io/part-of: platform
type: Opaque
data:
  DB_HOST: {b64(remote_host().encode())}
  DB_USER: {b64(b"app_rw")}
  DB_PASSWORD: {b64(pw.encode())}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {proj()}-config
data:
  LOG_LEVEL: info
  POOL_SIZE: "10"
  FEATURE_AUDIT: "true"
"""
    add("k8s-secret-base64-data", "secret", "yaml", f"k8s/prod/{proj()}-secret.yaml", t)


def s_docker_config():
    user = pick(["ci-bot", "deployer", "robot$builder"])
    auth = b64(f"{user}:{password()}".encode())
    d = {"auths": {pick(["registry.gitlab.com", "harbor." + pick(SVC_HOSTS), "https://index.docker.io/v1/"]): {"auth": auth},
                   "ghcr.io": {}},
         "credHelpers": {"123456789012.dkr.ecr.us-east-1.amazonaws.com": "ecr-login"},
         "HttpHeaders": {"User-Agent": "Docker-Client/24.0.7 (linux)"},
         "detachKeys": "ctrl-e,e"}
    add("docker-config-auth", "secret", "json", pick([".docker/config.json", "ci/docker/config.json"]), json.dumps(d, indent=2))


def s_basic_auth_curl():
    cred = b64(f"{pick(['admin', 'svc-export', 'metrics'])}:{password()}".encode())
    t = f"""# Exporting dashboards

The export job pulls every dashboard as JSON and commits it to this repo.

```bash
#!/usr/bin/env bash
set -euo pipefail
GRAFANA=https://grafana.{pick(SVC_HOSTS)}
for uid in $(curl -s -H "Authorization: Basic {cred}" \\
    "$GRAFANA/api/search?type=dash-db" | jq -r '.[].uid'); do
  curl -s -H "Authorization: Basic {cred}" \\
    "$GRAFANA/api/dashboards/uid/$uid" | jq '.dashboard' > "dashboards/$uid.json"
done
```

## Schedule

Runs at 02:00 UTC from the `ops-cron` host.

## Troubleshooting

- `401`: the export account was disabled; ask #platform.
- `jq: parse error`: Grafana returned HTML; check the URL.
- Dashboards with the same title are kept apart by uid.
"""
    add("basic-auth-header-markdown", "secret", "md", "docs/grafana-export.md", t)


def s_hmac_go():
    t = f"""package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
)

var signingSecret = []byte("{rs(HEX, 64)}")

func Verify(r *http.Request) ([]byte, bool) {{
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {{
		return nil, false
	}}
	mac := hmac.New(sha256.New, signingSecret)
	mac.Write(body)
	expected := hex.EncodeToString(mac.Sum(nil))
	got := r.Header.Get("X-Signature-256")
	return body, hmac.Equal([]byte(expected), []byte(got))
}}

func Handler(w http.ResponseWriter, r *http.Request) {{
	body, ok := Verify(r)
	if !ok {{
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}}
	_ = body
	w.WriteHeader(http.StatusNoContent)
}}
"""
    add("hmac-signing-secret-go", "secret", "go", "internal/webhooks/verify.go", t)


def s_webhook_secret_python():
    sec = b64(rbytes(32))
    t = f"""import hashlib
import hmac

from fastapi import APIRouter, Header, HTTPException, Request

router = APIRouter()

WEBHOOK_SECRET = "{sec}"


def _valid(payload: bytes, signature: str) -> bool:
    digest = hmac.new(WEBHOOK_SECRET.encode(), payload, hashlib.sha256).hexdigest()
    return hmac.compare_digest(digest, signature)


@router.post("/hooks/payments")
async def payments_hook(request: Request, x_signature: str = Header(...)):
    payload = await request.body()
    if not _valid(payload, x_signature):
        raise HTTPException(status_code=401, detail="invalid signature")
    event = await request.json()
    kind = event.get("type", "unknown")
    if kind == "payment.succeeded":
        return {{"status": "ok"}}
    return {{"status": "ignored", "type": kind}}


def healthcheck() -> dict:
    return {{"ok": True}}
"""
    add("webhook-secret-python", "secret", "py", "app/routes/hooks.py", t)


def s_azure_conn_appsettings():
    d = {
        "Logging": {"LogLevel": {"Default": "Warning"}},
        "ConnectionStrings": {"Blob": azure_conn()},
        "Uploads": {"Container": "user-uploads", "MaxSizeMb": 25},
        "ApplicationInsights": {"SamplingPercentage": 20},
    }
    add("azure-storage-connstring-json", "secret", "json", "src/Api/appsettings.json", json.dumps(d, indent=2))


def s_azure_sas_ps1():
    acct = pick(["stbackup", "nwarchive", "acmelogs"]) + rs(LO + DIG, 4)
    t = f"""param(
    [Parameter(Mandatory = $true)][string]$Path,
    [string]$Container = "nightly"
)

$ErrorActionPreference = "Stop"

$Account = "{acct}"
$SasToken = "?{azure_sas()}"

$files = Get-ChildItem -Path $Path -File -Recurse
Write-Host "Uploading $($files.Count) files to $Account/$Container"

foreach ($f in $files) {{
    $rel = $f.FullName.Substring($Path.Length).TrimStart('\\').Replace('\\', '/')
    $uri = "https://$Account.blob.core.windows.net/$Container/$rel$SasToken"
    Invoke-RestMethod -Method Put -Uri $uri -InFile $f.FullName `
        -Headers @{{ "x-ms-blob-type" = "BlockBlob" }}
}}

Write-Host "Done."
"""
    add("azure-sas-powershell", "secret", "ps1", "scripts/Upload-Backup.ps1", t)


def s_gcp_sa():
    add("gcp-service-account-json", "secret", "json", pick(["keys/gcp-deployer.json", "terraform/credentials.json", "config/gcp-sa.json"]), gcp_sa_json())


def s_terraform_hardcoded():
    t = f"""terraform {{
  required_providers {{
    datadog = {{
      source  = "DataDog/datadog"
      version = "~> 3.40"
    }}
  }}
}}

provider "github" {{
  owner = "{pick(['acme', 'northwind', 'globex'])}"
  token = "{gh_token()}"
}}

resource "github_repository" "svc" {{
  name        = "{proj()}"
  description = "Managed by Terraform"
  visibility  = "private"

  has_issues   = true
  has_wiki     = false
  auto_init    = true
  allow_squash_merge = true
}}

resource "github_branch_protection" "main" {{
  repository_id = github_repository.svc.node_id
  pattern       = "main"

  required_pull_request_reviews {{
    required_approving_review_count = 1
  }}
}}
"""
    add("github-token-terraform", "secret", "tf", "infra/github/main.tf", t)


def s_jwt_kotlin():
    t = f"""package com.{pick(['acme', 'northwind'])}.sync

import okhttp3.OkHttpClient
import okhttp3.Request
import java.util.concurrent.TimeUnit

object ApiClient {{
    private const val BASE_URL = "https://{pick(SVC_HOSTS)}/v1"

    // service token for the nightly sync, issued 2025-03
    private const val SERVICE_TOKEN =
        "{jwt()}"

    private val http = OkHttpClient.Builder()
        .connectTimeout(10, TimeUnit.SECONDS)
        .readTimeout(30, TimeUnit.SECONDS)
        .build()

    fun get(path: String): String {{
        val req = Request.Builder()
            .url("$BASE_URL$path")
            .header("Authorization", "Bearer $SERVICE_TOKEN")
            .build()
        http.newCall(req).execute().use {{ resp ->
            check(resp.isSuccessful) {{ "HTTP ${{resp.code}}" }}
            return resp.body!!.string()
        }}
    }}
}}
"""
    add("jwt-kotlin", "secret", "kt", "app/src/main/kotlin/sync/ApiClient.kt", t)


def s_password_rust():
    t = f"""use std::time::Duration;

use sqlx::postgres::{{PgConnectOptions, PgPoolOptions}};
use sqlx::PgPool;

const DB_HOST: &str = "{remote_host()}";
const DB_USER: &str = "reporting";
const DB_PASSWORD: &str = "{password()}";

pub async fn pool() -> Result<PgPool, sqlx::Error> {{
    let opts = PgConnectOptions::new()
        .host(DB_HOST)
        .port(5432)
        .username(DB_USER)
        .password(DB_PASSWORD)
        .database("reports");
    PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(opts)
        .await
}}

#[cfg(test)]
mod tests {{
    #[test]
    fn host_is_set() {{
        assert!(!super::DB_HOST.is_empty());
    }}
}}
"""
    add("db-password-rust-const", "secret", "rs", "src/db.rs", t)


def s_swift_key():
    t = f"""import Foundation

enum Backend {{
    static let baseURL = URL(string: "https://{pick(SVC_HOSTS)}")!
    // server-side admin key; used by the internal QA build only
    static let adminAPIKey = "{stripe_secret()}"
}}

final class PaymentsClient {{
    private let session: URLSession

    init(session: URLSession = .shared) {{
        self.session = session
    }}

    func refund(chargeID: String) async throws -> Bool {{
        var req = URLRequest(url: URL(string: "https://api.stripe.com/v1/refunds")!)
        req.httpMethod = "POST"
        req.setValue("Bearer \\(Backend.adminAPIKey)", forHTTPHeaderField: "Authorization")
        req.httpBody = "charge=\\(chargeID)".data(using: .utf8)
        let (_, resp) = try await session.data(for: req)
        return (resp as? HTTPURLResponse)?.statusCode == 200
    }}
}}
"""
    add("stripe-secret-swift", "secret", "swift", "QA/PaymentsClient.swift", t)


def s_scala_conf():
    t = f"""akka {{
  loglevel = "INFO"
  http.server.idle-timeout = 60 s
}}

app {{
  name = "{proj()}"
  http {{
    host = "0.0.0.0"
    port = 9000
  }}
  kafka {{
    bootstrap-servers = "b-1.{proj()}.kafka.eu-west-1.amazonaws.com:9096"
    sasl-mechanism = "SCRAM-SHA-512"
    username = "{proj()}-consumer"
    password = "{password()}"
    group-id = "{proj()}-group"
  }}
  retry {{
    max-attempts = 5
    backoff = 2 s
  }}
}}

slick.dbs.default {{
  profile = "slick.jdbc.PostgresProfile$"
  db.url = ${{?DATABASE_URL}}
}}
"""
    add("kafka-password-hocon", "secret", "conf", "src/main/resources/application.conf", t)


def s_log_leak():
    tok = gh_token()
    lines = []
    ts = R.randint(1730000000, 1760000000)
    import datetime as _dt
    for i in range(22):
        t = _dt.datetime.utcfromtimestamp(ts + i * R.randint(1, 9)).strftime("%Y-%m-%dT%H:%M:%SZ")
        if i == 13:
            lines.append(f"{t} DEBUG git.clone url=https://x-access-token:{tok}@github.com/{pick(['acme', 'northwind'])}/{proj()}.git depth=1")
        else:
            lines.append(f"{t} INFO  {pick(['worker', 'scheduler', 'http'])} {pick(['job started', 'job finished', 'GET /healthz 200', 'cache hit', 'retrying in 2s'])} trace_id={rs(HEX, 32)} job={ruuid()}")
    add("github-token-in-ci-log", "secret", "log", f"logs/runner-{R.randint(100, 999)}.log", "\n".join(lines))


def s_sql_seed_password():
    t = f"""-- Seed the reporting replica user (run once by DBA)
CREATE TABLE IF NOT EXISTS users (
    id BIGSERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    password_changed_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS users_email_idx ON users (email);

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reporting_ro') THEN
    CREATE ROLE reporting_ro LOGIN PASSWORD '{password()}';
  END IF;
END
$$;

GRANT CONNECT ON DATABASE app TO reporting_ro;
GRANT USAGE ON SCHEMA public TO reporting_ro;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO reporting_ro;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO reporting_ro;
"""
    add("sql-create-role-password", "secret", "sql", "db/migrations/0042_reporting_role.sql", t)


def s_dockerfile_secret():
    t = f"""FROM python:3.12-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 \\
    PYTHONUNBUFFERED=1 \\
    PIP_NO_CACHE_DIR=1

WORKDIR /app

RUN apt-get update && apt-get install -y --no-install-recommends curl \\
    && rm -rf /var/lib/apt/lists/*

COPY requirements.txt .
RUN pip install --extra-index-url https://__token__:{gitlab_token()}@gitlab.{pick(['acme-cloud.io', 'northwind.dev'])}/api/v4/projects/{R.randint(100, 999)}/packages/pypi/simple -r requirements.txt

COPY . .

RUN useradd --create-home app
USER app

EXPOSE 8000
HEALTHCHECK CMD curl -fs http://localhost:8000/healthz || exit 1
CMD ["gunicorn", "-b", "0.0.0.0:8000", "app.wsgi:application"]
"""
    add("gitlab-token-dockerfile", "secret", "dockerfile", "Dockerfile", t)


def s_makefile_secret():
    t = f""".PHONY: build test publish clean

VERSION ?= $(shell git describe --tags --always)
IMAGE := ghcr.io/{pick(['acme', 'northwind'])}/{proj()}
NPM_TOKEN := {npm_token()}

build:
\tdocker build -t $(IMAGE):$(VERSION) .

test:
\tnpm test -- --ci

publish: build
\techo "//registry.npmjs.org/:_authToken=$(NPM_TOKEN)" > .npmrc
\tnpm publish --access public
\trm -f .npmrc

clean:
\trm -rf dist node_modules .npmrc

lint:
\tnpx eslint src --max-warnings 0

fmt:
\tnpx prettier --write src

release: test publish
\tgit tag -a v$(VERSION) -m "release $(VERSION)"
"""
    add("npm-token-makefile", "secret", "mk", "Makefile", t)


def s_java_aws():
    t = f"""package com.{pick(['acme', 'globex'])}.storage;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

public final class S3Factory {{

    private static final String ACCESS_KEY = "{aws_id()}";
    private static final String SECRET_KEY = "{aws_secret()}";

    private S3Factory() {{}}

    public static S3Client create() {{
        return S3Client.builder()
                .region(Region.EU_WEST_1)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
                .build();
    }}

    public static String bucketFor(String tenant) {{
        return "tenant-" + tenant.toLowerCase() + "-uploads";
    }}
}}
"""
    add("aws-keypair-java", "secret", "java", "src/main/java/storage/S3Factory.java", t)


def s_redis_password_ini():
    t = f"""[app]
name = {proj()}
debug = false
workers = 4

[server]
host = 0.0.0.0
port = 8000
proxy_headers = true

[redis]
host = {pick(['cache-prod', 'redis-main'])}.{rs(LO, 6)}.ng.0001.euw1.cache.amazonaws.com
port = 6379
db = 2
password = {password()}
ssl = true

[celery]
broker_db = 3
result_expires = 3600
task_acks_late = true

[logging]
level = INFO
format = %%(asctime)s %%(levelname)s %%(name)s %%(message)s
"""
    add("redis-password-ini", "secret", "ini", "config/production.ini", t)


def s_env_mixed():
    """dotenv with many references and one literal secret."""
    kind = pick(["stripe", "sendgrid", "slack", "dbpw"])
    line = {"stripe": f"STRIPE_SECRET_KEY={stripe_secret()}",
            "sendgrid": f"SENDGRID_API_KEY={sendgrid()}",
            "slack": f"SLACK_BOT_TOKEN={slack_token()}",
            "dbpw": f"POSTGRES_PASSWORD={password()}"}[kind]
    t = f"""# --- runtime ---
NODE_ENV=production
PORT=3000
PUBLIC_URL=https://app.{pick(SVC_HOSTS)}

# --- database (password injected by the platform) ---
POSTGRES_HOST=db.internal
POSTGRES_DB={proj().replace('-', '_')}
POSTGRES_USER=app
DATABASE_URL=postgres://${{POSTGRES_USER}}:${{POSTGRES_PASSWORD}}@${{POSTGRES_HOST}}:5432/${{POSTGRES_DB}}

# --- third parties ---
{line}
GITHUB_TOKEN=${{GITHUB_TOKEN}}
SENTRY_TRACES_SAMPLE_RATE=0.1

# --- auth ---
SESSION_COOKIE_NAME=sid
SESSION_TTL_SECONDS=86400
PASSWORD_MIN_LENGTH=12
TOKEN_TYPE=Bearer
"""
    add(f"dotenv-{kind}-among-references", "secret", "env", pick([".env.production", "deploy/prod.env"]), t)


def s_js_config_firebase_admin():
    """Firebase *admin* credentials (private key) embedded in JS."""
    proj_id = pick(["acme-app", "northwind-mobile"]) + "-" + rs(LO + DIG, 5)
    key = "-----BEGIN PRIVATE KEY-----\\n" + pem_body(1216, "PRIVATE KEY").replace("\n", "\\n") + "\\n-----END PRIVATE KEY-----\\n"
    t = f"""const admin = require("firebase-admin");

admin.initializeApp({{
  credential: admin.credential.cert({{
    projectId: "{proj_id}",
    clientEmail: "firebase-adminsdk-{rs(LO + DIG, 5)}@{proj_id}.iam.gserviceaccount.com",
    privateKey: "{key}",
  }}),
  databaseURL: "https://{proj_id}-default-rtdb.firebaseio.com",
}});

const db = admin.firestore();

async function purgeExpired(now = Date.now()) {{
  const snap = await db.collection("sessions").where("expiresAt", "<", now).get();
  const batch = db.batch();
  snap.forEach((doc) => batch.delete(doc.ref));
  await batch.commit();
  return snap.size;
}}

module.exports = {{ purgeExpired }};
"""
    add("firebase-admin-private-key-js", "secret", "js", "functions/admin.js", t)


# ================================================================ NEGATIVES

def n_changelog_shas():
    lines = [f"# Changelog", "", "All notable changes to this project are documented here.", ""]
    for _ in range(R.randint(4, 6)):
        lines.append(f"## [{semver()}] - 2025-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}")
        lines.append("")
        for _ in range(R.randint(2, 5)):
            s = sha40()
            lines.append(f"- {pick(['Fix', 'Add', 'Remove', 'Rotate', 'Harden'])} "
                         f"{pick(['token refresh race', 'leaked credential in fixtures', 'secret scanning in CI', 'password reset flow', 'API key validation', 'retry on 429'])} "
                         f"([{s[:7]}](https://github.com/{pick(['acme', 'northwind'])}/{proj()}/commit/{s}))")
        lines.append("")
    add("changelog-commit-shas", "none", "md", "CHANGELOG.md", "\n".join(lines))


def n_blame_ignore():
    lines = ["# .git-blame-ignore-revs", "# Commits that only reformat code; configure with",
             "#   git config blame.ignoreRevsFile .git-blame-ignore-revs", ""]
    for _ in range(R.randint(6, 12)):
        lines.append(f"# {pick(['black 24 reformat', 'prettier upgrade', 'rustfmt edition 2021', 'isort', 'gofmt -s', 'trailing whitespace'])}")
        lines.append(sha40())
        lines.append("")
    add("git-blame-ignore-revs", "none", "txt", ".git-blame-ignore-revs", "\n".join(lines))


def n_submodule_status():
    lines = ["# Vendored dependencies", "", "Output of `git submodule status` at the last sync:", "", "```"]
    for name in R.sample(["vendor/protobuf", "vendor/googletest", "third_party/zstd", "third_party/abseil", "deps/libuv", "deps/openssl", "vendor/fmt"], 5):
        lines.append(f" {sha40()} {name} (v{semver()})")
    lines += ["```", "", "To update one:", "", "```sh", "git -C vendor/fmt fetch --tags", "git -C vendor/fmt checkout 10.2.1",
              "git add vendor/fmt && git commit -m 'bump fmt'", "```", "", "Pinned revisions are reviewed in the weekly sync.",
              f"Last reviewed tree: `{sha40()}`.", "", "Merge base with upstream: " + rs(HEX, 12) + "."]
    add("submodule-status-doc", "none", "md", "docs/vendoring.md", "\n".join(lines))


def n_release_notes_shas():
    s1, s2 = sha40(), sha40()
    t = f"""Release {semver()}
==================

Full diff: https://github.com/{pick(['acme', 'northwind'])}/{proj()}/compare/{s1[:12]}...{s2[:12]}

Security
--------
* The Slack token that was committed in {sha40()[:10]} has been revoked and
  the file removed from history (fix in {sha40()}).
* `SECRET_KEY` is now read from the environment only.

Changes
-------
* Upgrade to Django 5.0.6 (tree {sha40()}).
* Add `--dry-run` to the purge command.
* Build reproducibility: the wheel's RECORD now lists sha256 digests.

Reverted
--------
* "Cache JWKS for 24h" (reverts commit {s2}).

Contributors: @mkowalski, @aduarte, @r-ito
"""
    add("release-notes-shas", "none", "rst", "docs/releases/notes.rst", t)


def n_test_fixture_fakes():
    t = f"""import pytest

from {proj().replace('-', '_')}.config import Settings, load_settings

FAKE_ENV = {{
    "DATABASE_URL": "postgres://test:test@localhost:5432/test",
    "STRIPE_SECRET_KEY": "sk_test_XXXXXXXXXXXXXXXXXXXXXXXX",
    "SLACK_BOT_TOKEN": "xoxb-fake-token",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "JWT_SECRET": "not-a-real-secret",
}}


@pytest.fixture
def settings(monkeypatch) -> Settings:
    for k, v in FAKE_ENV.items():
        monkeypatch.setenv(k, v)
    return load_settings()


def test_reads_database_url(settings):
    assert settings.database_url.startswith("postgres://test")


def test_secret_is_not_logged(settings, caplog):
    settings.log_summary()
    assert "not-a-real-secret" not in caplog.text


def test_missing_key_raises(monkeypatch):
    monkeypatch.delenv("STRIPE_SECRET_KEY", raising=False)
    with pytest.raises(KeyError):
        load_settings()
"""
    add("test-fixture-obvious-fakes", "none", "py", "tests/test_config.py", t)


def n_test_dummy_go():
    t = f"""package auth_test

import (
	"testing"

	"github.com/{pick(['acme', 'northwind'])}/{proj()}/internal/auth"
)

const (
	dummyToken    = "dummy-token"
	dummyPassword = "password123"
	placeholder   = "<YOUR_API_KEY>"
)

func TestRejectsEmptyToken(t *testing.T) {{
	if _, err := auth.Parse(""); err == nil {{
		t.Fatal("expected error")
	}}
}}

func TestParsesBearer(t *testing.T) {{
	got, err := auth.Parse("Bearer " + dummyToken)
	if err != nil {{
		t.Fatal(err)
	}}
	if got != dummyToken {{
		t.Fatalf("got %q", got)
	}}
}}

func TestPlaceholderIsRejected(t *testing.T) {{
	if auth.LooksReal(placeholder) {{
		t.Fatal("placeholder accepted")
	}}
	_ = dummyPassword
}}
"""
    add("test-go-dummy-values", "none", "go", "internal/auth/auth_test.go", t)


def n_public_key_pem():
    t = "-----BEGIN PUBLIC KEY-----\n" + pem_body(294, "PUBLIC KEY") + "\n-----END PUBLIC KEY-----"
    add("public-key-pem", "none", "pem", pick(["keys/jwt_public.pem", "config/webhook_verify.pub.pem"]), t)


def n_certificate():
    t = ("# Root CA used by the internal services (public)\n"
         "-----BEGIN CERTIFICATE-----\n" + pem_body(R.randint(900, 1300), "CERTIFICATE") + "\n-----END CERTIFICATE-----")
    add("x509-certificate", "none", "crt", pick(["certs/internal-root-ca.crt", "docker/ca.crt"]), t)


def n_authorized_keys():
    lines = ["# Managed by ansible - do not edit"]
    for who in R.sample(["alice@laptop", "bob@workstation", "ci@runner", "deploy@bastion", "m.kowalski@mbp", "r.ito@thinkpad"], 4):
        kind = pick(["rsa", "ed25519"])
        if kind == "rsa":
            blob = b64(b"\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x01\x00" + rbytes(256))
            lines.append(f"ssh-rsa {blob} {who}")
        else:
            blob = b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(32))
            lines.append(f"ssh-ed25519 {blob} {who}")
    lines += ["", "# break-glass (expires 2026-06-30)",
              'from="10.0.0.0/8",no-agent-forwarding ssh-ed25519 ' + b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(32)) + " breakglass"]
    lines += [""] + ["# " + x for x in ["keys are reviewed quarterly", "add new keys via the access repo", "owner: platform",
                                       "rotation: on departure", "audit: access-review-2025Q3", "format: OpenSSH",
                                       "one key per line", "comments are ignored by sshd", "last sync: nightly", "end of file",
                                       "ticket: OPS-1412", "see docs/ssh.md"]]
    add("ssh-authorized-keys", "none", "txt", "roles/users/files/authorized_keys", "\n".join(lines))


def n_known_hosts():
    lines = []
    for _ in range(R.randint(14, 24)):
        if R.random() < 0.5:
            salt, h = b64(rbytes(20)), b64(rbytes(20))
            host = f"|1|{salt}|{h}"
        else:
            host = pick(["github.com", "gitlab.com", "bitbucket.org", f"10.0.{R.randint(0,255)}.{R.randint(1,254)}", f"bastion-{R.randint(1,9)}.{pick(SVC_HOSTS)}"])
        kind = pick(["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"])
        if kind == "ssh-ed25519":
            blob = b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(32))
        elif kind == "ssh-rsa":
            blob = b64(b"\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x81\x00" + rbytes(384))
        else:
            blob = b64(b"\x00\x00\x00\x13ecdsa-sha2-nistp256\x00\x00\x00\x08nistp256\x00\x00\x00\x41\x04" + rbytes(64))
        lines.append(f"{host} {kind} {blob}")
    add("ssh-known-hosts", "none", "txt", pick(["ci/known_hosts", "ansible/files/known_hosts"]), "\n".join(lines))


def n_gpg_public():
    body = pem_body(R.randint(1100, 1700), "PGP")
    crc = b64(rbytes(3))
    t = f"""# Release signing key

Releases are signed with the key below. Verify with:

    gpg --import KEYS.md && gpg --verify {proj()}-{semver()}.tar.gz.asc

Fingerprint: `{' '.join(rs(UP[:6] + DIG, 4) for _ in range(10))}`

```
-----BEGIN PGP PUBLIC KEY BLOCK-----

{body}
={crc}
-----END PGP PUBLIC KEY BLOCK-----
```
"""
    add("gpg-public-key-block", "none", "md", "KEYS.md", t)


def n_terraform_refs():
    t = f"""variable "db_password" {{
  type      = string
  sensitive = true
}}

variable "datadog_api_key" {{
  type      = string
  sensitive = true
}}

data "aws_secretsmanager_secret_version" "stripe" {{
  secret_id = "arn:aws:secretsmanager:eu-west-1:{R.randint(10**11, 10**12 - 1)}:secret:prod/{proj()}/stripe-{rs(ALNUM, 6)}"
}}

resource "aws_db_instance" "main" {{
  identifier          = "{proj()}-prod"
  engine              = "postgres"
  engine_version      = "16.3"
  instance_class      = "db.t4g.medium"
  allocated_storage   = 50
  username            = "app"
  password            = var.db_password
  skip_final_snapshot = false
}}

resource "aws_ssm_parameter" "stripe_key" {{
  name  = "/{proj()}/prod/stripe_secret_key"
  type  = "SecureString"
  value = jsondecode(data.aws_secretsmanager_secret_version.stripe.secret_string)["key"]
}}

provider "datadog" {{
  api_key = var.datadog_api_key
  app_key = data.aws_ssm_parameter.dd_app_key.value
}}

output "db_endpoint" {{
  value = aws_db_instance.main.endpoint
}}
"""
    add("terraform-var-data-references", "none", "tf", "infra/prod/main.tf", t)


def n_tfvars_example():
    t = f"""# Copy to terraform.tfvars and fill in. Never commit the real file.
region            = "eu-west-1"
environment       = "staging"
instance_count    = 2
db_password       = "<set-in-tfc-workspace>"
datadog_api_key   = "REPLACE_ME"
github_token      = ""
allowed_cidrs     = ["10.0.0.0/8"]
enable_waf        = true
tags = {{
  team  = "platform"
  owner = "sre@{pick(['acme-cloud.io', 'northwind.dev'])}"
}}
# The values above are placeholders. Real ones live in Terraform Cloud
# workspace variables marked sensitive.
# Region list: eu-west-1, eu-central-1, us-east-1
# instance_count must be >= 2 in production
# allowed_cidrs: office VPN only
# enable_waf: required for PCI scope
# tags are merged with default_tags from the provider block
# see docs/terraform.md
# end
"""
    add("tfvars-example-placeholders", "none", "tfvars", "infra/terraform.tfvars.example", t)


def n_helm_values_refs():
    t = f"""{{{{- /* deployment for {proj()} */ -}}}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{{{ include "app.fullname" . }}}}
  labels:
    {{{{- include "app.labels" . | nindent 4 }}}}
spec:
  replicas: {{{{ .Values.replicaCount }}}}
  selector:
    matchLabels:
      {{{{- include "app.selectorLabels" . | nindent 6 }}}}
  template:
    spec:
      containers:
        - name: app
          image: "{{{{ .Values.image.repository }}}}:{{{{ .Values.image.tag | default .Chart.AppVersion }}}}"
          env:
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {{{{ .Values.database.existingSecret }}}}
                  key: password
            - name: API_TOKEN
              value: {{{{ .Values.apiToken | quote }}}}
            - name: STRIPE_SECRET_KEY
              valueFrom:
                secretKeyRef:
                  name: stripe
                  key: secret-key
          ports:
            - containerPort: 8080
"""
    add("helm-template-values-refs", "none", "yaml", "charts/app/templates/deployment.yaml", t)


def n_actions_secrets_refs():
    t = f"""name: deploy

on:
  workflow_dispatch:
  push:
    branches: [main]

jobs:
  deploy:
    runs-on: ubuntu-latest
    environment: production
    permissions:
      id-token: write
      contents: read
    steps:
      - uses: actions/checkout@{sha40()}
      - uses: aws-actions/configure-aws-credentials@{sha40()}
        with:
          role-to-assume: arn:aws:iam::{R.randint(10**11, 10**12 - 1)}:role/gha-deploy
          aws-region: eu-west-1
      - name: Deploy
        env:
          SLACK_WEBHOOK_URL: ${{{{ secrets.SLACK_WEBHOOK_URL }}}}
          NPM_TOKEN: ${{{{ secrets.NPM_TOKEN }}}}
          DATABASE_PASSWORD: ${{{{ secrets.PROD_DB_PASSWORD }}}}
          GITHUB_TOKEN: ${{{{ github.token }}}}
        run: |
          ./scripts/deploy.sh --env production
      - name: Cache
        uses: actions/cache@{sha40()}
        with:
          path: ~/.npm
          key: npm-${{{{ hashFiles('**/package-lock.json') }}}}
"""
    add("actions-secrets-refs-pinned-shas", "none", "yml", ".github/workflows/deploy.yml", t)


def n_k8s_secretkeyref():
    t = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {proj()}
  annotations:
    checksum/config: {rs(HEX, 64)}
spec:
  replicas: 3
  template:
    metadata:
      annotations:
        vault.hashicorp.com/agent-inject: "true"
        vault.hashicorp.com/agent-inject-secret-db: "database/creds/{proj()}-rw"
        vault.hashicorp.com/role: "{proj()}"
    spec:
      serviceAccountName: {proj()}
      containers:
        - name: app
          image: ghcr.io/acme/{proj()}@sha256:{rs(HEX, 64)}
          envFrom:
            - secretRef:
                name: {proj()}-env
          env:
            - name: REDIS_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: redis
                  key: redis-password
            - name: JWT_SIGNING_KEY_FILE
              value: /vault/secrets/jwt
"""
    add("k8s-secretkeyref-vault-annotations", "none", "yaml", f"k8s/{proj()}/deployment.yaml", t)


def n_env_lookups_multi(lang=None):
    lang = lang or pick(["py", "js", "rb", "java", "cs", "rs", "go"])
    if lang == "py":
        t = """import os

DATABASE_URL = os.environ["DATABASE_URL"]
SECRET_KEY = os.getenv("DJANGO_SECRET_KEY")
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
AWS_SECRET_ACCESS_KEY = os.getenv("AWS_SECRET_ACCESS_KEY")
SENDGRID_API_KEY = os.environ.get("SENDGRID_API_KEY")
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
PASSWORD_RESET_TIMEOUT = 3600
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
DEBUG = os.getenv("DEBUG", "0") == "1"
ALLOWED_HOSTS = os.getenv("ALLOWED_HOSTS", "localhost").split(",")
if not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY is required")
"""
        path = "config/settings/production.py"
    elif lang == "js":
        t = """"use strict";

module.exports = {
  port: Number(process.env.PORT || 3000),
  db: {
    url: process.env.DATABASE_URL,
    password: process.env.DB_PASSWORD,
    ssl: process.env.DB_SSL !== "false",
  },
  stripe: {
    secretKey: process.env.STRIPE_SECRET_KEY,
    webhookSecret: process.env.STRIPE_WEBHOOK_SECRET,
  },
  jwt: {
    secret: process.env.JWT_SECRET,
    expiresIn: "15m",
    refreshTokenTtl: 60 * 60 * 24 * 30,
  },
  slack: { token: process.env["SLACK_BOT_TOKEN"] },
  github: { token: process.env.GITHUB_TOKEN ?? "" },
};

if (!module.exports.jwt.secret) {
  throw new Error("JWT_SECRET must be set");
}
"""
        path = "src/config/index.js"
    elif lang == "rb":
        t = """# frozen_string_literal: true

Rails.application.configure do
  config.x.stripe.secret_key = ENV.fetch("STRIPE_SECRET_KEY")
  config.x.stripe.webhook_secret = ENV.fetch("STRIPE_WEBHOOK_SECRET")
  config.x.sendgrid.api_key = ENV["SENDGRID_API_KEY"]
  config.x.slack.token = ENV.fetch("SLACK_TOKEN", nil)
  config.secret_key_base = ENV.fetch("SECRET_KEY_BASE") { Rails.application.credentials.secret_key_base }

  config.action_mailer.smtp_settings = {
    address: "smtp.sendgrid.net",
    port: 587,
    user_name: "apikey",
    password: ENV.fetch("SENDGRID_API_KEY"),
    authentication: :plain,
    enable_starttls_auto: true
  }

  config.force_ssl = true
  config.log_level = :info
  config.active_record.encryption.primary_key = Rails.application.credentials.dig(:ar, :primary_key)
  config.filter_parameters += [:password, :token, :secret, :api_key]
end
"""
        path = "config/environments/production.rb"
    elif lang == "java":
        t = """package com.acme.config;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Configuration;

@Configuration
public class SecretsConfig {

    @Value("${app.jwt.secret}")
    private String jwtSecret;

    @Value("${spring.datasource.password}")
    private String dbPassword;

    private final String apiKey = System.getenv("PARTNER_API_KEY");
    private final String awsSecret = System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "");

    public String jwtSecret() {
        return jwtSecret;
    }

    public String dbPassword() {
        return dbPassword;
    }

    public String apiKey() {
        return apiKey;
    }

    public boolean hasAws() {
        return !awsSecret.isEmpty();
    }
}
"""
        path = "src/main/java/com/acme/config/SecretsConfig.java"
    elif lang == "cs":
        t = """using System;
using Microsoft.Extensions.Configuration;

namespace Acme.Api
{
    public sealed class Secrets
    {
        public string DbPassword { get; }
        public string StripeKey { get; }
        public string StorageConnection { get; }

        public Secrets(IConfiguration config)
        {
            DbPassword = Environment.GetEnvironmentVariable("DB_PASSWORD")
                ?? throw new InvalidOperationException("DB_PASSWORD missing");
            StripeKey = config["Stripe:SecretKey"] ?? string.Empty;
            StorageConnection = config.GetConnectionString("Blob")
                ?? Environment.GetEnvironmentVariable("AZURE_STORAGE_CONNECTION_STRING")
                ?? string.Empty;
        }

        public override string ToString() => "Secrets(***)";
    }
}
"""
        path = "src/Api/Secrets.cs"
    elif lang == "rs":
        t = """use std::env;

#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    pub api_token: String,
    pub webhook_secret: Vec<u8>,
    pub port: u16,
}

impl Config {
    pub fn from_env() -> anyhow::Result<Self> {
        Ok(Self {
            database_url: env::var("DATABASE_URL")?,
            api_token: env::var("API_TOKEN")?,
            webhook_secret: env::var("WEBHOOK_SECRET")?.into_bytes(),
            port: env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn default_port() {
        std::env::remove_var("PORT");
        assert_eq!(8080u16, std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080));
    }
}
"""
        path = "src/config.rs"
    else:
        t = """package config

import (
	"fmt"
	"os"
)

type Config struct {
	DatabaseURL   string
	SlackToken    string
	SigningSecret []byte
}

func Load() (*Config, error) {
	c := &Config{
		DatabaseURL:   os.Getenv("DATABASE_URL"),
		SlackToken:    os.Getenv("SLACK_BOT_TOKEN"),
		SigningSecret: []byte(os.Getenv("SIGNING_SECRET")),
	}
	if c.DatabaseURL == "" {
		return nil, fmt.Errorf("DATABASE_URL is required")
	}
	if len(c.SigningSecret) < 32 {
		return nil, fmt.Errorf("SIGNING_SECRET must be at least 32 bytes")
	}
	return c, nil
}
"""
        path = "internal/config/config.go"
    add(f"env-lookup-{lang}", "none", lang, path, t)


def n_compose_interpolation():
    t = f"""services:
  db:
    image: postgres:16@sha256:{rs(HEX, 64)}
    environment:
      POSTGRES_USER: ${{POSTGRES_USER:-app}}
      POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}}
      POSTGRES_DB: {proj().replace('-', '_')}
    volumes:
      - pgdata:/var/lib/postgresql/data

  api:
    build: .
    environment:
      DATABASE_URL: postgres://${{POSTGRES_USER:-app}}:${{POSTGRES_PASSWORD}}@db:5432/app
      STRIPE_SECRET_KEY: ${{STRIPE_SECRET_KEY}}
      JWT_SECRET: ${{JWT_SECRET}}
    secrets:
      - github_token
    depends_on: [db]

secrets:
  github_token:
    file: ./secrets/github_token.txt

volumes:
  pgdata:
"""
    add("compose-env-interpolation", "none", "yml", "docker-compose.yml", t)


def n_ansible_vault_refs():
    t = f"""---
- hosts: db
  become: true
  vars_files:
    - vars/vault.yml
  vars:
    pg_version: 16
    app_db_user: {proj().replace('-', '_')}
    app_db_password: "{{{{ vault_app_db_password }}}}"
    replication_password: "{{{{ vault_replication_password }}}}"
    api_token: "{{{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/{proj()}:token') }}}}"
  tasks:
    - name: Create application role
      community.postgresql.postgresql_user:
        name: "{{{{ app_db_user }}}}"
        password: "{{{{ app_db_password }}}}"
        role_attr_flags: LOGIN
      no_log: true

    - name: Template pgpass
      ansible.builtin.template:
        src: pgpass.j2
        dest: /root/.pgpass
        mode: "0600"
      no_log: true
"""
    add("ansible-vault-var-refs", "none", "yml", "playbooks/db.yml", t)


def n_ansible_vault_encrypted():
    """An ansible-vault encrypted file is ciphertext, not a leak."""
    hexbody = rs(HEX, 80 * R.randint(12, 20))
    lines = ["$ANSIBLE_VAULT;1.1;AES256"] + [hexbody[i:i + 80] for i in range(0, len(hexbody), 80)]
    add("ansible-vault-ciphertext", "none", "yml", "group_vars/prod/vault.yml", "\n".join(lines))


def n_spring_placeholders():
    t = f"""spring:
  application:
    name: {proj()}
  datasource:
    url: jdbc:postgresql://${{DB_HOST:localhost}}:5432/${{DB_NAME:app}}
    username: ${{DB_USER}}
    password: ${{DB_PASSWORD}}
  security:
    oauth2:
      client:
        registration:
          keycloak:
            client-id: {proj()}
            client-secret: ${{KEYCLOAK_CLIENT_SECRET}}
            authorization-grant-type: client_credentials
            scope: openid
  cloud:
    vault:
      uri: https://vault.{pick(SVC_HOSTS)}:8200
      authentication: KUBERNETES
      kv:
        backend: secret
        default-context: {proj()}

app:
  jwt:
    secret: ${{JWT_SECRET}}
    token-type: Bearer
    access-token-ttl: 15m
  password-policy:
    min-length: 12
    require-digit: true
"""
    add("spring-yaml-placeholders", "none", "yml", "src/main/resources/application.yml", t)


def n_urls_no_creds():
    t = f"""# Service endpoints

| Service | URL |
|---|---|
| API | https://api.{pick(SVC_HOSTS)}/v2 |
| Auth | https://auth.{pick(SVC_HOSTS)}/oauth2/token |
| Grafana | https://grafana.{pick(SVC_HOSTS)}/d/{rs(ALNUM, 9)}/overview?orgId=1&refresh=30s |
| Postgres (read replica) | postgresql://replica.{pick(SVC_HOSTS)}:5432/app?sslmode=require |
| Redis | rediss://cache.{pick(SVC_HOSTS)}:6380/0 |
| Status | https://status.{pick(SVC_HOSTS)} |

Credentials for all of the above come from Vault:
`vault read database/creds/app-readonly`.

The OAuth token endpoint accepts `grant_type=client_credentials` only.
Token lifetime is 3600 seconds.

Example request (replace `<client_id>` and `<client_secret>`):

```sh
curl -u "<client_id>:<client_secret>" \\
  -d grant_type=client_credentials \\
  https://auth.{pick(SVC_HOSTS)}/oauth2/token
```

Dashboards: https://grafana.{pick(SVC_HOSTS)}/d/{rs(ALNUM, 9)}/latency
"""
    add("doc-urls-without-credentials", "none", "md", "docs/endpoints.md", t)


def n_masked_logs():
    lines = []
    import datetime as _dt
    ts = R.randint(1730000000, 1760000000)
    for i in range(R.randint(20, 30)):
        t = _dt.datetime.utcfromtimestamp(ts + i * 3).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
        lines.append(pick([
            f"{t} INFO  config loaded: DATABASE_URL=postgres://app:****@db:5432/app",
            f"{t} INFO  using STRIPE_SECRET_KEY=sk_live_************************",
            f"{t} DEBUG request headers: {{'Authorization': 'Bearer [REDACTED]', 'X-Request-Id': '{ruuid()}'}}",
            f"{t} INFO  aws credentials: access_key=AKIA************ secret=<redacted>",
            f"{t} WARN  token refresh failed for client {rs(DIG, 6)}: invalid_grant",
            f"{t} INFO  GET /api/v1/orders 200 {R.randint(3, 400)}ms trace={rs(HEX, 32)} span={rs(HEX, 16)}",
            f"{t} INFO  password=******** user=admin login ok",
            f"{t} INFO  github token: ghp_****...****",
        ]))
    add("log-masked-values", "none", "log", f"logs/app-{R.randint(1, 30):02d}.log", "\n".join(lines))


def n_lockfile_npm():
    pkgs = {}
    for name in R.sample(["lodash", "react", "react-dom", "axios", "express", "debug", "ms", "chalk", "commander", "semver", "uuid", "zod"], 9):
        ver = semver()
        pkgs[f"node_modules/{name}"] = {
            "version": ver,
            "resolved": f"https://registry.npmjs.org/{name}/-/{name}-{ver}.tgz",
            "integrity": "sha512-" + b64(rbytes(64)),
            "license": "MIT",
        }
    d = {"name": proj(), "version": semver(), "lockfileVersion": 3, "requires": True,
         "packages": {"": {"name": proj(), "version": "1.0.0", "dependencies": {k.split('/')[-1]: "^" + v["version"] for k, v in pkgs.items()}}, **pkgs}}
    add("npm-lockfile-integrity", "none", "json", "package-lock.json", json.dumps(d, indent=2))


def n_lockfile_cargo():
    lines = ["# This file is automatically @generated by Cargo.", "# It is not intended for manual editing.", "version = 3", ""]
    for name in R.sample(["serde", "serde_json", "tokio", "anyhow", "regex", "memchr", "once_cell", "itoa", "ryu", "bytes", "libc"], 7):
        lines += ["[[package]]", f'name = "{name}"', f'version = "{semver()}"',
                  'source = "registry+https://github.com/rust-lang/crates.io-index"',
                  f'checksum = "{rs(HEX, 64)}"', ""]
    add("cargo-lock-checksums", "none", "lock", "Cargo.lock", "\n".join(lines))


def n_go_sum():
    lines = []
    for mod in R.sample(["github.com/google/uuid", "golang.org/x/sync", "golang.org/x/text", "github.com/stretchr/testify",
                         "github.com/spf13/cobra", "gopkg.in/yaml.v3", "github.com/rs/zerolog", "github.com/pkg/errors",
                         "go.uber.org/zap", "github.com/jackc/pgx/v5"], 9):
        v = "v" + semver()
        lines.append(f"{mod} {v} h1:{b64(rbytes(32))}")
        lines.append(f"{mod} {v}/go.mod h1:{b64(rbytes(32))}")
    add("go-sum-hashes", "none", "sum", "go.sum", "\n".join(lines))


def n_poetry_lock():
    lines = []
    for name in R.sample(["requests", "urllib3", "idna", "certifi", "charset-normalizer", "pydantic", "typing-extensions", "click"], 5):
        v = semver()
        lines += ["[[package]]", f'name = "{name}"', f'version = "{v}"', 'description = ""', 'optional = false',
                  'python-versions = ">=3.8"', "files = [",
                  f'    {{file = "{name.replace("-", "_")}-{v}-py3-none-any.whl", hash = "sha256:{rs(HEX, 64)}"}},',
                  f'    {{file = "{name.replace("-", "_")}-{v}.tar.gz", hash = "sha256:{rs(HEX, 64)}"}},', "]", ""]
    lines += ["[metadata]", 'lock-version = "2.0"', 'python-versions = "^3.11"', f'content-hash = "{rs(HEX, 64)}"']
    add("poetry-lock-hashes", "none", "lock", "poetry.lock", "\n".join(lines))


def n_sri_html():
    t = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{proj().title()} dashboard</title>
  <link rel="stylesheet"
        href="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css"
        integrity="sha384-{b64(rbytes(48))}"
        crossorigin="anonymous">
  <script src="https://cdn.jsdelivr.net/npm/htmx.org@1.9.12/dist/htmx.min.js"
          integrity="sha384-{b64(rbytes(48))}"
          crossorigin="anonymous"></script>
  <meta name="csrf-param" content="authenticity_token">
  <meta name="build" content="{rs(HEX, 40)}">
  <link rel="icon" href="data:image/png;base64,{b64(png_bytes())}">
</head>
<body>
  <main class="container">
    <h1>Dashboard</h1>
    <div id="orders" hx-get="/orders" hx-trigger="load"></div>
    <form method="post" action="/logout">
      <button type="submit" class="btn btn-link">Sign out</button>
    </form>
  </main>
  <script src="/static/app.{rs(HEX, 8)}.js"
          integrity="sha256-{b64(rbytes(32))}"></script>
</body>
</html>
"""
    add("html-sri-integrity-datauri", "none", "html", "templates/dashboard.html", t)


def png_bytes():
    w, h = R.randint(8, 16), R.randint(8, 16)
    raw = b"".join(b"\x00" + rbytes(w * 3) for _ in range(h))

    def chunk(typ, data):
        c = struct.pack(">I", len(data)) + typ + data
        return c + struct.pack(">I", zlib.crc32(typ + data) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def n_css_font_base64():
    font = b"wOF2\x00\x01\x00\x00" + rbytes(R.randint(400, 700))
    enc = b64(font)
    t = f"""/* Generated by the icon build; do not edit by hand */
@font-face {{
  font-family: "AppIcons";
  src: url("data:font/woff2;base64,{enc}") format("woff2");
  font-weight: normal;
  font-style: normal;
  font-display: block;
}}

.icon {{
  font-family: "AppIcons" !important;
  speak: never;
  font-style: normal;
  line-height: 1;
  -webkit-font-smoothing: antialiased;
}}

.icon-key:before {{ content: "\\e901"; }}
.icon-lock:before {{ content: "\\e902"; }}
.icon-token:before {{ content: "\\e903"; }}
.icon-secret:before {{ content: "\\e904"; }}
.icon-password:before {{ content: "\\e905"; }}

.logo {{
  background-image: url("data:image/png;base64,{b64(png_bytes())}");
  width: 16px;
  height: 16px;
}}
"""
    add("css-base64-font-and-image", "none", "css", "static/css/icons.css", t)


def n_protobuf_descriptor():
    desc = b"\n\x0corders.proto\x12\x06orders" + rbytes(R.randint(250, 420))
    enc = b64(desc)
    t = f"""# -*- coding: utf-8 -*-
# Generated by the protocol buffer compiler.  DO NOT EDIT!
# source: orders.proto
\"\"\"Generated protocol buffer code.\"\"\"
from google.protobuf import descriptor as _descriptor
from google.protobuf import descriptor_pool as _descriptor_pool
from google.protobuf import symbol_database as _symbol_database
from google.protobuf.internal import builder as _builder

_sym_db = _symbol_database.Default()


DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(
    __import__("base64").b64decode(
        "{enc}"
    )
)

_globals = globals()
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, _globals)
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, "orders_pb2", _globals)
if _descriptor._USE_C_DESCRIPTORS == False:
    DESCRIPTOR._options = None
    _globals["_ORDER"]._serialized_start = {R.randint(20, 60)}
    _globals["_ORDER"]._serialized_end = {R.randint(200, 300)}
    _globals["_ORDERSERVICE"]._serialized_start = {R.randint(300, 350)}
    _globals["_ORDERSERVICE"]._serialized_end = {R.randint(360, 420)}
"""
    add("protobuf-descriptor-base64", "none", "py", "gen/orders_pb2.py", t)


def n_publishable_stripe():
    t = f"""// Stripe publishable key: documented by Stripe as safe to embed in
// client code (https://stripe.com/docs/keys#obtain-api-keys).
import {{ loadStripe }} from "@stripe/stripe-js";

export const stripePromise = loadStripe(
  "pk_live_{rs(ALNUM, 99)}"
);

export async function checkout(sessionId: string): Promise<void> {{
  const stripe = await stripePromise;
  if (!stripe) throw new Error("stripe failed to load");
  const {{ error }} = await stripe.redirectToCheckout({{ sessionId }});
  if (error) {{
    console.error(error.message);
  }}
}}

export function formatAmount(cents: number, currency = "EUR"): string {{
  return new Intl.NumberFormat("en-IE", {{ style: "currency", currency }}).format(cents / 100);
}}

export const SUPPORTED_CURRENCIES = ["EUR", "USD", "GBP"] as const;
export type Currency = (typeof SUPPORTED_CURRENCIES)[number];
"""
    add("publishable-stripe-pk-live-public-by-design", "none", "ts", "web/src/payments/stripe.ts", t)


def n_publishable_sentry_dsn():
    t = f"""import * as Sentry from "@sentry/react";

// The DSN is public: Sentry documents it as safe to ship in client bundles.
Sentry.init({{
  dsn: "https://{rs(HEX, 32)}@o{R.randint(100000, 999999)}.ingest.sentry.io/{R.randint(1000000, 9999999)}",
  release: import.meta.env.VITE_RELEASE,
  environment: import.meta.env.MODE,
  integrations: [Sentry.browserTracingIntegration()],
  tracesSampleRate: 0.1,
  replaysSessionSampleRate: 0.0,
  beforeSend(event) {{
    if (event.request?.headers) {{
      delete event.request.headers["Authorization"];
    }}
    return event;
  }},
}});

export function captureError(err: unknown, ctx?: Record<string, unknown>) {{
  Sentry.captureException(err, {{ extra: ctx }});
}}

export default Sentry;
"""
    add("sentry-dsn-public-by-design", "none", "ts", "web/src/sentry.ts", t)


def n_mapbox_public():
    payload = b64u(json.dumps({"u": pick(["acme", "northwind-maps"]), "a": "cl" + rs(LO + DIG, 23)}, separators=(",", ":")).encode())
    t = f"""<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <link href="https://api.mapbox.com/mapbox-gl-js/v3.4.0/mapbox-gl.css" rel="stylesheet">
  <script src="https://api.mapbox.com/mapbox-gl-js/v3.4.0/mapbox-gl.js"></script>
  <style>#map {{ position: absolute; top: 0; bottom: 0; width: 100%; }}</style>
</head>
<body>
  <div id="map"></div>
  <script>
    // Mapbox default public token (pk.*), URL-restricted; public by design.
    mapboxgl.accessToken = "pk.{payload}.{rs(B64URL, 22)}";
    const map = new mapboxgl.Map({{
      container: "map",
      style: "mapbox://styles/mapbox/streets-v12",
      center: [{R.uniform(-10, 20):.4f}, {R.uniform(40, 55):.4f}],
      zoom: 11,
    }});
    map.addControl(new mapboxgl.NavigationControl());
  </script>
</body>
</html>
"""
    add("mapbox-public-pk-token-public-by-design", "none", "html", "public/map.html", t)


def n_enums_identifiers(lang=None):
    lang = lang or pick(["kt", "py", "ts", "java"])
    if lang == "kt":
        t = """package com.acme.auth

enum class TokenType { BEARER, MAC, BASIC }

enum class GrantType(val wire: String) {
    AUTHORIZATION_CODE("authorization_code"),
    CLIENT_CREDENTIALS("client_credentials"),
    REFRESH_TOKEN("refresh_token"),
    PASSWORD("password"),
}

object AuthDefaults {
    const val PASSWORD_RESET_TOKEN_TTL = 3600
    const val ACCESS_TOKEN_HEADER = "Authorization"
    const val REFRESH_TOKEN_COOKIE = "refresh_token"
    const val SECRET_ROTATION_DAYS = 90
    val DEFAULT_TOKEN_TYPE = TokenType.BEARER
    const val API_KEY_HEADER = "X-Api-Key"
    const val PASSWORD_FIELD = "password"
}

fun parseGrant(s: String): GrantType? = GrantType.values().firstOrNull { it.wire == s }
"""
        path = "auth/src/main/kotlin/AuthTypes.kt"
    elif lang == "py":
        t = '''import enum


class TokenType(str, enum.Enum):
    BEARER = "bearer"
    API_KEY = "api_key"
    SESSION = "session"


class GrantType(str, enum.Enum):
    CLIENT_CREDENTIALS = "client_credentials"
    AUTHORIZATION_CODE = "authorization_code"
    REFRESH_TOKEN = "refresh_token"


class SecretKind(enum.IntEnum):
    PASSWORD = 1
    PRIVATE_KEY = 2
    ACCESS_TOKEN = 3


password_reset_token_ttl = 3600
access_token_ttl = 900
secret_rotation_days = 90
api_key_header = "X-Api-Key"
token_endpoint = "/oauth/token"
password_field_name = "password"
secret_key_env_var = "SECRET_KEY"
'''
        path = "app/auth/types.py"
    elif lang == "ts":
        t = """export enum TokenType {
  Bearer = "Bearer",
  ApiKey = "ApiKey",
  Session = "Session",
}

export const GrantType = {
  ClientCredentials: "client_credentials",
  AuthorizationCode: "authorization_code",
  RefreshToken: "refresh_token",
} as const;

export const AUTH_HEADER = "Authorization";
export const API_KEY_HEADER = "x-api-key";
export const SECRET_FIELD_NAMES = ["password", "token", "secret", "apiKey", "privateKey"];
export const PASSWORD_RESET_TOKEN_TTL_SECONDS = 3600;
export const ACCESS_TOKEN_STORAGE_KEY = "app.accessToken";
export const REFRESH_TOKEN_STORAGE_KEY = "app.refreshToken";

export function isSecretField(name: string): boolean {
  return SECRET_FIELD_NAMES.some((n) => name.toLowerCase().includes(n.toLowerCase()));
}
"""
        path = "web/src/auth/constants.ts"
    else:
        t = """package com.acme.security;

public final class SecurityConstants {
    public static final String TOKEN_PREFIX = "Bearer ";
    public static final String HEADER_STRING = "Authorization";
    public static final String SECRET_PROPERTY = "app.jwt.secret";
    public static final String PASSWORD_PARAM = "password";
    public static final String CLIENT_SECRET_PARAM = "client_secret";
    public static final String GRANT_TYPE_CLIENT_CREDENTIALS = "client_credentials";
    public static final long PASSWORD_RESET_TOKEN_TTL = 3600L;
    public static final long EXPIRATION_TIME = 864_000_000L;
    public static final String SIGN_UP_URL = "/api/users/sign-up";

    public enum TokenType { ACCESS, REFRESH, PASSWORD_RESET }

    private SecurityConstants() {}
}
"""
        path = "src/main/java/com/acme/security/SecurityConstants.java"
    add(f"identifiers-enums-{lang}", "none", lang, path, t)


def n_i18n():
    d = {
        "auth": {
            "password": "Password",
            "password_hint": "At least 12 characters, one digit and one symbol.",
            "password_too_short": "Your password must be at least {{min}} characters.",
            "password_mismatch": "Passwords do not match.",
            "forgot_password": "Forgot your password?",
            "reset_token_expired": "This reset link has expired. Request a new one.",
            "api_key_created": "Your new API key is shown once. Copy it now.",
            "api_key_revoked": "API key revoked.",
            "secret": "Secret",
            "token_label": "Personal access token",
            "two_factor_secret": "Scan this QR code with your authenticator app.",
        },
        "settings": {"title": "Settings", "tokens": "Tokens", "danger_zone": "Danger zone",
                     "rotate_secret": "Rotate signing secret", "webhook_secret_help": "Used to sign webhook payloads."},
    }
    lang = pick(["en", "de", "fr"])
    if lang == "de":
        d["auth"]["password"] = "Passwort"
        d["auth"]["forgot_password"] = "Passwort vergessen?"
    add("i18n-strings", "none", "json", f"web/public/locales/{lang}/common.json", json.dumps(d, indent=2, ensure_ascii=False))


def n_password_policy():
    t = f"""# Password and token policy (reviewed by security, 2025-Q2)
password_policy:
  min_length: 12
  max_length: 128
  require_uppercase: true
  require_digit: true
  require_symbol: false
  disallow_common: true
  history: 5
  max_age_days: 0
  hash:
    algorithm: argon2id
    memory_kib: 19456
    iterations: 2
    parallelism: 1
lockout:
  max_attempts: 10
  window_seconds: 900
tokens:
  access_token_ttl: 15m
  refresh_token_ttl: 30d
  password_reset_token_ttl: 3600
  api_key_prefix: "{pick(['acme', 'nw', 'glx'])}_"
  api_key_length: 40
secrets:
  rotation_days: 90
  store: vault
"""
    add("password-policy-config", "none", "yaml", "config/security-policy.yaml", t)


def n_sql_schema():
    t = """CREATE TABLE accounts (
    id              UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    email           CITEXT NOT NULL UNIQUE,
    password_hash   TEXT NOT NULL,
    password_salt   BYTEA,
    password_algo   TEXT NOT NULL DEFAULT 'argon2id',
    mfa_secret_enc  BYTEA,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id          UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id  UUID NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    prefix      VARCHAR(12) NOT NULL,
    key_hash    CHAR(64) NOT NULL,
    last_used   TIMESTAMPTZ,
    revoked_at  TIMESTAMPTZ
);

CREATE TABLE password_reset_tokens (
    token_hash  CHAR(64) PRIMARY KEY,
    account_id  UUID NOT NULL REFERENCES accounts(id),
    expires_at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX api_keys_prefix_idx ON api_keys (prefix);
COMMENT ON COLUMN api_keys.key_hash IS 'sha256 of the full key; the key itself is never stored';
"""
    add("sql-schema-password-columns", "none", "sql", "db/schema.sql", t)


def n_feature_flags():
    d = {"flags": {}}
    for name in R.sample(["new_checkout", "token_rotation_ui", "passwordless_login", "secret_scanning_banner",
                          "api_keys_v2", "dark_mode", "bulk_export", "sso_enforcement", "rate_limit_v3"], 7):
        d["flags"][name] = {"enabled": R.random() < 0.5, "rollout": R.choice([0, 10, 25, 50, 100]),
                            "owner": pick(["growth", "platform", "identity"]),
                            "id": ruuid(), "variant_salt": rs(HEX, 8)}
    add("feature-flags-json", "none", "json", "config/flags.json", json.dumps(d, indent=2))


def n_minified_js():
    idents = [rs(LO + UP, R.randint(1, 3)) for _ in range(60)]
    parts = []
    for i in range(R.randint(20, 30)):
        a, b, c = pick(idents), pick(idents), pick(idents)
        parts.append(pick([
            f'function {a}({b},{c}){{return {b}&&{c}?{b}.{pick(["map", "filter", "reduce"])}({c}):null}}',
            f'var {a}="{rs(ALNUM, R.randint(6, 14))}",{b}={R.randint(0, 9999)};',
            f'{a}.prototype.{pick(["render", "update", "setToken", "getSecret", "init"])}=function(){{this.{b}={c}}};',
            f'const {a}={{id:"{rs(LO + DIG, 8)}",hash:"{rs(HEX, 20)}",v:{R.randint(1, 9)}}};',
            f'!function({a}){{{a}.exports={{{b}:{c}}}}}(module);',
            f'{a}["{pick(["password", "token", "apiKey", "secret"])}Field"]="{pick(["password", "token", "api_key"])}";',
        ]))
    lines = ["/*! app.bundle.js | (c) Acme | MIT */"]
    cur = ""
    for p in parts:
        cur += p
        if len(cur) > 400:
            lines.append(cur)
            cur = ""
    lines.append(cur)
    lines.append(f"//# sourceMappingURL=app.{rs(HEX, 20)}.js.map")
    add("minified-js-bundle", "none", "js", f"dist/assets/app.{rs(HEX, 8)}.js", "\n".join(lines))


def n_api_docs_placeholders():
    t = f"""# Authentication

All requests need an API key in the `Authorization` header.

```http
GET /v1/customers HTTP/1.1
Host: api.{pick(SVC_HOSTS)}
Authorization: Bearer <YOUR_API_KEY>
```

With curl:

```sh
export API_KEY=sk_test_XXXXXXXXXXXXXXXXXXXXXXXX   # example only
curl -H "Authorization: Bearer $API_KEY" https://api.{pick(SVC_HOSTS)}/v1/customers
```

Python:

```python
import os
client = Client(api_key=os.environ["API_KEY"])  # never hard-code keys
```

Keys look like `sk_live_...` (secret, server-side) and `pk_live_...`
(publishable). Replace `<token>` in the examples with your own.

| Field | Example |
|---|---|
| `api_key` | `YOUR_API_KEY_HERE` |
| `webhook_secret` | `whsec_...` |
| `password` | `********` |
"""
    add("api-docs-placeholders", "none", "md", "docs/api/authentication.md", t)


def n_uuids_traces():
    rows = ["timestamp,request_id,trace_id,span_id,tenant_id,status,latency_ms"]
    for _ in range(R.randint(20, 40)):
        rows.append(f"2025-{R.randint(1,12):02d}-{R.randint(1,28):02d}T{R.randint(0,23):02d}:{R.randint(0,59):02d}:{R.randint(0,59):02d}Z,"
                    f"{ruuid()},{rs(HEX, 32)},{rs(HEX, 16)},{ruuid()},{pick([200, 200, 201, 404, 500])},{R.randint(2, 900)}")
    add("csv-uuids-trace-ids", "none", "csv", "data/exports/requests_sample.csv", "\n".join(rows))


def n_docker_digests():
    t = f"""# Image pins, updated by renovate
FROM node:20-alpine@sha256:{rs(HEX, 64)} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci
COPY . .
RUN npm run build

FROM gcr.io/distroless/nodejs20-debian12@sha256:{rs(HEX, 64)}
WORKDIR /app
COPY --from=build /src/dist ./dist
COPY --from=build /src/node_modules ./node_modules
ENV NODE_ENV=production
ARG GIT_SHA={sha40()}
LABEL org.opencontainers.image.revision=$GIT_SHA
LABEL org.opencontainers.image.source=https://github.com/{pick(['acme', 'northwind'])}/{proj()}
USER nonroot
EXPOSE 3000
CMD ["dist/server.js"]
# build secrets come from BuildKit secret mounts, never ARG/ENV
# docker build --secret id=npmrc,src=$HOME/.npmrc .
"""
    add("dockerfile-digests-secret-mount", "none", "dockerfile", "Dockerfile", t)


def n_etags_http():
    t = f"""HTTP/2 200
content-type: application/javascript
etag: "{rs(HEX, 32)}"
cache-control: public, max-age=31536000, immutable
x-amz-cf-id: {rs(ALNUM + '_-', 56)}==
x-amz-version-id: {rs(ALNUM + '._', 32)}
x-cache: Hit from cloudfront
x-amz-request-id: {rs(UP + DIG, 16)}
x-amz-id-2: {b64(rbytes(56))}
content-md5: {b64(rbytes(16))}
x-content-sha256: {rs(HEX, 64)}
server-timing: cdn-cache;desc=HIT, edge;dur={R.randint(1, 30)}
traceparent: 00-{rs(HEX, 32)}-{rs(HEX, 16)}-01
vary: Accept-Encoding
age: {R.randint(10, 90000)}
date: Mon, 0{R.randint(1, 9)} Jun 2025 12:00:00 GMT
content-length: {R.randint(1000, 90000)}
via: 1.1 {rs(HEX, 32)}.cloudfront.net (CloudFront)
alt-svc: h3=":443"; ma=86400
strict-transport-security: max-age=63072000
x-frame-options: DENY
x-content-type-options: nosniff
"""
    add("http-response-etags-request-ids", "none", "http", "docs/debug/cdn-response.http", t)


def n_cache_keys_ci():
    t = f"""# GitLab CI cache configuration
.node-cache: &node-cache
  cache:
    key:
      files:
        - package-lock.json
      prefix: node-{rs(HEX, 8)}
    paths:
      - .npm/

.pip-cache: &pip-cache
  cache:
    key: pip-{rs(HEX, 40)}
    paths:
      - .cache/pip

variables:
  npm_config_cache: "$CI_PROJECT_DIR/.npm"
  PIP_CACHE_DIR: "$CI_PROJECT_DIR/.cache/pip"
  BUILDKIT_INLINE_CACHE: "1"
  DOCKER_CACHE_IMAGE: "$CI_REGISTRY_IMAGE/cache:{rs(HEX, 12)}"

lint:
  <<: *node-cache
  image: node:20
  script: [npm ci, npm run lint]

unit:
  <<: *pip-cache
  image: python:3.12
  script:
    - pip install -r requirements.txt
    - pytest --cov
"""
    add("ci-cache-keys", "none", "yml", "ci/cache.gitlab-ci.yml", t)


def n_vault_paths_arns():
    d = {
        "secrets": {
            "db": {"source": "vault", "path": f"database/creds/{proj()}-rw", "ttl": "1h"},
            "stripe": {"source": "aws-secretsmanager",
                       "arn": f"arn:aws:secretsmanager:us-east-1:{R.randint(10**11, 10**12 - 1)}:secret:prod/stripe/secret-key-{rs(ALNUM, 6)}"},
            "github_app_key": {"source": "gcp-secret-manager",
                               "name": f"projects/{R.randint(10**11, 10**12 - 1)}/secrets/github-app-private-key/versions/latest"},
            "signing_key": {"source": "aws-kms",
                            "key_id": f"arn:aws:kms:eu-west-1:{R.randint(10**11, 10**12 - 1)}:key/{ruuid()}"},
            "sendgrid": {"source": "azure-keyvault",
                         "uri": f"https://kv-{proj()}-prod.vault.azure.net/secrets/sendgrid-api-key/{rs(HEX, 32)}"},
        },
        "refresh_interval": "5m",
    }
    add("secret-store-references", "none", "json", "deploy/external-secrets.json", json.dumps(d, indent=2))


def n_env_example():
    t = f"""# Copy to .env and fill in the values. Never commit .env.
APP_ENV=development
PORT=3000
DATABASE_URL=postgres://postgres:postgres@localhost:5432/{proj().replace('-', '_')}_dev
REDIS_URL=redis://localhost:6379
STRIPE_SECRET_KEY=sk_test_your_key_here
STRIPE_WEBHOOK_SECRET=whsec_xxx
SENDGRID_API_KEY=
OPENAI_API_KEY=your-openai-api-key
AWS_ACCESS_KEY_ID=
AWS_SECRET_ACCESS_KEY=
GITHUB_TOKEN=<personal-access-token>
SLACK_WEBHOOK_URL=https://hooks.slack.com/services/XXX/YYY/ZZZ
JWT_SECRET=change-me
SESSION_SECRET=changeme
SENTRY_DSN=
LOG_LEVEL=debug
FEATURE_NEW_CHECKOUT=false
"""
    add("env-example-placeholders", "none", "env", ".env.example", t)


def n_notebook_clean():
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["## Load credentials from the environment\n", "Set `WAREHOUSE_PASSWORD` before starting Jupyter."]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["import os\n", "import getpass\n", "import pandas as pd\n", "import sqlalchemy as sa\n"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [
            {"name": "stdout", "output_type": "stream", "text": ["password: ········\n"]}],
         "source": ['pw = os.environ.get("WAREHOUSE_PASSWORD") or getpass.getpass("password: ")\n',
                    'engine = sa.create_engine(f"postgresql://analyst:{pw}@warehouse:5432/dw")\n']},
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [
            {"data": {"text/plain": ["   order_id                               uuid  total\n",
                                     f"0     10001  {ruuid()}  12.50\n",
                                     f"1     10002  {ruuid()}  99.00"]},
             "execution_count": 3, "metadata": {}, "output_type": "execute_result"}],
         "source": ['pd.read_sql("select order_id, uuid, total from orders limit 2", engine)']},
        {"cell_type": "code", "execution_count": 4, "metadata": {}, "outputs": [
            {"data": {"image/png": b64(png_bytes()), "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
             "metadata": {}, "output_type": "display_data"}],
         "source": ["df.plot()"]},
    ]
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    add("notebook-getpass-image-output", "none", "ipynb", "analysis/orders.ipynb", json.dumps(nb, indent=1))


def n_shell_reads_secrets():
    t = f"""#!/usr/bin/env bash
set -euo pipefail

: "${{AWS_PROFILE:=prod}}"
: "${{DEPLOY_ENV:?DEPLOY_ENV must be set}}"

DB_PASSWORD="$(aws secretsmanager get-secret-value \\
  --secret-id "prod/{proj()}/db" --query SecretString --output text | jq -r .password)"
export DB_PASSWORD

GITHUB_TOKEN="$(gh auth token)"
export GITHUB_TOKEN

NPM_TOKEN="$(vault kv get -field=token secret/ci/npm)"
printf '//registry.npmjs.org/:_authToken=%s\\n' "$NPM_TOKEN" > "$HOME/.npmrc"

read -r -s -p "Slack webhook: " SLACK_WEBHOOK
echo

helm upgrade --install {proj()} ./charts/app \\
  --namespace "$DEPLOY_ENV" \\
  --set image.tag="$(git rev-parse HEAD)" \\
  --set-string database.password="$DB_PASSWORD"

curl -fsS -X POST -d '{{"text":"deployed"}}' "$SLACK_WEBHOOK"
"""
    add("shell-fetches-secrets-at-runtime", "none", "sh", "scripts/deploy.sh", t)


def n_powershell_refs():
    t = f"""[CmdletBinding()]
param(
    [Parameter(Mandatory)][string]$Environment
)

$ErrorActionPreference = 'Stop'

$vaultName = "kv-{proj()}-$Environment"
$sqlPassword = Get-AzKeyVaultSecret -VaultName $vaultName -Name 'sql-admin-password' -AsPlainText
$storageKey = (Get-AzStorageAccountKey -ResourceGroupName "rg-$Environment" -Name "st$Environment").Value[0]
$cred = Get-Credential -Message 'Deployment account'
$token = $env:AZURE_DEVOPS_PAT

if (-not $token) {{
    throw 'AZURE_DEVOPS_PAT is not set'
}}

$secure = ConvertTo-SecureString $sqlPassword -AsPlainText -Force
New-AzSqlServer -ResourceGroupName "rg-$Environment" -ServerName "sql-{proj()}-$Environment" `
    -Location westeurope -SqlAdministratorCredentials (New-Object PSCredential('sqladmin', $secure))

Write-Host "Storage key length: $($storageKey.Length)"
Write-Host "Deployed by $($cred.UserName)"
"""
    add("powershell-keyvault-lookups", "none", "ps1", "deploy/Deploy-Env.ps1", t)


def n_maven_settings_refs():
    t = f"""<?xml version="1.0" encoding="UTF-8"?>
<settings>
  <servers>
    <server>
      <id>ossrh</id>
      <username>${{env.OSSRH_USERNAME}}</username>
      <password>${{env.OSSRH_PASSWORD}}</password>
    </server>
    <server>
      <id>gpg.passphrase</id>
      <passphrase>${{env.GPG_PASSPHRASE}}</passphrase>
    </server>
  </servers>
  <profiles>
    <profile>
      <id>ossrh</id>
      <properties>
        <gpg.executable>gpg</gpg.executable>
      </properties>
    </profile>
  </profiles>
</settings>
"""
    add("maven-settings-env-refs", "none", "xml", ".mvn/settings.xml", t)


def n_webconfig_integrated():
    t = f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <configSections>
    <section name="entityFramework" type="System.Data.Entity.Internal.ConfigFile.EntityFrameworkSection, EntityFramework" />
  </configSections>
  <connectionStrings>
    <add name="Default"
         connectionString="Server=(localdb)\\MSSQLLocalDB;Database={proj()};Integrated Security=True;MultipleActiveResultSets=True"
         providerName="System.Data.SqlClient" />
    <add name="Reporting"
         connectionString="Server=tcp:sql-reporting.database.windows.net,1433;Database=reports;Authentication=Active Directory Managed Identity;Encrypt=True"
         providerName="Microsoft.Data.SqlClient" />
  </connectionStrings>
  <appSettings>
    <add key="KeyVaultUri" value="https://kv-{proj()}.vault.azure.net/" />
    <add key="PasswordResetTokenLifetimeMinutes" value="60" />
    <add key="machineKeyValidation" value="HMACSHA256" />
  </appSettings>
  <system.web>
    <compilation debug="true" targetFramework="4.8" />
    <authentication mode="Forms">
      <forms loginUrl="~/Account/Login" timeout="2880" />
    </authentication>
  </system.web>
</configuration>
"""
    add("webconfig-integrated-security", "none", "config", "Web.Debug.config", t)


def n_toml_config_refs():
    t = f"""[server]
bind = "0.0.0.0:8080"
workers = 4

[database]
url_env = "DATABASE_URL"
max_connections = 16
statement_timeout_ms = 5000

[auth]
jwt_secret_file = "/run/secrets/jwt"
token_type = "Bearer"
access_token_ttl_secs = 900
password_reset_token_ttl = 3600
password_min_length = 12

[telemetry]
otlp_endpoint = "http://otel-collector:4317"
service_name = "{proj()}"
sample_ratio = 0.1

[cache]
key_prefix = "v3:{rs(HEX, 8)}"
ttl_secs = 600

[build]
commit = "{sha40()}"
"""
    add("toml-config-refs-and-ttls", "none", "toml", "config/default.toml", t)


def n_swift_keychain():
    t = """import Foundation
import Security

enum KeychainError: Error { case notFound, unexpected(OSStatus) }

struct TokenStore {
    static let service = "com.acme.app.auth"
    static let accessTokenAccount = "accessToken"
    static let refreshTokenAccount = "refreshToken"

    static func save(_ token: String, account: String) throws {
        let data = Data(token.utf8)
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecValueData as String: data,
        ]
        SecItemDelete(query as CFDictionary)
        let status = SecItemAdd(query as CFDictionary, nil)
        guard status == errSecSuccess else { throw KeychainError.unexpected(status) }
    }

    static func load(account: String) throws -> String {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: true,
        ]
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError.notFound }
        return String(decoding: data, as: UTF8.self)
    }
}
"""
    add("swift-keychain-token-store", "none", "swift", "App/Auth/TokenStore.swift", t)


def n_elixir_runtime():
    t = f"""import Config

if config_env() == :prod do
  database_url =
    System.get_env("DATABASE_URL") ||
      raise \"\"\"
      environment variable DATABASE_URL is missing.
      For example: ecto://USER:PASS@HOST/DATABASE
      \"\"\"

  secret_key_base =
    System.fetch_env!("SECRET_KEY_BASE")

  config :{proj().replace('-', '_')}, MyApp.Repo,
    url: database_url,
    pool_size: String.to_integer(System.get_env("POOL_SIZE") || "10"),
    ssl: true

  config :{proj().replace('-', '_')}, MyAppWeb.Endpoint,
    http: [ip: {{0, 0, 0, 0, 0, 0, 0, 0}}, port: String.to_integer(System.get_env("PORT") || "4000")],
    secret_key_base: secret_key_base

  config :{proj().replace('-', '_')}, MyApp.Mailer,
    adapter: Swoosh.Adapters.Mailgun,
    api_key: System.fetch_env!("MAILGUN_API_KEY"),
    domain: System.get_env("MAILGUN_DOMAIN")
end
"""
    add("elixir-runtime-env-lookups", "none", "exs", "config/runtime.exs", t)


def n_scala_test_fixtures():
    t = f"""package com.acme.{proj().replace('-', '')}

import org.scalatest.funsuite.AnyFunSuite

class CredentialsParserSpec extends AnyFunSuite {{

  private val placeholder = "REPLACE_WITH_REAL_TOKEN"
  private val fakePassword = "hunter2"
  private val exampleUrl = "postgres://user:password@localhost:5432/test"

  test("rejects placeholder tokens") {{
    assert(!CredentialsParser.looksReal(placeholder))
  }}

  test("parses user and host from a local url") {{
    val c = CredentialsParser.parse(exampleUrl)
    assert(c.user == "user")
    assert(c.host == "localhost")
  }}

  test("masks password in toString") {{
    val c = Credentials("admin", fakePassword, "localhost")
    assert(!c.toString.contains(fakePassword))
  }}

  test("empty input") {{
    assertThrows[IllegalArgumentException] {{
      CredentialsParser.parse("")
    }}
  }}
}}
"""
    add("scala-test-fixture-fakes", "none", "scala", "src/test/scala/CredentialsParserSpec.scala", t)


def n_php_config_env():
    t = """<?php

return [
    'default' => env('DB_CONNECTION', 'mysql'),

    'connections' => [
        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
            'charset' => 'utf8mb4',
            'collation' => 'utf8mb4_unicode_ci',
            'strict' => true,
        ],
    ],

    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'default' => [
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'password' => env('REDIS_PASSWORD'),
            'port' => env('REDIS_PORT', '6379'),
        ],
    ],
];
"""
    add("php-laravel-env-defaults", "none", "php", "config/database.php", t)


def n_hash_constants_code():
    """Known-answer test vectors and content hashes in code."""
    msg = pick(["hello world", "The quick brown fox", "abc", ""])
    t = f"""package digest

import "testing"

// Known-answer vectors (public test data, NIST / RFC examples).
var vectors = []struct {{
	in   string
	sha1 string
	sha2 string
}}{{
	{{"{msg}", "{hashlib.sha1(msg.encode()).hexdigest()}", "{hashlib.sha256(msg.encode()).hexdigest()}"}},
	{{"{msg}!", "{hashlib.sha1((msg + '!').encode()).hexdigest()}", "{hashlib.sha256((msg + '!').encode()).hexdigest()}"}},
}}

const emptyMD5 = "{hashlib.md5(b'').hexdigest()}"

func TestSHA256(t *testing.T) {{
	for _, v := range vectors {{
		if got := Sum256Hex([]byte(v.in)); got != v.sha2 {{
			t.Errorf("sha256(%q) = %s, want %s", v.in, got, v.sha2)
		}}
	}}
}}

func TestSHA1(t *testing.T) {{
	for _, v := range vectors {{
		if got := Sum1Hex([]byte(v.in)); got != v.sha1 {{
			t.Errorf("sha1(%q) = %s", v.in, got)
		}}
	}}
}}

func TestMD5Empty(t *testing.T) {{
	if MD5Hex(nil) != emptyMD5 {{
		t.Fatal("md5 mismatch")
	}}
}}
"""
    add("hash-test-vectors-go", "none", "go", "internal/digest/digest_test.go", t)


def n_checksums_file():
    lines = []
    for name in R.sample(["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64.exe", "freebsd-amd64"], 5):
        lines.append(f"{rs(HEX, 64)}  {proj()}-{semver()}-{name}.tar.gz")
    t = "\n".join(lines) + "\n"
    t += "\n# Verify with: sha256sum -c SHA256SUMS\n# Signed: SHA256SUMS.sig (cosign, keyless)\n"
    t += f"# cosign bundle digest: sha256:{rs(HEX, 64)}\n# rekor log index: {R.randint(10**7, 10**8)}\n"
    t += "\n".join(f"# {x}" for x in ["artifacts are reproducible", "built with goreleaser", "go 1.22.4", "CGO_ENABLED=0",
                                        "trimpath", "ldflags -s -w", "provenance: slsa3", "sbom: spdx.json",
                                        "checksums are public", "verify before install", "mirror: gh releases", "end"])
    add("release-sha256sums", "none", "txt", "dist/SHA256SUMS", t)


def n_yarn_lock():
    lines = ["# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.", "# yarn lockfile v1", ""]
    for name in R.sample(["ansi-regex", "balanced-match", "brace-expansion", "concat-map", "inherits", "once", "wrappy", "minimatch"], 5):
        v = semver()
        lines += [f'{name}@^{v}:', f'  version "{v}"',
                  f'  resolved "https://registry.yarnpkg.com/{name}/-/{name}-{v}.tgz#{rs(HEX, 40)}"',
                  f'  integrity sha512-{b64(rbytes(64))}', ""]
    add("yarn-lock", "none", "lock", "yarn.lock", "\n".join(lines))


def n_jwt_public_jwks():
    keys = []
    for _ in range(2):
        keys.append({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": rs(ALNUM + "-_", 43),
                     "n": b64u(rbytes(256)), "e": "AQAB"})
    add("jwks-public-keys", "none", "json", "public/.well-known/jwks.json", json.dumps({"keys": keys}, indent=2))


def n_k8s_sealed_secret():
    enc = {k: b64(b"\x01\x00" + rbytes(R.randint(300, 420))) for k in ["DB_PASSWORD", "API_TOKEN"]}
    t = f"""apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: {proj()}-creds
  namespace: prod
  annotations:
    sealedsecrets.bitnami.com/cluster-wide: "false"
spec:
  encryptedData:
    DB_PASSWORD: {enc['DB_PASSWORD']}
    API_TOKEN: {enc['API_TOKEN']}
  template:
    metadata:
      name: {proj()}-creds
      namespace: prod
      labels:
        app.kubernetes.io/name: {proj()}
    type: Opaque
# Encrypted with the cluster's public certificate (kubeseal --fetch-cert);
# only the controller in the prod cluster can decrypt it.
# Regenerate with:
#   kubectl create secret generic {proj()}-creds --dry-run=client -o yaml \\
#     --from-literal=DB_PASSWORD=... | kubeseal -o yaml > sealed.yaml
# Rotation: quarterly
# Owner: platform
"""
    add("sealed-secret-ciphertext", "none", "yaml", f"k8s/prod/{proj()}-sealed.yaml", t)


def n_k8s_secret_stringdata_placeholder():
    t = f"""# Template only: the real Secret is created by external-secrets.
apiVersion: v1
kind: Secret
metadata:
  name: {proj()}-db
  namespace: dev
type: Opaque
stringData:
  DB_USER: app
  DB_PASSWORD: "<filled-by-external-secrets>"
  API_TOKEN: "${{API_TOKEN}}"
---
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: {proj()}-db
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: vault-backend
    kind: ClusterSecretStore
  target:
    name: {proj()}-db
  data:
    - secretKey: DB_PASSWORD
      remoteRef:
        key: secret/data/{proj()}/db
        property: password
"""
    add("k8s-secret-placeholder-externalsecret", "none", "yaml", f"k8s/dev/{proj()}-db.yaml", t)


def n_commit_msg_log():
    lines = []
    for _ in range(R.randint(8, 12)):
        s = sha40()
        lines += [f"commit {s}", f"Merge: {s[:7]} {rs(HEX, 7)}" if R.random() < 0.2 else f"Author: {pick(['Maja K', 'Ravi I', 'Ana D'])} <{pick(['maja', 'ravi', 'ana'])}@northwind.dev>",
                  f"Date:   Mon Jun {R.randint(1, 28)} 1{R.randint(0, 9)}:0{R.randint(0, 9)}:00 2025 +0200", "",
                  f"    {pick(['Remove hard-coded token from config', 'Rotate leaked API key (see INC-221)', 'Read DB password from Vault', 'Bump deps', 'Fix flaky test'])}",
                  ""]
    add("git-log-output", "none", "txt", "docs/audit/git-log-2025-06.txt", "\n".join(lines))


def n_readme_badges():
    t = f"""# {proj()}

[![CI](https://github.com/acme/{proj()}/actions/workflows/ci.yml/badge.svg)](https://github.com/acme/{proj()}/actions)
[![codecov](https://codecov.io/gh/acme/{proj()}/branch/main/graph/badge.svg)](https://codecov.io/gh/acme/{proj()})

A small service that keeps the catalogue in sync.

## Quick start

```sh
cp .env.example .env      # then fill in your own keys
make dev
```

## Configuration

| Variable | Meaning |
|---|---|
| `DATABASE_URL` | Postgres URL, e.g. `postgres://user:pass@localhost/db` |
| `API_TOKEN` | Token for the upstream API (ask #platform) |
| `SIGNING_SECRET` | 32+ random bytes; generate with `openssl rand -hex 32` |

## Release

Tagged from `main`; current image digest
`sha256:{rs(HEX, 64)}`.
"""
    add("readme-badges-digest", "none", "md", "README.md", t)


def n_integrity_subresource_json():
    d = {"version": 1, "files": {}}
    for f in ["main.js", "vendor.js", "styles.css", "worker.js", "runtime.js", "polyfills.js"]:
        name = f.replace(".", f".{rs(HEX, 8)}.")
        d["files"][f] = {"file": name, "integrity": "sha384-" + b64(rbytes(48)), "size": R.randint(1000, 900000)}
    d["buildId"] = rs(ALNUM + "_-", 21)
    d["hash"] = rs(HEX, 20)
    add("asset-manifest-integrity", "none", "json", "dist/asset-manifest.json", json.dumps(d, indent=2))


def n_http_capture_redacted():
    t = f"""POST /oauth/token HTTP/1.1
Host: auth.{pick(SVC_HOSTS)}
Content-Type: application/x-www-form-urlencoded
Authorization: Basic <redacted>
X-Request-Id: {ruuid()}

grant_type=client_credentials&scope=orders%3Aread

HTTP/1.1 200 OK
Content-Type: application/json
Cache-Control: no-store
Pragma: no-cache
X-Trace-Id: {rs(HEX, 32)}

{{
  "access_token": "[REDACTED]",
  "token_type": "Bearer",
  "expires_in": 3600,
  "scope": "orders:read"
}}

### notes
- capture taken with `mitmdump --set redact=true`
- token and Basic credentials removed before committing
- request id above is safe to share with the vendor
"""
    add("http-capture-redacted", "none", "http", "docs/debug/token-exchange.http", t)


def n_csharp_user_secrets_ref():
    t = f"""<Project Sdk="Microsoft.NET.Sdk.Web">

  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <Nullable>enable</Nullable>
    <ImplicitUsings>enable</ImplicitUsings>
    <UserSecretsId>{ruuid()}</UserSecretsId>
    <RootNamespace>Acme.{proj().title().replace('-', '')}</RootNamespace>
  </PropertyGroup>

  <ItemGroup>
    <PackageReference Include="Azure.Identity" Version="1.12.0" />
    <PackageReference Include="Azure.Extensions.AspNetCore.Configuration.Secrets" Version="1.3.1" />
    <PackageReference Include="Microsoft.EntityFrameworkCore.SqlServer" Version="8.0.6" />
    <PackageReference Include="Serilog.AspNetCore" Version="8.0.1" />
  </ItemGroup>

  <ItemGroup>
    <Content Update="appsettings.Development.json" CopyToPublishDirectory="Never" />
  </ItemGroup>

</Project>
"""
    add("csproj-usersecretsid-guid", "none", "csproj", f"src/{proj()}/{proj()}.csproj", t)


def n_rust_test_keys():
    t = """//! Signature tests. Keys below are the RFC 8032 test vectors (public data).

use ed25519_dalek::{Signature, SigningKey, Verifier};

// RFC 8032, section 7.1, TEST 1
const SECRET_KEY_HEX: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const PUBLIC_KEY_HEX: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

fn key() -> SigningKey {
    let bytes: [u8; 32] = hex::decode(SECRET_KEY_HEX).unwrap().try_into().unwrap();
    SigningKey::from_bytes(&bytes)
}

#[test]
fn public_key_matches_vector() {
    assert_eq!(hex::encode(key().verifying_key().to_bytes()), PUBLIC_KEY_HEX);
}

#[test]
fn empty_message_roundtrip() {
    let sk = key();
    let sig: Signature = sk.sign_msg(b"");
    assert!(sk.verifying_key().verify(b"", &sig).is_ok());
}
"""
    add("rfc-test-vector-key-in-tests-public-test-data", "none", "rs", "tests/rfc8032.rs", t)


# ------------------------------------------------------------ round 2b

def s_k8s_tls_secret():
    pem = rsa_private_pem()
    crt = "-----BEGIN CERTIFICATE-----\n" + pem_body(900, "CERTIFICATE") + "\n-----END CERTIFICATE-----\n"
    t = f"""apiVersion: v1
kind: Secret
metadata:
  name: {proj()}-tls
  namespace: ingress
  annotations:
    cert-manager.io/issuer-kind: ClusterIssuer
type: kubernetes.io/tls
data:
  tls.crt: {b64(crt.encode())}
  tls.key: {b64((pem + chr(10)).encode())}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {proj()}
  namespace: ingress
spec:
  tls:
    - hosts: [app.{pick(SVC_HOSTS)}]
      secretName: {proj()}-tls
  rules:
    - host: app.{pick(SVC_HOSTS)}
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: {proj()}
                port:
                  number: 80
"""
    add("k8s-tls-secret-base64-private-key", "secret", "yaml", f"k8s/ingress/{proj()}-tls.yaml", t)


def s_kubeconfig_token():
    ca = b64(("-----BEGIN CERTIFICATE-----\n" + pem_body(800, "CERTIFICATE") + "\n-----END CERTIFICATE-----\n").encode())
    tok = jwt()
    cl = pick(["prod-eks", "gke-main", "aks-west"])
    t = f"""apiVersion: v1
kind: Config
clusters:
  - name: {cl}
    cluster:
      server: https://{rs(HEX, 32).upper()}.gr7.eu-west-1.eks.amazonaws.com
      certificate-authority-data: {ca}
contexts:
  - name: {cl}
    context:
      cluster: {cl}
      user: ci-deployer
      namespace: {proj()}
current-context: {cl}
users:
  - name: ci-deployer
    user:
      token: {tok}
preferences: {{}}
# generated by scripts/make_kubeconfig.sh for the CI deployer service account
# namespace-scoped RBAC: edit on {proj()}
# expires when the service account token is rotated
# do not use from laptops
# owner: platform
# see runbooks/k8s-access.md
"""
    add("kubeconfig-sa-token", "secret", "yaml", pick(["ci/kubeconfig.yaml", "deploy/kubeconfig"]), t)


def s_pip_conf_basic():
    user = pick(["ci", "build-bot", "svc-pip"])
    t = f"""[global]
timeout = 60
index-url = https://{user}:{password().replace('%', 'z').replace('#', 'x')}@nexus.{pick(['acme-cloud.io', 'northwind.dev'])}/repository/pypi-all/simple
trusted-host = nexus.{pick(['acme-cloud.io', 'northwind.dev'])}
disable-pip-version-check = true
no-cache-dir = false

[install]
prefer-binary = true
only-binary = numpy,scipy,pandas

[list]
format = columns

[freeze]
exclude = pip setuptools wheel

# The proxy mirrors PyPI and the internal packages.
# Build images read this file through a BuildKit secret mount.
# Contact #platform for access.
# Keep timeout high: the mirror is slow on cold cache.
# prefer-binary avoids long source builds in CI.
# only-binary lists packages that must never compile from source.
# list/freeze sections keep local output tidy.
# end
"""
    add("pip-conf-url-credentials", "secret", "conf", pick(["ci/pip.conf", "docker/pip.conf"]), t)


def s_git_credentials_doc():
    tok = gh_token()
    t = f"""# Mirroring the legacy repo

The mirror job runs on `ops-cron-2` as user `mirror`.

1. Clone once:

   ```sh
   git clone --mirror https://mirror-bot:{tok}@github.com/{pick(['acme', 'northwind'])}/{proj()}-legacy.git
   ```

2. Cron entry:

   ```cron
   */15 * * * * cd /srv/mirror/{proj()}-legacy.git && git remote update --prune
   ```

3. Check the last run:

   ```sh
   journalctl -u mirror.timer --since today
   ```

## Known issues

- If GitHub rate-limits the bot, the job retries at the next slot.
- Large LFS objects are not mirrored; see `docs/lfs.md`.
- The mirror is read-only for everyone except the bot.
"""
    add("github-token-in-clone-url-doc", "secret", "md", "docs/ops/mirror.md", t)


def s_django_secret_key():
    key = rs(LO + DIG + "!@#%^&*(-_=+)", 50)
    t = f"""from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "{key}"

DEBUG = False
ALLOWED_HOSTS = ["app.{pick(SVC_HOSTS)}"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "{proj().replace('-', '_')}",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
]

AUTH_PASSWORD_VALIDATORS = [
    {{"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"}},
]
PASSWORD_RESET_TIMEOUT = 3600
STATIC_ROOT = BASE_DIR / "static"
"""
    add("django-secret-key-settings", "secret", "py", "config/settings/prod.py", t)


def s_laravel_app_key():
    t = f"""APP_NAME="{proj().title()}"
APP_ENV=production
APP_KEY=base64:{b64(rbytes(32))}
APP_DEBUG=false
APP_URL=https://app.{pick(SVC_HOSTS)}

LOG_CHANNEL=stack
LOG_LEVEL=warning

DB_CONNECTION=mysql
DB_HOST=127.0.0.1
DB_PORT=3306
DB_DATABASE={proj().replace('-', '_')}
DB_USERNAME=forge
DB_PASSWORD=

BROADCAST_DRIVER=log
CACHE_DRIVER=redis
QUEUE_CONNECTION=redis
SESSION_DRIVER=redis
SESSION_LIFETIME=120

MAIL_MAILER=log
"""
    add("laravel-app-key-dotenv", "secret", "env", ".env", t)


def s_ansible_inventory_password():
    t = f"""[web]
web-01.{pick(SVC_HOSTS)}
web-02.{pick(SVC_HOSTS)}

[db]
db-01.{pick(SVC_HOSTS)} ansible_host=10.20.{R.randint(0, 255)}.{R.randint(1, 254)}

[windows]
win-build-01 ansible_host=10.30.{R.randint(0, 255)}.{R.randint(1, 254)}

[windows:vars]
ansible_user=Administrator
ansible_password={password()}
ansible_connection=winrm
ansible_winrm_transport=ntlm
ansible_winrm_server_cert_validation=ignore

[web:vars]
ansible_user=deploy
ansible_ssh_private_key_file=~/.ssh/deploy_ed25519

[all:vars]
ansible_python_interpreter=/usr/bin/python3
ntp_server=time.cloudflare.com
timezone=UTC
"""
    add("ansible-inventory-winrm-password", "secret", "ini", "inventories/prod/hosts.ini", t)


def s_jaas_kafka():
    t = f"""# Kafka client configuration for the {proj()} consumer
bootstrap.servers=pkc-{rs(LO + DIG, 5)}.europe-west1.gcp.confluent.cloud:9092
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{rs(UP + DIG, 16)}" password="{rs(ALNUM + '+/', 64)}";
client.dns.lookup=use_all_dns_ips
session.timeout.ms=45000
acks=all
group.id={proj()}-consumer
auto.offset.reset=earliest
enable.auto.commit=false
max.poll.records=500
key.deserializer=org.apache.kafka.common.serialization.StringDeserializer
value.deserializer=io.confluent.kafka.serializers.KafkaAvroDeserializer
schema.registry.url=https://psrc-{rs(LO + DIG, 5)}.europe-west3.gcp.confluent.cloud
basic.auth.credentials.source=USER_INFO
# schema registry credentials come from the environment:
basic.auth.user.info=${{SR_API_KEY}}:${{SR_API_SECRET}}
specific.avro.reader=true
fetch.min.bytes=1
retries=2147483647
"""
    add("kafka-jaas-password-properties", "secret", "properties", "config/kafka-consumer.properties", t)


def s_terraformrc():
    t = f"""plugin_cache_dir   = "$HOME/.terraform.d/plugin-cache"
disable_checkpoint = true

credentials "app.terraform.io" {{
  token = "{rs(ALNUM, 14)}.atlasv1.{rs(ALNUM, 67)}"
}}

provider_installation {{
  network_mirror {{
    url     = "https://tf-mirror.{pick(SVC_HOSTS)}/providers/"
    include = ["registry.terraform.io/*/*"]
  }}
  direct {{
    exclude = ["registry.terraform.io/*/*"]
  }}
}}

# CI runner configuration; installed to /home/runner/.terraformrc
# the plugin cache is shared between jobs on the same runner
# checkpoint calls are disabled for air-gapped runs
# owner: platform
# see docs/terraform-ci.md
# rotate the team token every 90 days
# end
"""
    add("terraform-cloud-token-terraformrc", "secret", "hcl", "ci/runner/terraformrc", t)


def s_grafana_sa_token_py():
    tok = "glsa_" + rs(ALNUM, 32) + "_" + rs(HEX, 8)
    t = f"""\"\"\"Provision dashboards from ./dashboards into Grafana.\"\"\"
import json
import pathlib
import urllib.request

GRAFANA_URL = "https://grafana.{pick(SVC_HOSTS)}"
GRAFANA_TOKEN = "{tok}"


def push(path: pathlib.Path) -> int:
    body = json.dumps({{"dashboard": json.loads(path.read_text()), "overwrite": True}}).encode()
    req = urllib.request.Request(
        f"{{GRAFANA_URL}}/api/dashboards/db",
        data=body,
        headers={{
            "Authorization": f"Bearer {{GRAFANA_TOKEN}}",
            "Content-Type": "application/json",
        }},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status


def main() -> None:
    for p in sorted(pathlib.Path("dashboards").glob("*.json")):
        print(p.name, push(p))


if __name__ == "__main__":
    main()
"""
    add("grafana-sa-token-python", "secret", "py", "scripts/push_dashboards.py", t)


def s_dockerhub_pat_actions():
    t = f"""name: image

on:
  push:
    branches: [main]

jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: docker/setup-buildx-action@v3
      - uses: docker/login-action@v3
        with:
          username: {pick(['acmebuild', 'northwindci'])}
          password: dckr_pat_{rs(B64URL, 27)}
      - uses: docker/build-push-action@v6
        with:
          push: true
          tags: |
            {pick(['acme', 'northwind'])}/{proj()}:latest
            {pick(['acme', 'northwind'])}/{proj()}:${{{{ github.sha }}}}
          cache-from: type=gha
          cache-to: type=gha,mode=max
      - name: Summary
        run: echo "pushed ${{{{ github.sha }}}}" >> "$GITHUB_STEP_SUMMARY"
"""
    add("dockerhub-pat-actions", "secret", "yml", ".github/workflows/image.yml", t)


def s_sentry_auth_token():
    t = f"""[defaults]
url = https://sentry.io/
org = {pick(['acme', 'northwind', 'globex'])}
project = {proj()}

[auth]
token = sntrys_{b64u(json.dumps({'iat': R.randint(1700000000, 1750000000), 'url': 'https://sentry.io', 'region_url': 'https://us.sentry.io', 'org': 'acme'}, separators=(',', ':')).encode())}_{rs(B64URL, 43)}

[log]
level = warn

[http]
keepalive = true
verify_ssl = true

# Used by `sentry-cli releases` in the deploy job.
# Upload source maps with:
#   sentry-cli sourcemaps upload --release "$VERSION" dist/
# The org and project above are not secret.
# This file is read from the repository root.
# keepalive speeds up large uploads.
# end
"""
    add("sentry-auth-token-sentryclirc", "secret", "ini", ".sentryclirc", t)


def s_azure_sas_url_json():
    acct = pick(["stexports", "nwreports", "acmeshare"]) + rs(LO + DIG, 4)
    d = {
        "name": f"{proj()}-export",
        "schedule": "0 3 * * *",
        "source": {"type": "postgres", "query": "select * from orders where updated_at > now() - interval '1 day'"},
        "destination": {
            "type": "azure-blob",
            "url": f"https://{acct}.blob.core.windows.net/exports/orders.csv?{azure_sas()}",
            "overwrite": True,
        },
        "notify": ["data-eng@northwind.dev"],
        "retries": 3,
    }
    add("azure-sas-url-json", "secret", "json", f"jobs/{proj()}-export.json", json.dumps(d, indent=2))


def s_twilio_python():
    t = f"""import os

from twilio.rest import Client

ACCOUNT_SID = os.environ.get("TWILIO_ACCOUNT_SID", "AC{rs(HEX, 32)}")
API_KEY_SID = "{twilio_key()}"
API_KEY_SECRET = "{rs(ALNUM, 32)}"

client = Client(API_KEY_SID, API_KEY_SECRET, ACCOUNT_SID)


def send_otp(to: str, code: str) -> str:
    msg = client.messages.create(
        to=to,
        from_=os.environ.get("TWILIO_FROM", "+15005550006"),
        body=f"Your verification code is {{code}}",
    )
    return msg.sid


def lookup(number: str) -> dict:
    info = client.lookups.v2.phone_numbers(number).fetch()
    return {{"valid": info.valid, "country": info.country_code}}


if __name__ == "__main__":
    print(lookup("+14155552671"))
"""
    add("twilio-api-key-secret-python", "secret", "py", "app/sms.py", t)


# ---- more negatives

def n_aws_doc_example_keys():
    t = f"""# Configuring the CLI

Run `aws configure` and paste the values from the IAM console.
The values below are the placeholders from the AWS documentation,
not real credentials:

```ini
[default]
aws_access_key_id = AKIAIOSFODNN7EXAMPLE
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
region = us-west-2
```

Prefer SSO for humans:

```sh
aws configure sso --profile {proj()}-dev
aws sso login --profile {proj()}-dev
```

CI uses OIDC (`aws-actions/configure-aws-credentials` with `role-to-assume`)
and never long-lived keys. If you find a key starting with `AKIA` in the
repository, report it in #security and rotate it.
"""
    add("aws-documented-example-keys", "none", "md", "docs/aws-cli.md", t)


def n_jwt_io_sample():
    t = """openapi: 3.0.3
info:
  title: Orders API
  version: 2.1.0
components:
  securitySchemes:
    bearerAuth:
      type: http
      scheme: bearer
      bearerFormat: JWT
      description: |
        Send the access token in the Authorization header. The example below
        is the public sample token from jwt.io (subject "John Doe"), not a
        real credential.
  examples:
    SampleAuthorization:
      value: "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
security:
  - bearerAuth: []
paths:
  /orders:
    get:
      summary: List orders
      responses:
        "200":
          description: OK
        "401":
          description: Missing or invalid token
"""
    add("openapi-jwtio-sample-token-public-sample", "none", "yaml", "api/openapi.yaml", t)


def n_firebase_web_config():
    pid = pick(["acme-app", "northwind-mobile", "globex-web"]) + "-" + rs(LO + DIG, 5)
    t = f"""// Firebase web config. Firebase documents these values as public
// identifiers (access is enforced by Security Rules and App Check).
import {{ initializeApp }} from "firebase/app";
import {{ getAuth }} from "firebase/auth";
import {{ getFirestore }} from "firebase/firestore";

const firebaseConfig = {{
  apiKey: "AIza{rs(ALNUM + '-_', 35)}",
  authDomain: "{pid}.firebaseapp.com",
  projectId: "{pid}",
  storageBucket: "{pid}.appspot.com",
  messagingSenderId: "{R.randint(10**11, 10**12 - 1)}",
  appId: "1:{R.randint(10**11, 10**12 - 1)}:web:{rs(HEX, 22)}",
  measurementId: "G-{rs(UP + DIG, 10)}",
}};

export const app = initializeApp(firebaseConfig);
export const auth = getAuth(app);
export const db = getFirestore(app);
"""
    add("firebase-web-config-public-by-design", "none", "js", "web/src/firebase.js", t)


def n_recaptcha_oauth_client_id():
    t = f"""<form id="signup" method="post" action="/signup">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" required>

  <label for="password">Password</label>
  <input id="password" name="password" type="password" minlength="12"
         autocomplete="new-password" required>

  <label for="password_confirmation">Confirm password</label>
  <input id="password_confirmation" name="password_confirmation" type="password" required>

  <input type="hidden" name="csrf_token" value="{{{{ csrf_token() }}}}">
  <!-- reCAPTCHA site key: public by design (the secret key stays server-side) -->
  <div class="g-recaptcha" data-sitekey="6L{rs(ALNUM + '-_', 38)}"></div>
  <button type="submit">Create account</button>
</form>

<div id="g_id_onload"
     data-client_id="{R.randint(10**11, 10**12 - 1)}-{rs(LO + DIG, 32)}.apps.googleusercontent.com"
     data-login_uri="https://app.{pick(SVC_HOSTS)}/auth/google"
     data-auto_prompt="false">
</div>
<script src="https://www.google.com/recaptcha/api.js" async defer></script>
<script src="https://accounts.google.com/gsi/client" async defer></script>
"""
    add("recaptcha-sitekey-oauth-client-id-public-by-design", "none", "html", "templates/signup.html", t)


def n_k8s_cabundle():
    ca = b64(("-----BEGIN CERTIFICATE-----\n" + pem_body(R.randint(700, 1000), "CERTIFICATE") + "\n-----END CERTIFICATE-----\n").encode())
    t = f"""apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {proj()}-policy
webhooks:
  - name: validate.{proj()}.acme.io
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Fail
    clientConfig:
      service:
        name: {proj()}-webhook
        namespace: policy
        path: /validate
      caBundle: {ca}
    rules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["deployments"]
    namespaceSelector:
      matchExpressions:
        - key: policy.acme.io/enforce
          operator: In
          values: ["true"]
"""
    add("k8s-webhook-cabundle-certificate", "none", "yaml", f"k8s/policy/{proj()}-webhook.yaml", t)


def n_kubeconfig_exec():
    ca = b64(("-----BEGIN CERTIFICATE-----\n" + pem_body(800, "CERTIFICATE") + "\n-----END CERTIFICATE-----\n").encode())
    cl = pick(["prod-eks", "staging-eks"])
    t = f"""apiVersion: v1
kind: Config
clusters:
  - name: {cl}
    cluster:
      server: https://{rs(HEX, 32).upper()}.gr7.eu-west-1.eks.amazonaws.com
      certificate-authority-data: {ca}
contexts:
  - name: {cl}
    context:
      cluster: {cl}
      user: sso
current-context: {cl}
users:
  - name: sso
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1beta1
        command: aws
        args:
          - eks
          - get-token
          - --cluster-name
          - {cl}
          - --profile
          - {proj()}-sso
"""
    add("kubeconfig-exec-auth-ca-only", "none", "yaml", "docs/kubeconfig.example.yaml", t)


def n_configmap_binarydata():
    t = f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {proj()}-branding
  namespace: web
  labels:
    app.kubernetes.io/name: {proj()}
data:
  theme.json: |
    {{"primary": "#0a66c2", "secondary": "#f3f6f8", "font": "Inter"}}
  robots.txt: |
    User-agent: *
    Disallow: /admin
binaryData:
  favicon.png: {b64(png_bytes())}
  logo.png: {b64(png_bytes())}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {proj()}-nginx
  namespace: web
data:
  nginx.conf: |
    server {{
      listen 8080;
      location / {{ root /usr/share/nginx/html; try_files $uri /index.html; }}
      location /healthz {{ return 200; }}
    }}
"""
    add("configmap-binarydata-images", "none", "yaml", f"k8s/web/{proj()}-configmap.yaml", t)


def n_sourcemap():
    mappings = ";".join(",".join(rs("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", R.randint(4, 7)) for _ in range(R.randint(5, 12))) for _ in range(R.randint(30, 50)))
    d = {"version": 3, "file": f"app.{rs(HEX, 8)}.js", "sourceRoot": "",
         "sources": ["webpack://app/./src/index.ts", "webpack://app/./src/auth/token.ts", "webpack://app/./src/api/client.ts"],
         "names": ["token", "apiKey", "password", "setSecret", "refreshToken", "fetch", "headers"],
         "mappings": mappings}
    add("javascript-sourcemap", "none", "map", f"dist/assets/app.{rs(HEX, 8)}.js.map", json.dumps(d, indent=2))


def n_docker_config_helpers():
    d = {"auths": {"ghcr.io": {}, "registry.gitlab.com": {}},
         "credsStore": pick(["desktop", "osxkeychain", "pass"]),
         "credHelpers": {f"{R.randint(10**11, 10**12 - 1)}.dkr.ecr.eu-west-1.amazonaws.com": "ecr-login",
                         "europe-docker.pkg.dev": "gcloud", "gcr.io": "gcloud"},
         "currentContext": "default",
         "plugins": {"debug": {"hooks": "exec"}, "scout": {"hooks": "pull,buildx build"}},
         "features": {"hooks": "true"}}
    add("docker-config-credhelpers-only", "none", "json", "docs/examples/docker-config.json", json.dumps(d, indent=2))


def n_npmrc_env_ref():
    t = f"""registry=https://registry.npmjs.org/
@{pick(['acme', 'northwind'])}:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken=${{GITHUB_TOKEN}}
//registry.npmjs.org/:_authToken=${{NPM_TOKEN}}
always-auth=true
save-exact=true
engine-strict=true
fund=false
audit-level=high
progress=false
loglevel=warn
prefer-offline=true
package-lock=true
strict-ssl=true
init-license=MIT
update-notifier=false
# tokens are injected by CI from the secrets store
# locally: export NPM_TOKEN=$(npm token create --read-only)
# never paste a token into this file
# see docs/release.md
"""
    add("npmrc-env-token-refs", "none", "npmrc", ".npmrc", t)


def n_terraform_ssh_public_key():
    blob = b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(32))
    t = f"""resource "aws_key_pair" "deployer" {{
  key_name   = "{proj()}-deployer"
  public_key = "ssh-ed25519 {blob} deployer@{pick(['bastion', 'ci'])}"
}}

resource "aws_instance" "bastion" {{
  ami                         = data.aws_ami.ubuntu.id
  instance_type               = "t3.micro"
  key_name                    = aws_key_pair.deployer.key_name
  subnet_id                   = var.public_subnet_id
  associate_public_ip_address = true
  vpc_security_group_ids      = [aws_security_group.bastion.id]

  metadata_options {{
    http_tokens = "required"
  }}

  tags = {{
    Name = "{proj()}-bastion"
  }}
}}

data "aws_ami" "ubuntu" {{
  most_recent = true
  owners      = ["099720109477"]
  filter {{
    name   = "name"
    values = ["ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-*"]
  }}
}}
"""
    add("terraform-ssh-public-key", "none", "tf", "infra/bastion.tf", t)


def n_graphql_schema():
    t = """# Auth schema
scalar DateTime

enum TokenType {
  BEARER
  API_KEY
  PERSONAL_ACCESS_TOKEN
}

type ApiKey {
  id: ID!
  prefix: String!
  lastFour: String!
  createdAt: DateTime!
  lastUsedAt: DateTime
  scopes: [String!]!
}

input CreateUserInput {
  email: String!
  password: String!
  passwordConfirmation: String!
}

input RotateSecretInput {
  webhookId: ID!
}

type Mutation {
  createUser(input: CreateUserInput!): User!
  createApiKey(name: String!, scopes: [String!]!): ApiKeyWithSecret!
  rotateWebhookSecret(input: RotateSecretInput!): Webhook!
  resetPassword(token: String!, newPassword: String!): Boolean!
}

type ApiKeyWithSecret {
  apiKey: ApiKey!
  "Shown once at creation; never stored in plaintext."
  secret: String!
}
"""
    add("graphql-schema-secret-fields", "none", "graphql", "schema/auth.graphql", t)


def n_gitmodules():
    lines = []
    for name in R.sample(["protobuf", "googletest", "zstd", "abseil-cpp", "libuv", "fmt", "spdlog"], 5):
        lines += [f'[submodule "third_party/{name}"]', f"\tpath = third_party/{name}",
                  f"\turl = https://github.com/{pick(['google', 'facebook', 'gabime', 'fmtlib', 'libuv'])}/{name}.git",
                  f"\tbranch = {pick(['main', 'master', 'v' + semver()])}"]
    lines.append("# pinned revisions are recorded in the tree; see docs/vendoring.md")
    add("gitmodules-urls", "none", "gitmodules", ".gitmodules", "\n".join(lines))


def n_ruby_credentials_enc():
    """Rails encrypted credentials: ciphertext--iv--tag; key is not in the repo."""
    t = f"{b64(rbytes(R.randint(300, 600)))}--{b64(rbytes(12))}--{b64(rbytes(16))}"
    # single long line, as Rails writes it; short file by nature
    add("rails-credentials-yml-enc-ciphertext", "none", "enc", "config/credentials.yml.enc", t)


def n_password_generator_code():
    t = """import secrets
import string

ALPHABET = string.ascii_letters + string.digits + "!#%^*-_=+"


def generate_password(length: int = 20) -> str:
    \"\"\"Return a random password that satisfies the policy.\"\"\"
    while True:
        pw = "".join(secrets.choice(ALPHABET) for _ in range(length))
        if (any(c.islower() for c in pw)
                and any(c.isupper() for c in pw)
                and any(c.isdigit() for c in pw)):
            return pw


def generate_api_key(prefix: str = "acme") -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def generate_webhook_secret() -> str:
    return secrets.token_hex(32)


if __name__ == "__main__":
    print(generate_password())
    print(generate_api_key())
    print(generate_webhook_secret())
"""
    add("secret-generator-code", "none", "py", "tools/gen_secrets.py", t)


# ------------------------------------------------------------- schedule

SECRET_GENS = [
    s_aws_python, s_aws_credentials_ini, s_gh_actions, s_gitlab_ci, s_slack_go,
    s_slack_webhook_sh, s_stripe_ruby, s_twilio_php, s_sendgrid_csharp, s_openai_env,
    s_anthropic_ts, s_npmrc, s_pypi_pypirc, s_shopify_js, s_datadog_helm,
    s_vault_token_sh, s_hf_notebook, s_notebook_output_secret, s_databricks_toml,
    s_mailgun_elixir, s_postmark_json, s_heroku_netrc, s_jwt_http, s_db_url_compose,
    s_password_properties, s_maven_settings, s_webconfig, s_private_key_file,
    s_private_key_in_yaml, s_k8s_secret_data, s_docker_config, s_basic_auth_curl,
    s_hmac_go, s_webhook_secret_python, s_azure_conn_appsettings, s_azure_sas_ps1,
    s_gcp_sa, s_terraform_hardcoded, s_jwt_kotlin, s_password_rust, s_swift_key,
    s_scala_conf, s_log_leak, s_sql_seed_password, s_dockerfile_secret,
    s_makefile_secret, s_java_aws, s_redis_password_ini, s_env_mixed,
    s_js_config_firebase_admin, s_k8s_tls_secret, s_kubeconfig_token,
    s_pip_conf_basic, s_git_credentials_doc, s_django_secret_key,
    s_laravel_app_key, s_ansible_inventory_password, s_jaas_kafka, s_terraformrc,
    s_grafana_sa_token_py, s_dockerhub_pat_actions, s_sentry_auth_token,
    s_azure_sas_url_json, s_twilio_python,
]

NONE_GENS = [
    n_changelog_shas, n_blame_ignore, n_submodule_status, n_release_notes_shas,
    n_test_fixture_fakes, n_test_dummy_go, n_public_key_pem, n_certificate,
    n_authorized_keys, n_known_hosts, n_gpg_public, n_terraform_refs,
    n_tfvars_example, n_helm_values_refs, n_actions_secrets_refs, n_k8s_secretkeyref,
    n_compose_interpolation, n_ansible_vault_refs,
    n_ansible_vault_encrypted, n_spring_placeholders, n_urls_no_creds, n_masked_logs,
    n_lockfile_npm, n_lockfile_cargo, n_go_sum, n_poetry_lock, n_sri_html,
    n_css_font_base64, n_protobuf_descriptor, n_publishable_stripe,
    n_publishable_sentry_dsn, n_mapbox_public, n_i18n,
    n_password_policy, n_sql_schema, n_feature_flags, n_minified_js,
    n_api_docs_placeholders, n_uuids_traces, n_docker_digests, n_etags_http,
    n_cache_keys_ci, n_vault_paths_arns, n_env_example, n_notebook_clean,
    n_shell_reads_secrets, n_powershell_refs, n_maven_settings_refs,
    n_webconfig_integrated, n_toml_config_refs, n_swift_keychain, n_elixir_runtime,
    n_scala_test_fixtures, n_php_config_env, n_hash_constants_code, n_checksums_file,
    n_yarn_lock, n_jwt_public_jwks, n_k8s_sealed_secret,
    n_k8s_secret_stringdata_placeholder, n_commit_msg_log, n_readme_badges,
    n_integrity_subresource_json, n_http_capture_redacted, n_csharp_user_secrets_ref,
    n_rust_test_keys, n_aws_doc_example_keys, n_jwt_io_sample, n_firebase_web_config,
    n_recaptcha_oauth_client_id, n_k8s_cabundle, n_kubeconfig_exec,
    n_configmap_binarydata, n_sourcemap, n_docker_config_helpers, n_npmrc_env_ref,
    n_terraform_ssh_public_key, n_graphql_schema, n_gitmodules,
    n_ruby_credentials_enc, n_password_generator_code,
]

# Generators whose text does not change with the RNG are run once only.
STATIC_NONE = {n_sql_schema, n_swift_keychain, n_php_config_env, n_rust_test_keys,
               n_aws_doc_example_keys, n_jwt_io_sample, n_graphql_schema,
               n_password_generator_code}


def main():
    for g in SECRET_GENS:
        g()
    for g in SECRET_GENS:  # second pass: fresh values for a random quarter
        if R.random() < 0.25:
            g()
    for g in NONE_GENS:
        g()
    for g in NONE_GENS:  # second pass: fresh values for about half
        if g not in STATIC_NONE and R.random() < 0.5:
            g()
    # reading secrets from the environment, and identifier constants, per language
    for lang in ["py", "js", "rb", "java", "cs", "rs", "go"]:
        n_env_lookups_multi(lang)
    for lang in ["kt", "py", "ts", "java"]:
        n_enums_identifiers(lang)
    seen = set()
    out = []
    for c in CASES:
        if c["text"] in seen:
            continue
        seen.add(c["text"])
        out.append(c)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "generator5.jsonl"), "w", encoding="utf-8") as f:
        for c in out:
            f.write(json.dumps(c, ensure_ascii=False, sort_keys=False) + "\n")
    print(f"wrote {len(out)} cases")


if __name__ == "__main__":
    main()
