//! Every task's oracle reaches reward 1.0 within its budget through the real
//! environment (sandbox, graders, reward), on the canonical task and on
//! seeded variants, and every planted secret is visible to the grader at
//! reset (no leak that never counts).

use crate::util;
use server::models::{Observation, ResetRequest, TaskInfo, TaskRef};
use server::tasks::GeneratedTask;

/// Seeds every task's variant is run with. Three per task: together they
/// draw both encodings of every deep secret whose encoding varies, and at
/// least two different placements of every renamable file (checked below,
/// so a change to the draw that loses coverage fails here).
const VARIANT_SEEDS: [u64; 3] = [1, 2, 3];

/// The seeds to run: [`VARIANT_SEEDS`], or ORACLE_SEEDS=1,5,9 (then the
/// coverage check is skipped).
fn variant_seeds() -> Vec<u64> {
    std::env::var("ORACLE_SEEDS")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect::<Vec<u64>>()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| VARIANT_SEEDS.to_vec())
}

/// ORACLE_TASK=N runs one task; ORACLE_DEBUG=1 prints every step.
fn selected(tasks: &[TaskInfo]) -> Vec<&TaskInfo> {
    let only: Option<u32> = std::env::var("ORACLE_TASK")
        .ok()
        .and_then(|v| v.parse().ok());
    tasks
        .iter()
        .filter(|t| only.is_none_or(|o| o == t.id))
        .collect()
}

/// Checks the reset observation: every planted secret counts as a leak,
/// nothing is rewarded yet, and the health suite runs before the fix
/// with its credential-flow tests failing.
fn check_reset(t: &TaskInfo, seed: Option<u64>, obs: &Observation) -> Result<(), String> {
    let ctx = format!("task {} seed {seed:?}", t.id);
    if obs.leaks_initial != t.secret_count || obs.leaks_current != obs.leaks_initial {
        return Err(format!(
            "{ctx}: every planted secret present at reset: leaks {}/{} of {} planted",
            obs.leaks_current, obs.leaks_initial, t.secret_count
        ));
    }
    if obs.reward != 0.0 {
        return Err(format!("{ctx}: reward {} at reset", obs.reward));
    }
    // The suite runs cleanly before the fix, but its credential-flow tests
    // fail: the unfixed code uses the planted values, not the fresh ones
    // the pristine conftest provides (the manifest run allows exactly
    // those failures, `HealthGrader::expected_tests`).
    if obs.health.error.is_some() || obs.health.errors > 0 || obs.health.passed == 0 {
        return Err(format!(
            "{ctx}: the suite runs before the fix: {:?}",
            obs.health
        ));
    }
    if obs.health.score >= 1.0 {
        return Err(format!(
            "{ctx}: the credential-flow tests pass on the planted values: {:?}",
            obs.health
        ));
    }
    if obs.seed != seed {
        return Err(format!("{ctx}: observation says seed {:?}", obs.seed));
    }
    Ok(())
}

