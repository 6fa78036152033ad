//! Reading git trees for the walk: raw tree bytes from the packs or the
//! object database, their entries, and the recursive walk over them.

use super::*;

/// Raw trees (git's tree format) for the walk: from the packs, else the
/// object database.
pub(super) struct Trees<'r> {
    pub(super) odb: git2::Odb<'r>,
    pub(super) packed: FastMap<Oid, Arc<Vec<u8>>>,
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

/// A tree entry as [`tree_entries`] yields it: kind, name, raw id.
pub(super) type RawEntry<'a> = (EntKind, &'a [u8], &'a [u8]);

/// Entries (kind, name, raw 20-byte id) of a raw tree; stops at the first
/// malformed entry. Hand-rolled byte loops: modes and names are a few
/// bytes, shorter than a SIMD search pays off on, and the id becomes an
/// [`Oid`] only for entries the walk does not skip.
pub(super) fn tree_entries(raw: &[u8]) -> impl Iterator<Item = RawEntry<'_>> {
    let mut p = 0usize;
    std::iter::from_fn(move || {
        let rest = raw.get(p..)?;
        let mut mode = 0u32;
        let mut sp = None;
        for (i, &c) in rest.iter().enumerate() {
            if c == b' ' {
                sp = Some(i);
                break;
            }
            if !(b'0'..=b'7').contains(&c) || mode > 0o7777777 {
                return None;
            }
            mode = mode * 8 + u32::from(c - b'0');
        }
        let sp = sp?;
        let nul = sp + rest[sp..].iter().position(|&c| c == 0)?;
        let id = rest.get(nul + 1..nul + 21)?;
        let kind = match mode & 0o170000 {
            0o040000 => EntKind::Tree,
            0o160000 => EntKind::Gitlink,
            _ => EntKind::Blob,
        };
        p += nul + 21;
        Some((kind, &rest[sp + 1..nul], id))
    })
}

/// The [`Oid`] of a raw id from [`tree_entries`] (always 20 bytes).
fn oid(raw: &[u8]) -> Oid {
    Oid::from_bytes(raw).unwrap_or_else(|_| Oid::zero())
}

