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
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::path::PathBuf;
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
    inner: Arc<Mutex<HashMap<Key, Arc<Vec<Finding>>>>>,
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
    roots: HashSet<Oid>,
    commit_roots: Vec<Oid>,
    seen_blobs: HashSet<Oid>,
    seen_trees: HashSet<Oid>,
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
    seen_blobs: HashSet<Oid>,
    seen_trees: HashSet<Oid>,
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
        let root_set: HashSet<Oid> = roots.iter().copied().collect();
        let mut w = Walk {
            cache,
            seen_blobs: HashSet::new(),
            seen_trees: HashSet::new(),
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
        let mut seen_roots = HashSet::new();
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
        let (packed, commits) = std::thread::scope(|sc| {
            let h = cold.then(|| {
                sc.spawn(|| pack::Packs::open(&commondir).all_trees(MAX_TREE_BYTES, workers()))
            });
            let mut commits: Vec<Listed> = Vec::new();
            // Trees of the commits listed so far: a parent comes before
            // its children in this order, so it is rarely read twice.
            let mut tree_of: HashMap<Oid, Oid> = HashMap::new();
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
            let packed = h.map(super::join_worker).unwrap_or_default();
            (packed, commits)
        });
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
                let praw = ptree.and_then(|p| trees.get(p));
                walk_tree(&mut w, &trees, &raw, praw.as_deref(), "", Some(&cid), 0);
            }
        }
        for t in loose_trees {
            if let (true, Some(raw)) = (w.seen_trees.insert(t), trees.get(t)) {
                walk_tree(&mut w, &trees, &raw, None, "", None, 0);
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
            self.run_jobs(&repo, &w.jobs, cache, &mut w.res)
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

    /// Scans the jobs: blobs are read from the packs (each entry inflated
    /// once; on several threads, each taking whole delta trees and scanning
    /// what it reads, see [`Scanner::par_packs`]), a blob with a parent
    /// version is scanned once that version's line set is known, and
    /// whatever the packs did not give is read with git2 afterwards, in
    /// walk order, and scanned by workers. `None` for a job the byte budget
    /// stopped or whose blob could not be read. Results do not depend on
    /// the thread count or the order the threads finish in.
    fn run_jobs(
        &self,
        repo: &Repository,
        jobs: &[Job],
        cache: &BlobCache,
        res: &mut HistoryScan,
    ) -> Vec<Option<Arc<Vec<Finding>>>> {
        let hasher = LineHasher::new();
        let mut results: Vec<Option<Arc<Vec<Finding>>>> = vec![None; jobs.len()];
        let blob_jobs = jobs.iter().filter(|j| j.text.is_none()).count();
        let workers = workers();
        let mut sched = Sched::new(self, jobs, &hasher);
        if workers <= 1 || blob_jobs < PARALLEL_MIN_JOBS {
            let mut out = Vec::new();
            let mut send = |t: Task| out.push(self.scan_task(jobs, t, &hasher));
            sched.send_messages(&mut send);
            sched.run_packs(repo, &mut send);
            sched.run_git2(repo, &mut send);
            for (j, f) in out {
                cache.put(jobs[j].key.clone(), f.clone());
                results[j] = Some(f);
            }
        } else {
            let sched_mx = Mutex::new(sched);
            for (j, f) in self.par_packs(repo, jobs, &sched_mx, workers, &hasher) {
                cache.put(jobs[j].key.clone(), f.clone());
                results[j] = Some(f);
            }
            sched = sched_mx.into_inner().unwrap_or_else(|e| e.into_inner());
            // What the packs did not give, read with git2 on this thread
            // (a `Repository` is not `Sync`) and scanned by the workers.
            let (tx, rx) = std::sync::mpsc::sync_channel::<Task>(QUEUE);
            let rx = Mutex::new(rx);
            type Part = Vec<(usize, Option<Arc<Vec<Finding>>>)>;
            let parts: Vec<Part> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..workers)
                    .map(|_| {
                        sc.spawn(|| {
                            // A worker never leaves before the channel
                            // closes (the producer would block on a full
                            // queue): a panicking scan is caught, and
                            // re-raised on the caller after the scope.
                            let mut out = Vec::new();
                            loop {
                                let t = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                                let Ok(t) = t else { break };
                                let j = t.job;
                                let r =
                                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                        self.scan_task(jobs, t, &hasher)
                                    }));
                                match r {
                                    Ok((j, f)) => {
                                        cache.put(jobs[j].key.clone(), f.clone());
                                        out.push((j, Some(f)));
                                    }
                                    Err(_) => out.push((j, None)),
                                }
                            }
                            out
                        })
                    })
                    .collect();
                sched.run_git2(repo, &mut |t: Task| {
                    let _ = tx.send(t);
                });
                drop(tx);
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect()
            });
            for part in parts {
                for (j, f) in part {
                    match f {
                        Some(f) => results[j] = Some(f),
                        None => panic!("history scan: scanning {} panicked", jobs[j].path),
                    }
                }
            }
        }
        res.bytes_scanned += sched.bytes;
        res.blobs_scanned += sched.scanned;
        res.budget_exceeded |= sched.exceeded;
        results
    }

    /// The pack phase on `workers` threads that each both read and scan:
    /// they take delta trees of the pack plan one at a time (then the
    /// commit and tag messages, small tasks that even out the finish),
    /// inflate them, hash lines, and scan every blob the shared scheduler
    /// hands back — the blob itself once its parent version's lines are
    /// known, and any blobs that were parked waiting for its lines. Only
    /// the scheduler's bookkeeping is under the lock.
    fn par_packs(
        &self,
        repo: &Repository,
        jobs: &[Job],
        sched: &Mutex<Sched<'_>>,
        workers: usize,
        hasher: &LineHasher,
    ) -> Vec<(usize, Arc<Vec<Finding>>)> {
        let lock = || sched.lock().unwrap_or_else(|e| e.into_inner());
        let (wanted, needs, messages) = {
            let s = lock();
            let wanted: Vec<Oid> = s.ents.iter().map(|e| e.oid).collect();
            let needs: Vec<Needs> = s.ents.iter().map(Needs::of).collect();
            let messages: Vec<usize> = (0..jobs.len())
                .filter(|&j| jobs[j].text.is_some())
                .collect();
            (wanted, needs, messages)
        };
        let max = self.cfg.max_total_bytes;
        let packs = pack::Packs::open(repo.commondir());
        let plan = packs.plan(&wanted, max);
        let units = plan.units();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let parts: Vec<Vec<(usize, Arc<Vec<Finding>>)>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..workers)
                .map(|_| {
                    sc.spawn(|| {
                        let mut out = Vec::new();
                        let mut ready: Vec<Task> = Vec::new();
                        let mut w = pack::Walker::new(workers);
                        loop {
                            let u = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if u < units {
                                packs.walk_unit(&plan, u, &mut w, max, |e, d| {
                                    let (h, l) = needs[e].prepare(d, hasher);
                                    lock().produce_prepared(e, d.clone(), h, l, &mut |t| {
                                        ready.push(t);
                                    });
                                    for t in ready.drain(..) {
                                        out.push(self.scan_task(jobs, t, hasher));
                                    }
                                });
                            } else if let Some(&j) = messages.get(u - units) {
                                let t = lock().message_task(j);
                                if let Some(t) = t {
                                    out.push(self.scan_task(jobs, t, hasher));
                                }
                            } else {
                                break;
                            }
                        }
                        out
                    })
                })
                .collect();
            hs.into_iter().map(super::join_worker).collect()
        });
        parts.into_iter().flatten().collect()
    }

    /// Runs one scan task: whole for messages and blobs without a parent
    /// version, else only the lines the parent lacks.
    fn scan_task(&self, jobs: &[Job], t: Task, hasher: &LineHasher) -> (usize, Arc<Vec<Finding>>) {
        let path = &jobs[t.job].path;
        let f = match &t.parent {
            Some(ls) => {
                let own = match t.hashes {
                    Some(h) => h,
                    None => line_hashes(&t.data, hasher),
                };
                self.scan_added(path, &t.data, &own, ls, hasher)
            }
            None => {
                let mut r: &[u8] = &t.data;
                self.scan_reader_raw(path, &mut r)
                    .map(|x| x.0)
                    .unwrap_or_default()
            }
        };
        (t.job, Arc::new(f))
    }

    /// Findings of `data` on lines not in `parent` (the set of its line hashes by
    /// [`line_hashes`] with the same `hasher`; `own` are `data`'s, in line
    /// order), with `data`'s own line numbers
    /// and offsets. Runs of added lines are scanned with [`CTX_BEFORE`] /
    /// [`CTX_AFTER`] bytes of whole surrounding lines, and a finding is
    /// kept when it starts on an added line. Blobs where that is not
    /// faithful — binary or non-UTF-8, a window or larger, or holding a PEM
    /// marker (blocks span lines) — are scanned whole, keeping findings
    /// that overlap an added line.
    pub(crate) fn scan_added(
        &self,
        path: &str,
        data: &[u8],
        own: &[u64],
        parent: &LineSet,
        hasher: &LineHasher,
    ) -> Vec<Finding> {
        // Runs of added lines, as byte ranges including their newlines.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut s = 0;
        let mut own = own.iter();
        let mut nls = memchr::memchr_iter(b'\n', data);
        while s < data.len() {
            let (e, next) = match nls.next() {
                Some(i) => (i, i + 1),
                None => (data.len(), data.len()),
            };
            let h = own
                .next()
                .copied()
                .unwrap_or_else(|| hasher.hash(&data[s..e]));
            if !parent.contains(h) {
                match runs.last_mut() {
                    Some(r) if r.1 == s => r.1 = next,
                    _ => runs.push((s, next)),
                }
            }
            s = next;
        }
        if runs.is_empty() {
            return Vec::new();
        }
        let in_runs = |x: usize| {
            let i = runs.partition_point(|r| r.1 <= x);
            runs.get(i).is_some_and(|r| r.0 <= x)
        };
        let raw = data[..data.len().min(super::BINARY_SNIFF)].contains(&0)
            || std::str::from_utf8(data).is_err();
        if raw || data.len() >= super::WINDOW || super::PEM_MARK.is_match(data) {
            let mut r = data;
            let mut f = self
                .scan_reader_raw(path, &mut r)
                .map(|x| x.0)
                .unwrap_or_default();
            f.retain(|x| {
                let i = runs.partition_point(|r| r.1 <= x.byte_start);
                runs.get(i)
                    .is_some_and(|r| r.0 < x.byte_end.max(x.byte_start + 1))
            });
            return f;
        }
        let line_start = |x: usize| memchr::memrchr(b'\n', &data[..x]).map_or(0, |i| i + 1);
        let line_end =
            |x: usize| memchr::memchr(b'\n', &data[x..]).map_or(data.len(), |i| x + i + 1);
        // Segments to scan: runs widened to whole context lines, merged.
        let mut segs: Vec<(usize, usize)> = Vec::new();
        for &(a, b) in &runs {
            let ws = line_start(a.saturating_sub(CTX_BEFORE));
            let we = if b >= data.len() {
                data.len()
            } else {
                line_end((b + CTX_AFTER).min(data.len() - 1))
            };
            match segs.last_mut() {
                Some(l) if l.1 >= ws => l.1 = l.1.max(we),
                _ => segs.push((ws, we)),
            }
        }
        let mut out = Vec::new();
        let mut budget = self.cfg.max_decoded_bytes;
        let (mut line, mut at) = (0usize, 0usize);
        for (ws, we) in segs {
            line += memchr::memchr_iter(b'\n', &data[at..ws]).count();
            at = ws;
            for mut f in self.scan_chunk(path, &data[ws..we], false, &mut budget) {
                if !in_runs(ws + f.byte_start) {
                    continue;
                }
                f.line += line;
                f.byte_start += ws;
                f.byte_end += ws;
                out.push(f);
            }
            if out.len() >= self.cfg.max_findings_per_file {
                out.truncate(self.cfg.max_findings_per_file);
                break;
            }
        }
        out
    }
}

