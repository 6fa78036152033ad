//! Working-tree mode: every regular file under a root. The walk never
//! follows a symlink (`symlink_metadata`), never opens FIFOs or devices
//! (type checked before open, then opened `O_NOFOLLOW|O_NONBLOCK` and
//! re-checked with `fstat`, closing the swap race), scans binary files as
//! printable runs and big files in overlapping windows, and stops at the
//! byte/file budget with `budget_exceeded` set rather than skipping quietly.

use super::{Finding, Scanner};
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Deepest directory nesting walked.
const MAX_DEPTH: usize = 64;
/// Entries listed in `skipped` at most.
const MAX_SKIPPED: usize = 1000;

/// Result of [`Scanner::scan_tree`].
#[derive(Debug, Clone, Default)]
pub struct TreeScan {
    /// Findings, paths relative to the root.
    pub findings: Vec<Finding>,
    /// Regular files read.
    pub files_scanned: usize,
    /// Bytes read.
    pub bytes_scanned: u64,
    /// The byte or file budget stopped the scan before the end.
    pub budget_exceeded: bool,
    /// What was not scanned and why: `"path: reason"`.
    pub skipped: Vec<String>,
}

impl TreeScan {
    fn skip(&mut self, rel: &str, why: &str) {
        if self.skipped.len() < MAX_SKIPPED {
            self.skipped.push(format!("{rel}: {why}"));
        }
    }
}

impl Scanner {
    /// Scans every regular file under `root` (see module docs).
    pub fn scan_tree(&self, root: &Path) -> std::io::Result<TreeScan> {
        let meta = std::fs::symlink_metadata(root)?;
        let mut res = TreeScan::default();
        if meta.is_file() {
            let name = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            self.scan_file(root, &name, &mut res);
            return Ok(res);
        }
        if !meta.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "scan root is not a directory",
            ));
        }
        self.walk(root, String::new(), &mut 0, &mut res);
        Ok(res)
    }

    /// Scans paths named relative to the current directory, as pre-commit
    /// passes the files of a commit: each file is reported (and matched
    /// against allowlist paths) under its name as given, less a leading
    /// `./`; a directory is walked, its files under `dir/…`. One budget
    /// covers them all. A path that is missing or not a regular file or
    /// directory is listed in `skipped`.
    pub fn scan_paths(&self, paths: &[PathBuf]) -> TreeScan {
        let mut res = TreeScan::default();
        let mut files_seen = 0usize;
        for p in paths {
            let shown = p.to_string_lossy();
            let rel = shown
                .trim_start_matches("./")
                .trim_end_matches('/')
                .to_string();
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.is_file() => {
                    files_seen += 1;
                    if files_seen > self.cfg.max_files
                        || res.bytes_scanned + m.len() > self.cfg.max_total_bytes
                    {
                        res.budget_exceeded = true;
                        res.skip(&rel, "budget exceeded");
                    } else {
                        self.scan_file(p, &rel, &mut res);
                    }
                }
                Ok(m) if m.is_dir() => {
                    let prefix = if rel == "." { String::new() } else { rel };
                    self.walk(p, prefix, &mut files_seen, &mut res);
                }
                Ok(_) => res.skip(&rel, "not a regular file or directory"),
                Err(e) => res.skip(&rel, &format!("unreadable: {e}")),
            }
        }
        res
    }

    /// Walks the directory `root`, naming its entries `prefix/…` (no
    /// prefix when empty); `files_seen` counts against the file budget
    /// across calls.
    fn walk(&self, root: &Path, prefix: String, files_seen: &mut usize, res: &mut TreeScan) {
        let mut stack: Vec<(PathBuf, String, usize)> = vec![(root.to_path_buf(), prefix, 0)];
        while let Some((dir, rel, depth)) = stack.pop() {
            let mut entries: Vec<_> = match std::fs::read_dir(&dir) {
                Ok(rd) => rd.filter_map(Result::ok).collect(),
                Err(e) => {
                    res.skip(
                        if rel.is_empty() { "." } else { &rel },
                        &format!("unreadable directory: {e}"),
                    );
                    continue;
                }
            };
            entries.sort_by_key(|e| e.file_name());
            let mut subdirs = Vec::new();
            for e in entries {
                let name = e.file_name().to_string_lossy().into_owned();
                let r = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let path = e.path();
                let Ok(m) = std::fs::symlink_metadata(&path) else {
                    res.skip(&r, "vanished");
                    continue;
                };
                let ft = m.file_type();
                if ft.is_symlink() {
                    res.skip(&r, "symlink (not followed)");
                } else if ft.is_dir() {
                    if self.cfg.skip_dirs.contains(&name) {
                        res.skip(&r, "directory excluded by config");
                    } else if depth + 1 > MAX_DEPTH {
                        res.skip(&r, "too deep");
                    } else {
                        subdirs.push((path, r, depth + 1));
                    }
                } else if ft.is_file() {
                    *files_seen += 1;
                    if res.budget_exceeded || *files_seen > self.cfg.max_files {
                        res.budget_exceeded = true;
                        res.skip(&r, "budget exceeded");
                        continue;
                    }
                    if res.bytes_scanned + m.len() > self.cfg.max_total_bytes {
                        res.budget_exceeded = true;
                        res.skip(&r, "budget exceeded");
                        continue;
                    }
                    self.scan_file(&path, &r, res);
                } else {
                    res.skip(&r, "not a regular file");
                }
            }
            // Depth-first in sorted order.
            stack.extend(subdirs.into_iter().rev());
        }
    }

    fn scan_file(&self, path: &Path, rel: &str, res: &mut TreeScan) {
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
            .open(path);
        let mut f = match f {
            Ok(f) => f,
            Err(e) => {
                res.skip(rel, &format!("open failed: {e}"));
                return;
            }
        };
        match f.metadata() {
            Ok(m) if m.is_file() => {}
            _ => {
                res.skip(rel, "not a regular file at open");
                return;
            }
        }
        // Never read more than what is left of the budget.
        let left = self.cfg.max_total_bytes.saturating_sub(res.bytes_scanned);
        let mut limited = std::io::Read::take(&mut f, left);
        match self.scan_reader_raw(rel, &mut limited) {
            Ok((mut found, n)) => {
                res.files_scanned += 1;
                res.bytes_scanned += n;
                if n >= left && std::io::Read::read(&mut f, &mut [0u8; 1]).unwrap_or(0) > 0 {
                    res.budget_exceeded = true;
                    res.skip(rel, "budget exceeded mid-file");
                }
                self.filter(&mut found, rel, None);
                res.findings.extend(found);
            }
            Err(e) => res.skip(rel, &format!("read failed: {e}")),
        }
    }
}
