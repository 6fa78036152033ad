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
    self, DECODE_BUDGET_BASE, DECODE_BUDGET_PER_BYTE, DECODE_DEPTH, DECODE_MAX_LAYERS,
    MIN_INFLATED,
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

/// The per-buffer state of one closure.
struct Closure<'n> {
    needles: &'n Needles,
    lines: bool,
    res: BufResult,
    found: Vec<bool>,
    found_count: usize,
    bytes_left: u64,
    layers_left: u64,
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
        layers_left: DECODE_MAX_LAYERS,
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

    /// Charges one layer of `bytes`; false (and failed closed) when over.
    fn charge(&mut self, bytes: u64) -> bool {
        self.res.layers += 1;
        self.res.bytes += bytes;
        if self.layers_left == 0 {
            self.fail(format!("more than {DECODE_MAX_LAYERS} decoded layers"));
            return false;
        }
        self.layers_left -= 1;
        if bytes > self.bytes_left {
            self.fail("decoding budget exceeded".into());
            return false;
        }
        self.bytes_left -= bytes;
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
        if depth >= DECODE_DEPTH || self.done() {
            return;
        }
        decode::text_layers(data, &mut |l: decode::Layer| {
            if self.done() || !self.charge(l.data.len() as u64) {
                return;
            }
            self.visit(&l.data, &format!("{path} ({})", l.how), depth + 1, &l.starts);
        });
        let mut skip_to = 0;
        for (at, method) in decode::stream_candidates(data, starts) {
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
}
