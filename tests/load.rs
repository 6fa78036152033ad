//! Load: 64 concurrent sessions over loopback HTTP against the real
//! environment, each playing its task's oracle to the end; then every
//! session is closed and nothing may be left behind (session directories,
//! sandbox processes). Also: the 65th session is refused with a clear
//! capacity error, and a WebSocket that goes silent or drops without a close
//! frame does not keep its slot.
//!
//! Bounded in count (64 sessions, each task's oracle, at most a few dozen
//! steps each) and in time (every request has a timeout, the whole run a
//! deadline). Speed and memory are printed as a table on stderr and written
//! to `target/load-report.json`; they are measurements, never asserted.

use crate::util;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use server::env::Environment;
use server::http::{AppState, HttpConfig};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// Concurrent sessions, and the server's limit.
const SESSIONS: usize = 64;

/// The whole load run, reset to close, must end within this (a hang is a
/// failure, not a stuck CI job).
const RUN_DEADLINE: Duration = Duration::from_secs(600);

/// One HTTP request (a step runs bash and the health tests in the sandbox;
/// with 64 sessions on two cores each waits its turn).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(180);

/// Tasks of the 64 sessions: mostly the cheap easy tasks 1-5, plus one
/// session each of a few medium and hard ones (git history, encoded and
/// conflicting secrets) so the load is not one code path.
fn plan() -> Vec<u32> {
    let others = [6, 8, 9, 11];
    let mut v: Vec<u32> = (0..SESSIONS - others.len())
        .map(|i| (i % 5) as u32 + 1)
        .collect();
    v.extend(others);
    v
}

/// Serves the real router on 127.0.0.1:0 with a chosen WebSocket idle
/// timeout (`util::serve` keeps the 30-minute default). Returns a clone of
/// the router's state too, to watch its WebSocket slots.
async fn serve_with(
    env: Environment,
    ws_idle: Duration,
) -> (SocketAddr, AppState, tokio::task::JoinHandle<()>) {
    let cfg = HttpConfig {
        max_sessions: env.max_sessions(),
        ws_idle_timeout: ws_idle,
    };
    let state = AppState::from_environment(env, cfg);
    let (addr, h) = util::serve_state(state.clone()).await;
    (addr, state, h)
}

/// A field of `/proc/self/status` in kB (`VmRSS`, `VmHWM`).
fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} not in /proc/self/status"))
}

/// Bytes of regular files under `p`, symlinks not followed, bounded in
/// depth so a pathological tree cannot hang the test.
fn dir_bytes(p: &Path) -> u64 {
    fn walk(p: &Path, depth: u32) -> u64 {
        let Ok(md) = std::fs::symlink_metadata(p) else {
            return 0;
        };
        if md.is_file() {
            return md.len();
        }
        if !md.is_dir() || depth > 64 {
            return 0;
        }
        std::fs::read_dir(p)
            .map(|rd| rd.flatten().map(|e| walk(&e.path(), depth + 1)).sum())
            .unwrap_or(0)
    }
    walk(p, 0)
}

/// Entries of the data dir's session area (empty when it does not exist).
fn session_dirs(data: &Path) -> Vec<String> {
    std::fs::read_dir(data.join("sessions"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `(pid, ppid, comm)` of every process in /proc.
fn processes() -> Vec<(u32, u32, String)> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    rd.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // "pid (comm) state ppid ...": comm may hold spaces and parens.
            let open = stat.find('(')?;
            let close = stat.rfind(')')?;
            let comm = stat.get(open + 1..close)?.to_string();
            let ppid = stat.get(close + 2..)?.split(' ').nth(1)?.parse().ok()?;
            Some((pid, ppid, comm))
        })
        .collect()
}

