//! One error type for every route, and the JSON extractor that produces it.
//!
//! Every failure a client can cause ends as
//! `{"error": {"code": "<snake_case>", "message": "<text>"}}` with a fitting
//! status, never axum's plain-text rejections. Codes are stable strings a
//! client can match on; messages are for humans.

use super::BODY_READ_TIMEOUT;
use crate::env::EnvError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Why a request failed. [`IntoResponse`] maps each to a status and a JSON
/// body; `From<EnvError>` maps the environment's errors.
#[derive(Debug)]
pub enum ApiError {
    /// Malformed request that is not a JSON problem (400).
    BadRequest(String),
    /// The body is not JSON: syntax, bad UTF-8, nesting deeper than 128 (400).
    InvalidJson(String),
    /// The body is JSON of the wrong shape: missing or mistyped fields (422).
    Validation(String),
    /// The request needs a `session_id` and has none (400).
    MissingSession,
    /// No such route (404).
    NotFound(String),
    /// No such task (404).
    UnknownTask(String),
    /// No such session, or it expired (404).
    UnknownSession(String),
    /// A step after the episode ended (409).
    EpisodeDone,
    /// Another step on the same session is in flight (409).
    Busy,
    /// The body is over [`super::MAX_BODY_BYTES`] (413).
    PayloadTooLarge,
    /// The action is over [`super::MAX_ACTION_BYTES`] (413).
    ActionTooLong {
        /// Its length in bytes.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// A body without a JSON content type (415).
    UnsupportedMediaType,
    /// The body took longer than [`BODY_READ_TIMEOUT`] to arrive (408).
    Timeout,
    /// The session limit is reached (429).
    CapacityReached {
        /// Sessions active now.
        active: usize,
        /// The limit.
        max: usize,
    },
    /// Any other status produced below us (405 and the like).
    Http {
        /// The status to keep.
        status: StatusCode,
        /// What went wrong.
        message: String,
    },
    /// No containment tier works and the server was not started with
    /// `--allow-uncontained` (503): episodes are refused, fail closed.
    Uncontained(String),
    /// A bug or an environment failure (500). The message is safe to show.
    Internal(String),
}

impl ApiError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::InvalidJson(_) | Self::MissingSession => {
                StatusCode::BAD_REQUEST
            }
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::NotFound(_) | Self::UnknownTask(_) | Self::UnknownSession(_) => {
                StatusCode::NOT_FOUND
            }
            Self::EpisodeDone | Self::Busy => StatusCode::CONFLICT,
            Self::PayloadTooLarge | Self::ActionTooLong { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::CapacityReached { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Http { status, .. } => *status,
            Self::Uncontained(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable machine-readable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "bad_request",
            Self::InvalidJson(_) => "invalid_json",
            Self::Validation(_) => "validation_error",
            Self::MissingSession => "missing_session_id",
            Self::NotFound(_) => "not_found",
            Self::UnknownTask(_) => "unknown_task",
            Self::UnknownSession(_) => "unknown_session",
            Self::EpisodeDone => "episode_done",
            Self::Busy => "session_busy",
            Self::PayloadTooLarge => "payload_too_large",
            Self::ActionTooLong { .. } => "action_too_long",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Timeout => "request_timeout",
            Self::CapacityReached { .. } => "capacity_reached",
            Self::Http { status, .. } => match status.as_u16() {
                405 => "method_not_allowed",
                413 => "payload_too_large",
                _ if status.is_server_error() => "internal_error",
                _ => "bad_request",
            },
            Self::Uncontained(_) => "sandbox_unavailable",
            Self::Internal(_) => "internal_error",
        }
    }

    /// The human-readable message.
    pub fn message(&self) -> String {
        match self {
            Self::BadRequest(m)
            | Self::InvalidJson(m)
            | Self::Validation(m)
            | Self::NotFound(m)
            | Self::Http { message: m, .. } => m.clone(),
            Self::MissingSession => "session_id is required: pass the session_id returned by \
                                     POST /reset (in the JSON body, or ?session_id= for GET)"
                .into(),
            Self::UnknownTask(t) => format!("unknown task: {t}"),
            Self::UnknownSession(s) => format!(
                "unknown or expired session: {s} (a session ends at /close, {} s after its \
                 episode is done, or when idle past the server's timeout; call /reset for a new one)",
                crate::env::FINISHED_SESSION_GRACE_S
            ),
            Self::EpisodeDone => "episode is over (done); call reset to start a new one".into(),
            Self::Busy => "session is busy with another step".into(),
            Self::PayloadTooLarge => {
                format!(
                    "request body is over the {}-byte limit",
                    super::MAX_BODY_BYTES
                )
            }
            Self::ActionTooLong { len, max } => {
                format!("action is {len} bytes, over the {max}-byte limit")
            }
            Self::UnsupportedMediaType => {
                "expected a JSON body with Content-Type: application/json".into()
            }
            Self::Timeout => {
                format!(
                    "request body not received within {} s",
                    BODY_READ_TIMEOUT.as_secs()
                )
            }
            Self::CapacityReached { active, max } => {
                format!("server at capacity: {active}/{max} sessions active; retry later")
            }
            Self::Uncontained(m) => format!(
                "episodes are refused: no containment tier works on this host ({m}); \
                 start the server where bubblewrap or Landlock works, or pass \
                 --allow-uncontained to run agent commands uncontained"
            ),
            Self::Internal(m) => format!("internal error: {m}"),
        }
    }

    /// The JSON body: `{"error": {"code", "message", ...}}`.
    pub fn body(&self) -> Value {
        let mut err = json!({ "code": self.code(), "message": self.message() });
        if let Self::CapacityReached { active, max } = self {
            err["active_sessions"] = json!(active);
            err["max_sessions"] = json!(max);
        }
        json!({ "error": err })
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message(), self.code())
    }
}

