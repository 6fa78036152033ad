//! Planting the hidden per-run canary module into the prepared copy.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use graders::health_score::Canary;

/// Writes the canary module into the prepared copy, replacing nothing:
/// its name is fresh, and its directory is a real one (the restore made
/// every pristine parent a real directory).
pub(super) fn plant_canary(tree: &Path, canary: &Canary) -> std::io::Result<()> {
    let path = tree.join(&canary.rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::io::Write::write_all(&mut f, canary.source().as_bytes())?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
}
