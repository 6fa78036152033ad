//! Service tokens in the `tok_live_` / `sk_test_` style (internal service
//! tokens and provider test-mode keys).
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "service-token",
    secret_type: "service_token",
    description: "Service token with a live/test vendor prefix (tok_live_, svc_live_, sk_test_, ...)",
    keywords: &[
        "tok_live_",
        "tok_test_",
        "sk_test_",
        "rk_test_",
        "svc_live_",
    ],
    pattern: r"\b((?:tok_live|tok_test|sk_test|rk_test|svc_live)_[A-Za-z0-9]{16,247})\b",
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
    fn service_tokens() {
        check(
            "service_token",
            &[
                (
                    "SERVICE_TOKEN=tok_live_9fK2mQ7xL4pR8sV1wZ3b",
                    "tok_live_9fK2mQ7xL4pR8sV1wZ3b",
                ),
                (
                    "'sk_test_4eC39HqLyjWDarjtT1zdp7dc'",
                    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
                ),
            ],
            &[
                ("tok_live_xxxxxxxxxxxxxxxx", "x-masked"),
                ("prefix tok_live_short", "too short to be a token"),
            ],
        );
    }
}
