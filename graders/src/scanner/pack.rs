//! A minimal reader of git pack files that resolves a *set* of blobs with
//! each pack entry inflated at most once (the way `git index-pack` walks
//! delta trees), for history scans.
//!
//! Why: libgit2 resolves every object on its own. It caches only the base
//! at the bottom of a delta chain, so reading the ~80 versions of one file
//! inflates every delta of the chain again for each version: on the
//! 5,000-commit benchmark repository ~65% of scan CPU was zlib. Here the
//! chains of all wanted blobs are collected first, then each delta tree is
//! walked once from its base, handing every wanted blob to a callback.
//!
//! Everything read is untrusted: entry sizes, delta sizes, chain depth and
//! index sizes are bounded, cycles of REF deltas are never entered, and any
//! object this reader cannot resolve (loose objects, alternates, SHA-256
//! repositories, corrupt entries) is simply left for the caller to read
//! with git2. No hash is verified — as with git's own reads, the index's
//! id for an offset is trusted; a lying index only relabels bytes that are
//! in the repository anyway, and every one of them is still scanned.

use git2::Oid;
/// Offsets and ids keyed with foldhash (see `history::FastMap`).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// Packs opened at most.
const MAX_PACKS: usize = 512;
/// Bytes of one pack index read at most (~14M objects).
const MAX_IDX_BYTES: u64 = 512 << 20;
/// Objects per pack index at most.
const MAX_INDEX_OBJECTS: usize = 20_000_000;
/// Objects in a pack at most for the all-trees pass (its maps hold every
/// entry); larger packs leave their trees to git2.
const MAX_TREE_PASS_OBJECTS: usize = 4_000_000;
/// Delta chain depth followed at most (git's default is 50).
const MAX_DEPTH: usize = 10_000;

const OBJ_TREE: u8 = 2;
const OBJ_BLOB: u8 = 3;
const OBJ_OFS_DELTA: u8 = 6;
const OBJ_REF_DELTA: u8 = 7;

/// One `.pack` with its `.idx`.
struct Pack {
    file: File,
    /// Usable length (without the 20-byte trailer).
    data_end: u64,
    /// Object ids, sorted (the index order), 20 bytes each.
    names: Vec<u8>,
    /// Offset of `names[i]`.
    offsets: Vec<u64>,
    /// All offsets, sorted: an entry ends where the next begins.
    sorted: Vec<u64>,
    /// Header table, read on first use ([`Pack::headers`]).
    hdrs: std::sync::OnceLock<Option<Vec<Hdr>>>,
}

/// Where an entry's base is.
#[derive(Clone, Copy)]
enum Base {
    None,
    Ofs(u64),
    Ref([u8; 20]),
}

/// A parsed entry header.
struct Entry {
    kind: u8,
    size: u64,
    /// Where the zlib stream starts in the read buffer.
    start: usize,
    base: Base,
}

fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

impl Pack {
    fn open(idx_path: &Path) -> Option<Pack> {
        if std::fs::metadata(idx_path).ok()?.len() > MAX_IDX_BYTES {
            return None;
        }
        let idx = std::fs::read(idx_path).ok()?;
        if idx.len() < 8 + 1024 || idx[..8] != [0xff, b't', b'O', b'c', 0, 0, 0, 2] {
            return None; // v1 indexes and SHA-256 (v3) are left to git2
        }
        let n = be32(&idx, 8 + 255 * 4) as usize;
        if n > MAX_INDEX_OBJECTS {
            return None;
        }
        let names_at = 8 + 1024;
        let off32_at = names_at + n * 20 + n * 4;
        let off64_at = off32_at + n * 4;
        if idx.len() < off64_at + 40 {
            return None;
        }
        let names = idx[names_at..names_at + n * 20].to_vec();
        let mut offsets = Vec::with_capacity(n);
        for i in 0..n {
            let o = be32(&idx, off32_at + i * 4);
            if o & 0x8000_0000 == 0 {
                offsets.push(u64::from(o));
            } else {
                let j = off64_at + (o & 0x7fff_ffff) as usize * 8;
                let b = idx.get(j..j + 8)?;
                offsets.push(u64::from_be_bytes(b.try_into().ok()?));
            }
        }
        let pack_path = idx_path.with_extension("pack");
        let file = File::open(pack_path).ok()?;
        let len = file.metadata().ok()?.len();
        let mut head = [0u8; 12];
        file.read_exact_at(&mut head, 0).ok()?;
        if &head[..4] != b"PACK" || len < 32 {
            return None;
        }
        let data_end = len - 20;
        if offsets.iter().any(|&o| o < 12 || o >= data_end) {
            return None;
        }
        let mut sorted = offsets.clone();
        sorted.sort_unstable();
        Some(Pack {
            file,
            data_end,
            names,
            offsets,
            sorted,
            hdrs: std::sync::OnceLock::new(),
        })
    }

