//! Episodes: sessions, actions, tiered visibility, grading and reward.
//!
//! An [`Environment`] owns every session of one server. `reset` copies a
//! pristine generated workspace into a fresh session directory; `step` runs
//! one action (structured actions in-process, bash in the sandbox) and
//! regrades from ground truth kept outside the workspace. Session state is
//! written after every step so a restarted server resumes where it stood.

pub mod actions;
mod cache;
mod config;
mod dispatch;
mod episode;
mod error;
pub mod finished;
mod fsread;
mod grade;
mod grading;
pub mod inspect;
pub mod meta;
mod observe;
mod prewarm;
mod profile;
pub mod reach;
mod recover;
mod reset;
mod runtime;
pub mod session;
mod step;
mod table;
pub mod trajectory;
pub mod visibility;

#[cfg(test)]
mod tests;

pub use config::{
    DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT_S, EnvConfig, FINISHED_SESSION_GRACE_S,
};
pub use error::EnvError;
pub use profile::StepProfile;
pub use recover::INTERRUPTED;

use crate::models::{SandboxInfo, TaskInfo};
use crate::sandbox::Sandbox;
use error::internal;
use runtime::{Runtimes, WorkspacePool};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use table::Session;

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
