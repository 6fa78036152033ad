//! The Python client package (`pyproject.toml`, `__init__.py`,
//! `client.py`, `models.py` at the repository root, laid out as OpenEnv
//! environments are), checked with real tools:
//!
//! - `openenv validate` passes on the repository directory itself, and the
//!   structure check `openenv push` runs first accepts it;
//! - throwaway venvs install the package offline with pip from a path and
//!   from a `git+file://` URL, at the workspace's version;
//! - against a live `secaudit serve`: the typed models match `/schema` and
//!   `/openapi.json` field by field, the typed client plays an episode over
//!   WebSocket and HTTP, sync and async, with OpenEnv's `list_tools` and
//!   `call_tool` actions through `step`; OpenEnv's own `MCPToolClient`
//!   works unmodified.
//!
//! The throwaway venvs see the tool venv's packages (openenv and its
//! dependencies, setuptools, wheel) through a `.pth` file, so nothing is
//! downloaded. A missing tool venv is a failure with the fix, never a skip.

use crate::openenv_client::{Ran, openenv_venv, run_bounded};
use crate::util::{self, ServerProc, tail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The files of the package, as the working tree has them.
const PACKAGE_FILES: &[&str] = &[
    "pyproject.toml",
    "README.md",
    "openenv.yaml",
    "__init__.py",
    "client.py",
    "models.py",
    "trl_env.py",
];

/// The distribution name in `pyproject.toml`.
const DIST: &str = "secrets-audit-env";

fn ok(r: &Ran, what: &str) {
    assert!(
        r.status.success(),
        "{what} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        r.status,
        tail(&r.stdout, 40),
        tail(&r.stderr, 40)
    );
}

fn run(cmd: &mut Command, what: &str, limit: Duration) -> Ran {
    let r = run_bounded(cmd, limit);
    ok(&r, what);
    r
}

/// `git archive HEAD` of the repository with the package files of the
/// working tree on top, committed in a fresh repository: what a user
/// clones, including edits not yet committed here.
fn export(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let root = util::root();
    let tar = dir.join("head.tar");
    run(
        Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["archive", "-o"])
            .arg(&tar)
            .arg("HEAD"),
        "git archive",
        Duration::from_secs(120),
    );
    run(
        Command::new("tar")
            .arg("-xf")
            .arg(&tar)
            .arg("-C")
            .arg(&repo),
        "tar -x",
        Duration::from_secs(120),
    );
    for f in PACKAGE_FILES {
        std::fs::copy(root.join(f), repo.join(f)).unwrap_or_else(|e| panic!("copy {f}: {e}"));
    }
    let git = |args: &[&str]| {
        run(
            Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args),
            &format!("git {args:?}"),
            Duration::from_secs(120),
        )
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "export"]);
    repo
}

/// A venv whose python sees the tool venv's site-packages; returns its
/// python.
fn throwaway_venv(dir: &Path) -> PathBuf {
    let tools = openenv_venv();
    run(
        Command::new("/usr/bin/python3")
            .args(["-m", "venv"])
            .arg(dir),
        "python3 -m venv",
        Duration::from_secs(120),
    );
    let py = dir.join("bin/python");
    let site = |py: &Path| {
        let r = run(
            Command::new(py).args([
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ]),
            "purelib",
            Duration::from_secs(60),
        );
        PathBuf::from(r.stdout.trim())
    };
    let theirs = site(&tools.join("bin/python"));
    std::fs::write(
        site(&py).join("openenv_tools.pth"),
        format!("{}\n", theirs.display()),
    )
    .unwrap();
    py
}

/// `pip install` of `target` into the venv of `py`, offline.
fn pip_install(py: &Path, target: &str) {
    run(
        Command::new(py)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-index",
                "--no-build-isolation",
            ])
            .arg(target),
        &format!("pip install {target}"),
        Duration::from_secs(600),
    );
}

/// Where the venv imports the package from, and its installed version.
fn installed(py: &Path) -> (String, String) {
    let r = run(
        Command::new(py).args([
            "-c",
            &format!(
                "import importlib.metadata as m, secrets_audit_env as s; print(s.__file__); print(m.version('{DIST}'))"
            ),
        ]),
        "import secrets_audit_env",
        Duration::from_secs(120),
    );
    let mut lines = r.stdout.lines();
    (
        lines.next().unwrap_or_default().to_string(),
        lines.next().unwrap_or_default().to_string(),
    )
}

fn check(py: &Path, what: &str, url: &str, srv: &ServerProc) -> String {
    let r = run_bounded(
        Command::new(py)
            .arg(util::root().join("scripts/pyclient_check.py"))
            .args([what, url]),
        Duration::from_secs(600),
    );
    assert!(
        r.status.success(),
        "pyclient_check.py {what} failed ({}):\nstdout:\n{}\nstderr:\n{}\nserver log:\n{}",
        r.status,
        r.stdout,
        tail(&r.stderr, 60),
        srv.log_tail()
    );
    eprintln!("pyclient_check.py {what}: {}", r.stdout.trim());
    r.stdout
}

