//! OpenAI-style (`sk-`, `sk-proj-`) and Anthropic (`sk-ant-`) API keys, and
//! Hugging Face user access (`hf_` + 34 letters) and organization
//! (`api_org_` + 34 letters) tokens.
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
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "huggingface-token",
        secret_type: "huggingface_token",
        description: "Hugging Face user access or organization API token (hf_..., api_org_...)",
        keywords: &["hf_", "api_org_"],
        pattern: r"\b((?:hf|api_org)_[A-Za-z]{34})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
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
        validate: Some(openai_key_ok),
        gate: None,
    },
];

/// An OpenAI key's random body: no words (`sk-learn-classification-…`, a
/// package or model name) and no altered marker ([`openai_marker_intact`]).
fn openai_key_ok(key: &str) -> bool {
    let body = key.strip_prefix("sk-").unwrap_or(key);
    let body = ["proj-", "svcacct-", "admin-"]
        .iter()
        .find_map(|p| body.strip_prefix(p))
        .unwrap_or(body);
    !super::super::words::is_word_like(body, true) && openai_marker_intact(key)
}

/// The marker OpenAI stamps into its keys (base64 of `OpenAI`), between
/// the two random halves of a legacy key.
const OPENAI_MARKER: &[u8] = b"T3BlbkFJ";

/// False when the key carries a near miss of [`OPENAI_MARKER`] (one
/// character changed) and not the marker itself: an issuer's fixed part
/// altered is a fixture or a typo, never a key the issuer made
/// (detect-secrets' `T4BlbkFJ` case). Random text holds a 7-of-8 match
/// with odds of about 10^-11 per position.
fn openai_marker_intact(key: &str) -> bool {
    let b = key.as_bytes();
    let near = |w: &[u8]| w.iter().zip(OPENAI_MARKER).filter(|(a, m)| a != m).count();
    let windows = || b.windows(OPENAI_MARKER.len());
    windows().any(|w| near(w) == 0) || !windows().any(|w| near(w) == 1)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    /// A key whose issuer marker is altered by one character is not the
    /// issuer's; the intact marker, or no marker (project keys), is.
    #[test]
    fn openai_marker() {
        assert!(super::openai_marker_intact(
            "sk-proj-Xi8tdMjHV6pmbBbwilTeT3BlbkFJ3UDnpdEwNNm6wVBpYM0o"
        ));
        assert!(super::openai_marker_intact(
            "sk-proj-Q2w4E6r8T0y2U4i6O8p0A2s4D6f8"
        ));
        for k in [
            "sk-learn-classification-pipeline-v2",
            "sk-video-processing-toolkit",
        ] {
            assert!(!super::openai_key_ok(k), "{k}");
        }
        assert!(super::openai_key_ok(
            "sk-proj-Xi8tdMjHV6pmbBbwilTeT3BlbkFJ3UDnpdEwNNm6wVBpYM0o"
        ));
        for k in [
            "sk-proj-Xi8tdMjHV6pmbBbwilTeT4BlbkFJ3UDnpdEwNNm6wVBpYM0o",
            "sk-Zk8mQ2pL7xN4vR9tW1yBT3BlbkFKcD5fH2jK4mN6pQ8rS0t",
            "sk-Zk8mQ2pL7xN4vR9tW1yBT3B1bkFJcD5fH2jK4mN6pQ8rS0t",
        ] {
            assert!(!super::openai_marker_intact(k), "{k}");
        }
    }

    #[test]
    fn huggingface() {
        check(
            "huggingface_token",
            &[
                (
                    "HF_TOKEN=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",
                    "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",
                ),
                (
                    "token = \"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\"",
                    "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",
                ),
            ],
            &[
                (
                    "- (id)hf_requiredCharacteristicTypesForDisplayMetadata;",
                    "an identifier longer than a token",
                ),
                (
                    "div[data-cel-widget=\"desktop-rhf_SponsoredProductsRemoteRHFSearchEXPSubs\"]",
                    "hf_ inside a word",
                ),
                ("HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "x-masked"),
            ],
        );
    }

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
