//! Packaging and submission: the static Dockerfile check (the same code
//! `validate-submission.sh` runs, called through its `--check-dockerfile`
//! mode) on the real Dockerfile and on broken ones; `openenv.yaml` parses and
//! agrees with the served observation schema, `spec.md` and the tasks; the
//! whole `validate-submission.sh` passes end to end; and `scripts/serve.sh`
//! serves from wherever a checkout sits, or the server says why it cannot
//! (issue 23).

use crate::openenv_client::{bin, openenv_venv, run_bounded};
use crate::util;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Runs the validator's static Dockerfile check; returns (passed, output).
fn check_dockerfile(dockerfile: &Path, entrypoint: &Path, context: &Path) -> (bool, String) {
    let r = run_bounded(
        Command::new("bash")
            .arg(util::root().join("validate-submission.sh"))
            .arg("--check-dockerfile")
            .args([dockerfile, entrypoint, context]),
        Duration::from_secs(60),
    );
    (r.status.success(), format!("{}{}", r.stdout, r.stderr))
}

#[test]
fn repository_dockerfile_passes_the_static_check() {
    let root = util::root();
    let (ok, out) = check_dockerfile(
        &root.join("Dockerfile"),
        &root.join("scripts/docker-entrypoint.sh"),
        &root,
    );
    assert!(ok, "Dockerfile static check failed:\n{out}");
}

/// A tiny build context in a temp dir: `app.sh`, `src/x`, an entrypoint.
fn context() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(d.path().join("src")).expect("mkdir");
    std::fs::write(d.path().join("src/x"), "x").expect("write");
    std::fs::write(d.path().join("app.sh"), "#!/bin/sh\nexec app\n").expect("write");
    d
}

fn check_text(dockerfile: &str, entrypoint: &str) -> (bool, String) {
    let d = context();
    std::fs::write(d.path().join("Dockerfile"), dockerfile).expect("write");
    std::fs::write(d.path().join("ep.sh"), entrypoint).expect("write");
    check_dockerfile(
        &d.path().join("Dockerfile"),
        &d.path().join("ep.sh"),
        d.path(),
    )
}

const GOOD: &str = "FROM rust:1.95-slim AS build\nCOPY src src\nRUN make \\\n  all\n\
                    FROM debian:bookworm-slim@sha256:abc\nCOPY --from=build /src/out /usr/bin/out\n\
                    COPY app.sh src/* /app/\n# COPY missing /x (a comment)\nENTRYPOINT [\"/app/app.sh\"]\n";

#[test]
fn static_check_accepts_a_clean_dockerfile() {
    let (ok, out) = check_text(GOOD, "#!/bin/sh\nexec app \"$@\"\n");
    assert!(ok, "clean Dockerfile rejected:\n{out}");
}

