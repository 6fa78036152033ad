//! Masked values, placeholders and documented example keys: never findings,
//! because they match nothing real (seed 000: `sk-****`, `ghp_ab12....`,
//! `AKIA12345…`, `sk-xxxxx12345`, `####`, `<hidden-value>`, `[REDACTED]`).

/// Substrings (lowercase) that mark a value as masked or a placeholder.
const CONTAINS: &[&str] = &[
    "****",
    "...",
    "…",
    "####",
    "xxxx",
    "[redacted",
    "redacted",
    "your_",
    "your-",
    "yourapi",
    "yourkey",
    "yourtoken",
    "yoursecret",
    "changeme",
    "change_me",
    "change-me",
    "example",
    "dummy",
    "placeholder",
    "sample",
    "fake",
    "notasecret",
    "not_a_secret",
    "not-a-secret",
    "replace_me",
    "replaceme",
    "replace-me",
    "insert_",
    "_here",
    "-here",
    "hidden",
    "0123456789",
    "123456789",
    "abcdefgh",
    "secret_key_here",
];

/// Characters used to mask a value; [`MASK_RUN`] of one in a row is a mask.
const MASK_CHARS: &[char] = &[
    '*', '•', '●', '·', '∙', '⋅', '#', '?', '…', '░', '▒', '█', '■', '□', '×',
];
/// Run length of one [`MASK_CHARS`] character that marks a mask: `***`,
/// `•••`. Letters are not mask characters here: `XXX` occurs in random
/// keys (the corpus has one); `xxxx` is in [`CONTAINS`].
const MASK_RUN: usize = 3;

/// Whole values (lowercase) that are placeholders.
const EXACT: &[&str] = &[
    "password",
    "passw0rd",
    "secret",
    "changeit",
    "admin",
    "root",
    "test",
    "none",
    "null",
    "undefined",
    "true",
    "false",
    "token",
    "pass",
    "apikey",
    "api_key",
    "xxx",
    "default",
    "password123",
    "secret123",
    "mysecret",
    "mypassword",
    "letmein",
    "qwerty",
    "user",
];

/// True when `v` is masked, a placeholder, or too uniform to be a secret.
pub(crate) fn is_masked_or_placeholder(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    // Template syntax is judged by its structure (`words::has_template`),
    // not by a `{{` or `<` anywhere: a password may hold either.
    if CONTAINS.iter().any(|p| lower.contains(p))
        || EXACT.contains(&lower.as_str())
        || super::instruction::is_instruction(v)
        || super::words::has_template(&lower)
        || lower.starts_with('<')
    {
        return true;
    }
    // One character repeated ("aaaaaaaa", "00000000"), filler, counting.
    if super::words::is_degenerate(v) {
        return true;
    }
    let first = v.as_bytes()[0];
    if v.bytes().all(|b| b == first) {
        return true;
    }
    if is_marker(v) {
        return true;
    }
    // Any masking character repeated ("sk_live_••••9506", "ab**cd", "##").
    let mut prev = None;
    let mut run = 0;
    for c in v.chars() {
        run = if Some(c) == prev { run + 1 } else { 1 };
        prev = Some(c);
        if run >= MASK_RUN && MASK_CHARS.contains(&c) {
            return true;
        }
    }
    // Values built mostly of mask characters ("ab12••••", "sk-____").
    let mask = v
        .chars()
        .filter(|c| matches!(c, '*' | '•' | '#' | '?'))
        .count();
    mask * 2 >= v.chars().count()
}

/// True for a filter's marker in place of a value: a word or two of
/// letters in brackets or parentheses (Rails' `[FILTERED]`, `[MASKED]`,
/// `[HIDDEN]`, Terraform's `(sensitive value)`). A secret is never written
/// as letters and spaces between brackets.
fn is_marker(v: &str) -> bool {
    let inner = match (v.strip_prefix('['), v.strip_prefix('(')) {
        (Some(r), _) => r.strip_suffix(']'),
        (_, Some(r)) => r.strip_suffix(')'),
        _ => None,
    };
    inner.is_some_and(|i| {
        i.bytes().filter(u8::is_ascii_alphabetic).count() >= 3
            && i.bytes()
                .all(|c| c.is_ascii_alphabetic() || matches!(c, b' ' | b'_' | b'-'))
    })
}

/// Mask markers only (no placeholder words): used on whole values such as
/// URLs whose host may legitimately contain "example".
pub(crate) fn is_masked_or_placeholder_strict(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    ["****", "…", "[redacted", "<hidden", "xxxxxxxx"]
        .iter()
        .any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    use super::is_masked_or_placeholder as m;

    #[test]
    fn masks() {
        for v in [
            "[FILTERED]",
            "[masked]",
            "(sensitive value)",
            "sk-****",
            "ghp_ab12....",
            "AKIA12345…",
            "sk-xxxxx12345",
            "####",
            "<hidden-value>",
            "[REDACTED]",
            "YOUR_API_KEY",
            "changeme",
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "dummy-token-value",
            "aaaaaaaaaaaa",
            "sk_live_••••9506",
            "ghp_000000000000000000000000000000000000",
            "pk_AB***CD",
            "tok●●●●●●",
        ] {
            assert!(m(v), "{v} should be masked");
        }
        for v in [
            "Zq8v2Lm4Kp7Rt",
            "ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h",
            "hunter2hunter2",
        ] {
            assert!(!m(v), "{v} is a real-looking value");
        }
    }
}
