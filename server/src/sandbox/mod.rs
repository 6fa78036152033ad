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

mod bwrap;
mod config;
mod confine;
mod exec;
mod probe;
mod procs;
mod run;
mod service;
mod sys;
mod tree;
mod uids;
mod warm;
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

use bwrap::*;
pub use config::*;
pub use exec::*;
pub use probe::*;
use run::*;
pub use service::*;
pub use warm::*;

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

/// Host files under `/etc` a command may read, in every tier alike: what
/// the binaries need (`/usr/bin/awk` and friends point into
/// `alternatives`; the loader cache only saves path searches) and public
/// system tables the standard library reads when they exist (`mimetypes`
/// reads `mime.types`, `socket.getservbyname` the other two). The landlock
/// tier cannot hide a host file, only refuse it, so a file missing from
/// this list exists there but fails to open: an honest app calling
/// `mimetypes.guess_type` failed in that tier and worked under bubblewrap.
/// No other host `/etc` (not `localtime`: every tier runs in UTC).
pub(crate) const SYSTEM_ETC: &[&str] = &[
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/mime.types",
    "/etc/protocols",
    "/etc/services",
];

/// How long to keep reading output after the command ended, for pipes held
/// by a stray process (fallback mode only; bwrap's pid namespace kills it).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

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
        match self.spawn_warm(template, staged, None) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::debug!(error = %e, "cannot prewarm a sandbox; the next command starts cold");
                None
            }
        }
    }

    /// `filter`: a seccomp program (raw `sock_filter`s) bwrap installs on
    /// the command.
    fn spawn_warm(
        &self,
        template: &ExecRequest,
        staged: bool,
        filter: Option<&[u8]>,
    ) -> io::Result<Warm> {
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
        // The program, whole in a pipe bwrap reads to its end (a few KiB,
        // under a pipe's capacity).
        let filter_r = match filter {
            Some(bytes) => {
                let (r, w) = sys::pipe()?;
                std::fs::File::from(w).write_all(bytes)?;
                Some(r)
            }
            None => None,
        };
        let mut cmd = std::process::Command::new(&self.cfg.bwrap);
        // Staged: the command itself, its stdin the pipe. Else the
        // waiting script, reading the command from the pipe's fd.
        let (payload, stdin, mut keep) = if staged {
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
        keep.extend(filter_r.as_ref().map(|r| r.as_raw_fd()));
        cmd.args(bwrap_args_filtered(
            &self.cfg,
            template,
            &limits,
            Some(info_w.as_raw_fd()),
            filter_r.as_ref().map(|r| r.as_raw_fd()),
            payload,
        ));
        self.child_setup(&limits, &keep, ids).install(&mut cmd);
        cmd.env_clear().process_group(0);
        // The parent's copies of the read ends go with `cmd` (a staged
        // stdin) or here, or the pipes never reach EOF.
        let child = spawn(cmd, stdin);
        drop(info_w);
        drop(filter_r);
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

/// A command's scratch directory, removed when dropped by
/// [`crate::treeremove`], however deep the command made it (the recursive
/// removal of `TempDir`'s own drop overflowed a thread's stack).
#[derive(Debug)]
struct CmdScratch(tempfile::TempDir);

impl CmdScratch {
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for CmdScratch {
    fn drop(&mut self) {
        if let Err(e) = crate::treeremove::remove_tree(self.0.path()) {
            tracing::warn!(error = %e, "cannot remove a command's scratch directory");
        }
    }
}

/// A command's own scratch directory (its TMPDIR, with HOME as `home/`),
/// handed to the command's uid when it has one; removed when dropped.
fn scratch_for(prefix: &str, ids: Option<(u32, u32)>) -> io::Result<(CmdScratch, PathBuf)> {
    let scratch = CmdScratch(tempfile::Builder::new().prefix(prefix).tempdir()?);
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

#[cfg(test)]
pub(crate) mod tests;
