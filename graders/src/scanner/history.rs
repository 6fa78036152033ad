//! History mode, in-process with git2 (no git program, hook, filter or
//! configured command ever runs): every blob reachable from every ref
//! (branches, tags, notes, stash, replace refs — `references()` lists all
//! of `refs/`), from `HEAD`, and from every reflog entry (old and new ids),
//! each blob scanned once and reported at the commit and path where the
//! oldest-first walk first meets it. Optionally every other blob in the
//! object database too (`Odb::foreach`), since grading must see objects an
//! agent merely unreferenced.

use super::{Error, Finding, Scanner};
use git2::{ObjectType, Oid, Repository, RepositoryOpenFlags, Sort};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Deepest tree nesting followed.
const MAX_TREE_DEPTH: usize = 256;
/// Cache entries kept before the cache is cleared (bounds memory).
const MAX_CACHE: usize = 500_000;
/// Objects listed from the ODB at most.
const MAX_ODB_OBJECTS: usize = 2_000_000;

/// Findings per blob (keyed by blob id and file name, which rules consult),
/// shared across scans and threads so a rescan after a step reads only new
/// blobs. Use one cache per [`super::ScanConfig`].
#[derive(Clone, Default)]
pub struct BlobCache {
    inner: Arc<Mutex<HashMap<String, Arc<Vec<Finding>>>>>,
}

impl std::fmt::Debug for BlobCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlobCache({} entries)", self.len())
    }
}

impl BlobCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
    /// Number of cached blobs.
    pub fn len(&self) -> usize {
        self.inner.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn get(&self, k: &str) -> Option<Arc<Vec<Finding>>> {
        self.inner.lock().ok()?.get(k).cloned()
    }
    fn put(&self, k: String, v: Arc<Vec<Finding>>) {
        if let Ok(mut m) = self.inner.lock() {
            if m.len() >= MAX_CACHE {
                m.clear();
            }
            m.insert(k, v);
        }
    }
}

/// Result of [`Scanner::scan_history`].
#[derive(Debug, Clone, Default)]
pub struct HistoryScan {
    /// Findings with `commit` set (`None` for blobs reached only through a
    /// tag, a bare tree or the object database) and `file` the path there
    /// (`<object OID>` when no path is known).
    pub findings: Vec<Finding>,
    /// Blobs read and scanned in this call.
    pub blobs_scanned: usize,
    /// Blobs whose findings came from the cache.
    pub blobs_cached: usize,
    /// Commits walked.
    pub commits: usize,
    /// Blob bytes scanned in this call.
    pub bytes_scanned: u64,
    /// The byte budget stopped the scan; some blobs were not read.
    pub budget_exceeded: bool,
}

struct Walk<'a> {
    repo: &'a Repository,
    cache: &'a BlobCache,
    seen_blobs: HashSet<Oid>,
    seen_trees: HashSet<Oid>,
    res: HistoryScan,
}

impl Scanner {
    /// Scans every blob reachable from any ref, HEAD or reflog entry (and,
    /// with `history_all_objects`, every blob in the object database).
    pub fn scan_history(&self, repo_dir: &Path, cache: &BlobCache) -> Result<HistoryScan, Error> {
        self.history(repo_dir, cache, self.cfg.history_all_objects)
    }

    /// [`Scanner::scan_history`] plus every other blob in the object
    /// database, whatever the config says.
    pub fn scan_odb(&self, repo_dir: &Path, cache: &BlobCache) -> Result<HistoryScan, Error> {
        self.history(repo_dir, cache, true)
    }

