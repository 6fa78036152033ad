//! UTF-16 and UTF-32 islands in either byte order.

use super::*;

/// UTF-16 and UTF-32 islands in both byte orders at every alignment,
/// Latin-1 range (what an ASCII secret becomes); each island is a stream
/// start of its layer.
pub(super) fn wide_layers(data: &[u8], out: &mut dyn FnMut(Layer)) {
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
