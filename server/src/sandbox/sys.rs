//! The one place in `server` with `unsafe`: the code that runs in the forked
//! child between `fork` and `exec` (`Command::pre_exec`), plus the few libc
//! calls the parent needs (kill, lchown-free uid checks, pipes).
//!
//! Why unsafe is needed: rlimits, the uid drop and fd hygiene must apply to
//! the bwrap process itself, and doing them in `pre_exec` saves an extra
//! `prlimit`/`setpriv` exec per command (1–2 ms each, measured on this VM).
//! Everything in [`ChildSetup::apply`] is async-signal-safe: raw syscalls on
//! values computed before the fork, no allocation, no locks.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;

/// One resource limit to set (soft = hard).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rlimit {
    pub resource: libc::__rlimit_resource_t,
    pub value: u64,
}

/// Everything the child does before exec, computed in the parent.
#[derive(Debug, Clone)]
pub(super) struct ChildSetup {
    /// Limits to apply (NPROC, FSIZE, AS, CPU, NOFILE, CORE).
    pub rlimits: Vec<Rlimit>,
    /// Drop to this uid/gid (set when the server runs as root, because
    /// RLIMIT_NPROC is not enforced for root and root-owned bwrap keeps
    /// host-root file access to bound paths).
    pub drop_to: Option<(u32, u32)>,
    /// Fds to pass to the child (bwrap's `--info-fd`, a warm sandbox's
    /// command pipe), ascending; every other fd above 2 is made
    /// close-on-exec.
    pub keep_fds: Vec<RawFd>,
    /// Highest fd to sweep if `close_range` is unavailable.
    pub max_fd: i32,
    /// The parent's pid, to detect a parent that died before
    /// PR_SET_PDEATHSIG took effect.
    pub parent_pid: libc::pid_t,
    /// Landlock tier: fork a supervisor first ([`supervisor`]), which
    /// writes the command's wait status to this pipe when it exits.
    pub supervise: Option<RawFd>,
    /// Landlock tier: the confinement the command applies to itself.
    pub confine: Option<Confine>,
}

/// What a landlock-tier command applies to itself right before exec,
/// after the uid drop: `PR_SET_NO_NEW_PRIVS`, the Landlock ruleset, then
/// the seccomp filters (last: they would refuse nothing before, but
/// nothing after them is needed).
#[derive(Debug, Clone)]
pub(super) struct Confine {
    /// A Landlock ruleset fd (close-on-exec).
    pub ruleset: RawFd,
    /// Seccomp programs, installed in order.
    pub filters: std::sync::Arc<Vec<seccompiler::BpfProgram>>,
}

impl ChildSetup {
    /// Installs the setup as the command's `pre_exec` hook.
    pub fn install(self, cmd: &mut std::process::Command) {
        // SAFETY: `apply` only makes async-signal-safe syscalls on data
        // owned by the closure (the Vec was allocated before the fork and
        // is only read).
        unsafe {
            cmd.pre_exec(move || self.apply());
        }
    }