impl std::error::Error for ApiError {}

impl From<EnvError> for ApiError {
    fn from(e: EnvError) -> Self {
        match e {
            EnvError::UnknownTask(t) => Self::UnknownTask(t),
            EnvError::UnknownSession(s) => Self::UnknownSession(s),
            EnvError::EpisodeDone => Self::EpisodeDone,
            EnvError::CapacityReached { active, max } => Self::CapacityReached { active, max },
            EnvError::InvalidAction(m) => Self::Validation(format!("invalid action: {m}")),
            EnvError::InvalidRequest(m) => Self::Validation(m),
            EnvError::ActionTooLong { len, max } => Self::ActionTooLong { len, max },
            EnvError::Busy => Self::Busy,
            EnvError::Uncontained(m) => Self::Uncontained(m),
            EnvError::Internal(m) => Self::Internal(m),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(code = self.code(), message = %self.message(), "request failed");
        } else {
            tracing::debug!(code = self.code(), message = %self.message(), "request rejected");
        }
        (status, axum::Json(self.body())).into_response()
    }
}

/// True when the headers declare a JSON body (`application/json`, or any
/// `+json` type), parameters such as `charset` allowed.
pub(crate) fn is_json_content_type(headers: &HeaderMap) -> bool {
    let Some(ct) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Reads the whole body within [`BODY_READ_TIMEOUT`]; the size bound comes
/// from the router's `DefaultBodyLimit`.
pub(crate) async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    match tokio::time::timeout(BODY_READ_TIMEOUT, Bytes::from_request(req, state)).await {
        Err(_) => Err(ApiError::Timeout),
        Ok(Err(rejection)) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            Err(ApiError::PayloadTooLarge)
        }
        Ok(Err(rejection)) => Err(ApiError::BadRequest(rejection.body_text())),
        Ok(Ok(bytes)) => Ok(bytes),
    }
}

/// Parses JSON bytes, sorting serde's errors into syntax (400) and shape
/// (422). serde_json's default recursion limit (128) turns deeply nested
/// input into a syntax error instead of a stack overflow.
pub(crate) fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => ApiError::Validation(e.to_string()),
        _ => ApiError::InvalidJson(format!("body is not valid JSON: {e}")),
    })
}

/// Like `axum::Json`, but every rejection is an [`ApiError`]: wrong content
/// type 415, over the size bound 413, slow body 408, bad JSON 400, wrong
/// shape (a top-level value other than an object included) 422. An empty body is parsed as `{}`, so a `T` whose fields are all
/// optional (the reset request) accepts no body at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct AppJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for AppJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json_ct = is_json_content_type(req.headers());
        let bytes = read_body(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return parse_json(b"{}").map(AppJson);
        }
        if !json_ct {
            return Err(ApiError::UnsupportedMediaType);
        }
        // Every body of this API is an object; serde would also fill a
        // struct from an array (`[null, null]` was a valid reset).
        let value: Value = parse_json(&bytes)?;
        if !value.is_object() {
            return Err(ApiError::Validation(
                "the request body must be a JSON object".into(),
            ));
        }
        T::deserialize(value)
            .map(AppJson)
            .map_err(|e| ApiError::Validation(e.to_string()))
    }
}

/// Middleware: rewrites any 4xx/5xx response that is not JSON (axum's 405,
/// tower-http's 413, WebSocket upgrade rejections, a 404 from a nested
/// service) into our JSON error, keeping status and headers such as
/// `Allow`.
pub(crate) async fn json_errors(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error())
        || is_json_content_type(res.headers())
    {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    // Small on purpose: these bodies are axum's one-line rejection texts.
    let text = axum::body::to_bytes(body, 4096)
        .await
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_string());
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_TYPE);
    let mut json_res = ApiError::Http {
        status,
        message: text,
    }
    .into_response();
    for (name, value) in parts.headers.iter() {
        json_res.headers_mut().entry(name).or_insert(value.clone());
    }
    json_res
}

/// The reply to a request whose handler panicked: a JSON 500 that says so.
/// The panic text goes to the log only (it may name paths or values that
/// are not the client's business); the client gets a stable code.
pub(crate) fn panic_response(payload: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let detail = panic_text(payload.as_ref());
    tracing::error!(panic = %detail, "request handler panicked");
    ApiError::Internal(
        "the request handler panicked; the request was not completed, the server keeps \
         serving (the session may need a /state check)"
            .into(),
    )
    .into_response()
}

/// The message of a panic payload, for the log.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
