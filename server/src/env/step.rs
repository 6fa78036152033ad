//! One step: the in-flight marker, the action, the regrade and the save.

use super::actions::{self, Parsed};
use super::cache::{list_for_observation, survey_blocking};
use super::episode::Event;
use super::error::{EnvError, detached, internal};
use super::grading;
use super::prewarm::WarmSlot;
use super::profile::StepProfile;
use super::session;
use super::table::Session;
use super::{Environment, fsread, meta};
use crate::models::{Action, Observation};
use std::path::Path;
use std::time::Instant;

impl Environment {
    /// Runs one action and regrades.
    pub async fn step(&self, session_id: &str, action: Action) -> Result<Observation, EnvError> {
        let env = self.clone();
        let sid = session_id.to_owned();
        detached(async move { env.run_step(&sid, action).await }).await
    }

    async fn run_step(&self, session_id: &str, action: Action) -> Result<Observation, EnvError> {
        let parsed = actions::parse(&action.command).map_err(|e| match e {
            actions::ParseError::TooLong(len) => EnvError::ActionTooLong {
                len,
                max: actions::MAX_ACTION_BYTES,
            },
            other => EnvError::InvalidAction(other.to_string()),
        })?;
        let sess = self.session(session_id)?;
        let mut guard = sess.try_lock().map_err(|_| EnvError::Busy)?;
        let s = &mut *guard;
        if s.data.done {
            return Err(EnvError::EpisodeDone);
        }
        let ws = s.paths.workspace();
        let step_started = Instant::now();
        s.cache.profile = StepProfile::default();
        // Evidence of this step survives a kill mid-command, so a restart
        // can count it and regrade what it changed (`recover_session`).
        // No marker, no step: a step that could not be recovered never runs.
        let marker = session::InFlight {
            step: s.data.steps + 1,
            command: action.command.clone(),
            started_unix: session::now_unix(),
        };
        session::begin_step(&s.paths, &marker)
            .await
            .map_err(internal)?;
        s.cache.profile.marker = step_started.elapsed();
        // Before the first action: a late fingerprint of the fresh copy,
        // taken only if the late walk finished before any action started.
        if s.graded_fp.is_none() && s.data.steps == 0 {
            s.graded_fp = s
                .cache
                .late_fp
                .fp
                .lock()
                .expect("late fingerprint lock poisoned")
                .take();
        }
        s.cache
            .late_fp
            .actions
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let started = Instant::now();
        let command_started = std::time::SystemTime::now();
        let (mut out, mutating) = self.run_action(s, &parsed, &ws).await;
        out.command = action.command.clone();
        out.duration_ms = started.elapsed().as_millis() as u64;
        s.cache.profile.action = started.elapsed();
        let command_ended = Instant::now();
        s.data.steps += 1;
        if mutating {
            self.regrade_after_command(s, &ws, command_started, command_ended)
                .await;
        }
        let event = Event::Step {
            command: &action.command,
            submitted: matches!(parsed, Parsed::Submit),
            exit_code: out.exit_code,
        };
        let rt = s.rt.clone();
        let grade = s.grade.clone();
        let t = Instant::now();
        if s.cache.files.is_none() {
            s.cache.files = Some(list_for_observation(&ws));
        }
        let files = s.cache.files.clone().unwrap_or_default();
        let obs = self.advance_episode(&rt, &mut s.data, &grade, Some(out), &files, event);
        s.cache.profile.observe = t.elapsed();
        let t = Instant::now();
        // Durable before the reply: the client never sees a step the
        // server could forget.
        session::save_durable(&s.paths, &s.data)
            .await
            .map_err(internal)?;
        let _ = session::record(
            &s.paths,
            &rt.redact_line(
                serde_json::json!({"event": "step", "step": s.data.steps, "action": &action.command,
                "reward": obs.reward, "done": obs.done, "observation": &obs}),
            ),
        );
        // State and recording both hold the step: the marker has served.
        if let Err(e) = session::end_step(&s.paths) {
            tracing::warn!(session = %s.data.session_id, error = %e, "cannot remove in-flight marker");
        }
        s.cache.profile.save = t.elapsed();
        // The next command's sandbox starts as this reply goes out, while
        // the agent reads it. Structured actions keep the one they found.
        if s.data.done {
            s.warm = WarmSlot::Empty;
        } else if s.warm.is_empty() {
            let t = Instant::now();
            s.warm = self.prewarm(&ws);
            s.cache.profile.prewarm = t.elapsed();
        }
        s.cache.profile.total = step_started.elapsed();
        Ok(obs)
    }

    /// After a command that may have changed the workspace: normalises the
    /// metadata it chose, walks the tree once, and regrades unless the
    /// tree's fingerprint shows nothing moved. A tree written within the
    /// racy window is walked again once the window has passed, so the next
    /// no-op step can reuse this grade.
    async fn regrade_after_command(
        &self,
        s: &mut Session,
        ws: &Path,
        command_started: std::time::SystemTime,
        command_ended: Instant,
    ) {
        // What the command touched loses the metadata it chose
        // (meta.rs), then one walk: fingerprint, file list and owner
        // (fsread::survey).
        let t = Instant::now();
        let pass = meta::Pass::new(command_started);
        let ws2 = ws.to_path_buf();
        let sv = tokio::task::spawn_blocking(move || fsread::survey_normalising(&ws2, &pass))
            .await
            .unwrap_or_default();
        s.cache.profile.survey = t.elapsed();
        s.cache.owner = sv.owner;
        s.cache.files = Some(sv.files);
        let mut fp = sv.fingerprint;
        // Nothing in the tree moved (not one ctime): the last grade is
        // still the grade of this tree. Only a clean grade is reused; a
        // grading error may be transient, so it is retried.
        let unchanged = fp.is_some() && fp == s.graded_fp && s.grade.errors.is_empty();
        if unchanged {
            s.grade.health.cached = true;
        } else {
            // A command that wrote within the racy window leaves no
            // trusted fingerprint, and the next no-op step would then
            // regrade in full. Nothing writes to the tree after the
            // command ended (its processes are gone, grading only
            // reads), so once the window has passed a fresh walk
            // vouches for the very tree being graded. It runs during
            // grading (which outlasts the window when pytest runs), off
            // the step's path; if grading ends first, after it, if the
            // window has passed by then.
            let t = Instant::now();
            let grading = grading::grade(&s.rt, ws);
            tokio::pin!(grading);
            let mut again = None;
            let grade = if fp.is_none() {
                let wait = (fsread::RACY_WINDOW + std::time::Duration::from_millis(1))
                    .saturating_sub(command_ended.elapsed());
                let late = async {
                    tokio::time::sleep(wait).await;
                    survey_blocking(ws).await
                };
                tokio::select! {
                    g = &mut grading => g,
                    sv = late => {
                        again = Some(sv);
                        grading.await
                    }
                }
            } else {
                grading.await
            };
            s.grade = grade;
            s.cache.profile.grade = t.elapsed();
            s.cache.profile.security = s.grade.timings.security;
            s.cache.profile.health = s.grade.timings.health;
            s.cache.profile.health_in_pytest = s.grade.timings.health_in_pytest;
            s.cache.profile.regraded = true;
            s.data.remediated = s.grade.remediated.clone();
            if fp.is_none() && again.is_none() && command_ended.elapsed() > fsread::RACY_WINDOW {
                let t = Instant::now();
                again = Some(survey_blocking(ws).await);
                s.cache.profile.survey += t.elapsed();
            }
            if let Some(again) = again {
                fp = again.fingerprint;
                s.cache.owner = again.owner;
            }
        }
        s.graded_fp = fp;
    }
}
