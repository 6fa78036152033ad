//! Contained command execution: every agent command (and every grader run of
//! agent-influenced code) is `/usr/bin/bash -lc CMD` inside bubblewrap.
//!
//! Why exec bwrap rather than hand-rolled namespaces or process groups: a
//! process group with rlimits isolates no filesystem or network, and
//! `setsid` escapes its kill; unsharing namespaces by hand re-implements
//! bwrap (uid maps, the pid-namespace fork, `pivot_root`, the capability
//! drop) under `pre_exec`'s async-signal-safe rules inside tokio. What the
//! tiers promise is spec.md §7. The flag set below was measured on this VM: no network
//! (only `lo`), read-only `/usr` and venv, no host `/etc`, `/root` or `/tmp`,
//! a private size-limited `/tmp` per call, capabilities 0, NoNewPrivs 1, a pid
//! namespace whose teardown kills `setsid` escapees, and user namespaces
//! disabled inside. Rust adds what bwrap does not do: rlimits, the drop from
//! root to an unprivileged uid (RLIMIT_NPROC is not enforced for root), fd
//! hygiene (inherited fds leak host files), a wall timeout and output caps.
//!
//! If bwrap cannot run (missing binary, user namespaces disabled) commands
//! still run, without containment: plain bash in its own process group with
//! the same rlimits, uid drop, env allowlist and timeout, HOME/TMPDIR in a
//! throwaway directory. [`Sandbox::info`] then says `available: false` and
//! why, and the server reports it rather than pretending.
//!
//! Operational notes:
//! - The workspace (and every parent directory of it) must be searchable by
//!   the sandbox uid, and the workspace writable by it: call
//!   [`prepare_workspace_owner`] after copying a template.
//! - RLIMIT_NPROC counts every process of a uid on the host. With one
//!   shared uid, a fork bomb in one session made every other session's
//!   commands and pytest runs fail with `bwrap: Creating new namespace
//!   failed: Resource temporarily unavailable` (tests/hacks.rs), which also
//!   zeroed their health. So, when the server is root, every command runs
//!   as its own uid leased from [`uid_pool`] (an `flock`ed lock file per
//!   uid, so concurrent server processes never share one either), and the
//!   workspace and read-write binds are handed to that uid first. No
//!   cgroups needed: the `nproc` budget is per command. The uid the
//!   workspace already has is tried first, so a session usually keeps its
//!   uid and the hand-over is a no-op walk. Fallback mode keeps the shared
//!   uid (see [`Sandbox::run`]).
//! - The outer bwrap gets PR_SET_PDEATHSIG, which fires when the *thread*
//!   that spawned it exits. Call [`Sandbox::run`] from async tasks on a
//!   runtime, not from `spawn_blocking` threads (they exit when idle).

mod confine;
mod procs;
mod sys;
mod tree;
mod uids;
mod watchdog;

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use tree::Tree;
pub use uids::{UID_POOL_BASE, UID_POOL_SIZE, sweep_orphans, uid_pool};
use uids::{UidLease, lease_uid, uid_lock_dir};

use crate::models::SandboxInfo;
pub use crate::models::SandboxTier as Tier;
pub use watchdog::Bound;

/// uid that runs commands (and owns workspaces) when the server is root:
/// `nobody`, which owns nothing else on the host.
pub const DEFAULT_UID: u32 = 65534;
/// gid matching [`DEFAULT_UID`] (`nogroup`).
pub const DEFAULT_GID: u32 = 65534;

/// True when the server runs as root, so that commands run as uids of
/// [`uid_pool`] that must reach the paths they are given themselves
/// (`crate::env::reach`).
pub fn server_is_root() -> bool {
    sys::is_root()
}

/// Where the workspace appears inside the sandbox (and the command's cwd).
pub const WORKSPACE_MOUNT: &str = "/workspace";

/// How long to keep reading output after the command ended, for pipes held
/// by a stray process (fallback mode only; bwrap's pid namespace kills it).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Resource limits for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock timeout; the whole process tree is killed at expiry.
    pub wall: Duration,
    /// RLIMIT_CPU in seconds (per process).
    pub cpu_secs: u64,
    /// RLIMIT_AS in bytes (per process).
    pub mem_bytes: u64,
    /// RLIMIT_FSIZE in bytes: the largest file a process may write.
    pub fsize_bytes: u64,
    /// RLIMIT_NPROC: processes of the sandbox uid (host-wide).
    pub nproc: u64,
    /// RLIMIT_NOFILE.
    pub nofile: u64,
    /// Bytes kept per output stream (half head, half tail); the rest is
    /// counted and dropped while the pipe keeps being drained.
    pub output_cap_bytes: usize,
    /// Size of the private `/tmp` tmpfs in bytes (bwrap tier; in the
    /// landlock tier the scratch directory counts toward `disk_bytes`).
    pub tmp_size: u64,
    /// All of a command's processes together: resident memory in bytes
    /// (RLIMIT_AS bounds only one process). Enforced by the watchdog.
    pub mem_total_bytes: u64,
    /// All of a command's processes together: how many may exist at once
    /// (RLIMIT_NPROC counts per uid, which is per command only when the
    /// server is root). Enforced by the watchdog.
    pub procs_total: u64,
    /// Bytes allocated in the workspace (and the landlock tier's scratch
    /// directory) together: RLIMIT_FSIZE bounds only one file. Enforced
    /// by the watchdog; equal to the health grader's copy budget, so a
    /// workspace a command may leave is one the grader can copy.
    pub disk_bytes: u64,
    /// Files, directories and links in the workspace (and scratch).
    pub inodes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall: Duration::from_secs(90),
            cpu_secs: 60,
            mem_bytes: 4 << 30,
            fsize_bytes: 100 << 20,
            nproc: 256,
            nofile: 1024,
            output_cap_bytes: 64 << 10,
            tmp_size: 64 << 20,
            mem_total_bytes: 2 << 30,
            procs_total: 256,
            disk_bytes: 256 << 20,
            inodes: 20_000,
        }
    }
}

