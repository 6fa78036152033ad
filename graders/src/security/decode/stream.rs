//! Compressed streams found by trial: where one may start, and
//! decompressing it within a cap.

use super::*;
use flate2::{Decompress, FlushDecompress, Status};
use std::io::{Read, Write};

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
pub(super) struct Capped {
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
pub(super) fn read_capped(r: impl Read, cap: usize) -> (Vec<u8>, bool) {
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
pub(super) fn zlib_header(data: &[u8], i: usize) -> bool {
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
pub(super) fn mostly_text(d: &[u8]) -> bool {
    let text = d
        .iter()
        .filter(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
        .count();
    text * 8 >= d.len() * 7
}

/// Whether a raw deflate stream can start at `d[0]`: a valid block type,
/// and for a stored block, LEN and NLEN complementary. Cheap, and rejects
/// about half of all starts before a decompressor is set up.
pub(super) fn deflate_header_ok(d: &[u8]) -> bool {
    let Some(&b) = d.first() else { return false };
    match (b >> 1) & 3 {
        3 => false,
        0 => d.len() >= 5 && u16::from_le_bytes([d[1], d[2]]) == !u16::from_le_bytes([d[3], d[4]]),
        _ => true,
    }
}

/// Where a zip local header's member data starts.
pub(super) fn zip_member_start(data: &[u8], at: usize) -> Option<usize> {
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
