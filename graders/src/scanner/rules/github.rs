//! GitHub tokens: classic PATs (ghp_), OAuth/user tokens (gho_/ghu_),
//! server/refresh tokens (ghs_/ghr_) and fine-grained PATs (github_pat_).
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "github-fine-grained-pat",
        secret_type: "github_fine_grained_pat",
        description: "GitHub fine-grained personal access token (github_pat_...)",
        keywords: &["github_pat_"],
        pattern: r"\b(github_pat_[A-Za-z0-9_]{50,255})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "github-pat",
        secret_type: "github_pat",
        description: "GitHub personal access, server-to-server or refresh token (ghp_/ghs_/ghr_)",
        keywords: &["ghp_", "ghs_", "ghr_"],
        pattern: r"\b((?:ghp|ghs|ghr)_[A-Za-z0-9]{36})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "github-oauth",
        secret_type: "github_oauth",
        description: "GitHub OAuth or user-to-server token (gho_/ghu_)",
        keywords: &["gho_", "ghu_"],
        pattern: r"\b((?:gho|ghu)_[A-Za-z0-9]{36})\b",
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
    fn classic_and_oauth() {
        check(
            "github_pat",
            &[(
                "GITHUB_TOKEN=ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h",
                "ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h",
            )],
            &[
                ("token: ghp_ab12....", "masked"),
                ("see ghp_ prefix docs", "prefix only"),
            ],
        );
        check(
            "github_oauth",
            &[(
                "\"oauth\": \"gho_Q3wE5rT7yU9iO1pA3sD5fG7hJ9kL1zX3cV5b\"",
                "gho_Q3wE5rT7yU9iO1pA3sD5fG7hJ9kL1zX3cV5b",
            )],
            &[("gho_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "x-masked")],
        );
    }

    #[test]
    fn fine_grained() {
        let v = "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6";
        check(
            "github_fine_grained_pat",
            &[(&format!("export GH={v}"), v)],
            &[("github_pat_<redacted>", "angle-bracket placeholder")],
        );
    }
}