/// How the sandbox is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The bwrap binary, by absolute path (never a PATH lookup).
    pub bwrap: PathBuf,
    /// The Python venv, bound read-only at the same path (its shebangs and
    /// `pyvenv.cfg` are absolute); its `bin` leads PATH.
    pub venv: PathBuf,
    /// uid to run as when the server is root.
    pub uid: u32,
    /// gid to run as when the server is root.
    pub gid: u32,
    /// Default limits (a request may override them).
    pub limits: Limits,
    /// Which containment tier to use.
    pub tier: TierChoice,
}

/// Which containment tier [`Sandbox::detect`] may pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TierChoice {
    /// bwrap if it can create its namespaces, else landlock, else none.
    #[default]
    Auto,
    /// bwrap or nothing.
    Bwrap,
    /// landlock or nothing (also on a host where bwrap would work: tests
    /// and benchmarks of the namespace-free tier).
    Landlock,
}

impl std::str::FromStr for TierChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(TierChoice::Auto),
            "bwrap" | "bubblewrap" => Ok(TierChoice::Bwrap),
            "landlock" => Ok(TierChoice::Landlock),
            other => Err(format!(
                "unknown sandbox tier {other:?} (auto, bwrap, landlock)"
            )),
        }
    }
}

impl TierChoice {
    /// From `SECAUDIT_SANDBOX` (unset: auto). Read by `serve` and by the
    /// tests, so one variable runs a whole suite in a chosen tier.
    pub fn from_env() -> Result<TierChoice, String> {
        std::env::var(TIER_ENV).unwrap_or_default().parse()
    }
}

/// The environment variable naming the tier ([`TierChoice`]).
pub const TIER_ENV: &str = "SECAUDIT_SANDBOX";

impl SandboxConfig {
    /// `/usr/bin/bwrap`, the given venv, uid/gid [`DEFAULT_UID`], default
    /// limits, the tier `SECAUDIT_SANDBOX` names (auto when unset).
    pub fn with_venv(venv: impl Into<PathBuf>) -> Self {
        SandboxConfig {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            venv: venv.into(),
            uid: DEFAULT_UID,
            gid: DEFAULT_GID,
            limits: Limits::default(),
            // `SECAUDIT_SANDBOX`, so one variable runs any suite or tool
            // in a chosen tier; unset or unparsable: auto.
            tier: TierChoice::from_env().unwrap_or_default(),
        }
    }
}

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

#[derive(Debug, Clone)]
enum Mode {
    Bwrap { version: String },
    Landlock(confine::Landlock),
    Fallback { reason: String },
}

/// The command runner. Cheap to share (`Arc<Sandbox>`); each `run` is
/// independent.
#[derive(Debug, Clone)]
pub struct Sandbox {
    cfg: SandboxConfig,
    mode: Mode,
}

impl Sandbox {
    /// Probes bwrap once by running `true` inside the full flag set (a few
    /// ms, synchronous). On failure the sandbox falls back to uncontained
    /// execution and [`Sandbox::info`] carries the reason.
    pub fn detect(cfg: SandboxConfig) -> Sandbox {
        let bwrap = match cfg.tier {
            TierChoice::Landlock => Err("landlock tier requested".to_string()),
            _ => probe(&cfg),
        };
        let mode = match bwrap {
            Ok(version) => Mode::Bwrap { version },
            Err(why_not_bwrap) if cfg.tier == TierChoice::Bwrap => Mode::Fallback {
                reason: why_not_bwrap,
            },
            Err(why_not_bwrap) => match probe_landlock(&cfg) {
                Ok(l) => Mode::Landlock(l),
                Err(e) => Mode::Fallback {
                    reason: format!("bubblewrap: {why_not_bwrap}; landlock: {e}"),
                },
            },
        };
        Sandbox { cfg, mode }
    }

    /// A sandbox that never uses bwrap (for tests of the fallback path).
    pub fn fallback(cfg: SandboxConfig, reason: impl Into<String>) -> Sandbox {
        Sandbox {
            cfg,
            mode: Mode::Fallback {
                reason: reason.into(),
            },
        }
    }

    /// Availability for observations and `/health`.
    pub fn info(&self) -> SandboxInfo {
        let uid_per_command = self.is_contained() && sys::is_root();
        match &self.mode {
            Mode::Bwrap { version } => SandboxInfo {
                available: true,
                tier: Tier::Bwrap,
                landlock_abi: None,
                uid_per_command,
                detail: version.clone(),
            },
            Mode::Landlock(l) => {
                let abi = l.abi_in_force();
                let mut detail = format!(
                    "landlock ABI {abi} (kernel {}), seccomp, supervising subreaper, {}",
                    l.abi,
                    if uid_per_command {
                        "a uid per command"
                    } else {
                        "commands share the server's uid"
                    }
                );
                if abi < 6 && !uid_per_command {
                    detail.push_str(
                        "; without Landlock ABI 6 signals to the server's own uid are not scoped",
                    );
                }
                SandboxInfo {
                    available: true,
                    tier: Tier::Landlock,
                    landlock_abi: Some(abi),
                    uid_per_command,
                    detail,
                }
            }
            Mode::Fallback { reason } => SandboxInfo {
                available: false,
                tier: Tier::None,
                landlock_abi: None,
                uid_per_command: false,
                detail: format!(
                    "no containment available, commands would run uncontained: {reason}"
                ),
            },
        }
    }

    /// True when commands run contained (bwrap or landlock tier).
    pub fn is_contained(&self) -> bool {
        !matches!(self.mode, Mode::Fallback { .. })
    }

    /// The tier in force.
    pub fn tier(&self) -> Tier {
        self.info().tier
    }

