//! What the server needs before it can serve one episode, checked at
//! start-up so that a missing piece stops `secaudit serve` with its cause
//! instead of surfacing later as a 500 on every `/reset` (a venv without
//! pytest used to start a "healthy" server whose resets all failed with
//! "recording the pristine test manifest").
//!
//! Each check is one entry of [`check`]; hard ones refuse the start. The
//! containment tier is not repeated here: it is chosen by the sandbox, and
//! with no tier the server still starts, refuses resets (503) and says why
//! in `/health` unless `--allow-uncontained` (see `serve`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Longest a probe of the venv's interpreter may take (a cold start of
/// Python importing pytest on a loaded machine is well under a second).
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The outcome of one start-up check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Short stable name, e.g. `venv_pytest`.
    pub name: &'static str,
    /// `Ok(what was found)` or `Err(why not, and how to fix it)`.
    pub outcome: Result<String, String>,
}

/// All start-up checks, in the order they ran.
#[derive(Debug, Clone)]
pub struct Readiness {
    /// Every check, passed or not.
    pub checks: Vec<Check>,
}

impl Readiness {
    /// True when every check passed.
    pub fn ready(&self) -> bool {
        self.checks.iter().all(|c| c.outcome.is_ok())
    }

    /// One line per failed check: `name: reason`.
    pub fn failures(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter_map(|c| c.outcome.as_ref().err().map(|e| format!("{}: {e}", c.name)))
            .collect()
    }
}

/// Runs every check for a server whose venv is `venv` and whose data lives
/// under `data_dir` (created if missing, as the server would).
pub fn check(venv: &Path, data_dir: &Path) -> Readiness {
    let python = venv.join("bin/python");
    let fix = "run scripts/setup.sh, or pass --venv (SECAUDIT_VENV) a venv with pytest and \
               git-filter-repo";
    let mut checks = Vec::new();
    let runs = probe(&python, "import sys; print(sys.version.split()[0])")
        .map(|v| format!("{} (Python {v})", python.display()))
        .map_err(|e| format!("{} does not run: {e}; {fix}", python.display()));
    let python_ok = runs.is_ok();
    checks.push(Check {
        name: "venv_python",
        outcome: runs,
    });
    // Only meaningful once the interpreter runs; otherwise the first
    // failure already says what to do.
    if python_ok {
        checks.push(Check {
            name: "venv_pytest",
            outcome: probe(&python, "import pytest; print(pytest.__version__)")
                .map(|v| format!("pytest {v}"))
                .map_err(|e| {
                    format!(
                        "pytest is not importable by {}: {e}; {fix}",
                        python.display()
                    )
                }),
        });
    }
    let gfr = venv.join("bin/git-filter-repo");
    checks.push(Check {
        name: "git_filter_repo",
        outcome: if is_executable(&gfr) {
            Ok(gfr.display().to_string())
        } else {
            Err(format!(
                "{} is missing or not executable; {fix}",
                gfr.display()
            ))
        },
    });
    checks.push(Check {
        name: "data_dir_writable",
        outcome: writable(data_dir)
            .map(|()| data_dir.display().to_string())
            .map_err(|e| {
                format!(
                    "cannot write to the data dir {}: {e}; pass --data-dir (SECAUDIT_DATA_DIR) a \
                     directory the server's user can write",
                    data_dir.display()
                )
            }),
    });
    Readiness { checks }
}

/// Runs `python -c code` (bounded by [`PROBE_TIMEOUT`]); its trimmed stdout
/// on success, else what went wrong with the last line of its stderr.
fn probe(python: &Path, code: &str) -> Result<String, String> {
    let mut child = Command::new(python)
        .args(["-I", "-c", code])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = std::time::Instant::now() + PROBE_TIMEOUT;
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {PROBE_TIMEOUT:?}"));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Err(format!("{} ({})", last.trim(), out.status))
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Creates `dir` if needed and writes (then removes) a file in it.
fn writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    tempfile::Builder::new()
        .prefix(".secaudit-write-check")
        .tempfile_in(dir)
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_venv_fails_with_its_path_and_the_fix() {
        let d = tempfile::tempdir().unwrap();
        let r = check(&d.path().join("no-venv"), &d.path().join("data"));
        assert!(!r.ready());
        let f = r.failures().join("\n");
        assert!(
            f.contains("venv_python:") && f.contains("no-venv/bin/python"),
            "{f}"
        );
        assert!(
            f.contains("git_filter_repo:") && f.contains("scripts/setup.sh"),
            "{f}"
        );
        assert!(!f.contains("data_dir_writable"), "{f}");
    }

    #[test]
    fn python_without_pytest_is_named() {
        // A venv of the system Python without pytest: the interpreter runs,
        // the import does not.
        let d = tempfile::tempdir().unwrap();
        let v = d.path().join("bare");
        let made = Command::new("/usr/bin/python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(&v)
            .status()
            .expect("python3 -m venv");
        assert!(made.success());
        let r = check(&v, &d.path().join("data"));
        let f = r.failures().join("\n");
        assert!(f.contains("venv_pytest:") && f.contains("pytest"), "{f}");
        assert!(!f.contains("venv_python:"), "{f}");
    }

    #[test]
    fn unwritable_data_dir_is_named() {
        let d = tempfile::tempdir().unwrap();
        // A regular file where the data dir should be: not writable as a
        // directory for any user, root included.
        let file = d.path().join("plain-file");
        std::fs::write(&file, b"").unwrap();
        let r = check(&d.path().join("no-venv"), &file.join("data"));
        let f = r.failures().join("\n");
        assert!(f.contains("data_dir_writable:"), "{f}");
    }

    #[test]
    fn the_project_venv_passes() {
        let v = crate::test_paths::venv();
        assert!(
            v.exists(),
            "no project venv at {}: run scripts/setup.sh",
            v.display()
        );
        assert_ready(&v);
    }

    fn assert_ready(venv: &Path) {
        let d = tempfile::tempdir().unwrap();
        let r = check(venv, &d.path().join("data"));
        assert!(r.ready(), "{:?}", r.failures());
    }
}
