//! Load benchmark: `cargo bench -p server --bench load`.
//!
//! 64 sessions at once on the real environment and the repository's real
//! tasks, the way a trainer drives it: 64 simultaneous resets (each task's
//! runtime built beforehand, so this is every reset after a task's first),
//! then every session plays the same realistic mix twice, an episode each
//! (`ls`, `run_scanner`, `git log`, one edit that makes health rerun the
//! suite, `list_files`), then closes. Run twice in the same process: with
//! every command and health run started cold (`prewarm` off, the path
//! before staged health runs) and with the default. Prints steps per
//! second, step and reset latency percentiles, and peak memory of the
//! server process and of the sandboxes' processes. A measurement, never
//! asserted (the machines are shared and noisy: compare the rows).
//!
//! `LOAD_SESSIONS` (default 64) and `LOAD_EPISODES` (default 2) scale it.

mod common;

use server::env::{EnvConfig, Environment};
use server::models::{Action, ResetRequest, TaskRef};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The mix of one episode. The edit appends to a file of its own, so the
/// tree changes and health reruns pytest; `git log` fails harmlessly in
/// the tasks without history, as an agent's would.
const MIX: [&str; 5] = [
    "ls",
    "run_scanner",
    "git log --oneline -5",
    "echo '# load' >> LOAD_NOTES.md",
    "list_files",
];

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
        .clamp(1, 256)
}

/// The tasks of the sessions: mostly the easy tasks 1-5, plus a few medium
/// and hard ones (git history, encoded secrets), as `tests/load.rs`.
fn plan(sessions: usize) -> Vec<u32> {
    let others = [6, 8, 9, 11];
    let mut v: Vec<u32> = (0..sessions.saturating_sub(others.len()))
        .map(|i| (i % 5) as u32 + 1)
        .collect();
    v.extend(others.iter().take(sessions - v.len()));
    v
}

/// The first number of a `/proc/<pid>/status` field (KiB for sizes).
fn status_field(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Resident KiB of every process running as a sandbox pool uid.
fn sandbox_rss_kb() -> u64 {
    let pool = server::sandbox::uid_pool();
    let mut total = 0;
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let uid = status_field(pid, "Uid:");
        if u32::try_from(uid).is_ok_and(|u| pool.contains(&u)) {
            total += status_field(pid, "VmRSS:");
        }
    }
    total
}

/// What one configuration measured.
struct Measured {
    name: &'static str,
    resets_ms: Vec<f64>,
    steps_ms: Vec<f64>,
    steps_wall: Duration,
    server_peak_kb: u64,
    sandbox_peak_kb: u64,
}