    /// Where a host directory given to a command (the workspace, a bind)
    /// appears to it: at `mount` under bwrap, at its own host path in the
    /// tiers without a mount namespace. Build command lines with this.
    pub fn path_inside(&self, host: &Path, mount: &Path) -> PathBuf {
        match self.mode {
            Mode::Bwrap { .. } => mount.to_path_buf(),
            _ => host.to_path_buf(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SandboxConfig {
        &self.cfg
    }

    /// The uid/gid that owns fresh workspaces, or None when the server is
    /// not root (commands then run as the server's own uid). Commands run
    /// as a per-command uid of [`uid_pool`] with this gid; this uid is the
    /// fallback when the pool is exhausted.
    pub fn run_as(&self) -> Option<(u32, u32)> {
        sys::is_root().then_some((self.cfg.uid, self.cfg.gid))
    }

    /// The owner to give a fresh tree (a workspace copy, a health copy)
    /// that commands will run in, or None when the server is not root.
    ///
    /// In bwrap mode a pool uid, taken in rotation: the first command
    /// prefers the uid that owns its workspace, so it usually leases
    /// exactly this one and (with [`ExecRequest::owned_by`]) skips the
    /// `lchown` walk, whose ctime changes would also void the tree's
    /// fingerprint and force a full regrade. Owning files at rest gives a
    /// pool uid nothing: a command sees no tree but its own, and the
    /// lease, not the at-rest owner, keeps concurrent commands apart. In
    /// fallback mode, or without the uid lock directory, commands run as
    /// the shared uid, so that is the owner.
    pub fn rest_owner(&self) -> Option<(u32, u32)> {
        let (uid, gid) = self.run_as()?;
        match self.mode {
            Mode::Bwrap { .. } | Mode::Landlock(_) if uid_lock_dir().is_some() => {
                Some((uids::next_in_rotation(), gid))
            }
            _ => Some((uid, gid)),
        }
    }

    /// Runs one command and waits for every process it started to be gone
    /// (bwrap mode) or killed (fallback mode). An `Err` means the sandbox
    /// could not be started at all; a failing or killed command is an `Ok`.
    ///
    /// When the server is root the command runs as a uid of its own from
    /// [`uid_pool`], which first gets the workspace and the read-write
    /// binds (see the module notes); the lease ends when every process of
    /// the command is gone.
    pub async fn run(&self, req: ExecRequest) -> io::Result<ExecOutput> {
        let limits = req
            .limits
            .clone()
            .unwrap_or_else(|| self.cfg.limits.clone());
        let mut ids = self.run_as();
        let mut lease = None;
        let mut owner_walk = Duration::ZERO;
        // Only in bwrap mode: there every process of the previous command
        // in this workspace is gone (its pid namespace is), so nothing can
        // swap a directory for a symlink under the root-run chown walk. In
        // fallback mode `setsid` escapees survive, so commands keep the
        // shared uid there.
        if let (Some((shared, gid)), true) = (ids, self.is_contained()) {
            let prefer = std::fs::symlink_metadata(&req.workspace)
                .ok()
                .map(|m| m.uid());
            let uid = match lease_uid(prefer) {
                Some(l) => {
                    let uid = l.uid;
                    lease = Some(l);
                    uid
                }
                None => {
                    tracing::warn!("uid pool exhausted: the command shares the sandbox uid");
                    shared
                }
            };
            owner_walk = hand_over(&req, uid, gid).await?;
            ids = Some((uid, gid));
        }
        let out = match &self.mode {
            Mode::Bwrap { .. } => self.run_bwrap(&req, &limits, ids, lease).await,
            Mode::Landlock(l) => self.run_landlock(l, &req, &limits, ids, lease).await,
            Mode::Fallback { .. } => self.run_fallback(&req, &limits, ids).await,
        };
        out.map(|o| ExecOutput { owner_walk, ..o })
    }

    /// Starts a sandbox for a command not known yet: a [`Warm`] built
    /// for `template` (everything but its command), so a later
    /// [`Sandbox::run_warm`] pays for the namespaces, mounts and process
    /// start-up here, off the step's critical path. None in fallback mode
    /// (nothing to save there) or when the spawn fails (the command then
    /// starts cold).
    ///
    /// Containment is the same as a cold run: the warm sandbox is a fresh
    /// bwrap with the same flags, used for exactly one command, and until
    /// the command arrives only the waiting script runs in it (nothing of
    /// the agent's). Call it, like [`Sandbox::run`], from an async task on
    /// the runtime (PR_SET_PDEATHSIG, see the module notes), and only when
    /// no command runs in the workspace (the lease prefers its owner).
    pub fn prewarm(&self, template: &ExecRequest) -> Option<Warm> {
        self.prewarm_as(template, false)
    }

    /// Starts `template`'s own command now, in a sandbox built for it,
    /// with its stdin held back: the process runs up to its first read of
    /// stdin and waits there until [`Sandbox::run_warm`] delivers the
    /// request's [`ExecRequest::stdin`] (then end of file). A command that
    /// does its request-independent start-up before reading stdin (the
    /// health grader's Python imports) pays for it here, off the critical
    /// path.
    ///
    /// Containment is a cold run's: a fresh bwrap with the same flags and
    /// binds, one request, and until delivery only the template's own
    /// (trusted) command runs, in whatever its binds hold. The caller
    /// decides what may sit in those binds before delivery. bwrap only,
    /// like [`Sandbox::prewarm`].
    pub fn prewarm_staged(&self, template: &ExecRequest) -> Option<Warm> {
        self.prewarm_as(template, true)
    }

    fn prewarm_as(&self, template: &ExecRequest, staged: bool) -> Option<Warm> {
        if !matches!(self.mode, Mode::Bwrap { .. }) {
            return None;
        }
        match self.spawn_warm(template, staged) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::debug!(error = %e, "cannot prewarm a sandbox; the next command starts cold");
                None
            }
        }
    }

    fn spawn_warm(&self, template: &ExecRequest, staged: bool) -> io::Result<Warm> {
        let limits = template
            .limits
            .clone()
            .unwrap_or_else(|| self.cfg.limits.clone());
        let root = std::fs::symlink_metadata(&template.workspace)?;
        let mut ids = self.run_as();
        let mut lease = None;
        if let Some((shared, gid)) = ids {
            let uid = match lease_uid(Some(root.uid())) {
                Some(l) => {
                    let uid = l.uid;
                    lease = Some(l);
                    uid
                }
                None => shared,
            };
            ids = Some((uid, gid));
        }
        // A staged command runs now and may write its read-write binds
        // before delivery: they are its uid's from the start (a cold run's
        // hand-over, made early). The caller keeps them small until then.
        if let (true, Some((uid, gid))) = (staged, ids) {
            for d in std::iter::once(&template.workspace)
                .chain(template.extra_rw_binds.iter().map(|(src, _)| src))
            {
                prepare_workspace_owner(d, uid, gid)?;
            }
        }
        let (info_r, info_w) = sys::pipe()?;
        let (cmd_r, cmd_w) = sys::pipe()?;
        let mut cmd = std::process::Command::new(&self.cfg.bwrap);
        // Staged: the command itself, its stdin the pipe. Else the
        // waiting script, reading the command from the pipe's fd.
        let (payload, stdin, keep) = if staged {
            (
                Payload::Command(&template.command),
                Stdio::from(cmd_r),
                vec![info_w.as_raw_fd()],
            )
        } else {
            let fd = cmd_r.as_raw_fd();
            (
                Payload::Await(fd),
                Stdio::null(),
                vec![info_w.as_raw_fd(), fd],
            )
        };
        cmd.args(bwrap_args(
            &self.cfg,
            template,
            &limits,
            Some(info_w.as_raw_fd()),
            payload,
        ));
        self.child_setup(&limits, &keep, ids).install(&mut cmd);
        cmd.env_clear().process_group(0);
        // The parent's copies of the read ends go with `cmd` (a staged
        // stdin) or here, or the pipes never reach EOF.
        let child = spawn(cmd, stdin);
        drop(info_w);
        let child = child?;
        let info = tokio::task::spawn_blocking(move || read_info_pid(info_r));
        Ok(Warm {
            key: WarmKey::of(template, &root, staged),
            limits,
            tree: Tree::new(child, Some(info), lease),
            cmd_w,
            ids,
        })
    }

    /// Runs `req` in `warm` when it was built for this request (same
    /// workspace directory, binds, environment and limits) and is still
    /// alive; otherwise drops it and runs `req` cold ([`Sandbox::run`]).
    /// The result is the same either way, [`ExecOutput::warm`] says which
    /// ran; the wall limit counts from the command's delivery.
    pub async fn run_warm(&self, warm: Option<Warm>, req: ExecRequest) -> io::Result<ExecOutput> {
        let Some(mut w) = warm else {
            return self.run(req).await;
        };
        let staged = w.key.staged.is_some();
        // A waiting script takes a command without NUL and has no stdin to
        // give; a staged one runs the command it was built for and takes
        // the request's stdin.
        let fits = (staged || (!req.command.contains('\0') && req.stdin.is_none()))
            && req
                .stdin
                .as_ref()
                .is_none_or(|b| b.len() <= MAX_STDIN_BYTES)
            && std::fs::symlink_metadata(&req.workspace)
                .is_ok_and(|m| w.key == WarmKey::of(&req, &m, staged))
            && w.tree.is_running();
        if !fits {
            tracing::debug!(
                staged,
                "a warm sandbox does not fit its request; running it cold"
            );
            drop(w);
            return self.run(req).await;
        }
        let mut owner_walk = Duration::ZERO;
        if let Some((uid, gid)) = w.ids {
            owner_walk = hand_over(&req, uid, gid).await?;
        }
        // The script reads to EOF; a pipe holds 64 KiB or less, so the
        // write may block until it does: off the runtime. A staged
        // command gets its stdin (then EOF).
        let payload = if staged {
            req.stdin.clone().unwrap_or_default()
        } else {
            let mut p = req.command.clone().into_bytes();
            p.extend_from_slice(COMMAND_END.as_bytes());
            p
        };
        let Warm {
            cmd_w,
            tree,
            limits,
            ..
        } = w;
        let sent =
            tokio::task::spawn_blocking(move || std::fs::File::from(cmd_w).write_all(&payload))
                .await
                .map_err(io::Error::other)?;
        if let Err(e) = sent {
            // Nothing ran: without the whole command the script exits.
            tracing::debug!(error = %e, "warm sandbox did not take its command; running it cold");
            drop(tree);
            return self.run(req).await;
        }
        let dirs = watchdog::writable(&req.workspace, &req.extra_rw_binds);
        let out = supervise(tree, &limits, dirs).await;
        out.map(|o| ExecOutput {
            owner_walk,
            warm: true,
            ..o
        })
    }

    async fn run_bwrap(
        &self,
        req: &ExecRequest,
        limits: &Limits,
        ids: Option<(u32, u32)>,
        lease: Option<UidLease>,
    ) -> io::Result<ExecOutput> {
        let (info_r, info_w) = sys::pipe()?;
        let mut cmd = std::process::Command::new(&self.cfg.bwrap);
        cmd.args(bwrap_args(
            &self.cfg,
            req,
            limits,
            Some(info_w.as_raw_fd()),
            Payload::Command(&req.command),
        ));
        self.child_setup(limits, &[info_w.as_raw_fd()], ids)
            .install(&mut cmd);
        cmd.env_clear().process_group(0);
        let child = spawn(cmd, stdin_of(req)?);
        // The parent's copy must go, or the info pipe never reaches EOF.
        drop(info_w);
        let child = child?;
        let info = tokio::task::spawn_blocking(move || read_info_pid(info_r));
        let dirs = watchdog::writable(&req.workspace, &req.extra_rw_binds);
        supervise(Tree::new(child, Some(info), lease), limits, dirs).await
    }

    /// The namespace-free tier ([`confine`]): `bash -lc` at the
    /// workspace's own path, under a supervising subreaper, with the
    /// Landlock ruleset and seccomp filters applied right before exec, a
    /// scratch directory of its own for HOME and TMPDIR (removed after),
    /// and the uid leased for it when the server is root.
    async fn run_landlock(
        &self,
        ll: &confine::Landlock,
        req: &ExecRequest,
        limits: &Limits,
        ids: Option<(u32, u32)>,
        lease: Option<UidLease>,
    ) -> io::Result<ExecOutput> {
        let (scratch, home) = scratch_for("sa-cmd-", ids)?;
        let mut rw = watchdog::writable(&req.workspace, &req.extra_rw_binds);
        rw.push(scratch.path().to_path_buf());
        let ro: Vec<PathBuf> = req.extra_ro_binds.iter().map(|(s, _)| s.clone()).collect();
        let ruleset = ll.ruleset(&self.cfg, &rw, &ro).map_err(io::Error::other)?;
        let (status_r, status_w) = sys::pipe()?;
        // A login shell as under bwrap, minus the host's /etc/profile,
        // which bwrap's sandbox does not have and Landlock would refuse.
        let mut cmd = self.host_bash(req, &["--noprofile", "-lc"], scratch.path(), &home);
        let mut setup = self.child_setup(limits, &[], ids);
        setup.supervise = Some(status_w.as_raw_fd());
        setup.confine = Some(sys::Confine {
            ruleset: ruleset.as_raw_fd(),
            filters: ll.filters.clone(),
        });
        if ids.is_none() {
            // RLIMIT_NPROC counts every task of the real uid, here the
            // server's own (its threads included): the budget is on top of
            // what the uid runs now. The watchdog's `procs_total` is the
            // per-command bound in this case.
            let base = procs::tasks_of_uid(sys::uid());
            if let Some(l) = setup
                .rlimits
                .iter_mut()
                .find(|l| l.resource == libc::RLIMIT_NPROC)
            {
                l.value = l.value.saturating_add(base);
            }
        }
        setup.install(&mut cmd);
        cmd.process_group(0);
        let child = spawn(cmd, stdin_of(req)?);
        drop(status_w);
        drop(ruleset);
        let child = child?;
        let main = sys::async_fd(status_r)?;
        let out = supervise(Tree::supervised(child, main, lease), limits, rw).await;
        // Every process of the command is gone (the supervisor exits only
        // then): nothing can swap a path under this removal.
        drop(scratch);
        out
    }

    async fn run_fallback(
        &self,
        req: &ExecRequest,
        limits: &Limits,
        ids: Option<(u32, u32)>,
    ) -> io::Result<ExecOutput> {
        let (scratch, home) = scratch_for("sa-fallback-", ids)?;
        let mut cmd = self.host_bash(req, &["-lc"], scratch.path(), &home);
        self.child_setup(limits, &[], ids).install(&mut cmd);
        cmd.process_group(0);
        let child = spawn(cmd, stdin_of(req)?)?;
        let dirs = watchdog::writable(&req.workspace, &req.extra_rw_binds);
        let out = supervise(Tree::new(child, None, None), limits, dirs).await;
        drop(scratch);
        out
    }

    /// `/usr/bin/bash FLAGS COMMAND` at the workspace's host path (the
    /// tiers without a mount namespace), with the allowlisted environment,
    /// HOME and TMPDIR in the command's scratch directory, then the
    /// request's own variables.
    fn host_bash(
        &self,
        req: &ExecRequest,
        flags: &[&str],
        scratch: &Path,
        home: &Path,
    ) -> std::process::Command {
        let mut cmd = std::process::Command::new("/usr/bin/bash");
        cmd.args(flags)
            .arg(&req.command)
            .current_dir(&req.workspace)
            .env_clear();
        for (k, v) in base_env(&self.cfg) {
            cmd.env(k, v);
        }
        cmd.env("HOME", home).env("TMPDIR", scratch);
        for (k, v) in &req.env {
            cmd.env(k, v);
        }
        cmd
    }

    fn child_setup(
        &self,
        limits: &Limits,
        keep_fds: &[i32],
        drop_to: Option<(u32, u32)>,
    ) -> sys::ChildSetup {
        let mut keep_fds = keep_fds.to_vec();
        keep_fds.sort_unstable();
        sys::ChildSetup {
            rlimits: vec![
                sys::Rlimit {
                    resource: libc::RLIMIT_NPROC,
                    value: limits.nproc,
                },
                sys::Rlimit {
                    resource: libc::RLIMIT_FSIZE,
                    value: limits.fsize_bytes,
                },
                sys::Rlimit {
                    resource: libc::RLIMIT_AS,
                    value: limits.mem_bytes,
                },
                sys::Rlimit {
                    resource: libc::RLIMIT_CPU,
                    value: limits.cpu_secs,
                },
                sys::Rlimit {
                    resource: libc::RLIMIT_NOFILE,
                    value: limits.nofile,
                },
                sys::Rlimit {
                    resource: libc::RLIMIT_CORE,
                    value: 0,
                },
            ],
            drop_to,
            keep_fds,
            max_fd: sys::max_fd(),
            parent_pid: std::process::id() as libc::pid_t,
            supervise: None,
            confine: None,
        }
    }
}

/// A command's own scratch directory (its TMPDIR, with HOME as `home/`),
/// handed to the command's uid when it has one; removed when dropped.
fn scratch_for(prefix: &str, ids: Option<(u32, u32)>) -> io::Result<(tempfile::TempDir, PathBuf)> {
    let scratch = tempfile::Builder::new().prefix(prefix).tempdir()?;
    let home = scratch.path().join("home");
    std::fs::create_dir(&home)?;
    if let Some((uid, gid)) = ids {
        prepare_workspace_owner(scratch.path(), uid, gid)?;
    }
    Ok((scratch, home))
}

/// Hands the workspace (unless the caller vouches it is owned already,
/// [`ExecRequest::owned_by`]) and the read-write binds to the uid a
/// command runs as, so it can write them. Returns the time it took.
async fn hand_over(req: &ExecRequest, uid: u32, gid: u32) -> io::Result<Duration> {
    let mut dirs = Vec::new();
    if req.owned_by != Some((uid, gid)) {
        dirs.push(req.workspace.clone());
    }
    dirs.extend(req.extra_rw_binds.iter().map(|(src, _)| src.clone()));
    if dirs.is_empty() {
        return Ok(Duration::ZERO);
    }
    let t = Instant::now();
    tokio::task::spawn_blocking(move || {
        dirs.iter()
            .try_for_each(|d| prepare_workspace_owner(d, uid, gid))
    })
    .await
    .map_err(io::Error::other)??;
    Ok(t.elapsed())
}

/// A sandbox started before its command ([`Sandbox::prewarm`]): bwrap
/// with the full flag set, its namespaces and mounts made, bash waiting
/// on a pipe for the one command it will run. Dropping it unused kills
/// it, init first ([`tree`]), and frees its uid once every process of it
/// is gone.
#[derive(Debug)]
pub struct Warm {
    // Dropped first (fields drop in order): with its command pipe closed
    // the waiting script runs nothing, whatever the kill below meets.
    cmd_w: OwnedFd,
    key: WarmKey,
    limits: Limits,
    tree: Tree,
    ids: Option<(u32, u32)>,
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
struct WarmKey {
    /// A staged sandbox's command (it runs already); None for the
    /// waiting script, which takes any command.
    staged: Option<String>,
    workspace: PathBuf,
    root: (u64, u64),
    extra_ro_binds: Vec<(PathBuf, PathBuf)>,
    extra_rw_binds: Vec<(PathBuf, PathBuf)>,
    env: Vec<(String, String)>,
    limits: Option<Limits>,
}

impl WarmKey {
    fn of(req: &ExecRequest, root: &std::fs::Metadata, staged: bool) -> WarmKey {
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

/// The allowlisted environment (everything else is cleared). HOME and
/// TMPDIR are added per mode.
fn base_env(cfg: &SandboxConfig) -> Vec<(String, String)> {
    let path = format!("{}/bin:/usr/local/bin:/usr/bin:/bin", cfg.venv.display());
    [
        ("PATH", path.as_str()),
        ("LANG", "C.UTF-8"),
        ("TZ", "UTC"),
        ("TERM", "dumb"),
        ("PYTHONHASHSEED", "0"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONNOUSERSITE", "1"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_PAGER", "cat"),
        ("PAGER", "cat"),
        ("GIT_EDITOR", "true"),
        ("EDITOR", "true"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_AUTHOR_NAME", "Agent"),
        ("GIT_AUTHOR_EMAIL", "agent@sandbox.invalid"),
        ("GIT_COMMITTER_NAME", "Agent"),
        ("GIT_COMMITTER_EMAIL", "agent@sandbox.invalid"),
        // Pinned so a commit (or stash, or rewrite) the agent makes has the
        // same id in every replay of the same actions: with the clock in it,
        // commit ids, and every observation that prints them, would differ.
        // After every generated task history, so `git log` order is natural.
        ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00+0000"),
        ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00+0000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The bwrap command line (what it must isolate: spec.md §7). Mount order matters: later
/// mounts cover earlier ones, so the venv comes after `--tmpfs /tmp` and the
/// extra binds after the workspace.
fn bwrap_args(
    cfg: &SandboxConfig,
    req: &ExecRequest,
    limits: &Limits,
    info_fd: Option<i32>,
    payload: Payload<'_>,
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(OsString::from));
    push(&[
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--symlink",
        "usr/sbin",
        "/sbin",
        // /usr/bin/awk and friends point into /etc/alternatives; the
        // loader cache only saves path searches. No other host /etc.
        "--ro-bind-try",
        "/etc/alternatives",
        "/etc/alternatives",
        "--ro-bind-try",
        "/etc/ld.so.cache",
        "/etc/ld.so.cache",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
    ]);
    push(&[
        &limits.tmp_size.to_string(),
        "--tmpfs",
        "/tmp",
        "--dir",
        "/tmp/home",
    ]);
    let bind = |a: &mut Vec<OsString>, flag: &str, src: &Path, dst: &Path| {
        a.push(flag.into());
        a.push(src.as_os_str().to_owned());
        a.push(dst.as_os_str().to_owned());
    };
    bind(&mut a, "--ro-bind-try", &cfg.venv, &cfg.venv);
    bind(&mut a, "--bind", &req.workspace, Path::new(WORKSPACE_MOUNT));
    for (src, dst) in &req.extra_rw_binds {
        bind(&mut a, "--bind", src, dst);
    }
    for (src, dst) in &req.extra_ro_binds {
        bind(&mut a, "--ro-bind", src, dst);
    }
    a.push("--chdir".into());
    a.push(WORKSPACE_MOUNT.into());
    a.push("--clearenv".into());
    let mut env = base_env(cfg);
    env.push(("HOME".into(), "/tmp/home".into()));
    env.push(("TMPDIR".into(), "/tmp".into()));
    env.extend(req.env.iter().cloned());
    for (k, v) in env {
        a.push("--setenv".into());
        a.push(k.into());
        a.push(v.into());
    }
    if let Some(fd) = info_fd {
        a.push("--info-fd".into());
        a.push(fd.to_string().into());
    }
    a.push("--".into());
    a.push("/usr/bin/bash".into());
    match payload {
        Payload::Command(c) => {
            a.push("-lc".into());
            a.push(c.into());
        }
        Payload::Await(fd) => {
            a.push("-c".into());
            a.push(await_script(fd).into());
        }
    }
    a
}

/// What the sandbox's bash runs.
#[derive(Debug, Clone, Copy)]
enum Payload<'a> {
    /// `bash -lc COMMAND`.
    Command(&'a str),
    /// A warm sandbox: wait for the command on this fd, then exec
    /// `bash -lc COMMAND` ([`await_script`]).
    Await(i32),
}

/// The waiting script of a warm sandbox: reads the whole command from
/// `fd` up to EOF, closes the fd, and replaces itself with exactly the
/// process a cold sandbox starts (`/usr/bin/bash -lc COMMAND`, pid 2
/// under bwrap's init, same environment: the script exports nothing).
/// The sender appends [`COMMAND_END`] and the script `y`, so trailing
/// newlines survive `$(...)`, and a sender that closed early (a warm
/// sandbox dropped unused) runs nothing: exit 125. The command never
/// contains NUL ([`Sandbox::run_warm`]).
///
/// `cat` on the inherited fd rather than bash's own `$(< /dev/fd/N)`
/// (0.4 ms faster): reopening the pipe through /proc is a permission
/// check against its owner, root, and the script runs unprivileged.
/// Nor `read -d ''`: bash reads a pipe a byte per syscall.
fn await_script(fd: i32) -> String {
    format!(
        "c=\"$(/usr/bin/cat <&{fd}; printf y)\"; exec {fd}<&-; case \"$c\" in *{COMMAND_END}y) ;; \
         *) echo 'secaudit: warm sandbox got no command' >&2; exit 125;; esac; \
         exec /usr/bin/bash -lc \"${{c%{COMMAND_END}y}}\""
    )
}

/// Sentinel after a command sent to a warm sandbox ([`await_script`]).
const COMMAND_END: &str = "x";

/// Spawns with `stdin` and piped, capped stdout/stderr. Not
/// `kill_on_drop`: a [`Tree`] ends what it spawned, in the right order.
fn spawn(cmd: std::process::Command, stdin: Stdio) -> io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn()
}

/// A cold command's stdin: `/dev/null`, or a pipe already holding the
/// request's bytes, its write end closed (so the reader meets EOF after
/// them). The bytes fit the pipe ([`MAX_STDIN_BYTES`]): the write
/// completes before anyone reads.
fn stdin_of(req: &ExecRequest) -> io::Result<Stdio> {
    let Some(bytes) = &req.stdin else {
        return Ok(Stdio::null());
    };
    if bytes.len() > MAX_STDIN_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("stdin of {} bytes exceeds {MAX_STDIN_BYTES}", bytes.len()),
        ));
    }
    let (r, w) = sys::pipe()?;
    std::fs::File::from(w).write_all(bytes)?;
    Ok(Stdio::from(r))
}

/// Reads bwrap's `--info-fd` JSON (`{"child-pid": N, ...}`) and returns the
/// host pid of the sandbox's pid 1. Bounded to 4 KiB.
fn read_info_pid(fd: OwnedFd) -> Option<i32> {
    let mut buf = Vec::new();
    std::fs::File::from(fd)
        .take(4096)
        .read_to_end(&mut buf)
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&buf).ok()?;
    v.get("child-pid")?
        .as_i64()
        .and_then(|p| i32::try_from(p).ok())
}

/// Waits for the command (killing it at the wall limit, or when the
/// [`watchdog`] finds it over a bound), collects capped output, and waits
/// until every process it started is gone: in bwrap mode the sandbox's pid
/// 1 (its exit tears down the pid namespace), in the landlock tier every
/// descendant of the supervisor. Nothing the command started survives the
/// return. Cancelled, it leaves the tree to its reaper.
async fn supervise(mut tree: Tree, limits: &Limits, dirs: Vec<PathBuf>) -> io::Result<ExecOutput> {
    let start = Instant::now();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let cap = limits.output_cap_bytes;
    let root = tree.root_pid();
    let child = tree.child();
    let out_task = child
        .stdout
        .take()
        .map(|s| tokio::spawn(capture(s, cap, stop_rx.clone())));
    let err_task = child
        .stderr
        .take()
        .map(|s| tokio::spawn(capture(s, cap, stop_rx.clone())));

    enum End {
        Exited(std::process::ExitStatus),
        Timeout,
        Over(watchdog::Breach),
    }
    let deadline = tokio::time::sleep(limits.wall);
    tokio::pin!(deadline);
    let mut tick =
        tokio::time::interval_at(tokio::time::Instant::now() + watchdog::TICK, watchdog::TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut n: u32 = 0;
    let end = {
        let main = tree.wait_main();
        tokio::pin!(main);
        loop {
            tokio::select! {
                st = &mut main => break End::Exited(st?),
                _ = &mut deadline => break End::Timeout,
                _ = tick.tick() => {
                    n += 1;
                    let (d, l) = (dirs.clone(), limits.clone());
                    let breach = tokio::task::spawn_blocking(move || watchdog::check(root, &d, &l, n))
                        .await
                        .ok()
                        .flatten();
                    if let Some(b) = breach {
                        break End::Over(b);
                    }
                }
            }
        }
    };
    let (status, timed_out, mut breach) = match end {
        End::Exited(st) => (st, false, None),
        End::Timeout => (tree.kill().await?, true, None),
        End::Over(b) => (tree.kill().await?, false, Some(b)),
    };
    // Killed by us: in every tier the sandbox was killed (no exit code,
    // SIGKILL), whatever the supervisor reported for its command.
    let (exit_code, signal) = if timed_out || breach.is_some() {
        (None, Some(libc::SIGKILL))
    } else {
        (status.code(), status.signal())
    };
    tree.settle().await;
    tree.finish();

    let collect = |task: Option<tokio::task::JoinHandle<Capture>>| async move {
        match task {
            Some(t) => t.await.unwrap_or_default(),
            None => Capture::default(),
        }
    };
    // Readers normally hit EOF as soon as the last process is gone; a
    // stray holder of the pipe (fallback mode) gets DRAIN_GRACE, then the
    // readers stop with what they have.
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(DRAIN_GRACE).await;
        let _ = stop_tx.send(true);
        // Keep the sender alive until aborted: a dropped sender would also
        // wake the readers.
        std::future::pending::<()>().await;
    });
    let (out, err) = tokio::join!(collect(out_task), collect(err_task));
    stopper.abort();
    let duration = start.elapsed();
    if breach.is_none() {
        // A command that ended between two ticks may still have filled
        // the disk: one walk at the end (bounded, like every walk).
        breach = tokio::task::spawn_blocking({
            let l = limits.clone();
            move || {
                if !sys::is_root() {
                    // Sized to what a command stopped at the inode bound
                    // can leave, with room for one tick's overshoot.
                    watchdog::unlock_tree(&dirs, l.inodes.saturating_mul(10));
                }
                // Every process is gone: no open file holds bytes now.
                watchdog::disk_breach(&dirs, &l, 0)
            }
        })
        .await
        .ok()
        .flatten();
    }
    let stderr_dropped = err.dropped;
    let mut stderr = err.into_string();
    if let Some(b) = &breach {
        stderr.push_str(&format!(
            "\n[secaudit: the command was stopped at the {} bound: {}]",
            b.bound.name(),
            b.message
        ));
    }
    Ok(ExecOutput {
        exit_code,
        signal,
        stdout_dropped: out.dropped,
        stderr_dropped,
        stdout: out.into_string(),
        stderr,
        timed_out,
        duration,
        owner_walk: Duration::ZERO,
        warm: false,
        bound: breach.map(|b| b.bound),
    })
}

