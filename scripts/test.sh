#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing
# (scripts/setup.sh), builds, and runs every test of the workspace. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# ./.venv, or where setup.sh put it for a checkout the sandbox cannot reach.
SECAUDIT_VENV=$(source scripts/paths.sh && printf '%s' "$SECAUDIT_VENV")
export SECAUDIT_VENV
# Style gates first: they are cheap and a failure here is the author's to fix.
if [ "${SECAUDIT_SKIP_LINT:-0}" != 1 ]; then
  if ! cargo clippy -V >/dev/null 2>&1 || ! cargo fmt --version >/dev/null 2>&1; then
    rustup component add clippy rustfmt >&2 || { echo "test: install clippy and rustfmt (rustup component add clippy rustfmt), or set SECAUDIT_SKIP_LINT=1" >&2; exit 1; }
  fi
  cargo fmt --all --check
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  # Hygiene: no dependency a crate does not use, no import cycle between
  # sibling modules (the check proves first that it can find one).
  cargo machete --skip-target-dir
  python3 scripts/check_cycles.py --self-test
  python3 scripts/check_cycles.py
fi
# Everything, in the tier this host picks (bwrap here), including the
# sandbox tests of every tier and the container emulation (tests/container.rs:
# the server under Docker's default confinement, as root and as uid 1000).
# Then the namespace-free tier on this host too: every in-process hack, the
# oracle and the health grader's tests again with SECAUDIT_SANDBOX=landlock.
LANDLOCK_AGAIN='/^hacks::|^oracle::every_oracle_solves_its_task$|^health::/'
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast "$@"
  SECAUDIT_SANDBOX=landlock cargo nextest run --workspace --no-fail-fast -E "test($LANDLOCK_AGAIN)"
else
  cargo test --workspace --no-fail-fast "$@"
  SECAUDIT_SANDBOX=landlock cargo test --workspace --no-fail-fast -- hacks:: oracle::every_oracle_solves_its_task health::
fi
