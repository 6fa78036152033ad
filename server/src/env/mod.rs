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
pub mod meta;
pub mod reach;
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

/// Sessions recovered (regraded) at once on start-up.
const RESUME_PARALLEL: usize = 2;

/// Concurrent sessions by default (`MAX_CONCURRENT_ENVS`).
pub const DEFAULT_MAX_SESSIONS: usize = 64;

/// Seconds without a request after which a session is closed, by default
/// (`SESSION_IDLE_TIMEOUT_S`).
pub const DEFAULT_SESSION_IDLE_TIMEOUT_S: u64 = 1800;

/// How long a finished episode (done: submitted, solved or out of budget)
/// keeps its session after its last step: its `/state` stays readable for
/// that long, then its slot is freed and its id answers 404. Without it a
/// client that never called `/close` (the debug page, a quick script) held
/// its slot for the whole idle timeout, and about `max_sessions` finished
/// episodes later every reset got 429.
pub const FINISHED_SESSION_GRACE_S: u64 = 30;

/// The error of a step the server was killed during (see
/// `Environment::recover_session`).
pub const INTERRUPTED: &str = "interrupted by server restart: the server stopped while this step ran; \
its changes to the workspace, if any, are kept and graded";

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
    /// No containment tier works and uncontained runs were not allowed
    /// (503).
    #[error("no containment available: {0}")]
    Uncontained(String),
    /// Anything else (500); the message is safe to show.
    #[error("internal error: {0}")]
    Internal(String),
}

/// An internal error with its whole cause chain (`{:#}` joins an anyhow
/// chain as `outer: inner: root`), redacted by shape: the outermost
/// context alone ("recording the pristine test manifest") hid the cause
/// (pytest missing from the venv) from both the client and the log, while
/// a cause may quote command output that holds a secret.
fn internal(e: impl std::fmt::Display) -> EnvError {
    EnvError::Internal(redacted_cause(&format!("{e:#}")))
}

/// `text` with everything the scanner finds by shape replaced.
pub(crate) fn redacted_cause(text: &str) -> String {
    static REDACTOR: std::sync::OnceLock<graders::redact::Redactor> = std::sync::OnceLock::new();
    REDACTOR
        .get_or_init(graders::redact::Redactor::by_shape)
        .redact(text)
}

/// Runs a reset, step or close on a task of its own, so it completes even
/// when its caller stops waiting: hyper drops a request's future when the
/// client hangs up, and a step cut short there had its command killed
/// midway, left its in-flight marker behind and went uncounted (a free
/// action for any client that disconnects); a reset or close cut short
/// left a session directory on disk. A panic inside becomes an internal
/// error of that one request.
async fn detached<T: Send + 'static>(
    f: impl std::future::Future<Output = Result<T, EnvError>> + Send + 'static,
) -> Result<T, EnvError> {
    tokio::spawn(f).await.map_err(|e| {
        EnvError::Internal(if e.is_panic() {
            "the request panicked; it was not completed".into()
        } else {
            format!("the request's task ended early: {e}")
        })
    })?
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
    /// Seconds a finished episode's session is kept after its last step
    /// ([`FINISHED_SESSION_GRACE_S`] by default; tests shorten it).
    pub finished_grace_s: u64,
    /// The project-local Python venv (pytest, git-filter-repo), mounted
    /// read-only at the same path in the sandbox.
    pub venv: PathBuf,
    /// Limits of each agent command (wall timeout, rlimits, output caps).
    /// Configurable so tests of endless loops need not wait the default
    /// 90 s; the health grader keeps its own 60 s wall.
    pub command_limits: crate::sandbox::Limits,
    /// Start each session's next bash sandbox ahead of its command
    /// ([`Sandbox::prewarm`]), and health runs ahead of their copies
    /// (staged, `crate::health`): a step then pays for delivering its
    /// command, not for namespaces, mounts and Python start-up. Off, every
    /// command and every health run starts cold.
    pub prewarm: bool,
    /// Which containment tier to use (`SECAUDIT_SANDBOX`, default auto).
    pub sandbox: crate::sandbox::TierChoice,
    /// Serve episodes even when no containment tier works (agent commands
    /// then run uncontained). Off, such a server refuses every reset with
    /// 503 and `/health` says why: fail closed.
    pub allow_uncontained: bool,
}

