//! The task model: serde types for `task.json` (see `tasks/FORMAT.md`).
//!
//! Every struct denies unknown fields so a typo in a task file (`"reveal"`
//! for `"reveals"`) is an error at load time instead of a silently ignored
//! conflict edge.

use crate::models::{Difficulty, ScanMode, TaskInfo, Tier};
use serde::{Deserialize, Serialize};

/// One task, as written in `task.json`. Ground truth: never shown to the
/// agent and never copied into a workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// 1–13.
    pub id: u32,
    /// `task_NN`, equal to the directory name.
    pub slug: String,
    /// Short title.
    pub title: String,
    /// Easy 1–5, medium 6–10, hard 11–13.
    pub difficulty: Difficulty,
    /// Shown to the agent; never names values.
    pub description: String,
    /// Whether the grader also scans git objects.
    pub scan_mode: ScanMode,
    /// 10 / 20 / 30 by difficulty.
    pub step_budget: u32,
    /// The planted secrets (canonical values).
    pub secrets: Vec<SecretSpec>,
    /// The pytest health suite.
    pub health: Health,
    /// What the grader's scanner honours (gitleaks allowlist fields).
    #[serde(default)]
    pub allowlist: AllowlistSpec,
    /// Commits in order; empty means one commit of `files/`.
    #[serde(default)]
    pub history: Vec<Commit>,
    /// What a seeded variant may change besides the values.
    #[serde(default)]
    pub variants: VariantSpec,
}

/// What a seeded variant varies besides the secret values (FORMAT.md,
/// "Seeded variants"). Canonical episodes ignore it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// Canonical path → alternative paths; each variant moves the file to
    /// one of the alternatives (in every commit), and `{{path:P}}` /
    /// `{{name:P}}` in templates and the oracle follow it.
    #[serde(default)]
    pub paths: std::collections::BTreeMap<String, Vec<String>>,
    /// Deep secret id → encodings a variant draws from (the canonical one
    /// may be among them). Templates spell such a secret
    /// `{{secret:ID:enc}}` and its decoding `{{enc:ID:..|..}}`.
    #[serde(default)]
    pub encodings: std::collections::BTreeMap<String, Vec<Encoding>>,
    /// Named blocks of lines (holding secret placeholders) that templates
    /// place with `{{slot:NAME:K}}`: the canonical task renders slot 1, a
    /// variant one of the others, so the same leak sits elsewhere in its
    /// file (or in another file).
    #[serde(default)]
    pub placements: std::collections::BTreeMap<String, Placement>,
}

/// One placement block (see [`VariantSpec::placements`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The block's template text: whole lines, ending in a newline.
    pub text: String,
    /// Number of `{{slot:NAME:K}}` positions, K = 1..=slots (2..=8).
    pub slots: u32,
}

/// Most alternatives one path or secret may list.
pub const MAX_VARIANT_CHOICES: usize = 16;

/// Kind of a planted secret. The wire form is the snake_case name used in
/// `task.json` (`aws_access_key_id`, ...); [`SecretType::as_str`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum SecretType {
    AwsAccessKeyId,
    AwsSecretAccessKey,
    GithubPat,
    GithubOauth,
    GithubFineGrainedPat,
    SlackToken,
    SlackWebhook,
    StripeSecretKey,
    GoogleApiKey,
    FirebaseApiKey,
    ServiceToken,
    PrivateKey,
    Jwt,
    ConnectionString,
    SqlPassword,
    NpmToken,
    SendgridApiKey,
    TwilioApiKey,
    OpenaiApiKey,
    AnthropicApiKey,
    AzureStorageConnectionString,
    GenericSecret,
}

impl SecretType {
    /// Every type, in FORMAT.md order (used by the schema test).
    pub const ALL: [SecretType; 22] = [
        Self::AwsAccessKeyId,
        Self::AwsSecretAccessKey,
        Self::GithubPat,
        Self::GithubOauth,
        Self::GithubFineGrainedPat,
        Self::SlackToken,
        Self::SlackWebhook,
        Self::StripeSecretKey,
        Self::GoogleApiKey,
        Self::FirebaseApiKey,
        Self::ServiceToken,
        Self::PrivateKey,
        Self::Jwt,
        Self::ConnectionString,
        Self::SqlPassword,
        Self::NpmToken,
        Self::SendgridApiKey,
        Self::TwilioApiKey,
        Self::OpenaiApiKey,
        Self::AnthropicApiKey,
        Self::AzureStorageConnectionString,
        Self::GenericSecret,
    ];

