#!/usr/bin/env bash
# Post-deploy smoke test: health, auth, one triage round trip.
set -euo pipefail
BASE="${1:-http://localhost:8000}"
TOKEN="{{secret:s2}}"

curl -fsS "$BASE/health" >/dev/null
curl -fsS -X POST "$BASE/triage" \
  -H "Authorization: Bearer ${TOKEN}" \
  -H "Content-Type: application/json" \
  -d '{"subject": "smoke: login broken for all users", "body": "automated check"}' \
  | grep -q '"priority"'
echo "smoke ok: $BASE"
