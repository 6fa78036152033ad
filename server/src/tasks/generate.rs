//! The deterministic workspace generator.
//!
//! A workspace is built as a git repository entirely in-process with git2:
//! blobs, trees and commits are written straight into the object database
//! with fixed signatures and dates, the branch ref is written as a file, and
//! the working tree is written by hand in sorted order. Nothing reads the
//! host's git configuration or the clock, so the same task and seed give the
//! same commit ids and the same bytes on every machine.
//!
//! Output layout of one task (`out_dir`):
//!
//! ```text
//! workspace/      the repository the agent works in (.git inside)
//! pristine/       health.test_files and pytest configuration, as generated
//! truth.json      ground truth: rendered secrets, rendered oracle, commits
//! allowlist.toml  the task's allowlist in gitleaks format
//! .stamp          hash of the inputs; generate_all skips a task whose stamp matches
//! ```
//!
//! Everything but `workspace/` is outside the agent's reach: the grader
//! trusts only those copies.

use super::model::{Commit, Encoding, Task};
use super::oracle::render_oracle;
use super::registry::{TaskDef, TaskRegistry, read_capped};
use super::render::{Form, Hit, Values, check_rel_path, render};
use super::variants::{canonical_values, variant_values};
use crate::models::{ScanMode, Tier};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Bumped whenever the output for the same inputs changes; part of the stamp.
pub const GENERATOR_VERSION: &str = "secaudit-generator-2";

/// Limits on template trees (task files are reviewed, but bounded anyway).
const MAX_FILES: usize = 2_000;
const MAX_FILE_BYTES: u64 = 1 << 20;
const MAX_TASK_BYTES: u64 = 64 << 20;
const MAX_DEPTH: usize = 16;
const MAX_TRUTH_BYTES: u64 = 16 << 20;

/// Author and date of the single commit of a task without `history`.
const DEFAULT_AUTHOR: &str = "SecretsAudit Generator <generator@secaudit.invalid>";
const DEFAULT_DATE: &str = "2025-01-01T00:00:00Z";

/// The repository config written into every workspace instead of libgit2's
/// probed one: fixed, and with an identity so `git commit` works inside a
/// sandbox whose HOME has no git config.
const GIT_CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[user]\n\tname = Workspace Agent\n\temail = agent@workspace.invalid\n";

/// Root-level pytest configuration copied to `pristine/` even when a task
/// forgets to list it, so the grader can always restore it.
const PYTEST_CONFIG: [&str; 5] = [
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "conftest.py",
];

/// One planted secret with the episode's value and its recomputed line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenderedSecret {
    /// Secret id.
    pub id: String,
    /// The episode's value (canonical or seeded).
    pub value: String,
    /// Kind, as spelled in `task.json` ([`super::model::SecretType::as_str`]).
    #[serde(rename = "type")]
    pub secret_type: String,
    /// File it is planted in.
    pub file: String,
    /// 1-based line where the value (or its encoded form) starts in `file`:
    /// in the final tree, or for `history_only` in the commit that
    /// introduced it.
    pub line: u32,
    /// Tier.
    pub tier: Tier,
    /// Encoding of a deep secret.
    pub encoding: Option<Encoding>,
    /// Ids revealed when this is fixed.
    pub reveals: Vec<String>,
    /// Ids blocked while this is open.
    pub blocks: Vec<String>,
    /// Only in earlier commits.
    pub history_only: bool,
}

/// One generated commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRecord {
    /// Commit id (hex).
    pub id: String,
    /// `Name <email>` (author = committer).
    pub author: String,
    /// Seconds since the epoch, UTC.
    pub time: i64,
    /// Message as committed (with trailing newline).
    pub message: String,
}

