//! The uid pool: every command runs as a uid of its own when the server
//! is root (see the notes of [`super`]), leased through an `flock`ed lock
//! file per uid, so concurrent commands, and concurrent server processes,
//! never share one; and the sweep of what a dead server left running.

use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::sys;

/// First uid of the per-command pool (see the module notes). Far above
/// the ranges distributions and `subuid` allocate from.
pub const UID_POOL_BASE: u32 = 1_500_000;
/// Uids in the pool: concurrent commands beyond this fall back to the
/// shared [`super::SandboxConfig::uid`].
pub const UID_POOL_SIZE: u32 = 4096;

/// The real and saved uid of the process that kills a pool uid's
/// processes ([`sys::kill_all_of_uid`]): just below the pool, outside it,
/// never leased, so nothing runs as it and no command can signal it.
const KILLER_UID: u32 = UID_POOL_BASE - 1;

/// The uids commands may run as, besides [`super::SandboxConfig::uid`].
pub fn uid_pool() -> std::ops::Range<u32> {
    UID_POOL_BASE..UID_POOL_BASE + UID_POOL_SIZE
}

/// A uid held for one command: the `flock` on its lock file is released
/// when this is dropped (or the process dies).
#[derive(Debug)]
pub(super) struct UidLease {
    pub(super) uid: u32,
    _lock: std::fs::File,
}

/// The directory of the uid lock files, root's and private; None when it
/// cannot be made (then commands share the configured uid).
pub(super) fn uid_lock_dir() -> Option<&'static Path> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::DirBuilderExt;
        for d in [
            PathBuf::from("/run/secaudit-uids"),
            std::env::temp_dir().join("secaudit-uids"),
        ] {
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&d);
            match std::fs::symlink_metadata(&d) {
                Ok(m) if m.is_dir() && m.uid() == 0 && m.mode() & 0o022 == 0 => return Some(d),
                _ => continue,
            }
        }
        None
    })
    .as_deref()
}

/// Rotates through the pool: where a lease without a preference starts,
/// and the at-rest owner of fresh trees ([`super::Sandbox::rest_owner`]).
static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The next uid of the rotation.
pub(super) fn next_in_rotation() -> u32 {
    UID_POOL_BASE + NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % UID_POOL_SIZE
}

/// Leases a free uid of the pool, trying `prefer` first.
pub(super) fn lease_uid(prefer: Option<u32>) -> Option<UidLease> {
    let dir = uid_lock_dir()?;
    let start = match prefer.filter(|u| uid_pool().contains(u)) {
        Some(u) => u - UID_POOL_BASE,
        None => next_in_rotation() - UID_POOL_BASE,
    };
    (0..UID_POOL_SIZE).find_map(|i| try_lease(dir, UID_POOL_BASE + (start + i) % UID_POOL_SIZE))
}

/// Leases exactly `uid`, if no one holds it.
fn try_lease(dir: &Path, uid: u32) -> Option<UidLease> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(uid.to_string()))
        .ok()?;
    sys::try_lock(&f).then_some(UidLease { uid, _lock: f })
}

/// Kills what a dead server left running as pool uids; returns how many
/// processes it killed.
///
/// A lease ends once its command's processes are gone ([`super::tree`]),
/// or when its holder dies. A server killed or crashed while a sandbox
/// was starting can leave that sandbox behind, and nothing will end it:
/// bwrap's namespace child has no PR_SET_PDEATHSIG before its init runs
/// (see [`super::tree`]). Such a process runs as a pool uid whose lock
/// nobody holds. So each pool uid that has processes is leased here (a
/// live server's commands hold theirs, so they are never touched), every
/// process of it killed, and the lease given back. Only when root: uids
/// are leased only then. Call it at start-up, before commands run.
pub fn sweep_orphans() -> usize {
    let Some(dir) = uid_lock_dir().filter(|_| sys::is_root()) else {
        return 0;
    };
    let mut uids: Vec<u32> = pool_processes().into_iter().map(|(_, u)| u).collect();
    uids.sort_unstable();
    uids.dedup();
    let mut killed = 0;
    for uid in uids {
        let Some(lease) = try_lease(dir, uid) else {
            continue;
        };
        killed += kill_uid(uid);
        tracing::debug!(uid, "killed processes left running by a dead server");
        drop(lease);
    }
    killed
}

/// SIGKILLs every live process whose real uid is `uid` (a pool uid);
/// returns how many it signalled (one dying as it is counted may count
/// twice). For a uid whose lease the caller
/// holds: no command of another lease runs as it. First all of them at
/// once ([`sys::kill_all_of_uid`]: a scan and kill in rounds loses to a
/// lineage that forks and exits faster than a round), then rounds over
/// `/proc` for whatever that missed (only if it could not run), each pid
/// pinned by a pidfd. Zombies are skipped: they run nothing, and a parent
/// that never reaps (a container's init may not) would keep them forever.
pub(super) fn kill_uid(uid: u32) -> usize {
    if !uid_pool().contains(&uid) {
        return 0;
    }
    let mut killed = processes_of(uid).len();
    // Whatever the scan saw: it can miss every member of a lineage that
    // hops faster than `/proc` is read.
    if let Err(e) = sys::kill_all_of_uid(uid, KILLER_UID) {
        tracing::warn!(uid, error = %e, "could not kill a pool uid's processes at once; killing them one by one");
    }
    for _ in 0..100 {
        let pids = processes_of(uid);
        if pids.is_empty() {
            break;
        }
        for pid in pids {
            // Pinned, then checked again: the pid may have been reused.
            if let Ok(fd) = sys::pidfd_open(pid)
                && uid_of(pid) == Some(uid)
                && sys::pidfd_kill(&fd).is_ok()
            {
                killed += 1;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    killed
}

/// The pids of every live host process running as pool uid `uid`.
pub(super) fn processes_of(uid: u32) -> Vec<i32> {
    pool_processes()
        .into_iter()
        .filter(|&(_, u)| u == uid)
        .map(|(p, _)| p)
        .collect()
}

/// Every live (not zombie) host process running as a pool uid: (pid,
/// uid).
pub(super) fn pool_processes() -> Vec<(i32, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, uid_of(pid)?)))
        .filter(|(_, uid)| uid_pool().contains(uid))
        .collect()
}

/// The real uid of a live process, from `/proc/PID/status`; None for a
/// zombie (or a pid that is gone). A zombie *leader* is not enough: a
/// process whose main thread exited while another thread runs shows
/// `Z` in its status and lives on (review rev32), so its threads decide.
fn uid_of(pid: i32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let state = status.lines().find_map(|l| l.strip_prefix("State:"))?;
    if is_dead_state(state.trim_start()) && !has_live_thread(pid) {
        return None;
    }
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A zombie or dead task's state (`Z`, `X`), as `/proc` spells it.
fn is_dead_state(state: &str) -> bool {
    matches!(state.chars().next(), Some('Z' | 'X'))
}

/// True when some thread of `pid` is neither zombie nor dead.
pub(super) fn has_live_thread(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next())
                .is_some_and(|st| !is_dead_state(st))
        })
    })
}