    /// The `task.json` spelling (`aws_access_key_id`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AwsAccessKeyId => "aws_access_key_id",
            Self::AwsSecretAccessKey => "aws_secret_access_key",
            Self::GithubPat => "github_pat",
            Self::GithubOauth => "github_oauth",
            Self::GithubFineGrainedPat => "github_fine_grained_pat",
            Self::SlackToken => "slack_token",
            Self::SlackWebhook => "slack_webhook",
            Self::StripeSecretKey => "stripe_secret_key",
            Self::GoogleApiKey => "google_api_key",
            Self::FirebaseApiKey => "firebase_api_key",
            Self::ServiceToken => "service_token",
            Self::PrivateKey => "private_key",
            Self::Jwt => "jwt",
            Self::ConnectionString => "connection_string",
            Self::SqlPassword => "sql_password",
            Self::NpmToken => "npm_token",
            Self::SendgridApiKey => "sendgrid_api_key",
            Self::TwilioApiKey => "twilio_api_key",
            Self::OpenaiApiKey => "openai_api_key",
            Self::AnthropicApiKey => "anthropic_api_key",
            Self::AzureStorageConnectionString => "azure_storage_connection_string",
            Self::GenericSecret => "generic_secret",
        }
    }
}

impl std::fmt::Display for SecretType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a `deep` secret sits encoded in its file (defined with the planted
/// secret, which records it).
pub use graders::planted::Encoding;

/// One planted secret as declared in `task.json`: the input template,
/// before rendering. Deliberately not [`graders::planted::Planted`]: its
/// value is the canonical one (a seeded variant draws another), its type is
/// the closed [`SecretType`] that decides the shape of seeded values, and
/// its line is checked, not recomputed. The generator renders it into a
/// `Planted`, the one type the grader and visibility use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretSpec {
    /// Id within the task (`s1`, ...): `[A-Za-z0-9_-]+`.
    pub id: String,
    /// Kind; decides the shape of seeded values.
    #[serde(rename = "type")]
    pub secret_type: SecretType,
    /// Workspace-relative path it is planted in.
    pub file: String,
    /// 1-based line in the rendered file (checked by the generator).
    pub line: u32,
    /// The canonical value.
    pub value: String,
    /// Visibility tier.
    pub tier: Tier,
    /// Encoding of a `deep` secret, null otherwise.
    #[serde(default)]
    pub encoding: Option<Encoding>,
    /// Ids revealed when this one is fixed.
    #[serde(default)]
    pub reveals: Vec<String>,
    /// Ids that cannot count as fixed while this one is open.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// Present only in earlier commits, absent from the final tree.
    #[serde(default)]
    pub history_only: bool,
}

/// The pytest health suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// Every file of the suite (tests, conftest.py, pytest configuration).
    pub test_files: Vec<String>,
    /// Number of tests pytest collects; all pass on the unfixed workspace.
    pub expected_tests: u32,
}

/// gitleaks allowlist fields the grader honours (kept outside the workspace).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowlistSpec {
    /// Path regexes.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Value regexes.
    #[serde(default)]
    pub regexes: Vec<String>,
    /// Stopwords.
    #[serde(default)]
    pub stopwords: Vec<String>,
}

/// One commit of the task's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commit {
    /// `Name <email>`; also the committer.
    pub author: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    /// Commit message.
    pub message: String,
    /// Directory (relative to the task dir) copied on top of the previous
    /// tree: `files` or `history/NN`.
    pub overlay: String,
    /// The tree is exactly the overlay instead of previous + overlay.
    #[serde(default)]
    pub exact: bool,
    /// Paths (files or directories) removed after applying the overlay.
    #[serde(default)]
    pub delete: Vec<String>,
}

