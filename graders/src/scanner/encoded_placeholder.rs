//! Encoded placeholders (issue 18, generator-7 `k8s-secret-placeholder`):
//! a Kubernetes Secret's `data:` values are base64, and a template checked
//! in before its values are filled holds the base64 of `${SMTP_PASSWORD}`,
//! `{{ .Values.password }}`, `changeme` or `<your-password>`. Under a
//! `password:` key the random-token rule saw a random-looking base64 run;
//! the decoder rescanned the text and found nothing, as it should. The
//! encoding hides a placeholder, not a secret: a value whose base64 or hex
//! decodes to a template, an environment lookup or masked text is judged
//! by what it decodes to. A value decoding to a real password
//! (`Zq8v2Lm4Kp7Rt`) is still reported.

use base64::Engine as _;

/// Shortest decoded text judged (shorter decodings are `YXBw`-sized
/// user names, never reported anyway).
const MIN_DECODED: usize = 4;

/// The text `v` decodes to, when it is base64 (standard or URL-safe,
/// padded or not) or even-length hex of printable ASCII.
fn decoded_text(v: &str) -> Option<String> {
    let bytes = if v.len().is_multiple_of(2) && v.bytes().all(|c| c.is_ascii_hexdigit()) {
        hex::decode(v).ok()?
    } else {
        let body = v.trim_end_matches('=');
        let std = base64::engine::general_purpose::STANDARD_NO_PAD;
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        std.decode(body).or_else(|_| url.decode(body)).ok()?
    };
    if bytes.len() < MIN_DECODED || !bytes.iter().all(|c| (0x20..0x7f).contains(c)) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// True when `v` is base64 or hex of a placeholder: template syntax
/// (`${DB_PASSWORD}`, `{{ .Values.x }}`), an environment lookup, or
/// masked or placeholder text ([`super::mask::is_masked_or_placeholder`]).
pub(crate) fn decodes_to_placeholder(v: &str) -> bool {
    let Some(t) = decoded_text(v) else {
        return false;
    };
    let t = t.trim();
    !t.is_empty()
        && (super::mask::is_masked_or_placeholder(t)
            || super::declared::is_env_lookup(t)
            || super::words::has_template(&t.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::decodes_to_placeholder;
    use crate::scanner::{ScanConfig, Scanner};
    use base64::Engine as _;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn placeholders_encoded() {
        for t in [
            "${SMTP_PASSWORD}",
            "${DB_PASSWORD}",
            "{{ .Values.smtp.password }}",
            "<your-password-here>",
            "changeme",
            "$API_TOKEN",
        ] {
            assert!(decodes_to_placeholder(&b64(t)), "{t}");
        }
        for t in [
            "Zq8v2Lm4Kp7RtX9w",
            "hunter2hunter2!",
            "s3cr3t-Pa55word-2024",
        ] {
            assert!(!decodes_to_placeholder(&b64(t)), "{t}");
        }
        assert!(!decodes_to_placeholder("9fK2mQ7xL4pR8sV1wZ3bT6yU0"));
    }

    /// A Kubernetes Secret whose data is a placeholder stays quiet; the
    /// same manifest with a real password encoded is reported.
    #[test]
    fn kubernetes_secret_data() {
        let s = Scanner::new(ScanConfig::default());
        let doc = |v: &str| {
            format!(
                "apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  username: YXBw\n  password: {}\n",
                b64(v)
            )
        };
        let quiet = doc("${SMTP_PASSWORD}");
        assert!(
            s.scan_bytes("k8s/dev/smtp.yaml", quiet.as_bytes())
                .is_empty()
        );
        let real = doc("Zq8v2Lm4Kp7RtX9wB3nY6c");
        assert!(
            !s.scan_bytes("k8s/dev/smtp.yaml", real.as_bytes())
                .is_empty()
        );
    }
}
