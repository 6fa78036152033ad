//! Needles: every byte string whose presence means "this secret is still
//! here", matched all at once with one Aho-Corasick automaton.
//!
//! Per planted value we build (the transforms spec.md §6 lists):
//!
//! - the raw value, and the value with all ASCII whitespace removed (a PEM
//!   block or a wrapped value, found in the normalised view below);
//! - base64, standard and url-safe, at the three byte alignments, so the
//!   value is found inside a larger encoded blob: `k` zero bytes (k = 0, 1,
//!   2) are prepended, the first 4-char group (which depends on the prefix)
//!   and the last partial group (which depends on what follows) are
//!   dropped, and the stable inner part is the needle;
//! - hex, lower and upper case, and `\x41\x4b…` escapes;
//! - percent-encoding of every byte outside `[A-Za-z0-9-._~]` (both hex
//!   cases), reversal, rot13, UTF-16 LE and BE;
//! - for multi-line values (PEM), each body line of at least 16 bytes;
//! - fragments (see [`random_tokens`]): every window of
//!   `max(12, ceil(len/2))` bytes of each random-looking token of the
//!   value, which catches a value split across variables, lines or files.
//!
//! The random tokens themselves also get the encodings above, so
//! `base64(password)` is found even when the value is a whole URL.
//!
//! Chains of encodings, char-code arrays, junk between symbols and every
//! compression format are undone before this search by the decoder
//! closure ([`super::decode`]); the needles then cover the last step.
//! Not covered (spec.md, "Honest limits"): XOR and other keyed transforms,
//! and pieces shorter than the fragment length that are not adjacent
//! string literals.

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use std::collections::BTreeMap;

/// Shortest fragment of a random token that counts as the secret. Twelve
/// random alphanumerics are ~71 bits: they do not occur by chance.
pub(crate) const MIN_FRAGMENT: usize = 12;
/// Shortest encoded needle (base64 inner part) kept.
const MIN_ENCODED: usize = 12;
/// Shortest PEM body line kept.
const MIN_PEM_LINE: usize = 16;

/// How a needle was derived from the value; shown in locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Raw,
    NoWhitespace,
    Base64,
    Base64Url,
    HexLower,
    HexUpper,
    HexEscaped,
    UrlEncoded,
    Reversed,
    Rot13,
    Utf16Le,
    Utf16Be,
    PemLine,
    Fragment,
}

impl Kind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Raw => "raw",
            Kind::NoWhitespace => "whitespace removed",
            Kind::Base64 => "base64",
            Kind::Base64Url => "base64url",
            Kind::HexLower => "hex",
            Kind::HexUpper => "HEX",
            Kind::HexEscaped => "\\x escapes",
            Kind::UrlEncoded => "url-encoded",
            Kind::Reversed => "reversed",
            Kind::Rot13 => "rot13",
            Kind::Utf16Le => "utf-16le",
            Kind::Utf16Be => "utf-16be",
            Kind::PemLine => "PEM line",
            Kind::Fragment => "fragment",
        }
    }
}

/// One hit: which secret, how it was encoded, and where (byte offset).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit {
    pub secret: usize,
    pub kind: Kind,
    pub offset: usize,
}

/// The automaton over every needle of every secret.
pub(crate) struct Needles {
    ac: Option<AhoCorasick>,
    /// Pattern id -> the (secret, kind) pairs that own that byte string.
    owners: Vec<Vec<(usize, Kind)>>,
    secrets: usize,
}

