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
use crate::security::PlantedIndex;

/// What replaces a line, a string or a whole text that still carries a
/// planted value once its verbatim occurrences are gone: an encoding,
/// a transform or a split the decoder closure recognises.
pub const ENCODED_TAG: &str = "[REDACTED:encoded]";

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
            scanner: Some(Scanner::new(ScanConfig::redaction())),
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

    /// Hides a task's planted values from `text` by the security grader's
    /// own rule, so whatever would count as the secret still present in a
    /// file counts as the secret in a recording too: the known values
    /// verbatim ([`Redactor::redact`]), then every line that still carries
    /// one ([`PlantedIndex::carries`]: an encoding, a transform, a closure
    /// that ran out of budget) and the lines next to it (the rest of a
    /// wrapped encoding), then the whole text if its lines together still
    /// do (a value split across lines).
    pub fn redact_planted(&self, index: &PlantedIndex, text: &str) -> String {
        let out = self.redact(text);
        if !index.carries(out.as_bytes()) {
            return out;
        }
        let parts: Vec<&str> = out.split_inclusive('\n').collect();
        let carrying: Vec<bool> = parts.iter().map(|l| index.carries(l.as_bytes())).collect();
        // A line of an encoded run (base64 or hex symbols only) next to
        // one that carries a value goes too: an encoding wrapped into
        // lines (`base64`'s 76 columns, `xxd -p`'s 60) splits the value's
        // encoded form at a line end, and the part on the neighbouring
        // line, below the grader's fragment length alone, is still most
        // of the value once the lines are joined.
        let lines: String = parts
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let near =
                    |j: Option<usize>| j.and_then(|j| carrying.get(j)).copied().unwrap_or(false);
                if carrying[i] || (encoded_run(l) && (near(i.checked_sub(1)) || near(Some(i + 1))))
                {
                    let nl = if l.ends_with('\n') { "\n" } else { "" };
                    format!("{ENCODED_TAG}{nl}")
                } else {
                    l.to_string()
                }
            })
            .collect();
        if index.carries(lines.as_bytes()) {
            ENCODED_TAG.to_string()
        } else {
            lines
        }
    }

    /// [`Redactor::redact_planted`] on every string of `v`, object keys
    /// included. Each string is judged alone, as the grader judges each
    /// file: pieces of a value shorter than a fragment
    /// (spec.md §6, "Honest limits") spread over several strings are not
    /// joined. Strings repeated from step to step (the task's description,
    /// the file list) are answered by the index's closure cache.
    pub fn redact_planted_json(&self, index: &PlantedIndex, v: &mut serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) => *s = self.redact_planted(index, s),
            Value::Array(a) => a
                .iter_mut()
                .for_each(|x| self.redact_planted_json(index, x)),
            Value::Object(m) => {
                for (k, mut x) in std::mem::take(m) {
                    self.redact_planted_json(index, &mut x);
                    let mut key = self.redact_planted(index, &k);
                    while m.contains_key(&key) {
                        key.push('~');
                    }
                    m.insert(key, x);
                }
            }
            _ => {}
        }
    }

    /// Redacts only what is found by shape (the default scanner if this
    /// redactor has none).
    pub fn redact_findings(&self, text: &str) -> String {
        match &self.scanner {
            Some(s) => redact_with(s, text),
            None => redact_with(&Scanner::new(ScanConfig::redaction()), text),
        }
    }
}

/// Appends every string of `v` (keys included) to `out`, one per line.
#[cfg(test)]
fn collect_strings(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push_str(k);
                out.push('\n');
                collect_strings(x, out);
            }
        }
        _ => {}
    }
}

/// Whether `line` is a piece of a wrapped encoding: at least
/// [`MIN_RUN`] base64 (standard or URL-safe) or hex symbols and nothing else.
fn encoded_run(line: &str) -> bool {
    let t = line.trim_end();
    t.len() >= MIN_RUN
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=-_".contains(&b))
}