/// Threads for the parallel phases: the machine's cores, at most
/// [`MAX_WORKERS`].
fn workers() -> usize {
    #[cfg(test)]
    if let Some(n) = tests::WORKERS.get() {
        return n;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_WORKERS)
}

/// Keyed hashes of the lines of `data` (split on `\n`; a final newline
/// ends the last line), in order. The key is drawn per scan, so no
/// workspace can craft a line that collides with another to hide it
/// (see [`LineHasher`]).
fn line_hashes(data: &[u8], hasher: &LineHasher) -> Vec<u64> {
    let mut v = Vec::with_capacity(data.len() / 32 + 1);
    let mut s = 0;
    for nl in memchr::memchr_iter(b'\n', data) {
        v.push(hasher.hash(&data[s..nl]));
        s = nl + 1;
    }
    if s < data.len() {
        v.push(hasher.hash(&data[s..]));
    }
    v
}

/// The set of a version's line hashes: an open-addressing table indexed
/// by the (keyed, so unpredictable) hash itself, at most half full. A
/// lookup is one or two probes, where a binary search over the sorted
/// hashes cost a dozen mispredicted branches per line of every version.
pub(crate) struct LineSet {
    /// 0 = empty; a hash of 0 is stored as 1 (both sides map it alike).
    slots: Vec<u64>,
    mask: usize,
}

