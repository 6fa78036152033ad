//! Reading git trees for the walk: raw tree bytes from the packs or the
//! object database, their entries, and the recursive walk over them.

use super::*;

/// Raw trees (git's tree format) for the walk: from the packs, else the
/// object database.
pub(super) struct Trees<'r> {
    pub(super) odb: git2::Odb<'r>,
    pub(super) packed: HashMap<Oid, Arc<Vec<u8>>>,
}

impl Trees<'_> {
    pub(super) fn get(&self, id: Oid) -> Option<std::borrow::Cow<'_, [u8]>> {
        if let Some(d) = self.packed.get(&id) {
            return Some(std::borrow::Cow::Borrowed(d));
        }
        let o = self.odb.read(id).ok()?;
        (o.kind() == ObjectType::Tree).then(|| std::borrow::Cow::Owned(o.data().to_vec()))
    }
}

/// Kind of a tree entry by its mode.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum EntKind {
    Tree,
    Blob,
    /// A submodule commit: lives in another repository.
    Gitlink,
}

/// Entries (kind, name, id) of a raw tree; stops at the first malformed
/// entry.
pub(super) fn tree_entries(raw: &[u8]) -> impl Iterator<Item = (EntKind, &[u8], Oid)> {
    let mut p = 0usize;
    std::iter::from_fn(move || {
        let rest = raw.get(p..)?;
        let sp = memchr::memchr(b' ', rest)?;
        let nul = sp + memchr::memchr(0, &rest[sp..])?;
        let id = Oid::from_bytes(rest.get(nul + 1..nul + 21)?).ok()?;
        let mut mode = 0u32;
        for &c in &rest[..sp] {
            if !(b'0'..=b'7').contains(&c) || mode > 0o7777777 {
                return None;
            }
            mode = mode * 8 + u32::from(c - b'0');
        }
        let kind = match mode & 0o170000 {
            0o040000 => EntKind::Tree,
            0o160000 => EntKind::Gitlink,
            _ => EntKind::Blob,
        };
        p += nul + 21;
        Some((kind, &rest[sp + 1..nul], id))
    })
}

/// Queues the unseen blobs under the tree `raw`; `praw` is the same
/// directory in the commit's first parent (the previous version of each
/// path).
pub(super) fn walk_tree(
    w: &mut Walk<'_>,
    trees: &Trees<'_>,
    raw: &[u8],
    praw: Option<&[u8]>,
    prefix: &str,
    commit: Option<&Arc<str>>,
    depth: usize,
) {
    if depth > MAX_TREE_DEPTH {
        return;
    }
    // The parent's entries, listed on the first fresh entry; both trees
    // are in git's name order, so a cursor that resumes after the last
    // match finds each name in amortized constant time (a search from the
    // start for every entry was quadratic in the directory's size).
    let mut pents: Option<Vec<(EntKind, &[u8], Oid)>> = None;
    let mut cursor = 0usize;
    for (kind, name, id) in tree_entries(raw) {
        // Most entries of a changed tree are old: skip them before any
        // path is built or the parent looked up.
        let fresh = match kind {
            EntKind::Tree => w.seen_trees.insert(id),
            EntKind::Blob => w.seen_blobs.insert(id),
            EntKind::Gitlink => false,
        };
        if !fresh {
            continue;
        }
        let name = String::from_utf8_lossy(name);
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        let pe = praw.and_then(|t| {
            let pv = pents.get_or_insert_with(|| tree_entries(t).collect());
            let n = pv.len();
            let hit = (0..n)
                .map(|k| (cursor + k) % n)
                .find(|&k| pv[k].1 == name.as_bytes())?;
            cursor = hit + 1;
            Some(pv[hit])
        });
        match kind {
            EntKind::Tree => {
                if let Some(t) = trees.get(id) {
                    let pt = pe
                        .filter(|(k, _, _)| *k == EntKind::Tree)
                        .and_then(|(_, _, pid)| trees.get(pid));
                    walk_tree(w, trees, &t, pt.as_deref(), &path, commit, depth + 1);
                }
            }
            // Symlink blobs (mode 120000) hold a target path: scanned
            // as text like any blob, never followed.
            EntKind::Blob => {
                let parent = pe
                    .filter(|(k, _, pid)| *k == EntKind::Blob && *pid != id)
                    .map(|(_, _, pid)| pid);
                w.add(id, None, &path, commit, parent);
            }
            EntKind::Gitlink => {}
        }
    }
}
