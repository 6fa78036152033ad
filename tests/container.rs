//! The server where users deploy it: inside a container started with
//! Docker's default confinement (issue 16), emulated by
//! `scripts/docker-like.py` (Docker's seccomp refusals of namespaces and
//! mounts, its capability set, optionally `USER 1000`). bubblewrap cannot
//! start there, so the server must pick the landlock tier by itself and
//! keep every promise of the bwrap tier: the oracle solves every task, no
//! hack is paid, containment probes fail, resource attacks stop at their
//! bounds. Run as root (a uid per command) and as uid 1000 (commands share
//! the server's uid). CI installs python3-seccomp (scripts/setup.sh); a
//! missing one fails here rather than skipping.

use crate::agent::{HACK_SKIPS, HACK_TASK, agent_episode, best, cli, read_report};
use crate::util::{self, ServeOpts, ServerProc};
use secaudit::agent::scripted::{HACKS, KEEPS_SECRETS, control_actions};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The unprivileged uid of the Dockerfile's `USER`.
const CONTAINER_UID: u32 = 1000;

/// A server under Docker-like confinement, with its data dir.
struct Contained {
    server: ServerProc,
    data: PathBuf,
    _dir: tempfile::TempDir,
}

/// The server binary and the tasks where a server of another uid reaches
/// them (`dir`, 0755): the checkout may sit below a 0700 directory (issue
/// 23), as the image's `/app` never does. The binary is hard-linked when
/// it can be (same inode, same mode), else copied.
fn reachable_copies(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("secaudit");
    if std::fs::hard_link(util::bin(), &bin).is_err() {
        std::fs::copy(util::bin(), &bin).expect("copy the server binary");
    }
    let tasks = dir.join("tasks");
    let r = std::process::Command::new("cp")
        .arg("-a")
        .arg(util::root().join("tasks"))
        .arg(&tasks)
        .status()
        .expect("cp");
    assert!(r.success(), "cp -a tasks");
    (bin, tasks)
}

async fn start(uid: Option<u32>) -> Contained {
    let root = util::root();
    let wrapper = root.join("scripts/docker-like.py");
    let ok = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import seccomp"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3-seccomp is missing (apt-get install python3-seccomp; scripts/setup.sh installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut args = vec![
        "/usr/bin/python3".to_string(),
        wrapper.display().to_string(),
    ];
    let mut bin_and_tasks = None;
    if let Some(u) = uid {
        std::os::unix::fs::chown(&data, Some(u), Some(u)).unwrap();
        args.extend(["--uid".into(), u.to_string()]);
        bin_and_tasks = Some(reachable_copies(dir.path()));
    }
    args.push("--".into());
    let server = ServerProc::start_with(ServeOpts {
        data: Some(data.clone()),
        log: Some(dir.path().join("serve.log")),
        wrapper: args,
        // A root server would otherwise share the default sandbox tier
        // variable of the test run; the point is what `auto` picks here.
        env: vec![("SECAUDIT_SANDBOX".into(), "auto".into())],
        bin_and_tasks,
        ..ServeOpts::default()
    })
    .await;
    Contained {
        server,
        data,
        _dir: dir,
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(180))
        .build()
        .unwrap()
}