    fn find(&self, id: &[u8]) -> Option<u64> {
        let n = self.offsets.len();
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.names[mid * 20..mid * 20 + 20].cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.offsets[mid]),
            }
        }
        None
    }

    /// Reads the entry at `off` into `buf` (reused between calls): header
    /// parsed, compressed bytes from `Entry::start`.
    fn entry(&self, off: u64, max_size: u64, buf: &mut Vec<u8>) -> Option<Entry> {
        self.read_entry(off, max_size, false, buf)
    }

    /// Like [`Pack::entry`] but reads only the header.
    fn header(&self, off: u64, max_size: u64, buf: &mut Vec<u8>) -> Option<Entry> {
        self.read_entry(off, max_size, true, buf)
    }

    fn read_entry(
        &self,
        off: u64,
        max_size: u64,
        header_only: bool,
        buf: &mut Vec<u8>,
    ) -> Option<Entry> {
        let i = self.sorted.partition_point(|&o| o <= off);
        let end = self.sorted.get(i).copied().unwrap_or(self.data_end);
        let len = end.checked_sub(off)?;
        // Compressed data is never much larger than the object.
        if len > max_size.saturating_mul(2).saturating_add(1 << 16) {
            return None;
        }
        // A header is at most 11 + 20 bytes.
        let len = if header_only { len.min(32) } else { len };
        buf.resize(len as usize, 0);
        self.file.read_exact_at(buf, off).ok()?;
        let e = parse_header(buf, off)?;
        (e.size <= max_size).then_some(e)
    }

    /// Every entry's header in offset order (index = index in `sorted`),
    /// read once per pack with a few large sequential reads instead of a
    /// read per entry; `None` for packs over [`MAX_TREE_PASS_OBJECTS`].
    fn headers(&self) -> Option<&[Hdr]> {
        self.hdrs.get_or_init(|| self.read_headers()).as_deref()
    }

    fn read_headers(&self) -> Option<Vec<Hdr>> {
        let n = self.sorted.len();
        if n > MAX_TREE_PASS_OBJECTS {
            return None;
        }
        let mut out = Vec::with_capacity(n);
        let (mut chunk, mut chunk_at) = (Vec::new(), 0u64);
        for i in 0..n {
            let off = self.sorted[i];
            let end = self.sorted.get(i + 1).copied().unwrap_or(self.data_end);
            let need = end.min(off + 32);
            let have = off >= chunk_at && need <= chunk_at + chunk.len() as u64;
            if !have {
                // One read for the next entries when they are dense,
                // else just this header: large objects are skipped over.
                let span_end = self
                    .sorted
                    .get((i + HDR_BATCH).min(n))
                    .copied()
                    .unwrap_or(self.data_end);
                let len = if span_end - off <= HDR_CHUNK {
                    span_end - off
                } else {
                    need - off
                };
                chunk.resize(len as usize, 0);
                chunk_at = off;
                if self.file.read_exact_at(&mut chunk, off).is_err() {
                    chunk.clear();
                    out.push(Hdr::BAD);
                    continue;
                }
            }
            let b = &chunk[(off - chunk_at) as usize..(need - chunk_at) as usize];
            let h = match parse_header(b, off) {
                Some(e) => Hdr {
                    kind: e.kind,
                    size: e.size,
                    span: end - off,
                    link: match e.base {
                        Base::None => LINK_ROOT,
                        Base::Ofs(b) => b,
                        Base::Ref(id) => self.find(&id).unwrap_or(LINK_FOREIGN),
                    },
                },
                None => Hdr::BAD,
            };
            out.push(h);
        }
        Some(out)
    }

    /// Index in `sorted` of the entry at `off`.
    fn index_of(&self, off: u64) -> Option<usize> {
        self.sorted.binary_search(&off).ok()
    }

    /// The header of the entry at `off` as (kind, base link), from the
    /// table when there is one (else read), `None` when it is malformed or
    /// larger than `max_size` (as [`Pack::header`]).
    fn link(&self, off: u64, max_size: u64, buf: &mut Vec<u8>) -> Option<(u8, u64)> {
        if let Some(t) = self.headers() {
            let h = t.get(self.index_of(off)?)?;
            let ok = h.kind != 0
                && h.size <= max_size
                && h.span <= max_size.saturating_mul(2).saturating_add(1 << 16);
            return ok.then_some((h.kind, h.link));
        }
        let e = self.header(off, max_size, buf)?;
        let link = match e.base {
            Base::None => LINK_ROOT,
            Base::Ofs(b) => b,
            Base::Ref(id) => self.find(&id).unwrap_or(LINK_FOREIGN),
        };
        Some((e.kind, link))
    }
}

