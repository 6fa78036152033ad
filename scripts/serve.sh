#!/usr/bin/env bash
# Runs the server with the 13 tasks ready, from a fresh machine: installs what
# is missing, builds the release binary, generates task workspaces that are
# missing or stale, and serves on $PORT (default 7860). Idempotent. The
# binary is wherever Cargo put it (CARGO_TARGET_DIR is honoured). Works from
# any checkout location: the venv and the data dir are ./.venv and ./data, or
# outside a checkout the sandbox cannot reach (scripts/paths.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# The OpenEnv client venv is for tests, not for serving.
SECAUDIT_SETUP_OPENENV=0 bash scripts/setup.sh
source scripts/paths.sh
if [ -n "$SECAUDIT_STATE_DIR" ]; then
  echo "serve: $(pwd -P) is not searchable by the sandbox's unprivileged uids; venv and data dir in $SECAUDIT_STATE_DIR" >&2
fi
cargo build --release --bin secaudit
BIN=$(bash scripts/secaudit-bin.sh release)
[ -x "$BIN" ] || { echo "serve: no binary at $BIN after cargo build" >&2; exit 1; }
# Directories the server creates below the data dir must stay searchable by
# the sandbox's uids (server/src/env/reach.rs refuses to start otherwise).
umask 022
exec "$BIN" serve --tasks-dir tasks --data-dir "$SECAUDIT_DATA_DIR" "$@"
