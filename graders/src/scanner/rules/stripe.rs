//! Stripe live secret and restricted keys (sk_live_/rk_live_). Test-mode
//! keys are reported as `service_token` (see `service`).
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "stripe-secret-key",
    secret_type: "stripe_secret_key",
    description: "Stripe secret or restricted key (sk_live_/rk_live_...)",
    keywords: &["_live_"],
    pattern: r"\b((?:sk|rk)_live_[A-Za-z0-9]{16,247})\b",
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
    fn live_keys() {
        check(
            "stripe_secret_key",
            &[(
                "stripe.api_key = \"sk_live_51HqT2vKx9Lm3Np5Rt7Vw\"",
                "sk_live_51HqT2vKx9Lm3Np5Rt7Vw",
            )],
            &[
                ("STRIPE_KEY=sk_live_****", "masked"),
                ("pk_live_ is the publishable prefix", "prefix in prose"),
            ],
        );
    }
}
