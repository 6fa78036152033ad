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

use flate2::{Decompress, FlushDecompress, Status};
use std::io::{Read, Write};

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

// ---------------------------------------------------------------- radix

/// A power-of-two alphabet: symbol value per byte (`0xff` = not in it).
struct Radix {
    name: &'static str,
    table: [u8; 256],
    bits: u32,
}

fn radix(name: &'static str, bits: u32, pairs: &[(&[u8], u8)]) -> Radix {
    let mut table = [0xffu8; 256];
    for (chars, first) in pairs {
        for (i, &c) in chars.iter().enumerate() {
            table[usize::from(c)] = first + i as u8;
        }
    }
    Radix { name, table, bits }
}

fn radixes() -> &'static [Radix; 4] {
    static R: std::sync::OnceLock<[Radix; 4]> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        let upper = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let lower = b"abcdefghijklmnopqrstuvwxyz";
        [
            radix(
                "base64",
                6,
                &[
                    (upper, 0),
                    (lower, 26),
                    (b"0123456789", 52),
                    (b"+", 62),
                    (b"-", 62),
                    (b"/", 63),
                    (b"_", 63),
                ],
            ),
            radix("base32", 5, &[(upper, 0), (b"234567", 26)]),
            radix(
                "base32hex",
                5,
                &[(b"0123456789", 0), (b"ABCDEFGHIJKLMNOPQRSTUV", 10)],
            ),
            radix(
                "base16",
                4,
                &[(b"0123456789", 0), (b"abcdef", 10), (b"ABCDEF", 10)],
            ),
        ]
    })
}

/// Junk a lenient decoder drops and a writer may sprinkle: printable ASCII
/// and whitespace, minus quotes (which end a literal) and `=` (padding ends
/// a base64/base32 chunk: what follows is a new one).
/// Letters and digits are never junk: sprinkled junk is punctuation, and
/// counting letters as junk would join a base32 run across ordinary text.
fn is_junk(b: u8) -> bool {
    (b.is_ascii_punctuation() || b.is_ascii_whitespace())
        && !matches!(b, b'"' | b'\'' | b'`' | b'=')
}

/// Runs of `r`'s alphabet with at most [`MAX_JUNK_GAP`] junk bytes between
/// symbols, decoded at every symbol alignment.
fn radix_layers(data: &[u8], r: &Radix, out: &mut dyn FnMut(Layer)) {
    let per_group = match r.bits {
        6 => 4,
        5 => 8,
        _ => 2,
    };
    let mut syms: Vec<u8> = Vec::new();
    let mut start = 0;
    let mut gap = 0;
    let mut i = 0;
    while i <= data.len() {
        let b = data.get(i).copied();
        let v = b.map_or(0xff, |b| r.table[usize::from(b)]);
        if v != 0xff {
            if syms.is_empty() {
                start = i;
            }
            syms.push(v);
            gap = 0;
        } else if b.is_some_and(is_junk) && gap < MAX_JUNK_GAP && !syms.is_empty() {
            gap += 1;
        } else {
            if syms.len() >= MIN_RUN {
                for shift in 0..per_group.min(syms.len() - MIN_RUN + 1) {
                    let bytes = pack_bits(&syms[shift..], r.bits);
                    if bytes.len() >= MIN_LAYER {
                        out(layer(format!("{}@{start}+{shift}", r.name), bytes));
                    }
                }
            }
            syms.clear();
            gap = 0;
        }
        i += 1;
    }
}

/// Symbols of `bits` bits each, packed big-endian into bytes; a trailing
/// partial byte is dropped.
fn pack_bits(syms: &[u8], bits: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(syms.len() * bits as usize / 8);
    let mut acc: u32 = 0;
    let mut n = 0;
    for &s in syms {
        acc = (acc << bits) | u32::from(s);
        n += bits;
        if n >= 8 {
            n -= 8;
            out.push((acc >> n) as u8);
            acc &= (1 << n) - 1;
        }
    }
    out
}

