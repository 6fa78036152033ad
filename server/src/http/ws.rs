//! `WS /ws`: OpenEnv's session protocol, one session per connection.
//!
//! Strict request/response over text frames, one reply per request in
//! order. A reader task owns the receiving half so that pings are answered
//! (tungstenite queues the pong on read and flushes it on the next read)
//! even while a long step runs; the 0.10.0 client drops the socket if a
//! ping goes unanswered for 20 s.
//!
//! The session is closed on `{"type":"close"}`, when the socket drops, and
//! after [`super::HttpConfig::ws_idle_timeout`] without a request, so
//! half-open sockets cannot hold slots forever.
//! See: <https://github.com/huggingface/OpenEnv/pull/1000>
//!
//! `/ws?session_id=ID` attaches to an existing session instead, as
//! OpenEnv's server does for its `MCPToolClient`: that client creates a
//! session with the HTTP `openenv/session/create`, connects the socket
//! with the id in the query, then drives `reset`/`step`/`state` over the
//! socket and `tools/call` over HTTP `/mcp`, naming the same id. So an
//! attached socket:
//! - refers to that session (unknown id: a `SESSION_ERROR` frame, then
//!   close; a session already attached to another socket: the same);
//! - does not own it: neither `close` nor the socket dropping ends it
//!   (the client ends it with `openenv/session/close` after detaching);
//! - `reset` starts the new episode under the same id
//!   (`Environment::reset_as`), where a plain socket gets a new session,
//!   so the HTTP requests naming the id still reach the episode;
//! - adds no session, so only the socket slot counts against capacity.

use super::error::{ApiError, panic_text};
use super::request::{self, StepKind};
use super::{AppState, MAX_WS_MESSAGE_BYTES, mcp, tools};
use crate::env::EnvError;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::response::Response;
use futures_util::{FutureExt, SinkExt, StreamExt};
use serde_json::{Map, Value, json};
use tokio::sync::{OwnedSemaphorePermit, mpsc};

/// Close code for a normal closure (RFC 6455).
const CLOSE_NORMAL: u16 = 1000;

/// Close code for a message too big to process (RFC 6455).
const CLOSE_TOO_BIG: u16 = 1009;

/// Requests read ahead of the one being answered. Small: the protocol is
/// request/response, and a full queue only pauses reading.
const READ_AHEAD: usize = 4;

/// `GET /ws`: the upgrade. Capacity is checked after the upgrade, as in
/// OpenEnv, so the client receives a `CAPACITY_REACHED` frame rather than an
/// HTTP error it would not surface.
pub(crate) async fn ws_upgrade(
    State(st): State<AppState>,
    q: Result<Query<WsQuery>, axum::extract::rejection::QueryRejection>,
    ws: WebSocketUpgrade,
) -> Response {
    // An unparsable query attaches to nothing; an empty id is none.
    let attach = q
        .ok()
        .and_then(|Query(q)| q.session_id)
        .filter(|s| !s.is_empty());
    ws.max_message_size(MAX_WS_MESSAGE_BYTES)
        .max_frame_size(MAX_WS_MESSAGE_BYTES)
        .on_upgrade(move |socket| run(st, socket, attach))
}

/// `?session_id=`: the session to attach to.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct WsQuery {
    session_id: Option<String>,
}

/// A session attached to one socket, released from
/// [`AppState::ws_attached`] on drop.
struct Attachment {
    st: AppState,
    id: String,
}

impl Attachment {
    /// Claims `id` for this socket: it must be an open session with no
    /// other socket attached.
    fn claim(st: &AppState, id: &str) -> Result<Self, String> {
        let shown: String = id.chars().take(80).collect();
        match st.env.state(id) {
            Ok(_) | Err(EnvError::Busy) => {}
            Err(EnvError::UnknownSession(_)) => return Err(format!("Unknown session_id: {shown}")),
            Err(e) => return Err(ApiError::from(e).message()),
        }
        let mut set = st.ws_attached.lock().expect("attachment lock poisoned");
        if !set.insert(id.to_owned()) {
            return Err(format!("Session {shown} already has an attached WebSocket"));
        }
        Ok(Self {
            st: st.clone(),
            id: id.to_owned(),
        })
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        if let Ok(mut set) = self.st.ws_attached.lock() {
            set.remove(&self.id);
        }
    }
}

