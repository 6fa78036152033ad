#!/usr/bin/env python3
"""Checks the installed `secrets_audit_env` package against a live server.

Run by tests/pyclient.rs with the python of a throwaway venv into which
the package was pip-installed; every check fails loudly (exit 1), none is
skipped.

    pyclient_check.py schema URL    typed models vs GET /schema and /openapi.json
    pyclient_check.py episode URL   typed client: WS (sync, async), HTTP (sync, async)
    pyclient_check.py mcp URL       OpenEnv's MCPToolClient, unmodified

Each prints one JSON line of what it checked.
"""

import asyncio
import json
import sys
import urllib.request

from openenv.core.env_server.mcp_types import (
    CallToolAction,
    ListToolsAction,
    ListToolsObservation,
    Tool,
)

import secrets_audit_env as sae
from secrets_audit_env import models

# Python model -> the server's schema name, where they differ.
SERVER_NAME = {
    "SecretsAuditAction": "Action",
    "SecretsAuditObservation": "Observation",
    "SecretsAuditState": "State",
    "SecretsAuditToolCallObservation": "CallToolObservation",
    "Tool": "ToolSpec",
}
# Fields OpenEnv's base classes add to every action and observation (the
# envelope's free-form metadata): the server's type must admit the
# client's, not equal it.
BASE_FIELDS = {"metadata"}