/// A generated task: where it is and its rendered ground truth. This is
/// what `truth.json` holds (paths excepted, which [`load_generated`]
/// rebuilds from the directory it reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedTask {
    /// [`GENERATOR_VERSION`] that wrote it.
    pub generator_version: String,
    /// Task number.
    pub task_id: u32,
    /// `task_NN`.
    pub slug: String,
    /// Variant seed; `None` for the canonical task.
    pub seed: Option<u64>,
    /// `dir` or `git`.
    pub scan_mode: ScanMode,
    /// `out_dir/workspace`.
    #[serde(skip)]
    pub workspace: PathBuf,
    /// `out_dir/pristine`: test files and pytest configuration.
    #[serde(skip)]
    pub pristine: PathBuf,
    /// `out_dir/allowlist.toml`.
    #[serde(skip)]
    pub allowlist: PathBuf,
    /// Workspace-relative paths stored under `pristine/`, sorted.
    pub pristine_files: Vec<String>,
    /// Number of tests pytest collects (the health denominator).
    pub expected_tests: u32,
    /// HEAD of `main`.
    pub head_commit: String,
    /// Tree of HEAD.
    pub tree_id: String,
    /// The ground truth with this episode's values.
    pub secrets: Vec<RenderedSecret>,
    /// The oracle's actions rendered with this episode's values.
    pub oracle: Vec<String>,
    /// Files this variant moved: canonical path → episode path (empty for
    /// the canonical task). `secrets[].file` already uses episode paths.
    #[serde(default)]
    pub renamed: BTreeMap<String, String>,
    /// Commits, oldest first.
    pub commits: Vec<CommitRecord>,
}

/// Path → (bytes, executable).
type Tree = BTreeMap<String, FileEntry>;

#[derive(Debug, Clone, PartialEq, Eq)]
struct FileEntry {
    bytes: Vec<u8>,
    exec: bool,
}

/// A rendered overlay: its files and, per file, the placeholders found.
struct Rendered {
    tree: Tree,
    hits: BTreeMap<String, Vec<Hit>>,
}

/// `data_dir/tasks/task_NN`: where [`generate_all`] puts a canonical task.
pub fn canonical_dir(data_dir: &Path, slug: &str) -> PathBuf {
    data_dir.join("tasks").join(slug)
}

/// `data_dir/variants/task_NN/seed_S`: where [`generate_variants`] puts one.
pub fn variant_dir(data_dir: &Path, slug: &str, seed: u64) -> PathBuf {
    data_dir
        .join("variants")
        .join(slug)
        .join(format!("seed_{seed}"))
}

