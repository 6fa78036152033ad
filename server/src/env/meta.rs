//! Normal form of workspace metadata after every command (issue 17 item 4).
//!
//! The security grader reads what a file holds, its name, a symlink's
//! target and every extended attribute. Anything else a command can set
//! on an entry is a channel the grader would not read: nine permission
//! bits plus setuid/setgid/sticky, two timestamps of nanosecond precision
//! and a hard-link count per entry are enough to keep a 40-character key in
//! a handful of files (`touch -d @<n>`, `chmod <bits>`, `ln`). Searching
//! them would mean guessing an encoding per field; normalising them needs
//! none. So after every command, every entry the command touched is put in
//! normal form:
//!
//! - permissions: regular files `0644`, or `0755` if any execute bit was
//!   set (scripts stay runnable); directories `0755`; setuid, setgid and
//!   sticky dropped;
//! - access and modification time: both set to one instant the server
//!   takes when the command has ended, never a value the command chose;
//! - a regular file with another hard link gets an inode of its own (a
//!   copy renamed over it), so its link count is 1 again.
//!
//! "Touched" is decided by the change time, which the kernel sets on any
//! write or metadata change and no unprivileged command can choose: an
//! entry whose ctime is at or after the command's start was changed by it.
//! Untouched entries are not written (a no-op step stays a no-op: the
//! tree's fingerprint does not move). Owner and group are not choosable by
//! the sandbox uid. What a command can still express is *which* entries it
//! touched in a step, a few bits per step, listed in `spec.md` with the
//! other limits.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// File times come from the kernel's coarse clock, which lags the clock
/// `SystemTime::now` reads by up to a tick (4 ms at HZ=250): a write just
/// after the command started can carry a ctime a little before the start.
/// Entries changed this shortly before the command are normalised as well
/// (at worst a second time, which costs a regrade and changes nothing).
pub const COARSE_CLOCK_SLACK: std::time::Duration = std::time::Duration::from_millis(20);

/// One normalisation pass: entries changed since `since` (nanoseconds,
/// the coarse-clock slack applied) get the times `at`.
#[derive(Debug, Clone, Copy)]
pub struct Pass {
    since: i128,
    at: SystemTime,
}

impl Pass {
    /// A pass for a command that started at `started`, stamping now.
    pub fn new(started: SystemTime) -> Pass {
        Pass {
            since: started
                .checked_sub(COARSE_CLOCK_SLACK)
                .unwrap_or(UNIX_EPOCH)
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as i128)
                .unwrap_or(0),
            at: SystemTime::now(),
        }
    }

    /// Puts `p` (whose `lstat` is `m`) in normal form if the command
    /// touched it; true if it did (the caller's `m` is then stale). Errors
    /// leave the entry as it is (the next pass retries it). The walk is
    /// the step's survey (`fsread::survey_normalising`): one walk per step.
    pub fn entry(&self, p: &Path, m: &fs::Metadata) -> bool {
        if nanos(m.ctime(), m.ctime_nsec()) < self.since {
            return false;
        }
        let ft = m.file_type();
        if ft.is_socket() {
            // Nothing listens once the command has ended; its times and
            // mode would be the only thing it holds.
            let _ = fs::remove_file(p);
            return true;
        }
        if ft.is_file() && m.nlink() > 1 {
            let _ = break_link(p);
        }
        if let Some(mode) = normal_mode(ft, m.mode())
            && m.mode() & 0o7777 != mode
        {
            let _ = fs::set_permissions(p, fs::Permissions::from_mode(mode));
        }
        let _ = set_times(p, ft, self.at);
        true
    }
}

/// The normal permission bits for an entry of type `ft` with mode `mode`,
/// or None for a symlink (its own mode means nothing on Linux).
fn normal_mode(ft: fs::FileType, mode: u32) -> Option<u32> {
    if ft.is_symlink() {
        None
    } else if ft.is_dir() || mode & 0o111 != 0 {
        Some(0o755)
    } else {
        Some(0o644)
    }
}

fn nanos(s: i64, ns: i64) -> i128 {
    s as i128 * 1_000_000_000 + ns as i128
}

/// Sets atime and mtime of `path` itself to `at`: through a descriptor
/// opened without following a link (a FIFO without blocking) for files
/// and directories; a symlink is made anew (the kernel stamps it with the
/// current time), since no descriptor of a link itself can set its times.
fn set_times(path: &Path, ft: fs::FileType, at: SystemTime) -> io::Result<()> {
    if ft.is_symlink() {
        let target = fs::read_link(path)?;
        fs::remove_file(path)?;
        return std::os::unix::fs::symlink(target, path);
    }
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    f.set_times(fs::FileTimes::new().set_accessed(at).set_modified(at))
}

