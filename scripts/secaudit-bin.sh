#!/usr/bin/env bash
# Prints where Cargo puts the `secaudit` binary of a profile (`release` or
# `debug`, default `release`): <target dir>/<profile>/secaudit. The target
# dir is Cargo's own answer (`cargo metadata`), so CARGO_TARGET_DIR,
# CARGO_BUILD_TARGET_DIR and `build.target-dir` in .cargo/config.toml are
# all honoured; scripts must not assume ./target. Without cargo (a prebuilt
# checkout) it falls back to $CARGO_TARGET_DIR or ./target. Does not build.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-release}"
case "$profile" in
  release|debug) ;;
  *) echo "secaudit-bin: profile must be release or debug, not '$profile'" >&2; exit 2;;
esac
if command -v cargo >/dev/null 2>&1; then
  dir=$(cargo metadata --format-version 1 --no-deps --offline \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
else
  dir="${CARGO_TARGET_DIR:-$PWD/target}"
  case "$dir" in /*) ;; *) dir="$PWD/$dir";; esac
fi
printf '%s/%s/secaudit\n' "$dir" "$profile"
