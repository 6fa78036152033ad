//! `truth.json`: what generation recorded about a task (its rendered
//! secrets, commits and oracle), the ground truth the grader trusts, kept
//! outside the workspace.

use super::read::read_capped;
use crate::models::ScanMode;
use anyhow::Context;
use graders::planted::Planted;
use graders::security::CommitRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest `truth.json` read back.
const MAX_TRUTH_BYTES: u64 = 16 << 20;

/// A generated task: where it is and its rendered ground truth. This is
/// what `truth.json` holds (paths excepted, which [`load_generated`]
/// rebuilds from the directory it reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedTask {
    /// [`super::GENERATOR_VERSION`] that wrote it.
    pub generator_version: String,
    /// Task number.
    pub task_id: u32,
    /// `task_NN`.
    pub slug: String,
    /// Variant seed; `None` for the canonical task.
    pub seed: Option<u64>,
    /// `dir` or `git`.
    pub scan_mode: ScanMode,
    /// `out_dir/workspace`.
    #[serde(skip)]
    pub workspace: PathBuf,
    /// `out_dir/pristine`: test files and pytest configuration.
    #[serde(skip)]
    pub pristine: PathBuf,
    /// `out_dir/allowlist.toml`.
    #[serde(skip)]
    pub allowlist: PathBuf,
    /// Workspace-relative paths stored under `pristine/`, sorted.
    pub pristine_files: Vec<String>,
    /// Number of tests pytest collects (the health denominator).
    pub expected_tests: u32,
    /// HEAD of `main`.
    pub head_commit: String,
    /// Tree of HEAD.
    pub tree_id: String,
    /// The ground truth with this episode's values.
    pub secrets: Vec<Planted>,
    /// The oracle's actions rendered with this episode's values.
    pub oracle: Vec<String>,
    /// Files this variant moved: canonical path → episode path (empty for
    /// the canonical task). `secrets[].file` already uses episode paths.
    #[serde(default)]
    pub renamed: BTreeMap<String, String>,
    /// Commits, oldest first.
    pub commits: Vec<CommitRecord>,
}

/// Reads `out_dir/truth.json` back and fills in the paths.
pub fn load_generated(out_dir: &Path) -> anyhow::Result<GeneratedTask> {
    let text = read_capped(&out_dir.join("truth.json"), MAX_TRUTH_BYTES)?;
    let mut g: GeneratedTask = serde_json::from_slice(&text)
        .with_context(|| format!("parsing {}/truth.json", out_dir.display()))?;
    g.workspace = out_dir.join("workspace");
    g.pristine = out_dir.join("pristine");
    g.allowlist = out_dir.join("allowlist.toml");
    Ok(g)
}
