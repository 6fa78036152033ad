//! The per-command bounds that no rlimit gives: memory and processes of
//! the whole command together, and the bytes and inodes of its workspace
//! (and scratch directory). The same in both tiers: while a command runs,
//! [`super::supervise`] asks [`check`] every [`TICK`]; a command over a
//! bound is killed, and its output says which bound and by how much.
//!
//! Why measure and kill rather than let the kernel refuse: inside an
//! unprivileged container the server can neither create a cgroup
//! (`memory.max`, `pids.max`) nor mount a size- and inode-limited
//! filesystem, so a watchdog is the one mechanism that works everywhere.
//! Its cost is a `/proc` scan each tick and a bounded walk of the
//! workspace every [`DISK_EVERY`] ticks, only while a command runs. What
//! it cannot do is refuse the write that crosses the bound: a command may
//! overshoot by what it writes or allocates in one tick (RLIMIT_FSIZE and
//! RLIMIT_AS still cap each file and process).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Limits, procs};

/// How often a running command is measured.
pub(super) const TICK: Duration = Duration::from_millis(100);

/// The workspace walk runs every this many ticks. Every tick: page-cache
/// writes reach hundreds of MB a second, so each skipped tick is that much
/// overshoot, and a walk stops at the bound (about 10 ms at 20,000
/// entries, well under 1 ms for a task's workspace).
pub(super) const DISK_EVERY: u32 = 1;

/// A bound a command crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Resident memory of all its processes together.
    Memory,
    /// Number of its processes.
    Processes,
    /// Bytes allocated in its workspace and scratch directory.
    Disk,
    /// Entries in its workspace and scratch directory.
    Inodes,
}

impl Bound {
    /// The name used in observations (`last_action.limit_exceeded`).
    pub fn name(self) -> &'static str {
        match self {
            Bound::Memory => "memory",
            Bound::Processes => "processes",
            Bound::Disk => "disk",
            Bound::Inodes => "inodes",
        }
    }
}

/// A crossed bound with what was measured, for the command's stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Breach {
    pub bound: Bound,
    pub message: String,
}

/// Measures the command below `root` (tick number `tick`) against
/// `limits`; `dirs` are its writable trees. Blocking (a `/proc` scan and
/// maybe a walk): run it off the runtime's worker threads.
pub(super) fn check(root: i32, dirs: &[PathBuf], limits: &Limits, tick: u32) -> Option<Breach> {
    let u = procs::usage(root);
    if u.rss > limits.mem_total_bytes {
        return Some(Breach {
            bound: Bound::Memory,
            message: format!(
                "its processes held {} MiB of memory together (bound {} MiB)",
                u.rss >> 20,
                limits.mem_total_bytes >> 20
            ),
        });
    }
    if u.procs > limits.procs_total {
        return Some(Breach {
            bound: Bound::Processes,
            message: format!(
                "it ran {} processes at once (bound {})",
                u.procs, limits.procs_total
            ),
        });
    }
    if tick.is_multiple_of(DISK_EVERY) {
        return disk_breach(dirs, limits, u.unlinked_disk);
    }
    None
}

/// The workspace bounds alone (also checked once when a command ends, so
/// a short command that fills the disk is caught too); `unlinked` is what
/// the command's open but nameless files hold on disk.
pub(super) fn disk_breach(dirs: &[PathBuf], limits: &Limits, unlinked: u64) -> Option<Breach> {
    let mut d = disk_usage(dirs, limits.disk_bytes, limits.inodes);
    if let Some(why) = d.unmeasured {
        return Some(Breach {
            bound: Bound::Disk,
            message: format!(
                "the workspace holds {why}: what cannot be measured counts as over the bound"
            ),
        });
    }
    d.bytes += unlinked;
    if d.bytes > limits.disk_bytes {
        return Some(Breach {
            bound: Bound::Disk,
            message: format!(
                "the workspace held more than {} MiB (bound {} MiB)",
                d.bytes >> 20,
                limits.disk_bytes >> 20
            ),
        });
    }
    if d.entries > limits.inodes {
        return Some(Breach {
            bound: Bound::Inodes,
            message: format!(
                "the workspace held more than {} files and directories (bound {})",
                d.entries, limits.inodes
            ),
        });
    }
    None
}

/// Gives this process (the server) back read, write and search on every
/// directory and read/write on every file it owns under `dirs`, never
/// following links; bounded by `max_entries`. Needed only where commands
/// share the server's uid (a non-root server): a command's `chmod 000`
/// would otherwise hide bytes from [`disk_usage`], fail grading and make
/// the session's directory unremovable. Root needs none of it.
pub(super) fn unlock_tree(dirs: &[PathBuf], max_entries: u64) {
    let mut n = 0u64;
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(p) = stack.pop() {
        let _ = super::sys::add_owner_bits(&p, 0o700);
        let Ok(rd) = std::fs::read_dir(&p) else {
            continue;
        };
        for e in rd.flatten() {
            n += 1;
            if n > max_entries {
                return;
            }
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                let _ = super::sys::add_owner_bits(&e.path(), 0o600);
            }
        }
    }
}

/// Bytes allocated and entries under some trees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct DiskUsage {
    pub bytes: u64,
    pub entries: u64,
    /// A directory the walk could not read (and why): what it holds is
    /// not counted, so the walk stops and the bound counts as broken.
    pub unmeasured: Option<&'static str>,
}

