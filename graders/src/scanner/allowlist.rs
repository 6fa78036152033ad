//! `.gitleaks.toml` support: allowlists and custom rules, read from a path
//! the caller names (the environment passes a pristine copy, never the
//! workspace's live file, since an agent could otherwise allowlist its own
//! leaks).
//!
//! Allowlists, in every form gitleaks 8.x accepts:
//! - the single global `[allowlist]` table (deprecated in gitleaks, kept);
//! - the global `[[allowlists]]` array (gitleaks ≥ 8.25), each entry
//!   optionally limited to some rules by `targetRules`;
//! - per-rule `[rules.allowlist]` / `[[rules.allowlists]]` inside a
//!   `[[rules]]` entry.
//!
//! Each entry has `paths` (regexes on the file path), `regexes` (on the
//! secret, the match or the line per `regexTarget`), `stopwords`
//! (case-insensitive substrings of the secret), `commits` and `condition`
//! (`OR`, the default: any given criterion allows; `AND`: every given
//! criterion must). Unlike gitleaks, mixing the old and new forms is not
//! an error: their entries are simply all applied.
//!
//! `[[rules]]` entries name either a built-in rule — by our id
//! (`github-pat`, `random-token`, …) or by the gitleaks default id it
//! corresponds to (`aws-access-token`, `generic-api-key`, …) — to attach
//! allowlists to it, or define a custom rule with `regex` (`secretGroup`,
//! `keywords`, `entropy`, `path` honoured as gitleaks does). A `[[rules]]`
//! entry with an unknown id and no `regex`, a path-only rule, a composite
//! rule (`required`), or an unknown `condition`/`regexTarget` is an error
//! naming the rule: nothing in a config is silently ignored, except
//! `[extend]` (our built-in rules are the default set; an extend *path*
//! is never followed, because it could point anywhere).
//!
//! What `regexTarget = "match"` sees: gitleaks tests the whole rule match.
//! Findings keep only the secret's span, so the match is rebuilt as the
//! line text from the start of the key name the value is assigned to
//! (`api_key = "…`) through the end of the value — the shape gitleaks'
//! assignment-style matches take; for a value with no key name, the value.

use super::Cand;
use super::Finding;
use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

/// Largest config file read.
pub(crate) const MAX_FILE: u64 = 1024 * 1024;
/// Regexes compiled per config (bounds compile time on a hostile file).
const MAX_PATTERNS: usize = 10_000;
/// Compiled size limit per regex.
const REGEX_SIZE: usize = 1 << 20;
/// Custom-rule matches longer than this are dropped: the windowed and
/// incremental scanners assume spans far shorter than their margins.
const MAX_CUSTOM_SPAN: usize = 1024;
/// Matches kept per custom rule per scanned text.
const MAX_CUSTOM_MATCHES: usize = 10_000;
/// Distinct custom rule ids interned per process (see [`intern`]).
const MAX_INTERNED: usize = 4096;

/// What `regexes` are matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Target {
    #[default]
    Secret,
    Match,
    Line,
}

#[derive(Debug, Clone)]
struct Entry {
    paths: Vec<Regex>,
    regexes: Vec<Regex>,
    target: Target,
    stopwords: Vec<String>,
    commits: Vec<String>,
    and: bool,
    /// Rule ids this entry applies to; empty = every rule.
    rules: Vec<String>,
}

/// A `[[rules]]` entry with its own `regex`.
#[derive(Debug, Clone)]
struct CustomRule {
    id: &'static str,
    /// The config's `description`, for reports' rule lists.
    description: Option<String>,
    re: Regex,
    path: Option<Regex>,
    /// 0: the first non-empty capture group, else the whole match.
    secret_group: usize,
    entropy: f64,
    keywords: Vec<String>,
}

/// A parsed `.gitleaks.toml`: allowlists and custom rules. Empty by
/// default (allows nothing, adds nothing).
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    entries: Vec<Entry>,
    custom: Vec<CustomRule>,
}