impl LineSet {
    fn new(hashes: &[u64]) -> LineSet {
        let cap = (hashes.len() * 2).next_power_of_two().max(16);
        let mut t = LineSet {
            slots: vec![0; cap],
            mask: cap - 1,
        };
        for &h in hashes {
            let h = h.max(1);
            let mut i = (h >> 32) as usize & t.mask;
            while t.slots[i] != 0 && t.slots[i] != h {
                i = (i + 1) & t.mask;
            }
            t.slots[i] = h;
        }
        t
    }

    fn contains(&self, h: u64) -> bool {
        let h = h.max(1);
        let mut i = (h >> 32) as usize & self.mask;
        loop {
            match self.slots[i] {
                0 => return false,
                x if x == h => return true,
                _ => i = (i + 1) & self.mask,
            }
        }
    }
}

/// The set of `hashes`.
fn line_set(hashes: &[u64]) -> LineSet {
    LineSet::new(hashes)
}

/// One scan for a worker.
struct Task {
    job: usize,
    data: Arc<Vec<u8>>,
    /// Line set of the parent version; `None` = scan whole.
    parent: Option<Arc<LineSet>>,
    /// `data`'s line hashes when already computed.
    hashes: Option<Vec<u64>>,
}

/// A blob to produce: a job's, or only a parent version whose lines a job
/// needs (one already scanned in an earlier call).
struct Ent {
    oid: Oid,
    job: Option<usize>,
    parent: Option<usize>,
    /// Jobs whose parent this is and that have not been handed out yet.
    deps: usize,
    produced: bool,
    /// Could not be read: dependents are scanned whole.
    failed: bool,
    /// Dropped while parked; read again in the git2 pass.
    deferred: bool,
    lines: Option<Arc<LineSet>>,
}

