//! One command to run ([`ExecRequest`]) and what it did ([`ExecOutput`]).

use super::*;

/// One command to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExecRequest {
    /// Host directory bound read-write at `/workspace` (the cwd).
    pub workspace: PathBuf,
    /// The bash command (`/usr/bin/bash -lc COMMAND`).
    pub command: String,
    /// Extra read-only binds (host path, sandbox path), mounted after the
    /// workspace (so they may sit on top of it).
    pub extra_ro_binds: Vec<(PathBuf, PathBuf)>,
    /// Extra read-write binds (host path, sandbox path).
    pub extra_rw_binds: Vec<(PathBuf, PathBuf)>,
    /// Extra environment variables, set after (and overriding) the
    /// allowlisted base environment. Trusted: callers must not pass agent
    /// input here.
    pub env: Vec<(String, String)>,
    /// Limits for this command instead of the sandbox's defaults.
    pub limits: Option<Limits>,
    /// Trusted hint from the caller: every entry of `workspace` (the root
    /// included) is already owned by this uid/gid, as seen by a walk made
    /// after the last command in it ended and before anything else wrote
    /// to it (`env::fsread::survey`). When the leased uid is exactly this
    /// one, the `lchown` walk of the workspace is skipped: a command run
    /// as uid U in a tree owned by U can only leave entries owned by U
    /// (no privileges, no other uid inside, hard links across the
    /// read-only mounts fail), so the walk would change nothing. A wrong
    /// hint costs the command write access, not containment.
    pub owned_by: Option<(u32, u32)>,
    /// Bytes the command reads on its stdin, then end of file (`None`:
    /// stdin is `/dev/null`). Trusted, like `env`; at most
    /// [`MAX_STDIN_BYTES`], which a pipe holds before anyone reads it. A
    /// staged sandbox ([`Sandbox::prewarm_staged`]) gets them at delivery,
    /// a cold one before it starts: the command sees the same bytes.
    pub stdin: Option<Vec<u8>>,
}

/// Most bytes an [`ExecRequest::stdin`] may hold: well under a pipe's
/// smallest capacity (one page), so writing them never blocks.
pub const MAX_STDIN_BYTES: usize = 4096;

impl ExecRequest {
    /// A plain bash command in `workspace` with default limits.
    pub fn bash(workspace: impl Into<PathBuf>, command: impl Into<String>) -> Self {
        ExecRequest {
            workspace: workspace.into(),
            command: command.into(),
            ..Default::default()
        }
    }
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExecOutput {
    /// Exit code (bwrap reports 128+N for a command killed by signal N);
    /// None when the sandbox itself was killed.
    pub exit_code: Option<i32>,
    /// The signal that killed the (outer) process, if any.
    pub signal: Option<i32>,
    /// Standard output, lossy UTF-8; when bytes were dropped the head and
    /// tail are joined by a `[... N bytes omitted ...]` line.
    pub stdout: String,
    /// Standard error, same treatment.
    pub stderr: String,
    /// Bytes of stdout not kept.
    pub stdout_dropped: u64,
    /// Bytes of stderr not kept.
    pub stderr_dropped: u64,
    /// True when the wall timeout fired and the tree was killed.
    pub timed_out: bool,
    /// Wall time from spawn to the last process gone.
    pub duration: Duration,
    /// Wall time spent handing the workspace and read-write binds to the
    /// command's uid before the spawn (zero when skipped).
    pub owner_walk: Duration,
    /// True when the command ran in a sandbox started ahead of it
    /// ([`Sandbox::run_warm`]).
    pub warm: bool,
    /// The resource bound the command crossed (it was killed for it).
    pub bound: Option<Bound>,
}
