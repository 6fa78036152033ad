//! Differential fuzzing of the pack reader (`scanner/pack.rs`), which
//! reads packs an agent writes, inside the server: on random small
//! repositories (random files edited over random commits, so that git
//! deltifies them), packed by git itself with OFS or REF deltas, deep or
//! shallow chains, in one pack or several, every blob our reader resolves
//! must be byte for byte what git2 reads, every blob of the packs must be
//! resolved, and every tree of the all-trees pass must be git2's.
//!
//! A few dozen repositories, each a few seconds at most: it runs in CI
//! with the rest of the suite (`PROPTEST_CASES` raises the count).

use git2::{ObjectType, Oid, Repository, Signature, Time};
use graders::scanner::pack_probe;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// One edit of one file in one commit.
#[derive(Debug, Clone)]
enum Edit {
    /// Replace line `at % len` with `text`.
    Change {
        file: usize,
        at: usize,
        text: String,
    },
    /// Insert `text` before line `at % (len + 1)`.
    Insert {
        file: usize,
        at: usize,
        text: String,
    },
    /// Remove line `at % len`.
    Remove { file: usize, at: usize },
    /// Replace the whole file with `bytes` (binary, incompressible).
    Rewrite { file: usize, bytes: Vec<u8> },
}

/// How git packs the repository.
#[derive(Debug, Clone, Copy)]
struct Packing {
    /// OFS deltas (git's default) or REF deltas.
    ofs: bool,
    /// `--depth`: chain length.
    depth: u8,
    /// Commits packed first, in a pack of their own; the rest go to a
    /// second pack (`repack -d` without `-a`), whose deltas may only use
    /// bases in that pack.
    split: Option<usize>,
}

fn edit() -> impl Strategy<Value = Edit> {
    let text = "[ -~]{0,40}";
    prop_oneof![
        4 => (0..3usize, any::<usize>(), text).prop_map(|(file, at, text)| Edit::Change { file, at, text }),
        3 => (0..3usize, any::<usize>(), text).prop_map(|(file, at, text)| Edit::Insert { file, at, text }),
        2 => (0..3usize, any::<usize>()).prop_map(|(file, at)| Edit::Remove { file, at }),
        1 => (0..3usize, proptest::collection::vec(any::<u8>(), 0..600))
            .prop_map(|(file, bytes)| Edit::Rewrite { file, bytes }),
    ]
}

