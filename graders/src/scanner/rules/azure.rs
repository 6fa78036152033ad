//! Azure storage connection strings (`DefaultEndpointsProtocol=...;
//! AccountKey=...`); the value is the whole string, the key is judged.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "azure-storage-connection-string",
    secret_type: "azure_storage_connection_string",
    description: "Azure Storage connection string carrying an AccountKey",
    keywords: &["accountkey"],
    pattern: r#"(DefaultEndpointsProtocol=https?;AccountName=[^;\s'"]+;AccountKey=([A-Za-z0-9+/=]{40,128})(?:;[^\s'"`]*)?)"#,
    group: 1,
    check_group: 2,
    context_type: None,
    validate: None,
}];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn azure() {
        let c = "DefaultEndpointsProtocol=https;AccountName=northwindst;AccountKey=Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9wB3d+Fh6Jk0Mn==;EndpointSuffix=core.windows.net";
        check(
            "azure_storage_connection_string",
            &[(&format!("AZURE_STORAGE=\"{c}\""), c)],
            &[(
                "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=<your-account-key>",
                "placeholder key",
            )],
        );
    }
}
