//! The one recursive tree copy of the server: a session's workspace from
//! its task's template, and the health grader's copy of a workspace the
//! agent controls. One function, so the rules that keep a copy from
//! escaping its destination (never follow a link, never open a special
//! file, drop setuid/setgid/sticky) are written once; the callers differ
//! only in [`CopyOptions`].

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Bounds on a copy. Exceeding any is an error (for the health grader,
/// score 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyBudget {
    /// Files, directories and symlinks together.
    pub max_entries: usize,
    /// Sum of regular file sizes.
    pub max_bytes: u64,
    /// Directory nesting depth.
    pub max_depth: usize,
}

impl Default for CopyBudget {
    fn default() -> Self {
        CopyBudget {
            max_entries: 20_000,
            max_bytes: 256 << 20,
            max_depth: 64,
        }
    }
}

impl CopyBudget {
    /// No bound: for the generator's own template, which the server wrote
    /// and nothing the agent does can grow.
    pub const UNBOUNDED: CopyBudget = CopyBudget {
        max_entries: usize::MAX,
        max_bytes: u64::MAX,
        max_depth: usize::MAX,
    };
}

/// What a [`copy_tree`] keeps and how far it may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyOptions {
    /// Copy `.git` directories too: a session's workspace needs the task's
    /// history; the health grader's copy must not carry the agent's repo
    /// config into pytest's run.
    pub git: bool,
    /// Bounds on the copy.
    pub budget: CopyBudget,
}

impl CopyOptions {
    /// A session's workspace from the (trusted) template: everything, `.git`
    /// included, unbounded.
    pub const TEMPLATE: CopyOptions = CopyOptions {
        git: true,
        budget: CopyBudget::UNBOUNDED,
    };

    /// An agent-controlled workspace: no `.git`, within `budget`.
    pub fn bounded(budget: &CopyBudget) -> Self {
        CopyOptions {
            git: false,
            budget: budget.clone(),
        }
    }
}

/// Opens a regular file without following symlinks or blocking on FIFOs.
pub fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok((f, m))
}

/// Copies `src` into `dst` (created if missing, with its parents) within
/// `opts.budget`: symlinks recreated as symlinks (never followed), special
/// files skipped, permission bits kept minus setuid/setgid/sticky, `.git`
/// copied only when `opts.git` is set. Entries are visited in name order.
pub fn copy_tree(src: &Path, dst: &Path, opts: &CopyOptions) -> Result<(), String> {
    let budget = &opts.budget;
    let io =
        |what: &str, p: &Path, e: std::io::Error| format!("copying {what} {}: {e}", p.display());
    if !dst.is_dir() {
        std::fs::create_dir_all(dst).map_err(|e| io("into", dst, e))?;
    }
    let mut entries = 0usize;
    let mut bytes = 0u64;
    let mut stack = vec![(src.to_path_buf(), dst.to_path_buf(), 0usize)];
    while let Some((from_dir, to_dir, depth)) = stack.pop() {
        if depth > budget.max_depth {
            return Err(format!(
                "workspace nests deeper than {} directories",
                budget.max_depth
            ));
        }
        let mut names: Vec<_> = std::fs::read_dir(&from_dir)
            .map_err(|e| io("directory", &from_dir, e))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| io("directory", &from_dir, e))?;
        names.sort();
        for name in names {
            if name == ".git" && !opts.git {
                continue;
            }
            entries += 1;
            if entries > budget.max_entries {
                return Err(format!(
                    "workspace has more than {} entries",
                    budget.max_entries
                ));
            }
            let from = from_dir.join(&name);
            let to = to_dir.join(&name);
            let meta = std::fs::symlink_metadata(&from).map_err(|e| io("entry", &from, e))?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(&from).map_err(|e| io("symlink", &from, e))?;
                std::os::unix::fs::symlink(&target, &to).map_err(|e| io("symlink", &to, e))?;
            } else if ft.is_dir() {
                std::fs::create_dir(&to).map_err(|e| io("directory", &to, e))?;
                stack.push((from, to, depth + 1));
            } else if ft.is_file() {
                // Reopen without following: the entry may have changed type
                // since the lstat.
                let Ok((f, m)) = open_regular(&from) else {
                    continue;
                };
                let remaining = budget.max_bytes.saturating_sub(bytes);
                if m.len() > remaining {
                    return Err(format!(
                        "workspace holds more than {} bytes",
                        budget.max_bytes
                    ));
                }
                let mut out = std::fs::File::create(&to).map_err(|e| io("file", &to, e))?;
                let n = std::io::copy(&mut f.take(remaining.saturating_add(1)), &mut out)
                    .map_err(|e| io("file", &from, e))?;
                bytes += n;
                if bytes > budget.max_bytes {
                    return Err(format!(
                        "workspace holds more than {} bytes",
                        budget.max_bytes
                    ));
                }
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(m.mode() & 0o777))
                    .map_err(|e| io("file", &to, e))?;
            }
            // FIFOs, sockets and devices are skipped.
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn write(root: &Path, rel: &str, body: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }

    #[test]
    fn copy_budget_and_special_files() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        write(&ws, "a.txt", "hello");
        write(&ws, ".git/config", "[core]\n\tfsmonitor = evil\n");
        std::os::unix::fs::symlink("/etc/shadow", ws.join("leak")).unwrap();
        let fifo = std::ffi::CString::new(ws.join("fifo").as_os_str().as_encoded_bytes()).unwrap();
        assert!(
            std::process::Command::new("mkfifo")
                .arg(ws.join("fifo"))
                .status()
                .unwrap()
                .success(),
            "{fifo:?}"
        );
        let dst = d.path().join("copy");
        copy_tree(&ws, &dst, &CopyOptions::bounded(&CopyBudget::default())).unwrap();
        assert_eq!(std::fs::read_to_string(dst.join("a.txt")).unwrap(), "hello");
        assert!(!dst.join(".git").exists());
        assert_eq!(
            std::fs::read_link(dst.join("leak")).unwrap(),
            Path::new("/etc/shadow")
        );
        assert!(std::fs::symlink_metadata(dst.join("fifo")).is_err());
        let tight = CopyBudget {
            max_bytes: 3,
            ..CopyBudget::default()
        };
        assert!(
            copy_tree(&ws, &d.path().join("c2"), &CopyOptions::bounded(&tight))
                .unwrap_err()
                .contains("bytes")
        );
        let few = CopyBudget {
            max_entries: 1,
            ..CopyBudget::default()
        };
        assert!(
            copy_tree(&ws, &d.path().join("c3"), &CopyOptions::bounded(&few))
                .unwrap_err()
                .contains("entries")
        );
        // A session's workspace keeps the history, within no budget.
        let full = d.path().join("c4");
        copy_tree(&ws, &full, &CopyOptions::TEMPLATE).unwrap();
        assert_eq!(
            std::fs::read_to_string(full.join(".git/config")).unwrap(),
            "[core]\n\tfsmonitor = evil\n"
        );
        assert!(std::fs::symlink_metadata(full.join("fifo")).is_err());
    }
}
