//! Replay determinism: the same task, seed and action sequence give the same
//! observations and rewards in two independent environments (separate data
//! directories, so the tasks are generated twice and every cache is cold in
//! each), down to tree ids, commit ids (including commits the agent makes),
//! masked secret values, visible secrets and ranked actions. And the seed is
//! real: two seeds give different planted values.

use crate::util;
use regex::Regex;
use secaudit::agent::normalize::STRUCTURED_ACTIONS;
use serde_json::Value;
use server::env::Environment;
use server::models::{Action, ResetRequest, TaskRef};

/// Appended to every bash action of the script, so commit and tree ids,
/// refs and the identity and dates of commits (the oracle's own commit and
/// its history rewrite included) show up in observations: if any of them
/// depends on the clock, the host or the session, the two runs differ. It is
/// appended rather than run as a separate step because an episode ends on
/// success, which can come with the very step that rewrites history.
const GIT_PROBE: &str = "\ngit rev-parse HEAD HEAD^{tree} 2>&1; \
git log --all --format='%H %T %an <%ae> %ad %cn <%ce> %cd %s' --date=raw 2>&1; \
git for-each-ref --format='%(objectname) %(refname)' 2>&1; true";

/// Structured probes run once after reset: the listing and the scanner's
/// redacted view.
const STRUCTURED_PROBES: &[&str] = &["list_files", "run_scanner"];

/// Fields that legitimately differ between two runs, and nothing else:
/// - `session_id`: a fresh random id per session (its whole point).
/// - `last_action.duration_ms`: wall time of the action.
/// - in `last_action.stdout`/`stderr`, the elapsed time that pytest
///   (`in 0.12s`) and git-filter-repo (`after 0.31 seconds`) print: wall
///   time again, printed by the tools themselves.
/// - carriage-return progress (git-filter-repo's `\rParsed N commits`):
///   how many intermediate counts get printed depends on timing, so only
///   what a terminal would end up showing is kept (the text after the
///   last `\r` of each line).
///
/// The episode id is set explicitly at reset, so it needs no normalising.
fn normalise(mut obs: Value) -> Value {
    let time = Regex::new(r"\b\d+(\.\d+)? ?(s|seconds)\b").expect("regex");
    obs["session_id"] = Value::Null;
    if let Some(last) = obs.get_mut("last_action").filter(|l| !l.is_null()) {
        last["duration_ms"] = Value::Null;
        for k in ["stdout", "stderr"] {
            if let Some(s) = last[k].as_str() {
                let shown = terminal_view(s);
                last[k] = Value::String(time.replace_all(&shown, "<time>").into_owned());
            }
        }
    }
    obs
}

