//! Base64 and hex runs decoded so they can be rescanned: a secret planted
//! as `base64(key)` is a "deep" secret the scanner must still see. Only
//! decodings that are mostly printable text are rescanned; random bytes
//! (hashes, images) decode to binary and are dropped early.

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// Shortest base64 run decoded (24 chars = 18 bytes).
const MIN_B64: usize = 24;
/// Shortest hex run decoded (32 chars = 16 bytes).
const MIN_HEX: usize = 32;
/// Longest prefix of one run decoded; longer runs are decoded up to this.
const MAX_RUN: usize = 64 * 1024;

const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
static STD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
static URL: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

/// Bytes of a base64 (standard or URL-safe) or hex run, as a table: the
/// scan tests every byte of the text.
static RUN_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
        i += 1;
    }
    t
};

/// An encoded run and its printable decoding.
pub(crate) struct Decoded {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

fn printable(d: &[u8]) -> bool {
    if d.len() < 8 {
        return false;
    }
    let ok = d
        .iter()
        .filter(|&&c| (0x20..0x7f).contains(&c) || c == b'\n' || c == b'\r' || c == b'\t')
        .count();
    ok * 100 >= d.len() * 95
}

/// The first maximal run of bytes in `class` at least `min` long that
/// starts at or after `from`, as (start, end); `from` must be 0 or follow a
/// byte not in `class`. Text with no such run is crossed `min` bytes at a
/// time: if the byte `min - 1` ahead is not in the class, no long enough
/// run starts before it. The scanners' byte loops spent most of their time
/// on the short words (identifiers, numbers) of ordinary text.
pub(crate) fn next_long_run(
    b: &[u8],
    class: &[bool; 256],
    min: usize,
    mut from: usize,
) -> Option<(usize, usize)> {
    let n = b.len();
    loop {
        let probe = from.checked_add(min.max(1) - 1)?;
        if probe >= n {
            return None;
        }
        if !class[usize::from(b[probe])] {
            from = probe + 1;
            continue;
        }
        // The run holding `probe`: it cannot start before `from`.
        let mut s = probe;
        while s > from && class[usize::from(b[s - 1])] {
            s -= 1;
        }
        let mut e = probe + 1;
        while e < n && class[usize::from(b[e])] {
            e += 1;
        }
        if e - s >= min {
            return Some((s, e));
        }
        from = e + 1;
    }
}

/// Finds base64/hex runs in `text` and returns the printable decodings,
/// stopping once `budget` decoded bytes have been produced.
pub(crate) fn find(text: &str, budget: &mut usize) -> Vec<Decoded> {
    let b = text.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    // Shorter runs are never decoded: only the long ones are visited.
    let mut from = 0;
    while *budget > 0 {
        let Some((s, i)) = next_long_run(b, &RUN_BYTE, MIN_HEX.min(MIN_B64), from) else {
            break;
        };
        // `b[i]` (if any) is not a run byte.
        from = i + 1;
        let mut e = i;
        while e < n && e - i < 2 && b[e] == b'=' {
            e += 1;
        }
        let run = &b[s..i];
        let capped = &run[..run.len().min(MAX_RUN)];
        let all_hex = capped.iter().all(u8::is_ascii_hexdigit);
        let decoded = if all_hex && capped.len() >= MIN_HEX {
            let even = &capped[..capped.len() & !1];
            // Cheap reject: check the first 32 bytes before decoding it all.
            match hex::decode(&even[..even.len().min(64)]) {
                Ok(head) if printable(&head) => hex::decode(even).ok(),
                _ => None,
            }
        } else if !all_hex && capped.len() >= MIN_B64 {
            let url = capped.iter().any(|&c| c == b'-' || c == b'_');
            let std_ok = !capped.iter().any(|&c| c == b'-' || c == b'_');
            let eng: &GeneralPurpose = if url { &URL } else { &STD };
            if url && capped.iter().any(|&c| c == b'+' || c == b'/') {
                None
            } else {
                let _ = std_ok;
                let head_len = (capped.len().min(64)) & !3;
                match eng.decode(&capped[..head_len]) {
                    Ok(head) if printable(&head) => {
                        let whole = &capped[..capped.len() & !3];
                        let tail = &capped[capped.len() & !3..];
                        let mut d = eng.decode(whole).ok();
                        if let (Some(d), false, Ok(t)) =
                            (d.as_mut(), tail.is_empty(), eng.decode(tail))
                        {
                            d.extend(t);
                        }
                        d
                    }
                    _ => None,
                }
            }
        } else {
            None
        };
        if let Some(d) = decoded.filter(|d| printable(d)) {
            *budget = budget.saturating_sub(d.len());
            let text: String = d
                .iter()
                .map(|&c| if c.is_ascii() { c as char } else { ' ' })
                .collect();
            out.push(Decoded {
                start: s,
                end: e,
                text,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::scanner::{ScanConfig, Scanner};
    use base64::Engine;

    /// `next_long_run`, chained as the scanners chain it, yields exactly
    /// the maximal runs at least `min` long that a byte-by-byte scan finds,
    /// at every length around `min` and at the text's edges.
    #[test]
    fn long_runs_are_the_byte_scan_runs() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize
        };
        for case in 0..3000 {
            let n = next() % 200;
            // Runs of random lengths: mostly short, some long.
            let run_bias = 1 + case % 7;
            let text: Vec<u8> = (0..n)
                .map(|_| if next() % 8 < run_bias { b'a' } else { b' ' })
                .collect();
            let min = 1 + next() % 30;
            let mut want = Vec::new();
            let mut i = 0;
            while i < n {
                if !super::RUN_BYTE[usize::from(text[i])] {
                    i += 1;
                    continue;
                }
                let s = i;
                while i < n && super::RUN_BYTE[usize::from(text[i])] {
                    i += 1;
                }
                if i - s >= min {
                    want.push((s, i));
                }
            }
            let mut got = Vec::new();
            let mut from = 0;
            while let Some((s, e)) = super::next_long_run(&text, &super::RUN_BYTE, min, from) {
                got.push((s, e));
                from = e + 1;
            }
            assert_eq!(
                got,
                want,
                "min {min} text {:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn decoded_secrets_point_at_the_encoding() {
        let s = Scanner::new(ScanConfig::default());
        let key = "ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h";
        let enc = base64::engine::general_purpose::STANDARD.encode(format!("token={key}"));
        let text = format!("data:\n  blob: {enc}\n");
        let f = s.scan_bytes("k8s/secret.yaml", text.as_bytes());
        let hit = f.iter().find(|f| f.encoded).expect("encoded finding");
        assert_eq!(hit.value, key);
        assert_eq!(hit.secret_type, "github_pat");
        assert_eq!((hit.line, hit.col_start), (2, 9));
        assert_eq!(hit.col_end, 9 + enc.len());

        let hx = hex::encode("postgres://svc:Zq8v2Lm4Kp7Rt@db:5432/app");
        let f = s.scan_bytes("x.txt", format!("DSN_HEX {hx}").as_bytes());
        assert!(
            f.iter()
                .any(|f| f.encoded && f.secret_type == "connection_string"),
            "{f:?}"
        );
    }
}
