//! Router tests against an in-memory fake backend: every route, every bad
//! input, the WebSocket protocol over real TCP, and a fuzz run.
//!
//! The fake follows the `Environment` contract (sessions, step budget,
//! `done`, capacity) closely enough to drive whole episodes;
//! `real_env_episode` plays a real task through the router.

use super::*;
use crate::env::EnvError;
use crate::models::*;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use tower::ServiceExt;

/// A fake environment: sessions are counters, `submit` ends the episode,
/// `boom` fails with an internal error, `panic` panics (a bug in a
/// handler), `sleep N` waits N ms.
struct Fake {
    sessions: Mutex<HashMap<String, Observation>>,
    max: usize,
    sandbox: bool,
    next: std::sync::atomic::AtomicU64,
}

impl Fake {
    fn new(max: usize) -> Self {
        Self {
            sessions: Mutex::default(),
            max,
            sandbox: true,
            next: Default::default(),
        }
    }
}

fn observation(session_id: &str, episode_id: &str, task_id: u32, seed: Option<u64>) -> Observation {
    Observation {
        session_id: session_id.into(),
        episode_id: episode_id.into(),
        task_id,
        task_slug: format!("task_{task_id:02}"),
        seed,
        title: "fake".into(),
        difficulty: Difficulty::Easy,
        description: "a fake task".into(),
        scan_mode: ScanMode::Dir,
        step_budget: 10,
        steps_taken: 0,
        reward: 0.0,
        reward_mode: RewardMode::Score,
        reward_breakdown: RewardBreakdown::default(),
        leaks_initial: 1,
        leaks_current: 1,
        visible_secrets: vec![],
        hidden_count: 0,
        conflict_map: vec![],
        ranked_actions: vec![],
        top_blocker: None,
        health: HealthSummary::default(),
        last_action: None,
        history: vec![],
        done: false,
        terminated: false,
        truncated: false,
        success: false,
        sandbox: SandboxInfo {
            available: true,
            tier: crate::models::SandboxTier::Bwrap,
            landlock_abi: None,
            uid_per_command: false,
            detail: "fake".into(),
        },
        grading_errors: vec![],
    }
}

impl EnvBackend for Fake {
    fn reset(&self, req: ResetRequest) -> BoxFuture<'_, Result<Observation, EnvError>> {
        Box::pin(async move {
            let task = match req.task_id {
                None => 1,
                Some(TaskRef::Number(n)) if (1..=13).contains(&n) => n,
                Some(TaskRef::Name(s)) if s == "task_01" => 1,
                Some(other) => return Err(EnvError::UnknownTask(format!("{other:?}"))),
            };
            let mut sessions = self.sessions.lock().unwrap();
            if sessions.len() >= self.max {
                return Err(EnvError::CapacityReached {
                    active: sessions.len(),
                    max: self.max,
                });
            }
            let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let sid = format!("s{n}");
            let ep = req.episode_id.unwrap_or_else(|| format!("ep{n}"));
            let obs = observation(&sid, &ep, task, req.seed);
            sessions.insert(sid, obs.clone());
            Ok(obs)
        })
    }
    fn step<'a>(
        &'a self,
        session_id: &'a str,
        action: Action,
    ) -> BoxFuture<'a, Result<Observation, EnvError>> {
        Box::pin(async move {
            if let Some(ms) = action.command.strip_prefix("sleep ") {
                let ms: u64 = ms.parse().unwrap_or(0).min(5000);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
            if action.command == "panic" {
                panic!("fake backend panics on purpose");
            }
            if action.command == "boom" {
                return Err(EnvError::Internal("boom".into()));
            }
            let mut sessions = self.sessions.lock().unwrap();
            let obs = sessions
                .get_mut(session_id)
                .ok_or_else(|| EnvError::UnknownSession(session_id.into()))?;
            if obs.done {
                return Err(EnvError::EpisodeDone);
            }
            obs.steps_taken += 1;
            obs.reward = 0.5;
            obs.done = action.command == "submit" || obs.steps_taken >= obs.step_budget;
            obs.last_action = Some(ActionOutput {
                command: action.command,
                ..Default::default()
            });
            Ok(obs.clone())
        })
    }
    fn state(&self, session_id: &str) -> Result<State, EnvError> {
        let sessions = self.sessions.lock().unwrap();
        let obs = sessions
            .get(session_id)
            .ok_or_else(|| EnvError::UnknownSession(session_id.into()))?;
        Ok(State {
            episode_id: obs.episode_id.clone(),
            step_count: obs.steps_taken,
            session_id: obs.session_id.clone(),
            task_id: obs.task_id,
            seed: obs.seed,
            done: obs.done,
            score: obs.reward,
            observation: obs.clone(),
        })
    }
    fn reset_as<'a>(
        &'a self,
        session_id: &'a str,
        req: ResetRequest,
    ) -> BoxFuture<'a, Result<Observation, EnvError>> {
        Box::pin(async move {
            let mut sessions = self.sessions.lock().unwrap();
            let old = sessions
                .get_mut(session_id)
                .ok_or_else(|| EnvError::UnknownSession(session_id.into()))?;
            let task = match req.task_id {
                Some(TaskRef::Number(n)) => n,
                _ => 1,
            };
            *old = observation(session_id, &old.episode_id.clone(), task, req.seed);
            Ok(old.clone())
        })
    }
    fn close<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), EnvError>> {
        Box::pin(async move {
            self.sessions
                .lock()
                .unwrap()
                .remove(session_id)
                .map(|_| ())
                .ok_or_else(|| EnvError::UnknownSession(session_id.into()))
        })
    }
    fn tasks(&self) -> Vec<TaskInfo> {
        vec![TaskInfo {
            id: 1,
            slug: "task_01".into(),
            title: "fake".into(),
            difficulty: Difficulty::Easy,
            description: "d".into(),
            scan_mode: ScanMode::Dir,
            step_budget: 10,
            secret_count: 1,
            visible_at_reset: 1,
            has_conflicts: false,
        }]
    }
    fn sandbox_info(&self) -> SandboxInfo {
        SandboxInfo {
            available: self.sandbox,
            tier: if self.sandbox {
                crate::models::SandboxTier::Bwrap
            } else {
                crate::models::SandboxTier::None
            },
            landlock_abi: None,
            uid_per_command: false,
            detail: "fake".into(),
        }
    }
    fn active_sessions(&self) -> usize {
        self.sessions.lock().unwrap().len()
    }
}

fn state_with(fake: Fake, idle: std::time::Duration) -> (AppState, Arc<Fake>) {
    let fake = Arc::new(fake);
    let cfg = HttpConfig {
        max_sessions: fake.max,
        ws_idle_timeout: idle,
    };
    (AppState::new(fake.clone(), cfg), fake)
}

fn test_app() -> (Router, Arc<Fake>) {
    let (st, fake) = state_with(Fake::new(8), std::time::Duration::from_secs(60));
    (app(st), fake)
}

