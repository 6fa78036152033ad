//! The outcome of one grading pass ([`super::grading`]), as a session
//! keeps it and a task's runtime caches it for fresh copies.

use super::visibility::{Remediated, Secret};
use crate::models::{HealthSummary, Observation};
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
    pub fn current_leaks(&self, secrets: &[Secret]) -> u32 {
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
