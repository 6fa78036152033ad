//! The SecretsAuditEnv environment and its server.
//!
//! - [`tasks`]: the task model (`task.json`), the registry, the deterministic
//!   workspace generator and seeded variants.
//! - [`sandbox`]: bubblewrap-contained command execution.
//! - [`health`]: the pytest health grader run in the sandbox on a restored copy.
//! - [`env`]: sessions, actions, tiered visibility, grading and reward.
//! - [`models`]: the wire vocabulary (actions, observations, state).
//! - [`http`]: axum routes, WebSocket, MCP, OpenEnv compatibility.
//! - [`treecopy`]: the one bounded, link-safe recursive copy (templates to
//!   sessions, workspaces to the health grader's scratch).
//! - [`readiness`]: what `serve` checks before it starts.

pub mod env;
pub mod health;
pub mod http;
pub mod models;
pub mod readiness;
pub mod sandbox;
pub mod tasks;
pub mod treecopy;
pub mod treeremove;

/// The workspace root and the project venv, for this crate's tests
/// (testkit's, the one lookup every crate's tests share).
#[cfg(test)]
pub(crate) mod test_paths {
    pub use testkit::{root, venv};
}
