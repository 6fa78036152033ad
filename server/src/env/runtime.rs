//! Per-task runtime: the generated pristine workspace and everything the
//! grader trusts about it (ground truth, pristine tests, the expected-test
//! manifest, the original history, the scanner's findings at t0), prepared
//! once per (task, seed) and shared by every session of that task.

use super::config::EnvConfig;
use crate::health::{ExpectedTests, HealthGrader};
use crate::models::{TaskInfo, TaskRef};
use crate::sandbox::Sandbox;
use crate::tasks::{GeneratedTask, TaskRegistry};
use anyhow::Context as _;
use graders::planted::Planted;
use graders::scanner::{BlobCache, Scanner};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Everything trusted about one generated task, outside any workspace.
pub struct TaskRuntime {
    /// Public metadata.
    pub info: TaskInfo,
    /// Ground truth.
    pub secrets: Vec<Planted>,
    /// The planted values compiled into the security grader's needle
    /// automaton once per runtime (rebuilding it on every grading pass
    /// cost more than scanning a small workspace).
    pub planted: graders::security::PlantedIndex,
    /// Rendered oracle actions.
    pub oracle: Vec<String>,
    /// The generated pristine workspace (template; never mounted).
    pub template: PathBuf,
    /// Pristine copies of the health suite's files.
    pub pristine: PathBuf,
    /// The pristine test manifest (denominator of health).
    pub expected: ExpectedTests,
    /// The original history (git tasks): rewriting in place must keep it.
    pub history: Option<graders::security::HistoryRecord>,
    /// Object ids of the pristine repository (dir mode grades only newer
    /// objects).
    pub pristine_objects: std::collections::HashSet<String>,
    /// The reset's `.git/objects` files and object ids: in dir mode the
    /// tree walk reads `.git/objects` and skips exactly these.
    pub pristine_git: graders::security::PristineGit,
    /// Values the scanner found in the pristine workspace: not new leaks.
    pub initial_values: BTreeSet<String>,
    /// The grader's scanner, with the pristine allowlist.
    pub scanner: Scanner,
    /// Blob cache shared by every history scan of this task's sessions.
    pub blob_cache: BlobCache,
    /// Redacts planted values from recordings and logs.
    pub redactor: graders::redact::Redactor,
    /// The health grader.
    pub health: Arc<HealthGrader>,
    /// The grade of a fresh copy of the template, computed by the first
    /// reset and reused by every later one: a copy is byte-for-byte the
    /// template, so grading it again can only give the same answer.
    pub reset_grade: std::sync::OnceLock<super::grade::Grade>,
}

/// Runtimes already built, by (task, seed).
type Built = Mutex<HashMap<(u32, Option<u64>), Arc<TaskRuntime>>>;

/// All runtimes of the server, built lazily per (task, seed).
pub struct Runtimes {
    registry: TaskRegistry,
    data_dir: PathBuf,
    health: Arc<HealthGrader>,
    built: Built,
    /// Serialises builds so two resets don't generate the same task twice.
    building: tokio::sync::Mutex<()>,
}

/// The sandbox as configured for this server.
pub fn make_sandbox(cfg: &EnvConfig) -> Sandbox {
    Sandbox::detect(crate::sandbox::SandboxConfig {
        limits: cfg.command_limits.clone(),
        tier: cfg.sandbox,
        ..crate::sandbox::SandboxConfig::with_venv(cfg.venv.clone())
    })
}

impl Runtimes {
    /// Loads the registry and generates canonical workspaces that are
    /// missing or stale.
    pub fn load(cfg: &EnvConfig, sandbox: Arc<Sandbox>) -> anyhow::Result<Self> {
        let registry = TaskRegistry::load(&cfg.tasks_dir)
            .with_context(|| format!("loading tasks from {}", cfg.tasks_dir.display()))?;
        crate::tasks::generate_all(&registry, &cfg.data_dir, |i, n, name| {
            tracing::info!("generated [{i}/{n}] {name}");
        })?;
        let health = HealthGrader::new(sandbox.clone());
        let health = Arc::new(match (cfg.prewarm, cfg.health_runners) {
            (true, true) => health,
            (true, false) => health.without_runners(),
            (false, _) => health.without_staging(),
        });
        Ok(Self {
            registry,
            data_dir: cfg.data_dir.clone(),
            health,
            built: Mutex::new(HashMap::new()),
            building: tokio::sync::Mutex::new(()),
        })
    }

