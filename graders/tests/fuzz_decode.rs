//! Fuzzing the decoders of the security grader (`security/decode/`),
//! which run on every byte of a workspace an agent wrote: random bytes,
//! and encodings of random bytes (base64, hex, escapes, char codes,
//! UTF-16, compressed streams, corrupted), never panic; a textual layer
//! is never longer than its input (every decoding maps several input
//! bytes to at most as many output bytes); a decompressed stream never
//! exceeds its cap. Runs in seconds in CI (`PROPTEST_CASES` raises the
//! count).

use base64::Engine as _;
use graders::security::decode_probe::{streams, text_layers};
use proptest::prelude::*;
use std::io::Write as _;

/// The output cap handed to decompression here.
const CAP: usize = 64 << 10;

/// Text that the decoders find layers in: encodings of `raw`.
fn encoded(raw: &[u8], how: u8) -> Vec<u8> {
    match how % 9 {
        0 => base64::engine::general_purpose::STANDARD
            .encode(raw)
            .into_bytes(),
        1 => base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(raw)
            .into_bytes(),
        2 => hex::encode(raw).into_bytes(),
        3 => raw
            .iter()
            .flat_map(|b| format!("\\x{b:02x}").into_bytes())
            .collect(),
        4 => raw
            .iter()
            .flat_map(|b| format!("%{b:02X}").into_bytes())
            .collect(),
        5 => format!("{raw:?}").into_bytes(),
        6 => raw.iter().flat_map(|&b| [b, 0]).collect(),
        7 => raw
            .iter()
            .flat_map(|b| format!("&#{b};").into_bytes())
            .collect(),
        _ => {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(raw).unwrap();
            z.finish().unwrap()
        }
    }
}

/// What every decoding of `data` must satisfy: it returns, and what it
/// returns is bounded.
fn check(data: &[u8]) -> Result<(), TestCaseError> {
    for (how, out) in text_layers(data) {
        prop_assert!(
            out.len() <= data.len(),
            "{how}: {} bytes out of {}",
            out.len(),
            data.len()
        );
    }
    let starts: Vec<usize> = (0..data.len()).step_by(97).collect();
    for (how, out, truncated) in streams(data, &starts, CAP) {
        prop_assert!(out.len() <= CAP, "{how}: {} bytes over the cap", out.len());
        prop_assert!(
            !truncated || out.len() == CAP,
            "{how}: truncated below the cap"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        check(&data)?;
    }

    #[test]
    fn encodings_nested_and_corrupted(
        raw in proptest::collection::vec(any::<u8>(), 0..512),
        hows in proptest::collection::vec(any::<u8>(), 1..4),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        prefix in "[ -~]{0,20}",
    ) {
        let mut data = raw;
        for h in hows {
            data = encoded(&data, h);
        }
        for (at, b) in flips {
            if !data.is_empty() {
                let i = at % data.len();
                data[i] ^= b;
            }
        }
        let mut text = prefix.into_bytes();
        text.push(b'"');
        text.extend_from_slice(&data);
        text.push(b'"');
        check(&text)?;
    }
}

/// A decompression bomb stops at the cap, marked truncated.
#[test]
fn bombs_stop_at_the_cap() {
    let zeros = vec![0u8; 8 * CAP];
    // zlib (encoding 8), then gzip.
    let bomb = encoded(&zeros, 8);
    let out = streams(&bomb, &[], CAP);
    assert!(
        out.iter().any(|(_, d, t)| *t && d.len() == CAP),
        "{:?}",
        out.iter()
            .map(|(h, d, t)| (h, d.len(), t))
            .collect::<Vec<_>>()
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&zeros).unwrap();
    let out = streams(&gz.finish().unwrap(), &[], CAP);
    assert!(
        out.iter()
            .any(|(h, d, t)| h.contains("gzip") && *t && d.len() == CAP)
    );
}
