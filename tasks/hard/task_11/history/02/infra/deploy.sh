#!/usr/bin/env bash
# Deploy the Harborline stack to staging.
set -euo pipefail
cd "$(dirname "$0")/.."
set -a
source {{path:infra/.env}}
set +a
REGISTRY="${REGISTRY:-312907445581.dkr.ecr.us-east-1.amazonaws.com}"
TAG="${TAG:-$(git rev-parse --short HEAD)}"
aws ecr get-login-password --region "$AWS_DEFAULT_REGION" | docker login --username AWS --password-stdin "$REGISTRY"
docker build -f infra/Dockerfile -t "$REGISTRY/harborline-billing:$TAG" .
docker push "$REGISTRY/harborline-billing:$TAG"