/// A blob waiting for its parent version's lines: (entry, bytes, its own
/// line hashes if computed).
type Parked = (usize, Arc<Vec<u8>>, Option<Vec<u64>>);

/// What producing an entry needs computed from its bytes (fixed when the
/// scheduler is built: an entry's dependents are only handed out after it
/// is produced, so `deps` has not moved by then).
#[derive(Clone, Copy)]
struct Needs {
    /// Its own line hashes: it is a job with a parent version.
    hashes: bool,
    /// Its line set: later versions wait for it.
    lines: bool,
}

impl Needs {
    fn of(e: &Ent) -> Needs {
        Needs {
            hashes: e.parent.is_some() && e.job.is_some(),
            lines: e.deps > 0,
        }
    }

    /// (own line hashes, line set) of `data`, as needed.
    fn prepare(self, data: &[u8], hasher: &LineHasher) -> (Option<Vec<u64>>, Option<Arc<LineSet>>) {
        if !self.hashes && !self.lines {
            return (None, None);
        }
        let h = line_hashes(data, hasher);
        match (self.hashes, self.lines) {
            (true, true) => {
                let l = Arc::new(line_set(&h));
                (Some(h), Some(l))
            }
            (true, false) => (Some(h), None),
            _ => (None, Some(Arc::new(line_set(&h)))),
        }
    }
}

/// The scheduler of [`Scanner::run_jobs`]: hands out each blob once its
/// parent version's lines are known (shared under a lock in the parallel
/// pack phase).
struct Sched<'a> {
    scanner: &'a Scanner,
    jobs: &'a [Job],
    hasher: &'a LineHasher,
    ents: Vec<Ent>,
    /// Blobs (entry, bytes, line hashes) waiting for the lines of entry `k`.
    parked: HashMap<usize, Vec<Parked>>,
    parked_bytes: usize,
    bytes: u64,
    scanned: usize,
    exceeded: bool,
}

impl<'a> Sched<'a> {
    fn new(scanner: &'a Scanner, jobs: &'a [Job], hasher: &'a LineHasher) -> Self {
        let mut ents: Vec<Ent> = Vec::new();
        let mut ent_of: HashMap<Oid, usize> = HashMap::new();
        let new_ent = |oid: Oid, job: Option<usize>| Ent {
            oid,
            job,
            parent: None,
            deps: 0,
            produced: false,
            failed: false,
            deferred: false,
            lines: None,
        };
        for (j, job) in jobs.iter().enumerate() {
            if job.text.is_some() {
                continue;
            }
            // Parents come first: an entry's parent has a smaller index,
            // so the in-order git2 pass always has it.
            let parent = job.parent.map(|p| {
                *ent_of.entry(p).or_insert_with(|| {
                    ents.push(new_ent(p, None));
                    ents.len() - 1
                })
            });
            let e = match ent_of.get(&job.oid) {
                Some(&e) if ents[e].job.is_none() && parent.is_none_or(|p| p < e) => {
                    ents[e].job = Some(j);
                    e
                }
                _ => {
                    ents.push(new_ent(job.oid, Some(j)));
                    ent_of.insert(job.oid, ents.len() - 1);
                    ents.len() - 1
                }
            };
            if let Some(p) = parent.filter(|&p| p != e) {
                ents[e].parent = Some(p);
                ents[p].deps += 1;
            }
        }
        Sched {
            scanner,
            jobs,
            hasher,
            ents,
            parked: HashMap::new(),
            parked_bytes: 0,
            bytes: 0,
            scanned: 0,
            exceeded: false,
        }
    }