// ---------------------------------------------------------------- base85

#[derive(Clone, Copy)]
enum B85 {
    Ascii85,
    Rfc1924,
    Z85,
}

fn b85_table(v: B85) -> &'static [u8; 256] {
    static T: std::sync::OnceLock<[[u8; 256]; 3]> = std::sync::OnceLock::new();
    let all = T.get_or_init(|| {
        let mut t = [[0xffu8; 256]; 3];
        for c in b'!'..=b'u' {
            t[0][usize::from(c)] = c - b'!';
        }
        let rfc = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
        let z85 = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
        for (i, &c) in rfc.iter().enumerate() {
            t[1][usize::from(c)] = i as u8;
        }
        for (i, &c) in z85.iter().enumerate() {
            t[2][usize::from(c)] = i as u8;
        }
        t
    });
    &all[v as usize]
}

/// Base85 runs (whitespace inside allowed), decoded at the five alignments.
fn b85_layers(data: &[u8], v: B85, out: &mut dyn FnMut(Layer)) {
    let table = b85_table(v);
    let name = match v {
        B85::Ascii85 => "ascii85",
        B85::Rfc1924 => "base85",
        B85::Z85 => "z85",
    };
    let is_sym = |b: u8| {
        table[usize::from(b)] != 0xff || (matches!(v, B85::Ascii85) && matches!(b, b'z' | b'y'))
    };
    let mut i = 0;
    while i < data.len() {
        if !is_sym(data[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut syms: Vec<u8> = Vec::new();
        let mut gap = 0;
        while i < data.len() {
            let b = data[i];
            if is_sym(b) {
                syms.push(b);
                gap = 0;
            } else if b.is_ascii_whitespace() && gap < MAX_JUNK_GAP {
                gap += 1;
            } else {
                break;
            }
            i += 1;
        }
        if syms.len() >= MIN_RUN {
            for shift in 0..5.min(syms.len() - MIN_RUN + 1) {
                let bytes = b85_decode(&syms[shift..], table, v);
                if bytes.len() >= MIN_LAYER {
                    out(layer(format!("{name}@{start}+{shift}"), bytes));
                }
            }
        }
    }
}

fn b85_decode(syms: &[u8], table: &[u8; 256], v: B85) -> Vec<u8> {
    let mut out = Vec::with_capacity(syms.len() * 4 / 5 + 4);
    let mut group = [0u8; 5];
    let mut n = 0;
    let flush = |group: &[u8; 5], n: usize, out: &mut Vec<u8>| {
        let mut acc: u64 = 0;
        for (k, &d) in group.iter().enumerate() {
            acc = acc * 85 + u64::from(if k < n { d } else { 84 });
        }
        let bytes = (acc as u32).to_be_bytes();
        out.extend_from_slice(&bytes[..n.saturating_sub(1).min(4)]);
    };
    for &c in syms {
        if matches!(v, B85::Ascii85) && n == 0 && (c == b'z' || c == b'y') {
            out.extend_from_slice(if c == b'z' { &[0; 4] } else { b"    " });
            continue;
        }
        let d = table[usize::from(c)];
        if d == 0xff {
            continue;
        }
        group[n] = d;
        n += 1;
        if n == 5 {
            flush(&group, 5, &mut out);
            n = 0;
        }
    }
    if n > 1 {
        flush(&group, n, &mut out);
    }
    out
}

// ---------------------------------------------------------------- base58

const B58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Base58 runs that mix at least two character classes (a word is not
/// base58), decoded as one big number each.
fn b58_layers(data: &[u8], out: &mut dyn FnMut(Layer)) {
    let mut table = [0xffu8; 256];
    for (i, &c) in B58.iter().enumerate() {
        table[usize::from(c)] = i as u8;
    }
    let mut i = 0;
    while i < data.len() {
        if table[usize::from(data[i])] == 0xff {
            i += 1;
            continue;
        }
        let start = i;
        while i < data.len() && table[usize::from(data[i])] != 0xff {
            i += 1;
        }
        let run = &data[start..i];
        let classes = [
            run.iter().any(u8::is_ascii_lowercase),
            run.iter().any(u8::is_ascii_uppercase),
            run.iter().any(u8::is_ascii_digit),
        ]
        .iter()
        .filter(|&&c| c)
        .count();
        if run.len() < MIN_RUN || classes < 2 {
            continue;
        }
        for (k, piece) in run.chunks(MAX_B58_RUN).enumerate() {
            let bytes = b58_decode(piece, &table);
            if bytes.len() >= MIN_LAYER {
                out(layer(format!("base58@{}", start + k * MAX_B58_RUN), bytes));
            }
        }
    }
}

fn b58_decode(run: &[u8], table: &[u8; 256]) -> Vec<u8> {
    // Little-endian base-256 digits of the number.
    let mut num: Vec<u8> = Vec::with_capacity(run.len());
    for &c in run {
        let mut carry = u32::from(table[usize::from(c)]);
        for d in num.iter_mut() {
            carry += u32::from(*d) * 58;
            *d = carry as u8;
            carry >>= 8;
        }
        while carry > 0 {
            num.push(carry as u8);
            carry >>= 8;
        }
    }
    let zeros = run.iter().take_while(|&&c| c == b'1').count();
    let mut out = vec![0u8; zeros];
    out.extend(num.iter().rev());
    out
}

// ---------------------------------------------------------------- escapes

fn hex_val(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// Up to `max` hex digits at `data[at..]`, at least `min`.
fn hex_at(data: &[u8], at: usize, min: usize, max: usize) -> Option<(u32, usize)> {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max {
        match data.get(at + n).copied().and_then(hex_val) {
            Some(d) => v = v.wrapping_mul(16).wrapping_add(d),
            None => break,
        }
        n += 1;
    }
    (n >= min).then_some((v, n))
}

/// Pushes code point `cp` as UTF-8, or as one byte when `latin1` and it
/// fits (`html.unescape(s).encode("latin-1")`: binary written as text).
fn push_cp(out: &mut Vec<u8>, cp: u32, latin1: bool) {
    if latin1 && cp <= 0xff {
        out.push(cp as u8);
        return;
    }
    push_char(out, cp);
}

fn push_char(out: &mut Vec<u8>, cp: u32) {
    match char::from_u32(cp) {
        Some(c) => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        None => out.push(b'?'),
    }
}

/// One escape at `data[i..]`: (bytes it stands for, length, is a real
/// escape rather than a plain `\n`-style one).
fn escape_at(data: &[u8], i: usize, latin1: bool) -> Option<(Vec<u8>, usize, bool)> {
    let b = data[i];
    let next = data.get(i + 1).copied();
    let mut out = Vec::new();
    match (b, next) {
        (b'\\', Some(b'x' | b'X')) => {
            let (v, n) = hex_at(data, i + 2, 1, 2)?;
            out.push(v as u8);
            Some((out, 2 + n, true))
        }
        (b'\\', Some(b'u')) if data.get(i + 2) == Some(&b'{') => {
            let (v, n) = hex_at(data, i + 3, 1, 8)?;
            (data.get(i + 3 + n) == Some(&b'}')).then_some(())?;
            push_cp(&mut out, v, latin1);
            Some((out, 4 + n, true))
        }
        (b'\\' | b'%', Some(b'u' | b'U')) if next == Some(b'u') || b == b'%' => {
            let (v, _) = hex_at(data, i + 2, 4, 4)?;
            // A surrogate pair written as two escapes.
            if (0xD800..0xDC00).contains(&v)
                && data.get(i + 6) == Some(&b)
                && matches!(data.get(i + 7), Some(b'u' | b'U'))
                && let Some((lo, 4)) = hex_at(data, i + 8, 4, 4)
                && (0xDC00..0xE000).contains(&lo)
            {
                push_cp(
                    &mut out,
                    0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00),
                    latin1,
                );
                return Some((out, 12, true));
            }
            push_cp(&mut out, v, latin1);
            Some((out, 6, true))
        }
        (b'\\', Some(b'U')) => {
            let (v, n) = hex_at(data, i + 2, 8, 8)?;
            push_cp(&mut out, v, latin1);
            Some((out, 2 + n, true))
        }
        (b'U' | b'u', Some(b'+')) => {
            let (v, n) = hex_at(data, i + 2, 4, 6)?;
            push_cp(&mut out, v, latin1);
            Some((out, 2 + n, true))
        }
        (b'\\', Some(b'0'..=b'7')) => {
            let mut v: u32 = 0;
            let mut n = 0;
            while n < 3 && matches!(data.get(i + 1 + n), Some(b'0'..=b'7')) {
                v = v * 8 + u32::from(data[i + 1 + n] - b'0');
                n += 1;
            }
            out.push(v as u8);
            Some((out, 1 + n, true))
        }
        (b'\\', Some(c)) => {
            let v = match c {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'a' => 7,
                b'b' => 8,
                b'f' => 12,
                b'v' => 11,
                b'e' => 27,
                b'\\' | b'\'' | b'"' | b'/' | b'`' | b'$' | b'?' => c,
                _ => return None,
            };
            out.push(v);
            Some((out, 2, false))
        }
        (b'%', Some(_)) => {
            let (v, 2) = hex_at(data, i + 1, 2, 2)? else {
                return None;
            };
            out.push(v as u8);
            Some((out, 3, true))
        }
        (b'&', Some(b'#')) => {
            let (v, n) = if matches!(data.get(i + 2), Some(b'x' | b'X')) {
                let (v, n) = hex_at(data, i + 3, 1, 8)?;
                (v, 3 + n)
            } else {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 10 && data.get(i + 2 + n).is_some_and(u8::is_ascii_digit) {
                    v = v
                        .saturating_mul(10)
                        .saturating_add(u32::from(data[i + 2 + n] - b'0'));
                    n += 1;
                }
                (n > 0).then_some(())?;
                (v, 2 + n)
            };
            push_cp(&mut out, v, latin1);
            let semi = usize::from(data.get(i + n) == Some(&b';'));
            Some((out, n + semi, true))
        }
        (b'&', Some(_)) => {
            for (name, c) in [
                (&b"&amp;"[..], b'&'),
                (b"&lt;", b'<'),
                (b"&gt;", b'>'),
                (b"&quot;", b'"'),
                (b"&apos;", b'\''),
            ] {
                if data[i..].len() >= name.len()
                    && data[i..i + name.len()].eq_ignore_ascii_case(name)
                {
                    out.push(c);
                    return Some((out, name.len(), false));
                }
            }
            None
        }
        _ => None,
    }
}

/// The buffer with every escape replaced by what it stands for, when it has
/// at least [`MIN_ESCAPES`]; code points above U+007F as UTF-8, and when
/// some are at most U+00FF, once more as single bytes (binary written as
/// Latin-1 text). Runs of escapes start new possible streams.
fn unescape_layer(data: &[u8], out: &mut dyn FnMut(Layer)) {
    // Cheap test first: most buffers have none of the lead bytes.
    if memchr::memchr3(b'\\', b'%', b'&', data).is_none() && memchr::memchr(b'+', data).is_none() {
        return;
    }
    for latin1 in [false, true] {
        let mut res = Vec::with_capacity(data.len());
        let mut starts = Vec::new();
        let mut count = 0;
        let mut run = 0;
        let mut high = false;
        let mut i = 0;
        while i < data.len() {
            if matches!(data[i], b'\\' | b'%' | b'&' | b'U' | b'u')
                && let Some((bytes, n, real)) = escape_at(data, i, latin1)
            {
                if real {
                    count += 1;
                    if run == 0 {
                        starts.push(res.len());
                    }
                    run += 1;
                }
                high |= bytes.len() > 1 || bytes.first().is_some_and(|b| *b >= 0x80);
                res.extend_from_slice(&bytes);
                i += n;
                continue;
            }
            run = 0;
            res.push(data[i]);
            i += 1;
        }
        if count < MIN_ESCAPES {
            return;
        }
        out(Layer {
            how: if latin1 {
                "unescaped latin-1".into()
            } else {
                "unescaped".into()
            },
            data: res,
            starts,
        });
        if !high {
            return;
        }
    }
}

/// Lists of small numbers (`65, 75, 0x49`, `[0o101]`): char-code arrays.
fn number_list_layers(data: &[u8], out: &mut dyn FnMut(Layer)) {
    let mut i = 0;
    while i < data.len() {
        if !data[i].is_ascii_digit() || (i > 0 && data[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        let mut bytes = Vec::new();
        let mut j = i;
        while let Some((v, n)) = number_at(data, j) {
            if v > 0x10FFFF {
                break;
            }
            if v <= 0xff {
                bytes.push(v as u8);
            } else {
                push_char(&mut bytes, v);
            }
            j += n;
            let mut k = j;
            let mut sep = false;
            while k < data.len() && (data[k] == b',' || data[k].is_ascii_whitespace()) {
                sep |= data[k] == b',';
                k += 1;
            }
            if !sep || k - j > 8 {
                break;
            }
            j = k;
        }
        if bytes.len() >= MIN_LAYER {
            out(layer(format!("numbers@{start}"), bytes));
        }
        i = j.max(i + 1);
    }
}

fn number_at(data: &[u8], i: usize) -> Option<(u32, usize)> {
    if data.get(i) == Some(&b'0') && matches!(data.get(i + 1), Some(b'x' | b'X')) {
        let (v, n) = hex_at(data, i + 2, 1, 6)?;
        return Some((v, 2 + n));
    }
    let mut v: u32 = 0;
    let mut n = 0;
    while n < 7 && data.get(i + n).is_some_and(u8::is_ascii_digit) {
        v = v * 10 + u32::from(data[i + n] - b'0');
        n += 1;
    }
    if n == 0
        || data
            .get(i + n)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.')
    {
        return None;
    }
    Some((v, n))
}

// ---------------------------------------------------------------- wide text

/// UTF-16 and UTF-32 islands in both byte orders at every alignment,
/// Latin-1 range (what an ASCII secret becomes); each island is a stream
/// start of its layer.
fn wide_layers(data: &[u8], out: &mut dyn FnMut(Layer)) {
    for unit in [2usize, 4] {
        for be in [false, true] {
            let p = if be { unit - 1 } else { 0 };
            for off in 0..unit {
                let mut res = Vec::new();
                let mut starts = Vec::new();
                let mut island: Vec<u8> = Vec::new();
                let mut flush = |island: &mut Vec<u8>, res: &mut Vec<u8>| {
                    if island.len() >= MIN_WIDE {
                        starts.push(res.len());
                        res.append(island);
                        res.push(b'\n');
                    }
                    island.clear();
                };
                let mut base = off;
                while base + unit <= data.len() {
                    let u = &data[base..base + unit];
                    if u[p] != 0 && u.iter().enumerate().all(|(k, &b)| k == p || b == 0) {
                        island.push(u[p]);
                    } else {
                        flush(&mut island, &mut res);
                    }
                    base += unit;
                }
                flush(&mut island, &mut res);
                if !res.is_empty() {
                    let order = if be { "be" } else { "le" };
                    out(Layer {
                        how: format!("utf-{}{order}@{off}", unit * 8),
                        data: res,
                        starts,
                    });
                }
            }
        }
    }
}

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

// ---------------------------------------------------------------- streams

/// What decompressing one stream gave.
pub(crate) struct Inflated {
    pub how: String,
    pub data: Vec<u8>,
    /// Input bytes used (1 when unknown).
    pub consumed: usize,
    /// The output reached the cap: the caller fails closed.
    pub truncated: bool,
}

/// A writer that refuses to grow past `cap` (so a bomb stops early).
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    hit: bool,
}

impl Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let room = self.cap - self.buf.len();
        if room == 0 {
            self.hit = true;
            return Err(std::io::Error::other("cap"));
        }
        let n = b.len().min(room);
        self.buf.extend_from_slice(&b[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads `r` to its end or `cap + 1` bytes; errors keep what came out.
fn read_capped(r: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let _ = r.take(cap as u64 + 1).read_to_end(&mut out);
    let truncated = out.len() > cap;
    out.truncate(cap);
    (out, truncated)
}

/// Inflates zlib (`zlib`) or raw deflate from `input`. Output also on a
/// corrupt stream (what came out first still counts).
pub(crate) fn inflate(input: &[u8], zlib: bool, cap: usize) -> (Vec<u8>, usize, bool) {
    const CHUNK: usize = 64 * 1024;
    let mut d = Decompress::new(zlib);
    let mut out: Vec<u8> = Vec::new();
    loop {
        if out.len() >= cap {
            out.truncate(cap);
            return (out, d.total_in() as usize, true);
        }
        let room = (cap - out.len()).min(CHUNK);
        out.reserve_exact(room);
        let consumed = d.total_in() as usize;
        let produced = d.total_out();
        let status = d.decompress_vec(&input[consumed..], &mut out, FlushDecompress::None);
        match status {
            Ok(Status::StreamEnd) | Err(_) => break,
            Ok(_) => {
                if d.total_in() as usize == consumed && d.total_out() == produced {
                    break;
                }
            }
        }
    }
    let truncated = out.len() > cap;
    out.truncate(cap);
    (out, d.total_in() as usize, truncated)
}

/// A zlib header at `data[i..]`: deflate method, window ≤ 32 KiB, valid
/// check bits. Any window size, not only the `0x78` of the default.
fn zlib_header(data: &[u8], i: usize) -> bool {
    let (Some(&cmf), Some(&flg)) = (data.get(i), data.get(i + 1)) else {
        return false;
    };
    cmf & 0x0f == 8
        && cmf >> 4 <= 7
        && (u16::from(cmf) * 256 + u16::from(flg)) % 31 == 0
        && flg & 0x20 == 0
}

/// At least 7/8 of `d` is printable ASCII or whitespace: a text file, in
/// which pasted binary stands out (in random bytes, quotes and newlines are
/// everywhere and mean nothing).
fn mostly_text(d: &[u8]) -> bool {
    let text = d
        .iter()
        .filter(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
        .count();
    text * 8 >= d.len() * 7
}

/// Whether a raw deflate stream can start at `d[0]`: a valid block type,
/// and for a stored block, LEN and NLEN complementary. Cheap, and rejects
/// about half of all starts before a decompressor is set up.
fn deflate_header_ok(d: &[u8]) -> bool {
    let Some(&b) = d.first() else { return false };
    match (b >> 1) & 3 {
        3 => false,
        0 => d.len() >= 5 && u16::from_le_bytes([d[1], d[2]]) == !u16::from_le_bytes([d[3], d[4]]),
        _ => true,
    }
}

/// Where a zip local header's member data starts.
fn zip_member_start(data: &[u8], at: usize) -> Option<usize> {
    let h = data.get(at..at + 30)?;
    let name = usize::from(u16::from_le_bytes([h[26], h[27]]));
    let extra = usize::from(u16::from_le_bytes([h[28], h[29]]));
    let start = at + 30 + name + extra;
    (start < data.len()).then_some(start)
}

/// Candidate streams of `data`: (offset, method). Signatures at any
/// offset; raw deflate at offset 0, at each of `starts`, at zip member
/// data (whatever the member's method field says), and after quotes and
/// line starts of a file (`top`) or of a layer that is mostly text.
pub(crate) fn stream_candidates(
    data: &[u8],
    starts: &[usize],
    top: bool,
) -> Vec<(usize, &'static str)> {
    let mut c: Vec<(usize, &'static str)> = Vec::new();
    let raw = |at: usize, c: &mut Vec<(usize, &'static str)>| {
        if at < data.len() && deflate_header_ok(&data[at..]) {
            c.push((at, "deflate"));
        }
    };
    raw(0, &mut c);
    // A stream pasted into a text file (`key = '<bytes>'`, a line of its
    // own): right after a quote or a line start, when the block header
    // there is possible at all.
    let mut pasted = if top || mostly_text(data) {
        0
    } else {
        MAX_PASTED_STARTS
    };
    for i in 1..data.len() {
        if pasted >= MAX_PASTED_STARTS {
            break;
        }
        if pasted < MAX_PASTED_STARTS
            && matches!(data[i - 1], b'\'' | b'"' | b'`' | b'\n')
            && deflate_header_ok(&data[i..])
        {
            raw(i, &mut c);
            pasted += 1;
        }
    }
    for &s in starts {
        if s != 0 {
            raw(s, &mut c);
        }
    }
    let n = data.len();
    for i in 0..n.saturating_sub(1) {
        let rest = &data[i..];
        match rest[0] {
            b if b & 0x0f == 8 && zlib_header(data, i) => c.push((i, "zlib")),
            0x1f if rest.starts_with(&[0x1f, 0x8b, 8]) => c.push((i, "gzip")),
            b'B' if rest.len() >= 10
                && rest.starts_with(b"BZh")
                && (b'1'..=b'9').contains(&rest[3])
                && rest[4..].starts_with(&[0x31, 0x41, 0x59, 0x26, 0x53, 0x59]) =>
            {
                c.push((i, "bzip2"))
            }
            0xfd if rest.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) => c.push((i, "xz")),
            0x28 if rest.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) => c.push((i, "zstd")),
            0x5d if rest.len() >= 13 && rest[1..5] != [0; 4] && i == 0 => c.push((i, "lzma")),
            b'P' if rest.starts_with(b"PK\x03\x04") => {
                if let Some(s) = zip_member_start(data, i) {
                    raw(s, &mut c);
                }
            }
            _ => {}
        }
    }
    c
}

/// Decompresses the stream of `method` at `data[at..]`, at most `cap`
/// bytes out.
pub(crate) fn decompress(data: &[u8], at: usize, method: &str, cap: usize) -> Inflated {
    let input = &data[at..];
    let (out, consumed, truncated) = match method {
        "zlib" => inflate(input, true, cap),
        "deflate" => inflate(input, false, cap),
        "gzip" => {
            let (o, t) = read_capped(flate2::read::MultiGzDecoder::new(input), cap);
            (o, 1, t)
        }
        "bzip2" => {
            let (o, t) = read_capped(bzip2::read::MultiBzDecoder::new(input), cap);
            (o, 1, t)
        }
        "zstd" => match ruzstd::decoding::StreamingDecoder::new(input) {
            Ok(d) => {
                let (o, t) = read_capped(d, cap);
                (o, 1, t)
            }
            Err(_) => (Vec::new(), 1, false),
        },
        "xz" | "lzma" => {
            let mut w = Capped {
                buf: Vec::new(),
                cap,
                hit: false,
            };
            let mut r = std::io::BufReader::new(input);
            let _ = if method == "xz" {
                lzma_rs::xz_decompress(&mut r, &mut w)
            } else {
                let opts = lzma_rs::decompress::Options {
                    memlimit: Some(cap.max(1 << 20)),
                    ..Default::default()
                };
                lzma_rs::lzma_decompress_with_options(&mut r, &mut w, &opts)
            };
            (w.buf, 1, w.hit)
        }
        _ => (Vec::new(), 1, false),
    };
    Inflated {
        how: format!("{method}@{at}"),
        data: out,
        consumed,
        truncated,
    }
}

/// Shortest decompressed output worth a layer (shorter is noise from a
/// false start).
pub(crate) const MIN_INFLATED: usize = MIN_LAYER;

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
