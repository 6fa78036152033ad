//! The keyed line hash of history scans: a line whose hash is in the parent
//! version's line set is treated as unchanged and not scanned, so a
//! collision would hide that line from the grader. The workspace is the
//! agent's, so the hash must resist *chosen* lines, not just random ones.
//!
//! Why this construction: polynomial evaluation over the prime field
//! GF(2^61 − 1) at a secret random point `k` drawn per scan (the classic
//! universal hash of Carter–Wegman / Dietzfelbinger et al.). A line is
//! split into 7-byte little-endian coefficients (each < 2^56 < p),
//! preceded by its length, so distinct lines give distinct nonzero
//! difference polynomials of degree ≤ ⌈len/7⌉; for *any* two distinct
//! lines chosen without knowledge of `k`, they collide with probability at
//! most ⌈len/7⌉ / (2^61 − 1) (≈ 2^-54 for a 1 KB line). No hash value ever
//! leaves the process, so an agent cannot learn `k`.
//!
//! It replaced SipHash-1-3 (std `RandomState`, ~7% of a cold history
//! scan's CPU): an unkeyed or merely "DoS-resistant" fast hash (FxHash,
//! foldhash, whose docs disclaim any security use) would let a crafted
//! line collide with a known one. This one costs one 64×64→128-bit multiply
//! per 7 bytes, two independent ones per 14-byte step.

use std::hash::BuildHasher;

/// The Mersenne prime 2^61 − 1.
const P: u64 = (1 << 61) - 1;
/// Low 56 bits: one 7-byte coefficient.
const M56: u64 = (1 << 56) - 1;

/// A per-scan random key for [`LineHasher::hash`]; clones share the key.
#[derive(Clone, Copy)]
pub(crate) struct LineHasher {
    /// The evaluation point, in [1, p).
    k: u64,
    /// k² mod p, for two coefficients per step.
    k2: u64,
    /// k³ and k⁴ mod p, for four coefficients per step.
    k3: u64,
    k4: u64,
}

/// `x` mod p for `x` < 2^124.
#[inline]
fn reduce(x: u128) -> u64 {
    let r = (x as u64 & P) + (x >> 61) as u64; // < 2^61 + 2^63
    let r = (r & P) + (r >> 61); // < 2^61 + 4
    if r >= P { r - P } else { r }
}

impl LineHasher {
    /// A fresh key from the OS-seeded std `RandomState` (a SipHash output
    /// under its random key, so unpredictable).
    pub(crate) fn new() -> LineHasher {
        let s = std::hash::RandomState::new();
        // Rejection keeps the key uniform on [1, p).
        let k = (0u64..)
            .map(|i| s.hash_one(i) >> 3)
            .find(|&k| k != 0 && k < P)
            .unwrap_or(1);
        LineHasher::with_key(k)
    }

    fn with_key(k: u64) -> LineHasher {
        let k2 = reduce(u128::from(k) * u128::from(k));
        let k3 = reduce(u128::from(k2) * u128::from(k));
        LineHasher {
            k,
            k2,
            k3,
            k4: reduce(u128::from(k2) * u128::from(k2)),
        }
    }

