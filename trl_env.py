"""SecretsAuditEnv shaped for TRL's ``GRPOTrainer(environment_factory=...)``.

    >>> from trl import GRPOTrainer
    >>> from secrets_audit_env.trl_env import SecretsAuditToolEnv
    >>> trainer = GRPOTrainer(model=..., train_dataset=..., args=...,
    ...                       environment_factory=SecretsAuditToolEnv)

How TRL uses the class (trl 1.16.0, ``trl/trainer/grpo_trainer.py``);
every shape below follows from these lines:

- ``environment_factory`` is called with no argument (l. 686, 2358): once
  to probe the class, then whenever a batch needs more rollouts than the
  pool has instances. Instances are pooled and reused across batches, one
  per rollout, each ``reset`` before its rollout (l. 2352-2360, 2385-2389).
  So the constructor opens nothing; ``reset`` ends the instance's previous
  session and starts a new one.
- Every public function of the class except ``reset`` and ``get_reward``
  is a tool: ``inspect.getmembers(type(env), predicate=inspect.isfunction)``,
  names not starting with ``_`` (l. 691-697, 2371-2374). Its schema is
  transformers' ``get_json_schema`` of the bound method (type hints and a
  Google-style docstring with an ``Args:`` entry per parameter), which the
  tokenizer's ``apply_chat_template(tools=...)`` renders into the prompt
  (l. 1710-1712). Hence one method per server tool, no generic
  ``step(action)``, and everything else private (underscore) or a property
  (not a function, so never a tool).
- ``reset(**row)`` receives the dataset row: ``prompt`` and every other
  column (l. 2389). A returned string is appended to the last user message
  (l. 2390-2397): the task and what the agent sees at the start.
- A tool call runs ``method(**arguments)``; ``str(result)`` goes back to
  the model, and an exception becomes ``{"error": str(e)}`` (l. 1980-1989,
  2018). Tools are synchronous: TRL awaits a rollout's async tools before
  it moves to the next rollout (l. 1996-2005), so async would buy no
  overlap between rollouts, only concurrent steps on one session.
- ``get_reward()`` (no argument, a float) makes the environment own the
  reward: TRL calls it once per finished rollout and adds it as a reward
  source of weight 1 named after the class (l. 706-730), so
  ``reward_funcs`` may be omitted. Reward functions also receive the
  instances as ``environments=`` (l. 1596-1598).

The tools are the server's (``server/src/http/tools.rs``: names,
descriptions, arguments), called as OpenEnv ``call_tool`` actions over the
stateful HTTP API, so paths need no shell quoting and a malformed call
spends no step. ``tests/trl.rs`` checks that these methods' schemas match
the server's ``list_tools``. Output is bounded by the server (each stream
capped, head and tail kept, dropped bytes counted; ``inspect_file`` at most
256 KiB; commands at most 16 KiB): no second limit here.
"""

import os
import weakref
from typing import Any, Dict, Optional, Union

import httpx

from .client import DEFAULT_TIMEOUT_S, _checked, parse_result
from .models import ActionOutput, SecretsAuditObservation, SecretsAuditToolCallObservation

# Where the server is when no base_url is given: the variable and default
# the repository's own agents use (README, "Agents and evaluation").
URL_VAR = "ENV_URL"
DEFAULT_URL = "http://localhost:7860"


class _Session:
    """The HTTP client and the open session id, apart from the environment
    object, so that a finalizer can close them without keeping it alive."""

    def __init__(self, base_url: str, timeout_s: float):
        self.http = httpx.Client(base_url=base_url, timeout=timeout_s)
        self.id: Optional[str] = None

    def end(self) -> None:
        """Closes the open session (its slot and workspace on the server).
        One the server has closed already (a finished episode 30 s after
        its last step, an idle one after SESSION_IDLE_TIMEOUT_S) answers
        404, which is the state asked for: a pooled instance may sit that
        long between rollouts."""
        if self.id is not None:
            sid, self.id = self.id, None
            r = self.http.post("/close", json={"session_id": sid})
            if r.status_code != 404:
                _checked(r)

    def shutdown(self) -> None:
        """Closes the session and the client; best effort, for finalizers
        (the server also closes an idle session on its own)."""
        try:
            self.end()
        except (httpx.HTTPError, RuntimeError):
            pass
        finally:
            self.http.close()


