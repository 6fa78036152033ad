//! Which findings may count as a *new leak* in the environment (spec.md,
//! "Grading"): a value the grader's scanner finds after reset that it did
//! not find at reset costs the agent reward, so only rules precise enough
//! that an honest fix never trips them may count.
//!
//! Leak-grade rules match an issuer-specific format — a fixed prefix or
//! structure the issuer stamps on every key (`AKIA…`, `ghp_…`, `xoxb-…`,
//! `sk_live_…`, `SG.….…`, a PEM private-key block), and each has measured
//! precision ≥ 0.99 on cases written by other projects (gitleaks' per-rule
//! true/false positives, detect-secrets' fixtures:
//! graders/tests/external_corpus.rs asserts it, and fails when a listed
//! rule has no such evidence unless the test names it as provisional, with
//! the reason). On our own labelled corpus (graders/tests/corpus.rs) each
//! also holds 0.99, and none fires on the false-positive class cases
//! (graders/tests/fp_classes.rs). Left out, with the reason:
//! - `google-api-key`: 26/41 on gitleaks' cases — gitleaks lists Google
//!   API keys shipped in public client apps as non-secrets (browser and
//!   Firebase keys are public by design), so an honest commit can hold one;
//! - `openai-api-key`: 37/38 until 2026-12-05, 37/37 since the rule
//!   rejects an altered `T3BlbkFJ` marker and word-like bodies
//!   (`sk-learn-classification-…`, which it matched before); its pattern is
//!   still `sk-` and any 20 characters, and one clean measurement after a
//!   fix made on the same cases is not yet evidence, so it stays out;
//! - `credential-assignment` and `random-token`: judged by key names and
//!   entropy; they reached precision 0.88 on held-out code (issue 18), and
//!   honest fixes write exactly the shapes they misjudge (`var.api_key`,
//!   a config key named `*_token`, a commit id in a CHANGELOG);
//! - `connection-string`, `sql-password`, `npmrc-auth-token`: the secret
//!   is whatever follows a keyword or sits in a URL's userinfo, so local
//!   development values (`postgres://app:app@localhost/app` in a
//!   `.env.example`) match;
//! - `jwt`: signed example tokens are common in tests and documentation;
//! - `sonar-token`, `artifactory-api-key`, `age-secret-key`: issuer
//!   formats, but the external sources hold fewer than five cases of each
//!   that are not filler (gitleaks' age and Sonar samples are
//!   `QQQQ…`/`12345678…`), so there is no measurement yet;
//! - the SaaS prefix rules of `rules/saas.rs` (Brevo, Linear, Postman,
//!   Pulumi, Terraform Cloud, Airtable, Atlassian, Databricks,
//!   DigitalOcean, New Relic, Prefect, Supabase; added 2026-12-05 for
//!   generator-6's seeded SQL keys), and `discord-webhook`,
//!   `launchdarkly-sdk-key`, `apollo-api-key` (added 2026-12-05 for
//!   generator-11): exact issuer formats, not yet measured on external
//!   cases;
//! - custom `.gitleaks.toml` rules: their precision is unknown.
//!
//! All rules still report in `run_scanner` and the CLI; the list only
//! decides what the environment charges for. Planted values are graded
//! by ground truth (`security`), whatever rule finds them.

/// Rule ids (`Finding::rule`) whose findings count as new leaks.
pub const LEAK_GRADE_RULES: &[&str] = &[
    "aws-access-key-id",
    "aws-secret-access-key",
    "github-pat",
    "github-fine-grained-pat",
    "github-oauth",
    "slack-token",
    "slack-webhook",
    "stripe-secret-key",
    "service-token",
    "firebase-fcm-server-key",
    "npm-token",
    "sendgrid-api-key",
    "twilio-api-key",
    "anthropic-api-key",
    "azure-storage-connection-string",
    "private-key",
    // Admitted by the external gate on their first measurement
    // (2026-12-04): gitlab-token 337/337, huggingface-token 73/73,
    // planetscale-token 225/225, 1password-secret-key 55/55,
    // doppler-token 25/25 external cases flagged, all secrets.
    "gitlab-token",
    "huggingface-token",
    "planetscale-token",
    "1password-secret-key",
    "doppler-token",
];

/// True when a finding of `rule` may count as a new leak.
pub fn counts_as_new_leak(rule: &str) -> bool {
    LEAK_GRADE_RULES.contains(&rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every listed id is a rule the scanner has: a renamed rule would
    /// otherwise silently stop counting.
    #[test]
    fn ids_are_rules() {
        let known: Vec<&str> = crate::scanner::rules::RULES
            .iter()
            .map(|r| r.def.name)
            .chain(["private-key"])
            .collect();
        for id in LEAK_GRADE_RULES {
            assert!(known.contains(id), "{id} is not a scanner rule");
        }
        assert!(!counts_as_new_leak("credential-assignment"));
        assert!(!counts_as_new_leak("random-token"));
    }
}
