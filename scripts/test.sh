#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing
# (scripts/setup.sh), builds, and runs every test of the workspace. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export SECAUDIT_VENV="$PWD/.venv"
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast "$@"
else
  cargo test --workspace --no-fail-fast "$@"
fi
