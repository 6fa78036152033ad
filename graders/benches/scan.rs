//! `cargo bench -p graders --bench scan`: prints a table of scanner timings
//! (medians): working-tree scan of a task-sized tree, full-history scans of
//! ~500- and ~5,000-commit repositories, and a warm-cache rescan after one
//! new commit on the largest. Repositories come from bench/out/repos (made
//! by `python3 bench/bench.py --full`, so numbers line up with the peer
//! benchmark) or, when absent, are generated here with git2 in a temporary
//! directory. No assertion: speed targets are judged from the table.

use graders::scanner::{BlobCache, ScanConfig, Scanner};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const REPS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A tiny deterministic generator (no rand dependency).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn word(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| (b'a' + (self.next() % 26) as u8) as char)
            .collect()
    }
}

fn code_line(r: &mut Lcg) -> String {
    match r.next() % 4 {
        0 => format!("def handle_{}(request, ctx):", r.word(6)),
        1 => format!(
            "    value = compute({}, '{}')",
            r.next() % 1_000_000,
            r.word(8)
        ),
        2 => format!("    logger.info('processed %s items', {})", r.next() % 1000),
        _ => format!("    return {{'status': 'ok', 'id': {}}}", r.next()),
    }
}

/// `commits` commits over `files` files of ~`kb` KiB, each rewriting a
/// quarter of one file, as bench.py's generator does.
fn generate(dir: &Path, commits: usize, files: usize, kb: usize) {
    let repo = git2::Repository::init(dir).expect("init");
    let mut r = Lcg(commits as u64);
    let lines = (kb * 1024 / 42).max(4);
    let mut content: Vec<Vec<String>> = (0..files)
        .map(|_| (0..lines).map(|_| code_line(&mut r)).collect())
        .collect();
    let sig = git2::Signature::new(
        "Dana",
        "dana@example.invalid",
        &git2::Time::new(1_700_000_000, 0),
    )
    .expect("sig");
    let mut blobs: Vec<git2::Oid> = content
        .iter()
        .map(|c| repo.blob((c.join("\n") + "\n").as_bytes()).expect("blob"))
        .collect();
    let mut parent: Option<git2::Oid> = None;
    for c in 0..commits {
        if c > 0 {
            let f = (r.next() as usize) % files;
            let start = (r.next() as usize) % lines;
            let end = (start + lines / 4).min(lines);
            for l in &mut content[f][start..end] {
                *l = code_line(&mut r);
            }
            blobs[f] = repo
                .blob((content[f].join("\n") + "\n").as_bytes())
                .expect("blob");
        }
        let mut tb = repo.treebuilder(None).expect("tb");
        for (i, b) in blobs.iter().enumerate() {
            tb.insert(format!("m{i}.py"), *b, 0o100644).expect("insert");
        }
        let tree = repo.find_tree(tb.write().expect("tree")).expect("tree");
        let ps: Vec<git2::Commit> = parent
            .map(|p| repo.find_commit(p).expect("p"))
            .into_iter()
            .collect();
        let pr: Vec<&git2::Commit> = ps.iter().collect();
        parent = Some(
            repo.commit(Some("HEAD"), &sig, &sig, &format!("commit {c}"), &tree, &pr)
                .expect("commit"),
        );
    }
}

fn repo_for(label: &str, commits: usize, files: usize, kb: usize, tmp: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/out/repos")
        .join(label);
    if root.join(".git").is_dir() {
        return root;
    }
    let p = tmp.join(label);
    eprintln!("generating {label} ({commits} commits) in {}", p.display());
    generate(&p, commits, files, kb);
    p
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let t = e.file_type().expect("type");
        let dst = to.join(e.file_name());
        if t.is_dir() {
            copy_dir(&e.path(), &dst);
        } else if t.is_file() {
            std::fs::copy(e.path(), dst).expect("copy");
        }
    }
}

