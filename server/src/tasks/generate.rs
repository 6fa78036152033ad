//! The deterministic workspace generator.
//!
//! A task's template overlays are rendered with the episode's values
//! ([`super::overlay`]), its ground truth is checked against what was
//! rendered (every secret where `task.json` says, in the form it says), and
//! the workspace is written as a git repository in-process
//! ([`super::repo`]): nothing reads the host's git configuration or the
//! clock, so the same task and seed give the same commit ids and the same
//! bytes on every machine.
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
use super::overlay::{
    MAX_FILE_BYTES, MAX_TASK_BYTES, Rendered, apply_renames, find, render_overlay, tree_diff, walk,
};
use super::read::read_capped;
use super::registry::{TaskDef, TaskRegistry};
use super::render::{Form, render};
use super::repo::{Tree, build_repo, checkout, write_file, write_index};
use super::truth::{GeneratedTask, load_generated};
use super::variants::{canonical_values, variant_values};
use anyhow::{Context, bail};
use graders::planted::Planted;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Bumped whenever the output for the same inputs changes; part of the stamp.
pub const GENERATOR_VERSION: &str = "secaudit-generator-2";

/// Author and date of the single commit of a task without `history`.
const DEFAULT_AUTHOR: &str = "SecretsAudit Generator <generator@secaudit.invalid>";
const DEFAULT_DATE: &str = "2025-01-01T00:00:00Z";

/// Root-level pytest configuration copied to `pristine/` even when a task
/// forgets to list it, so the grader can always restore it.
const PYTEST_CONFIG: [&str; 5] = [
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "conftest.py",
];

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
        secrets.push(Planted {
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
