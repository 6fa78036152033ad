//! Crash recovery: sessions saved by an earlier process, made to agree
//! with their workspace and recording again.

use super::actions::{self, Parsed};
use super::cache::StepCache;
use super::cache::list_for_observation;
use super::config::RESUME_PARALLEL;
use super::episode::Event;
use super::grade::Grade;
use super::grading;
use super::prewarm::WarmSlot;
use super::session::{self, SessionPaths};
use super::table::Session;
use super::{Environment, fsread, meta};
use crate::models::ActionOutput;
use std::sync::Arc;

/// The error of a step the server was killed during (see
/// `Environment::recover_session`).
pub const INTERRUPTED: &str = "interrupted by server restart: the server stopped while this step ran; \
its changes to the workspace, if any, are kept and graded";

impl Environment {
    /// Resumes every session saved under `data/sessions` by an earlier
    /// process, making state, workspace and recording agree again
    /// ([`Self::recover_session`]). Sessions are recovered two at a time
    /// (each regrade runs the task's tests; the machine may have 2 cores).
    pub(super) async fn resume_sessions(&self) {
        let root = self.sessions_root();
        let Ok(rd) = std::fs::read_dir(&root) else {
            return;
        };
        let mut loaded = Vec::new();
        for e in rd.flatten() {
            let id = e.file_name().to_string_lossy().into_owned();
            let paths = SessionPaths::new(&root, &id);
            let data = match session::load(&paths) {
                Ok(d) => d,
                Err(_) => {
                    // A session dir without a readable state is debris of a
                    // crash during reset: nothing to resume.
                    let _ = crate::treeremove::remove_tree(&paths.dir);
                    continue;
                }
            };
            let rt = match self.inner.runtimes.get(data.task_id, data.seed).await {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "cannot resume session");
                    continue;
                }
            };
            let grade = Grade::from_observation(&data.last_obs, &data.remediated);
            loaded.push(Session {
                data,
                paths,
                rt,
                grade,
                graded_fp: None,
                cache: StepCache::default(),
                warm: WarmSlot::Empty,
            });
        }
        let gate = Arc::new(tokio::sync::Semaphore::new(RESUME_PARALLEL));
        let mut tasks = tokio::task::JoinSet::new();
        for mut sess in loaded {
            let (env, gate) = (self.clone(), gate.clone());
            tasks.spawn(async move {
                let _permit = gate.acquire_owned().await;
                let what = env.recover_session(&mut sess).await;
                tracing::info!(session = %sess.data.session_id, step = sess.data.steps, recovery = what, "resumed session");
                sess
            });
        }
        while let Some(r) = tasks.join_next().await {
            let Ok(sess) = r else {
                tracing::warn!("a session's recovery panicked; it is not resumed");
                continue;
            };
            self.inner
                .sessions
                .write()
                .expect("session table lock poisoned")
                .insert(
                    sess.data.session_id.clone(),
                    Arc::new(tokio::sync::Mutex::new(sess)),
                );
        }
    }

    /// Brings a loaded session back in line with its files after a crash:
    ///
    /// 1. the recording gets any line the state has and it lacks (a kill
    ///    between the state write and the append, or a power cut losing
    ///    unsynced appends);
    /// 2. an episode still running is regraded from its workspace, since a
    ///    workspace can hold writes the saved state predates;
    /// 3. a step the in-flight marker shows was killed mid-command is
    ///    counted, with an "interrupted by server restart" error and the
    ///    reward of the real workspace, and saved and recorded like any
    ///    other step.
    ///
    /// A finished episode's result is final: it is not regraded (its
    /// workspace cannot change after `done`, and its last reward is already
    /// recorded). Returns what was done, for the log.
    async fn recover_session(&self, s: &mut Session) -> &'static str {
        let marker = match session::load_inflight(&s.paths) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(session = %s.data.session_id, error = %e, "unreadable in-flight marker; regrading anyway");
                None
            }
        };
        // A marker for a step the state already holds was left between the
        // save and its removal: that step completed.
        let interrupted = marker.filter(|m| m.step > s.data.steps && !s.data.done);
        self.reconcile_recording(s);
        let outcome = if s.data.done {
            "finished"
        } else {
            let ws = s.paths.workspace();
            // The interrupted command's writes get their metadata in normal
            // form, as a finished step's do, in the same one walk.
            let pass = interrupted.as_ref().map(|m| {
                meta::Pass::new(
                    std::time::UNIX_EPOCH
                        + std::time::Duration::from_secs(m.started_unix.saturating_sub(1)),
                )
            });
            let ws2 = ws.clone();
            let fp = tokio::task::spawn_blocking(move || match pass {
                Some(pass) => fsread::survey_normalising(&ws2, &pass).fingerprint,
                None => fsread::fingerprint(&ws2),
            })
            .await
            .ok()
            .flatten();
            let grade = grading::grade(&s.rt, &ws).await;
            match interrupted {
                Some(m) => {
                    s.grade = grade;
                    s.graded_fp = fp;
                    s.data.remediated = s.grade.remediated.clone();
                    self.count_interrupted_step(s, &m).await;
                    "interrupted step counted"
                }
                None if !grade.errors.is_empty() => {
                    // A grading failure at start-up (a busy machine) must
                    // not replace a good saved grade; the next step
                    // regrades (no fingerprint, so nothing is reused).
                    tracing::warn!(session = %s.data.session_id, errors = ?grade.errors, "regrade on resume failed; keeping the saved grade");
                    "regrade failed"
                }
                None => {
                    s.graded_fp = fp;
                    if self.apply_regrade(s, grade).await {
                        "regraded: workspace differed from the saved state"
                    } else {
                        "regraded: unchanged"
                    }
                }
            }
        };
        if let Err(e) = session::end_step(&s.paths) {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot remove in-flight marker");
        }
        outcome
    }

    /// Records, saves and counts a step the server was killed during.
    /// `s.grade` is already the grade of the workspace as the step left it.
    async fn count_interrupted_step(&self, s: &mut Session, m: &session::InFlight) {
        let parsed = actions::parse(&m.command).ok();
        let out = ActionOutput {
            command: m.command.clone(),
            kind: parsed.as_ref().map_or("invalid", |p| p.kind()).to_string(),
            exit_code: None,
            stderr: INTERRUPTED.to_string(),
            // How long it ran before the kill is unknown (the marker has
            // its start; the kill left no time): 0 rather than a guess.
            duration_ms: 0,
            ..Default::default()
        };
        s.data.steps += 1;
        let rt = s.rt.clone();
        let grade = s.grade.clone();
        let ws = s.paths.workspace();
        let event = Event::Step {
            command: &m.command,
            submitted: matches!(parsed, Some(Parsed::Submit)),
            exit_code: out.exit_code,
        };
        let files = list_for_observation(&ws);
        let obs = self.advance_episode(&rt, &mut s.data, &grade, Some(out), &files, event);
        if let Err(e) = session::save_durable(&s.paths, &s.data).await {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot save the recovered step");
        }
        let _ = session::record(
            &s.paths,
            &rt.redact_line(
                serde_json::json!({"event": "step", "step": s.data.steps, "action": &m.command,
                "reward": obs.reward, "done": obs.done, "interrupted": true,
                "observation": &obs}),
            ),
        );
    }

    /// Applies a clean regrade of a resumed session. When the workspace
    /// grades as the saved observation says, nothing changes; otherwise the
    /// observation (reward, leaks, statuses, maybe `done`) is rebuilt from
    /// the files, saved, and a `resume_regrade` line is recorded. Returns
    /// whether anything changed.
    async fn apply_regrade(&self, s: &mut Session, grade: Grade) -> bool {
        let rt = s.rt.clone();
        let ws = s.paths.workspace();
        let mut data = s.data.clone();
        data.remediated = grade.remediated.clone();
        let last = data.last_obs.last_action.clone();
        let files = list_for_observation(&ws);
        let obs = self.advance_episode(&rt, &mut data, &grade, last, &files, Event::Graded);
        let old = &s.data.last_obs;
        let same = obs.leaks_current == old.leaks_current
            && obs.visible_secrets == old.visible_secrets
            && obs.hidden_count == old.hidden_count
            && (
                obs.health.passed,
                obs.health.failed,
                obs.health.errors,
                obs.health.total,
            ) == (
                old.health.passed,
                old.health.failed,
                old.health.errors,
                old.health.total,
            )
            && obs.grading_errors == old.grading_errors
            && obs.done == old.done
            && (obs.reward_breakdown.score - old.reward_breakdown.score).abs() < 1e-12;
        s.grade = grade;
        s.data.remediated = s.grade.remediated.clone();
        if same {
            return false;
        }
        tracing::warn!(session = %data.session_id, old = old.reward_breakdown.score, new = obs.reward_breakdown.score, "workspace differs from the saved state; regraded");
        s.data = data;
        if let Err(e) = session::save_durable(&s.paths, &s.data).await {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot save the regraded state");
        }
        let _ = session::record(
            &s.paths,
            &rt.redact_line(
                serde_json::json!({"event": "resume_regrade", "after_step": s.data.steps,
                "reward": obs.reward, "done": obs.done, "observation": &obs}),
            ),
        );
        true
    }

    /// Appends the recording lines the saved state has and the recording
    /// lacks, marked `"recovered": true`. Only the last step's observation
    /// is known (`last_obs`); an older missing step (a power cut losing
    /// several unsynced appends) gets its history entry and a null
    /// observation.
    fn reconcile_recording(&self, s: &Session) {
        let tail = match session::recorded_tail(&s.paths) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(session = %s.data.session_id, error = %e, "cannot read the recording; not reconciling it");
                return;
            }
        };
        let (rt, d) = (&s.rt, &s.data);
        let mut lines = Vec::new();
        if !tail.reset && tail.last_step == 0 {
            let obs = (d.steps == 0).then_some(&d.last_obs);
            lines.push(rt.redact_line(
                serde_json::json!({"event": "reset", "task_id": d.task_id, "seed": d.seed,
                "recovered": true, "observation": obs}),
            ));
        }
        for n in tail.last_step + 1..=d.steps {
            let Some(h) = d.history.get(n as usize - 1) else {
                break;
            };
            let (done, obs) = if n == d.steps {
                (d.last_obs.done, Some(&d.last_obs))
            } else {
                (false, None)
            };
            lines.push(rt.redact_line(
                serde_json::json!({"event": "step", "step": n, "action": &h.command,
                "reward": h.reward, "done": done, "recovered": true, "observation": obs}),
            ));
        }
        for l in &lines {
            if let Err(e) = session::record(&s.paths, l) {
                tracing::warn!(session = %d.session_id, error = %e, "cannot append a recovered recording line");
                return;
            }
        }
    }
}
