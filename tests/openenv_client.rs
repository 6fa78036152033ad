//! Proof with the real OpenEnv tooling (openenv 0.10.0 from PyPI, installed by
//! `scripts/setup.sh` into `.tools/openenv`): the built `secaudit serve`
//! passes `openenv validate --url`, the stock `GenericEnvClient` solves task 1
//! over `WS /ws` with the oracle's actions, and the seed's HTTP API plays an
//! episode the way the baseline agent does. These tests run the real binary
//! as a child process, so they catch what in-process router tests cannot
//! (argument parsing, env vars, startup, port binding).
//!
//! A missing `.tools/openenv` is a failure with a hint, never a silent pass.

use crate::util;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The tool venv with openenv 0.10.0; panics with the fix when it is missing.
pub(crate) fn openenv_venv() -> PathBuf {
    let v = util::root().join(".tools/openenv");
    assert!(
        v.join("bin/openenv").is_file() && v.join("bin/python").is_file(),
        "{} is missing: run scripts/setup.sh (installs openenv==0.10.0 into .tools/openenv)",
        v.display()
    );
    v
}

// The child-process wrapper lives in `util` (shared with `restart`);
// `packaging` takes `bin` from here.
pub(crate) use crate::util::bin;
use crate::util::{ServerProc, tail};

/// A `serve` child on its own data dir whose `/health` says `healthy`
/// (sandbox available): `openenv validate` and the episodes need it.
async fn start_healthy() -> ServerProc {
    let srv = ServerProc::start().await;
    let h: Value = reqwest::get(format!("{}/health", srv.url))
        .await
        .expect("GET /health")
        .json()
        .await
        .expect("health JSON");
    assert_eq!(h["status"], "healthy", "{h}\n{}", srv.log_tail());
    srv
}

/// What a bounded child process produced.
pub(crate) struct Ran {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion with output in temporary files (no pipe
/// deadlock), killing it after `limit`; panics on a timeout.
pub(crate) fn run_bounded(cmd: &mut Command, limit: Duration) -> Ran {
    let dir = tempfile::tempdir().expect("tempdir");
    let (o, e) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&o).expect("stdout file"))
        .stderr(std::fs::File::create(&e).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|err| panic!("spawn {cmd:?}: {err}"));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} timed out after {limit:?}\nstdout:\n{}\nstderr:\n{}",
                tail(&std::fs::read_to_string(&o).unwrap_or_default(), 40),
                tail(&std::fs::read_to_string(&e).unwrap_or_default(), 40)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Ran {
        status,
        stdout: std::fs::read_to_string(&o).unwrap_or_default(),
        stderr: std::fs::read_to_string(&e).unwrap_or_default(),
    }
}