impl Needles {
    /// Builds the automaton for `values` (index = secret number).
    pub(crate) fn build<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Needles {
        let mut table: BTreeMap<Vec<u8>, Vec<(usize, Kind)>> = BTreeMap::new();
        let mut secrets = 0;
        for (i, value) in values.into_iter().enumerate() {
            secrets = i + 1;
            for (needle, kind) in needles_for(value) {
                let owners = table.entry(needle).or_default();
                if !owners.iter().any(|&(s, _)| s == i) {
                    owners.push((i, kind));
                }
            }
        }
        let (patterns, owners): (Vec<_>, Vec<_>) = table.into_iter().unzip();
        let ac = if patterns.is_empty() {
            None
        } else {
            // Standard semantics are required for overlapping search, which
            // we need: one secret's fragment must not hide another's needle.
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(&patterns)
                    .expect("needle automaton within default size limits"),
            )
        };
        Needles {
            ac,
            owners,
            secrets,
        }
    }

    /// How many secrets the automaton was built for.
    pub(crate) fn secrets(&self) -> usize {
        self.secrets
    }

    /// The best hit of each secret in `hay` (at most one per secret): the
    /// most direct kind (raw before encodings before fragments), then the
    /// earliest. Stops early once every secret has a raw hit.
    pub(crate) fn find(&self, hay: &[u8]) -> Vec<Hit> {
        let Some(ac) = &self.ac else {
            return Vec::new();
        };
        let mut best: Vec<Option<Hit>> = vec![None; self.secrets];
        let mut raw_left = self.secrets;
        for m in ac.find_overlapping_iter(hay) {
            for &(secret, kind) in &self.owners[m.pattern().as_usize()] {
                let better = best[secret].is_none_or(|b| kind < b.kind);
                if better {
                    if kind == Kind::Raw {
                        raw_left -= 1;
                    }
                    best[secret] = Some(Hit {
                        secret,
                        kind,
                        offset: m.start(),
                    });
                }
            }
            if raw_left == 0 {
                break;
            }
        }
        best.into_iter().flatten().collect()
    }
}

/// Every needle for one value.
pub(crate) fn needles_for(value: &[u8]) -> Vec<(Vec<u8>, Kind)> {
    let mut out = Vec::new();
    if value.is_empty() {
        return out;
    }
    out.push((value.to_vec(), Kind::Raw));
    let no_ws: Vec<u8> = value
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if no_ws != value && no_ws.len() >= MIN_FRAGMENT {
        out.push((no_ws, Kind::NoWhitespace));
    }
    encodings(value, &mut out);
    if value.contains(&b'\n') {
        for line in value.split(|&b| b == b'\n') {
            let line = line.trim_ascii();
            if line.len() >= MIN_PEM_LINE && !line.starts_with(b"-----") {
                out.push((line.to_vec(), Kind::PemLine));
            }
        }
    }
    for token in random_tokens(value) {
        if token != value {
            encodings(token, &mut out);
        }
        let len = token.len().div_ceil(2).max(MIN_FRAGMENT);
        for window in token.windows(len) {
            out.push((window.to_vec(), Kind::Fragment));
        }
    }
    out
}

/// The parts of a value that are random, and so safe to match by fragment.
///
/// The value is cut into maximal ASCII-alphanumeric runs. A run is random if
/// it is at least [`MIN_FRAGMENT`] long, has at least 6 distinct bytes, and
/// mixes at least two of lower/upper/digit (or is the whole value). This
/// drops scheme and host words (`postgres`, `localhost`), provider prefixes
/// (`ghp`, `sk`, `live`, `xoxb` are short runs cut at `_`/`-`) and key names,
/// while a 16-char password or a 40-char key survives. A run must also hold
/// a digit, so words such as `DefaultEndpointsProtocol` never count. `AKIA` stays glued to
/// its random tail, so a fragment always carries at least 8 random bytes.
pub(crate) fn random_tokens(value: &[u8]) -> Vec<&[u8]> {
    value
        .split(|b| !b.is_ascii_alphanumeric())
        .filter(|t| {
            if t.len() < MIN_FRAGMENT {
                return false;
            }
            let mut seen = [false; 256];
            let mut distinct = 0;
            for &b in *t {
                if !seen[usize::from(b)] {
                    seen[usize::from(b)] = true;
                    distinct += 1;
                }
            }
            let classes = [
                t.iter().any(u8::is_ascii_lowercase),
                t.iter().any(u8::is_ascii_uppercase),
                t.iter().any(u8::is_ascii_digit),
            ]
            .iter()
            .filter(|&&c| c)
            .count();
            // A run without a digit is a word (`DefaultEndpointsProtocol`,
            // an account name) that the task's own tests and docs may well
            // contain; random keys of 12+ chars nearly always have a digit.
            let digits = t.iter().filter(|b| b.is_ascii_digit()).count();
            distinct >= 6
                && (classes >= 2 || t.len() == value.len())
                && (digits >= 1 || t.len() == value.len())
        })
        .collect()
}