    fn history(
        &self,
        repo_dir: &Path,
        cache: &BlobCache,
        all_objects: bool,
    ) -> Result<HistoryScan, Error> {
        let repo = Repository::open_ext(
            repo_dir,
            RepositoryOpenFlags::NO_SEARCH,
            std::iter::empty::<&std::ffi::OsStr>(),
        )?;
        let mut roots: Vec<Oid> = Vec::new();
        let mut names: Vec<String> = vec!["HEAD".into()];
        if let Ok(h) = repo.head() {
            roots.extend(h.target());
        }
        for r in repo.references()? {
            let Ok(r) = r else { continue };
            if let Some(oid) = r.target() {
                roots.push(oid);
            } else if let Ok(res) = r.resolve() {
                roots.extend(res.target());
            }
            if let Some(n) = r.name() {
                names.push(n.to_string());
            }
        }
        for n in &names {
            if let Ok(log) = repo.reflog(n) {
                for e in log.iter() {
                    roots.push(e.id_new());
                    roots.push(e.id_old());
                }
            }
        }
        let mut walk = repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME | Sort::REVERSE)?;
        let mut loose_trees: Vec<Oid> = Vec::new();
        let mut loose_blobs: Vec<Oid> = Vec::new();
        let mut seen_roots = HashSet::new();
        for oid in roots {
            if oid.is_zero() || !seen_roots.insert(oid) {
                continue;
            }
            let Ok(mut obj) = repo.find_object(oid, None) else {
                continue;
            };
            // Peel annotated tags (bounded: tag chains can be long).
            for _ in 0..32 {
                if obj.kind() != Some(ObjectType::Tag) {
                    break;
                }
                match obj.as_tag().map(|t| t.target()) {
                    Some(Ok(t)) => obj = t,
                    _ => break,
                }
            }
            match obj.kind() {
                Some(ObjectType::Commit) => walk.push(obj.id())?,
                Some(ObjectType::Tree) => loose_trees.push(obj.id()),
                Some(ObjectType::Blob) => loose_blobs.push(obj.id()),
                _ => {}
            }
        }
        let mut w = Walk {
            repo: &repo,
            cache,
            seen_blobs: HashSet::new(),
            seen_trees: HashSet::new(),
            res: HistoryScan::default(),
        };
        for oid in walk {
            let Ok(oid) = oid else { continue };
            let Ok(commit) = repo.find_commit(oid) else {
                continue;
            };
            w.res.commits += 1;
            let Ok(tree) = commit.tree() else { continue };
            let cid = oid.to_string();
            if w.seen_trees.insert(tree.id()) {
                self.walk_tree(&mut w, &tree, "", Some(&cid), 0);
            }
        }
        for t in loose_trees {
            if let (true, Ok(tree)) = (w.seen_trees.insert(t), repo.find_tree(t)) {
                self.walk_tree(&mut w, &tree, "", None, 0);
            }
        }
        for b in loose_blobs {
            if w.seen_blobs.insert(b) {
                self.blob(&mut w, b, &format!("<object {b}>"), None);
            }
        }
        if all_objects {
            let odb = repo.odb()?;
            let mut all = Vec::new();
            odb.foreach(|oid| {
                all.push(*oid);
                all.len() < MAX_ODB_OBJECTS
            })?;
            for oid in all {
                if w.seen_blobs.contains(&oid) {
                    continue;
                }
                if let Ok((_, ObjectType::Blob)) = odb.read_header(oid) {
                    w.seen_blobs.insert(oid);
                    self.blob(&mut w, oid, &format!("<object {oid}>"), None);
                }
            }
        }
        Ok(w.res)
    }

    fn walk_tree(
        &self,
        w: &mut Walk<'_>,
        tree: &git2::Tree<'_>,
        prefix: &str,
        commit: Option<&str>,
        depth: usize,
    ) {
        if depth > MAX_TREE_DEPTH {
            return;
        }
        for e in tree.iter() {
            let name = String::from_utf8_lossy(e.name_bytes());
            let path = if prefix.is_empty() {
                name.into_owned()
            } else {
                format!("{prefix}/{name}")
            };
            match e.kind() {
                Some(ObjectType::Tree) if w.seen_trees.insert(e.id()) => {
                    if let Ok(t) = w.repo.find_tree(e.id()) {
                        self.walk_tree(w, &t, &path, commit, depth + 1);
                    }
                }
                // Symlink blobs (mode 120000) hold a target path: scanned
                // as text like any blob, never followed.
                Some(ObjectType::Blob) if w.seen_blobs.insert(e.id()) => {
                    self.blob(w, e.id(), &path, commit);
                }
                _ => {} // submodule commits live in another repository
            }
        }
    }

    fn blob(&self, w: &mut Walk<'_>, oid: Oid, path: &str, commit: Option<&str>) {
        let base = path.rsplit('/').next().unwrap_or(path);
        let key = format!("{oid}|{base}");
        let found = if let Some(f) = w.cache.get(&key) {
            w.res.blobs_cached += 1;
            f
        } else {
            let Ok(blob) = w.repo.find_blob(oid) else {
                return;
            };
            let data = blob.content();
            if w.res.bytes_scanned + data.len() as u64 > self.cfg.max_total_bytes {
                w.res.budget_exceeded = true;
                return;
            }
            w.res.bytes_scanned += data.len() as u64;
            w.res.blobs_scanned += 1;
            let mut r = data;
            let (f, _) = self.scan_reader_raw(path, &mut r).unwrap_or_default();
            let f = Arc::new(f);
            w.cache.put(key, f.clone());
            f
        };
        let mut out: Vec<Finding> = found
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.file = path.to_string();
                f.commit = commit.map(str::to_string);
                f
            })
            .collect();
        self.filter(&mut out, path, commit);
        w.res.findings.extend(out);
    }
}
