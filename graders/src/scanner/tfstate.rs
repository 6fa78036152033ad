//! Terraform state's provider-private metadata (issue 18, generator-7
//! `tfstate-clean`). Every resource instance in a `.tfstate` carries a
//! `"private"` member: base64 the provider keeps for itself (schema
//! version, timeouts, a diff's planned state), written by Terraform for
//! every resource, secret or not. The word `private` named it a secret to
//! the random-token rule. Attributes that hold credentials (`password`,
//! `secret`, `access_key`) are judged as anywhere else: state files do
//! leak those.

/// True for a Terraform state file by its name.
fn is_state_file(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.ends_with(".tfstate") || name.ends_with(".tfstate.backup")
}

/// True when the value at `start` of `text` is a resource instance's
/// `"private"` member in a Terraform state file.
pub(crate) fn is_provider_private(path: &str, text: &str, start: usize) -> bool {
    is_state_file(path) && super::stored_hash::key_before(text, start) == "private"
}

#[cfg(test)]
mod tests {
    use crate::scanner::{ScanConfig, Scanner};

    const B64: &str =
        "mhFae8oosvImLQKhRMj+mnZPmngPAdwWaYxDjzZlOncypxSVUgVH2UsnwQIcQAUs0bWC8iesi5okhAlf";

    fn state(attrs: &str) -> String {
        format!(
            "{{\n  \"version\": 4,\n  \"resources\": [\n    {{\n      \"instances\": [\n        {{\n          \"attributes\": {{\n{attrs}            \"id\": \"acme-logs\"\n          }},\n          \"private\": \"{B64}\"\n        }}\n      ]\n    }}\n  ]\n}}\n"
        )
    }

    #[test]
    fn provider_private_is_quiet_credentials_are_not() {
        let s = Scanner::new(ScanConfig::default());
        let clean = state("");
        assert!(
            s.scan_bytes("infra/terraform.tfstate", clean.as_bytes())
                .is_empty()
        );
        let leaky = state("            \"password\": \"Zq8v2Lm4Kp7RtX9wB3nY6cQ1\",\n");
        let f = s.scan_bytes("infra/terraform.tfstate", leaky.as_bytes());
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].value, "Zq8v2Lm4Kp7RtX9wB3nY6cQ1");
        // Outside a state file, `private` still names its value.
        let other = format!("private: \"{B64}\"\n");
        assert!(!s.scan_bytes("config/app.yml", other.as_bytes()).is_empty());
    }
}
