//! The bounded workspace copy, the clean-up of whatever could steer
//! pytest, and the restore of the pristine suite into the copy.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use super::scratch::Scratch;
use graders::health_score::is_test_module;
use sha2::{Digest, Sha256};

/// Bounds on the workspace copy. Exceeding any is an error (score 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyBudget {
    /// Files, directories and symlinks together.
    pub max_entries: usize,
    /// Sum of regular file sizes.
    pub max_bytes: u64,
    /// Directory nesting depth.
    pub max_depth: usize,
}

impl Default for CopyBudget {
    fn default() -> Self {
        CopyBudget {
            max_entries: 20_000,
            max_bytes: 256 << 20,
            max_depth: 64,
        }
    }
}

/// File names deleted anywhere in the copy before the pristine suite is
/// restored: they configure or replace pytest, or run at interpreter start.
pub(super) const BANNED_FILES: &[&str] = &[
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "pytest.py",
    "py.py",
    "sitecustomize.py",
    "usercustomize.py",
];

/// Directory names deleted anywhere in the copy.
pub(super) const BANNED_DIRS: &[&str] = &["_pytest", "pytest", "__pycache__", ".pytest_cache"];

/// A cleaned and restored copy, not yet run: its scratch directory
/// lives as long as this.
pub(super) struct Prepared {
    pub(super) scratch: Scratch,
    /// Hash of the copy *without* the canary (the cache key's part).
    pub(super) hash: [u8; 32],
    /// The pristine suite's files, relative to the tree.
    pub(super) pristine_files: Vec<PathBuf>,
}

/// Copy → clean → restore → hash, on the blocking pool, in a scratch
/// directory of the server's own: the run's uid gets the tree only once
/// it is armed ([`HealthGrader::run_pytest`]).
pub(super) fn prepare_copy(
    workspace: &Path,
    pristine: &Path,
    budget: &CopyBudget,
) -> Result<Prepared, String> {
    let scratch = Scratch::new(None).map_err(|e| format!("scratch dir: {e}"))?;
    let root_meta = std::fs::symlink_metadata(workspace).map_err(|e| format!("workspace: {e}"))?;
    if !root_meta.is_dir() {
        return Err("workspace is not a directory".into());
    }
    let tree = &scratch.tree;
    copy_tree(workspace, tree, budget)?;
    let pristine_files = list_pristine(pristine, budget)?;
    clean_tree(tree, &pristine_files).map_err(|e| format!("cleaning the copy: {e}"))?;
    for rel in &pristine_files {
        restore(&pristine.join(rel), tree, rel)
            .map_err(|e| format!("restoring {}: {e}", rel.display()))?;
    }
    let hash = hash_tree(tree, budget)?;
    Ok(Prepared {
        scratch,
        hash,
        pristine_files,
    })
}

/// Opens a regular file without following symlinks or blocking on FIFOs.
pub(super) fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok((f, m))
}

