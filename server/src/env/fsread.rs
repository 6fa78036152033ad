//! Reading workspace files from the host without trusting the workspace.
//!
//! Structured actions run in the server process, so a path from the agent is
//! resolved component by component with `symlink_metadata`: no `..`, no
//! absolute path, no symlink anywhere on the way, and the final file opened
//! with `O_NOFOLLOW | O_NONBLOCK` and checked to be a regular file, so a
//! planted link to `/etc/shadow` or a FIFO can neither leak nor hang.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Resolves `rel` under `root`, refusing anything that could leave it.
pub fn resolve_within(root: &Path, rel: &str) -> io::Result<PathBuf> {
    let rel = rel.trim().trim_start_matches("./");
    let rel = rel.strip_prefix("/workspace/").unwrap_or(rel);
    let p = Path::new(rel);
    let mut out = root.to_path_buf();
    for c in p.components() {
        match c {
            Component::Normal(n) => {
                out.push(n);
                if let Ok(m) = fs::symlink_metadata(&out)
                    && m.file_type().is_symlink()
                {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!("{rel}: is or passes through a symlink; refused"),
                    ));
                }
            }
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{rel}: path must be relative to the workspace, without '..'"),
                ));
            }
        }
    }
    Ok(out)
}

/// Reads at most `max` bytes of a regular file under `root`; returns the
/// bytes and whether the file was longer.
pub fn read_bounded(root: &Path, rel: &str, max: usize) -> io::Result<(Vec<u8>, bool)> {
    let path = resolve_within(root, rel)?;
    let f: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{rel}: not a regular file"),
        ));
    }
    let mut buf = Vec::with_capacity((meta.len() as usize).min(max));
    f.take(max as u64).read_to_end(&mut buf)?;
    Ok((buf, meta.len() as usize > max))
}

/// Lists regular files and directories under `root/rel` (relative paths,
/// sorted), never descending into `.git` or through symlinks, at most `max`.
pub fn list_files(root: &Path, rel: Option<&str>, max: usize) -> io::Result<(Vec<String>, bool)> {
    let start = match rel {
        Some(r) if !r.trim().is_empty() && r.trim() != "." => resolve_within(root, r)?,
        _ => root.to_path_buf(),
    };
    let mut out = Vec::new();
    let mut stack = vec![start];
    let mut truncated = false;
    while let Some(dir) = stack.pop() {
        let meta = fs::symlink_metadata(&dir)?;
        if !meta.is_dir() {
            if let Ok(r) = dir.strip_prefix(root) {
                out.push(r.to_string_lossy().into_owned());
            }
            continue;
        }
        let mut entries: Vec<_> = fs::read_dir(&dir)?.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries.into_iter().rev() {
            let name = e.file_name();
            if name == ".git" {
                continue;
            }
            let p = e.path();
            let ft = match e.file_type() {
                Ok(ft) => ft,
                Err(_) => continue,
            };
            let relp = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            if ft.is_dir() {
                stack.push(p);
            } else if out.len() < max {
                out.push(if ft.is_symlink() {
                    format!("{relp} -> (symlink)")
                } else {
                    relp
                });
            } else {
                truncated = true;
            }
        }
    }
    out.sort();
    Ok((out, truncated))
}

/// Entries a fingerprint walks before giving up (the tree is then regraded
/// in full, and the grader reports its own budget).
pub const FINGERPRINT_MAX_ENTRIES: usize = 100_000;

/// How recent a change must be for the fingerprint to be distrusted: the
/// kernel stamps files from a coarse clock (one tick, at most 10 ms at
/// HZ=100), so a change within this window of the walk could be followed by
/// another in the same tick that leaves every stamp equal.
pub const RACY_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);