    /// Runs in the child after fork. Async-signal-safe only.
    fn apply(&self) -> io::Result<()> {
        let mut parent = self.parent_pid;
        if let Some(status_fd) = self.supervise {
            parent = fork_supervisor(status_fd, self.parent_pid)?;
        }
        // The OOM killer's first choice, and every descendant's (the
        // value is inherited): under memory pressure the command goes
        // before the server, and before the landlock tier's supervisor,
        // which, a forked copy of the server, counts the server's resident
        // pages as its own and would otherwise outrank a command spread
        // over many small processes (review rev32). Raising needs no
        // privilege (lowering below the default does, which a container
        // usually lacks); a command may lower it back to 0, and then the
        // uid backstop of a killed supervisor ([`super::tree`]) remains.
        // SAFETY: open/write/close on a static path and a static buffer.
        unsafe {
            let fd = libc::open(
                c"/proc/self/oom_score_adj".as_ptr(),
                libc::O_WRONLY | libc::O_CLOEXEC,
            );
            if fd >= 0 {
                libc::write(fd, b"1000".as_ptr().cast(), 4);
                libc::close(fd);
            }
        }
        // fd hygiene: mark every inherited fd ≥ 3 close-on-exec. CLOEXEC
        // rather than close, so std's own exec-error pipe keeps working.
        let mut next: u32 = 3;
        for &fd in &self.keep_fds {
            // SAFETY: plain fcntl on an fd number.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = fd as u32;
            if fd > next {
                cloexec_range(next, fd - 1, self.max_fd)?;
            }
            next = next.max(fd + 1);
        }
        cloexec_range(next, u32::MAX, self.max_fd)?;
        for l in &self.rlimits {
            let lim = libc::rlimit {
                rlim_cur: l.value,
                rlim_max: l.value,
            };
            // SAFETY: valid pointer to a stack value.
            if unsafe { libc::setrlimit(l.resource, &lim) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some((uid, gid)) = self.drop_to {
            // SAFETY: raw credential syscalls; a null list with size 0
            // clears the supplementary groups.
            unsafe {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(gid, gid, gid) != 0
                    || libc::setresuid(uid, uid, uid) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        // Kill the sandbox if the server dies. PDEATHSIG fires when the
        // forking *thread* exits (prctl(2)); tokio workers live as long as
        // the runtime, so callers must not spawn from short-lived threads
        // (spawn_blocking). Set after the uid change, which clears it.
        // SAFETY: prctl/getppid take no pointers.
        unsafe {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        if let Some(c) = &self.confine {
            // SAFETY: prctl and landlock_restrict_self take no pointers;
            // the seccomp programs were built before the fork and are
            // only read (apply_filter builds its sock_fprog on the stack).
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::syscall(libc::SYS_landlock_restrict_self, c.ruleset, 0) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            for f in c.filters.iter() {
                seccompiler::apply_filter(f)
                    .map_err(|_| io::Error::from_raw_os_error(libc::EPERM))?;
            }
        }
        Ok(())
    }
}

/// Forks the landlock tier's supervisor: this process becomes a child
/// subreaper and forks; the new child returns (and goes on to become the
/// command), this process never returns from here and runs
/// [`supervisor`]. Returns the supervisor's pid, the command's parent.
///
/// Why a supervisor: without a pid namespace nothing ends a command's
/// `setsid`/double-fork escapees when it returns. Every orphan of the
/// command is reparented to this subreaper, which reaps them and exits
/// only when none is left, so the server (which kills every descendant of
/// the supervisor once the command returned, see `procs`) always has the
/// whole tree below one pid.
fn fork_supervisor(status_fd: RawFd, server: libc::pid_t) -> io::Result<libc::pid_t> {
    // SAFETY: prctl/getppid/getpid/fork take no pointers; after fork the
    // parent only runs `supervisor`, which is async-signal-safe.
    unsafe {
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
            || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != server {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        let me = libc::getpid();
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                libc::close(status_fd);
                Ok(me)
            }
            command => supervisor(command, status_fd),
        }
    }
}

/// The supervisor's whole life: close every fd but the status pipe (so
/// the command's output pipes reach EOF with the command's processes and
/// the spawner's exec-error pipe closes), reap children until none is
/// left, write the command's wait status to the pipe as soon as it exits,
/// and exit with the command's code (128+N for signal N, as bwrap does).
/// Async-signal-safe only: raw syscalls, no allocation.
///
/// SIGPIPE is ignored: when the server kills a command (timeout, bound)
/// nobody reads the status any more, and the write that follows the main
/// process's death used to kill the supervisor while the rest of the tree
/// was still being killed, so what it had not reaped yet went to the
/// host's init, alive, as the command's uid (3 of 40 timed-out commands
/// under CPU load). The disposition is the supervisor's own: the command
/// was forked before it and keeps the default.
fn supervisor(command: libc::pid_t, status_fd: RawFd) -> ! {
    // SAFETY: raw syscalls on fd numbers and a stack status word.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::close_range(0, (status_fd as u32).saturating_sub(1), 0);
        libc::close_range(status_fd as u32 + 1, u32::MAX, 0);
        let mut code = 255;
        loop {
            let mut st: libc::c_int = 0;
            let r = libc::waitpid(-1, &mut st, libc::__WALL);
            if r == command {
                code = if libc::WIFEXITED(st) {
                    libc::WEXITSTATUS(st)
                } else if libc::WIFSIGNALED(st) {
                    128 + libc::WTERMSIG(st)
                } else {
                    255
                };
                let bytes = st.to_ne_bytes();
                libc::write(status_fd, bytes.as_ptr().cast(), bytes.len());
            } else if r < 0 && *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        libc::_exit(code)
    }
}

/// The kernel's Landlock ABI version, or a negative errno when it has
/// none (ENOSYS: not built in; EOPNOTSUPP: disabled at boot).
pub(super) fn landlock_abi() -> i32 {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // SAFETY: a null attribute pointer with size 0 is the documented
    // version query.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if r < 0 {
        -io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ENOSYS)
    } else {
        r as i32
    }
}

/// Adds `bits` to the mode of the directory or regular file at `path`
/// when this process owns it; never follows a symlink (the path is pinned
/// with `O_PATH|O_NOFOLLOW` and changed through that very inode). Used
/// where commands share the server's uid: a command's `chmod 000 dir`
/// would otherwise hide bytes from the watchdog and make the workspace
/// unremovable by the server.
pub(super) fn add_owner_bits(path: &std::path::Path, bits: u32) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: valid NUL-terminated path; the fd is closed below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat into a zeroed stack struct, on the fd just opened.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::fstat(fd, &mut st) };
    let kind = st.st_mode & libc::S_IFMT;
    let result = if r != 0 {
        Err(io::Error::last_os_error())
    } else if (kind == libc::S_IFDIR || kind == libc::S_IFREG)
        // SAFETY: geteuid has no preconditions.
        && st.st_uid == unsafe { libc::geteuid() }
        && st.st_mode & bits != bits
    {
        let link = std::ffi::CString::new(format!("/proc/self/fd/{fd}"))?;
        // SAFETY: chmod through the magic link of the pinned inode.
        if unsafe { libc::chmod(link.as_ptr(), (st.st_mode & 0o7777) | bits) } != 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    } else {
        Ok(())
    };
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(fd) };
    result
}