/// Sends one request; returns status and the body parsed as JSON
/// (`Value::Null` if it is not JSON).
async fn send(app: &Router, req: Request<Body>) -> (StatusCode, Value) {
    let res = app
        .clone()
        .oneshot(req)
        .await
        .expect("router is infallible");
    let status = res.status();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

fn post_json(uri: &str, body: impl Into<Body>) -> Request<Body> {
    Request::post(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.into())
        .unwrap()
}

fn assert_error(status: StatusCode, body: &Value, want: StatusCode, code: &str) {
    assert_eq!(status, want, "body: {body}");
    assert_eq!(body["error"]["code"], code, "body: {body}");
    assert!(body["error"]["message"].is_string(), "body: {body}");
}

async fn reset_session(app: &Router) -> String {
    let (s, b) = send(app, post_json("/reset", "{}")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    b["session_id"].as_str().unwrap().to_string()
}

// ---- OpenEnv discovery routes (what `openenv validate --url` checks) ----

#[tokio::test]
async fn health() {
    let (app, _) = test_app();
    let (s, b) = send(&app, get("/health")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b["status"], "healthy");
    assert_eq!(b["sandbox"]["available"], true);
    assert_eq!(b["active_sessions"], 0);
    assert_eq!(b["max_sessions"], 8);

    let mut fake = Fake::new(2);
    fake.sandbox = false;
    let (st, _) = state_with(fake, std::time::Duration::from_secs(60));
    let (_, b) = send(&app_from(st), get("/health")).await;
    // No tier contains commands and uncontained runs were not allowed:
    // episodes are refused, and /health says so.
    assert_eq!(b["status"], "unavailable");
    assert_eq!(b["sandbox"]["tier"], "none");
}

fn app_from(st: AppState) -> Router {
    app(st)
}

#[tokio::test]
async fn metadata() {
    let (app, _) = test_app();
    let (s, b) = send(&app, get("/metadata")).await;
    assert_eq!(s, StatusCode::OK);
    for k in [
        "name",
        "description",
        "readme_content",
        "version",
        "author",
        "documentation_url",
    ] {
        assert!(b[k].is_string(), "{k}: {b}");
    }
    assert_eq!(b["sandbox"]["tier"], "bwrap", "{b}");
    assert_eq!(b["sandbox"]["available"], true, "{b}");
}

#[tokio::test]
async fn schema() {
    let (app, _) = test_app();
    let (s, b) = send(&app, get("/schema")).await;
    assert_eq!(s, StatusCode::OK);
    for k in ["action", "observation", "state"] {
        assert!(b[k].is_object(), "{k}");
    }
    let obs = &b["observation"];
    for k in ["reward", "done", "metadata", "session_id"] {
        assert!(obs["properties"][k].is_object(), "observation.{k}");
    }
    assert_ne!(obs["additionalProperties"], json!(false));
    // The action: a command, or OpenEnv's tool-calling actions.
    assert_eq!(b["action"]["title"], "Action");
    let action = jsonschema::validator_for(&b["action"]).expect("action schema compiles");
    for ok in [
        json!({"command": "ls"}),
        json!({"type": "list_tools"}),
        json!({"type": "call_tool", "tool_name": "inspect_file", "arguments": {"path": "a"}}),
        json!({"type": "call_tool", "tool_name": "submit"}),
    ] {
        assert!(action.is_valid(&ok), "{ok} is an action");
    }
    for bad in [
        json!({}),
        json!({"type": "call_tool"}),
        json!({"type": "nope"}),
    ] {
        assert!(!action.is_valid(&bad), "{bad} is not an action");
    }
    assert!(b["state"]["properties"]["step_count"].is_object());
    assert!(!b.to_string().contains("\"$ref\":\"http"), "no remote refs");
}

#[tokio::test]
async fn openapi() {
    let (app, _) = test_app();
    let (s, b) = send(&app, get("/openapi.json")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b["info"]["version"], "1.0.0");
    for p in [
        "/reset",
        "/step",
        "/state",
        "/health",
        "/metadata",
        "/schema",
        "/mcp",
        "/tasks",
    ] {
        assert!(b["paths"][p].is_object(), "path {p}");
    }
    assert!(b["components"]["schemas"]["Observation"].is_object());
    // Every local $ref resolves.
    let text = b.to_string();
    for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = &part[..part.find('"').unwrap()];
        assert!(
            b["components"]["schemas"][name].is_object(),
            "dangling $ref {name}"
        );
    }
}

/// Every route in the OpenAPI table is served (none falls to the 404
/// fallback), so the document cannot list a route the router lacks.
#[tokio::test]
async fn openapi_routes_exist() {
    let (app, _) = test_app();
    for r in super::openapi::ROUTES {
        let path = r.path.replace("{id}", "x");
        let req = Request::builder()
            .method(r.method.to_uppercase().as_str())
            .uri(&path);
        let (s, b) = send(&app, req.body(Body::empty()).unwrap()).await;
        assert_ne!(b["error"]["code"], "not_found", "{} {path}: {s}", r.method);
    }
}

// ---- MCP ----

async fn mcp(app: &Router, body: Value) -> Value {
    let (s, b) = send(app, post_json("/mcp", body.to_string())).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b["jsonrpc"], "2.0", "{b}");
    b
}

#[tokio::test]
async fn mcp_errors() {
    let (app, _) = test_app();
    assert_eq!(mcp(&app, json!({})).await["error"]["code"], -32600);
    let (s, b) = send(&app, post_json("/mcp", "{nope")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b["error"]["code"], -32700);
    let b = mcp(&app, json!({"jsonrpc":"2.0","id":7,"method":"nope"})).await;
    assert_eq!(b["error"]["code"], -32601);
    assert_eq!(b["id"], 7);
    let b = mcp(
        &app,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zzz"}}),
    )
    .await;
    assert_eq!(b["error"]["code"], -32602);
    let b = mcp(&app, json!([1, 2])).await;
    assert_eq!(b["error"]["code"], -32600);
}

#[tokio::test]
async fn mcp_tools() {
    let (app, fake) = test_app();
    let b = mcp(
        &app,
        json!({"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}),
    )
    .await;
    assert!(b["result"]["serverInfo"]["name"].is_string());
    let b = mcp(&app, json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})).await;
    let tools = b["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "reset",
            "step",
            "state",
            "bash",
            "inspect_file",
            "inspect_encoded",
            "scan_history",
            "run_scanner",
            "list_files",
            "submit"
        ]
    );
    assert!(tools.iter().all(|t| t["inputSchema"]["type"] == "object"));

    let call = |name: &str, args: Value| json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":name,"arguments":args}});
    let b = mcp(
        &app,
        call("reset", json!({"task_id": 1, "episode_id": "e1"})),
    )
    .await;
    assert_eq!(b["result"]["isError"], false, "{b}");
    let sid = b["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = mcp(
        &app,
        call(
            "inspect_file",
            json!({"session_id": sid, "path": "config.py"}),
        ),
    )
    .await;
    let obs = &b["result"]["structuredContent"]["observation"];
    assert_eq!(obs["last_action"]["command"], "inspect_file config.py");
    let b = mcp(&app, call("state", json!({"session_id": sid}))).await;
    assert_eq!(b["result"]["structuredContent"]["step_count"], 1);
    assert_eq!(b["result"]["structuredContent"]["episode_id"], "e1");
    // The reset's one check holds over MCP too: a bidirectional control in
    // the episode id is refused.
    let b = mcp(&app, call("reset", json!({"episode_id": "e\u{202E}1"}))).await;
    assert_eq!(b["error"]["code"], -32602, "{b}");
    assert!(
        b["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("bidirectional")),
        "{b}"
    );
    // No session over HTTP: a tool error, not a protocol error.
    let b = mcp(&app, call("submit", json!({}))).await;
    assert_eq!(b["result"]["isError"], true);
    assert_eq!(
        b["result"]["structuredContent"]["error"]["code"],
        "missing_session_id"
    );
    let b = mcp(&app, call("inspect_file", json!({"session_id": sid}))).await;
    assert_eq!(b["error"]["code"], -32602, "path required");
    let b = mcp(&app, call("submit", json!({"session_id": sid}))).await;
    assert_eq!(b["result"]["structuredContent"]["done"], true);

    let b = mcp(
        &app,
        json!({"jsonrpc":"2.0","id":3,"method":"openenv/session/create","params":{}}),
    )
    .await;
    let sid2 = b["result"]["session_id"].as_str().unwrap().to_string();
    assert_eq!(fake.active_sessions(), 2);
    let b = mcp(
        &app,
        json!({"jsonrpc":"2.0","id":4,"method":"openenv/session/close","params":{"session_id":sid2}}),
    )
    .await;
    assert_eq!(b["result"]["closed"], true);
    assert_eq!(fake.active_sessions(), 1);
}