/// A digest of the metadata of every entry under `root` (the root itself
/// excluded, `.git` included): relative path, type, device, inode, mode,
/// owner, size, link count, and mtime and ctime to the nanosecond. Any
/// write, create, delete, rename, chmod or `touch -d` inside the tree
/// changes it, because every one of them moves a ctime, which unprivileged
/// code cannot set (the same idea as git's index stat check).
///
/// `None` when the walk fails, exceeds [`FINGERPRINT_MAX_ENTRIES`], or is
/// *racy*: some entry changed within [`RACY_WINDOW`] before the walk. Only
/// a `Some` may be used to skip regrading; callers regrade on `None`.
/// Never follows symlinks (entries are `lstat`ed; a link is hashed as a
/// link, its target is never read).
pub fn fingerprint(root: &Path) -> Option<[u8; 32]> {
    // One walk implements both: the digest a step's survey computes is
    // the one resume compares against.
    survey(root).fingerprint
}

/// What one walk of a workspace tells a step: the [`fingerprint`], the
/// file list observations show, and whether the sandbox uid already owns
/// every entry. One walk instead of three (fingerprint, `list_files` for
/// the ranked actions, and the sandbox's `lchown` walk): per-step cost was
/// dominated by walking the same tree repeatedly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Survey {
    /// The tree's [`fingerprint`].
    pub fingerprint: Option<[u8; 32]>,
    /// Regular files, directories' files and symlinks outside `.git`, as
    /// [`list_files`] formats them (`path -> (symlink)` for links), the
    /// sorted first [`SURVEY_MAX_FILES`].
    pub files: Vec<String>,
    /// More files existed than `files` holds.
    pub files_truncated: bool,
    /// `Some((uid, gid))` when the root and every entry under it (`.git`
    /// included) have that owner: the sandbox may then skip its `lchown`
    /// walk for a command that runs as exactly this uid/gid
    /// (`ExecRequest::owned_by`). None when owners differ, or the walk
    /// failed or was cut short.
    pub owner: Option<(u32, u32)>,
}

/// Files a [`Survey`] keeps for observations.
pub const SURVEY_MAX_FILES: usize = 500;

/// Walks `root` once (never following symlinks, at most
/// [`FINGERPRINT_MAX_ENTRIES`] entries) and returns its [`Survey`].
/// A racy entry does not stop the walk: the file list and owner are still
/// exact, only `fingerprint` is None.
pub fn survey(root: &Path) -> Survey {
    survey_at(root, std::time::SystemTime::now(), None)
}

/// [`survey`] after a command: every entry the command touched is put in
/// normal form ([`super::meta`]) as the walk meets it, and surveyed as it
/// is then. One walk instead of two on every mutating step.
pub fn survey_normalising(root: &Path, pass: &super::meta::Pass) -> Survey {
    survey_at(root, std::time::SystemTime::now(), Some(pass))
}

