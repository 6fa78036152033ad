//! Episodes: sessions, actions, tiered visibility, grading and reward.
//!
//! SCAFFOLD: signatures are the contract the HTTP layer builds against; the
//! bodies are being written (see issue 4).

use crate::models::{Action, Observation, ResetRequest, State, TaskInfo};
use std::path::PathBuf;

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
    /// The action is malformed or over a bound (422, or 413 for length).
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
}

/// The environment: all sessions of one server.
#[derive(Clone)]
pub struct Environment {
    _cfg: std::sync::Arc<EnvConfig>,
}

impl Environment {
    /// Loads tasks and the sandbox.
    pub fn new(cfg: EnvConfig) -> anyhow::Result<Self> {
        Ok(Self { _cfg: std::sync::Arc::new(cfg) })
    }
    /// Starts an episode in a fresh session.
    pub async fn reset(&self, _req: ResetRequest) -> Result<Observation, EnvError> {
        Err(EnvError::Internal("not yet implemented".into()))
    }
    /// Runs one action and regrades.
    pub async fn step(&self, _session_id: &str, _action: Action) -> Result<Observation, EnvError> {
        Err(EnvError::Internal("not yet implemented".into()))
    }
    /// The session object.
    pub fn state(&self, _session_id: &str) -> Result<State, EnvError> {
        Err(EnvError::Internal("not yet implemented".into()))
    }
    /// Ends a session and removes its workspace.
    pub async fn close(&self, _session_id: &str) -> Result<(), EnvError> {
        Ok(())
    }
    /// All tasks, without ground truth.
    pub fn tasks(&self) -> Vec<TaskInfo> {
        Vec::new()
    }
    /// Sandbox availability, for `/health`.
    pub fn sandbox_info(&self) -> crate::models::SandboxInfo {
        crate::models::SandboxInfo { available: false, detail: "not yet".into() }
    }
    /// Sessions active now.
    pub fn active_sessions(&self) -> usize {
        0
    }
}
