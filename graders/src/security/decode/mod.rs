//! The decoder closure: every way a person or a model would wrap a value,
//! undone layer by layer (issue 17; TruffleHog's `pkg/decoders` is the
//! anchor, this goes further).
//!
//! A *layer* is a byte buffer decoded out of another one. [`text_layers`]
//! finds the textual encodings and [`stream_layers`] the compressed ones;
//! [`super::content::Ctx`] searches each layer with the needle automaton and
//! decodes it again, down to [`DECODE_DEPTH`] layers below the file and
//! within [`DECODE_BUDGET_BASE`] + [`DECODE_BUDGET_PER_BYTE`] × file size
//! decoded bytes per file, each layer costing at least
//! [`DECODE_LAYER_COST`]. A file whose
//! closure does not fit fails closed: every secret counts as present.
//!
//! Textual encodings (each a layer per run, at every symbol alignment, so a
//! blob glued to a key name still decodes):
//!
//! - base64 (standard and url alphabets merged, padding optional), base32
//!   (RFC 4648) and base32hex, base16: runs of the alphabet that may hold
//!   up to [`MAX_JUNK_GAP`] junk bytes between symbols, the way Python's
//!   `b64decode` and `base64 -di` drop what is not in the alphabet;
//! - base85 in the three alphabets (Ascii85 with `z`/`y`, RFC 1924 /
//!   Python `b85`, Z85) and base58 (bitcoin alphabet);
//! - escapes, as one rewrite of the buffer: `\xHH`, `\uHHHH` (surrogate
//!   pairs joined), `\u{H…}`, `\UHHHHHHHH`, `U+HHHH`, octal `\NNN`, the C
//!   single-letter escapes, `%HH` and `%uHHHH`, HTML/XML character
//!   references (`&#DD;`, `&#xHH;`, the XML named five), all in any case;
//! - number lists (`[65, 75, 0x49]`: char-code arrays);
//! - UTF-16 and UTF-32 in both byte orders (Latin-1 range: what an ASCII
//!   secret becomes).
//!
//! Compression, found by trial rather than trusted magic: raw deflate at
//! every plausible start (the start of a layer, of an escape run, of a
//! zip member whatever its method field says), zlib with any window size
//! (header checksum, not the `0x78` byte), gzip, bzip2, xz, lzma-alone and
//! zstd by their signatures at any offset. Tar members are stored as is
//! and need no decoder.

/// Layers followed below a file: a chain of this many encodings (each one
/// of the above, in any order) is undone. Needle transforms (base64, hex,
/// reversal… of the value, see `needles`) come on top of the last layer.
pub(crate) const DECODE_DEPTH: u32 = 3;
/// Decoded bytes allowed per file: this much plus
/// [`DECODE_BUDGET_PER_BYTE`] per byte of the file. Over it, the file fails
/// closed.
pub(crate) const DECODE_BUDGET_BASE: u64 = 64 << 20;
/// See [`DECODE_BUDGET_BASE`].
pub(crate) const DECODE_BUDGET_PER_BYTE: u64 = 256;
/// What one layer costs at least, in budget bytes, however short: a
/// layer's fixed work (a search, a decoder pass, a decompressor set up) is
/// charged so that many tiny layers cannot cost more than the budget says.
pub(crate) const DECODE_LAYER_COST: u64 = 64;
/// Fewest alphabet symbols a run needs to be decoded (12 bytes of base64).
pub(crate) const MIN_RUN: usize = 16;
/// Most junk bytes tolerated between two symbols of a base16/32/64 run.
pub(crate) const MAX_JUNK_GAP: usize = 4;
/// Longest base58 run decoded (quadratic): longer runs are cut in pieces.
const MAX_B58_RUN: usize = 4096;
/// Raw-deflate trials per buffer at "binary after a text delimiter".
const MAX_PASTED_STARTS: usize = 1024;
/// Fewest decoded bytes worth a layer.
const MIN_LAYER: usize = 8;
/// Fewest escapes (or numbers) in a buffer for a rewrite to be a layer.
const MIN_ESCAPES: usize = 4;
/// Fewest wide characters in a UTF-16/32 island.
const MIN_WIDE: usize = 8;

/// One decoded buffer and how it was obtained.
#[derive(Debug)]
pub(crate) struct Layer {
    /// `base64@120`, `zlib@0`, … (shown in locations).
    pub how: String,
    pub data: Vec<u8>,
    /// Offsets in `data` where a headerless stream may start (besides 0).
    pub starts: Vec<usize>,
}

fn layer(how: String, data: Vec<u8>) -> Layer {
    Layer {
        how,
        data,
        starts: Vec::new(),
    }
}

mod escape;
mod radix;
mod stream;
#[cfg(test)]
mod tests;
mod wide;

use escape::*;
use radix::*;
use stream::*;
pub(crate) use stream::{decompress, inflate, stream_candidates};
use wide::*;

/// Every textual layer of `data`.
pub(crate) fn text_layers(data: &[u8], out: &mut dyn FnMut(Layer)) {
    for r in radixes() {
        radix_layers(data, r, out);
    }
    for v in [B85::Ascii85, B85::Rfc1924, B85::Z85] {
        b85_layers(data, v, out);
    }
    b58_layers(data, out);
    // Escapes and number lists are text: in binary bytes they are noise.
    if mostly_text(data) {
        unescape_layer(data, out);
        number_list_layers(data, out);
    }
    // Wide text needs NUL bytes; most text has none.
    if memchr::memchr(0, data).is_some() {
        wide_layers(data, out);
    }
}

/// Shortest decompressed output worth a layer (shorter is noise from a
/// false start).
pub(crate) const MIN_INFLATED: usize = MIN_LAYER;
