//! A workspace's git repository, written in-process and deterministically:
//! objects with fixed signatures and dates, the branch ref as a file (no
//! reflog), a fixed config, then the working tree in sorted order and an
//! index matching it. Nothing reads the host's git configuration or the
//! clock.

use super::fields::{parse_author, parse_date};
use super::model::Commit;
use anyhow::{Context, bail};
use graders::security::CommitRecord;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// The repository config written into every workspace instead of libgit2's
/// probed one: fixed, and with an identity so `git commit` works inside a
/// sandbox whose HOME has no git config.
const GIT_CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[user]\n\tname = Workspace Agent\n\temail = agent@workspace.invalid\n";

/// Path → (bytes, executable).
pub(super) type Tree = BTreeMap<String, FileEntry>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileEntry {
    pub(super) bytes: Vec<u8>,
    pub(super) exec: bool,
}

/// Initialises the repository and writes every commit; returns (head,
/// final tree id, commit records).
pub(super) fn build_repo(
    workspace: &Path,
    commits: &[Commit],
    trees: &[Tree],
) -> anyhow::Result<(String, String, Vec<CommitRecord>)> {
    let mut opts = git2::RepositoryInitOptions::new();
    opts.initial_head("main")
        .external_template(false)
        .mkpath(true)
        .no_reinit(true);
    drop(git2::Repository::init_opts(workspace, &opts).context("git init")?);
    // Replace libgit2's probed config with a fixed one before anything else
    // could read it.
    std::fs::write(workspace.join(".git/config"), GIT_CONFIG)?;
    let repo = git2::Repository::open(workspace)?;
    let mut parent: Option<git2::Oid> = None;
    let mut records = Vec::new();
    let mut tree_id = None;
    for (c, tree) in commits.iter().zip(trees) {
        let (name, email) = parse_author(&c.author)?;
        let time = parse_date(&c.date)?;
        let sig = git2::Signature::new(name, email, &git2::Time::new(time, 0))?;
        let tid = write_tree(&repo, tree)?;
        let t = repo.find_tree(tid)?;
        let parents: Vec<git2::Commit<'_>> = parent
            .map(|p| repo.find_commit(p))
            .transpose()?
            .into_iter()
            .collect();
        let parent_refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        let mut message = c.message.clone();
        if !message.ends_with('\n') {
            message.push('\n');
        }
        let id = repo.commit(None, &sig, &sig, &message, &t, &parent_refs)?;
        records.push(CommitRecord {
            id: id.to_string(),
            author: c.author.clone(),
            time,
            message,
        });
        parent = Some(id);
        tree_id = Some(tid);
    }
    let (Some(head), Some(tree_id)) = (parent, tree_id) else {
        bail!("no commits")
    };
    // A loose ref written by hand: no reflog, so nothing records the host's
    // identity or the current time.
    std::fs::write(workspace.join(".git/refs/heads/main"), format!("{head}\n"))?;
    Ok((head.to_string(), tree_id.to_string(), records))
}

enum Node<'a> {
    File(&'a FileEntry),
    Dir(BTreeMap<&'a str, Node<'a>>),
}

fn write_tree(repo: &git2::Repository, tree: &Tree) -> anyhow::Result<git2::Oid> {
    let mut root: BTreeMap<&str, Node<'_>> = BTreeMap::new();
    for (path, entry) in tree {
        let mut parts: Vec<&str> = path.split('/').collect();
        let Some(leaf) = parts.pop() else { continue };
        let mut cur = &mut root;
        for p in parts {
            let node = cur.entry(p).or_insert_with(|| Node::Dir(BTreeMap::new()));
            cur = match node {
                Node::Dir(m) => m,
                Node::File(_) => bail!("{path}: a parent is also a file"),
            };
        }
        if cur.insert(leaf, Node::File(entry)).is_some() {
            bail!("{path}: is both a file and a directory");
        }
    }
    write_nodes(repo, &root)
}

fn write_nodes(
    repo: &git2::Repository,
    nodes: &BTreeMap<&str, Node<'_>>,
) -> anyhow::Result<git2::Oid> {
    let mut b = repo.treebuilder(None)?;
    for (name, node) in nodes {
        match node {
            Node::File(e) => {
                let oid = repo.blob(&e.bytes)?;
                b.insert(name, oid, if e.exec { 0o100755 } else { 0o100644 })?;
            }
            Node::Dir(m) => {
                let oid = write_nodes(repo, m)?;
                b.insert(name, oid, 0o040000)?;
            }
        }
    }
    Ok(b.write()?)
}

/// Writes the final tree into the working directory, sorted, 0644/0755.
pub(super) fn checkout(workspace: &Path, tree: &Tree) -> anyhow::Result<()> {
    for (path, entry) in tree {
        write_file(workspace, path, entry)?;
    }
    Ok(())
}

pub(super) fn write_file(root: &Path, rel: &str, entry: &FileEntry) -> anyhow::Result<()> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mode = if entry.exec { 0o755 } else { 0o644 };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.write_all(&entry.bytes)?;
    // The umask may have cleared bits of `mode`.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// Writes `.git/index` matching HEAD, with the stat data of the files just
/// written, so `git status` and `git diff-index` see a clean tree. Built
/// entry by entry rather than with `add_path`, which would apply
/// `.gitattributes` filters from the (untrusted-looking) templates.
pub(super) fn write_index(workspace: &Path, tree: &Tree) -> anyhow::Result<()> {
    let repo = git2::Repository::open(workspace)?;
    let mut index = repo.index()?;
    index.clear()?;
    for (path, entry) in tree {
        let meta = std::fs::symlink_metadata(workspace.join(path))?;
        let id = git2::Oid::hash_object(git2::ObjectType::Blob, &entry.bytes)?;
        let t32 = |s: i64| u32::try_from(s).unwrap_or(0);
        index.add(&git2::IndexEntry {
            ctime: git2::IndexTime::new(meta.ctime() as i32, t32(meta.ctime_nsec())),
            mtime: git2::IndexTime::new(meta.mtime() as i32, t32(meta.mtime_nsec())),
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            mode: if entry.exec { 0o100755 } else { 0o100644 },
            uid: meta.uid(),
            gid: meta.gid(),
            file_size: u32::try_from(entry.bytes.len()).unwrap_or(u32::MAX),
            id,
            flags: 0,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        })?;
    }
    index.write()?;
    Ok(())
}
