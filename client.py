"""Clients of SecretsAuditEnv.

``SecretsAuditEnv`` is an OpenEnv ``EnvClient`` over ``WS /ws`` (one
session per connection): async by default, ``.sync()`` for a blocking
wrapper. ``SecretsAuditHTTPEnv`` and ``AsyncSecretsAuditHTTPEnv`` play the
same episode over the stateful HTTP API (``POST /reset``, ``/step``,
``/close``, ``GET /state``), which OpenEnv's client classes do not speak.
All of them take typed actions and return typed observations; ``step``
also takes OpenEnv's ``ListToolsAction`` and ``CallToolAction``.
"""

import asyncio
from typing import Any, Dict, List, Optional, Union

import httpx
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    ListToolsAction,
    ListToolsObservation,
    Tool,
)

from .models import (
    SecretsAuditAction,
    SecretsAuditObservation,
    SecretsAuditState,
    SecretsAuditToolCallObservation,
)

AnyAction = Union[SecretsAuditAction, ListToolsAction, CallToolAction, str]
AnyObservation = Union[
    SecretsAuditObservation, SecretsAuditToolCallObservation, ListToolsObservation
]

# A step runs a command and then the graders (tests included) in a sandbox.
DEFAULT_TIMEOUT_S = 300.0


def step_payload(action: AnyAction) -> Dict[str, Any]:
    """The JSON a step sends for ``action`` (a bare string is a command)."""
    if isinstance(action, ListToolsAction):
        return {"type": "list_tools"}
    if isinstance(action, CallToolAction):
        return {
            "type": "call_tool",
            "tool_name": action.tool_name,
            "arguments": action.arguments,
        }
    if isinstance(action, str):
        return {"command": action}
    if isinstance(action, SecretsAuditAction):
        return {"command": action.command}
    raise TypeError(f"not an action: {type(action).__name__}")


def parse_result(payload: Dict[str, Any]) -> StepResult:
    """A step's (or reset's) reply as a typed ``StepResult``."""
    obs = payload.get("observation") or {}
    done = bool(payload.get("done", False))
    reward = payload.get("reward")
    observation: AnyObservation
    if "tools" in obs:
        observation = ListToolsObservation(
            tools=[
                Tool(
                    name=t["name"],
                    description=t["description"],
                    input_schema=t.get("input_schema", t.get("inputSchema", {})),
                )
                for t in obs["tools"]
            ],
            done=done,
            reward=reward,
        )
    elif "tool_name" in obs:
        observation = SecretsAuditToolCallObservation.model_validate(obs)
    else:
        observation = SecretsAuditObservation.model_validate(obs)
    return StepResult(observation=observation, reward=reward, done=done)


class SecretsAuditEnv(
    EnvClient[AnyAction, AnyObservation, SecretsAuditState]
):
    """SecretsAuditEnv over OpenEnv's WebSocket protocol.

    >>> with SecretsAuditEnv(base_url="http://localhost:7860").sync() as env:
    ...     r = env.reset(task_id=1)
    ...     r = env.step(SecretsAuditAction(command="run_scanner"))
    ...     print(r.reward, r.observation.leaks_current)
    """

    def __init__(self, base_url: str, **kwargs: Any):
        kwargs.setdefault("message_timeout_s", DEFAULT_TIMEOUT_S)
        super().__init__(base_url=base_url, **kwargs)

    def _step_payload(self, action: AnyAction) -> Dict[str, Any]:
        return step_payload(action)

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult:
        return parse_result(payload)

    def _parse_state(self, payload: Dict[str, Any]) -> SecretsAuditState:
        return SecretsAuditState.model_validate(payload)


def _checked(r: httpx.Response) -> Dict[str, Any]:
    """The JSON body, or a ``RuntimeError`` carrying the server's error."""
    try:
        body = r.json()
    except ValueError:
        body = None
    if r.status_code >= 400:
        err = body.get("error", {}) if isinstance(body, dict) else {}
        raise RuntimeError(
            f"HTTP {r.status_code}: {err.get('message', r.text[:500])} "
            f"(code: {err.get('code', 'unknown')})"
        )
    if not isinstance(body, dict):
        raise RuntimeError(f"HTTP {r.status_code}: not a JSON object")
    return body


class AsyncSecretsAuditHTTPEnv:
    """SecretsAuditEnv over the stateful HTTP API, async.

    ``reset`` starts a session (closing this client's previous one);
    ``close`` ends it. Usable as an async context manager.
    """

    def __init__(self, base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S):
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), timeout=timeout_s
        )
        self.session_id: Optional[str] = None

    async def reset(self, **kwargs: Any) -> StepResult:
        await self._end()
        body = _checked(await self._http.post("/reset", json=kwargs))
        self.session_id = body["session_id"]
        return parse_result(body)

    async def step(self, action: AnyAction) -> StepResult:
        body = {"action": step_payload(action)}
        if self.session_id is not None:
            body["session_id"] = self.session_id
        return parse_result(_checked(await self._http.post("/step", json=body)))

    async def list_tools(self) -> List[Tool]:
        return (await self.step(ListToolsAction())).observation.tools

    async def state(self) -> SecretsAuditState:
        if self.session_id is None:
            raise RuntimeError("no session: call reset() first")
        r = await self._http.get("/state", params={"session_id": self.session_id})
        return SecretsAuditState.model_validate(_checked(r))

    async def _end(self) -> None:
        if self.session_id is not None:
            sid, self.session_id = self.session_id, None
            _checked(await self._http.post("/close", json={"session_id": sid}))

    async def close(self) -> None:
        try:
            await self._end()
        finally:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncSecretsAuditHTTPEnv":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class SecretsAuditHTTPEnv:
    """SecretsAuditEnv over the stateful HTTP API, blocking: the async
    client run on an event loop of its own (so not from inside a running
    loop; use ``AsyncSecretsAuditHTTPEnv`` there)."""

    def __init__(self, base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S):
        self._loop = asyncio.new_event_loop()
        self._env = AsyncSecretsAuditHTTPEnv(base_url, timeout_s)

    @property
    def session_id(self) -> Optional[str]:
        return self._env.session_id

    def reset(self, **kwargs: Any) -> StepResult:
        return self._loop.run_until_complete(self._env.reset(**kwargs))

    def step(self, action: AnyAction) -> StepResult:
        return self._loop.run_until_complete(self._env.step(action))

    def list_tools(self) -> List[Tool]:
        return self._loop.run_until_complete(self._env.list_tools())

    def state(self) -> SecretsAuditState:
        return self._loop.run_until_complete(self._env.state())

    def close(self) -> None:
        try:
            self._loop.run_until_complete(self._env.close())
        finally:
            self._loop.close()

    def __enter__(self) -> "SecretsAuditHTTPEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