    /// Task number of a reference, if it exists.
    pub fn resolve(&self, r: &TaskRef) -> Option<u32> {
        self.registry.resolve(r).map(|d| d.task.id)
    }

    /// Public metadata of every task.
    pub fn infos(&self) -> Vec<TaskInfo> {
        self.registry
            .list()
            .iter()
            .map(|d| d.task.to_info())
            .collect()
    }

    /// The runtime of (task, seed), building it on first use.
    pub async fn get(&self, task_id: u32, seed: Option<u64>) -> anyhow::Result<Arc<TaskRuntime>> {
        if let Some(rt) = self
            .built
            .lock()
            .expect("runtime lock poisoned")
            .get(&(task_id, seed))
        {
            return Ok(rt.clone());
        }
        let _b = self.building.lock().await;
        if let Some(rt) = self
            .built
            .lock()
            .expect("runtime lock poisoned")
            .get(&(task_id, seed))
        {
            return Ok(rt.clone());
        }
        let def = self
            .registry
            .get(task_id)
            .with_context(|| format!("unknown task {task_id}"))?
            .clone();
        let out_dir = match seed {
            None => crate::tasks::canonical_dir(&self.data_dir, &def.task.slug),
            Some(s) => crate::tasks::variant_dir(&self.data_dir, &def.task.slug, s),
        };
        let od = out_dir.clone();
        let generated = tokio::task::spawn_blocking(move || {
            // A variant left by an older generator or older task files
            // (its stamp differs) is rebuilt, not served stale.
            if crate::tasks::is_up_to_date(&def, seed, &od) {
                crate::tasks::load_generated(&od)
            } else {
                crate::tasks::generate_task(&def, seed, &od)
            }
        })
        .await??;
        let info = self
            .registry
            .get(task_id)
            .expect("checked above")
            .task
            .to_info();
        let rt =
            Arc::new(TaskRuntime::build(info, generated, &out_dir, self.health.clone()).await?);
        self.built
            .lock()
            .expect("runtime lock poisoned")
            .insert((task_id, seed), rt.clone());
        Ok(rt)
    }
}

impl TaskRuntime {
    /// The runtime of a task generated into `out_dir` (`generated` is its
    /// [`crate::tasks::load_generated`]): records the pristine test manifest
    /// with `health`, then everything else the grader trusts. The server
    /// builds every runtime this way, and so does `secaudit grade` (a Harbor
    /// verifier) from the generated directory shipped with its tests, so a
    /// finished workspace is graded by one code path wherever it ran.
    pub async fn build(
        info: TaskInfo,
        generated: GeneratedTask,
        out_dir: &Path,
        health: Arc<HealthGrader>,
    ) -> anyhow::Result<TaskRuntime> {
        anyhow::ensure!(
            info.scan_mode == generated.scan_mode && info.id == generated.task_id,
            "{}: generated for task {} ({:?}), not task {} ({:?})",
            out_dir.display(),
            generated.task_id,
            generated.scan_mode,
            info.id,
            info.scan_mode
        );
        let expected = health
            .expected_tests(&generated.workspace, &generated.pristine)
            .await
            .context("recording the pristine test manifest")?;
        tokio::task::spawn_blocking(move || prepare(info, generated, expected, health)).await?
    }
}

