//! Episodes: sessions, actions, tiered visibility, grading and reward.
//!
//! An [`Environment`] owns every session of one server. `reset` copies a
//! pristine generated workspace into a fresh session directory; `step` runs
//! one action (structured actions in-process, bash in the sandbox) and
//! regrades from ground truth kept outside the workspace. Session state is
//! written after every step so a restarted server resumes where it stood.

pub mod actions;
mod fsread;
mod grading;
pub mod inspect;
mod runtime;
pub mod session;
pub mod visibility;

use crate::models::{
    Action, ActionOutput, HealthSummary, HistoryEntry, Observation, ResetRequest, RewardBreakdown,
    RewardMode, SandboxInfo, ScanMode, State, TaskInfo, TaskRef,
};
use crate::sandbox::{ExecRequest, Sandbox};
use actions::Parsed;
use grading::Grade;
use runtime::{Runtimes, TaskRuntime, WorkspacePool};
use session::{SessionData, SessionPaths};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Instant;
use visibility::Exploration;

/// Why an environment call failed. The HTTP layer maps each to a status.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// No such task (404).
    #[error("unknown task: {0}")]
    UnknownTask(String),
    /// No such session, or it expired (404).
    #[error("unknown or expired session: {0}")]
    UnknownSession(String),
    /// A step after the episode ended (409).
    #[error("episode is over (done); call reset to start a new one")]
    EpisodeDone,
    /// The server-wide session limit is reached (429).
    #[error("server at capacity: {active}/{max} sessions active")]
    CapacityReached {
        /// Sessions active now.
        active: usize,
        /// The configured limit.
        max: usize,
    },
    /// The action is malformed or over a bound (422).
    #[error("invalid action: {0}")]
    InvalidAction(String),
    /// The action is longer than the bound (413).
    #[error("action is {len} bytes, over the {max}-byte limit")]
    ActionTooLong {
        /// Its length.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// Another request on the same session is in flight (409).
    #[error("session is busy with another step")]
    Busy,
    /// Anything else (500); the message is safe to show.
    #[error("internal error: {0}")]
    Internal(String),
}

fn internal(e: impl std::fmt::Display) -> EnvError {
    EnvError::Internal(e.to_string())
}

/// Server-wide settings of the environment.
#[derive(Debug, Clone)]
pub struct EnvConfig {
    /// Where generated tasks, sessions and recordings live.
    pub data_dir: PathBuf,
    /// Where the task definitions (`tasks/`) are read from.
    pub tasks_dir: PathBuf,
    /// Maximum concurrent sessions.
    pub max_sessions: usize,
    /// Idle seconds after which a session is expired and its workspace freed.
    pub session_idle_timeout_s: u64,
    /// The project-local Python venv (pytest, git-filter-repo), mounted
    /// read-only at the same path in the sandbox.
    pub venv: PathBuf,
    /// Limits of each agent command (wall timeout, rlimits, output caps).
    /// Configurable so tests of endless loops need not wait the default
    /// 90 s; the health grader keeps its own 60 s wall.
    pub command_limits: crate::sandbox::Limits,
}

impl EnvConfig {
    /// Defaults relative to a project root.
    pub fn with_root(root: &std::path::Path) -> Self {
        Self {
            data_dir: root.join("data"),
            tasks_dir: root.join("tasks"),
            max_sessions: 64,
            session_idle_timeout_s: 1800,
            venv: root.join(".venv"),
            command_limits: crate::sandbox::Limits::default(),
        }
    }
}

struct Session {
    data: SessionData,
    paths: SessionPaths,
    rt: Arc<TaskRuntime>,
    /// The last grading, reused after read-only structured actions.
    grade: Grade,
    /// Metadata fingerprint of the workspace `grade` was computed on
    /// (`fsread::fingerprint`); None when unknown or racy. A bash step that
    /// leaves it unchanged reuses `grade` instead of regrading.
    graded_fp: Option<[u8; 32]>,
    /// Background fsync of the saved state ([`schedule_sync`]).
    sync: Arc<SyncState>,
}

