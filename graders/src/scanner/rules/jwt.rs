//! JSON Web Tokens: base64url parts, header and payload starting `eyJ`,
//! then the signature (absent in an unsecured token, `alg: none`). The
//! header must decode to a JOSE header (a JSON object naming `alg` or
//! `typ`), which tells a token from any text that happens to start `eyJ`.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "jwt",
    secret_type: "jwt",
    description: "JSON Web Token (base64url header and payload starting eyJ, then the signature)",
    keywords: &["eyj"],
    pattern: r"\b(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]{8,})?)",
    group: 1,
    check_group: 0,
    context_type: None,
    validate: Some(is_jose_header),
}];

/// True when the header part decodes (base64url, padding optional) to a
/// JSON object with `alg` or `typ`: `eyJ` alone only says the text starts
/// `{"`, and truncated or edited headers
/// (`eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ`, one character short) are not
/// tokens any verifier accepts.
fn is_jose_header(token: &str) -> bool {
    use base64::Engine as _;
    let header = token.split('.').next().unwrap_or("");
    let engine = base64::engine::general_purpose::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::general_purpose::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let Some(v) = engine
        .decode(header)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .filter(serde_json::Value::is_object)
    else {
        return false;
    };
    // An unsecured JWS (`"alg": "none"`, RFC 7519 §6) with no signature
    // authenticates nothing: it is the shape of test fixtures that check a
    // verifier rejects it. A signed token, or one whose header names a
    // real algorithm, is still reported.
    let unsecured = v["alg"]
        .as_str()
        .is_some_and(|a| a.eq_ignore_ascii_case("none"));
    !(unsecured && token.split('.').nth(2).is_none_or(str::is_empty))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn jwts() {
        let t = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdmMtcGF5bWVudHMiLCJyb2xlIjoiYWRtaW4ifQ.kX9zQ2mL4pR7sV1wY3bD5fH8jK0nP2rT";
        check(
            "jwt",
            &[
                (&format!("Authorization: Bearer {t}"), t),
                // alg none but signed anyway: judged as a token.
                (
                    "t = eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0.kX9zQ2mL4pR7sV1wY3bD5fH8",
                    "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0.kX9zQ2mL4pR7sV1wY3bD5fH8",
                ),
                // Unsecured (no signature part).
                (
                    "token = eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJuYW1lIjoiSm9lIiwKInN0YXR1cyI6ImVtcGxveWVlIgp9",
                    "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJuYW1lIjoiSm9lIiwKInN0YXR1cyI6ImVtcGxveWVlIgp9",
                ),
            ],
            &[
                ("header starts eyJ... and ends", "elided"),
                ("eyJAAAAAAAAAA.eyJBBBBBBBBBB", "not base64 of a JOSE header"),
                (
                    "const UNSIGNED = 'eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0.';",
                    "unsecured (alg none, no signature): authenticates nothing",
                ),
                (
                    "eyJhbGciOiJ9.eyJ9.x",
                    "parts too short to be a signed token",
                ),
                (
                    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKx",
                    "header cut short: it does not decode to a JSON object",
                ),
            ],
        );
    }
}
