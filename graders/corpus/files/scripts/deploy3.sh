#!/usr/bin/env bash
set -euo pipefail
export AWS_SECRET_ACCESS_KEY="C8FnAoHCgf7V+KsSh3K7T6Tl2AnylBdoud/NwjaW"
export ALERTS_WEBHOOK="https://hooks.slack.com/services/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"
export SMTP_PASSWORD="s7Y1qI_dZhBsIwTRMO7p"
export GITHUB_TOKEN="${GITHUB_TOKEN:-}"
git checkout df99fe8848e54eb7ce1588ecab0d6a4eac0c3240
echo "52ec26c525b2e87f894d1596650f2217ccb0ea58569a267513cf9ac68f9028a7  release.tar.gz" | sha256sum -c -
curl -s -H "Authorization: Bearer eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiNzEwMzMxMzA1MDc4IiwgIm5hbWUiOiAibGVlIiwgImlhdCI6IDE3MzY4NDE4ODYsICJzY29wZSI6ICJvcmRlcnM6d3JpdGUifQ.FEjgvQtphsEvpE4uixHiA9zru0QNhJMFZh1yZOlTGoc" https://api.northwind.io/v1/ping
curl -u "admin:$ADMIN_PASSWORD" https://ci.northwind.io/api
