//! SARIF 2.1.0, as GitHub code scanning reads it: `tool.driver` names the
//! tool, its version and *every rule that can fire* (code scanning shows a
//! result's rule text from there and rejects results whose rule it cannot
//! find); each result points at its rule by `ruleId` and `ruleIndex`.
//! `informationUri` is left out: the project publishes no home page, and a
//! made-up one would send readers nowhere.

use super::{Finding, Redaction, RuleInfo, span_end};
use serde_json::{Value, json};

/// The tool name in `tool.driver.name`.
pub const TOOL_NAME: &str = "secaudit";
/// The schema a log names in `$schema` (the one gitleaks names too).
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The SARIF log of `findings`. `rules` is [`super::rule_catalog`]'s list
/// (a finding of a rule missing from it, which the catalog rules out, gets
/// a rule entry appended so that `ruleIndex` is never dangling); `version`
/// is the reporting tool's version. Secrets appear (redacted per
/// `redaction`) in the message and snippet only when not fully redacted.
pub fn to_sarif(
    findings: &[Finding],
    rules: &[RuleInfo],
    version: &str,
    redaction: Redaction,
) -> Value {
    let mut rules: Vec<RuleInfo> = rules.to_vec();
    let mut results = Vec::with_capacity(findings.len());
    for f in findings {
        let index = match rules.iter().position(|r| r.id == f.rule) {
            Some(i) => i,
            None => {
                rules.push(RuleInfo {
                    id: f.rule.clone(),
                    description: format!("Rule {}", f.rule),
                });
                rules.len() - 1
            }
        };
        let shown = (redaction != Redaction::FULL).then(|| redaction.apply(&f.value));
        let mut text = format!("{} ({}) in {}", f.secret_type, f.rule, f.file);
        if let Some(c) = &f.commit {
            text.push_str(&format!(" at commit {c}"));
        }
        if let Some(s) = &shown {
            text.push_str(&format!(": {s}"));
        }
        let (end_line, end_col) = span_end(f);
        let mut region = json!({
            "startLine": f.line,
            "startColumn": f.col_start,
            "endLine": end_line,
            // SARIF's endColumn is one past the last character.
            "endColumn": end_col + 1,
        });
        if let Some(s) = shown {
            region["snippet"] = json!({ "text": s });
        }
        let mut partial = json!({ "secaudit/v1": f.fingerprint });
        if let Some(c) = &f.commit {
            partial["commitSha"] = json!(c);
        }
        results.push(json!({
            "ruleId": f.rule,
            "ruleIndex": index,
            "level": "error",
            "message": { "text": text },
            "locations": [{ "physicalLocation": {
                "artifactLocation": { "uri": f.file },
                "region": region,
            }}],
            "partialFingerprints": partial,
            "properties": { "type": f.secret_type, "commit": f.commit, "encoded": f.encoded },
        }));
    }
    let rules: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.id,
                "shortDescription": { "text": r.description },
                "fullDescription": { "text": format!("{}. A secret in source or history: rotate it, then remove it.", r.description) },
                "help": { "text": format!("{}. Rotate the credential first (it is already exposed), then remove it from the code and, if committed, from history; keep secrets in the environment or a secret store.", r.description) },
                "defaultConfiguration": { "level": "error" },
                "properties": { "tags": ["security", "secret"] },
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": TOOL_NAME,
                "version": version,
                "semanticVersion": version,
                "rules": rules,
            }},
            "results": results,
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::super::rule_catalog;
    use super::*;
    use crate::scanner::{Allowlist, ScanConfig, Scanner};

    /// One finding of each hand-written detector and a provider rule.
    fn sample() -> Vec<Finding> {
        let text = "aws_key = AKIAZ7Q2LMN4PRS6TUV3\n\
                    db_password = \"Tr0ub4dor&3horse!\"\n\
                    -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx8fQ2kL9mNpR3sT5vW7yZ1aB3cD5eF7gH9iJ0kL2mN4oP6qR\n-----END RSA PRIVATE KEY-----\n\
                    blob = 'q7VzK2pX9mW4nR8tY3bL6cH1fJ5gD0sA'\n";
        Scanner::new(ScanConfig::default()).scan_bytes("app/settings.py", text.as_bytes())
    }

    #[test]
    fn driver_has_version_rules_and_no_made_up_uri() {
        let f = sample();
        let rules = rule_catalog(&Allowlist::default());
        let log = to_sarif(&f, &rules, "9.8.7", Redaction::FULL);
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(log["$schema"], SCHEMA);
        let driver = &log["runs"][0]["tool"]["driver"];
        assert_eq!(driver["name"], TOOL_NAME);
        assert_eq!(driver["version"], "9.8.7");
        assert!(
            driver.get("informationUri").is_none(),
            "no invented informationUri: {driver}"
        );
        assert!(!log.to_string().contains("example.invalid"));
        let listed = driver["rules"].as_array().unwrap();
        assert_eq!(listed.len(), rules.len(), "every rule that can fire");
        for r in listed {
            assert!(r["id"].as_str().is_some_and(|s| !s.is_empty()));
            assert!(
                r["shortDescription"]["text"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
            );
            assert!(
                r["fullDescription"]["text"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
            );
            assert!(r["help"]["text"].as_str().is_some_and(|s| !s.is_empty()));
        }
    }

    #[test]
    fn results_reference_their_rule_by_id_and_index() {
        let f = sample();
        let fired: std::collections::BTreeSet<&str> = f.iter().map(|x| x.rule.as_str()).collect();
        for want in ["aws-access-key-id", "private-key", "credential-assignment"] {
            assert!(fired.contains(want), "sample lacks {want}: {fired:?}");
        }
        let log = to_sarif(
            &f,
            &rule_catalog(&Allowlist::default()),
            "1.0.0",
            Redaction::FULL,
        );
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), f.len());
        for r in results {
            let i = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[i]["id"], r["ruleId"], "{r}");
            let region = &r["locations"][0]["physicalLocation"]["region"];
            assert!(region["startLine"].as_u64().unwrap() >= 1);
            assert!(region["endLine"].as_u64() >= region["startLine"].as_u64());
            assert!(region.get("snippet").is_none(), "redacted: no snippet");
            assert!(r["message"]["text"].as_str().is_some_and(|s| !s.is_empty()));
        }
        // The PEM block spans three lines.
        let pem = results
            .iter()
            .find(|r| r["ruleId"] == "private-key")
            .unwrap();
        let region = &pem["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region["startLine"], 3);
        assert_eq!(region["endLine"], 5);
        // Not fully redacted: the snippet shows the masked value.
        let shown = to_sarif(
            &f,
            &rule_catalog(&Allowlist::default()),
            "1.0.0",
            Redaction::percent(50),
        );
        let aws = shown["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ruleId"] == "aws-access-key-id")
            .unwrap()
            .clone();
        assert_eq!(
            aws["locations"][0]["physicalLocation"]["region"]["snippet"]["text"],
            "AKIAZ7Q2LM..."
        );
    }
}
