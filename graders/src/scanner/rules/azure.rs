//! Azure storage connection strings (`DefaultEndpointsProtocol=...;
//! AccountKey=...`); the value is the whole string, the key is judged.
//! Azure shared access signatures (`?sv=2022-11-02&…&sig=…`): the `sig`
//! is the HMAC that makes the URL a credential; it is the value (typed
//! `service_token`: the task schema's closed set of types has no SAS
//! type; not a leak-grade rule until the external gate admits it).
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "azure-storage-connection-string",
        secret_type: "azure_storage_connection_string",
        description: "Azure Storage connection string carrying an AccountKey",
        keywords: &["accountkey"],
        pattern: r#"(DefaultEndpointsProtocol=https?;AccountName=[^;\s'"]+;AccountKey=([A-Za-z0-9+/=]{40,128})(?:;[^\s'"`]*)?)"#,
        group: 1,
        check_group: 2,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "azure-sas-token",
        secret_type: "service_token",
        description: "Azure shared access signature (sv=…&sig=…) in a URL or connection string",
        keywords: &["sig="],
        pattern: r#"[?&;=]sv=\d{4}-\d{2}-\d{2}&[^\s'"`<>]{0,400}?\bsig=([A-Za-z0-9+/]{8}(?:[A-Za-z0-9+/=]|%2[bBfF]|%3[dD]){30,120})"#,
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
        check(
            "service_token",
            &[
                (
                    "\"url\": \"https://st.blob.core.windows.net/exports/o.csv?sv=2022-11-02&ss=b&sp=rw&se=2026-12-18T18:00:00Z&sig=MA4V7689MbqpLSVGI5l1bphZW%2BPUnFLXN8z3vekmS1s%3D\"",
                    "MA4V7689MbqpLSVGI5l1bphZW%2BPUnFLXN8z3vekmS1s%3D",
                ),
                (
                    "BlobEndpoint=https://st.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&srt=co&sp=rl&sig=Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7=",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7=",
                ),
            ],
            &[
                (
                    "https://st.blob.core.windows.net/c/o.csv?sv=2022-11-02&sp=r&sig=REDACTED",
                    "redacted",
                ),
                (
                    "https://st.blob.core.windows.net/c/o.csv?sv=2022-11-02&sp=r&sig=<signature>",
                    "placeholder",
                ),
                (
                    "https://st.blob.core.windows.net/c/o.csv?sv=2022-11-02&sp=r&sig=****************************************",
                    "masked",
                ),
            ],
        );
    }
}
