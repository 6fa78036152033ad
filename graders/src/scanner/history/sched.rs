//! Scheduling the blob scans of a walk: packs first (on several threads,
//! whole delta trees at a time), then git2, each blob handed out once its
//! parent version's lines are known.

use super::*;

impl Scanner {
    /// Scans the jobs: blobs are read from the packs (each entry inflated
    /// once; on several threads, each taking whole delta trees and scanning
    /// what it reads, see [`Scanner::par_packs`]), a blob with a parent
    /// version is scanned once that version's line set is known, and
    /// whatever the packs did not give is read with git2 afterwards, in
    /// walk order, and scanned by workers. `None` for a job the byte budget
    /// stopped or whose blob could not be read. Results do not depend on
    /// the thread count or the order the threads finish in. `packs`: the
    /// repository's packs if the caller has them open already (their
    /// header tables read), else they are opened here when needed.
    pub(super) fn run_jobs(
        &self,
        repo: &Repository,
        jobs: &[Job],
        cache: &BlobCache,
        res: &mut HistoryScan,
        packs: Option<pack::Packs>,
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
            sched.run_packs(repo, packs, &mut send);
            sched.run_git2(repo, &mut send);
            for (j, f) in out {
                cache.put(jobs[j].key.clone(), f.clone());
                results[j] = Some(f);
            }
        } else {
            let sched_mx = Mutex::new(sched);
            let packs = packs.unwrap_or_else(|| pack::Packs::open(repo.commondir()));
            for (j, f) in self.par_packs(&packs, jobs, cache, &sched_mx, workers, &hasher) {
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
    pub(super) fn par_packs(
        &self,
        packs: &pack::Packs,
        jobs: &[Job],
        cache: &BlobCache,
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
        let plan = packs.plan(&wanted, max);
        let units = plan.units();
        let next = std::sync::atomic::AtomicUsize::new(0);
        // Each result goes into the cache on the thread that found it.
        let scan = |t: Task| {
            let (j, f) = self.scan_task(jobs, t, hasher);
            cache.put(jobs[j].key.clone(), f.clone());
            (j, f)
        };
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
                                        out.push(scan(t));
                                    }
                                });
                            } else if let Some(&j) = messages.get(u - units) {
                                let t = lock().message_task(j);
                                if let Some(t) = t {
                                    out.push(scan(t));
                                }
                            } else {
                                break;
                            }
                        }
                        out
                    })
                })
                .collect();
            hs.into_iter().map(super::super::join_worker).collect()
        });
        parts.into_iter().flatten().collect()
    }

    /// Runs one scan task: whole for messages and blobs without a parent
    /// version, else only the lines the parent lacks.
    pub(super) fn scan_task(
        &self,
        jobs: &[Job],
        t: Task,
        hasher: &LineHasher,
    ) -> (usize, Arc<Vec<Finding>>) {
        let path = &jobs[t.job].path;
        let f = match &t.parent {
            Some(ls) => {
                let own = match t.hashes {
                    Some(h) => h,
                    None => line_hashes(&t.data, hasher),
                };
                self.scan_added(path, &t.data, &own, ls)
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
}

/// Threads for the parallel phases: the machine's cores, at most
/// [`MAX_WORKERS`].
pub(super) fn workers() -> usize {
    #[cfg(test)]
    if let Some(n) = super::tests::WORKERS.get() {
        return n;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_WORKERS)
}

/// One scan for a worker.
pub(super) struct Task {
    job: usize,
    data: Arc<Vec<u8>>,
    /// Line set of the parent version; `None` = scan whole.
    parent: Option<Arc<LineSet>>,
    /// `data`'s line hashes when already computed.
    hashes: Option<LineHashes>,
}

/// A blob to produce: a job's, or only a parent version whose lines a job
/// needs (one already scanned in an earlier call).
pub(super) struct Ent {
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
pub(super) type Parked = (usize, Arc<Vec<u8>>, Option<LineHashes>);

/// What producing an entry needs computed from its bytes (fixed when the
/// scheduler is built: an entry's dependents are only handed out after it
/// is produced, so `deps` has not moved by then).
#[derive(Clone, Copy)]
pub(super) struct Needs {
    /// Its own line hashes: it is a job with a parent version.
    hashes: bool,
    /// Its line set: later versions wait for it.
    lines: bool,
}

impl Needs {
    pub(super) fn of(e: &Ent) -> Needs {
        Needs {
            hashes: e.parent.is_some() && e.job.is_some(),
            lines: e.deps > 0,
        }
    }

    /// (own line hashes, line set) of `data`, as needed.
    pub(super) fn prepare(
        self,
        data: &[u8],
        hasher: &LineHasher,
    ) -> (Option<LineHashes>, Option<Arc<LineSet>>) {
        if !self.hashes && !self.lines {
            return (None, None);
        }
        let h = line_hashes(data, hasher);
        match (self.hashes, self.lines) {
            (true, true) => {
                let l = Arc::new(line_set(&h.hashes));
                (Some(h), Some(l))
            }
            (true, false) => (Some(h), None),
            _ => (None, Some(Arc::new(line_set(&h.hashes)))),
        }
    }
}

/// The scheduler of [`Scanner::run_jobs`]: hands out each blob once its
/// parent version's lines are known (shared under a lock in the parallel
/// pack phase).
pub(super) struct Sched<'a> {
    scanner: &'a Scanner,
    jobs: &'a [Job],
    hasher: &'a LineHasher,
    ents: Vec<Ent>,
    /// Blobs (entry, bytes, line hashes) waiting for the lines of entry `k`.
    parked: FastMap<usize, Vec<Parked>>,
    parked_bytes: usize,
    bytes: u64,
    scanned: usize,
    exceeded: bool,
}

impl<'a> Sched<'a> {
    pub(super) fn new(scanner: &'a Scanner, jobs: &'a [Job], hasher: &'a LineHasher) -> Self {
        let mut ents: Vec<Ent> = Vec::new();
        let mut ent_of: FastMap<Oid, usize> = FastMap::default();
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
            parked: FastMap::default(),
            parked_bytes: 0,
            bytes: 0,
            scanned: 0,
            exceeded: false,
        }
    }

    /// The task for message job `j`, if it fits the byte budget.
    pub(super) fn message_task(&mut self, j: usize) -> Option<Task> {
        let t = self.jobs[j].text.as_ref()?;
        self.charge(t.len(), false).then(|| Task {
            job: j,
            data: Arc::new(t.clone()),
            parent: None,
            hashes: None,
        })
    }

    /// Sends every commit and tag message.
    pub(super) fn send_messages(&mut self, send: &mut dyn FnMut(Task)) {
        for j in 0..self.jobs.len() {
            if let Some(t) = self.message_task(j) {
                send(t);
            }
        }
    }

    /// Reads the wanted blobs from the packs on this thread, in pack order.
    pub(super) fn run_packs(
        &mut self,
        repo: &Repository,
        packs: Option<pack::Packs>,
        send: &mut dyn FnMut(Task),
    ) {
        // Opening the pack indexes costs more than a few git2 reads.
        if self.ents.len() < PACK_MIN_BLOBS {
            return;
        }
        let max = self.scanner.cfg.max_total_bytes;
        let wanted: Vec<Oid> = self.ents.iter().map(|e| e.oid).collect();
        let packs = packs.unwrap_or_else(|| pack::Packs::open(repo.commondir()));
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
    pub(super) fn run_git2(&mut self, repo: &Repository, send: &mut dyn FnMut(Task)) {
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
    pub(super) fn charge(&mut self, len: usize, blob: bool) -> bool {
        if self.bytes + len as u64 > self.scanner.cfg.max_total_bytes {
            self.exceeded = true;
            return false;
        }
        self.bytes += len as u64;
        self.scanned += usize::from(blob);
        true
    }

    pub(super) fn produce(&mut self, e: usize, data: Arc<Vec<u8>>, send: &mut dyn FnMut(Task)) {
        if self.ents[e].produced {
            return;
        }
        let (h, l) = Needs::of(&self.ents[e]).prepare(&data, self.hasher);
        self.produce_prepared(e, data, h, l, send);
    }

    /// [`Sched::produce`] with the line hashes and line set already
    /// computed by [`Needs::prepare`] (outside the lock, in parallel).
    pub(super) fn produce_prepared(
        &mut self,
        e: usize,
        data: Arc<Vec<u8>>,
        hashes: Option<LineHashes>,
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
    pub(super) fn release(&mut self, p: usize, send: &mut dyn FnMut(Task)) {
        if let Some(kids) = self.parked.remove(&p) {
            for (c, d, h) in kids {
                self.parked_bytes -= d.len();
                if let Some(j) = self.ents[c].job {
                    self.dispatch_or_park(c, j, d, h, send);
                }
            }
        }
    }

    pub(super) fn dispatch_or_park(
        &mut self,
        e: usize,
        j: usize,
        data: Arc<Vec<u8>>,
        hashes: Option<LineHashes>,
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