/// Encoded forms of `core`, appended to `out`.
fn encodings(core: &[u8], out: &mut Vec<(Vec<u8>, Kind)>) {
    for (kind, std) in [(Kind::Base64, true), (Kind::Base64Url, false)] {
        for k in 0..3 {
            let mut buf = vec![0u8; k];
            buf.extend_from_slice(core);
            let enc = if std {
                STANDARD_NO_PAD.encode(&buf)
            } else {
                URL_SAFE_NO_PAD.encode(&buf)
            };
            let start = if k == 0 { 0 } else { 4 };
            let end = buf.len() / 3 * 4;
            if end > start && end - start >= MIN_ENCODED {
                out.push((enc.as_bytes()[start..end].to_vec(), kind));
            }
        }
    }
    out.push((hex::encode(core).into_bytes(), Kind::HexLower));
    out.push((hex::encode_upper(core).into_bytes(), Kind::HexUpper));
    let mut esc = Vec::with_capacity(core.len() * 4);
    for b in core {
        esc.extend_from_slice(format!("\\x{b:02x}").as_bytes());
    }
    out.push((esc, Kind::HexEscaped));
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
    if core.iter().any(|&b| !unreserved(b)) {
        for upper in [true, false] {
            let mut pct = Vec::with_capacity(core.len() * 3);
            for &b in core {
                if unreserved(b) {
                    pct.push(b);
                } else if upper {
                    pct.extend_from_slice(format!("%{b:02X}").as_bytes());
                } else {
                    pct.extend_from_slice(format!("%{b:02x}").as_bytes());
                }
            }
            out.push((pct, Kind::UrlEncoded));
        }
    }
    let rev: Vec<u8> = core.iter().rev().copied().collect();
    if rev != core {
        out.push((rev, Kind::Reversed));
    }
    let rot: Vec<u8> = core.iter().map(|&b| rot13(b)).collect();
    if rot != core {
        out.push((rot, Kind::Rot13));
    }
    out.push((core.iter().flat_map(|&b| [b, 0]).collect(), Kind::Utf16Le));
    out.push((core.iter().flat_map(|&b| [0, b]).collect(), Kind::Utf16Be));
}

fn rot13(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => (b - b'a' + 13) % 26 + b'a',
        b'A'..=b'Z' => (b - b'A' + 13) % 26 + b'A',
        _ => b,
    }
}

fn is_quote(b: u8) -> bool {
    matches!(b, b'"' | b'\'' | b'`')
}

/// Bytes that may glue two string literals into one value: whitespace,
/// line continuations and the concatenation operators of common languages
/// (`+`, `.`, `..`, `&`, `||`), commas and brackets (`"".join(["a", "b"])`).
fn is_glue(b: u8) -> bool {
    b.is_ascii_whitespace() || b"+.,&|()[]\\".contains(&b)
}