def get_json(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.load(r)


def resolve(schema, root):
    while isinstance(schema, dict) and "$ref" in schema:
        path = schema["$ref"].lstrip("#/").split("/")
        schema = root
        for p in path:
            schema = schema[p]
    return schema


def is_model(schema):
    return isinstance(schema, dict) and "properties" in schema


def norm(schema, root):
    """A schema's type as a comparable set of atoms: JSON types, one
    ("enum", values), ("model", name), ("array", items)."""
    if schema is True or schema == {}:
        return frozenset({"any"})
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        target = resolve(schema, root)
        if is_model(target):
            return frozenset({("model", SERVER_NAME.get(name, name))})
        return norm(target, root)
    atoms = set()
    enum = set()
    for key in ("anyOf", "oneOf"):
        for member in schema.get(key, []):
            for a in norm(member, root):
                if isinstance(a, tuple) and a[0] == "enum":
                    enum |= set(a[1])
                else:
                    atoms.add(a)
    if "allOf" in schema and len(schema["allOf"]) == 1:
        atoms |= norm(schema["allOf"][0], root)
    if "const" in schema:
        enum.add(schema["const"])
    elif "enum" in schema:
        enum |= set(schema["enum"])
    elif "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        for t in types:
            if t == "array":
                atoms.add(("array", norm(schema.get("items", {}), root)))
            else:
                atoms.add(t)
    if enum:
        atoms.add(("enum", frozenset(enum)))
    return frozenset(atoms)


def compare(py_name, py_schema, py_root, srv_schema, srv_root, problems, sent=()):
    """Appends to `problems` every difference of fields, types and
    required flags; returns the number of fields compared. `sent` names
    fields the client always sends though its model gives them a default
    (the `type` tag of OpenEnv's tool actions): required by the server."""
    py_props = py_schema.get("properties", {})
    srv_props = srv_schema.get("properties", {})
    for k in sorted(set(py_props) ^ set(srv_props)):
        if k in BASE_FIELDS:
            continue
        side = "server only" if k in srv_props else "client only"
        problems.append(f"{py_name}.{k}: {side}")
    py_req = (set(py_schema.get("required", [])) | set(sent)) - BASE_FIELDS
    srv_req = set(srv_schema.get("required", [])) - BASE_FIELDS
    if py_req != srv_req:
        problems.append(
            f"{py_name}: required differs: client {sorted(py_req)} server {sorted(srv_req)}"
        )
    n = 0
    for k in sorted(set(py_props) & set(srv_props)):
        a, b = norm(py_props[k], py_root), norm(srv_props[k], srv_root)
        ok = a <= b if k in BASE_FIELDS else a == b
        if not ok:
            problems.append(f"{py_name}.{k}: client {sorted(map(str, a))} server {sorted(map(str, b))}")
        n += 1
    return n


def check_schema(url):
    schema = get_json(f"{url}/schema")
    doc = get_json(f"{url}/openapi.json")
    components = doc["components"]["schemas"]
    problems, fields, pairs = [], 0, []

    def pair(model, srv_schema, srv_root, sent=()):
        nonlocal fields
        py = model.model_json_schema(by_alias=True)
        fields += compare(model.__name__, py, py, srv_schema, srv_root, problems, sent)
        pairs.append(model.__name__)
        # Every nested model the client defines has its server twin.
        for name, sub in py.get("$defs", {}).items():
            if not is_model(sub) or name in pairs:
                continue
            srv_name = SERVER_NAME.get(name, name)
            srv_sub = srv_root.get("$defs", components).get(srv_name) or components.get(srv_name)
            if srv_sub is None:
                problems.append(f"{name}: no server schema {srv_name}")
                continue
            fields += compare(name, sub, py, srv_sub, srv_root, problems)
            pairs.append(name)

    action = schema["action"]
    alternatives = [resolve(a, action) for a in action["anyOf"]]

    def alternative(tag):
        for alt in alternatives:
            t = alt.get("properties", {}).get("type")
            if tag is None and t is None:
                return alt
            if t is not None and ("enum", frozenset({tag})) in norm(t, action):
                return alt
        problems.append(f"/schema action has no alternative {tag!r}")
        return {}

    pair(models.SecretsAuditAction, alternative(None), action)
    # The client sends `type` always (MCPToolClient._step_payload, ours).
    pair(ListToolsAction, alternative("list_tools"), action, sent=("type",))
    pair(CallToolAction, alternative("call_tool"), action, sent=("type",))
    pair(models.SecretsAuditObservation, schema["observation"], schema["observation"])
    pair(models.SecretsAuditState, schema["state"], schema["state"])
    pair(models.SecretsAuditToolCallObservation, components["CallToolObservation"], doc)
    pair(Tool, components["ToolSpec"], doc)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(json.dumps({"models": pairs, "fields": fields}))
    return 0


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def play(env, label, log):
    """One short episode through any of the clients (sync interface)."""
    r = env.reset(task_id=1)
    obs = r.observation
    expect(isinstance(obs, sae.SecretsAuditObservation), f"{label}: reset typed: {type(obs)}")
    expect(obs.task_id == 1 and obs.leaks_current > 0 and not r.done, f"{label}: reset {obs}")
    r = env.step(ListToolsAction())
    expect(isinstance(r.observation, ListToolsObservation), f"{label}: list_tools {r}")
    names = [t.name for t in r.observation.tools]
    expect("inspect_file" in names and "bash" in names, f"{label}: tools {names}")
    expect(r.reward is None, f"{label}: list_tools spends no step: {r.reward}")
    path = obs.visible_secrets[0].file if obs.visible_secrets else "."
    r = env.step(CallToolAction(tool_name="inspect_file", arguments={"path": path}))
    o = r.observation
    expect(isinstance(o, sae.SecretsAuditToolCallObservation), f"{label}: call_tool {type(o)}")
    expect(o.error is None and o.result is not None and o.result.kind == "inspect_file",
           f"{label}: call_tool result {o.result} {o.error}")
    expect(o.steps_taken == 1, f"{label}: call_tool is a step: {o.steps_taken}")
    r = env.step(sae.SecretsAuditAction(command="run_scanner"))
    expect(r.observation.last_action.kind == "run_scanner", f"{label}: {r.observation.last_action}")
    expect(isinstance(r.reward, float) and 0.0 <= r.reward <= 1.0, f"{label}: reward {r.reward}")
    st = env.state()
    expect(isinstance(st, sae.SecretsAuditState) and st.step_count == 2, f"{label}: state {st}")
    r = env.step(CallToolAction(tool_name="submit"))
    expect(r.done and r.observation.done, f"{label}: submit ends the episode")
    log.append({"client": label, "steps": 3, "reward": r.reward, "tools": len(names)})


class AsyncAsSync:
    """Drives an async client through `play`: each call is awaited in a
    coroutine on `loop` (OpenEnv's EnvClient picks async mode when called
    inside a running loop)."""

    def __init__(self, env, loop):
        self.env, self.loop = env, loop

    def __getattr__(self, name):
        async def call(*a, **k):
            return await getattr(self.env, name)(*a, **k)

        return lambda *a, **k: self.loop.run_until_complete(call(*a, **k))


def check_episode(url):
    log = []
    with sae.SecretsAuditEnv(base_url=url).sync() as env:
        play(env, "ws-sync", log)
    with sae.SecretsAuditHTTPEnv(url) as env:
        play(env, "http-sync", log)
        expect(env.session_id is not None, "http-sync keeps its session")

    loop = asyncio.new_event_loop()
    try:
        ws = AsyncAsSync(sae.SecretsAuditEnv(base_url=url), loop)
        ws.connect()
        play(ws, "ws-async", log)
        ws.close()
        http = AsyncAsSync(sae.AsyncSecretsAuditHTTPEnv(url), loop)
        play(http, "http-async", log)
        http.close()
    finally:
        loop.close()
    print(json.dumps({"episodes": log, "version": sae.__version__}))
    return 0


def check_mcp(url):
    from openenv.core.mcp_client import MCPToolClient

    with MCPToolClient(base_url=url).sync() as env:
        tools = env.list_tools()
        names = [t.name for t in tools]
        expect({"inspect_file", "bash", "submit"} <= set(names), f"tools {names}")
        r = env.call_tool("list_files")
        obs = r["structuredContent"]["observation"]
        expect(obs["last_action"]["kind"] == "list_files", f"list_files: {r}")
        r = env.call_tool("bash", command="git log --oneline | head -3")
        obs = r["structuredContent"]["observation"]
        expect(obs["last_action"]["exit_code"] == 0 and obs["steps_taken"] == 2, f"bash: {r}")
        r = env.call_tool("submit")
        expect(r["structuredContent"]["done"] is True, f"submit: {r}")

    # The WebSocket attaches to the session the client created over HTTP
    # (/ws?session_id=): a reset over the socket starts the new episode
    # under that id, so the HTTP tools/call requests naming it reach the
    # same episode, and the socket's state counts their steps.
    with MCPToolClient(base_url=url).sync() as env:
        sid = env._async._production_session_id
        expect(sid, "the client created a session")
        r = env.reset(task_id=2)
        expect(r.observation.task_id == 2, f"ws reset: {r.observation}")
        expect(r.observation.session_id == sid, f"reset kept the session: {r.observation}")
        r = env.call_tool("list_files")
        obs = r["structuredContent"]["observation"]
        expect(obs["task_id"] == 2 and obs["steps_taken"] == 1, f"http tool after ws reset: {obs}")
        r = env.call_tool("bash", command="true")
        s = env.state()
        expect(s.step_count == 2, f"ws state sees the http steps: {s}")
    # Closed by the client (detach, then openenv/session/close); its
    # trajectory stays readable and holds both episodes' resets.
    with urllib.request.urlopen(f"{url}/trajectory?session_id={sid}", timeout=60) as t:
        events = [json.loads(l) for l in t.read().decode().splitlines()]
    resets = [e["task_id"] for e in events if e["event"] == "reset"]
    steps = [e["action"] for e in events if e["event"] == "step"]
    expect(resets == [1, 2], f"trajectory resets: {resets}")
    expect(steps == ["list_files", "true"], f"trajectory steps: {steps}")
    print(json.dumps({"mcp_tools": names, "calls": 3, "ws_attached_calls": 2}))
    return 0


def main(argv):
    if len(argv) != 3 or argv[1] not in {"schema", "episode", "mcp"}:
        print(__doc__, file=sys.stderr)
        return 2
    url = argv[2].rstrip("/")
    return {"schema": check_schema, "episode": check_episode, "mcp": check_mcp}[argv[1]](url)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