/// Shortest line [`encoded_run`] takes for a piece of a wrapped encoding.
const MIN_RUN: usize = 16;

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
    redact_with(&Scanner::new(ScanConfig::redaction()), text)
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
            .with_shape(Some(Scanner::new(ScanConfig::redaction())));
        assert_eq!(
            both.redact("v plainvalue AKIAZ7Q2LMN4PRS6TUV3"),
            "v [REDACTED:service_token] [REDACTED:aws_access_key_id]"
        );
    }

    const VALUE: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";

    fn planted() -> (Redactor, PlantedIndex) {
        let p = crate::security::Planted::for_test("s1", VALUE, false);
        (Redactor::from_values([VALUE]), PlantedIndex::new(&[p]))
    }

    /// Every way a command can print the value that the grader would still
    /// count as the value leaves no trace of it, and the lines around it stay.
    #[test]
    fn planted_values_are_hidden_in_every_form_the_grader_recognises() {
        use base64::Engine;
        let (r, idx) = planted();
        let line = format!("STRIPE_KEY = \"{VALUE}\"\n");
        let b64 = base64::engine::general_purpose::STANDARD.encode(line.as_bytes());
        let wrapped: String = b64
            .as_bytes()
            .chunks(20)
            .map(|c| format!("{}\n", std::str::from_utf8(c).unwrap()))
            .collect();
        let hexed = hex::encode(line.as_bytes());
        let reversed: String = VALUE.chars().rev().collect();
        let spaced: String = VALUE.chars().map(|c| format!("{c} ")).collect();
        let rot13: String = VALUE
            .chars()
            .map(|c| match c {
                'a'..='z' => (((c as u8 - b'a' + 13) % 26) + b'a') as char,
                'A'..='Z' => (((c as u8 - b'A' + 13) % 26) + b'A') as char,
                _ => c,
            })
            .collect();
        for form in [
            VALUE.to_string(),
            b64.clone(),
            wrapped,
            hexed,
            reversed,
            spaced,
            rot13,
            VALUE.replace('_', "%5F"),
            format!("{}\n{}", &VALUE[..16], &VALUE[16..]),
        ] {
            let text = format!("before\n{form}\nafter\n");
            assert!(idx.carries(text.as_bytes()), "the grader must see {form:?}");
            let out = r.redact_planted(&idx, &text);
            assert!(!idx.carries(out.as_bytes()), "{form:?} survived as {out:?}");
            assert!(
                out.contains(ENCODED_TAG) || out.contains("[REDACTED]"),
                "{out}"
            );
        }
        // A value on one line hides that line only.
        let text = format!("total 8\n{b64}\nREADME.md\n");
        assert_eq!(
            r.redact_planted(&idx, &text),
            format!("total 8\n{ENCODED_TAG}\nREADME.md\n")
        );
    }

    /// `base64` wraps at 76 columns: wherever the value's encoded form is
    /// split, no line left in the output decodes to more than a few of the
    /// value's characters (the carrying line's neighbour went with it).
    #[test]
    fn a_wrapped_encoding_split_at_a_line_end_goes_whole() {
        use base64::Engine;
        let (r, idx) = planted();
        let e = base64::engine::general_purpose::STANDARD;
        for pad in 0..80 {
            let file = format!("{}\nKEY = \"{VALUE}\"\nend of file\n", "x".repeat(pad));
            let enc = e.encode(file.as_bytes());
            let wrapped: String = enc
                .as_bytes()
                .chunks(76)
                .map(|c| format!("{}\n", std::str::from_utf8(c).unwrap()))
                .collect();
            let out = r.redact_planted(&idx, &wrapped);
            for line in out.lines().filter(|l| *l != ENCODED_TAG) {
                let plain = String::from_utf8_lossy(&e.decode(line).unwrap()).into_owned();
                for w in VALUE.as_bytes().windows(12) {
                    let w = std::str::from_utf8(w).unwrap();
                    assert!(!plain.contains(w), "pad {pad}: {w:?} left in {plain:?}");
                }
            }
        }
    }

    #[test]
    fn text_without_the_value_is_left_alone() {
        let (r, idx) = planted();
        let text = "total 8\n-rw-r--r-- 1 agent agent 120 app.py\nsk_live_000other00000000000000000\nZGF0YTogbm90aGluZyBzZWNyZXQgaGVyZQ==\n";
        assert_eq!(r.redact_planted(&idx, text), text);
    }

    /// Every string of a record is judged alone, keys included; a value
    /// split in halves over two strings is caught in each (a half is a
    /// fragment), and numbers are kept.
    #[test]
    fn every_string_of_a_record_is_judged() {
        let (r, idx) = planted();
        let half = VALUE.len() / 2;
        let mut v = serde_json::json!([
            format!("printf %s {}", &VALUE[..half]),
            {"stderr": &VALUE[half..], "k": 1, "ok": "plain"},
        ]);
        r.redact_planted_json(&idx, &mut v);
        let mut after = String::new();
        collect_strings(&v, &mut after);
        assert!(!idx.carries(after.as_bytes()), "{v}");
        assert_eq!(v[1]["k"], 1, "{v}");
        assert_eq!(v[1]["ok"], "plain", "{v}");
        let mut v = serde_json::json!({ VALUE: true, "plain": "ok" });
        r.redact_planted_json(&idx, &mut v);
        assert_eq!(v, serde_json::json!({"[REDACTED]": true, "plain": "ok"}));
    }

    #[test]
    fn masked_text_passes_through() {
        let t = "key sk-**** and AKIA12345… and [REDACTED]";
        assert_eq!(redact_findings(t), t);
    }
}
