//! Tiered visibility, conflict maps, ranked actions and `top_blocker`.
//!
//! Pure functions of the ground truth and what the agent has done so far, so
//! they are tested without a workspace. Visibility is monotone: once a
//! secret has been shown it stays shown.

use crate::models::{ConflictEdge, ConflictKind, RankedAction, SecretStatus, Tier, VisibleSecret};
use graders::planted::Planted;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What the agent has looked at: the inputs of visibility.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Exploration {
    /// Files inspected (`inspect_file`, or named by a bash command).
    pub inspected: BTreeSet<String>,
    /// Files whose encoded content was inspected.
    pub encoded_inspected: BTreeSet<String>,
    /// `scan_history` has run.
    pub history_scanned: bool,
    /// The scanner has been run.
    pub scanner_run: bool,
    /// Secrets shown so far (monotone).
    pub revealed: BTreeSet<String>,
}

/// Whether each secret is absent from everything the grader checks.
pub type Remediated = BTreeSet<String>;

/// Ids that count as fixed: remediated and not blocked by an open secret.
pub fn counted_fixed(secrets: &[Planted], remediated: &Remediated) -> BTreeSet<String> {
    secrets
        .iter()
        .filter(|s| remediated.contains(&s.id))
        .filter(|s| {
            !secrets
                .iter()
                .any(|b| b.blocks.contains(&s.id) && !remediated.contains(&b.id))
        })
        .map(|s| s.id.clone())
        .collect()
}

/// Updates `exp.revealed` from the current exploration and fixes.
pub fn update_revealed(secrets: &[Planted], exp: &mut Exploration, fixed: &BTreeSet<String>) {
    // Reveals can cascade (s1 reveals s2 reveals s3) only through fixes, and
    // fixes do not change here, so one pass over the edges suffices.
    for s in secrets {
        let by_edge = secrets
            .iter()
            .any(|r| r.reveals.contains(&s.id) && fixed.contains(&r.id));
        let visible = match s.tier {
            Tier::Surface => true,
            Tier::Shallow => {
                exp.inspected.contains(&s.file) || exp.encoded_inspected.contains(&s.file)
            }
            Tier::Deep => exp.encoded_inspected.contains(&s.file),
            Tier::Hidden => s.history_only && exp.history_scanned,
        } || by_edge;
        if visible {
            exp.revealed.insert(s.id.clone());
        }
    }
}

/// Masks all but a short prefix of a value.
pub fn mask(value: &str) -> String {
    let first_line = value.lines().next().unwrap_or("");
    let keep = if first_line.starts_with("-----BEGIN") {
        first_line.len()
    } else {
        first_line.chars().count().min(4)
    };
    let head: String = first_line.chars().take(keep).collect();
    let rest = value.chars().count().saturating_sub(keep).clamp(4, 16);
    format!("{head}{}", "*".repeat(rest))
}

/// The visible secrets with their status.
pub fn visible_secrets(
    secrets: &[Planted],
    exp: &Exploration,
    remediated: &Remediated,
    fixed: &BTreeSet<String>,
) -> Vec<VisibleSecret> {
    secrets
        .iter()
        .filter(|s| exp.revealed.contains(&s.id))
        .map(|s| VisibleSecret {
            id: s.id.clone(),
            file: s.file.clone(),
            line: s.line,
            secret_type: s.secret_type.clone(),
            tier: s.tier,
            history_only: s.history_only,
            status: if fixed.contains(&s.id) {
                SecretStatus::Fixed
            } else if remediated.contains(&s.id) {
                SecretStatus::Blocked
            } else {
                SecretStatus::Open
            },
            masked_value: mask(&s.value),
        })
        .collect()
}

/// Conflict edges whose both ends are visible.
pub fn conflict_map(secrets: &[Planted], exp: &Exploration) -> Vec<ConflictEdge> {
    let mut out = Vec::new();
    for s in secrets.iter().filter(|s| exp.revealed.contains(&s.id)) {
        for (targets, kind) in [
            (&s.reveals, ConflictKind::Reveals),
            (&s.blocks, ConflictKind::Blocks),
        ] {
            for t in targets.iter().filter(|t| exp.revealed.contains(*t)) {
                out.push(ConflictEdge {
                    from: s.id.clone(),
                    to: t.clone(),
                    kind,
                });
            }
        }
    }
    out
}

