//! History mode, in-process with git2 (no git program, hook, filter or
//! configured command ever runs): every blob reachable from every ref
//! (branches, tags, notes, stash, replace refs — `references()` lists all
//! of `refs/`), from `HEAD`, and from every reflog entry (old and new ids),
//! each blob scanned once and reported at the commit and path where the
//! oldest-first walk first meets it. Optionally every other blob in the
//! object database too (`Odb::foreach`), since grading must see objects an
//! agent merely unreferenced.
//!
//! Speed: a blob whose path existed in the commit's first parent is scanned
//! only on its *added lines* (lines not in the parent's version, with a
//! little context), as `git log -p` scanners such as gitleaks do; a blob
//! with no parent version is scanned whole. By induction over the walk
//! order every line of every reachable blob is scanned in the first blob
//! that carries it, so the set of (value, introducing commit, path) is the
//! same as scanning every blob whole, without re-reporting an unchanged
//! secret at every later commit that touches its file. Blobs are read
//! through [`pack::Packs`] (each pack entry inflated once) with git2 as the
//! fallback.

use super::linehash::LineHasher;
use super::pack;
use super::{Error, Finding, Scanner};
use git2::{ObjectType, Oid, Repository, RepositoryOpenFlags, Sort};
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Hash sets and maps of object ids, pack offsets and indexes: foldhash
/// under a per-process random seed (an agent who grinds object ids cannot
/// aim them at one bucket without it), several times cheaper than SipHash
/// on the walk's millions of lookups. Never used where a collision would
/// change a result, only its cost.
pub(crate) type FastSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
/// See [`FastSet`].
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

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
    inner: Arc<Mutex<FastMap<Key, Arc<Vec<Finding>>>>>,
    snapshots: Arc<Mutex<HashMap<PathBuf, Arc<Snapshot>>>>,
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
    fn get(&self, k: &Key) -> Option<Arc<Vec<Finding>>> {
        self.inner.lock().ok()?.get(k).cloned()
    }
    fn snapshot(&self, repo: &Path) -> Option<Arc<Snapshot>> {
        self.snapshots.lock().ok()?.get(repo).cloned()
    }
    fn put_snapshot(&self, repo: PathBuf, s: Arc<Snapshot>) {
        if let Ok(mut m) = self.snapshots.lock() {
            if m.len() >= MAX_SNAPSHOTS && !m.contains_key(&repo) {
                m.clear();
            }
            m.insert(repo, s);
        }
    }
    fn put(&self, k: Key, v: Arc<Vec<Finding>>) {
        if let Ok(mut m) = self.inner.lock() {
            if m.len() >= MAX_CACHE {
                m.clear();
            }
            m.insert(k, v);
        }
    }
}

/// What a cached result depends on: the object, the name rules see (the
/// path for messages, the file name for blobs) and, for an added-lines
/// scan, the parent version it was taken against — so such a result is
/// never taken for a whole-blob one, or another parent's.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    oid: Oid,
    name: Box<str>,
    parent: Option<Oid>,
    message: bool,
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
    /// Blobs whose findings came from the cache (or, on a rescan that
    /// walked only new commits, from the previous walk).
    pub blobs_cached: usize,
    /// Commits walked.
    pub commits: usize,
    /// Blob bytes scanned in this call.
    pub bytes_scanned: u64,
    /// The byte budget stopped the scan; some blobs were not read.
    pub budget_exceeded: bool,
}

/// One blob or message to scan, found by the walk.
struct Job {
    /// Blob id (messages: the commit or tag id, used only for errors).
    oid: Oid,
    /// Message bytes for commit/tag messages; `None` for blobs.
    text: Option<Vec<u8>>,
    path: Arc<str>,
    key: Key,
    /// The blob at the same path in the commit's first parent, when it
    /// differs: only lines not in it are scanned.
    parent: Option<Oid>,
}

/// A commit listed by the revwalk: (commit, its message if unseen, its
/// tree, its first parent's tree).
type Listed = (Oid, Option<Vec<u8>>, Oid, Option<Oid>);

/// What the walk met, in walk order: findings come from the cache or a job.
struct Item {
    path: Arc<str>,
    commit: Option<Arc<str>>,
    found: Source,
}

