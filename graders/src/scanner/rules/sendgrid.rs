//! SendGrid API keys: `SG.<22>.<43>`.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "sendgrid-api-key",
    secret_type: "sendgrid_api_key",
    description: "SendGrid API key (SG.xxx.yyy)",
    keywords: &["sg."],
    pattern: r"\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?:[^A-Za-z0-9_\-]|$)",
    group: 1,
    check_group: 0,
    context_type: None,
    validate: None,
    gate: None,
}];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn sendgrid() {
        let k = "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";
        check(
            "sendgrid_api_key",
            &[(&format!("SENDGRID_API_KEY={k}"), k)],
            &[("SENDGRID_API_KEY=SG.xxxxxxxx", "masked and short")],
        );
    }
}
