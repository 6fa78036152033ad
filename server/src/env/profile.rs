//! Where the time of one step went.

use super::Environment;

/// Wall time of each phase of one step, as measured by the server
/// ([`Environment::step_profile`]); the benchmark prints these so a slow
/// step can be attributed without a profiler. Phases that did not run are
/// zero.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepProfile {
    /// The whole `step` call.
    pub total: std::time::Duration,
    /// Writing the in-flight marker before the action.
    pub marker: std::time::Duration,
    /// The action itself (for bash: owner walk + sandbox run).
    pub action: std::time::Duration,
    /// Of `action`: handing the workspace to the command's uid.
    pub owner_walk: std::time::Duration,
    /// Of `action`: the whole sandbox call (uid lease, owner walk,
    /// fork/exec of bwrap, the command, until its last process is gone).
    pub sandbox: std::time::Duration,
    /// The post-command workspace walk ([`super::fsread::survey`]), both walks
    /// when a racy first one was repeated after grading.
    pub survey: std::time::Duration,
    /// The grading pass (zero when the unchanged tree reused its grade).
    pub grade: std::time::Duration,
    /// Of `grade`: security half.
    pub security: std::time::Duration,
    /// Of `grade`: health half (runs concurrently with security).
    pub health: std::time::Duration,
    /// Of `health`: the suite's own time inside pytest, when it ran.
    pub health_in_pytest: Option<std::time::Duration>,
    /// Building the observation.
    pub observe: std::time::Duration,
    /// Saving state, appending the recording, removing the marker.
    pub save: std::time::Duration,
    /// True when this step regraded.
    pub regraded: bool,
    /// True when the command ran in a sandbox prewarmed for it.
    pub warm: bool,
    /// Starting the sandbox for the next command (the spawn only; its
    /// set-up runs concurrently, off the step).
    pub prewarm: std::time::Duration,
}

impl Environment {
    /// Where the time of a session's last step went (see [`StepProfile`]);
    /// None for an unknown session or one busy with a step.
    pub fn step_profile(&self, session_id: &str) -> Option<StepProfile> {
        let sess = self.session(session_id).ok()?;
        let g = sess.try_lock().ok()?;
        Some(g.cache.profile.clone())
    }
}