/// Errors reading a `.gitleaks.toml`.
#[derive(Debug, thiserror::Error)]
pub enum AllowlistError {
    #[error("reading allowlist: {0}")]
    Io(#[from] std::io::Error),
    #[error("allowlist too large (over {MAX_FILE} bytes)")]
    TooLarge,
    #[error("parsing allowlist TOML: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("allowlist regex {0:?}: {1}")]
    Regex(String, regex::Error),
    /// A `[[rules]]` entry (named by id) that cannot be honoured.
    #[error("gitleaks rule {0:?}: {1}")]
    Rule(String, String),
    /// An allowlist entry with an invalid field.
    #[error("allowlist: {0}")]
    Invalid(String),
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default, alias = "regextarget")]
    regex_target: Option<String>,
    #[serde(default, alias = "stopWords")]
    stopwords: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
    /// Global `[[allowlists]]` only.
    #[serde(default, alias = "targetrules")]
    target_rules: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default, alias = "secretgroup")]
    secret_group: Option<usize>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    #[allow(dead_code)]
    tags: Vec<String>,
    #[serde(default)]
    allowlist: Option<RawEntry>,
    #[serde(default)]
    allowlists: Vec<RawEntry>,
    #[serde(default)]
    required: Option<toml::Value>,
    #[serde(default, alias = "skipreport")]
    skip_report: bool,
}

#[derive(Deserialize, Default)]
struct RawFile {
    allowlist: Option<RawEntry>,
    #[serde(default)]
    allowlists: Vec<RawEntry>,
    #[serde(default)]
    rules: Vec<RawRule>,
}

/// Our rule ids that are not provider-table rules.
const OTHER_RULES: &[&str] = &["private-key", "credential-assignment", "random-token"];

/// gitleaks default rule ids and the built-in rules that cover the same
/// secrets, so a config written for gitleaks allowlists the right findings.
const GITLEAKS_ALIASES: &[(&str, &[&str])] = &[
    ("aws-access-token", &["aws-access-key-id"]),
    (
        "generic-api-key",
        &["credential-assignment", "random-token"],
    ),
    ("gcp-api-key", &["google-api-key"]),
    ("npm-access-token", &["npm-token", "npmrc-auth-token"]),
    ("sendgrid-api-token", &["sendgrid-api-key"]),
    ("slack-bot-token", &["slack-token"]),
    ("slack-user-token", &["slack-token"]),
    ("slack-app-token", &["slack-token"]),
    ("slack-legacy-token", &["slack-token"]),
    ("slack-legacy-bot-token", &["slack-token"]),
    ("slack-config-access-token", &["slack-token"]),
    ("slack-webhook-url", &["slack-webhook"]),
    ("stripe-access-token", &["stripe-secret-key"]),
    ("github-app-token", &["github-pat"]),
    ("github-refresh-token", &["github-pat"]),
    ("gcp-service-account", &["private-key"]),
];

/// Built-in rule ids an id in a config stands for (empty: not built in).
pub(crate) fn builtin_ids(id: &str) -> Vec<&'static str> {
    if let Some(d) = super::rules::defs().find(|d| d.name == id) {
        return vec![d.name];
    }
    if let Some(o) = OTHER_RULES.iter().find(|o| **o == id) {
        return vec![*o];
    }
    GITLEAKS_ALIASES
        .iter()
        .find(|(g, _)| *g == id)
        .map(|(_, ours)| ours.to_vec())
        .unwrap_or_default()
}

/// Returns a `'static` copy of a custom rule id, as findings' rule ids are
/// `&'static str`. Interned, so parsing a config per episode does not leak
/// a copy each time; at most [`MAX_INTERNED`] distinct ids per process.
fn intern(id: &str) -> Option<&'static str> {
    static SEEN: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = seen.get(id) {
        return Some(s);
    }
    if seen.len() >= MAX_INTERNED {
        return None;
    }
    let s: &'static str = Box::leak(id.to_string().into_boxed_str());
    seen.insert(s);
    Some(s)
}

