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

#[cfg(test)]
mod tests {
    use super::*;

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
}
