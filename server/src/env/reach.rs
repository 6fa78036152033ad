//! Start-up check: can the sandbox's unprivileged uids reach the paths
//! they are handed?
//!
//! When the server is root, every command (and every health-grading
//! pytest run) runs as an unprivileged uid of the pool (`crate::sandbox`).
//! That uid resolves the paths it is given itself: bwrap, already running
//! as it, opens the venv and the workspace to bind them; in the landlock
//! tier the command runs at their host paths. So it must be able to
//! search (`x`) every directory above the venv, the workspaces (under the
//! data dir) and the scratch directories (under the temporary directory).
//! A checkout in root's home (0700), a Debian 12 user home (0700) or a
//! `mktemp -d` directory is not: every reset then failed with a 500, and
//! the bwrap probe, unable to bind the venv, silently fell back to the
//! landlock tier (issue 23).
//!
//! The server never loosens a directory it did not create (the user's
//! home least of all): `scripts/serve.sh` places the venv and the data
//! dir where the sandbox can reach them (`scripts/paths.sh`), and a server
//! started on unreachable paths refuses to start, naming the directory and
//! the missing permission, instead of serving 500s.
//!
//! Judged from mode bits, for a uid that owns none of the directories and
//! has the sandbox's gid: the pool's uids own nothing outside workspaces.
//! A POSIX ACL that grants more than the mode bits show is not read (such
//! a server is refused; the message says what to change).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::sandbox::{DEFAULT_GID, UID_POOL_BASE, UID_POOL_SIZE};

/// One path the sandbox uid must reach, and what it needs of it.
#[derive(Debug, Clone)]
pub struct Need {
    /// What it is, for the message ("the venv").
    pub what: &'static str,
    /// Where it is (absolute).
    pub path: PathBuf,
    /// What the sandbox uid must be allowed on the path itself, as mode
    /// bits of one class (`0o5`: read and search); every directory above
    /// it needs search (`0o1`). A path that does not exist yet (a data dir
    /// the server will create) is judged by its existing ancestors.
    pub own: u32,
    /// Files inside it the sandbox must be allowed (relative path, bits).
    pub inside: Vec<(&'static str, u32)>,
}

/// The paths of a server: the venv (read, search, `bin/python`
/// executable), the data dir and its `sessions/` (search: workspaces
/// live below it) and the
/// temporary directory (search: health and command scratch directories).
pub fn needs(venv: &Path, data_dir: &Path, tmp: &Path) -> Vec<Need> {
    vec![
        Need {
            what: "the venv",
            path: venv.to_path_buf(),
            own: 0o5,
            inside: vec![("bin/python", 0o5), ("pyvenv.cfg", 0o4)],
        },
        Need {
            what: "the data dir's session workspaces",
            // `sessions/` itself too: one left 0700 by an earlier umask
            // would hide every workspace below it.
            path: data_dir.join("sessions"),
            own: 0o1,
            inside: vec![],
        },
        Need {
            what: "the temporary directory (grader and command scratch dirs)",
            path: tmp.to_path_buf(),
            own: 0o1,
            inside: vec![],
        },
    ]
}

/// Checks every need for a uid of the pool; the first failure, as a
/// message naming the directory, its mode and owner, and the missing
/// permission.
pub fn check(needs: &[Need]) -> Result<(), String> {
    needs.iter().try_for_each(check_one)
}

/// Checks the server's paths when it is root (otherwise commands run as
/// the server's own uid, which reached them to start). Refuses with
/// [`check`]'s message plus what to do.
pub fn check_server(venv: &Path, data_dir: &Path) -> anyhow::Result<()> {
    if !crate::sandbox::server_is_root() {
        return Ok(());
    }
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let tmp = abs(&std::env::temp_dir());
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| parse_umask(&s));
    check(&needs(&abs(venv), &abs(data_dir), &tmp))
        .and_then(|()| check_umask(umask, &abs(data_dir)))
        .map_err(|e| {
            anyhow::anyhow!(
                "refusing to start: {e}. The server runs as root, so every command runs as an \
             unprivileged uid ({}..{} and {}, gid {}), which must be able to search every \
             directory above the venv, the data dir and the temporary directory. Put them \
             under directories every user can search (scripts/serve.sh moves the venv and \
             the data dir to /var/lib/secaudit by itself when the checkout is private), set \
             TMPDIR to such a directory, or run the server as an unprivileged user",
                UID_POOL_BASE,
                UID_POOL_BASE + UID_POOL_SIZE - 1,
                crate::sandbox::DEFAULT_UID,
                DEFAULT_GID
            )
        })
}

