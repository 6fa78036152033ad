//! SaaS API tokens whose issuer prefix and body length are fixed and
//! documented (the formats gitleaks and GitHub secret scanning match),
//! reported whole wherever they appear — an SQL `INSERT` seeding an
//! integration, a YAML value, a comment — with no name needed:
//! - Brevo (Sendinblue) API and SMTP keys: `xkeysib-`/`xsmtpsib-`, 64 hex,
//!   `-`, 16 alphanumerics;
//! - Linear: `lin_api_` and 40; Postman: `PMAK-`, 24 hex, `-`, 34 hex;
//!   Pulumi: `pul-` and 40 hex;
//! - Terraform Cloud/Enterprise: 14, `.atlasv1.`, 60 to 70;
//! - Airtable personal access tokens: `pat`, 14, `.`, 64 hex; Atlassian
//!   API tokens: `ATATT3` and 186;
//! - Databricks: `dapi` and 32 hex; DigitalOcean: `dop_v1_`/`doo_v1_`/
//!   `dor_v1_` and 64 hex;
//! - New Relic user keys: `NRAK-` and 27; Prefect: `pnu_` and 36;
//!   Supabase personal access tokens: `sbp_` and 40 hex;
//! - LaunchDarkly server-side SDK keys: `sdk-` and a UUID (the mobile key
//!   `mob-` and the client-side id ship in apps and are not matched);
//! - Apollo GraphOS API keys: `service:<graph id>:` or `user:<id>:` and a
//!   22-character URL-safe token;
//! - Google OAuth client secrets: `GOCSPX-` and 28 (issue 18,
//!   generator-13 `devise-omniauth-initializer`: the secret beside its
//!   client id in an OmniAuth `provider` call);
//! - Mailgun private API and webhook signing keys, in a text that names
//!   Mailgun: 32 hex, `-`, 8 hex, `-`, 8 hex, or the legacy `key-` and 32
//!   hex (issue 18, generator-13 `rails-credentials-fetch`, generator-12
//!   `go-viper-config-secret`). The bare shape could be anything's, so
//!   the issuer's name in the text is required;
//! - HubSpot private app access tokens: `pat-`, the account's data
//!   region (`na1`, `eu1`, `ap1`…), `-` and a UUID (issue 18,
//!   generator-14 `airflow-dag-embedded-credential`: the default of an
//!   Airflow `Variable.get`). The region and UUID make the shape exact.
//!
//! Each body is anchored at both ends, so a near miss (a truncated or
//! padded fixture) is not reported by these.
use super::RuleDef;

/// A rule of this table: name, type, description, keywords, pattern.
const fn rule(
    name: &'static str,
    secret_type: &'static str,
    description: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
) -> RuleDef {
    RuleDef {
        name,
        secret_type,
        description,
        keywords,
        pattern,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    }
}

