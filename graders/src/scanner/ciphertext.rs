//! Encrypted data under a credential-named key (issue 18, generator-8
//! `tfstate-pgp-encrypted-secret-key-id-only`).
//!
//! Terraform's `aws_iam_access_key` with a `pgp_key` stores
//! `"encrypted_secret": "wcFMA…"`: the secret encrypted to a public key,
//! as a base64 binary OpenPGP message. The word `secret` in the key made
//! the credential-assignment rule report it, but ciphertext is what a tool
//! writes so that the value *can* be committed; only the private key's
//! holder reads it. Three shapes, each judged by structure:
//! - a base64 binary OpenPGP message: its first packet is a public-key or
//!   symmetric-key encrypted session key (tag 1 or 3, old or new packet
//!   format: `hQEM…`, `hQIM…`, `wcBM…`, `wcFM…`, `jA0E…`) whose version
//!   octet is 3 to 6, or any such packet header under a key that names
//!   encryption ([`names_encryption`]);
//! - HashiCorp Vault transit ciphertext: `vault:v<N>:<base64>`;
//! - under a key that names encryption (`encrypted_secret`,
//!   `ciphertext`, `encryptedPassword`), base64 of at least
//!   [`MIN_CIPHERTEXT_BYTES`] bytes.
//!
//! A plain value under an encryption-named key (`encrypted_password:
//! hunter2x`) is not base64 of that length and is judged as before.

use base64::Engine as _;

/// Shortest ciphertext in bytes under an encryption-named key: a 16-byte
/// nonce or IV, a 16-byte tag and at least one block.
const MIN_CIPHERTEXT_BYTES: usize = 48;

/// Words of key names that call the value encrypted data.
const ENCRYPTION_WORDS: &[&str] = &["encrypted", "ciphertext", "ciphered", "sealed"];

/// True when the key names its value encrypted data (not
/// `unencrypted_secret`).
fn names_encryption(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ENCRYPTION_WORDS.iter().any(|w| k.contains(w)) && !k.contains("unencrypted")
}

/// The bytes of a base64 (standard or URL-safe, padded or not) value, up
/// to its last whole group of four characters (a value cut short, or with
/// non-canonical trailing bits, still shows its header and length).
fn decode(v: &str) -> Option<Vec<u8>> {
    let body = v.trim_end_matches('=');
    let body = &body[..body.len() / 4 * 4];
    let std = base64::engine::general_purpose::STANDARD_NO_PAD;
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    std.decode(body).or_else(|_| url.decode(body)).ok()
}

/// `(tag, header length)` of an OpenPGP packet starting `d`, old or new
/// format.
fn packet(d: &[u8]) -> Option<(u8, usize)> {
    let h = *d.first()?;
    if h & 0x80 == 0 {
        return None;
    }
    if h & 0x40 != 0 {
        // New format: tag in the low six bits; one, two or five length octets.
        let l = *d.get(1)?;
        let len = match l {
            0..=191 => 1,
            192..=223 => 2,
            255 => 5,
            _ => return None,
        };
        Some((h & 0x3f, 1 + len))
    } else {
        // Old format: tag in bits 5-2, length type in bits 1-0.
        let len = match h & 3 {
            0 => 1,
            1 => 2,
            2 => 4,
            _ => return None,
        };
        Some(((h >> 2) & 0x0f, 1 + len))
    }
}

/// True when `d` opens with an encrypted session key packet (tag 1 or 3);
/// `strict` also asks for a known packet version after the header.
fn openpgp_message(d: &[u8], strict: bool) -> bool {
    let Some((tag, hl)) = packet(d) else {
        return false;
    };
    matches!(tag, 1 | 3) && (!strict || d.get(hl).is_some_and(|v| (3..=6).contains(v)))
}

/// True when the value `v`, assigned to `key`, is encrypted data (see the
/// module doc).
pub(crate) fn is_ciphertext(key: &str, v: &str) -> bool {
    if let Some(rest) = v.strip_prefix("vault:v")
        && let Some((n, body)) = rest.split_once(':')
        && !n.is_empty()
        && n.bytes().all(|c| c.is_ascii_digit())
    {
        return decode(body).is_some_and(|d| d.len() >= 16);
    }
    if v.len() < 64 {
        return false;
    }
    let Some(d) = decode(v) else {
        return false;
    };
    let named = names_encryption(key);
    openpgp_message(&d, !named) || (named && d.len() >= MIN_CIPHERTEXT_BYTES)
}

