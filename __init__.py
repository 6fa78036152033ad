"""SecretsAuditEnv client: an agent remediates secret leaks in git-backed
Python projects; reward = security progress x code health + efficiency.

    >>> from secrets_audit_env import SecretsAuditEnv, SecretsAuditAction
    >>> with SecretsAuditEnv(base_url="http://localhost:7860").sync() as env:
    ...     r = env.reset(task_id=1)
    ...     r = env.step(SecretsAuditAction(command="run_scanner"))

``SecretsAuditToolEnv`` (``trl_env``) is the environment class for TRL's
``GRPOTrainer(environment_factory=...)``.

The server is the Rust binary of this repository (``secaudit serve``);
this package is only its client, laid out as OpenEnv environments are.
"""

from importlib.metadata import PackageNotFoundError, version

from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction

from .client import AsyncSecretsAuditHTTPEnv, SecretsAuditEnv, SecretsAuditHTTPEnv
from .models import (
    ActionOutput,
    SecretsAuditAction,
    SecretsAuditObservation,
    SecretsAuditState,
    SecretsAuditToolCallObservation,
)
from .trl_env import SecretsAuditToolEnv

try:
    __version__ = version("secrets-audit-env")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"

__all__ = [
    "ActionOutput",
    "AsyncSecretsAuditHTTPEnv",
    "CallToolAction",
    "ListToolsAction",
    "SecretsAuditAction",
    "SecretsAuditEnv",
    "SecretsAuditHTTPEnv",
    "SecretsAuditObservation",
    "SecretsAuditState",
    "SecretsAuditToolCallObservation",
    "SecretsAuditToolEnv",
]
