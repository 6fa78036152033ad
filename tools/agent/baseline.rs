//! One decision of the baseline agent: the model asked for a command, its
//! reply normalised, and the loop guard that refuses a command repeating
//! the last steps at one reward and falls back to a ranked action.

use super::*;

/// Identical consecutive (action, reward) pairs that count as a loop.
pub const LOOP_REPEATS: usize = 3;

/// The action that would continue a loop, if the recent steps are one: the
/// same action [`LOOP_REPEATS`] times in a row at the same reward (what the
/// seed's guard catches), or a two-action cycle `A B A B A B` whose rewards
/// repeat with it (an agent alternating `cat f` and `git status` learns as
/// little as one repeating `cat f`). Returns the action the cycle would send
/// next, which the guard then refuses.
pub fn looping(past: &[(String, f64)]) -> Option<&str> {
    let same = |x: &(String, f64), y: &(String, f64)| x.0 == y.0 && x.1.to_bits() == y.1.to_bits();
    for period in 1..=2 {
        let n = period * LOOP_REPEATS;
        if past.len() < n {
            continue;
        }
        let tail = &past[past.len() - n..];
        let cycles = tail.iter().zip(&tail[period..]).all(|(x, y)| same(x, y));
        // A period-2 "cycle" of one action is the period-1 case, already seen.
        let distinct = period == 1 || tail[0].0 != tail[1].0;
        if cycles && distinct {
            return Some(tail[n - period].0.as_str());
        }
    }
    None
}

/// Fallbacks when the model gives nothing usable.
const FALLBACKS: &[&str] = &[
    "run_scanner",
    "list_files",
    "scan_history",
    "git log --oneline -n 20",
];

/// The top ranked action that differs from `avoid`, else a fixed fallback.
pub fn fallback(obs: &Observation, avoid: Option<&str>) -> String {
    obs.ranked_actions
        .iter()
        .map(|r| r.action.as_str())
        .chain(FALLBACKS.iter().copied())
        .find(|a| Some(*a) != avoid && !a.trim().is_empty())
        .unwrap_or("list_files")
        .to_string()
}

/// One baseline decision, with the loop guard: when the last steps repeated
/// one action (or a two-action cycle) at one reward, the prompt carries a
/// CRITICAL WARNING;
/// a model that still answers with it is asked once more, then overruled by
/// the top ranked action that differs.
pub(super) async fn baseline_action(
    model: &ModelClient,
    obs: &Observation,
    step: u32,
    max_steps: u32,
    past: &[(String, f64)],
) -> anyhow::Result<String> {
    let forbidden = looping(past).map(str::to_string);
    if let Some(f) = &forbidden {
        eprintln!(
            "agent: loop guard: {:?} would repeat a loop ({LOOP_REPEATS} rounds at the same reward)",
            prompt::one_line(f, 200)
        );
    }
    let mut ls = prompt::LoopState {
        forbidden: forbidden.clone(),
        repeated_after_warning: false,
    };
    let tries = if forbidden.is_some() { 2 } else { 1 };
    for _ in 0..tries {
        let nonce = prompt::new_nonce();
        let messages = vec![
            json!({"role": "system", "content": prompt::system_prompt(&nonce)}),
            json!({"role": "user", "content": prompt::user_prompt(&nonce, obs, step, max_steps, &ls)}),
        ];
        let reply = model.complete(&messages).await.map_err(|e| match e {
            HttpError::Unavailable(e) => e.context("model API is unreachable"),
            other => anyhow::anyhow!("model API refused the request: {other}"),
        })?;
        let cmd = normalize::normalize(&reply);
        match cmd {
            None => {
                eprintln!(
                    "agent: no command in the model's reply {:?}",
                    prompt::one_line(&reply, 300)
                );
                return Ok(fallback(obs, forbidden.as_deref()));
            }
            Some(c) if Some(&c) == forbidden.as_ref() => {
                eprintln!("agent: loop guard: the model repeated the command; refusing it");
                ls.repeated_after_warning = true;
            }
            Some(c) => return Ok(c),
        }
    }
    Ok(fallback(obs, forbidden.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::looping;

    fn steps(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(a, r)| (a.to_string(), *r)).collect()
    }

    #[test]
    fn three_identical_actions_at_one_reward_loop() {
        let p = steps(&[("ls", 0.0), ("cat a", 0.1), ("cat a", 0.1), ("cat a", 0.1)]);
        assert_eq!(looping(&p), Some("cat a"));
        assert_eq!(looping(&p[..3]), None, "two repeats are not a loop yet");
    }

    #[test]
    fn a_changing_reward_is_progress_not_a_loop() {
        let p = steps(&[("cat a", 0.1), ("cat a", 0.2), ("cat a", 0.2)]);
        assert_eq!(looping(&p), None);
    }

    #[test]
    fn two_action_cycles_loop_and_the_next_action_is_refused() {
        let p = steps(&[
            ("x", 0.0),
            ("cat a", 0.1),
            ("git status", 0.1),
            ("cat a", 0.1),
            ("git status", 0.1),
            ("cat a", 0.1),
            ("git status", 0.1),
        ]);
        assert_eq!(looping(&p), Some("cat a"));
        assert_eq!(
            looping(&p[..6]),
            None,
            "two and a half rounds are not a loop"
        );
        let mut broken = p.clone();
        broken[3].1 = 0.2;
        assert_eq!(looping(&broken), None, "a reward change inside the cycle");
    }
}
