#!/usr/bin/env bash
# SecretsAuditEnv submission validator: the seed's four checks, each printed
# as PASS or FAIL with its reason; the exit status is non-zero when any fails.
#
#   bash validate-submission.sh [URL]
#       1 connection        POST /reset returns 200. Without URL, the local
#                           binary is started on a free port with a temporary
#                           data dir and stopped at the end.
#       2 Docker portability static Dockerfile checks (no Docker engine is
#                           needed) and a real run of scripts/docker-entrypoint.sh
#                           outside Docker.
#       3 spec compliance   spec.md covers openenv.yaml's observation keys, the
#                           13 task dirs exist, `secaudit generate` validates
#                           them, `openenv validate --url` passes.
#       4 reward integrity  the baseline agent runs 2 steps; its stdout has the
#                           [START]/[STEP]/[END] format. Without API_BASE_URL a
#                           local fake model (scripts/fake_model.py) answers.
#
#   bash validate-submission.sh --check-dockerfile DOCKERFILE ENTRYPOINT CONTEXT
#       only the static Dockerfile check (used by tests/packaging.rs).
#
# Environment: SECAUDIT_BIN (binary; default {debug,release}/secaudit under
# Cargo's target dir, CARGO_TARGET_DIR honoured,
# built when missing), OPENENV_BIN (default .tools/openenv/bin/openenv, made by
# scripts/setup.sh). Every wait is bounded; every process started here is
# stopped by its own process-group id on exit.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOLS_PY="$ROOT/.tools/openenv/bin/python"
OPENENV="${OPENENV_BIN:-$ROOT/.tools/openenv/bin/openenv}"
# Absolute: the sandbox mounts the venv, and a relative path does not resolve there.
VENV="${SECAUDIT_VENV:-$ROOT/.venv}"

# ---------------------------------------------------------------- helpers