/// Each line as a terminal shows it: the text after its last `\r` (a
/// trailing `\r` of a CRLF ending does not count).
fn terminal_view(s: &str) -> String {
    s.split('\n')
        .map(|line| {
            let body = line.strip_suffix('\r').unwrap_or(line);
            body.rsplit('\r').next().unwrap_or(body)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs reset plus `actions` (each followed by the probes) and returns every
/// observation, normalised, as JSON.
async fn run(env: &Environment, task: u32, seed: Option<u64>, actions: &[String]) -> Vec<Value> {
    let obs = env
        .reset(ResetRequest {
            task_id: Some(TaskRef::Number(task)),
            seed,
            episode_id: Some(format!("replay-{task}-{seed:?}")),
            ..Default::default()
        })
        .await
        .expect("reset");
    let sid = obs.session_id.clone();
    let mut out = vec![normalise(serde_json::to_value(&obs).expect("json"))];
    let mut script: Vec<String> = STRUCTURED_PROBES.iter().map(|p| p.to_string()).collect();
    for a in actions {
        let structured = a
            .split_whitespace()
            .next()
            .is_some_and(|w| STRUCTURED_ACTIONS.contains(&w));
        script.push(if structured {
            a.clone()
        } else {
            format!("{a}{GIT_PROBE}")
        });
    }
    for cmd in script {
        let o = match env
            .step(
                &sid,
                Action {
                    command: cmd.clone(),
                },
            )
            .await
        {
            Ok(o) => o,
            // The budget ran out or the task was solved early: the episode
            // is over in both runs alike (compared below by length).
            Err(server::env::EnvError::EpisodeDone) => break,
            Err(e) => panic!("step {cmd:?}: {e}"),
        };
        out.push(normalise(serde_json::to_value(&o).expect("json")));
    }
    let _ = env.close(&sid).await;
    out
}

/// Asserts two runs are identical observation by observation, printing the
/// first differing observation of each when they are not.
fn assert_same(what: &str, a: &[Value], b: &[Value]) {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            x == y,
            "{what}: observation {i} differs between two runs:\n--- run 1\n{}\n--- run 2\n{}",
            serde_json::to_string_pretty(x).unwrap_or_default(),
            serde_json::to_string_pretty(y).unwrap_or_default()
        );
    }
    assert_eq!(a.len(), b.len(), "{what}: number of observations");
}

/// The task's rendered oracle (ground truth, the same in both runs).
async fn script(env: &Environment, task: u32, seed: Option<u64>) -> Vec<String> {
    env.oracle(task, seed).await.expect("oracle")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_actions_same_observations() {
    // Two environments over separate data dirs: generation, runtimes, health
    // caches and blob caches are all independent.
    let (env1, _d1) = util::env_with(4).await;
    let (env2, _d2) = util::env_with(4).await;
    // A dir task, the git task 7 (the agent commits and rewrites history
    // with git-filter-repo) and a hard git task on a seeded variant.
    let id = Regex::new(r"\b[0-9a-f]{40}\b").expect("regex");
    for (task, seed) in [(2u32, None), (7, None), (12, Some(7u64))] {
        let actions = script(&env1, task, seed).await;
        assert_eq!(
            actions,
            script(&env2, task, seed).await,
            "task {task}: rendered oracle"
        );
        // One after the other, not concurrently: the second run starts
        // seconds later, so anything that reads the clock (a commit date)
        // shows up as a difference.
        let a = run(&env1, task, seed, &actions).await;
        let b = run(&env2, task, seed, &actions).await;
        assert_same(&format!("task {task} seed {seed:?}"), &a, &b);
        // The runs were not trivial: the oracle reached full reward and the
        // git probes printed commit ids.
        let last_scored = a
            .iter()
            .filter_map(|o| o["reward_breakdown"]["score"].as_f64())
            .fold(0.0, f64::max);
        assert_eq!(last_scored, 1.0, "task {task}: oracle reached 1.0");
        // The git probes printed commit ids, and the agent's commit and
        // rewrite made new ones: more than the pristine history's.
        let ids: std::collections::BTreeSet<&str> = a
            .iter()
            .filter_map(|o| o["last_action"]["stdout"].as_str())
            .flat_map(|s| id.find_iter(s).map(|m| m.as_str()))
            .collect();
        if task != 2 {
            assert!(ids.len() > 2, "task {task}: commit ids seen: {ids:?}");
        }
    }
}

/// Agent commits carry pinned dates and identity, so their ids are the same
/// in every run even when the two runs happen seconds apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_commits_are_reproducible() {
    let (env, _d) = util::env_with(4).await;
    let mut heads = Vec::new();
    for pause in [false, true] {
        let obs = util::reset(&env, 7).await;
        let sid = obs.session_id;
        if pause {
            // Across a second boundary: a clock-dependent commit date would
            // change the id.
            tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        }
        let o = util::step(
            &env,
            &sid,
            "echo x >> README.md && git add -A && git commit -q -m probe && git stash list && git rev-parse HEAD && git log -1 --format='%an %ae %ad %cn %ce %cd' --date=raw",
        )
        .await;
        let la = o.last_action.expect("output");
        assert_eq!(la.exit_code, Some(0), "commit: {}", la.stderr);
        heads.push(la.stdout);
        env.close(&sid).await.expect("close");
    }
    assert_eq!(heads[0], heads[1], "agent commit id depends on the clock");
}

/// Variants are real: two seeds of the same task plant different values (so
/// different masked values and, for git tasks, different commit ids).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn different_seeds_differ() {
    let (env, _d) = util::env_with(4).await;
    let mut seen = Vec::new();
    for seed in [1u64, 2] {
        let obs = env
            .reset(ResetRequest {
                task_id: Some(TaskRef::Number(12)),
                seed: Some(seed),
                ..Default::default()
            })
            .await
            .expect("reset");
        let sid = obs.session_id.clone();
        let o = util::step(&env, &sid, "git rev-parse HEAD").await;
        let head = o.last_action.expect("output").stdout;
        let masked: Vec<String> = obs
            .visible_secrets
            .iter()
            .map(|v| v.masked_value.clone())
            .collect();
        let oracle = env.oracle(12, Some(seed)).await.expect("oracle");
        seen.push((head, masked, oracle));
        env.close(&sid).await.expect("close");
    }
    assert_ne!(seen[0].0, seen[1].0, "seeds 1 and 2 give the same HEAD");
    // The rendered oracle embeds the planted values (filter-repo
    // replacements): different values, different oracle.
    assert_ne!(seen[0].2, seen[1].2, "seeds 1 and 2 plant the same values");
}

/// The regrade shortcut (a bash step that leaves every entry's metadata as
/// it was reuses the last grade) never hides a change: a fix that keeps the
/// file's size and restores its mtime is still graded, because the ctime
/// moves. The step before it is made non-racy (its fingerprint trusted) by
/// waiting, so the shortcut is really in play.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unchanged_tree_shortcut_sees_stealthy_edits() {
    let (env, data) = util::env_with(2).await;
    let obs = util::reset(&env, 2).await;
    let sid = obs.session_id.clone();
    assert_eq!(obs.leaks_current, 2);
    let truth = server::tasks::load_generated(&data.path().join("tasks").join("task_02"))
        .expect("generated task");
    let s1 = &truth.secrets[0];
    // Settle, then a no-op step: its fingerprint is trusted and recorded.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let o = util::step(&env, &sid, "true").await;
    assert_eq!(o.leaks_current, 2);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let o = util::step(&env, &sid, "true").await;
    assert_eq!(o.leaks_current, 2);
    assert!(o.health.cached, "an unchanged tree is not retested");
    // Same length, same inode (rewritten in place, not replaced), mtime
    // and atime restored from a reference copy: only the ctime moves.
    let blank = "Z".repeat(s1.value.len());
    let cmd = format!(
        "cp -p {f} \"$TMPDIR/ref\" && python3 -c \"
import sys
p, old, new = sys.argv[1:]
with open(p, 'r+b') as f:
    b = f.read()
    f.seek(0)
    f.write(b.replace(old.encode(), new.encode()))
\" {f} {v} {blank} && touch -r \"$TMPDIR/ref\" {f}",
        f = s1.file,
        v = s1.value,
    );
    let o = util::step(&env, &sid, &cmd).await;
    let la = o.last_action.as_ref().expect("output");
    assert_eq!(la.exit_code, Some(0), "{}", la.stderr);
    assert_eq!(o.leaks_current, 1, "the stealthy fix was graded");
    // And the shortcut also sees it on a later no-op step (no stale grade).
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let o = util::step(&env, &sid, "true").await;
    assert_eq!(o.leaks_current, 1);
}