#[test]
fn static_check_rejects_broken_dockerfiles() {
    let ep = "#!/bin/sh\nexec app\n";
    let cases: &[(&str, &str, &str)] = &[
        ("latest tag", "FROM debian:latest\nCMD [\"x\"]\n", ":latest"),
        ("no tag", "FROM debian\nCMD [\"x\"]\n", "no tag"),
        (
            "registry port, no tag",
            "FROM localhost:5000/img\nCMD [\"x\"]\n",
            "no tag",
        ),
        (
            "missing COPY source",
            "FROM debian:12\nCOPY nope /nope\nCMD [\"x\"]\n",
            "does not exist",
        ),
        (
            "COPY glob matches nothing",
            "FROM debian:12\nCOPY *.none /x/\nCMD [\"x\"]\n",
            "matches nothing",
        ),
        (
            "COPY escapes the context",
            "FROM debian:12\nCOPY ../etc /x\nCMD [\"x\"]\n",
            "leaves the build context",
        ),
        (
            "no ENTRYPOINT/CMD",
            "FROM debian:12\nCOPY src src\n",
            "no ENTRYPOINT or CMD",
        ),
        (
            "CMD only in an earlier stage",
            "FROM debian:12 AS a\nCMD [\"x\"]\nFROM debian:12\n",
            "no ENTRYPOINT or CMD",
        ),
        (
            "host path /root",
            "FROM debian:12\nCOPY src /root/src\nCMD [\"x\"]\n",
            "/root",
        ),
        (
            "host path /home/<user>",
            "FROM debian:12\nRUN cat /home/alice/.ssh/id\nCMD [\"x\"]\n",
            "/home/alice",
        ),
        (
            "host path /work",
            "FROM debian:12\nENV P=/work/main\nCMD [\"x\"]\n",
            "/work",
        ),
        (
            "host path /Users",
            "FROM debian:12\nWORKDIR /Users/bob\nCMD [\"x\"]\n",
            "/Users/",
        ),
        (
            "host path /tmp/...",
            "FROM debian:12\nRUN cp /tmp/build/x /x\nCMD [\"x\"]\n",
            "/tmp/",
        ),
    ];
    for (name, dockerfile, reason) in cases {
        let (ok, out) = check_text(dockerfile, ep);
        assert!(!ok, "{name}: accepted:\n{dockerfile}");
        assert!(
            out.contains(reason),
            "{name}: output does not say {reason:?}:\n{out}"
        );
    }
    let (ok, out) = check_text(GOOD, "#!/bin/sh\ncd /home/dev/project && exec app\n");
    assert!(
        !ok && out.contains("ep.sh:2") && out.contains("/home/dev"),
        "host path in the entrypoint:\n{out}"
    );
}

/// `openenv.yaml` as JSON, parsed by PyYAML from the openenv tool venv.
fn openenv_yaml() -> Value {
    let py = openenv_venv().join("bin/python");
    let r = run_bounded(
        Command::new(py)
            .args([
                "-c",
                "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
            ])
            .arg(util::root().join("openenv.yaml")),
        Duration::from_secs(60),
    );
    assert!(
        r.status.success(),
        "openenv.yaml does not parse:\n{}",
        r.stderr
    );
    serde_json::from_str(&r.stdout).expect("yaml as JSON")
}

