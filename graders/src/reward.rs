//! The seed's composite reward, as one pure function of counts.
//!
//! The formula is the seed's (`graders/reward.py` in the original system),
//! kept exactly so scores stay comparable:
//!
//! ```text
//! detection  = (initial_leaks - current_leaks) / initial_leaks
//! base       = 0.4 * detection + 0.6 * detection   // remediation = detection
//! health     = health_passed / health_total        // 0 if errors > 0 or total == 0
//! efficiency = 0.15 * max(0, 1 - steps_taken / step_budget)
//! total      = if base > 0 { min(1, base * health + efficiency) } else { 0 }
//! ```
//!
//! Choices the seed leaves open, and why they were made this way:
//!
//! - `initial_leaks == 0` gives `detection = 0` (and so `total = 0`) instead of
//!   a division by zero. A task with nothing to find is a broken task; paying
//!   for it would reward a do-nothing agent (the environment asserts at
//!   least one planted leak, verified present, at reset, so this is a
//!   guard, not a path real episodes take).
//! - `current_leaks > initial_leaks` (the agent introduced new leaks) clamps
//!   `detection` to 0, never negative, so `total` stays in `[0, 1]`.
//! - `step_budget == 0` gives `efficiency = 0`: there is no budget to be
//!   under.
//! - With `base > 0` and `health == 0` the seed pays `total = efficiency`.
//!   That is what the formula says and it is kept (spec.md §5).
//!
//! The per-step reward the environment hands out is, by default
//! (`reward_mode: score`, the seed's), this score itself; with
//! `reward_mode: delta` it is the change of this potential, [`delta`], so
//! an episode's rewards sum to its final score and toggling a secret back
//! and forth earns nothing in sum (potential-based shaping; spec.md §5).

use serde::{Deserialize, Serialize};

/// Weight of the efficiency bonus in the seed's formula.
const EFFICIENCY_WEIGHT: f64 = 0.15;

/// Counts the reward is computed from, all measured by the grader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RewardInput {
    /// Secrets planted and verified present at reset.
    pub initial_leaks: u32,
    /// Secrets still present (by ground truth) now.
    pub current_leaks: u32,
    /// Expected health tests that passed.
    pub health_passed: u32,
    /// Expected health tests in the pristine manifest.
    pub health_total: u32,
    /// Collection or run errors; any error zeroes the health score.
    pub health_errors: u32,
    /// Steps the agent has taken so far.
    pub steps_taken: u32,
    /// The task's step budget.
    pub step_budget: u32,
}

/// Every term of the formula, so observations can show the breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Reward {
    /// Fraction of initial leaks remediated, in `[0, 1]`.
    pub detection: f64,
    /// `0.4 * detection + 0.6 * detection`.
    pub base: f64,
    /// Test pass ratio, in `[0, 1]`.
    pub health: f64,
    /// Efficiency bonus, in `[0, 0.15]`.
    pub efficiency: f64,
    /// The reward, in `[0, 1]`.
    pub total: f64,
}

/// Computes every term of the seed's formula. Never NaN, always in `[0, 1]`.
pub fn compute(input: &RewardInput) -> Reward {
    let detection = if input.initial_leaks == 0 {
        0.0
    } else {
        let fixed = input.initial_leaks.saturating_sub(input.current_leaks);
        (f64::from(fixed) / f64::from(input.initial_leaks)).clamp(0.0, 1.0)
    };
    // Kept as two terms to mirror the seed, where remediation may one day
    // differ from detection.
    let base = 0.4 * detection + 0.6 * detection;
    let health = if input.health_errors > 0 || input.health_total == 0 {
        0.0
    } else {
        (f64::from(input.health_passed) / f64::from(input.health_total)).clamp(0.0, 1.0)
    };
    let efficiency = if input.step_budget == 0 {
        0.0
    } else {
        let used = f64::from(input.steps_taken) / f64::from(input.step_budget);
        EFFICIENCY_WEIGHT * (1.0 - used).max(0.0)
    };
    let total = if base > 0.0 {
        (base * health + efficiency).min(1.0)
    } else {
        0.0
    };
    Reward {
        detection,
        base,
        health,
        efficiency,
        total,
    }
}

