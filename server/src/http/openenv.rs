//! OpenEnv's discovery routes: `/health`, `/metadata`, `/schema`,
//! `/openapi.json`.

use super::AppState;
use crate::models::{AnyAction, Observation, SandboxInfo, State as EnvState};
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// `GET /health` reply.
///
/// `status` is `"healthy"` when the sandbox is available and `"degraded"`
/// when commands would run uncontained (the product asks to say so loudly).
/// `openenv validate --url` requires `"healthy"`, so a deployment without
/// bubblewrap fails validation on purpose: it is not the environment we
/// promise. The process is alive either way; a liveness probe should
/// check for a 200, not for the status string.
#[derive(Debug, Serialize)]
pub(crate) struct Health {
    status: &'static str,
    sandbox: SandboxInfo,
    active_sessions: usize,
    max_sessions: usize,
    version: &'static str,
}

/// `GET /health`.
pub(crate) async fn health(State(st): State<AppState>) -> Json<Health> {
    let sandbox = st.env.sandbox_info();
    Json(Health {
        // "unavailable": no tier contains commands and episodes are
        // refused (fail closed); "degraded": the operator allowed
        // uncontained runs.
        status: match (sandbox.available, st.env.serves_episodes()) {
            (true, _) => "healthy",
            (false, true) => "degraded",
            (false, false) => "unavailable",
        },
        sandbox,
        active_sessions: st.env.active_sessions(),
        max_sessions: st.config.max_sessions,
        version: env!("CARGO_PKG_VERSION"),
    })
}

/// Short description, shared by `/metadata` and MCP `initialize`.
pub(crate) const DESCRIPTION: &str = "SecretsAuditEnv: an agent remediates secret leaks \
    (hardcoded API keys, encoded tokens, credentials in git history) in git-backed Python \
    projects with bash and structured inspection actions; reward = security progress x code \
    health + efficiency bonus.";

/// Environment name, as in `openenv.yaml`.
pub(crate) const NAME: &str = "secrets_audit_env";

/// `GET /metadata`.
pub(crate) async fn metadata(State(st): State<AppState>) -> Json<Value> {
    Json(json!({
        "name": NAME,
        "description": DESCRIPTION,
        "readme_content": include_str!("../../../README.md"),
        "version": env!("CARGO_PKG_VERSION"),
        "author": "SecretsAuditEnv contributors",
        "documentation_url": "/web",
        // How agent commands are contained here (spec.md section 7).
        "sandbox": st.env.sandbox_info(),
    }))
}

/// The three schemas, generated once: `{"action", "observation", "state"}`.
/// The action is [`AnyAction`]: a command or OpenEnv's tool-calling
/// actions; the observation is that of a command step (the tool actions'
/// observations are in `/openapi.json`).
///
/// The observation schema gets an explicit `metadata` property: OpenEnv's
/// runtime check validates `observation` merged with `reward`, `done` and
/// `metadata` against it. `reward` and `done` are already fields of
/// [`Observation`]; schemars does not set `additionalProperties: false`, so
/// other keys pass too.
pub(crate) fn schemas() -> &'static Value {
    static SCHEMAS: OnceLock<Value> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut observation = schemars::schema_for!(Observation).to_value();
        if let Some(props) = observation
            .get_mut("properties")
            .and_then(Value::as_object_mut)
        {
            props.entry("metadata").or_insert(json!({
                "description": "Free-form metadata (OpenEnv envelope); optional.",
                "type": ["object", "null"]
            }));
        }
        json!({
            "action": schemars::schema_for!(AnyAction).to_value(),
            "observation": observation,
            "state": schemars::schema_for!(EnvState).to_value(),
        })
    })
}

/// `GET /schema`.
pub(crate) async fn schema() -> Json<Value> {
    Json(schemas().clone())
}

/// `GET /openapi.json`.
pub(crate) async fn openapi_json() -> Json<Value> {
    static DOC: OnceLock<Value> = OnceLock::new();
    Json(DOC.get_or_init(super::openapi::document).clone())
}
