//! Every task's oracle reaches reward 1.0 within its budget through the real
//! environment (sandbox, graders, reward), and every planted secret is
//! visible to the grader at reset (no leak that never counts).

use crate::util;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oracle_solves_its_task() {
    let (env, _data) = util::env_with(64).await;
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 13, "13 tasks expected");
    // ORACLE_TASK=N runs one task; ORACLE_DEBUG=1 prints every step.
    let mut failures = Vec::new();
    let only: Option<u32> = std::env::var("ORACLE_TASK")
        .ok()
        .and_then(|v| v.parse().ok());
    for t in tasks.iter().filter(|t| only.is_none_or(|o| o == t.id)) {
        let obs = util::reset(&env, t.id).await;
        assert_eq!(
            obs.leaks_current, obs.leaks_initial,
            "task {}: every planted secret present at reset",
            t.id
        );
        assert!(obs.leaks_initial > 0, "task {} has secrets", t.id);
        assert_eq!(obs.reward, 0.0, "task {}: no reward at reset", t.id);
        assert_eq!(
            obs.health.score, 1.0,
            "task {}: tests pass before the fix: {:?}",
            t.id, obs.health
        );
        let oracle = env.oracle(t.id, None).await.expect("oracle");
        assert!(
            oracle.len() as u32 <= t.step_budget,
            "task {}: oracle fits the budget",
            t.id
        );
        let mut last = obs;
        for a in &oracle {
            if last.done {
                break;
            }
            last = util::step(&env, &last.session_id, a).await;
            if std::env::var("ORACLE_DEBUG").is_ok() {
                let la = last.last_action.as_ref().expect("last action");
                eprintln!(
                    "task {} step {}: exit {:?} reward {} leaks {}\n  stdout: {}\n  stderr: {}",
                    t.id,
                    last.steps_taken,
                    la.exit_code,
                    last.reward,
                    last.leaks_current,
                    la.stdout.chars().take(300).collect::<String>(),
                    la.stderr.chars().take(600).collect::<String>()
                );
            }
        }
        if !(last.success && (last.reward - 1.0).abs() < 1e-9) {
            failures.push(format!(
                "task {}: success={} reward={} leaks {}/{} health {:?} errors {:?} visible {:?}",
                t.id,
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
        let _ = env.close(&last.session_id).await;
    }
    assert!(
        failures.is_empty(),
        "oracle failures:\n{}",
        failures.join("\n")
    );
}