/// The real uid of this process.
pub(super) fn uid() -> u32 {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() }
}

/// The page size in bytes.
pub(super) fn page_size() -> u64 {
    // SAFETY: sysconf takes no pointers.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as u64 } else { 4096 }
}

/// Sets FD_CLOEXEC on fds `first..=last`, with `close_range` (Linux 5.11)
/// or a bounded fcntl sweep where it is missing.
fn cloexec_range(first: u32, last: u32, max_fd: i32) -> io::Result<()> {
    // SAFETY: close_range with CLOEXEC only changes fd flags.
    let r = unsafe { libc::close_range(first, last, libc::CLOSE_RANGE_CLOEXEC as libc::c_int) };
    if r == 0 {
        return Ok(());
    }
    let upper = (last.min(max_fd.max(0) as u32)) as i32;
    let mut fd = first as i32;
    while fd <= upper {
        // SAFETY: fcntl on a possibly closed fd just returns EBADF.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        fd += 1;
    }
    Ok(())
}

/// True when the process runs with effective uid 0.
pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The soft RLIMIT_NOFILE, capped, as the upper bound of the fd sweep.
pub(super) fn max_fd() -> i32 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 65_536;
    }
    lim.rlim_cur.min(1 << 20) as i32
}

/// Sends SIGKILL to a process.
pub(super) fn kill(pid: i32) {
    if pid > 1 {
        // SAFETY: kill takes no pointers.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// SIGKILLs every process whose real or saved uid is `uid`, in one
/// kernel walk: a forked child takes the uid (all three ids; it keeps no
/// capability) and calls `kill(-1, SIGKILL)`, which signals every process
/// it may signal but itself. The walk holds the task list lock, so a
/// process that forks cannot put a child beyond it, which a scan of
/// `/proc` followed by kills cannot promise: a lineage that forks and
/// exits in a loop stays one step ahead of such a scan (review rev32,
/// seen in CI under load). Refuses uid 0: as root, `kill(-1)` would
/// signal the host, and the server's own uid: it would signal the server.
///
/// The child's real and saved uid are `killer`, a uid nothing runs as, and
/// only its effective uid is `uid`: kill(2) lets a process signal another
/// whose real or saved uid is its own real or effective uid, so the child
/// reaches every process of `uid` while none of them can reach it (with
/// all three ids `uid`, a process of it could stop the child and hang
/// the wait, where Landlock does not scope signals: review rev34). A
/// child stopped all the same is killed, and the call fails.
pub(super) fn kill_all_of_uid(uid: u32, killer: u32) -> io::Result<()> {
    // SAFETY: geteuid takes nothing.
    let me = unsafe { libc::geteuid() };
    if uid == 0 || uid == me || killer == 0 || killer == me || killer == uid {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    // SAFETY: after fork the child only makes raw syscalls on integers
    // and exits; the parent waits on that one pid with a stack word.
    unsafe {
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                if libc::syscall(libc::SYS_setresuid, killer, uid, killer) != 0 {
                    libc::_exit(1);
                }
                // Twice: a process that was mid-fork when the first walk
                // ran has its child in the list by the second.
                libc::kill(-1, libc::SIGKILL);
                libc::kill(-1, libc::SIGKILL);
                libc::_exit(0)
            }
            pid => {
                let mut st = 0;
                loop {
                    if libc::waitpid(pid, &mut st, libc::WUNTRACED) < 0 {
                        let e = io::Error::last_os_error();
                        if e.kind() == io::ErrorKind::Interrupted {
                            continue;
                        }
                        return Err(e);
                    }
                    if !libc::WIFSTOPPED(st) {
                        break;
                    }
                    libc::kill(pid, libc::SIGKILL);
                }
                if libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0 {
                    Ok(())
                } else {
                    Err(io::Error::other(format!("uid killer ended with {st}")))
                }
            }
        }
    }
}

/// Sends SIGKILL to a process group.
pub(super) fn killpg(pgid: i32) {
    if pgid > 1 {
        // SAFETY: killpg takes no pointers.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

/// A pidfd for `pid` (Linux 5.3+), close-on-exec; readable once the
/// process has exited.
pub(super) fn pidfd_open(pid: i32) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags, no pointers.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the syscall just returned this fd; we own it.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Sends SIGKILL through a pidfd: to exactly the process the pidfd was
/// opened for, never to a later holder of its pid.
pub(super) fn pidfd_kill(fd: &std::os::fd::OwnedFd) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: pidfd_send_signal with a null siginfo and no flags.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Registers an fd with the tokio reactor for readability: a pidfd is
/// readable once its process has exited, a pipe's read end once there is
/// data or every writer is gone.
pub(super) fn async_fd(
    fd: std::os::fd::OwnedFd,
) -> io::Result<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    // SAFETY: the AsyncFd owns the OwnedFd, which stays open and the same
    // fd until the AsyncFd is dropped.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|e| io::Error::other(e.to_string()))
}

/// A close-on-exec pipe: (read end, write end).
pub(super) fn pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: valid out array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 just returned these fds; we own them.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// Test helper: opens `path` read-only *without* O_CLOEXEC, the way a
/// careless library or a C dependency would, and returns the raw fd.
#[cfg(test)]
pub(super) fn open_inheritable(path: &std::path::Path) -> io::Result<RawFd> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: valid NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY) };
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(fd)
    }
}

/// Test helper: wraps a raw fd returned by [`open_inheritable`].
#[cfg(test)]
pub(super) fn own_fd(fd: RawFd) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: the fd came from open_inheritable and is owned by no one else.
    unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
}

/// Takes an exclusive `flock` on `f` without blocking; true if held now.
/// Released when the file is closed, or when the process dies.
pub(super) fn try_lock(f: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a valid open fd; no memory is passed.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}
