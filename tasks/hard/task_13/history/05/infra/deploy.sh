#!/usr/bin/env bash
# Ship the current checkout to the edge hosts. The deploy key is loaded into
# ssh-agent by the operator (or by the CI job); it is never stored in the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
ssh-add -l >/dev/null || { echo "load the deploy key into ssh-agent first" >&2; exit 1; }
for host in ${DEPLOY_HOSTS:-edge-1.atlas.internal edge-2.atlas.internal}; do
  rsync -az --exclude .git ./ "deploy@$host:/srv/atlas/"
  ssh "deploy@$host" 'cd /srv/atlas && docker compose -f infra/docker-compose.yml up -d --build'
done
