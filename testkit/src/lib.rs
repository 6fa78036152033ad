//! Test support shared by the tests of every crate in the workspace (a
//! dev-dependency only; nothing here is linked into the server).
//!
//! A test that needs a real component (bubblewrap, root, a Python tool,
//! Chromium) and finds it missing must not pass: green would report the
//! heart of the product tested when it was not. [`require`] makes the test
//! fail when the run demands every component (CI, or the variables below)
//! and skips it loudly only on a developer's machine, where a partial
//! setup is normal.
//!
//! What demands the components:
//! - `CI` set to anything but empty, `0` or `false` (CI machines set
//!   `CI=true`);
//! - `SECAUDIT_REQUIRE_ALL=1`: every component;
//! - `SECAUDIT_REQUIRE_SANDBOX=1`: the sandbox's components only
//!   ([`Kind::Sandbox`]: bubblewrap, root for a uid per command, setpriv).

use std::path::{Path, PathBuf};

/// Demands every component when `1`.
pub const REQUIRE_ALL: &str = "SECAUDIT_REQUIRE_ALL";
/// Demands the sandbox's components when `1`.
pub const REQUIRE_SANDBOX: &str = "SECAUDIT_REQUIRE_SANDBOX";

/// What a missing component takes away, for which variable demands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Containment: bubblewrap, root (a uid per command), setpriv.
    Sandbox,
    /// Anything else a test runs for real (a Python tool, a browser).
    Other,
}

/// Whether this run demands components of `kind`, read from the
/// environment.
pub fn demanded(kind: Kind) -> bool {
    demanded_by(kind, |name| std::env::var(name).ok())
}

/// [`demanded`] with the environment given as a lookup (tests of this
/// crate cannot set process variables without racing other threads).
pub fn demanded_by(kind: Kind, var: impl Fn(&str) -> Option<String>) -> bool {
    let on = |name: &str| var(name).is_some_and(|v| v.trim() == "1");
    let ci = var("CI").is_some_and(|v| !matches!(v.trim(), "" | "0" | "false" | "FALSE" | "False"));
    ci || on(REQUIRE_ALL) || (kind == Kind::Sandbox && on(REQUIRE_SANDBOX))
}

/// Whether `component` is present. When it is missing: panics (the test
/// fails, naming the component and how to install it) if this run
/// demands components of `kind`, else prints a loud skip banner and
/// returns false, and the test returns early.
#[track_caller]
pub fn require(kind: Kind, component: &str, present: bool, remedy: &str) -> bool {
    require_by(kind, component, present, remedy, |name| {
        std::env::var(name).ok()
    })
}

/// [`require`] with the environment given as a lookup.
#[track_caller]
pub fn require_by(
    kind: Kind,
    component: &str,
    present: bool,
    remedy: &str,
    var: impl Fn(&str) -> Option<String>,
) -> bool {
    if present {
        return true;
    }
    let why = match kind {
        Kind::Sandbox => format!("CI, {REQUIRE_ALL}=1 or {REQUIRE_SANDBOX}=1"),
        Kind::Other => format!("CI or {REQUIRE_ALL}=1"),
    };
    if demanded_by(kind, var) {
        panic!("{component} missing, and this run requires it ({why}): {remedy}");
    }
    eprintln!(
        "!!!!!!!! {component} missing: TEST SKIPPED ({remedy}; {why} makes this a failure) !!!!!!!!"
    );
    false
}

/// `/usr/bin/bwrap` exists (the bwrap tier can be tried).
#[track_caller]
pub fn bwrap() -> bool {
    require(
        Kind::Sandbox,
        "bubblewrap (/usr/bin/bwrap)",
        Path::new("/usr/bin/bwrap").exists(),
        "install it with scripts/setup.sh (apt package bubblewrap)",
    )
}

/// The tests run as root (commands get a uid of their own).
#[track_caller]
pub fn root_user() -> bool {
    require(
        Kind::Sandbox,
        "root (a uid per command)",
        is_root(),
        "run the tests as root, as CI does",
    )
}

/// `/usr/bin/setpriv` exists (starts processes as a pool uid).
#[track_caller]
pub fn setpriv() -> bool {
    require(
        Kind::Sandbox,
        "setpriv (/usr/bin/setpriv)",
        Path::new("/usr/bin/setpriv").exists(),
        "install it with scripts/setup.sh (apt package util-linux)",
    )
}

/// The workspace root (this crate sits one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The project venv the sandbox mounts: `SECAUDIT_VENV`, which
/// `scripts/test.sh` exports (a checkout the sandbox uid cannot reach
/// keeps its venv outside it, scripts/paths.sh), else `./.venv`. The
/// variable is the server's (`server::http::env_vars::SECAUDIT_VENV`).
pub fn venv() -> PathBuf {
    std::env::var_os("SECAUDIT_VENV").map_or_else(|| root().join(".venv"), PathBuf::from)
}

