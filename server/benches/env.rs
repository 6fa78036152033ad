//! Environment speed benchmark: `cargo bench -p server --bench env`.
//!
//! Runs the real environment over the repository's real tasks (generated
//! into a temporary data dir, the venv at `SECAUDIT_VENV` or the project's
//! `.venv`) and prints one table row per operation: n, p50, p99, mean and
//! max wall time in milliseconds, measured from the caller's side of
//! `Environment::reset` / `Environment::step`, so everything a client waits
//! for is counted (copy, sandbox, regrade, observation, session save).
//!
//! A plain harness rather than criterion: the operations take milliseconds
//! to seconds, the interesting numbers are tail percentiles against fixed
//! targets (issue 4, "Speed"), and a table is what the README quotes.
//!
//! `BENCH_N` overrides the iteration count (default 50; pytest-bound rows
//! use a fifth of it, at least 5). `BENCH_EDIT_CONFIGS` (e.g.
//! `runners,staged`) keeps only those edit-step rows.

mod common;

use server::env::{EnvConfig, Environment, StepProfile};
use server::health::HealthGrader;
use server::models::{Action, ResetRequest, TaskRef};
use server::sandbox::{ExecRequest, Sandbox, SandboxConfig, TierChoice};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The hard task most operations run on (git mode, the largest history).
const HARD_TASK: u32 = 12;

/// One row of the table.
struct Row {
    name: String,
    target: &'static str,
    samples: Vec<Duration>,
}

impl Row {
    fn pct(&self, p: f64) -> f64 {
        let mut v: Vec<f64> = self.samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        common::percentile(&mut v, p)
    }
    fn mean(&self) -> f64 {
        let n = self.samples.len().max(1) as f64;
        self.samples
            .iter()
            .map(|d| d.as_secs_f64() * 1e3)
            .sum::<f64>()
            / n
    }
}

fn iterations() -> usize {
    std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50usize)
        .clamp(3, 1000)
}

/// A session on `task` with at least `need` steps of budget left; resets
/// (untimed) when the current one would run out or has ended.
struct Rolling<'a> {
    env: &'a Environment,
    task: u32,
    sid: Option<String>,
    left: u32,
}

impl<'a> Rolling<'a> {
    fn new(env: &'a Environment, task: u32) -> Self {
        Self {
            env,
            task,
            sid: None,
            left: 0,
        }
    }
    async fn session(&mut self, need: u32) -> String {
        if self.left < need + 1 || self.sid.is_none() {
            if let Some(old) = self.sid.take() {
                let _ = self.env.close(&old).await;
            }
            let obs = self
                .env
                .reset(ResetRequest {
                    task_id: Some(TaskRef::Number(self.task)),
                    ..Default::default()
                })
                .await
                .expect("reset");
            self.left = obs.step_budget;
            self.sid = Some(obs.session_id);
        }
        self.left -= need;
        self.sid.clone().expect("session")
    }
    async fn close(mut self) {
        if let Some(s) = self.sid.take() {
            let _ = self.env.close(&s).await;
        }
    }
}

