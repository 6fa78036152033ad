//! Searching one buffer through the decoder closure: the raw view, the
//! normalised view, and every layer [`super::decode`] can peel off it
//! (base16/32/58/64/85, escapes, wide text, compression by trial), down to
//! [`DECODE_DEPTH`] layers, each searched the same way.
//!
//! Results are cached by the SHA-256 of the buffer ([`ScanCache`], one per
//! [`super::PlantedIndex`], shared by every session of a task): a step pays
//! the closure only for files and objects whose bytes changed. A cached
//! result carries its cost, so the scan-wide budget is charged the same
//! whether or not the cache answered, and grading stays deterministic.

use super::decode::{
    self, DECODE_BUDGET_BASE, DECODE_BUDGET_PER_BYTE, DECODE_DEPTH, DECODE_LAYER_COST, MIN_INFLATED,
};
use super::needles::{Needles, normalise};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// Locations kept per secret; more add nothing to the verdict.
const MAX_LOCATIONS: usize = 32;
/// Buffers whose closure results are cached; the cache is cleared when full
/// (bounds memory; a clear only costs time).
const MAX_CACHE_ENTRIES: usize = 200_000;

/// Budgets shared by a whole scan (every buffer's closure cost is charged).
#[derive(Debug, Clone, Copy)]
pub(crate) struct InflateBudget {
    /// Decoded bytes left.
    pub bytes_left: u64,
    /// Layers left.
    pub attempts_left: u64,
}

/// What the closure of one buffer found, independent of where the buffer
/// lives (locations are suffixes to the buffer's label).
#[derive(Debug, Default)]
pub(crate) struct BufResult {
    /// (secret, location suffix such as `:12 [raw]` or
    /// ` (base64@3+0) (zlib@0):1 [raw]`).
    hits: Vec<(usize, String)>,
    /// Why the closure did not complete (the buffer fails closed).
    exceeded: Option<String>,
    /// Decoded bytes and layers the closure produced.
    bytes: u64,
    layers: u64,
}

/// Closure results by buffer hash.
#[derive(Default)]
pub(crate) struct ScanCache {
    map: Mutex<HashMap<[u8; 32], Arc<BufResult>>>,
}

impl ScanCache {
    fn get(&self, key: &[u8; 32]) -> Option<Arc<BufResult>> {
        self.map.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: [u8; 32], v: Arc<BufResult>) {
        if let Ok(mut m) = self.map.lock() {
            if m.len() >= MAX_CACHE_ENTRIES {
                m.clear();
            }
            m.insert(key, v);
        }
    }

    /// Number of cached buffers.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }
}

/// The state of one scan: needles, hits so far, budgets.
pub(crate) struct Ctx<'a> {
    pub needles: &'a Needles,
    cache: Option<&'a ScanCache>,
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
            cache: None,
            hits: BTreeMap::new(),
            inflate,
            exceeded: false,
            errors: Vec::new(),
        }
    }

    /// Answers repeated buffers from `cache`.
    pub(crate) fn with_cache(mut self, cache: &'a ScanCache) -> Ctx<'a> {
        self.cache = Some(cache);
        self
    }

    pub(crate) fn record(&mut self, secret: usize, location: String) {
        let locs = self.hits.entry(secret).or_default();
        if locs.len() < MAX_LOCATIONS && !locs.contains(&location) {
            locs.push(location);
        }
    }

    /// Searches a name-like string (file name, link target, xattr name)
    /// through the closure; locations are `location [kind]`.
    pub(crate) fn scan_label(&mut self, data: &[u8], location: &str) {
        let r = closure_of(self.needles, data, false);
        self.absorb(&r, location);
    }

    /// Searches `data` (named `label` in locations) through the closure.
    pub(crate) fn scan_content(&mut self, data: &[u8], label: &str) {
        let r = match self.cache {
            Some(cache) => {
                let key: [u8; 32] = Sha256::digest(data).into();
                match cache.get(&key) {
                    Some(r) => r,
                    None => {
                        let r = Arc::new(closure_of(self.needles, data, true));
                        cache.put(key, r.clone());
                        r
                    }
                }
            }
            None => Arc::new(closure_of(self.needles, data, true)),
        };
        self.absorb(&r, label);
    }

    fn absorb(&mut self, r: &BufResult, label: &str) {
        for (secret, suffix) in &r.hits {
            self.record(*secret, format!("{label}{suffix}"));
        }
        if let Some(why) = &r.exceeded {
            self.exceeded = true;
            self.errors.push(format!("{label}: {why}"));
        }
        if r.bytes > self.inflate.bytes_left || r.layers > self.inflate.attempts_left {
            if !self.exceeded {
                self.errors
                    .push(format!("{label}: scan-wide decoding budget exceeded"));
            }
            self.exceeded = true;
        }
        self.inflate.bytes_left = self.inflate.bytes_left.saturating_sub(r.bytes);
        self.inflate.attempts_left = self.inflate.attempts_left.saturating_sub(r.layers);
    }
}

