//! Shared helpers: an Environment over the repository's real tasks, with its
//! data directory in a temporary folder.

use server::env::{EnvConfig, Environment};
use server::models::{Action, Observation, ResetRequest, TaskRef};
use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh environment over the real tasks; keep the TempDir alive.
pub async fn env_with(max_sessions: usize) -> (Environment, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("tempdir");
    let mut cfg = EnvConfig::with_root(&root());
    cfg.data_dir = data.path().to_path_buf();
    cfg.max_sessions = max_sessions;
    if let Ok(v) = std::env::var("SECAUDIT_VENV") {
        cfg.venv = v.into();
    }
    let env = Environment::new(cfg).await.expect("environment");
    (env, data)
}

/// Resets a canonical task.
pub async fn reset(env: &Environment, task: u32) -> Observation {
    env.reset(ResetRequest {
        task_id: Some(TaskRef::Number(task)),
        ..Default::default()
    })
    .await
    .expect("reset")
}

/// Steps with a command.
pub async fn step(env: &Environment, sid: &str, cmd: &str) -> Observation {
    env.step(
        sid,
        Action {
            command: cmd.to_string(),
        },
    )
    .await
    .unwrap_or_else(|e| panic!("step {cmd:?}: {e}"))
}

/// Serves the real router for `env` on 127.0.0.1:0; returns the address and
/// the server task (aborted on drop of the handle's owner at test end).
pub async fn serve(env: Environment) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let max = env.max_sessions();
    let cfg = server::http::HttpConfig {
        max_sessions: max,
        ..Default::default()
    };
    serve_state(server::http::AppState::from_environment(env, cfg)).await
}

/// Serves the real router over `state` on 127.0.0.1:0.
pub async fn serve_state(
    state: server::http::AppState,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let app = server::http::app(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let h = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    (addr, h)
}