class SecretsAuditToolEnv:
    """One SecretsAuditEnv episode per rollout, with the server's tools as
    methods: ``bash``, ``inspect_file``, ``inspect_encoded``,
    ``scan_history``, ``run_scanner``, ``list_files``, ``submit``.

    ``reset`` starts an episode on the task the dataset row names (columns
    ``task_id`` and ``seed``) or on the constructor's; ``get_reward`` is the
    episode's score. The session is closed by the next ``reset``, on
    leaving a ``with`` block, or when the object is collected; a finished
    episode's session is also closed by the server 30 s after its last
    step (spec.md section 1).
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        task_id: Union[int, str] = 1,
        seed: Optional[int] = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ):
        url = base_url or os.environ.get(URL_VAR) or DEFAULT_URL
        self._task_id = task_id
        self._seed = seed
        self._session = _Session(url.rstrip("/"), timeout_s)
        self._obs: Optional[SecretsAuditObservation] = None
        self._finalizer = weakref.finalize(self, self._session.shutdown)

    # -- Not tools: TRL's reset and get_reward, and properties. --

    def reset(
        self,
        task_id: Optional[Union[int, str]] = None,
        seed: Optional[int] = None,
        **row: Any,
    ) -> str:
        """Ends this instance's previous session and starts an episode.

        ``task_id`` and ``seed`` come from the dataset row's columns of
        those names when it has them (a task number or slug, and a seeded
        variant), else from the constructor. TRL passes the whole row; its
        other columns (``prompt``, ...) are TRL's and ignored here.

        Returns the task and the first observation, which TRL appends to
        the prompt's last user message.
        """
        del row
        self._session.end()
        self._obs = None
        body: Dict[str, Any] = {
            "task_id": self._task_id if task_id is None else task_id,
            # Each step's reward is then the current score, so the last
            # observation's reward is the episode's return (get_reward).
            "reward_mode": "score",
        }
        seed = self._seed if seed is None else seed
        if seed is not None:
            body["seed"] = seed
        reply = _checked(self._session.http.post("/reset", json=body))
        self._session.id = reply["session_id"]
        obs = _expect(parse_result(reply).observation, SecretsAuditObservation)
        self._obs = obs
        return _render_start(obs)

    def get_reward(self) -> float:
        """The episode's score at its last observation, in [0, 1].

        GRPO scores a whole rollout with one number. In ``score`` mode
        (which ``reset`` asks for) every step's reward is the current
        score, so the last one is the episode's return: what the server
        reports for it, and what ``delta`` rewards would sum to (spec.md
        section 5). An episode left unsubmitted is scored where it stopped.
        """
        if self._obs is None:
            raise RuntimeError("no episode: call reset() first")
        return float(self._obs.reward)

    @property
    def observation(self) -> Optional[SecretsAuditObservation]:
        """The last observation the server sent (``None`` before reset)."""
        return self._obs

    @property
    def session_id(self) -> Optional[str]:
        """The open session's id, ``None`` once it is closed."""
        return self._session.id

    def __enter__(self) -> "SecretsAuditToolEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._finalizer()

    # -- Tools: the server's, one method each (server/src/http/tools.rs).
    # Each docstring's description and Args are the server's words;
    # tests/trl.rs compares them with its list_tools. --

    def bash(self, command: str) -> str:
        """Run a command with bash -lc in the workspace (one step). A command that starts with a structured action's name runs that action.

        Args:
            command: The command
        """
        return self._call("bash", {"command": command})

    def inspect_file(self, path: str) -> str:
        """Read a file with line numbers; reveals its shallow secrets.

        Args:
            path: Path relative to the workspace root
        """
        return self._call("inspect_file", {"path": path})

    def inspect_encoded(self, path: str) -> str:
        """Decode a file's base64/hex runs; reveals its deep secrets.

        Args:
            path: Path relative to the workspace root
        """
        return self._call("inspect_encoded", {"path": path})

    def scan_history(self) -> str:
        """Scan git history for findings; reveals hidden secrets."""
        return self._call("scan_history", {})

    def run_scanner(self) -> str:
        """Run the grader's secret scanner over the workspace (values redacted)."""
        return self._call("run_scanner", {})

    def list_files(self, path: Optional[str] = None) -> str:
        """List files (optionally under a path).

        Args:
            path: Path relative to the workspace root
        """
        return self._call("list_files", {} if path is None else {"path": path})

    def submit(self) -> str:
        """End the episode and take the current score."""
        return self._call("submit", {})

    # -- Private. --

    def _call(self, tool: str, arguments: Dict[str, Any]) -> str:
        """One ``call_tool`` step; the reply rendered for the model.

        Raises (TRL hands the model ``{"error": message}``) when there is no
        open episode, when the server refuses the call (its message), or
        when the arguments do not fit the tool (no step spent).
        """
        if self._session.id is None or self._obs is None:
            raise RuntimeError("no episode: call reset() first")
        if self._obs.done:
            raise RuntimeError(
                f"the episode is over ({_ending(self._obs)}); no more tool calls"
            )
        action = {"type": "call_tool", "tool_name": tool, "arguments": arguments}
        reply = _checked(
            self._session.http.post(
                "/step", json={"session_id": self._session.id, "action": action}
            )
        )
        obs = _expect(parse_result(reply).observation, SecretsAuditToolCallObservation)
        self._obs = obs
        if obs.error is not None:
            raise ValueError(f"{obs.error.error_type}: {obs.error.message}")
        return _render_step(obs)


