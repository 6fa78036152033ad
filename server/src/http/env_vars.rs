//! Every environment variable the server reads, in one place.
//!
//! `secaudit serve` takes each of these as a flag too; the flag wins. The
//! agent's variables (`API_BASE_URL`, `HF_TOKEN`, `MODEL_NAME`, `ENV_URL`)
//! belong to `secaudit agent` and are declared there.

/// Address to bind (default `0.0.0.0`).
pub const SECAUDIT_HOST: &str = "SECAUDIT_HOST";
/// Port to bind (default 7860, Hugging Face Spaces' default; OpenEnv's
/// Docker tooling maps 8000, so set `PORT=8000` there).
pub const PORT: &str = "PORT";
/// Where generated tasks, sessions and recordings live (default `./data`).
pub const SECAUDIT_DATA_DIR: &str = "SECAUDIT_DATA_DIR";
/// Where task definitions are read from (default `./tasks`).
pub const SECAUDIT_TASKS_DIR: &str = "SECAUDIT_TASKS_DIR";
/// Maximum concurrent sessions (default
/// [`crate::env::DEFAULT_MAX_SESSIONS`]). OpenEnv's convention name.
/// See: <https://github.com/huggingface/OpenEnv/pull/619>
pub const MAX_CONCURRENT_ENVS: &str = "MAX_CONCURRENT_ENVS";
/// Idle seconds before a session (and its WebSocket) is closed (default
/// [`crate::env::DEFAULT_SESSION_IDLE_TIMEOUT_S`]).
/// See: <https://github.com/huggingface/OpenEnv/pull/1000>
pub const SESSION_IDLE_TIMEOUT_S: &str = "SESSION_IDLE_TIMEOUT_S";
/// Log filter in `tracing_subscriber::EnvFilter` syntax (default `info`).
pub const RUST_LOG: &str = "RUST_LOG";
/// Log format, `text` or `json` (default `text`).
pub const SECAUDIT_LOG_FORMAT: &str = "SECAUDIT_LOG_FORMAT";
/// The Python venv (pytest, git-filter-repo) mounted read-only in the
/// sandbox (default `./.venv`).
pub const SECAUDIT_VENV: &str = "SECAUDIT_VENV";
/// `false` starts every command's sandbox and every health run cold
/// instead of prewarming each session's next sandbox and staging health
/// runs (default `true`).
pub const SECAUDIT_PREWARM: &str = "SECAUDIT_PREWARM";
/// `false` grades health in staged runs (an interpreter each) instead of
/// runners that fork each run (default `true`; only with prewarming).
pub const SECAUDIT_HEALTH_RUNNERS: &str = "SECAUDIT_HEALTH_RUNNERS";
/// The containment tier: `auto` (default: bwrap where it can create its
/// namespaces, else landlock), `bwrap` or `landlock`.
pub const SECAUDIT_SANDBOX: &str = crate::sandbox::TIER_ENV;
/// `true` serves episodes even when no containment tier works, running
/// agent commands uncontained (default `false`: such a server refuses
/// every reset).
pub const SECAUDIT_ALLOW_UNCONTAINED: &str = "SECAUDIT_ALLOW_UNCONTAINED";
/// Most HTTP connections served at once (default
/// [`super::listen::DEFAULT_MAX_CONNECTIONS`], lowered to fit the
/// descriptor limit). At the cap, the oldest connection that has not sent a
/// request gives way to a newcomer; when none has, the newcomer gets 503.
pub const SECAUDIT_MAX_CONNECTIONS: &str = "SECAUDIT_MAX_CONNECTIONS";
/// Seconds a connection may take to send a complete request head, first or
/// next keep-alive request, before it is closed (default
/// [`super::listen::DEFAULT_HEADER_READ_TIMEOUT_S`]).
pub const SECAUDIT_HEADER_TIMEOUT_S: &str = "SECAUDIT_HEADER_TIMEOUT_S";
/// Seconds a closed session's trajectory (its redacted recording) stays
/// readable at `GET /trajectory` (default
/// [`crate::env::trajectory::DEFAULT_RETENTION_S`]; 0 keeps none).
pub const SECAUDIT_TRAJECTORY_RETENTION_S: &str = "SECAUDIT_TRAJECTORY_RETENTION_S";
