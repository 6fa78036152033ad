//! Removing a directory tree that untrusted code wrote.
//!
//! `std::fs::remove_dir_all` recurses once per level: a command that made
//! a directory 19,000 levels deep (well inside the inode bound) overflowed
//! the server thread's stack that removed it, and the whole server aborted
//! (found with a health run that did `mkdir d; cd d` in a loop; a session's
//! workspace at close was the same). Paths that deep are also longer than
//! `PATH_MAX`, so a walk by full path fails before it gets there.
//!
//! [`remove_tree`] uses neither recursion nor long paths: it empties the
//! top directory one child at a time, and every grandchild directory is
//! first renamed up to the top (a rename within one directory tree of one
//! file system), so no path it touches is ever more than two levels below
//! the top. Symbolic links are removed, never followed. Directories whose
//! permissions were taken away are given them back first (for a server
//! that is not root).

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Removes `root` and everything under it (nothing if it is gone already;
/// a file or link at `root` is removed as such).
pub fn remove_tree(root: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(root) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() {
        return std::fs::remove_file(root);
    }
    empty_dir(root)?;
    std::fs::remove_dir(root)
}

/// Removes everything under the directory `root`, keeping `root` itself
/// (and its inode, so a bind mount of it stays valid).
pub fn empty_dir(root: &Path) -> io::Result<()> {
    let mut fresh = 0u64;
    // Each pass removes the top's files and links and, for each child
    // directory, its files and links; the child's own subdirectories move
    // up to the top for a later pass.
    loop {
        let mut dirs = Vec::new();
        for e in read_dir_forced(root)? {
            let e = e?;
            if e.file_type()?.is_dir() {
                dirs.push(e.path());
            } else {
                std::fs::remove_file(e.path())?;
            }
        }
        if dirs.is_empty() {
            return Ok(());
        }
        for d in dirs {
            for e in read_dir_forced(&d)? {
                let e = e?;
                if e.file_type()?.is_dir() {
                    std::fs::rename(e.path(), unused_name(root, &mut fresh))?;
                } else {
                    std::fs::remove_file(e.path())?;
                }
            }
            std::fs::remove_dir(&d)?;
        }
    }
}

/// `read_dir`, after making `dir` readable, writable and searchable by
/// its owner when it was not (a root server needs none of it).
fn read_dir_forced(dir: &Path) -> io::Result<std::fs::ReadDir> {
    match std::fs::read_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            std::fs::read_dir(dir)
        }
        Ok(rd) => {
            // Entries of a directory without write permission cannot be
            // removed; give it back before they are.
            let mode = std::fs::symlink_metadata(dir)?.permissions().mode();
            if mode & 0o700 != 0o700 {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            }
            Ok(rd)
        }
        Err(e) => Err(e),
    }
}

/// A name under `root` that nothing has.
fn unused_name(root: &Path, n: &mut u64) -> PathBuf {
    loop {
        *n += 1;
        let p = root.join(format!(".secaudit-rm-{n}"));
        if std::fs::symlink_metadata(&p).is_err() {
            return p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deeper than a thread's stack and `PATH_MAX` allow for a recursive
    /// walk by full path: removed, with links (never followed) and a
    /// directory without permissions on the way.
    #[test]
    fn removes_a_tree_deeper_than_recursion_and_path_max() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        let root = t.path().join("root");
        std::fs::create_dir(&root).unwrap();
        // Nested from the top down, so no path here is long either: the
        // chain so far moves under a fresh directory, which becomes it.
        let chain = t.path().join("chain");
        std::fs::create_dir(&chain).unwrap();
        for _ in 0..20_000 {
            let next = t.path().join("next");
            std::fs::create_dir(&next).unwrap();
            std::fs::rename(&chain, next.join("d")).unwrap();
            std::fs::rename(&next, &chain).unwrap();
        }
        std::fs::rename(&chain, root.join("deep")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let locked = root.join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::write(locked.join("f"), "x").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || remove_tree(&root).map(|()| root))
            .unwrap()
            .join()
            .unwrap()
            .map(|root| assert!(!root.exists()))
            .unwrap();
        assert!(outside.join("keep").exists(), "a link was followed");
    }

    #[test]
    fn empty_dir_keeps_the_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b/c")).unwrap();
        std::fs::write(t.path().join("a/b/f"), "x").unwrap();
        std::fs::write(t.path().join("g"), "x").unwrap();
        empty_dir(t.path()).unwrap();
        assert!(t.path().is_dir());
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
        remove_tree(&t.path().join("gone")).unwrap();
    }
}
