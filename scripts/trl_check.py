#!/usr/bin/env python3
"""Checks ``secrets_audit_env.trl_env`` the way TRL's GRPOTrainer uses it,
against a live server, without training a model (no torch).

Run by tests/trl.rs with the python of ``.tools/openenv`` (the client,
editable; transformers; trl without its dependencies, for its source,
signatures and chat templates):

    trl_check.py URL ORACLE_JSON EXAMPLE_PY

URL is also in ``ENV_URL``, which the class reads when the factory is
called with no argument, as TRL calls it. ORACLE_JSON is task 1's oracle
actions. Every check fails loudly (exit 1); prints one JSON line of what
it checked.
"""

import ast
import importlib.metadata
import inspect
import json
import os
import py_compile
import shlex
import sys
import urllib.error
import urllib.request
from pathlib import Path

import trl
from transformers.utils import get_json_schema
from transformers.utils.chat_template_utils import render_jinja_template
from trl.trainer.grpo_config import GRPOConfig

from secrets_audit_env.trl_env import SecretsAuditToolEnv

TRL_DIR = Path(trl.__file__).parent
TRL_VERSION = importlib.metadata.version("trl")
TOOLS = {"bash", "inspect_file", "inspect_encoded", "scan_history", "run_scanner", "list_files", "submit"}


def fail(msg):
    print(f"trl_check: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def http_json(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.load(r)


def state_status(base, sid):
    """(HTTP status, State) of GET /state for ``sid``."""
    try:
        return 200, http_json(f"{base}/state?session_id={sid}")
    except urllib.error.HTTPError as e:
        return e.code, None


# The rule GRPOTrainer applies to find an environment's tools (trl 1.16.0,
# trl/trainer/grpo_trainer.py, in __init__ and again per batch in
# _generate_and_score_completions). It cannot be called without torch, so
# it is restated here, and the installed source is checked to still say it.
TRL_TOOL_RULE = [
    'inspect.getmembers(type(environment), predicate=inspect.isfunction)',
    'if member_name not in ("reset", "get_reward") and not member_name.startswith("_")',
]


def trl_tools(env):
    """The bound methods GRPOTrainer would expose as tools."""
    return [
        getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def trl_call(tool_dict, name, arguments):
    """A tool call as GRPOTrainer's _tool_call_loop makes it: the result's
    str, or {"error": str(e)} when the call raises."""
    try:
        if name not in tool_dict:
            raise ValueError(f"Tool {name} not found.")
        result = tool_dict[name](**arguments)
    except Exception as e:  # noqa: BLE001 - TRL catches everything too
        return False, str({"error": str(e)})
    return True, str(result)


def check_trl_source():
    src = (TRL_DIR / "trainer/grpo_trainer.py").read_text()
    for line in TRL_TOOL_RULE:
        check(line in src, f"trl {TRL_VERSION}'s grpo_trainer.py no longer has {line!r}: re-read it")
    # reset's string is appended to the prompt; get_reward owns the reward.
    check("observation = environment.reset(**reset_kwargs)" in src, "TRL's reset call changed")
    check("e.get_reward()" in src, "TRL no longer calls get_reward()")
    return src


def trainer_params(src):
    """GRPOTrainer.__init__'s parameters, read from TRL's source (importing
    the trainer needs torch)."""
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.ClassDef) and node.name == "GRPOTrainer":
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                    a = f.args
                    return {x.arg for x in a.args + a.kwonlyargs} - {"self"}
    fail("GRPOTrainer.__init__ not found in TRL's source")


def check_schemas(env, server_tools):
    """The tools' schemas, built by the function TRL's chat templates use,
    against the server's list_tools."""
    methods = trl_tools(env)
    names = {m.__name__ for m in methods}
    check(names == TOOLS, f"tools {sorted(names)} != {sorted(TOOLS)}")
    check(names == set(server_tools), f"tools {sorted(names)} != server's {sorted(server_tools)}")
    schemas = {}
    for m in methods:
        fn = get_json_schema(m)["function"]
        name = fn["name"]
        spec = server_tools[name]
        check(fn.get("description"), f"{name} has no description")
        check(fn["description"] == spec["description"], f"{name}: {fn['description']!r} != server's {spec['description']!r}")
        props = fn["parameters"]["properties"]
        theirs = spec["input_schema"]["properties"]
        check(set(props) == set(theirs), f"{name} parameters {sorted(props)} != server's {sorted(theirs)}")
        for p, s in props.items():
            check(s.get("type") == theirs[p]["type"], f"{name}.{p} type {s.get('type')} != {theirs[p]['type']}")
            check(s.get("description") == theirs[p]["description"], f"{name}.{p} description differs")
        required = set(fn["parameters"].get("required", []))
        check(required == set(spec["input_schema"]["required"]), f"{name} required {required} differs")
        schemas[name] = fn
    # No generic step(action): no tool of that name, none taking an action.
    check("step" not in names, "a generic step tool is exposed")
    check(all("action" not in s["parameters"]["properties"] for s in schemas.values()), "a tool takes a generic action")
    return methods, schemas


def render(conversation, methods):
    """The prompt as GRPOTrainer renders it for Qwen2.5 (its tokenizer's
    apply_chat_template calls this with the same tools), with the chat
    template TRL ships for that model family."""
    template = (TRL_DIR / "chat_templates/qwen2_5.jinja").read_text()
    out = render_jinja_template(
        conversations=[conversation], tools=methods, chat_template=template, add_generation_prompt=True
    )
    rendered = out[0] if isinstance(out, tuple) else out
    return rendered[0] if isinstance(rendered, list) else rendered


def take_steps(base, env, tool_dict, calls, conversation):
    """Makes ``calls`` until the episode ends; after each, the reward read
    from the class must be the server's score. Returns the rewards and the
    calls left."""
    rewards = []
    sid = env.session_id
    for i, (name, args) in enumerate(calls):
        if env.observation.done:
            return rewards, calls[i:]
        ok, out = trl_call(tool_dict, name, args)
        check(ok, f"{name}({args}) failed: {out}")
        n = env.observation.steps_taken
        check(f"steps {n}/" in out, f"{name}: step count not in {out[-400:]!r}")
        code, st = state_status(base, sid)
        check(code == 200, f"GET /state: {code}")
        check(st["step_count"] == n == i + 1, f"server counts {st['step_count']} steps, the class {n}, calls {i + 1}")
        r = env.get_reward()
        check(r == st["score"] == st["observation"]["reward"], f"step {n}: reward {r} != server's {st['score']}")
        rewards.append(r)
        conversation.append({"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": name, "arguments": args}}]})
        conversation.append({"role": "tool", "name": name, "content": out})
    return rewards, []


