//! gitleaks compatibility of reports: its JSON report shape, its
//! fingerprints, `.gitleaksignore` files, baselines, and loading a
//! `.gitleaks.toml` with a warning for each part we do not honour.
//!
//! - **Fingerprint** (gitleaks `detect.AddFinding`): `file:rule:line` for a
//!   working-tree finding, `commit:file:rule:line` for a history finding.
//! - **`.gitleaksignore`** (gitleaks `AddGitleaksIgnore`): one fingerprint a
//!   line; blank lines and lines starting `#` skipped; `\` in the path read
//!   as `/`. A `file:rule:line` entry suppresses that finding in any mode
//!   (gitleaks' "global" fingerprint); `commit:file:rule:line` suppresses it
//!   at that commit only. A rule id may be a gitleaks default id that one of
//!   our rules covers (`generic-api-key` stands for `credential-assignment`
//!   and `random-token`), so an ignore file written for gitleaks still
//!   names our findings. Other entries are warned about and kept, as
//!   gitleaks does.
//! - **Baseline** (gitleaks `detect.IsNew`): a previous report in this
//!   shape; a finding equal to an entry is dropped. Equal means the same
//!   `RuleID`, `Description`, `StartLine`, `EndLine`, `StartColumn`,
//!   `EndColumn`, `File`, `Commit`, `Author`, `Email`, `Date`, `Message`
//!   and `Entropy`, and — only when secrets are not redacted — `Match` and
//!   `Secret`; the `Fingerprint` is not compared. `Entropy` is compared to
//!   within 1e-4 (gitleaks compares float32s exactly; a JSON round trip
//!   through another parser need not be bit-exact). Baselines written by
//!   gitleaks itself parse, but its rule ids and descriptions differ from
//!   ours, so only a report this tool wrote (`--format gitleaks`) matches.

use super::{Finding, Redaction, RuleInfo, span_end};
use crate::scanner::{Allowlist, AllowlistError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::Path;

/// Largest `.gitleaksignore` read.
const MAX_IGNORE_FILE: u64 = 16 << 20;
/// Largest baseline report read.
const MAX_BASELINE_FILE: u64 = 256 << 20;

/// Errors reading a gitleaks input file.
#[derive(Debug, thiserror::Error)]
pub enum GitleaksError {
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("{0}: larger than {1} bytes")]
    TooLarge(String, u64),
    #[error(
        "{0}: not a gitleaks JSON report (an array of findings with RuleID, File, StartLine, ...; write one with --format gitleaks): {1}"
    )]
    Baseline(String, serde_json::Error),
    #[error(
        "{0}: entry {1} has no RuleID: not a gitleaks JSON report (write one with --format gitleaks)"
    )]
    BaselineEntry(String, usize),
    #[error("{0}: {1}")]
    Config(String, AllowlistError),
    #[error("git: {0}")]
    Git(#[from] git2::Error),
}

/// Reads at most `max` bytes of `path` as UTF-8 text.
fn read_bounded(path: &Path, max: u64) -> Result<String, GitleaksError> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| GitleaksError::Io(name.clone(), e))?;
    let mut s = String::new();
    f.take(max + 1)
        .read_to_string(&mut s)
        .map_err(|e| GitleaksError::Io(name.clone(), e))?;
    if s.len() as u64 > max {
        return Err(GitleaksError::TooLarge(name, max));
    }
    Ok(s)
}

/// One finding in gitleaks' JSON report shape (`report.Finding`, fields in
/// its order and spelling). Missing fields read as empty, so a gitleaks
/// report of any 8.x version loads as a baseline.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase", default)]
pub struct GitleaksFinding {
    #[serde(rename = "RuleID")]
    pub rule_id: String,
    pub description: String,
    pub start_line: usize,
    pub end_line: usize,
    pub start_column: usize,
    pub end_column: usize,
    /// The secret in context; we report the secret's own span.
    #[serde(rename = "Match")]
    pub match_text: String,
    pub secret: String,
    pub file: String,
    pub symlink_file: String,
    pub commit: String,
    /// Shannon entropy (bits per byte) of the unredacted secret.
    pub entropy: f32,
    pub author: String,
    pub email: String,
    pub date: String,
    pub message: String,
    pub tags: Vec<String>,
    pub fingerprint: String,
}

