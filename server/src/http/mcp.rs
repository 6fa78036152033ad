//! MCP over JSON-RPC 2.0, on `POST /mcp` and inside WebSocket `mcp`
//! messages.
//!
//! The HTTP route always answers 200, as OpenEnv's does: `{}` is -32600,
//! unparsable JSON -32700, an unknown method -32601, bad tool arguments
//! -32602. A tool whose environment call fails returns a normal result with
//! `isError: true` (MCP's convention for tool failures), carrying our JSON
//! error in `structuredContent`.
//!
//! Sessions: over HTTP a tool names its session with
//! `arguments.session_id` or `params.session_id` (OpenEnv's
//! `MCPToolClient` puts it there); `reset` and `openenv/session/create`
//! create one and return it.
//! Over a WebSocket the connection's session is the default, and `reset`
//! replaces it.

use super::api::envelope;
use super::error::{ApiError, parse_json, read_body};
use super::request::{self, SessionId};
use super::{AppState, tools};
use crate::models::{Action, ResetRequest};
use axum::Json;
use axum::extract::{Request, State};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// JSON-RPC: the body is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a valid request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: bad params (unknown tool, missing argument).
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: a server fault.
pub(crate) const INTERNAL_ERROR: i64 = -32603;

/// MCP protocol revision we implement when the client names none.
const PROTOCOL_VERSION: &str = "2025-06-18";

fn rpc_error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

fn rpc_result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// `POST /mcp`. Reads the body itself so that even a bad body gets a
/// JSON-RPC reply with status 200.
pub(crate) async fn mcp_post(State(st): State<AppState>, req: Request) -> Json<Value> {
    let bytes = match read_body(req, &()).await {
        Ok(b) => b,
        Err(e) => return Json(rpc_error(Value::Null, INVALID_REQUEST, e.message())),
    };
    let value: Value = match parse_json(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return Json(rpc_error(
                Value::Null,
                PARSE_ERROR,
                format!("Parse error: {}", e.message()),
            ));
        }
    };
    Json(handle(&st, None, value).await)
}

/// A WebSocket connection's session, as an MCP request over it sees it.
pub(crate) struct Conn<'a> {
    /// The connection's session slot.
    pub slot: &'a mut Option<String>,
    /// The session the socket attached to at connect, which it does not
    /// own: a `reset` resets it in place and never closes it.
    pub attached: Option<&'a str>,
}