/// Compiles regexes, counting them against the per-config budget.
struct Compiler {
    left: usize,
}

impl Compiler {
    fn one(&mut self, r: &str) -> Result<Regex, AllowlistError> {
        if self.left == 0 {
            return Err(AllowlistError::Invalid(format!(
                "more than {MAX_PATTERNS} regexes"
            )));
        }
        self.left -= 1;
        regex::RegexBuilder::new(r)
            .size_limit(REGEX_SIZE)
            .build()
            .map_err(|e| AllowlistError::Regex(r.to_string(), e))
    }

    fn all(&mut self, v: &[String]) -> Result<Vec<Regex>, AllowlistError> {
        v.iter().map(|r| self.one(r)).collect()
    }

    fn entry(&mut self, r: RawEntry, rules: Vec<String>) -> Result<Entry, AllowlistError> {
        let target = match r.regex_target.as_deref() {
            None | Some("") | Some("secret") => Target::Secret,
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            Some(t) => {
                return Err(AllowlistError::Invalid(format!(
                    "unknown regexTarget {t:?} (expected \"secret\", \"match\" or \"line\")"
                )));
            }
        };
        let and = match r
            .condition
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            None | Some("") | Some("OR") | Some("||") => false,
            Some("AND") | Some("&&") => true,
            Some(_) => {
                return Err(AllowlistError::Invalid(format!(
                    "unknown condition {:?} (expected \"OR\" or \"AND\")",
                    r.condition.unwrap_or_default()
                )));
            }
        };
        Ok(Entry {
            paths: self.all(&r.paths)?,
            regexes: self.all(&r.regexes)?,
            target,
            stopwords: r.stopwords.iter().map(|w| w.to_ascii_lowercase()).collect(),
            commits: r.commits,
            and,
            rules,
        })
    }
}

impl Allowlist {
    /// Reads a `.gitleaks.toml` (at most 1 MiB) from a caller-given path.
    pub fn from_toml_file(path: &Path) -> Result<Self, AllowlistError> {
        use std::io::Read;
        let f = std::fs::File::open(path)?;
        let mut s = String::new();
        f.take(MAX_FILE + 1).read_to_string(&mut s)?;
        if s.len() as u64 > MAX_FILE {
            return Err(AllowlistError::TooLarge);
        }
        Self::from_toml_str(&s)
    }

