//! JSON Web Tokens: three base64url parts, the first two starting `eyJ`.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "jwt",
    secret_type: "jwt",
    description: "JSON Web Token (three base64url parts, header and payload starting eyJ)",
    keywords: &["eyj"],
    pattern: r"\b(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})",
    group: 1,
    check_group: 0,
    context_type: None,
}];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn jwts() {
        let t = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdmMtcGF5bWVudHMiLCJyb2xlIjoiYWRtaW4ifQ.kX9zQ2mL4pR7sV1wY3bD5fH8jK0nP2rT";
        check(
            "jwt",
            &[(&format!("Authorization: Bearer {t}"), t)],
            &[
                ("header starts eyJ... and ends", "elided"),
                (
                    "eyJhbGciOiJ9.eyJ9.x",
                    "parts too short to be a signed token",
                ),
            ],
        );
    }
}