    /// The task for message job `j`, if it fits the byte budget.
    fn message_task(&mut self, j: usize) -> Option<Task> {
        let t = self.jobs[j].text.as_ref()?;
        self.charge(t.len(), false).then(|| Task {
            job: j,
            data: Arc::new(t.clone()),
            parent: None,
            hashes: None,
        })
    }

    /// Sends every commit and tag message.
    fn send_messages(&mut self, send: &mut dyn FnMut(Task)) {
        for j in 0..self.jobs.len() {
            if let Some(t) = self.message_task(j) {
                send(t);
            }
        }
    }

    /// Reads the wanted blobs from the packs on this thread, in pack order.
    fn run_packs(&mut self, repo: &Repository, send: &mut dyn FnMut(Task)) {
        // Opening the pack indexes costs more than a few git2 reads.
        if self.ents.len() < PACK_MIN_BLOBS {
            return;
        }
        let max = self.scanner.cfg.max_total_bytes;
        let wanted: Vec<Oid> = self.ents.iter().map(|e| e.oid).collect();
        let packs = pack::Packs::open(repo.commondir());
        let plan = packs.plan(&wanted, max);
        let mut w = pack::Walker::new(1);
        for u in 0..plan.units() {
            packs.walk_unit(&plan, u, &mut w, max, |e, d| {
                self.produce(e, d.clone(), send);
            });
        }
    }

    /// Reads with git2, in entry order, whatever the packs did not give
    /// (loose objects, alternates, corrupt or oversized entries) and blobs
    /// dropped while parked; then scans whole anything still parked.
    fn run_git2(&mut self, repo: &Repository, send: &mut dyn FnMut(Task)) {
        let max = self.scanner.cfg.max_total_bytes;
        for e in 0..self.ents.len() {
            if self.ents[e].produced && !self.ents[e].deferred {
                continue;
            }
            match repo.find_blob(self.ents[e].oid) {
                Ok(b) if (b.size() as u64) <= max => {
                    let d = Arc::new(b.content().to_vec());
                    if self.ents[e].deferred {
                        self.ents[e].deferred = false;
                        if let Some(j) = self.ents[e].job {
                            self.dispatch_or_park(e, j, d, None, send);
                        }
                    } else {
                        self.produce(e, d, send);
                    }
                }
                _ => {
                    self.ents[e].produced = true;
                    self.ents[e].failed = true;
                    self.release(e, send);
                }
            }
        }
        // Anything still parked has a parent that never came: scan whole.
        let left: Vec<usize> = self.parked.keys().copied().collect();
        for p in left {
            self.ents[p].failed = true;
            self.release(p, send);
        }
    }

    /// Counts `len` bytes against the budget; false (and the flag set)
    /// when they do not fit.
    fn charge(&mut self, len: usize, blob: bool) -> bool {
        if self.bytes + len as u64 > self.scanner.cfg.max_total_bytes {
            self.exceeded = true;
            return false;
        }
        self.bytes += len as u64;
        self.scanned += usize::from(blob);
        true
    }

    fn produce(&mut self, e: usize, data: Arc<Vec<u8>>, send: &mut dyn FnMut(Task)) {
        if self.ents[e].produced {
            return;
        }
        let (h, l) = Needs::of(&self.ents[e]).prepare(&data, self.hasher);
        self.produce_prepared(e, data, h, l, send);
    }

    /// [`Sched::produce`] with the line hashes and line set already
    /// computed by [`Needs::prepare`] (outside the lock, in parallel).
    fn produce_prepared(
        &mut self,
        e: usize,
        data: Arc<Vec<u8>>,
        hashes: Option<Vec<u64>>,
        lines: Option<Arc<LineSet>>,
        send: &mut dyn FnMut(Task),
    ) {
        if self.ents[e].produced {
            return;
        }
        self.ents[e].produced = true;
        if lines.is_some() {
            self.ents[e].lines = lines;
        }
        if let Some(j) = self.ents[e].job {
            self.dispatch_or_park(e, j, data, hashes, send);
        }
        self.release(e, send);
    }