    /// Parses `.gitleaks.toml` text (see the module doc for what is read
    /// and what is an error).
    pub fn from_toml_str(s: &str) -> Result<Self, AllowlistError> {
        if s.len() as u64 > MAX_FILE {
            return Err(AllowlistError::TooLarge);
        }
        let raw: RawFile = toml::from_str(s)?;
        let mut c = Compiler { left: MAX_PATTERNS };
        let mut entries = Vec::new();
        let mut custom = Vec::new();
        for r in raw.allowlist.into_iter().chain(raw.allowlists) {
            let mut targets = Vec::new();
            for t in &r.target_rules {
                let ids = builtin_ids(t);
                let is_custom = raw
                    .rules
                    .iter()
                    .any(|x| x.id.as_deref() == Some(t.as_str()) && x.regex.is_some());
                if ids.is_empty() && !is_custom {
                    return Err(AllowlistError::Invalid(format!(
                        "[[allowlists]] targetRules names {t:?}, which is neither a built-in nor a custom rule"
                    )));
                }
                targets.extend(ids.iter().map(|s| s.to_string()));
                if is_custom {
                    targets.push(t.clone());
                }
            }
            if !r.target_rules.is_empty() && targets.is_empty() {
                continue;
            }
            entries.push(c.entry(r, targets)?);
        }
        for (i, rule) in raw.rules.into_iter().enumerate() {
            let Some(id) = rule.id.clone().filter(|s| !s.is_empty()) else {
                return Err(AllowlistError::Rule(
                    format!("#{}", i + 1),
                    "[[rules]] entry has no id".into(),
                ));
            };
            let err = |m: &str| AllowlistError::Rule(id.clone(), m.to_string());
            if rule.required.is_some() {
                return Err(err(
                    "composite rules ([[rules.required]]) are not supported",
                ));
            }
            let builtin = builtin_ids(&id);
            let mut applies_to: Vec<String> = builtin.iter().map(|s| s.to_string()).collect();
            match rule.regex.as_deref() {
                Some(re_src) if !rule.skip_report => {
                    let re = c.one(re_src)?;
                    let groups = re.captures_len() - 1;
                    let secret_group = rule.secret_group.unwrap_or(0);
                    if secret_group > groups {
                        return Err(err(&format!(
                            "secretGroup {secret_group} but the regex has {groups} groups"
                        )));
                    }
                    let path = match rule.path.as_deref() {
                        Some(p) if !p.is_empty() => Some(c.one(p)?),
                        _ => None,
                    };
                    let Some(sid) = intern(&id) else {
                        return Err(err("too many distinct custom rule ids in this process"));
                    };
                    custom.push(CustomRule {
                        id: sid,
                        description: rule.description.clone(),
                        re,
                        path,
                        secret_group,
                        entropy: rule.entropy.unwrap_or(0.0),
                        keywords: rule
                            .keywords
                            .iter()
                            .map(|k| k.to_ascii_lowercase())
                            .collect(),
                    });
                    applies_to.push(id.clone());
                }
                Some(_) => {} // skipReport: only a component of composite rules.
                None => {
                    if rule.path.is_some() {
                        return Err(err("path-only rules (no regex) are not supported"));
                    }
                    if builtin.is_empty() {
                        return Err(err(
                            "not a built-in rule id and has no regex; built-in ids are the \
                             provider rules, private-key, credential-assignment, random-token \
                             and the gitleaks default ids they cover",
                        ));
                    }
                }
            }
            applies_to.sort();
            applies_to.dedup();
            for a in rule.allowlist.into_iter().chain(rule.allowlists) {
                if !a.target_rules.is_empty() {
                    return Err(err("targetRules belongs in a global [[allowlists]] entry"));
                }
                entries.push(c.entry(a, applies_to.clone())?);
            }
        }
        Ok(Allowlist { entries, custom })
    }

    /// The custom rules (`[[rules]]` with a `regex`): id and description,
    /// in config order, for reports that list every rule that can fire.
    pub fn custom_rules(&self) -> impl Iterator<Item = (&'static str, Option<&str>)> {
        self.custom.iter().map(|r| (r.id, r.description.as_deref()))
    }

