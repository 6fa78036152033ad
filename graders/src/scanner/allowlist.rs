//! `.gitleaks.toml` allowlists: the `[allowlist]` table and the newer
//! `[[allowlists]]` array, each with `paths` (regexes on the file path),
//! `regexes` (on the secret, the match, or the line per `regexTarget`),
//! `stopwords` (substrings of the secret), `commits`, and `condition`
//! (`OR`, the default: any criterion allows; `AND`: every given criterion
//! must). Rules' own `[[rules.allowlists]]` are not read.

use regex::Regex;
use serde::Deserialize;
use std::path::Path;

/// Largest allowlist file read.
const MAX_FILE: u64 = 1024 * 1024;

/// What `regexes` are matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Target {
    #[default]
    Secret,
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
}

/// A parsed allowlist. Empty by default (allows nothing).
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    entries: Vec<Entry>,
}

/// Errors reading an allowlist.
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
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawFile {
    allowlist: Option<RawEntry>,
    #[serde(default)]
    allowlists: Vec<RawEntry>,
}

fn compile(v: &[String]) -> Result<Vec<Regex>, AllowlistError> {
    v.iter()
        .map(|r| {
            regex::RegexBuilder::new(r)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| AllowlistError::Regex(r.clone(), e))
        })
        .collect()
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

    /// Parses `.gitleaks.toml` text.
    pub fn from_toml_str(s: &str) -> Result<Self, AllowlistError> {
        let raw: RawFile = toml::from_str(s)?;
        let mut entries = Vec::new();
        for r in raw.allowlist.into_iter().chain(raw.allowlists) {
            entries.push(Entry {
                paths: compile(&r.paths)?,
                regexes: compile(&r.regexes)?,
                target: match r.regex_target.as_deref() {
                    Some("line") => Target::Line,
                    _ => Target::Secret,
                },
                stopwords: r.stopwords.iter().map(|w| w.to_ascii_lowercase()).collect(),
                commits: r.commits,
                and: r
                    .condition
                    .as_deref()
                    .is_some_and(|c| c.eq_ignore_ascii_case("and")),
            });
        }
        Ok(Allowlist { entries })
    }

    /// True when nothing is allowlisted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether a finding of `secret` on `line` in `path` (at `commit`) is allowed.
    pub fn allows(&self, path: &str, line: &str, secret: &str, commit: Option<&str>) -> bool {
        let lsecret = secret.to_ascii_lowercase();
        self.entries.iter().any(|e| {
            let mut checks: Vec<bool> = Vec::with_capacity(4);
            if !e.paths.is_empty() {
                checks.push(e.paths.iter().any(|r| r.is_match(path)));
            }
            if !e.regexes.is_empty() {
                let t = if e.target == Target::Line {
                    line
                } else {
                    secret
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
                        .any(|x| c.starts_with(x.as_str()) && x.len() >= 7)
                }));
            }
            if e.and {
                !checks.is_empty() && checks.iter().all(|&c| c)
            } else {
                checks.iter().any(|&c| c)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Allowlist;

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
}