/// The visible open secret that blocks the most unfixed secrets.
pub fn top_blocker(
    secrets: &[Planted],
    exp: &Exploration,
    fixed: &BTreeSet<String>,
) -> Option<String> {
    secrets
        .iter()
        .filter(|s| exp.revealed.contains(&s.id) && !fixed.contains(&s.id))
        .map(|s| (s.blocks.iter().filter(|t| !fixed.contains(*t)).count(), s))
        .filter(|(n, _)| *n > 0)
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.id.cmp(&a.1.id)))
        .map(|(_, s)| s.id.clone())
}

/// How suspicious a file name is, 0–1: the seed's heuristic 2.
pub fn filename_suspicion(path: &str) -> f64 {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if name == ".env" || name.starts_with(".env.") && !name.ends_with(".example") {
        return 0.9;
    }
    if name.ends_with(".pem") || name.ends_with(".key") || name.contains("id_rsa") {
        return 0.88;
    }
    if ["secret", "credential", "password", "token"]
        .iter()
        .any(|k| name.contains(k))
    {
        return 0.85;
    }
    if ["settings", "config", "conf"]
        .iter()
        .any(|k| name.contains(k))
    {
        return 0.8;
    }
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "yml" | "yaml" | "toml" | "ini" | "cfg" | "json" | "properties" => 0.65,
        "sh" | "ipynb" => 0.6,
        _ if name == "dockerfile" || name.starts_with("docker-compose") => 0.6,
        "py" if lower.contains("migration") || lower.contains("deploy") => 0.55,
        "py" => 0.4,
        "md" | "txt" => 0.3,
        _ => 0.2,
    }
}

/// Inputs of the ranked-action heuristics beyond the ground truth.
pub struct RankInput<'a> {
    /// Ground truth.
    pub secrets: &'a [Planted],
    /// What the agent has done.
    pub exp: &'a Exploration,
    /// Ids counted fixed.
    pub fixed: &'a BTreeSet<String>,
    /// Files of the workspace now (relative paths).
    pub files: &'a [String],
    /// Whether the task has history worth scanning (medium/hard, git mode).
    pub history_relevant: bool,
}

/// The seed's five heuristics, best first.
pub fn ranked_actions(inp: &RankInput<'_>) -> Vec<RankedAction> {
    let mut out = Vec::new();
    let visible_open: Vec<&Planted> = inp
        .secrets
        .iter()
        .filter(|s| inp.exp.revealed.contains(&s.id) && !inp.fixed.contains(&s.id))
        .collect();
    // 1. Visible unfixed secrets: fix these first. The fix of a secret in
    // the working tree is an edit of the file that holds it, so the action
    // opens that file at its line numbers and the reason says what to
    // change; only a history-only secret (its file is gone from the tree)
    // points at history, narrowed to the commits that touched its file.
    for s in &visible_open {
        let (action, fix) = if s.history_only {
            (
                format!("git log --all --oneline -- {}", shell_quote(&s.file)),
                "only in git history: rewrite it in place (git filter-repo --replace-text … --force)",
            )
        } else {
            (
                format!("inspect_file {}", s.file),
                "remove it from this file (read the value from the environment, or delete a key file)",
            )
        };
        out.push(RankedAction {
            action,
            priority: 0.92,
            reason: format!(
                "visible unfixed secret {} ({}) at {}:{}: {fix}",
                s.id, s.secret_type, s.file, s.line
            ),
        });
    }
    // 2. Uninspected high-risk files, by filename suspicion.
    let mut risky: Vec<(f64, &String)> = inp
        .files
        .iter()
        .filter(|f| !inp.exp.inspected.contains(*f))
        .map(|f| (filename_suspicion(f), f))
        .filter(|(p, _)| *p >= 0.5)
        .collect();
    risky.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    for (p, f) in risky.into_iter().take(5) {
        out.push(RankedAction {
            action: format!("inspect_file {f}"),
            priority: p,
            reason: format!("uninspected high-risk file (suspicion {p:.2})"),
        });
    }
    // 3. History not yet scanned.
    if inp.history_relevant && !inp.exp.history_scanned {
        out.push(RankedAction {
            action: "scan_history".into(),
            priority: 0.75,
            reason: "git history not yet scanned".into(),
        });
    }
    // 4. Hidden secrets remaining: suggest encoded inspection.
    let hidden = inp
        .secrets
        .iter()
        .filter(|s| !inp.exp.revealed.contains(&s.id))
        .count();
    if hidden > 0 {
        let mut cands: Vec<(f64, &String)> = inp
            .files
            .iter()
            .filter(|f| !inp.exp.encoded_inspected.contains(*f))
            .map(|f| (filename_suspicion(f), f))
            .collect();
        cands.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        if let Some((_, f)) = cands.first() {
            out.push(RankedAction {
                action: format!("inspect_encoded {f}"),
                priority: 0.68,
                reason: format!("{hidden} hidden secret(s) remain; encoded content may hide them"),
            });
        }
    }
    // 5. Everything visible is fixed: validate with the scanner.
    if visible_open.is_empty() {
        out.push(RankedAction {
            action: "run_scanner".into(),
            priority: 0.85,
            reason: "all visible secrets fixed: validate with the scanner".into(),
        });
    }
    out.sort_by(|a, b| b.priority.total_cmp(&a.priority));
    // One entry per command: heuristics overlap (a visible secret's file is
    // often also an uninspected risky file), and the same action twice at
    // two priorities says nothing more. The stable sort keeps the
    // best-ranked occurrence.
    let mut seen = BTreeSet::new();
    out.retain(|a| seen.insert(a.action.clone()));
    out
}