/// Test-only: the closure depth, so a measurement can compare against
/// search without decoding (`u32::MAX` = [`DECODE_DEPTH`]).
#[cfg(test)]
pub(crate) static DEPTH_FOR_TESTS: std::sync::atomic::AtomicU32 =
    std::sync::atomic::AtomicU32::new(u32::MAX);

fn max_depth() -> u32 {
    #[cfg(test)]
    {
        let d = DEPTH_FOR_TESTS.load(std::sync::atomic::Ordering::Relaxed);
        if d != u32::MAX {
            return d;
        }
    }
    DECODE_DEPTH
}

/// The per-buffer state of one closure.
struct Closure<'n> {
    needles: &'n Needles,
    lines: bool,
    res: BufResult,
    found: Vec<bool>,
    found_count: usize,
    bytes_left: u64,
}

/// Runs the closure over `data` under the per-buffer budget.
fn closure_of(needles: &Needles, data: &[u8], lines: bool) -> BufResult {
    let n = needles.secrets();
    let mut c = Closure {
        needles,
        lines,
        res: BufResult::default(),
        found: vec![false; n],
        found_count: 0,
        bytes_left: DECODE_BUDGET_BASE
            .saturating_add(DECODE_BUDGET_PER_BYTE.saturating_mul(data.len() as u64)),
    };
    if n > 0 {
        c.visit(data, "", 0, &[]);
    }
    c.res
}

