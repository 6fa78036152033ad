//! `truth.json`: what generation recorded about a task (its rendered
//! secrets, commits and oracle), the ground truth the grader trusts, kept
//! outside the workspace.

use super::model::Encoding;
use super::read::read_capped;
use crate::models::{ScanMode, Tier};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest `truth.json` read back.
const MAX_TRUTH_BYTES: u64 = 16 << 20;

/// One planted secret with the episode's value and its recomputed line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenderedSecret {
    /// Secret id.
    pub id: String,
    /// The episode's value (canonical or seeded).
    pub value: String,
    /// Kind, as spelled in `task.json` ([`super::model::SecretType::as_str`]).
    #[serde(rename = "type")]
    pub secret_type: String,
    /// File it is planted in.
    pub file: String,
    /// 1-based line where the value (or its encoded form) starts in `file`:
    /// in the final tree, or for `history_only` in the commit that
    /// introduced it.
    pub line: u32,
    /// Tier.
    pub tier: Tier,
    /// Encoding of a deep secret.
    pub encoding: Option<Encoding>,
    /// Ids revealed when this is fixed.
    pub reveals: Vec<String>,
    /// Ids blocked while this is open.
    pub blocks: Vec<String>,
    /// Only in earlier commits.
    pub history_only: bool,
}

/// One generated commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRecord {
    /// Commit id (hex).
    pub id: String,
    /// `Name <email>` (author = committer).
    pub author: String,
    /// Seconds since the epoch, UTC.
    pub time: i64,
    /// Message as committed (with trailing newline).
    pub message: String,
}

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
    pub secrets: Vec<RenderedSecret>,
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
