//! The seam between the routes and the environment.
//!
//! The routes only need the [`Environment`]'s public methods; putting them
//! behind a trait lets the router's tests run against an in-memory fake
//! (no sandbox, no workspaces) while the server uses the real thing.

use crate::env::trajectory::TrajectoryFile;
use crate::env::{EnvError, Environment};
use crate::models::{
    Action, Observation, ResetRequest, RevealedSecret, SandboxInfo, State, TaskInfo,
};
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what the async trait methods return, so the
/// trait stays object-safe (`Arc<dyn EnvBackend>`) without `async_trait`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the HTTP layer needs from an environment. Mirrors
/// [`Environment`]'s methods one for one.
pub trait EnvBackend: Send + Sync + 'static {
    /// Starts an episode in a fresh session.
    fn reset(&self, req: ResetRequest) -> BoxFuture<'_, Result<Observation, EnvError>>;
    /// Runs one action in a session and regrades.
    fn step<'a>(
        &'a self,
        session_id: &'a str,
        action: Action,
    ) -> BoxFuture<'a, Result<Observation, EnvError>>;
    /// Ends open session `session_id` and starts a new episode under the
    /// same id (a WebSocket attached to an HTTP-created session resets it).
    /// A backend that cannot refuses.
    fn reset_as<'a>(
        &'a self,
        session_id: &'a str,
        req: ResetRequest,
    ) -> BoxFuture<'a, Result<Observation, EnvError>> {
        let _ = (session_id, req);
        Box::pin(async {
            Err(EnvError::Internal(
                "this backend cannot reset a session in place".into(),
            ))
        })
    }
    /// The session object.
    fn state(&self, session_id: &str) -> Result<State, EnvError>;
    /// Raw values of a session's currently visible secrets
    /// (`GET /state?reveal=true`). A backend without ground truth reveals
    /// nothing and says so.
    fn revealed_values(&self, session_id: &str) -> Result<Vec<RevealedSecret>, EnvError> {
        let _ = session_id;
        Err(EnvError::Internal(
            "this backend cannot reveal secret values".into(),
        ))
    }
    /// Ends a session and frees its workspace.
    fn close<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), EnvError>>;
    /// The redacted recording of a session, live or retained after close
    /// (`GET /trajectory`). A backend that records nothing knows no
    /// session's trajectory.
    fn trajectory<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<TrajectoryFile, EnvError>> {
        Box::pin(async move {
            Err(EnvError::UnknownSession(
                session_id.chars().take(80).collect(),
            ))
        })
    }
    /// All tasks, without ground truth.
    fn tasks(&self) -> Vec<TaskInfo>;
    /// Whether commands are contained.
    fn sandbox_info(&self) -> SandboxInfo;
    /// Whether resets are served (contained, or uncontained by the
    /// operator's explicit opt-in).
    fn serves_episodes(&self) -> bool {
        self.sandbox_info().available
    }
    /// Sessions active now (HTTP and WebSocket alike).
    fn active_sessions(&self) -> usize;
}

impl EnvBackend for Environment {
    fn reset(&self, req: ResetRequest) -> BoxFuture<'_, Result<Observation, EnvError>> {
        Box::pin(Environment::reset(self, req))
    }
    fn step<'a>(
        &'a self,
        session_id: &'a str,
        action: Action,
    ) -> BoxFuture<'a, Result<Observation, EnvError>> {
        Box::pin(Environment::step(self, session_id, action))
    }
    fn reset_as<'a>(
        &'a self,
        session_id: &'a str,
        req: ResetRequest,
    ) -> BoxFuture<'a, Result<Observation, EnvError>> {
        Box::pin(Environment::reset_as(self, session_id, req))
    }
    fn state(&self, session_id: &str) -> Result<State, EnvError> {
        Environment::state(self, session_id)
    }
    fn revealed_values(&self, session_id: &str) -> Result<Vec<RevealedSecret>, EnvError> {
        Environment::revealed_values(self, session_id)
    }
    fn close<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), EnvError>> {
        Box::pin(Environment::close(self, session_id))
    }
    fn trajectory<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<TrajectoryFile, EnvError>> {
        Box::pin(Environment::trajectory(self, session_id))
    }
    fn tasks(&self) -> Vec<TaskInfo> {
        Environment::tasks(self)
    }
    fn sandbox_info(&self) -> SandboxInfo {
        Environment::sandbox_info(self)
    }
    fn serves_episodes(&self) -> bool {
        Environment::serves_episodes(self)
    }
    fn active_sessions(&self) -> usize {
        Environment::active_sessions(self)
    }
}