pub(super) const RULES: &[RuleDef] = &[
    rule(
        "brevo-api-key",
        "brevo_api_key",
        "Brevo (Sendinblue) API or SMTP key (xkeysib-/xsmtpsib- + 64 hex + 16)",
        &["xkeysib-", "xsmtpsib-"],
        r"\b((?:xkeysib|xsmtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16})\b",
    ),
    rule(
        "linear-api-key",
        "linear_api_key",
        "Linear personal API key (lin_api_ + 40)",
        &["lin_api_"],
        r"\b(lin_api_[A-Za-z0-9]{40})\b",
    ),
    rule(
        "postman-api-key",
        "postman_api_key",
        "Postman API key (PMAK- + 24 hex + 34 hex)",
        &["pmak-"],
        r"\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})\b",
    ),
    rule(
        "pulumi-access-token",
        "pulumi_access_token",
        "Pulumi access token (pul- + 40 hex)",
        &["pul-"],
        r"\b(pul-[a-f0-9]{40})\b",
    ),
    rule(
        "terraform-cloud-token",
        "terraform_cloud_token",
        "Terraform Cloud/Enterprise API token (....atlasv1....)",
        &[".atlasv1."],
        r"\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70})(?:[^A-Za-z0-9_=-]|$)",
    ),
    rule(
        "airtable-pat",
        "airtable_token",
        "Airtable personal access token (pat + 14 + . + 64 hex)",
        &["pat"],
        r"\b(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})\b",
    ),
    rule(
        "atlassian-api-token",
        "atlassian_api_token",
        "Atlassian API token (ATATT3 + 186)",
        &["atatt3"],
        r"\b(ATATT3[A-Za-z0-9_=-]{186})(?:[^A-Za-z0-9_=-]|$)",
    ),
    rule(
        "databricks-token",
        "databricks_token",
        "Databricks personal access token (dapi + 32 hex)",
        &["dapi"],
        r"\b(dapi[a-f0-9]{32}(?:-[0-9])?)\b",
    ),
    rule(
        "digitalocean-token",
        "digitalocean_token",
        "DigitalOcean personal, OAuth or refresh token (dop_v1_/doo_v1_/dor_v1_ + 64 hex)",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"\b(do[opr]_v1_[a-f0-9]{64})\b",
    ),
    rule(
        "newrelic-user-key",
        "newrelic_api_key",
        "New Relic user API key (NRAK- + 27)",
        &["nrak-"],
        r"\b(NRAK-[A-Z0-9]{27})\b",
    ),
    rule(
        "prefect-api-key",
        "prefect_api_key",
        "Prefect Cloud API key (pnu_ + 36)",
        &["pnu_"],
        r"\b(pnu_[A-Za-z0-9]{36})\b",
    ),
    rule(
        "supabase-access-token",
        "supabase_token",
        "Supabase personal access token (sbp_ + 40 hex)",
        &["sbp_"],
        r"\b(sbp_[a-f0-9]{40})\b",
    ),
    rule(
        "launchdarkly-sdk-key",
        "launchdarkly_sdk_key",
        "LaunchDarkly server-side SDK key (sdk- + UUID)",
        &["sdk-"],
        r"\b(sdk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
    ),
    rule(
        "apollo-api-key",
        "apollo_api_key",
        "Apollo GraphOS API key (service:<graph>: or user:<id>: + 22)",
        &["service:", "user:"],
        r"(?:^|[^A-Za-z0-9_.:-])((?:service|user):[A-Za-z0-9][A-Za-z0-9._-]{0,63}:[A-Za-z0-9_-]{22})(?:[^A-Za-z0-9_:-]|$)",
    ),
    rule(
        "google-oauth-client-secret",
        "google_oauth_client_secret",
        "Google OAuth client secret (GOCSPX- + 28)",
        &["gocspx-"],
        r"(?:^|[^A-Za-z0-9_-])(GOCSPX-[A-Za-z0-9_-]{28})(?:[^A-Za-z0-9_-]|$)",
    ),
    rule(
        "mailgun-api-key",
        "mailgun_api_key",
        "Mailgun private API or signing key (32 hex-8 hex-8 hex, or key- + 32 hex) in a text naming Mailgun",
        &["mailgun"],
        r"(?:^|[^A-Za-z0-9_-])((?:key-[a-f0-9]{32})|(?:[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}))(?:[^A-Za-z0-9_-]|$)",
    ),
    rule(
        "hubspot-private-app-token",
        "hubspot_access_token",
        "HubSpot private app access token (pat-<region>- + UUID)",
        &["pat-na", "pat-eu", "pat-ap"],
        r"(?:^|[^A-Za-z0-9_-])(pat-(?:na|eu|ap)[0-9]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^A-Za-z0-9_-]|$)",
    ),
];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn mailgun_keys_where_the_text_names_mailgun() {
        check(
            "mailgun_api_key",
            &[
                (
                    "def self.api_key\n  ENV[\"MAILGUN_API_KEY\"] || \"f649d048db87362e315042de52f62ada-28dd42b6-987d62dc\"\nend\n",
                    "f649d048db87362e315042de52f62ada-28dd42b6-987d62dc",
                ),
                (
                    "MailgunKey string `env:\"MAILGUN_API_KEY\" envDefault:\"key-e882cfb7f4d2146286ec62e4b7fa26fe\"`\n",
                    "key-e882cfb7f4d2146286ec62e4b7fa26fe",
                ),
            ],
            &[(
                "checksum: f649d048db87362e315042de52f62ada-28dd42b6-987d62dc\n",
                "no issuer named",
            )],
        );
    }

    #[test]
    fn prefixed_saas_tokens_whole_and_exact() {
        let cases: &[(&str, &str)] = &[
            (
                "brevo_api_key",
                "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",
            ),
            (
                "brevo_api_key",
                "xsmtpsib-cce3584a68e1013188f980a4175b8796a8d7ca92f305f7faf0f355a27412db83-tQUfHAm9kTK35thL",
            ),
            (
                "linear_api_key",
                "lin_api_HsZClFEWY0dLUYUONrnEqhSQAvOW4uukSfvU4Elk",
            ),
            (
                "postman_api_key",
                "PMAK-f6b2c7b7e6b438ced3734b61-b9445f27f327027d31eb1f3b2139914618",
            ),
            (
                "pulumi_access_token",
                "pul-383e24f9b5271bf3c63e4d6f4168d7eae1a5c5c2",
            ),
            (
                "terraform_cloud_token",
                "afod79stxdnyvh.atlasv1.ScdyPcQIWaPqSggw7RvnGs9tprSvzpyQjOm4QzUvVY8NB10YKTsbk5M5fYKVjPYZWHn",
            ),
            (
                "airtable_token",
                "patI5HgALuUsWKGRe.57b04d0eeaeab31d2a07f6d9d6d59a308704b729f04cfee286774bebade06429",
            ),
            (
                "atlassian_api_token",
                "ATATT3WSYnDu8rZYsvJB364XUv8ztCPHIoHxk2TTPONyaNf6dC3zw3jH0w0D5JeVfCy0EqsbzcMiXnH9qBgxAoIO3B3r2HRlJU75wTSQVOkE30WgQk0SSRGBoNyFx7bFSluvLAcfbqKKf6WD083791eDQAGCAYpIFZHiwSvDsRlCgwd4mCX0OXwoBWfwUAas",
            ),
            ("databricks_token", "dapiec08c5394f912862d58814b2b3296f75"),
            (
                "digitalocean_token",
                "dop_v1_12a7bf4c3b5bda5279f6c0e9de2566899df27ed7931958e17162873298bf07f3",
            ),
            ("newrelic_api_key", "NRAK-1X2ZGFMTWH9M6I95YY363LIUPYY"),
            (
                "prefect_api_key",
                "pnu_jPwXf4yP0627K8Hm9wEvi1C1O0G7jAYZshjt",
            ),
            (
                "supabase_token",
                "sbp_5e5ca0b90658837791b5365300a99ff7b7013b40",
            ),
            (
                "launchdarkly_sdk_key",
                "sdk-7b556633-1fa0-4229-b67a-61e1a52de437",
            ),
            (
                "apollo_api_key",
                "service:tandem-graph:hrVaB3O6AHFO-_gugYvqEx",
            ),
            ("apollo_api_key", "user:gh.octocat:wDvh06-eG1OqN5wziHOcON"),
            (
                "google_oauth_client_secret",
                "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",
            ),
            (
                "hubspot_access_token",
                "pat-na1-3c9e0f1a-57d2-4b8e-a61c-d07f92b4e5a3",
            ),
        ];
        for (ty, tok) in cases {
            // Bare in an SQL seed, where no name calls it a secret.
            let sql = format!("INSERT INTO integrations (provider, v) VALUES ('x', '{tok}');");
            // One character short, or one too many: not the format.
            let short = format!("v = \"{}\"", &tok[..tok.len() - 1]);
            let long = format!("v = \"{tok}Q\"");
            check(ty, &[(&sql, tok)], &[]);
            if *ty == "terraform_cloud_token" {
                continue; // its body's length is a range
            }
            let s = crate::scanner::Scanner::new(crate::scanner::ScanConfig::default());
            for near in [short, long] {
                let f = s.scan_bytes("config/app.env", near.as_bytes());
                assert!(
                    !f.iter().any(|f| f.secret_type == *ty),
                    "near miss reported as {ty}: {near}"
                );
            }
        }
        check(
            "linear_api_key",
            &[],
            &[
                (
                    "LINEAR_API_KEY=lin_api_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                    "x-masked",
                ),
                (
                    "keys start with lin_api_ or xkeysib- prefixes",
                    "prefix only",
                ),
            ],
        );
        // A UUID under another prefix, a service reference with a word,
        // a masked Apollo key.
        for fp in [
            "id = \"api-7b556633-1fa0-4229-b67a-61e1a52de437\"",
            "depends_on: service:postgres:latest",
            "APOLLO_KEY=service:my-graph:xxxxxxxxxxxxxxxxxxxxxx",
            "image: service:registry:5000",
            // A UUID after `pat-` with no region.
            "id = \"pat-3c9e0f1a-57d2-4b8e-a61c-d07f92b4e5a3\"",
        ] {
            let s = crate::scanner::Scanner::new(crate::scanner::ScanConfig::default());
            let f = s.scan_bytes("config/app.env", fp.as_bytes());
            assert!(
                !f.iter().any(|f| matches!(
                    f.rule.as_str(),
                    "launchdarkly-sdk-key" | "apollo-api-key" | "hubspot-private-app-token"
                )),
                "{fp}"
            );
        }
    }
}
