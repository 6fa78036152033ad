//! Prewarmed sandboxes: bwrap started before its command, waiting for it.

use super::*;

/// A sandbox started before its command ([`Sandbox::prewarm`]): bwrap
/// with the full flag set, its namespaces and mounts made, bash waiting
/// on a pipe for the one command it will run. Dropping it unused kills
/// it, init first ([`tree`]), and frees its uid once every process of it
/// is gone.
#[derive(Debug)]
pub struct Warm {
    // Dropped first (fields drop in order): with its command pipe closed
    // the waiting script runs nothing, whatever the kill below meets.
    pub(super) cmd_w: OwnedFd,
    pub(super) key: WarmKey,
    pub(super) limits: Limits,
    pub(super) tree: Tree,
    pub(super) ids: Option<(u32, u32)>,
}

impl Warm {
    /// The uid and gid its command runs as (None: the server's own): what
    /// to give the files it will write before delivery, so that
    /// [`ExecRequest::owned_by`] saves the walk.
    pub fn ids(&self) -> Option<(u32, u32)> {
        self.ids
    }
}

/// Everything a warm sandbox was built for: a request it serves must
/// match, down to the workspace directory's identity (a directory
/// replaced at the same path is not the one bound).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WarmKey {
    /// A staged sandbox's command (it runs already); None for the
    /// waiting script, which takes any command.
    pub(super) staged: Option<String>,
    pub(super) workspace: PathBuf,
    pub(super) root: (u64, u64),
    pub(super) extra_ro_binds: Vec<(PathBuf, PathBuf)>,
    pub(super) extra_rw_binds: Vec<(PathBuf, PathBuf)>,
    pub(super) env: Vec<(String, String)>,
    pub(super) limits: Option<Limits>,
}

impl WarmKey {
    pub(super) fn of(req: &ExecRequest, root: &std::fs::Metadata, staged: bool) -> WarmKey {
        WarmKey {
            staged: staged.then(|| req.command.clone()),
            workspace: req.workspace.clone(),
            root: (root.dev(), root.ino()),
            extra_ro_binds: req.extra_ro_binds.clone(),
            extra_rw_binds: req.extra_rw_binds.clone(),
            env: req.env.clone(),
            limits: req.limits.clone(),
        }
    }
}
