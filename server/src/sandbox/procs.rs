//! A command's processes as the host sees them: every descendant of the
//! process the server spawned (bwrap, or the landlock tier's supervisor),
//! found by following parent pids in `/proc`.
//!
//! Why a `/proc` scan: the per-command bounds on total memory and process
//! count must hold in both tiers, and neither cgroups (read-only inside a
//! Docker container) nor `/proc/PID/task/TID/children` (absent on kernels
//! built without CONFIG_PROC_CHILDREN, such as this VM's) can be relied
//! on. A scan costs about a millisecond per few hundred host processes and
//! runs only while a command runs ([`super::supervise`]'s watchdog), and
//! once at its end in the landlock tier, to kill what the command left.

use std::collections::HashMap;

use super::sys;

/// One host process: its parent and resident memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Proc {
    pub pid: i32,
    pub ppid: i32,
    /// Resident set size in bytes.
    pub rss: u64,
}

/// Every process in `/proc` (unreadable or vanished entries are skipped).
pub(super) fn snapshot() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let page = sys::page_size();
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| parse_stat(pid, &std::fs::read(format!("/proc/{pid}/stat")).ok()?, page))
        .collect()
}

/// Parses `/proc/PID/stat`: "pid (comm) state ppid ... rss ...". The comm
/// may hold spaces and parentheses, so fields are counted from the last
/// `)`. rss is field 24 (in pages).
fn parse_stat(pid: i32, raw: &[u8], page: u64) -> Option<Proc> {
    let s = String::from_utf8_lossy(raw);
    let mut rest = s.rsplit_once(')')?.1.split_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    // Fields 5..=23 come between ppid (4) and rss (24).
    let rss_pages: u64 = rest.nth(19)?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        rss: rss_pages.saturating_mul(page),
    })
}

/// Tasks (threads) of every process of `uid`: what RLIMIT_NPROC counts.
pub(super) fn tasks_of_uid(uid: u32) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .filter_map(|e| {
            let raw = std::fs::read(e.path().join("stat")).ok()?;
            let s = String::from_utf8_lossy(&raw);
            // num_threads is field 20; the 18th after the comm.
            s.rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(17)?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// The descendants of `root` in `procs` (not `root` itself).
pub(super) fn descendants(procs: &[Proc], root: i32) -> Vec<Proc> {
    let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        if let Some(kids) = children.get(&pid) {
            for k in kids {
                // A pid cannot be its own ancestor; guard against a torn
                // snapshot listing a reused pid under itself.
                if k.pid != root && out.len() < procs.len() {
                    out.push(**k);
                    stack.push(k.pid);
                }
            }
        }
    }
    out
}

/// What a command's processes use now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Usage {
    /// Processes below the spawned root.
    pub procs: u64,
    /// Their resident memory together, in bytes, plus memory held in
    /// open files that have no name (memfds): written with `write(2)` and
    /// never mapped, those are in no process's RSS.
    pub rss: u64,
    /// Bytes of disk held by open files that were unlinked (or made with
    /// `O_TMPFILE`): no walk of the workspace can see them.
    pub unlinked_disk: u64,
}

/// The usage of `root`'s descendants.
pub(super) fn usage(root: i32) -> Usage {
    let d = descendants(&snapshot(), root);
    let mut u = Usage {
        procs: d.len() as u64,
        rss: d.iter().map(|p| p.rss).sum(),
        unlinked_disk: 0,
    };
    let (mem, disk) = unlinked_open_files(&d);
    u.rss += mem;
    u.unlinked_disk = disk;
    u
}

/// Bytes held by the open, nameless regular files of `procs` (each file
/// counted once): memfds (RAM) and unlinked or `O_TMPFILE` files (disk).
fn unlinked_open_files(procs: &[Proc]) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut seen = std::collections::HashSet::new();
    let (mut mem, mut disk) = (0u64, 0u64);
    for p in procs {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", p.pid)) else {
            continue;
        };
        for fd in fds.flatten() {
            let path = fd.path();
            let Ok(m) = std::fs::metadata(&path) else {
                continue;
            };
            if !m.is_file() || m.nlink() != 0 || !seen.insert((m.dev(), m.ino())) {
                continue;
            }
            let bytes = m.blocks() * 512;
            let memfd = std::fs::read_link(&path)
                .is_ok_and(|t| t.as_os_str().as_encoded_bytes().starts_with(b"/memfd:"));
            if memfd {
                mem += bytes;
            } else {
                disk += bytes;
            }
        }
    }
    (mem, disk)
}

/// SIGKILLs every descendant of `root` once; returns how many were
/// signalled. Each pid is pinned with a pidfd and its parent checked again
/// against the tree first, so a pid reaped and reused since the scan is
/// never hit. Children of a killed process are reparented to the nearest
/// subreaper (the landlock tier's supervisor), so repeated rounds reach
/// the whole tree.
pub(super) fn kill_descendants(root: i32) -> Vec<std::os::fd::OwnedFd> {
    let tree = descendants(&snapshot(), root);
    let members: std::collections::HashSet<i32> =
        tree.iter().map(|p| p.pid).chain([root]).collect();
    let mut killed = Vec::new();
    for p in &tree {
        let Ok(fd) = sys::pidfd_open(p.pid) else {
            continue;
        };
        let still_ours = std::fs::read(format!("/proc/{}/stat", p.pid))
            .ok()
            .and_then(|raw| parse_stat(p.pid, &raw, 1))
            .is_some_and(|now| members.contains(&now.ppid));
        if still_ours && sys::pidfd_kill(&fd).is_ok() {
            killed.push(fd);
        }
    }
    killed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_comm_parses() {
        let line = b"42 (a) b (c) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123 4096000 250 18446744073709551615";
        let p = parse_stat(42, line, 4096).unwrap();
        assert_eq!(p.ppid, 7);
        assert_eq!(p.rss, 250 * 4096);
    }

    #[test]
    fn descendants_follow_parents_only() {
        let p = |pid, ppid| Proc { pid, ppid, rss: 10 };
        let procs = [
            p(1, 0),
            p(10, 1),
            p(11, 10),
            p(12, 11),
            p(13, 10),
            p(20, 1),
            p(21, 20),
        ];
        let mut d: Vec<i32> = descendants(&procs, 10).iter().map(|p| p.pid).collect();
        d.sort_unstable();
        assert_eq!(d, vec![11, 12, 13]);
        assert!(descendants(&procs, 99).is_empty());
    }

    #[test]
    fn a_subtree_is_seen_and_killed() {
        // bash waits on a background sleep: killing bash's descendants
        // ends the sleep, and bash's wait returns.
        let mut bash = std::process::Command::new("/usr/bin/bash")
            .args(["-c", "/usr/bin/sleep 30 & wait; exit 3"])
            .spawn()
            .unwrap();
        let root = bash.id() as i32;
        let t = std::time::Instant::now();
        while usage(root).procs == 0 && t.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let u = usage(root);
        assert!(u.procs == 1 && u.rss > 0, "{u:?}");
        assert_eq!(kill_descendants(root).len(), 1);
        assert_eq!(bash.wait().unwrap().code(), Some(3));
        assert_eq!(usage(root).procs, 0);
    }
}