/// The `Umask:` line of `/proc/self/status` (read rather than set and
/// restored with umask(2), which would race the runtime's other threads).
fn parse_umask(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
}

/// The directories the server creates below the data dir (`sessions/`,
/// each session's) get the process umask: one that takes search from
/// other users (077, some hardened roots) makes every workspace
/// unreachable, as a private checkout does.
fn check_umask(umask: Option<u32>, data_dir: &Path) -> Result<(), String> {
    match umask {
        Some(m) if m & 0o001 != 0 => Err(format!(
            "the process umask {m:04o} would make the directories the server creates below the \
             data dir {} unsearchable for the sandbox (missing permission: o+x); start it with \
             umask 022 (scripts/serve.sh does)",
            data_dir.display()
        )),
        _ => Ok(()),
    }
}

fn check_one(n: &Need) -> Result<(), String> {
    let mut ancestors: Vec<&Path> = n.path.ancestors().skip(1).collect();
    ancestors.reverse();
    for dir in ancestors {
        let meta = match std::fs::metadata(dir) {
            Ok(m) => m,
            // The rest does not exist yet: the server creates it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("cannot stat {} ({e})", dir.display())),
        };
        deny(&meta, 0o1).map_or(Ok(()), |missing| {
            Err(format!(
                "the sandbox cannot reach {} at {}: {} ({}) does not let other users {missing}",
                n.what,
                n.path.display(),
                dir.display(),
                describe(&meta)
            ))
        })?;
    }
    let meta = match std::fs::metadata(&n.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && n.inside.is_empty() => {
            return Ok(());
        }
        Err(e) => {
            return Err(format!(
                "cannot stat {} at {} ({e})",
                n.what,
                n.path.display()
            ));
        }
    };
    let mut checks = vec![(n.path.clone(), n.own, meta)];
    for (rel, bits) in &n.inside {
        let p = n.path.join(rel);
        let m = std::fs::metadata(&p).map_err(|e| {
            format!(
                "cannot stat {} (in {} at {}): {e}",
                p.display(),
                n.what,
                n.path.display()
            )
        })?;
        checks.push((p, *bits, m));
    }
    for (p, bits, m) in checks {
        if let Some(missing) = deny(&m, bits) {
            return Err(format!(
                "the sandbox cannot use {} at {}: {} ({}) does not let other users {missing}",
                n.what,
                n.path.display(),
                p.display(),
                describe(&m)
            ));
        }
    }
    Ok(())
}

/// The permissions of `need` (one class's bits) that the sandbox's class
/// lacks on this inode, in words; None when it has them all. The class is
/// the group's when the inode's group is the sandbox gid, else others'.
fn deny(meta: &std::fs::Metadata, need: u32) -> Option<String> {
    let mode = meta.mode();
    let have = if meta.gid() == DEFAULT_GID {
        (mode >> 3) & 0o7
    } else {
        mode & 0o7
    };
    let missing = need & !have;
    if missing == 0 {
        return None;
    }
    let dir = meta.is_dir();
    let words: Vec<&str> = [(0o4, "read"), (0o1, if dir { "search" } else { "execute" })]
        .into_iter()
        .filter(|(b, _)| missing & b != 0)
        .map(|(_, w)| w)
        .collect();
    let letters: String = [(0o4, 'r'), (0o1, 'x')]
        .into_iter()
        .filter(|(b, _)| missing & b != 0)
        .map(|(_, c)| c)
        .collect();
    Some(format!(
        "{} it (missing permission: o+{letters})",
        words.join(" or ")
    ))
}

