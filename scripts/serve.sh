#!/usr/bin/env bash
# Runs the server with the 13 tasks ready, from a fresh machine: installs what
# is missing, builds the release binary, generates task workspaces that are
# missing or stale, and serves on $PORT (default 7860). Idempotent. The
# binary is wherever Cargo put it (CARGO_TARGET_DIR is honoured).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --bin secaudit
BIN=$(bash scripts/secaudit-bin.sh release)
[ -x "$BIN" ] || { echo "serve: no binary at $BIN after cargo build" >&2; exit 1; }
export SECAUDIT_VENV="${SECAUDIT_VENV:-$PWD/.venv}"
exec "$BIN" serve --tasks-dir tasks --data-dir "${SECAUDIT_DATA_DIR:-data}" "$@"