fn str_list(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("openenv.yaml: {key} must be a list"))
        .iter()
        .map(|k| {
            k.as_str()
                .unwrap_or_else(|| panic!("openenv.yaml: {key} holds a non-string"))
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openenv_yaml_agrees_with_schema_spec_and_tasks() {
    let y = openenv_yaml();
    assert_eq!(
        y["name"], "secrets_audit_env",
        "name (required by openenv push)"
    );
    for k in ["reward", "resources", "capabilities", "types"] {
        assert!(
            y["validation"][k].is_object(),
            "validation.{k} (openenv 0.10.0 local validate needs it)"
        );
    }
    assert_eq!(
        y["validation"]["reward"]["range"],
        serde_json::json!([0.0, 1.0])
    );

    // The observation schema exactly as clients get it from GET /schema
    // (schemars' schema of server::models::Observation plus OpenEnv's
    // optional `metadata`).
    let (env, _data) = util::env_with(2).await;
    let (addr, server) = util::serve(env).await;
    let schema: Value = reqwest::get(format!("http://{addr}/schema"))
        .await
        .expect("GET /schema")
        .json()
        .await
        .expect("json");
    server.abort();
    let props: BTreeSet<String> = schema["observation"]["properties"]
        .as_object()
        .expect("observation.properties")
        .keys()
        .filter(|k| *k != "metadata")
        .cloned()
        .collect();

    let keys = str_list(&y, "observation_keys");
    let listed: BTreeSet<String> = keys.iter().cloned().collect();
    assert_eq!(listed.len(), keys.len(), "observation_keys has duplicates");
    let not_in_schema: Vec<_> = listed.difference(&props).collect();
    let not_listed: Vec<_> = props.difference(&listed).collect();
    assert!(
        not_in_schema.is_empty(),
        "openenv.yaml lists keys the Observation schema lacks: {not_in_schema:?}"
    );
    assert!(
        not_listed.is_empty(),
        "Observation fields missing from openenv.yaml observation_keys: {not_listed:?}"
    );

    // The action is a union (a command, or OpenEnv's tool-calling
    // actions): its keys are those of every alternative.
    let action = &schema["action"];
    let alternatives = action["anyOf"].as_array().expect("action.anyOf");
    let mut action_props = BTreeSet::new();
    for alt in alternatives {
        let alt = match alt["$ref"].as_str() {
            Some(r) => &action["$defs"][r.trim_start_matches("#/$defs/")],
            None => alt,
        };
        action_props.extend(
            alt["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("action alternative without properties: {alt}"))
                .keys()
                .cloned(),
        );
    }
    let action_keys: BTreeSet<String> = str_list(&y, "action_keys").into_iter().collect();
    assert_eq!(
        action_keys, action_props,
        "openenv.yaml action_keys vs the Action schema"
    );

    let spec = std::fs::read_to_string(util::root().join("spec.md")).expect("spec.md");
    let undocumented: Vec<_> = keys
        .iter()
        .filter(|k| !spec.contains(&format!("`{k}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "spec.md does not mention (as `key`) observation keys: {undocumented:?}"
    );

    // The task table mirrors task.json.
    let reg = server::tasks::TaskRegistry::load(&util::root().join("tasks")).expect("tasks");
    let table = y["tasks"].as_array().expect("openenv.yaml tasks");
    assert_eq!(table.len(), 13, "13 tasks in openenv.yaml");
    assert_eq!(reg.list().len(), 13, "13 task dirs");
    for row in table {
        let id = row["id"].as_u64().expect("task id") as u32;
        let def = reg
            .get(id)
            .unwrap_or_else(|| panic!("openenv.yaml task {id} has no task dir"));
        assert_eq!(
            row["budget"].as_u64(),
            Some(u64::from(def.task.step_budget)),
            "task {id} budget"
        );
        let difficulty = serde_json::to_value(def.task.difficulty).expect("difficulty");
        assert_eq!(row["difficulty"], difficulty, "task {id} difficulty");
        let dir_level = def
            .dir
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or("");
        assert_eq!(
            Some(dir_level),
            difficulty.as_str(),
            "task {id} lives under tasks/<difficulty>/"
        );
    }
}

/// The whole submission validator, against a server it starts itself. Needs
/// `secaudit serve`, `secaudit generate` and `secaudit agent` (all three
/// built into the test binary's `secaudit`) and `.tools/openenv`.
#[test]
fn validate_submission_passes_end_to_end() {
    openenv_venv();
    let r = run_bounded(
        Command::new("bash")
            .arg(util::root().join("validate-submission.sh"))
            .env("SECAUDIT_BIN", bin())
            .env_remove("API_BASE_URL")
            .current_dir(util::root()),
        Duration::from_secs(1500),
    );
    let checks = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL"))
        .count();
    assert!(
        r.status.success() && !r.stdout.contains("FAIL") && checks >= 5,
        "validate-submission.sh failed ({}):\n{}\n{}",
        r.status,
        r.stdout,
        r.stderr
    );
}

/// The real `cargo`, for the stub in [`serve_script_runs_the_binary_in_cargo_target_dir`]
/// to hand everything but `build` to: `$CARGO` (set by cargo for what it
/// runs), else the first `cargo` on `PATH`.
fn real_cargo() -> std::path::PathBuf {
    if let Some(c) = std::env::var_os("CARGO").map(std::path::PathBuf::from)
        && c.is_file()
    {
        return c;
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("cargo"))
        .find(|c| c.is_file())
        .expect("cargo on PATH")
}

/// `scripts/secaudit-bin.sh` answers with Cargo's target dir: the default
/// `./target`, an absolute `CARGO_TARGET_DIR`, and a relative one (Cargo
/// resolves it against the repository root, where the scripts run cargo).
#[test]
fn secaudit_bin_follows_cargo_target_dir() {
    let root = util::root();
    let far = tempfile::tempdir().expect("tempdir");
    let ask = |dir: Option<&std::ffi::OsStr>, profile: &str| {
        let mut c = Command::new("bash");
        c.arg(root.join("scripts/secaudit-bin.sh"))
            .arg(profile)
            .current_dir(far.path())
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR");
        if let Some(d) = dir {
            c.env("CARGO_TARGET_DIR", d);
        }
        let r = run_bounded(&mut c, Duration::from_secs(60));
        assert!(
            r.status.success(),
            "secaudit-bin.sh {profile}: {}",
            r.stderr
        );
        std::path::PathBuf::from(r.stdout.trim())
    };
    assert_eq!(ask(None, "release"), root.join("target/release/secaudit"));
    assert_eq!(
        ask(Some(far.path().as_os_str()), "release"),
        far.path().join("release/secaudit")
    );
    assert_eq!(
        ask(Some(far.path().as_os_str()), "debug"),
        far.path().join("debug/secaudit")
    );
    assert_eq!(
        ask(Some("elsewhere/tgt".as_ref()), "release"),
        root.join("elsewhere/tgt/release/secaudit")
    );
    let bad = run_bounded(
        Command::new("bash")
            .arg(root.join("scripts/secaudit-bin.sh"))
            .arg("fast"),
        Duration::from_secs(60),
    );
    assert!(!bad.status.success(), "unknown profile accepted");
}

/// `scripts/serve.sh` with `CARGO_TARGET_DIR` pointing far from the
/// repository runs the binary there, not `./target/release/secaudit`
/// (issue 23). Only `cargo build` is stubbed (a release build from scratch
/// takes many minutes): the stub records the call and builds nothing, and
/// the "release binary" in the temporary target dir is a wrapper that notes
/// it ran and execs the `secaudit` built for these tests. Everything else
/// (setup.sh, `cargo metadata`, the server) is real, up to `/health`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_script_runs_the_binary_in_cargo_target_dir() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let exe = |p: &Path, text: String| {
        std::fs::create_dir_all(p.parent().unwrap()).expect("mkdir");
        std::fs::write(p, text).expect("write");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    let target = tmp.path().join("far/target");
    let marker = tmp.path().join("ran");
    let builds = tmp.path().join("builds");
    exe(
        &target.join("release/secaudit"),
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            bin().display()
        ),
    );
    let stubs = tmp.path().join("stubs");
    exe(
        &stubs.join("cargo"),
        format!(
            "#!/bin/sh\nif [ \"$1\" = build ]; then echo \"$@ $CARGO_TARGET_DIR\" >> '{}'; exit 0; fi\n\
             exec '{}' \"$@\"\n",
            builds.display(),
            real_cargo().display()
        ),
    );
    let path = std::env::join_paths(std::iter::once(stubs.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let port = util::free_port();
    let log = tmp.path().join("serve.log");
    let out = std::fs::File::create(&log).expect("log");
    let mut cmd = Command::new("bash");
    cmd.arg(util::root().join("scripts/serve.sh")).args([
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ]);
    for v in util::SERVE_VARS {
        cmd.env_remove(v);
    }
    let mut child = cmd
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", &target)
        .env("SECAUDIT_SKIP_BROWSER", "1")
        .env("SECAUDIT_DATA_DIR", tmp.path().join("data"))
        .env("SECAUDIT_VENV", util::venv())
        .current_dir(tmp.path())
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().expect("log"))
        .stderr(out)
        .spawn()
        .expect("spawn serve.sh");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("client");
    let deadline = std::time::Instant::now() + util::SERVE_STARTUP;
    let up = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break Err(format!("serve.sh exited ({st})"));
        }
        if let Ok(r) = http
            .get(format!("http://127.0.0.1:{port}/health"))
            .send()
            .await
            && r.status().is_success()
        {
            break Ok(());
        }
        if std::time::Instant::now() > deadline {
            break Err(format!("no /health within {:?}", util::SERVE_STARTUP));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let _ = child.kill();
    let _ = child.wait();
    let logged = util::tail(&std::fs::read_to_string(&log).unwrap_or_default(), 30);
    if let Err(e) = up {
        panic!("{e}:\n{logged}");
    }
    let ran = std::fs::read_to_string(&marker)
        .unwrap_or_else(|_| panic!("the binary in CARGO_TARGET_DIR did not run:\n{logged}"));
    assert!(ran.starts_with("serve "), "ran with {ran:?}");
    let built = std::fs::read_to_string(&builds).expect("cargo build was called");
    assert!(
        built.contains("--release") && built.contains(&target.display().to_string()),
        "cargo build call: {built}"
    );
}

/// Waits for `/health` of a `serve.sh` child on `port`; its JSON, or why
/// not (the child exited, or the start-up bound passed).
async fn wait_health(child: &mut std::process::Child, port: u16) -> Result<Value, String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("client");
    // A first start also builds the workspace's crates in release mode.
    let bound = util::SERVE_STARTUP + Duration::from_secs(900);
    let deadline = std::time::Instant::now() + bound;
    loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            return Err(format!("serve.sh exited ({st})"));
        }
        if let Ok(r) = http
            .get(format!("http://127.0.0.1:{port}/health"))
            .send()
            .await
            && r.status().is_success()
        {
            return r.json().await.map_err(|e| format!("/health: {e}"));
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("no /health within {bound:?}"));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Kills a child started in a process group of its own, and the group
/// (serve.sh's cargo or setup, if it never reached the exec).
fn kill_group(child: &mut std::process::Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// What `scripts/paths.sh` of a checkout answers: (venv, data dir, state
/// dir or empty).
fn checkout_paths(checkout: &Path) -> (String, String, String) {
    let r = run_bounded(
        Command::new("bash")
            .arg(checkout.join("scripts/paths.sh"))
            .env_remove("SECAUDIT_VENV")
            .env_remove("SECAUDIT_DATA_DIR")
            .env_remove("SECAUDIT_STATE_DIR"),
        Duration::from_secs(60),
    );
    assert!(r.status.success(), "paths.sh: {}", r.stderr);
    let get = |k: &str| {
        r.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("paths.sh printed no {k}:\n{}", r.stdout))
            .to_string()
    };
    (
        get("SECAUDIT_VENV"),
        get("SECAUDIT_DATA_DIR"),
        get("SECAUDIT_STATE_DIR"),
    )
}

/// Runs the README's serve command in `checkout` in `tier`, checks the tier
/// `/health` reports, and plays an oracle episode of git-mode task 7 over
/// HTTP to reward 1.0.
async fn serve_and_solve(checkout: &Path, target: &Path, tier: &str, want: Value, data: &str) {
    use std::os::unix::process::CommandExt;
    let port = util::free_port();
    let log = checkout.with_file_name(format!("serve-{tier}.log"));
    let out = std::fs::File::create(&log).expect("log");
    let mut cmd = Command::new("bash");
    cmd.arg("scripts/serve.sh")
        .args(["--host", "127.0.0.1", "--port", &port.to_string()]);
    for v in util::SERVE_VARS
        .iter()
        .chain(&["SECAUDIT_STATE_DIR", "SECAUDIT_ALLOW_UNCONTAINED"])
    {
        cmd.env_remove(v);
    }
    let mut child = cmd
        .env("CARGO_TARGET_DIR", target)
        .env("SECAUDIT_SKIP_BROWSER", "1")
        .env("SECAUDIT_SANDBOX", tier)
        .current_dir(checkout)
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().expect("log"))
        .stderr(out)
        .spawn()
        .expect("spawn serve.sh");
    let health = wait_health(&mut child, port).await;
    let logged = || util::tail(&std::fs::read_to_string(&log).unwrap_or_default(), 40);
    let health = match health {
        Ok(h) => h,
        Err(e) => {
            kill_group(&mut child);
            panic!("{} ({tier}): {e}:\n{}", checkout.display(), logged());
        }
    };
    let ctx = format!("{} ({tier})", checkout.display());
    if health["status"] != "healthy" || health["sandbox"]["tier"] != want {
        kill_group(&mut child);
        panic!("{ctx}: /health {health}, wanted tier {want}:\n{}", logged());
    }
    let url = format!("http://127.0.0.1:{port}");
    let json = checkout.with_file_name(format!("oracle-{tier}.json"));
    let r = crate::agent::cli(
        "eval",
        &[
            "--agent",
            "oracle",
            "--tasks",
            "7",
            "--episodes",
            "1",
            "--env-url",
            &url,
            "--data-dir",
            data,
            "--json",
            json.to_str().expect("utf-8 path"),
        ],
        &url,
        None,
        600,
    )
    .await;
    kill_group(&mut child);
    assert_eq!(r.code, 0, "{ctx}: eval failed:\n{}\n{}", r.stderr, logged());
    let report = crate::agent::read_report(&json);
    let s = &report.tasks[0].stats;
    assert_eq!(report.tasks[0].task_id, 7, "{ctx}");
    assert_eq!(
        (s.episodes, s.mean_reward, s.errors),
        (1, 1.0, 0),
        "{ctx}: {:?}\n{}",
        report.tasks[0],
        logged()
    );
}

/// Issue 23: the README's `./scripts/serve.sh` works wherever a user puts
/// the checkout. A clone of this repository (its HEAD: commit what you
/// test) at a path with a space, below a 0700 directory (root's home, a
/// Debian 12 home, a `mktemp -d` directory); then the same clone with that
/// directory opened (0755). Each time serve.sh builds (into the shared
/// target dir, so only the workspace's own crates recompile, once),
/// serves in the tier the host picks (or `SECAUDIT_SANDBOX`), and an
/// oracle episode of git-mode task 7 over HTTP reaches 1.0; then it serves
/// again in the landlock tier, whose commands run at host paths. Below
/// the private directory the venv and data dir must have moved out of the
/// checkout (scripts/paths.sh); below the open one they stay, at paths
/// with a space. One clone rather than two: a second path is a second
/// release build of the workspace's crates (minutes). Needs root: only a
/// root server runs commands as other uids, which is what a private
/// checkout broke (every reset a 500).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_script_works_from_a_private_checkout_and_a_path_with_a_space() {
    use server::sandbox::{Sandbox, SandboxConfig};
    use std::os::unix::fs::PermissionsExt;
    /// Removes a state dir the test made under /var/lib/secaudit, also
    /// when an assertion fails.
    struct RemoveOnDrop(String);
    impl Drop for RemoveOnDrop {
        fn drop(&mut self) {
            if !self.0.is_empty() {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
    assert!(
        server::sandbox::server_is_root(),
        "this test must run as root: only a root server runs commands as other uids"
    );
    let root = util::root();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .map_or_else(|| root.join("target"), |t| root.join(t));
    let head = run_bounded(
        Command::new("git")
            .args(["-C"])
            .arg(&root)
            .args(["rev-parse", "HEAD"]),
        Duration::from_secs(60),
    );
    assert!(head.status.success(), "git rev-parse: {}", head.stderr);
    // The tier a reachable checkout gets here, as the server would pick it.
    let host = Sandbox::detect(SandboxConfig::with_venv(util::venv()));
    assert!(
        host.is_contained(),
        "no containment tier on this host: {:?}",
        host.info()
    );
    let tiers = [
        (
            std::env::var("SECAUDIT_SANDBOX").unwrap_or_else(|_| "auto".into()),
            serde_json::to_value(host.tier()).expect("tier"),
        ),
        ("landlock".to_string(), serde_json::json!("landlock")),
    ];
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let home = tmp.path().join("home");
    let checkout = home.join("dir with space/secaudit");
    std::fs::create_dir_all(checkout.parent().unwrap()).expect("mkdir");
    let r = run_bounded(
        Command::new("git")
            .args(["clone", "-q", "--no-checkout"])
            .arg(&root)
            .arg(&checkout),
        Duration::from_secs(300),
    );
    assert!(r.status.success(), "git clone: {}", r.stderr);
    let r = run_bounded(
        Command::new("git")
            .arg("-C")
            .arg(&checkout)
            .args(["checkout", "-q", head.stdout.trim()]),
        Duration::from_secs(300),
    );
    assert!(r.status.success(), "git checkout: {}", r.stderr);
    // First private (the venv and data dir must move out), then the same
    // path opened to other users (they stay, at paths with a space).
    for (mode, moved) in [(0o700, true), (0o755, false)] {
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let (venv, data, state) = checkout_paths(&checkout);
        let _state = RemoveOnDrop(state.clone());
        let inside = |p: &str| Path::new(p).starts_with(&checkout);
        assert_eq!(
            (!inside(&venv), !inside(&data), !state.is_empty()),
            (moved, moved, moved),
            "{} below a {mode:o} dir: venv {venv}, data {data}, state dir {state:?}",
            checkout.display()
        );
        let mut ran = Vec::new();
        for (tier, want) in &tiers {
            if ran.contains(want) {
                continue;
            }
            let t = std::time::Instant::now();
            serve_and_solve(&checkout, &target, tier, want.clone(), &data).await;
            eprintln!(
                "below a {mode:o} dir, tier {tier}: serve.sh to an oracle 1.0 in {:.1?}",
                t.elapsed()
            );
            ran.push(want.clone());
        }
    }
}

/// Issue 23: a root server whose data dir (or venv) the sandbox's uids
/// cannot reach refuses to start, naming the directory and the missing
/// permission, instead of serving a 500 on every reset (or, for the venv,
/// quietly leaving the bwrap tier). Its own start-up, not serve.sh's.
#[test]
fn serve_refuses_paths_the_sandbox_cannot_reach() {
    use std::os::unix::fs::PermissionsExt;
    assert!(
        server::sandbox::server_is_root(),
        "this test must run as root: only a root server runs commands as other uids"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let private = tmp.path().join("private");
    std::fs::create_dir(&private).expect("mkdir");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let reachable = tmp.path().join("data");
    let serve = |data: &Path, venv: &Path| {
        let mut c = Command::new(bin());
        c.arg("serve")
            .args(["--host", "127.0.0.1", "--port"])
            .arg(util::free_port().to_string())
            .arg("--tasks-dir")
            .arg(util::root().join("tasks"))
            .arg("--data-dir")
            .arg(data)
            .arg("--venv")
            .arg(venv);
        for v in util::SERVE_VARS {
            c.env_remove(v);
        }
        run_bounded(&mut c, Duration::from_secs(60))
    };
    for (what, data, venv, named) in [
        (
            "data dir",
            private.join("data"),
            util::venv(),
            "the data dir",
        ),
        ("venv", reachable.clone(), private.join(".venv"), "the venv"),
    ] {
        let r = serve(&data, &venv);
        assert!(!r.status.success(), "{what}: served anyway:\n{}", r.stderr);
        let expect = [
            "refusing to start",
            named,
            &format!("{} (mode 0700", private.display()),
            "missing permission: o+x",
        ];
        for e in expect {
            assert!(r.stderr.contains(e), "{what}: no {e:?} in:\n{}", r.stderr);
        }
    }
}
