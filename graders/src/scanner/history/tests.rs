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
    let sig = git2::Signature::new("T", "t@t.invalid", &git2::Time::new(1_700_000_000, 0)).unwrap();
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

/// A tree git itself never writes, with one name twice (then with a
/// name out of order): each entry's parent version is found by the
/// cursor rules, not the walk's shortcut for parents with unique names —
/// the same results as before that shortcut (checked against the walk
/// without it): the first `a.txt` of c3 is compared with the first of
/// c2, so the secret c2 added to the second is new to it.
#[test]
fn trees_with_a_repeated_name() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    let sig = git2::Signature::new("T", "t@t.invalid", &git2::Time::new(1_700_000_000, 0)).unwrap();
    let raw_tree = |ents: &[(&str, &str)]| {
        let mut raw = Vec::new();
        for (name, content) in ents {
            raw.extend_from_slice(format!("100644 {name}\0").as_bytes());
            raw.extend_from_slice(repo.blob(content.as_bytes()).unwrap().as_bytes());
        }
        repo.odb()
            .unwrap()
            .write(git2::ObjectType::Tree, &raw)
            .unwrap()
    };
    let mut parents: Vec<Oid> = Vec::new();
    let mut commit_tree = |tree: Oid, msg: &str| {
        let tree = repo.find_tree(tree).unwrap();
        let ps: Vec<git2::Commit> = parents
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let ps: Vec<&git2::Commit> = ps.iter().collect();
        let c = repo
            .commit(Some("HEAD"), &sig, &sig, msg, &tree, &ps)
            .unwrap();
        parents = vec![c];
        c
    };
    let v1 = format!("first\ntoken = \"{S1}\"\n");
    let w1 = "second\nnothing here\n".to_string();
    let c1 = commit_tree(raw_tree(&[("a.txt", &v1), ("a.txt", &w1)]), "c1");
    // Both versions change: the second gains a secret on its line 3.
    let v2 = format!("{v1}more\n");
    let w2 = format!("{w1}key = \"{S2}\"\n");
    let c2 = commit_tree(raw_tree(&[("a.txt", &v2), ("a.txt", &w2)]), "c2");
    // Out of order, and the first one gains a secret on its line 1.
    let w3 = format!("aws = \"{S3}\"\n{w2}");
    let c3 = commit_tree(
        raw_tree(&[("b.txt", "plain\n"), ("a.txt", &w3), ("a.txt", &v2)]),
        "c3",
    );
    let s = Scanner::new(ScanConfig::default());
    let scan = || {
        let mut got: Vec<(String, String, usize)> = s
            .scan_history(dir.path(), &BlobCache::new())
            .unwrap()
            .findings
            .into_iter()
            .filter(|f| f.file == "a.txt")
            .map(|f| (f.value, f.commit.unwrap(), f.line))
            .collect();
        got.sort();
        got
    };
    let mut want = vec![
        (S1.to_string(), c1.to_string(), 2),
        (S2.to_string(), c2.to_string(), 3),
        (S2.to_string(), c3.to_string(), 4),
        (S3.to_string(), c3.to_string(), 1),
    ];
    want.sort();
    assert_eq!(scan(), want);
    pack_all(&repo);
    assert_eq!(scan(), want, "packed");
}
