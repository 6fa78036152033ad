//! The HTTP, WebSocket and MCP front of the environment.
//!
//! One [`app`] builds the whole router; tests call it in-process with
//! `oneshot`, `secaudit serve` binds it to a socket through [`listen::serve`]
//! (header read timeout, connection cap). Everything behind the
//! routes goes through the [`EnvBackend`] trait, implemented for
//! [`crate::env::Environment`], so the router can be tested against a fake.
//!
//! Routes (see [`openapi`] for the machine-readable list):
//!
//! - Seed API, stateful: `POST /reset`, `POST /step`, `GET /state`,
//!   `GET /tasks`, `POST /close`, `DELETE /session/{id}`, `GET /web`.
//! - Trajectories: `GET /trajectory?session_id=` (JSON lines, redacted),
//!   while the session lives and for the retention after it closes.
//! - OpenEnv: `GET /health`, `GET /metadata`, `GET /schema`,
//!   `GET /openapi.json`, `POST /mcp` (JSON-RPC 2.0), `WS /ws`.
//!
//! Unlike the OpenEnv reference server, whose HTTP `/reset` and `/step` are
//! stateless, ours keep sessions: `/reset` returns a `session_id` that later
//! `/step` and `/state` calls must name. The validator only checks that these
//! paths exist; the OpenEnv client only uses `/ws` and `/health`.
//!
//! Every error, whatever the route, is JSON:
//! `{"error": {"code": "...", "message": "..."}}` (see [`ApiError`]).

mod api;
mod backend;
pub mod env_vars;
mod error;
pub mod listen;
mod mcp;
mod openapi;
mod openenv;
mod request;
mod tools;
mod trajectory;
mod ws;

#[cfg(test)]
mod tests;

pub use backend::{BoxFuture, EnvBackend};
pub use error::{ApiError, AppJson};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, post};
use std::sync::Arc;
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

/// Largest request body accepted on any route. Actions are bounded far
/// below this ([`MAX_ACTION_BYTES`]); the rest is JSON overhead.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// Largest command accepted in one action, the environment's own bound:
/// the HTTP layer refuses longer ones with 413 before they reach it.
pub use crate::env::actions::MAX_ACTION_BYTES;

/// Largest WebSocket message (and frame): a message is a request, so it
/// has the request body's bound, whatever transport carries it.
pub const MAX_WS_MESSAGE_BYTES: usize = MAX_BODY_BYTES;

/// Time allowed to receive a whole request body. Bounds slow uploads that
/// would otherwise hold a connection and a task forever.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings of the HTTP layer that are not the environment's.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The session limit, reported by `/health` and used to refuse WebSocket
    /// connections with `CAPACITY_REACHED`. Should equal the environment's
    /// `EnvConfig::max_sessions`.
    pub max_sessions: usize,
    /// A WebSocket that sends no request (text frame) for this long is
    /// closed and its session freed. Pings do not count, as in OpenEnv's
    /// reaper, so a client that only keeps the socket alive still loses its
    /// slot. See: <https://github.com/huggingface/OpenEnv/pull/1000>
    pub ws_idle_timeout: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_sessions: crate::env::DEFAULT_MAX_SESSIONS,
            ws_idle_timeout: Duration::from_secs(crate::env::DEFAULT_SESSION_IDLE_TIMEOUT_S),
        }
    }
}

/// Shared state of every handler: the backend and the HTTP settings.
#[derive(Clone)]
pub struct AppState {
    /// The environment (or a fake in tests).
    pub env: Arc<dyn EnvBackend>,
    /// HTTP-layer settings.
    pub config: Arc<HttpConfig>,
    /// One permit per open WebSocket; bounds sockets even before they reset,
    /// so idle connections cannot pile up past the session limit.
    ws_slots: Arc<tokio::sync::Semaphore>,
    /// Sessions a socket attached to with `/ws?session_id=`: at most one
    /// socket each, as in OpenEnv.
    ws_attached: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
}

impl AppState {
    /// State over any backend.
    pub fn new(env: Arc<dyn EnvBackend>, config: HttpConfig) -> Self {
        let slots = config.max_sessions.max(1);
        Self {
            env,
            config: Arc::new(config),
            ws_slots: Arc::new(tokio::sync::Semaphore::new(slots)),
            ws_attached: Arc::default(),
        }
    }

    /// State over the real environment.
    pub fn from_environment(env: crate::env::Environment, config: HttpConfig) -> Self {
        Self::new(Arc::new(env), config)
    }

    /// WebSocket slots free now: the limit minus the sockets being served.
    /// Lets tests (and `/health` later) see that closed sockets gave theirs
    /// back.
    pub fn free_ws_slots(&self) -> usize {
        self.ws_slots.available_permits()
    }
}

/// Builds the router with every route and limit.
///
/// Layers, outermost first: tracing; a panic catcher
/// ([`error::panic_response`]), so a bug in one handler costs that request a
/// JSON 500 and not the connection (or, on a current-thread runtime, the
/// server); [`error::json_errors`], which turns
/// any non-JSON 4xx/5xx (axum's 405, tower-http's 413, WebSocket upgrade
/// rejections) into our JSON error; the body limit, enforced both by
/// tower-http (a `Content-Length` over the bound is refused before the body
/// is read) and by axum's extractor limit (chunked bodies).
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/", get(api::root))
        .route("/reset", post(api::reset))
        .route("/step", post(api::step))
        .route("/state", get(api::state))
        .route("/tasks", get(api::tasks))
        .route("/close", post(api::close))
        .route("/session/{id}", delete(api::session_delete))
        .route("/trajectory", get(trajectory::trajectory))
        .route("/web", get(api::web))
        .route("/health", get(openenv::health))
        .route("/metadata", get(openenv::metadata))
        .route("/schema", get(openenv::schema))
        .route("/openapi.json", get(openenv::openapi_json))
        .route("/mcp", post(mcp::mcp_post))
        .route("/ws", get(ws::ws_upgrade))
        .fallback(api::not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(error::json_errors))
        .layer(CatchPanicLayer::custom(error::panic_response))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
