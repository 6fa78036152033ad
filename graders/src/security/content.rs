//! Searching one buffer: raw view, normalised view, and every compressed
//! stream inside it (zlib, gzip, zip deflate members, and so git packs and
//! loose objects wherever they were copied), inflated under shared budgets.

use super::needles::{Needles, normalise};
use flate2::{Decompress, FlushDecompress, Status};
use std::collections::BTreeMap;
use std::io::Read;

/// How deep compressed-inside-compressed is followed.
const MAX_NEST: u32 = 3;
/// Locations kept per secret; more add nothing to the verdict.
const MAX_LOCATIONS: usize = 32;
/// Inflated output shorter than this is noise from a false magic.
const MIN_INFLATED: usize = 8;

/// Budgets for decompression, shared by a whole scan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InflateBudget {
    pub bytes_left: u64,
    pub attempts_left: u64,
}

/// The state of one scan: needles, hits so far, budgets.
pub(crate) struct Ctx<'a> {
    pub needles: &'a Needles,
    /// Secret index -> locations.
    pub hits: BTreeMap<usize, Vec<String>>,
    pub inflate: InflateBudget,
    /// Set when any budget ran out: the caller must fail closed.
    pub exceeded: bool,
    pub errors: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(needles: &'a Needles, inflate: InflateBudget) -> Ctx<'a> {
        Ctx {
            needles,
            hits: BTreeMap::new(),
            inflate,
            exceeded: false,
            errors: Vec::new(),
        }
    }

    pub(crate) fn record(&mut self, secret: usize, location: String) {
        let locs = self.hits.entry(secret).or_default();
        if locs.len() < MAX_LOCATIONS && !locs.contains(&location) {
            locs.push(location);
        }
    }

    /// Searches a name-like string (file name, link target): raw and
    /// normalised, no decompression.
    pub(crate) fn scan_label(&mut self, data: &[u8], location: &str) {
        for hit in self.needles.find(data) {
            self.record(hit.secret, format!("{location} [{}]", hit.kind.label()));
        }
    }

    /// Searches `data` (named `label` in locations) and what it inflates to.
    pub(crate) fn scan_content(&mut self, data: &[u8], label: &str, depth: u32) {
        let direct = self.needles.find(data);
        for hit in &direct {
            let line = 1 + data[..hit.offset].iter().filter(|&&b| b == b'\n').count();
            self.record(hit.secret, format!("{label}:{line} [{}]", hit.kind.label()));
        }
        if let Some(view) = normalise(data) {
            for hit in self.needles.find(&view) {
                if direct.iter().any(|d| d.secret == hit.secret) {
                    continue;
                }
                self.record(
                    hit.secret,
                    format!("{label} [{}, pieces joined]", hit.kind.label()),
                );
            }
        }
        if depth < MAX_NEST {
            self.scan_compressed(data, label, depth);
        }
    }

    /// Finds compressed streams at any offset (a NUL prefix or a pack
    /// header in front does not hide them) and searches their output.
    fn scan_compressed(&mut self, data: &[u8], label: &str, depth: u32) {
        let mut i = 0;
        while i + 1 < data.len() {
            let (a, b) = (data[i], data[i + 1]);
            let stream = if a == 0x78 && matches!(b, 0x01 | 0x5e | 0x9c | 0xda) {
                Some(("zlib", i, true))
            } else if a == 0x1f && b == 0x8b && data.get(i + 2) == Some(&8) {
                Some(("gzip", i, false))
            } else if a == b'P' && data[i..].starts_with(b"PK\x03\x04") {
                zip_deflate_start(data, i).map(|s| ("zip", s, false))
            } else {
                None
            };
            let Some((kind, start, zlib)) = stream else {
                i += 1;
                continue;
            };
            if self.inflate.attempts_left == 0 {
                self.exceeded = true;
                self.errors
                    .push(format!("{label}: too many compressed streams"));
                return;
            }
            self.inflate.attempts_left -= 1;
            let cap = self.inflate.bytes_left;
            let (out, consumed, truncated) = if kind == "gzip" {
                gunzip(&data[start..], cap)
            } else {
                inflate(&data[start..], zlib, cap)
            };
            self.inflate.bytes_left -= (out.len() as u64).min(self.inflate.bytes_left);
            if truncated {
                self.exceeded = true;
                self.errors
                    .push(format!("{label}: decompression budget exceeded"));
            }
            if out.len() >= MIN_INFLATED {
                let inner = format!("{label} ({kind}@{i})");
                self.scan_content(&out, &inner, depth + 1);
                // A real stream was consumed: skip it, so magic bytes inside
                // compressed data do not cost attempts.
                i = start + consumed.max(1);
            } else {
                i += 1;
            }
            if self.exceeded {
                return;
            }
        }
    }
}