PIDS=()
TMPS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${PIDS[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  for p in "${TMPS[@]}"; do
    rm -rf -- "$p"
  done
}

# Stops one process group started by start_bg.
stop_bg() {
  kill -TERM -- "-$1" 2>/dev/null || kill -TERM "$1" 2>/dev/null || true
  local i
  for i in $(seq 1 50); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

new_tmp() {
  local d
  d=$(mktemp -d "${TMPDIR:-/tmp}/secaudit-validate.XXXXXX")
  # mktemp makes it 0700; as a data dir of a root server it must be
  # searchable by the sandbox's uids (server/src/env/reach.rs). Ours to open.
  chmod 711 "$d"
  TMPS+=("$d")
  printf '%s\n' "$d"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Starts "$@" in its own session/process group, logs to $BG_LOG; sets BG_PID.
start_bg() {
  setsid "$@" >"$BG_LOG" 2>&1 &
  BG_PID=$!
  PIDS+=("$BG_PID")
}

# wait_health URL PID SECONDS: polls GET URL/health until it reports healthy.
wait_health() {
  local url=$1 pid=$2 secs=$3 i
  for i in $(seq 1 $((secs * 4))); do
    if ! kill -0 "$pid" 2>/dev/null; then
      return 1
    fi
    if curl -fsS --max-time 2 "$url/health" 2>/dev/null | grep -q '"healthy"'; then
      return 0
    fi
    sleep 0.25
  done
  return 1
}

FAILED=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; FAILED=1; }
note() { printf '      %s\n' "$*"; }

find_bin() {
  if [ -n "${SECAUDIT_BIN:-}" ]; then
    printf '%s\n' "$SECAUDIT_BIN"
    return
  fi
  # Cargo's target dir, not ./target: CARGO_TARGET_DIR may point elsewhere.
  local b debug release
  debug=$(bash "$ROOT/scripts/secaudit-bin.sh" debug) || return 1
  release=$(bash "$ROOT/scripts/secaudit-bin.sh" release) || return 1
  for b in "$debug" "$release"; do
    if [ -x "$b" ]; then
      printf '%s\n' "$b"
      return
    fi
  done
  if command -v cargo >/dev/null; then
    echo "validate: building secaudit (cargo build -p secaudit)" >&2
    (cd "$ROOT" && cargo build -q -p secaudit --bin secaudit >&2) && printf '%s\n' "$debug"
  fi
}

# ------------------------------------------------- static Dockerfile check

# check_dockerfile DOCKERFILE ENTRYPOINT CONTEXT: prints one line per problem
# and returns 1 when there is any. Checks: every FROM image is pinned by a
# tag other than latest (or a digest; earlier stage names and scratch are
# fine); every COPY/ADD source (other than --from=stage) exists under CONTEXT
# and stays inside it; the final stage has ENTRYPOINT or CMD; no absolute
# host path (/root, /home/<user>, /work, /Users, /tmp/...) appears outside
# comments in the Dockerfile or the entrypoint script.
check_dockerfile() {
  python3 - "$1" "$2" "$3" <<'PY'
import glob, json, os, re, shlex, sys

dockerfile, entrypoint, context = sys.argv[1:4]
problems = []
MAX = 1 << 20

def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(MAX)

HOST_PATH = re.compile(r"(?<![\w.\-])(/root(?![\w.\-])|/home/[A-Za-z0-9_.\-]+|/work(?![\w.\-])|/Users/|/tmp/)")

def host_paths(text, name):
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        for m in HOST_PATH.finditer(line):
            problems.append(f"{name}:{n}: absolute host path {m.group(1)!r}")

try:
    src = read(dockerfile)
except OSError as e:
    print(f"cannot read Dockerfile: {e}")
    sys.exit(1)

# Logical instructions: drop comments, join backslash continuations.
instrs, cur, start = [], "", 0
for n, line in enumerate(src.splitlines(), 1):
    s = line.strip()
    if not cur and (not s or s.startswith("#")):
        continue
    if cur and s.startswith("#"):
        continue
    if not cur:
        start = n
    if s.endswith("\\"):
        cur += s[:-1] + " "
        continue
    cur += s
    instrs.append((start, cur))
    cur = ""
if cur:
    instrs.append((start, cur))

stages, last_stage_has_cmd, saw_from = set(), False, False
ctx = os.path.realpath(context)
for n, ins in instrs:
    parts = ins.split(None, 1)
    op, rest = parts[0].upper(), (parts[1] if len(parts) > 1 else "")
    if op == "FROM":
        saw_from = True
        last_stage_has_cmd = False
        toks = [t for t in rest.split() if not t.startswith("--")]
        if not toks:
            problems.append(f"Dockerfile:{n}: FROM without an image")
            continue
        image = toks[0]
        if len(toks) >= 3 and toks[1].lower() == "as":
            stages.add(toks[2].lower())
        if image.lower() in stages or image == "scratch":
            continue
        if "$" in image:
            problems.append(f"Dockerfile:{n}: base image {image!r} uses a variable; cannot verify its pin")
        elif "@" in image:
            continue
        else:
            last = image.rsplit("/", 1)[-1]
            if ":" not in last:
                problems.append(f"Dockerfile:{n}: base image {image!r} has no tag (implicit :latest)")
            elif last.rsplit(":", 1)[1] == "latest":
                problems.append(f"Dockerfile:{n}: base image {image!r} is pinned to :latest")
    elif op in ("COPY", "ADD"):
        if rest.lstrip().startswith("["):
            try:
                args = json.loads(rest)
            except ValueError:
                problems.append(f"Dockerfile:{n}: {op} has invalid JSON form")
                continue
            flags = []
        else:
            try:
                toks = shlex.split(rest)
            except ValueError:
                problems.append(f"Dockerfile:{n}: {op} cannot be parsed")
                continue
            flags = [t for t in toks if t.startswith("--")]
            args = [t for t in toks if not t.startswith("--")]
        if any(f.startswith("--from") for f in flags):
            continue
        if len(args) < 2:
            problems.append(f"Dockerfile:{n}: {op} needs a source and a destination")
            continue
        for s in args[:-1]:
            if op == "ADD" and re.match(r"^(https?|git)://", s):
                continue
            rel = s.lstrip("/")
            full = os.path.join(context, rel)
            if os.path.commonpath([ctx, os.path.realpath(full)]) != ctx:
                problems.append(f"Dockerfile:{n}: {op} source {s!r} leaves the build context")
            elif any(c in rel for c in "*?["):
                if not glob.glob(full):
                    problems.append(f"Dockerfile:{n}: {op} source {s!r} matches nothing")
            elif not os.path.exists(full):
                problems.append(f"Dockerfile:{n}: {op} source {s!r} does not exist in the repo")
    elif op in ("ENTRYPOINT", "CMD"):
        last_stage_has_cmd = True

if not saw_from:
    problems.append("Dockerfile: no FROM")
if not last_stage_has_cmd:
    problems.append("Dockerfile: the final stage has no ENTRYPOINT or CMD")
host_paths(src, "Dockerfile")
try:
    host_paths(read(entrypoint), os.path.basename(entrypoint))
except OSError as e:
    problems.append(f"cannot read entrypoint {entrypoint}: {e}")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
}

if [ "${1:-}" = "--check-dockerfile" ]; then
  if [ $# -ne 4 ]; then
    echo "usage: $0 --check-dockerfile DOCKERFILE ENTRYPOINT CONTEXT" >&2
    exit 2
  fi
  check_dockerfile "$2" "$3" "$4"
  exit $?
fi
if [ $# -gt 1 ]; then
  echo "usage: $0 [URL]" >&2
  exit 2
fi

trap cleanup EXIT
trap 'exit 130' INT TERM

BIN=$(find_bin)
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
  echo "validate: no secaudit binary (set SECAUDIT_BIN or run cargo build -p secaudit)" >&2
  BIN=""
fi
HAVE_OPENENV=1
if [ ! -x "$OPENENV" ] || [ ! -x "$TOOLS_PY" ]; then
  HAVE_OPENENV=0
fi

# ------------------------------------------------------ 1: connection

URL="${1:-}"
if [ -z "$URL" ]; then
  if [ -z "$BIN" ]; then
    fail "1 connection: no URL given and no local binary to start"
  else
    PORT=$(free_port)
    DATA=$(new_tmp)
    BG_LOG="$DATA.serve.log"
    TMPS+=("$BG_LOG")
    start_bg "$BIN" serve --host 127.0.0.1 --port "$PORT" --tasks-dir "$ROOT/tasks" --data-dir "$DATA" \
      --venv "$VENV"
    SERVER_PID=$BG_PID
    URL="http://127.0.0.1:$PORT"
    if ! wait_health "$URL" "$SERVER_PID" 180; then
      fail "1 connection: local server did not become healthy at $URL within 180 s"
      tail -n 20 "$BG_LOG" 2>/dev/null | sed 's/^/      | /'
      URL=""
    fi
  fi
fi
URL="${URL%/}"
if [ -n "$URL" ]; then
  RESET_TMP=$(new_tmp)
  code=$(curl -sS -o "$RESET_TMP/body" -w '%{http_code}' --max-time 60 -X POST -H 'Content-Type: application/json' \
    -d '{"task_id":1}' "$URL/reset" 2>/dev/null || true)
  if [ "$code" = 200 ]; then
    pass "1 connection: POST $URL/reset returned 200"
    # Give the session slot back (the seed API keeps sessions until closed).
    sid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("session_id") or "")' \
      "$RESET_TMP/body" 2>/dev/null || true)
    if [ -n "$sid" ]; then
      curl -sS -o /dev/null --max-time 30 -X POST -H 'Content-Type: application/json' \
        -d "{\"session_id\":\"$sid\"}" "$URL/close" 2>/dev/null || true
    fi
  else
    fail "1 connection: POST $URL/reset returned ${code:-no response} (want 200)"
    head -c 500 "$RESET_TMP/body" 2>/dev/null | sed 's/^/      | /'; echo
  fi
fi

# ----------------------------------------------- 2: Docker portability

if out=$(check_dockerfile "$ROOT/Dockerfile" "$ROOT/scripts/docker-entrypoint.sh" "$ROOT" 2>&1); then
  pass "2 docker (static): base images pinned, COPY sources exist, ENTRYPOINT set, no host paths"
else
  fail "2 docker (static):"
  printf '%s\n' "$out" | sed 's/^/      - /'
fi
if [ -z "$BIN" ]; then
  fail "2 docker (entrypoint): no binary to run scripts/docker-entrypoint.sh with"
else
  EP_PORT=$(free_port)
  EP_DATA=$(new_tmp)
  BG_LOG="$EP_DATA.entrypoint.log"
  TMPS+=("$BG_LOG")
  start_bg env -C "$ROOT" PORT="$EP_PORT" SECAUDIT_BIN="$BIN" SECAUDIT_TASKS_DIR="$ROOT/tasks" \
    SECAUDIT_DATA_DIR="$EP_DATA" SECAUDIT_VENV="$VENV" bash scripts/docker-entrypoint.sh
  EP_PID=$BG_PID
  if wait_health "http://127.0.0.1:$EP_PORT" "$EP_PID" 300; then
    pass "2 docker (entrypoint): scripts/docker-entrypoint.sh generated the tasks and served /health on \$PORT=$EP_PORT"
  else
    fail "2 docker (entrypoint): scripts/docker-entrypoint.sh did not serve a healthy /health on port $EP_PORT"
    tail -n 20 "$BG_LOG" 2>/dev/null | sed 's/^/      | /'
  fi
  stop_bg "$EP_PID"
fi

# -------------------------------------------------- 3: spec compliance

spec_ok=1
if [ ! -f "$ROOT/spec.md" ]; then
  fail "3 spec: spec.md is missing"
  spec_ok=0
else
  # Observation keys from openenv.yaml: with PyYAML from the tool venv when
  # present, else a line-based read of the observation_keys block.
  if [ -x "$TOOLS_PY" ]; then
    keys=$("$TOOLS_PY" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print("\n".join(d["observation_keys"]))' "$ROOT/openenv.yaml" 2>&1) || { fail "3 spec: openenv.yaml does not parse: $keys"; keys=""; spec_ok=0; }
  else
    keys=$(awk '/^observation_keys:/{f=1;next} f&&/^  - /{sub(/^  - /,"");print;next} f{exit}' "$ROOT/openenv.yaml")
  fi
  missing=()
  for k in $keys; do
    grep -qF -- "\`$k\`" "$ROOT/spec.md" || missing+=("$k")
  done
  if [ -z "$keys" ]; then
    fail "3 spec: openenv.yaml lists no observation_keys"
    spec_ok=0
  elif [ ${#missing[@]} -gt 0 ]; then
    fail "3 spec: spec.md does not mention observation keys: ${missing[*]}"
    spec_ok=0
  fi
fi
missing_tasks=()
for i in $(seq 1 13); do
  n=$(printf '%02d' "$i")
  compgen -G "$ROOT/tasks/*/task_$n/task.json" >/dev/null || missing_tasks+=("task_$n")
done
if [ ${#missing_tasks[@]} -gt 0 ]; then
  fail "3 spec: task dirs without task.json: ${missing_tasks[*]}"
  spec_ok=0
fi
if [ -z "$BIN" ]; then
  fail "3 spec: no binary to run secaudit generate"
  spec_ok=0
else
  GEN_DATA=$(new_tmp)
  if gen=$(timeout 600 "$BIN" generate --tasks-dir "$ROOT/tasks" --data-dir "$GEN_DATA" 2>&1); then
    :
  else
    fail "3 spec: secaudit generate failed:"
    printf '%s\n' "$gen" | tail -n 15 | sed 's/^/      | /'
    spec_ok=0
  fi
fi
if [ "$HAVE_OPENENV" = 0 ]; then
  fail "3 spec: $OPENENV missing; run scripts/setup.sh (installs openenv==0.10.0 into .tools/openenv)"
  spec_ok=0
elif [ -n "$URL" ]; then
  if val=$(timeout 120 "$OPENENV" validate --url "$URL" 2>&1) && printf '%s' "$val" | grep -q '^Verdict: PASS' \
    && ! printf '%s' "$val" | grep -qE '^ *(FAIL|ERROR) '; then
    :
  else
    fail "3 spec: openenv validate --url $URL failed:"
    printf '%s\n' "$val" | tail -n 20 | sed 's/^/      | /'
    spec_ok=0
  fi
else
  fail "3 spec: no server URL for openenv validate"
  spec_ok=0
fi
if [ "$spec_ok" = 1 ]; then
  pass "3 spec: spec.md covers the observation keys, 13 tasks present, generate ok, openenv validate passed"
fi

# -------------------------------------------------- 4: reward integrity

if [ -z "$BIN" ] || [ -z "$URL" ]; then
  fail "4 reward: needs the binary and a server URL"
else
  AG_TMP=$(new_tmp)
  model_note="API_BASE_URL=${API_BASE_URL:-}"
  if [ -z "${API_BASE_URL:-}" ]; then
    FM_PORT=$(free_port)
    BG_LOG="$AG_TMP/fake_model.log"
    start_bg python3 "$ROOT/scripts/fake_model.py" "$FM_PORT" ls
    FM_PID=$BG_PID
    export API_BASE_URL="http://127.0.0.1:$FM_PORT/v1" HF_TOKEN="${HF_TOKEN:-fake}" MODEL_NAME="${MODEL_NAME:-fake-model}"
    model_note="fake model at $API_BASE_URL"
    for _ in $(seq 1 40); do
      curl -fsS --max-time 1 "$API_BASE_URL/models" >/dev/null 2>&1 && break
      sleep 0.25
    done
  fi
  timeout 600 "$BIN" agent --agent baseline --task-id 1 --max-steps 2 --env-url "$URL" \
    >"$AG_TMP/stdout" 2>"$AG_TMP/stderr"
  rc=$?
  problems=$(python3 - "$AG_TMP/stdout" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8", errors="replace").read(1 << 20).splitlines()
num = r"-?\d+(?:\.\d+)?"
START = re.compile(r"^\[START\] task=\S+ env=\S+ model=\S+$")
STEP = re.compile(rf"^\[STEP\] step=(\d+) action=.* reward=({num}) done=(true|false) error=.+$")
END = re.compile(rf"^\[END\] success=(true|false) steps=(\d+) score=({num}) rewards=((?:{num})(?:,{num})*)?$")
out = []
if not lines:
    out.append("no output")
else:
    if not START.match(lines[0]):
        out.append(f"first line is not [START]: {lines[0][:200]!r}")
    steps = [l for l in lines[1:-1]]
    bad = [l for l in steps if not STEP.match(l)]
    if bad:
        out.append(f"not a [STEP] line: {bad[0][:200]!r}")
    if not 1 <= len(steps) <= 2:
        out.append(f"want 1..2 [STEP] lines for --max-steps 2, got {len(steps)}")
    for i, l in enumerate(steps, 1):
        m = STEP.match(l)
        if m and int(m.group(1)) != i:
            out.append(f"[STEP] numbering: line {i} says step={m.group(1)}")
        if m and not 0.0 <= float(m.group(2)) <= 1.0:
            out.append(f"[STEP] reward out of [0,1]: {m.group(2)}")
    m = END.match(lines[-1]) if len(lines) > 1 else None
    if not m:
        out.append(f"last line is not [END]: {lines[-1][:200]!r}")
    else:
        rewards = [float(x) for x in m.group(4).split(",")] if m.group(4) else []
        if int(m.group(2)) != len(steps) or len(rewards) != len(steps):
            out.append(f"[END] steps={m.group(2)} rewards={m.group(4)} disagree with {len(steps)} [STEP] lines")
        if not 0.0 <= float(m.group(3)) <= 1.0:
            out.append(f"[END] score out of [0,1]: {m.group(3)}")
print("\n".join(out))
PY
)
  if [ "$rc" = 0 ] && [ -z "$problems" ]; then
    pass "4 reward: baseline agent ran 2 steps ($model_note); [START]/[STEP]/[END] format ok"
  else
    fail "4 reward: baseline agent (exit $rc, $model_note):"
    [ -n "$problems" ] && printf '%s\n' "$problems" | sed 's/^/      - /'
    sed 's/^/      | /' "$AG_TMP/stdout" | head -n 10
    tail -n 10 "$AG_TMP/stderr" | sed 's/^/      ! /'
  fi
  [ -n "${FM_PID:-}" ] && stop_bg "$FM_PID"
fi

echo
if [ "$FAILED" = 0 ]; then
  echo "validate-submission: all checks passed"
else
  echo "validate-submission: FAILED"
fi
exit "$FAILED"