fn packing() -> impl Strategy<Value = Packing> {
    (any::<bool>(), 1..60u8, proptest::option::of(1..8usize))
        .prop_map(|(ofs, depth, split)| Packing { ofs, depth, split })
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "core.bigFileThreshold=512m", "-c", "gc.auto=0"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository being built: three files of numbered lines, edited
/// commit by commit.
struct History {
    files: Vec<Vec<Vec<u8>>>,
    parent: Option<Oid>,
}

impl History {
    fn new() -> History {
        let files = (0..3)
            .map(|f| {
                (0..40 * (f + 1))
                    .map(|i| format!("file {f} line {i} = value {}", i * 7919 % 1000).into_bytes())
                    .collect()
            })
            .collect();
        History {
            files,
            parent: None,
        }
    }

    /// Applies `edits` and commits the three files.
    fn commit(&mut self, repo: &Repository, edits: &[Edit]) {
        for e in edits {
            match e {
                Edit::Change { file, at, text } => {
                    let f = &mut self.files[*file];
                    if !f.is_empty() {
                        let n = f.len();
                        f[at % n] = text.clone().into_bytes();
                    }
                }
                Edit::Insert { file, at, text } => {
                    let f = &mut self.files[*file];
                    let n = f.len() + 1;
                    f.insert(at % n, text.clone().into_bytes());
                }
                Edit::Remove { file, at } => {
                    let f = &mut self.files[*file];
                    if !f.is_empty() {
                        let n = f.len();
                        f.remove(at % n);
                    }
                }
                Edit::Rewrite { file, bytes } => {
                    self.files[*file] = vec![bytes.clone()];
                }
            }
        }
        let sig = Signature::new("f", "f@x.invalid", &Time::new(1, 0)).unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        for (i, f) in self.files.iter().enumerate() {
            let blob = repo.blob(&f.join(&b"\n"[..])).unwrap();
            tb.insert(format!("f{i}.txt"), blob, 0o100644).unwrap();
        }
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let ps: Vec<git2::Commit> = self
            .parent
            .map(|p| repo.find_commit(p).unwrap())
            .into_iter()
            .collect();
        let pr: Vec<&git2::Commit> = ps.iter().collect();
        let id = repo
            .commit(Some("HEAD"), &sig, &sig, "m", &tree, &pr)
            .unwrap();
        self.parent = Some(id);
    }
}

/// Packs the loose objects with git (every object with `all`), dropping
/// the loose copies.
fn repack(dir: &Path, p: Packing, all: bool) {
    let ofs = format!(
        "repack.useDeltaBaseOffset={}",
        if p.ofs { "true" } else { "false" }
    );
    let depth = format!("--depth={}", p.depth);
    let mut args = vec!["-c", "repack.writeBitmaps=false", "-c", &ofs];
    args.extend(["repack", "-d", "-f", "--window=20", &depth]);
    if all {
        args.push("-a");
    }
    git(dir, &args);
    git(dir, &["prune-packed"]);
}

/// Builds and packs the repository: the first `split` commits in a pack
/// of their own, then the rest in a second pack whose deltas may only use
/// bases in it.
fn build(dir: &Path, repo: &Repository, commits: &[Vec<Edit>], p: Packing) {
    let mut h = History::new();
    let split = p.split.filter(|&k| k < commits.len());
    for (i, edits) in commits.iter().enumerate() {
        if Some(i) == split {
            repack(dir, p, true);
        }
        h.commit(repo, edits);
    }
    repack(dir, p, split.is_none());
}

/// Every object of the repository by kind, as git2 sees it.
fn objects(repo: &Repository) -> (Vec<Oid>, BTreeSet<Oid>) {
    let odb = repo.odb().unwrap();
    let mut all = Vec::new();
    odb.foreach(|id| {
        all.push(*id);
        true
    })
    .unwrap();
    let mut blobs = Vec::new();
    let mut trees = BTreeSet::new();
    for id in all {
        match odb.read_header(id).unwrap().1 {
            ObjectType::Blob => blobs.push(id),
            ObjectType::Tree => {
                trees.insert(id);
            }
            _ => {}
        }
    }
    blobs.sort();
    blobs.dedup();
    (blobs, trees)
}

fn loose_objects(git_dir: &Path) -> usize {
    std::fs::read_dir(git_dir.join("objects"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().len() == 2)
        .map(|e| std::fs::read_dir(e.path()).unwrap().count())
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 16,
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    })]

    #[test]
    fn pack_reader_agrees_with_git2(
        commits in proptest::collection::vec(proptest::collection::vec(edit(), 1..5), 2..14),
        packing in packing(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        build(dir.path(), &repo, &commits, packing);
        let git_dir = dir.path().join(".git");
        prop_assert_eq!(loose_objects(&git_dir), 0, "every object is packed");
        let (blobs, trees) = objects(&repo);
        let got = pack_probe::blobs(&git_dir, &blobs, 1 << 30);
        for (id, ours) in blobs.iter().zip(&got) {
            let want = repo.find_blob(*id).unwrap();
            let ours = ours.as_deref();
            prop_assert!(ours.is_some(), "blob {} not resolved from the packs", id);
            prop_assert!(ours == Some(want.content()), "blob {} differs from git2's", id);
        }
        // The size bound: no blob over it is produced.
        let small = pack_probe::blobs(&git_dir, &blobs, 64);
        for (id, ours) in blobs.iter().zip(&small) {
            if let Some(b) = ours {
                prop_assert!(b.len() <= 64, "blob {} over the bound: {}", id, b.len());
            }
        }
        // Every tree the all-trees pass gives is git2's (REF bases later in
        // a pack are left to git2, so it may give fewer than all).
        let odb = repo.odb().unwrap();
        for threads in [1, 3] {
            let got = pack_probe::trees(&git_dir, 1 << 30, threads);
            if packing.ofs {
                prop_assert_eq!(got.len(), trees.len(), "every tree of an OFS pack");
            }
            for (id, data) in &got {
                prop_assert!(trees.contains(id), "tree {} is not in the repository", id);
                prop_assert!(&data[..] == odb.read(*id).unwrap().data(), "tree {} differs", id);
            }
        }
    }
}

/// The generator makes what the property needs: delta chains of both
/// kinds (else the property would compare only whole objects).
#[test]
fn generated_packs_hold_deltas() {
    for ofs in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let commits: Vec<Vec<Edit>> = (0..10)
            .map(|i| {
                vec![Edit::Change {
                    file: i % 3,
                    at: i * 13,
                    text: format!("edit {i}"),
                }]
            })
            .collect();
        let packing = Packing {
            ofs,
            depth: 50,
            split: None,
        };
        build(dir.path(), &repo, &commits, packing);
        let packdir = dir.path().join(".git/objects/pack");
        let idx = std::fs::read_dir(&packdir)
            .unwrap()
            .filter_map(Result::ok)
            .find(|e| e.path().extension().is_some_and(|x| x == "idx"))
            .expect("a pack")
            .path();
        let out = Command::new("git")
            .args(["verify-pack", "-v"])
            .arg(&idx)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let deltas = text
            .lines()
            .filter(|l| l.starts_with("chain length = "))
            .count();
        assert!(out.status.success() && deltas > 0, "ofs={ofs}: {text}");
        let (blobs, _) = objects(&repo);
        let got = pack_probe::blobs(&dir.path().join(".git"), &blobs, 1 << 30);
        assert!(got.iter().all(Option::is_some), "ofs={ofs}");
    }
}