// ---- Seed HTTP API ----

#[tokio::test]
async fn reset_bodies() {
    let (app, _) = test_app();
    // No body, no content type.
    let (s, b) = send(&app, Request::post("/reset").body(Body::empty()).unwrap()).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert!(b["observation"].is_object());
    assert_eq!(b["reward"], 0.0);
    assert_eq!(b["done"], false);
    assert!(b["session_id"].is_string() && b["episode_id"].is_string());
    let (s, _) = send(&app, post_json("/reset", "{}")).await;
    assert_eq!(s, StatusCode::OK);
    let (s, b) = send(
        &app,
        post_json(
            "/reset",
            r#"{"task_id":"task_01","seed":3,"episode_id":"x","extra":1}"#,
        ),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b["episode_id"], "x");
    assert_eq!(b["observation"]["seed"], 3);

    let (s, b) = send(&app, post_json("/reset", r#"{"seed":-1}"#)).await;
    assert_error(s, &b, StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    let (s, b) = send(&app, post_json("/reset", r#"{"task_id":99}"#)).await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "unknown_task");
    let long = "e".repeat(256);
    let (s, b) = send(
        &app,
        post_json("/reset", json!({ "episode_id": long }).to_string()),
    )
    .await;
    assert_error(s, &b, StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    let (s, b) = send(&app, post_json("/reset", "{\"seed\":")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid_json");
    let req = Request::post("/reset")
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from("{}"));
    let (s, b) = send(&app, req.unwrap()).await;
    assert_error(
        s,
        &b,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );
    let req = Request::post("/reset").body(Body::from("{}"));
    let (s, b) = send(&app, req.unwrap()).await;
    assert_error(
        s,
        &b,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );
}

#[tokio::test]
async fn bad_json_bodies() {
    let (app, _) = test_app();
    // Nesting past serde_json's recursion limit (128).
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (s, b) = send(&app, post_json("/step", deep)).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid_json");
    // Invalid UTF-8 inside a string.
    let (s, b) = send(
        &app,
        post_json("/step", &b"{\"session_id\":\"\xff\xfe\"}"[..]),
    )
    .await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid_json");
    // Over the body bound, with a Content-Length...
    let big = format!("{{\"action\":\"{}\"}}", "a".repeat(MAX_BODY_BYTES));
    let (s, b) = send(&app, post_json("/step", big.clone())).await;
    assert_error(s, &b, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    // ...and streamed without one.
    let chunks: Vec<Result<axum::body::Bytes, std::io::Error>> = big
        .into_bytes()
        .chunks(8192)
        .map(|c| Ok(axum::body::Bytes::copy_from_slice(c)))
        .collect();
    let body = Body::from_stream(futures_util::stream::iter(chunks));
    let (s, b) = send(&app, post_json("/step", body)).await;
    assert_error(s, &b, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
}

#[tokio::test]
async fn step_errors() {
    let (app, _) = test_app();
    let sid = reset_session(&app).await;
    let cases = [
        (
            json!({"action": "ls"}),
            StatusCode::BAD_REQUEST,
            "missing_session_id",
        ),
        (
            json!({"session_id": sid}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            json!({"session_id": sid, "action": 5}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            json!({"session_id": sid, "action": {"cmd": "ls"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            json!({"session_id": sid, "action": {"command": 1}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            json!({"session_id": sid, "action": "  "}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            json!({"session_id": 3, "action": "ls"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            json!({"session_id": "nope", "action": "ls"}),
            StatusCode::NOT_FOUND,
            "unknown_session",
        ),
        (
            json!([1]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            json!({"session_id": sid, "action": "a".repeat(MAX_ACTION_BYTES + 1)}),
            StatusCode::PAYLOAD_TOO_LARGE,
            "action_too_long",
        ),
        (
            json!({"session_id": sid, "action": "boom"}),
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
        ),
    ];
    for (body, status, code) in cases {
        let (s, b) = send(&app, post_json("/step", body.to_string())).await;
        assert_error(s, &b, status, code);
    }
    let (s, b) = send(&app, post_json("/step", "")).await;
    assert_error(s, &b, StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
}

#[tokio::test]
async fn episode_over_http() {
    let (app, fake) = test_app();
    let sid = reset_session(&app).await;
    // Both action forms, OpenEnv's extra keys, and the session in the query.
    let body = json!({"session_id": sid, "action": "ls"});
    let (s, b) = send(&app, post_json("/step", body.to_string())).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["reward"], 0.5);
    let body = json!({"action": {"command": "cat a"}, "timeout_s": 5.0, "request_id": "r"});
    let (s, b) = send(
        &app,
        post_json(&format!("/step?session_id={sid}"), body.to_string()),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["observation"]["last_action"]["command"], "cat a");

    let (s, b) = send(&app, get(&format!("/state?session_id={sid}"))).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b["step_count"], 2);
    let (s, b) = send(&app, get("/state")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "missing_session_id");
    let (s, b) = send(&app, get("/state?session_id=zz")).await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "unknown_session");

    let body = json!({"session_id": sid, "action": "submit"});
    let (_, b) = send(&app, post_json("/step", body.to_string())).await;
    assert_eq!(b["done"], true);
    let (s, b) = send(&app, post_json("/step", body.to_string())).await;
    assert_error(s, &b, StatusCode::CONFLICT, "episode_done");

    let (s, b) = send(
        &app,
        post_json("/close", json!({"session_id": sid}).to_string()),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b["closed"], true);
    let (s, b) = send(
        &app,
        post_json("/close", json!({"session_id": sid}).to_string()),
    )
    .await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "unknown_session");
    let (s, b) = send(&app, post_json("/close", "{}")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "missing_session_id");
    let sid = reset_session(&app).await;
    let req = Request::delete(format!("/session/{sid}"))
        .body(Body::empty())
        .unwrap();
    let (s, _) = send(&app, req).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(fake.active_sessions(), 0);

    let (s, b) = send(&app, get("/tasks")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(b[0]["slug"], "task_01");
}

#[tokio::test]
async fn capacity_http() {
    let (st, _) = state_with(Fake::new(1), std::time::Duration::from_secs(60));
    let app = app(st);
    reset_session(&app).await;
    let (s, b) = send(&app, post_json("/reset", "{}")).await;
    assert_error(s, &b, StatusCode::TOO_MANY_REQUESTS, "capacity_reached");
    assert_eq!(b["error"]["max_sessions"], 1);
}

/// A panicking handler answers a JSON 500 and the server keeps serving:
/// the same session steps on afterwards. On the current-thread test runtime
/// an uncaught panic would abort this very test.
#[tokio::test]
async fn handler_panic_is_a_json_500() {
    let (app, fake) = test_app();
    let sid = reset_session(&app).await;
    let (s, b) = send(
        &app,
        post_json(
            "/step",
            json!({"session_id": sid, "action": "panic"}).to_string(),
        ),
    )
    .await;
    assert_error(s, &b, StatusCode::INTERNAL_SERVER_ERROR, "internal_error");
    assert!(
        b["error"]["message"].as_str().unwrap().contains("panicked"),
        "{b}"
    );
    assert!(
        !b.to_string().contains("on purpose"),
        "panic text stays in the log: {b}"
    );
    let (s, b) = send(
        &app,
        post_json(
            "/step",
            json!({"session_id": sid, "action": "ls"}).to_string(),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["observation"]["steps_taken"], 1, "{b}");
    assert_eq!(fake.active_sessions(), 1);
    let (s, b) = send(&app, get("/health")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

#[tokio::test]
async fn routing_errors() {
    let (app, _) = test_app();
    let (s, b) = send(&app, get("/nope")).await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "not_found");
    let (s, b) = send(&app, get("/reset")).await;
    assert_error(s, &b, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    // A plain GET on the WebSocket route: upgrade rejection, as JSON.
    let (s, b) = send(&app, get("/ws")).await;
    assert!(s.is_client_error(), "{s}");
    assert!(b["error"]["code"].is_string(), "{b}");
    let res = app.clone().oneshot(get("/web")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let res = app.clone().oneshot(get("/")).await.unwrap();
    assert!(res.status().is_redirection());
}

// ---- Fuzz ----

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn method() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD",
        ])
    }
    fn path() -> impl Strategy<Value = String> {
        let known = prop::sample::select(vec![
            "/reset",
            "/step",
            "/state",
            "/tasks",
            "/close",
            "/session/x",
            "/health",
            "/metadata",
            "/schema",
            "/openapi.json",
            "/mcp",
            "/ws",
            "/web",
            "/",
            "/state?session_id=s0",
            "/step?session_id=s0",
            "/session/%ff",
        ])
        .prop_map(String::from);
        prop_oneof![known, "/[a-z%0-9/?=&.]{0,30}"]
    }
    fn body() -> impl Strategy<Value = Vec<u8>> {
        let json_like = prop::sample::select(vec![
            "{}", "[]", "null", "{\"action\":\"ls\",\"session_id\":\"s0\"}", "{\"action\":{\"command\":\"ls\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"reset\"}}",
            "{\"task_id\":\"x\"}", "{\"seed\":1e400}", "\"str\"",
        ])
        .prop_map(|s| s.as_bytes().to_vec());
        prop_oneof![json_like, prop::collection::vec(any::<u8>(), 0..300)]
    }
    fn content_type() -> impl Strategy<Value = Option<&'static str>> {
        prop::option::of(prop::sample::select(vec![
            "application/json",
            "text/plain",
            "application/json; charset=utf-8",
            "application/x+json",
            "",
        ]))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
        #[test]
        fn no_panic_and_json_errors(m in method(), p in path(), b in body(), ct in content_type(),
                                    upgrade in any::<bool>()) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let (app, _) = test_app();
                let _ = send(&app, post_json("/reset", "{}")).await; // session s0
                let mut req = Request::builder().method(m).uri(&p);
                if let Some(ct) = ct { req = req.header(header::CONTENT_TYPE, ct); }
                if upgrade { req = req.header(header::UPGRADE, "websocket").header(header::CONNECTION, "upgrade"); }
                let Ok(req) = req.body(Body::from(b)) else { return };
                let res = app.clone().oneshot(req).await.unwrap();
                let status = res.status();
                let bytes = res.into_body().collect().await.unwrap().to_bytes();
                if status.is_client_error() || status.is_server_error() {
                    if m != "HEAD" {
                        let v: Value = serde_json::from_slice(&bytes)
                            .unwrap_or_else(|_| panic!("{m} {p} -> {status}: non-JSON {:?}", String::from_utf8_lossy(&bytes)));
                        assert!(v["error"]["code"].is_string(), "{m} {p}: {v}");
                    }
                    assert!(status != StatusCode::INTERNAL_SERVER_ERROR, "{m} {p}: 500");
                }
                // The router still serves a normal request afterwards.
                let (s, _) = send(&app, get("/health")).await;
                assert_eq!(s, StatusCode::OK);
            });
        }
    }
}

/// The reply of a `POST /step` with `action`.
async fn step_with(app: &Router, sid: Option<&str>, action: Value) -> (StatusCode, Value) {
    let mut body = json!({ "action": action });
    if let Some(sid) = sid {
        body["session_id"] = json!(sid);
    }
    send(app, post_json("/step", body.to_string())).await
}

#[tokio::test]
async fn tool_actions_over_http() {
    let (app, _) = test_app();
    let (_, doc) = send(&app, get("/openapi.json")).await;
    let schemas = &doc["components"]["schemas"];
    let list_obs = doc_validator(
        &doc,
        &json!({"$ref": "#/components/schemas/ListToolsObservation"}),
    );
    let call_obs = doc_validator(
        &doc,
        &json!({"$ref": "#/components/schemas/CallToolObservation"}),
    );
    assert!(schemas["ToolSpec"].is_object() && schemas["ToolError"].is_object());

    // Over HTTP every step names its session (StepRequest); over /ws
    // list_tools needs none (ws_tcp::tool_actions_over_ws).
    let (s, b) = step_with(&app, None, json!({"type": "list_tools"})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{b}");

    // list_tools spends nothing.
    let sid = reset_session(&app).await;
    let (s, b) = step_with(&app, Some(&sid), json!({"type": "list_tools"})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["reward"], Value::Null, "{b}");
    assert_eq!(b["done"], false);
    assert!(list_obs.is_valid(&b["observation"]), "{b}");
    let names: Vec<&str> = b["observation"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "inspect_file",
            "inspect_encoded",
            "scan_history",
            "run_scanner",
            "list_files",
            "submit"
        ]
    );
    for t in b["observation"]["tools"].as_array().unwrap() {
        assert_eq!(t["input_schema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().is_some_and(|d| !d.is_empty()));
    }

    assert_eq!(b["observation"]["steps_taken"], 0, "no step spent: {b}");
    assert_eq!(b["observation"]["session_id"], sid.as_str());
    assert!(list_obs.is_valid(&b["observation"]), "{b}");

    // call_tool maps onto the structured action, and is a step.
    let (s, b) = step_with(
        &app,
        Some(&sid),
        json!({"type": "call_tool", "tool_name": "inspect_file", "arguments": {"path": "app/config.py"}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert!(call_obs.is_valid(&b["observation"]), "{b}");
    assert_eq!(b["observation"]["tool_name"], "inspect_file");
    assert_eq!(b["observation"]["error"], Value::Null);
    assert_eq!(
        b["observation"]["result"]["command"],
        "inspect_file app/config.py"
    );
    assert_eq!(b["observation"]["steps_taken"], 1);
    assert_eq!(b["reward"], 0.5, "a step's reward: {b}");
    let (_, b) = step_with(
        &app,
        Some(&sid),
        json!({"type": "call_tool", "tool_name": "bash", "arguments": {"command": "ls -la"}}),
    )
    .await;
    assert_eq!(b["observation"]["result"]["command"], "ls -la", "{b}");
    let (_, b) = step_with(
        &app,
        Some(&sid),
        json!({"type": "call_tool", "tool_name": "list_files"}),
    )
    .await;
    assert_eq!(b["observation"]["result"]["command"], "list_files", "{b}");
    assert_eq!(b["observation"]["steps_taken"], 3);

    // An unknown tool or bad arguments run nothing and spend no step.
    for (call, kind) in [
        (
            json!({"type": "call_tool", "tool_name": "rm_rf"}),
            "tool_not_found",
        ),
        (
            json!({"type": "call_tool", "tool_name": "reset"}),
            "tool_not_found",
        ),
        (
            json!({"type": "call_tool", "tool_name": "inspect_file"}),
            "invalid_args",
        ),
        (
            json!({"type": "call_tool", "tool_name": "inspect_file", "arguments": {"path": 7}}),
            "invalid_args",
        ),
        (
            json!({"type": "call_tool", "tool_name": "submit", "arguments": {"force": true}}),
            "invalid_args",
        ),
        // A blank path (Unicode whitespace is no control character) and a
        // path within the schema's 4,096 characters whose command is over
        // the action's byte bound: the tool's error, not an HTTP refusal.
        (
            json!({"type": "call_tool", "tool_name": "inspect_file", "arguments": {"path": "\u{3000}"}}),
            "invalid_args",
        ),
        (
            json!({"type": "call_tool", "tool_name": "inspect_file", "arguments": {"path": "\u{1F600}".repeat(4096)}}),
            "invalid_args",
        ),
    ] {
        let (s, b) = step_with(&app, Some(&sid), call.clone()).await;
        assert_eq!(s, StatusCode::OK, "{call}: {b}");
        assert_eq!(b["observation"]["error"]["error_type"], kind, "{call}: {b}");
        assert_eq!(b["observation"]["result"], Value::Null);
        assert_eq!(b["observation"]["steps_taken"], 3, "no step spent: {b}");
        assert_eq!(b["reward"], Value::Null);
        assert!(call_obs.is_valid(&b["observation"]), "{b}");
    }
    // Malformed tool actions, and call_tool without a session.
    for (sid_opt, action, want) in [
        (
            Some(sid.as_str()),
            json!({"type": "call_tool"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Some(sid.as_str()),
            json!({"type": "call_tool", "tool_name": "submit", "arguments": []}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Some(sid.as_str()),
            json!({"type": "teleport"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            None,
            json!({"type": "call_tool", "tool_name": "submit"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            Some("nope"),
            json!({"type": "list_tools"}),
            StatusCode::NOT_FOUND,
        ),
    ] {
        let (s, b) = step_with(&app, sid_opt, action.clone()).await;
        assert_eq!(s, want, "{action}: {b}");
    }
    // The tool's step ends the episode like the command would.
    let (_, b) = step_with(
        &app,
        Some(&sid),
        json!({"type": "call_tool", "tool_name": "submit", "arguments": {}}),
    )
    .await;
    assert_eq!(b["done"], true, "{b}");
    let (s, b) = step_with(
        &app,
        Some(&sid),
        json!({"type": "call_tool", "tool_name": "submit"}),
    )
    .await;
    assert_eq!(s, StatusCode::CONFLICT, "after the end: {b}");
}

#[tokio::test]
async fn mcp_tools_call_takes_the_session_from_params() {
    // OpenEnv's MCPToolClient names the session next to the arguments.
    let (app, _) = test_app();
    let b = mcp(
        &app,
        json!({"jsonrpc":"2.0","id":1,"method":"openenv/session/create","params":{}}),
    )
    .await;
    let sid = b["result"]["session_id"]
        .as_str()
        .expect("session")
        .to_string();
    let b = mcp(
        &app,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
               "params":{"name":"bash","arguments":{"command":"ls"},"session_id":sid}}),
    )
    .await;
    assert_eq!(b["result"]["isError"], false, "{b}");
    assert_eq!(
        b["result"]["structuredContent"]["observation"]["last_action"]["command"],
        "ls"
    );
    let b = mcp(
        &app,
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
               "params":{"name":"list_files","arguments":{"path":"src"},"session_id":sid}}),
    )
    .await;
    assert_eq!(
        b["result"]["structuredContent"]["observation"]["last_action"]["command"], "list_files src",
        "{b}"
    );
}

// ---- WebSocket over real TCP ----

mod ws_tcp {
    use super::*;
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message as M;

    type Client = tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >;

    async fn serve(st: AppState) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app(st)).await.unwrap() });
        addr
    }

    async fn connect(addr: std::net::SocketAddr) -> Client {
        tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
            .await
            .unwrap()
            .0
    }

    async fn next(c: &mut Client) -> M {
        tokio::time::timeout(std::time::Duration::from_secs(10), c.next())
            .await
            .expect("reply in time")
            .expect("stream open")
            .expect("frame")
    }

    async fn ask(c: &mut Client, msg: Value) -> Value {
        c.send(M::text(msg.to_string())).await.unwrap();
        loop {
            match next(c).await {
                M::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
                M::Pong(_) | M::Ping(_) => continue,
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    async fn expect_close(c: &mut Client) {
        loop {
            match tokio::time::timeout(std::time::Duration::from_secs(10), c.next())
                .await
                .expect("close in time")
            {
                Some(Ok(M::Close(Some(f)))) => {
                    assert_eq!(u16::from(f.code), 1000);
                    return;
                }
                Some(Ok(M::Close(None))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// `/ws?session_id=` attaches to a session made elsewhere (OpenEnv's
    /// `MCPToolClient` makes it over HTTP): the socket acts on it, resets
    /// it in place, never closes it, and is its only socket.
    #[tokio::test]
    async fn attaches_to_an_existing_session() {
        let (st, fake) = state_with(Fake::new(2), std::time::Duration::from_secs(60));
        let sid = fake
            .reset(ResetRequest::default())
            .await
            .unwrap()
            .session_id;
        // Full: attaching adds no session, so it is still admitted.
        fake.reset(ResetRequest::default()).await.unwrap();
        let addr = serve(st).await;
        let attach = |id: &str| {
            let url = format!("ws://{addr}/ws?session_id={id}");
            async move { tokio_tungstenite::connect_async(url).await.unwrap().0 }
        };
        let mut c = attach(&sid).await;
        let r = ask(&mut c, json!({"type":"state"})).await;
        assert_eq!(r["data"]["session_id"], sid.as_str(), "{r}");
        let r = ask(&mut c, json!({"type":"step","data":{"command":"ls"}})).await;
        assert_eq!(r["data"]["observation"]["steps_taken"], 1, "{r}");
        assert_eq!(fake.state(&sid).unwrap().step_count, 1, "the same session");
        let r = ask(&mut c, json!({"type":"reset","data":{"task_id":3}})).await;
        assert_eq!(r["data"]["observation"]["session_id"], sid.as_str(), "{r}");
        assert_eq!(fake.state(&sid).unwrap().task_id, 3, "reset in place");
        assert_eq!(fake.active_sessions(), 2, "no session added");

        // One socket per session; unknown ids are refused.
        for id in [sid.as_str(), "nope"] {
            let mut other = attach(id).await;
            let M::Text(t) = next(&mut other).await else {
                panic!("an error frame first")
            };
            let f: Value = serde_json::from_str(t.as_str()).unwrap();
            assert_eq!(f["data"]["code"], "SESSION_ERROR", "{id}: {f}");
            expect_close(&mut other).await;
        }

        // Closing the socket leaves the session open and free to attach.
        c.send(M::text(json!({"type":"close"}).to_string()))
            .await
            .unwrap();
        expect_close(&mut c).await;
        assert!(
            fake.state(&sid).is_ok(),
            "an attached socket does not own it"
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let mut again = attach(&sid).await;
            let r = ask(&mut again, json!({"type":"state"})).await;
            if r["type"] == "state" {
                assert_eq!(r["data"]["session_id"], sid.as_str());
                break;
            }
            // The first socket's attachment is released as its task ends.
            assert_eq!(r["data"]["code"], "SESSION_ERROR", "{r}");
            assert!(std::time::Instant::now() < deadline, "never released");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// A session a plain socket opened with its own `reset` is that socket's
    /// one socket too: attaching a second one is refused, and the claim
    /// follows the socket's next reset (the new session is claimed, the old
    /// one, closed, is not).
    #[tokio::test]
    async fn a_socket_owned_session_takes_no_second_socket() {
        let (st, _fake) = state_with(Fake::new(4), std::time::Duration::from_secs(60));
        let addr = serve(st).await;
        let (mut owner, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
            .await
            .unwrap();
        let r = ask(&mut owner, json!({"type":"reset","data":{}})).await;
        let sid = r["data"]["observation"]["session_id"]
            .as_str()
            .unwrap()
            .to_string();
        let refused = |id: String| async move {
            let url = format!("ws://{addr}/ws?session_id={id}");
            let mut other = tokio_tungstenite::connect_async(url).await.unwrap().0;
            let M::Text(t) = next(&mut other).await else {
                panic!("an error frame first")
            };
            let f: Value = serde_json::from_str(t.as_str()).unwrap();
            f["data"]["code"] == "SESSION_ERROR"
        };
        assert!(
            refused(sid.clone()).await,
            "a second socket attached to {sid}"
        );
        let r = ask(&mut owner, json!({"type":"reset","data":{}})).await;
        let next_sid = r["data"]["observation"]["session_id"]
            .as_str()
            .unwrap()
            .to_string();
        assert_ne!(next_sid, sid);
        assert!(
            refused(next_sid.clone()).await,
            "the new session is claimed too"
        );
    }

    /// Hack (session isolation): a socket attached to a session it does not
    /// own must not close it through its `mcp` messages either. An MCP
    /// `reset` over the attached socket resets the session in place, as
    /// the socket's own `reset` does; it used to close the attached
    /// session (its owner's next request: unknown session) and start
    /// another.
    #[tokio::test]
    async fn hack_attached_socket_mcp_reset_keeps_the_session_it_attached_to() {
        let (st, fake) = state_with(Fake::new(3), std::time::Duration::from_secs(60));
        let sid = fake
            .reset(ResetRequest::default())
            .await
            .unwrap()
            .session_id;
        let addr = serve(st).await;
        let url = format!("ws://{addr}/ws?session_id={sid}");
        let mut c = tokio_tungstenite::connect_async(url).await.unwrap().0;
        let r = ask(
            &mut c,
            json!({"type":"mcp","data":{"jsonrpc":"2.0","id":1,"method":"tools/call",
                   "params":{"name":"reset","arguments":{"task_id":3}}}}),
        )
        .await;
        assert!(r["data"]["result"].is_object(), "{r}");
        assert!(
            fake.state(&sid).is_ok(),
            "the attached socket's MCP reset closed the session it does not own: {r}"
        );
        assert_eq!(fake.state(&sid).unwrap().task_id, 3, "reset in place");
        assert_eq!(fake.active_sessions(), 1, "no session added");
        c.send(M::text(json!({"type":"close"}).to_string()))
            .await
            .unwrap();
        expect_close(&mut c).await;
        assert!(fake.state(&sid).is_ok(), "still the owner's to close");
    }

    #[tokio::test]
    async fn episode() {
        let (st, fake) = state_with(Fake::new(4), std::time::Duration::from_secs(60));
        let addr = serve(st).await;
        let mut c = connect(addr).await;

        let r = ask(&mut c, json!({"type":"state"})).await;
        assert_eq!(r["data"]["code"], "SESSION_ERROR");
        let r = ask(
            &mut c,
            json!({"type":"reset","data":{"seed":3,"episode_id":"ep-1"}}),
        )
        .await;
        assert_eq!(r["type"], "observation", "{r}");
        assert_eq!(r["data"]["done"], false);
        assert!(r["data"]["observation"].is_object());
        let r = ask(&mut c, json!({"type":"step","data":{"command":"ls"}})).await;
        assert_eq!(r["type"], "observation");
        assert_eq!(r["data"]["reward"], 0.5);
        let r = ask(&mut c, json!({"type":"state"})).await;
        assert_eq!(r["type"], "state");
        assert_eq!(r["data"]["episode_id"], "ep-1");
        assert_eq!(r["data"]["step_count"], 1);

        // Per-message errors keep the socket open.
        assert_eq!(
            ask(&mut c, json!({"type":"state","x":1})).await["data"]["code"],
            "VALIDATION_ERROR"
        );
        c.send(M::text("{oops")).await.unwrap();
        assert_eq!(
            ask(&mut c, json!({"type":"nope"})).await["data"]["code"],
            "INVALID_JSON"
        );
        // (the reply above answers "{oops"; the "nope" reply is next)
        let r = match next(&mut c).await {
            M::Text(t) => serde_json::from_str::<Value>(t.as_str()).unwrap(),
            o => panic!("{o:?}"),
        };
        assert_eq!(r["data"]["code"], "UNKNOWN_TYPE");
        assert_eq!(
            ask(&mut c, json!({"type":"step"})).await["data"]["code"],
            "VALIDATION_ERROR"
        );
        assert_eq!(
            ask(&mut c, json!({"type":"step","data":{"command":"boom"}})).await["data"]["code"],
            "EXECUTION_ERROR"
        );
        let r = ask(
            &mut c,
            json!({"type":"mcp","data":{"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"state","arguments":{}}}}),
        )
        .await;
        assert_eq!(r["type"], "mcp");
        assert_eq!(
            r["data"]["result"]["structuredContent"]["step_count"], 1,
            "{r}"
        );

        // A second reset replaces the connection's session.
        ask(&mut c, json!({"type":"reset"})).await;
        assert_eq!(fake.active_sessions(), 1);

        // Pings are answered.
        c.send(M::Ping(b"hi".to_vec().into())).await.unwrap();
        match next(&mut c).await {
            M::Pong(p) => assert_eq!(&p[..], b"hi"),
            other => panic!("expected pong, got {other:?}"),
        }

        c.send(M::text(json!({"type":"close"}).to_string()))
            .await
            .unwrap();
        expect_close(&mut c).await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(fake.active_sessions(), 0);
    }

    /// A ping sent during a long step is answered before the step ends.
    #[tokio::test]
    async fn tool_actions_over_ws() {
        let (st, _fake) = state_with(Fake::new(4), std::time::Duration::from_secs(60));
        let addr = serve(st).await;
        let mut c = connect(addr).await;
        // Before reset: the tools, nothing else.
        let r = ask(&mut c, json!({"type":"step","data":{"type":"list_tools"}})).await;
        assert_eq!(r["type"], "observation", "{r}");
        assert_eq!(r["data"]["reward"], Value::Null);
        assert_eq!(r["data"]["observation"]["tools"][0]["name"], "bash", "{r}");
        assert!(r["data"]["observation"].get("session_id").is_none(), "{r}");
        let r = ask(
            &mut c,
            json!({"type":"step","data":{"type":"call_tool","tool_name":"submit"}}),
        )
        .await;
        assert_eq!(r["data"]["code"], "SESSION_ERROR", "{r}");

        ask(&mut c, json!({"type":"reset","data":{}})).await;
        let r = ask(&mut c, json!({"type":"step","data":{"type":"list_tools"}})).await;
        assert_eq!(r["data"]["observation"]["steps_taken"], 0, "{r}");
        assert_eq!(
            r["data"]["observation"]["tools"].as_array().map(Vec::len),
            Some(7)
        );
        let r = ask(
            &mut c,
            json!({"type":"step","data":{"type":"call_tool","tool_name":"inspect_encoded","arguments":{"path":"x.yml"}}}),
        )
        .await;
        assert_eq!(r["type"], "observation", "{r}");
        assert_eq!(r["data"]["reward"], 0.5);
        assert_eq!(r["data"]["observation"]["tool_name"], "inspect_encoded");
        assert_eq!(
            r["data"]["observation"]["result"]["command"],
            "inspect_encoded x.yml"
        );
        assert_eq!(r["data"]["observation"]["steps_taken"], 1);
        let r = ask(
            &mut c,
            json!({"type":"step","data":{"type":"call_tool","tool_name":"nope"}}),
        )
        .await;
        assert_eq!(
            r["data"]["observation"]["error"]["error_type"], "tool_not_found",
            "{r}"
        );
        assert_eq!(r["data"]["observation"]["steps_taken"], 1);
        let r = ask(&mut c, json!({"type":"step","data":{"type":"call_tool"}})).await;
        assert_eq!(r["data"]["code"], "VALIDATION_ERROR", "{r}");
        let r = ask(&mut c, json!({"type":"state"})).await;
        assert_eq!(r["data"]["step_count"], 1, "{r}");
    }

    #[tokio::test]
    async fn ping_during_step() {
        let (st, _) = state_with(Fake::new(4), std::time::Duration::from_secs(60));
        let addr = serve(st).await;
        let mut c = connect(addr).await;
        ask(&mut c, json!({"type":"reset"})).await;
        c.send(M::text(
            json!({"type":"step","data":{"command":"sleep 1500"}}).to_string(),
        ))
        .await
        .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        c.send(M::Ping(b"p".to_vec().into())).await.unwrap();
        match next(&mut c).await {
            M::Pong(_) => {}
            other => panic!("pong must come before the step reply, got {other:?}"),
        }
        match next(&mut c).await {
            M::Text(t) => assert!(t.as_str().contains("observation")),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn drop_and_idle_free_sessions() {
        let (st, fake) = state_with(Fake::new(4), std::time::Duration::from_millis(300));
        let addr = serve(st).await;
        let mut c = connect(addr).await;
        ask(&mut c, json!({"type":"reset"})).await;
        assert_eq!(fake.active_sessions(), 1);
        drop(c);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(
            fake.active_sessions(),
            0,
            "dropped socket frees its session"
        );

        let mut c = connect(addr).await;
        ask(&mut c, json!({"type":"reset"})).await;
        assert_eq!(fake.active_sessions(), 1);
        expect_close(&mut c).await; // idle timeout
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(fake.active_sessions(), 0, "idle socket frees its session");
    }

    #[tokio::test]
    async fn capacity() {
        let (st, _) = state_with(Fake::new(1), std::time::Duration::from_secs(60));
        let addr = serve(st).await;
        let mut first = connect(addr).await;
        ask(&mut first, json!({"type":"reset"})).await;
        let mut second = connect(addr).await;
        match next(&mut second).await {
            M::Text(t) => {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                assert_eq!(v["type"], "error");
                assert_eq!(v["data"]["code"], "CAPACITY_REACHED");
                assert_eq!(v["data"]["active_sessions"], 1);
                assert_eq!(v["data"]["max_sessions"], 1);
            }
            other => panic!("{other:?}"),
        }
        expect_close(&mut second).await;
        // The first connection is unaffected.
        let r = ask(&mut first, json!({"type":"step","data":{"command":"ls"}})).await;
        assert_eq!(r["type"], "observation");
    }

    /// A panic while answering a frame is an error frame; the connection
    /// and its session live on, and closing still frees the slot.
    #[tokio::test]
    async fn handler_panic_keeps_connection() {
        let (st, fake) = state_with(Fake::new(2), std::time::Duration::from_secs(60));
        let addr = serve(st).await;
        let mut c = connect(addr).await;
        ask(&mut c, json!({"type":"reset"})).await;
        let r = ask(&mut c, json!({"type":"step","data":{"command":"panic"}})).await;
        assert_eq!(r["type"], "error", "{r}");
        assert_eq!(r["data"]["code"], "EXECUTION_ERROR", "{r}");
        let r = ask(&mut c, json!({"type":"step","data":{"command":"ls"}})).await;
        assert_eq!(r["type"], "observation", "{r}");
        assert_eq!(r["data"]["observation"]["steps_taken"], 1, "{r}");
        drop(c);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(fake.active_sessions(), 0);
    }

    #[tokio::test]
    async fn oversized_message_closes() {
        let (st, fake) = state_with(Fake::new(2), std::time::Duration::from_secs(60));
        let addr = serve(st).await;
        let mut c = connect(addr).await;
        ask(&mut c, json!({"type":"reset"})).await;
        let big = format!(
            "{{\"type\":\"step\",\"data\":{{\"command\":\"{}\"}}}}",
            "a".repeat(MAX_WS_MESSAGE_BYTES + 10)
        );
        let _ = c.send(M::text(big)).await;
        // The server says why (1009, with the limit) before it closes, and
        // frees the session.
        let close = loop {
            match tokio::time::timeout(std::time::Duration::from_secs(10), c.next())
                .await
                .expect("in time")
            {
                Some(Ok(M::Close(f))) => break f,
                None | Some(Err(_)) => panic!("connection dropped without a close frame"),
                Some(Ok(_)) => continue,
            }
        };
        let close = close.expect("a close frame with a code");
        assert_eq!(u16::from(close.code), 1009, "{close:?}");
        assert!(
            close.reason.contains(&MAX_WS_MESSAGE_BYTES.to_string()),
            "{close:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(fake.active_sessions(), 0);
    }
}

/// The real environment behind the router: task 1 over HTTP, played to the
/// end with its oracle. Tasks are generated into a temporary data dir (a few
/// seconds) so the test neither needs nor touches the project's `data/`.
/// Needs bubblewrap for contained commands (without it they run
/// uncontained, which still works as root) and the project venv (pytest).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_env_episode() {
    let data = tempfile::tempdir().expect("tempdir");
    let mut cfg = crate::env::EnvConfig::with_root(&crate::test_paths::root());
    cfg.data_dir = data.path().to_path_buf();
    if let Ok(d) = std::env::var(env_vars::SECAUDIT_TASKS_DIR) {
        cfg.tasks_dir = d.into();
    }
    cfg.venv = crate::test_paths::venv();
    cfg.max_sessions = 4;
    let env = crate::env::Environment::new(cfg).await.unwrap();
    let oracle = env.oracle(1, None).await.unwrap();
    assert!(!oracle.is_empty(), "task 1 has an oracle");
    let app = app(AppState::from_environment(
        env,
        HttpConfig {
            max_sessions: 4,
            ..Default::default()
        },
    ));
    let (s, b) = send(&app, post_json("/reset", r#"{"task_id":1}"#)).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["done"], false, "{b}");
    let sid = b["session_id"].as_str().unwrap().to_string();
    let (s, b) = send(
        &app,
        post_json(
            "/step",
            json!({"session_id": sid, "action": "list_files"}).to_string(),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["observation"]["steps_taken"], 1);
    let (s, b) = send(&app, get(&format!("/state?session_id={sid}"))).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["step_count"], 1);
    let mut last = Value::Null;
    for cmd in &oracle {
        let (s, b) = send(
            &app,
            post_json(
                "/step",
                json!({"session_id": sid, "action": cmd}).to_string(),
            ),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{cmd}: {b}");
        let done = b["done"] == true;
        last = b;
        if done {
            break;
        }
    }
    assert_eq!(last["done"], true, "oracle ends the episode: {last}");
    assert_eq!(last["observation"]["success"], true, "{last}");
    let reward = last["reward"].as_f64().expect("numeric reward");
    assert!((reward - 1.0).abs() < 1e-9, "reward {reward}: {last}");
    // A step after the end is a 409, and the state still says done.
    let (s, b) = send(
        &app,
        post_json(
            "/step",
            json!({"session_id": sid, "action": "submit"}).to_string(),
        ),
    )
    .await;
    assert_error(s, &b, StatusCode::CONFLICT, "episode_done");
    let (s, b) = send(
        &app,
        post_json("/close", json!({"session_id": sid}).to_string()),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let left: Vec<_> = std::fs::read_dir(data.path().join("sessions"))
        .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "close removes the session dir: {left:?}");
}

/// The schema at `pointer` in the OpenAPI document, as a validator that
/// resolves the document's own `#/components/schemas/...` references.
fn doc_validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    root["components"] = doc["components"].clone();
    jsonschema::draft202012::new(&root).expect("valid schema")
}

/// The request-body schema of `POST path` in the document.
fn request_schema(doc: &Value, path: &str) -> Value {
    doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"].clone()
}

/// Schemathesis' findings (issue 20), each as a case: the OpenAPI document
/// says what the API does. `/tasks` is an array of `TaskInfo`; the required
/// fields of `/step`, `/close` and `/state` are marked required, and bodies
/// missing them are refused; a JSON array is not a reset body; an integral
/// float is a valid seed and task number (JSON Schema's `integer`), a
/// fractional one is not; an empty `episode_id` is outside the schema.
#[tokio::test]
async fn openapi_matches_behaviour() {
    let (app, _) = test_app();
    let (_, doc) = send(&app, get("/openapi.json")).await;

    let tasks_schema =
        &doc["paths"]["/tasks"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    let (s, tasks) = send(&app, get("/tasks")).await;
    assert_eq!(s, StatusCode::OK);
    assert!(tasks.is_array());
    assert!(
        doc_validator(&doc, tasks_schema).is_valid(&tasks),
        "/tasks reply {tasks} against {tasks_schema}"
    );

    let step = doc_validator(&doc, &request_schema(&doc, "/step"));
    let close = doc_validator(&doc, &request_schema(&doc, "/close"));
    let reset = doc_validator(&doc, &request_schema(&doc, "/reset"));
    assert_eq!(
        doc["paths"]["/step"]["post"]["requestBody"]["required"],
        true
    );
    assert_eq!(
        doc["paths"]["/close"]["post"]["requestBody"]["required"],
        true
    );
    let state_param = &doc["paths"]["/state"]["get"]["parameters"][0];
    assert_eq!(state_param["name"], "session_id");
    assert_eq!(state_param["required"], true);
    assert_eq!(state_param["schema"]["minLength"], 1);

    let sid = reset_session(&app).await;
    // (route, body, valid by the document, status the server gives)
    let cases: Vec<(&str, Value, bool, StatusCode)> = vec![
        ("/step", json!({}), false, StatusCode::UNPROCESSABLE_ENTITY),
        (
            "/step",
            json!({"session_id": sid}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/step",
            json!({"action": "ls"}),
            false,
            StatusCode::BAD_REQUEST,
        ),
        (
            "/step",
            json!({"session_id": "", "action": "ls"}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/step",
            json!({"session_id": sid, "action": "  "}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/step",
            json!({"session_id": sid, "action": "a\u{0}b"}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/step",
            json!({"session_id": sid, "action": "ls"}),
            true,
            StatusCode::OK,
        ),
        (
            "/step",
            json!({"session_id": sid, "action": {"command": "ls"}, "timeout_s": 2.5}),
            true,
            StatusCode::OK,
        ),
        ("/close", json!({}), false, StatusCode::BAD_REQUEST),
        (
            "/close",
            json!({"session_id": ""}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/close",
            json!({"session_id": "nope"}),
            true,
            StatusCode::NOT_FOUND,
        ),
        (
            "/reset",
            json!([null, null]),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        ("/reset", json!([]), false, StatusCode::UNPROCESSABLE_ENTITY),
        ("/reset", json!({"seed": 7.0}), true, StatusCode::OK),
        (
            "/reset",
            json!({"seed": 7.5}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/reset",
            json!({"seed": -1}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        // Past 2^64: outside the published maximum, refused; an integer
        // task number that large is valid and names no task.
        (
            "/reset",
            json!({"seed": 303410596370327923589120.0}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        ("/reset", json!({"seed": u64::MAX}), true, StatusCode::OK),
        (
            "/reset",
            json!({"task_id": 3.0e23}),
            true,
            StatusCode::NOT_FOUND,
        ),
        ("/reset", json!({"task_id": 1.0}), true, StatusCode::OK),
        (
            "/reset",
            json!({"task_id": 1e12}),
            true,
            StatusCode::NOT_FOUND,
        ),
        (
            "/reset",
            json!({"episode_id": ""}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/reset",
            json!({"episode_id": "é".repeat(255)}),
            true,
            StatusCode::OK,
        ),
        // Control and bidirectional-control characters: outside the
        // published pattern, refused; other Unicode is an id.
        (
            "/reset",
            json!({"episode_id": "run\u{0}1"}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/reset",
            json!({"episode_id": "run-\u{202E}gpj.exe"}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/reset",
            json!({"episode_id": "a\u{85}b\u{1b}[2J"}),
            false,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/reset",
            json!({"episode_id": "épisode 1 ✓ 日本 \u{200D}"}),
            true,
            StatusCode::OK,
        ),
    ];
    for (route, body, valid, want) in cases {
        let v = match route {
            "/step" => &step,
            "/close" => &close,
            _ => &reset,
        };
        assert_eq!(v.is_valid(&body), valid, "{route} {body}: document");
        let (s, b) = send(&app, post_json(route, body.to_string())).await;
        assert_eq!(s, want, "{route} {body}: {b}");
    }
    // The seed 7.0 is the seed 7.
    let (_, b) = send(&app, post_json("/reset", r#"{"seed": 7.0}"#)).await;
    assert_eq!(b["observation"]["seed"], 7);
    let (_, b) = send(&app, get("/state?session_id=")).await;
    assert_eq!(b["error"]["code"], "missing_session_id");
    // A step naming one session in its query and another in its body is
    // the body's (the schema allows the two to differ, so it is not
    // refused); the same one twice is a step.
    let sid = reset_session(&app).await;
    let (s, b) = send(
        &app,
        post_json(
            "/step?session_id=another",
            json!({"session_id": sid, "action": "ls"}).to_string(),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "the body's session: {b}");
    let (s, b) = send(
        &app,
        post_json(
            &format!("/step?session_id={sid}"),
            json!({"session_id": "another", "action": "ls"}).to_string(),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "the body's session, unknown: {b}");
    let (s, b) = send(
        &app,
        post_json(
            &format!("/step?session_id={sid}"),
            json!({"session_id": sid, "action": "ls"}).to_string(),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
}