    /// Hands out the blobs parked on `p` (whole scans if `p` failed).
    fn release(&mut self, p: usize, send: &mut dyn FnMut(Task)) {
        if let Some(kids) = self.parked.remove(&p) {
            for (c, d, h) in kids {
                self.parked_bytes -= d.len();
                if let Some(j) = self.ents[c].job {
                    self.dispatch_or_park(c, j, d, h, send);
                }
            }
        }
    }

    fn dispatch_or_park(
        &mut self,
        e: usize,
        j: usize,
        data: Arc<Vec<u8>>,
        hashes: Option<Vec<u64>>,
        send: &mut dyn FnMut(Task),
    ) {
        let parent = match self.ents[e].parent {
            None => None,
            Some(p) if self.ents[p].failed => {
                self.ents[p].deps = self.ents[p].deps.saturating_sub(1);
                None
            }
            Some(p) => match self.ents[p].lines.clone() {
                Some(l) => {
                    self.ents[p].deps = self.ents[p].deps.saturating_sub(1);
                    if self.ents[p].deps == 0 {
                        self.ents[p].lines = None;
                    }
                    Some(l)
                }
                None => {
                    if self.parked_bytes + data.len() > MAX_PARKED_BYTES {
                        self.ents[e].deferred = true;
                    } else {
                        self.parked_bytes += data.len();
                        self.parked.entry(p).or_default().push((e, data, hashes));
                    }
                    return;
                }
            },
        };
        if self.charge(data.len(), true) {
            send(Task {
                job: j,
                data,
                parent,
                hashes,
            });
        }
    }
}

/// True when every root of the snapshot's walk is still a root now or an
/// ancestor of a current commit root, so everything it reached is still
/// reachable and only new commits need walking.
fn snapshot_still_valid(repo: &Repository, snap: &Snapshot, now: &HashSet<Oid>) -> bool {
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

/// Raw trees (git's tree format) for the walk: from the packs, else the
/// object database.
struct Trees<'r> {
    odb: git2::Odb<'r>,
    packed: HashMap<Oid, Arc<Vec<u8>>>,
}

impl Trees<'_> {
    fn get(&self, id: Oid) -> Option<std::borrow::Cow<'_, [u8]>> {
        if let Some(d) = self.packed.get(&id) {
            return Some(std::borrow::Cow::Borrowed(d));
        }
        let o = self.odb.read(id).ok()?;
        (o.kind() == ObjectType::Tree).then(|| std::borrow::Cow::Owned(o.data().to_vec()))
    }
}

/// Kind of a tree entry by its mode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EntKind {
    Tree,
    Blob,
    /// A submodule commit: lives in another repository.
    Gitlink,
}

