//! Starting an episode in a fresh session.

use super::cache::StepCache;
use super::episode::Event;
use super::error::{EnvError, detached, internal};
use super::grading;
use super::session::{self, SessionData, SessionPaths};
use super::table::{Reservation, Session};
use super::visibility::{self, Exploration};
use super::{Environment, fsread};
use crate::models::{
    HealthSummary, Observation, ResetRequest, RewardBreakdown, RewardMode, SandboxInfo, ScanMode,
    TaskRef,
};
use std::sync::Arc;

impl Environment {
    /// Starts an episode in a fresh session.
    pub async fn reset(&self, req: ResetRequest) -> Result<Observation, EnvError> {
        let env = self.clone();
        detached(async move { env.run_reset(req, None).await }).await
    }

    /// Ends open session `session_id` and starts a new episode under the
    /// same id ([`super::trajectory::reset_in_place`]).
    pub async fn reset_as(
        &self,
        session_id: &str,
        req: ResetRequest,
    ) -> Result<Observation, EnvError> {
        let env = self.clone();
        let sid = session_id.to_owned();
        detached(async move { env.reset_in_place(&sid, req).await }).await
    }

    pub(super) async fn run_reset(
        &self,
        req: ResetRequest,
        session_id: Option<String>,
    ) -> Result<Observation, EnvError> {
        self.check_contained()?;
        let task_id = match &req.task_id {
            None => 1,
            Some(r) => self
                .inner
                .runtimes
                .resolve(r)
                .ok_or_else(|| EnvError::UnknownTask(task_ref_text(r)))?,
        };
        req.validate().map_err(EnvError::InvalidRequest)?;
        // At the limit, finished episodes past their grace give their slots
        // back first (the reaper does it too, but only every few seconds).
        if self.active_sessions() + self.inner.pending.load(std::sync::atomic::Ordering::SeqCst)
            >= self.inner.cfg.max_sessions
        {
            self.expire_idle().await;
        }
        // Check and reserve under the table's write lock, so two resets
        // cannot both take the last slot.
        let _slot = {
            let table = self
                .inner
                .sessions
                .write()
                .expect("session table lock poisoned");
            let pending = &self.inner.pending;
            let active = table.len() + pending.load(std::sync::atomic::Ordering::SeqCst);
            let max = self.inner.cfg.max_sessions;
            if active >= max {
                return Err(EnvError::CapacityReached { active, max });
            }
            pending.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reservation(pending)
        };
        let seed = req.seed;
        let rt = self
            .inner
            .runtimes
            .get(task_id, seed)
            .await
            .map_err(internal)?;
        let session_id = session_id.unwrap_or_else(super::trajectory::new_session_id);
        let episode_id = req.episode_id.clone().unwrap_or_else(|| session_id.clone());
        let paths = SessionPaths::new(&self.sessions_root(), &session_id);
        let ws = paths.workspace();
        // A pool uid at rest: the first command then usually runs as the
        // owner already and skips the lchown walk (Sandbox::rest_owner).
        let uidgid = self.inner.sandbox.rest_owner();
        let (rt2, ws2, pool) = (rt.clone(), ws.clone(), self.inner.pool.clone());
        let key = (task_id, seed);
        let survey = tokio::task::spawn_blocking(move || -> std::io::Result<fsread::Survey> {
            std::fs::create_dir_all(ws2.parent().expect("workspace has a parent"))?;
            if !pool.take_to(key, &ws2) {
                rt2.copy_workspace_to(&ws2, uidgid)?;
            }
            Ok(fsread::survey(&ws2))
        })
        .await
        .map_err(internal)?
        .map_err(internal)?;
        self.inner.pool.refill(key, rt.clone(), uidgid);
        // A fresh copy is the template byte for byte: its grade is the
        // template's, computed once per runtime.
        let grade = match rt.reset_grade.get() {
            Some(g) => g.clone(),
            None => {
                let g = grading::grade(&rt, &ws).await;
                if g.errors.is_empty() {
                    let _ = rt.reset_grade.set(g.clone());
                }
                g
            }
        };
        let mut exploration = Exploration::default();
        visibility::update_revealed(&rt.secrets, &mut exploration, &grade.fixed);
        let mut data = SessionData {
            session_id: session_id.clone(),
            episode_id,
            task_id,
            seed,
            reward_mode: req.reward_mode.unwrap_or_default(),
            steps: 0,
            score: 0.0,
            exploration,
            remediated: grade.remediated.clone(),
            history: Vec::new(),
            done: false,
            terminated: false,
            truncated: false,
            success: false,
            last_obs: placeholder_obs(),
            last_active: session::now_unix(),
        };
        let obs = self.advance_episode(&rt, &mut data, &grade, None, &survey.files, Event::Graded);
        session::save_durable(&paths, &data)
            .await
            .map_err(internal)?;
        let _ = session::record(
            &paths,
            &rt.redact_line(serde_json::json!({"event": "reset", "task_id": task_id, "seed": seed, "observation": &obs})),
        );
        let warm = self.prewarm(&ws);
        let sess = Session {
            data,
            paths,
            rt,
            grade,
            graded_fp: survey.fingerprint,
            cache: StepCache {
                owner: survey.owner,
                files: Some(survey.files),
                ..Default::default()
            },
            warm,
        };
        if sess.graded_fp.is_none() {
            sess.cache.late_fp.spawn(ws.clone());
        }
        self.inner
            .sessions
            .write()
            .expect("session table lock poisoned")
            .insert(session_id, Arc::new(tokio::sync::Mutex::new(sess)));
        Ok(obs)
    }
}

fn task_ref_text(r: &TaskRef) -> String {
    match r {
        TaskRef::Number(n) => n.to_string(),
        TaskRef::Name(s) => s.chars().take(64).collect(),
    }
}

fn placeholder_obs() -> Observation {
    Observation {
        session_id: String::new(),
        episode_id: String::new(),
        task_id: 0,
        task_slug: String::new(),
        seed: None,
        title: String::new(),
        difficulty: crate::models::Difficulty::Easy,
        description: String::new(),
        scan_mode: ScanMode::Dir,
        step_budget: 0,
        steps_taken: 0,
        reward: 0.0,
        reward_mode: RewardMode::Score,
        reward_breakdown: RewardBreakdown::default(),
        leaks_initial: 0,
        leaks_current: 0,
        visible_secrets: vec![],
        hidden_count: 0,
        conflict_map: vec![],
        ranked_actions: vec![],
        top_blocker: None,
        health: HealthSummary::default(),
        last_action: None,
        history: vec![],
        done: false,
        terminated: false,
        truncated: false,
        success: false,
        sandbox: SandboxInfo {
            available: false,
            tier: crate::models::SandboxTier::None,
            landlock_abi: None,
            uid_per_command: false,
            detail: String::new(),
        },
        grading_errors: vec![],
    }
}
