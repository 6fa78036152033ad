#!/usr/bin/env bash
# Deploy the Harborline stack. Credentials come from the caller's environment
# (the deploy workflow assumes an IAM role; locally use `aws sso login`).
set -euo pipefail
cd "$(dirname "$0")/.."
REGION="${AWS_DEFAULT_REGION:-us-east-1}"
REGISTRY="${REGISTRY:-312907445581.dkr.ecr.us-east-1.amazonaws.com}"
TAG="${TAG:-$(git rev-parse --short HEAD)}"
aws ecr get-login-password --region "$REGION" | docker login --username AWS --password-stdin "$REGISTRY"
for svc in billing auth notifier; do
  docker build -f infra/Dockerfile --build-arg SERVICE="$svc" -t "$REGISTRY/harborline-$svc:$TAG" .
  docker push "$REGISTRY/harborline-$svc:$TAG"
done