/// Entries per header-table read at most, and bytes per read at most.
const HDR_BATCH: usize = 64;
const HDR_CHUNK: u64 = 1 << 20;
/// [`Hdr::link`] of an entry that is not a delta.
const LINK_ROOT: u64 = u64::MAX;
/// [`Hdr::link`] of a REF delta whose base is not in this pack.
const LINK_FOREIGN: u64 = u64::MAX - 1;

/// One entry of a pack's header table.
#[derive(Clone, Copy)]
struct Hdr {
    /// Entry type (0: unreadable or malformed).
    kind: u8,
    /// Object (or delta) size.
    size: u64,
    /// Bytes to the next entry.
    span: u64,
    /// Base offset, or [`LINK_ROOT`] / [`LINK_FOREIGN`].
    link: u64,
}

impl Hdr {
    const BAD: Hdr = Hdr {
        kind: 0,
        size: 0,
        span: 0,
        link: LINK_ROOT,
    };
}

/// Parses the entry header at the start of `buf` (the entry is at `off`).
fn parse_header(buf: &[u8], off: u64) -> Option<Entry> {
    let mut p = 0usize;
    let mut c = *buf.get(p)?;
    p += 1;
    let kind = (c >> 4) & 7;
    let mut size = u64::from(c & 15);
    let mut shift = 4;
    while c & 0x80 != 0 {
        c = *buf.get(p)?;
        p += 1;
        if shift > 56 {
            return None;
        }
        size |= u64::from(c & 0x7f) << shift;
        shift += 7;
    }
    let base = match kind {
        OBJ_OFS_DELTA => {
            let mut c = *buf.get(p)?;
            p += 1;
            let mut ofs = u64::from(c & 0x7f);
            while c & 0x80 != 0 {
                c = *buf.get(p)?;
                p += 1;
                ofs = ofs.checked_add(1)?.checked_mul(128)? | u64::from(c & 0x7f);
            }
            Base::Ofs(off.checked_sub(ofs).filter(|&b| b >= 12)?)
        }
        OBJ_REF_DELTA => {
            let id: [u8; 20] = buf.get(p..p + 20)?.try_into().ok()?;
            p += 20;
            Base::Ref(id)
        }
        1..=4 => Base::None,
        _ => return None,
    };
    Some(Entry {
        kind,
        size,
        start: p,
        base,
    })
}

/// Inflates a zlib stream that must produce exactly `size` bytes (the
/// size its entry header states, already bounded by the caller): a stream
/// that would produce more fails for want of room, one that produces less
/// is refused. Bytes after the stream (the next entry) are left alone.
/// `d` is reused between calls.
fn inflate(d: &mut libdeflater::Decompressor, data: &[u8], size: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    inflate_into(d, data, size, &mut out)?;
    Some(out)
}

/// [`inflate`] into `out` (its old content dropped): a delta is read
/// into the walker's one buffer instead of a fresh allocation each.
fn inflate_into(
    d: &mut libdeflater::Decompressor,
    data: &[u8],
    size: u64,
    out: &mut Vec<u8>,
) -> Option<()> {
    out.clear();
    out.resize(usize::try_from(size).ok()?, 0);
    let n = d.zlib_decompress(data, out).ok()?;
    (n == out.len()).then_some(())
}