/// One new commit on HEAD adding one file.
fn add_commit(repo: &git2::Repository, i: usize) {
    let head = repo.head().expect("head").peel_to_commit().expect("commit");
    let mut tb = repo
        .treebuilder(Some(&head.tree().expect("tree")))
        .expect("tb");
    let b = repo
        .blob(format!("NOTE_{i} = \"changed in step {i}\"\n").as_bytes())
        .expect("blob");
    tb.insert(format!("note_{i}.py"), b, 0o100644)
        .expect("insert");
    let tree = repo.find_tree(tb.write().expect("write")).expect("tree");
    let sig = git2::Signature::new(
        "A",
        "a@example.invalid",
        &git2::Time::new(1_800_000_000 + i as i64, 0),
    )
    .expect("sig");
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        &format!("step {i}"),
        &tree,
        &[&head],
    )
    .expect("commit");
}

fn main() {
    let tmp = tempfile::tempdir().expect("tmp");
    let s = Scanner::new(ScanConfig::default());
    let mut rows: Vec<(String, Duration, String)> = Vec::new();

    // `SCAN_BENCH=5000c` (a substring of the labels below) runs only the
    // matching scenarios, e.g. under `perf record`.
    let only = std::env::var("SCAN_BENCH").unwrap_or_default();
    let task = repo_for("task", 10, 12, 2, tmp.path());
    if !"task".contains(only.as_str()) {
        rows.push((
            "working tree, task-sized".into(),
            Duration::ZERO,
            "skipped".into(),
        ));
    } else {
        let runs: Vec<Duration> = (0..REPS)
            .map(|_| {
                let t = Instant::now();
                let _ = s.scan_tree(&task).expect("tree");
                t.elapsed()
            })
            .collect();
        let n = s.scan_tree(&task).expect("tree");
        rows.push((
            "working tree, task-sized".into(),
            median(runs),
            format!("{} files, {} findings", n.files_scanned, n.findings.len()),
        ));
    }

    for (label, commits, files, kb) in [("500c", 500, 40, 24), ("5000c", 5000, 60, 30)] {
        if !label.contains(only.as_str()) {
            continue;
        }
        let repo = repo_for(label, commits, files, kb, tmp.path());
        // `SCAN_BENCH_REPS=N` overrides the repetitions (e.g. 1 for a profile).
        let reps = std::env::var("SCAN_BENCH_REPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if commits > 1000 { 3 } else { REPS });
        let mut last = None;
        let runs: Vec<Duration> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let r = s.scan_history(&repo, &BlobCache::new()).expect("history");
                let el = t.elapsed();
                last = Some(r);
                el
            })
            .collect();
        let r = last.expect("ran");
        rows.push((
            format!("history, cold cache, {label}"),
            median(runs),
            format!(
                "{} commits, {} blobs, {:.0} MB, {} findings",
                r.commits,
                r.blobs_scanned,
                r.bytes_scanned as f64 / 1e6,
                r.findings.len()
            ),
        ));
        if commits < 1000 {
            continue;
        }
        // Rescan: a private copy, one warm scan, then one commit per rep.
        let copy = tmp.path().join(format!("{label}-copy"));
        copy_dir(&repo.join(".git"), &copy.join(".git"));
        let g = git2::Repository::open(&copy).expect("open copy");
        let cache = BlobCache::new();
        let _ = s.scan_history(&copy, &cache).expect("warm");
        let mut info = String::new();
        let runs: Vec<Duration> = (0..7)
            .map(|i| {
                add_commit(&g, i);
                let t = Instant::now();
                let r = s.scan_history(&copy, &cache).expect("rescan");
                let el = t.elapsed();
                info = format!(
                    "{} blobs read, {} cached, {} findings",
                    r.blobs_scanned,
                    r.blobs_cached,
                    r.findings.len()
                );
                el
            })
            .collect();
        rows.push((
            format!("rescan after 1 commit, warm cache, {label}"),
            median(runs),
            info,
        ));
    }

    println!("\n| scenario | median | detail |\n|---|---:|---|");
    for (name, d, info) in rows {
        println!("| {name} | {:.2} ms | {info} |", d.as_secs_f64() * 1e3);
    }
}
