//! Added-line scans: a blob's lines keyed and hashed, the set of its
//! parent version's, and the findings on the lines the parent lacks.

use super::*;

impl Scanner {
    /// Findings of `data` on lines not in `parent` (the set of its line hashes by
    /// [`line_hashes`] with the same `hasher`; `own` are `data`'s, in line
    /// order), with `data`'s own line numbers
    /// and offsets. Runs of added lines are scanned with [`CTX_BEFORE`] /
    /// [`CTX_AFTER`] bytes of whole surrounding lines, and a finding is
    /// kept when it starts on an added line. Blobs where that is not
    /// faithful — binary or non-UTF-8, a window or larger, or holding a PEM
    /// marker (blocks span lines) — are scanned whole, keeping findings
    /// that overlap an added line.
    pub(super) fn scan_added(
        &self,
        path: &str,
        data: &[u8],
        own: &LineHashes,
        parent: &LineSet,
    ) -> Vec<Finding> {
        // Runs of added lines, as byte ranges including their newlines.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut s = 0;
        parent.warm();
        for (&h, &e) in own.hashes.iter().zip(&own.ends) {
            let next = if e < data.len() { e + 1 } else { data.len() };
            if !parent.contains(h) {
                match runs.last_mut() {
                    Some(r) if r.1 == s => r.1 = next,
                    _ => runs.push((s, next)),
                }
            }
            s = next;
        }
        if runs.is_empty() {
            return Vec::new();
        }
        let in_runs = |x: usize| {
            let i = runs.partition_point(|r| r.1 <= x);
            runs.get(i).is_some_and(|r| r.0 <= x)
        };
        let text = std::str::from_utf8(data).ok();
        let raw = data[..data.len().min(super::super::BINARY_SNIFF)].contains(&0) || text.is_none();
        let text = match text {
            Some(t)
                if !raw
                    && data.len() < super::super::WINDOW
                    && !super::super::PEM_MARK.is_match(data) =>
            {
                t
            }
            _ => {
                let mut r = data;
                let mut f = self
                    .scan_reader_raw(path, &mut r)
                    .map(|x| x.0)
                    .unwrap_or_default();
                f.retain(|x| {
                    let i = runs.partition_point(|r| r.1 <= x.byte_start);
                    runs.get(i)
                        .is_some_and(|r| r.0 < x.byte_end.max(x.byte_start + 1))
                });
                return f;
            }
        };
        let line_start = |x: usize| memchr::memrchr(b'\n', &data[..x]).map_or(0, |i| i + 1);
        let line_end =
            |x: usize| memchr::memchr(b'\n', &data[x..]).map_or(data.len(), |i| x + i + 1);
        // Segments to scan: runs widened to whole context lines, merged.
        let mut segs: Vec<(usize, usize)> = Vec::new();
        for &(a, b) in &runs {
            let ws = line_start(a.saturating_sub(CTX_BEFORE));
            let we = if b >= data.len() {
                data.len()
            } else {
                line_end((b + CTX_AFTER).min(data.len() - 1))
            };
            match segs.last_mut() {
                Some(l) if l.1 >= ws => l.1 = l.1.max(we),
                _ => segs.push((ws, we)),
            }
        }
        let mut out = Vec::new();
        let mut budget = self.cfg.max_decoded_bytes;
        for (ws, we) in segs {
            // Newlines before the segment: the line ends before it (the
            // last line's end, `data.len()`, is never before one).
            let line = own.ends.partition_point(|&e| e < ws);
            // Whole lines of valid UTF-8 text: what `scan_chunk` would
            // scan, without validating the segment again.
            for mut f in self.scan_str(path, &text[ws..we], &mut budget) {
                if !in_runs(ws + f.byte_start) {
                    continue;
                }
                f.line += line;
                f.byte_start += ws;
                f.byte_end += ws;
                out.push(f);
            }
            if out.len() >= self.cfg.max_findings_per_file {
                out.truncate(self.cfg.max_findings_per_file);
                break;
            }
        }
        out
    }
}

/// A blob's lines: their keyed hashes and where each ends (its newline,
/// or the end of the data), in order.
pub(super) struct LineHashes {
    pub(super) hashes: Vec<u64>,
    pub(super) ends: Vec<usize>,
}

/// Keyed hashes of the lines of `data` (split on `\n`; a final newline
/// ends the last line), in order, with the lines' ends (kept so an
/// added-line scan does not look for the newlines again). The key is
/// drawn per scan, so no workspace can craft a line that collides with
/// another to hide it (see [`LineHasher`]).
pub(super) fn line_hashes(data: &[u8], hasher: &LineHasher) -> LineHashes {
    let cap = data.len() / 32 + 1;
    let mut v = LineHashes {
        hashes: Vec::with_capacity(cap),
        ends: Vec::with_capacity(cap),
    };
    let mut s = 0;
    for nl in memchr::memchr_iter(b'\n', data) {
        v.hashes.push(hasher.hash(&data[s..nl]));
        v.ends.push(nl);
        s = nl + 1;
    }
    if s < data.len() {
        v.hashes.push(hasher.hash(&data[s..]));
        v.ends.push(data.len());
    }
    v
}

/// The set of a version's line hashes: an open-addressing table indexed
/// by the (keyed, so unpredictable) hash itself, at most half full. A
/// lookup is one or two probes, where a binary search over the sorted
/// hashes cost a dozen mispredicted branches per line of every version.
pub(crate) struct LineSet {
    /// 0 = empty; a hash of 0 is stored as 1 (both sides map it alike).
    slots: Vec<u64>,
    mask: usize,
}

impl LineSet {
    pub(super) fn new(hashes: &[u64]) -> LineSet {
        let cap = (hashes.len() * 2).next_power_of_two().max(16);
        let mut t = LineSet {
            slots: vec![0; cap],
            mask: cap - 1,
        };
        for &h in hashes {
            let h = h.max(1);
            let mut i = (h >> 32) as usize & t.mask;
            while t.slots[i] != 0 && t.slots[i] != h {
                i = (i + 1) & t.mask;
            }
            t.slots[i] = h;
        }
        t
    }

    /// Reads a table of at most [`WARM_SLOTS`] once, in order, so the
    /// lookups that follow hit the cache: a version's table was built when
    /// that version was read, usually long enough before its next version
    /// to have left the cache, and a sequential pass (prefetched by the
    /// hardware) costs less than the miss of nearly every lookup.
    pub(super) fn warm(&self) {
        if self.slots.len() <= WARM_SLOTS {
            std::hint::black_box(self.slots.iter().fold(0u64, |a, &x| a | x));
        }
    }

    pub(super) fn contains(&self, h: u64) -> bool {
        let h = h.max(1);
        let mut i = (h >> 32) as usize & self.mask;
        loop {
            match self.slots[i] {
                0 => return false,
                x if x == h => return true,
                _ => i = (i + 1) & self.mask,
            }
        }
    }
}

/// Slots of the largest table [`LineSet::warm`] reads ahead (256 KiB).
const WARM_SLOTS: usize = 1 << 15;

/// The set of `hashes`.
pub(super) fn line_set(hashes: &[u64]) -> LineSet {
    LineSet::new(hashes)
}