/// Generates one task (canonical when `seed` is `None`) into `out_dir`,
/// replacing what a previous run left there.
pub fn generate_task(
    def: &TaskDef,
    seed: Option<u64>,
    out_dir: &Path,
) -> anyhow::Result<GeneratedTask> {
    let task = &def.task;
    let values = match seed {
        None => canonical_values(task),
        Some(s) => variant_values(task, s)?,
    };
    let oracle = render_oracle(&def.oracle, &values)?;
    let allowlist_toml = render_allowlist(task)?;
    let stamp = input_stamp(def, seed)?;

    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let workspace = out_dir.join("workspace");
    let pristine = out_dir.join("pristine");
    for p in [".stamp", "truth.json", "allowlist.toml"] {
        remove_any(&out_dir.join(p))?;
    }
    remove_any(&workspace)?;
    remove_any(&pristine)?;

    let renamed: BTreeMap<String, String> = values
        .paths
        .iter()
        .filter(|(from, to)| from != to)
        .map(|(f, t)| (f.clone(), t.clone()))
        .collect();
    let mut cache: BTreeMap<String, Rendered> = BTreeMap::new();
    let mut render_dir = |overlay: &str| -> anyhow::Result<()> {
        if !cache.contains_key(overlay) {
            let mut r = render_overlay(
                &def.dir.join(overlay),
                &values,
                seed.is_none().then_some(task),
            )
            .with_context(|| format!("rendering {overlay}/"))?;
            apply_renames(&mut r, &renamed).with_context(|| format!("renaming in {overlay}/"))?;
            cache.insert(overlay.to_owned(), r);
        }
        Ok(())
    };
    render_dir("files")?;
    let commits_spec: Vec<Commit> = if task.history.is_empty() {
        vec![Commit {
            author: DEFAULT_AUTHOR.into(),
            date: DEFAULT_DATE.into(),
            message: "Initial commit".into(),
            overlay: "files".into(),
            exact: true,
            delete: Vec::new(),
        }]
    } else {
        task.history.clone()
    };
    // Messages may name a renamed file (`{{path:P}}`), never a secret.
    let mut commits_spec = commits_spec;
    for (i, c) in commits_spec.iter_mut().enumerate() {
        let (msg, hits) = render(c.message.as_bytes(), &values)
            .with_context(|| format!("history[{i}] message"))?;
        if !hits.is_empty() {
            bail!("history[{i}] message: commit messages may not plant secrets");
        }
        c.message = String::from_utf8(msg).context("commit message is not UTF-8")?;
    }
    for c in &commits_spec {
        render_dir(&c.overlay)?;
    }
    // Every slot of every placement exists in the final tree's templates,
    // so each variant's draw has somewhere to go.
    for (name, pl) in &task.variants.placements {
        let files = &def.dir.join("files");
        let mut templates = Vec::new();
        walk(files, "", 0, &mut templates)?;
        for k in 1..=pl.slots {
            let mark = format!("{{{{slot:{name}:{k}}}}}");
            let mut found = false;
            for (_, path, _) in &templates {
                if find(&read_capped(path, MAX_FILE_BYTES)?, mark.as_bytes()).is_some() {
                    found = true;
                    break;
                }
            }
            if !found {
                bail!("variants.placements {name}: no {mark} in files/");
            }
        }
    }
    for from in task.variants.paths.keys() {
        if !cache
            .values()
            .any(|r| r.tree.contains_key(values.path(from)))
        {
            bail!("variants.paths: {from} is in no overlay");
        }
    }
    if seed.is_some() {
        // A secret whose encoding varies must be spelled `:enc` everywhere,
        // or some copy would keep the canonical encoding.
        for (overlay, r) in &cache {
            for (file, hs) in &r.hits {
                for h in hs {
                    if matches!(h.form, Form::Fixed(_))
                        && task.variants.encodings.contains_key(&h.id)
                    {
                        bail!(
                            "{overlay}/{file}:{}: secret {}'s encoding varies; use {{{{secret:{}:enc}}}}",
                            h.line,
                            h.id,
                            h.id
                        );
                    }
                }
            }
        }
    }

    // Build the sequence of trees and find where history-only secrets were
    // introduced.
    let mut trees: Vec<Tree> = Vec::new();
    let mut introduced: BTreeMap<String, (usize, u32)> = BTreeMap::new();
    let mut tree = Tree::new();
    for (k, c) in commits_spec.iter().enumerate() {
        let r = &cache[&c.overlay];
        if c.exact {
            tree = r.tree.clone();
        } else {
            tree.extend(r.tree.iter().map(|(p, e)| (p.clone(), e.clone())));
        }
        for d in &c.delete {
            let d = values.path(d);
            let prefix = format!("{d}/");
            tree.retain(|p, _| p != d && !p.starts_with(&prefix));
        }
        for s in task.secrets.iter().filter(|s| s.history_only) {
            if introduced.contains_key(&s.id) {
                continue;
            }
            let file = values.path(&s.file);
            if let Some(h) = r
                .hits
                .get(file)
                .and_then(|hs| hs.iter().find(|h| h.id == s.id))
            {
                // Only counts if the file survived this commit's deletes.
                if tree.contains_key(file) {
                    introduced.insert(s.id.clone(), (k, h.line));
                }
            }
        }
        trees.push(tree.clone());
    }
    let final_files = &cache["files"];
    if tree != final_files.tree {
        bail!(
            "the last history commit does not leave the tree equal to files/ ({})",
            tree_diff(&tree, &final_files.tree)
        );
    }

    // Ground truth with recomputed lines, each checked against the bytes.
    let mut secrets = Vec::new();
    for s in &task.secrets {
        let value = values.secrets[&s.id].clone();
        let file = values.path(&s.file).to_owned();
        let encoding = s
            .encoding
            .and_then(|_| values.encodings.get(&s.id).copied());
        let (line, content) = if s.history_only {
            let Some(&(k, line)) = introduced.get(&s.id) else {
                bail!(
                    "secret {}: history_only but no commit's overlay plants it in {file}",
                    s.id,
                );
            };
            for (p, e) in &tree {
                if contains_any_form(&e.bytes, &value) {
                    bail!(
                        "secret {}: history_only but its value is in the final tree ({p})",
                        s.id
                    );
                }
            }
            (line, &trees[k][&file].bytes)
        } else {
            let Some(h) = final_files
                .hits
                .get(&file)
                .and_then(|hs| hs.iter().find(|h| h.id == s.id))
            else {
                bail!(
                    "secret {}: no {{{{secret:{}}}}} placeholder in files/{file}",
                    s.id,
                    s.id,
                );
            };
            (h.line, &final_files.tree[&file].bytes)
        };
        let form = encoding.map_or_else(
            || value.lines().next().unwrap_or("").to_owned(),
            |e| e.encode(&value),
        );
        let at = content
            .split(|&b| b == b'\n')
            .nth(line as usize - 1)
            .unwrap_or(&[]);
        if find(at, form.as_bytes()).is_none() {
            bail!("secret {}: rendered value not found on {file}:{line}", s.id);
        }
        if seed.is_none() && line != s.line {
            bail!(
                "secret {}: task.json says {}:{} but the value renders on line {line}",
                s.id,
                s.file,
                s.line
            );
        }
        secrets.push(RenderedSecret {
            id: s.id.clone(),
            value,
            secret_type: s.secret_type.as_str().to_owned(),
            file,
            line,
            tier: s.tier,
            encoding,
            reveals: s.reveals.clone(),
            blocks: s.blocks.clone(),
            history_only: s.history_only,
        });
    }

    // Pristine copies of the health suite.
    let mut pristine_files: Vec<String> = task.health.test_files.clone();
    for f in &pristine_files {
        if !tree.contains_key(f) {
            bail!("health.test_files: {f} is not in files/");
        }
    }
    for f in PYTEST_CONFIG {
        if tree.contains_key(f) && !pristine_files.iter().any(|p| p == f) {
            pristine_files.push(f.to_owned());
        }
    }
    pristine_files.sort();
    pristine_files.dedup();

    let (head, tree_id, commits) = build_repo(&workspace, &commits_spec, &trees)?;
    checkout(&workspace, &tree)?;
    write_index(&workspace, &tree)?;
    std::fs::create_dir_all(&pristine)?;
    for f in &pristine_files {
        write_file(&pristine, f, &tree[f])?;
    }
    let allowlist = out_dir.join("allowlist.toml");
    std::fs::write(&allowlist, allowlist_toml)?;

    let generated = GeneratedTask {
        generator_version: GENERATOR_VERSION.into(),
        task_id: task.id,
        slug: task.slug.clone(),
        seed,
        scan_mode: task.scan_mode,
        workspace,
        pristine,
        allowlist,
        pristine_files,
        expected_tests: task.health.expected_tests,
        head_commit: head,
        tree_id,
        secrets,
        oracle,
        commits,
        renamed,
    };
    let mut truth = serde_json::to_vec_pretty(&generated)?;
    truth.push(b'\n');
    std::fs::write(out_dir.join("truth.json"), truth)?;
    // Written last: a run interrupted before this point is redone.
    std::fs::write(out_dir.join(".stamp"), stamp)?;
    Ok(generated)
}