/// The venv's `git-filter-repo` (scripts/requirements.txt), the tool the
/// README's history tasks are solved with.
#[track_caller]
pub fn git_filter_repo() -> Option<PathBuf> {
    let p = venv().join("bin/git-filter-repo");
    let present = p.exists();
    require(
        Kind::Other,
        &format!("git-filter-repo ({})", p.display()),
        present,
        "create the venv with scripts/setup.sh",
    )
    .then_some(p)
}

/// The effective uid is 0, read from `/proc/self/status` (no libc here).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn what_demands_which_kind() {
        for kind in [Kind::Sandbox, Kind::Other] {
            assert!(!demanded_by(kind, env(&[])));
            assert!(!demanded_by(kind, env(&[("CI", "false")])));
            assert!(!demanded_by(kind, env(&[("CI", "0")])));
            assert!(!demanded_by(kind, env(&[("CI", "")])));
            assert!(!demanded_by(kind, env(&[(REQUIRE_ALL, "0")])));
            assert!(demanded_by(kind, env(&[("CI", "true")])));
            assert!(demanded_by(kind, env(&[("CI", "1")])));
            assert!(demanded_by(kind, env(&[(REQUIRE_ALL, "1")])));
        }
        assert!(demanded_by(Kind::Sandbox, env(&[(REQUIRE_SANDBOX, "1")])));
        assert!(!demanded_by(Kind::Other, env(&[(REQUIRE_SANDBOX, "1")])));
    }

    #[test]
    fn a_present_component_passes_whatever_is_demanded() {
        let ci = env(&[("CI", "true")]);
        assert!(require_by(Kind::Sandbox, "x", true, "", ci));
    }

    #[test]
    fn a_missing_component_skips_on_a_developer_machine() {
        assert!(!require_by(Kind::Sandbox, "x", false, "", env(&[])));
        assert!(!require_by(
            Kind::Other,
            "x",
            false,
            "",
            env(&[(REQUIRE_SANDBOX, "1")])
        ));
    }

    #[test]
    #[should_panic(expected = "bubblewrap (/usr/bin/bwrap) missing, and this run requires it")]
    fn a_missing_component_fails_when_the_sandbox_is_required() {
        require_by(
            Kind::Sandbox,
            "bubblewrap (/usr/bin/bwrap)",
            false,
            "apt-get install bubblewrap",
            env(&[(REQUIRE_SANDBOX, "1")]),
        );
    }

    #[test]
    #[should_panic(expected = "git-filter-repo missing, and this run requires it (CI or")]
    fn a_missing_component_fails_under_ci() {
        require_by(
            Kind::Other,
            "git-filter-repo",
            false,
            "scripts/setup.sh",
            env(&[("CI", "true")]),
        );
    }

    /// Run only as a child of `the_real_environment_decides`: a missing
    /// component, judged by this process's own environment.
    #[test]
    #[ignore = "a child process of the_real_environment_decides"]
    fn probe_missing_component() {
        assert!(!require(Kind::Sandbox, "probe component", false, "none"));
    }

    /// `require` reads the process environment: with the sandbox demanded
    /// the probe fails naming the component; with nothing demanded (and CI
    /// unset) it skips loudly and passes.
    #[test]
    fn the_real_environment_decides() {
        let run = |vars: &[(&str, &str)]| {
            let mut c = std::process::Command::new(std::env::current_exe().unwrap());
            c.args([
                "--exact",
                "tests::probe_missing_component",
                "--ignored",
                "--nocapture",
            ]);
            for v in ["CI", REQUIRE_ALL, REQUIRE_SANDBOX] {
                c.env_remove(v);
            }
            c.envs(vars.iter().copied());
            let o = c.output().unwrap();
            let text = String::from_utf8_lossy(&o.stdout).into_owned()
                + &String::from_utf8_lossy(&o.stderr);
            (o.status.success(), text)
        };
        let (ok, text) = run(&[(REQUIRE_SANDBOX, "1")]);
        assert!(!ok, "{text}");
        assert!(
            text.contains("probe component missing, and this run requires it"),
            "{text}"
        );
        let (ok, text) = run(&[("CI", "true")]);
        assert!(!ok, "{text}");
        let (ok, text) = run(&[]);
        assert!(ok, "{text}");
        assert!(
            text.contains("probe component missing: TEST SKIPPED"),
            "{text}"
        );
        assert!(text.contains("1 passed"), "the probe did not run: {text}");
    }
}