/// Reads a delta header varint.
fn varint(d: &[u8], p: &mut usize) -> Option<u64> {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let c = *d.get(*p)?;
        *p += 1;
        if shift > 56 {
            return None;
        }
        v |= u64::from(c & 0x7f) << shift;
        shift += 7;
        if c & 0x80 == 0 {
            return Some(v);
        }
    }
}

/// Applies a git delta to `base`; `None` if it is malformed or its result
/// is larger than `max_size`.
pub(super) fn apply_delta(base: &[u8], delta: &[u8], max_size: u64) -> Option<Vec<u8>> {
    let mut p = 0;
    if varint(delta, &mut p)? != base.len() as u64 {
        return None;
    }
    let size = varint(delta, &mut p)?;
    if size > max_size {
        return None;
    }
    let mut out = Vec::with_capacity(size as usize);
    while p < delta.len() {
        let cmd = delta[p];
        p += 1;
        if cmd & 0x80 != 0 {
            let (mut off, mut len) = (0usize, 0usize);
            for i in 0..4 {
                if cmd & (1 << i) != 0 {
                    off |= usize::from(*delta.get(p)?) << (8 * i);
                    p += 1;
                }
            }
            for i in 0..3 {
                if cmd & (0x10 << i) != 0 {
                    len |= usize::from(*delta.get(p)?) << (8 * i);
                    p += 1;
                }
            }
            if len == 0 {
                len = 0x10000;
            }
            out.extend_from_slice(base.get(off..off.checked_add(len)?)?);
        } else if cmd != 0 {
            out.extend_from_slice(delta.get(p..p + usize::from(cmd))?);
            p += usize::from(cmd);
        } else {
            return None;
        }
        if out.len() as u64 > size {
            return None;
        }
    }
    (out.len() as u64 == size).then_some(out)
}

/// Bytes of resolved objects held at once while walking a delta forest
/// (the ancestors whose deltas are still pending); a subtree that would
/// pass it is left unresolved, for git2.
const MAX_HELD_BYTES: usize = 256 << 20;

/// Walks the delta forest `children` from `roots` depth-first, inflating
/// each entry once and calling `visit(offset, content)` for every object
/// resolved. Only ancestors with pending deltas are held (bounded by
/// [`MAX_HELD_BYTES`]), so a hostile pack with a huge fan-out or a deep
/// chain of large objects cannot exhaust memory.
fn walk_forest(
    pack: &Pack,
    roots: &[u64],
    children: &HashMap<u64, Vec<u64>>,
    max_size: u64,
    w: &mut Walker,
    mut visit: impl FnMut(u64, &Arc<Vec<u8>>),
) {
    let Walker {
        buf,
        delta,
        z,
        held,
        held_max,
    } = w;
    // Nothing is held between calls (the stack starts and ends empty).
    *held = 0;
    // (entry, its base's content; `None` for a root)
    let mut stack: Vec<(u64, Option<Arc<Vec<u8>>>)> = Vec::new();
    for &root in roots {
        stack.push((root, None));
        while let Some((off, base)) = stack.pop() {
            let Some(e) = pack.entry(off, max_size, buf) else {
                continue;
            };
            // A base is inflated into its own buffer (it is the object); a
            // delta into the walker's (only read while applying it).
            let raw = match &base {
                None => inflate(z, &buf[e.start..], e.size).map(Some),
                Some(_) => inflate_into(z, &buf[e.start..], e.size, delta).map(|()| None),
            };
            let Some(raw) = raw else {
                continue;
            };
            let data = match (&base, raw) {
                (Some(b), _) => apply_delta(b, delta, max_size),
                (None, raw) => raw,
            };
            if let Some(b) = base
                && Arc::strong_count(&b) == 1
            {
                *held -= b.len(); // its last pending delta was this one
            }
            let Some(data) = data else { continue };
            let data = Arc::new(data);
            visit(off, &data);
            if let Some(kids) = children.get(&off)
                && *held + data.len() <= *held_max
            {
                *held += data.len();
                for &k in kids.iter().rev() {
                    stack.push((k, Some(data.clone())));
                }
            }
        }
    }
}

