//! Running the pristine suite on a prepared copy through the grader's
//! bootstrap, cold or in a staged sandbox, and reading back what it wrote.

use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use graders::junit;

use super::HealthGrader;
use super::canary::plant_canary;
use super::copy::Prepared;
use super::scratch::{self, Scratch};
use crate::sandbox::{ExecRequest, Limits, Sandbox};
use crate::treecopy::open_regular;
use graders::health_score::{Canary, RunResult};

/// Where the JUnit report is written inside the sandbox.
pub(super) const OUT_MOUNT: &str = "/grader-out";

/// Where the grader's bootstrap ([`BOOT_PY`]) and the suite list are bound,
/// read-only, inside the sandbox.
pub(super) const BOOT_MOUNT: &str = "/grader-boot";

/// The grader-owned bootstrap that runs pytest (see the module notes): an
/// audit hook installed before any code of the workspace, and the grader's
/// own per-phase verdicts. Not in the workspace, never copied into it.
pub(super) const BOOT_PY: &str = include_str!("boot.py");

/// Largest verdict file or tamper note read back.
pub(super) const MAX_VERDICT_BYTES: u64 = 4 << 20;

impl HealthGrader {
    /// The request that runs the suite in `scratch` (the same for a cold
    /// run and for staging one: a staged sandbox serves only the request
    /// it was built for).
    pub(super) fn pytest_request(
        sandbox: &Sandbox,
        limits: &Limits,
        scratch: &Scratch,
    ) -> ExecRequest {
        Self::request_for(sandbox, limits, scratch, false)
    }

    pub(super) fn request_for(
        sandbox: &Sandbox,
        limits: &Limits,
        scratch: &Scratch,
        bare: bool,
    ) -> ExecRequest {
        let python = sandbox.config().venv.join("bin").join("python");
        // Paths as the command sees them: bind mounts under bwrap, the
        // host paths in the tiers without a mount namespace.
        let inside = |host: &Path, mount: &str| {
            shell_quote(
                &sandbox
                    .path_inside(host, Path::new(mount))
                    .to_string_lossy(),
            )
        };
        let out_dir = inside(&scratch.out, OUT_MOUNT);
        let report = inside(
            &scratch.out.join("report.xml"),
            &format!("{OUT_MOUNT}/report.xml"),
        );
        let root = inside(&scratch.tree, crate::sandbox::WORKSPACE_MOUNT);
        let boot = inside(
            &scratch.boot.join("boot.py"),
            &format!("{BOOT_MOUNT}/boot.py"),
        );
        // `-I`: no PYTHON* variables, no user site, no script or cwd entry
        // on sys.path. `--assert=plain`: no assertion-rewriting import hook,
        // whose instance (on `sys.meta_path` and as every test module's
        // `__loader__`) would hand code under test pytest's config and
        // session without any frame access. `no:debugging`: it parks the
        // plugin manager on a class (`pytestPDB._pluginmanager`), again a
        // path to every pytest object. `no:legacypath`: it adds attributes
        // to pytest's classes at configure time, after the bootstrap's
        // snapshot of them (no task uses `tmpdir`/`testdir`).
        let command = if bare {
            format!(
                "exec {} -P -s -m pytest -p no:cacheprovider -q --junitxml={report} \
                 -o addopts= --rootdir={root}",
                shell_quote(&python.to_string_lossy())
            )
        } else {
            format!(
                "SECAUDIT_GRADER_OUT={out_dir} exec {} -I {boot} -p no:cacheprovider -p no:legacypath \
             -p no:debugging -q --assert=plain --junitxml={report} -o addopts= --rootdir={root}",
                shell_quote(&python.to_string_lossy())
            )
        };
        ExecRequest {
            workspace: scratch.tree.clone(),
            command,
            extra_ro_binds: vec![(scratch.boot.clone(), PathBuf::from(BOOT_MOUNT))],
            extra_rw_binds: vec![(scratch.out.clone(), PathBuf::from(OUT_MOUNT))],
            env: vec![("PYTEST_DISABLE_PLUGIN_AUTOLOAD".into(), "1".into())],
            limits: Some(limits.clone()),
            ..Default::default()
        }
    }

