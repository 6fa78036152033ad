//! Walking a workspace without trusting it (reliability.md H6, H9).
//!
//! Every directory entry is looked at with `lstat` semantics
//! (`DirEntry::file_type` does not follow links). Symlinks are never
//! followed: their target string is searched as data. Regular files are
//! opened with `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY` and re-checked with
//! `fstat` (a FIFO swapped in after listing cannot block us). FIFOs,
//! sockets and devices are never opened. `.git` is walked like any other
//! directory, objects included, so a dir-mode agent that commits the
//! secret into a fresh repository has not removed it.
//!
//! Grading runs after the step's sandbox has exited, so nothing renames
//! directories under the walk; the remaining TOCTOU (a directory replaced
//! by a link between `lstat` and `read_dir`) needs a concurrent writer.

use super::content::{Ctx, InflateBudget};
use super::needles::Needles;
use super::{PlantedIndex, TreeEvidence, TreeLimits};
use std::fs::{self, OpenOptions};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

struct Walk<'a, 'n> {
    ctx: Ctx<'n>,
    limits: &'a TreeLimits,
    files: u64,
    bytes: u64,
    special: u64,
}

/// See [`super::scan_tree`].
pub(crate) fn scan_tree(root: &Path, index: &PlantedIndex, limits: &TreeLimits) -> TreeEvidence {
    let needles: &Needles = &index.needles;
    let ctx = Ctx::new(
        needles,
        InflateBudget {
            bytes_left: limits.max_inflated_bytes,
            attempts_left: limits.max_inflate_attempts,
        },
    );
    let mut walk = Walk {
        ctx,
        limits,
        files: 0,
        bytes: 0,
        special: 0,
    };
    match fs::symlink_metadata(root) {
        Ok(md) if md.is_dir() => walk.dir(root, Path::new(""), 0),
        Ok(_) => walk.fail(format!("{}: root is not a directory", root.display())),
        Err(e) => walk.fail(format!("{}: {e}", root.display())),
    }
    if walk.special > 0 {
        walk.ctx.errors.push(format!(
            "{} special files (FIFO/socket/device) not opened",
            walk.special
        ));
    }
    let Walk {
        ctx, files, bytes, ..
    } = walk;
    TreeEvidence {
        present: super::by_id(&index.planted, ctx.hits),
        files_scanned: files,
        bytes_scanned: bytes,
        budget_exceeded: ctx.exceeded,
        errors: ctx.errors,
    }
}

impl Walk<'_, '_> {
    fn fail(&mut self, why: String) {
        self.ctx.exceeded = true;
        self.ctx.errors.push(why);
    }

    fn dir(&mut self, abs: &Path, rel: &Path, depth: u32) {
        let entries = match fs::read_dir(abs) {
            Ok(rd) => rd,
            Err(e) => return self.fail(format!("{}: {e}", show(rel))),
        };
        let mut list = Vec::new();
        for entry in entries {
            match entry {
                Ok(e) => list.push(e),
                Err(e) => return self.fail(format!("{}: {e}", show(rel))),
            }
            if list.len() as u64 > self.limits.max_files {
                return self.fail(format!("{}: too many entries", show(rel)));
            }
        }
        // Sorted, so locations (and so observations) are deterministic.
        list.sort_by_key(|e| e.file_name());
        for entry in list {
            if self.ctx.exceeded {
                return;
            }
            self.files += 1;
            if self.files > self.limits.max_files {
                return self.fail(format!("more than {} files", self.limits.max_files));
            }
            let name = entry.file_name();
            let rel_child: PathBuf = rel.join(&name);
            let label = show(&rel_child);
            self.ctx
                .scan_label(name.as_bytes(), &format!("{label} (file name)"));
            let abs_child = entry.path();
            let ft = match entry.file_type() {
                Ok(ft) => ft,
                Err(e) => {
                    self.fail(format!("{label}: {e}"));
                    continue;
                }
            };
            if ft.is_symlink() {
                match fs::read_link(&abs_child) {
                    Ok(target) => self.ctx.scan_label(
                        target.as_os_str().as_bytes(),
                        &format!("{label} (symlink target)"),
                    ),
                    Err(e) => self.fail(format!("{label}: {e}")),
                }
            } else if ft.is_dir() {
                if self.limits.skip_git_objects && rel_child.as_os_str() == ".git/objects" {
                    continue;
                }
                if depth + 1 > self.limits.max_depth {
                    self.fail(format!("{label}: deeper than {}", self.limits.max_depth));
                } else {
                    self.dir(&abs_child, &rel_child, depth + 1);
                }
            } else if ft.is_file() {
                self.file(&abs_child, &label);
            } else {
                self.special += 1;
            }
        }
    }

    fn file(&mut self, abs: &Path, label: &str) {
        let left = self.limits.max_bytes.saturating_sub(self.bytes);
        match read_regular(abs, left) {
            Ok(Read_::Data(data)) => {
                self.bytes += data.len() as u64;
                self.ctx.scan_content(&data, label, 0);
            }
            Ok(Read_::NotRegular) => self.special += 1,
            Ok(Read_::TooBig) => self.fail(format!(
                "{label}: byte budget of {} exceeded",
                self.limits.max_bytes
            )),
            Err(e) => self.fail(format!("{label}: {e}")),
        }
    }
}

enum Read_ {
    Data(Vec<u8>),
    NotRegular,
    TooBig,
}

/// Opens without following a link and without blocking, checks with
/// `fstat` that it is a regular file, and reads at most `left` bytes.
fn read_regular(path: &Path, left: u64) -> std::io::Result<Read_> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let md = file.metadata()?;
    if !md.is_file() {
        return Ok(Read_::NotRegular);
    }
    if md.len() > left {
        return Ok(Read_::TooBig);
    }
    let mut data = Vec::with_capacity(usize::try_from(md.len()).unwrap_or(0));
    // The file may grow after fstat; one byte over the budget is enough to
    // know it did.
    file.take(left.saturating_add(1)).read_to_end(&mut data)?;
    if data.len() as u64 > left {
        return Ok(Read_::TooBig);
    }
    Ok(Read_::Data(data))
}

/// A relative path for locations; non-UTF-8 bytes are shown escaped.
fn show(rel: &Path) -> String {
    rel.as_os_str().as_bytes().escape_ascii().to_string()
}
