//! The per-step shortcuts (one survey walk, the owner hint, the late and
//! post-grade fingerprints) on a real task: they skip work, never a grade.

use super::{EnvConfig, Environment, StepProfile};
use crate::models::{Action, Observation, ResetRequest, TaskRef};
use std::os::unix::fs::MetadataExt;
use std::time::Duration;
use std::time::Instant;

async fn env() -> Option<(Environment, tempfile::TempDir)> {
    if !testkit::bwrap() {
        return None;
    }
    let data = tempfile::tempdir().expect("tempdir");
    let mut cfg = EnvConfig::with_root(&crate::test_paths::root());
    cfg.venv = crate::test_paths::venv();
    cfg.data_dir = data.path().to_path_buf();
    cfg.max_sessions = 4;
    let env = Environment::new(cfg).await.expect("environment");
    Some((env, data))
}

async fn reset(env: &Environment, task: u32) -> Observation {
    env.reset(ResetRequest {
        task_id: Some(TaskRef::Number(task)),
        ..Default::default()
    })
    .await
    .expect("reset")
}

async fn step(env: &Environment, sid: &str, cmd: &str) -> (Observation, StepProfile) {
    let o = env
        .step(
            sid,
            Action {
                command: cmd.into(),
            },
        )
        .await
        .expect("step");
    let la = o.last_action.as_ref().expect("output");
    assert_eq!(la.exit_code, Some(0), "{cmd}: {}", la.stderr);
    let p = env.step_profile(sid).expect("profile");
    (o, p)
}