def _expect(obs: Any, kind: type) -> Any:
    """``obs`` if the server replied with the observation ``kind``."""
    if not isinstance(obs, kind):
        raise RuntimeError(f"expected a {kind.__name__}, got {type(obs).__name__}")
    return obs


def _ending(obs: SecretsAuditObservation) -> str:
    if obs.success:
        return "solved"
    if obs.truncated:
        return "step budget used up"
    return "submitted"


def _render_output(out: Optional[ActionOutput]) -> str:
    """An action's output as the server returned it (already bounded)."""
    if out is None:
        return "(no output)"
    if out.timed_out:
        status = "timed out"
    elif out.exit_code is None:
        status = "no exit code"
    else:
        status = f"exit code {out.exit_code}"
    if out.limit_exceeded:
        status += f", limit exceeded: {out.limit_exceeded}"
    parts = [f"{status} ({out.duration_ms} ms)"]
    for name, text, cut in (
        ("stdout", out.stdout, out.stdout_truncated_bytes),
        ("stderr", out.stderr, out.stderr_truncated_bytes),
    ):
        if text or cut:
            parts.append(f"{name}:\n{text}")
            if cut:
                parts.append(f"[{cut} bytes of {name} cut by the server]")
    return "\n".join(parts)


def _render_status(obs: SecretsAuditObservation) -> str:
    """Score, leaks, budget, tests and secrets: what changes per step."""
    h = obs.health
    lines = [
        f"reward {obs.reward:.3f} | leaks {obs.leaks_current} of {obs.leaks_initial} left"
        f" | steps {obs.steps_taken}/{obs.step_budget}"
        f" | tests {h.passed}/{h.total} passed"
        + (f", {h.errors} errors" if h.errors else "")
    ]
    if obs.visible_secrets:
        lines.append("visible secrets:")
        lines += [
            f"- {s.id} {s.file}:{s.line} {s.type} ({s.tier}"
            + (", history only" if s.history_only else "")
            + f") {s.status}: {s.masked_value}"
            for s in obs.visible_secrets
        ]
    if obs.conflict_map:
        lines.append(
            "conflicts: " + "; ".join(f"{e.from_} {e.kind} {e.to}" for e in obs.conflict_map)
        )
    if obs.hidden_count:
        lines.append(f"{obs.hidden_count} planted secret(s) not visible yet")
    if obs.top_blocker:
        lines.append(f"top blocker: {obs.top_blocker}")
    if obs.grading_errors:
        lines.append("grading errors: " + "; ".join(obs.grading_errors))
    if obs.done:
        lines.append(f"episode over: {_ending(obs)}")
    return "\n".join(lines)


def _render_start(obs: SecretsAuditObservation) -> str:
    """The task and the first observation, for the prompt."""
    lines = [
        "",
        f"Task {obs.task_id} ({obs.difficulty}, {obs.scan_mode} scan): {obs.title}",
        obs.description,
        f"Step budget: {obs.step_budget}. Every tool call is a step; submit ends the episode.",
        _render_status(obs),
    ]
    if obs.ranked_actions:
        lines.append(
            "suggested next actions (a structured action maps to the tool of its name, "
            "anything else to bash):"
        )
        lines += [f"- {a.action}  ({a.reason})" for a in obs.ranked_actions]
    return "\n".join(lines)


def _render_step(obs: SecretsAuditToolCallObservation) -> str:
    """A tool call's result: its output, then the status after it."""
    return _render_output(obs.result) + "\n---\n" + _render_status(obs)
