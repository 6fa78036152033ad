//! The decoders' answers as plain values, for the fuzz test of
//! `graders/tests/fuzz_decode.rs` (never panic, output bounded). Not for
//! production use: grading reaches the decoders through [`super::scan_tree`]
//! and the git scans.

use super::decode;

/// Every textual layer decoded out of `data` (radix and escape decodings,
/// char codes, UTF-16/32), as (how, bytes).
pub fn text_layers(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    decode::text_layers(data, &mut |l: decode::Layer| out.push((l.how, l.data)));
    out
}

/// Every compressed stream found in `data` by trial (`starts`: further
/// offsets where a headerless stream may begin), decompressed up to `cap`
/// bytes each, as (how, bytes, truncated).
pub fn streams(data: &[u8], starts: &[usize], cap: usize) -> Vec<(String, Vec<u8>, bool)> {
    decode::stream_candidates(data, starts, true)
        .into_iter()
        .map(|(at, method)| {
            let d = decode::decompress(data, at, method, cap);
            (d.how, d.data, d.truncated)
        })
        .collect()
}