/// `s` as one POSIX shell word (ground-truth paths are task-authored, but a
/// suggested command is sent as-is and must not split or expand).
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(id: &str, tier: Tier, file: &str) -> Planted {
        Planted {
            id: id.into(),
            value: format!("AKIA{id}XXXXXXXXXXXX"),
            secret_type: "aws_access_key_id".into(),
            file: file.into(),
            line: 1,
            tier,
            encoding: None,
            reveals: vec![],
            blocks: vec![],
            history_only: false,
        }
    }

    #[test]
    fn tiers() {
        let mut h = s("s4", Tier::Hidden, "old.py");
        h.history_only = true;
        let secrets = vec![
            s("s1", Tier::Surface, "a.py"),
            s("s2", Tier::Shallow, "b.yml"),
            s("s3", Tier::Deep, "c.json"),
            h,
        ];
        let mut exp = Exploration::default();
        let none = BTreeSet::new();
        update_revealed(&secrets, &mut exp, &none);
        assert_eq!(exp.revealed, ["s1".to_string()].into());
        exp.inspected.insert("b.yml".into());
        exp.inspected.insert("c.json".into());
        update_revealed(&secrets, &mut exp, &none);
        assert!(exp.revealed.contains("s2") && !exp.revealed.contains("s3"));
        exp.encoded_inspected.insert("c.json".into());
        exp.history_scanned = true;
        update_revealed(&secrets, &mut exp, &none);
        assert_eq!(exp.revealed.len(), 4);
    }

    #[test]
    fn reveals_and_blocks() {
        let mut s1 = s("s1", Tier::Surface, "a.py");
        s1.reveals = vec!["s3".into()];
        let mut s2 = s("s2", Tier::Surface, "b.py");
        s2.blocks = vec!["s3".into()];
        let s3 = s("s3", Tier::Hidden, "c.py");
        let secrets = vec![s1, s2, s3];
        let mut exp = Exploration::default();
        let rem: Remediated = ["s1".to_string(), "s3".to_string()].into();
        let fixed = counted_fixed(&secrets, &rem);
        assert_eq!(fixed, ["s1".to_string()].into(), "s3 is blocked by open s2");
        update_revealed(&secrets, &mut exp, &fixed);
        assert!(exp.revealed.contains("s3"), "fixing s1 reveals s3");
        let vis = visible_secrets(&secrets, &exp, &rem, &fixed);
        let st: Vec<_> = vis.iter().map(|v| (v.id.as_str(), v.status)).collect();
        assert_eq!(
            st,
            vec![
                ("s1", SecretStatus::Fixed),
                ("s2", SecretStatus::Open),
                ("s3", SecretStatus::Blocked)
            ]
        );
        assert_eq!(top_blocker(&secrets, &exp, &fixed), Some("s2".into()));
        let edges = conflict_map(&secrets, &exp);
        assert_eq!(edges.len(), 2);
    }

    #[test]
    fn ranked_priorities() {
        let secrets = vec![
            s("s1", Tier::Surface, "a.py"),
            s("s2", Tier::Deep, "config.yml"),
        ];
        let mut exp = Exploration::default();
        update_revealed(&secrets, &mut exp, &BTreeSet::new());
        let files = vec![
            "a.py".to_string(),
            "config.yml".to_string(),
            ".env".to_string(),
        ];
        let fixed = BTreeSet::new();
        let r = ranked_actions(&RankInput {
            secrets: &secrets,
            exp: &exp,
            fixed: &fixed,
            files: &files,
            history_relevant: true,
        });
        assert_eq!(r[0].priority, 0.92);
        assert!(
            r.iter()
                .any(|a| a.action == "scan_history" && a.priority == 0.75)
        );
        assert!(
            r.iter()
                .any(|a| a.action.starts_with("inspect_encoded") && a.priority == 0.68)
        );
        assert!(
            r.iter()
                .any(|a| a.action == "inspect_file .env" && a.priority == 0.9)
        );
        assert!(!r.iter().any(|a| a.action == "run_scanner"));
        let fixed: BTreeSet<String> = ["s1".to_string()].into();
        let r = ranked_actions(&RankInput {
            secrets: &secrets,
            exp: &exp,
            fixed: &fixed,
            files: &files,
            history_relevant: false,
        });
        assert!(
            r.iter()
                .any(|a| a.action == "run_scanner" && a.priority == 0.85)
        );
        assert!(r.windows(2).all(|w| w[0].priority >= w[1].priority));
    }

    /// Issue 20: a visible secret in an uninspected risky file gave the
    /// same `inspect_file` twice (0.92 and 0.80), and a visible
    /// history-only secret was "fixed" by a bare `git log --all --oneline`.
    #[test]
    fn ranked_actions_are_unique_and_name_the_file_to_fix() {
        let mut h = s("s2", Tier::Surface, "old creds.py");
        h.history_only = true;
        let secrets = vec![s("s1", Tier::Surface, "app/settings.py"), h];
        let mut exp = Exploration::default();
        update_revealed(&secrets, &mut exp, &BTreeSet::new());
        assert!(exp.revealed.contains("s1") && exp.revealed.contains("s2"));
        let files = vec!["app/settings.py".to_string(), ".env".to_string()];
        let fixed = BTreeSet::new();
        let r = ranked_actions(&RankInput {
            secrets: &secrets,
            exp: &exp,
            fixed: &fixed,
            files: &files,
            history_relevant: true,
        });
        let mut actions: Vec<&str> = r.iter().map(|a| a.action.as_str()).collect();
        let n = actions.len();
        actions.sort();
        actions.dedup();
        assert_eq!(actions.len(), n, "duplicate actions: {r:?}");
        let settings: Vec<_> = r
            .iter()
            .filter(|a| a.action == "inspect_file app/settings.py")
            .collect();
        assert_eq!(settings.len(), 1, "{r:?}");
        assert_eq!(settings[0].priority, 0.92, "the best-ranked one is kept");
        assert!(
            settings[0].reason.contains("remove it from this file"),
            "{r:?}"
        );
        let hist = r.iter().find(|a| a.reason.contains("s2")).expect("s2");
        assert_eq!(hist.action, "git log --all --oneline -- 'old creds.py'");
        assert!(hist.reason.contains("filter-repo"), "{hist:?}");
        assert!(!r.iter().any(|a| a.action == "git log --all --oneline"));
        assert!(r.windows(2).all(|w| w[0].priority >= w[1].priority));
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }

    #[test]
    fn masking() {
        assert_eq!(mask("AKIAABCDEFGHIJKLMNOP"), "AKIA****************");
        assert!(
            mask("-----BEGIN RSA PRIVATE KEY-----\nabc")
                .starts_with("-----BEGIN RSA PRIVATE KEY-----*")
        );
        assert!(!mask("ghp_abcdefghijklmnop").contains("abcd"));
    }
}
