//! Reports of findings: our JSON ([`to_json`]), SARIF 2.1.0 ([`sarif`]) and
//! gitleaks' JSON report shape with its fingerprints, `.gitleaksignore`
//! and baselines ([`gitleaks`]). Detection knows nothing of these; every
//! format reads the same [`Finding`]s, the same [`Redaction`] and, for the
//! formats that list rules, the same [`rule_catalog`].

pub mod gitleaks;
pub mod sarif;

use super::{Allowlist, Finding};

/// How much of each secret a report shows, as gitleaks' `--redact=PERCENT`:
/// 0 shows it whole, 100 not at all, and `p` in between keeps the first
/// `round_half_even(len * (100 - p) / 100)` bytes followed by `...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redaction(u8);

impl Redaction {
    /// Secrets shown whole (`--show-secrets`, `--redact=0`).
    pub const NONE: Redaction = Redaction(0);
    /// Secrets not shown at all (our default; bare `--redact`).
    pub const FULL: Redaction = Redaction(100);
    /// What gitleaks writes for a fully redacted secret.
    pub const PLACEHOLDER: &'static str = "REDACTED";

    /// A percentage; gitleaks clamps values over 100 to 100, and so do we.
    pub fn percent(p: u8) -> Redaction {
        Redaction(p.min(100))
    }

    /// The percentage (0..=100).
    pub fn value(self) -> u8 {
        self.0
    }

    /// Whether any of a secret is hidden (gitleaks' `redact > 0`).
    pub fn hides(self) -> bool {
        self.0 > 0
    }

    /// The secret as the report shows it: whole, [`Self::PLACEHOLDER`], or
    /// its first bytes and `...` (gitleaks' `maskSecret`, cut at a char
    /// boundary where gitleaks would cut a byte).
    pub fn apply(self, secret: &str) -> String {
        match self.0 {
            0 => secret.to_string(),
            100.. => Self::PLACEHOLDER.to_string(),
            _ if secret.is_empty() => String::new(),
            p => {
                // Go's math.RoundToEven.
                let keep = (secret.len() as f64 * f64::from(100 - p) / 100.0).round_ties_even();
                let mut cut = (keep as usize).min(secret.len());
                while !secret.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}...", &secret[..cut])
            }
        }
    }
}

/// A rule a report lists: every rule that can fire in a scan with a given
/// allowlist (built-in tables, hand-written detectors, custom rules).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleInfo {
    /// The id findings carry in `Finding::rule`.
    pub id: String,
    /// One line saying what the rule finds.
    pub description: String,
}

/// Every rule that can fire with `allowlist`'s custom rules, in a stable
/// order: provider rules (priority order), hand-written detectors, custom.
pub fn rule_catalog(allowlist: &Allowlist) -> Vec<RuleInfo> {
    // The definitions, not the compiled rules: listing them must not wait
    // for the regexes (a scan compiles them in the background meanwhile).
    let builtin = super::rules::defs()
        .map(|d| (d.name, d.description))
        .chain(super::rules::DETECTORS.iter().copied())
        .map(|(id, d)| RuleInfo {
            id: id.to_string(),
            description: d.to_string(),
        });
    let custom = allowlist.custom_rules().map(|(id, d)| RuleInfo {
        id: id.to_string(),
        description: d
            .filter(|d| !d.trim().is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("Custom rule {id} from the gitleaks config")),
    });
    let mut out: Vec<RuleInfo> = Vec::new();
    for r in builtin.chain(custom) {
        // A custom rule may reuse a built-in id; list each id once.
        if !out.iter().any(|o| o.id == r.id) {
            out.push(r);
        }
    }
    out
}

/// Where a finding's span ends: 1-based line and inclusive column of its
/// last byte. A multi-line value (a PEM block) ends lines below its start;
/// an encoded finding's span is the encoded run, one line.
pub fn span_end(f: &Finding) -> (usize, usize) {
    let last = f.col_end.saturating_sub(1).max(f.col_start);
    if f.encoded {
        return (f.line, last);
    }
    match f.value.rfind('\n') {
        Some(i) => (
            f.line + f.value.matches('\n').count(),
            (f.value.len() - i - 1).max(1),
        ),
        None => (f.line, last),
    }
}

/// Findings as our JSON array: the serde fields of [`Finding`], plus
/// `value` (redacted per `redaction`) unless the redaction is full.
pub fn to_json(findings: &[Finding], redaction: Redaction) -> serde_json::Value {
    serde_json::Value::Array(
        findings
            .iter()
            .map(|f| {
                let mut v = serde_json::to_value(f).unwrap_or(serde_json::Value::Null);
                if let (true, Some(o)) = (redaction != Redaction::FULL, v.as_object_mut()) {
                    o.insert(
                        "value".into(),
                        serde_json::Value::String(redaction.apply(&f.value)),
                    );
                }
                v
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_matches_gitleaks_mask() {
        // gitleaks: secret[:RoundToEven(len*(100-p)/100)] + "..."
        assert_eq!(Redaction::percent(50).apply("abcdefgh"), "abcd...");
        assert_eq!(Redaction::percent(20).apply("abcdefghij"), "abcdefgh...");
        // 5 * 0.5 = 2.5 rounds to even: 2.
        assert_eq!(Redaction::percent(50).apply("abcde"), "ab...");
        // 7 * 0.5 = 3.5 rounds to even: 4.
        assert_eq!(Redaction::percent(50).apply("abcdefg"), "abcd...");
        assert_eq!(Redaction::percent(99).apply("abcdefgh"), "...");
        assert_eq!(Redaction::FULL.apply("abcdefgh"), "REDACTED");
        assert_eq!(Redaction::percent(250), Redaction::FULL);
        assert_eq!(Redaction::NONE.apply("abcdefgh"), "abcdefgh");
        // Never splits a character.
        assert_eq!(Redaction::percent(50).apply("ééé"), "é...");
    }

    #[test]
    fn catalog_lists_every_detector_once_and_custom_rules() {
        let al = Allowlist::from_toml_str(
            "[[rules]]\nid = \"acme-key\"\ndescription = \"ACME key\"\nregex = '''acme_[a-z0-9]{16}'''\n",
        )
        .unwrap();
        let c = rule_catalog(&al);
        let ids: Vec<&str> = c.iter().map(|r| r.id.as_str()).collect();
        for id in [
            "aws-access-key-id",
            "private-key",
            "credential-assignment",
            "random-token",
            "acme-key",
        ] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        let mut d = ids.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), ids.len(), "duplicate ids in {ids:?}");
        assert!(c.iter().all(|r| !r.description.is_empty()));
        assert_eq!(c.last().unwrap().description, "ACME key");
    }
}
