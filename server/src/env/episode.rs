//! The episode state machine: after each grading, what the agent has
//! revealed, the score and the reward, and whether the episode ends. The
//! only place an episode ends: success, the step budget and `submit` are
//! decided here, the same for a reset, a step, a step recovered after a
//! restart and a regrade on resume.

use super::Environment;
use super::grade::Grade;
use super::observe;
use super::runtime::TaskRuntime;
use super::session::{self, SessionData};
use super::visibility;
use crate::models::{ActionOutput, HistoryEntry, Observation, RewardBreakdown, RewardMode};

/// What a grading of the episode follows.
pub(super) enum Event<'a> {
    /// The reset, or a regrade of a resumed session: no step was taken.
    Graded,
    /// A step, already counted in `steps`.
    Step {
        /// The command as received (the history keeps it).
        command: &'a str,
        /// It was `submit`: the episode ends after this grading.
        submitted: bool,
        /// The command's exit code; none for one killed by a restart.
        exit_code: Option<i32>,
    },
}

/// Advances the episode after a grading: reveals what the agent has
/// earned, scores the grade, pays the reward (in the session's reward
/// mode, against the score before this grading), sets success and ends the episode when it
/// is over: solved (terminated), out of budget (truncated) or submitted
/// (terminated, unless the budget ran out on the same step). A step joins
/// the history with its reward.
pub(super) fn advance(
    rt: &TaskRuntime,
    data: &mut SessionData,
    grade: &Grade,
    event: Event<'_>,
) -> RewardBreakdown {
    let prev_score = data.score;
    visibility::update_revealed(&rt.secrets, &mut data.exploration, &grade.fixed);
    let scored = super::grade::score(&rt.secrets, grade, data.steps, rt.info.step_budget);
    let r = scored.reward;
    let score = r.total;
    let reward = match data.reward_mode {
        RewardMode::Score => score,
        RewardMode::Delta => graders::reward::delta(prev_score, score),
    };
    data.score = score;
    data.success = scored.success;
    if data.success {
        data.done = true;
        data.terminated = true;
    } else if data.steps >= rt.info.step_budget {
        data.done = true;
        data.truncated = true;
    }
    if let Event::Step {
        command,
        submitted,
        exit_code,
    } = event
    {
        if submitted && !data.done {
            data.done = true;
            data.terminated = true;
        }
        data.history.push(HistoryEntry {
            step: data.steps,
            command: command.to_string(),
            reward,
            exit_code,
        });
        data.last_active = session::now_unix();
    }
    RewardBreakdown {
        detection: r.detection,
        base: r.base,
        health: r.health,
        efficiency: r.efficiency,
        score,
        reward,
    }
}

impl Environment {
    /// [`advance`]s the episode and builds its observation, which becomes
    /// the session's last. `files` is the workspace's file list (for the
    /// ranked actions).
    pub(super) fn advance_episode(
        &self,
        rt: &TaskRuntime,
        data: &mut SessionData,
        grade: &Grade,
        last: Option<ActionOutput>,
        files: &[String],
        event: Event<'_>,
    ) -> Observation {
        let reward = advance(rt, data, grade, event);
        let obs = observe::observation(
            rt,
            data,
            grade,
            reward,
            last,
            files,
            self.inner.sandbox.info(),
        );
        data.last_obs = obs.clone();
        obs
    }
}