    /// True when nothing is allowlisted and no custom rule is defined.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.custom.is_empty()
    }

    /// Whether a finding of `secret` on `line` in `path` (at `commit`) is
    /// allowed by a global entry (one without `targetRules`). `line` also
    /// stands in for the match. Per-rule entries need the rule:
    /// [`Allowlist::allows_finding`].
    pub fn allows(&self, path: &str, line: &str, secret: &str, commit: Option<&str>) -> bool {
        self.allows_rule(None, path, line, line, secret, commit)
    }

    /// Whether `f` (found in `path`, at `commit` in history mode) is allowed
    /// by a global entry or an entry for its rule.
    pub fn allows_finding(&self, f: &Finding, path: &str, commit: Option<&str>) -> bool {
        if self.entries.is_empty() {
            return false;
        }
        let m = match_text(f);
        self.allows_rule(Some(&f.rule), path, &f.line_text, m, &f.value, commit)
    }

    /// The check itself: `rule` None means "global entries only".
    fn allows_rule(
        &self,
        rule: Option<&str>,
        path: &str,
        line: &str,
        matched: &str,
        secret: &str,
        commit: Option<&str>,
    ) -> bool {
        let lsecret = secret.to_ascii_lowercase();
        self.entries.iter().any(|e| {
            if !e.rules.is_empty() && !rule.is_some_and(|r| e.rules.iter().any(|x| x == r)) {
                return false;
            }
            let mut checks: Vec<bool> = Vec::with_capacity(4);
            if !e.paths.is_empty() {
                checks.push(e.paths.iter().any(|r| r.is_match(path)));
            }
            if !e.regexes.is_empty() {
                let t = match e.target {
                    Target::Line => line,
                    Target::Match => matched,
                    Target::Secret => secret,
                };
                checks.push(e.regexes.iter().any(|r| r.is_match(t)));
            }
            if !e.stopwords.is_empty() {
                checks.push(e.stopwords.iter().any(|w| lsecret.contains(w.as_str())));
            }
            if !e.commits.is_empty() {
                checks.push(commit.is_some_and(|c| {
                    e.commits
                        .iter()
                        .any(|x| x.len() >= 7 && c.starts_with(x.as_str()))
                }));
            }
            if e.and {
                !checks.is_empty() && checks.iter().all(|&c| c)
            } else {
                checks.iter().any(|&c| c)
            }
        })
    }

    /// Candidates from the custom rules over `text` (`lower` is its ASCII
    /// lowercase), for the scanner's detector pass.
    pub(crate) fn custom_candidates(&self, path: &str, text: &str, lower: &str) -> Vec<Cand> {
        let mut out = Vec::new();
        for r in &self.custom {
            if !r.keywords.is_empty() && !r.keywords.iter().any(|k| lower.contains(k.as_str())) {
                continue;
            }
            if r.path.as_ref().is_some_and(|p| !p.is_match(path)) {
                continue;
            }
            for caps in r.re.captures_iter(text).take(MAX_CUSTOM_MATCHES) {
                let m = if r.secret_group > 0 {
                    caps.get(r.secret_group)
                } else {
                    caps.iter()
                        .skip(1)
                        .flatten()
                        .find(|g| !g.is_empty())
                        .or_else(|| caps.get(0))
                };
                let Some(m) = m else { continue };
                let whole = caps.get(0).map_or(0, |w| w.len());
                if m.is_empty() || whole > MAX_CUSTOM_SPAN {
                    continue;
                }
                if r.entropy > 0.0 && super::random::entropy(m.as_str().as_bytes()) <= r.entropy {
                    continue;
                }
                if super::mask::is_masked_or_placeholder(m.as_str()) {
                    continue;
                }
                out.push(Cand {
                    start: m.start(),
                    end: m.end(),
                    rule: r.id,
                    ty: "generic_secret",
                    value: m.as_str().to_string(),
                    encoded: false,
                    prio: 0,
                });
            }
        }
        out
    }
}

/// The text `regexTarget = "match"` sees (see the module doc).
fn match_text(f: &Finding) -> &str {
    if f.encoded {
        return &f.value;
    }
    let lt = f.line_text.as_str();
    let s = f.col_start.saturating_sub(1).min(lt.len());
    let e = f.col_end.saturating_sub(1).clamp(s, lt.len());
    if !lt.is_char_boundary(s) || !lt.is_char_boundary(e) {
        return &f.value;
    }
    let name = super::random::key_name(&lt[..s]);
    if name.is_empty() {
        return &f.value;
    }
    // `key_name` returns a sub-slice of `lt`: its offset is where the key starts.
    let ks = name.as_ptr() as usize - lt.as_ptr() as usize;
    &lt[ks..e]
}

#[cfg(test)]
mod tests {
    use super::Allowlist;
    use crate::scanner::{ScanConfig, Scanner};