/// One background flusher per session: `dirty` says a save happened since
/// the flusher last started syncing, `in_flight` that a flusher runs.
#[derive(Default)]
struct SyncState {
    in_flight: std::sync::atomic::AtomicBool,
    dirty: std::sync::atomic::AtomicBool,
}

/// Makes the state just written durable without making the client wait:
/// at most one flusher per session, and it loops until no save happened
/// during its last sync, so the newest state is always flushed eventually.
fn schedule_sync(paths: &SessionPaths, st: &Arc<SyncState>) {
    use std::sync::atomic::Ordering::SeqCst;
    st.dirty.store(true, SeqCst);
    if st.in_flight.swap(true, SeqCst) {
        return;
    }
    let (paths, st) = (paths.clone(), st.clone());
    tokio::task::spawn_blocking(move || {
        loop {
            st.dirty.store(false, SeqCst);
            // A session closed meanwhile has no state left to flush.
            let _ = session::sync_saved(&paths);
            st.in_flight.store(false, SeqCst);
            if !st.dirty.load(SeqCst) || st.in_flight.swap(true, SeqCst) {
                break;
            }
        }
    });
}

struct Inner {
    cfg: EnvConfig,
    runtimes: Runtimes,
    sandbox: Arc<Sandbox>,
    pool: Arc<WorkspacePool>,
    sessions: RwLock<HashMap<String, Arc<tokio::sync::Mutex<Session>>>>,
    /// Resets admitted but not yet in `sessions` (their workspace is being
    /// copied and graded). Counted against the limit so concurrent resets
    /// cannot overrun it.
    pending: std::sync::atomic::AtomicUsize,
}

/// A slot taken by a reset in progress; gives it back on drop, by which
/// time the session is in the table (or the reset failed).
struct Reservation<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The environment: all sessions of one server. Cheap to clone.
#[derive(Clone)]
pub struct Environment {
    inner: Arc<Inner>,
}

impl Environment {
    /// Loads the tasks (generating workspaces that are missing or stale),
    /// probes the sandbox and resumes sessions saved by an earlier process.
    pub async fn new(mut cfg: EnvConfig) -> anyhow::Result<Self> {
        // The venv is bound into the sandbox at the same path (shebangs are
        // absolute), so a relative path from the command line must be made
        // absolute before anything is spawned.
        if let Ok(abs) = std::path::absolute(&cfg.venv) {
            cfg.venv = abs;
        }
        graders::security::disable_git_owner_check();
        let sandbox = Arc::new(runtime::make_sandbox(&cfg));
        if !sandbox.info().available {
            tracing::warn!(reason = %sandbox.info().detail, "bubblewrap unavailable: commands are NOT contained");
        }
        let cfg2 = cfg.clone();
        let sb = sandbox.clone();
        let runtimes = tokio::task::spawn_blocking(move || Runtimes::load(&cfg2, sb)).await??;
        let pool = Arc::new(WorkspacePool::new(cfg.data_dir.join("pool")));
        let env = Self {
            inner: Arc::new(Inner {
                pool,
                cfg,
                runtimes,
                sandbox,
                sessions: RwLock::new(HashMap::new()),
                pending: std::sync::atomic::AtomicUsize::new(0),
            }),
        };
        env.resume_sessions().await;
        Ok(env)
    }

    fn sessions_root(&self) -> PathBuf {
        self.inner.cfg.data_dir.join("sessions")
    }

