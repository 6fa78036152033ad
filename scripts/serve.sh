#!/usr/bin/env bash
# Runs the server with the 13 tasks ready, from a fresh machine: installs what
# is missing, builds the release binary, generates task workspaces that are
# missing or stale, and serves on $PORT (default 7860). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --bin secaudit
export SECAUDIT_VENV="${SECAUDIT_VENV:-$PWD/.venv}"
exec ./target/release/secaudit serve --tasks-dir tasks --data-dir "${SECAUDIT_DATA_DIR:-data}" "$@"