/// One JSON-RPC request to one response. `conn` is the WebSocket
/// connection's session, `None` over HTTP.
pub(crate) async fn handle(st: &AppState, conn: Option<Conn<'_>>, req: Value) -> Value {
    let Value::Object(req) = req else {
        return rpc_error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid request: expected a JSON object (batches are not supported)",
        );
    };
    let id = match req.get("id") {
        None => Value::Null,
        Some(v @ (Value::String(_) | Value::Number(_) | Value::Null)) => v.clone(),
        Some(_) => {
            return rpc_error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid request: id must be a string, number or null",
            );
        }
    };
    if req.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return rpc_error(
            id,
            INVALID_REQUEST,
            "Invalid request: jsonrpc must be \"2.0\"",
        );
    }
    let Some(method) = req.get("method").and_then(Value::as_str) else {
        return rpc_error(
            id,
            INVALID_REQUEST,
            "Invalid request: method must be a string",
        );
    };
    let params = match req.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return rpc_error(id, INVALID_PARAMS, "params must be an object"),
    };
    match method {
        "initialize" => {
            let version = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(PROTOCOL_VERSION);
            rpc_result(
                id,
                json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": super::openenv::NAME, "version": env!("CARGO_PKG_VERSION") },
                    "instructions": super::openenv::DESCRIPTION,
                }),
            )
        }
        "ping" => rpc_result(id, json!({})),
        m if m.starts_with("notifications/") => rpc_result(id, json!({})),
        "tools/list" => rpc_result(id, json!({ "tools": tool_list() })),
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return rpc_error(
                    id,
                    INVALID_PARAMS,
                    "tools/call needs params.name (a string)",
                );
            };
            let args = match params.get("arguments") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(m)) => m.clone(),
                Some(_) => {
                    return rpc_error(id, INVALID_PARAMS, "params.arguments must be an object");
                }
            };
            match call_tool(st, conn, name, &args, params.get("session_id")).await {
                Err(ToolError::Params(m)) => rpc_error(id, INVALID_PARAMS, m),
                Err(ToolError::Api(e)) => rpc_result(
                    id,
                    json!({
                        "content": [{ "type": "text", "text": e.message() }],
                        "structuredContent": e.body(),
                        "isError": true,
                    }),
                ),
                Ok(v) => rpc_result(
                    id,
                    json!({
                        "content": [{ "type": "text", "text": v.to_string() }],
                        "structuredContent": v,
                        "isError": false,
                    }),
                ),
            }
        }
        "openenv/session/create" => match reset_request(&params) {
            Err(m) => rpc_error(id, INVALID_PARAMS, m),
            Ok(r) => match st.env.reset(r).await {
                Ok(obs) => rpc_result(
                    id,
                    json!({
                        "session_id": obs.session_id,
                        "episode_id": obs.episode_id,
                        "observation": obs,
                    }),
                ),
                Err(e) => env_rpc_error(id, e.into()),
            },
        },
        "openenv/session/close" => {
            let Some(sid) = params.get("session_id").and_then(Value::as_str) else {
                return rpc_error(
                    id,
                    INVALID_PARAMS,
                    "openenv/session/close needs params.session_id",
                );
            };
            match st.env.close(sid).await {
                Ok(()) => {
                    if let Some(c) = conn
                        && c.slot.as_deref() == Some(sid)
                    {
                        *c.slot = None;
                    }
                    rpc_result(id, json!({ "session_id": sid, "closed": true }))
                }
                Err(e) => env_rpc_error(id, e.into()),
            }
        }
        other => {
            let shown: String = other.chars().take(100).collect();
            rpc_error(id, METHOD_NOT_FOUND, format!("Method not found: {shown}"))
        }
    }
}

/// An environment error outside a tool call: JSON-RPC error with our error
/// object as `data`.
fn env_rpc_error(id: Value, e: ApiError) -> Value {
    let code = if e.status().is_server_error() {
        INTERNAL_ERROR
    } else {
        INVALID_PARAMS
    };
    let mut v = rpc_error(id, code, e.message());
    v["error"]["data"] = e.body()["error"].clone();
    v
}

enum ToolError {
    /// Bad arguments: JSON-RPC -32602.
    Params(String),
    /// The environment refused: `isError: true`.
    Api(ApiError),
}

impl From<ApiError> for ToolError {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}

fn reset_request(args: &Map<String, Value>) -> Result<ResetRequest, String> {
    let mut a = args.clone();
    a.remove("session_id");
    request::reset_of(a, "arguments")
}

