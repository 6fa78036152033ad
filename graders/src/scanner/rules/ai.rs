//! OpenAI-style (`sk-`, `sk-proj-`) and Anthropic (`sk-ant-`) API keys.
//! Anthropic comes first so its keys are not reported as OpenAI's.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "anthropic-api-key",
        secret_type: "anthropic_api_key",
        description: "Anthropic API key (sk-ant-...)",
        keywords: &["sk-ant-"],
        pattern: r"\b(sk-ant-[A-Za-z0-9_\-]{20,255})",
        group: 1,
        check_group: 0,
        context_type: None,
    },
    RuleDef {
        name: "openai-api-key",
        secret_type: "openai_api_key",
        description: "OpenAI API key (sk-...)",
        keywords: &["sk-"],
        pattern: r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,255})",
        group: 1,
        check_group: 0,
        context_type: None,
    },
];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn ai_keys() {
        check(
            "openai_api_key",
            &[(
                "OPENAI_API_KEY=sk-proj-Q2w4E6r8T0y2U4i6O8p0A2s4D6f8",
                "sk-proj-Q2w4E6r8T0y2U4i6O8p0A2s4D6f8",
            )],
            &[
                ("OPENAI_API_KEY=sk-****", "masked"),
                ("OPENAI_API_KEY=sk-xxxxx12345", "x-masked"),
                ("task-runner-configuration-file", "sk- inside a word"),
            ],
        );
        check(
            "anthropic_api_key",
            &[(
                "ANTHROPIC_API_KEY=sk-ant-api03-Zk8mQ2pL7xN4vR9tW1yB3cD5fH",
                "sk-ant-api03-Zk8mQ2pL7xN4vR9tW1yB3cD5fH",
            )],
            &[("key: sk-ant-[REDACTED]", "redacted")],
        );
    }
}