impl Task {
    /// The metadata `/tasks` lists (no ground truth).
    pub fn to_info(&self) -> TaskInfo {
        TaskInfo {
            id: self.id,
            slug: self.slug.clone(),
            title: self.title.clone(),
            difficulty: self.difficulty,
            description: self.description.clone(),
            scan_mode: self.scan_mode,
            step_budget: self.step_budget,
            secret_count: u32::try_from(self.secrets.len()).unwrap_or(u32::MAX),
            visible_at_reset: u32::try_from(
                self.secrets
                    .iter()
                    .filter(|s| s.tier == Tier::Surface)
                    .count(),
            )
            .unwrap_or(u32::MAX),
            has_conflicts: self
                .secrets
                .iter()
                .any(|s| !s.reveals.is_empty() || !s.blocks.is_empty()),
        }
    }

    /// Looks a secret up by id.
    pub fn secret(&self, id: &str) -> Option<&SecretSpec> {
        self.secrets.iter().find(|s| s.id == id)
    }

    /// Checks what can be checked on `task.json` alone (the generator checks
    /// the rest against the rendered tree). Returns every problem found, so a
    /// task author sees them all at once.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let (lo, hi, budget) = match self.difficulty {
            Difficulty::Easy => (1, 5, 10),
            Difficulty::Medium => (6, 10, 20),
            Difficulty::Hard => (11, 13, 30),
        };
        if !(lo..=hi).contains(&self.id) {
            p.push(format!(
                "id {} is outside {lo}..={hi} for its difficulty",
                self.id
            ));
        }
        if self.step_budget != budget {
            p.push(format!(
                "step_budget {} should be {budget}",
                self.step_budget
            ));
        }
        if self.slug != format!("task_{:02}", self.id) {
            p.push(format!(
                "slug {:?} should be task_{:02}",
                self.slug, self.id
            ));
        }
        if self.secrets.is_empty() {
            p.push("no secrets".into());
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in &self.secrets {
            let ctx = format!("secret {}", s.id);
            if s.id.is_empty()
                || s.id.len() > 32
                || !s
                    .id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                p.push(format!("{ctx}: id must be 1-32 chars of [A-Za-z0-9_-]"));
            }
            if !seen.insert(s.id.as_str()) {
                p.push(format!("{ctx}: duplicate id"));
            }
            if s.value.is_empty() {
                p.push(format!("{ctx}: empty value"));
            }
            if s.value.contains('\n') != (s.secret_type == SecretType::PrivateKey) {
                p.push(format!(
                    "{ctx}: only private_key values may (and must) span lines"
                ));
            }
            if s.value.contains("{{") {
                p.push(format!("{ctx}: value contains a placeholder"));
            }
            if s.line == 0 {
                p.push(format!("{ctx}: line is 1-based"));
            }
            if let Err(e) = super::fields::check_rel_path(&s.file) {
                p.push(format!("{ctx}: file: {e}"));
            }
            match (s.tier, s.encoding) {
                (Tier::Deep, None) => p.push(format!("{ctx}: deep tier needs an encoding")),
                (t, Some(_)) if t != Tier::Deep => {
                    p.push(format!("{ctx}: encoding is only for the deep tier"))
                }
                _ => {}
            }
            if s.history_only && self.scan_mode != ScanMode::Git {
                p.push(format!("{ctx}: history_only requires scan_mode git"));
            }
            for (kind, ids) in [("reveals", &s.reveals), ("blocks", &s.blocks)] {
                for r in ids {
                    if r == &s.id {
                        p.push(format!("{ctx}: {kind} itself"));
                    } else if self.secret(r).is_none() {
                        p.push(format!("{ctx}: {kind} unknown id {r:?}"));
                    }
                }
            }
        }
        if self.health.test_files.is_empty() {
            p.push("health.test_files is empty".into());
        }
        if self.health.expected_tests == 0 {
            p.push("health.expected_tests is 0".into());
        }
        for f in &self.health.test_files {
            if let Err(e) = super::fields::check_rel_path(f) {
                p.push(format!("health.test_files {f:?}: {e}"));
            }
        }
        for (i, c) in self.history.iter().enumerate() {
            let ctx = format!("history[{i}]");
            if let Err(e) = super::fields::parse_author(&c.author) {
                p.push(format!("{ctx}: {e}"));
            }
            if let Err(e) = super::fields::parse_date(&c.date) {
                p.push(format!("{ctx}: {e}"));
            }
            if c.message.trim().is_empty() {
                p.push(format!("{ctx}: empty message"));
            }
            if c.overlay != "files" && !is_history_overlay(&c.overlay) {
                p.push(format!(
                    "{ctx}: overlay must be \"files\" or \"history/NN\""
                ));
            }
            for d in &c.delete {
                if let Err(e) = super::fields::check_rel_path(d) {
                    p.push(format!("{ctx}: delete {d:?}: {e}"));
                }
            }
        }
        p.extend(self.variant_problems());
        p
    }

    /// Checks `variants`: alternatives are valid, distinct paths that no
    /// other file already uses; renamed files are neither the health suite
    /// nor pytest configuration (the grader restores those by path); the
    /// description and title never name a renamed path (they are shown
    /// unchanged for every variant); encodings are listed only for deep
    /// secrets; placements are well-formed.
    fn variant_problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let v = &self.variants;
        let mut targets = std::collections::BTreeSet::new();
        for (from, tos) in &v.paths {
            let ctx = format!("variants.paths {from:?}");
            if let Err(e) = super::fields::check_rel_path(from) {
                p.push(format!("{ctx}: {e}"));
            }
            if tos.is_empty() || tos.len() > MAX_VARIANT_CHOICES {
                p.push(format!(
                    "{ctx}: needs 1..={MAX_VARIANT_CHOICES} alternatives"
                ));
            }
            if self.health.test_files.contains(from)
                || [
                    "pytest.ini",
                    "pyproject.toml",
                    "setup.cfg",
                    "tox.ini",
                    "conftest.py",
                ]
                .contains(&from.as_str())
            {
                p.push(format!(
                    "{ctx}: the health suite and pytest configuration keep their paths"
                ));
            }
            if names_path(&self.description, from) || names_path(&self.title, from) {
                p.push(format!(
                    "{ctx}: the description or title names it, so it would be wrong in variants"
                ));
            }
            for to in tos {
                if let Err(e) = super::fields::check_rel_path(to) {
                    p.push(format!("{ctx}: alternative {to:?}: {e}"));
                }
                if to == from || v.paths.contains_key(to) || !targets.insert(to.as_str()) {
                    p.push(format!("{ctx}: alternative {to:?} is not a fresh path"));
                }
            }
        }
        for (name, pl) in &v.placements {
            let ctx = format!("variants.placements {name:?}");
            if name.is_empty()
                || name.len() > 32
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                p.push(format!("{ctx}: name must be 1-32 chars of [A-Za-z0-9_-]"));
            }
            if !(2..=8).contains(&pl.slots) {
                p.push(format!("{ctx}: slots must be 2..=8"));
            }
            if pl.text.is_empty() || !pl.text.ends_with('\n') || pl.text.len() > 4096 {
                p.push(format!("{ctx}: text must be 1-4096 bytes of whole lines"));
            }
            if pl.text.contains("{{slot:") {
                p.push(format!("{ctx}: blocks do not nest"));
            }
        }
        for (id, encs) in &v.encodings {
            let ctx = format!("variants.encodings {id:?}");
            match self.secret(id) {
                None => p.push(format!("{ctx}: unknown secret")),
                Some(s) if s.tier != Tier::Deep => p.push(format!("{ctx}: only deep secrets")),
                _ => {}
            }
            let distinct: std::collections::BTreeSet<_> = encs.iter().map(|e| e.name()).collect();
            if encs.is_empty() || distinct.len() != encs.len() {
                p.push(format!("{ctx}: needs distinct encodings"));
            }
        }
        p
    }
}

