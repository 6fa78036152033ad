//! The one place in `server` with `unsafe`: the code that runs in the forked
//! child between `fork` and `exec` (`Command::pre_exec`), plus the few libc
//! calls the parent needs (kill, lchown-free uid checks, pipes).
//!
//! Why unsafe is needed: rlimits, the uid drop and fd hygiene must apply to
//! the bwrap process itself, and doing them in `pre_exec` saves an extra
//! `prlimit`/`setpriv` exec per command (1–2 ms each, reliability.md §3).
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
            if libc::getppid() != self.parent_pid {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        Ok(())
    }
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

/// Registers a pidfd with the tokio reactor (readable once the process
/// has exited).
pub(super) fn async_pidfd(
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