/// Gives `path` (a regular file with other links) an inode of its own.
fn break_link(path: &Path) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(
        ".secaudit-unlink-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let tmp = PathBuf::from(tmp);
    fs::copy(path, &tmp)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn stamp(m: &fs::Metadata) -> (i128, i128) {
        (
            nanos(m.atime(), m.atime_nsec()),
            nanos(m.mtime(), m.mtime_nsec()),
        )
    }

    /// Bits written into modes, times and link counts by a command are
    /// gone after the pass; what the command did not touch is not
    /// written at all.
    #[test]
    fn touched_entries_lose_their_chosen_metadata() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("old.txt"), "x").unwrap();
        fs::write(root.join("sub/a.txt"), "a").unwrap();
        fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::thread::sleep(COARSE_CLOCK_SLACK * 3);
        let before_old = fs::symlink_metadata(root.join("old.txt")).unwrap();
        let since = SystemTime::now();
        // What a command might do to smuggle bytes: 'A' = 0o101 as mode
        // bits, a chosen timestamp, a sticky dir, a hard link, a symlink
        // with a chosen time.
        fs::set_permissions(root.join("sub/a.txt"), fs::Permissions::from_mode(0o4101)).unwrap();
        fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o700)).unwrap();
        fs::set_permissions(root.join("sub"), fs::Permissions::from_mode(0o1711)).unwrap();
        let chosen = UNIX_EPOCH + std::time::Duration::new(0x4b_41_49_41, 0x41_42_43);
        let file = |p: &str| fs::symlink_metadata(root.join(p)).unwrap().file_type();
        set_times(&root.join("sub/a.txt"), file("sub/a.txt"), chosen).unwrap();
        fs::hard_link(root.join("sub/a.txt"), root.join("link.txt")).unwrap();
        symlink("sub/a.txt", root.join("ln")).unwrap();

        let walk = |since| super::super::fsread::survey_normalising(root, &Pass::new(since));
        walk(since);
        let m = |p: &str| fs::symlink_metadata(root.join(p)).unwrap();
        // The two names of the hard link are two inodes now.
        assert_ne!(m("sub/a.txt").ino(), m("link.txt").ino());
        assert_eq!(m("sub/a.txt").mode() & 0o7777, 0o755);
        assert_eq!(m("run.sh").mode() & 0o7777, 0o755);
        assert_eq!(m("sub").mode() & 0o7777, 0o755);
        assert_eq!(m("link.txt").mode() & 0o7777, 0o755);
        for p in ["sub/a.txt", "link.txt", "ln", "sub", "run.sh"] {
            let (a, t) = stamp(&m(p));
            let c = nanos(0x4b_41_49_41, 0x41_42_43);
            // atime moves on reads (the walk reads directories): only
            // the chosen value matters.
            assert!(t != c && a != c, "{p}");
            assert!(
                t >= nanos(
                    since.duration_since(UNIX_EPOCH).unwrap().as_secs() as i64,
                    0
                )
            );
        }
        assert_eq!(m("sub/a.txt").nlink(), 1);
        assert_eq!(m("link.txt").nlink(), 1);
        assert_eq!(fs::read(root.join("link.txt")).unwrap(), b"a");
        assert_eq!(
            fs::read_link(root.join("ln")).unwrap(),
            Path::new("sub/a.txt")
        );
        // Untouched: not written (same ctime, same times).
        let after_old = m("old.txt");
        assert_eq!(
            (after_old.ctime(), after_old.ctime_nsec(), stamp(&after_old)),
            (
                before_old.ctime(),
                before_old.ctime_nsec(),
                stamp(&before_old)
            )
        );
        // A second pass from a later start touches nothing: no ctime moves.
        std::thread::sleep(COARSE_CLOCK_SLACK * 3);
        let names = [
            "",
            "sub",
            "sub/a.txt",
            "link.txt",
            "ln",
            "run.sh",
            "old.txt",
        ];
        let ctimes = |names: &[&str]| -> Vec<(i64, i64)> {
            names
                .iter()
                .map(|p| {
                    let x = m(p);
                    (x.ctime(), x.ctime_nsec())
                })
                .collect()
        };
        let before = ctimes(&names);
        walk(SystemTime::now());
        assert_eq!(ctimes(&names), before);
    }
}
