//! Restart without losing data: the real `secaudit serve` binary is killed
//! (SIGKILL) mid-episode and started again on the same data dir; the
//! session continues where it stood (steps, reward, history) and can be
//! finished with the oracle. The per-session recording survives, continues,
//! and never holds a planted secret value. SIGTERM shuts the server down
//! cleanly (exit 0) with the session state on disk.
//!
//! The first start is configured by flags, the second by environment
//! variables only (`PORT`, `SECAUDIT_*`, `MAX_CONCURRENT_ENVS`), so both
//! configuration paths of `serve` are exercised.

use crate::openenv_client::{bin, free_port, tail};
use crate::util;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Longest wait for `/health` after spawning (the first start generates
/// every task into the empty data dir).
const STARTUP: Duration = Duration::from_secs(240);

/// Longest wait for the process to exit after a signal.
const EXIT_WAIT: Duration = Duration::from_secs(30);

/// One request (a step runs the task's tests in the sandbox).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// How a server is configured.
enum Config {
    Flags,
    EnvVars,
}

/// A `secaudit serve` child on `data`; killed on drop if still running.
struct Server {
    child: Child,
    url: String,
    log: PathBuf,
}

/// Every variable `serve` reads, removed from the child's environment so
/// the test's own environment cannot change the configuration.
const SERVE_VARS: [&str; 8] = [
    "PORT",
    "SECAUDIT_HOST",
    "SECAUDIT_DATA_DIR",
    "SECAUDIT_TASKS_DIR",
    "SECAUDIT_VENV",
    "MAX_CONCURRENT_ENVS",
    "SESSION_IDLE_TIMEOUT_S",
    "SECAUDIT_LOG_FORMAT",
];

fn venv() -> PathBuf {
    std::env::var_os("SECAUDIT_VENV").map_or_else(|| util::root().join(".venv"), PathBuf::from)
}

impl Server {
    async fn start(data: &Path, log: PathBuf, how: Config) -> Server {
        let port = free_port();
        let root = util::root();
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("log file");
        let err = out.try_clone().expect("log file");
        let mut cmd = Command::new(bin());
        cmd.arg("serve");
        for v in SERVE_VARS {
            cmd.env_remove(v);
        }
        match how {
            Config::Flags => {
                cmd.args(["--host", "127.0.0.1", "--port", &port.to_string()])
                    .arg("--data-dir")
                    .arg(data)
                    .arg("--tasks-dir")
                    .arg(root.join("tasks"))
                    .arg("--venv")
                    .arg(venv())
                    .args(["--max-sessions", "4"]);
            }
            Config::EnvVars => {
                cmd.env("SECAUDIT_HOST", "127.0.0.1")
                    .env("PORT", port.to_string())
                    .env("SECAUDIT_DATA_DIR", data)
                    .env("SECAUDIT_TASKS_DIR", root.join("tasks"))
                    .env("SECAUDIT_VENV", venv())
                    .env("MAX_CONCURRENT_ENVS", "4");
            }
        }
        let child = cmd
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("spawn secaudit serve");
        let mut s = Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        };
        s.wait_healthy().await;
        s
    }

    fn log_tail(&self) -> String {
        tail(&std::fs::read_to_string(&self.log).unwrap_or_default(), 40)
    }

    async fn wait_healthy(&mut self) {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .expect("client");
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                panic!("secaudit serve exited early ({st}):\n{}", self.log_tail());
            }
            if let Ok(r) = http.get(format!("{}/health", self.url)).send().await
                && r.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!(
            "secaudit serve not up at {} within {STARTUP:?}:\n{}",
            self.url,
            self.log_tail()
        );
    }

    /// Sends `signal` (by name, through kill(1)) and waits, bounded, for the
    /// exit; returns the status and how long it took.
    async fn signal_and_wait(&mut self, signal: &str) -> (ExitStatus, Duration) {
        let pid = self.child.id().to_string();
        let t = Instant::now();
        let st = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .expect("run kill");
        assert!(st.success(), "kill -{signal} {pid}");
        loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                return (st, t.elapsed());
            }
            assert!(
                t.elapsed() < EXIT_WAIT,
                "no exit within {EXIT_WAIT:?} of SIG{signal}:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn post(http: &reqwest::Client, url: String, body: Value) -> Value {
    let r = http
        .post(&url)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let status = r.status();
    let v: Value = r.json().await.expect("JSON reply");
    assert!(status.is_success(), "POST {url} {body}: {status}: {v}");
    v
}