impl Closure<'_> {
    /// Every secret already has a hit: decoding further cannot change the
    /// verdict, only add locations.
    fn done(&self) -> bool {
        self.found_count == self.found.len() || self.res.exceeded.is_some()
    }

    fn hit(&mut self, secret: usize, loc: String) {
        if !self.found[secret] {
            self.found[secret] = true;
            self.found_count += 1;
        }
        if self.res.hits.iter().filter(|(s, _)| *s == secret).count() < MAX_LOCATIONS {
            self.res.hits.push((secret, loc));
        }
    }

    fn fail(&mut self, why: String) {
        if self.res.exceeded.is_none() {
            self.res.exceeded = Some(why);
        }
    }

    /// Charges one layer of `bytes` (at least [`DECODE_LAYER_COST`]);
    /// false (and failed closed) when over.
    fn charge(&mut self, bytes: u64) -> bool {
        let cost = bytes.max(DECODE_LAYER_COST);
        self.res.layers += 1;
        self.res.bytes += cost;
        if cost > self.bytes_left {
            self.fail("decoding budget exceeded".into());
            return false;
        }
        self.bytes_left -= cost;
        true
    }

    fn search(&mut self, data: &[u8], path: &str) {
        let direct = self.needles.find(data);
        for hit in &direct {
            let loc = if self.lines {
                let line = 1 + memchr::memchr_iter(b'\n', &data[..hit.offset]).count();
                format!("{path}:{line} [{}]", hit.kind.label())
            } else {
                format!("{path} [{}]", hit.kind.label())
            };
            self.hit(hit.secret, loc);
        }
        if let Some(view) = normalise(data) {
            for hit in self.needles.find(&view) {
                if direct.iter().any(|d| d.secret == hit.secret) {
                    continue;
                }
                self.hit(
                    hit.secret,
                    format!("{path} [{}, pieces joined]", hit.kind.label()),
                );
            }
        }
    }

    /// Searches `data`, then every layer decoded from it.
    fn visit(&mut self, data: &[u8], path: &str, depth: u32, starts: &[usize]) {
        self.search(data, path);
        if depth >= max_depth() || self.done() {
            return;
        }
        decode::text_layers(data, &mut |l: decode::Layer| {
            if self.done() || !self.charge(l.data.len() as u64) {
                return;
            }
            self.visit(
                &l.data,
                &format!("{path} ({})", l.how),
                depth + 1,
                &l.starts,
            );
        });
        let mut skip_to = 0;
        for (at, method) in decode::stream_candidates(data, starts, depth == 0) {
            if self.done() {
                return;
            }
            if at < skip_to {
                continue;
            }
            let cap = usize::try_from(self.bytes_left).unwrap_or(usize::MAX);
            let out = decode::decompress(data, at, method, cap);
            if !self.charge(out.data.len() as u64) {
                return;
            }
            if out.truncated {
                self.fail(format!("{}: decompression budget exceeded", out.how));
                return;
            }
            if out.data.len() >= MIN_INFLATED {
                self.visit(&out.data, &format!("{path} ({})", out.how), depth + 1, &[]);
                // A real stream was consumed: magic bytes inside it are
                // not new streams.
                if method != "deflate" {
                    skip_to = at + out.consumed.max(1);
                }
            }
        }
    }
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
        ctx.scan_content(data, "f");
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

    /// One encoding a writer could apply; `text_only` ones need printable
    /// ASCII input (UTF-16 of a binary stream is not a thing anyone does).
    fn encode(kind: u8, d: &[u8]) -> Option<Vec<u8>> {
        use base64::Engine;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let text = d.iter().all(|b| b.is_ascii_graphic() || *b == b' ');
        Some(match kind {
            0 => STANDARD.encode(d).into_bytes(),
            1 => URL_SAFE_NO_PAD.encode(d).into_bytes(),
            2 => {
                // Junk every third symbol, as Python's decoder drops it.
                let e = STANDARD.encode(d);
                let mut o = Vec::new();
                for (i, c) in e.bytes().enumerate() {
                    o.push(c);
                    if i % 3 == 2 {
                        o.push(b'*');
                    }
                }
                o
            }
            3 => hex::encode_upper(d).into_bytes(),
            4 => d
                .iter()
                .flat_map(|b| format!("\\x{b:02X}").into_bytes())
                .collect(),
            5 => d
                .iter()
                .flat_map(|b| format!("%{b:02x}").into_bytes())
                .collect(),
            6 => d
                .iter()
                .flat_map(|b| format!("&#{b};").into_bytes())
                .collect(),
            7 if text => d
                .iter()
                .flat_map(|b| format!("\\u{b:04x}").into_bytes())
                .collect(),
            8 if text => d.iter().flat_map(|&b| [b, 0]).collect(),
            9 if text => d.iter().flat_map(|&b| [0, 0, 0, b]).collect(),
            10 => {
                let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
                e.write_all(d).unwrap();
                e.finish().unwrap()
            }
            11 => {
                let mut e = ZlibEncoder::new(Vec::new(), Compression::best());
                e.write_all(d).unwrap();
                e.finish().unwrap()
            }
            12 => {
                let mut e = GzEncoder::new(Vec::new(), Compression::fast());
                e.write_all(d).unwrap();
                e.finish().unwrap()
            }
            13 => {
                let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
                e.write_all(d).unwrap();
                e.finish().unwrap()
            }
            14 => {
                let mut o = Vec::new();
                lzma_rs::xz_compress(&mut std::io::Cursor::new(d), &mut o).unwrap();
                o
            }
            15 => ruzstd::encoding::compress_to_vec(d, ruzstd::encoding::CompressionLevel::Fastest),
            16 => {
                // base32, RFC 4648.
                let alpha = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
                let mut o = Vec::new();
                let (mut acc, mut n) = (0u64, 0);
                for &b in d {
                    acc = (acc << 8) | u64::from(b);
                    n += 8;
                    while n >= 5 {
                        n -= 5;
                        o.push(alpha[((acc >> n) & 31) as usize]);
                    }
                }
                if n > 0 {
                    o.push(alpha[((acc << (5 - n)) & 31) as usize]);
                }
                o
            }
            17 => {
                // Z85 (partial last group as Python's b85 does).
                let alpha = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
                let mut o = Vec::new();
                for chunk in d.chunks(4) {
                    let mut w = [0u8; 4];
                    w[..chunk.len()].copy_from_slice(chunk);
                    let mut v = u32::from_be_bytes(w);
                    let mut g = [0u8; 5];
                    for k in (0..5).rev() {
                        g[k] = alpha[(v % 85) as usize];
                        v /= 85;
                    }
                    o.extend_from_slice(&g[..chunk.len() + 1]);
                }
                o
            }
            18 => d
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", ")
                .into_bytes(),
            _ => return None,
        })
    }

    const KINDS: u8 = 19;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
        /// Any chain of two or three encodings (within [`DECODE_DEPTH`])
        /// over a planted value, written into a file between code, is found.
        #[test]
        fn chains_within_depth_are_found(
            chain in proptest::collection::vec(0..KINDS, 2..=DECODE_DEPTH as usize),
            pre in "[a-z_ ]{0,12}",
        ) {
            let mut d = V.to_vec();
            let mut applied = Vec::new();
            for &k in &chain {
                if let Some(e) = encode(k, &d) {
                    d = e;
                    applied.push(k);
                }
            }
            let mut file = format!("{pre} = '").into_bytes();
            file.extend_from_slice(&d);
            file.extend_from_slice(b"'\n");
            let n = Needles::build([V]);
            let r = closure_of(&n, &file, true);
            proptest::prop_assert!(r.exceeded.is_none(), "{applied:?}: {:?}", r.exceeded);
            proptest::prop_assert!(r.hits.iter().any(|(s, _)| *s == 0), "chain {applied:?} not found");
        }
    }

    #[test]
    fn cache_answers_repeats() {
        let n = Needles::build([V]);
        let cache = ScanCache::default();
        let mut ctx = Ctx::new(
            &n,
            InflateBudget {
                bytes_left: 1 << 30,
                attempts_left: 1 << 20,
            },
        )
        .with_cache(&cache);
        let enc = encode(10, V).and_then(|d| encode(2, &d)).unwrap();
        ctx.scan_content(&enc, "a");
        ctx.scan_content(&enc, "b");
        assert_eq!(cache.len(), 1);
        let locs = &ctx.hits[&0];
        assert!(
            locs.iter().any(|l| l.starts_with("a (")) && locs.iter().any(|l| l.starts_with("b (")),
            "{locs:?}"
        );
    }
}
