#!/usr/bin/env python3
"""GRPO with TRL against SecretsAuditEnv: a small model, a handful of steps.

On a machine with a CUDA GPU:

1. Serve the environment from this checkout (README, "Two commands"):

       ./scripts/serve.sh            # serves on :7860

   Each rollout holds one session: keep MAX_CONCURRENT_ENVS (default 64)
   at least the generation batch (--batch-size, 8 by default).

2. In a Python 3.10+ environment with a CUDA build of torch:

       pip install "trl==1.16.0" datasets /path/to/this/checkout

   (trl 1.16.0 is the version tests/trl.rs checks this script against;
   environment_factory is experimental in TRL and needs transformers 5.2+.)

3. Train:

       ENV_URL=http://localhost:7860 python examples/train_grpo.py --max-steps 5

Each dataset row names a task and a seed: every rollout of a GRPO group
plays the same seeded episode, so the group's advantages compare policies
on one problem. ``SecretsAuditToolEnv`` gives the model the server's tools
(bash, inspect_file, inspect_encoded, scan_history, run_scanner,
list_files, submit) and owns the reward: its ``get_reward()``, the
episode's score, is the reward TRL optimises (no ``reward_funcs``).
"""

import argparse
import os

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from secrets_audit_env.trl_env import DEFAULT_URL, URL_VAR, SecretsAuditToolEnv

PROMPT = (
    "You are a security engineer. The repository below leaks secrets. Use the tools to find every "
    "planted secret, remove it from the code (read it from the environment instead) and from git "
    "history where it lives there, keep the test suite passing, then call submit."
)


def dataset(tasks, seeds):
    """One row per (task, seed); reset() reads task_id and seed."""
    return Dataset.from_list(
        [
            {"prompt": [{"role": "user", "content": PROMPT}], "task_id": t, "seed": s}
            for t in tasks
            for s in range(seeds)
        ]
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct")
    p.add_argument("--env-url", default=os.environ.get(URL_VAR, DEFAULT_URL))
    p.add_argument("--tasks", default="1,2,3,4,5", help="task numbers (the easy ones by default)")
    p.add_argument("--seeds", type=int, default=4, help="seeded variants per task")
    p.add_argument("--max-steps", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=8, help="rollouts per step (sessions held at once)")
    p.add_argument("--num-generations", type=int, default=4, help="rollouts per prompt (a GRPO group)")
    p.add_argument("--max-tool-calls", type=int, default=10, help="tool-calling turns per rollout")
    p.add_argument("--output-dir", default="grpo-secrets-audit")
    a = p.parse_args()

    config = GRPOConfig(
        output_dir=a.output_dir,
        max_steps=a.max_steps,
        per_device_train_batch_size=a.batch_size,
        num_generations=a.num_generations,
        # Tool results are part of the completion: room for a few files.
        max_completion_length=4096,
        max_tool_calling_iterations=a.max_tool_calls,
        # reset() reads the task_id and seed columns (GRPO's default, said
        # out loud because the episode depends on it).
        remove_unused_columns=False,
        learning_rate=1e-6,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        bf16=True,
    )
    trainer = GRPOTrainer(
        model=a.model,
        args=config,
        train_dataset=dataset([int(t) for t in a.tasks.split(",")], a.seeds),
        # Called with no argument, once per pooled rollout instance.
        environment_factory=lambda: SecretsAuditToolEnv(base_url=a.env_url),
    )
    trainer.train()


if __name__ == "__main__":
    main()
