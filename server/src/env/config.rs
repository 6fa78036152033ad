//! Server-wide settings of the environment and its limits and defaults,
//! each defined once.

use std::path::PathBuf;

/// Sessions recovered (regraded) at once on start-up.
pub(super) const RESUME_PARALLEL: usize = 2;

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

/// How long a prewarm waits before it forks ([`super::prewarm::WarmSlot`]).
pub(super) const WARM_DELAY: std::time::Duration = std::time::Duration::from_millis(3);

/// How long a session's prewarmed sandbox may wait for a command before
/// the idle reaper drops it (it holds a uid and four small processes).
pub(super) const WARM_IDLE: std::time::Duration = std::time::Duration::from_secs(300);

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
    /// ([`crate::sandbox::Sandbox::prewarm`]), and health runs ahead of their copies
    /// (staged, `crate::health`): a step then pays for delivering its
    /// command, not for namespaces, mounts and Python start-up. Off, every
    /// command and every health run starts cold.
    pub prewarm: bool,
    /// With `prewarm`, grade health in runners that fork each run from an
    /// interpreter started once (`crate::health`, the runner): bwrap tier
    /// with Landlock signal scoping only; elsewhere, or off, staged runs.
    pub health_runners: bool,
    /// Which containment tier to use (`SECAUDIT_SANDBOX`, default auto).
    pub sandbox: crate::sandbox::TierChoice,
    /// Serve episodes even when no containment tier works (agent commands
    /// then run uncontained). Off, such a server refuses every reset with
    /// 503 and `/health` says why: fail closed.
    pub allow_uncontained: bool,
    /// How long, and how many, closed sessions' trajectories are kept
    /// ([`super::trajectory::Retention`]).
    pub trajectories: super::trajectory::Retention,
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
            health_runners: true,
            sandbox: crate::sandbox::TierChoice::from_env().unwrap_or_default(),
            allow_uncontained: false,
            trajectories: super::trajectory::Retention::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One fact, one definition: wherever a document states a default, it
    /// must be the constant's figure (the README's idle timeout is checked
    /// by the first-hour test, which runs its examples).
    #[test]
    fn documented_defaults_match_constants() {
        let read = |name: &str| std::fs::read_to_string(testkit::root().join(name)).unwrap();
        let spec = read("spec.md");
        for want in [
            format!("(default {DEFAULT_MAX_SESSIONS})"),
            format!("`MAX_CONCURRENT_ENVS`, default {DEFAULT_MAX_SESSIONS} |"),
            format!("`SESSION_IDLE_TIMEOUT_S` (default {DEFAULT_SESSION_IDLE_TIMEOUT_S} s)"),
            format!("`SESSION_IDLE_TIMEOUT_S`, default {DEFAULT_SESSION_IDLE_TIMEOUT_S} s |"),
            format!("closed {FINISHED_SESSION_GRACE_S} s after its last step"),
        ] {
            assert!(spec.contains(&want), "spec.md must say {want:?}");
        }
        let manifest = read("openenv.yaml");
        let want = format!("MAX_CONCURRENT_ENVS: \"{DEFAULT_MAX_SESSIONS}\"");
        assert!(manifest.contains(&want), "openenv.yaml must say {want:?}");
        // The image sets neither: the server's default is the one figure.
        let dockerfile = read("Dockerfile");
        for var in ["MAX_CONCURRENT_ENVS=", "SESSION_IDLE_TIMEOUT_S="] {
            assert!(!dockerfile.contains(var), "Dockerfile must not set {var}");
        }
    }
}
