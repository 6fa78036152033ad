//! The redactor: the scanner's core replacing secrets in any text the
//! server writes out (logs, recordings, observations).
//!
//! Two layers, as in the harness (seed 000): known values (e.g. a task's
//! planted secrets) replaced longest first, so a value containing another is
//! hidden whole; then, with shape redaction on, everything the scanner finds
//! by shape (provider patterns, credential-named assignments, random tokens,
//! encoded runs). Over-redaction is the accepted failure; under-redaction
//! is not.

use crate::scanner::{ScanConfig, Scanner};

/// Known values shorter than this are ignored: replacing "ab" everywhere
/// would destroy the text and hide nothing.
const MIN_VALUE: usize = 4;

/// Replaces secrets in text.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// (value, type), longest value first.
    values: Vec<(String, String)>,
    scanner: Option<Scanner>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::by_shape()
    }
}

impl Redactor {
    /// Known values only (replaced with `[REDACTED]`), no shape redaction.
    pub fn from_values<I, S>(values: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Redactor::from_typed(values.into_iter().map(|v| (v.into(), String::new())))
    }

    /// Known values with their types (`[REDACTED:<type>]`), no shape redaction.
    pub fn from_typed<I, S, T>(values: I) -> Redactor
    where
        I: IntoIterator<Item = (S, T)>,
        S: Into<String>,
        T: Into<String>,
    {
        let mut v: Vec<(String, String)> = values
            .into_iter()
            .map(|(a, b)| (a.into(), b.into()))
            .filter(|(a, _)| a.len() >= MIN_VALUE)
            .collect();
        v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        v.dedup_by(|a, b| a.0 == b.0);
        Redactor {
            values: v,
            scanner: None,
        }
    }

    /// Shape redaction only, with the default scanner.
    pub fn by_shape() -> Redactor {
        Redactor {
            values: Vec::new(),
            scanner: Some(Scanner::new(ScanConfig::default())),
        }
    }

    /// Turns shape redaction on (with `scanner`) or off (`None`).
    pub fn with_shape(mut self, scanner: Option<Scanner>) -> Redactor {
        self.scanner = scanner;
        self
    }

    /// Redacts known values, then (if on) everything found by shape.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (v, ty) in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), &tag(ty));
            }
        }
        match &self.scanner {
            Some(s) => redact_with(s, &out),
            None => out,
        }
    }

    /// Redacts only what is found by shape (the default scanner if this
    /// redactor has none).
    pub fn redact_findings(&self, text: &str) -> String {
        match &self.scanner {
            Some(s) => redact_with(s, text),
            None => redact_with(&Scanner::new(ScanConfig::default()), text),
        }
    }
}

fn tag(ty: &str) -> String {
    if ty.is_empty() {
        "[REDACTED]".to_string()
    } else {
        format!("[REDACTED:{ty}]")
    }
}

/// Replaces every finding's span in `text` with `[REDACTED:<type>]`.
/// Findings are scanned with no allowlist and no inline-ignore honouring:
/// an egress filter must not be turned off by a comment in the text.
pub fn redact_findings(text: &str) -> String {
    redact_with(&Scanner::new(ScanConfig::default()), text)
}

fn redact_with(s: &Scanner, text: &str) -> String {
    let mut budget = s.config().max_decoded_bytes;
    let mut f = s.scan_str("", text, &mut budget);
    if f.is_empty() {
        return text.to_string();
    }
    f.sort_by_key(|x| (x.byte_start, std::cmp::Reverse(x.byte_end)));
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for x in &f {
        if x.byte_start < pos {
            // Overlaps a span already replaced: extend over it.
            if x.byte_end > pos {
                pos = x.byte_end;
            }
            continue;
        }
        out.push_str(&text[pos..x.byte_start]);
        out.push_str(&tag(&x.secret_type));
        pos = x.byte_end;
    }
    out.push_str(&text[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_longest_first() {
        let r = Redactor::from_values(["abcd1234", "abcd1234wxyz", "ab"]);
        assert_eq!(
            r.redact("x=abcd1234wxyz y=abcd1234 z=ab"),
            "x=[REDACTED] y=[REDACTED] z=ab"
        );
    }

    #[test]
    fn by_shape_keeps_keys() {
        let t = "AWS_ACCESS_KEY_ID=AKIAZ7Q2LMN4PRS6TUV3\nDB_PASSWORD=hunter2hunter2 # gitleaks:allow\nplain text line\n";
        let r = redact_findings(t);
        assert_eq!(
            r,
            "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]\nDB_PASSWORD=[REDACTED:generic_secret] # gitleaks:allow\nplain text line\n"
        );
        let both = Redactor::from_typed([("plainvalue", "service_token")])
            .with_shape(Some(Scanner::new(ScanConfig::default())));
        assert_eq!(
            both.redact("v plainvalue AKIAZ7Q2LMN4PRS6TUV3"),
            "v [REDACTED:service_token] [REDACTED:aws_access_key_id]"
        );
    }

    #[test]
    fn masked_text_passes_through() {
        let t = "key sk-**** and AKIA12345… and [REDACTED]";
        assert_eq!(redact_findings(t), t);
    }
}