async fn run(
    name: &'static str,
    (prewarm, runners): (bool, bool),
    sessions: usize,
    episodes: usize,
) -> Measured {
    let data = tempfile::tempdir().expect("tempdir");
    let mut cfg = EnvConfig::with_root(&common::root());
    cfg.data_dir = data.path().to_path_buf();
    cfg.max_sessions = sessions + 4;
    cfg.venv = common::venv();
    cfg.prewarm = prewarm;
    cfg.health_runners = runners;
    let env = Environment::new(cfg).await.expect("environment");
    let plan = plan(sessions);
    // Every task's first reset (its pristine manifest) before the clock.
    let mut tasks = plan.clone();
    tasks.sort_unstable();
    tasks.dedup();
    for t in tasks {
        let obs = env
            .reset(ResetRequest {
                task_id: Some(TaskRef::Number(t)),
                ..Default::default()
            })
            .await
            .expect("first reset");
        env.close(&obs.session_id).await.expect("close");
    }

    // Memory: the server's own peak is its VmHWM, reset here (clear_refs
    // 5) so this configuration's run is measured alone; the sandboxes'
    // processes are sampled.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let sandbox_peak = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (sandbox_peak.clone(), done.clone());
        tokio::task::spawn_blocking(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(sandbox_rss_kb(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };

    let reset = |env: Environment, task: u32| async move {
        let t = Instant::now();
        let obs = env
            .reset(ResetRequest {
                task_id: Some(TaskRef::Number(task)),
                ..Default::default()
            })
            .await
            .expect("reset");
        (obs.session_id, t.elapsed())
    };
    // 64 simultaneous resets.
    let first: Vec<_> = plan
        .iter()
        .map(|t| tokio::spawn(reset(env.clone(), *t)))
        .collect();
    let mut resets_ms = Vec::new();
    let mut sids = Vec::new();
    for h in first {
        let (sid, d) = h.await.expect("reset task");
        resets_ms.push(d.as_secs_f64() * 1e3);
        sids.push(sid);
    }

    // The mix, every session at once, `episodes` episodes each.
    let t0 = Instant::now();
    let players: Vec<_> = plan
        .iter()
        .zip(sids)
        .map(|(task, sid)| {
            let (env, task) = (env.clone(), *task);
            tokio::spawn(async move {
                let mut sid = sid;
                let mut steps = Vec::new();
                let mut resets = Vec::new();
                for ep in 0..episodes {
                    if ep > 0 {
                        let (s, d) = reset(env.clone(), task).await;
                        resets.push(d);
                        sid = s;
                    }
                    for cmd in MIX {
                        let t = Instant::now();
                        env.step(
                            &sid,
                            Action {
                                command: cmd.to_string(),
                            },
                        )
                        .await
                        .unwrap_or_else(|e| panic!("task {task} step {cmd:?}: {e}"));
                        steps.push(t.elapsed());
                    }
                    env.close(&sid).await.expect("close");
                }
                (steps, resets)
            })
        })
        .collect();
    let mut steps_ms = Vec::new();
    for h in players {
        let (steps, resets) = h.await.expect("player");
        steps_ms.extend(steps.iter().map(|d| d.as_secs_f64() * 1e3));
        resets_ms.extend(resets.iter().map(|d| d.as_secs_f64() * 1e3));
    }
    let steps_wall = t0.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.await.expect("sampler");
    Measured {
        name,
        resets_ms,
        steps_ms,
        steps_wall,
        server_peak_kb: status_field("self", "VmHWM:"),
        sandbox_peak_kb: sandbox_peak.load(Ordering::Relaxed),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sessions = knob("LOAD_SESSIONS", 64);
    let episodes = knob("LOAD_EPISODES", 2);
    eprintln!(
        "{sessions} sessions x {episodes} episodes of {} steps; 2 runtime threads",
        MIX.len()
    );
    let mut rows = Vec::new();
    for (name, how) in [
        ("everything cold (prewarm off)", (false, false)),
        ("prewarmed, staged health (runners off)", (true, false)),
        ("default (prewarmed, health runners)", (true, true)),
    ] {
        let m = run(name, how, sessions, episodes).await;
        eprintln!("{name}: done in {:.1} s", m.steps_wall.as_secs_f64());
        rows.push(m);
    }
    println!();
    println!(
        "| configuration | steps | steps/s | step p50 ms | step p99 ms | resets | reset p50 ms | reset p99 ms | server peak RSS MiB | sandboxes peak RSS MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for m in &mut rows {
        let n = m.steps_ms.len();
        let rate = n as f64 / m.steps_wall.as_secs_f64();
        println!(
            "| {} | {n} | {rate:.1} | {:.0} | {:.0} | {} | {:.0} | {:.0} | {:.0} | {:.0} |",
            m.name,
            common::percentile(&mut m.steps_ms, 50.0),
            common::percentile(&mut m.steps_ms, 99.0),
            m.resets_ms.len(),
            common::percentile(&mut m.resets_ms, 50.0),
            common::percentile(&mut m.resets_ms, 99.0),
            m.server_peak_kb as f64 / 1024.0,
            m.sandbox_peak_kb as f64 / 1024.0,
        );
    }
}