fn prepare(
    info: TaskInfo,
    g: GeneratedTask,
    expected: ExpectedTests,
    health: Arc<HealthGrader>,
) -> anyhow::Result<TaskRuntime> {
    let allowlist = if g.allowlist.exists() {
        graders::scanner::Allowlist::from_toml_file(&g.allowlist)
            .map_err(|e| anyhow::anyhow!("{e}"))?
    } else {
        Default::default()
    };
    // Tool caches (pytest's, Python bytecode) are written by the agent's own
    // test runs and hold test names and random ids, not credentials; new
    // leaks are judged outside them. Planted values are searched
    // everywhere by the ground-truth grader regardless.
    let skip_dirs = [".git", ".pytest_cache", "__pycache__"]
        .map(String::from)
        .to_vec();
    let scanner = Scanner::new(graders::scanner::ScanConfig {
        allowlist,
        skip_dirs,
        ..Default::default()
    });
    let blob_cache = BlobCache::default();
    // What the scanner sees in the pristine workspace is not a new leak.
    let mut initial_values: BTreeSet<String> = scanner
        .scan_tree(&g.workspace)?
        .findings
        .into_iter()
        .map(|f| f.value)
        .collect();
    let history = if info.scan_mode == crate::models::ScanMode::Git {
        if let Ok(h) = scanner.scan_history(&g.workspace, &blob_cache) {
            initial_values.extend(h.findings.into_iter().map(|f| f.value));
        }
        Some(graders::security::record_history(&g.workspace).map_err(|e| anyhow::anyhow!("{e}"))?)
    } else {
        None
    };
    let redactor =
        graders::redact::Redactor::from_values(g.secrets.iter().map(|s| s.value.clone()));
    let pristine_objects = graders::security::record_objects(&g.workspace).unwrap_or_default();
    let pristine_git = graders::security::record_pristine_git(&g.workspace);
    let planted = graders::security::PlantedIndex::new(&g.secrets);
    Ok(TaskRuntime {
        pristine_objects,
        pristine_git,
        planted,
        info,
        secrets: g.secrets.clone(),
        oracle: g.oracle.clone(),
        template: g.workspace.clone(),
        pristine: g.pristine.clone(),
        expected,
        history,
        initial_values,
        scanner,
        blob_cache,
        redactor,
        health,
        reset_grade: std::sync::OnceLock::new(),
    })
}

impl TaskRuntime {
    /// Copies the pristine workspace into `dest` (a fresh directory), then
    /// hands it to the sandbox uid. No file is shared with the template.
    pub fn copy_workspace_to(&self, dest: &Path, owner: Option<(u32, u32)>) -> std::io::Result<()> {
        crate::treecopy::copy_tree(
            &self.template,
            dest,
            &crate::treecopy::CopyOptions::TEMPLATE,
        )
        .map_err(std::io::Error::other)?;
        if let Some((uid, gid)) = owner {
            crate::sandbox::prepare_workspace_owner(dest, uid, gid)?;
            // The session directory itself stays root's; the workspace is
            // the only thing the sandbox uid owns.
        }
        Ok(())
    }

    /// `scan_history`: commits and paths carrying findings, values redacted.
    pub fn history_report(&self, ws: &Path) -> anyhow::Result<String> {
        if !ws.join(".git").exists() {
            return Ok("no git repository in the workspace\n".into());
        }
        let h = self
            .scanner
            .scan_history(ws, &self.blob_cache)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut lines: Vec<String> = h
            .findings
            .iter()
            .map(|f| {
                format!(
                    "{} {}:{} {} ({}){}",
                    f.commit
                        .as_deref()
                        .map(|c| &c[..c.len().min(12)])
                        .unwrap_or("-"),
                    f.file,
                    f.line,
                    f.secret_type,
                    super::visibility::mask(&f.value),
                    if f.encoded { " [encoded]" } else { "" }
                )
            })
            .collect();
        lines.sort();
        lines.dedup();
        let mut out = format!(
            "{} commit(s), {} blob(s) scanned; {} finding(s)\n",
            h.commits,
            h.blobs_scanned + h.blobs_cached,
            lines.len()
        );
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        Ok(out)
    }

    /// `run_scanner`: what the grader's scanner sees in the tree, redacted.
    pub fn scanner_report(&self, ws: &Path) -> anyhow::Result<(String, usize)> {
        let t = self.scanner.scan_tree(ws)?;
        let mut out = format!(
            "{} file(s) scanned; {} finding(s)\n",
            t.files_scanned,
            t.findings.len()
        );
        for f in &t.findings {
            out.push_str(&format!(
                "{}:{} {} {} ({}){}\n",
                f.file,
                f.line,
                f.rule,
                f.secret_type,
                super::visibility::mask(&f.value),
                if f.encoded { " [encoded]" } else { "" }
            ));
        }
        Ok((out, t.findings.len()))
    }