/// The per-step shaping reward: the change of the total since the previous
/// step. Non-finite inputs count as 0 so one bad value cannot poison a
/// trajectory.
pub fn delta(prev_total: f64, now_total: f64) -> f64 {
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    finite(now_total) - finite(prev_total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn input() -> impl Strategy<Value = RewardInput> {
        (
            0u32..20,
            0u32..25,
            0u32..50,
            0u32..50,
            0u32..3,
            0u32..60,
            0u32..40,
        )
            .prop_map(|(i, c, p, t, e, s, b)| RewardInput {
                initial_leaks: i,
                current_leaks: c,
                health_passed: p.min(t),
                health_total: t,
                health_errors: e,
                steps_taken: s,
                step_budget: b,
            })
    }

    #[test]
    fn seed_examples() {
        let r = compute(&RewardInput {
            initial_leaks: 2,
            current_leaks: 1,
            health_passed: 3,
            health_total: 4,
            health_errors: 0,
            steps_taken: 5,
            step_budget: 10,
        });
        assert!((r.detection - 0.5).abs() < 1e-12);
        assert!((r.base - 0.5).abs() < 1e-12);
        assert!((r.health - 0.75).abs() < 1e-12);
        assert!((r.efficiency - 0.075).abs() < 1e-12);
        assert!((r.total - (0.375 + 0.075)).abs() < 1e-12);
    }

    #[test]
    fn solved_caps_at_one() {
        let r = compute(&RewardInput {
            initial_leaks: 3,
            current_leaks: 0,
            health_passed: 4,
            health_total: 4,
            health_errors: 0,
            steps_taken: 1,
            step_budget: 10,
        });
        assert_eq!(r.total, 1.0);
    }

    #[test]
    fn zero_initial_is_zero() {
        let r = compute(&RewardInput {
            health_passed: 1,
            health_total: 1,
            step_budget: 10,
            ..Default::default()
        });
        assert_eq!(r.detection, 0.0);
        assert_eq!(r.total, 0.0);
    }

    #[test]
    fn errors_zero_health() {
        let r = compute(&RewardInput {
            initial_leaks: 1,
            current_leaks: 0,
            health_passed: 5,
            health_total: 5,
            health_errors: 1,
            steps_taken: 10,
            step_budget: 10,
        });
        assert_eq!(r.health, 0.0);
        assert_eq!(r.total, 0.0);
    }

    #[test]
    fn delta_ignores_nan() {
        assert_eq!(delta(f64::NAN, 0.5), 0.5);
        assert_eq!(delta(0.25, 0.75), 0.5);
        assert_eq!(delta(0.75, f64::INFINITY), -0.75);
    }

    proptest! {
        #[test]
        fn bounded_never_nan(i in input()) {
            let r = compute(&i);
            for x in [r.detection, r.base, r.health, r.efficiency, r.total] {
                prop_assert!(x.is_finite());
                prop_assert!((0.0..=1.0).contains(&x));
            }
            prop_assert!(r.efficiency <= EFFICIENCY_WEIGHT);
        }

        #[test]
        fn no_progress_pays_nothing(i in input()) {
            let mut i = i;
            i.current_leaks = i.current_leaks.max(i.initial_leaks);
            prop_assert_eq!(compute(&i).total, 0.0);
        }

        #[test]
        fn zero_health_pays_only_efficiency(i in input()) {
            let mut i = i;
            i.health_errors = 1;
            let r = compute(&i);
            if r.base > 0.0 {
                prop_assert_eq!(r.total, r.efficiency);
            } else {
                prop_assert_eq!(r.total, 0.0);
            }
        }

        #[test]
        fn efficiency_linear_then_zero(s in 0u32..100, b in 1u32..40) {
            let r = compute(&RewardInput {
                initial_leaks: 1,
                steps_taken: s,
                step_budget: b,
                ..Default::default()
            });
            if s >= b {
                prop_assert_eq!(r.efficiency, 0.0);
            } else {
                let want = 0.15 * (1.0 - f64::from(s) / f64::from(b));
                prop_assert!((r.efficiency - want).abs() < 1e-12);
            }
            let next = compute(&RewardInput {
                initial_leaks: 1,
                steps_taken: s + 1,
                step_budget: b,
                ..Default::default()
            });
            prop_assert!(next.efficiency <= r.efficiency);
        }

        #[test]
        fn monotone_in_detection_and_health(i in input()) {
            let r = compute(&i);
            let mut fewer = i;
            fewer.current_leaks = i.current_leaks.saturating_sub(1);
            prop_assert!(compute(&fewer).total >= r.total);
            let mut healthier = i;
            if healthier.health_passed < healthier.health_total {
                healthier.health_passed += 1;
            }
            prop_assert!(compute(&healthier).total >= r.total);
        }

        #[test]
        fn deltas_telescope(a in input(), b in input(), c in input()) {
            let (ta, tb, tc) =
                (compute(&a).total, compute(&b).total, compute(&c).total);
            let sum = delta(ta, tb) + delta(tb, tc);
            prop_assert!((sum - delta(ta, tc)).abs() < 1e-12);
        }
    }
}
