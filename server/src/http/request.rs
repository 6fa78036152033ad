//! The one typed request path of `POST /step`, `POST /reset`, `POST /close`,
//! `WS /ws` and `POST /mcp`: each front deserializes into these types and
//! validates with these functions, so a command, an episode id or a
//! session id is bounded the same way (and with the same message) whatever
//! route it came through. The fronts differ only in how they report an
//! error (a status, an error frame, a JSON-RPC error).

use super::error::ApiError;
use crate::env::actions::{self, ParseError};
use crate::models::{Action, CallToolAction, ResetRequest, StepAction};
use serde::{Deserialize, Deserializer};

/// A session id as a request names it: a non-empty string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionId(pub String);

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if !s.is_empty() => Ok(Self(s)),
            _ => Err(serde::de::Error::custom(
                "session_id must be a non-empty string",
            )),
        }
    }
}

/// The body of `POST /step` as parsed (the published shape is
/// [`crate::models::StepRequest`]): the session is optional here because
/// it may come as `?session_id=`. `timeout_s` and `request_id` are
/// ignored, as any other extra key.
#[derive(Debug, Deserialize)]
pub(crate) struct StepBody {
    /// The session, when the body names it.
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// The action; absent or null is refused by [`step_kind`].
    #[serde(default)]
    pub action: Option<StepAction>,
}

/// The session a step names: its body's, else `?session_id=` (an empty
/// query value names none). When both name one, the body wins, as spec.md
/// says: the published schema lets the two differ, so refusing that would
/// refuse a schema-valid request (schemathesis' ST202, run in CI).
pub(crate) fn session_of(
    body: Option<SessionId>,
    query: Option<String>,
) -> Result<String, ApiError> {
    body.map(|s| s.0)
        .or(query.filter(|s| !s.is_empty()))
        .ok_or(ApiError::MissingSession)
}

/// The body of `POST /close` as parsed: a missing session is 400
/// `missing_session_id`, not a shape error.
#[derive(Debug, Deserialize)]
pub(crate) struct CloseBody {
    /// The session to end.
    #[serde(default)]
    pub session_id: Option<SessionId>,
}

/// What one validated step asks for.
pub(crate) enum StepKind {
    /// A command (structured action or bash), within [`command`]'s bounds.
    Command(Action),
    /// OpenEnv's `list_tools`.
    ListTools,
    /// OpenEnv's `call_tool` (its command is built and bounded when run).
    CallTool(CallToolAction),
}

/// A parsed action, validated: the step every front runs.
pub(crate) fn step_kind(action: Option<StepAction>) -> Result<StepKind, ApiError> {
    let action = action.ok_or_else(|| {
        ApiError::Validation(
            "action is required: a command string, or {\"command\": string}".into(),
        )
    })?;
    Ok(match action {
        StepAction::ListTools(_) => StepKind::ListTools,
        StepAction::CallTool(c) => StepKind::CallTool(c),
        StepAction::Command(command) | StepAction::Wrapped { command } => {
            self::command(&command)?;
            StepKind::Command(Action { command })
        }
    })
}

/// A step's action from a JSON value (a WebSocket `step` message's data).
pub(crate) fn step_kind_of(action: serde_json::Value) -> Result<StepKind, ApiError> {
    let action =
        StepAction::deserialize(action).map_err(|e| ApiError::Validation(e.to_string()))?;
    step_kind(Some(action))
}

/// The bounds of a command ([`actions::check`]) as the HTTP layer reports
/// them: over [`actions::MAX_ACTION_BYTES`] is 413, the rest 422.
pub(crate) fn command(command: &str) -> Result<(), ApiError> {
    actions::check(command).map_err(|e| match e {
        ParseError::TooLong(len) => ApiError::ActionTooLong {
            len,
            max: actions::MAX_ACTION_BYTES,
        },
        other => ApiError::Validation(other.to_string()),
    })
}

/// A reset request from a JSON object (`what` names it in a refusal:
/// "data" of a WebSocket message, "arguments" of an MCP call), validated
/// ([`ResetRequest::validate`]). The message of a refusal, for the front
/// to wrap its own way.
pub(crate) fn reset_of(
    body: serde_json::Map<String, serde_json::Value>,
    what: &str,
) -> Result<ResetRequest, String> {
    let req = ResetRequest::deserialize(serde_json::Value::Object(body))
        .map_err(|e| format!("invalid reset {what}: {e}"))?;
    req.validate()?;
    Ok(req)
}

/// A reset request the route's extractor already parsed, validated.
pub(crate) fn reset(req: ResetRequest) -> Result<ResetRequest, ApiError> {
    req.validate().map_err(ApiError::Validation)?;
    Ok(req)
}
