//! Twilio API key SIDs (`SK` + 32 hex). Account SIDs (`AC...`) are not
//! secret; auth tokens are 32 hex and fall to the random-token rule.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "twilio-api-key",
    secret_type: "twilio_api_key",
    description: "Twilio API key (SK followed by 32 hex digits)",
    keywords: &["sk"],
    pattern: r"\b(SK[0-9a-fA-F]{32})\b",
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
    fn twilio() {
        check(
            "twilio_api_key",
            &[(
                "TWILIO_API_KEY=SK4f9a2c7e1b8d3f6a0c5e9b2d7f1a4c8e",
                "SK4f9a2c7e1b8d3f6a0c5e9b2d7f1a4c8e",
            )],
            &[("SKIP_MIGRATIONS=true", "word starting SK")],
        );
    }
}