/// Processes this test left behind: descendants of this process (sandboxed
/// commands, bwrap, pytest), any process whose working directory is in
/// `data` (a fallback-mode command that daemonised out of our tree), and
/// any whose command line names `data` (a bwrap, which binds the session's
/// workspace, orphaned by a killed server).
/// Meant for nextest's process-per-test; under `cargo test` a concurrent
/// test's sandbox would count too.
pub(crate) fn leftover_processes(data: &Path) -> Vec<String> {
    let me = std::process::id();
    let procs = processes();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, ppid, _) in &procs {
        children.entry(*ppid).or_default().push(*pid);
    }
    let mut ours = std::collections::HashSet::new();
    let mut todo = vec![me];
    while let Some(p) = todo.pop() {
        for c in children.get(&p).into_iter().flatten() {
            if ours.insert(*c) {
                todo.push(*c);
            }
        }
    }
    let data = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
    // The health grader's staged runs (server/src/health/scratch.rs) and
    // runners (server/src/health/runner.rs) are the server's, not a
    // session's: up to STAGED_RUNS + RUNNERS_PER_GRADER sandboxes whose
    // bootstrap waits for a key on a pipe (a staged run's stdin, an idle
    // runner's; a forked run's stdin is /dev/null). They, and their bwrap
    // ancestors, are not leftovers; more of them, or a bootstrap past its
    // key (a run still going), are.
    let parent: HashMap<u32, u32> = procs.iter().map(|(p, pp, _)| (*p, *pp)).collect();
    let mut staged = std::collections::HashSet::new();
    let mut staged_runs = 0;
    for (pid, _, comm) in &procs {
        // The bootstrap itself (its bwraps share the pipe and the text).
        let waiting = ours.contains(pid)
            && comm.starts_with("python")
            && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let needle = b"/grader-boot/boot.py";
                c.windows(needle.len()).any(|w| w == needle)
            })
            && std::fs::read_link(format!("/proc/{pid}/fd/0"))
                .is_ok_and(|l| l.to_string_lossy().starts_with("pipe:"));
        if waiting {
            staged_runs += 1;
            let mut p = *pid;
            while p != me && staged.insert(p) {
                p = parent.get(&p).copied().unwrap_or(me);
            }
        }
    }
    if staged_runs > server::health::STAGED_RUNS + server::health::RUNNERS_PER_GRADER {
        staged.clear();
    }
    procs
        .iter()
        .filter(|(pid, _, _)| !staged.contains(pid))
        .filter(|(pid, _, _)| {
            ours.contains(pid)
                || std::fs::read_link(format!("/proc/{pid}/cwd"))
                    .is_ok_and(|c| c.starts_with(&data))
                || std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                    let needle = data.as_os_str().as_encoded_bytes();
                    c.windows(needle.len().max(1)).any(|w| w == needle)
                })
        })
        .map(|(pid, ppid, comm)| format!("{pid} (parent {ppid}): {comm}"))
        .collect()
}

/// Polls (bounded) until no process is left; returns what is still there.
pub(crate) async fn wait_no_leftovers(data: &Path) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = leftover_processes(data);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What one session did.
#[derive(Debug)]
struct Outcome {
    task: u32,
    session: String,
    steps: u32,
    reward: f64,
    success: bool,
    /// Per step, seconds from request to reply.
    latencies: Vec<f64>,
}

/// POSTs JSON; returns status and body, or a description of the failure.
async fn post(http: &reqwest::Client, url: String, body: Value) -> Result<(u16, Value), String> {
    let r = http
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = r.status().as_u16();
    let v = r
        .json::<Value>()
        .await
        .map_err(|e| format!("POST {url}: non-JSON reply: {e}"))?;
    Ok((status, v))
}

/// Resets `task` and waits at the barrier (always, so one failed reset
/// cannot deadlock the others), then plays `oracle` until `done`.
async fn run_session(
    http: reqwest::Client,
    base: String,
    task: u32,
    oracle: Arc<Vec<String>>,
    barrier: Arc<tokio::sync::Barrier>,
) -> Result<Outcome, String> {
    let reset = post(&http, format!("{base}/reset"), json!({ "task_id": task })).await;
    barrier.wait().await;
    let (status, b) = reset?;
    if status != 200 {
        return Err(format!("task {task}: reset {status}: {b}"));
    }
    let session = b["session_id"]
        .as_str()
        .ok_or_else(|| format!("task {task}: reset without session_id: {b}"))?
        .to_string();
    let mut last = b;
    let mut latencies = Vec::new();
    for cmd in oracle.iter() {
        let t = Instant::now();
        let (status, b) = post(
            &http,
            format!("{base}/step"),
            json!({ "session_id": session, "action": cmd }),
        )
        .await?;
        latencies.push(t.elapsed().as_secs_f64());
        if status != 200 {
            return Err(format!("task {task}: step {cmd:?}: {status}: {b}"));
        }
        let done = b["done"] == true;
        last = b;
        if done {
            break;
        }
    }
    let obs = &last["observation"];
    Ok(Outcome {
        task,
        session,
        steps: obs["steps_taken"].as_u64().unwrap_or(0) as u32,
        reward: last["reward"].as_f64().unwrap_or(f64::NAN),
        success: obs["success"] == true && last["done"] == true,
        latencies,
    })
}

