#!/usr/bin/env bash
# Installs what SecretsAuditEnv needs at run and test time, idempotently:
# bubblewrap, python3-seccomp (the container-emulation tests), git, curl and jq
# (the README's examples), Chromium + ChromeDriver (browser test), a project-local
# Python venv (.venv, or elsewhere for a checkout the sandbox cannot reach:
# scripts/paths.sh) built from Debian's /usr/bin/python3 so that it lives
# under /usr inside the sandbox, with pytest and git-filter-repo.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v git >/dev/null 2>&1 || need_apt+=(git)
# curl and jq: the README's HTTP example (run as written by tests/firsthour.rs).
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v jq >/dev/null 2>&1 || need_apt+=(jq)
[ -x /usr/bin/python3 ] || need_apt+=(python3 python3-venv)
# Debian's libseccomp binding: scripts/docker-like.py emulates Docker's
# default confinement, under which the tests run the namespace-free tier.
/usr/bin/python3 -c 'import seccomp' 2>/dev/null || need_apt+=(python3-seccomp)
command -v setpriv >/dev/null 2>&1 || need_apt+=(util-linux)
if [ "${SECAUDIT_SKIP_BROWSER:-0}" != 1 ]; then
  [ -x /usr/bin/chromium ] || need_apt+=(chromium)
  [ -x /usr/bin/chromedriver ] || need_apt+=(chromium-driver)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing ${need_apt[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install: ${need_apt[*]} (e.g. sudo apt-get install ${need_apt[*]})" >&2
    case " ${need_apt[*]} " in *" bubblewrap "*|*" python3 "*|*" python3-seccomp "*) exit 1;; esac
  fi
fi
# The venv's place: ./.venv, or outside a checkout the sandbox cannot reach
# (scripts/paths.sh).
source scripts/paths.sh
VENV="$SECAUDIT_VENV"
# Every pin of requirements.txt installed at its version: the grader's
# bootstrap judges pytest's and pluggy's own objects, so an older venv
# with other versions is brought to the pins.
pins_ok() {
  "$VENV/bin/python" - scripts/requirements.txt <<'PY' 2>/dev/null
import sys, importlib.metadata as m
for line in open(sys.argv[1]):
    name, _, want = line.strip().partition("==")
    if name and m.version(name) != want:
        sys.exit(1)
PY
}
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import pytest' 2>/dev/null || [ ! -x "$VENV/bin/git-filter-repo" ]; then
  echo "setup: creating $VENV" >&2
  /usr/bin/python3 -m venv --copies "$VENV" 2>/dev/null || /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r scripts/requirements.txt
elif ! pins_ok; then
  echo "setup: bringing $VENV to scripts/requirements.txt's pins" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check -r scripts/requirements.txt
fi
# The venv must be readable by the sandbox's unprivileged uid.
chmod -R a+rX "$VENV" 2>/dev/null || true
# The real OpenEnv client and CLI (validate, GenericEnvClient), used only by
# tests and validate-submission.sh. A separate venv: .venv is mounted into the
# sandbox and must stay small; openenv pulls in a large dependency tree.
# Not needed to serve: scripts/serve.sh skips it (SECAUDIT_SETUP_OPENENV=0).
#
# Tool venvs hold no symbolic links (copied interpreter, lib64 a directory,
# not venv's link to lib): `openenv validate` digests the repository
# directory, .tools included, and refuses a tree with links in it.
tool_venv() {
  rm -rf "$1"
  mkdir -p "$1/lib64"
  /usr/bin/python3 -m venv --copies "$1"
}
has_links() { [ -n "$(find "$1" -type l -print -quit 2>/dev/null)" ]; }
OPENENV_VENV="$ROOT/.tools/openenv"
OPENENV_VERSION=0.10.0
# wheel: builds the client (pyproject.toml) offline, as tests/pyclient.rs does.
WHEEL_VERSION=0.45.1
# examples/train_grpo.py names the same trl version; tests/trl.rs checks it.
TRANSFORMERS_VERSION=5.25.0
TRL_VERSION=1.16.0
if [ "${SECAUDIT_SETUP_OPENENV:-1}" = 0 ]; then
  :
else
  if [ ! -x "$OPENENV_VENV/bin/openenv" ] || has_links "$OPENENV_VENV" || ! "$OPENENV_VENV/bin/python" -c "import importlib.metadata as m, sys, yaml; sys.exit(m.version('openenv') != '$OPENENV_VERSION' or m.version('wheel') != '$WHEEL_VERSION')" 2>/dev/null; then
    echo "setup: creating $OPENENV_VENV (openenv==$OPENENV_VERSION)" >&2
    tool_venv "$OPENENV_VENV"
    "$OPENENV_VENV/bin/pip" install -q --disable-pip-version-check "openenv==$OPENENV_VERSION" pyyaml "wheel==$WHEEL_VERSION"
  fi
  # The Python client of this checkout (pyproject.toml), editable, so that
  # the README's example runs against the tree as it is.
  if ! "$OPENENV_VENV/bin/python" -c "import secrets_audit_env, sys, os; sys.exit(not secrets_audit_env.__file__.startswith(os.path.realpath('$ROOT') + '/'))" 2>/dev/null; then
    echo "setup: installing the client (secrets-audit-env) into $OPENENV_VENV" >&2
    "$OPENENV_VENV/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$ROOT"
  fi
  # TRL integration (trl_env.py, tests/trl.rs): transformers builds tool
  # schemas from the class with the function TRL's chat templates use
  # (get_json_schema; it imports without torch); trl itself without its
  # dependencies (torch, accelerate, datasets), for its source, GRPOConfig's
  # signature and its chat templates, not to train. About 35 s.
  if ! "$OPENENV_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('transformers') != '$TRANSFORMERS_VERSION' or m.version('trl') != '$TRL_VERSION')" 2>/dev/null; then
    echo "setup: installing transformers==$TRANSFORMERS_VERSION and trl==$TRL_VERSION (no dependencies) into $OPENENV_VENV" >&2
    "$OPENENV_VENV/bin/pip" install -q --disable-pip-version-check "transformers==$TRANSFORMERS_VERSION"
    "$OPENENV_VENV/bin/pip" install -q --disable-pip-version-check --no-deps "trl==$TRL_VERSION"
  fi
fi
# Schemathesis, the OpenAPI fuzzer tests/firsthour.rs runs against the
# server (a bounded pass), in a venv of its own for the same reason.
SCHEMATHESIS_VENV="$ROOT/.tools/schemathesis"
SCHEMATHESIS_VERSION=4.32.5
if [ ! -x "$SCHEMATHESIS_VENV/bin/st" ] || has_links "$SCHEMATHESIS_VENV" || ! "$SCHEMATHESIS_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('schemathesis') != '$SCHEMATHESIS_VERSION')" 2>/dev/null; then
  echo "setup: creating $SCHEMATHESIS_VENV (schemathesis==$SCHEMATHESIS_VERSION)" >&2
  tool_venv "$SCHEMATHESIS_VENV"
  "$SCHEMATHESIS_VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
# Harbor's own task model and linter, which tests/harbor.rs runs on every
# task `secaudit export harbor` writes (scripts/harbor_check.py). Pinned,
# without dependencies: see scripts/harbor-requirements.txt for why.
HARBOR_VENV="$ROOT/.tools/harbor"
HARBOR_VERSION=$(sed -n 's/^harbor==//p' scripts/harbor-requirements.txt)
if [ ! -x "$HARBOR_VENV/bin/python" ] || has_links "$HARBOR_VENV" || ! "$HARBOR_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('harbor') != '$HARBOR_VERSION')" 2>/dev/null; then
  echo "setup: creating $HARBOR_VENV (harbor==$HARBOR_VERSION)" >&2
  tool_venv "$HARBOR_VENV"
  "$HARBOR_VENV/bin/pip" install -q --disable-pip-version-check --no-deps --ignore-requires-python -r scripts/harbor-requirements.txt
fi
# cargo-machete: test.sh's check that no crate declares a dependency it
# does not use (built from crates.io once; offline after that).
MACHETE_VERSION=0.9.2
if ! cargo machete --version 2>/dev/null | grep -qx "$MACHETE_VERSION"; then
  echo "setup: installing cargo-machete $MACHETE_VERSION" >&2
  cargo install --locked --quiet "cargo-machete@$MACHETE_VERSION"
fi
echo "setup: ok (python $("$VENV/bin/python" -V 2>&1), bwrap $(bwrap --version 2>/dev/null || echo missing))" >&2
