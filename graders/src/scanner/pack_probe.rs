//! The pack reader's answers as plain values, for the differential fuzz
//! test against git2 (`graders/tests/fuzz_pack.rs`). Not for production
//! use: scans reach the reader through [`super::Scanner`]'s history walks.

use super::pack::{Packs, Walker};
use git2::Oid;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The blobs `wanted` that the packs under `git_dir` hold, read by this
/// crate's pack reader (each `None` is left to git2 by the reader), no
/// object over `max_size` bytes.
pub fn blobs(git_dir: &Path, wanted: &[Oid], max_size: u64) -> Vec<Option<Vec<u8>>> {
    let packs = Packs::open(git_dir);
    let plan = packs.plan(wanted, max_size);
    let mut w = Walker::new(1);
    let mut got = vec![None; wanted.len()];
    for u in 0..plan.units() {
        packs.walk_unit(&plan, u, &mut w, max_size, |i, d| {
            got[i] = Some(d.to_vec());
        });
    }
    got
}

/// Every tree the reader's all-trees pass finds in the packs, on
/// `threads` threads.
pub fn trees(git_dir: &Path, max_bytes: usize, threads: usize) -> HashMap<Oid, Arc<Vec<u8>>> {
    Packs::open(git_dir)
        .all_trees(max_bytes, threads)
        .into_iter()
        .collect()
}
