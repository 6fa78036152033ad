#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing
# (scripts/setup.sh), builds, and runs every test of the workspace. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export SECAUDIT_VENV="$PWD/.venv"
# Style gates first: they are cheap and a failure here is the author's to fix.
if [ "${SECAUDIT_SKIP_LINT:-0}" != 1 ]; then
  if ! cargo clippy -V >/dev/null 2>&1 || ! cargo fmt --version >/dev/null 2>&1; then
    rustup component add clippy rustfmt >&2 || { echo "test: install clippy and rustfmt (rustup component add clippy rustfmt), or set SECAUDIT_SKIP_LINT=1" >&2; exit 1; }
  fi
  cargo fmt --all --check
  cargo clippy --workspace --all-targets --quiet -- -D warnings
fi
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast "$@"
else
  cargo test --workspace --no-fail-fast "$@"
fi
