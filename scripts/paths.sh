#!/usr/bin/env bash
# Where the venv and the data dir live: sourced by setup.sh, serve.sh and
# test.sh, which then use $SECAUDIT_VENV and $SECAUDIT_DATA_DIR; run on its
# own it prints both (tests ask a checkout where its server keeps them).
#
# Why not always ./.venv and ./data: when the server runs as root, every
# command runs as an unprivileged uid, which must search every directory
# above the venv and the session workspaces (server/src/env/reach.rs).
# A checkout in root's home (0700), in a Debian 12 user home (0700) or in a
# `mktemp -d` directory is not searchable by it, and loosening the user's
# home is not ours to do. Such a checkout keeps its venv and data dir in
# /var/lib/secaudit/<name>-<hash of the checkout path>/ instead: made
# here, root's, searchable (0711) but not listable by other users. A
# checkout the sandbox can reach, or a non-root user (commands then run as
# that user), keeps them in the checkout. Values already in the
# environment win.
#
# Sourced, it expects the current directory to be the repository root.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
fi
_sa_root=$(pwd -P)
# The uid commands run as (the first of the pool, crate::sandbox) and the
# sandbox gid, with no supplementary groups: the kernel's own answer, ACLs
# included.
_sa_sandbox_reaches() {
  setpriv --reuid=1500000 --regid=65534 --clear-groups -- /usr/bin/test -x "$1" 2>/dev/null
}
if [ "$(id -u)" = 0 ] && ! _sa_sandbox_reaches "$_sa_root"; then
  _sa_name=$(basename "$_sa_root" | tr -c 'A-Za-z0-9._\n-' '_')
  _sa_hash=$(printf '%s' "$_sa_root" | sha256sum | cut -c1-12)
  SECAUDIT_STATE_DIR="/var/lib/secaudit/$_sa_name-$_sa_hash"
  install -d -m 0711 /var/lib/secaudit "$SECAUDIT_STATE_DIR"
  # The checkout path, for whoever wonders what this directory is.
  printf '%s\n' "$_sa_root" > "$SECAUDIT_STATE_DIR/checkout"
  : "${SECAUDIT_VENV:=$SECAUDIT_STATE_DIR/venv}"
  : "${SECAUDIT_DATA_DIR:=$SECAUDIT_STATE_DIR/data}"
else
  SECAUDIT_STATE_DIR=
  : "${SECAUDIT_VENV:=$_sa_root/.venv}"
  : "${SECAUDIT_DATA_DIR:=$_sa_root/data}"
fi
export SECAUDIT_VENV SECAUDIT_DATA_DIR SECAUDIT_STATE_DIR
unset _sa_root _sa_name _sa_hash
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  printf 'SECAUDIT_VENV=%s\nSECAUDIT_DATA_DIR=%s\nSECAUDIT_STATE_DIR=%s\n' \
    "$SECAUDIT_VENV" "$SECAUDIT_DATA_DIR" "$SECAUDIT_STATE_DIR"
fi