#[test]
fn openenv_validate_and_push_checks_pass_on_the_repository() {
    let venv = openenv_venv();
    // `openenv validate` hashes every file of the directory. The checkout
    // as a user has it after set-up (its `.tools` venvs, `data/`, the
    // package files), hard-linked into a scratch directory so that the
    // walk is not raced by this test run's own builds: other tests build
    // into `target/`, rewriting files under a walk of several GB
    // ("package source could not be verified"). `target/` is left out for
    // that reason only; `.git` openenv skips itself.
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("secaudit");
    std::fs::create_dir(&root).unwrap();
    for e in std::fs::read_dir(util::root()).unwrap() {
        let e = e.unwrap();
        if e.file_name() == "target" || e.file_name() == ".git" {
            continue;
        }
        let linked = Command::new("cp")
            .arg("-al")
            .arg(e.path())
            .arg(&root)
            .status()
            .is_ok_and(|s| s.success());
        if !linked {
            // Another file system: a copy.
            run(
                Command::new("cp").arg("-a").arg(e.path()).arg(&root),
                "cp -a",
                Duration::from_secs(300),
            );
        }
    }
    let r = run_bounded(
        Command::new(venv.join("bin/openenv"))
            .arg("validate")
            .arg(&root),
        Duration::from_secs(600),
    );
    let text = format!("{}\n{}", r.stdout, r.stderr);
    // The static level passes; the runtime and semantic checks are
    // skipped (they need a container image build), which the default
    // level reports as a WARN verdict, exit status 0. Nothing fails.
    let failed = text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("FAIL") || l.starts_with("ERROR")
    });
    assert!(
        r.status.success() && !failed && text.contains("PASS  static.manifest"),
        "openenv validate {} ({}):\n{}",
        root.display(),
        r.status,
        tail(&text, 60)
    );
    // `openenv push` validates the directory's structure, then the
    // manifest, before it builds or uploads anything: the same function.
    let r = run(
        Command::new(venv.join("bin/python"))
            .args([
                "-c",
                "import sys; from pathlib import Path; \
                 from openenv.cli.commands.push import _validate_openenv_directory as v; \
                 name, manifest = v(Path(sys.argv[1])); print(name)",
            ])
            .arg(&root),
        "openenv push's directory check",
        Duration::from_secs(120),
    );
    // Its warnings (a missing `outputs/`, recommended) come first.
    assert_eq!(
        r.stdout.trim().lines().last(),
        Some("secrets_audit_env"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pip_installed_client_matches_the_server_and_plays_episodes() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().to_path_buf();
    let (repo, by_path, by_git) = tokio::task::spawn_blocking(move || {
        let repo = export(&dir);
        let by_path = throwaway_venv(&dir.join("venv-path"));
        pip_install(&by_path, repo.to_str().unwrap());
        let by_git = throwaway_venv(&dir.join("venv-git"));
        pip_install(&by_git, &format!("git+file://{}", repo.display()));
        (repo, by_path, by_git)
    })
    .await
    .unwrap();

    // Installed, not imported from the tree, at the workspace's version
    // (Cargo.toml [workspace.package]), which openenv.yaml states too.
    let version = env!("CARGO_PKG_VERSION");
    for py in [&by_path, &by_git] {
        let (file, v) = installed(py);
        assert!(
            file.contains("site-packages/secrets_audit_env/")
                && !file.starts_with(repo.to_str().unwrap()),
            "imported from {file}"
        );
        assert_eq!(v, version, "{DIST} version vs the Cargo workspace's");
    }
    let yaml = std::fs::read_to_string(util::root().join("openenv.yaml")).unwrap();
    assert!(
        yaml.lines().any(|l| l == format!("version: {version}")),
        "openenv.yaml version must be the workspace's {version}"
    );

    let srv = ServerProc::start().await;
    let url = srv.url.clone();
    let (s, e, m, g) = tokio::task::spawn_blocking(move || {
        let s = check(&by_path, "schema", &url, &srv);
        let e = check(&by_path, "episode", &url, &srv);
        let m = check(&by_path, "mcp", &url, &srv);
        let g = check(&by_git, "schema", &url, &srv);
        (s, e, m, g)
    })
    .await
    .unwrap();
    let s: serde_json::Value = serde_json::from_str(s.trim()).expect("schema JSON");
    assert!(
        s["fields"].as_u64().unwrap_or(0) > 60,
        "compared every field: {s}"
    );
    let e: serde_json::Value = serde_json::from_str(e.trim()).expect("episode JSON");
    let clients: Vec<&str> = e["episodes"]
        .as_array()
        .expect("episodes")
        .iter()
        .map(|x| x["client"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(clients, ["ws-sync", "http-sync", "ws-async", "http-async"]);
    assert!(m.contains("\"calls\": 3"), "{m}");
    assert_eq!(
        s["models"],
        serde_json::from_str::<serde_json::Value>(g.trim()).unwrap()["models"]
    );
}