enum Source {
    Cached(Arc<Vec<Finding>>),
    Job(usize),
}

/// State kept between scans of one repository so that a rescan walks only
/// commits that are new (see [`Scanner::scan_history`]).
struct Snapshot {
    roots: FastSet<Oid>,
    commit_roots: Vec<Oid>,
    seen_blobs: FastSet<Oid>,
    seen_trees: FastSet<Oid>,
    findings: Vec<Finding>,
    commits: usize,
    /// Blobs the walk covered (scanned or cached).
    blobs: usize,
}

/// Fewer blobs than this are read with git2 only (rescans).
const PACK_MIN_BLOBS: usize = 64;
/// Tree bytes taken from the packs for a cold walk at most.
const MAX_TREE_BYTES: usize = 256 << 20;
/// Snapshots kept per cache (one per repository path).
const MAX_SNAPSHOTS: usize = 64;
/// Old roots checked for reachability before a rescan falls back to a
/// full walk.
const MAX_ROOT_CHECKS: usize = 64;
/// Fewer jobs than this run on the calling thread.
const PARALLEL_MIN_JOBS: usize = 32;
/// Worker threads at most.
const MAX_WORKERS: usize = 8;
/// Bytes of read blobs held while they wait for their parent version's
/// lines (pack order is not history order); past this they are dropped and
/// read again later.
const MAX_PARKED_BYTES: usize = 64 << 20;
/// Scan tasks queued for the workers at most (bounds memory).
const QUEUE: usize = 256;
/// Added-line scans: whole lines of context scanned before each run of
/// added lines (look-back of the SHA/Firebase/type contexts), and after.
const CTX_BEFORE: usize = 512;
const CTX_AFTER: usize = 256;

struct Walk<'a> {
    cache: &'a BlobCache,
    seen_blobs: FastSet<Oid>,
    seen_trees: FastSet<Oid>,
    /// Trees whose every entry [`walk_tree`] has gone through in this
    /// call, so every blob and tree id in them is in the seen sets; true
    /// when the tree's entry names are strictly increasing (so unique).
    walked: FastMap<Oid, bool>,
    res: HistoryScan,
    items: Vec<Item>,
    jobs: Vec<Job>,
}

impl Walk<'_> {
    fn add(
        &mut self,
        oid: Oid,
        text: Option<Vec<u8>>,
        path: &str,
        commit: Option<&Arc<str>>,
        parent: Option<Oid>,
    ) {
        let key = if text.is_some() {
            Key {
                oid,
                name: path.into(),
                parent: None,
                message: true,
            }
        } else {
            Key {
                oid,
                name: path.rsplit('/').next().unwrap_or(path).into(),
                parent,
                message: false,
            }
        };
        let path: Arc<str> = path.into();
        let found = if let Some(f) = self.cache.get(&key) {
            if text.is_none() {
                self.res.blobs_cached += 1;
            }
            Source::Cached(f)
        } else {
            let j = self.jobs.len();
            self.jobs.push(Job {
                oid,
                text,
                path: path.clone(),
                key,
                parent,
            });
            Source::Job(j)
        };
        self.items.push(Item {
            path,
            commit: commit.cloned(),
            found,
        });
    }
}

mod lines;
mod sched;
#[cfg(test)]
mod tests;
mod trees;

use lines::{LineHashes, LineSet, line_hashes, line_set};
use sched::workers;
use trees::{Trees, walk_tree};

