//! The session table: lookup, capacity reservation, close and the idle
//! reaper.

use super::Environment;
use super::cache::StepCache;
use super::config::WARM_IDLE;
use super::error::{EnvError, detached, internal};
use super::grade::Grade;
use super::prewarm::WarmSlot;
use super::runtime::TaskRuntime;
use super::session::{self, SessionData, SessionPaths};
use crate::models::State;
use std::path::PathBuf;
use std::sync::Arc;

/// One live session: its saved state, its files, its task and what it
/// keeps between steps.
pub(super) struct Session {
    pub(super) data: SessionData,
    pub(super) paths: SessionPaths,
    pub(super) rt: Arc<TaskRuntime>,
    /// The last grading, reused after read-only structured actions.
    pub(super) grade: Grade,
    /// Metadata fingerprint of the workspace `grade` was computed on
    /// (`fsread::fingerprint`); None when unknown or racy. A bash step that
    /// leaves it unchanged reuses `grade` instead of regrading.
    pub(super) graded_fp: Option<[u8; 32]>,
    /// What the last workspace walk saw, reused until the next bash step.
    pub(super) cache: StepCache,
    /// The sandbox for the next bash command ([`crate::sandbox::Sandbox::prewarm`]), so a
    /// step pays only for delivering its command. Started after a step
    /// (and at reset) while the episode goes on; dropped, which kills it,
    /// with the session or after [`WARM_IDLE`].
    pub(super) warm: WarmSlot,
}

/// A slot taken by a reset in progress; gives it back on drop, by which
/// time the session is in the table (or the reset failed).
pub(super) struct Reservation<'a>(pub(super) &'a std::sync::atomic::AtomicUsize);

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Environment {
    pub(super) fn sessions_root(&self) -> PathBuf {
        self.inner.cfg.data_dir.join("sessions")
    }

    pub(super) fn session(&self, id: &str) -> Result<Arc<tokio::sync::Mutex<Session>>, EnvError> {
        self.inner
            .sessions
            .read()
            .expect("session table lock poisoned")
            .get(id)
            .cloned()
            .ok_or_else(|| EnvError::UnknownSession(id.chars().take(80).collect()))
    }

    /// The session object.
    pub fn state(&self, session_id: &str) -> Result<State, EnvError> {
        let sess = self.session(session_id)?;
        let g = sess.try_lock().map_err(|_| EnvError::Busy)?;
        Ok(State {
            episode_id: g.data.episode_id.clone(),
            step_count: g.data.steps,
            session_id: g.data.session_id.clone(),
            task_id: g.data.task_id,
            seed: g.data.seed,
            done: g.data.done,
            score: g.data.score,
            observation: g.data.last_obs.clone(),
        })
    }

    /// The raw values of the secrets currently visible in a session
    /// (`exploration.revealed`, exactly the ids of its `visible_secrets`),
    /// in task order. Secrets not yet visible are never included. For
    /// `GET /state?reveal=true` only; never recorded.
    pub fn revealed_values(
        &self,
        session_id: &str,
    ) -> Result<Vec<crate::models::RevealedSecret>, EnvError> {
        let sess = self.session(session_id)?;
        let g = sess.try_lock().map_err(|_| EnvError::Busy)?;
        Ok(g.rt
            .secrets
            .iter()
            .filter(|s| g.data.exploration.revealed.contains(&s.id))
            .map(|s| crate::models::RevealedSecret {
                id: s.id.clone(),
                value: s.value.clone(),
            })
            .collect())
    }

    /// Ends a session and removes its workspace.
    pub async fn close(&self, session_id: &str) -> Result<(), EnvError> {
        let env = self.clone();
        let sid = session_id.to_owned();
        detached(async move { env.run_close(&sid).await }).await
    }

    pub(super) async fn run_close(&self, session_id: &str) -> Result<(), EnvError> {
        let removed = self
            .inner
            .sessions
            .write()
            .expect("session table lock poisoned")
            .remove(session_id);
        let Some(sess) = removed else {
            return Err(EnvError::UnknownSession(
                session_id.chars().take(80).collect(),
            ));
        };
        // Wait for an in-flight step to finish before deleting its files.
        let mut g = sess.lock().await;
        g.warm = WarmSlot::Empty;
        let dir = g.paths.dir.clone();
        drop(g);
        let store = self.trajectory_store();
        let sid = session_id.to_owned();
        tokio::task::spawn_blocking(move || super::trajectory::retire(&store, &dir, &sid))
            .await
            .map_err(internal)?
            .map_err(internal)
    }

    /// Closes sessions idle for longer than the configured timeout and
    /// finished ones past their grace, and drops prewarmed sandboxes idle
    /// for longer than [`WARM_IDLE`].
    pub async fn expire_idle(&self) -> usize {
        let now = session::now_unix();
        let timeout = self.inner.cfg.session_idle_timeout_s;
        let grace = self.inner.cfg.finished_grace_s;
        let ids: Vec<String> = {
            let t = self
                .inner
                .sessions
                .read()
                .expect("session table lock poisoned");
            t.iter()
                .filter(|(_, s)| {
                    s.try_lock()
                        .map(|mut g| {
                            if g.warm.age().is_some_and(|a| a > WARM_IDLE) {
                                g.warm = WarmSlot::Empty;
                            }
                            let idle = now.saturating_sub(g.data.last_active);
                            idle > timeout || (g.data.done && idle > grace)
                        })
                        .unwrap_or(false)
                })
                .map(|(k, _)| k.clone())
                .collect()
        };
        let mut n = 0;
        for id in ids {
            if self.close(&id).await.is_ok() {
                tracing::info!(session = %id, "expired idle or finished session");
                n += 1;
            }
        }
        n
    }

    /// Spawns the idle-session reaper on the current tokio runtime.
    pub fn spawn_reaper(&self) {
        let env = self.clone();
        let cfg = &self.inner.cfg;
        let every = std::time::Duration::from_secs(
            (cfg.session_idle_timeout_s / 4)
                .min(cfg.finished_grace_s / 2)
                .clamp(1, 60),
        );
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                env.expire_idle().await;
            }
        });
    }

    /// Sessions active now.
    pub fn active_sessions(&self) -> usize {
        self.inner
            .sessions
            .read()
            .expect("session table lock poisoned")
            .len()
    }
    /// The configured session limit.
    pub fn max_sessions(&self) -> usize {
        self.inner.cfg.max_sessions
    }
    /// The workspace directory of a session (tests and debugging).
    pub fn workspace_of(&self, session_id: &str) -> Result<PathBuf, EnvError> {
        Ok(SessionPaths::new(&self.sessions_root(), session_id).workspace()).and_then(|p| {
            self.session(session_id)?;
            Ok(p)
        })
    }
}