/// Copies `src` into a new `dst` under the budget: no `.git`, symlinks
/// recreated as symlinks, special files skipped, modes kept minus
/// setuid/setgid/sticky.
pub(super) fn copy_tree(src: &Path, dst: &Path, budget: &CopyBudget) -> Result<(), String> {
    let io =
        |what: &str, p: &Path, e: std::io::Error| format!("copying {what} {}: {e}", p.display());
    if !dst.is_dir() {
        std::fs::create_dir(dst).map_err(|e| io("into", dst, e))?;
    }
    let mut entries = 0usize;
    let mut bytes = 0u64;
    let mut stack = vec![(src.to_path_buf(), dst.to_path_buf(), 0usize)];
    while let Some((from_dir, to_dir, depth)) = stack.pop() {
        if depth > budget.max_depth {
            return Err(format!(
                "workspace nests deeper than {} directories",
                budget.max_depth
            ));
        }
        let mut names: Vec<_> = std::fs::read_dir(&from_dir)
            .map_err(|e| io("directory", &from_dir, e))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| io("directory", &from_dir, e))?;
        names.sort();
        for name in names {
            if name == ".git" {
                continue;
            }
            entries += 1;
            if entries > budget.max_entries {
                return Err(format!(
                    "workspace has more than {} entries",
                    budget.max_entries
                ));
            }
            let from = from_dir.join(&name);
            let to = to_dir.join(&name);
            let meta = std::fs::symlink_metadata(&from).map_err(|e| io("entry", &from, e))?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(&from).map_err(|e| io("symlink", &from, e))?;
                std::os::unix::fs::symlink(&target, &to).map_err(|e| io("symlink", &to, e))?;
            } else if ft.is_dir() {
                std::fs::create_dir(&to).map_err(|e| io("directory", &to, e))?;
                stack.push((from, to, depth + 1));
            } else if ft.is_file() {
                // Reopen without following: the entry may have changed type
                // since the lstat.
                let Ok((f, m)) = open_regular(&from) else {
                    continue;
                };
                let remaining = budget.max_bytes.saturating_sub(bytes);
                if m.len() > remaining {
                    return Err(format!(
                        "workspace holds more than {} bytes",
                        budget.max_bytes
                    ));
                }
                let mut out = std::fs::File::create(&to).map_err(|e| io("file", &to, e))?;
                let n = std::io::copy(&mut f.take(remaining + 1), &mut out)
                    .map_err(|e| io("file", &from, e))?;
                bytes += n;
                if bytes > budget.max_bytes {
                    return Err(format!(
                        "workspace holds more than {} bytes",
                        budget.max_bytes
                    ));
                }
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(m.mode() & 0o777))
                    .map_err(|e| io("file", &to, e))?;
            }
            // FIFOs, sockets and devices are skipped.
        }
    }
    Ok(())
}