async fn get_state(http: &reqwest::Client, base: &str, sid: &str) -> Value {
    let url = format!("{base}/state?session_id={sid}");
    let r = http.get(&url).send().await.expect("GET /state");
    let status = r.status();
    let v: Value = r.json().await.expect("JSON reply");
    assert!(status.is_success(), "GET {url}: {status}: {v}");
    v
}

async fn step(http: &reqwest::Client, base: &str, sid: &str, cmd: &str) -> Value {
    post(
        http,
        format!("{base}/step"),
        json!({ "session_id": sid, "action": cmd }),
    )
    .await
}

/// The recording's lines, parsed.
fn recording(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSONL line {l:?}: {e}")))
        .collect()
}

/// The planted values and the oracle of task 1, from its generated ground
/// truth in the server's data dir.
fn truth(data: &Path) -> (Vec<String>, Vec<String>) {
    let p = data.join("tasks/task_01/truth.json");
    let t: Value = serde_json::from_slice(&std::fs::read(&p).expect("truth.json")).expect("JSON");
    let values: Vec<String> = t["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| s["value"].as_str().expect("value").to_string())
        .collect();
    let oracle: Vec<String> = t["oracle"]
        .as_array()
        .expect("oracle")
        .iter()
        .map(|a| a.as_str().expect("action").to_string())
        .collect();
    assert!(!values.is_empty() && !oracle.is_empty(), "{}", p.display());
    (values, oracle)
}

/// The parts of an observation that must survive a restart unchanged.
fn progress(obs: &Value) -> Value {
    json!({
        "steps_taken": obs["steps_taken"],
        "reward": obs["reward"],
        "history": obs["history"],
        "leaks_current": obs["leaks_current"],
        "visible_secrets": obs["visible_secrets"],
        "done": obs["done"],
        "episode_id": obs["episode_id"],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_episode_then_resume_and_sigterm() {
    let data = tempfile::tempdir().expect("tempdir");
    let log = data.path().with_extension("restart.log");
    let http = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .expect("client");

    // First life: reset and a few steps that do not end the episode, some
    // of which put a planted value into the action or its output.
    let mut a = Server::start(data.path(), log.clone(), Config::Flags).await;
    let (values, oracle) = truth(data.path());
    let b = post(
        &http,
        format!("{}/reset", a.url),
        json!({ "task_id": 1, "episode_id": "restart-ep" }),
    )
    .await;
    let sid = b["session_id"].as_str().expect("session_id").to_string();
    let secret = &values[0];
    let before = [
        "list_files".to_string(),
        "cat archiver/settings.py".to_string(),
        format!("grep -rn '{secret}' . || true"),
    ];
    let mut last = Value::Null;
    for cmd in &before {
        last = step(&http, &a.url, &sid, cmd).await;
        assert_eq!(last["done"], false, "{cmd}: {last}");
    }
    let out = last["observation"]["last_action"]["stdout"]
        .as_str()
        .unwrap_or("");
    assert!(
        out.contains(secret.as_str()),
        "the agent sees the value it greps for (so redaction below is tested): {out:?}"
    );
    let state_before = get_state(&http, &a.url, &sid).await;
    assert_eq!(state_before["step_count"], before.len());

    // SIGKILL while a step is in flight (its command sleeps far longer than
    // we wait): that step is lost, not half-recorded.
    let inflight = {
        let http = http.clone();
        let url = format!("{}/step", a.url);
        let body = json!({ "session_id": sid, "action": "echo partial > partial.txt; sleep 20" });
        tokio::spawn(async move { http.post(url).json(&body).send().await })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;

    let (st, _) = a.signal_and_wait("KILL").await;
    assert!(!st.success(), "SIGKILL is not a clean exit: {st}");
    assert!(
        inflight.await.expect("request task").is_err(),
        "the in-flight step gets no reply from a killed server"
    );
    let left = crate::load::wait_no_leftovers(data.path()).await;
    assert!(
        left.is_empty(),
        "sandbox processes outlive the killed server: {left:#?}"
    );
    let dir = data.path().join("sessions").join(&sid);
    let rec_path = dir.join("recording.jsonl");
    assert!(
        dir.join("session.json").is_file(),
        "state on disk after SIGKILL"
    );
    let rec1 = recording(&rec_path);
    assert_eq!(
        rec1.len(),
        1 + before.len(),
        "reset + steps recorded: {rec1:?}"
    );
    drop(a);

    // Second life, configured by environment variables only.
    let mut b2 = Server::start(data.path(), log.clone(), Config::EnvVars).await;
    let state_after = get_state(&http, &b2.url, &sid).await;
    assert_eq!(state_after["step_count"], state_before["step_count"]);
    assert_eq!(state_after["episode_id"], "restart-ep");
    assert_eq!(
        progress(&state_after["observation"]),
        progress(&state_before["observation"]),
        "the session resumes exactly where it stood"
    );

    // Finish the episode with the oracle.
    let mut steps = before.len() as u64;
    for cmd in &oracle {
        last = step(&http, &b2.url, &sid, cmd).await;
        steps += 1;
        assert_eq!(last["observation"]["steps_taken"], steps, "{last}");
        if last["done"] == true {
            break;
        }
    }
    assert_eq!(last["done"], true, "oracle ends the episode: {last}");
    assert_eq!(last["observation"]["success"], true, "{last}");
    let reward = last["reward"].as_f64().expect("reward");
    assert!((reward - 1.0).abs() < 1e-9, "reward {reward}: {last}");
    let hist = last["observation"]["history"].as_array().expect("history");
    let cmds: Vec<&str> = hist.iter().filter_map(|h| h["command"].as_str()).collect();
    assert_eq!(
        &cmds[..before.len()],
        &before.iter().map(String::as_str).collect::<Vec<_>>()[..],
        "history keeps the steps before the restart"
    );
    let nums: Vec<u64> = hist.iter().filter_map(|h| h["step"].as_u64()).collect();
    assert_eq!(
        nums,
        (1..=steps).collect::<Vec<_>>(),
        "steps numbered across the restart"
    );

    // SIGTERM: a clean, prompt exit with the final state on disk.
    let (st, took) = b2.signal_and_wait("TERM").await;
    assert!(
        st.success(),
        "SIGTERM exits 0, got {st}:\n{}",
        b2.log_tail()
    );
    eprintln!("restart: SIGTERM to exit took {:.2} s", took.as_secs_f64());
    drop(b2);
    let saved: Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).expect("session.json"))
            .expect("JSON");
    assert_eq!(saved["steps"], steps);
    assert_eq!(saved["done"], true);
    assert_eq!(saved["success"], true);

    // The recording continued across the restart and holds no planted value.
    let rec = recording(&rec_path);
    assert_eq!(rec.len() as u64, 1 + steps, "reset + every step");
    assert_eq!(rec[0]["event"], "reset");
    let rec_steps: Vec<u64> = rec[1..].iter().filter_map(|l| l["step"].as_u64()).collect();
    assert_eq!(rec_steps, (1..=steps).collect::<Vec<_>>());
    assert_eq!(rec.last().unwrap()["done"], true);
    let text = std::fs::read_to_string(&rec_path).unwrap();
    for v in &values {
        assert!(
            !text.contains(v.as_str()),
            "recording leaks a planted value"
        );
    }
    let _ = std::fs::remove_file(&log);
}