/// Entries (kind, name, id) of a raw tree; stops at the first malformed
/// entry.
fn tree_entries(raw: &[u8]) -> impl Iterator<Item = (EntKind, &[u8], Oid)> {
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
fn walk_tree(
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

#[cfg(test)]
mod tests {
    use super::super::{ScanConfig, Scanner};
    use super::BlobCache;
    use git2::{Oid, Repository};
    use std::collections::BTreeSet;

    thread_local! {
        /// Thread count for scans started on this thread (`None`: the
        /// machine's), so a test can compare the serial and parallel
        /// paths on any machine.
        pub(super) static WORKERS: std::cell::Cell<Option<usize>> =
            const { std::cell::Cell::new(None) };
    }

    /// Runs `f` with scans on this thread using `n` threads.
    fn with_workers<T>(n: usize, f: impl FnOnce() -> T) -> T {
        WORKERS.set(Some(n));
        let r = f();
        WORKERS.set(None);
        r
    }

    const S1: &str = "ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h";
    const S2: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dcQx9F";
    const S3: &str = "AKIAZ7QW3ERT5YUI8OPA";

    /// Commits `files` (path, content; `None` deletes) on HEAD.
    fn commit(repo: &Repository, files: &[(&str, Option<&str>)], msg: &str) -> Oid {
        let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let base = head.as_ref().map(|c| c.tree().unwrap());
        let mut tb = repo.treebuilder(base.as_ref()).unwrap();
        for (p, c) in files {
            // Flat paths only: enough for these tests.
            match c {
                Some(c) => {
                    let b = repo.blob(c.as_bytes()).unwrap();
                    tb.insert(p, b, 0o100644).unwrap();
                }
                None => {
                    let _ = tb.remove(p);
                }
            }
        }
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let sig =
            git2::Signature::new("T", "t@t.invalid", &git2::Time::new(1_700_000_000, 0)).unwrap();
        let ps: Vec<&git2::Commit> = head.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, msg, &tree, &ps)
            .unwrap()
    }

    /// Rewrites every object into one pack (libgit2's packbuilder, which
    /// deltifies) and deletes the loose copies, so scans read the pack.
    fn pack_all(repo: &Repository) {
        let mut pb = repo.packbuilder().unwrap();
        let mut walk = repo.revwalk().unwrap();
        walk.push_head().unwrap();
        pb.insert_walk(&mut walk).unwrap();
        let mut buf = git2::Buf::new();
        pb.write_buf(&mut buf).unwrap();
        let packdir = repo.path().join("objects/pack");
        std::fs::create_dir_all(&packdir).unwrap();
        let mut idx = git2::Indexer::new(None, &packdir, 0o644, true).unwrap();
        std::io::Write::write_all(&mut idx, &buf).unwrap();
        idx.commit().unwrap();
        for e in std::fs::read_dir(repo.path().join("objects")).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.len() == 2 && n.chars().all(|c| c.is_ascii_hexdigit()) {
                std::fs::remove_dir_all(p).unwrap();
            }
        }
    }

    fn pem(body: &str) -> String {
        format!(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA{body}\nq3Xv9Lm2Kp8Rt4Wz7Yb1Nc5Vd0Hf6Gj3Sa9Qe2Tu\n-----END RSA PRIVATE KEY-----\n"
        )
    }

    /// A secret is reported once, at the commit whose change added its
    /// line, with that version's line number; later edits elsewhere in the
    /// file do not report it again; new files and changed PEM bodies are
    /// found; the packed repository gives the same result.
    #[test]
    fn added_lines_carry_the_introducing_commit_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let c1 = commit(
            &repo,
            &[(
                "config.py",
                Some(&format!("import os\nTOKEN = \"{S1}\"\nDEBUG = False\n")),
            )],
            "c1",
        );
        let moved = format!(
            "# a\n# b\n# c\n# d\n# e\nimport os\nTOKEN = \"{S1}\"\nDEBUG = True\nSTRIPE = \"{S2}\"\n"
        );
        let c2 = commit(&repo, &[("config.py", Some(&moved))], "c2");
        let c3 = commit(
            &repo,
            &[("aws.py", Some(&format!("KEY = \"{S3}\"\n")))],
            "c3",
        );
        let c4 = commit(
            &repo,
            &[("id_rsa", Some(&pem("Zq8v2Lm4Kp7RtXw9Yb3Nc6Vd")))],
            "c4",
        );
        let c5 = commit(
            &repo,
            &[("id_rsa", Some(&pem("Hk4Tq9Wm2Lp6Rs8Vx1Zb5Nd3")))],
            "c5",
        );
        let s = Scanner::new(ScanConfig::default());
        let check = |label: &str| {
            let r = s.scan_history(dir.path(), &BlobCache::new()).unwrap();
            let at = |v: &str| -> Vec<(String, String, usize)> {
                r.findings
                    .iter()
                    .filter(|f| f.value.contains(v))
                    .map(|f| (f.commit.clone().unwrap_or_default(), f.file.clone(), f.line))
                    .collect()
            };
            assert_eq!(
                at(S1),
                vec![(c1.to_string(), "config.py".into(), 2)],
                "{label}"
            );
            assert_eq!(
                at(S2),
                vec![(c2.to_string(), "config.py".into(), 9)],
                "{label}"
            );
            assert_eq!(
                at(S3),
                vec![(c3.to_string(), "aws.py".into(), 1)],
                "{label}"
            );
            let keys: Vec<_> = r
                .findings
                .iter()
                .filter(|f| f.rule == "private-key")
                .collect();
            let commits: BTreeSet<String> = keys.iter().filter_map(|f| f.commit.clone()).collect();
            assert_eq!(
                commits,
                BTreeSet::from([c4.to_string(), c5.to_string()]),
                "{label}: {keys:?}"
            );
            assert!(
                keys.iter().all(|f| f.line == 1 && f.file == "id_rsa"),
                "{label}"
            );
            r.findings
        };
        let loose = check("loose objects");
        pack_all(&repo);
        assert!(repo.path().join("objects/pack").read_dir().unwrap().count() >= 2);
        assert_eq!(check("packed"), loose);
    }

    /// On generated histories (edits, inserts, deletions, moves of lines
    /// with secrets and hard negatives), the added-lines scan finds every
    /// (value, path) a whole scan of every version finds, each at a commit
    /// whose version holds it on the reported line, and every introduction
    /// (a value in a version but not in its parent's) at its commit.
    #[test]
    fn same_introductions_as_whole_blob_scans() {
        const POOL: &[&str] = &[
            "    value = compute(42, 'abc')",
            "    return {'status': 'ok'}",
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "password = os.environ['DB_PASSWORD']",
            "",
            "# notes about the service",
        ];
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let mut seed = 11u64;
        let mut rnd = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let alnum = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let names = ["a.py", "b.env", "c.yaml", "d.txt"];
        let mut files: Vec<Vec<String>> = vec![Vec::new(); names.len()];
        let mut commits = Vec::new();
        // More commits than PACK_MIN_BLOBS, so the packed run reads its
        // blobs through the pack reader.
        for c in 0..2 * super::PACK_MIN_BLOBS {
            let f = rnd(names.len());
            let lines = &mut files[f];
            for _ in 0..1 + rnd(4) {
                let at = if lines.is_empty() {
                    0
                } else {
                    rnd(lines.len() + 1)
                };
                let line = if rnd(3) == 0 {
                    let tok: String = (0..36).map(|_| alnum[rnd(alnum.len())] as char).collect();
                    format!("TOKEN_{c} = \"ghp_{tok}\"")
                } else {
                    POOL[rnd(POOL.len())].to_string()
                };
                match rnd(4) {
                    0 if !lines.is_empty() => {
                        lines.remove(at.min(lines.len() - 1));
                    }
                    1 if !lines.is_empty() => {
                        let i = at.min(lines.len() - 1);
                        lines[i] = line;
                    }
                    2 if lines.len() > 1 => {
                        let l = lines.remove(0); // a line moves to the end
                        lines.push(l);
                    }
                    _ => lines.insert(at, line),
                }
            }
            let content = files[f].join("\n") + "\n";
            commits.push(commit(
                &repo,
                &[(names[f], Some(&content))],
                &format!("c{c}"),
            ));
        }
        let s = Scanner::new(ScanConfig::default());
        // Whole scans of every version of every path.
        type Vp = (String, String);
        let mut present: BTreeSet<Vp> = BTreeSet::new();
        let mut intro: BTreeSet<(String, String, String)> = BTreeSet::new();
        let mut prev: std::collections::HashMap<String, BTreeSet<String>> = Default::default();
        let mut versions: std::collections::HashMap<(String, String), Vec<u8>> = Default::default();
        for c in &commits {
            let tree = repo.find_commit(*c).unwrap().tree().unwrap();
            for e in tree.iter() {
                let p = e.name().unwrap().to_string();
                let blob = repo.find_blob(e.id()).unwrap();
                let vals: BTreeSet<String> = s
                    .scan_bytes(&p, blob.content())
                    .into_iter()
                    .map(|f| f.value)
                    .collect();
                for v in &vals {
                    present.insert((v.clone(), p.clone()));
                    if !prev.get(&p).is_some_and(|pv| pv.contains(v)) {
                        intro.insert((v.clone(), c.to_string(), p.clone()));
                    }
                }
                versions.insert((c.to_string(), p.clone()), blob.content().to_vec());
                prev.insert(p, vals);
            }
        }
        assert!(
            intro.len() >= 10,
            "the generator plants enough secrets: {}",
            intro.len()
        );
        let check = |label: &str| {
            let r = s.scan_history(dir.path(), &BlobCache::new()).unwrap();
            let got: BTreeSet<(String, String, String)> = r
                .findings
                .iter()
                .filter(|f| f.file != "commit message")
                .map(|f| (f.value.clone(), f.commit.clone().unwrap(), f.file.clone()))
                .collect();
            let got_vp: BTreeSet<Vp> = got.iter().map(|(v, _, p)| (v.clone(), p.clone())).collect();
            assert_eq!(got_vp, present, "{label}: every (value, path) found");
            for i in &intro {
                assert!(got.contains(i), "{label}: introduction {i:?} missing");
            }
            for f in r.findings.iter().filter(|f| f.file != "commit message") {
                let v = &versions[&(f.commit.clone().unwrap(), f.file.clone())];
                let line = String::from_utf8_lossy(v)
                    .lines()
                    .nth(f.line - 1)
                    .unwrap_or("")
                    .to_string();
                assert!(
                    line.contains(&f.value),
                    "{label}: {f:?} not on line {}: {line}",
                    f.line
                );
            }
            r.findings
        };
        // Same findings, in the same order, whether one thread reads and
        // scans everything or several share the work (the pack's delta
        // trees, or git2's reads).
        let loose = with_workers(1, || check("loose, 1 thread"));
        assert_eq!(with_workers(3, || check("loose, 3 threads")), loose);
        pack_all(&repo);
        assert_eq!(check("packed"), loose);
        assert_eq!(with_workers(1, || check("packed, 1 thread")), loose);
        assert_eq!(with_workers(3, || check("packed, 3 threads")), loose);
    }
}