    /// The hash of one line (without its newline), in [0, p).
    #[inline]
    pub(crate) fn hash(&self, line: &[u8]) -> u64 {
        let (k, k2) = (u128::from(self.k), u128::from(self.k2));
        // Lines are far shorter than p bytes: the length is exact.
        let mut h = line.len() as u64 % P;
        let mut p = line;
        // Four coefficients per step (h·k⁴ + c1·k³ + c2·k² + c3·k + c4 <
        // 2^122 + 3·2^117 + 2^56 < 2^123): one reduction and one link of
        // the dependent multiply chain per 28 bytes, while 29 are there.
        let (k3, k4) = (u128::from(self.k3), u128::from(self.k4));
        let co = |p: &[u8], i: usize| {
            u64::from_le_bytes(p[i..i + 8].try_into().unwrap_or_default()) & M56
        };
        while p.len() >= 29 {
            let (c1, c2, c3, c4) = (co(p, 0), co(p, 7), co(p, 14), co(p, 21));
            h = reduce(
                u128::from(h) * k4
                    + u128::from(c1) * k3
                    + u128::from(c2) * k2
                    + u128::from(c3) * k
                    + u128::from(c4),
            );
            p = &p[28..];
        }
        // Two coefficients per step (h·k² + c1·k + c2 < 2^123), while 15
        // bytes are there for the two unaligned 8-byte reads.
        while p.len() >= 15 {
            let c1 = u64::from_le_bytes(p[..8].try_into().unwrap_or_default()) & M56;
            let c2 = u64::from_le_bytes(p[7..15].try_into().unwrap_or_default()) & M56;
            h = reduce(u128::from(h) * k2 + u128::from(c1) * k + u128::from(c2));
            p = &p[14..];
        }
        // The last 0–14 bytes: zero-padded coefficients (the length keeps
        // "ab" and "ab\0" apart). A line of 8 bytes or more takes them from
        // its last 8 bytes (the tail's bytes are their top ones) and its
        // first 8, no copy.
        let t = p.len();
        if t == 0 {
            return h;
        }
        let (c0, c1) = if line.len() >= 8 {
            let last = u64::from_le_bytes(line[line.len() - 8..].try_into().unwrap_or_default());
            if t <= 7 {
                (last >> (8 * (8 - t)), 0)
            } else {
                let first = u64::from_le_bytes(p[..8].try_into().unwrap_or_default()) & M56;
                (first, last >> (8 * (15 - t)))
            }
        } else {
            let mut buf = [0u8; 8];
            buf[..t].copy_from_slice(p);
            (u64::from_le_bytes(buf), 0)
        };
        if t <= 7 {
            reduce(u128::from(h) * k + u128::from(c0))
        } else {
            reduce(u128::from(h) * k2 + u128::from(c0) * k + u128::from(c1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one coefficient at a time: Horner over
    /// [len, c1, …, cn] mod p.
    fn reference(k: u64, line: &[u8]) -> u64 {
        let p = u128::from(P);
        let mut h = line.len() as u128 % p;
        for ch in line.chunks(7) {
            let mut b = [0u8; 8];
            b[..ch.len()].copy_from_slice(ch);
            h = (h * u128::from(k) + u128::from(u64::from_le_bytes(b))) % p;
        }
        h as u64
    }

    /// The two-coefficient steps and the tail agree with the definition at
    /// every length around the step and chunk boundaries, for keys at the
    /// edges of the field and random ones.
    #[test]
    fn fast_path_is_the_polynomial() {
        let bytes: Vec<u8> = (0..200u32).map(|i| (i * 151 + 7) as u8 | 0x80).collect();
        let keys = [1, 2, P - 1, P - 2, 1 << 60, 0x0123_4567_89ab_cdef];
        for k in keys.into_iter().chain((0..4).map(|_| LineHasher::new().k)) {
            let h = LineHasher::with_key(k);
            for n in 0..bytes.len() {
                assert_eq!(
                    h.hash(&bytes[..n]),
                    reference(k, &bytes[..n]),
                    "k={k} n={n}"
                );
            }
        }
    }

    /// Keys are fresh per hasher and in range; lines that differ only by
    /// trailing zero bytes, one bit, or their order of chunks still differ.
    #[test]
    fn keyed_and_separating() {
        let a = LineHasher::new();
        let b = LineHasher::new();
        assert!(a.k != b.k && a.k > 0 && a.k < P && b.k > 0 && b.k < P);
        let lines: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\0".to_vec(),
            b"ab".to_vec(),
            b"ab\0".to_vec(),
            b"token = \"ghp_aaaaaaaaaaaaaaaaaaaa\"".to_vec(),
            b"token = \"ghp_aaaaaaaaaaaaaaaaaaab\"".to_vec(),
            b"1234567abcdefg".to_vec(),
            b"abcdefg1234567".to_vec(),
        ];
        let hs: std::collections::HashSet<u64> = lines.iter().map(|l| a.hash(l)).collect();
        assert_eq!(hs.len(), lines.len());
        assert!(lines.iter().skip(1).any(|l| a.hash(l) != b.hash(l)));
    }
}