fn error_frame(code: &str, message: impl Into<String>) -> Value {
    json!({ "type": "error", "data": { "message": message.into(), "code": code } })
}

/// Our error as a WebSocket error frame with OpenEnv's codes.
fn api_error_frame(e: &ApiError) -> Value {
    let code = match e {
        ApiError::Validation(_)
        | ApiError::ActionTooLong { .. }
        | ApiError::UnknownTask(_)
        | ApiError::InvalidJson(_)
        | ApiError::BadRequest(_) => "VALIDATION_ERROR",
        ApiError::UnknownSession(_) | ApiError::MissingSession => "SESSION_ERROR",
        ApiError::CapacityReached { .. } => "CAPACITY_REACHED",
        _ => "EXECUTION_ERROR",
    };
    let mut f = error_frame(code, e.message());
    f["data"]["error_code"] = json!(e.code());
    if let ApiError::CapacityReached { active, max } = e {
        f["data"]["active_sessions"] = json!(active);
        f["data"]["max_sessions"] = json!(max);
    }
    f
}

fn env_error_frame(e: EnvError) -> Value {
    api_error_frame(&ApiError::from(e))
}

/// What the reader task hands to the request loop.
enum Incoming {
    Text(String),
    Binary,
    /// A message over [`MAX_WS_MESSAGE_BYTES`]: the library stops reading,
    /// the client is told why with close code 1009.
    TooBig,
}

async fn send_json(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    v: &Value,
) -> bool {
    sink.send(Message::Text(v.to_string().into())).await.is_ok()
}

async fn send_close(sink: &mut futures_util::stream::SplitSink<WebSocket, Message>, reason: &str) {
    send_close_code(sink, CLOSE_NORMAL, reason).await;
}

async fn send_close_code(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    code: u16,
    reason: &str,
) {
    let frame = CloseFrame {
        code,
        reason: reason.into(),
    };
    let _ = sink.send(Message::Close(Some(frame))).await;
    let _ = sink.close().await;
}