async fn call_tool(
    st: &AppState,
    conn: Option<Conn<'_>>,
    name: &str,
    args: &Map<String, Value>,
    params_session: Option<&Value>,
) -> Result<Value, ToolError> {
    let session_arg = |v: Option<&Value>| match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => SessionId::deserialize(v)
            .map(|s| Some(s.0))
            .map_err(|e| ToolError::Params(e.to_string())),
    };
    // The session may be named in the arguments or, as OpenEnv's
    // MCPToolClient does, next to them in params.
    let explicit = match session_arg(args.get("session_id"))? {
        Some(s) => Some(s),
        None => session_arg(params_session)?,
    };
    if name == "reset" {
        let req = reset_request(args).map_err(ToolError::Params)?;
        if let Some(Conn { slot, attached }) = conn {
            // A socket attached to a session resets it in place, as its
            // `reset` message does: the session is not the socket's to end.
            if let Some(sid) = attached.filter(|a| slot.as_deref() == Some(*a)) {
                let obs = st.env.reset_as(sid, req).await.map_err(ApiError::from)?;
                return Ok(envelope(&obs));
            }
            // The connection owns one session: end the old one first so a
            // socket cannot accumulate sessions.
            if let Some(old) = slot.take() {
                let _ = st.env.close(&old).await;
            }
            let obs = st.env.reset(req).await.map_err(ApiError::from)?;
            *slot = Some(obs.session_id.clone());
            return Ok(envelope(&obs));
        }
        let obs = st.env.reset(req).await.map_err(ApiError::from)?;
        return Ok(envelope(&obs));
    }
    let command = match name {
        "step" => {
            if let Some(k) = args.keys().find(|k| *k != "command" && *k != "session_id") {
                let shown: String = k.chars().take(100).collect();
                return Err(ToolError::Params(format!(
                    "step takes no argument {shown:?}"
                )));
            }
            match args.get("command") {
                Some(Value::String(c)) => c.clone(),
                _ => {
                    return Err(ToolError::Params(
                        "argument command (a string) is required".into(),
                    ));
                }
            }
        }
        "state" => String::new(),
        other => tools::find(other)
            .and_then(|t| t.command(args, &["session_id"]))
            .map_err(|e| ToolError::Params(e.message().to_string()))?,
    };
    let session = explicit
        .or_else(|| conn.and_then(|c| c.slot.clone()))
        .ok_or(ApiError::MissingSession)?;
    if name == "state" {
        let state = st.env.state(&session).map_err(ApiError::from)?;
        return serde_json::to_value(state).map_err(|e| ApiError::Internal(e.to_string()).into());
    }
    request::command(&command)?;
    let obs = st
        .env
        .step(&session, Action { command })
        .await
        .map_err(ApiError::from)?;
    Ok(envelope(&obs))
}

fn session_prop() -> Value {
    json!({ "type": "string", "description": "Session from reset (optional over /ws: the connection's session)" })
}

fn session_tool(
    name: &str,
    description: &str,
    props: Map<String, Value>,
    required: &[&str],
) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": { "type": "object", "properties": props, "required": required },
    })
}

fn props(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

/// The tools of `tools/list`, each with its JSON Schema: the session tools
/// (`reset`, `step`, `state`), then the action tools of [`tools`].
pub(crate) fn tool_list() -> Vec<Value> {
    let mut list = vec![
        session_tool(
            "reset",
            "Start an episode; returns the observation and its session_id.",
            props(&[
                (
                    "task_id",
                    json!({ "type": ["integer", "string"], "description": "1-13 or a slug such as task_01" }),
                ),
                (
                    "seed",
                    json!({ "type": "integer", "minimum": 0, "maximum": u64::MAX, "description": "Seed of a procedural variant" }),
                ),
                (
                    "episode_id",
                    json!({ "type": "string", "minLength": 1, "maxLength": crate::models::MAX_EPISODE_ID_CHARS }),
                ),
                (
                    "reward_mode",
                    json!({ "type": "string", "enum": ["score", "delta"] }),
                ),
            ]),
            &[],
        ),
        session_tool(
            "step",
            "Run one action: a structured action or a bash command in the workspace.",
            props(&[
                (
                    "command",
                    json!({ "type": "string", "maxLength": super::MAX_ACTION_BYTES }),
                ),
                ("session_id", session_prop()),
            ]),
            &["command"],
        ),
        session_tool(
            "state",
            "The session object.",
            props(&[("session_id", session_prop())]),
            &[],
        ),
    ];
    list.extend(tools::action_tools().iter().map(|t| {
        json!({
            "name": t.name(),
            "description": t.description(),
            "inputSchema": t.input_schema(&[("session_id", session_prop())]),
        })
    }));
    list
}
