//! The grade cache: keyed by a hash of the prepared tree and the manifest,
//! so an unchanged tree is never retested.

use std::collections::{HashMap, VecDeque};

use sha2::{Digest, Sha256};

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