/// True when `text` mentions path `p` as a whole token (`.env` in
/// "a .env file" but not in ".env.example").
fn names_path(text: &str, p: &str) -> bool {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    text.match_indices(p).any(|(i, _)| {
        let before_ok = !text[..i].chars().next_back().is_some_and(is_path_char);
        // A sentence may end right after the path ("... in config/.env.").
        let tail = &text[i + p.len()..];
        let tail = tail.strip_prefix('.').unwrap_or(tail);
        let after_ok = !tail.chars().next().is_some_and(is_path_char);
        before_ok && after_ok
    })
}

/// `history/` followed by one or more ASCII digits.
fn is_history_overlay(s: &str) -> bool {
    s.strip_prefix("history/")
        .is_some_and(|n| !n.is_empty() && n.len() <= 4 && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> serde_json::Value {
        serde_json::json!({
            "id": 1, "slug": "task_01", "title": "t", "difficulty": "easy",
            "description": "d", "scan_mode": "dir", "step_budget": 10,
            "secrets": [{"id": "s1", "type": "aws_access_key_id", "file": "a.py",
                "line": 1, "value": "AKIAQWERTYUIOPASDFGH", "tier": "surface",
                "encoding": null, "reveals": [], "blocks": [], "history_only": false}],
            "health": {"test_files": ["tests/test_a.py"], "expected_tests": 1}
        })
    }

    #[test]
    fn parses_and_checks() {
        let t: Task = serde_json::from_value(sample()).unwrap();
        assert!(t.problems().is_empty(), "{:?}", t.problems());
        let info = t.to_info();
        assert_eq!(
            (info.secret_count, info.visible_at_reset, info.has_conflicts),
            (1, 1, false)
        );
    }

    #[test]
    fn unknown_field() {
        let mut v = sample();
        v["secrets"][0]["reveal"] = serde_json::json!([]);
        assert!(serde_json::from_value::<Task>(v).is_err());
    }

    #[test]
    fn semantic_problems() {
        let mut v = sample();
        v["step_budget"] = 20.into();
        v["secrets"][0]["reveals"] = serde_json::json!(["s9"]);
        v["secrets"][0]["history_only"] = true.into();
        let t: Task = serde_json::from_value(v).unwrap();
        let p = t.problems().join("\n");
        assert!(p.contains("step_budget"), "{p}");
        assert!(p.contains("unknown id"), "{p}");
        assert!(p.contains("scan_mode git"), "{p}");
    }

    #[test]
    fn variant_problems() {
        let mut v = sample();
        v["description"] = "Fix the key in a.py. Keep .env.example.".into();
        v["secrets"][0]["tier"] = "deep".into();
        v["secrets"][0]["encoding"] = "hex".into();
        v["variants"] = serde_json::json!({
            "paths": {".env": ["config/.env"], "a.py": ["b.py"], "pytest.ini": ["x.ini"],
                      "c.json": ["config/.env", "c.json"]},
            "encodings": {"s1": ["hex", "base64"], "s9": ["hex"]},
            "placements": {"creds": {"text": "K = 1", "slots": 1}}
        });
        let t: Task = serde_json::from_value(v).unwrap();
        let p = t.problems().join("\n");
        assert!(
            p.contains("\"a.py\": the description or title names it"),
            "{p}"
        );
        assert!(!p.contains("\".env\": the description"), "{p}");
        assert!(p.contains("\"pytest.ini\": the health suite"), "{p}");
        assert!(p.contains("\"config/.env\" is not a fresh path"), "{p}");
        assert!(p.contains("\"c.json\" is not a fresh path"), "{p}");
        assert!(p.contains("\"s9\": unknown secret"), "{p}");
        assert!(p.contains("\"creds\": slots must be 2..=8"), "{p}");
        assert!(p.contains("\"creds\": text must be"), "{p}");
        assert!(!p.contains("\"s1\""), "{p}");
        assert!(names_path("see infra/.env.", "infra/.env"));
        assert!(!names_path("see xinfra/.env", "infra/.env"));
    }

    #[test]
    fn type_names_roundtrip() {
        for t in SecretType::ALL {
            let s = serde_json::to_value(t).unwrap();
            assert_eq!(s.as_str(), Some(t.as_str()));
        }
    }
}
