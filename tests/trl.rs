//! TRL's `GRPOTrainer(environment_factory=...)` over the client's
//! `trl_env.SecretsAuditToolEnv`, checked without training a model (no
//! torch) by `scripts/trl_check.py` in `.tools/openenv`, where
//! `scripts/setup.sh` installs transformers and trl (the latter without
//! its dependencies):
//!
//! - the tools are what TRL 1.16.0 takes from the class (the rule is
//!   restated and the installed TRL source checked to still say it), one
//!   per server tool and no generic `step(action)`; their schemas, built by
//!   transformers' `get_json_schema` as TRL's chat templates build them,
//!   match the server's `list_tools` name by name, argument by argument;
//!   the prompt renders with the Qwen2.5 template TRL ships;
//! - an episode through the class, driven as TRL drives it (factory with
//!   no argument and `ENV_URL`, `reset(**row)`, tools by name with keyword
//!   arguments, errors as `{"error": ...}`): task 1's oracle solves it,
//!   a seeded episode runs the other tools and submits, every tool is
//!   called, and after every step `get_reward()` equals the server's
//!   score; the next `reset` and leaving `with` close the sessions, and a
//!   session the server closed first does not stop a `reset`;
//! - `examples/train_grpo.py` compiles and passes GRPOConfig and
//!   GRPOTrainer only arguments TRL has, `environment_factory` among them.
//!
//! A missing transformers or trl is a failure with the fix, never a skip.

use crate::openenv_client::{openenv_venv, run_bounded, task1_oracle};
use crate::util::{self, ServerProc, tail};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trl_environment_factory_tools_match_the_server_and_play_task_1() {
    let py = openenv_venv().join("bin/python");
    let have = run_bounded(
        Command::new(&py).args(["-c", "import transformers.utils, trl"]),
        Duration::from_secs(120),
    );
    assert!(
        have.status.success(),
        "transformers or trl missing from .tools/openenv: run scripts/setup.sh\n{}",
        tail(&have.stderr, 20)
    );
    let srv = ServerProc::start().await;
    let root = util::root();
    let dir = tempfile::tempdir().expect("tempdir");
    let oracle = dir.path().join("oracle.json");
    let actions = task1_oracle(&root.join("tasks"));
    std::fs::write(&oracle, serde_json::to_vec(&actions).expect("json")).expect("write oracle");
    let url = srv.url.clone();
    let r = tokio::task::spawn_blocking(move || {
        run_bounded(
            Command::new(py)
                .arg(root.join("scripts/trl_check.py"))
                .arg(&url)
                .arg(&oracle)
                .arg(root.join("examples/train_grpo.py"))
                .env("ENV_URL", &url)
                .env("TRANSFORMERS_VERBOSITY", "error"),
            Duration::from_secs(600),
        )
    })
    .await
    .expect("join");
    assert!(
        r.status.success(),
        "trl_check.py failed ({}):\nstdout:\n{}\nstderr:\n{}\nserver log:\n{}",
        r.status,
        r.stdout,
        tail(&r.stderr, 60),
        srv.log_tail()
    );
    eprintln!("trl_check.py: {}", r.stdout.trim());
    let out: Value = serde_json::from_str(r.stdout.trim()).expect("trl_check JSON");
    assert_eq!(
        out["tools"],
        serde_json::json!([
            "bash",
            "inspect_encoded",
            "inspect_file",
            "list_files",
            "run_scanner",
            "scan_history",
            "submit"
        ]),
        "{out}"
    );
    // list_files, then the oracle's steps up to the fix that solves task
    // 1 and ends the episode (its tests and submit are then refused).
    let rewards = out["rewards"].as_array().expect("rewards");
    assert!(rewards.len() >= 2, "{out}");
    assert_eq!(rewards.last().and_then(Value::as_f64), Some(1.0), "{out}");
    assert!(
        rewards[..rewards.len() - 1]
            .iter()
            .all(|r| r.as_f64().is_some_and(|r| r < 1.0)),
        "only the solving step earns 1.0: {out}"
    );
    // A second episode, one leak of two fixed, then submitted: a score
    // strictly between 0 and 1, which the class read as the server had it.
    let submitted = out["submitted"].as_array().expect("submitted");
    assert!(
        submitted
            .last()
            .and_then(Value::as_f64)
            .is_some_and(|r| 0.0 < r && r < 1.0),
        "{out}"
    );
}
