//! npm access tokens (npm_...) and `_authToken=` lines in .npmrc.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "npm-token",
        secret_type: "npm_token",
        description: "npm access token (npm_...)",
        keywords: &["npm_"],
        pattern: r"\b(npm_[A-Za-z0-9]{36})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "npmrc-auth-token",
        secret_type: "npm_token",
        description: "npm registry auth token in an .npmrc (_authToken=...)",
        keywords: &["_authtoken"],
        pattern: r"_authToken\s*=\s*([A-Za-z0-9_\-.+/=]{16,512})",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn npm() {
        check(
            "npm_token",
            &[
                (
                    "//registry.npmjs.org/:_authToken=npm_Q8kZ2mX7pL4nR9sT1vW3yB5dF6hJ0kM2pQ4r",
                    "npm_Q8kZ2mX7pL4nR9sT1vW3yB5dF6hJ0kM2pQ4r",
                ),
                (
                    "//npm.internal/:_authToken=c2f1e7a9-44bd-4e0e-9a11-73d5b8f0e2aa",
                    "c2f1e7a9-44bd-4e0e-9a11-73d5b8f0e2aa",
                ),
            ],
            &[(
                "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
                "read from env",
            )],
        );
    }
}
