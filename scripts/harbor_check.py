"""Checks Harbor task directories with Harbor's own code (tests/harbor.rs).

For each TASK_DIR given: Harbor's linter (`harbor lint`'s `lint_task`,
with its default rules plus `root-agent`), Harbor's task loader (`Task`,
what a trial loads, and `Task.is_valid_dir`) and the verifier mode Harbor
resolves. Prints one JSON object per task on stdout, one per line; exits 1
if any task has a finding or does not load, 2 on a usage error.

Runs under .tools/harbor (scripts/setup.sh). Harbor 0.26 declares Python
>= 3.12; on an older interpreter the two 3.12 typing names its task model
uses (`typing.override`, and `typing.TypedDict` as pydantic wants it before
3.12) are taken from typing_extensions, their backport, before Harbor is
imported. Nothing of Harbor is reimplemented or patched.
"""

import json
import sys
import typing

if sys.version_info < (3, 12):
    import typing_extensions

    typing.override = typing_extensions.override
    typing.TypedDict = typing_extensions.TypedDict

from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402

from harbor.lint import lint_task  # noqa: E402
from harbor.lint.models import DEFAULT_RULES, LintRule  # noqa: E402
from harbor.models.task.task import Task  # noqa: E402
from harbor.models.task.verifier_mode import (  # noqa: E402
    resolve_task_verifier_mode,
    resolve_verifier_environment_definition,
)

RULES = set(DEFAULT_RULES) | {LintRule.ROOT_AGENT}


def check(task_dir: Path) -> dict:
    out = {
        "task_dir": str(task_dir),
        "harbor": version("harbor"),
        "rules": sorted(r.value for r in RULES),
        "findings": [
            f.model_dump(mode="json") for f in lint_task(task_dir, selected_rules=RULES)
        ],
        "valid_dir": Task.is_valid_dir(task_dir),
    }
    try:
        task = Task(task_dir)
    except Exception as e:  # the loader's refusal is the finding
        out["load_error"] = f"{type(e).__name__}: {e}"
        return out
    definition = resolve_verifier_environment_definition(task.config, task.paths)
    out.update(
        name=task.name,
        instruction_chars=len(task.instruction),
        verifier_mode=resolve_task_verifier_mode(task.config).value,
        verifier_bundled_tests=bool(definition and definition.bundled_tests),
        verifier_dir=str(definition.directory) if definition else None,
        artifacts=[a if isinstance(a, str) else a.source for a in task.config.artifacts],
        agent_user=task.config.agent.user,
        metadata=task.config.metadata,
    )
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: harbor_check.py TASK_DIR...", file=sys.stderr)
        return 2
    bad = False
    for arg in argv:
        result = check(Path(arg).resolve())
        bad |= bool(result["findings"]) or "load_error" in result or not result["valid_dir"]
        print(json.dumps(result), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