impl EnvConfig {
    /// Defaults relative to a project root.
    pub fn with_root(root: &std::path::Path) -> Self {
        Self {
            data_dir: root.join("data"),
            tasks_dir: root.join("tasks"),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout_s: DEFAULT_SESSION_IDLE_TIMEOUT_S,
            finished_grace_s: FINISHED_SESSION_GRACE_S,
            venv: root.join(".venv"),
            command_limits: crate::sandbox::Limits::default(),
            prewarm: true,
            sandbox: crate::sandbox::TierChoice::from_env().unwrap_or_default(),
            allow_uncontained: false,
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
    /// What the last workspace walk saw, reused until the next bash step.
    cache: StepCache,
    /// The sandbox for the next bash command ([`Sandbox::prewarm`]), so a
    /// step pays only for delivering its command. Started after a step
    /// (and at reset) while the episode goes on; dropped, which kills it,
    /// with the session or after [`WARM_IDLE`].
    warm: WarmSlot,
}

/// A session's next sandbox, started in a task of its own; the task's
/// result is the sandbox. Dropping the slot drops the sandbox, at once or
/// when its start finishes.
///
/// The start is a fork of the server, and a fork write-locks the parent's
/// memory map while it copies the page tables: every thread that faults
/// meanwhile stalls, ~1 ms measured on the step that asked for it. So the
/// task waits [`WARM_DELAY`] first, for the step's reply to go out. A bash
/// command that comes sooner (a scripted agent stepping back-to-back)
/// calls the start off and runs cold ([`WarmSlot::take`]): a sandbox
/// still setting up would serve it later than a cold one, since its
/// waiting script costs a fork and two execs more (back-to-back `true`
/// steps measured 25.8 ms p50 that way, against 18.6 cold).
#[derive(Debug, Default)]
enum WarmSlot {
    #[default]
    Empty,
    Starting {
        task: tokio::task::JoinHandle<Option<crate::sandbox::Warm>>,
        /// Told when a command claims the slot: a start still waiting
        /// for [`WARM_DELAY`] is called off.
        claimed: Arc<tokio::sync::Notify>,
        since: Instant,
    },
}

/// How long a prewarm waits before it forks ([`WarmSlot`]).
const WARM_DELAY: std::time::Duration = std::time::Duration::from_millis(3);

impl WarmSlot {
    /// The sandbox, if its start began: waiting for a spawn in progress
    /// (a fork and an exec, far less than a cold start). None when the
    /// start was still waiting, which calls it off.
    async fn take(&mut self) -> Option<crate::sandbox::Warm> {
        match std::mem::take(self) {
            WarmSlot::Empty => None,
            WarmSlot::Starting { task, claimed, .. } => {
                claimed.notify_one();
                task.await.ok().flatten()
            }
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, WarmSlot::Empty)
    }

    /// How long it has waited (for the idle reaper).
    fn age(&self) -> Option<std::time::Duration> {
        match self {
            WarmSlot::Empty => None,
            WarmSlot::Starting { since, .. } => Some(since.elapsed()),
        }
    }
}

/// How long a session's prewarmed sandbox may wait for a command before
/// the idle reaper drops it (it holds a uid and four small processes).
const WARM_IDLE: std::time::Duration = std::time::Duration::from_secs(300);

/// Per-session leftovers of the last [`fsread::survey`], and the profile
/// of the last step. Nothing here is trusted for grading: the owner is a
/// hint for the sandbox's `lchown` walk, the files feed the ranked actions.
#[derive(Debug, Clone, Default)]
struct StepCache {
    /// Owner of every workspace entry after the last bash step, if one.
    owner: Option<(u32, u32)>,
    /// The workspace's file list (as `list_files` shows it). Only a bash
    /// command can change the tree, so structured actions reuse it.
    files: Option<Vec<String>>,
    /// Where the last step's time went.
    profile: StepProfile,
    /// A late fingerprint of the fresh copy, for a reset whose own walk
    /// was racy ([`LateFingerprint`]).
    late_fp: Arc<LateFingerprint>,
}

/// A fresh workspace copy is racy for [`fsread::RACY_WINDOW`] (its files
/// were just written), so reset often cannot vouch for it and the first
/// bash step of the episode regraded in full even when it changed nothing.
/// Reset therefore surveys the copy again in the background once the
/// window has passed. The result is valid only if no action started
/// before that walk ended, which `actions` (bumped by every step before
/// its action runs) proves without ever taking the session lock (a held
/// lock would make a concurrent step fail as busy).
#[derive(Debug, Default)]
struct LateFingerprint {
    /// Actions started in this session.
    actions: std::sync::atomic::AtomicU64,
    /// The copy's fingerprint, once the late walk has vouched for it.
    fp: std::sync::Mutex<Option<[u8; 32]>>,
}

impl LateFingerprint {
    /// Surveys `ws` after the racy window, unless an action starts first.
    fn spawn(self: &Arc<Self>, ws: PathBuf) {
        use std::sync::atomic::Ordering::SeqCst;
        let me = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(fsread::RACY_WINDOW + std::time::Duration::from_millis(10)).await;
            if me.actions.load(SeqCst) != 0 {
                return;
            }
            let sv = survey_blocking(&ws).await;
            // An action that started during the walk may have written.
            if me.actions.load(SeqCst) == 0 {
                *me.fp.lock().expect("late fingerprint lock poisoned") = sv.fingerprint;
            }
        });
    }
}

