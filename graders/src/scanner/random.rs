//! The random-token rule (seed 000, "What is redacted"): a token of 20+
//! characters from `[A-Za-z0-9+/._\-@=]` is split on `/ . _ - @ =` and each
//! part of 16+ characters is judged against an entropy floor *for its
//! alphabet* — hex carries at most 4 bits a character, so one floor for all
//! alphabets would miss most hex keys.
//!
//! Skipped: `sha512-`/`sha256-` integrity strings, camelCase/snake identifiers
//! (few character-class transitions), the scanned file's own path, and
//! 40/64-hex values only where the preceding 256 bytes of the line mark a git
//! SHA or checksum (or the file is a lockfile / go.sum). Anywhere else such a
//! value is treated as a key. Over-redaction is accepted; under-redaction
//! is not.

/// Minimum token length.
const MIN_TOKEN: usize = 20;
/// Minimum part length judged.
const MIN_PART: usize = 16;
/// Segments longer than this are data blobs (images, archives), left to the
/// decoder rather than reported whole.
const MAX_SEGMENT: usize = 1024;
/// Look-back for SHA/checksum context, in bytes.
const LOOKBACK: usize = 256;

/// Words that mark a nearby 40/64-hex value as a hash, not a key.
const SHA_CONTEXT: &[&str] = &[
    "index",
    "commit",
    "@",
    "#",
    "revision",
    "rev",
    "checksum",
    "resolved",
    "sha",
    "hash",
    "digest",
    "integrity",
    "checkout",
    "reset",
    "cherry-pick",
    "revert",
    "sum",
    "object",
    "tree",
    "parent",
    "blob",
    "merge",
    "head",
    "tag",
];

/// Lockfiles whose hex values are checksums.
fn is_lockfile(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name == "go.sum"
        || name.ends_with(".lock")
        || name.ends_with("-lock.json")
        || name.ends_with("-lock.yaml")
        || name.ends_with(".sum")
        || name == "packed-refs"
}

fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'.' | b'_' | b'-' | b'@' | b'=')
}