async fn settle(ws: &std::path::Path, want_any: bool) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // A warm sandbox's bwrap names the workspace it binds.
        let n = crate::sandbox::tests::host_procs_any(&ws.display().to_string()).len();
        if (n > 0) == want_any || Instant::now() > deadline {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Bash steps run in the sandbox prewarmed after the previous step (or
/// the reset); it lives exactly as long as the episode: gone once the
/// episode is done, and with a closed session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prewarmed_sandboxes_live_with_the_episode() {
    let Some((env, _data)) = env().await else {
        return;
    };
    let sid = reset(&env, 1).await.session_id;
    let ws = env.workspace_of(&sid).expect("workspace");
    assert!(settle(&ws, true).await > 0, "reset prewarms a sandbox");
    for cmd in ["true", "echo hi > note.txt", "cat note.txt"] {
        let (_, p) = step(&env, &sid, cmd).await;
        assert!(p.warm, "{cmd}: {p:?}");
        assert!(settle(&ws, true).await > 0, "the next one is started");
    }
    // A structured action keeps the waiting one.
    step(&env, &sid, "list_files").await;
    let (_, p) = step(&env, &sid, "true").await;
    assert!(p.warm, "{p:?}");
    let o = env
        .step(
            &sid,
            Action {
                command: "submit".into(),
            },
        )
        .await
        .expect("submit");
    assert!(o.done);
    assert_eq!(settle(&ws, false).await, 0, "episode over: nothing waits");
    // Closing a live session kills its waiting sandbox.
    let sid = reset(&env, 1).await.session_id;
    let ws = env.workspace_of(&sid).expect("workspace");
    assert!(settle(&ws, true).await > 0);
    env.close(&sid).await.expect("close");
    assert_eq!(settle(&ws, false).await, 0, "closed: nothing waits");
}

/// A caller that stops waiting (an HTTP client hanging up mid-step)
/// does not cut the step short: the command runs to its end, the step
/// counts, and its grade and reply are kept as if it had been awaited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_step_still_completes_and_counts() {
    let Some((env, _data)) = env().await else {
        return;
    };
    let sid = reset(&env, 1).await.session_id;
    let ws = env.workspace_of(&sid).expect("workspace");
    let cmd = "sleep 0.5; echo done > finished.txt";
    let abandoned = tokio::time::timeout(
        Duration::from_millis(100),
        env.step(
            &sid,
            Action {
                command: cmd.into(),
            },
        ),
    )
    .await;
    assert!(abandoned.is_err(), "the step outlived the caller's wait");
    let deadline = Instant::now() + Duration::from_secs(30);
    let steps = loop {
        // Busy while the abandoned step still runs.
        let n = env.state(&sid).map(|st| st.step_count).ok();
        if n.is_some() || Instant::now() > deadline {
            break n;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(steps, Some(1), "the abandoned step counts");
    assert_eq!(
        std::fs::read_to_string(ws.join("finished.txt")).expect("the command ran to its end"),
        "done\n"
    );
    let (o, _) = step(&env, &sid, "cat finished.txt").await;
    assert_eq!(o.steps_taken, 2, "{o:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shortcuts_skip_work_but_never_a_grade() {
    let Some((env, data)) = env().await else {
        return;
    };
    let obs = reset(&env, 2).await;
    let sid = obs.session_id.clone();
    let ws = env.workspace_of(&sid).expect("workspace");
    // The reset copy was just written (racy); the late walk vouches
    // for it once the window has passed, so a no-op first step reuses
    // the reset grade instead of regrading.
    // Waits for it (polling, bounded: a loaded machine may delay the
    // background walk well past the window).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let sess = env.session(&sid).expect("session");
        let ready = {
            let g = sess.try_lock().expect("no step in flight");
            g.graded_fp.is_some() || g.cache.late_fp.fp.lock().unwrap().is_some()
        };
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "late fingerprint never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A step regrades exactly when the sandbox had to hand the tree to
    // another uid: the lchown walk moves every ctime, so the tree's
    // fingerprint changes (conservatively, a regrade). The leased uid
    // is usually the tree's owner, but not when a concurrent command
    // (other tests share the uid pool) holds that one.
    let walked = |p: &StepProfile| p.owner_walk > Duration::ZERO;
    let (o, p) = step(&env, &sid, "true").await;
    assert_eq!(p.regraded, walked(&p), "no-op first step: {p:?}");
    // The same grade as at reset (below 1: the credential-flow tests
    // fail on the planted values).
    assert_eq!(
        (o.health.passed, o.health.total, o.health.errors),
        (obs.health.passed, obs.health.total, 0),
        "{:?}",
        o.health
    );
    assert!(
        o.health.passed > 0 && o.health.error.is_none(),
        "{:?}",
        o.health
    );
    assert!(o.health.cached || walked(&p), "{:?}", o.health);
    assert!(p.sandbox > Duration::ZERO && p.total >= p.action, "{p:?}");
    // The owner hint: a second command as the same uid skips the walk.
    let owner = |p: &std::path::Path| std::fs::symlink_metadata(p).unwrap().uid();
    let u1 = owner(&ws);
    let (_, p) = step(&env, &sid, "true").await;
    if owner(&ws) == u1 {
        assert_eq!(p.owner_walk, Duration::ZERO, "{p:?}");
    }
    // An edit regrades (pytest runs), and its post-grade walk vouches
    // for the edited tree, so an immediate no-op step does not.
    let (o, p) = step(&env, &sid, "echo '# note' >> README.md").await;
    assert!(p.regraded && !o.health.cached, "{p:?}");
    let (_, p) = step(&env, &sid, "true").await;
    assert_eq!(p.regraded, walked(&p), "no-op step after an edit: {p:?}");
    // A real fix right after a fresh reset (inside the racy window, so
    // the late walk must not be trusted) is graded.
    let truth = crate::tasks::load_generated(&data.path().join("tasks").join("task_02"))
        .expect("generated task");
    let s1 = truth
        .secrets
        .iter()
        .find(|s| !s.history_only)
        .expect("a tree secret");
    let obs = reset(&env, 2).await;
    let before = obs.leaks_current;
    let cmd = format!(
        "python3 -c \"import sys; p=sys.argv[1]; b=open(p).read(); open(p,'w').write(b.replace(sys.argv[2], 'REDACTED'))\" {} {}",
        s1.file, s1.value
    );
    let (o, p) = step(&env, &obs.session_id, &cmd).await;
    assert!(p.regraded, "{p:?}");
    assert_eq!(o.leaks_current, before - 1, "the fix was graded");
}