/// Relative paths of the regular files in the pristine suite directory
/// (task-owned, still walked without following links).
pub(super) fn list_pristine(pristine: &Path, budget: &CopyBudget) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    if !pristine.exists() {
        return Ok(files);
    }
    let mut stack = vec![(PathBuf::new(), 0usize)];
    while let Some((rel, depth)) = stack.pop() {
        if depth > budget.max_depth || files.len() > budget.max_entries {
            return Err("pristine suite over budget".into());
        }
        let dir = pristine.join(&rel);
        let rd =
            std::fs::read_dir(&dir).map_err(|e| format!("pristine dir {}: {e}", dir.display()))?;
        for e in rd {
            let e = e.map_err(|e| format!("pristine dir: {e}"))?;
            let ft = e.file_type().map_err(|e| format!("pristine dir: {e}"))?;
            let r = rel.join(e.file_name());
            if ft.is_dir() {
                stack.push((r, depth + 1));
            } else if ft.is_file() {
                files.push(r);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Deletes everything that could configure, replace or extend pytest, and
/// test modules the task did not ship. Walks without following symlinks;
/// a symlink with a banned name is removed like a file.
pub(super) fn clean_tree(tree: &Path, pristine: &[PathBuf]) -> std::io::Result<()> {
    let shipped: BTreeSet<&Path> = pristine.iter().map(PathBuf::as_path).collect();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in std::fs::read_dir(tree.join(&rel))? {
            let e = e?;
            let name = e.file_name();
            let name_s = name.to_string_lossy();
            let r = rel.join(&name);
            let path = tree.join(&r);
            let ft = std::fs::symlink_metadata(&path)?.file_type();
            if ft.is_dir() {
                if BANNED_DIRS.contains(&name_s.as_ref()) {
                    std::fs::remove_dir_all(&path)?;
                } else {
                    stack.push(r);
                }
                continue;
            }
            let banned = BANNED_FILES.contains(&name_s.as_ref())
                || name_s.ends_with(".pth")
                || name_s.ends_with(".pyc")
                // Native extension modules run arbitrary code on import
                // and cannot be linted; no task ships one.
                || name_s.ends_with(".so")
                || name_s.contains(".so.")
                || (is_test_module(&name_s) && !shipped.contains(r.as_path()))
                // A symlink where a suite file goes is replaced below.
                || (ft.is_symlink() && shipped.contains(r.as_path()));
            if banned {
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

/// Puts `src` at `tree/rel`, making every parent a real directory first
/// (a parent the agent turned into a symlink would otherwise redirect the
/// write outside the copy) and replacing whatever sits at the target.
pub(super) fn restore(src: &Path, tree: &Path, rel: &Path) -> std::io::Result<()> {
    let mut cur = tree.to_path_buf();
    let comps: Vec<_> = rel.components().collect();
    for (i, c) in comps.iter().enumerate() {
        let Component::Normal(part) = c else {
            return Err(std::io::Error::other("unexpected path component"));
        };
        cur.push(part);
        let last = i + 1 == comps.len();
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() && !last => continue,
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&cur)?,
            Ok(_) => std::fs::remove_file(&cur)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if !last {
            std::fs::create_dir(&cur)?;
        }
    }
    let (mut f, m) = open_regular(src)?;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&cur)?;
    std::io::copy(&mut f, &mut out)?;
    std::fs::set_permissions(&cur, std::fs::Permissions::from_mode(m.mode() & 0o777))?;
    Ok(())
}

/// SHA-256 over the sorted tree: for each entry its relative path, type,
/// permission bits and content (or link target).
pub(super) fn hash_tree(tree: &Path, budget: &CopyBudget) -> Result<[u8; 32], String> {
    let mut h = Sha256::new();
    let mut stack = vec![PathBuf::new()];
    let mut all = Vec::new();
    while let Some(rel) = stack.pop() {
        let rd = std::fs::read_dir(tree.join(&rel)).map_err(|e| format!("hashing: {e}"))?;
        for e in rd {
            let e = e.map_err(|e| format!("hashing: {e}"))?;
            let r = rel.join(e.file_name());
            if e.file_type().map_err(|e| format!("hashing: {e}"))?.is_dir() {
                stack.push(r.clone());
            }
            all.push(r);
            if all.len() > budget.max_entries * 2 {
                return Err("copy over budget while hashing".into());
            }
        }
    }
    all.sort();
    let mut buf = vec![0u8; 64 << 10];
    for rel in all {
        use std::os::unix::ffi::OsStrExt;
        let path = tree.join(&rel);
        let m = std::fs::symlink_metadata(&path).map_err(|e| format!("hashing: {e}"))?;
        let p = rel.as_os_str().as_bytes();
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
        h.update((m.mode() & 0o170777).to_le_bytes());
        if m.file_type().is_symlink() {
            let t = std::fs::read_link(&path).map_err(|e| format!("hashing: {e}"))?;
            h.update(t.as_os_str().as_bytes());
        } else if m.is_file() {
            let (mut f, m) = open_regular(&path).map_err(|e| format!("hashing: {e}"))?;
            h.update(m.len().to_le_bytes());
            loop {
                let n = f.read(&mut buf).map_err(|e| format!("hashing: {e}"))?;
                if n == 0 {
                    break;
                }
                h.update(&buf[..n]);
            }
        }
    }
    Ok(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::write;

    #[test]
    fn copy_budget_and_special_files() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        write(&ws, "a.txt", "hello");
        write(&ws, ".git/config", "[core]\n\tfsmonitor = evil\n");
        std::os::unix::fs::symlink("/etc/shadow", ws.join("leak")).unwrap();
        let fifo = std::ffi::CString::new(ws.join("fifo").as_os_str().as_encoded_bytes()).unwrap();
        assert!(
            std::process::Command::new("mkfifo")
                .arg(ws.join("fifo"))
                .status()
                .unwrap()
                .success(),
            "{fifo:?}"
        );
        let dst = d.path().join("copy");
        copy_tree(&ws, &dst, &CopyBudget::default()).unwrap();
        assert_eq!(std::fs::read_to_string(dst.join("a.txt")).unwrap(), "hello");
        assert!(!dst.join(".git").exists());
        assert_eq!(
            std::fs::read_link(dst.join("leak")).unwrap(),
            Path::new("/etc/shadow")
        );
        assert!(std::fs::symlink_metadata(dst.join("fifo")).is_err());
        let tight = CopyBudget {
            max_bytes: 3,
            ..CopyBudget::default()
        };
        assert!(
            copy_tree(&ws, &d.path().join("c2"), &tight)
                .unwrap_err()
                .contains("bytes")
        );
        let few = CopyBudget {
            max_entries: 1,
            ..CopyBudget::default()
        };
        assert!(
            copy_tree(&ws, &d.path().join("c3"), &few)
                .unwrap_err()
                .contains("entries")
        );
    }
}
