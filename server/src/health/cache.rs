//! The grade cache: keyed by a hash of the prepared tree and the manifest,
//! so an unchanged tree is never retested.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::copy::{CopyBudget, open_regular};
use crate::models::HealthSummary;
use graders::health_score::ExpectedTests;

/// Cached results kept (one per distinct tree); the oldest goes first.
pub(super) const CACHE_CAP: usize = 512;

#[derive(Debug, Default)]
pub(super) struct Cache {
    pub(super) map: HashMap<[u8; 32], HealthSummary>,
    pub(super) order: VecDeque<[u8; 32]>,
}

impl Cache {
    pub(super) fn get(&self, key: &[u8; 32]) -> Option<HealthSummary> {
        self.map.get(key).cloned()
    }

    pub(super) fn put(&mut self, key: [u8; 32], value: HealthSummary) {
        if self.map.insert(key, value).is_none() {
            self.order.push_back(key);
            while self.order.len() > CACHE_CAP {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }
}

pub(super) fn cache_key(tree: &[u8; 32], expected: &ExpectedTests) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(tree);
    h.update(expected.total.to_le_bytes());
    for n in &expected.names {
        h.update((n.len() as u64).to_le_bytes());
        h.update(n.as_bytes());
    }
    h.finalize().into()
}

/// SHA-256 over the sorted tree: for each entry its relative path, type,
/// permission bits and content (or link target).
pub(super) fn hash_tree(tree: &Path, budget: &CopyBudget) -> Result<[u8; 32], String> {
    let mut h = Sha256::new();
    let mut stack = vec![PathBuf::new()];
    let mut all = Vec::new();
    while let Some(rel) = stack.pop() {
        let rd = std::fs::read_dir(tree.join(&rel)).map_err(|e| format!("hashing: {e}"))?;
        for e in rd {
            let e = e.map_err(|e| format!("hashing: {e}"))?;
            let r = rel.join(e.file_name());
            if e.file_type().map_err(|e| format!("hashing: {e}"))?.is_dir() {
                stack.push(r.clone());
            }
            all.push(r);
            if all.len() > budget.max_entries * 2 {
                return Err("copy over budget while hashing".into());
            }
        }
    }
    all.sort();
    let mut buf = vec![0u8; 64 << 10];
    for rel in all {
        use std::os::unix::ffi::OsStrExt;
        let path = tree.join(&rel);
        let m = std::fs::symlink_metadata(&path).map_err(|e| format!("hashing: {e}"))?;
        let p = rel.as_os_str().as_bytes();
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
        h.update((m.mode() & 0o170777).to_le_bytes());
        if m.file_type().is_symlink() {
            let t = std::fs::read_link(&path).map_err(|e| format!("hashing: {e}"))?;
            h.update(t.as_os_str().as_bytes());
        } else if m.is_file() {
            let (mut f, m) = open_regular(&path).map_err(|e| format!("hashing: {e}"))?;
            h.update(m.len().to_le_bytes());
            loop {
                let n = f.read(&mut buf).map_err(|e| format!("hashing: {e}"))?;
                if n == 0 {
                    break;
                }
                h.update(&buf[..n]);
            }
        }
    }
    Ok(h.finalize().into())
}
