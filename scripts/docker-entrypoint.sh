#!/usr/bin/env bash
# Container entrypoint (also runnable outside Docker): generate the task
# workspaces that are missing or stale, then serve on $PORT.
set -euo pipefail
BIN="${SECAUDIT_BIN:-secaudit}"
TASKS="${SECAUDIT_TASKS_DIR:-tasks}"
DATA="${SECAUDIT_DATA_DIR:-data}"
"$BIN" generate --tasks-dir "$TASKS" --data-dir "$DATA"
exec "$BIN" serve --tasks-dir "$TASKS" --data-dir "$DATA" --port "${PORT:-7860}" "$@"