/// Pushes byte spans of random-looking segments; `skip` spans (e.g. public
/// PEM blocks) are never reported.
pub(crate) fn find(
    text: &str,
    lower: &str,
    path: &str,
    skip: &[(usize, usize)],
    out: &mut Vec<(usize, usize)>,
) {
    let b = text.as_bytes();
    let n = b.len();
    let lockfile = is_lockfile(path);
    // Lockfiles and go.sum are checksums and integrity hashes throughout.
    if lockfile {
        return;
    }
    let mut i = 0;
    while i < n {
        if !is_token_byte(b[i]) {
            i += 1;
            continue;
        }
        let ts = i;
        while i < n && is_token_byte(b[i]) {
            i += 1;
        }
        let te = i;
        if te - ts < MIN_TOKEN || skip.iter().any(|&(s, e)| ts >= s && ts < e) {
            continue;
        }
        let tok = &text[ts..te];
        let ltok = &lower[ts..te];
        if ltok.starts_with("sha512-")
            || ltok.starts_with("sha384-")
            || ltok.starts_with("sha256-")
            || ltok.starts_with("sha1-")
        {
            continue;
        }
        if !path.is_empty()
            && (tok == path || tok.ends_with(path) || path.ends_with(tok.trim_start_matches("./")))
        {
            continue;
        }
        let line_start = text[..ts].rfind('\n').map_or(0, |p| p + 1);
        // Segments: split on '.', '@' and '=' (keeping trailing '=' padding).
        let tb = tok.as_bytes();
        let mut s = 0;
        while s < tb.len() {
            let mut e = s;
            while e < tb.len() && !matches!(tb[e], b'.' | b'@' | b'=') {
                e += 1;
            }
            let mut seg_end = e;
            while seg_end < tb.len() && tb[seg_end] == b'=' {
                seg_end += 1;
            }
            // Padding only if the '=' run ends the token or a dotted part.
            if seg_end > e && seg_end < tb.len() && !matches!(tb[seg_end], b'.' | b'@') {
                seg_end = e;
            }
            if e - s >= MIN_PART && e - s <= MAX_SEGMENT {
                let seg = &tok[s..e];
                if segment_is_random(seg, |part_off, part_len| {
                    let hex_len = part_len == 40 || part_len == 64;
                    if !hex_len {
                        return false;
                    }
                    if lockfile {
                        return true;
                    }
                    let abs = ts + s + part_off;
                    let from = abs.saturating_sub(LOOKBACK).max(line_start);
                    let ctx = &lower.as_bytes()[from..abs];
                    SHA_CONTEXT.iter().any(|w| contains(ctx, w.as_bytes()))
                }) {
                    out.push((ts + s, ts + seg_end));
                }
            }
            s = seg_end.max(e) + 1;
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// True when some `/ _ -` separated part of `seg` is random for its
/// alphabet. `sha_ctx(offset, len)` says a hex part is a hash in context.
fn segment_is_random(seg: &str, sha_ctx: impl Fn(usize, usize) -> bool) -> bool {
    let b = seg.as_bytes();
    let mut s = 0;
    while s < b.len() {
        let mut e = s;
        while e < b.len() && !matches!(b[e], b'/' | b'_' | b'-') {
            e += 1;
        }
        if e - s >= MIN_PART && part_is_random(&seg[s..e]) {
            let hex = b[s..e].iter().all(u8::is_ascii_hexdigit);
            if !(hex && sha_ctx(s, e - s)) {
                return true;
            }
        }
        s = e + 1;
    }
    false
}

/// Shannon entropy in bits per character.
fn entropy(s: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &c in s {
        counts[c as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Judges one separator-free part against the floor for its alphabet.
pub(crate) fn part_is_random(p: &str) -> bool {
    let b = p.as_bytes();
    let (mut lower, mut upper, mut digit, mut other) = (0usize, 0usize, 0usize, 0usize);
    for &c in b {
        match c {
            b'a'..=b'z' => lower += 1,
            b'A'..=b'Z' => upper += 1,
            b'0'..=b'9' => digit += 1,
            _ => other += 1,
        }
    }
    let n = b.len();
    let is_hex = b.iter().all(u8::is_ascii_hexdigit) && (lower == 0 || upper == 0);
    if is_hex {
        // Needs both digits and letters: all-digit runs are ids/timestamps.
        let letters = n - digit;
        if digit == 0 || letters == 0 {
            return false;
        }
        return entropy(b) >= 3.0;
    }
    let classes = usize::from(lower > 0) + usize::from(upper > 0) + usize::from(digit > 0);
    if classes < 2 {
        return false;
    }
    // Identifiers (camelCase, PascalCase, version strings) change character
    // class rarely; random strings change class at most positions.
    let class_of = |c: u8| match c {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    let transitions = b
        .windows(2)
        .filter(|w| class_of(w[0]) != class_of(w[1]))
        .count();
    if transitions * 10 < n * 3 {
        return false;
    }
    let floor = if other > 0 { 3.6 } else { 3.3 };
    entropy(b) >= floor && n - digit >= 4
}

#[cfg(test)]
mod tests {
    use super::part_is_random;
    use crate::scanner::rules::testutil::check;

    #[test]
    fn parts() {
        assert!(part_is_random("9f2c4e7a1b3d5f60"));
        assert!(part_is_random("Zk3mQ8pL2xN7vR4tW9yB"));
        assert!(!part_is_random("authenticationProvider"));
        assert!(!part_is_random("HTTPSConnectionPool"));
        assert!(!part_is_random("12345678901234567890"));
        assert!(!part_is_random("internationalization"));
    }

    #[test]
    fn random_tokens() {
        check(
            "generic_secret",
            &[
                (
                    "the key is 9f2c4e7a1b3d5f608e2a4c6b in prose",
                    "9f2c4e7a1b3d5f608e2a4c6b",
                ),
                (
                    "X-Api: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
                (
                    "deploy c2a9f1e07b3d48c6a5e2f90b1d7c3e8a4f6b2d90 now",
                    "c2a9f1e07b3d48c6a5e2f90b1d7c3e8a4f6b2d90",
                ),
                (
                    "blob: q8Zk3Vb7Lm2Np9Rt4Wx6Yc1Df5Gh0Jk8Mn3Pq7Ss+0=",
                    "q8Zk3Vb7Lm2Np9Rt4Wx6Yc1Df5Gh0Jk8Mn3Pq7Ss+0=",
                ),
            ],
            &[
                (
                    "commit c2a9f1e07b3d48c6a5e2f90b1d7c3e8a4f6b2d90",
                    "git SHA in commit context",
                ),
                ("index 3f1a2b4..9e8d7c6 100644", "diff index line"),
                (
                    "\"integrity\": \"sha512-Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9wB3d==\"",
                    "integrity string",
                ),
                (
                    "import { authenticationProviderFactory } from './src/components/authenticationProvider'",
                    "identifiers and paths",
                ),
                (
                    "uuid = 123e4567-e89b-12d3-a456-426614174000",
                    "UUID parts are short",
                ),
                (
                    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                    "checksum context",
                ),
            ],
        );
    }
}
