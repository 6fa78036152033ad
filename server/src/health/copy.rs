//! The bounded workspace copy, the clean-up of whatever could steer
//! pytest, and the restore of the pristine suite into the copy.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use super::scratch::Scratch;
use crate::treecopy::{CopyBudget, CopyOptions, copy_tree, open_regular};
use graders::health_score::is_test_module;
use sha2::{Digest, Sha256};

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
    copy_tree(workspace, tree, &CopyOptions::bounded(budget))?;
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
