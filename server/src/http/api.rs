//! The seed's stateful HTTP API: `/reset`, `/step`, `/state`, `/tasks`,
//! `/close`, `/session/{id}` and the `/web` page.

use super::error::{ApiError, AppJson};
use super::request::{self, CloseBody, StepBody};
use super::{AppState, tools};
use crate::models::{Observation, ResetRequest};
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

/// `POST /reset`: body optional (none, `{}`, or any of the
/// [`ResetRequest`] fields). Starts a new session every time.
pub(crate) async fn reset(
    State(st): State<AppState>,
    AppJson(req): AppJson<ResetRequest>,
) -> Result<Json<Value>, ApiError> {
    let obs = st.env.reset(request::reset(req)?).await?;
    Ok(Json(envelope(&obs)))
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
    AppJson(body): AppJson<StepBody>,
) -> Result<Json<Value>, ApiError> {
    let kind = request::step_kind(body.action)?;
    // Every HTTP step names its session, as the published StepRequest
    // says (`list_tools` needs none only over `/ws`).
    let session = request::session_of(body.session_id, q.session_id)?;
    let out = tools::run_step(&st, Some(&session), kind).await?;
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
    AppJson(body): AppJson<CloseBody>,
) -> Result<Json<Value>, ApiError> {
    let session = body.session_id.ok_or(ApiError::MissingSession)?;
    close_session(&st, &session.0).await
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