/// The normalised view of a text: backslash-newline continuations removed,
/// every "quote, glue, quote" sequence between two string pieces removed,
/// then all ASCII whitespace removed. `"AKIA" "XYZ"`, `'AKIA' + 'XYZ'`, a
/// parenthesised multi-line concatenation and a line-wrapped base64 blob all
/// become contiguous. `None` when the view equals the input (nothing to
/// search twice). Linear: each glue byte is looked at from one quote only.
pub(crate) fn normalise(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    let mut changed = false;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if b == b'\\' {
            if data.get(i + 1) == Some(&b'\n') {
                i += 2;
                changed = true;
                continue;
            }
            if data.get(i + 1) == Some(&b'\r') && data.get(i + 2) == Some(&b'\n') {
                i += 3;
                changed = true;
                continue;
            }
        }
        if is_quote(b) {
            let mut j = i + 1;
            while j < data.len() && is_glue(data[j]) {
                j += 1;
            }
            if j < data.len() && is_quote(data[j]) {
                i = j + 1;
                changed = true;
                continue;
            }
        }
        if b.is_ascii_whitespace() {
            changed = true;
        } else {
            out.push(b);
        }
        i += 1;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(value: &str, hay: &[u8]) -> bool {
        let n = Needles::build([value.as_bytes()]);
        let direct = !n.find(hay).is_empty();
        direct || normalise(hay).is_some_and(|v| !n.find(&v).is_empty())
    }

    const KEY: &str = "AKIAQ7XK2M9RZT4WB3VN";

    #[test]
    fn base64_alignments() {
        for pre in ["", "x", "xy", "xyz"] {
            for post in ["", "!", "!!"] {
                let blob = format!("{pre}{KEY}{post}");
                let std = base64::engine::general_purpose::STANDARD.encode(&blob);
                assert!(found(KEY, std.as_bytes()), "{pre:?} {post:?}");
                let url = URL_SAFE_NO_PAD.encode(&blob);
                assert!(found(KEY, url.as_bytes()));
            }
        }
    }

    #[test]
    fn split_literals() {
        assert!(found(KEY, b"k = \"AKIAQ7XK\" \"2M9RZT4WB3VN\"\n"));
        assert!(found(KEY, b"k = 'AKIA' + 'Q7XK2M' + '9RZT4WB3VN'"));
        assert!(found(KEY, b"k = (\n  \"AKIAQ7\"\n  \"XK2M9RZT4WB3VN\"\n)"));
        assert!(found(KEY, b"k = \"AKIAQ7XK\\\n2M9RZT4WB3VN\""));
        assert!(found(KEY, b"''.join(['AKIAQ7XK', '2M9RZT4WB3VN'])"));
    }

    #[test]
    fn prefixes_are_not_fragments() {
        let pg = "postgres://postgres:Zq8vLr2NxW5tKp3Y@localhost:5432/app";
        let fixed = b"DATABASE_URL=postgres://postgres:${DB_PASSWORD}@localhost:5432/app";
        assert!(!found(pg, fixed));
        assert!(found(pg, b"pw = 'Zq8vLr2NxW5tKp3Y'"));
        assert!(found(pg, b"pw = 'Zq8vLr2N' 'xW5tKp3Y'"));
        let gh = "ghp_R4nd0mT0k3nV4lu3Xyz12345abcdEFGH6789";
        assert!(!found(
            gh,
            b"token = ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"
        ));
        assert!(!found(KEY, b"AKIAIOSFODNN7EXAMPLE"));
        assert!(found(KEY, b"part = 'Q7XK2M9RZT4W'"));
    }

    #[test]
    fn encodings_found() {
        assert!(found(KEY, hex::encode(KEY).as_bytes()));
        assert!(found(KEY, hex::encode_upper(KEY).as_bytes()));
        let rev: String = KEY.chars().rev().collect();
        assert!(found(KEY, rev.as_bytes()));
        let url = "p@ss:W0rd/Zq8vLr2NxW5tKp3Y";
        assert!(found(url, b"p%40ss%3AW0rd%2FZq8vLr2NxW5tKp3Y".as_slice()));
        let utf16: Vec<u8> = KEY.bytes().flat_map(|b| [b, 0]).collect();
        assert!(found(KEY, &utf16));
        let wrapped = format!("{}\n{}", &KEY[..7], &KEY[7..]);
        assert!(found(KEY, wrapped.as_bytes()));
    }

    #[test]
    fn normalise_is_identity_on_plain() {
        assert_eq!(normalise(b"abc"), None);
        assert_eq!(normalise(b"a \"b\" + \"c\"").unwrap(), b"a\"bc\"");
    }
}
