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
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    fn get(&self, k: &str) -> Option<Arc<Vec<Finding>>> {
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
    path: String,
    key: String,
}

/// What the walk met, in walk order: findings come from the cache or a job.
struct Item {
    path: String,
    commit: Option<String>,
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

/// Snapshots kept per cache (one per repository path).
const MAX_SNAPSHOTS: usize = 64;
/// Old roots checked for reachability before a rescan falls back to a
/// full walk.
const MAX_ROOT_CHECKS: usize = 64;
/// Fewer jobs than this run on the calling thread.
const PARALLEL_MIN_JOBS: usize = 32;
/// Worker threads at most.
const MAX_WORKERS: usize = 8;

struct Walk<'a> {
    repo: &'a Repository,
    cache: &'a BlobCache,
    seen_blobs: HashSet<Oid>,
    seen_trees: HashSet<Oid>,
    res: HistoryScan,
    items: Vec<Item>,
    jobs: Vec<Job>,
    /// Jobs grouped by path, oldest first: a worker scans one chain in
    /// order and diffs each version against the one before.
    chains: Vec<Vec<usize>>,
    chain_of: HashMap<String, usize>,
}

impl Walk<'_> {
    fn add(&mut self, oid: Oid, text: Option<Vec<u8>>, path: &str, commit: Option<&str>) {
        let key = if text.is_some() {
            format!("{oid}|{path}")
        } else {
            let base = path.rsplit('/').next().unwrap_or(path);
            format!("{oid}|{base}")
        };
        let found = if let Some(f) = self.cache.get(&key) {
            if text.is_none() {
                self.res.blobs_cached += 1;
            }
            Source::Cached(f)
        } else {
            let j = self.jobs.len();
            let n = self.chains.len();
            let c = *self.chain_of.entry(path.to_string()).or_insert(n);
            if c == n {
                self.chains.push(Vec::new());
            }
            self.chains[c].push(j);
            self.jobs.push(Job {
                oid,
                text,
                path: path.to_string(),
                key,
            });
            Source::Job(j)
        };
        self.items.push(Item {
            path: path.to_string(),
            commit: commit.map(str::to_string),
            found,
        });
    }
}

/// Shared progress of the scanning workers.
struct Budget {
    bytes: AtomicU64,
    exceeded: AtomicBool,
    scanned: AtomicUsize,
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
            repo: &repo,
            cache,
            seen_blobs: HashSet::new(),
            seen_trees: HashSet::new(),
            res: HistoryScan::default(),
            items: Vec::new(),
            jobs: Vec::new(),
            chains: Vec::new(),
            chain_of: HashMap::new(),
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
            let target = (obj.kind() == Some(ObjectType::Commit)).then(|| obj.id().to_string());
            for (tid, msg) in tags {
                if w.seen_blobs.insert(tid) {
                    w.add(tid, Some(msg), "tag message", target.as_deref());
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
        for oid in walk {
            let Ok(oid) = oid else { continue };
            let Ok(commit) = repo.find_commit(oid) else {
                continue;
            };
            w.res.commits += 1;
            let cid = oid.to_string();
            if w.seen_blobs.insert(oid) {
                let msg = commit.message_bytes().to_vec();
                w.add(oid, Some(msg), "commit message", Some(&cid));
            }
            let Ok(tree) = commit.tree() else { continue };
            if w.seen_trees.insert(tree.id()) {
                walk_tree(&mut w, &tree, "", Some(&cid), 0);
            }
        }
        for t in loose_trees {
            if let (true, Ok(tree)) = (w.seen_trees.insert(t), repo.find_tree(t)) {
                walk_tree(&mut w, &tree, "", None, 0);
            }
        }
        for b in loose_blobs {
            if w.seen_blobs.insert(b) {
                w.add(b, None, &format!("<object {b}>"), None);
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
                    w.add(oid, None, &format!("<object {oid}>"), None);
                }
            }
        }
        let results = self.run_jobs(&repo, &w.jobs, &w.chains, cache, &mut w.res);
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
                    f.file.clone_from(&it.path);
                    f.commit.clone_from(&it.commit);
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

    /// Scans the jobs (in parallel when there are many); `None` for a job
    /// the byte budget stopped or whose blob could not be read.
    fn run_jobs(
        &self,
        repo: &Repository,
        jobs: &[Job],
        chains: &[Vec<usize>],
        cache: &BlobCache,
        res: &mut HistoryScan,
    ) -> Vec<Option<Arc<Vec<Finding>>>> {
        let budget = Budget {
            bytes: AtomicU64::new(0),
            exceeded: AtomicBool::new(false),
            scanned: AtomicUsize::new(0),
        };
        let next = AtomicUsize::new(0);
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, MAX_WORKERS)
            .min(chains.len().max(1));
        let mut results: Vec<Option<Arc<Vec<Finding>>>> = vec![None; jobs.len()];
        let git_dir = repo.path().to_path_buf();
        let parts: Vec<Vec<(usize, Arc<Vec<Finding>>)>> =
            if workers <= 1 || jobs.len() < PARALLEL_MIN_JOBS {
                vec![self.worker(repo, jobs, chains, cache, &budget, &next)]
            } else {
                std::thread::scope(|sc| {
                    let hs: Vec<_> = (0..workers)
                        .map(|_| {
                            sc.spawn(|| {
                                match Repository::open_ext(
                                    &git_dir,
                                    RepositoryOpenFlags::NO_SEARCH,
                                    std::iter::empty::<&std::ffi::OsStr>(),
                                ) {
                                    Ok(r) => self.worker(&r, jobs, chains, cache, &budget, &next),
                                    Err(_) => Vec::new(),
                                }
                            })
                        })
                        .collect();
                    hs.into_iter()
                        .map(|h| h.join().unwrap_or_default())
                        .collect()
                })
            };
        // A worker that cannot open the repository claims no chains; the
        // others take them.
        for part in parts {
            for (j, f) in part {
                results[j] = Some(f);
            }
        }
        res.bytes_scanned += budget.bytes.load(Ordering::Relaxed);
        res.blobs_scanned += budget.scanned.load(Ordering::Relaxed);
        res.budget_exceeded |= budget.exceeded.load(Ordering::Relaxed);
        results
    }

