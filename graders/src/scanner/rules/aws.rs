//! AWS access key ids (AKIA/ASIA/...) and secret access keys (40 base64
//! characters after a secret-key-named key).
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "aws-access-key-id",
        secret_type: "aws_access_key_id",
        description: "AWS access key id (AKIA/ASIA/... prefix)",
        keywords: &["akia", "asia", "abia", "acca", "a3t"],
        pattern: r"\b((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "aws-secret-access-key",
        secret_type: "aws_secret_access_key",
        description: "AWS secret access key assigned to a secret-key-named key",
        keywords: &["secret"],
        pattern: r#"(?i:aws[_\-.]?secret[_\-.]?(?:access[_\-.]?)?key|secret[_\-.]?access[_\-.]?key)["']?\s*(?:=|:|:=|=>)\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
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
    fn access_key_id() {
        check(
            "aws_access_key_id",
            &[
                (
                    "AWS_ACCESS_KEY_ID=AKIAZ7Q2LMN4PRS6TUV3",
                    "AKIAZ7Q2LMN4PRS6TUV3",
                ),
                ("key: 'ASIAY34FZKBOKMUTVV7A' # temp", "ASIAY34FZKBOKMUTVV7A"),
            ],
            &[
                (
                    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
                    "AWS documented example key",
                ),
                ("id = AKIA12345…", "masked with an ellipsis"),
                ("AKIAZ7Q2LMN4PRS6TUV", "one character short"),
            ],
        );
    }

    #[test]
    fn secret_access_key() {
        check(
            "aws_secret_access_key",
            &[(
                "aws_secret_access_key = q8Zk3Vb7Lm2Np9Rt4Wx6Yc1Df5Gh0Jk8Mn3Pq7Ss",
                "q8Zk3Vb7Lm2Np9Rt4Wx6Yc1Df5Gh0Jk8Mn3Pq7Ss",
            )],
            &[
                (
                    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                    "AWS documented example secret",
                ),
                (
                    "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']",
                    "read from env",
                ),
            ],
        );
    }
}
