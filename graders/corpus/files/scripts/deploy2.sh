#!/usr/bin/env bash
set -euo pipefail
export STRIPE_SECRET_KEY="sk_live_YQP63ytFccEKbeBCmi0Yx3xR"
export ANTHROPIC_API_KEY="sk-ant-api03-Y-UDoYD3QLZ6y8FEvBA6AjyOWpOiBRcfDdHWLN2p31L2StQkIwWjOxZDJ0n9bKDWV7Rf6jgevjZTsZfphxkWkBDItuxp0AA"
export NPM_TOKEN="npm_p8R7om1cJAyhrbAi7V9mXnhlpsco9yl8XB0E"
export GITHUB_TOKEN="${GITHUB_TOKEN:-}"
git checkout c95a41b04b4e11ee8fe8f708e3c8c231e4c62efb
echo "6f28102a275679a93130b6565835751032fbbe673d53cc8cbe7f7730c7ef0c33  release.tar.gz" | sha256sum -c -
mysql -u deploy -p"L@W0vvwi1KQRM16mT8V9NaDkZ" orders < schema.sql
curl -u "admin:$ADMIN_PASSWORD" https://ci.northwind.io/api