/// Reads the first message of a fresh WebSocket (bounded).
async fn first_ws_message(addr: SocketAddr) -> Value {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("ws connect");
    let m = tokio::time::timeout(Duration::from_secs(30), ws.next())
        .await
        .expect("ws frame in time")
        .expect("ws open")
        .expect("ws frame");
    match m {
        Message::Text(t) => serde_json::from_str(t.as_str()).expect("JSON frame"),
        other => panic!("expected a text frame, got {other:?}"),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report_path() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| util::root().join("target"))
        .join("load-report.json")
}

/// 64 sessions at once, every one to the end with reward 1.0, the 65th
/// refused over HTTP and WebSocket, and a clean data dir and process table
/// after closing them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_sessions_to_the_end() {
    let t0 = Instant::now();
    let (env, data) = util::env_with(SESSIONS).await;
    let plan = plan();
    // Build every task's runtime (pristine test manifest) before serving, so
    // the load measures episodes, not first-use preparation.
    let mut oracles: HashMap<u32, Arc<Vec<String>>> = HashMap::new();
    for t in &plan {
        if !oracles.contains_key(t) {
            let o = env.oracle(*t, None).await.expect("oracle");
            assert!(!o.is_empty(), "task {t} has oracle actions");
            oracles.insert(*t, Arc::new(o));
        }
    }
    let setup_s = t0.elapsed().as_secs_f64();
    let rss_idle_kb = status_kb("VmRSS");
    let probe = env.clone();
    let (addr, state, server) = serve_with(env, Duration::from_secs(1800)).await;
    let base = format!("http://{addr}");
    let http = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .pool_max_idle_per_host(SESSIONS)
        .build()
        .expect("client");

    let run = async {
        let barrier = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
        let t_reset = Instant::now();
        let handles: Vec<_> = plan
            .iter()
            .map(|t| {
                tokio::spawn(run_session(
                    http.clone(),
                    base.clone(),
                    *t,
                    oracles[t].clone(),
                    barrier.clone(),
                ))
            })
            .collect();
        barrier.wait().await;
        let reset_s = t_reset.elapsed().as_secs_f64();

        // All 64 are live: the 65th is refused, over HTTP and WebSocket.
        assert_eq!(probe.active_sessions(), SESSIONS, "all 64 resets succeeded");
        let rss_full_kb = status_kb("VmRSS");
        let data_reset = dir_bytes(&data.path().join("sessions"));
        let (status, b) = post(&http, format!("{base}/reset"), json!({ "task_id": 1 }))
            .await
            .expect("65th reset answers");
        assert_eq!(status, 429, "65th session: {b}");
        assert_eq!(b["error"]["code"], "capacity_reached", "{b}");
        assert_eq!(b["error"]["max_sessions"], SESSIONS, "{b}");
        assert!(
            b["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("capacity")),
            "{b}"
        );
        let f = first_ws_message(addr).await;
        assert_eq!(f["type"], "error", "{f}");
        assert_eq!(f["data"]["code"], "CAPACITY_REACHED", "{f}");
        assert_eq!(f["data"]["max_sessions"], SESSIONS, "{f}");
        assert_eq!(probe.active_sessions(), SESSIONS, "refusals take no slot");

        let t_steps = Instant::now();
        let mut outcomes = Vec::new();
        let mut failures = Vec::new();
        for h in handles {
            match h.await.expect("session task") {
                Ok(o) => outcomes.push(o),
                Err(e) => failures.push(e),
            }
        }
        let steps_s = t_steps.elapsed().as_secs_f64();
        let data_end = dir_bytes(&data.path().join("sessions"));
        (
            outcomes,
            failures,
            reset_s,
            steps_s,
            rss_full_kb,
            data_reset,
            data_end,
        )
    };
    let (outcomes, failures, reset_s, steps_s, rss_full_kb, data_reset, data_end) =
        tokio::time::timeout(RUN_DEADLINE, run)
            .await
            .unwrap_or_else(|_| panic!("load run over {RUN_DEADLINE:?}"));
    assert!(failures.is_empty(), "HTTP errors: {failures:#?}");
    let bad: Vec<_> = outcomes
        .iter()
        .filter(|o| !(o.success && (o.reward - 1.0).abs() < 1e-9))
        .collect();
    assert!(
        bad.is_empty(),
        "sessions not solved with reward 1.0: {bad:#?}"
    );
    assert_eq!(outcomes.len(), SESSIONS);

    // Close everything; nothing may remain.
    for o in &outcomes {
        let (status, b) = post(
            &http,
            format!("{base}/close"),
            json!({ "session_id": o.session }),
        )
        .await
        .expect("close answers");
        assert_eq!(status, 200, "close {}: {b}", o.session);
    }
    assert_eq!(probe.active_sessions(), 0);
    // The refused WebSocket gave its slot back too.
    wait_active(&probe, Some(&state), data.path(), 0, "after closing all").await;
    let left = session_dirs(data.path());
    assert!(left.is_empty(), "session dirs left after close: {left:?}");
    let procs = wait_no_leftovers(data.path()).await;
    assert!(procs.is_empty(), "processes left after close: {procs:#?}");
    let rss_peak_kb = status_kb("VmHWM");
    let rss_after_kb = status_kb("VmRSS");
    server.abort();

    // The measurements.
    let total_steps: u32 = outcomes.iter().map(|o| o.steps).sum();
    let mut lat: Vec<f64> = outcomes.iter().flat_map(|o| o.latencies.clone()).collect();
    lat.sort_by(f64::total_cmp);
    let n = SESSIONS as f64;
    let mut by_task: Vec<(u32, usize)> = Vec::new();
    for o in &outcomes {
        match by_task.iter_mut().find(|(t, _)| *t == o.task) {
            Some((_, c)) => *c += 1,
            None => by_task.push((o.task, 1)),
        }
    }
    by_task.sort();
    let report = json!({
        "sessions": SESSIONS,
        "tasks": by_task.iter().map(|(t, c)| json!({"task": t, "sessions": c})).collect::<Vec<_>>(),
        "sandbox": probe.sandbox_info(),
        "prewarm": util::prewarm(),
        "setup_s": setup_s,
        "reset_all_s": reset_s,
        "steps_phase_s": steps_s,
        "steps_total": total_steps,
        "steps_per_s": f64::from(total_steps) / steps_s,
        "step_latency_s": {"p50": percentile(&lat, 0.5), "p95": percentile(&lat, 0.95), "max": percentile(&lat, 1.0)},
        "rss_kb": {"idle": rss_idle_kb, "all_sessions_live": rss_full_kb, "after_close": rss_after_kb, "peak": rss_peak_kb},
        "rss_kb_per_session": (rss_full_kb.saturating_sub(rss_idle_kb)) as f64 / n,
        "peak_rss_kb_per_session": (rss_peak_kb.saturating_sub(rss_idle_kb)) as f64 / n,
        "data_bytes_per_session": {"after_reset": data_reset as f64 / n, "at_end": data_end as f64 / n},
        "total_s": t0.elapsed().as_secs_f64(),
    });
    eprintln!(
        "\nload: {SESSIONS} concurrent HTTP sessions, sandbox available: {}\n\
         | metric                          | value        |\n\
         |---------------------------------|--------------|\n\
         | setup (generate + prepare) s    | {:>12.1} |\n\
         | 64 resets, wall s               | {:>12.1} |\n\
         | steps phase, wall s             | {:>12.1} |\n\
         | steps total                     | {:>12} |\n\
         | steps/s                         | {:>12.2} |\n\
         | step latency p50 / p95 s        | {:>5.2} / {:>5.2} |\n\
         | RSS idle / live / peak MiB      | {:>4.0}/{:>4.0}/{:>4.0} |\n\
         | RSS per session KiB (live-idle) | {:>12.0} |\n\
         | peak RSS per session KiB        | {:>12.0} |\n\
         | data per session KiB reset/end  | {:>5.0} / {:>5.0} |\n\
         | total s                         | {:>12.1} |",
        probe.sandbox_info().available,
        setup_s,
        reset_s,
        steps_s,
        total_steps,
        f64::from(total_steps) / steps_s,
        percentile(&lat, 0.5),
        percentile(&lat, 0.95),
        rss_idle_kb as f64 / 1024.0,
        rss_full_kb as f64 / 1024.0,
        rss_peak_kb as f64 / 1024.0,
        (rss_full_kb.saturating_sub(rss_idle_kb)) as f64 / n,
        (rss_peak_kb.saturating_sub(rss_idle_kb)) as f64 / n,
        data_reset as f64 / n / 1024.0,
        data_end as f64 / n / 1024.0,
        t0.elapsed().as_secs_f64(),
    );
    let path = report_path();
    if let Err(e) = std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()) {
        eprintln!("could not write {}: {e}", path.display());
    } else {
        eprintln!("report: {}", path.display());
    }
}