async fn run(st: AppState, socket: WebSocket, attach: Option<String>) {
    let (mut sink, mut stream) = socket.split();
    let max = st.config.max_sessions;
    let active = st.env.active_sessions();
    let permit: Option<OwnedSemaphorePermit> = st.ws_slots.clone().try_acquire_owned().ok();
    // Attaching adds no session: only the socket slot is needed.
    if permit.is_none() || (active >= max && attach.is_none()) {
        // Out of socket slots counts as full even before the sockets reset.
        let active = if permit.is_none() {
            active.max(max)
        } else {
            active
        };
        let mut f = error_frame(
            "CAPACITY_REACHED",
            format!("Server at capacity: {active}/{max} sessions active. Retry later."),
        );
        f["data"]["active_sessions"] = json!(active);
        f["data"]["max_sessions"] = json!(max);
        let _ = send_json(&mut sink, &f).await;
        send_close(&mut sink, "capacity reached").await;
        return;
    }

    let attached = match attach.as_deref().map(|id| Attachment::claim(&st, id)) {
        None => None,
        Some(Ok(a)) => Some(a),
        Some(Err(message)) => {
            let _ = send_json(&mut sink, &error_frame("SESSION_ERROR", message)).await;
            send_close(&mut sink, "cannot attach to the session").await;
            return;
        }
    };
    let attached_id = attached.as_ref().map(|a| a.id.clone());

    let (tx, mut rx) = mpsc::channel::<Incoming>(READ_AHEAD);
    let reader = tokio::spawn(async move {
        while let Some(msg) = stream.next().await {
            let item = match msg {
                Ok(Message::Text(t)) => Incoming::Text(t.as_str().to_owned()),
                Ok(Message::Binary(_)) => Incoming::Binary,
                // Pings are answered by tungstenite itself; pongs need nothing.
                Ok(Message::Ping(_) | Message::Pong(_)) => continue,
                Ok(Message::Close(_)) => break,
                Err(e) => {
                    let too_big = e
                        .into_inner()
                        .downcast_ref::<tungstenite::Error>()
                        .is_some_and(|t| matches!(t, tungstenite::Error::Capacity(_)));
                    if too_big {
                        let _ = tx.send(Incoming::TooBig).await;
                    }
                    break;
                }
            };
            if tx.send(item).await.is_err() {
                break;
            }
        }
    });

    let mut session: Option<String> = attached_id.clone();
    let idle = st.config.ws_idle_timeout;
    loop {
        let item = match tokio::time::timeout(idle, rx.recv()).await {
            Err(_) => {
                tracing::info!(session = ?session, "websocket idle timeout; closing");
                send_close(&mut sink, "idle timeout").await;
                break;
            }
            Ok(None) => break,
            Ok(Some(item)) => item,
        };
        let text = match item {
            Incoming::Binary => {
                let f = error_frame(
                    "INVALID_JSON",
                    "binary frames are not supported; send JSON text frames",
                );
                if !send_json(&mut sink, &f).await {
                    break;
                }
                continue;
            }
            Incoming::TooBig => {
                tracing::info!(session = ?session, "websocket message over the size limit; closing");
                let reason = format!("message over the {MAX_WS_MESSAGE_BYTES}-byte limit");
                send_close_code(&mut sink, CLOSE_TOO_BIG, &reason).await;
                break;
            }
            Incoming::Text(t) => t,
        };
        // A panic in a handler costs this request an error frame, not the
        // connection: were the task to unwind, the session would never be
        // closed and its slot would leak.
        let handled = std::panic::AssertUnwindSafe(handle_message(
            &st,
            &mut session,
            attached_id.as_deref(),
            &text,
        ))
        .catch_unwind()
        .await;
        let reply = handled.unwrap_or_else(|payload| {
            tracing::error!(session = ?session, panic = %panic_text(payload.as_ref()), "websocket handler panicked");
            Reply::Frame(error_frame(
                "EXECUTION_ERROR",
                "the request handler panicked; the request was not completed",
            ))
        });
        match reply {
            Reply::Frame(v) => {
                if !send_json(&mut sink, &v).await {
                    break;
                }
            }
            Reply::Close => {
                send_close(&mut sink, "closed by client").await;
                break;
            }
        }
    }
    reader.abort();
    // The attached session is the HTTP client's to close.
    if let Some(sid) = session
        .take()
        .filter(|s| Some(s.as_str()) != attached_id.as_deref())
        && let Err(e) = st.env.close(&sid).await
    {
        tracing::debug!(session = %sid, error = %e, "closing websocket session");
    }
    drop(attached);
    drop(permit);
}

enum Reply {
    Frame(Value),
    Close,
}