/// gitleaks' fingerprint: `file:rule:line`, or `commit:file:rule:line`
/// for a finding in history.
pub fn fingerprint(f: &Finding) -> String {
    match &f.commit {
        Some(c) => format!("{c}:{}:{}:{}", f.file, f.rule, f.line),
        None => format!("{}:{}:{}", f.file, f.rule, f.line),
    }
}

/// Author, email, date (RFC 3339, UTC) and message of a commit, as gitleaks
/// reports them for history findings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitMeta {
    pub author: String,
    pub email: String,
    pub date: String,
    pub message: String,
}

/// [`CommitMeta`] of every commit the findings name, read from `repo`.
pub fn commit_meta(
    repo: &Path,
    findings: &[Finding],
) -> Result<BTreeMap<String, CommitMeta>, GitleaksError> {
    let mut out = BTreeMap::new();
    let wanted: std::collections::BTreeSet<&str> = findings
        .iter()
        .filter_map(|f| f.commit.as_deref())
        .collect();
    if wanted.is_empty() {
        return Ok(out);
    }
    let r = git2::Repository::open(repo)?;
    for id in wanted {
        let c = r.find_commit(git2::Oid::from_str(id)?)?;
        let a = c.author();
        let t = a.when().seconds();
        out.insert(
            id.to_string(),
            CommitMeta {
                author: String::from_utf8_lossy(a.name_bytes()).into_owned(),
                email: String::from_utf8_lossy(a.email_bytes()).into_owned(),
                date: rfc3339_utc(t),
                message: String::from_utf8_lossy(c.message_bytes())
                    .trim_end()
                    .to_string(),
            },
        );
    }
    Ok(out)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time (Go's `time.RFC3339` in UTC).
fn rfc3339_utc(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `findings` in gitleaks' report shape; `rules` gives descriptions,
/// `meta` the commit fields (empty in working-tree mode).
pub fn to_gitleaks(
    findings: &[Finding],
    rules: &[RuleInfo],
    redaction: Redaction,
    meta: &BTreeMap<String, CommitMeta>,
) -> Vec<GitleaksFinding> {
    findings
        .iter()
        .map(|f| {
            let (end_line, end_column) = span_end(f);
            let m = f
                .commit
                .as_deref()
                .and_then(|c| meta.get(c))
                .cloned()
                .unwrap_or_default();
            let shown = redaction.apply(&f.value);
            GitleaksFinding {
                rule_id: f.rule.clone(),
                description: rules
                    .iter()
                    .find(|r| r.id == f.rule)
                    .map(|r| r.description.clone())
                    .unwrap_or_default(),
                start_line: f.line,
                end_line,
                start_column: f.col_start,
                end_column,
                match_text: shown.clone(),
                secret: shown,
                file: f.file.clone(),
                symlink_file: String::new(),
                commit: f.commit.clone().unwrap_or_default(),
                entropy: crate::scanner::random::entropy(f.value.as_bytes()) as f32,
                author: m.author,
                email: m.email,
                date: m.date,
                message: m.message,
                tags: Vec::new(),
                fingerprint: fingerprint(f),
            }
        })
        .collect()
}

/// The fingerprints of `.gitleaksignore` files.
#[derive(Debug, Clone, Default)]
pub struct IgnoreList {
    /// Normalised fingerprints, rule ids mapped onto ours.
    set: HashSet<String>,
}

impl IgnoreList {
    /// Adds the entries of one file's text; returns a warning per entry
    /// that is not a 3- or 4-part fingerprint (kept anyway, as gitleaks).
    pub fn add_text(&mut self, text: &str) -> Vec<String> {
        let mut warnings = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts: Vec<String> = line.split(':').map(str::to_string).collect();
            let (file_at, rule_at) = match parts.len() {
                3 => (0, 1),
                4 => (1, 2),
                _ => {
                    warnings.push(format!(
                        "line {}: {line:?} is not file:rule:line or commit:file:rule:line",
                        i + 1
                    ));
                    self.set.insert(line.to_string());
                    continue;
                }
            };
            parts[file_at] = parts[file_at].replace('\\', "/");
            let named = parts[rule_at].clone();
            let mut ours = crate::scanner::allowlist::builtin_ids(&named)
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>();
            if !ours.contains(&named) {
                ours.push(named);
            }
            for id in ours {
                parts[rule_at] = id;
                self.set.insert(parts.join(":"));
            }
        }
        warnings
    }

    /// Adds a `.gitleaksignore` file (bounded in size).
    pub fn add_file(&mut self, path: &Path) -> Result<Vec<String>, GitleaksError> {
        let text = read_bounded(path, MAX_IGNORE_FILE)?;
        Ok(self.add_text(&text))
    }

    /// Whether an entry names `f`: its `file:rule:line`, or in history its
    /// `commit:file:rule:line`.
    pub fn suppresses(&self, f: &Finding) -> bool {
        let global = format!("{}:{}:{}", f.file, f.rule, f.line);
        self.set.contains(&global) || (f.commit.is_some() && self.set.contains(&fingerprint(f)))
    }

    /// Number of entries (after rule-id expansion).
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// A previous gitleaks-shaped report whose findings are not reported again.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    entries: Vec<GitleaksFinding>,
}

impl Baseline {
    /// Parses a report (a JSON array of [`GitleaksFinding`]s). Fields may
    /// be missing, as in older gitleaks reports, but not `RuleID`: an array
    /// of other objects (our own JSON format) is refused, where gitleaks
    /// would load it as entries that match nothing.
    pub fn from_json(name: &str, text: &str) -> Result<Baseline, GitleaksError> {
        let entries: Vec<GitleaksFinding> =
            serde_json::from_str(text).map_err(|e| GitleaksError::Baseline(name.to_string(), e))?;
        if let Some(i) = entries.iter().position(|e| e.rule_id.is_empty()) {
            return Err(GitleaksError::BaselineEntry(name.to_string(), i + 1));
        }
        Ok(Baseline { entries })
    }

    /// Reads a report file (bounded in size).
    pub fn load(path: &Path) -> Result<Baseline, GitleaksError> {
        let text = read_bounded(path, MAX_BASELINE_FILE)?;
        Self::from_json(&path.display().to_string(), &text)
    }

    /// Whether `f` equals an entry by gitleaks' rule (module doc).
    pub fn contains(&self, f: &GitleaksFinding, redaction: Redaction) -> bool {
        self.entries.iter().any(|b| {
            f.rule_id == b.rule_id
                && f.description == b.description
                && f.start_line == b.start_line
                && f.end_line == b.end_line
                && f.start_column == b.start_column
                && f.end_column == b.end_column
                && (redaction.hides() || (f.match_text == b.match_text && f.secret == b.secret))
                && f.file == b.file
                && f.commit == b.commit
                && f.author == b.author
                && f.email == b.email
                && f.date == b.date
                && f.message == b.message
                && (f.entropy - b.entropy).abs() <= 1e-4
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A gitleaks config as we load it, with what we do not honour.
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    pub allowlist: Allowlist,
    /// One line per setting that has no effect here.
    pub warnings: Vec<String>,
}

/// The parts of a config that [`Allowlist`] does not read.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Unhonoured {
    extend: Option<Extend>,
    min_version: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Extend {
    path: Option<String>,
    url: Option<String>,
    use_default: Option<bool>,
    disabled_rules: Vec<String>,
}

/// Parses a `.gitleaks.toml`: allowlists and custom rules as
/// [`Allowlist::from_toml_str`] reads them (and refuses what it cannot
/// honour), plus a warning for `[extend]` settings, which are ignored: our
/// built-in rules are always on (`useDefault`), a `path`/`url` is never
/// followed, and `disabledRules` disables nothing.
pub fn config_from_str(text: &str) -> Result<LoadedConfig, AllowlistError> {
    let allowlist = Allowlist::from_toml_str(text)?;
    let extra: Unhonoured = toml::from_str(text)?;
    let mut warnings = Vec::new();
    if let Some(e) = extra.extend {
        if let Some(p) = e.path {
            warnings.push(format!("[extend] path {p:?} is not followed"));
        }
        if let Some(u) = e.url {
            warnings.push(format!("[extend] url {u:?} is not fetched"));
        }
        if e.use_default == Some(false) {
            warnings
                .push("[extend] useDefault = false: the built-in rules stay on regardless".into());
        }
        if !e.disabled_rules.is_empty() {
            warnings.push(format!(
                "[extend] disabledRules {:?} are not disabled (use an allowlist with targetRules)",
                e.disabled_rules
            ));
        }
    }
    if let Some(v) = extra.min_version {
        warnings.push(format!(
            "minVersion {v:?} is gitleaks' version; not checked"
        ));
    }
    Ok(LoadedConfig {
        allowlist,
        warnings,
    })
}

/// Reads and parses a `.gitleaks.toml` file (see [`config_from_str`]).
pub fn load_config(path: &Path) -> Result<LoadedConfig, GitleaksError> {
    let name = path.display().to_string();
    let text = read_bounded(path, crate::scanner::allowlist::MAX_FILE)?;
    config_from_str(&text).map_err(|e| GitleaksError::Config(name, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scanner::{ScanConfig, Scanner};

    fn found(text: &str) -> Vec<Finding> {
        Scanner::new(ScanConfig::default()).scan_bytes("src/app.py", text.as_bytes())
    }

    const AWS: &str = "key = AKIAZ7Q2LMN4PRS6TUV3\n";

    #[test]
    fn json_shape_and_fingerprints() {
        let mut f = found(AWS);
        assert_eq!(f.len(), 1);
        let rules = super::super::rule_catalog(&Allowlist::default());
        let tree = to_gitleaks(&f, &rules, Redaction::NONE, &BTreeMap::new());
        let v = serde_json::to_value(&tree).unwrap();
        let o = v[0].as_object().unwrap();
        for k in [
            "RuleID",
            "Description",
            "StartLine",
            "EndLine",
            "StartColumn",
            "EndColumn",
            "Match",
            "Secret",
            "File",
            "SymlinkFile",
            "Commit",
            "Entropy",
            "Author",
            "Email",
            "Date",
            "Message",
            "Tags",
            "Fingerprint",
        ] {
            assert!(o.contains_key(k), "{k} missing: {v}");
        }
        assert_eq!(v[0]["RuleID"], "aws-access-key-id");
        assert_eq!(v[0]["File"], "src/app.py");
        assert_eq!(v[0]["StartLine"], 1);
        assert_eq!(v[0]["StartColumn"], 7);
        assert_eq!(v[0]["EndColumn"], 26, "inclusive last column, as gitleaks");
        assert_eq!(v[0]["Secret"], "AKIAZ7Q2LMN4PRS6TUV3");
        assert_eq!(v[0]["Commit"], "");
        assert_eq!(v[0]["Fingerprint"], "src/app.py:aws-access-key-id:1");
        assert!(v[0]["Entropy"].as_f64().unwrap() > 3.0);

        f[0].commit = Some("0123456789abcdef0123456789abcdef01234567".into());
        let meta = BTreeMap::from([(
            "0123456789abcdef0123456789abcdef01234567".to_string(),
            CommitMeta {
                author: "A".into(),
                email: "a@example.com".into(),
                date: rfc3339_utc(1_700_000_000),
                message: "add key".into(),
            },
        )]);
        let hist = to_gitleaks(&f, &rules, Redaction::FULL, &meta);
        assert_eq!(
            hist[0].fingerprint,
            "0123456789abcdef0123456789abcdef01234567:src/app.py:aws-access-key-id:1"
        );
        assert_eq!(hist[0].secret, "REDACTED");
        assert_eq!(hist[0].match_text, "REDACTED");
        assert_eq!(hist[0].date, "2023-11-14T22:13:20Z");
        assert_eq!(hist[0].author, "A");
    }

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn ignore_file_forms() {
        let tree = found(AWS);
        let mut hist = tree.clone();
        hist[0].commit = Some("abc123".into());
        let mut l = IgnoreList::default();
        let w = l.add_text("# comment\n\n  abc123:src/app.py:aws-access-key-id:1  \nnonsense\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(l.suppresses(&hist[0]), "commit form in history");
        assert!(!l.suppresses(&tree[0]), "commit form is not global");
        let mut other = hist.clone();
        other[0].commit = Some("def456".into());
        assert!(!l.suppresses(&other[0]), "another commit");

        let mut g = IgnoreList::default();
        g.add_text("src\\app.py:aws-access-key-id:1\n");
        assert!(g.suppresses(&tree[0]), "global form, backslash path");
        assert!(g.suppresses(&hist[0]), "global form matches in history too");
        let mut wrong = IgnoreList::default();
        wrong.add_text("src/app.py:aws-access-key-id:2\n");
        assert!(!wrong.suppresses(&tree[0]), "another line");

        // A gitleaks default id names the rules of ours that cover it.
        let a = found("password = \"Tr0ub4dor&3horse!\"\n");
        assert_eq!(a[0].rule, "credential-assignment");
        let mut gl = IgnoreList::default();
        gl.add_text("src/app.py:generic-api-key:1\n");
        assert!(gl.suppresses(&a[0]));
    }

    #[test]
    fn baseline_equality_follows_gitleaks() {
        let f = found(AWS);
        let rules = super::super::rule_catalog(&Allowlist::default());
        let report = to_gitleaks(&f, &rules, Redaction::FULL, &BTreeMap::new());
        let b = Baseline::from_json("b", &serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(b.len(), 1);
        assert!(b.contains(&report[0], Redaction::FULL));
        // Redacted: Secret and Match are not compared.
        let shown = to_gitleaks(&f, &rules, Redaction::NONE, &BTreeMap::new());
        assert!(b.contains(&shown[0], Redaction::FULL));
        // Not redacted: they are.
        assert!(!b.contains(&shown[0], Redaction::NONE));
        // The fingerprint is not compared; the line is.
        let mut moved = report[0].clone();
        moved.fingerprint = "x".into();
        assert!(b.contains(&moved, Redaction::FULL));
        moved.start_line = 2;
        assert!(!b.contains(&moved, Redaction::FULL));
        // Missing fields read as empty; a non-report is an error naming the format.
        assert!(Baseline::from_json("b", "[{\"RuleID\":\"x\"}]").is_ok());
        for bad in ["{\"rule\":1}", "[{\"rule\":\"jwt\",\"file\":\"a.py\"}]"] {
            let e = Baseline::from_json("b", bad).unwrap_err().to_string();
            assert!(e.contains("--format gitleaks"), "{e}");
        }
    }

    #[test]
    fn config_warns_on_what_it_ignores() {
        let c = config_from_str(
            "title = \"t\"\nminVersion = \"v8.25.0\"\n[extend]\npath = \"/etc/other.toml\"\ndisabledRules = [\"jwt\"]\n\
             [allowlist]\npaths = ['''^tests/''']\n",
        )
        .unwrap();
        assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("/etc/other.toml"));
        assert!(c.allowlist.allows("tests/x.py", "", "s", None));
        assert!(
            config_from_str("[extend]\nuseDefault = true\n")
                .unwrap()
                .warnings
                .is_empty()
        );
        assert!(config_from_str("[[rules]]\nid = \"nope\"\n").is_err());
    }
}