/// Shortest ciphertext in bytes that a configuration encryptor writes: an
/// 8-byte salt and one 16-byte block (Jasypt's PBE, Maven's
/// plexus-cipher), or Spring Cloud Config's IV and one block.
const MIN_CONFIG_CIPHERTEXT_BYTES: usize = 24;

/// True when the generic detector's value at `start..end` is a value a
/// configuration encryptor wrote, in its documented wrapper (issue 18,
/// generator-12 `encrypted-property-values`): such files are encrypted so
/// that they *can* be committed, and the key stays elsewhere.
/// - Spring Cloud Config: `{cipher}` then hex or base64 ciphertext
///   (`password: '{cipher}85bdfc…'`);
/// - Jasypt (`jasypt-spring-boot`): `ENC(<base64>)`; its `DEC(…)` holds
///   plaintext waiting to be encrypted and stays reported;
/// - Maven's `mvn --encrypt-password`: `{<base64>}` as the whole text of a
///   `<password>` or `<passphrase>` element in a settings file (one that
///   holds `<server>` entries).
///
/// Each wrapper is only ciphertext when its body decodes to at least
/// [`MIN_CONFIG_CIPHERTEXT_BYTES`].
pub(crate) fn is_config_ciphertext(text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let v = &text[start..end];
    let long_enough = |body: &str| {
        let body = body.trim_end_matches('=');
        if body.len() >= 2 * MIN_CONFIG_CIPHERTEXT_BYTES
            && body.bytes().all(|c| c.is_ascii_hexdigit())
        {
            return true;
        }
        decode(body).is_some_and(|d| d.len() >= MIN_CONFIG_CIPHERTEXT_BYTES)
    };
    // Spring's prefix, inside the value or just before it.
    let spring =
        |pre: &[u8]| pre.len() >= 8 && pre[pre.len() - 8..].eq_ignore_ascii_case(b"{cipher}");
    if let Some(body) = v.strip_prefix("{cipher}") {
        return long_enough(body);
    }
    if spring(&b[..start]) {
        return long_enough(v);
    }
    // Jasypt's wrapper around the value (the detector may have taken the
    // value with or without it).
    let (body, before, after) = match v.strip_prefix("ENC(") {
        Some(rest) => (rest.trim_end_matches(')'), true, true),
        None => (v, b[..start].ends_with(b"ENC("), b.get(end) == Some(&b')')),
    };
    if before && after {
        return long_enough(body);
    }
    // Maven: the element's whole text, braced (the detector may have
    // taken the value with or without its braces).
    let (start, end) = if b[..start].ends_with(b"{") && b.get(end) == Some(&b'}') {
        (start - 1, end + 1)
    } else {
        (start, end)
    };
    if let Some(body) = text[start..end]
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        && b[..start].ends_with(b">")
        && b[end..].starts_with(b"</")
        && text.contains("<server>")
    {
        let tag = &b[..start - 1];
        let open = tag
            .iter()
            .rposition(|&c| c == b'<')
            .map_or(tag, |i| &tag[i + 1..]);
        return (open.eq_ignore_ascii_case(b"password")
            || open.eq_ignore_ascii_case(b"passphrase"))
            && long_enough(body);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{is_ciphertext, is_config_ciphertext};
    use crate::scanner::rules::testutil::rules;

    const PGP: &str = "wcFMAPvV36OUlu+hiJKwBjj1NEsz149iI2lAj1xh5A/4vnmbHPhqFjqgDMGaUp1qbn1SZ7B3ta4L2i6aPcbDXYxaorCafchTGVQ/3QoPdB/Rw1XIddCkQJbfyTSoAmmDS5e+boIy+0X7hpAFIhpXl4";

    #[test]
    fn ciphertext_shapes() {
        assert!(is_ciphertext("encrypted_secret", PGP));
        // `hQEM` + version 3: an OpenPGP message under any name.
        let hq = format!("hQEMA5nQ{}", &PGP[8..]);
        assert!(is_ciphertext("secret", &hq));
        assert!(is_ciphertext(
            "db_password",
            "vault:v1:8SDd3WHDOjf7mq69CyCqYjBXAiQQAVZRkFM13ok481zoCmHnSeDX9vyf7w=="
        ));
        // A 64-byte base64 key under an encryption-named key.
        assert!(is_ciphertext(
            "encryptedPassword",
            "q3Zr8Kx2mVbN4tYwP9sLd6GhJ1aEcF7uR5oIyTnMqWz0XvBkD8lSfH2gA3jC4eUp6rN9tQ1wY5zL7xK0mV2bS8dF4g=="
        ));
    }

    #[test]
    fn credentials_are_not_ciphertext() {
        // The same random key under a secret name; a short value under an
        // encryption name; a random value whose first byte is no packet.
        assert!(!is_ciphertext(
            "client_secret",
            "q3Zr8Kx2mVbN4tYwP9sLd6GhJ1aEcF7uR5oIyTnMqWz0XvBkD8lSfH2gA3jC4eUp6rN9tQ1wY5zL7xK0mV2bS8dF4g=="
        ));
        assert!(!is_ciphertext("encrypted_password", "hunter2xyz!"));
        assert!(!is_ciphertext(
            "unencrypted_secret",
            "q3Zr8Kx2mVbN4tYwP9sLd6GhJ1aEcF7uR5oIyTnMqWz0XvBkD8lSfH2gA3jC4eUp6rN9tQ1wY5zL7xK0mV2bS8dF4g=="
        ));
        assert!(!is_ciphertext("secret", PGP));
        assert!(!is_ciphertext("token", "vault:secret/data/app#token"));
    }

    /// The value of `key` in `text`, as `(start, end)`.
    fn span(text: &str, v: &str) -> (usize, usize) {
        let s = text.find(v).unwrap();
        (s, s + v.len())
    }

    #[test]
    fn configuration_encryptors() {
        let hex =
            "85bdfc79b1cc370a97730a9450d7ec579e9b69698e9c90e40828a61f339083320e22b7408bde08d8";
        let spring = format!("spring:\n  datasource:\n    password: '{{cipher}}{hex}'\n");
        let (s, e) = span(&spring, &format!("{{cipher}}{hex}"));
        assert!(is_config_ciphertext(&spring, s, e));
        let (s, e) = span(&spring, hex);
        assert!(is_config_ciphertext(&spring, s, e));
        let b64 = "jmM0b6DO4kFLQZkEcrJVUIpD/JWDsR/oFQC20yJVoNlmBwVjszueSdSbtnGcd+XM";
        let jasypt = format!("spring.datasource.password=ENC({b64})\n");
        let (s, e) = span(&jasypt, b64);
        assert!(is_config_ciphertext(&jasypt, s, e));
        let (s, e) = span(&jasypt, &format!("ENC({b64})"));
        assert!(is_config_ciphertext(&jasypt, s, e));
        let maven = "<settings><servers>\n  <server>\n    <id>releases</id>\n    <password>{uX7sXS/OhYMJdZUMGDPHn1XEKQFnRnYfzAIlMQre3Gum}</password>\n  </server>\n</servers></settings>\n";
        let (s, e) = span(maven, "{uX7sXS/OhYMJdZUMGDPHn1XEKQFnRnYfzAIlMQre3Gum}");
        assert!(is_config_ciphertext(maven, s, e));
        assert!(is_config_ciphertext(maven, s + 1, e - 1));
        // Plaintext in the same places: Jasypt's `DEC(…)` (waiting to be
        // encrypted), a short `{cipher}` body, a braced password outside
        // a Maven settings file, a plain value.
        let dec = format!("spring.datasource.password=DEC({b64})\n");
        let (s, e) = span(&dec, b64);
        assert!(!is_config_ciphertext(&dec, s, e));
        let short = "password: '{cipher}hunter2x'\n";
        let (s, e) = span(short, "{cipher}hunter2x");
        assert!(!is_config_ciphertext(short, s, e));
        let braced = "<password>{uX7sXS/OhYMJdZUMGDPHn1XEKQFnRnYfzAIlMQre3Gum}</password>\n";
        let (s, e) = span(braced, "{uX7sXS/OhYMJdZUMGDPHn1XEKQFnRnYfzAIlMQre3Gum}");
        assert!(!is_config_ciphertext(braced, s, e));
        let plain = format!("spring.datasource.password={b64}\n");
        let (s, e) = span(&plain, b64);
        assert!(!is_config_ciphertext(&plain, s, e));
        assert!(rules("src/main/resources/application.properties", &jasypt).is_empty());
        assert!(!rules("src/main/resources/application.properties", &plain).is_empty());
    }

    #[test]
    fn scans() {
        let tf = format!("  \"encrypted_secret\": \"{PGP}\",\n");
        assert!(rules("infra/ci.tfstate", &tf).is_empty());
        let plain = "  \"secret\": \"q3Zr8Kx2mVbN4tYwP9sLd6GhJ1aEcF7uR5oIyTnMqWz0XvBkD8lSfH2gA3jC4eUp6rN9tQ1wY5zL7xK0mV2bS8dF4g==\",\n";
        assert!(!rules("config/app.json", plain).is_empty());
    }
}
