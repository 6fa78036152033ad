//! Provider rules: one module per provider family, each a small table of
//! regexes whose *value group* is the secret, so key names around it survive
//! redaction. Every rule carries lowercase keywords; a rule's regex runs only
//! when one of them occurs in the (lowercased) text, which keeps a scan of a
//! file with no credential-looking text close to a single `contains` pass.

use regex::Regex;
use std::sync::LazyLock;

mod ai;
mod aws;
mod azure;
mod connstr;
mod github;
mod google;
mod jwt;
mod npm;
pub(crate) mod pem;
mod sendgrid;
mod service;
mod slack;
mod sql;
mod stripe;
mod twilio;

/// A rule as written in a provider module.
pub(crate) struct RuleDef {
    /// Rule id reported in findings (`Finding::rule`).
    pub name: &'static str,
    /// Secret type from tasks/FORMAT.md (`Finding::secret_type`).
    pub secret_type: &'static str,
    /// Lowercase substrings; the regex runs only if one is in the text.
    pub keywords: &'static [&'static str],
    /// The regex; compiled once for the process.
    pub pattern: &'static str,
    /// Capture group holding the reported value.
    pub group: usize,
    /// Capture group judged for masks/placeholders (0 = same as `group`).
    pub check_group: usize,
    /// `(keyword, type)`: if the keyword is within 512 bytes before the match
    /// (or in the path), report `type` instead (Firebase keys look like Google's).
    pub context_type: Option<(&'static str, &'static str)>,
}

/// A compiled rule.
pub(crate) struct Rule {
    pub def: &'static RuleDef,
    pub re: Regex,
}

/// All regex rules in priority order (earlier wins an overlap at equal span).
pub(crate) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let tables: [&'static [RuleDef]; 14] = [
        ai::RULES,
        aws::RULES,
        azure::RULES,
        github::RULES,
        slack::RULES,
        stripe::RULES,
        service::RULES,
        google::RULES,
        jwt::RULES,
        npm::RULES,
        sendgrid::RULES,
        twilio::RULES,
        connstr::RULES,
        sql::RULES,
    ];
    tables
        .iter()
        .flat_map(|t| t.iter())
        .map(|def| Rule {
            def,
            re: Regex::new(def.pattern).unwrap_or_else(|e| panic!("rule {}: {e}", def.name)),
        })
        .collect()
});

/// Every rule keyword (plus the PEM marker) as one case-insensitive
/// `RegexSet`: one optimized pass tells which keywords occur, instead of a
/// `contains` per keyword (which would also be built at the crate's debug
/// opt-level and dominate scan time).
pub(crate) struct Keywords {
    set: regex::RegexSet,
    words: Vec<&'static str>,
}

/// Extra keyword for the hand-written PEM detector.
pub(crate) const PEM_KEYWORD: &str = "private key";

impl Keywords {
    /// Which keywords occur in `text`, as a lookup.
    pub fn present(&self, text: &str) -> Present {
        let m = self.set.matches(text);
        Present {
            hits: m.iter().map(|i| self.words[i]).collect(),
        }
    }
}

/// Keywords found in one text.
pub(crate) struct Present {
    hits: Vec<&'static str>,
}

impl Present {
    pub fn any(&self, kws: &[&str]) -> bool {
        kws.iter().any(|k| self.hits.contains(k))
    }
}

pub(crate) static KEYWORDS: LazyLock<Keywords> = LazyLock::new(|| {
    let mut words: Vec<&'static str> = RULES
        .iter()
        .flat_map(|r| r.def.keywords.iter().copied())
        .collect();
    words.push(PEM_KEYWORD);
    words.sort_unstable();
    words.dedup();
    let pats: Vec<String> = words
        .iter()
        .map(|w| format!("(?i){}", regex::escape(w)))
        .collect();
    Keywords {
        set: regex::RegexSet::new(pats).expect("keyword set"),
        words,
    }
});

#[cfg(test)]
pub(crate) mod testutil {
    use crate::scanner::{ScanConfig, Scanner};

    /// Asserts every true positive yields a finding of `ty` with exactly the
    /// expected value, and every false positive yields no finding at all.
    pub fn check(ty: &str, tps: &[(&str, &str)], fps: &[(&str, &str)]) {
        let s = Scanner::new(ScanConfig::default());
        for (input, want) in tps {
            let f = s.scan_bytes("config/app.env", input.as_bytes());
            assert!(
                f.iter().any(|f| f.secret_type == ty && f.value == *want),
                "TP missed: {input:?} want {want:?} ({ty}); got {:?}",
                f.iter()
                    .map(|f| (&f.secret_type, &f.value))
                    .collect::<Vec<_>>()
            );
        }
        for (input, reason) in fps {
            let f = s.scan_bytes("config/app.env", input.as_bytes());
            assert!(
                f.is_empty(),
                "FP ({reason}): {input:?} gave {:?}",
                f.iter().map(|f| (&f.rule, &f.value)).collect::<Vec<_>>()
            );
        }
    }
}
