//! Tree and history modes on temporary trees and repositories, and the
//! working-tree speed check on a 1,000-file tree.

use graders::scanner::{BlobCache, ScanConfig, Scanner};
use std::path::Path;
use std::time::Instant;

const KEY: &str = "ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h";

fn commit(repo: &git2::Repository, files: &[(&str, &str)], msg: &str) -> git2::Oid {
    let mut idx = repo.index().unwrap();
    for (p, c) in files {
        let full = repo.workdir().unwrap().join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, c).unwrap();
        idx.add_path(Path::new(p)).unwrap();
    }
    idx.write().unwrap();
    let tree = repo.find_tree(idx.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::new("T", "t@t.invalid", &git2::Time::new(1_700_000_000, 0)).unwrap();
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let pr: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, msg, &tree, &pr)
        .unwrap()
}

#[test]
fn history_finds_removed_secret_and_caches() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let c1 = commit(
        &repo,
        &[("app/config.py", &format!("TOKEN = \"{KEY}\"\n"))],
        "add",
    );
    commit(
        &repo,
        &[("app/config.py", "import os\nTOKEN = os.environ['TOKEN']\n")],
        "fix",
    );
    let s = Scanner::new(ScanConfig::default());
    let cache = BlobCache::new();
    let r = s.scan_history(dir.path(), &cache).unwrap();
    let f: Vec<_> = r.findings.iter().filter(|f| f.value == KEY).collect();
    assert_eq!(f.len(), 1, "{:?}", r.findings);
    assert_eq!(f[0].commit.as_deref(), Some(c1.to_string().as_str()));
    assert_eq!(f[0].file, "app/config.py");
    assert_eq!(r.commits, 2);
    assert!(r.blobs_scanned >= 2);
    let again = s.scan_history(dir.path(), &cache).unwrap();
    assert_eq!(again.blobs_scanned, 0);
    assert_eq!(again.blobs_cached, r.blobs_scanned);
    assert_eq!(again.findings, r.findings);
    // Tree mode sees only the fixed file.
    let t = s.scan_tree(dir.path()).unwrap();
    assert!(t.findings.is_empty(), "{:?}", t.findings);
    assert!(t.skipped.iter().any(|x| x.starts_with(".git")));
}

#[test]
fn odb_mode_finds_unreachable_blobs() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    commit(&repo, &[("a.txt", "hello\n")], "a");
    repo.blob(format!("k={KEY}\n").as_bytes()).unwrap();
    let s = Scanner::new(ScanConfig::default());
    let r = s.scan_history(dir.path(), &BlobCache::new()).unwrap();
    assert!(r.findings.is_empty());
    let r = s.scan_odb(dir.path(), &BlobCache::new()).unwrap();
    assert!(
        r.findings
            .iter()
            .any(|f| f.value == KEY && f.commit.is_none())
    );
}

#[test]
fn tree_never_follows_symlinks_or_opens_fifos() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("s.env"), format!("T={KEY}\n")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("s.env"), dir.path().join("link.env")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("linkdir")).unwrap();
    let fifo = dir.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(dir.path().join("real.env"), format!("T={KEY}\n")).unwrap();
    let s = Scanner::new(ScanConfig::default());
    let r = s.scan_tree(dir.path()).unwrap();
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].file, "real.env");
    assert_eq!(r.files_scanned, 1);
    assert_eq!(r.skipped.len(), 3, "{:?}", r.skipped);
}

#[test]
fn big_files_are_windowed_and_budget_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut big = "x = 1\n".repeat(600_000); // ~3.6 MB, several windows
    big.push_str(&format!("T={KEY}\n"));
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    let s = Scanner::new(ScanConfig::default());
    let r = s.scan_tree(dir.path()).unwrap();
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].line, 600_001);
    assert!(!r.budget_exceeded);
    let small = Scanner::new(ScanConfig {
        max_total_bytes: 1000,
        ..ScanConfig::default()
    });
    let r = small.scan_tree(dir.path()).unwrap();
    assert!(r.budget_exceeded);
}

#[test]
fn thousand_file_tree_speed() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1000 {
        let d = dir.path().join(format!("pkg{}", i % 20));
        std::fs::create_dir_all(&d).unwrap();
        let body = format!(
            "import os\n\n\ndef handler_{i}(event):\n    token = os.environ['API_TOKEN']\n    return {{'id': {i}, 'ok': True}}\n"
        )
        .repeat(20);
        std::fs::write(d.join(format!("m{i}.py")), body).unwrap();
    }
    let s = Scanner::new(ScanConfig::default());
    let t = Instant::now();
    let r = s.scan_tree(dir.path()).unwrap();
    let el = t.elapsed();
    println!("scan_tree: 1000 files, {} bytes in {el:?}", r.bytes_scanned);
    assert_eq!(r.files_scanned, 1000);
    assert!(r.findings.is_empty(), "{:?}", r.findings.first());
}