/// Whether a walk may pass over `e`: the entry went away, or stopped being
/// a directory, while it was walked (the command is still running).
fn raced(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

/// Walks `dirs` without following links, counting allocated bytes
/// (`st_blocks`, so sparse files count what they use) and entries; stops
/// as soon as either passes its bound, so a tree of a million files costs
/// no more than one at the bound.
pub(super) fn disk_usage(dirs: &[PathBuf], max_bytes: u64, max_entries: u64) -> DiskUsage {
    let mut u = DiskUsage::default();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    // Unreadable is not empty: a path past PATH_MAX (17 directories of
    // 255-byte names) hid every byte below it from this walk, and a
    // command wrote without bound (red team, issue 21). Such a tree is
    // over the bound by definition.
    let unreadable = |e: &std::io::Error| match e.raw_os_error() {
        Some(libc::ENAMETOOLONG) => "a path longer than the system allows",
        _ => "a directory the server cannot read",
    };
    while let Some(p) = stack.pop() {
        let rd = match std::fs::read_dir(&p) {
            Ok(rd) => rd,
            Err(e) if raced(&e) => continue,
            // A directory the command locked against its owner (commands
            // share a non-root server's uid): unlocked, not skipped.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                let _ = super::sys::add_owner_bits(&p, 0o700);
                match std::fs::read_dir(&p) {
                    Ok(rd) => rd,
                    Err(e) if raced(&e) => continue,
                    Err(e) => {
                        u.unmeasured = Some(unreadable(&e));
                        return u;
                    }
                }
            }
            Err(e) => {
                u.unmeasured = Some(unreadable(&e));
                return u;
            }
        };
        for e in rd {
            let e = match e {
                Ok(e) => e,
                Err(err) if raced(&err) => continue,
                Err(err) => {
                    u.unmeasured = Some(unreadable(&err));
                    return u;
                }
            };
            let m = match e.metadata() {
                Ok(m) => m,
                Err(err) if raced(&err) => continue,
                Err(err) => {
                    u.unmeasured = Some(unreadable(&err));
                    return u;
                }
            };
            u.entries += 1;
            u.bytes += m.blocks() * 512;
            if m.is_dir() {
                stack.push(e.path());
            }
            if u.bytes > max_bytes || u.entries > max_entries {
                return u;
            }
        }
    }
    u
}

/// The trees a command can write, to measure: its workspace and the
/// read-write extras.
pub(super) fn writable(workspace: &Path, extra: &[(PathBuf, PathBuf)]) -> Vec<PathBuf> {
    std::iter::once(workspace.to_path_buf())
        .chain(extra.iter().map(|(src, _)| src.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past PATH_MAX the walk cannot read a directory by its path: that is
    /// a breach, never an empty directory.
    #[test]
    fn a_tree_past_path_max_is_over_the_bound() {
        let d = tempfile::tempdir().unwrap();
        let name = "d".repeat(255);
        // Built from the inside out so that no call needs the long path.
        let chain = d.path().join("c");
        std::fs::create_dir(&chain).unwrap();
        std::fs::write(chain.join("big"), vec![1u8; 64 << 10]).unwrap();
        for _ in 0..17 {
            let next = d.path().join("n");
            std::fs::create_dir(&next).unwrap();
            std::fs::rename(&chain, next.join(&name)).unwrap();
            std::fs::rename(&next, &chain).unwrap();
        }
        let u = disk_usage(std::slice::from_ref(&chain), u64::MAX, u64::MAX);
        assert!(u.unmeasured.is_some(), "{u:?}");
        let lim = Limits::default();
        let b = disk_breach(std::slice::from_ref(&chain), &lim, 0).expect("a breach");
        assert_eq!(b.bound, Bound::Disk);
        assert!(b.message.contains("longer than"), "{}", b.message);
        crate::treeremove::remove_tree(&chain).unwrap();
    }

    #[test]
    fn disk_walk_counts_and_stops_at_the_bound() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..50 {
            std::fs::write(d.path().join(format!("f{i}")), vec![7u8; 8192]).unwrap();
        }
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let all = disk_usage(&[d.path().to_path_buf()], u64::MAX, u64::MAX);
        assert_eq!(all.entries, 51);
        assert!(all.bytes >= 50 * 8192, "{all:?}");
        let stopped = disk_usage(&[d.path().to_path_buf()], u64::MAX, 10);
        assert_eq!(stopped.entries, 11, "stops right after the bound");
        let lim = Limits {
            inodes: 10,
            ..Limits::default()
        };
        assert_eq!(
            disk_breach(&[d.path().to_path_buf()], &lim, 0).map(|b| b.bound),
            Some(Bound::Inodes)
        );
        let lim = Limits {
            disk_bytes: 100 << 10,
            ..Limits::default()
        };
        assert_eq!(
            disk_breach(&[d.path().to_path_buf()], &lim, 0).map(|b| b.bound),
            Some(Bound::Disk)
        );
        assert_eq!(
            disk_breach(&[d.path().to_path_buf()], &Limits::default(), 0),
            None
        );
        // Bytes the walk cannot see (unlinked open files) count too.
        assert_eq!(
            disk_breach(&[d.path().to_path_buf()], &Limits::default(), 300 << 20).map(|b| b.bound),
            Some(Bound::Disk)
        );
    }
}
