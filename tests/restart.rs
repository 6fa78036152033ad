//! Restart without losing data.
//!
//! With the real `secaudit serve` binary: the server is SIGKILLed while two
//! bash steps are sleeping inside the sandbox, one of which has already
//! fixed the task's leaks, and started again on the same data dir. Each
//! interrupted step is counted (an "interrupted by server restart" error,
//! no exit code), its change to the workspace is kept and graded (the fix
//! ends that episode with success), and state, workspace and recording
//! agree. The other session is then finished with the oracle; the
//! recording survives, continues and never holds a planted secret value.
//! SIGTERM shuts the server down cleanly (exit 0) with the state on disk.
//!
//! The first start is configured by flags, the second by environment
//! variables only (`PORT`, `SECAUDIT_*`, `MAX_CONCURRENT_ENVS`), so both
//! configuration paths of `serve` are exercised.
//!
//! In process (no child, no kill): the other crash windows, staged on disk
//! between two `Environment`s on one data dir: a workspace changed while the
//! server was down is regraded on resume, a recording one line behind its
//! state is completed, and a marker of a step the state already holds is
//! dropped without counting a step twice.

use crate::util::{self, ServeConfig, ServeOpts, ServerProc};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One request (a step runs the task's tests in the sandbox).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Longest wait for an in-flight command to reach its `sleep`.
const INFLIGHT_WAIT: Duration = Duration::from_secs(60);

/// What the resumed session says about an interrupted step.
const INTERRUPTED: &str = "interrupted by server restart";

async fn start(data: &Path, log: &Path, config: ServeConfig) -> ServerProc {
    ServerProc::start_with(ServeOpts {
        data: Some(data.to_path_buf()),
        log: Some(log.to_path_buf()),
        config,
        max_sessions: Some(4),
        ..Default::default()
    })
    .await
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

async fn reset(http: &reqwest::Client, base: &str, episode: &str) -> String {
    let b = post(
        http,
        format!("{base}/reset"),
        json!({ "task_id": 1, "episode_id": episode }),
    )
    .await;
    b["session_id"].as_str().expect("session_id").to_string()
}

/// The recording's lines, parsed (a torn line fails the test: nothing here
/// kills the server mid-append).
fn recording(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSONL line {l:?}: {e}")))
        .collect()
}

/// Step numbers of the recording's `step` lines, in file order.
fn recorded_steps(rec: &[Value]) -> Vec<u64> {
    rec.iter()
        .filter(|l| l["event"] == "step")
        .filter_map(|l| l["step"].as_u64())
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

fn session_dir(data: &Path, sid: &str) -> PathBuf {
    data.join("sessions").join(sid)
}

/// Sends a step that will not finish (its command ends in a long sleep)
/// and waits until the command has written `flag` into the workspace, so
/// the kill lands mid-command, after its file changes.
async fn step_in_flight(
    http: &reqwest::Client,
    base: &str,
    data: &Path,
    sid: &str,
    cmd: &str,
    flag: &str,
) -> tokio::task::JoinHandle<reqwest::Result<reqwest::Response>> {
    let h = {
        let http = http.clone();
        let url = format!("{base}/step");
        let body = json!({ "session_id": sid, "action": cmd });
        tokio::spawn(async move { http.post(url).json(&body).send().await })
    };
    let f = session_dir(data, sid).join("workspace").join(flag);
    let t = std::time::Instant::now();
    while !f.exists() {
        assert!(
            t.elapsed() < INFLIGHT_WAIT,
            "the in-flight command never wrote {}",
            f.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_command_then_resume_and_sigterm() {
    let data_dir = tempfile::tempdir().expect("tempdir");
    let data = data_dir.path();
    let log = data.with_extension("restart.log");
    let http = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .expect("client");

    // First life: two sessions of task 1. Session A takes a few steps that
    // do not end the episode, one of which puts a planted value into its
    // output (so the redaction of the recording is tested).
    let mut a = start(data, &log, ServeConfig::Flags).await;
    let (values, oracle) = truth(data);
    let sa = reset(&http, &a.url, "restart-a").await;
    let sb = reset(&http, &a.url, "restart-b").await;
    let secret = &values[0];
    let before = [
        "list_files".to_string(),
        "cat archiver/settings.py".to_string(),
        format!("grep -rn '{secret}' . || true"),
    ];
    let mut last = Value::Null;
    for cmd in &before {
        last = step(&http, &a.url, &sa, cmd).await;
        assert_eq!(last["done"], false, "{cmd}: {last}");
    }
    let out = last["observation"]["last_action"]["stdout"]
        .as_str()
        .unwrap_or("");
    assert!(out.contains(secret.as_str()), "{out:?}");
    let a_before = get_state(&http, &a.url, &sa).await;
    assert_eq!(a_before["step_count"], before.len());
    // Session B inspects the file, then (below) runs the oracle's fix.
    let b1 = step(&http, &a.url, &sb, &oracle[0]).await;
    let leaks_b = b1["observation"]["leaks_current"].as_u64().expect("leaks");
    assert!(leaks_b > 0, "{b1}");

    // Both sessions in the middle of a bash command when the server dies:
    // A's command only made a file; B's already fixed every leak.
    let cmd_a = "echo partial > partial.txt; touch .started; sleep 30";
    let cmd_b = format!("{}\ntouch .started; sleep 30", oracle[1]);
    let fa = step_in_flight(&http, &a.url, data, &sa, cmd_a, ".started").await;
    let fb = step_in_flight(&http, &a.url, data, &sb, &cmd_b, ".started").await;
    let (st, _) = a.signal_and_wait("KILL").await;
    assert!(!st.success(), "SIGKILL is not a clean exit: {st}");
    for f in [fa, fb] {
        assert!(
            f.await.expect("request task").is_err(),
            "an in-flight step gets no reply from a killed server"
        );
    }
    let left = crate::load::wait_no_leftovers(data).await;
    assert!(
        left.is_empty(),
        "sandbox processes outlive the killed server: {left:#?}"
    );
    let (da, db) = (session_dir(data, &sa), session_dir(data, &sb));
    for (d, steps) in [(&da, before.len()), (&db, 1)] {
        let saved: Value =
            serde_json::from_slice(&std::fs::read(d.join("session.json")).expect("state"))
                .expect("JSON");
        assert_eq!(
            saved["steps"], steps,
            "the saved state predates the killed step"
        );
        assert!(
            d.join("inflight.json").is_file(),
            "the killed step left its in-flight marker in {}",
            d.display()
        );
        assert_eq!(
            recorded_steps(&recording(&d.join("recording.jsonl"))).len(),
            steps
        );
    }
    drop(a);

    // Second life, configured by environment variables only.
    let mut b2 = start(data, &log, ServeConfig::EnvVars).await;

    // A: the killed step is step 4, with the error and no exit code; the
    // earlier history and the grade (nothing was fixed) are unchanged.
    let a_after = get_state(&http, &b2.url, &sa).await;
    let oa = &a_after["observation"];
    assert_eq!(a_after["step_count"], before.len() + 1, "{a_after}");
    assert_eq!(oa["episode_id"], "restart-a");
    assert_eq!(oa["done"], false, "{oa}");
    let la = &oa["last_action"];
    assert_eq!(la["command"], cmd_a);
    assert!(la["exit_code"].is_null(), "{la}");
    assert!(
        la["stderr"].as_str().unwrap_or("").contains(INTERRUPTED),
        "{la}"
    );
    let hist = oa["history"].as_array().expect("history");
    assert_eq!(
        &hist[..before.len()],
        &a_before["observation"]["history"].as_array().unwrap()[..],
        "history before the kill is kept"
    );
    assert_eq!(hist[before.len()]["command"], cmd_a);
    assert!(hist[before.len()]["exit_code"].is_null());
    for k in ["leaks_current", "visible_secrets", "hidden_count"] {
        assert_eq!(oa[k], a_before["observation"][k], "{k}");
    }
    assert_eq!(
        std::fs::read_to_string(da.join("workspace/partial.txt")).expect("partial.txt"),
        "partial\n",
        "the killed step's file change is kept"
    );

    // B: the killed step fixed every leak, and the regrade of the real
    // workspace says so: the episode ended with success at step 2.
    let b_after = get_state(&http, &b2.url, &sb).await;
    let ob = &b_after["observation"];
    assert_eq!(b_after["step_count"], 2, "{b_after}");
    assert_eq!(ob["leaks_current"], 0, "{ob}");
    assert_eq!(ob["success"], true, "{ob}");
    assert_eq!(ob["done"], true, "{ob}");
    assert!(
        ob["reward"].as_f64().unwrap() > b1["reward"].as_f64().unwrap(),
        "{ob}"
    );
    assert!(
        ob["last_action"]["stderr"]
            .as_str()
            .unwrap_or("")
            .contains(INTERRUPTED)
    );
    let r = http
        .post(format!("{}/step", b2.url))
        .json(&json!({"session_id": sb, "action": "ls"}))
        .send()
        .await
        .expect("step");
    assert_eq!(r.status(), 409, "the recovered episode is over");

    // State == recording for both: markers gone, every step recorded once,
    // the interrupted line flagged and carrying the reward the state has.
    for (d, state) in [(&da, &a_after), (&db, &b_after)] {
        assert!(
            !d.join("inflight.json").exists(),
            "marker removed on resume"
        );
        let rec = recording(&d.join("recording.jsonl"));
        let n = state["step_count"].as_u64().unwrap();
        assert_eq!(recorded_steps(&rec), (1..=n).collect::<Vec<_>>());
        let l = rec.last().unwrap();
        assert_eq!(l["interrupted"], true, "{l}");
        assert_eq!(l["reward"], state["observation"]["reward"]);
        assert_eq!(l["done"], state["observation"]["done"]);
    }

    // Finish A with the oracle after the restart.
    let mut steps = before.len() as u64 + 1;
    for cmd in &oracle {
        last = step(&http, &b2.url, &sa, cmd).await;
        steps += 1;
        assert_eq!(last["observation"]["steps_taken"], steps, "{last}");
        if last["done"] == true {
            break;
        }
    }
    assert_eq!(last["done"], true, "oracle ends the episode: {last}");
    assert_eq!(last["observation"]["success"], true, "{last}");
    let hist = last["observation"]["history"].as_array().expect("history");
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
        serde_json::from_slice(&std::fs::read(da.join("session.json")).expect("session.json"))
            .expect("JSON");
    assert_eq!(saved["steps"], steps);
    assert_eq!(saved["done"], true);
    assert_eq!(saved["success"], true);

    // The recordings continued across the restart and hold no planted value.
    for d in [&da, &db] {
        let rec_path = d.join("recording.jsonl");
        let rec = recording(&rec_path);
        assert_eq!(rec[0]["event"], "reset");
        let n = if *d == da { steps } else { 2 };
        assert_eq!(rec.len() as u64, 1 + n, "reset + every step, once");
        assert_eq!(recorded_steps(&rec), (1..=n).collect::<Vec<_>>());
        assert_eq!(rec.last().unwrap()["done"], true);
        let text = std::fs::read_to_string(&rec_path).unwrap();
        for v in &values {
            assert!(
                !text.contains(v.as_str()),
                "recording leaks a planted value"
            );
        }
    }
    let _ = std::fs::remove_file(&log);
}

/// The crash windows a kill cannot hit reliably, staged on disk between two
/// environments on one data dir.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_regrades_and_reconciles_in_process() {
    let data_dir = tempfile::tempdir().expect("tempdir");
    let data = data_dir.path();
    let env = util::env_at(data, 4).await;
    let (values, _) = truth(data);
    // P: its workspace is fixed while the server is down (no step did it).
    let p = util::reset(&env, 1).await.session_id;
    let p1 = util::step(&env, &p, "inspect_file archiver/settings.py").await;
    assert!(p1.leaks_current > 0);
    // Q: killed after its state was saved and before the recording line
    // and the marker removal: both steps are in the state, one is missing
    // from the recording, and the marker names the saved step.
    let q = util::reset(&env, 1).await.session_id;
    util::step(&env, &q, "list_files").await;
    let q2 = util::step(&env, &q, "inspect_file archiver/settings.py").await;
    drop(env);

    let (dp, dq) = (session_dir(data, &p), session_dir(data, &q));
    let settings = dp.join("workspace/archiver/settings.py");
    let mut src = std::fs::read_to_string(&settings).expect("settings.py");
    for v in &values {
        src = src.replace(v.as_str(), "");
    }
    std::fs::write(&settings, src).unwrap();
    let rq = dq.join("recording.jsonl");
    let text = std::fs::read_to_string(&rq).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    assert_eq!(kept.len(), 3, "reset + 2 steps");
    std::fs::write(&rq, format!("{}\n", kept[..2].join("\n"))).unwrap();
    std::fs::write(
        dq.join("inflight.json"),
        json!({"step": 2, "command": "inspect_file archiver/settings.py", "started_unix": 0})
            .to_string(),
    )
    .unwrap();

    let t = std::time::Instant::now();
    let env = util::env_at(data, 4).await;
    eprintln!(
        "restart: in-process start with 2 sessions to recover (1 regraded changed, 1 reconciled) took {:.2} s",
        t.elapsed().as_secs_f64()
    );
    // P: regraded from its files, no step added, the change recorded.
    let sp = env.state(&p).expect("P resumed");
    assert_eq!(sp.step_count, 1, "a regrade is not a step");
    assert_eq!(sp.observation.leaks_current, 0, "{:?}", sp.observation);
    assert!(sp.observation.reward > p1.reward);
    let rec = recording(&dp.join("recording.jsonl"));
    let l = rec.last().unwrap();
    assert_eq!(l["event"], "resume_regrade", "{l}");
    assert_eq!(l["after_step"], 1);
    assert_eq!(recorded_steps(&rec), vec![1]);

    // Q: no step counted twice, the missing line restored, marker gone.
    let sq = env.state(&q).expect("Q resumed");
    assert_eq!(sq.step_count, 2);
    assert_eq!(sq.observation.history, q2.history);
    assert_eq!(sq.observation.leaks_current, q2.leaks_current);
    assert!(!dq.join("inflight.json").exists());
    let rec = recording(&rq);
    assert_eq!(recorded_steps(&rec), vec![1, 2]);
    let l = rec.last().unwrap();
    assert_eq!(l["recovered"], true, "{l}");
    assert_eq!(l["observation"]["steps_taken"], 2);
    let all = std::fs::read_to_string(&rq).unwrap();
    for v in &values {
        assert!(!all.contains(v.as_str()), "recovered line is redacted");
    }

    // Both go on normally after the restart.
    let q3 = util::step(&env, &q, "submit").await;
    assert_eq!(q3.steps_taken, 3);
    assert!(q3.done);
}
