//! Template overlays (`files/`, `history/NN/` of a task directory): read
//! with bounds, placeholders rendered with an episode's values, files moved
//! to a variant's paths.

use super::fields::check_rel_path;
use super::model::Task;
use super::read::read_capped;
use super::render::{Hit, Values, render};
use super::repo::{FileEntry, Tree};
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// Limits on template trees (task files are reviewed, but bounded anyway).
pub(super) const MAX_FILES: usize = 2_000;
pub(super) const MAX_FILE_BYTES: u64 = 1 << 20;
pub(super) const MAX_TASK_BYTES: u64 = 64 << 20;
pub(super) const MAX_DEPTH: usize = 16;

/// A rendered overlay: its files and, per file, the placeholders found.
pub(super) struct Rendered {
    pub(super) tree: Tree,
    pub(super) hits: BTreeMap<String, Vec<Hit>>,
}

/// Reads and renders every file under `dir`. With `canonical_task`, also
/// refuses templates that hard-code a canonical value (variants would leave
/// it in place).
pub(super) fn render_overlay(
    dir: &Path,
    values: &Values,
    canonical_task: Option<&Task>,
) -> anyhow::Result<Rendered> {
    let mut files = Vec::new();
    walk(dir, "", 0, &mut files)?;
    let mut total = 0u64;
    let mut tree = Tree::new();
    let mut hits = BTreeMap::new();
    for (rel, path, exec) in files {
        let bytes = read_capped(&path, MAX_FILE_BYTES)?;
        total += bytes.len() as u64;
        if total > MAX_TASK_BYTES {
            bail!("{}: more than {MAX_TASK_BYTES} bytes", dir.display());
        }
        if let Some(task) = canonical_task {
            for s in &task.secrets {
                if find(&bytes, s.value.as_bytes()).is_some() {
                    bail!(
                        "{rel}: hard-codes the value of secret {} (use {{{{secret:{}}}}})",
                        s.id,
                        s.id
                    );
                }
            }
        }
        let (out, h) = render(&bytes, values).with_context(|| rel.clone())?;
        if !h.is_empty() {
            hits.insert(rel.clone(), h);
        }
        tree.insert(rel, FileEntry { bytes: out, exec });
    }
    Ok(Rendered { tree, hits })
}

/// Moves each renamed file of a rendered overlay to its episode path.
/// Moving onto a path the overlay already has is an authoring error (the
/// registry checks alternatives against each other, not against files).
pub(super) fn apply_renames(
    r: &mut Rendered,
    renamed: &BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let moving: Vec<(&String, &String)> = renamed
        .iter()
        .filter(|(from, _)| r.tree.contains_key(*from))
        .collect();
    let mut moved = Vec::new();
    for (from, to) in moving {
        let entry = r.tree.remove(from).expect("checked above");
        moved.push((to.clone(), entry));
        if let Some(h) = r.hits.remove(from) {
            r.hits.insert(to.clone(), h);
        }
    }
    for (to, entry) in moved {
        let dir_prefix = format!("{to}/");
        if r.tree.contains_key(&to)
            || r.tree
                .keys()
                .any(|p| p.starts_with(&dir_prefix) || to.starts_with(&format!("{p}/")))
        {
            bail!("a variant moves a file to {to}, which the overlay already has");
        }
        r.tree.insert(to, entry);
    }
    Ok(())
}

/// Collects regular files (sorted), rejecting symlinks and special files.
pub(super) fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, PathBuf, bool)>,
) -> anyhow::Result<()> {
    if depth > MAX_DEPTH {
        bail!("{}: nested deeper than {MAX_DEPTH}", dir.display());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            bail!("{}: non-UTF-8 file name", dir.display())
        };
        let rel = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        check_rel_path(&rel).map_err(|m| anyhow::anyhow!("{rel}: {m}"))?;
        let meta = std::fs::symlink_metadata(e.path())?;
        if meta.is_dir() {
            walk(&e.path(), &rel, depth + 1, out)?;
        } else if meta.is_file() {
            out.push((rel, e.path(), meta.permissions().mode() & 0o111 != 0));
            if out.len() > MAX_FILES {
                bail!("more than {MAX_FILES} files");
            }
        } else {
            bail!("{rel}: not a regular file or directory (symlinks are not allowed in templates)");
        }
    }
    Ok(())
}

/// Where `needle` first occurs in `hay` (never for an empty needle).
pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// What differs between two trees, for an error message: at most ten
/// paths.
pub(super) fn tree_diff(a: &Tree, b: &Tree) -> String {
    let mut d = Vec::new();
    for (p, e) in a {
        match b.get(p) {
            None => d.push(format!("extra {p}")),
            Some(f) if f != e => d.push(format!("differs {p}")),
            _ => {}
        }
    }
    d.extend(
        b.keys()
            .filter(|p| !a.contains_key(*p))
            .map(|p| format!("missing {p}")),
    );
    d.truncate(10);
    d.join(", ")
}