fn survey_at(root: &Path, now: std::time::SystemTime, pass: Option<&super::meta::Pass>) -> Survey {
    use sha2::{Digest, Sha256};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let mut out = Survey::default();
    let Some(cutoff) = now
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| d.checked_sub(RACY_WINDOW))
        .map(|d| d.as_nanos() as i128)
    else {
        return out;
    };
    let Ok(mut root_meta) = fs::symlink_metadata(root) else {
        return out;
    };
    if let Some(pass) = pass
        && pass.entry(root, &root_meta)
    {
        let Ok(m) = fs::symlink_metadata(root) else {
            return out;
        };
        root_meta = m;
    }
    let owner = (root_meta.uid(), root_meta.gid());
    let mut same_owner = root_meta.is_dir();
    let mut racy = false;
    let mut ok = root_meta.is_dir();
    let mut h = Sha256::new();
    let mut files: Vec<String> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    'walk: while ok && let Some(dir) = stack.pop() {
        let Some(mut entries) = fs::read_dir(&dir)
            .ok()
            .and_then(|rd| rd.collect::<Result<Vec<_>, _>>().ok())
        else {
            ok = false;
            break;
        };
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            seen += 1;
            if seen > FINGERPRINT_MAX_ENTRIES {
                ok = false;
                break 'walk;
            }
            let p = e.path();
            // `DirEntry::metadata` is an `lstat` relative to the open
            // directory (never follows a link), cheaper than a path lookup.
            let Ok(mut m) = e.metadata() else {
                ok = false;
                break 'walk;
            };
            if let Some(pass) = pass
                && pass.entry(&p, &m)
            {
                match fs::symlink_metadata(&p) {
                    Ok(now) => m = now,
                    // Normalisation removed it (a socket).
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(_) => {
                        ok = false;
                        break 'walk;
                    }
                }
            }
            let stamp = |s: i64, ns: i64| s as i128 * 1_000_000_000 + ns as i128;
            let (mt, ct) = (
                stamp(m.mtime(), m.mtime_nsec()),
                stamp(m.ctime(), m.ctime_nsec()),
            );
            racy |= mt >= cutoff || ct >= cutoff;
            same_owner &= (m.uid(), m.gid()) == owner;
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let bytes = rel.as_os_str().as_bytes();
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
            for v in [
                m.dev(),
                m.ino(),
                m.mode() as u64,
                m.uid() as u64,
                m.gid() as u64,
                m.size(),
                m.nlink(),
            ] {
                h.update(v.to_le_bytes());
            }
            h.update(mt.to_le_bytes());
            h.update(ct.to_le_bytes());
            let ft = m.file_type();
            if ft.is_dir() {
                stack.push(p);
                continue;
            }
            // The listing skips `.git` and everything under it.
            if bytes == b".git" || bytes.starts_with(b".git/") {
                continue;
            }
            let shown = rel.to_string_lossy().into_owned();
            files.push(if ft.is_symlink() {
                format!("{shown} -> (symlink)")
            } else {
                shown
            });
        }
        h.update(b"\0dir-end\0");
    }
    files.sort();
    out.files_truncated = files.len() > SURVEY_MAX_FILES;
    files.truncate(SURVEY_MAX_FILES);
    out.files = files;
    if ok {
        out.owner = same_owner.then_some(owner);
        if !racy {
            out.fingerprint = Some(h.finalize().into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step's one walk normalises what the command touched and
    /// fingerprints the tree as it is afterwards: a second plain survey
    /// agrees, once the racy window has passed.
    #[test]
    fn normalising_survey_fingerprints_the_normalised_tree() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("a.txt"), "a").unwrap();
        std::thread::sleep(super::super::meta::COARSE_CLOCK_SLACK * 3);
        let pass = super::super::meta::Pass::new(std::time::SystemTime::now());
        fs::set_permissions(d.path().join("a.txt"), fs::Permissions::from_mode(0o4101)).unwrap();
        let later = std::time::SystemTime::now() + RACY_WINDOW * 2;
        let s1 = survey_at(d.path(), later, Some(&pass));
        assert_eq!(
            fs::metadata(d.path().join("a.txt"))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777,
            0o755
        );
        let s2 = survey_at(d.path(), later, None);
        assert!(s1.fingerprint.is_some());
        assert_eq!(s1.fingerprint, s2.fingerprint);
        assert_eq!(s1.files, s2.files);
    }

    #[test]
    fn refuses_escape_and_links() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("a.txt"), "hello").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("link")).unwrap();
        assert_eq!(read_bounded(d.path(), "a.txt", 100).unwrap().0, b"hello");
        assert!(read_bounded(d.path(), "../etc/passwd", 100).is_err());
        assert!(read_bounded(d.path(), "/etc/passwd", 100).is_err());
        assert!(read_bounded(d.path(), "link", 100).is_err());
        let (b, more) = read_bounded(d.path(), "a.txt", 2).unwrap();
        assert_eq!((b.as_slice(), more), (&b"he"[..], true));
    }

    #[test]
    fn fifo_does_not_hang() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fifo");
        let st = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(st.success());
        assert!(read_bounded(d.path(), "fifo", 100).is_err());
    }

    #[test]
    fn lists_sorted_without_git() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join(".git/objects")).unwrap();
        fs::create_dir_all(d.path().join("src")).unwrap();
        fs::write(d.path().join("src/b.py"), "").unwrap();
        fs::write(d.path().join("a.py"), "").unwrap();
        let (l, t) = list_files(d.path(), None, 100).unwrap();
        assert_eq!(l, vec!["a.py".to_string(), "src/b.py".to_string()]);
        assert!(!t);
    }

    /// Ages every entry so the fingerprint is not racy.
    fn age(root: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let t = fs::FileTimes::new().set_modified(old).set_accessed(old);
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p.clone());
                }
                File::open(&p).unwrap().set_times(t).unwrap();
            }
        }
    }

    #[test]
    fn fingerprint_sees_every_change_and_distrusts_recent_ones() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("src")).unwrap();
        fs::write(d.path().join("src/a.py"), "x = 1\n").unwrap();
        // Just written: racy, so never trusted.
        assert_eq!(fingerprint(d.path()), None);
        age(d.path());
        // ctime moved with the utimes call above; wait out the window.
        std::thread::sleep(RACY_WINDOW * 2);
        let f0 = fingerprint(d.path()).expect("aged tree");
        assert_eq!(
            fingerprint(d.path()),
            Some(f0),
            "stable when nothing changes"
        );
        // Same size, same mtime restored: the ctime still moves.
        let a = d.path().join("src/a.py");
        let mtime = fs::metadata(&a).unwrap().modified().unwrap();
        fs::write(&a, "x = 2\n").unwrap();
        File::open(&a)
            .unwrap()
            .set_times(fs::FileTimes::new().set_modified(mtime))
            .unwrap();
        assert_eq!(fingerprint(d.path()), None, "a fresh change is racy");
        std::thread::sleep(RACY_WINDOW * 2);
        let f1 = fingerprint(d.path()).expect("settled");
        assert_ne!(f0, f1, "content change with mtime restored");
        // A new file (in .git too) changes it.
        fs::create_dir_all(d.path().join(".git")).unwrap();
        std::thread::sleep(RACY_WINDOW * 2);
        assert_ne!(fingerprint(d.path()).expect("settled"), f1);
    }

    /// The survey's three answers agree with the walks it replaces.
    #[test]
    fn survey_matches_fingerprint_listing_and_owner() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("src/pkg")).unwrap();
        fs::create_dir_all(d.path().join(".git/objects")).unwrap();
        fs::write(d.path().join("src/pkg/a.py"), "x = 1\n").unwrap();
        fs::write(d.path().join("README.md"), "hi\n").unwrap();
        fs::write(d.path().join(".git/HEAD"), "ref\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("link")).unwrap();
        // Fresh: exact listing and owner, but no trusted fingerprint.
        let s0 = survey(d.path());
        assert_eq!(s0.fingerprint, None);
        let (listed, _) = list_files(d.path(), None, 500).unwrap();
        assert_eq!(s0.files, listed);
        assert_eq!(
            s0.files,
            ["README.md", "link -> (symlink)", "src/pkg/a.py"].map(String::from)
        );
        let m = fs::symlink_metadata(d.path()).unwrap();
        assert_eq!(s0.owner, Some((m.uid(), m.gid())));
        age(d.path());
        std::thread::sleep(RACY_WINDOW * 2);
        let s1 = survey(d.path());
        assert!(s1.fingerprint.is_some());
        assert_eq!(s1.fingerprint, survey(d.path()).fingerprint, "stable");
        // A write deep down is seen (once settled) like fingerprint sees it.
        fs::write(d.path().join("src/pkg/a.py"), "x = 2\n").unwrap();
        std::thread::sleep(RACY_WINDOW * 2);
        let s2 = survey(d.path());
        assert!(s2.fingerprint.is_some() && s2.fingerprint != s1.fingerprint);
        // An entry owned by someone else: no owner claim (root only).
        if m.uid() == 0 {
            std::os::unix::fs::lchown(d.path().join(".git/HEAD"), Some(12345), None).unwrap();
            assert_eq!(survey(d.path()).owner, None, "mixed owners");
        }
        // Listing is bounded and reports truncation.
        for i in 0..(SURVEY_MAX_FILES + 3) {
            fs::write(d.path().join(format!("f{i:04}")), "").unwrap();
        }
        let s3 = survey(d.path());
        assert_eq!(s3.files.len(), SURVEY_MAX_FILES);
        assert!(s3.files_truncated);
        assert!(s3.files.windows(2).all(|w| w[0] <= w[1]), "sorted");
    }
}
