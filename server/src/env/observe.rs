//! Building the observation of a session: a pure function of the task,
//! the session's state, its grade and the last action's output.

use super::grade::Grade;
use super::runtime::TaskRuntime;
use super::session::{self, SessionData};
use super::visibility;
use crate::models::{
    ActionOutput, HistoryEntry, Observation, RewardBreakdown, SandboxInfo, ScanMode,
};

/// The observation of a session after [`super::episode::advance`] has
/// scored `grade` (as `reward`). `files` is the workspace's file list (a
/// step's survey walked the tree; structured actions cannot change it),
/// from which the ranked actions are drawn.
pub(super) fn observation(
    rt: &TaskRuntime,
    data: &SessionData,
    grade: &Grade,
    reward: RewardBreakdown,
    last: Option<ActionOutput>,
    files: &[String],
    sandbox: SandboxInfo,
) -> Observation {
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
        reward: reward.reward,
        reward_mode: data.reward_mode,
        reward_breakdown: reward,
        leaks_initial: rt.secrets.len() as u32,
        leaks_current: grade.current_leaks(&rt.secrets),
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
        sandbox,
        grading_errors: grade.errors.clone(),
    }
}

/// The last steps of a history, as an observation shows them.
pub(super) fn recent(h: &[HistoryEntry]) -> Vec<HistoryEntry> {
    h[h.len().saturating_sub(session::HISTORY_SHOWN)..].to_vec()
}