/// Queues the unseen blobs under the tree `id` (content `raw`); `parent`
/// is the same directory in the commit's first parent (the previous
/// version of each path), as (id, content).
///
/// An entry the parent version holds too (same name, kind and id) is
/// skipped without a seen-set lookup when that version was walked in this
/// call ([`Walk::walked`]): its id is in the seen sets already, so the
/// lookup could only say "seen". Most entries of a changed tree are such.
#[allow(clippy::too_many_arguments)]
pub(super) fn walk_tree(
    w: &mut Walk<'_>,
    trees: &Trees<'_>,
    id: Oid,
    raw: &[u8],
    parent: Option<(Oid, &[u8])>,
    prefix: &str,
    commit: Option<&Arc<str>>,
    depth: usize,
) {
    if depth > MAX_TREE_DEPTH {
        return;
    }
    let praw = parent.map(|(_, r)| r);
    // The parent version was walked in this call: its entries are all in
    // the seen sets, and whether its names are unique is known.
    let walked_parent = parent.and_then(|(pid, _)| w.walked.get(&pid).copied());
    let same_skips = walked_parent.is_some();
    let parent_unique = walked_parent == Some(true);
    // The parent's entries, listed on first need; both trees are in git's
    // name order, so a cursor that resumes after the last match finds each
    // name in amortized constant time (a search from the start for every
    // entry was quadratic in the directory's size). A cursor also keeps
    // the byte offset where its entry starts: when that entry has the
    // name (the usual case, trees in step) it is the answer without the
    // list being built at all.
    // The skip test keeps a cursor of its own: the parent version of a
    // fresh entry is found exactly as without the test (a malformed tree
    // may repeat a name) — unless the parent's names are unique, when
    // the skip test's answer is the only possible one.
    let mut pents: Option<Vec<(RawEntry<'_>, usize)>> = None;
    let (mut cursor, mut skip_cursor) = (Cursor::default(), Cursor::default());
    let mut find_parent = |name: &[u8], c: &mut Cursor| {
        let pr = praw?;
        if let Some(e) = pr.get(c.off..).and_then(|r| tree_entries(r).next())
            && e.1 == name
        {
            c.idx += 1;
            c.off = entry_end(pr, &e);
            return Some(e);
        }
        let pv =
            pents.get_or_insert_with(|| tree_entries(pr).map(|e| (e, entry_end(pr, &e))).collect());
        let n = pv.len();
        let hit = (0..n)
            .map(|k| (c.idx + k) % n)
            .find(|&k| pv[k].0.1 == name)?;
        c.idx = hit + 1;
        c.off = pv[hit].1;
        Some(pv[hit].0)
    };
    // Names strictly increasing (plain byte order): so unique.
    let mut unique = true;
    let mut prev_name: Option<&[u8]> = None;
    // The previous entry was, byte for byte, the parent's entry just
    // before the skip cursor.
    let mut prev_in_step = false;
    let mut start = 0usize;
    for (kind, name, raw_id) in tree_entries(raw) {
        let end = entry_end(raw, &(kind, name, raw_id));
        // Most entries are the parent's entry at the skip cursor, byte for
        // byte (mode, name, id): that entry is what the skip test would
        // find, and the same kind and id, so skipped on one comparison. Of
        // two such entries in a row, in step with two consecutive parent
        // entries, the order is the parent's: increasing if its names are.
        if same_skips
            && praw
                .and_then(|pr| pr.get(skip_cursor.off..))
                .is_some_and(|r| r.starts_with(&raw[start..end]))
        {
            if !(prev_in_step && parent_unique) {
                unique &= prev_name.is_none_or(|p| p < name);
            }
            prev_name = Some(name);
            prev_in_step = true;
            skip_cursor.idx += 1;
            skip_cursor.off += end - start;
            start = end;
            continue;
        }
        start = end;
        unique &= prev_name.is_none_or(|p| p < name);
        prev_name = Some(name);
        prev_in_step = false;
        let mut skip_hit = None;
        if same_skips {
            skip_hit = find_parent(name, &mut skip_cursor);
            if skip_hit.is_some_and(|(k, _, pid)| k == kind && pid == raw_id) {
                continue;
            }
        }
        let id = oid(raw_id);
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
        let pe = if parent_unique {
            skip_hit
        } else {
            praw.and_then(|_| find_parent(name, &mut cursor))
        };
        let name = String::from_utf8_lossy(name);
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        match kind {
            EntKind::Tree => {
                if let Some(t) = trees.get(id) {
                    let pt = pe
                        .filter(|(k, _, _)| *k == EntKind::Tree)
                        .and_then(|(_, _, pid)| Some((oid(pid), trees.get(oid(pid))?)));
                    let pt = pt.as_ref().map(|(p, r)| (*p, r.as_ref()));
                    walk_tree(w, trees, id, &t, pt, &path, commit, depth + 1);
                }
            }
            // Symlink blobs (mode 120000) hold a target path: scanned
            // as text like any blob, never followed.
            EntKind::Blob => {
                let parent = pe
                    .filter(|(k, _, pid)| *k == EntKind::Blob && *pid != raw_id)
                    .map(|(_, _, pid)| oid(pid));
                w.add(id, None, &path, commit, parent);
            }
            EntKind::Gitlink => {}
        }
    }
    // Every entry above was looked up (and so is in the seen sets) or
    // skipped as its walked parent version's: later versions may skip
    // what they share with this one.
    w.walked.insert(id, unique);
}

/// A position in a parent tree's entries: the index of the next entry
/// and the byte offset where it starts.
#[derive(Clone, Copy, Default)]
struct Cursor {
    idx: usize,
    off: usize,
}

/// Where entry `e` of the raw tree `raw` ends (after its id).
fn entry_end(raw: &[u8], e: &RawEntry<'_>) -> usize {
    e.2.as_ptr() as usize - raw.as_ptr() as usize + e.2.len()
}