    /// A recording line with the planted values hidden from the parts an
    /// agent controls (`action` and `observation`): verbatim, and in every
    /// encoded, transformed or split form the security grader would count
    /// as the value (`Redactor::redact_planted_json`). It costs a decoder
    /// closure over each new string (measured in a release build: 6.6 ms
    /// per KiB for two passes, so about half that for the one pass made
    /// here; repeated strings, and output equal to a graded file's bytes,
    /// are answered from the index's cache). The line's own fields
    /// (`event`, `step`, `reward`…) are the server's and kept as they
    /// are, so a reader can always parse it.
    pub fn redact_line(&self, mut line: serde_json::Value) -> serde_json::Value {
        const AGENT_PARTS: [&str; 2] = ["action", "observation"];
        for part in AGENT_PARTS {
            if let Some(v) = line.get_mut(part) {
                self.redactor.redact_planted_json(&self.planted, v);
            }
        }
        line
    }
}

/// Key of a runtime: (task, seed).
type Key = (u32, Option<u64>);

/// Ready-made writable copies of task templates, so a reset renames a
/// directory instead of copying a few hundred files while the client waits.
///
/// Every copy is a full, independent copy ([`TaskRuntime::copy_workspace_to`]:
/// no file shared with the template or another session, owned by the
/// sandbox uid) made in the background after a reset takes one; the pool
/// lives under the data dir, on the sessions' filesystem, so taking a copy
/// is one `rename`. Bounded: [`PER_TASK`] copies per (task, seed) and
/// [`MAX_TOTAL`] in all, so training over many seeds does not fill the disk.
/// When the pool is empty (back-to-back resets of one task) reset copies
/// directly, as before.
pub struct WorkspacePool {
    dir: PathBuf,
    state: Mutex<PoolState>,
}

#[derive(Default)]
struct PoolState {
    ready: HashMap<Key, Vec<PathBuf>>,
    /// Keys with a refill in flight (one filler per key).
    filling: std::collections::HashSet<Key>,
    /// Copies ready plus copies being made.
    total: usize,
}

/// Copies kept ready per (task, seed).
pub const PER_TASK: usize = 2;
/// Copies kept ready in all.
pub const MAX_TOTAL: usize = 32;

impl WorkspacePool {
    /// A pool in `dir`, emptied of copies left by an earlier process (their
    /// owner or template may have changed since).
    pub fn new(dir: PathBuf) -> Self {
        let _ = crate::treeremove::remove_tree(&dir);
        Self {
            dir,
            state: Mutex::new(PoolState::default()),
        }
    }

    /// Moves a ready copy of (task, seed) to `dest` (whose parent exists).
    /// False when none is ready or the move failed (the caller copies).
    pub fn take_to(&self, key: Key, dest: &Path) -> bool {
        let got = {
            let mut st = self.state.lock().expect("pool lock poisoned");
            let got = st.ready.get_mut(&key).and_then(Vec::pop);
            if got.is_some() {
                st.total -= 1;
            }
            got
        };
        let Some(src) = got else { return false };
        match std::fs::rename(&src, dest) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "pool copy could not be moved; copying instead");
                let _ = crate::treeremove::remove_tree(&src);
                false
            }
        }
    }

    /// Starts a background refill of (task, seed) up to [`PER_TASK`]
    /// copies, unless one is running or the pool is full. Needs a tokio
    /// runtime (the copy runs on the blocking pool).
    pub fn refill(self: &Arc<Self>, key: Key, rt: Arc<TaskRuntime>, owner: Option<(u32, u32)>) {
        {
            let mut st = self.state.lock().expect("pool lock poisoned");
            if st.filling.contains(&key) {
                return;
            }
            st.filling.insert(key);
        }
        let pool = self.clone();
        tokio::task::spawn_blocking(move || {
            loop {
                {
                    let mut st = pool.state.lock().expect("pool lock poisoned");
                    let have = st.ready.get(&key).map_or(0, Vec::len);
                    if have >= PER_TASK || st.total >= MAX_TOTAL {
                        st.filling.remove(&key);
                        return;
                    }
                    st.total += 1;
                }
                let dest = pool.dir.join(uuid::Uuid::new_v4().simple().to_string());
                let made = std::fs::create_dir_all(&pool.dir)
                    .and_then(|()| rt.copy_workspace_to(&dest, owner));
                let mut st = pool.state.lock().expect("pool lock poisoned");
                match made {
                    Ok(()) => st.ready.entry(key).or_default().push(dest),
                    Err(e) => {
                        tracing::warn!(error = %e, "could not prepare a pooled workspace");
                        let _ = crate::treeremove::remove_tree(&dest);
                        st.total -= 1;
                        st.filling.remove(&key);
                        return;
                    }
                }
            }
        });
    }
}
