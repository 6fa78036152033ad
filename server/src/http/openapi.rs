//! `GET /openapi.json`, built from a route table in code.
//!
//! `openenv validate --url` reads `info.version` (a "1." prefix selects the
//! `openenv-http/1.x` profile) and the `paths` keys: `/reset` present means
//! simulation mode, which also requires `/step` and `/state`. The component
//! schemas come from the same schemars derives as `/schema`, so the document
//! cannot drift from the wire types.

use crate::models::{
    AnyAction, CallToolObservation, CloseRequest, ListToolsObservation, Observation, ResetRequest,
    SandboxInfo, State, StepRequest, TaskInfo,
};
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

/// A request or response body in the table.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Body {
    /// No body.
    None,
    /// A schema from `components.schemas`.
    Ref(&'static str),
    /// A JSON array of a schema from `components.schemas`.
    ArrayOf(&'static str),
    /// Any JSON (or none): JSON-RPC, whose errors are replies, not statuses.
    Any,
    /// A free-form JSON object (envelopes, JSON-RPC).
    Object,
    /// An HTML page.
    Html,
    /// JSON lines: one JSON object per line.
    JsonLines,
}

/// One documented route.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Route {
    /// Lowercase HTTP method as OpenAPI spells it.
    pub method: &'static str,
    /// The axum path, `{param}` style, which is also OpenAPI's.
    pub path: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Request body.
    pub request: Body,
    /// 200 response body.
    pub response: Body,
}

/// Every route the router serves, in the order a reader wants them.
pub(crate) const ROUTES: &[Route] = &[
    Route {
        method: "post",
        path: "/reset",
        summary: "Start an episode in a new session; body optional",
        request: Body::Ref("ResetRequest"),
        response: Body::Object,
    },
    Route {
        method: "post",
        path: "/step",
        summary: "Run one action: {session_id, action: str | {command} | {type: list_tools} | {type: call_tool, tool_name, arguments}}",
        request: Body::Ref("StepRequest"),
        response: Body::Object,
    },
    Route {
        method: "get",
        path: "/state",
        summary: "The session object (?session_id=)",
        request: Body::None,
        response: Body::Ref("State"),
    },
    Route {
        method: "get",
        path: "/tasks",
        summary: "All tasks, without ground truth",
        request: Body::None,
        response: Body::ArrayOf("TaskInfo"),
    },
    Route {
        method: "post",
        path: "/close",
        summary: "End a session: {session_id}",
        request: Body::Ref("CloseRequest"),
        response: Body::Object,
    },
    Route {
        method: "delete",
        path: "/session/{id}",
        summary: "End a session",
        request: Body::None,
        response: Body::Object,
    },
    Route {
        method: "get",
        path: "/trajectory",
        summary: "A session's redacted recording as JSON lines (?session_id=), while it lives and for the retention after it closes",
        request: Body::None,
        response: Body::JsonLines,
    },
    Route {
        method: "get",
        path: "/health",
        summary: "Liveness, sandbox state and session counts",
        request: Body::None,
        response: Body::Object,
    },
    Route {
        method: "get",
        path: "/metadata",
        summary: "Name, description, README, version",
        request: Body::None,
        response: Body::Object,
    },
    Route {
        method: "get",
        path: "/schema",
        summary: "JSON Schemas of action, observation and state",
        request: Body::None,
        response: Body::Object,
    },
    Route {
        method: "post",
        path: "/mcp",
        summary: "MCP over JSON-RPC 2.0 (always HTTP 200)",
        request: Body::Any,
        response: Body::Object,
    },
    Route {
        method: "get",
        path: "/ws",
        summary: "OpenEnv WebSocket session (upgrade)",
        request: Body::None,
        response: Body::None,
    },
    Route {
        method: "get",
        path: "/web",
        summary: "Debug web UI",
        request: Body::None,
        response: Body::Html,
    },
    Route {
        method: "get",
        path: "/openapi.json",
        summary: "This document",
        request: Body::None,
        response: Body::Object,
    },
];

fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

fn content(body: Body) -> Option<Value> {
    match body {
        Body::None => None,
        Body::Ref(name) => Some(json!({
            "application/json": { "schema": { "$ref": format!("#/components/schemas/{name}") } }
        })),
        Body::ArrayOf(name) => Some(json!({
            "application/json": { "schema": {
                "type": "array", "items": { "$ref": format!("#/components/schemas/{name}") }
            } }
        })),
        Body::Object => Some(json!({ "application/json": { "schema": { "type": "object" } } })),
        Body::Any => Some(json!({ "application/json": { "schema": {} } })),
        Body::Html => Some(json!({ "text/html": { "schema": { "type": "string" } } })),
        Body::JsonLines => Some(json!({
            super::trajectory::JSON_LINES: { "schema": { "type": "string" } }
        })),
    }
}

/// The OpenAPI 3.1 document (its schemas are JSON Schema 2020-12).
pub(crate) fn document() -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "/components/schemas".into())
        .into_generator();
    add::<AnyAction>(&mut generator);
    add::<ResetRequest>(&mut generator);
    add::<StepRequest>(&mut generator);
    add::<CloseRequest>(&mut generator);
    add::<Observation>(&mut generator);
    add::<State>(&mut generator);
    add::<TaskInfo>(&mut generator);
    add::<SandboxInfo>(&mut generator);
    add::<ListToolsObservation>(&mut generator);
    add::<CallToolObservation>(&mut generator);
    let schemas = generator.take_definitions(true);

    let error = json!({
        "description": "Error: {\"error\": {\"code\", \"message\"}}",
        "content": { "application/json": { "schema": { "type": "object" } } }
    });
    let mut paths = Map::new();
    for r in ROUTES {
        let mut op = json!({
            "summary": r.summary,
            "operationId": format!("{}_{}", r.method, r.path.trim_matches('/').replace(['/', '.', '{', '}'], "_")),
            "responses": { "default": error.clone() },
        });
        let mut ok = json!({ "description": "OK" });
        if let Some(c) = content(r.response) {
            ok["content"] = c;
        }
        if r.path == "/ws" {
            op["responses"]["101"] = json!({ "description": "Switching Protocols" });
        } else {
            op["responses"]["200"] = ok;
        }
        if let Some(c) = content(r.request) {
            // Optional where the server takes no body: /reset (defaults)
            // and /mcp (a JSON-RPC parse error is a reply like any other).
            let required = !matches!(r.request, Body::Any) && r.path != "/reset";
            op["requestBody"] = json!({ "required": required, "content": c });
        }
        if r.path == "/state" {
            op["parameters"] = json!([{
                "name": "session_id", "in": "query", "required": true,
                "schema": { "type": "string", "minLength": 1 }
            }, {
                "name": "reveal", "in": "query", "required": false,
                "schema": { "type": "boolean", "default": false },
                "description": "true adds `revealed`: [{id, value}], the raw values of the currently visible secrets only"
            }]);
        }
        if r.path == "/trajectory" {
            op["parameters"] = json!([{
                "name": "session_id", "in": "query", "required": true,
                "schema": { "type": "string", "minLength": 1 },
                "description": "the session, open or closed within the retention; unknown, malformed or expired ids are 404"
            }]);
        }
        if r.path == "/step" {
            op["parameters"] = json!([{
                "name": "session_id", "in": "query", "required": false,
                "schema": { "type": "string", "minLength": 1 },
                "description": "the session, when the body does not name it"
            }]);
        }
        if r.path == "/session/{id}" {
            op["parameters"] = json!([{
                "name": "id", "in": "path", "required": true, "schema": { "type": "string" }
            }]);
        }
        let entry = paths.entry(r.path).or_insert_with(|| json!({}));
        entry[r.method] = op;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "SecretsAuditEnv",
            "version": "1.0.0",
            "description": "OpenEnv-compatible environment for secret-leak remediation."
        },
        "paths": paths,
        "components": { "schemas": schemas },
    })
}
