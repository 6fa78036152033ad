//! Ground-truth security grading: is a planted value, or a simple transform
//! of it, still anywhere in the workspace or its git object database?
//!
//! The regex scanner ([`crate::scanner`]) answers "does this look like a
//! secret"; this module answers "is *this* secret still here", keyed by the
//! exact values planted at reset (spec.md §6), so transforming a value or
//! hiding it where scanners do not look gains nothing. It reads no repo
//! config and honours no inline directive (`gitleaks:allow`, baselines), so
//! suppression files change nothing.
//!
//! The rule, written down once: **a secret is remediated only if neither
//! its value nor any derived needle (see [`needles`]) occurs in any regular
//! file (whatever its name, type or ignore status, `.git` included), file
//! name, symlink target or extended attribute, nor in any layer the
//! decoder closure ([`decode`]) peels off one of those, and, for git
//! tasks, in no object of the object database and no reflog, with history
//! still intact.** Any budget overrun, unreadable entry or suspicious repo
//! layout fails closed: the secret counts as present.
//!
//! - [`scan_tree`]: the working tree ([`tree`]).
//! - [`scan_git`], [`record_history`]: the object DB and history integrity
//!   ([`git`]).
//! - [`grade`]: evidence to per-secret verdicts.

mod content;
mod decode;
#[doc(hidden)]
pub mod decode_probe;
mod git;
mod needles;
mod tree;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub use crate::planted::Planted;

/// Budgets for [`scan_tree`]. Exceeding any sets
/// [`TreeEvidence::budget_exceeded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeLimits {
    /// Directory entries of any kind.
    pub max_files: u64,
    /// File content bytes read.
    pub max_bytes: u64,
    /// Directory nesting below the root.
    pub max_depth: u32,
    /// Bytes produced by the decoder closure (decoding and decompression),
    /// in total over the scan. Each file also has its own budget
    /// (`decode::DECODE_BUDGET_*`).
    pub max_inflated_bytes: u64,
    /// Decoded layers (decoded runs, rewrites, streams), in total.
    pub max_inflate_attempts: u64,
    /// Skip `<root>/.git/objects` in the tree walk. Dir-mode grading sets
    /// it and searches the objects created after reset with
    /// [`scan_new_objects`] instead: history that existed at reset is not
    /// the agent's to rewrite in a dir task, but a commit it makes is.
    pub skip_git_objects: bool,
}

impl Default for TreeLimits {
    fn default() -> Self {
        TreeLimits {
            max_files: 50_000,
            max_bytes: 256 << 20,
            max_depth: 64,
            max_inflated_bytes: 4 << 30,
            max_inflate_attempts: 4_000_000,
            skip_git_objects: false,
        }
    }
}

/// What [`scan_tree`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeEvidence {
    /// Secret id -> locations (`path:line [kind]`, `path (zlib@N):line`,
    /// `path (file name) [raw]`, ...), capped per secret.
    pub present: BTreeMap<String, Vec<String>>,
    /// Directory entries visited.
    pub files_scanned: u64,
    /// File bytes read.
    pub bytes_scanned: u64,
    /// The scan did not complete (budget, unreadable entry, missing root).
    /// The caller must then treat every secret as present.
    pub budget_exceeded: bool,
    /// Why the scan was incomplete, and skipped special files.
    pub errors: Vec<String>,
}

/// What [`scan_git`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitEvidence {
    /// Secret id -> locations (`object <oid> (blob):line [kind]`, reflogs).
    pub present: BTreeMap<String, Vec<String>>,
    /// The repository opened, passed the layout checks, was fully scanned,
    /// and is still the task's history. When false every secret counts as
    /// present.
    pub history_valid: bool,
    /// Why `history_valid` is false.
    pub reason: Option<String>,
    /// Objects read from the object database.
    pub objects_scanned: usize,
}

/// The commits recorded at reset, kept outside the workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRecord {
    pub commits: Vec<CommitRecord>,
}

/// One commit of a task's history: recorded by the generator (in
/// `truth.json`) and at reset ([`record_history`]). `filter-repo`
/// preserves author, time and message while ids change, so those three
/// identify a commit when history integrity is checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRecord {
    /// Commit id (hex); informational, not used for matching.
    pub id: String,
    /// `Name <email>` of the author (author = committer when generated).
    pub author: String,
    /// Author time, seconds since the epoch, UTC.
    pub time: i64,
    /// Message: as committed in `truth.json` (trailing newline), trailing
    /// whitespace trimmed by [`record_history`]; compared trimmed.
    pub message: String,
}

