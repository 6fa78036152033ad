//! What the environment benchmarks share (`mod common;` in each): where
//! the project and its venv are, and how a percentile is taken.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The venv the sandbox mounts: `SECAUDIT_VENV`, else the project's
/// `.venv`, made absolute.
pub fn venv() -> PathBuf {
    std::path::absolute(
        std::env::var_os("SECAUDIT_VENV").map_or_else(|| root().join(".venv"), PathBuf::from),
    )
    .expect("venv path")
}

/// Nearest-rank percentile `p` of `v` (sorted here); NaN when empty.
pub fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}
