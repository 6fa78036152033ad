#!/usr/bin/env bash
# Deploy ledger-sync to the finance batch host and apply pending migrations.
set -euo pipefail

HOST="${DEPLOY_HOST:-fin-batch-02.internal}"
RELEASE="$(git rev-parse --short HEAD)"
export GH_TOKEN="{{secret:s2}}"

echo "deploying ledger-sync ${RELEASE} to ${HOST}"
gh release download "ledger-sync-assets" --repo northwind/finance-assets --dir build/assets
rsync -az --delete --exclude .git ./ "deploy@${HOST}:/srv/ledger-sync/releases/${RELEASE}/"
ssh "deploy@${HOST}" "ln -sfn /srv/ledger-sync/releases/${RELEASE} /srv/ledger-sync/current"
for m in migrations/*.sql; do
  ssh "deploy@${HOST}" "psql -v ON_ERROR_STOP=1 -v reporting_password=\"\$REPORTING_DB_PASSWORD\" -d ledger -f /srv/ledger-sync/current/${m}"
done