/// The packs of a repository (`objects/pack/*.idx` under `git_dir`).
pub(super) struct Packs {
    packs: Vec<Pack>,
}

impl Packs {
    /// Opens every readable v2 pack; unreadable ones are skipped (their
    /// objects fall back to git2).
    pub(super) fn open(git_dir: &Path) -> Packs {
        let mut packs = Vec::new();
        if let Ok(rd) = std::fs::read_dir(git_dir.join("objects/pack")) {
            let mut idx: Vec<_> = rd
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "idx"))
                .collect();
            idx.sort();
            for p in idx.into_iter().take(MAX_PACKS) {
                if let Some(pk) = Pack::open(&p) {
                    packs.push(pk);
                }
            }
        }
        Packs { packs }
    }

    /// Every tree in the packs, raw (git's tree format), by id, each entry
    /// inflated once, up to `max_bytes` of tree content in all, on
    /// `threads` threads (each takes whole delta trees). History walks
    /// read thousands of trees, each a delta chain that libgit2 would
    /// replay from its base on every read.
    pub(super) fn all_trees(&self, max_bytes: usize, threads: usize) -> HashMap<Oid, Arc<Vec<u8>>> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let mut out: HashMap<Oid, Arc<Vec<u8>>> = HashMap::default();
        let total = AtomicUsize::new(0);
        for pack in &self.packs {
            // Headers in offset order: an OFS base precedes its delta, so
            // each entry's type is known when it is met.
            let Some(hdrs) = pack.headers() else { continue };
            let mut kind_of: Vec<u8> = vec![0; hdrs.len()];
            let mut children: HashMap<u64, Vec<u64>> = HashMap::default();
            let mut roots: Vec<u64> = Vec::new();
            for (i, h) in hdrs.iter().enumerate() {
                let off = pack.sorted[i];
                if h.kind == 0 || h.size > max_bytes as u64 {
                    continue;
                }
                let (kind, base) = match h.link {
                    LINK_ROOT => (h.kind, None),
                    LINK_FOREIGN => continue,
                    b => match pack.index_of(b).map(|j| kind_of[j]) {
                        // A base later in the pack (REF) is not known yet:
                        // that entry is left to git2.
                        Some(k) if k != 0 && b < off => (k, Some(b)),
                        _ => continue,
                    },
                };
                kind_of[i] = kind;
                if kind == OBJ_TREE {
                    match base {
                        Some(b) => children.entry(b).or_default().push(off),
                        None => roots.push(off),
                    }
                }
            }
            let mut id_at: HashMap<u64, usize> = HashMap::default();
            for (i, &o) in pack.offsets.iter().enumerate() {
                if pack.index_of(o).is_some_and(|j| kind_of[j] == OBJ_TREE) {
                    id_at.insert(o, i);
                }
            }
            let next = AtomicUsize::new(0);
            let parts: Vec<HashMap<Oid, Arc<Vec<u8>>>> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..threads.max(1))
                    .map(|_| {
                        sc.spawn(|| {
                            let mut got: HashMap<Oid, Arc<Vec<u8>>> = HashMap::default();
                            let mut w = Walker::new(threads);
                            loop {
                                let r = next.fetch_add(1, Ordering::Relaxed);
                                let Some(root) = roots.get(r) else { break };
                                walk_forest(
                                    pack,
                                    std::slice::from_ref(root),
                                    &children,
                                    max_bytes as u64,
                                    &mut w,
                                    |off, data| {
                                        let Some(&i) = id_at.get(&off) else { return };
                                        let Ok(id) =
                                            Oid::from_bytes(&pack.names[i * 20..i * 20 + 20])
                                        else {
                                            return;
                                        };
                                        // Past the bound the caller reads
                                        // the rest with git2.
                                        let t = total.fetch_add(data.len(), Ordering::Relaxed);
                                        if t + data.len() <= max_bytes {
                                            got.insert(id, data.clone());
                                        }
                                    },
                                );
                            }
                            got
                        })
                    })
                    .collect();
                hs.into_iter().map(super::join_worker).collect()
            });
            for p in parts {
                out.extend(p);
            }
            if total.load(Ordering::Relaxed) > max_bytes {
                break;
            }
        }
        out
    }

    /// Plans the reading of the blobs `wanted`: per pack, the delta chains
    /// of the wanted entries down to their bases. A blob found in an
    /// earlier pack is not looked for in later ones. Blobs in no pack,
    /// with a thin or foreign base, or whose chain passes a non-blob base
    /// are left out (the caller reads them another way).
    pub(super) fn plan(&self, wanted: &[Oid], max_size: u64) -> Plan {
        let mut taken = vec![false; wanted.len()];
        let mut buf = Vec::new();
        let mut plans = Vec::new();
        for (pi, pack) in self.packs.iter().enumerate() {
            // Offsets of wanted blobs in this pack.
            let mut want_at: HashMap<u64, Vec<usize>> = HashMap::default();
            for (i, id) in wanted.iter().enumerate() {
                if !taken[i]
                    && let Some(o) = pack.find(id.as_bytes())
                {
                    want_at.entry(o).or_default().push(i);
                    taken[i] = true;
                }
            }
            if want_at.is_empty() {
                continue;
            }
            // Chains down to their bases: parent links and roots.
            let mut base_of: HashMap<u64, Option<u64>> = HashMap::default();
            let mut starts: Vec<u64> = want_at.keys().copied().collect();
            starts.sort_unstable();
            for s in starts {
                let mut off = s;
                let mut depth = 0;
                while !base_of.contains_key(&off) && depth < MAX_DEPTH {
                    depth += 1;
                    let Some((kind, link)) = pack.link(off, max_size, &mut buf) else {
                        break;
                    };
                    let b = match link {
                        LINK_ROOT => None,
                        LINK_FOREIGN => break, // thin or foreign base: git2 reads it
                        b => Some(b),
                    };
                    if b.is_none() && kind != OBJ_BLOB {
                        break; // a chain of wanted blobs ends in a blob
                    }
                    base_of.insert(off, b);
                    match b {
                        Some(b) => off = b,
                        None => break,
                    }
                }
            }
            let mut children: HashMap<u64, Vec<u64>> = HashMap::default();
            let mut roots: Vec<u64> = Vec::new();
            for (&o, &b) in &base_of {
                match b {
                    Some(b) => children.entry(b).or_default().push(o),
                    None => roots.push(o),
                }
            }
            roots.sort_unstable();
            for v in children.values_mut() {
                v.sort_unstable();
            }
            plans.push(PackPlan {
                pack: pi,
                want_at,
                children,
                roots,
            });
        }
        let units = plans
            .iter()
            .enumerate()
            .flat_map(|(k, p)| (0..p.roots.len()).map(move |r| (k, r)))
            .collect();
        Plan {
            packs: plans,
            units,
        }
    }

    /// Walks unit `u` of `plan` (one delta tree: a base and every delta on
    /// it), calling `emit(i, bytes)` for each `wanted[i]` met; each entry is
    /// inflated once. Units are independent, so threads may walk different
    /// units of one plan at once, each with its own [`Walker`].
    pub(super) fn walk_unit(
        &self,
        plan: &Plan,
        u: usize,
        w: &mut Walker,
        max_size: u64,
        mut emit: impl FnMut(usize, &Arc<Vec<u8>>),
    ) {
        let Some(&(k, r)) = plan.units.get(u) else {
            return;
        };
        let pp = &plan.packs[k];
        let Some(pack) = self.packs.get(pp.pack) else {
            return;
        };
        walk_forest(
            pack,
            &pp.roots[r..=r],
            &pp.children,
            max_size,
            w,
            |off, data| {
                for &i in pp.want_at.get(&off).into_iter().flatten() {
                    emit(i, data);
                }
            },
        );
    }

    /// Resolves the blobs `wanted` (20-byte ids) on this thread, calling
    /// `emit(i, bytes)` once for each `wanted[i]` found in a pack, in pack
    /// order ([`Packs::plan`] then every unit). Returns which were emitted.
    #[cfg(test)]
    pub(super) fn resolve(
        &self,
        wanted: &[Oid],
        max_size: u64,
        mut emit: impl FnMut(usize, Arc<Vec<u8>>),
    ) -> Vec<bool> {
        let mut done = vec![false; wanted.len()];
        let plan = self.plan(wanted, max_size);
        let mut w = Walker::new(1);
        for u in 0..plan.units() {
            self.walk_unit(&plan, u, &mut w, max_size, |i, d| {
                done[i] = true;
                emit(i, d.clone());
            });
        }
        done
    }
}

