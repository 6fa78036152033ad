//! The SecretsAuditEnv environment and its server.
//!
//! - [`tasks`]: the task model (`task.json`), the registry, the deterministic
//!   workspace generator and seeded variants.
//! - [`sandbox`]: bubblewrap-contained command execution.
//! - [`health`]: the pytest health grader run in the sandbox on a restored copy.
//! - [`env`]: sessions, actions, tiered visibility, grading and reward.
//! - [`models`]: the wire vocabulary (actions, observations, state).
//! - [`http`]: axum routes, WebSocket, MCP, OpenEnv compatibility.
//! - [`readiness`]: what `serve` checks before it starts.

pub mod env;
pub mod health;
pub mod http;
pub mod models;
pub mod readiness;
pub mod sandbox;
pub mod tasks;

/// The workspace root and the project venv, for this crate's tests.
#[cfg(test)]
pub(crate) mod test_paths {
    use std::path::{Path, PathBuf};

    /// The repository root (cargo runs these tests in `server/`).
    pub fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf()
    }

    /// The venv the sandbox mounts: `SECAUDIT_VENV`, which
    /// `scripts/test.sh` exports (a checkout the sandbox uid cannot reach
    /// keeps its venv outside it, scripts/paths.sh), else `./.venv`.
    pub fn venv() -> PathBuf {
        std::env::var_os(crate::http::env_vars::SECAUDIT_VENV)
            .map_or_else(|| root().join(".venv"), PathBuf::from)
    }
}