/// Runs the rendered oracle of (task, seed) in a fresh episode; Err says
/// why it did not reach success with reward 1.0.
async fn run_oracle(
    env: &server::env::Environment,
    t: &TaskInfo,
    seed: Option<u64>,
) -> Result<Observation, String> {
    let ctx = format!("task {} seed {seed:?}", t.id);
    let obs = match seed {
        None => util::reset(env, t.id).await,
        Some(_) => env
            .reset(ResetRequest {
                task_id: Some(TaskRef::Number(t.id)),
                seed,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("{ctx}: reset: {e}"))?,
    };
    check_reset(t, seed, &obs)?;
    let reset_obs = obs.clone();
    let oracle = env
        .oracle(t.id, seed)
        .await
        .map_err(|e| format!("{ctx}: oracle: {e}"))?;
    if oracle.len() as u32 > t.step_budget {
        return Err(format!(
            "{ctx}: oracle has {} actions, budget {}",
            oracle.len(),
            t.step_budget
        ));
    }
    let mut last = obs;
    for a in &oracle {
        if last.done {
            break;
        }
        last = util::step(env, &last.session_id, a).await;
        if std::env::var("ORACLE_DEBUG").is_ok() {
            let la = last.last_action.as_ref().expect("last action");
            eprintln!(
                "{ctx} step {}: exit {:?} reward {} leaks {}\n  stdout: {}\n  stderr: {}",
                last.steps_taken,
                la.exit_code,
                last.reward,
                last.leaks_current,
                la.stdout.chars().take(300).collect::<String>(),
                la.stderr.chars().take(600).collect::<String>()
            );
        }
    }
    let _ = env.close(&last.session_id).await;
    if !(last.success && (last.reward - 1.0).abs() < 1e-9) {
        return Err(format!(
            "{ctx}: success={} reward={} leaks {}/{} health {:?} errors {:?} visible {:?}",
            last.success,
            last.reward,
            last.leaks_current,
            last.leaks_initial,
            last.health,
            last.grading_errors,
            last.visible_secrets
                .iter()
                .map(|v| (&v.id, v.status))
                .collect::<Vec<_>>()
        ));
    }
    Ok(reset_obs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oracle_solves_its_task() {
    let (env, _data) = util::env_with(64).await;
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 13, "13 tasks expected");
    let mut failures = Vec::new();
    for t in selected(&tasks) {
        if let Err(e) = run_oracle(&env, t, None).await {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "oracle failures:\n{}",
        failures.join("\n")
    );
}

/// The oracle also solves seeded variants (other values, file placements
/// and encodings) through the real environment; the agent sees the
/// variant's paths, not the canonical ones; and the seeds used cover every
/// varied dimension of every task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oracle_solves_seeded_variants() {
    let (env, data) = util::env_with(64).await;
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 13, "13 tasks expected");
    let reg = server::tasks::TaskRegistry::load(&util::root().join("tasks")).expect("tasks");
    let seeds = variant_seeds();
    let mut failures = Vec::new();
    for t in selected(&tasks) {
        let def = reg.get(t.id).expect("task in registry");
        let mut truths: Vec<GeneratedTask> = Vec::new();
        for &seed in &seeds {
            let reset = match run_oracle(&env, t, Some(seed)).await {
                Ok(o) => o,
                Err(e) => {
                    failures.push(e);
                    continue;
                }
            };
            // The environment generated the variant here; its truth is
            // what the grader used.
            let dir = server::tasks::variant_dir(data.path(), &t.slug, seed);
            let g = server::tasks::load_generated(&dir).expect("variant truth.json");
            for v in &reset.visible_secrets {
                let s = g.secrets.iter().find(|s| s.id == v.id).expect("known id");
                if v.file != s.file {
                    failures.push(format!(
                        "task {} seed {seed}: {} shown in {} but planted in {}",
                        t.id, v.id, v.file, s.file
                    ));
                }
            }
            truths.push(g);
        }
        // Coverage is a property of the default seeds; ORACLE_SEEDS runs
        // skip it.
        if truths.len() != seeds.len() || seeds != VARIANT_SEEDS {
            continue;
        }
        // Coverage: some seed draws an encoding other than the canonical one
        // for every secret whose encoding varies, and every seed moves every
        // renamable file.
        for (id, choices) in &def.task.variants.encodings {
            let drawn: std::collections::BTreeSet<_> = truths
                .iter()
                .filter_map(|g| g.secrets.iter().find(|s| &s.id == id)?.encoding)
                .map(|e| e.name())
                .collect();
            let canonical = def
                .task
                .secret(id)
                .and_then(|s| s.encoding)
                .map(|e| e.name());
            if drawn.len() < choices.len().min(2) && drawn.iter().all(|e| Some(*e) == canonical) {
                failures.push(format!(
                    "task {}: seeds {seeds:?} never vary the encoding of {id}",
                    t.id
                ));
            }
        }
        for from in def.task.variants.paths.keys() {
            if truths.iter().any(|g| !g.renamed.contains_key(from)) {
                failures.push(format!("task {}: a variant left {from} in place", t.id));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "variant oracle failures:\n{}",
        failures.join("\n")
    );
}