/// Reads `out_dir/truth.json` back and fills in the paths.
pub fn load_generated(out_dir: &Path) -> anyhow::Result<GeneratedTask> {
    let text = read_capped(&out_dir.join("truth.json"), MAX_TRUTH_BYTES)?;
    let mut g: GeneratedTask = serde_json::from_slice(&text)
        .with_context(|| format!("parsing {}/truth.json", out_dir.display()))?;
    g.workspace = out_dir.join("workspace");
    g.pristine = out_dir.join("pristine");
    g.allowlist = out_dir.join("allowlist.toml");
    Ok(g)
}

/// True when `out_dir` holds a complete generation of exactly these inputs.
pub fn is_up_to_date(def: &TaskDef, seed: Option<u64>, out_dir: &Path) -> bool {
    let Ok(have) = std::fs::read(out_dir.join(".stamp")) else {
        return false;
    };
    out_dir.join("workspace/.git").is_dir()
        && out_dir.join("truth.json").is_file()
        && input_stamp(def, seed).is_ok_and(|want| want.as_bytes() == have)
}

/// Generates every canonical task into `data_dir/tasks/task_NN/`, skipping
/// those already up to date. `progress(done, total, line)` is called after
/// each task with a line such as `task_03 ... 12 ms`. A failing task does not
/// stop the others; the error names all that failed.
pub fn generate_all(
    registry: &TaskRegistry,
    data_dir: &Path,
    mut progress: impl FnMut(usize, usize, &str),
) -> anyhow::Result<Vec<GeneratedTask>> {
    // No host git configuration may reach the generated repositories.
    graders::security::disable_git_owner_check();
    let defs = registry.list();
    let mut out = Vec::new();
    let mut failures = Vec::new();
    for (i, def) in defs.iter().enumerate() {
        let dir = canonical_dir(data_dir, &def.task.slug);
        let start = Instant::now();
        let result = if is_up_to_date(def, None, &dir) {
            load_generated(&dir).map(|g| (g, "up to date"))
        } else {
            generate_task(def, None, &dir).map(|g| (g, "generated"))
        };
        let ms = start.elapsed().as_millis();
        match result {
            Ok((g, what)) => {
                progress(
                    i + 1,
                    defs.len(),
                    &format!("{} ... {what}, {ms} ms", def.task.slug),
                );
                out.push(g);
            }
            Err(e) => {
                progress(
                    i + 1,
                    defs.len(),
                    &format!("{} ... FAILED: {e:#}", def.task.slug),
                );
                failures.push(format!("{}: {e:#}", def.task.slug));
            }
        }
    }
    if !failures.is_empty() {
        bail!(
            "{} task(s) failed to generate:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    Ok(out)
}

/// Generates variants `first_seed .. first_seed + count` of one task into
/// [`variant_dir`]s, skipping those up to date; `progress` as in
/// [`generate_all`].
pub fn generate_variants(
    def: &TaskDef,
    first_seed: u64,
    count: u64,
    data_dir: &Path,
    mut progress: impl FnMut(usize, usize, &str),
) -> anyhow::Result<Vec<GeneratedTask>> {
    let mut out = Vec::new();
    let total = usize::try_from(count).unwrap_or(usize::MAX);
    for (i, seed) in (first_seed..first_seed.saturating_add(count)).enumerate() {
        let dir = variant_dir(data_dir, &def.task.slug, seed);
        let start = Instant::now();
        let (g, what) = if is_up_to_date(def, Some(seed), &dir) {
            (load_generated(&dir)?, "up to date")
        } else {
            (
                generate_task(def, Some(seed), &dir)
                    .with_context(|| format!("{} seed {seed}", def.task.slug))?,
                "generated",
            )
        };
        let ms = start.elapsed().as_millis();
        progress(
            i + 1,
            total,
            &format!("{} seed {seed} ... {what}, {ms} ms", def.task.slug),
        );
        out.push(g);
    }
    Ok(out)
}

/// Reads and renders every file under `dir`. With `canonical_task`, also
/// refuses templates that hard-code a canonical value (variants would leave
/// it in place).
fn render_overlay(
    dir: &Path,
    values: &Values,
    canonical_task: Option<&Task>,
) -> anyhow::Result<Rendered> {
    let mut files = Vec::new();
    walk(dir, "", 0, &mut files)?;
    let mut total = 0u64;
    let mut tree = Tree::new();
    let mut hits = BTreeMap::new();
    for (rel, path, exec) in files {
        let bytes = read_capped(&path, MAX_FILE_BYTES)?;
        total += bytes.len() as u64;
        if total > MAX_TASK_BYTES {
            bail!("{}: more than {MAX_TASK_BYTES} bytes", dir.display());
        }
        if let Some(task) = canonical_task {
            for s in &task.secrets {
                if find(&bytes, s.value.as_bytes()).is_some() {
                    bail!(
                        "{rel}: hard-codes the value of secret {} (use {{{{secret:{}}}}})",
                        s.id,
                        s.id
                    );
                }
            }
        }
        let (out, h) = render(&bytes, values).with_context(|| rel.clone())?;
        if !h.is_empty() {
            hits.insert(rel.clone(), h);
        }
        tree.insert(rel, FileEntry { bytes: out, exec });
    }
    Ok(Rendered { tree, hits })
}

/// Moves each renamed file of a rendered overlay to its episode path.
/// Moving onto a path the overlay already has is an authoring error (the
/// registry checks alternatives against each other, not against files).
fn apply_renames(r: &mut Rendered, renamed: &BTreeMap<String, String>) -> anyhow::Result<()> {
    let moving: Vec<(&String, &String)> = renamed
        .iter()
        .filter(|(from, _)| r.tree.contains_key(*from))
        .collect();
    let mut moved = Vec::new();
    for (from, to) in moving {
        let entry = r.tree.remove(from).expect("checked above");
        moved.push((to.clone(), entry));
        if let Some(h) = r.hits.remove(from) {
            r.hits.insert(to.clone(), h);
        }
    }
    for (to, entry) in moved {
        let dir_prefix = format!("{to}/");
        if r.tree.contains_key(&to)
            || r.tree
                .keys()
                .any(|p| p.starts_with(&dir_prefix) || to.starts_with(&format!("{p}/")))
        {
            bail!("a variant moves a file to {to}, which the overlay already has");
        }
        r.tree.insert(to, entry);
    }
    Ok(())
}

/// Collects regular files (sorted), rejecting symlinks and special files.
fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, PathBuf, bool)>,
) -> anyhow::Result<()> {
    if depth > MAX_DEPTH {
        bail!("{}: nested deeper than {MAX_DEPTH}", dir.display());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            bail!("{}: non-UTF-8 file name", dir.display())
        };
        let rel = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        check_rel_path(&rel).map_err(|m| anyhow::anyhow!("{rel}: {m}"))?;
        let meta = std::fs::symlink_metadata(e.path())?;
        if meta.is_dir() {
            walk(&e.path(), &rel, depth + 1, out)?;
        } else if meta.is_file() {
            out.push((rel, e.path(), meta.permissions().mode() & 0o111 != 0));
            if out.len() > MAX_FILES {
                bail!("more than {MAX_FILES} files");
            }
        } else {
            bail!("{rel}: not a regular file or directory (symlinks are not allowed in templates)");
        }
    }
    Ok(())
}

