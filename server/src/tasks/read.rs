//! Reading the task files (task.json, oracle.json, templates, truth.json).

use anyhow::{Context, bail};
use std::io::Read as _;
use std::path::Path;

/// Reads a regular file of at most `max` bytes (task files are trusted but
/// bounded all the same, and never followed through symlinks).
pub(crate) fn read_capped(path: &Path, max: u64) -> anyhow::Result<Vec<u8>> {
    let meta =
        std::fs::symlink_metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .take(max + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        bail!("{} is larger than {max} bytes", path.display());
    }
    Ok(buf)
}