/// Task 1's oracle actions rendered with the canonical values, through the
/// server crate's own registry (the same rendering the environment uses).
pub(crate) fn task1_oracle(tasks_dir: &Path) -> Vec<String> {
    let reg = server::tasks::TaskRegistry::load(tasks_dir).expect("load tasks");
    let def = reg.get(1).expect("task 1");
    let values = server::tasks::variants::canonical_values(&def.task);
    server::tasks::render_oracle(&def.oracle, &values).expect("render oracle")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_openenv_validate_and_generic_client_solve_task_1() {
    let venv = openenv_venv();
    let srv = start_healthy().await;

    // (a) `openenv validate --url`: the six criteria of the running-server check.
    let url = srv.url.clone();
    let validate = venv.join("bin/openenv");
    let v = tokio::task::spawn_blocking(move || {
        run_bounded(
            Command::new(validate).args(["validate", "--url", &url]),
            Duration::from_secs(120),
        )
    })
    .await
    .expect("join");
    let text = format!("{}\n{}", v.stdout, v.stderr);
    assert!(
        v.status.success() && text.contains("Verdict: PASS") && !text.contains("FAIL"),
        "openenv validate --url {} failed ({}):\n{text}\nserver log:\n{}",
        srv.url,
        v.status,
        srv.log_tail()
    );

    // (b) The stock GenericEnvClient plays task 1 with the oracle over /ws.
    let actions = task1_oracle(&util::root().join("tasks"));
    assert!(!actions.is_empty(), "task 1 has an oracle");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("actions.json");
    std::fs::write(&file, serde_json::to_vec(&actions).expect("json")).expect("write actions");
    let (py, script, url) = (
        venv.join("bin/python"),
        util::root().join("scripts/openenv_drive.py"),
        srv.url.clone(),
    );
    let d = tokio::task::spawn_blocking(move || {
        run_bounded(
            Command::new(py).arg(script).arg(&url).arg(&file),
            Duration::from_secs(600),
        )
    })
    .await
    .expect("join");
    assert!(
        d.status.success(),
        "openenv_drive.py failed ({}):\nstdout:\n{}\nstderr:\n{}\nserver log:\n{}",
        d.status,
        d.stdout,
        tail(&d.stderr, 40),
        srv.log_tail()
    );
    let lines: Vec<Value> = d
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect();
    let state = lines.last().expect("output")["state"].clone();
    let steps: Vec<&Value> = lines.iter().filter(|l| l.get("step").is_some()).collect();
    // The episode may end before `submit` once every leak is fixed.
    let taken = steps.len().saturating_sub(1);
    assert!(
        (1..=actions.len()).contains(&taken),
        "reset + one line per action taken: {}",
        d.stdout
    );
    let reset = steps[0];
    assert_eq!(reset["done"], false, "not done at reset");
    assert!(
        reset["leaks_current"].as_u64().unwrap_or(0) > 0,
        "task 1 starts with leaks: {reset}"
    );
    let last = steps.last().expect("a step");
    assert_eq!(
        last["reward"].as_f64(),
        Some(1.0),
        "oracle reaches reward 1.0 over /ws: {}",
        d.stdout
    );
    assert_eq!(last["done"], true, "episode done at the end: {last}");
    assert_eq!(last["leaks_current"], 0, "no leaks left: {last}");
    for s in &steps[1..] {
        let r = s["reward"].as_f64().expect("numeric reward");
        assert!((0.0..=1.0).contains(&r), "reward in [0,1]: {s}");
    }
    assert_eq!(
        state["step_count"].as_u64(),
        Some(taken as u64),
        "state counts the steps: {state}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_http_api_episode_like_the_baseline_agent() {
    let srv = start_healthy().await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    let post = |path: &str, body: Value| {
        let req = http.post(format!("{}{path}", srv.url)).json(&body);
        async move {
            let r = req.send().await.expect("request");
            let status = r.status();
            let v: Value = r.json().await.expect("JSON body");
            (status, v)
        }
    };

    let (st, reset) = post("/reset", json!({"task_id": 1})).await;
    assert_eq!(st, 200, "POST /reset: {reset}");
    let sid = reset["session_id"]
        .as_str()
        .expect("session_id in the envelope")
        .to_string();
    assert_eq!(reset["observation"]["session_id"], sid.as_str());
    assert_eq!(reset["done"], false);
    assert_eq!(
        reset["reward"].as_f64(),
        Some(0.0),
        "no reward at reset: {reset}"
    );
    assert_eq!(reset["observation"]["task_id"], 1);
    let leaks = reset["observation"]["leaks_initial"]
        .as_u64()
        .expect("leaks_initial");
    assert!(leaks > 0);

    // The baseline agent sends the action as a bare string; the structured
    // form {"command": ...} is accepted too.
    let (st, s1) = post("/step", json!({"session_id": sid, "action": "ls"})).await;
    assert_eq!(st, 200, "POST /step (string action): {s1}");
    let (st, s2) = post(
        "/step",
        json!({"session_id": sid, "action": {"command": "git log --oneline"}}),
    )
    .await;
    assert_eq!(st, 200, "POST /step (object action): {s2}");
    for s in [&s1, &s2] {
        let r = s["reward"].as_f64().expect("numeric reward");
        assert!((0.0..=1.0).contains(&r), "reward in [0,1]: {s}");
        assert_eq!(s["done"], false, "two reads do not end the episode: {s}");
        assert_eq!(
            s["observation"]["leaks_current"].as_u64(),
            Some(leaks),
            "reading fixes nothing: {s}"
        );
    }
    assert_eq!(s2["observation"]["steps_taken"], 2, "{s2}");

    let r = http
        .get(format!("{}/state", srv.url))
        .query(&[("session_id", &sid)])
        .send()
        .await
        .expect("state");
    assert_eq!(r.status(), 200);
    let state: Value = r.json().await.expect("state JSON");
    assert_eq!(state["step_count"], 2, "{state}");
    assert!(
        state.get("revealed").is_none(),
        "raw values only on explicit ?reveal=true: {state}"
    );

    // A step without a session and a malformed action are client errors, not 5xx.
    let (st, e) = post("/step", json!({"action": "ls"})).await;
    assert!(st.is_client_error(), "step without session_id: {st} {e}");
    let (st, e) = post("/step", json!({"session_id": sid, "action": 7})).await;
    assert!(st.is_client_error(), "numeric action: {st} {e}");

    let (st, c) = post("/close", json!({"session_id": sid})).await;
    assert!(st.is_success(), "POST /close: {st} {c}");
    let (st, e) = post("/step", json!({"session_id": sid, "action": "ls"})).await;
    assert!(st.is_client_error(), "step after close: {st} {e}");
}