/// Initialises the repository and writes every commit; returns (head,
/// final tree id, commit records).
fn build_repo(
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
fn checkout(workspace: &Path, tree: &Tree) -> anyhow::Result<()> {
    for (path, entry) in tree {
        write_file(workspace, path, entry)?;
    }
    Ok(())
}

fn write_file(root: &Path, rel: &str, entry: &FileEntry) -> anyhow::Result<()> {
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
fn write_index(workspace: &Path, tree: &Tree) -> anyhow::Result<()> {
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

/// The task's allowlist in gitleaks TOML. Regexes must compile (the
/// grader would otherwise have to guess what was meant).
fn render_allowlist(task: &Task) -> anyhow::Result<String> {
    for r in task.allowlist.regexes.iter().chain(&task.allowlist.paths) {
        regex::Regex::new(r).with_context(|| format!("allowlist regex {r:?}"))?;
    }
    #[derive(Serialize)]
    struct File<'a> {
        title: String,
        allowlist: Allow<'a>,
    }
    #[derive(Serialize)]
    struct Allow<'a> {
        description: String,
        paths: &'a [String],
        regexes: &'a [String],
        stopwords: &'a [String],
    }
    Ok(toml::to_string(&File {
        title: format!("{} allowlist", task.slug),
        allowlist: Allow {
            description: "Allowlist the grader honours; kept outside the workspace.".into(),
            paths: &task.allowlist.paths,
            regexes: &task.allowlist.regexes,
            stopwords: &task.allowlist.stopwords,
        },
    })?)
}

/// sha256 over the generator version, the seed and every file of the task
/// directory (path, mode bit, bytes), in sorted order.
fn input_stamp(def: &TaskDef, seed: Option<u64>) -> anyhow::Result<String> {
    let mut files = Vec::new();
    walk(&def.dir, "", 0, &mut files)?;
    let mut h = Sha256::new();
    h.update(GENERATOR_VERSION.as_bytes());
    h.update([0]);
    h.update(format!("{seed:?}").as_bytes());
    let mut total = 0u64;
    for (rel, path, exec) in files {
        let bytes = read_capped(&path, MAX_FILE_BYTES)?;
        total += bytes.len() as u64;
        if total > MAX_TASK_BYTES {
            bail!("task directory larger than {MAX_TASK_BYTES} bytes");
        }
        h.update([0]);
        h.update(rel.as_bytes());
        h.update([0, u8::from(exec)]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(hex::encode(h.finalize()))
}

/// Removes a file, symlink or directory tree if present (never follows a
/// symlink).
fn remove_any(p: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
        Ok(m) if m.is_dir() => Ok(std::fs::remove_dir_all(p)?),
        Ok(_) => Ok(std::fs::remove_file(p)?),
    }
}

fn contains_any_form(hay: &[u8], value: &str) -> bool {
    [
        value.to_owned(),
        Encoding::Base64.encode(value),
        Encoding::Hex.encode(value),
    ]
    .iter()
    .any(|f| find(hay, f.as_bytes()).is_some())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

fn tree_diff(a: &Tree, b: &Tree) -> String {
    let mut d = Vec::new();
    for (p, e) in a {
        match b.get(p) {
            None => d.push(format!("extra {p}")),
            Some(f) if f != e => d.push(format!("differs {p}")),
            _ => {}
        }
    }
    d.extend(
        b.keys()
            .filter(|p| !a.contains_key(*p))
            .map(|p| format!("missing {p}")),
    );
    d.truncate(10);
    d.join(", ")
}

/// Splits `Name <email>`.
pub(crate) fn parse_author(s: &str) -> anyhow::Result<(&str, &str)> {
    let s = s.trim();
    let (name, rest) = s
        .rsplit_once('<')
        .context("author must be \"Name <email>\"")?;
    let email = rest
        .strip_suffix('>')
        .context("author must be \"Name <email>\"")?;
    let name = name.trim();
    if name.is_empty()
        || email.is_empty()
        || email.contains(['<', '>', '\n'])
        || name.contains(['<', '>', '\n'])
    {
        bail!("author must be \"Name <email>\"");
    }
    Ok((name, email))
}

/// Parses `YYYY-MM-DDTHH:MM:SSZ` to seconds since the epoch.
pub(crate) fn parse_date(s: &str) -> anyhow::Result<i64> {
    let b = s.as_bytes();
    let ok = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let parts = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    );
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(se)) = parts else {
        bail!("date {s:?} must be YYYY-MM-DDTHH:MM:SSZ");
    };
    let days_in_month = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    };
    if !ok
        || !(1970..=2100).contains(&y)
        || d < 1
        || d > days_in_month
        || h > 23
        || mi > 59
        || se > 59
    {
        bail!("date {s:?} must be a valid YYYY-MM-DDTHH:MM:SSZ (1970-2100)");
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(days * 86_400 + h * 3_600 + mi * 60 + se)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(parse_date("2025-01-06T09:14:00Z").unwrap(), 1_736_154_840);
        assert_eq!(parse_date("2024-02-29T23:59:59Z").unwrap(), 1_709_251_199);
        for bad in [
            "2025-02-29T00:00:00Z",
            "2025-01-06 09:14:00Z",
            "2025-01-06T09:14:00+01:00",
            "2025-13-01T00:00:00Z",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn authors() {
        assert_eq!(
            parse_author("Dana W <dana@x.example>").unwrap(),
            ("Dana W", "dana@x.example")
        );
        assert!(parse_author("dana@x.example").is_err());
        assert!(parse_author("<a@b>").is_err());
    }
}
