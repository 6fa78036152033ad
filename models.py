"""Typed wire models of SecretsAuditEnv (pydantic, on OpenEnv's base types).

They mirror the server's Rust types in ``server/src/models.rs``, from which
``GET /schema`` and ``GET /openapi.json`` are generated. A test
(``tests/pyclient.rs``) fetches both documents from a live server and
checks every field, type and required flag of these models against them,
so the two cannot drift.

Models that OpenEnv's clients parse (``SecretsAuditObservation``) ignore
unknown keys, so an older client keeps working against a newer server.
"""

from typing import Any, Dict, List, Literal, Optional

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field

Difficulty = Literal["easy", "medium", "hard"]
ScanMode = Literal["dir", "git"]
Tier = Literal["surface", "shallow", "deep", "hidden"]
SecretStatus = Literal["open", "fixed", "blocked"]
ConflictKind = Literal["reveals", "blocks"]
RewardMode = Literal["score", "delta"]
SandboxTier = Literal["bwrap", "landlock", "none"]
ToolErrorType = Literal["tool_not_found", "invalid_args"]


class SecretsAuditAction(Action):
    """One command: a structured action (``inspect_file config.py``,
    ``inspect_encoded``, ``scan_history``, ``run_scanner``, ``list_files``,
    ``submit``) or bash run in the workspace. OpenEnv's ``ListToolsAction``
    and ``CallToolAction`` are the other actions ``step`` takes."""

    command: str = Field(description="The command: a structured action or bash.")


class VisibleSecret(BaseModel):
    """A secret the agent can see; the value is masked."""

    id: str
    file: str
    line: int = Field(ge=0)
    type: str
    tier: Tier
    history_only: bool
    status: SecretStatus
    masked_value: str


class ConflictEdge(BaseModel):
    """One edge of a task's conflict map."""

    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    kind: ConflictKind


class RankedAction(BaseModel):
    """A suggested next action."""

    action: str
    priority: float
    reason: str


class RewardBreakdown(BaseModel):
    """The reward and how it was made."""

    detection: float
    base: float
    health: float
    efficiency: float
    score: float
    reward: float


class HealthSummary(BaseModel):
    """Result of the health grader (the workspace's pytest suite)."""

    passed: int = Field(ge=0)
    failed: int = Field(ge=0)
    errors: int = Field(ge=0)
    total: int = Field(ge=0)
    score: float
    cached: bool
    error: Optional[str] = None


class ActionOutput(BaseModel):
    """Output of the last action."""

    command: str
    kind: str
    exit_code: Optional[int] = None
    stdout: str
    stderr: str
    stdout_truncated_bytes: int = Field(ge=0)
    stderr_truncated_bytes: int = Field(ge=0)
    duration_ms: int = Field(ge=0)
    timed_out: bool
    limit_exceeded: Optional[str] = None


class HistoryEntry(BaseModel):
    """One past step."""

    step: int = Field(ge=0)
    command: str
    reward: float
    exit_code: Optional[int] = None


class SandboxInfo(BaseModel):
    """Whether commands are contained, and how."""

    available: bool
    tier: SandboxTier = "bwrap"
    landlock_abi: Optional[int] = Field(default=None, ge=0)
    uid_per_command: bool = False
    detail: str


class SecretsAuditObservation(Observation):
    """Everything the agent sees after reset or a step."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    session_id: str
    episode_id: str
    task_id: int = Field(ge=0)
    task_slug: str
    seed: Optional[int] = Field(default=None, ge=0)
    title: str
    difficulty: Difficulty
    description: str
    scan_mode: ScanMode
    step_budget: int = Field(ge=0)
    steps_taken: int = Field(ge=0)
    reward: float
    reward_mode: RewardMode
    reward_breakdown: RewardBreakdown
    leaks_initial: int = Field(ge=0)
    leaks_current: int = Field(ge=0)
    visible_secrets: List[VisibleSecret]
    hidden_count: int = Field(ge=0)
    conflict_map: List[ConflictEdge]
    ranked_actions: List[RankedAction]
    top_blocker: Optional[str] = None
    health: HealthSummary
    last_action: Optional[ActionOutput] = None
    history: List[HistoryEntry]
    done: bool
    terminated: bool
    truncated: bool
    success: bool
    sandbox: SandboxInfo
    grading_errors: List[str]


class ToolError(BaseModel):
    """Why a ``call_tool`` ran nothing (no step was spent)."""

    error_type: ToolErrorType
    message: str


class SecretsAuditToolCallObservation(SecretsAuditObservation):
    """The observation of a ``call_tool`` step: the step's observation plus
    OpenEnv's ``CallToolObservation`` fields."""

    tool_name: str
    result: Optional[ActionOutput] = None
    error: Optional[ToolError] = None


class SecretsAuditState(State):
    """The session object of ``state()``."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    episode_id: str
    step_count: int = Field(ge=0)
    session_id: str
    task_id: int = Field(ge=0)
    seed: Optional[int] = Field(default=None, ge=0)
    done: bool
    score: float
    observation: SecretsAuditObservation