    #[test]
    fn both_forms() {
        let a = Allowlist::from_toml_str(
            r#"
[allowlist]
paths = ['''^tests/fixtures/''']
stopwords = ["fixture"]

[[allowlists]]
condition = "AND"
regexes = ['''^tok_test_''']
paths = ['''\.md$''']

[[allowlists]]
commits = ["c2a9f1e07b3d"]
"#,
        )
        .unwrap();
        assert!(a.allows("tests/fixtures/a.env", "", "zzz", None));
        assert!(a.allows("src/a.py", "", "myFixtureSecret", None));
        assert!(a.allows("README.md", "", "tok_test_abc", None));
        assert!(
            !a.allows("src/a.py", "", "tok_test_abc", None),
            "AND needs the path too"
        );
        assert!(a.allows("src/a.py", "", "zzz", Some("c2a9f1e07b3d48c6a5e2")));
        assert!(!a.allows("src/a.py", "", "zzz", Some("ffff")));
        assert!(Allowlist::from_toml_str("[allowlist]\nregexes = ['(']").is_err());
    }

    const GHP: &str = "ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h";
    const AKIA: &str = "AKIAZ7QW3ERT5YUI8OPA";

    fn scan(toml: &str, path: &str, text: &str) -> Vec<(String, String)> {
        let s = Scanner::new(ScanConfig {
            allowlist: Allowlist::from_toml_str(toml).unwrap(),
            ..Default::default()
        });
        s.scan_bytes(path, text.as_bytes())
            .into_iter()
            .map(|f| (f.rule, f.value))
            .collect()
    }

    fn rules_of(v: &[(String, String)]) -> Vec<&str> {
        v.iter().map(|(r, _)| r.as_str()).collect()
    }

    /// A per-rule allowlist silences only its rule; gitleaks ids resolve
    /// to ours.
    #[test]
    fn per_rule_allowlists() {
        let text = format!("gh = \"{GHP}\"\naws_access_key_id = {AKIA}\n");
        let toml = r#"
[[rules]]
id = "github-pat"
[[rules.allowlists]]
description = "fixture tokens"
paths = ['''^src/''']
"#;
        let f = scan(toml, "src/app.py", &text);
        assert!(!rules_of(&f).contains(&"github-pat"), "{f:?}");
        assert!(rules_of(&f).contains(&"aws-access-key-id"), "{f:?}");
        // Elsewhere the GitHub token is still reported.
        let f = scan(toml, "lib/app.py", &text);
        assert!(rules_of(&f).contains(&"github-pat"), "{f:?}");

        // gitleaks' id for AKIA keys, with the old single-table form.
        let toml =
            "[[rules]]\nid = \"aws-access-token\"\n[rules.allowlist]\nstopwords = [\"z7qw3\"]\n";
        let f = scan(toml, "src/app.py", &text);
        assert!(!rules_of(&f).contains(&"aws-access-key-id"), "{f:?}");
        assert!(rules_of(&f).contains(&"github-pat"), "{f:?}");
    }