/// Sends a text frame and reads the reply (bounded).
async fn ws_ask<S>(ws: &mut tokio_tungstenite::WebSocketStream<S>, msg: Value) -> Value
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    ws.send(Message::text(msg.to_string())).await.expect("send");
    loop {
        let m = tokio::time::timeout(REQUEST_TIMEOUT, ws.next())
            .await
            .expect("reply in time")
            .expect("socket open")
            .expect("frame");
        match m {
            Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON"),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

/// The first data frame of a socket that sends nothing: a text frame, or
/// `None` when the server closes it (bounded by `wait`).
async fn first_event<S>(
    ws: &mut tokio_tungstenite::WebSocketStream<S>,
    wait: Duration,
) -> Option<Value>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        let m = tokio::time::timeout(wait, ws.next())
            .await
            .expect("server acts on a silent socket in time");
        match m {
            Some(Ok(Message::Text(t))) => {
                return Some(serde_json::from_str(t.as_str()).expect("JSON"));
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
            Some(Ok(other)) => panic!("unexpected frame {other:?}"),
        }
    }
}

/// Polls (bounded) until the environment has `n` sessions and, when `n`
/// is 0, the session area is empty and every WebSocket slot is free again
/// (closing removes the directory after the session leaves the table, and
/// the socket's slot after that).
async fn wait_active(
    env: &Environment,
    state: Option<&AppState>,
    data: &Path,
    n: usize,
    what: &str,
) {
    let max = env.max_sessions();
    let settled = || {
        env.active_sessions() == n
            && (n != 0
                || (session_dirs(data).is_empty()
                    && state.is_none_or(|s| s.free_ws_slots() == max)))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !settled() {
        assert!(
            Instant::now() < deadline,
            "{what}: {} sessions active (want {n}), session dirs {:?}, free ws slots {:?}",
            env.active_sessions(),
            session_dirs(data),
            state.map(AppState::free_ws_slots)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Half-open WebSockets do not leak slots: a socket dropped without a close
/// frame frees its session and workspace; silent sockets (connected, never
/// sending) hold a slot only until the idle timeout; and a socket silent
/// after its reset loses its session the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_websockets_free_their_slots() {
    const MAX: usize = 2;
    let idle = Duration::from_secs(2);
    let (env, data) = util::env_with(MAX).await;
    env.oracle(1, None).await.expect("prepare task 1");
    let probe = env.clone();
    let (addr, state, server) = serve_with(env, idle).await;
    let url = format!("ws://{addr}/ws");
    let reset = json!({"type": "reset", "data": {"task_id": 1}});

    // Dropped without a close frame, right after a reset.
    let (mut c, _) = tokio_tungstenite::connect_async(&url)
        .await
        .expect("connect");
    let r = ws_ask(&mut c, reset.clone()).await;
    assert_eq!(r["type"], "observation", "{r}");
    assert_eq!(probe.active_sessions(), 1);
    drop(c);
    wait_active(
        &probe,
        Some(&state),
        data.path(),
        0,
        "socket dropped without close",
    )
    .await;

    // Dropped in the middle of a step: the step finishes, then the session goes.
    let (mut c, _) = tokio_tungstenite::connect_async(&url)
        .await
        .expect("connect");
    ask_ok(&mut c, reset.clone()).await;
    c.send(Message::text(
        json!({"type": "step", "data": {"command": "sleep 1; echo hi"}}).to_string(),
    ))
    .await
    .expect("send");
    drop(c);
    wait_active(
        &probe,
        Some(&state),
        data.path(),
        0,
        "socket dropped mid-step",
    )
    .await;

    // MAX + 1 silent sockets: exactly one is refused at once; the others are
    // closed by the server at the idle timeout.
    let mut silent = Vec::new();
    for _ in 0..=MAX {
        let (c, _) = tokio_tungstenite::connect_async(&url)
            .await
            .expect("connect");
        silent.push(c);
    }
    let mut refused = 0;
    let mut idled = 0;
    for c in &mut silent {
        match first_event(c, idle + Duration::from_secs(30)).await {
            Some(f) => {
                assert_eq!(f["data"]["code"], "CAPACITY_REACHED", "{f}");
                refused += 1;
            }
            None => idled += 1,
        }
    }
    assert_eq!(
        (refused, idled),
        (1, MAX),
        "one refused, the rest idled out"
    );
    drop(silent);
    wait_active(
        &probe,
        Some(&state),
        data.path(),
        0,
        "silent sockets idled out",
    )
    .await;

    // Silent after its reset: the idle timeout ends the session.
    let (mut c, _) = tokio_tungstenite::connect_async(&url)
        .await
        .expect("connect");
    ask_ok(&mut c, reset.clone()).await;
    assert_eq!(probe.active_sessions(), 1);
    assert!(
        first_event(&mut c, idle + Duration::from_secs(30))
            .await
            .is_none()
    );
    wait_active(
        &probe,
        Some(&state),
        data.path(),
        0,
        "socket silent after reset",
    )
    .await;

    // Every slot is usable again.
    let mut full = Vec::new();
    for _ in 0..MAX {
        let (mut c, _) = tokio_tungstenite::connect_async(&url)
            .await
            .expect("connect");
        ask_ok(&mut c, reset.clone()).await;
        full.push(c);
    }
    assert_eq!(probe.active_sessions(), MAX);
    for mut c in full {
        let _ = c
            .send(Message::text(json!({"type": "close"}).to_string()))
            .await;
    }
    wait_active(&probe, Some(&state), data.path(), 0, "closed by client").await;
    let procs = wait_no_leftovers(data.path()).await;
    assert!(procs.is_empty(), "processes left: {procs:#?}");
    server.abort();
}

/// `ws_ask` that must answer with an observation.
async fn ask_ok<S>(ws: &mut tokio_tungstenite::WebSocketStream<S>, msg: Value)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let r = ws_ask(ws, msg).await;
    assert_eq!(r["type"], "observation", "{r}");
}

/// Concurrent resets cannot overrun the limit: with room for 2, 6 resets at
/// once admit exactly 2 and refuse 4 with the capacity error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_resets_respect_the_limit() {
    const MAX: usize = 2;
    const TRIES: usize = 6;
    let (env, data) = util::env_with(MAX).await;
    env.oracle(1, None).await.expect("prepare task 1");
    let probe = env.clone();
    let (addr, _, server) = serve_with(env, Duration::from_secs(1800)).await;
    let http = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .expect("client");
    let base = format!("http://{addr}");
    let replies = futures_util::future::join_all(
        (0..TRIES).map(|_| post(&http, format!("{base}/reset"), json!({ "task_id": 1 }))),
    )
    .await;
    let mut ok = Vec::new();
    let mut refused = 0;
    for r in replies {
        let (status, b) = r.expect("reset answers");
        match status {
            200 => ok.push(b["session_id"].as_str().expect("sid").to_string()),
            429 => {
                assert_eq!(b["error"]["code"], "capacity_reached", "{b}");
                refused += 1;
            }
            other => panic!("reset: {other}: {b}"),
        }
    }
    assert_eq!(
        (ok.len(), refused, probe.active_sessions()),
        (MAX, TRIES - MAX, MAX),
        "admitted, refused, active"
    );
    for sid in &ok {
        let (status, b) = post(&http, format!("{base}/close"), json!({ "session_id": sid }))
            .await
            .expect("close answers");
        assert_eq!(status, 200, "{b}");
    }
    wait_active(&probe, None, data.path(), 0, "all closed").await;
    server.abort();
}
