//! `secaudit grade`: grades one finished workspace against a task's
//! generated directory with the server's own grading pass
//! (`server::env::finished`), prints the outcome as JSON on stdout and, with
//! `--reward-dir`, writes the reward where a Harbor verifier must leave it
//! (`reward.txt`, a bare number, and `reward.json`, the number under
//! `reward` plus its terms; Harbor reads the JSON when both exist).
//!
//! Fails closed: without a working containment tier the health suite would
//! run agent-written code uncontained, so the command refuses (exit 2, no
//! reward written) instead of scoring. A Harbor trial whose verifier writes
//! no reward is reported as a verifier error, not as a score of 0, which is
//! what an infrastructure fault should look like. Everything about the
//! workspace itself (leaks left, tests broken, history rewritten wrongly,
//! a tree over the size budget) is a score, exactly as in a session.

use anyhow::{Context, bail};
use server::env::finished::{FinishedGrade, grade_finished};
use server::http::env_vars;
use server::sandbox::{Sandbox, SandboxConfig, TierChoice};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `secaudit grade`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task's generated directory (truth.json, workspace/, pristine/,
    /// allowlist.toml, info.json), as `secaudit export harbor` ships it in
    /// tests/truth.tar.
    #[arg(long)]
    pub truth: PathBuf,
    /// The finished workspace to grade.
    #[arg(long)]
    pub workspace: PathBuf,
    /// Write reward.txt and reward.json here (Harbor: /logs/verifier).
    #[arg(long)]
    pub reward_dir: Option<PathBuf>,
    /// The Python venv with pytest, mounted read-only in the sandbox.
    #[arg(long, env = env_vars::SECAUDIT_VENV, default_value = "./.venv")]
    pub venv: PathBuf,
    /// Containment tier: auto, bwrap or landlock.
    #[arg(long, env = env_vars::SECAUDIT_SANDBOX, default_value = "auto")]
    pub sandbox: TierChoice,
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    for (what, dir) in [("--truth", &args.truth), ("--workspace", &args.workspace)] {
        if !dir.is_dir() {
            bail!("{what} {}: not a directory", dir.display());
        }
    }
    let venv = std::path::absolute(&args.venv)?;
    if !venv.join("bin/python").exists() {
        bail!(
            "--venv {}: no bin/python (the health suite needs a venv with pytest)",
            venv.display()
        );
    }
    let sandbox = Sandbox::detect(SandboxConfig {
        tier: args.sandbox,
        ..SandboxConfig::with_venv(venv)
    });
    if !sandbox.is_contained() {
        bail!(
            "no containment tier works here ({}); refusing to run the agent's code for health",
            sandbox.info().detail
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let truth = std::path::absolute(&args.truth)?;
    let ws = std::path::absolute(&args.workspace)?;
    let graded = rt.block_on(grade_finished(&truth, &ws, Arc::new(sandbox)))?;
    if let Some(dir) = &args.reward_dir {
        write_reward(dir, &graded)?;
    }
    println!("{}", serde_json::to_string_pretty(&graded)?);
    Ok(ExitCode::SUCCESS)
}

/// The `reward.json` Harbor reads: numbers only (Harbor refuses anything
/// else), the reward under `reward`.
pub fn reward_json(g: &FinishedGrade) -> serde_json::Value {
    serde_json::json!({
        "reward": g.reward.total,
        "detection": g.reward.detection,
        "health": g.reward.health,
        "leaks_initial": g.leaks_initial,
        "leaks_current": g.leaks_current,
        "new_leaks": g.new_leaks,
        "success": u8::from(g.success),
    })
}

/// Writes `reward.txt` and `reward.json` into `dir`, each by rename so a
/// reader never sees half a file.
fn write_reward(dir: &Path, g: &FinishedGrade) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let files = [
        ("reward.txt", format!("{}\n", g.reward.total).into_bytes()),
        ("reward.json", serde_json::to_vec_pretty(&reward_json(g))?),
    ];
    for (name, bytes) in files {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, dir.join(name))?;
    }
    Ok(())
}