async fn step(env: &Environment, sid: &str, cmd: &str) -> (Duration, server::models::Observation) {
    let t = Instant::now();
    let obs = env
        .step(
            sid,
            Action {
                command: cmd.to_string(),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("step {cmd:?}: {e}"));
    (t.elapsed(), obs)
}

/// Times `n` steps of `cmd` on rolling sessions of `task`, each after an
/// untimed pause of `think` (an agent reading the observation; zero for
/// back-to-back steps); also returns the server's own profile of each step.
async fn bench_step(
    env: &Environment,
    task: u32,
    cmd: &str,
    n: usize,
    think: Duration,
) -> (Vec<Duration>, Vec<StepProfile>) {
    let mut r = Rolling::new(env, task);
    let mut v = Vec::with_capacity(n);
    let mut profiles = Vec::with_capacity(n);
    // One warm-up step: the first structured or bash action of a session
    // may fill caches (the health cache of the pristine tree is filled at
    // reset already).
    let sid = r.session(1).await;
    step(env, &sid, cmd).await;
    for _ in 0..n {
        let sid = r.session(1).await;
        if !think.is_zero() {
            tokio::time::sleep(think).await;
        }
        let (d, obs) = step(env, &sid, cmd).await;
        if let Some(a) = &obs.last_action {
            assert!(a.exit_code.is_some(), "{cmd:?} did not run: {}", a.stderr);
        }
        v.push(d);
        profiles.push(env.step_profile(&sid).expect("profile"));
    }
    r.close().await;
    (v, profiles)
}

/// The breakdown rows of a step row: one per phase of [`StepProfile`]
/// that took any time in some sample (see `server::env::StepProfile`).
fn breakdown(profiles: &[StepProfile]) -> Vec<(String, Vec<Duration>)> {
    type Get = fn(&StepProfile) -> Duration;
    let phases: [(&str, Get); 11] = [
        ("in-flight marker", |p| p.marker),
        ("action (all)", |p| p.action),
        ("  owner walk (lchown)", |p| p.owner_walk),
        ("  sandbox run (incl. walk)", |p| p.sandbox),
        ("survey walk", |p| p.survey),
        ("grade (all)", |p| p.grade),
        ("  security", |p| p.security),
        ("  health", |p| p.health),
        ("observe", |p| p.observe),
        ("save + record", |p| p.save),
        ("next sandbox (prewarm spawn)", |p| p.prewarm),
    ];
    let regraded = profiles.iter().filter(|p| p.regraded).count();
    let mut rows = Vec::new();
    for (name, get) in phases {
        let v: Vec<Duration> = profiles.iter().map(get).collect();
        if v.iter().any(|d| !d.is_zero()) {
            rows.push((format!("  of which: {name}"), v));
        }
    }
    if regraded > 0 {
        rows.push((
            format!("  (regraded in {regraded}/{} steps)", profiles.len()),
            Vec::new(),
        ));
    }
    let warm = profiles.iter().filter(|p| p.warm).count();
    if warm > 0 {
        rows.push((
            format!("  (prewarmed sandbox in {warm}/{} steps)", profiles.len()),
            Vec::new(),
        ));
    }
    rows
}

/// A real environment over the repository's tasks in a fresh data dir,
/// with the runtimes of the benchmarked tasks built (untimed).
async fn environment(
    venv: &Path,
    prewarm: bool,
    runners: bool,
    tier: TierChoice,
) -> (Environment, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("tempdir");
    let mut cfg = EnvConfig::with_root(&common::root());
    cfg.data_dir = data.path().to_path_buf();
    cfg.max_sessions = 8;
    cfg.venv = venv.to_path_buf();
    cfg.prewarm = prewarm;
    cfg.health_runners = runners;
    cfg.sandbox = tier;
    let t = Instant::now();
    let env = Environment::new(cfg).await.expect("environment");
    eprintln!(
        "environment (prewarm {prewarm}) ready in {:.1} s (13 tasks generated); sandbox: {}",
        t.elapsed().as_secs_f64(),
        env.sandbox_info().detail
    );
    // Build the runtimes (pristine manifest, history record) untimed.
    for task in [2, 7, HARD_TASK] {
        let obs = env
            .reset(ResetRequest {
                task_id: Some(TaskRef::Number(task)),
                ..Default::default()
            })
            .await
            .expect("reset");
        env.close(&obs.session_id).await.expect("close");
    }
    (env, data)
}

/// A step that edits a file: the tree changes, so health reruns pytest.
/// The separate pytest run after each step is also the next step's think
/// time (its sandbox is prewarmed by then, when the environment prewarms).
/// The pytest part is timed separately on the very tree the step left
/// behind, with a separate grader (cold cache) and the same pristine
/// suite, so step − health is the environment's own overhead.
async fn bench_edit(
    env: &Environment,
    data: &Path,
    venv: &Path,
    n_slow: usize,
    how: &str,
    tier: TierChoice,
    (staged, runners): (bool, bool),
) -> Vec<(String, &'static str, Vec<Duration>)> {
    let mut rows = Vec::new();
    let mut push = |name: String, target: &'static str, samples: Vec<Duration>| {
        rows.push((name, target, samples));
    };
    let sb = Arc::new(Sandbox::detect(SandboxConfig {
        tier,
        ..SandboxConfig::with_venv(venv.to_path_buf())
    }));
    // Like the environment's: staged health runs with prewarming on.
    let grader = HealthGrader::new(sb);
    let grader = match (staged, runners) {
        (true, true) => grader,
        (true, false) => grader.without_runners(),
        (false, _) => grader.without_staging(),
    };
    let gen_dir = data.join("tasks").join(format!("task_{HARD_TASK:02}"));
    let pristine = gen_dir.join("pristine");
    let expected = grader
        .expected_tests(&gen_dir.join("workspace"), &pristine)
        .await
        .expect("pristine manifest");
    let mut r = Rolling::new(env, HARD_TASK);
    let (mut steps, mut health, mut overhead) = (Vec::new(), Vec::new(), Vec::new());
    let mut env_only = Vec::new();
    let (mut in_pytest, mut outside_pytest) = (Vec::new(), Vec::new());
    let mut profiles = Vec::new();
    for i in 0..n_slow {
        let sid = r.session(1).await;
        let cmd = format!("echo '# edit {i} {sid}' >> README.md");
        let (d, obs) = step(env, &sid, &cmd).await;
        assert!(!obs.health.cached, "an edit missed the health cache");
        let prof = env.step_profile(&sid).expect("profile");
        // Overhead from the step's own health time, not the separate
        // rerun below: two pytest runs differ by tens of ms, which
        // would drown (and, saturating, zero) a 10 ms overhead.
        overhead.push(d.saturating_sub(prof.health));
        env_only.push(d.saturating_sub(prof.health + prof.sandbox));
        // Issue 21's measure: the step's wall time less the suite's own
        // time inside pytest (its JUnit report's), i.e. everything the
        // environment adds to running the tests.
        let p = prof
            .health_in_pytest
            .expect("a regrade reports pytest's time");
        in_pytest.push(p);
        outside_pytest.push(d.saturating_sub(p));
        profiles.push(prof);
        let ws = env.workspace_of(&sid).expect("workspace");
        let t = Instant::now();
        let h = grader
            .grade_linted_timed(&ws, &pristine, &gen_dir.join("workspace"), &expected)
            .await
            .summary;
        let dh = t.elapsed();
        assert!(!h.cached && h.total > 0, "health: {h:?}");
        steps.push(d);
        health.push(dh);
    }
    r.close().await;
    let staged_runs = grader.staged_runs() + grader.runner_runs();
    push(
        format!("step edit file (task {HARD_TASK}{how})"),
        "pytest + < 10",
        steps,
    );
    push(
        format!("  of which: health grade (pytest; {staged_runs} of {n_slow} staged or forked)"),
        "",
        health,
    );
    push("  of which: the suite inside pytest".into(), "", in_pytest);
    push(
        "  step − the suite's time inside pytest".into(),
        "<= 40",
        outside_pytest,
    );
    // Includes the edit command's own sandbox run (see the spawn row).
    push(
        "  step − health (incl. the command)".into(),
        "< 10",
        overhead,
    );
    push(
        "  step − health − the command's sandbox run".into(),
        "",
        env_only,
    );
    // The server's view of the same steps: where step − health went.
    for (row, v) in breakdown(&profiles) {
        push(row, "", v);
    }
    rows
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `cargo bench` passes `--bench`; any other argument is a row filter.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let want = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let n = iterations();
    let n_slow = (n / 5).max(5);
    let venv = common::venv();
    // The server's default (each session's next sandbox prewarmed), and
    // the same with every command started cold, for the rows that show
    // what prewarming buys, measured in this same run.
    let (env, data) = environment(&venv, true, true, TierChoice::Auto).await;
    // Health staged (an interpreter per run) instead of the runners.
    let (env_staged, data_staged) = environment(&venv, true, false, TierChoice::Auto).await;
    let (env_cold, data_cold) = environment(&venv, false, false, TierChoice::Auto).await;
    // The namespace-free tier (what containers get), in the same run.
    let (env_ll, data_ll) = environment(&venv, false, false, TierChoice::Landlock).await;

    let mut rows: Vec<Row> = Vec::new();
    let mut push = |name: String, target: &'static str, samples: Vec<Duration>| {
        rows.push(Row {
            name,
            target,
            samples,
        });
    };

    // Raw sandbox cost, for reference: bwrap + bash + `true`.
    if want("sandbox") {
        let sb = Sandbox::detect(SandboxConfig::with_venv(venv.clone()));
        let ws = tempfile::tempdir().expect("tempdir");
        if let Some((uid, gid)) = sb.run_as() {
            server::sandbox::prepare_workspace_owner(ws.path(), uid, gid).expect("chown");
        }
        // Cold spawns in each tier, bwrap first (the server's default
        // here), then the namespace-free tier containers get.
        let ll = Sandbox::detect(SandboxConfig {
            tier: TierChoice::Landlock,
            ..SandboxConfig::with_venv(venv.clone())
        });
        for (tier_sb, name) in [(&sb, "bwrap"), (&ll, "landlock")] {
            let mut v = Vec::new();
            for i in 0..=n {
                let t = Instant::now();
                let o = tier_sb
                    .run(ExecRequest::bash(ws.path(), "true"))
                    .await
                    .expect("sandbox");
                assert_eq!(o.exit_code, Some(0));
                if i > 0 {
                    v.push(t.elapsed());
                }
            }
            push(format!("sandbox spawn (`true` in {name})"), "reference", v);
        }
        // The same command delivered to a sandbox prewarmed 50 ms earlier
        // (untimed): what a step pays when its sandbox is ready.
        let mut v = Vec::new();
        for i in 0..=n {
            let req = ExecRequest::bash(ws.path(), "true");
            let warm = sb.prewarm(&req);
            tokio::time::sleep(Duration::from_millis(50)).await;
            let t = Instant::now();
            let o = sb.run_warm(warm, req).await.expect("sandbox");
            assert!(o.exit_code == Some(0) && o.warm, "{o:?}");
            if i > 0 {
                v.push(t.elapsed());
            }
        }
        push("sandbox prewarmed (`true`, ready)".into(), "reference", v);
        // The same in a real session workspace (its owner as the hint, as
        // a step passes it), without the rest of the step around it.
        let obs = env
            .reset(ResetRequest {
                task_id: Some(TaskRef::Number(HARD_TASK)),
                ..Default::default()
            })
            .await
            .expect("reset");
        let ws = env.workspace_of(&obs.session_id).expect("workspace");
        let mut v = Vec::new();
        for i in 0..=n {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::symlink_metadata(&ws).expect("workspace");
            let mut req = ExecRequest::bash(&ws, "true");
            req.owned_by = Some((m.uid(), m.gid()));
            let t = Instant::now();
            let o = sb.run(req).await.expect("sandbox");
            assert_eq!(o.exit_code, Some(0));
            if i > 0 {
                v.push(t.elapsed());
            }
        }
        env.close(&obs.session_id).await.expect("close");
        push(
            format!("sandbox spawn (`true`, task {HARD_TASK} workspace)"),
            "reference",
            v,
        );
    }

    // Reset: take (or make) a copy, reuse the template's grade, build the
    // observation, save the session. Close is not timed. "back-to-back"
    // resets with no pause, so the background pool of ready copies cannot
    // keep up and most resets copy the template while the client waits;
    // "between episodes" pauses 300 ms (untimed) between resets, as an
    // agent's episode does, and measures the pooled path.
    for (task, pause) in [(HARD_TASK, true), (HARD_TASK, false), (7, true), (2, true)] {
        let name = format!(
            "reset task {task} ({})",
            if pause {
                "between episodes"
            } else {
                "back-to-back"
            }
        );
        if !want(&name) {
            continue;
        }
        let mut v = Vec::new();
        for _ in 0..n {
            if pause {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            let t = Instant::now();
            let obs = env
                .reset(ResetRequest {
                    task_id: Some(TaskRef::Number(task)),
                    ..Default::default()
                })
                .await
                .expect("reset");
            v.push(t.elapsed());
            env.close(&obs.session_id).await.expect("close");
        }
        push(name, if task == HARD_TASK { "p50 < 20" } else { "" }, v);
    }

    // Steps whose command changes nothing: after a 50 ms pause (an
    // agent reads the observation first; LLM agents take seconds), which
    // lets the prewarmed sandbox finish its set-up, and back-to-back, the
    // worst case, where the step waits for the rest of that set-up.
    let runs = [
        ("true", 50, &env, ""),
        ("ls", 50, &env, ""),
        ("true", 0, &env, ""),
        ("true", 50, &env_cold, ", cold"),
        ("true", 0, &env_cold, ", cold"),
        ("true", 50, &env_ll, ", landlock"),
        ("true", 0, &env_ll, ", landlock"),
    ];
    for (cmd, think, env, how) in runs {
        let name = if think > 0 {
            format!("step `{cmd}` (task {HARD_TASK}, {think} ms think{how})")
        } else {
            format!("step `{cmd}` (task {HARD_TASK}, back-to-back{how})")
        };
        if want(&name) {
            let think = Duration::from_millis(think);
            let (v, profiles) = bench_step(env, HARD_TASK, cmd, n, think).await;
            push(name, "p50 < 15", v);
            for (row, v) in breakdown(&profiles) {
                push(row, "", v);
            }
        }
    }

    // Structured actions (in-process, no sandbox).
    for cmd in [
        "inspect_file services/ledger/storage.py",
        "inspect_encoded services/webhooks/settings.py",
        "list_files",
        "run_scanner",
        "scan_history",
    ] {
        let name = format!("step `{cmd}`");
        if want(&name) {
            let (v, profiles) = bench_step(&env, HARD_TASK, cmd, n, Duration::ZERO).await;
            push(name, "", v);
            // One breakdown is enough to show where an in-process step's
            // time goes (they differ only in the action).
            if cmd.starts_with("inspect_file") {
                for (row, v) in breakdown(&profiles) {
                    push(row, "", v);
                }
            }
        }
    }

    // A step that edits a file: the tree changes, so health reruns pytest.
    // The separate pytest run after each step is also the next step's
    // think time (its sandbox is prewarmed by then).
    // The pytest part is timed separately on the very tree the step left
    // behind, with a separate grader (cold cache) and the same pristine
    // suite, so step − health is the environment's own overhead.
    for (env, data, how, tier, staged) in [
        (&env, &data, ", runners", TierChoice::Auto, (true, true)),
        (
            &env_staged,
            &data_staged,
            ", staged",
            TierChoice::Auto,
            (true, false),
        ),
        (
            &env_cold,
            &data_cold,
            ", cold",
            TierChoice::Auto,
            (false, false),
        ),
        (
            &env_ll,
            &data_ll,
            ", landlock",
            TierChoice::Landlock,
            (false, false),
        ),
    ] {
        // `BENCH_EDIT_CONFIGS=runners,staged`: only those edit rows.
        let configs = std::env::var("BENCH_EDIT_CONFIGS").ok();
        let config_wanted = configs
            .as_deref()
            .is_none_or(|c| c.split(',').any(|k| how.contains(k)));
        if want("edit") && config_wanted {
            let rows_edit = bench_edit(env, data.path(), &venv, n_slow, how, tier, staged).await;
            for (name, target, v) in rows_edit {
                push(name, target, v);
            }
        }
    }

    println!();
    println!(
        "| {:<46} | {:>4} | {:>9} | {:>9} | {:>9} | {:>9} | {:<13} |",
        "operation", "n", "p50 ms", "p99 ms", "mean ms", "max ms", "target (ms)"
    );
    println!(
        "|{:-<48}|{:->6}|{:->11}|{:->11}|{:->11}|{:->11}|{:-<15}|",
        "", "", "", "", "", "", ""
    );
    for r in &rows {
        if r.samples.is_empty() {
            println!(
                "| {:<46} | {:>4} | {:>9} | {:>9} | {:>9} | {:>9} | {:<13} |",
                r.name, "", "", "", "", "", r.target
            );
            continue;
        }
        println!(
            "| {:<46} | {:>4} | {:>9.2} | {:>9.2} | {:>9.2} | {:>9.2} | {:<13} |",
            r.name,
            r.samples.len(),
            r.pct(50.0),
            r.pct(99.0),
            r.mean(),
            r.pct(100.0),
            r.target
        );
    }
}