/// Per-pack part of a [`Plan`].
struct PackPlan {
    pack: usize,
    /// Wanted indexes at each entry offset.
    want_at: HashMap<u64, Vec<usize>>,
    children: HashMap<u64, Vec<u64>>,
    /// Bases of the delta trees, by offset.
    roots: Vec<u64>,
}

/// The delta trees holding a set of wanted blobs ([`Packs::plan`]), as
/// independent units of work.
pub(super) struct Plan {
    packs: Vec<PackPlan>,
    /// (pack plan, root index), in pack order.
    units: Vec<(usize, usize)>,
}

impl Plan {
    /// Number of units ([`Packs::walk_unit`]).
    pub(super) fn units(&self) -> usize {
        self.units.len()
    }
}

/// One thread's reusable read state: entry buffer and inflater (its state
/// is tens of KB to set up).
pub(super) struct Walker {
    buf: Vec<u8>,
    /// The delta being applied, inflated.
    delta: Vec<u8>,
    z: libdeflater::Decompressor,
    /// Bytes of resolved ancestors held for pending deltas, and the most
    /// allowed.
    held: usize,
    held_max: usize,
}

impl Walker {
    /// A walker for one thread of `threads` walking at once: each gets an
    /// equal share of [`MAX_HELD_BYTES`], so the bound holds for them all.
    pub(super) fn new(threads: usize) -> Self {
        Walker {
            buf: Vec::new(),
            delta: Vec::new(),
            z: libdeflater::Decompressor::new(),
            held: 0,
            held_max: MAX_HELD_BYTES / threads.max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry inflates to exactly the size its header states: a stream
    /// that would produce more or less is refused, and the bytes after it
    /// (the next entry) are not read as part of it.
    #[test]
    fn inflate_takes_exactly_the_stated_size() {
        use flate2::{Compression, write::ZlibEncoder};
        use std::io::Write;
        let text = b"line one\nline two\n".repeat(50);
        let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
        enc.write_all(&text).unwrap();
        let mut stream = enc.finish().unwrap();
        let n = text.len() as u64;
        let mut d = libdeflater::Decompressor::new();
        assert_eq!(inflate(&mut d, &stream, n).as_deref(), Some(&text[..]));
        assert_eq!(inflate(&mut d, &stream, n - 1), None, "longer than stated");
        assert_eq!(inflate(&mut d, &stream, n + 1), None, "shorter than stated");
        assert_eq!(
            inflate(&mut d, &stream[..stream.len() - 6], n),
            None,
            "truncated"
        );
        stream.extend_from_slice(b"\x95\x0anext entry bytes");
        assert_eq!(inflate(&mut d, &stream, n).as_deref(), Some(&text[..]));
        assert_eq!(inflate(&mut d, b"", 0), None, "no stream at all");
    }

    /// A pack written by git itself (deep delta chains over many versions
    /// of one file) resolves to exactly the bytes git2 reads.
    #[test]
    fn resolves_deltified_pack_like_git2() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::new("a", "a@x.invalid", &git2::Time::new(1, 0)).unwrap();
        let mut lines: Vec<String> = (0..300).map(|i| format!("line {i} value {i}")).collect();
        let mut parent: Option<Oid> = None;
        let mut blobs = Vec::new();
        for c in 0..40 {
            lines[(c * 7) % 300] = format!("changed {c} token {}", c * 31);
            lines.push(format!("appended {c}"));
            let b = repo.blob(lines.join("\n").as_bytes()).unwrap();
            blobs.push(b);
            let mut tb = repo.treebuilder(None).unwrap();
            tb.insert("f.txt", b, 0o100644).unwrap();
            let tree = repo.find_tree(tb.write().unwrap()).unwrap();
            let ps: Vec<git2::Commit> = parent
                .map(|p| repo.find_commit(p).unwrap())
                .into_iter()
                .collect();
            let pr: Vec<&git2::Commit> = ps.iter().collect();
            parent = Some(
                repo.commit(Some("HEAD"), &sig, &sig, "m", &tree, &pr)
                    .unwrap(),
            );
        }
        // Pack with libgit2's packbuilder (deltified), then drop the loose
        // objects so only the pack holds them.
        let mut pb = repo.packbuilder().unwrap();
        pb.insert_commit(parent.unwrap()).unwrap();
        let mut walk = repo.revwalk().unwrap();
        walk.push(parent.unwrap()).unwrap();
        pb.insert_walk(&mut walk).unwrap();
        let mut buf = git2::Buf::new();
        pb.write_buf(&mut buf).unwrap();
        let packdir = dir.path().join(".git/objects/pack");
        std::fs::create_dir_all(&packdir).unwrap();
        let mut idxr = git2::Indexer::new(None, &packdir, 0o644, true).unwrap();
        use std::io::Write;
        idxr.write_all(&buf).unwrap();
        idxr.commit().unwrap();
        let packs = Packs::open(&dir.path().join(".git"));
        assert_eq!(packs.packs.len(), 1);
        let pk = &packs.packs[0];
        let mut buf = Vec::new();
        let deltas = blobs
            .iter()
            .filter(|b| {
                let off = pk.find(b.as_bytes()).expect("blob in pack");
                !matches!(
                    pk.header(off, 1 << 30, &mut buf).expect("header").base,
                    Base::None
                )
            })
            .count();
        assert!(
            deltas >= 20,
            "the pack deltifies the versions: {deltas} deltas"
        );
        let mut got: Vec<Option<Vec<u8>>> = vec![None; blobs.len()];
        let done = packs.resolve(&blobs, 1 << 30, |i, d| got[i] = Some(d.to_vec()));
        assert!(done.iter().all(|&d| d), "all blobs resolved from the pack");
        for (i, b) in blobs.iter().enumerate() {
            let want = repo.find_blob(*b).unwrap().content().to_vec();
            assert_eq!(got[i].as_deref(), Some(&want[..]), "blob {i}");
        }
        // The header table agrees with reading each header on its own.
        let hdrs = pk.headers().expect("header table");
        for (i, &off) in pk.sorted.iter().enumerate() {
            let e = pk.header(off, 1 << 30, &mut buf).expect("header");
            let link = match e.base {
                Base::None => LINK_ROOT,
                Base::Ofs(b) => b,
                Base::Ref(id) => pk.find(&id).unwrap_or(LINK_FOREIGN),
            };
            assert_eq!(
                (hdrs[i].kind, hdrs[i].size, hdrs[i].link),
                (e.kind, e.size, link)
            );
        }
        // Every tree, on one thread or several, is what git2 reads.
        let one = packs.all_trees(1 << 30, 1);
        assert_eq!(one.len(), 40, "one tree per commit");
        let three = packs.all_trees(1 << 30, 3);
        assert_eq!(one, three);
        let odb = repo.odb().unwrap();
        for (id, data) in &one {
            let t = odb.read(*id).unwrap();
            assert_eq!(t.kind(), git2::ObjectType::Tree);
            assert_eq!(&data[..], t.data());
        }
        // Size bound: nothing larger than the bound is produced.
        let done = packs.resolve(&blobs, 64, |_, _| panic!("over the bound"));
        assert!(done.iter().all(|&d| !d));
    }

    /// Malformed deltas are rejected, never panicking or over-allocating.
    #[test]
    fn bad_deltas_are_rejected() {
        let base = b"hello world";
        // src size mismatch
        assert!(apply_delta(base, &[3, 5, 5, b'a', b'b', b'c', b'd', b'e'], 100).is_none());
        // valid insert
        assert_eq!(
            apply_delta(base, &[11, 5, 5, b'a', b'b', b'c', b'd', b'e'], 100).as_deref(),
            Some(&b"abcde"[..])
        );
        // copy past the base's end
        assert!(apply_delta(base, &[11, 20, 0x91, 0, 20], 100).is_none());
        // declared result over the bound
        assert!(apply_delta(base, &[11, 0xff, 0x7f], 100).is_none());
        // copy of 5 bytes from offset 6 = "world"
        assert_eq!(
            apply_delta(base, &[11, 5, 0x91, 6, 5], 100).as_deref(),
            Some(&b"world"[..])
        );
    }
}