impl Scanner {
    /// Scans every blob reachable from any ref, HEAD or reflog entry (and,
    /// with `history_all_objects`, every blob in the object database), and
    /// every commit and annotated-tag message (file `commit message` /
    /// `tag message`, commit = the commit, or the tag's target commit).
    ///
    /// Cost: each blob is read once; a blob whose path had an earlier
    /// version in the same call is scanned only around the changed region
    /// ([`Scanner::scan_incremental`]); chains of versions are spread over
    /// the machine's cores. The cache keeps per-blob findings and, per
    /// repository, the last walk: when every root of that walk is still a
    /// root or an ancestor of one, a rescan walks only the new commits.
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
        let snap_key = std::fs::canonicalize(repo.path()).unwrap_or_else(|_| repo.path().into());
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
        roots.retain(|o| !o.is_zero());
        let root_set: FastSet<Oid> = roots.iter().copied().collect();
        let mut w = Walk {
            cache,
            seen_blobs: FastSet::default(),
            seen_trees: FastSet::default(),
            walked: FastMap::default(),
            res: HistoryScan::default(),
            items: Vec::new(),
            jobs: Vec::new(),
        };
        let mut walk = repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME | Sort::REVERSE)?;
        let mut base: Option<Arc<Snapshot>> = None;
        if let Some(snap) = cache.snapshot(&snap_key).filter(|_| !all_objects)
            && snapshot_still_valid(&repo, &snap, &root_set)
        {
            for &c in &snap.commit_roots {
                walk.hide(c)?;
            }
            w.seen_blobs = snap.seen_blobs.clone();
            w.seen_trees = snap.seen_trees.clone();
            base = Some(snap);
        }
        let mut loose_trees: Vec<Oid> = Vec::new();
        let mut loose_blobs: Vec<Oid> = Vec::new();
        let mut commit_roots: Vec<Oid> = Vec::new();
        let mut seen_roots = FastSet::default();
        for oid in roots {
            if !seen_roots.insert(oid) {
                continue;
            }
            let Ok(mut obj) = repo.find_object(oid, None) else {
                continue;
            };
            // Peel annotated tags (bounded: tag chains can be long),
            // queueing each tag's message.
            let mut tags: Vec<(Oid, Vec<u8>)> = Vec::new();
            for _ in 0..32 {
                if obj.kind() != Some(ObjectType::Tag) {
                    break;
                }
                let Some(t) = obj.as_tag() else { break };
                if !w.seen_blobs.contains(&t.id()) {
                    tags.push((t.id(), t.message_bytes().unwrap_or_default().to_vec()));
                }
                match t.target() {
                    Ok(t) => obj = t,
                    _ => break,
                }
            }
            let target: Option<Arc<str>> =
                (obj.kind() == Some(ObjectType::Commit)).then(|| obj.id().to_string().into());
            for (tid, msg) in tags {
                if w.seen_blobs.insert(tid) {
                    w.add(tid, Some(msg), "tag message", target.as_ref(), None);
                }
            }
            match obj.kind() {
                Some(ObjectType::Commit) => {
                    walk.push(obj.id())?;
                    commit_roots.push(obj.id());
                }
                Some(ObjectType::Tree) => loose_trees.push(obj.id()),
                Some(ObjectType::Blob) => loose_blobs.push(obj.id()),
                _ => {}
            }
        }
        // A cold walk reads every tree: take them from the packs in one
        // pass, on another thread while this one lists the commits (with
        // libgit2). A rescan reads only a few new trees: git2 is cheaper.
        let commondir = repo.commondir().to_path_buf();
        let cold = base.is_none();
        let (packs, packed, commits) = std::thread::scope(|sc| {
            // The packs stay open for the blob pass, their header tables
            // read (a pass over the whole pack) by this one.
            let h = cold.then(|| {
                sc.spawn(|| {
                    let packs = pack::Packs::open(&commondir);
                    let trees = packs.all_trees(MAX_TREE_BYTES, workers());
                    (packs, trees)
                })
            });
            let mut commits: Vec<Listed> = Vec::new();
            // Trees of the commits listed so far: a parent comes before
            // its children in this order, so it is rarely read twice.
            let mut tree_of: FastMap<Oid, Oid> = FastMap::default();
            for oid in walk {
                let Ok(oid) = oid else { continue };
                let Ok(commit) = repo.find_commit(oid) else {
                    continue;
                };
                let msg = w
                    .seen_blobs
                    .insert(oid)
                    .then(|| commit.message_bytes().to_vec());
                let tid = commit.tree_id();
                let ptree = commit.parent_ids().next().and_then(|p| {
                    tree_of
                        .get(&p)
                        .copied()
                        .or_else(|| repo.find_commit(p).ok().map(|c| c.tree_id()))
                });
                tree_of.insert(oid, tid);
                commits.push((oid, msg, tid, ptree));
            }
            let (packs, packed) = match h.map(super::join_worker) {
                Some((p, t)) => (Some(p), t),
                None => (None, FastMap::default()),
            };
            (packs, packed, commits)
        });
        // The walk below runs on this thread alone: the regexes compile
        // on the other core meanwhile (if nothing started them yet).
        super::warm_in_background();
        let trees = Trees {
            odb: repo.odb()?,
            packed,
        };
        for (oid, msg, tid, ptree) in commits {
            w.res.commits += 1;
            let cid: Arc<str> = oid.to_string().into();
            if let Some(msg) = msg {
                w.add(oid, Some(msg), "commit message", Some(&cid), None);
            }
            if w.seen_trees.insert(tid)
                && let Some(raw) = trees.get(tid)
            {
                let praw = ptree.and_then(|p| Some((p, trees.get(p)?)));
                let parent = praw.as_ref().map(|(p, r)| (*p, r.as_ref()));
                walk_tree(&mut w, &trees, tid, &raw, parent, "", Some(&cid), 0);
            }
        }
        for t in loose_trees {
            if let (true, Some(raw)) = (w.seen_trees.insert(t), trees.get(t)) {
                walk_tree(&mut w, &trees, t, &raw, None, "", None, 0);
            }
        }
        for b in loose_blobs {
            if w.seen_blobs.insert(b) {
                w.add(b, None, &format!("<object {b}>"), None, None);
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
                    w.add(oid, None, &format!("<object {oid}>"), None, None);
                }
            }
        }
        // Freeing the trees (tens of MB on a big history) overlaps the
        // scan instead of delaying it.
        let packed = trees.packed;
        let results = std::thread::scope(|sc| {
            if !packed.is_empty() {
                sc.spawn(move || drop(packed));
            }
            self.run_jobs(&repo, &w.jobs, cache, &mut w.res, packs)
        });
        let mut findings = base
            .as_ref()
            .map(|b| b.findings.clone())
            .unwrap_or_default();
        for it in &w.items {
            let found = match &it.found {
                Source::Cached(f) => f.clone(),
                Source::Job(j) => match &results[*j] {
                    Some(f) => f.clone(),
                    None => continue,
                },
            };
            let mut out: Vec<Finding> = found
                .iter()
                .map(|f| {
                    let mut f = f.clone();
                    f.file = it.path.to_string();
                    f.commit = it.commit.as_deref().map(str::to_string);
                    f
                })
                .collect();
            self.filter(&mut out, &it.path, it.commit.as_deref());
            findings.extend(out);
        }
        w.res.findings = findings;
        // Freeing the walk's items and jobs and the results (tens of
        // thousands of small allocations) on another thread: the caller
        // goes on with the findings meanwhile.
        let garbage = (
            std::mem::take(&mut w.items),
            std::mem::take(&mut w.jobs),
            results,
        );
        let _ = std::thread::Builder::new().spawn(move || drop(garbage));
        if let Some(b) = &base {
            w.res.commits += b.commits;
            w.res.blobs_cached += b.blobs;
        }
        // A scan that hit the byte budget is not a base for rescans.
        if !all_objects && !w.res.budget_exceeded {
            cache.put_snapshot(
                snap_key,
                Arc::new(Snapshot {
                    roots: root_set,
                    commit_roots,
                    seen_blobs: w.seen_blobs,
                    seen_trees: w.seen_trees,
                    findings: w.res.findings.clone(),
                    commits: w.res.commits,
                    blobs: w.res.blobs_scanned + w.res.blobs_cached,
                }),
            );
        }
        Ok(w.res)
    }
}

/// True when every root of the snapshot's walk is still a root now or an
/// ancestor of a current commit root, so everything it reached is still
/// reachable and only new commits need walking.
fn snapshot_still_valid(repo: &Repository, snap: &Snapshot, now: &FastSet<Oid>) -> bool {
    let missing: Vec<Oid> = snap
        .roots
        .iter()
        .filter(|o| !now.contains(o))
        .copied()
        .collect();
    if missing.len() > MAX_ROOT_CHECKS {
        return false;
    }
    let current: Vec<Oid> = now
        .iter()
        .filter(|o| repo.find_commit(**o).is_ok())
        .copied()
        .take(MAX_ROOT_CHECKS)
        .collect();
    missing.iter().all(|m| {
        repo.find_commit(*m).is_ok()
            && current
                .iter()
                .any(|c| repo.graph_descendant_of(*c, *m).unwrap_or(false))
    })
}
