//! The outcome of one grading pass ([`super::grading`]), as a session
//! keeps it and a task's runtime caches it for fresh copies.

use super::visibility::Remediated;
use crate::models::{HealthSummary, Observation};
use graders::planted::Planted;
use std::collections::BTreeSet;

/// The outcome of one grading pass.
#[derive(Debug, Clone, Default)]
pub struct Grade {
    /// Planted secrets absent from everything checked.
    pub remediated: Remediated,
    /// Remediated and not blocked.
    pub fixed: BTreeSet<String>,
    /// Distinct values the scanner finds now and did not at reset.
    pub new_leaks: u32,
    /// Health.
    pub health: HealthSummary,
    /// Problems of this grading pass.
    pub errors: Vec<String>,
    /// How long the two halves took (they run concurrently).
    pub timings: GradeTimings,
}

/// Wall time of each half of a grading pass, for the step profile
/// ([`super::StepProfile`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GradeTimings {
    /// Ground-truth search of tree and git objects, plus the scanner.
    pub security: std::time::Duration,
    /// Health: copy, restore, lint, hash, and pytest unless cached.
    pub health: std::time::Duration,
    /// Of `health`: the suite's own time inside pytest (its report's),
    /// when pytest ran; the rest is start-up and grading.
    pub health_in_pytest: Option<std::time::Duration>,
}

impl Grade {
    /// Current leaks: planted secrets not counted fixed, plus new leaks.
    pub fn current_leaks(&self, secrets: &[Planted]) -> u32 {
        (secrets.len() - self.fixed.len()) as u32 + self.new_leaks
    }

    /// The grade a resumed session last had (it is recomputed on its next
    /// mutating step).
    pub fn from_observation(obs: &Observation, remediated: &Remediated) -> Self {
        let fixed = obs
            .visible_secrets
            .iter()
            .filter(|v| v.status == crate::models::SecretStatus::Fixed)
            .map(|v| v.id.clone())
            .collect();
        Grade {
            remediated: remediated.clone(),
            fixed,
            new_leaks: obs
                .leaks_current
                .saturating_sub(obs.leaks_initial.saturating_sub(remediated.len() as u32)),
            health: obs.health.clone(),
            errors: obs.grading_errors.clone(),
            timings: GradeTimings::default(),
        }
    }
}

/// What a grade is worth: the reward's terms, the leak counts and whether
/// the task is solved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Every term of the reward ([`graders::reward::compute`]).
    pub reward: graders::reward::Reward,
    /// Planted secrets (all present at reset).
    pub leaks_initial: u32,
    /// Planted secrets not counted fixed, plus new leaks.
    pub leaks_current: u32,
    /// Every leak fixed, health 1.0 and no grading error.
    pub success: bool,
}

/// Scores `grade` of a task whose planted secrets are `secrets` after `steps_taken` of `step_budget` steps. The one place
/// a grade becomes a reward: sessions score every step with it, and
/// `secaudit grade` scores a finished workspace with it (no steps counted
/// and no budget, so no efficiency bonus).
pub fn score(secrets: &[Planted], grade: &Grade, steps_taken: u32, step_budget: u32) -> Score {
    let initial = secrets.len() as u32;
    let current = grade.current_leaks(secrets);
    let reward = graders::reward::compute(&graders::reward::RewardInput {
        initial_leaks: initial,
        current_leaks: current,
        health_passed: grade.health.passed,
        health_total: grade.health.total,
        health_errors: grade.health.errors,
        steps_taken,
        step_budget,
    });
    Score {
        reward,
        leaks_initial: initial,
        leaks_current: current,
        success: current == 0
            && grade.health.total > 0
            && grade.health.score >= 1.0
            && grade.errors.is_empty(),
    }
}