    /// Runs the suite on a prepared copy: in a staged run when one is
    /// ready (the copy moves into it), else cold in the copy's own
    /// scratch. Either way the canary and the suite list are written
    /// now, the files handed to the run's uid, and the per-run key sent on
    /// stdin.
    pub(super) async fn run_pytest(
        &self,
        prepared: Prepared,
    ) -> std::io::Result<(RunResult, Canary)> {
        let pool = self.staged.as_ref().filter(|_| !self.bare);
        let staged = pool.and_then(|p| p.take());
        let Prepared {
            scratch: cold,
            pristine_files,
            ..
        } = prepared;
        let (scratch, warm, owner) = match staged {
            Some(s) => {
                let owner = s.warm.ids();
                (Some(s.scratch), Some(s.warm), owner)
            }
            None => (None, None, self.sandbox.rest_owner()),
        };
        // Where the copy appears to the command: `/workspace` under bwrap,
        // its own host path in the tiers without a mount namespace.
        let host_paths = self.sandbox.tier() != crate::sandbox::Tier::Bwrap;
        let arm = move || -> std::io::Result<(Scratch, Canary)> {
            let scratch = match scratch {
                Some(s) => {
                    s.take_tree(&cold.tree)?;
                    s
                }
                None => cold,
            };
            let tree_inside = if host_paths {
                scratch.tree.clone()
            } else {
                PathBuf::from(crate::sandbox::WORKSPACE_MOUNT)
            };
            let canary = arm_copy(&scratch, &pristine_files, &tree_inside, owner)?;
            Ok((scratch, canary))
        };
        let armed = tokio::task::spawn_blocking(arm)
            .await
            .map_err(std::io::Error::other)
            .and_then(|r| r);
        // A staged run taken and lost to an error is replaced too.
        if let (Err(_), Some(pool)) = (&armed, pool) {
            pool.refill(&self.sandbox, &self.limits, Self::pytest_request);
        }
        let (scratch, canary) = armed?;
        let key = run_key();
        let mut req = Self::request_for(&self.sandbox, &self.limits, &scratch, self.bare);
        req.owned_by = owner;
        req.stdin = Some(key.clone().into_bytes());
        let out = self.sandbox.run_warm(warm, req).await;
        if let Some(pool) = pool {
            pool.refill(&self.sandbox, &self.limits, Self::pytest_request);
        }
        let out = out?;
        if out.warm {
            self.staged_runs
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let run = read_back(
            &scratch,
            Ended {
                staged: out.warm,
                duration: out.duration,
                exit_code: out.exit_code,
                timed_out: out.timed_out,
            },
            key,
        );
        Ok((run, canary))
    }
}

/// Makes the copy in `scratch` ready to run, whoever runs it: a fresh
/// canary planted, the suite list written (paths as the run sees the copy,
/// `tree_inside`), and the writable directories handed to the run's uid.
pub(super) fn arm_copy(
    scratch: &Scratch,
    pristine_files: &[PathBuf],
    tree_inside: &Path,
    owner: Option<(u32, u32)>,
) -> std::io::Result<Canary> {
    let canary = Canary::new(pristine_files);
    plant_canary(&scratch.tree, &canary)?;
    write_suite_list(&scratch.boot, tree_inside, pristine_files, &canary)?;
    if let Some((uid, gid)) = owner {
        scratch.hand_to(uid, gid)?;
    }
    Ok(canary)
}

/// How a run ended, whoever ran it.
pub(super) struct Ended {
    /// Its start-up was paid before the key (a staged run, a runner's).
    pub staged: bool,
    pub duration: std::time::Duration,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
}

/// A fresh per-run key: 64 hex digits.
pub(super) fn run_key() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// Reads back what a run wrote into its `out/`: the report, the verdicts
/// and the tamper note, each bounded and never through a link.
pub(super) fn read_back(scratch: &Scratch, ended: Ended, key: String) -> RunResult {
    // Code under test may have taken the output directory's permissions
    // away; give them back so it can be read and removed.
    let _ = std::fs::set_permissions(&scratch.out, std::fs::Permissions::from_mode(0o700));
    let report = read_report(&scratch.out.join("report.xml"), ended.exit_code);
    let verdicts = read_bounded(&scratch.out.join("verdicts"), MAX_VERDICT_BYTES)
        .map_err(|e| format!("the grader bootstrap wrote no verdicts ({e})"));
    let tamper = read_bounded(&scratch.out.join("tamper"), 4096)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|t| !t.is_empty());
    RunResult {
        staged: ended.staged,
        duration: ended.duration,
        exit_code: ended.exit_code,
        timed_out: ended.timed_out,
        report,
        verdicts,
        tamper,
        key,
    }
}

/// Single-quotes a string for bash.
pub(super) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Reads the report without following a symlink the sandboxed code may
/// have planted (`report.xml -> /etc/shadow`) and without blocking on a
/// FIFO; bounded to the parser's limit.
pub(super) fn read_report(path: &Path, exit_code: Option<i32>) -> Result<Vec<u8>, String> {
    let no_report = || format!("pytest wrote no JUnit report (exit code {exit_code:?})");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|_| no_report())?;
    let meta = file.metadata().map_err(|_| no_report())?;
    if !meta.is_file() {
        return Err("JUnit report is not a regular file".into());
    }
    let mut buf = Vec::new();
    file.take(junit::MAX_REPORT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("reading the JUnit report: {e}"))?;
    if buf.len() > junit::MAX_REPORT_BYTES {
        return Err("JUnit report over the size limit".into());
    }
    Ok(buf)
}

/// Reads a regular file (no symlink, no FIFO) of at most `max` bytes.
pub(super) fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let (f, m) = open_regular(path).map_err(|e| e.to_string())?;
    if m.len() > max {
        return Err(format!("over {max} bytes"));
    }
    let mut buf = Vec::new();
    f.take(max)
        .read_to_end(&mut buf)
        .map_err(|e| e.to_string())?;
    Ok(buf)
}

/// Writes `suite.txt` beside the bootstrap: the sandbox paths of the
/// suite's own Python files, canary included (the code the bootstrap
/// trusts besides the venv and the standard library). Root-owned,
/// world-readable, bound read-only: code under test can read it, not
/// change it. The bootstrap reads it after its start signal.
pub(super) fn write_suite_list(
    boot: &Path,
    tree_inside: &Path,
    pristine: &[PathBuf],
    canary: &Canary,
) -> std::io::Result<()> {
    let mut suite = String::new();
    for rel in pristine.iter().chain(std::iter::once(&canary.rel)) {
        if rel.extension().is_some_and(|e| e == "py") {
            suite.push_str(&format!("{}\n", tree_inside.join(rel).display()));
        }
    }
    scratch::write_ro(&boot.join("suite.txt"), &suite)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::write;

    #[test]
    fn report_symlink_not_followed() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "real.xml", "<testsuite/>");
        std::os::unix::fs::symlink(d.path().join("real.xml"), d.path().join("report.xml")).unwrap();
        assert!(read_report(&d.path().join("report.xml"), Some(0)).is_err());
        assert!(read_report(&d.path().join("real.xml"), Some(0)).is_ok());
    }
}