    async fn resume_sessions(&self) {
        let root = self.sessions_root();
        let Ok(rd) = std::fs::read_dir(&root) else {
            return;
        };
        for e in rd.flatten() {
            let id = e.file_name().to_string_lossy().into_owned();
            let paths = SessionPaths::new(&root, &id);
            let data = match session::load(&paths) {
                Ok(d) => d,
                Err(_) => {
                    // A session dir without a readable state is debris of a
                    // crash during reset: nothing to resume.
                    let _ = std::fs::remove_dir_all(&paths.dir);
                    continue;
                }
            };
            let rt = match self.inner.runtimes.get(data.task_id, data.seed).await {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "cannot resume session");
                    continue;
                }
            };
            let grade = Grade::from_observation(&data.last_obs, &data.remediated);
            tracing::info!(session = %id, step = data.steps, "resumed session");
            self.inner
                .sessions
                .write()
                .expect("session table lock poisoned")
                .insert(
                    id,
                    Arc::new(tokio::sync::Mutex::new(Session {
                        data,
                        paths,
                        rt,
                        grade,
                        graded_fp: None,
                        sync: Arc::default(),
                    })),
                );
        }
    }

    /// Starts an episode in a fresh session.
    pub async fn reset(&self, req: ResetRequest) -> Result<Observation, EnvError> {
        let task_id = match &req.task_id {
            None => 1,
            Some(r) => self
                .inner
                .runtimes
                .resolve(r)
                .ok_or_else(|| EnvError::UnknownTask(task_ref_text(r)))?,
        };
        if let Some(ep) = &req.episode_id
            && (ep.len() > 255 || ep.is_empty())
        {
            return Err(EnvError::InvalidAction(
                "episode_id must be 1-255 characters".into(),
            ));
        }
        // Check and reserve under the table's write lock, so two resets
        // cannot both take the last slot.
        let _slot = {
            let table = self
                .inner
                .sessions
                .write()
                .expect("session table lock poisoned");
            let pending = &self.inner.pending;
            let active = table.len() + pending.load(std::sync::atomic::Ordering::SeqCst);
            let max = self.inner.cfg.max_sessions;
            if active >= max {
                return Err(EnvError::CapacityReached { active, max });
            }
            pending.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reservation(pending)
        };
        let seed = req.seed;
        let rt = self
            .inner
            .runtimes
            .get(task_id, seed)
            .await
            .map_err(internal)?;
        let session_id = uuid::Uuid::new_v4().simple().to_string();
        let episode_id = req.episode_id.clone().unwrap_or_else(|| session_id.clone());
        let paths = SessionPaths::new(&self.sessions_root(), &session_id);
        let ws = paths.workspace();
        let uidgid = runtime::sandbox_owner();
        let (rt2, ws2, pool) = (rt.clone(), ws.clone(), self.inner.pool.clone());
        let key = (task_id, seed);
        let fp = tokio::task::spawn_blocking(move || -> std::io::Result<Option<[u8; 32]>> {
            std::fs::create_dir_all(ws2.parent().expect("workspace has a parent"))?;
            if !pool.take_to(key, &ws2) {
                rt2.copy_workspace_to(&ws2, uidgid)?;
            }
            Ok(fsread::fingerprint(&ws2))
        })
        .await
        .map_err(internal)?
        .map_err(internal)?;
        self.inner.pool.refill(key, rt.clone(), uidgid);
        // A fresh copy is the template byte for byte: its grade is the
        // template's, computed once per runtime.
        let grade = match rt.reset_grade.get() {
            Some(g) => g.clone(),
            None => {
                let g = grading::grade(&rt, &ws, &self.inner.sandbox).await;
                if g.errors.is_empty() {
                    let _ = rt.reset_grade.set(g.clone());
                }
                g
            }
        };
        let mut exploration = Exploration::default();
        visibility::update_revealed(&rt.secrets, &mut exploration, &grade.fixed);
        let mut data = SessionData {
            session_id: session_id.clone(),
            episode_id,
            task_id,
            seed,
            reward_mode: req.reward_mode.unwrap_or_default(),
            steps: 0,
            score: 0.0,
            exploration,
            remediated: grade.remediated.clone(),
            history: Vec::new(),
            done: false,
            terminated: false,
            truncated: false,
            success: false,
            last_obs: placeholder_obs(),
            last_active: session::now_unix(),
        };
        let obs = self.observe(&rt, &mut data, &grade, None, 0.0, &ws);
        data.last_obs = obs.clone();
        session::save_unsynced(&paths, &data).map_err(internal)?;
        let sync = Arc::<SyncState>::default();
        schedule_sync(&paths, &sync);
        let _ = session::record(
            &paths,
            &serde_json::json!({"event": "reset", "task_id": task_id, "seed": seed, "observation": rt.redact_json(&obs)}),
        );
        let sess = Session {
            data,
            paths,
            rt,
            grade,
            graded_fp: fp,
            sync,
        };
        self.inner
            .sessions
            .write()
            .expect("session table lock poisoned")
            .insert(session_id, Arc::new(tokio::sync::Mutex::new(sess)));
        Ok(obs)
    }

    fn session(&self, id: &str) -> Result<Arc<tokio::sync::Mutex<Session>>, EnvError> {
        self.inner
            .sessions
            .read()
            .expect("session table lock poisoned")
            .get(id)
            .cloned()
            .ok_or_else(|| EnvError::UnknownSession(id.chars().take(80).collect()))
    }

    /// Runs one action and regrades.
    pub async fn step(&self, session_id: &str, action: Action) -> Result<Observation, EnvError> {
        let parsed = actions::parse(&action.command).map_err(|e| match e {
            actions::ParseError::TooLong(len) => EnvError::ActionTooLong {
                len,
                max: actions::MAX_ACTION_BYTES,
            },
            other => EnvError::InvalidAction(other.to_string()),
        })?;
        let sess = self.session(session_id)?;
        let mut guard = sess.try_lock().map_err(|_| EnvError::Busy)?;
        let s = &mut *guard;
        if s.data.done {
            return Err(EnvError::EpisodeDone);
        }
        let ws = s.paths.workspace();
        let started = Instant::now();
        let (mut out, mutating) = self.run_action(s, &parsed, &ws).await;
        out.command = action.command.clone();
        out.duration_ms = started.elapsed().as_millis() as u64;
        s.data.steps += 1;
        if mutating {
            let ws2 = ws.clone();
            let fp = tokio::task::spawn_blocking(move || fsread::fingerprint(&ws2))
                .await
                .ok()
                .flatten();
            // Nothing in the tree moved (not one ctime): the last grade is
            // still the grade of this tree. Only a clean grade is reused; a
            // grading error may be transient, so it is retried.
            let unchanged = fp.is_some() && fp == s.graded_fp && s.grade.errors.is_empty();
            if unchanged {
                s.grade.health.cached = true;
            } else {
                s.grade = grading::grade(&s.rt, &ws, &self.inner.sandbox).await;
                s.data.remediated = s.grade.remediated.clone();
            }
            s.graded_fp = fp;
        }
        let prev = s.data.score;
        let submitted = matches!(parsed, Parsed::Submit);
        let rt = s.rt.clone();
        let grade = s.grade.clone();
        let obs = {
            let data = &mut s.data;
            let obs = self.observe(&rt, data, &grade, Some(out), prev, &ws);
            if submitted && !data.done {
                data.done = true;
                data.terminated = true;
            }
            let mut obs = obs;
            obs.done = data.done;
            obs.terminated = data.terminated;
            obs.truncated = data.truncated;
            data.history.push(HistoryEntry {
                step: data.steps,
                command: action.command.clone(),
                reward: obs.reward,
                exit_code: obs.last_action.as_ref().and_then(|a| a.exit_code),
            });
            obs.history = recent(&data.history);
            data.last_obs = obs.clone();
            data.last_active = session::now_unix();
            obs
        };
        session::save_unsynced(&s.paths, &s.data).map_err(internal)?;
        schedule_sync(&s.paths, &s.sync);
        let _ = session::record(
            &s.paths,
            &serde_json::json!({"event": "step", "step": s.data.steps, "action": rt.redact(&action.command),
                "reward": obs.reward, "done": obs.done, "observation": rt.redact_json(&obs)}),
        );
        Ok(obs)
    }

    /// Runs the action; returns its output and whether it may have changed
    /// the workspace (so grading must rerun).
    async fn run_action(
        &self,
        s: &mut Session,
        parsed: &Parsed,
        ws: &std::path::Path,
    ) -> (ActionOutput, bool) {
        let mut out = ActionOutput {
            kind: parsed.kind().to_string(),
            exit_code: Some(0),
            ..Default::default()
        };
        let fail = |out: &mut ActionOutput, msg: String| {
            out.exit_code = Some(1);
            out.stderr = msg;
        };
        match parsed {
            Parsed::InspectFile(p) => match fsread::read_bounded(ws, p, inspect::INSPECT_MAX_BYTES)
            {
                Ok((bytes, more)) => {
                    out.stdout = inspect::numbered(&bytes, more);
                    s.data.exploration.inspected.insert(normalise(p));
                }
                Err(e) => fail(&mut out, format!("inspect_file: {e}")),
            },
            Parsed::InspectEncoded(p) => {
                match fsread::read_bounded(ws, p, inspect::INSPECT_MAX_BYTES) {
                    Ok((bytes, _)) => {
                        out.stdout = inspect::decoded_runs(&bytes);
                        s.data.exploration.encoded_inspected.insert(normalise(p));
                        s.data.exploration.inspected.insert(normalise(p));
                    }
                    Err(e) => fail(&mut out, format!("inspect_encoded: {e}")),
                }
            }
            Parsed::ListFiles(p) => match fsread::list_files(ws, p.as_deref(), 2000) {
                Ok((files, more)) => {
                    out.stdout = files.join("\n");
                    if more {
                        out.stdout.push_str("\n[... more files not shown ...]");
                    }
                    out.stdout.push('\n');
                }
                Err(e) => fail(&mut out, format!("list_files: {e}")),
            },
            Parsed::ScanHistory => {
                let rt = s.rt.clone();
                let ws = ws.to_path_buf();
                match tokio::task::spawn_blocking(move || rt.history_report(&ws)).await {
                    Ok(Ok(text)) => {
                        out.stdout = text;
                        s.data.exploration.history_scanned = true;
                    }
                    Ok(Err(e)) => fail(&mut out, format!("scan_history: {e}")),
                    Err(e) => fail(&mut out, format!("scan_history: {e}")),
                }
            }
            Parsed::RunScanner => {
                let rt = s.rt.clone();
                let ws = ws.to_path_buf();
                match tokio::task::spawn_blocking(move || rt.scanner_report(&ws)).await {
                    Ok(Ok((text, n))) => {
                        out.stdout = text;
                        out.exit_code = Some(if n > 0 { 1 } else { 0 });
                        s.data.exploration.scanner_run = true;
                    }
                    Ok(Err(e)) => fail(&mut out, format!("run_scanner: {e}")),
                    Err(e) => fail(&mut out, format!("run_scanner: {e}")),
                }
            }
            Parsed::Submit => {
                out.stdout = "submitted; episode ends after this grading\n".into();
            }
            Parsed::Bash(cmd) => {
                // A bash command that names a planted file counts as
                // inspecting it (cat, sed -n, grep): shallow tier.
                for sec in &s.rt.secrets {
                    if cmd.contains(sec.file.as_str()) && ws.join(&sec.file).exists() {
                        s.data.exploration.inspected.insert(sec.file.clone());
                    }
                }
                let req = ExecRequest::bash(ws.to_path_buf(), cmd.clone());
                match self.inner.sandbox.run(req).await {
                    Ok(o) => {
                        out.exit_code = o.exit_code;
                        out.stdout = o.stdout;
                        out.stderr = o.stderr;
                        out.stdout_truncated_bytes = o.stdout_dropped;
                        out.stderr_truncated_bytes = o.stderr_dropped;
                        out.timed_out = o.timed_out;
                        if o.timed_out {
                            out.stderr.push_str("\n[command timed out and was killed]");
                        }
                    }
                    Err(e) => fail(&mut out, format!("sandbox failed to run the command: {e}")),
                }
                return (out, true);
            }
        }
        (out, false)
    }

    /// Builds the observation and updates the episode flags and score.
    fn observe(
        &self,
        rt: &TaskRuntime,
        data: &mut SessionData,
        grade: &Grade,
        last: Option<ActionOutput>,
        prev_score: f64,
        ws: &std::path::Path,
    ) -> Observation {
        visibility::update_revealed(&rt.secrets, &mut data.exploration, &grade.fixed);
        let initial = rt.secrets.len() as u32;
        let current = grade.current_leaks(&rt.secrets);
        let r = graders::reward::compute(&graders::reward::RewardInput {
            initial_leaks: initial,
            current_leaks: current,
            health_passed: grade.health.passed,
            health_total: grade.health.total,
            health_errors: grade.health.errors,
            steps_taken: data.steps,
            step_budget: rt.info.step_budget,
        });
        let score = r.total;
        let reward = match data.reward_mode {
            RewardMode::Score => score,
            RewardMode::Delta => graders::reward::delta(prev_score, score),
        };
        data.score = score;
        data.success = current == 0
            && grade.health.total > 0
            && grade.health.score >= 1.0
            && grade.errors.is_empty();
        if data.success {
            data.done = true;
            data.terminated = true;
        } else if data.steps >= rt.info.step_budget {
            data.done = true;
            data.truncated = true;
        }
        let (files, _) = fsread::list_files(ws, None, 500).unwrap_or_default();
        let ranked = visibility::ranked_actions(&visibility::RankInput {
            secrets: &rt.secrets,
            exp: &data.exploration,
            fixed: &grade.fixed,
            files: &files,
            history_relevant: rt.info.scan_mode == ScanMode::Git
                && rt.info.difficulty != crate::models::Difficulty::Easy,
        });
        let visible = visibility::visible_secrets(
            &rt.secrets,
            &data.exploration,
            &grade.remediated,
            &grade.fixed,
        );
        Observation {
            session_id: data.session_id.clone(),
            episode_id: data.episode_id.clone(),
            task_id: rt.info.id,
            task_slug: rt.info.slug.clone(),
            seed: data.seed,
            title: rt.info.title.clone(),
            difficulty: rt.info.difficulty,
            description: rt.info.description.clone(),
            scan_mode: rt.info.scan_mode,
            step_budget: rt.info.step_budget,
            steps_taken: data.steps,
            reward,
            reward_mode: data.reward_mode,
            reward_breakdown: RewardBreakdown {
                detection: r.detection,
                base: r.base,
                health: r.health,
                efficiency: r.efficiency,
                score,
                reward,
            },
            leaks_initial: initial,
            leaks_current: current,
            hidden_count: (rt.secrets.len() - visible.len()) as u32,
            visible_secrets: visible,
            conflict_map: visibility::conflict_map(&rt.secrets, &data.exploration),
            ranked_actions: ranked,
            top_blocker: visibility::top_blocker(&rt.secrets, &data.exploration, &grade.fixed),
            health: grade.health.clone(),
            last_action: last,
            history: recent(&data.history),
            done: data.done,
            terminated: data.terminated,
            truncated: data.truncated,
            success: data.success,
            sandbox: self.inner.sandbox.info(),
            grading_errors: grade.errors.clone(),
        }
    }

    /// The session object.
    pub fn state(&self, session_id: &str) -> Result<State, EnvError> {
        let sess = self.session(session_id)?;
        let g = sess.try_lock().map_err(|_| EnvError::Busy)?;
        Ok(State {
            episode_id: g.data.episode_id.clone(),
            step_count: g.data.steps,
            session_id: g.data.session_id.clone(),
            task_id: g.data.task_id,
            seed: g.data.seed,
            done: g.data.done,
            score: g.data.score,
            observation: g.data.last_obs.clone(),
        })
    }

    /// Ends a session and removes its workspace.
    pub async fn close(&self, session_id: &str) -> Result<(), EnvError> {
        let removed = self
            .inner
            .sessions
            .write()
            .expect("session table lock poisoned")
            .remove(session_id);
        let Some(sess) = removed else {
            return Err(EnvError::UnknownSession(
                session_id.chars().take(80).collect(),
            ));
        };
        // Wait for an in-flight step to finish before deleting its files.
        let g = sess.lock().await;
        let dir = g.paths.dir.clone();
        drop(g);
        tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir))
            .await
            .map_err(internal)?
            .map_err(internal)
    }

    /// Closes sessions idle for longer than the configured timeout.
    pub async fn expire_idle(&self) -> usize {
        let now = session::now_unix();
        let timeout = self.inner.cfg.session_idle_timeout_s;
        let ids: Vec<String> = {
            let t = self
                .inner
                .sessions
                .read()
                .expect("session table lock poisoned");
            t.iter()
                .filter(|(_, s)| {
                    s.try_lock()
                        .map(|g| now.saturating_sub(g.data.last_active) > timeout)
                        .unwrap_or(false)
                })
                .map(|(k, _)| k.clone())
                .collect()
        };
        let mut n = 0;
        for id in ids {
            if self.close(&id).await.is_ok() {
                tracing::info!(session = %id, "expired idle session");
                n += 1;
            }
        }
        n
    }

    /// Spawns the idle-session reaper on the current tokio runtime.
    pub fn spawn_reaper(&self) {
        let env = self.clone();
        let every = std::time::Duration::from_secs(
            (self.inner.cfg.session_idle_timeout_s / 4).clamp(1, 60),
        );
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                env.expire_idle().await;
            }
        });
    }

    /// All tasks, without ground truth.
    pub fn tasks(&self) -> Vec<TaskInfo> {
        self.inner.runtimes.infos()
    }
    /// Sandbox availability, for `/health`.
    pub fn sandbox_info(&self) -> SandboxInfo {
        self.inner.sandbox.info()
    }
    /// Sessions active now.
    pub fn active_sessions(&self) -> usize {
        self.inner
            .sessions
            .read()
            .expect("session table lock poisoned")
            .len()
    }
    /// The configured session limit.
    pub fn max_sessions(&self) -> usize {
        self.inner.cfg.max_sessions
    }
    /// The workspace directory of a session (tests and debugging).
    pub fn workspace_of(&self, session_id: &str) -> Result<PathBuf, EnvError> {
        Ok(SessionPaths::new(&self.sessions_root(), session_id).workspace()).and_then(|p| {
            self.session(session_id)?;
            Ok(p)
        })
    }
    /// The rendered oracle actions of a task (or variant); ground truth, for
    /// scripted agents and tests only, never sent over the agent API.
    pub async fn oracle(&self, task_id: u32, seed: Option<u64>) -> Result<Vec<String>, EnvError> {
        Ok(self
            .inner
            .runtimes
            .get(task_id, seed)
            .await
            .map_err(internal)?
            .oracle
            .clone())
    }
}

