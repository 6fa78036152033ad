//! Values whose name declares them fake: `FAKE_STRIPE_KEY = "sk_test_…"`,
//! `dummyToken: "…"`, `mock_password = "…"`, `stubSecret := "…"`. Test
//! suites and examples hold keys in every issuer's format on purpose
//! (a vendor's documentation key, a key that must pass a format check),
//! and say so in the name they give them; a real credential is never
//! named fake by whoever committed it. The judgement is by the name's
//! segments (`FAKE_STRIPE_KEY` → fake, stripe, key; `dummyToken` → dummy,
//! token), so `mockingbird` or `stubborn` do not count.
//!
//! Unlike a comment (`# not a real key`), which an inline-ignore policy
//! already governs, the name is part of the code that uses the value.
//! Planted secrets are graded by their values, not by this scanner
//! (spec.md "Grading"), so renaming one does not remediate it; and the
//! redactor (`ScanConfig::redaction`) does not apply this judgement.

/// Segments (lowercase, whole) that declare a value fake. Not `example`
/// or `sample`: they also name hosts (`api.example.com`) and data.
const FAKE_WORDS: &[&str] = &[
    "fake",
    "dummy",
    "mock",
    "mocked",
    "stub",
    "bogus",
    "fixture",
    "placeholder",
];

/// Longest stretch of the line before the value looked at.
const MAX_PREFIX: usize = 160;

/// Whether a name on the line before `start` (in the same statement: after
/// the last `;`) declares the value fake.
pub(crate) fn declared_fake(text: &str, start: usize) -> bool {
    let line = text[..start].rfind('\n').map_or(0, |p| p + 1);
    let mut from = line.max(start.saturating_sub(MAX_PREFIX));
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let prefix = &text[from..start];
    let stmt = prefix.rsplit(';').next().unwrap_or(prefix);
    stmt.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .any(names_fake)
}

/// Whether one identifier has a [`FAKE_WORDS`] segment (split at `_`, `-`
/// and lower-to-upper case changes).
fn names_fake(ident: &str) -> bool {
    let b = ident.as_bytes();
    let mut seg = 0;
    for i in 0..=b.len() {
        let cut = i == b.len()
            || matches!(b[i], b'_' | b'-')
            || (i > 0 && b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase());
        if cut {
            let s = ident[seg..i].to_ascii_lowercase();
            if FAKE_WORDS.contains(&s.as_str()) {
                return true;
            }
            seg = if i < b.len() && matches!(b[i], b'_' | b'-') {
                i + 1
            } else {
                i
            };
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::declared_fake;

    fn fake(line: &str, value: &str) -> bool {
        declared_fake(line, line.find(value).unwrap())
    }

    #[test]
    fn names_that_declare_a_value_fake() {
        for (line, v) in [
            (
                "FAKE_STRIPE_KEY = \"sk_test_4eC39HqLyjWDarjtT1zdp7dc\"",
                "sk_test_",
            ),
            (
                "const dummyToken: string = 'ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h'",
                "ghp_",
            ),
            ("  \"mock_api_key\": \"AKIAZ5K7Q2W4E6R8T0Y2\",", "AKIA"),
            ("stubSecret := \"xoxb-1234\"", "xoxb"),
            ("let BOGUS_PAT = \"github_pat_11AAAA\";", "github_pat"),
            (
                "client = Client(api_key=FIXTURE_KEY, key=\"sk_live_9fK2mQ7x\")",
                "sk_live",
            ),
        ] {
            assert!(fake(line, v), "{line}");
        }
    }

    #[test]
    fn redaction_still_hides_fake_named_values() {
        use crate::scanner::{ScanConfig, Scanner};
        let text = "FAKE_GH_TOKEN = \"ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h\"\n";
        let scan = Scanner::new(ScanConfig::default());
        assert!(
            scan.scan_bytes("tests/conftest.py", text.as_bytes())
                .is_empty()
        );
        let redact = Scanner::new(ScanConfig::redaction());
        assert!(
            !redact
                .scan_bytes("tests/conftest.py", text.as_bytes())
                .is_empty()
        );
    }

    #[test]
    fn names_that_do_not() {
        for (line, v) in [
            (
                "STRIPE_KEY = \"sk_live_4eC39HqLyjWDarjtT1zdp7dc\"",
                "sk_live",
            ),
            ("mockingbird_token = \"9fK2mQ7xL4pR8sV1wZ3b\"", "9fK2"),
            ("stubborn_key: 9fK2mQ7xL4pR8sV1wZ3b", "9fK2"),
            ("url = \"https://api.example.com/?key=AIzaSyD3asb\"", "AIza"),
            // Another statement on the line.
            ("mock = None; API_KEY = \"sk_live_9fK2mQ7x\"", "sk_live"),
            // The line above is another statement.
            ("FAKE = 1\nAPI_KEY = \"sk_live_9fK2mQ7x\"", "sk_live"),
        ] {
            assert!(!fake(line, v), "{line}");
        }
    }
}