/// One output stream: the first and last `cap/2` bytes and a count of the
/// rest.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    dropped: u64,
}

impl Capture {
    fn push(&mut self, mut data: &[u8], half: usize) {
        if self.head.len() < half {
            let n = (half - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.is_empty() {
            return;
        }
        self.tail.extend_from_slice(data);
        if self.tail.len() > 2 * half.max(1) {
            let excess = self.tail.len() - half;
            self.dropped += excess as u64;
            self.tail.drain(..excess);
        }
    }

    fn finish(&mut self, half: usize) {
        if self.tail.len() > half {
            let excess = self.tail.len() - half;
            self.dropped += excess as u64;
            self.tail.drain(..excess);
        }
    }

    fn into_string(self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            s.push_str(&format!("\n[... {} bytes omitted ...]\n", self.dropped));
        }
        s.push_str(&String::from_utf8_lossy(&self.tail));
        s
    }
}

/// Drains a pipe to EOF (or until told to stop), keeping head and tail.
async fn capture<R: tokio::io::AsyncRead + Unpin>(
    mut r: R,
    cap: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Capture {
    let half = cap / 2;
    let mut c = Capture::default();
    let mut buf = vec![0u8; 16 << 10];
    loop {
        tokio::select! {
            n = r.read(&mut buf) => match n {
                Ok(0) | Err(_) => break,
                Ok(n) => c.push(&buf[..n], half),
            },
            _ = stop.changed() => break,
        }
    }
    c.finish(half);
    c
}

/// Hands a tree to `uid:gid` without following symlinks (`lchown` on every
/// entry, descending only into real directories), so the sandbox uid can
/// write the workspace. Call it only while no sandbox runs in the tree: a
/// directory swapped for a symlink mid-walk would be followed by
/// `read_dir`. Bounded by the tree itself (iterative, no recursion depth).
pub fn prepare_workspace_owner(path: &Path, uid: u32, gid: u32) -> io::Result<()> {
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p)?;
        if meta.uid() != uid || meta.gid() != gid {
            std::os::unix::fs::lchown(&p, Some(uid), Some(gid))?;
        }
        if meta.file_type().is_dir() {
            for entry in std::fs::read_dir(&p)? {
                stack.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Runs `true` in the full sandbox, synchronously, and returns bwrap's
/// version, or why it cannot be used.
fn probe(cfg: &SandboxConfig) -> Result<String, String> {
    if !cfg.bwrap.is_absolute() {
        return Err(format!("{} is not an absolute path", cfg.bwrap.display()));
    }
    let version = std::process::Command::new(&cfg.bwrap)
        .arg("--version")
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot execute {}: {e}", cfg.bwrap.display()))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let ws = tempfile::Builder::new()
        .prefix("sa-probe-")
        .tempdir()
        .map_err(|e| format!("probe dir: {e}"))?;
    let sandbox = Sandbox {
        cfg: cfg.clone(),
        mode: Mode::Bwrap {
            version: version.clone(),
        },
    };
    if let Some((uid, gid)) = sandbox.run_as() {
        prepare_workspace_owner(ws.path(), uid, gid).map_err(|e| format!("probe dir: {e}"))?;
    }
    let limits = Limits {
        wall: Duration::from_secs(10),
        ..cfg.limits.clone()
    };
    let req = ExecRequest::bash(ws.path(), "true");
    let mut cmd = std::process::Command::new(&cfg.bwrap);
    cmd.args(bwrap_args(
        cfg,
        &req,
        &limits,
        None,
        Payload::Command(&req.command),
    ));
    sandbox
        .child_setup(&limits, &[], sandbox.run_as())
        .install(&mut cmd);
    cmd.env_clear()
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot spawn bwrap: {e}"))?;
    let deadline = Instant::now() + limits.wall;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("bwrap probe timed out".into());
            }
            Err(e) => return Err(format!("bwrap probe: {e}")),
        }
    };
    if status.success() {
        Ok(version)
    } else {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = (&mut e).take(4096).read_to_string(&mut err);
        }
        Err(format!("bwrap probe failed ({status}): {}", err.trim()))
    }
}