/// The verdict on one secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretVerdict {
    pub id: String,
    pub remediated: bool,
    /// Where it was found (tree locations first, then git).
    pub locations: Vec<String>,
    /// One line for observations and logs.
    pub reason: String,
}

/// The planted values of one task, compiled once into the needle automaton
/// (every value and its derived transforms, see [`needles`]).
///
/// Why it exists: building the Aho-Corasick automaton over a few hundred
/// derived needles costs more than scanning a small workspace, and the
/// values never change during an episode, so the environment builds one
/// index per task runtime and every grading pass of every session reuses
/// it. `Send + Sync`, so it is shared across blocking threads.
pub struct PlantedIndex {
    planted: Vec<Planted>,
    needles: needles::Needles,
    /// Decoder-closure results by buffer hash: a grading pass decodes only
    /// the files and objects whose bytes are new to this task.
    cache: content::ScanCache,
}

impl PlantedIndex {
    /// Compiles `planted` (order = verdict order).
    pub fn new(planted: &[Planted]) -> Self {
        PlantedIndex {
            needles: needles::Needles::build(planted.iter().map(|p| p.value.as_bytes())),
            planted: planted.to_vec(),
            cache: content::ScanCache::default(),
        }
    }

    /// The planted secrets this index searches for.
    pub fn planted(&self) -> &[Planted] {
        &self.planted
    }

    /// Whether `data` carries a planted value by the grader's own rule: the
    /// value or a derived needle in it or in any layer the decoder closure
    /// peels off it. A closure that could not finish within its budget
    /// counts as carrying (fail closed), so a redactor built on this hides
    /// too much rather than too little.
    pub fn carries(&self, data: &[u8]) -> bool {
        let mut ctx = content::Ctx::new(
            &self.needles,
            content::InflateBudget {
                bytes_left: u64::MAX,
                attempts_left: u64::MAX,
            },
        )
        .with_cache(&self.cache);
        ctx.scan_content(data, "");
        ctx.exceeded || !ctx.hits.is_empty()
    }
}

impl std::fmt::Debug for PlantedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print values: they are ground truth.
        f.debug_struct("PlantedIndex")
            .field("secrets", &self.planted.len())
            .finish_non_exhaustive()
    }
}

/// Searches every regular file, file name and symlink target under `root`,
/// and every compressed stream in them, for every planted value and its
/// derived needles. Never follows links, never opens special files, bounded
/// by `limits` (exceeding them sets `budget_exceeded`). The needle
/// automaton is built once per episode ([`PlantedIndex::new`]).
pub fn scan_tree(root: &Path, index: &PlantedIndex, limits: &TreeLimits) -> TreeEvidence {
    tree::scan_tree(root, index, limits, None)
}

/// [`scan_tree`] for a dir-mode task: `.git/objects` is walked, and
/// what in it is the reset's own history (`pristine`) is skipped.
pub fn scan_tree_dir_mode(
    root: &Path,
    index: &PlantedIndex,
    limits: &TreeLimits,
    pristine: &PristineGit,
) -> TreeEvidence {
    tree::scan_tree(root, index, limits, Some(pristine))
}

/// What a dir-mode task's `.git/objects` held at reset: the SHA-256 of
/// every file under it, and every object id. In dir mode the history at
/// reset is not the agent's to rewrite, so the tree walk skips exactly
/// these bytes and nothing else.
#[derive(Debug, Clone, Default)]
pub struct PristineGit {
    files: std::collections::HashSet<[u8; 32]>,
    objects: std::collections::HashSet<String>,
}

/// Records [`PristineGit`] for the repository at `repo_dir` (the directory
/// holding `.git`); empty when there is none.
pub fn record_pristine_git(repo_dir: &Path) -> PristineGit {
    use sha2::Digest;
    fn walk(dir: &Path, out: &mut std::collections::HashSet<[u8; 32]>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                walk(&e.path(), out);
            } else if ft.is_file()
                && let Ok(data) = std::fs::read(e.path())
            {
                out.insert(sha2::Sha256::digest(&data).into());
            }
        }
    }
    let mut files = std::collections::HashSet::new();
    walk(&repo_dir.join(".git/objects"), &mut files);
    PristineGit {
        files,
        objects: git::record_objects(repo_dir).unwrap_or_default(),
    }
}

