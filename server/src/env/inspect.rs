//! Output of the read-only structured actions `inspect_file` and
//! `inspect_encoded`, rendered from bytes already read safely.

use base64::Engine as _;
use std::fmt::Write as _;

/// Bytes of a file `inspect_file` shows at most.
pub const INSPECT_MAX_BYTES: usize = 256 * 1024;
/// Shortest base64/hex run `inspect_encoded` decodes.
const MIN_RUN: usize = 16;
/// Runs decoded at most per file.
const MAX_RUNS: usize = 64;

/// The file with 1-based line numbers, as `cat -n` prints it.
pub fn numbered(bytes: &[u8], truncated: bool) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.lines().enumerate() {
        let _ = writeln!(out, "{:>6}\t{}", i + 1, line);
    }
    if truncated {
        let _ = writeln!(out, "[... truncated at {INSPECT_MAX_BYTES} bytes ...]");
    }
    out
}

fn is_b64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'-' | b'_')
}

/// Every base64 or hex run of 16+ characters, decoded where the result is
/// mostly printable text, with its line number.
pub fn decoded_runs(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut found = 0;
    for (ln, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let mut i = 0;
        while i < line.len() && found < MAX_RUNS {
            if !is_b64(line[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < line.len() && is_b64(line[i]) {
                i += 1;
            }
            let run = &line[start..i];
            if run.len() < MIN_RUN {
                continue;
            }
            if let Some((enc, text)) = decode(run) {
                found += 1;
                let shown = String::from_utf8_lossy(run);
                let shown: String = shown.chars().take(60).collect();
                let _ = writeln!(
                    out,
                    "line {} col {} ({enc}): {shown}{}",
                    ln + 1,
                    start + 1,
                    if run.len() > 60 { "..." } else { "" }
                );
                for l in text.lines().take(40) {
                    let _ = writeln!(out, "    | {l}");
                }
            }
        }
    }
    if out.is_empty() {
        out.push_str("no base64 or hex encoded content found\n");
    }
    out
}

fn printable(d: &[u8]) -> bool {
    !d.is_empty()
        && d.iter()
            .filter(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
            .count()
            * 10
            >= d.len() * 9
}

fn decode(run: &[u8]) -> Option<(&'static str, String)> {
    if run.len().is_multiple_of(2) && run.iter().all(u8::is_ascii_hexdigit) {
        if let Ok(d) = hex::decode(run)
            && printable(&d)
        {
            return Some(("hex", String::from_utf8_lossy(&d).into_owned()));
        }
        return None;
    }
    let s = std::str::from_utf8(run).ok()?;
    let trimmed = s.trim_end_matches('=');
    for (name, eng) in [
        ("base64", &base64::engine::general_purpose::STANDARD_NO_PAD),
        (
            "base64url",
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ),
    ] {
        if let Ok(d) = eng.decode(trimmed)
            && printable(&d)
        {
            return Some((name, String::from_utf8_lossy(&d).into_owned()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64_and_hex() {
        let b64 = base64::engine::general_purpose::STANDARD.encode("token=ghp_abcdefghijklmnop");
        let hx = hex::encode("password=hunter2hunter2");
        let text = format!("a: 1\nblob: {b64}\nh = \"{hx}\"\n");
        let out = decoded_runs(text.as_bytes());
        assert!(
            out.contains("line 2") && out.contains("ghp_abcdefghijklmnop"),
            "{out}"
        );
        assert!(
            out.contains("(hex)") && out.contains("hunter2hunter2"),
            "{out}"
        );
    }

    #[test]
    fn ignores_identifiers() {
        let out = decoded_runs(b"def compute_total_amount_for_customer(x):\n");
        assert!(out.starts_with("no base64"), "{out}");
    }

    #[test]
    fn numbers_lines() {
        assert_eq!(numbered(b"a\nb\n", false), "     1\ta\n     2\tb\n");
    }
}