/// Probes the landlock tier: the kernel has Landlock, the filters build,
/// and `true` runs under the full confinement (synchronously, a few ms).
fn probe_landlock(cfg: &SandboxConfig) -> Result<confine::Landlock, String> {
    let ll = confine::Landlock::probe()?;
    let sandbox = Sandbox {
        cfg: cfg.clone(),
        mode: Mode::Landlock(ll.clone()),
    };
    let ws = tempfile::Builder::new()
        .prefix("sa-probe-")
        .tempdir()
        .map_err(|e| format!("probe dir: {e}"))?;
    if let Some((uid, gid)) = sandbox.run_as() {
        prepare_workspace_owner(ws.path(), uid, gid).map_err(|e| format!("probe dir: {e}"))?;
    }
    // The probe must not need the caller's runtime (detect is sync and may
    // be called from inside one): a small runtime on a thread of its own.
    let ws_path = ws.path().to_path_buf();
    let out = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("probe runtime: {e}"))?;
        let req = ExecRequest {
            limits: Some(Limits {
                wall: Duration::from_secs(10),
                ..sandbox.cfg.limits.clone()
            }),
            ..ExecRequest::bash(ws_path, "true")
        };
        rt.block_on(sandbox.run(req))
            .map_err(|e| format!("cannot start: {e}"))
    })
    .join()
    .map_err(|_| "probe thread panicked".to_string())??;
    if out.exit_code == Some(0) {
        Ok(ll)
    } else {
        Err(format!(
            "probe command failed (exit {:?}): {}",
            out.exit_code,
            out.stderr.trim()
        ))
    }
}

#[cfg(test)]
pub(crate) mod tests;
