//! The seed's stateful HTTP API: `/reset`, `/step`, `/state`, `/tasks`,
//! `/close`, `/session/{id}` and the `/web` page.

use super::error::{ApiError, AppJson};
use super::{AppState, MAX_ACTION_BYTES};
use crate::models::{Action, Observation, ResetRequest};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::Uri;
use axum::response::{Html, Redirect};
use serde::Deserialize;
use serde_json::{Value, json};

/// The `/reset` and `/step` reply: the observation plus the OpenEnv
/// envelope fields (`reward`, `done`) and the keys a client needs next.
pub(crate) fn envelope(obs: &Observation) -> Value {
    json!({
        "observation": obs,
        "reward": obs.reward,
        "done": obs.done,
        "session_id": obs.session_id,
        "episode_id": obs.episode_id,
    })
}

/// `GET /`: the debug page, where a Space opens by default.
pub(crate) async fn root() -> Redirect {
    Redirect::temporary("/web")
}

/// `GET /web`: the one-page debug UI.
pub(crate) async fn web() -> Html<&'static str> {
    Html(include_str!("../../../web/index.html"))
}

/// Any unknown route.
pub(crate) async fn not_found(uri: Uri) -> ApiError {
    let path: String = uri.path().chars().take(200).collect();
    ApiError::NotFound(format!("no route for {path}; see GET /openapi.json"))
}

/// Checks the episode id bound of [`ResetRequest`] (OpenEnv: at most 255).
fn check_reset(req: &ResetRequest) -> Result<(), ApiError> {
    if let Some(id) = &req.episode_id
        && (id.is_empty() || id.chars().count() > crate::models::MAX_EPISODE_ID_CHARS)
    {
        return Err(ApiError::Validation(format!(
            "episode_id must be 1 to {} characters",
            crate::models::MAX_EPISODE_ID_CHARS
        )));
    }
    Ok(())
}

/// `POST /reset`: body optional (none, `{}`, or any of the
/// [`ResetRequest`] fields). Starts a new session every time.
pub(crate) async fn reset(
    State(st): State<AppState>,
    AppJson(req): AppJson<ResetRequest>,
) -> Result<Json<Value>, ApiError> {
    check_reset(&req)?;
    let obs = st.env.reset(req).await?;
    Ok(Json(envelope(&obs)))
}

/// Pulls the command out of a step's `action`: a bare string, or
/// `{"command": str}` (OpenEnv's wrapped form). Enforces
/// [`MAX_ACTION_BYTES`].
pub(crate) fn action_from_value(action: Option<&Value>) -> Result<Action, ApiError> {
    let command = match action {
        None | Some(Value::Null) => {
            return Err(ApiError::Validation(
                "action is required: a command string, or {\"command\": string}".into(),
            ));
        }
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => match o.get("command") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(ApiError::Validation(
                    "action.command must be a string".into(),
                ));
            }
            None => return Err(ApiError::Validation("action.command is required".into())),
        },
        Some(_) => {
            return Err(ApiError::Validation(
                "action must be a command string or {\"command\": string}".into(),
            ));
        }
    };
    check_command(&command)?;
    Ok(Action { command })
}

/// Bounds shared by every route that takes a command.
pub(crate) fn check_command(command: &str) -> Result<(), ApiError> {
    if command.len() > MAX_ACTION_BYTES {
        return Err(ApiError::ActionTooLong {
            len: command.len(),
            max: MAX_ACTION_BYTES,
        });
    }
    if command.trim().is_empty() {
        return Err(ApiError::Validation("action command is empty".into()));
    }
    if command.contains('\0') {
        return Err(ApiError::Validation(
            "action command contains a NUL byte".into(),
        ));
    }
    Ok(())
}

/// The session id of a body, which must be a non-empty string if present.
fn session_from_body(body: &serde_json::Map<String, Value>) -> Result<Option<String>, ApiError> {
    match body.get("session_id") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::Validation(
            "session_id must be a non-empty string".into(),
        )),
    }
}

/// `?session_id=` on any route.
#[derive(Debug, Deserialize)]
pub(crate) struct SessionQuery {
    session_id: Option<String>,
}

/// `POST /step`: `{"session_id": str, "action": str | {"command": str} |
/// {"type": "list_tools"} | {"type": "call_tool", ...}, "timeout_s"?,
/// "request_id"?}`. The session may also come as
/// `?session_id=`. `timeout_s` and `request_id` are accepted for OpenEnv
/// compatibility and ignored: the environment owns its time limits.
pub(crate) async fn step(
    State(st): State<AppState>,
    Query(q): Query<SessionQuery>,
    AppJson(body): AppJson<Value>,
) -> Result<Json<Value>, ApiError> {
    let Value::Object(body) = body else {
        return Err(ApiError::Validation(
            "step body must be a JSON object".into(),
        ));
    };
    let kind = super::tools::parse_step(body.get("action"))?;
    // Every HTTP step names its session, as the published StepRequest
    // says (`list_tools` needs none only over `/ws`).
    let session = session_from_body(&body)?
        .or(q.session_id.filter(|s| !s.is_empty()))
        .ok_or(ApiError::MissingSession)?;
    let out = super::tools::run_step(&st, Some(&session), kind).await?;
    let mut reply = json!({
        "observation": out.observation,
        "reward": out.reward,
        "done": out.done,
    });
    if let Some((sid, eid)) = out.ids {
        reply["session_id"] = json!(sid);
        reply["episode_id"] = json!(eid);
    }
    Ok(Json(reply))
}

/// `GET /state` query: `session_id`, and `reveal=true` to opt in to raw
/// values.
#[derive(Debug, Deserialize)]
pub(crate) struct StateQuery {
    session_id: Option<String>,
    #[serde(default)]
    reveal: bool,
}

/// `GET /state?session_id=...[&reveal=true]`: the session object. With
/// `reveal=true` it also carries `revealed`: `[{id, value}]`, the raw
/// values of the secrets currently visible (never of one still hidden),
/// for the debug page's per-row reveal. Opt-in so no client gets raw
/// values by accident; the reply is not logged or recorded.
pub(crate) async fn state(
    State(st): State<AppState>,
    q: Result<Query<StateQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let session = q
        .session_id
        .filter(|s| !s.is_empty())
        .ok_or(ApiError::MissingSession)?;
    let state = st.env.state(&session)?;
    let mut v = serde_json::to_value(&state).map_err(|e| ApiError::Internal(e.to_string()))?;
    if q.reveal {
        v["revealed"] = json!(st.env.revealed_values(&session)?);
    }
    Ok(Json(v))
}

/// `GET /tasks`: every task, without ground truth.
pub(crate) async fn tasks(State(st): State<AppState>) -> Json<Vec<crate::models::TaskInfo>> {
    Json(st.env.tasks())
}

/// `POST /close` with `{"session_id": str}`.
pub(crate) async fn close(
    State(st): State<AppState>,
    AppJson(body): AppJson<Value>,
) -> Result<Json<Value>, ApiError> {
    let Value::Object(body) = body else {
        return Err(ApiError::Validation(
            "close body must be a JSON object".into(),
        ));
    };
    let session = session_from_body(&body)?.ok_or(ApiError::MissingSession)?;
    close_session(&st, &session).await
}

/// `DELETE /session/{id}`.
pub(crate) async fn session_delete(
    State(st): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    close_session(&st, &id).await
}

async fn close_session(st: &AppState, session: &str) -> Result<Json<Value>, ApiError> {
    st.env.close(session).await?;
    Ok(Json(json!({ "closed": true, "session_id": session })))
}