/// Searches every object of `git_dir_parent/.git`'s object database and its
/// reflogs, and checks history against `original`. Missing, corrupted,
/// unusual (links, alternates) or rewritten-from-scratch repositories give
/// `history_valid = false`.
pub fn scan_git(
    git_dir_parent: &Path,
    index: &PlantedIndex,
    original: &HistoryRecord,
) -> GitEvidence {
    git::scan_git(git_dir_parent, index, original)
}

/// Searches only the objects of `git_dir_parent/.git` whose ids are not in
/// `known` (the pristine repository's objects), plus the reflogs. A missing
/// `.git` is no evidence of anything: `history_valid` is true and nothing
/// is present. A `.git` that cannot be read safely fails closed.
pub fn scan_new_objects(
    git_dir_parent: &Path,
    index: &PlantedIndex,
    known: &std::collections::HashSet<String>,
) -> GitEvidence {
    git::scan_new_objects(git_dir_parent, index, known)
}

/// Every object id of the repository at `repo_dir` (the pristine set for
/// [`scan_new_objects`]).
pub fn record_objects(repo_dir: &Path) -> Result<std::collections::HashSet<String>, git2::Error> {
    git::record_objects(repo_dir)
}

/// Turns off libgit2's repository-owner check for the process, once
/// (idempotent). Workspaces are owned by the sandbox uid and read by the
/// server's; libgit2 executes nothing from a repository, so the check only
/// gets in the way. Call it before any other git2 use that may open a
/// workspace (the scanner's history mode included).
pub fn disable_git_owner_check() {
    git::disable_owner_check()
}

/// Records the commits reachable from every ref of the repository at
/// `repo_dir` (the directory holding `.git`), for [`scan_git`] later.
pub fn record_history(repo_dir: &Path) -> Result<HistoryRecord, git2::Error> {
    git::record_history(repo_dir)
}

/// Turns evidence into verdicts, in `planted` order. Dir mode (`git` is
/// `None`): remediated iff absent from the tree and the tree scan
/// completed. Git mode: additionally absent from the object DB and
/// reflogs, and history valid.
pub fn grade(
    planted: &[Planted],
    tree: &TreeEvidence,
    git: Option<&GitEvidence>,
) -> Vec<SecretVerdict> {
    planted
        .iter()
        .map(|p| {
            let mut locations = tree.present.get(&p.id).cloned().unwrap_or_default();
            let in_git = git.and_then(|g| g.present.get(&p.id));
            locations.extend(in_git.into_iter().flatten().cloned());
            let reason = if p.value.is_empty() {
                // Nothing to search for is a broken task, not a fixed one.
                "empty planted value, counted present".to_string()
            } else if tree.budget_exceeded {
                format!(
                    "tree scan incomplete, counted present: {}",
                    tree.errors.join("; ")
                )
            } else if let Some(g) = git.filter(|g| !g.history_valid) {
                format!(
                    "history invalid, counted present: {}",
                    g.reason.as_deref().unwrap_or("unknown")
                )
            } else if !locations.is_empty() {
                format!("still present in {} place(s)", locations.len())
            } else if git.is_some() {
                "absent from tree and git objects".to_string()
            } else {
                "absent from tree".to_string()
            };
            let remediated = !p.value.is_empty()
                && !tree.budget_exceeded
                && git.is_none_or(|g| g.history_valid)
                && locations.is_empty();
            SecretVerdict {
                id: p.id.clone(),
                remediated,
                locations,
                reason,
            }
        })
        .collect()
}

/// Secret index -> locations, re-keyed by planted id.
fn by_id(planted: &[Planted], hits: BTreeMap<usize, Vec<String>>) -> BTreeMap<String, Vec<String>> {
    hits.into_iter()
        .filter_map(|(i, locs)| planted.get(i).map(|p| (p.id.clone(), locs)))
        .collect()
}

#[cfg(test)]
mod tests;
