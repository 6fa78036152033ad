#!/usr/bin/env python3
"""Drives SecretsAuditEnv with the real OpenEnv client (openenv 0.10.0).

This is the proof that a stock OpenEnv consumer, not only our own Rust
client, can play an episode over `WS /ws`. Run it with the interpreter of
the separate tool venv made by scripts/setup.sh (`.tools/openenv/bin/python`).

Episode mode:
    openenv_drive.py URL ACTIONS.json [--task-id N] [--seed S]
  ACTIONS.json is a JSON list of command strings (at most 200, each at most
  64 KiB). The script resets task N (default 1), steps each command in order
  (stopping early once `done`), prints one JSON line per step
  {"step", "reward", "done", "leaks_current"} and a final line
  {"state": <state()>}. Exit 0 on a completed run, 1 on any error.

Capacity mode:
    openenv_drive.py --capacity URL N
  Opens N sessions (each reset task 1) and keeps them open, then opens one
  more. Prints {"opened": k, "extra_error": msg|null}. Exit 0 only when all
  N opened and the extra one was refused with CAPACITY_REACHED.
"""

import json
import sys

from openenv.core import GenericEnvClient

MAX_ACTIONS = 200
MAX_ACTION_BYTES = 64 << 10
# Per-message timeout: a step runs commands plus the graders in a sandbox.
MESSAGE_TIMEOUT_S = 120.0


def fail(msg):
    print(f"openenv_drive: error: {msg}", file=sys.stderr)
    return 1


def load_actions(path):
    with open(path, "rb") as f:
        raw = f.read(MAX_ACTIONS * MAX_ACTION_BYTES + 1)
    actions = json.loads(raw)
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise ValueError("ACTIONS.json must be a JSON list of strings")
    if not actions or len(actions) > MAX_ACTIONS:
        raise ValueError(f"need 1..{MAX_ACTIONS} actions, got {len(actions)}")
    if any(len(a.encode()) > MAX_ACTION_BYTES for a in actions):
        raise ValueError("an action is larger than 64 KiB")
    return actions


def client(url):
    return GenericEnvClient(base_url=url, message_timeout_s=MESSAGE_TIMEOUT_S).sync()


def episode(url, actions, task_id, seed):
    kwargs = {"task_id": task_id}
    if seed is not None:
        kwargs["seed"] = seed
    with client(url) as env:
        r = env.reset(**kwargs)
        obs = r.observation if isinstance(r.observation, dict) else {}
        if r.done:
            raise RuntimeError(f"episode done at reset: {obs}")
        print(json.dumps({"step": 0, "reward": r.reward, "done": r.done,
                          "leaks_current": obs.get("leaks_current")}), flush=True)
        for i, cmd in enumerate(actions, 1):
            r = env.step({"command": cmd})
            obs = r.observation if isinstance(r.observation, dict) else {}
            if not isinstance(r.reward, (int, float)):
                raise RuntimeError(f"step {i}: reward is not a number: {r.reward!r}")
            print(json.dumps({"step": i, "reward": r.reward, "done": r.done,
                              "leaks_current": obs.get("leaks_current")}), flush=True)
            if r.done:
                break
        print(json.dumps({"state": env.state()}, default=str), flush=True)
    return 0


def capacity(url, n):
    opened = []
    extra_error = None
    try:
        for _ in range(n):
            c = client(url)
            c.connect()
            opened.append(c)
            c.reset(task_id=1)
        extra = client(url)
        try:
            extra.connect()
            extra.reset(task_id=1)
        except Exception as e:  # the client raises RuntimeError("Server error: ... (code: X)")
            extra_error = str(e)
        finally:
            try:
                extra.close()
            except Exception:
                pass
    except Exception as e:
        print(json.dumps({"opened": len(opened), "extra_error": None, "error": str(e)}))
        return 1
    finally:
        for c in opened:
            try:
                c.close()
            except Exception:
                pass
    print(json.dumps({"opened": len(opened), "extra_error": extra_error}))
    ok = len(opened) == n and extra_error is not None and "CAPACITY_REACHED" in extra_error
    return 0 if ok else 1


def main(argv):
    try:
        if len(argv) >= 2 and argv[1] == "--capacity":
            if len(argv) != 4:
                return fail("usage: openenv_drive.py --capacity URL N")
            n = int(argv[3])
            if not 1 <= n <= 256:
                return fail("N must be 1..256")
            return capacity(argv[2], n)
        if len(argv) < 3:
            return fail("usage: openenv_drive.py URL ACTIONS.json [--task-id N] [--seed S]")
        url, path, rest = argv[1], argv[2], argv[3:]
        task_id, seed = 1, None
        while rest:
            if len(rest) < 2:
                return fail(f"missing value for {rest[0]}")
            flag, val, rest = rest[0], rest[1], rest[2:]
            if flag == "--task-id":
                task_id = int(val)
            elif flag == "--seed":
                seed = int(val)
            else:
                return fail(f"unknown option {flag}")
        return episode(url, load_actions(path), task_id, seed)
    except Exception as e:
        return fail(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