/// Wall time of each phase of one step, as measured by the server
/// ([`Environment::step_profile`]); the benchmark prints these so a slow
/// step can be attributed without a profiler. Phases that did not run are
/// zero.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepProfile {
    /// The whole `step` call.
    pub total: std::time::Duration,
    /// Writing the in-flight marker before the action.
    pub marker: std::time::Duration,
    /// The action itself (for bash: owner walk + sandbox run).
    pub action: std::time::Duration,
    /// Of `action`: handing the workspace to the command's uid.
    pub owner_walk: std::time::Duration,
    /// Of `action`: the whole sandbox call (uid lease, owner walk,
    /// fork/exec of bwrap, the command, until its last process is gone).
    pub sandbox: std::time::Duration,
    /// The post-command workspace walk ([`fsread::survey`]), both walks
    /// when a racy first one was repeated after grading.
    pub survey: std::time::Duration,
    /// The grading pass (zero when the unchanged tree reused its grade).
    pub grade: std::time::Duration,
    /// Of `grade`: security half.
    pub security: std::time::Duration,
    /// Of `grade`: health half (runs concurrently with security).
    pub health: std::time::Duration,
    /// Of `health`: the suite's own time inside pytest, when it ran.
    pub health_in_pytest: Option<std::time::Duration>,
    /// Building the observation.
    pub observe: std::time::Duration,
    /// Saving state, appending the recording, removing the marker.
    pub save: std::time::Duration,
    /// True when this step regraded.
    pub regraded: bool,
    /// True when the command ran in a sandbox prewarmed for it.
    pub warm: bool,
    /// Starting the sandbox for the next command (the spawn only; its
    /// set-up runs concurrently, off the step).
    pub prewarm: std::time::Duration,
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
        // Before the sandbox probe, which would otherwise fail to bind an
        // unreachable venv and quietly settle for another tier.
        reach::check_server(&cfg.venv, &cfg.data_dir)?;
        graders::security::disable_git_owner_check();
        let sandbox = Arc::new(runtime::make_sandbox(&cfg));
        if !sandbox.info().available {
            if cfg.allow_uncontained {
                tracing::warn!(reason = %sandbox.info().detail, "no containment: commands run UNCONTAINED (--allow-uncontained)");
            } else {
                tracing::error!(reason = %sandbox.info().detail, "no containment: every reset is refused (start with --allow-uncontained to override)");
            }
        }
        // Before any command runs: what a killed server left running.
        let swept = tokio::task::spawn_blocking(crate::sandbox::sweep_orphans).await?;
        if swept > 0 {
            tracing::warn!(swept, "killed sandbox processes left by a dead server");
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

    /// Resumes every session saved under `data/sessions` by an earlier
    /// process, making state, workspace and recording agree again
    /// ([`Self::recover_session`]). Sessions are recovered two at a time
    /// (each regrade runs the task's tests; the machine may have 2 cores).
    async fn resume_sessions(&self) {
        let root = self.sessions_root();
        let Ok(rd) = std::fs::read_dir(&root) else {
            return;
        };
        let mut loaded = Vec::new();
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
            loaded.push(Session {
                data,
                paths,
                rt,
                grade,
                graded_fp: None,
                cache: StepCache::default(),
                warm: WarmSlot::Empty,
            });
        }
        let gate = Arc::new(tokio::sync::Semaphore::new(RESUME_PARALLEL));
        let mut tasks = tokio::task::JoinSet::new();
        for mut sess in loaded {
            let (env, gate) = (self.clone(), gate.clone());
            tasks.spawn(async move {
                let _permit = gate.acquire_owned().await;
                let what = env.recover_session(&mut sess).await;
                tracing::info!(session = %sess.data.session_id, step = sess.data.steps, recovery = what, "resumed session");
                sess
            });
        }
        while let Some(r) = tasks.join_next().await {
            let Ok(sess) = r else {
                tracing::warn!("a session's recovery panicked; it is not resumed");
                continue;
            };
            self.inner
                .sessions
                .write()
                .expect("session table lock poisoned")
                .insert(
                    sess.data.session_id.clone(),
                    Arc::new(tokio::sync::Mutex::new(sess)),
                );
        }
    }

    /// Brings a loaded session back in line with its files after a crash:
    ///
    /// 1. the recording gets any line the state has and it lacks (a kill
    ///    between the state write and the append, or a power cut losing
    ///    unsynced appends);
    /// 2. an episode still running is regraded from its workspace, since a
    ///    workspace can hold writes the saved state predates;
    /// 3. a step the in-flight marker shows was killed mid-command is
    ///    counted, with an "interrupted by server restart" error and the
    ///    reward of the real workspace, and saved and recorded like any
    ///    other step.
    ///
    /// A finished episode's result is final: it is not regraded (its
    /// workspace cannot change after `done`, and its last reward is already
    /// recorded). Returns what was done, for the log.
    async fn recover_session(&self, s: &mut Session) -> &'static str {
        let marker = match session::load_inflight(&s.paths) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(session = %s.data.session_id, error = %e, "unreadable in-flight marker; regrading anyway");
                None
            }
        };
        // A marker for a step the state already holds was left between the
        // save and its removal: that step completed.
        let interrupted = marker.filter(|m| m.step > s.data.steps && !s.data.done);
        self.reconcile_recording(s);
        let outcome = if s.data.done {
            "finished"
        } else {
            let ws = s.paths.workspace();
            // The interrupted command's writes get their metadata in normal
            // form, as a finished step's do, in the same one walk.
            let pass = interrupted.as_ref().map(|m| {
                meta::Pass::new(
                    std::time::UNIX_EPOCH
                        + std::time::Duration::from_secs(m.started_unix.saturating_sub(1)),
                )
            });
            let ws2 = ws.clone();
            let fp = tokio::task::spawn_blocking(move || match pass {
                Some(pass) => fsread::survey_normalising(&ws2, &pass).fingerprint,
                None => fsread::fingerprint(&ws2),
            })
            .await
            .ok()
            .flatten();
            let grade = grading::grade(&s.rt, &ws, &self.inner.sandbox).await;
            match interrupted {
                Some(m) => {
                    s.grade = grade;
                    s.graded_fp = fp;
                    s.data.remediated = s.grade.remediated.clone();
                    self.count_interrupted_step(s, &m).await;
                    "interrupted step counted"
                }
                None if !grade.errors.is_empty() => {
                    // A grading failure at start-up (a busy machine) must
                    // not replace a good saved grade; the next step
                    // regrades (no fingerprint, so nothing is reused).
                    tracing::warn!(session = %s.data.session_id, errors = ?grade.errors, "regrade on resume failed; keeping the saved grade");
                    "regrade failed"
                }
                None => {
                    s.graded_fp = fp;
                    if self.apply_regrade(s, grade).await {
                        "regraded: workspace differed from the saved state"
                    } else {
                        "regraded: unchanged"
                    }
                }
            }
        };
        if let Err(e) = session::end_step(&s.paths) {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot remove in-flight marker");
        }
        outcome
    }

    /// Records, saves and counts a step the server was killed during.
    /// `s.grade` is already the grade of the workspace as the step left it.
    async fn count_interrupted_step(&self, s: &mut Session, m: &session::InFlight) {
        let parsed = actions::parse(&m.command).ok();
        let out = ActionOutput {
            command: m.command.clone(),
            kind: parsed.as_ref().map_or("invalid", |p| p.kind()).to_string(),
            exit_code: None,
            stderr: INTERRUPTED.to_string(),
            // How long it ran before the kill is unknown (the marker has
            // its start; the kill left no time): 0 rather than a guess.
            duration_ms: 0,
            ..Default::default()
        };
        s.data.steps += 1;
        let prev = s.data.score;
        let rt = s.rt.clone();
        let grade = s.grade.clone();
        let ws = s.paths.workspace();
        let obs = self.observe(&rt, &mut s.data, &grade, Some(out), prev, &ws);
        let submitted = matches!(parsed, Some(Parsed::Submit));
        let obs = settle_step(&mut s.data, obs, &m.command, submitted);
        if let Err(e) = session::save_durable(&s.paths, &s.data).await {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot save the recovered step");
        }
        let _ = session::record(
            &s.paths,
            &serde_json::json!({"event": "step", "step": s.data.steps, "action": rt.redact(&m.command),
                "reward": obs.reward, "done": obs.done, "interrupted": true,
                "observation": rt.redact_json(&obs)}),
        );
    }

    /// Applies a clean regrade of a resumed session. When the workspace
    /// grades as the saved observation says, nothing changes; otherwise the
    /// observation (reward, leaks, statuses, maybe `done`) is rebuilt from
    /// the files, saved, and a `resume_regrade` line is recorded. Returns
    /// whether anything changed.
    async fn apply_regrade(&self, s: &mut Session, grade: Grade) -> bool {
        let rt = s.rt.clone();
        let ws = s.paths.workspace();
        let mut data = s.data.clone();
        data.remediated = grade.remediated.clone();
        let last = data.last_obs.last_action.clone();
        let prev = data.score;
        let mut obs = self.observe(&rt, &mut data, &grade, last, prev, &ws);
        obs.history = recent(&data.history);
        let old = &s.data.last_obs;
        let same = obs.leaks_current == old.leaks_current
            && obs.visible_secrets == old.visible_secrets
            && obs.hidden_count == old.hidden_count
            && (
                obs.health.passed,
                obs.health.failed,
                obs.health.errors,
                obs.health.total,
            ) == (
                old.health.passed,
                old.health.failed,
                old.health.errors,
                old.health.total,
            )
            && obs.grading_errors == old.grading_errors
            && obs.done == old.done
            && (obs.reward_breakdown.score - old.reward_breakdown.score).abs() < 1e-12;
        s.grade = grade;
        s.data.remediated = s.grade.remediated.clone();
        if same {
            return false;
        }
        tracing::warn!(session = %data.session_id, old = old.reward_breakdown.score, new = obs.reward_breakdown.score, "workspace differs from the saved state; regraded");
        data.last_obs = obs.clone();
        s.data = data;
        if let Err(e) = session::save_durable(&s.paths, &s.data).await {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot save the regraded state");
        }
        let _ = session::record(
            &s.paths,
            &serde_json::json!({"event": "resume_regrade", "after_step": s.data.steps,
                "reward": obs.reward, "done": obs.done, "observation": rt.redact_json(&obs)}),
        );
        true
    }

    /// Appends the recording lines the saved state has and the recording
    /// lacks, marked `"recovered": true`. Only the last step's observation
    /// is known (`last_obs`); an older missing step (a power cut losing
    /// several unsynced appends) gets its history entry and a null
    /// observation.
    fn reconcile_recording(&self, s: &Session) {
        let tail = match session::recorded_tail(&s.paths) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(session = %s.data.session_id, error = %e, "cannot read the recording; not reconciling it");
                return;
            }
        };
        let (rt, d) = (&s.rt, &s.data);
        let mut lines = Vec::new();
        if !tail.reset && tail.last_step == 0 {
            let obs = (d.steps == 0).then(|| rt.redact_json(&d.last_obs));
            lines.push(
                serde_json::json!({"event": "reset", "task_id": d.task_id, "seed": d.seed,
                "recovered": true, "observation": obs}),
            );
        }
        for n in tail.last_step + 1..=d.steps {
            let Some(h) = d.history.get(n as usize - 1) else {
                break;
            };
            let (done, obs) = if n == d.steps {
                (d.last_obs.done, rt.redact_json(&d.last_obs))
            } else {
                (false, serde_json::Value::Null)
            };
            lines.push(
                serde_json::json!({"event": "step", "step": n, "action": rt.redact(&h.command),
                "reward": h.reward, "done": done, "recovered": true, "observation": obs}),
            );
        }
        for l in &lines {
            if let Err(e) = session::record(&s.paths, l) {
                tracing::warn!(session = %d.session_id, error = %e, "cannot append a recovered recording line");
                return;
            }
        }
    }

    /// Starts an episode in a fresh session.
    pub async fn reset(&self, req: ResetRequest) -> Result<Observation, EnvError> {
        let env = self.clone();
        detached(async move { env.run_reset(req).await }).await
    }

    async fn run_reset(&self, req: ResetRequest) -> Result<Observation, EnvError> {
        self.check_contained()?;
        let task_id = match &req.task_id {
            None => 1,
            Some(r) => self
                .inner
                .runtimes
                .resolve(r)
                .ok_or_else(|| EnvError::UnknownTask(task_ref_text(r)))?,
        };
        if let Some(ep) = &req.episode_id
            && (ep.chars().count() > crate::models::MAX_EPISODE_ID_CHARS || ep.is_empty())
        {
            return Err(EnvError::InvalidAction(format!(
                "episode_id must be 1-{} characters",
                crate::models::MAX_EPISODE_ID_CHARS
            )));
        }
        // At the limit, finished episodes past their grace give their slots
        // back first (the reaper does it too, but only every few seconds).
        if self.active_sessions() + self.inner.pending.load(std::sync::atomic::Ordering::SeqCst)
            >= self.inner.cfg.max_sessions
        {
            self.expire_idle().await;
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
        // A pool uid at rest: the first command then usually runs as the
        // owner already and skips the lchown walk (Sandbox::rest_owner).
        let uidgid = self.inner.sandbox.rest_owner();
        let (rt2, ws2, pool) = (rt.clone(), ws.clone(), self.inner.pool.clone());
        let key = (task_id, seed);
        let survey = tokio::task::spawn_blocking(move || -> std::io::Result<fsread::Survey> {
            std::fs::create_dir_all(ws2.parent().expect("workspace has a parent"))?;
            if !pool.take_to(key, &ws2) {
                rt2.copy_workspace_to(&ws2, uidgid)?;
            }
            Ok(fsread::survey(&ws2))
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
        let obs = self.observe_files(&rt, &mut data, &grade, None, 0.0, &survey.files);
        data.last_obs = obs.clone();
        session::save_durable(&paths, &data)
            .await
            .map_err(internal)?;
        let _ = session::record(
            &paths,
            &serde_json::json!({"event": "reset", "task_id": task_id, "seed": seed, "observation": rt.redact_json(&obs)}),
        );
        let warm = self.prewarm(&ws);
        let sess = Session {
            data,
            paths,
            rt,
            grade,
            graded_fp: survey.fingerprint,
            cache: StepCache {
                owner: survey.owner,
                files: Some(survey.files),
                ..Default::default()
            },
            warm,
        };
        if sess.graded_fp.is_none() {
            sess.cache.late_fp.spawn(ws.clone());
        }
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
        let env = self.clone();
        let sid = session_id.to_owned();
        detached(async move { env.run_step(&sid, action).await }).await
    }

    async fn run_step(&self, session_id: &str, action: Action) -> Result<Observation, EnvError> {
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
        let step_started = Instant::now();
        s.cache.profile = StepProfile::default();
        // Evidence of this step survives a kill mid-command, so a restart
        // can count it and regrade what it changed (`recover_session`).
        // No marker, no step: a step that could not be recovered never runs.
        let marker = session::InFlight {
            step: s.data.steps + 1,
            command: action.command.clone(),
            started_unix: session::now_unix(),
        };
        session::begin_step(&s.paths, &marker)
            .await
            .map_err(internal)?;
        s.cache.profile.marker = step_started.elapsed();
        // Before the first action: a late fingerprint of the fresh copy,
        // taken only if the late walk finished before any action started.
        if s.graded_fp.is_none() && s.data.steps == 0 {
            s.graded_fp = s
                .cache
                .late_fp
                .fp
                .lock()
                .expect("late fingerprint lock poisoned")
                .take();
        }
        s.cache
            .late_fp
            .actions
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let started = Instant::now();
        let command_started = std::time::SystemTime::now();
        let (mut out, mutating) = self.run_action(s, &parsed, &ws).await;
        out.command = action.command.clone();
        out.duration_ms = started.elapsed().as_millis() as u64;
        s.cache.profile.action = started.elapsed();
        let command_ended = Instant::now();
        s.data.steps += 1;
        if mutating {
            // What the command touched loses the metadata it chose
            // (meta.rs), then one walk: fingerprint, file list and owner
            // (fsread::survey).
            let t = Instant::now();
            let pass = meta::Pass::new(command_started);
            let ws2 = ws.clone();
            let sv = tokio::task::spawn_blocking(move || fsread::survey_normalising(&ws2, &pass))
                .await
                .unwrap_or_default();
            s.cache.profile.survey = t.elapsed();
            s.cache.owner = sv.owner;
            s.cache.files = Some(sv.files);
            let mut fp = sv.fingerprint;
            // Nothing in the tree moved (not one ctime): the last grade is
            // still the grade of this tree. Only a clean grade is reused; a
            // grading error may be transient, so it is retried.
            let unchanged = fp.is_some() && fp == s.graded_fp && s.grade.errors.is_empty();
            if unchanged {
                s.grade.health.cached = true;
            } else {
                // A command that wrote within the racy window leaves no
                // trusted fingerprint, and the next no-op step would then
                // regrade in full. Nothing writes to the tree after the
                // command ended (its processes are gone, grading only
                // reads), so once the window has passed a fresh walk
                // vouches for the very tree being graded. It runs during
                // grading (which outlasts the window when pytest runs), off
                // the step's path; if grading ends first, after it, if the
                // window has passed by then.
                let t = Instant::now();
                let grading = grading::grade(&s.rt, &ws, &self.inner.sandbox);
                tokio::pin!(grading);
                let mut again = None;
                let grade = if fp.is_none() {
                    let wait = (fsread::RACY_WINDOW + std::time::Duration::from_millis(1))
                        .saturating_sub(command_ended.elapsed());
                    let late = async {
                        tokio::time::sleep(wait).await;
                        survey_blocking(&ws).await
                    };
                    tokio::select! {
                        g = &mut grading => g,
                        sv = late => {
                            again = Some(sv);
                            grading.await
                        }
                    }
                } else {
                    grading.await
                };
                s.grade = grade;
                s.cache.profile.grade = t.elapsed();
                s.cache.profile.security = s.grade.timings.security;
                s.cache.profile.health = s.grade.timings.health;
                s.cache.profile.health_in_pytest = s.grade.timings.health_in_pytest;
                s.cache.profile.regraded = true;
                s.data.remediated = s.grade.remediated.clone();
                if fp.is_none() && again.is_none() && command_ended.elapsed() > fsread::RACY_WINDOW
                {
                    let t = Instant::now();
                    again = Some(survey_blocking(&ws).await);
                    s.cache.profile.survey += t.elapsed();
                }
                if let Some(again) = again {
                    fp = again.fingerprint;
                    s.cache.owner = again.owner;
                }
            }
            s.graded_fp = fp;
        }
        let prev = s.data.score;
        let submitted = matches!(parsed, Parsed::Submit);
        let rt = s.rt.clone();
        let grade = s.grade.clone();
        let t = Instant::now();
        if s.cache.files.is_none() {
            s.cache.files = Some(list_for_observation(&ws));
        }
        let files = s.cache.files.clone().unwrap_or_default();
        let obs = self.observe_files(&rt, &mut s.data, &grade, Some(out), prev, &files);
        let obs = settle_step(&mut s.data, obs, &action.command, submitted);
        s.cache.profile.observe = t.elapsed();
        let t = Instant::now();
        // Durable before the reply: the client never sees a step the
        // server could forget.
        session::save_durable(&s.paths, &s.data)
            .await
            .map_err(internal)?;
        let _ = session::record(
            &s.paths,
            &serde_json::json!({"event": "step", "step": s.data.steps, "action": rt.redact(&action.command),
                "reward": obs.reward, "done": obs.done, "observation": rt.redact_json(&obs)}),
        );
        // State and recording both hold the step: the marker has served.
        if let Err(e) = session::end_step(&s.paths) {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot remove in-flight marker");
        }
        s.cache.profile.save = t.elapsed();
        // The next command's sandbox starts as this reply goes out, while
        // the agent reads it. Structured actions keep the one they found.
        if s.data.done {
            s.warm = WarmSlot::Empty;
        } else if s.warm.is_empty() {
            let t = Instant::now();
            s.warm = self.prewarm(&ws);
            s.cache.profile.prewarm = t.elapsed();
        }
        s.cache.profile.total = step_started.elapsed();
        Ok(obs)
    }

    /// Starts a sandbox for the session's next bash command (exactly the
    /// request a bash step makes, but for the command), in a task of its
    /// own: on a tokio worker, as `Sandbox::prewarm` requires.
    fn prewarm(&self, ws: &std::path::Path) -> WarmSlot {
        if !self.inner.cfg.prewarm || !self.inner.sandbox.is_contained() {
            return WarmSlot::Empty;
        }
        let sandbox = self.inner.sandbox.clone();
        let req = ExecRequest::bash(ws, "");
        let claimed = Arc::new(tokio::sync::Notify::new());
        let called_off = claimed.clone();
        WarmSlot::Starting {
            task: tokio::spawn(async move {
                tokio::select! {
                    _ = tokio::time::sleep(WARM_DELAY) => sandbox.prewarm(&req),
                    _ = called_off.notified() => None,
                }
            }),
            claimed,
            since: Instant::now(),
        }
    }

    /// Where the time of a session's last step went (see [`StepProfile`]);
    /// None for an unknown session or one busy with a step.
    pub fn step_profile(&self, session_id: &str) -> Option<StepProfile> {
        let sess = self.session(session_id).ok()?;
        let g = sess.try_lock().ok()?;
        Some(g.cache.profile.clone())
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
                let mut req = ExecRequest::bash(ws.to_path_buf(), cmd.clone());
                req.owned_by = s.cache.owner;
                let t = Instant::now();
                let warm = s.warm.take().await;
                let run = self.inner.sandbox.run_warm(warm, req).await;
                s.cache.profile.sandbox = t.elapsed();
                match run {
                    Ok(o) => {
                        s.cache.profile.owner_walk = o.owner_walk;
                        s.cache.profile.warm = o.warm;
                        out.exit_code = o.exit_code;
                        out.stdout = o.stdout;
                        out.stderr = o.stderr;
                        out.stdout_truncated_bytes = o.stdout_dropped;
                        out.stderr_truncated_bytes = o.stderr_dropped;
                        out.timed_out = o.timed_out;
                        out.limit_exceeded = o.bound.map(|b| b.name().to_string());
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

    /// Builds the observation and updates the episode flags and score,
    /// listing the workspace's files for the ranked actions.
    fn observe(
        &self,
        rt: &TaskRuntime,
        data: &mut SessionData,
        grade: &Grade,
        last: Option<ActionOutput>,
        prev_score: f64,
        ws: &std::path::Path,
    ) -> Observation {
        let files = list_for_observation(ws);
        self.observe_files(rt, data, grade, last, prev_score, &files)
    }

    /// [`Self::observe`] with the file list already known (a step's survey
    /// walked the tree; structured actions cannot change it).
    fn observe_files(
        &self,
        rt: &TaskRuntime,
        data: &mut SessionData,
        grade: &Grade,
        last: Option<ActionOutput>,
        prev_score: f64,
        files: &[String],
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
        let ranked = visibility::ranked_actions(&visibility::RankInput {
            secrets: &rt.secrets,
            exp: &data.exploration,
            fixed: &grade.fixed,
            files,
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

    /// The raw values of the secrets currently visible in a session
    /// (`exploration.revealed`, exactly the ids of its `visible_secrets`),
    /// in task order. Secrets not yet visible are never included. For
    /// `GET /state?reveal=true` only; never recorded.
    pub fn revealed_values(
        &self,
        session_id: &str,
    ) -> Result<Vec<crate::models::RevealedSecret>, EnvError> {
        let sess = self.session(session_id)?;
        let g = sess.try_lock().map_err(|_| EnvError::Busy)?;
        Ok(g.rt
            .secrets
            .iter()
            .filter(|s| g.data.exploration.revealed.contains(&s.id))
            .map(|s| crate::models::RevealedSecret {
                id: s.id.clone(),
                value: s.value.clone(),
            })
            .collect())
    }

    /// Ends a session and removes its workspace.
    pub async fn close(&self, session_id: &str) -> Result<(), EnvError> {
        let env = self.clone();
        let sid = session_id.to_owned();
        detached(async move { env.run_close(&sid).await }).await
    }

    async fn run_close(&self, session_id: &str) -> Result<(), EnvError> {
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
        let mut g = sess.lock().await;
        g.warm = WarmSlot::Empty;
        let dir = g.paths.dir.clone();
        drop(g);
        tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir))
            .await
            .map_err(internal)?
            .map_err(internal)
    }

    /// Closes sessions idle for longer than the configured timeout and
    /// finished ones past their grace, and drops prewarmed sandboxes idle
    /// for longer than [`WARM_IDLE`].
    pub async fn expire_idle(&self) -> usize {
        let now = session::now_unix();
        let timeout = self.inner.cfg.session_idle_timeout_s;
        let grace = self.inner.cfg.finished_grace_s;
        let ids: Vec<String> = {
            let t = self
                .inner
                .sessions
                .read()
                .expect("session table lock poisoned");
            t.iter()
                .filter(|(_, s)| {
                    s.try_lock()
                        .map(|mut g| {
                            if g.warm.age().is_some_and(|a| a > WARM_IDLE) {
                                g.warm = WarmSlot::Empty;
                            }
                            let idle = now.saturating_sub(g.data.last_active);
                            idle > timeout || (g.data.done && idle > grace)
                        })
                        .unwrap_or(false)
                })
                .map(|(k, _)| k.clone())
                .collect()
        };
        let mut n = 0;
        for id in ids {
            if self.close(&id).await.is_ok() {
                tracing::info!(session = %id, "expired idle or finished session");
                n += 1;
            }
        }
        n
    }

    /// Spawns the idle-session reaper on the current tokio runtime.
    pub fn spawn_reaper(&self) {
        let env = self.clone();
        let cfg = &self.inner.cfg;
        let every = std::time::Duration::from_secs(
            (cfg.session_idle_timeout_s / 4)
                .min(cfg.finished_grace_s / 2)
                .clamp(1, 60),
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

    /// Whether episodes are served: a containment tier works, or the
    /// operator allowed uncontained runs.
    pub fn serves_episodes(&self) -> bool {
        self.inner.sandbox.is_contained() || self.inner.cfg.allow_uncontained
    }

    /// Fails closed when no tier contains commands and uncontained runs
    /// were not allowed.
    fn check_contained(&self) -> Result<(), EnvError> {
        if self.serves_episodes() {
            Ok(())
        } else {
            Err(EnvError::Uncontained(self.inner.sandbox.info().detail))
        }
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

/// [`fsread::survey`] on the blocking pool; an empty survey (no trusted
/// fingerprint, no owner) if the task fails.
async fn survey_blocking(ws: &std::path::Path) -> fsread::Survey {
    let ws = ws.to_path_buf();
    tokio::task::spawn_blocking(move || fsread::survey(&ws))
        .await
        .unwrap_or_default()
}

/// The file list observations rank actions from, when no survey has one.
fn list_for_observation(ws: &std::path::Path) -> Vec<String> {
    fsread::survey(ws).files
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

/// The bookkeeping that ends a step, the same for a step that ran and for
/// one recovered after the server was killed during it: a `submit` ends
/// the episode, the observation takes the episode flags, the step joins
/// the history (with the command's exit code, none for a killed one), and
/// the observation becomes the session's last.
fn settle_step(
    data: &mut SessionData,
    mut obs: Observation,
    command: &str,
    submitted: bool,
) -> Observation {
    if submitted && !data.done {
        data.done = true;
        data.terminated = true;
    }
    obs.done = data.done;
    obs.terminated = data.terminated;
    obs.truncated = data.truncated;
    data.history.push(HistoryEntry {
        step: data.steps,
        command: command.to_string(),
        reward: obs.reward,
        exit_code: obs.last_action.as_ref().and_then(|a| a.exit_code),
    });
    obs.history = recent(&data.history);
    data.last_obs = obs.clone();
    data.last_active = session::now_unix();
    obs
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
            tier: crate::models::SandboxTier::None,
            landlock_abi: None,
            uid_per_command: false,
            detail: String::new(),
        },
        grading_errors: vec![],
    }
}

/// The per-step shortcuts (one survey walk, the owner hint, the late and
/// post-grade fingerprints) on a real task: they skip work, never a grade.
#[cfg(test)]
mod step_shortcut_tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::time::Duration;

    async fn env() -> Option<(Environment, tempfile::TempDir)> {
        if !testkit::bwrap() {
            return None;
        }
        let data = tempfile::tempdir().expect("tempdir");
        let mut cfg = EnvConfig::with_root(&crate::test_paths::root());
        cfg.venv = crate::test_paths::venv();
        cfg.data_dir = data.path().to_path_buf();
        cfg.max_sessions = 4;
        let env = Environment::new(cfg).await.expect("environment");
        Some((env, data))
    }

    async fn reset(env: &Environment, task: u32) -> Observation {
        env.reset(ResetRequest {
            task_id: Some(TaskRef::Number(task)),
            ..Default::default()
        })
        .await
        .expect("reset")
    }

    async fn step(env: &Environment, sid: &str, cmd: &str) -> (Observation, StepProfile) {
        let o = env
            .step(
                sid,
                Action {
                    command: cmd.into(),
                },
            )
            .await
            .expect("step");
        let la = o.last_action.as_ref().expect("output");
        assert_eq!(la.exit_code, Some(0), "{cmd}: {}", la.stderr);
        let p = env.step_profile(sid).expect("profile");
        (o, p)
    }

    async fn settle(ws: &std::path::Path, want_any: bool) -> usize {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // A warm sandbox's bwrap names the workspace it binds.
            let n = crate::sandbox::tests::host_procs_any(&ws.display().to_string()).len();
            if (n > 0) == want_any || Instant::now() > deadline {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Bash steps run in the sandbox prewarmed after the previous step (or
    /// the reset); it lives exactly as long as the episode: gone once the
    /// episode is done, and with a closed session.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prewarmed_sandboxes_live_with_the_episode() {
        let Some((env, _data)) = env().await else {
            return;
        };
        let sid = reset(&env, 1).await.session_id;
        let ws = env.workspace_of(&sid).expect("workspace");
        assert!(settle(&ws, true).await > 0, "reset prewarms a sandbox");
        for cmd in ["true", "echo hi > note.txt", "cat note.txt"] {
            let (_, p) = step(&env, &sid, cmd).await;
            assert!(p.warm, "{cmd}: {p:?}");
            assert!(settle(&ws, true).await > 0, "the next one is started");
        }
        // A structured action keeps the waiting one.
        step(&env, &sid, "list_files").await;
        let (_, p) = step(&env, &sid, "true").await;
        assert!(p.warm, "{p:?}");
        let o = env
            .step(
                &sid,
                Action {
                    command: "submit".into(),
                },
            )
            .await
            .expect("submit");
        assert!(o.done);
        assert_eq!(settle(&ws, false).await, 0, "episode over: nothing waits");
        // Closing a live session kills its waiting sandbox.
        let sid = reset(&env, 1).await.session_id;
        let ws = env.workspace_of(&sid).expect("workspace");
        assert!(settle(&ws, true).await > 0);
        env.close(&sid).await.expect("close");
        assert_eq!(settle(&ws, false).await, 0, "closed: nothing waits");
    }

    /// A caller that stops waiting (an HTTP client hanging up mid-step)
    /// does not cut the step short: the command runs to its end, the step
    /// counts, and its grade and reply are kept as if it had been awaited.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn abandoned_step_still_completes_and_counts() {
        let Some((env, _data)) = env().await else {
            return;
        };
        let sid = reset(&env, 1).await.session_id;
        let ws = env.workspace_of(&sid).expect("workspace");
        let cmd = "sleep 0.5; echo done > finished.txt";
        let abandoned = tokio::time::timeout(
            Duration::from_millis(100),
            env.step(
                &sid,
                Action {
                    command: cmd.into(),
                },
            ),
        )
        .await;
        assert!(abandoned.is_err(), "the step outlived the caller's wait");
        let deadline = Instant::now() + Duration::from_secs(30);
        let steps = loop {
            // Busy while the abandoned step still runs.
            let n = env.state(&sid).map(|st| st.step_count).ok();
            if n.is_some() || Instant::now() > deadline {
                break n;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(steps, Some(1), "the abandoned step counts");
        assert_eq!(
            std::fs::read_to_string(ws.join("finished.txt")).expect("the command ran to its end"),
            "done\n"
        );
        let (o, _) = step(&env, &sid, "cat finished.txt").await;
        assert_eq!(o.steps_taken, 2, "{o:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shortcuts_skip_work_but_never_a_grade() {
        let Some((env, data)) = env().await else {
            return;
        };
        let obs = reset(&env, 2).await;
        let sid = obs.session_id.clone();
        let ws = env.workspace_of(&sid).expect("workspace");
        // The reset copy was just written (racy); the late walk vouches
        // for it once the window has passed, so a no-op first step reuses
        // the reset grade instead of regrading.
        // Waits for it (polling, bounded: a loaded machine may delay the
        // background walk well past the window).
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let sess = env.session(&sid).expect("session");
            let ready = {
                let g = sess.try_lock().expect("no step in flight");
                g.graded_fp.is_some() || g.cache.late_fp.fp.lock().unwrap().is_some()
            };
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "late fingerprint never arrived");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A step regrades exactly when the sandbox had to hand the tree to
        // another uid: the lchown walk moves every ctime, so the tree's
        // fingerprint changes (conservatively, a regrade). The leased uid
        // is usually the tree's owner, but not when a concurrent command
        // (other tests share the uid pool) holds that one.
        let walked = |p: &StepProfile| p.owner_walk > Duration::ZERO;
        let (o, p) = step(&env, &sid, "true").await;
        assert_eq!(p.regraded, walked(&p), "no-op first step: {p:?}");
        // The same grade as at reset (below 1: the credential-flow tests
        // fail on the planted values).
        assert_eq!(
            (o.health.passed, o.health.total, o.health.errors),
            (obs.health.passed, obs.health.total, 0),
            "{:?}",
            o.health
        );
        assert!(
            o.health.passed > 0 && o.health.error.is_none(),
            "{:?}",
            o.health
        );
        assert!(o.health.cached || walked(&p), "{:?}", o.health);
        assert!(p.sandbox > Duration::ZERO && p.total >= p.action, "{p:?}");
        // The owner hint: a second command as the same uid skips the walk.
        let owner = |p: &std::path::Path| std::fs::symlink_metadata(p).unwrap().uid();
        let u1 = owner(&ws);
        let (_, p) = step(&env, &sid, "true").await;
        if owner(&ws) == u1 {
            assert_eq!(p.owner_walk, Duration::ZERO, "{p:?}");
        }
        // An edit regrades (pytest runs), and its post-grade walk vouches
        // for the edited tree, so an immediate no-op step does not.
        let (o, p) = step(&env, &sid, "echo '# note' >> README.md").await;
        assert!(p.regraded && !o.health.cached, "{p:?}");
        let (_, p) = step(&env, &sid, "true").await;
        assert_eq!(p.regraded, walked(&p), "no-op step after an edit: {p:?}");
        // A real fix right after a fresh reset (inside the racy window, so
        // the late walk must not be trusted) is graded.
        let truth = crate::tasks::load_generated(&data.path().join("tasks").join("task_02"))
            .expect("generated task");
        let s1 = truth
            .secrets
            .iter()
            .find(|s| !s.history_only)
            .expect("a tree secret");
        let obs = reset(&env, 2).await;
        let before = obs.leaks_current;
        let cmd = format!(
            "python3 -c \"import sys; p=sys.argv[1]; b=open(p).read(); open(p,'w').write(b.replace(sys.argv[2], 'REDACTED'))\" {} {}",
            s1.file, s1.value
        );
        let (o, p) = step(&env, &obs.session_id, &cmd).await;
        assert!(p.regraded, "{p:?}");
        assert_eq!(o.leaks_current, before - 1, "the fix was graded");
    }
}

#[cfg(test)]
mod internal_error_tests {
    use super::*;

    /// The client and the log get the root cause, not only the outermost
    /// context, and a secret quoted by a cause is redacted.
    #[test]
    fn internal_errors_carry_the_redacted_cause_chain() {
        let key = "AKIAQ3EGRT7ZJ4EXAMPL";
        let e = anyhow::anyhow!("No module named pytest (key {key})")
            .context("pristine run")
            .context("recording the pristine test manifest");
        let EnvError::Internal(m) = internal(e) else {
            panic!("not internal")
        };
        assert!(
            m.starts_with(
                "recording the pristine test manifest: pristine run: No module named pytest"
            ),
            "{m}"
        );
        assert!(!m.contains(key), "{m}");
    }
}