fn task_ref_text(r: &TaskRef) -> String {
    match r {
        TaskRef::Number(n) => n.to_string(),
        TaskRef::Name(s) => s.chars().take(64).collect(),
    }
}

fn normalise(p: &str) -> String {
    let p = p.trim().trim_start_matches("./");
    p.strip_prefix("/workspace/").unwrap_or(p).to_string()
}

fn recent(h: &[HistoryEntry]) -> Vec<HistoryEntry> {
    h[h.len().saturating_sub(session::HISTORY_SHOWN)..].to_vec()
}

fn placeholder_obs() -> Observation {
    Observation {
        session_id: String::new(),
        episode_id: String::new(),
        task_id: 0,
        task_slug: String::new(),
        seed: None,
        title: String::new(),
        difficulty: crate::models::Difficulty::Easy,
        description: String::new(),
        scan_mode: ScanMode::Dir,
        step_budget: 0,
        steps_taken: 0,
        reward: 0.0,
        reward_mode: RewardMode::Score,
        reward_breakdown: RewardBreakdown::default(),
        leaks_initial: 0,
        leaks_current: 0,
        visible_secrets: vec![],
        hidden_count: 0,
        conflict_map: vec![],
        ranked_actions: vec![],
        top_blocker: None,
        health: HealthSummary::default(),
        last_action: None,
        history: vec![],
        done: false,
        terminated: false,
        truncated: false,
        success: false,
        sandbox: SandboxInfo {
            available: false,
            detail: String::new(),
        },
        grading_errors: vec![],
    }
}