/// `mode 0700, owner uid 0` for a message.
fn describe(meta: &std::fs::Metadata) -> String {
    format!(
        "mode {:04o}, owner uid {}",
        meta.mode() & 0o7777,
        meta.uid()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A venv-shaped tree at `dir/.venv`, world-readable.
    fn venv_at(dir: &Path) -> PathBuf {
        let v = dir.join(".venv");
        std::fs::create_dir_all(v.join("bin")).unwrap();
        std::fs::write(v.join("bin/python"), "").unwrap();
        chmod(&v.join("bin/python"), 0o755);
        std::fs::write(v.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        v
    }

    #[test]
    fn a_private_parent_is_named_with_the_missing_permission() {
        let t = tempfile::tempdir().unwrap();
        chmod(t.path(), 0o755);
        let private = t.path().join("home");
        let checkout = private.join("secaudit");
        std::fs::create_dir_all(&checkout).unwrap();
        let venv = venv_at(&checkout);
        chmod(&private, 0o700);
        let err = check(&needs(&venv, &checkout.join("data"), t.path())).unwrap_err();
        assert!(err.contains("the venv"), "{err}");
        assert!(
            err.contains(&format!("{} (mode 0700", private.display())),
            "{err}"
        );
        assert!(err.contains("search it (missing permission: o+x)"), "{err}");
        // The data dir alone, not existing yet: judged by its ancestors.
        let err =
            check(&needs(&t.path().join("v"), &checkout.join("data"), t.path())[1..]).unwrap_err();
        assert!(err.contains("the data dir") && err.contains("o+x"), "{err}");
        // Searchable for others: no complaint (the data dir need not exist).
        chmod(&private, 0o711);
        check(&needs(&venv, &checkout.join("data"), t.path())).unwrap();
        // A `sessions/` left private is named.
        let sessions = checkout.join("data/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        chmod(&sessions, 0o700);
        let err = check(&needs(&venv, &checkout.join("data"), t.path())).unwrap_err();
        assert!(
            err.contains(&format!("{} (mode 0700", sessions.display())),
            "{err}"
        );
        chmod(&sessions, 0o755);
        check(&needs(&venv, &checkout.join("data"), t.path())).unwrap();
    }

    #[test]
    fn an_unreadable_venv_or_python_is_refused() {
        let t = tempfile::tempdir().unwrap();
        chmod(t.path(), 0o755);
        let venv = venv_at(&t.path().join("with space"));
        chmod(&venv.join("bin/python"), 0o750);
        let err = check(&needs(&venv, t.path(), t.path())).unwrap_err();
        assert!(
            err.contains("bin/python")
                && err.contains("read or execute it (missing permission: o+rx)"),
            "{err}"
        );
        chmod(&venv.join("bin/python"), 0o755);
        chmod(&venv, 0o711);
        let err = check(&needs(&venv, t.path(), t.path())).unwrap_err();
        assert!(err.contains("read it (missing permission: o+r)"), "{err}");
        chmod(&venv, 0o755);
        check(&needs(&venv, t.path(), t.path())).unwrap();
        // A missing venv is named too (it cannot be created later).
        let err = check(&needs(&t.path().join("nope"), t.path(), t.path())).unwrap_err();
        assert!(err.contains("cannot stat the venv"), "{err}");
    }

    #[test]
    fn a_umask_that_takes_search_from_others_is_refused() {
        assert_eq!(
            parse_umask("Name:\tx\nUmask:\t0077\nState:\tR\n"),
            Some(0o077)
        );
        assert_eq!(parse_umask("Name:\tx\n"), None);
        let err = check_umask(Some(0o077), Path::new("/srv/d")).unwrap_err();
        assert!(
            err.contains("umask 0077") && err.contains("/srv/d") && err.contains("o+x"),
            "{err}"
        );
        check_umask(Some(0o022), Path::new("/srv/d")).unwrap();
        check_umask(Some(0o026), Path::new("/srv/d")).unwrap();
    }

    #[test]
    fn the_sandbox_group_class_counts_when_the_group_is_its_gid() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("g");
        std::fs::create_dir(&d).unwrap();
        chmod(&d, 0o710);
        if !crate::sandbox::server_is_root() {
            return; // chown to another group needs root
        }
        std::os::unix::fs::lchown(&d, Some(0), Some(DEFAULT_GID)).unwrap();
        check(&needs(&d, &d, &d)[1..]).unwrap();
        std::os::unix::fs::lchown(&d, Some(0), Some(0)).unwrap();
        assert!(check(&needs(&d, &d, &d)[1..]).is_err());
    }
}
