//! Building the observation of a session.

use super::cache::list_for_observation;
use super::grading::Grade;
use super::runtime::TaskRuntime;
use super::session::{self, SessionData};
use super::{Environment, visibility};
use crate::models::{
    ActionOutput, HistoryEntry, Observation, RewardBreakdown, RewardMode, ScanMode,
};

impl Environment {
    /// Builds the observation and updates the episode flags and score,
    /// listing the workspace's files for the ranked actions.
    pub(super) fn observe(
        &self,
        rt: &TaskRuntime,
        data: &mut SessionData,
        grade: &Grade,
        last: Option<ActionOutput>,
        prev_score: f64,
        ws: &std::path::Path,
    ) -> Observation {
        let files = list_for_observation(ws);
        self.observe_files(rt, data, grade, last, prev_score, &files)
    }

    /// [`Self::observe`] with the file list already known (a step's survey
    /// walked the tree; structured actions cannot change it).
    pub(super) fn observe_files(
        &self,
        rt: &TaskRuntime,
        data: &mut SessionData,
        grade: &Grade,
        last: Option<ActionOutput>,
        prev_score: f64,
        files: &[String],
    ) -> Observation {
        visibility::update_revealed(&rt.secrets, &mut data.exploration, &grade.fixed);
        let initial = rt.secrets.len() as u32;
        let current = grade.current_leaks(&rt.secrets);
        let r = graders::reward::compute(&graders::reward::RewardInput {
            initial_leaks: initial,
            current_leaks: current,
            health_passed: grade.health.passed,
            health_total: grade.health.total,
            health_errors: grade.health.errors,
            steps_taken: data.steps,
            step_budget: rt.info.step_budget,
        });
        let score = r.total;
        let reward = match data.reward_mode {
            RewardMode::Score => score,
            RewardMode::Delta => graders::reward::delta(prev_score, score),
        };
        data.score = score;
        data.success = current == 0
            && grade.health.total > 0
            && grade.health.score >= 1.0
            && grade.errors.is_empty();
        if data.success {
            data.done = true;
            data.terminated = true;
        } else if data.steps >= rt.info.step_budget {
            data.done = true;
            data.truncated = true;
        }
        let ranked = visibility::ranked_actions(&visibility::RankInput {
            secrets: &rt.secrets,
            exp: &data.exploration,
            fixed: &grade.fixed,
            files,
            history_relevant: rt.info.scan_mode == ScanMode::Git
                && rt.info.difficulty != crate::models::Difficulty::Easy,
        });
        let visible = visibility::visible_secrets(
            &rt.secrets,
            &data.exploration,
            &grade.remediated,
            &grade.fixed,
        );
        Observation {
            session_id: data.session_id.clone(),
            episode_id: data.episode_id.clone(),
            task_id: rt.info.id,
            task_slug: rt.info.slug.clone(),
            seed: data.seed,
            title: rt.info.title.clone(),
            difficulty: rt.info.difficulty,
            description: rt.info.description.clone(),
            scan_mode: rt.info.scan_mode,
            step_budget: rt.info.step_budget,
            steps_taken: data.steps,
            reward,
            reward_mode: data.reward_mode,
            reward_breakdown: RewardBreakdown {
                detection: r.detection,
                base: r.base,
                health: r.health,
                efficiency: r.efficiency,
                score,
                reward,
            },
            leaks_initial: initial,
            leaks_current: current,
            hidden_count: (rt.secrets.len() - visible.len()) as u32,
            visible_secrets: visible,
            conflict_map: visibility::conflict_map(&rt.secrets, &data.exploration),
            ranked_actions: ranked,
            top_blocker: visibility::top_blocker(&rt.secrets, &data.exploration, &grade.fixed),
            health: grade.health.clone(),
            last_action: last,
            history: recent(&data.history),
            done: data.done,
            terminated: data.terminated,
            truncated: data.truncated,
            success: data.success,
            sandbox: self.inner.sandbox.info(),
            grading_errors: grade.errors.clone(),
        }
    }
}


/// The bookkeeping that ends a step, the same for a step that ran and for
/// one recovered after the server was killed during it: a `submit` ends
/// the episode, the observation takes the episode flags, the step joins
/// the history (with the command's exit code, none for a killed one), and
/// the observation becomes the session's last.
pub(super) fn settle_step(
    data: &mut SessionData,
    mut obs: Observation,
    command: &str,
    submitted: bool,
) -> Observation {
    if submitted && !data.done {
        data.done = true;
        data.terminated = true;
    }
    obs.done = data.done;
    obs.terminated = data.terminated;
    obs.truncated = data.truncated;
    data.history.push(HistoryEntry {
        step: data.steps,
        command: command.to_string(),
        reward: obs.reward,
        exit_code: obs.last_action.as_ref().and_then(|a| a.exit_code),
    });
    obs.history = recent(&data.history);
    data.last_obs = obs.clone();
    data.last_active = session::now_unix();
    obs
}

pub(super) fn recent(h: &[HistoryEntry]) -> Vec<HistoryEntry> {
    h[h.len().saturating_sub(session::HISTORY_SHOWN)..].to_vec()
}