/// Commit and annotated-tag messages are scanned; findings point at the
/// commit (for a tag, the commit it tags).
#[test]
fn commit_and_tag_messages_are_scanned() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let c1 = commit(
        &repo,
        &[("a.txt", "hello\n")],
        &format!("deploy\n\nused token {KEY} for the test run\n"),
    );
    let tag_key = "sk_live_4eC39HqLyjWDarjtT1zdp7dcQx9F";
    let sig = git2::Signature::new("T", "t@t.invalid", &git2::Time::new(1_700_000_000, 0)).unwrap();
    let obj = repo.find_object(c1, None).unwrap();
    repo.tag(
        "v1",
        &obj,
        &sig,
        &format!("release\nSTRIPE={tag_key}\n"),
        false,
    )
    .unwrap();
    let s = Scanner::new(ScanConfig::default());
    let r = s.scan_history(dir.path(), &BlobCache::new()).unwrap();
    let m = r
        .findings
        .iter()
        .find(|f| f.value == KEY)
        .expect("commit message finding");
    assert_eq!(m.file, "commit message");
    assert_eq!(m.line, 3);
    assert_eq!(m.commit.as_deref(), Some(c1.to_string().as_str()));
    let t = r
        .findings
        .iter()
        .find(|f| f.value == tag_key)
        .expect("tag message finding");
    assert_eq!(t.file, "tag message");
    assert_eq!(t.commit.as_deref(), Some(c1.to_string().as_str()));
}

/// A rescan with a warm cache after a new commit walks only the new commit
/// and gives the same findings as a cold scan; after history is rewritten
/// (the secret's commit no longer reachable) the old finding is gone.
#[test]
fn rescan_after_commit_and_after_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    commit(&repo, &[("README.md", "# app\n")], "init");
    let c2 = commit(
        &repo,
        &[("app/config.py", &format!("TOKEN = \"{KEY}\"\n"))],
        "add",
    );
    let s = Scanner::new(ScanConfig::default());
    let cache = BlobCache::new();
    let r1 = s.scan_history(dir.path(), &cache).unwrap();
    assert_eq!(r1.findings.iter().filter(|f| f.value == KEY).count(), 1);
    let c3 = commit(
        &repo,
        &[("app/more.py", "SECRET = \"Zq8v2Lm4Kp7RtXw9Yb3Nc6Vd\"\n")],
        "more",
    );
    let warm = s.scan_history(dir.path(), &cache).unwrap();
    let cold = s.scan_history(dir.path(), &BlobCache::new()).unwrap();
    assert_eq!(warm.findings, cold.findings);
    assert_eq!(warm.commits, cold.commits);
    assert_eq!(warm.blobs_scanned, 1, "only the new blob is read");
    assert!(
        warm.findings
            .iter()
            .any(|f| f.commit.as_deref() == Some(&c3.to_string()))
    );
    // Rewrite: point main at a new root commit without the secret and drop
    // every reflog, so c2 is unreachable.
    let tree = repo
        .find_tree({
            let mut tb = repo.treebuilder(None).unwrap();
            let b = repo.blob(b"# app\n").unwrap();
            tb.insert("README.md", b, 0o100644).unwrap();
            tb.write().unwrap()
        })
        .unwrap();
    let sig = git2::Signature::new("T", "t@t.invalid", &git2::Time::new(1_700_000_100, 0)).unwrap();
    let fresh = repo.commit(None, &sig, &sig, "clean", &tree, &[]).unwrap();
    let head = repo.head().unwrap();
    let branch = head.name().unwrap().to_string();
    repo.reference(&branch, fresh, true, "rewrite").unwrap();
    for n in ["HEAD", branch.as_str()] {
        let _ = repo.reflog_delete(n);
    }
    let after = s.scan_history(dir.path(), &cache).unwrap();
    assert!(
        after
            .findings
            .iter()
            .all(|f| f.value != KEY && f.commit.as_deref() != Some(&c2.to_string())),
        "{:?}",
        after.findings
    );
    assert_eq!(
        after.findings,
        s.scan_history(dir.path(), &BlobCache::new())
            .unwrap()
            .findings
    );
}

#[test]
fn named_paths_are_reported_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("a.env"), format!("T={KEY}\n")).unwrap();
    std::fs::write(d.join("sub/b.env"), format!("T={KEY}\n")).unwrap();
    std::fs::write(d.join("sub/skip.env"), format!("T={KEY}\n")).unwrap();
    std::os::unix::fs::symlink(d.join("a.env"), d.join("link.env")).unwrap();
    let al = graders::scanner::Allowlist::from_toml_str(
        "[allowlist]\npaths = ['''/sub/skip\\.env$''']\n",
    )
    .unwrap();
    let s = Scanner::new(ScanConfig {
        allowlist: al,
        ..ScanConfig::default()
    });
    let name = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let r = s.scan_paths(&[d.join("a.env"), d.join("sub"), d.join("link.env")]);
    let files: Vec<&str> = r.findings.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(
        files,
        [name(&d.join("a.env")), name(&d.join("sub/b.env"))],
        "file named as given, directory walked under its name, allowlist matched on that name"
    );
    assert_eq!(r.skipped.len(), 1, "the symlink: {:?}", r.skipped);
    let one = Scanner::new(ScanConfig {
        max_files: 1,
        ..ScanConfig::default()
    });
    let r = one.scan_paths(&[d.join("a.env"), d.join("sub/b.env")]);
    assert_eq!(r.findings.len(), 1);
    assert!(r.budget_exceeded, "one file budget across the paths");
}
