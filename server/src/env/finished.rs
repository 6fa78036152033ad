//! Grading one finished workspace outside any session: what a Harbor
//! verifier runs (`secaudit grade`) after an agent worked on a copy of a
//! task's workspace somewhere else.
//!
//! The inputs are a task's generated directory (`truth.json`, `workspace/`,
//! `pristine/`, `allowlist.toml`, as [`crate::tasks::generate_task`] wrote
//! it) plus its public [`TaskInfo`] in [`INFO_FILE`] beside them. From those
//! the same [`TaskRuntime`] a server builds is built, the same grading pass
//! runs (ground-truth security search, scanner for new leaks, pristine
//! health suite in the sandbox) and the same [`grade::score`] turns it
//! into a reward. No steps are counted, so there is no efficiency bonus: a
//! solved task scores exactly 1.0.

use super::grade::{self, Grade};
use super::grading;
use super::runtime::TaskRuntime;
use crate::health::HealthGrader;
use crate::models::{HealthSummary, SandboxInfo, TaskInfo};
use crate::sandbox::Sandbox;
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The task's public metadata, beside `truth.json` in a generated
/// directory shipped to a verifier (the registry that normally provides it
/// is not shipped).
pub const INFO_FILE: &str = "info.json";

/// Largest [`INFO_FILE`] read.
const MAX_INFO_BYTES: u64 = 64 * 1024;

/// The outcome of grading a finished workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinishedGrade {
    /// Task number.
    pub task_id: u32,
    /// Variant seed, if any.
    pub seed: Option<u64>,
    /// Every term of the reward; `reward.total` is the reward.
    pub reward: graders::reward::Reward,
    /// Planted secrets.
    pub leaks_initial: u32,
    /// Planted secrets not counted fixed, plus new leaks.
    pub leaks_current: u32,
    /// Ids of the planted secrets counted fixed.
    pub fixed: Vec<String>,
    /// Distinct values a leak-grade scanner rule finds now and did not at
    /// reset.
    pub new_leaks: u32,
    /// The pristine suite's run on the workspace.
    pub health: HealthSummary,
    /// Every leak fixed, health 1.0 and no grading error.
    pub success: bool,
    /// Problems of the grading pass (each already counted against the
    /// score, as in a session).
    pub errors: Vec<String>,
    /// The containment the health suite ran under.
    pub sandbox: SandboxInfo,
}

/// Writes `info` as [`INFO_FILE`] into the generated directory `out_dir`.
pub fn write_info(out_dir: &Path, info: &TaskInfo) -> anyhow::Result<()> {
    std::fs::write(out_dir.join(INFO_FILE), serde_json::to_vec_pretty(info)?)
        .with_context(|| format!("writing {}", out_dir.join(INFO_FILE).display()))
}

/// Reads [`INFO_FILE`] from the generated directory `out_dir`.
pub fn read_info(out_dir: &Path) -> anyhow::Result<TaskInfo> {
    let path = out_dir.join(INFO_FILE);
    let bytes = crate::tasks::read::read_capped(&path, MAX_INFO_BYTES)?;
    serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", path.display()))
}

/// Grades `workspace` against the task generated in `truth_dir`, running
/// the health suite in `sandbox`. Errors are for inputs that cannot be
/// graded at all (a missing or inconsistent truth directory, a pristine
/// suite that does not run); everything about the workspace itself is a
/// score, failing closed exactly as in a session.
pub async fn grade_finished(
    truth_dir: &Path,
    workspace: &Path,
    sandbox: Arc<Sandbox>,
) -> anyhow::Result<FinishedGrade> {
    let info = read_info(truth_dir)?;
    let td = truth_dir.to_path_buf();
    let generated = tokio::task::spawn_blocking(move || crate::tasks::load_generated(&td))
        .await?
        .with_context(|| format!("loading the generated task in {}", truth_dir.display()))?;
    let seed = generated.seed;
    let health = Arc::new(HealthGrader::new(sandbox.clone()).without_staging());
    let rt = Arc::new(TaskRuntime::build(info, generated, truth_dir, health).await?);
    let grade: Grade = grading::grade(&rt, workspace).await;
    let scored = grade::score(&rt.secrets, &grade, 0, 0);
    Ok(FinishedGrade {
        task_id: rt.info.id,
        seed,
        reward: scored.reward,
        leaks_initial: scored.leaks_initial,
        leaks_current: scored.leaks_current,
        fixed: grade.fixed.iter().cloned().collect(),
        new_leaks: grade.new_leaks,
        health: grade.health,
        success: scored.success,
        errors: grade.errors,
        sandbox: sandbox.info(),
    })
}