/// One request frame to one reply. `attached` is the session this socket
/// attached to at connect, which it does not own.
async fn handle_message(
    st: &AppState,
    session: &mut Option<String>,
    attached: Option<&str>,
    text: &str,
) -> Reply {
    let msg: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Reply::Frame(error_frame("INVALID_JSON", format!("Invalid JSON: {e}"))),
    };
    let Value::Object(msg) = msg else {
        return Reply::Frame(error_frame("INVALID_JSON", "message must be a JSON object"));
    };
    let Some(kind) = msg.get("type").and_then(Value::as_str) else {
        return Reply::Frame(error_frame(
            "VALIDATION_ERROR",
            "message needs a string \"type\"",
        ));
    };
    let data = msg.get("data");
    let frame = match kind {
        "reset" => ws_reset(st, session, attached, data).await,
        "step" => ws_step(st, session, data).await,
        "state" => {
            if msg.keys().any(|k| k != "type" && k != "data")
                || data.is_some_and(|d| !d.is_null() && d.as_object().is_none_or(|o| !o.is_empty()))
            {
                return Reply::Frame(error_frame("VALIDATION_ERROR", "state takes no data"));
            }
            match session.as_deref() {
                None => error_frame("SESSION_ERROR", "no active session; send reset first"),
                Some(sid) => match st.env.state(sid) {
                    Ok(s) => json!({ "type": "state", "data": s }),
                    Err(e) => env_error_frame(e),
                },
            }
        }
        "close" => {
            if let Some(sid) = session.take().filter(|s| Some(s.as_str()) != attached) {
                let _ = st.env.close(&sid).await;
            }
            return Reply::Close;
        }
        "mcp" => match data {
            Some(d @ Value::Object(_)) => {
                json!({ "type": "mcp", "data": mcp::handle(st, Some(mcp::Conn { slot: session, attached }), d.clone()).await })
            }
            _ => error_frame(
                "VALIDATION_ERROR",
                "mcp needs data: a JSON-RPC request object",
            ),
        },
        other => {
            let shown: String = other.chars().take(100).collect();
            error_frame("UNKNOWN_TYPE", format!("Unknown message type: {shown}"))
        }
    };
    Reply::Frame(frame)
}

fn observation_frame(obs: &crate::models::Observation) -> Value {
    json!({
        "type": "observation",
        "data": { "observation": obs, "reward": obs.reward, "done": obs.done },
    })
}

async fn ws_reset(
    st: &AppState,
    session: &mut Option<String>,
    attached: Option<&str>,
    data: Option<&Value>,
) -> Value {
    let data = match data {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(d)) => d.clone(),
        Some(_) => return error_frame("VALIDATION_ERROR", "reset data must be an object"),
    };
    let req = match request::reset_of(data, "data") {
        Ok(r) => r,
        Err(m) => return error_frame("VALIDATION_ERROR", m),
    };
    // The attached session keeps its id, which HTTP requests name.
    if let Some(sid) = attached.filter(|a| session.as_deref() == Some(*a)) {
        return match st.env.reset_as(sid, req).await {
            Ok(obs) => observation_frame(&obs),
            Err(e) => env_error_frame(e),
        };
    }
    // One session per connection: a new reset ends the previous episode.
    if let Some(old) = session.take() {
        let _ = st.env.close(&old).await;
    }
    match st.env.reset(req).await {
        Ok(obs) => {
            *session = Some(obs.session_id.clone());
            observation_frame(&obs)
        }
        Err(e) => env_error_frame(e),
    }
}

async fn ws_step(st: &AppState, session: &mut Option<String>, data: Option<&Value>) -> Value {
    let Some(data) = data.filter(|d| !d.is_null()) else {
        return error_frame("VALIDATION_ERROR", "step needs data: {\"command\": string}");
    };
    // OpenEnv sends the action fields unwrapped; the wrapped form is
    // accepted too.
    let action = match data
        .get("action")
        .filter(|_| data.get("command").is_none() && data.get("type").is_none())
    {
        Some(wrapped) => wrapped,
        None => data,
    };
    let kind = match request::step_kind_of(action.clone()) {
        Ok(k) => k,
        Err(e) => return api_error_frame(&e),
    };
    if session.is_none() && !matches!(kind, StepKind::ListTools) {
        return error_frame("SESSION_ERROR", "no active session; send reset first");
    }
    match tools::run_step(st, session.as_deref(), kind).await {
        Ok(out) => json!({
            "type": "observation",
            "data": { "observation": out.observation, "reward": out.reward, "done": out.done },
        }),
        Err(e) => api_error_frame(&e),
    }
}