    /// `condition` and each `regexTarget` behave as in gitleaks.
    #[test]
    fn condition_and_regex_targets() {
        let text = format!("token = \"{GHP}\" # ci fixture\n");
        let one = |target: &str, re: &str| {
            let toml = format!(
                "[[rules]]\nid = \"github-pat\"\n[[rules.allowlists]]\nregexTarget = \"{target}\"\nregexes = ['''{re}''']\n"
            );
            rules_of(&scan(&toml, "a.py", &text)).contains(&"github-pat")
        };
        // secret: the token itself.
        assert!(!one("secret", "^ghp_R8sT"));
        assert!(
            one("secret", "fixture"),
            "secret target does not see the comment"
        );
        // match: key name through value.
        assert!(!one("match", r#"^token = "ghp_"#));
        assert!(one("match", "fixture"), "match target stops at the value");
        // line: the whole line.
        assert!(!one("line", "# ci fixture$"));

        let and = |path: &str| {
            let toml = "[[rules]]\nid = \"github-pat\"\n[[rules.allowlists]]\ncondition = \"AND\"\npaths = ['''^tests/''']\nstopwords = [\"r8st2\"]\n";
            rules_of(&scan(toml, path, &text)).contains(&"github-pat")
        };
        assert!(!and("tests/a.py"), "both criteria hold");
        assert!(and("src/a.py"), "AND needs the path too");
    }

    /// Global `[[allowlists]]` with `targetRules` apply only to those rules.
    #[test]
    fn global_target_rules() {
        let text = format!("gh = \"{GHP}\"\naws_access_key_id = {AKIA}\n");
        let toml = "[[allowlists]]\ntargetRules = [\"aws-access-token\"]\npaths = ['''.*''']\n";
        let f = scan(toml, "src/app.py", &text);
        assert_eq!(rules_of(&f), ["github-pat"], "{f:?}");
        let err = Allowlist::from_toml_str(
            "[[allowlists]]\ntargetRules = [\"no-such-rule\"]\npaths = ['''x''']\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("no-such-rule"), "{err}");
    }

    /// Custom rules: regex, secretGroup, keywords, entropy, path, and their
    /// own allowlists.
    #[test]
    fn custom_rules() {
        let toml = r#"
[[rules]]
id = "acme-key"
regex = '''acme_(live|test)_([a-z0-9]{16})'''
secretGroup = 2
keywords = ["acme_"]
entropy = 3.0
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''acme_test_''']
"#;
        let f = scan(toml, "a.txt", "key: acme_live_q8zk3vb7lm2np9rt\n");
        assert!(
            f.contains(&("acme-key".into(), "q8zk3vb7lm2np9rt".into())),
            "{f:?}"
        );
        // Low entropy: not a finding.
        assert!(
            !rules_of(&scan(toml, "a.txt", "key: acme_live_aaaaaaaaaaaaaaaa\n"))
                .contains(&"acme-key")
        );
        // The rule's allowlist.
        assert!(
            !rules_of(&scan(toml, "a.txt", "key: acme_test_q8zk3vb7lm2np9rt\n"))
                .contains(&"acme-key")
        );
        // No group named: the first non-empty group; path limits the rule.
        let toml =
            "[[rules]]\nid = \"acme\"\nregex = '''acme_([a-z0-9]{16})'''\npath = '''\\.cfg$'''\n";
        assert_eq!(
            scan(toml, "x.cfg", "acme_q8zk3vb7lm2np9rt"),
            [("acme".into(), "q8zk3vb7lm2np9rt".into())]
        );
        assert!(!rules_of(&scan(toml, "x.txt", "acme_q8zk3vb7lm2np9rt")).contains(&"acme"));
    }

    /// Nothing in a config is silently dropped: each error names the rule.
    #[test]
    fn errors_name_the_rule() {
        let cases = [
            ("[[rules]]\nid = \"made-up\"\n", "made-up"),
            ("[[rules]]\nid = \"p\"\npath = '''x'''\n", "path-only"),
            (
                "[[rules]]\nid = \"g\"\nregex = '''(a)'''\nsecretGroup = 3\n",
                "secretGroup",
            ),
            (
                "[[rules]]\nid = \"c\"\nregex = '''a'''\n[[rules.required]]\nid = \"x\"\n",
                "composite",
            ),
            ("[[rules]]\nregex = '''a'''\n", "no id"),
            (
                "[[allowlists]]\ncondition = \"XOR\"\npaths = ['''x''']\n",
                "condition",
            ),
            (
                "[[allowlists]]\nregexTarget = \"file\"\nregexes = ['''x''']\n",
                "regexTarget",
            ),
            ("[[rules]]\nid = \"b\"\nregex = '''(['''\n", "regex"),
        ];
        for (toml, want) in cases {
            let e = Allowlist::from_toml_str(toml).unwrap_err().to_string();
            assert!(e.contains(want), "{toml:?}: {e}");
        }
        // `[extend]`, titles and descriptions are accepted.
        assert!(
            Allowlist::from_toml_str("title = \"t\"\n[extend]\nuseDefault = true\n[allowlist]\ndescription = \"d\"\npaths = ['''m/''']\n")
                .is_ok()
        );
    }
}
