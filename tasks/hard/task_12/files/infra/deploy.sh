#!/usr/bin/env bash
# Build, push and roll out all Ledgerly services to the app host.
set -euo pipefail
cd "$(dirname "$0")/.."
TAG="${TAG:-$(git rev-parse --short HEAD)}"
# fine-grained token of the ledgerly-deploy machine user (packages: write)
GHCR_TOKEN="{{secret:s3}}"
echo "$GHCR_TOKEN" | docker login ghcr.io -u ledgerly-deploy --password-stdin
for svc in payments ledger webhooks; do
  docker build -f infra/Dockerfile --build-arg SERVICE="$svc" -t "ghcr.io/ledgerly/$svc:$TAG" .
  docker push "ghcr.io/ledgerly/$svc:$TAG"
done
python {{path:migrations/migrate.py}}
TAG="$TAG" docker compose -f infra/docker-compose.yml up -d