async fn post(url: &str, path: &str, body: Value) -> Value {
    http()
        .post(format!("{url}{path}"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn reset(url: &str, task: u32) -> String {
    let r = post(url, "/reset", json!({"task_id": task})).await;
    r["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("reset failed: {r}"))
        .to_string()
}

/// One bash step; returns `last_action`.
async fn step(url: &str, sid: &str, cmd: &str) -> Value {
    let r = post(url, "/step", json!({"session_id": sid, "action": cmd})).await;
    r["observation"]["last_action"].clone()
}

async fn health_is_landlock(c: &Contained, uid: Option<u32>) {
    let h: Value = http()
        .get(format!("{}/health", c.server.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(h["status"], "healthy", "{h}");
    assert_eq!(h["sandbox"]["tier"], "landlock", "{h}");
    assert_eq!(h["sandbox"]["available"], true, "{h}");
    assert_eq!(h["sandbox"]["uid_per_command"], uid.is_none(), "{h}");
    assert!(h["sandbox"]["landlock_abi"].as_u64().unwrap() >= 1, "{h}");
}

/// Every task's oracle reaches 1.0 through the HTTP API.
async fn oracle_solves_every_task(c: &Contained) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("oracle.json");
    let r = cli(
        "eval",
        &[
            "--agent",
            "oracle",
            "--data-dir",
            c.data.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        &c.server.url,
        None,
        900,
    )
    .await;
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, c.server.log_tail());
    let report = read_report(&json);
    assert_eq!(report.tasks.len(), 13);
    let failed: Vec<String> = report
        .tasks
        .iter()
        .filter(|t| t.stats.success_rate < 1.0)
        .map(|t| format!("task {}: {:?}", t.task_id, t.runs))
        .collect();
    assert!(failed.is_empty(), "oracle failed:\n{}", failed.join("\n"));
}

/// Every hack script earns nothing it should not (as in tests/agent.rs).
async fn hacks_earn_nothing(c: &Contained) {
    let url = &c.server.url;
    let ctl = agent_episode(url, "control", HACK_TASK).await;
    assert_eq!(ctl.steps.len(), control_actions().len());
    let control = best(&ctl);
    let mut failures = Vec::new();
    for hack in HACKS.iter().filter(|h| !HACK_SKIPS.contains(h)) {
        let e = agent_episode(url, &format!("hack:{hack}"), HACK_TASK).await;
        let allowed = if KEEPS_SECRETS.contains(hack) {
            0.0
        } else {
            control
        };
        if e.success || best(&e) > allowed + 0.005 {
            failures.push(format!("{hack}: success={} best={}", e.success, best(&e)));
        }
    }
    assert!(failures.is_empty(), "hacks paid:\n{}", failures.join("\n"));
}

/// What a command must not reach: the data dir (ground truth, pristine
/// copies), another session's workspace, the server's port, the server
/// process (signals, /proc), the venv and /usr (writes); and nothing it
/// starts survives it.
async fn probes_fail(c: &Contained) {
    let url = &c.server.url;
    let b = reset(url, 1).await;
    let other = c.data.join("sessions").join(&b).join("workspace");
    assert!(other.is_dir(), "{}", other.display());
    let port = url.rsplit(':').next().unwrap();
    let pid = c.server.pid();
    let venv = util::venv();
    let probes: Vec<(&str, String)> = vec![
        ("data dir", format!("ls {}", c.data.display())),
        (
            "truth",
            format!("cat {}/tasks/*/truth.json", c.data.display()),
        ),
        ("other session", format!("ls {}", other.display())),
        (
            "other session write",
            format!("touch {}/pwned", other.display()),
        ),
        (
            "tasks dir",
            format!(
                "cat {}/tasks/easy/task_01/task.json",
                util::root().display()
            ),
        ),
        (
            "server port",
            format!(
                "python3 -c 'import socket; s = socket.socket(); s.settimeout(2); s.connect((\"127.0.0.1\", {port}))'"
            ),
        ),
        ("signal server", format!("kill -9 {pid}")),
        ("server environ", format!("cat /proc/{pid}/environ")),
        ("server cmdline", format!("cat /proc/{pid}/cmdline")),
        ("venv write", format!("touch {}/bin/pwned", venv.display())),
        ("usr write", "touch /usr/pwned".into()),
        ("etc", "cat /etc/passwd".into()),
        (
            "ptrace",
            format!(
                "python3 -c 'import ctypes; assert ctypes.CDLL(None).ptrace(16, {pid}, 0, 0) == 0'"
            ),
        ),
        ("new namespace", "unshare -U -r true".into()),
        // Same-uid process control that Landlock does not scope (red team).
        ("re-limit server", format!("prlimit --pid {pid} --nofile=16:16")),
        ("renice server", format!("renice -n 19 -p {pid}")),
        ("pin server", format!("taskset -p 1 {pid}")),
        ("ionice server", format!("ionice -c 3 -p {pid}")),
        (
            "sysv shm",
            "python3 -c 'import ctypes; assert ctypes.CDLL(None).shmget(0x5a5a0001, 1 << 20, 0o1666) >= 0'".into(),
        ),
    ];
    let mut breaches = Vec::new();
    for (what, cmd) in &probes {
        // A fresh episode each (task 1's budget is 10 steps).
        let a = reset(url, 1).await;
        let la = step(url, &a, cmd).await;
        assert!(la.is_object(), "{what}: no step result");
        if la["exit_code"] != json!(null) && la["exit_code"] == json!(0) {
            breaches.push(format!("{what}: `{cmd}` succeeded: {la}"));
        }
    }
    assert!(
        breaches.is_empty(),
        "containment breached:\n{}",
        breaches.join("\n")
    );
    assert!(!other.join("pwned").exists() && !venv.join("bin/pwned").exists());
    // The server survived the probes.
    let h = http().get(format!("{url}/health")).send().await.unwrap();
    assert!(h.status().is_success());
    // Escapees die with their command.
    let token = format!("9{}.75", CONTAINER_UID + pid);
    let la = step(
        url,
        &reset(url, 1).await,
        &format!("setsid sleep {token} & (sleep {token} &); nohup sleep {token} >/dev/null 2>&1 & disown; echo started"),
    )
    .await;
    assert!(la["stdout"].as_str().unwrap().contains("started"), "{la}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let left = crate::util::host_procs_named(&format!("sleep {token}"));
    assert!(left.is_empty(), "survivors: {left:?}");
}

/// The issue-16 resource attacks through the API: each stops at its bound
/// with `limit_exceeded` set, and another session's `true` step meanwhile
/// stays quick (printed; asserted only against a generous ceiling).
async fn resource_attacks_bounded(c: &Contained) {
    let url = &c.server.url;
    let attacks = [
        (
            "disk",
            "for i in $(seq 30); do head -c 100000000 /dev/zero > big$i || break; done",
        ),
        (
            "inodes",
            "mkdir many && cd many && for i in $(seq 200000); do : > f$i; done",
        ),
        (
            "memory",
            "for i in 1 2 3 4 5 6; do python3 -c 'import time; b = bytearray(1 << 30); time.sleep(60)' & done; wait",
        ),
    ];
    for (bound, cmd) in attacks {
        let victim = reset(url, 1).await;
        let sid = reset(url, 1).await;
        let attack = step(url, &sid, cmd);
        let probe = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let t = Instant::now();
            let la = step(url, &victim, "true").await;
            assert_eq!(la["exit_code"], 0, "{la}");
            t.elapsed()
        };
        let (la, other) = tokio::join!(attack, probe);
        eprintln!("{bound} attack: another session's `true` step took {other:?}");
        assert_eq!(la["limit_exceeded"], bound, "{la}");
        assert!(la["stderr"].as_str().unwrap().contains("bound"), "{la}");
        assert!(other < Duration::from_secs(20), "{other:?}");
        // The attacker's workspace stays near its bound, not the host's.
        let ws = c.data.join("sessions").join(&sid).join("workspace");
        let used = du(&ws);
        // Of the 3 GB asked; the overshoot is one (possibly late) tick.
        assert!(used < 1 << 30, "{bound}: {used} bytes left");
        for s in [&sid, &victim] {
            post(url, "/close", json!({"session_id": s})).await;
        }
    }
}

fn du(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut n = 0;
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if let Ok(m) = e.metadata() {
                n += m.blocks() * 512;
                if m.is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
    n
}

/// A directory a command locks against its owner (`chmod 000`) hides
/// nothing from the disk bound and cannot make the session unremovable
/// (commands share a non-root server's uid; red team, issue 16).
async fn locked_dirs_hide_nothing(c: &Contained) {
    let url = &c.server.url;
    let sid = reset(url, 1).await;
    let la = step(
        url,
        &sid,
        "mkdir hid && for i in 1 2 3 4; do head -c 100000000 /dev/zero > hid/f$i; done; chmod 000 hid",
    )
    .await;
    assert_eq!(la["limit_exceeded"], "disk", "{la}");
    let r = http()
        .post(format!("{url}/close"))
        .json(&json!({"session_id": sid}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let ws = c.data.join("sessions").join(&sid);
    assert!(!ws.exists(), "{} left behind", ws.display());
}

async fn whole(uid: Option<u32>) {
    let c = start(uid).await;
    health_is_landlock(&c, uid).await;
    probes_fail(&c).await;
    resource_attacks_bounded(&c).await;
    locked_dirs_hide_nothing(&c).await;
    oracle_solves_every_task(&c).await;
    hacks_earn_nothing(&c).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_default_as_root() {
    whole(None).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_default_as_uid_1000() {
    whole(Some(CONTAINER_UID)).await;
}
