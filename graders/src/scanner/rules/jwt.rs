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
    validate: Some(is_reported_token),
    gate: None,
}];

/// Roles a token's payload may declare that make it public by design:
/// Supabase's `anon` key is shipped in every client (row-level security
/// protects the data); its `service_role` key bypasses that and is a
/// secret.
const PUBLIC_ROLES: &[&str] = &["anon", "anonymous"];

/// A JOSE token ([`is_jose_header`]) that does not declare a public role
/// ([`declares_public_role`]).
fn is_reported_token(token: &str) -> bool {
    is_jose_header(token) && !declares_public_role(token)
}

/// True when the token's payload decodes to a JSON object whose `role` is
/// one of [`PUBLIC_ROLES`] (the Supabase anon key).
pub(crate) fn declares_public_role(token: &str) -> bool {
    use base64::Engine as _;
    let Some(payload) = token.split('.').nth(1) else {
        return false;
    };
    let engine = base64::engine::general_purpose::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::general_purpose::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(payload)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("role").and_then(|r| r.as_str()).map(str::to_owned))
        .is_some_and(|r| PUBLIC_ROLES.contains(&r.as_str()))
}

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
    fn public_role_tokens_are_not_reported_service_role_is() {
        // Supabase keys: same issuer, same shape; only the role differs.
        let anon = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6Iml4dXN4cmRzY3Z0dGVlcm9ndWxmIiwicm9sZSI6ImFub24iLCJpYXQiOjE3MTcwMDAwMDAsImV4cCI6MjAzMjU3NjAwMH0.YeZR7sdpJHyTfKnLFG5uDdCmce8lYLpom_gzh9Ta64G";
        let service = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6Iml4dXN4cmRzY3Z0dGVlcm9ndWxmIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImlhdCI6MTcxNzAwMDAwMCwiZXhwIjoyMDMyNTc2MDAwfQ.Qk7vR2xNp9sLm4TzWc8YbHd3Fj6Ge1Ka5Ur0Io2Pq7X";
        assert!(super::declares_public_role(anon));
        assert!(!super::declares_public_role(service));
        check(
            "jwt",
            &[(&format!("SUPABASE_SERVICE_ROLE_KEY={service}"), service)],
            &[
                (&format!("SUPABASE_ANON_KEY={anon}"), "anon role: public"),
                (
                    &format!("const supabaseKey = '{anon}';"),
                    "anon role, any name",
                ),
            ],
        );
    }

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