def play(base, oracle):
    """An episode through the class as TRL drives it: the factory called
    with no argument, reset(**row), tools by name with keyword arguments,
    get_reward at the end."""
    env = SecretsAuditToolEnv()  # ENV_URL
    with env:
        row = {"prompt": [{"role": "user", "content": "Fix the secret leaks."}], "task_id": 1}
        start = env.reset(**row)
        check(isinstance(start, str) and env.observation.title in start, f"reset text: {start[:300]!r}")
        sid = env.session_id
        lt = http_json(f"{base}/step", {"session_id": sid, "action": {"type": "list_tools"}})
        server_tools = {t["name"]: t for t in lt["observation"]["tools"]}
        methods, schemas = check_schemas(env, server_tools)
        tool_dict = {m.__name__: m for m in methods}
        conversation = [{**row["prompt"][0], "content": row["prompt"][0]["content"] + start}]
        prompt = render(conversation, methods)
        for name, s in schemas.items():
            check(json.dumps(s["description"])[1:-1] in prompt, f"{name}'s description not in the prompt")
        check(start in prompt, "reset's text not in the prompt")

        # A call the server refuses spends no step and comes back an error.
        ok, out = trl_call(tool_dict, "inspect_file", {"path": ""})
        check(not ok and "invalid_args" in out and env.observation.steps_taken == 0, out)
        ok, out = trl_call(tool_dict, "step", {"action": "ls"})
        check(not ok and "not found" in out, out)

        calls = [("list_files", {})]
        for a in oracle:
            head, _, rest = a.partition(" ")
            if head in ("inspect_file", "inspect_encoded"):
                calls.append((head, {"path": rest.strip()}))
            elif head in TOOLS and not rest.strip():
                calls.append((head, {}))
            else:
                calls.append(("bash", {"command": a}))
        # The oracle's fix solves the task, which ends the episode: its
        # later actions (tests, submit) are refused from then on.
        rewards, rest = take_steps(base, env, tool_dict, calls, conversation)
        obs = env.observation
        check(obs.done and obs.success, f"oracle did not solve task 1: {rewards}")
        check(env.get_reward() == 1.0, f"solved but reward {env.get_reward()}")
        check(rest, "the oracle's solving step was its last: nothing left to be refused")
        ok, out = trl_call(tool_dict, *rest[0])
        check(not ok and "episode is over" in out, out)
        transcript = render(conversation, methods)
        check("<tool_response>" in transcript and "episode over: solved" in transcript, "tool results not rendered")

        # The next reset closes the finished session and opens another, in
        # which the other tools run and submit ends the episode unsolved.
        again = env.reset(task_id=1, seed=3, prompt=row["prompt"])
        check(env.observation.seed == 3 and env.session_id != sid and again, "reset with a seed")
        code, _ = state_status(base, sid)
        check(code == 404, f"previous session still open after reset ({code})")
        # Deleting one visible secret's line fixes one leak of two: a
        # score strictly between 0 and 1, read from the class as the
        # server has it.
        leak = env.observation.visible_secrets[0]
        check(leak.line > 0 and not leak.history_only, f"task 1 seed 3 starts with {leak}")
        cut = f"sed -i '{leak.line}d' {shlex.quote(leak.file)}"
        more = [
            ("inspect_encoded", {"path": leak.file}),
            ("bash", {"command": cut}),
            ("run_scanner", {}),
            ("scan_history", {}),
            ("submit", {}),
        ]
        submitted, rest = take_steps(base, env, tool_dict, more, [])
        check(not rest and env.observation.done and not env.observation.success, "submit did not end the episode")
        check(0.0 < submitted[-1] < 1.0, f"one leak of two fixed, yet reward {submitted[-1]}")
        used = {c[0] for c in calls[: len(rewards)] + more}
        check(used == TOOLS, f"tools never called: {sorted(TOOLS - used)}")

        # A session the server closed meanwhile (as it does 30 s after a
        # finished episode's last step) does not stop the next reset.
        http_json(f"{base}/close", {"session_id": env.session_id})
        env.reset(task_id=2, prompt=row["prompt"])
        check(env.observation.task_id == 2, "reset after the server closed the session")
        second = env.session_id
    code, _ = state_status(base, second)
    check(code == 404 and env.session_id is None, f"session still open after the with block ({code})")
    return {"tools": sorted(schemas), "rewards": rewards, "submitted": submitted, "prompt_chars": len(prompt)}