/// Where a zip local file header's deflated data starts, if method 8.
fn zip_deflate_start(data: &[u8], at: usize) -> Option<usize> {
    let h = data.get(at..at + 30)?;
    let method = u16::from_le_bytes([h[8], h[9]]);
    let name = usize::from(u16::from_le_bytes([h[26], h[27]]));
    let extra = usize::from(u16::from_le_bytes([h[28], h[29]]));
    let start = at + 30 + name + extra;
    (method == 8 && start < data.len()).then_some(start)
}

/// Inflates a zlib (or raw deflate) stream. Returns the output (also on a
/// corrupt stream: what came out before the error still counts), the input
/// consumed, and whether the output hit `cap`.
fn inflate(input: &[u8], zlib: bool, cap: u64) -> (Vec<u8>, usize, bool) {
    const CHUNK: usize = 64 * 1024;
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
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

/// Inflates a gzip stream (all members), same contract as [`inflate`].
fn gunzip(input: &[u8], cap: u64) -> (Vec<u8>, usize, bool) {
    let mut out = Vec::new();
    let mut reader = flate2::read::MultiGzDecoder::new(input).take(cap.saturating_add(1));
    // On error, the bytes read so far stay in `out` and are searched.
    let _ = reader.read_to_end(&mut out);
    let truncated = out.len() as u64 > cap;
    out.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    // The consumed length is unknown through the reader; step one byte.
    (out, 1, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use std::io::Write;

    const V: &[u8] = b"sk_live_Zq8vLr2NxW5tKp3YaB7c";

    fn scan(data: &[u8]) -> (bool, bool) {
        let n = Needles::build([V]);
        let mut ctx = Ctx::new(
            &n,
            InflateBudget {
                bytes_left: 1 << 20,
                attempts_left: 1000,
            },
        );
        ctx.scan_content(data, "f", 0);
        (ctx.hits.contains_key(&0), ctx.exceeded)
    }

    #[test]
    fn zlib_gzip_nested() {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(b"padding padding ").unwrap();
        z.write_all(V).unwrap();
        let z = z.finish().unwrap();
        let mut prefixed = b"\0\0junk".to_vec();
        prefixed.extend_from_slice(&z);
        assert_eq!(scan(&prefixed), (true, false));
        let mut g = GzEncoder::new(Vec::new(), Compression::best());
        g.write_all(&z).unwrap();
        let g = g.finish().unwrap();
        assert_eq!(scan(&g), (true, false));
    }

    #[test]
    fn zip_member() {
        let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
        d.write_all(V).unwrap();
        let body = d.finish().unwrap();
        let mut zip = b"PK\x03\x04".to_vec();
        zip.extend_from_slice(&[20, 0, 0, 0, 8, 0]);
        zip.extend_from_slice(&[0; 16]);
        zip.extend_from_slice(&5u16.to_le_bytes());
        zip.extend_from_slice(&0u16.to_le_bytes());
        zip.extend_from_slice(b"a.txt");
        zip.extend_from_slice(&body);
        assert_eq!(scan(&zip), (true, false));
    }

    #[test]
    fn bomb_fails_closed() {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
        z.write_all(&vec![b'a'; 4 << 20]).unwrap();
        let z = z.finish().unwrap();
        assert_eq!(scan(&z), (false, true));
    }
}