    /// Claims chains until none are left; scans each chain oldest first,
    /// each version against the previous one where possible.
    fn worker(
        &self,
        repo: &Repository,
        jobs: &[Job],
        chains: &[Vec<usize>],
        cache: &BlobCache,
        budget: &Budget,
        next: &AtomicUsize,
    ) -> Vec<(usize, Arc<Vec<Finding>>)> {
        let mut out = Vec::new();
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            let Some(chain) = chains.get(c) else { break };
            let mut prev: Option<(Vec<u8>, Arc<Vec<Finding>>)> = None;
            for &j in chain {
                let job = &jobs[j];
                let blob;
                let data: &[u8] = match &job.text {
                    Some(t) => t,
                    None => match repo.find_blob(job.oid) {
                        Ok(b) => {
                            blob = b;
                            blob.content()
                        }
                        Err(_) => continue,
                    },
                };
                let len = data.len() as u64;
                let before = budget.bytes.fetch_add(len, Ordering::Relaxed);
                if before + len > self.cfg.max_total_bytes {
                    budget.bytes.fetch_sub(len, Ordering::Relaxed);
                    budget.exceeded.store(true, Ordering::Relaxed);
                    prev = None;
                    continue;
                }
                if job.text.is_none() {
                    budget.scanned.fetch_add(1, Ordering::Relaxed);
                }
                let inc = prev
                    .as_ref()
                    .and_then(|(a, af)| self.scan_incremental(&job.path, a, af, data));
                let f = Arc::new(inc.unwrap_or_else(|| {
                    let mut r = data;
                    self.scan_reader_raw(&job.path, &mut r)
                        .map(|x| x.0)
                        .unwrap_or_default()
                }));
                cache.put(job.key.clone(), f.clone());
                prev = (data.len() < super::WINDOW).then(|| (data.to_vec(), f.clone()));
                out.push((j, f));
            }
        }
        out
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

fn walk_tree(
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
                    walk_tree(w, &t, &path, commit, depth + 1);
                }
            }
            // Symlink blobs (mode 120000) hold a target path: scanned
            // as text like any blob, never followed.
            Some(ObjectType::Blob) if w.seen_blobs.insert(e.id()) => {
                w.add(e.id(), None, &path, commit);
            }
            _ => {} // submodule commits live in another repository
        }
    }
}