def check_example(path, trl_src):
    """The example compiles, and calls GRPOConfig and GRPOTrainer with
    arguments TRL has, environment_factory among them."""
    py_compile.compile(str(path), doraise=True)
    text = path.read_text()
    check(f"trl=={TRL_VERSION}" in text, f"the example does not name the tested trl=={TRL_VERSION}")
    calls = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.setdefault(node.func.id, []).append({k.arg for k in node.keywords if k.arg})
    check(calls.get("GRPOConfig") and calls.get("GRPOTrainer"), "the example builds no GRPOConfig/GRPOTrainer")
    config_params = set(inspect.signature(GRPOConfig).parameters)
    for kw in calls["GRPOConfig"]:
        check(kw <= config_params, f"GRPOConfig has no {sorted(kw - config_params)}")
    params = trainer_params(trl_src)
    try:  # With torch (a GPU machine), the real signature too.
        from trl import GRPOTrainer

        params &= set(inspect.signature(GRPOTrainer).parameters)
        real = True
    except (ImportError, RuntimeError):
        real = False
    for kw in calls["GRPOTrainer"]:
        check(kw <= params, f"GRPOTrainer has no {sorted(kw - params)}")
        check("environment_factory" in kw, "the example passes no environment_factory")
    return {"config_args": sorted(set().union(*calls["GRPOConfig"])), "trainer_signature_imported": real}


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    base, oracle, example = sys.argv[1].rstrip("/"), json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3])
    check(os.environ.get("ENV_URL", "").rstrip("/") == base, "ENV_URL must be the server's URL")
    src = check_trl_source()
    episode = play(base, oracle)
    ex = check_example(example, src)
    print(json.dumps({"trl": TRL_VERSION, **episode, "example": ex}))


if __name__ == "__main__":
    main()
