//! Containment tests, proved from inside the sandbox, in every tier: bwrap
//! (cold and prewarmed) and the namespace-free landlock tier. A machine
//! without `/usr/bin/bwrap` skips the bwrap runs loudly on a developer's
//! machine and fails them under CI (`testkit::require`: `CI`,
//! `SECAUDIT_REQUIRE_SANDBOX=1`), where a skip would report the heart of
//! the product green untested. When a tier exists but its
//! probe fails, they fail.

use super::*;
use std::collections::BTreeSet;

fn venv() -> PathBuf {
    crate::test_paths::venv()
}

/// The sandbox of the tier `start` runs in.
fn sandbox(start: Start) -> Option<Sandbox> {
    let tier = match start {
        Start::Landlock => TierChoice::Landlock,
        Start::Cold | Start::Warm => TierChoice::Bwrap,
    };
    if tier == TierChoice::Bwrap && !testkit::bwrap() {
        return None;
    }
    let sb = Sandbox::detect(SandboxConfig {
        tier,
        ..SandboxConfig::with_venv(venv())
    });
    assert!(
        sb.is_contained(),
        "{tier:?} tier unusable: {}",
        sb.info().detail
    );
    assert_eq!(
        sb.tier(),
        match tier {
            TierChoice::Landlock => Tier::Landlock,
            _ => Tier::Bwrap,
        }
    );
    Some(sb)
}

/// A fresh workspace owned by the sandbox uid.
fn workspace(sb: &Sandbox) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("sa-sbx-test-")
        .tempdir()
        .unwrap();
    if let Some((u, g)) = sb.run_as() {
        prepare_workspace_owner(d.path(), u, g).unwrap();
    }
    d
}

fn short(wall_ms: u64) -> Limits {
    Limits {
        wall: Duration::from_millis(wall_ms),
        ..Limits::default()
    }
}

/// How a test command starts: a cold bwrap sandbox, one prewarmed for
/// it ([`Sandbox::prewarm`]), or the namespace-free landlock tier (always
/// cold). Every containment property must hold all three ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Cold,
    Warm,
    Landlock,
}

async fn run(sb: &Sandbox, start: Start, req: ExecRequest) -> ExecOutput {
    match start {
        Start::Cold | Start::Landlock => sb.run(req).await.unwrap(),
        Start::Warm => {
            // A spawn can fail under a loaded host (EAGAIN): the env then
            // runs cold; here a few tries, so the warm path is what runs.
            let mut warm = sb.prewarm(&req);
            for _ in 0..5 {
                if warm.is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                warm = sb.prewarm(&req);
            }
            let warm = warm.expect("bwrap mode prewarms");
            let o = sb.run_warm(Some(warm), req).await.unwrap();
            assert!(o.warm, "the prewarmed sandbox ran it: {o:?}");
            o
        }
    }
}

async fn sh(sb: &Sandbox, start: Start, ws: &Path, cmd: &str) -> ExecOutput {
    let mut req = ExecRequest::bash(ws, cmd);
    req.limits = Some(short(20_000));
    run(sb, start, req).await
}

/// Each containment test, once per [`Start`].
macro_rules! both_starts {
    ($($name:ident),* $(,)?) => {
        mod cold {
            $(#[tokio::test] async fn $name() { super::$name(super::Start::Cold).await })*
        }
        mod warm {
            $(#[tokio::test] async fn $name() { super::$name(super::Start::Warm).await })*
        }
        mod landlock {
            $(#[tokio::test] async fn $name() { super::$name(super::Start::Landlock).await })*
        }
    };
}

both_starts!(
    no_network,
    filesystem_confined,
    private_tmp_per_call,
    env_is_allowlisted,
    no_inherited_fds,
    no_privileges,
    timeout_kills_everything,
    background_children_die_at_exit,
    fork_bomb_bounded,
    file_size_limited,
    output_flood_capped,
    git_and_python_work,
    exit_codes_pass_through,
    disk_bounded,
    inodes_bounded,
    memory_bounded,
    processes_bounded,
    unlinked_files_bounded,
    memfd_memory_bounded,
    sysv_ipc_never_outlives,
);

/// A command over a watchdog bound is stopped there, with the bound named
/// in `bound` and stderr, and the sandbox reported killed.
fn assert_stopped_at(o: &ExecOutput, bound: Bound) {
    assert_eq!(o.bound, Some(bound), "{o:?}");
    assert!(!o.timed_out, "{o:?}");
    assert_eq!(o.exit_code, None, "{o:?}");
    assert!(
        o.stderr
            .contains(&format!("stopped at the {} bound", bound.name())),
        "{o:?}"
    );
}

/// Small bounds, so the attacks of issue 16 cross them quickly.
fn bounded(wall_ms: u64) -> Limits {
    Limits {
        disk_bytes: 64 << 20,
        inodes: 2_000,
        mem_total_bytes: 512 << 20,
        procs_total: 40,
        ..short(wall_ms)
    }
}

async fn disk_bounded(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    // Many files each under RLIMIT_FSIZE: only the total crosses a bound.
    let mut req = ExecRequest::bash(
        ws.path(),
        "for i in $(seq 200); do head -c 8000000 /dev/zero > big$i || exit 9; done; echo done",
    );
    req.limits = Some(bounded(30_000));
    let o = run(&sb, start, req).await;
    assert_stopped_at(&o, Bound::Disk);
    let used = watchdog::disk_usage(&[ws.path().to_path_buf()], u64::MAX, u64::MAX);
    // Stopped long before the 1.6 GB asked: the overshoot is what the
    // page cache takes in one (on a loaded host, late) tick.
    assert!(used.bytes < 800 << 20, "{used:?}");
}

async fn inodes_bounded(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let mut req = ExecRequest::bash(
        ws.path(),
        "mkdir d && cd d && for i in $(seq 200000); do : > f$i; done; echo done",
    );
    req.limits = Some(bounded(60_000));
    let o = run(&sb, start, req).await;
    assert_stopped_at(&o, Bound::Inodes);
    let used = watchdog::disk_usage(&[ws.path().to_path_buf()], u64::MAX, u64::MAX);
    assert!(used.entries < 50_000, "{used:?}");
}

async fn memory_bounded(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    // Six processes of 200 MiB each: every one under RLIMIT_AS, together
    // over the 512 MiB bound.
    let mut req = ExecRequest::bash(
        ws.path(),
        "for i in 1 2 3 4 5 6; do python3 -c 'import time; b = bytearray(200 << 20); time.sleep(60)' & done; wait",
    );
    req.limits = Some(bounded(30_000));
    let o = run(&sb, start, req).await;
    assert_stopped_at(&o, Bound::Memory);
    assert!(o.duration < Duration::from_secs(20), "{o:?}");
}

async fn processes_bounded(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let mut req = ExecRequest::bash(ws.path(), "for i in $(seq 100); do sleep 30 & done; wait");
    let limits = Limits {
        nproc: 1000,
        ..bounded(30_000)
    };
    req.limits = Some(limits);
    let o = run(&sb, start, req).await;
    assert_stopped_at(&o, Bound::Processes);
}

/// Host pids whose command line contains `token`.
fn host_procs(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(token) && !cmd.contains("bwrap") && !cmd.contains("bash -lc") {
                found.push(format!("{name}: {cmd}"));
            }
        }
    }
    found
}

/// SIGKILLs each process [`host_procs`] listed ("PID: cmdline"): a
/// test's cleanup of what it found, before it asserts there was none.
fn kill_listed(found: &[String]) {
    for s in found {
        if let Some(pid) = s.split(':').next().and_then(|p| p.parse().ok()) {
            sys::kill(pid);
        }
    }
}

#[tokio::test]
async fn probe_reports_version() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let info = sb.info();
    assert!(info.available);
    assert!(info.detail.starts_with("bubblewrap"), "{}", info.detail);
}

async fn no_network(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    // A host listener on loopback must not be reachable: the sandbox has
    // its own network namespace with only `lo`.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Under landlock, socket(2) itself is refused: counted as refused.
    let cmd = format!(
        "python3 - <<'PY'\nimport socket\nfor addr in [('127.0.0.1', {port}), ('1.1.1.1', 80)]:\n    try:\n        s = socket.socket(); s.settimeout(2)\n        s.connect(addr); print('CONNECTED', addr)\n    except OSError as e:\n        print('refused', addr, e.errno)\nPY\nls /sys/class/net 2>/dev/null || cat /proc/net/dev"
    );
    let o = sh(&sb, start, ws.path(), &cmd).await;
    assert!(!o.stdout.contains("CONNECTED"), "{o:?}");
    assert_eq!(o.stdout.matches("refused").count(), 2, "{o:?}");
    assert!(!o.stdout.contains("eth"), "only lo expected: {}", o.stdout);
}

async fn filesystem_confined(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let marker = tempfile::Builder::new()
        .prefix("sa-host-marker-")
        .tempfile()
        .unwrap();
    // Reads, not existence: the landlock tier refuses access to host
    // paths without hiding them (there is no mount namespace).
    let cmd = format!(
        "touch /usr/evil 2>&1; echo usr=$?; cat {m} >/dev/null 2>&1 && echo HOST_TMP_VISIBLE; \
         ls /root >/dev/null 2>&1 && echo ROOT_VISIBLE; cat /etc/passwd >/dev/null 2>&1 && echo ETC_VISIBLE; \
         cat /work/main/Cargo.toml >/dev/null 2>&1 && echo WORK_VISIBLE; \
         cat /proc/{me}/cmdline >/dev/null 2>&1 && echo HOST_PROC_VISIBLE; \
         touch {venv}/evil 2>&1; echo venv=$?; \
         echo hello > out.txt && echo ws=ok; pwd",
        m = marker.path().display(),
        venv = venv().display(),
        me = std::process::id(),
    );
    let o = sh(&sb, start, ws.path(), &cmd).await;
    assert!(
        o.stdout.contains("Read-only file system") || o.stdout.contains("Permission denied"),
        "{o:?}"
    );
    assert!(
        o.stdout.contains("usr=1") && o.stdout.contains("venv=1"),
        "{o:?}"
    );
    for bad in [
        "HOST_TMP_VISIBLE",
        "ROOT_VISIBLE",
        "ETC_VISIBLE",
        "WORK_VISIBLE",
        "HOST_PROC_VISIBLE",
    ] {
        assert!(!o.stdout.contains(bad), "{bad}: {o:?}");
    }
    let inside = sb.path_inside(ws.path(), Path::new(WORKSPACE_MOUNT));
    assert!(
        o.stdout.contains("ws=ok") && o.stdout.contains(&format!("{}\n", inside.display())),
        "{o:?}"
    );
    let out = ws.path().join("out.txt");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "hello\n");
    if sb.run_as().is_some() {
        let uid = std::fs::metadata(&out).unwrap().uid();
        assert!(
            crate::sandbox::uid_pool().contains(&uid),
            "created by a per-command uid, not {uid}"
        );
    }
}

async fn private_tmp_per_call(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let o = sh(
        &sb,
        start,
        ws.path(),
        "echo x > ${TMPDIR:-/tmp}/persist && echo x > ~/.bashrc && echo wrote",
    )
    .await;
    assert!(o.stdout.contains("wrote"), "{o:?}");
    let o = sh(
        &sb,
        start,
        ws.path(),
        "ls -A ${TMPDIR:-/tmp} ~; test -e ${TMPDIR:-/tmp}/persist && echo LEAKED",
    )
    .await;
    assert!(
        !o.stdout.contains("LEAKED") && !o.stdout.contains("persist"),
        "{o:?}"
    );
    assert!(!o.stdout.contains(".bashrc"), "{o:?}");
}

async fn env_is_allowlisted(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let o = sh(&sb, start, ws.path(), "env").await;
    let allowed: BTreeSet<String> = base_env(sb.config())
        .into_iter()
        .map(|(k, _)| k)
        .chain(["HOME", "TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"].map(String::from))
        .collect();
    let seen: BTreeSet<String> = o
        .stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k.to_string())
        .collect();
    let extra: Vec<_> = seen.difference(&allowed).collect();
    assert!(
        extra.is_empty(),
        "unexpected env vars inside: {extra:?}\n{}",
        o.stdout
    );
    // Whatever the host has (cargo sets CARGO_*), none of it leaks.
    for (k, _) in std::env::vars() {
        if !allowed.contains(&k) {
            assert!(!seen.contains(&k), "host var {k} leaked");
        }
    }
    match sb.tier() {
        Tier::Bwrap => assert!(o.stdout.contains("HOME=/tmp/home"), "{}", o.stdout),
        // A scratch directory of the command's own, removed after it.
        _ => assert!(
            o.stdout
                .lines()
                .any(|l| l.starts_with("HOME=/") && l.ends_with("/home"))
                && o.stdout.contains("TMPDIR=/"),
            "{}",
            o.stdout
        ),
    }
    assert!(
        o.stdout
            .contains(&format!("PATH={}/bin:", venv().display())),
        "{}",
        o.stdout
    );
}

async fn no_inherited_fds(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    // A host fd without CLOEXEC, as a careless dependency would leave it.
    let fd = sys::open_inheritable(Path::new("/etc/hostname")).unwrap();
    // fstat every fd number: needs no /proc (the landlock tier has none).
    let o = sh(
        &sb,
        start,
        ws.path(),
        "python3 -c 'import os\nfor fd in range(4096):\n    try: os.fstat(fd); print(fd)\n    except OSError: pass'",
    )
    .await;
    let fds: BTreeSet<i32> = o
        .stdout
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    assert!(
        fds.is_subset(&BTreeSet::from([0, 1, 2])) && fds.contains(&1),
        "fds inside: {fds:?} (leaked {fd}?)"
    );
    let _ = std::fs::File::from(unsafe_free_owned(fd));
}

/// Takes ownership of a raw fd so the test closes it.
fn unsafe_free_owned(fd: i32) -> OwnedFd {
    // The helper lives in `sys` so this module needs no unsafe.
    sys::own_fd(fd)
}

async fn no_privileges(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let o = sh(
        &sb,
        start,
        ws.path(),
        // capget(2) and prctl(2) directly: the landlock tier has no /proc.
        "python3 -c 'import ctypes\nc = ctypes.CDLL(None)\nh = (ctypes.c_uint32 * 2)(0x20080522, 0)\nd = (ctypes.c_uint32 * 6)()\n\
assert c.syscall(125, h, d) == 0\nprint(\"CapEff:\\t%016x\" % (d[0] | d[3] << 32))\n\
print(\"CapPrm:\\t%016x\" % (d[1] | d[4] << 32))\nprint(\"NoNewPrivs:\\t%d\" % c.prctl(39, 0, 0, 0, 0))'; \
         id -u; unshare -U true 2>/dev/null && echo USERNS_OK; \
         cat /dev/stdin; echo stdin_done",
    )
    .await;
    assert!(o.stdout.contains("CapEff:\t0000000000000000"), "{o:?}");
    assert!(o.stdout.contains("CapPrm:\t0000000000000000"), "{o:?}");
    assert!(o.stdout.contains("NoNewPrivs:\t1"), "{o:?}");
    assert!(!o.stdout.contains("USERNS_OK"), "{o:?}");
    assert!(
        o.stdout.contains("stdin_done"),
        "stdin must be /dev/null: {o:?}"
    );
    let uid: u32 = o
        .stdout
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap();
    assert_ne!(uid, 0);
}

async fn timeout_kills_everything(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let token = format!("1013.25{}", start as u8);
    let mut req = ExecRequest::bash(
        ws.path(),
        format!(
            "setsid sleep {token} & (sleep {token} &) ; nohup sleep {token} >/dev/null 2>&1 & disown; sleep {token}"
        ),
    );
    req.limits = Some(short(800));
    let o = run(&sb, start, req).await;
    assert!(o.timed_out, "{o:?}");
    assert!(o.duration < Duration::from_secs(5), "{o:?}");
    assert_eq!(o.exit_code, None);
    assert_eq!(o.signal, Some(libc::SIGKILL));
    let left = host_procs(&format!("sleep {token}"));
    assert!(left.is_empty(), "survivors: {left:?}");
}

async fn background_children_die_at_exit(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let token = format!("1017.5{}", start as u8);
    let o = sh(
        &sb,
        start,
        ws.path(),
        &format!("setsid sleep {token} & nohup sleep {token} & disown; echo started"),
    )
    .await;
    assert!(!o.timed_out && o.stdout.contains("started"), "{o:?}");
    assert!(o.duration < Duration::from_secs(5), "{o:?}");
    let left = host_procs(&format!("sleep {token}"));
    assert!(left.is_empty(), "survivors: {left:?}");
}

async fn fork_bomb_bounded(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let mut req = ExecRequest::bash(
        ws.path(),
        "for i in $(seq 300); do sleep 2 & done 2>&1 | head -c 300; wait; echo end",
    );
    req.limits = Some(Limits {
        nproc: 64,
        ..short(10_000)
    });
    let o = run(&sb, start, req).await;
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(
        all.contains("Resource temporarily unavailable") || all.contains("fork"),
        "{o:?}"
    );
}

async fn file_size_limited(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let mut req = ExecRequest::bash(ws.path(), "head -c 200000000 /dev/zero > big; echo rc=$?");
    req.limits = Some(Limits {
        fsize_bytes: 10 << 20,
        ..short(20_000)
    });
    let o = run(&sb, start, req).await;
    assert!(!o.stdout.contains("rc=0"), "{o:?}");
    assert_eq!(
        std::fs::metadata(ws.path().join("big")).unwrap().len(),
        10 << 20
    );
}

async fn output_flood_capped(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let o = sh(
        &sb,
        start,
        ws.path(),
        "yes | head -c 50000000; echo tail-marker >&2",
    )
    .await;
    let cap = Limits::default().output_cap_bytes;
    assert_eq!(
        o.stdout_dropped,
        50_000_000 - cap as u64,
        "{}",
        o.stdout.len()
    );
    assert!(o.stdout.len() < cap + 100);
    assert!(o.stdout.contains("bytes omitted"));
    assert!(o.stdout.starts_with("y\ny\n") && o.stdout.ends_with("y\n"));
    assert_eq!(o.stderr, "tail-marker\n");
    assert_eq!(o.stderr_dropped, 0);
    assert_eq!(o.exit_code, Some(0));
}

async fn git_and_python_work(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let o = sh(
        &sb,
        start,
        ws.path(),
        "git init -q -b main && echo a > a.txt && git add a.txt && git commit -qm first && git log --format=%s%x20%an; \
         python3 -c 'print(6*7)'; python -c 'import pytest; print(\"pytest\", pytest.__version__)'; awk 'BEGIN{print \"awk-ok\"}'; \
         python3 -c 'import mimetypes; mimetypes.init(); print(\"mime\", mimetypes.guess_type(\"a.json\")[0])'",
    )
    .await;
    assert!(o.stdout.contains("first Agent"), "{o:?}");
    assert!(o.stdout.contains("42\n"), "{o:?}");
    assert!(o.stdout.contains("pytest "), "{o:?}");
    assert!(o.stdout.contains("awk-ok"), "{o:?}");
    // The standard library reads public system tables when they exist
    // (landlock cannot hide a host file; an unreadable one raised here).
    assert!(o.stdout.contains("mime application/json"), "{o:?}");
    assert_eq!(o.exit_code, Some(0), "{o:?}");
}

async fn exit_codes_pass_through(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let o = sh(&sb, start, ws.path(), "exit 7").await;
    assert_eq!((o.exit_code, o.signal, o.timed_out), (Some(7), None, false));
    let o = sh(&sb, start, ws.path(), "kill -9 $$").await;
    assert_eq!(o.exit_code, Some(128 + 9), "{o:?}");
}

#[tokio::test]
async fn fallback_runs_uncontained_but_bounded() {
    let sb = Sandbox::fallback(SandboxConfig::with_venv(venv()), "test");
    assert!(!sb.info().available);
    assert!(sb.info().detail.contains("test"));
    let ws = workspace(&sb);
    let o = sh(&sb, Start::Cold, ws.path(), "echo $HOME; pwd; env | wc -l").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert!(o.stdout.contains(&ws.path().display().to_string()), "{o:?}");
    let mut req = ExecRequest::bash(ws.path(), "sleep 1021.5");
    req.limits = Some(short(500));
    let o = sb.run(req).await.unwrap();
    assert!(o.timed_out);
    assert!(host_procs("sleep 1021.5").is_empty());
}

#[test]
fn capture_keeps_head_and_tail() {
    let mut c = Capture::default();
    for chunk in (0..100u8).collect::<Vec<_>>().chunks(7) {
        c.push(chunk, 10);
    }
    c.finish(10);
    assert_eq!(c.head, (0..10).collect::<Vec<u8>>());
    assert_eq!(c.tail, (90..100).collect::<Vec<u8>>());
    assert_eq!(c.dropped, 80);
    let mut small = Capture::default();
    small.push(b"abc", 10);
    small.finish(10);
    assert_eq!(small.into_string(), "abc");
}

/// Concurrent commands run as different uids of the pool, so one command's
/// fork bomb (RLIMIT_NPROC is per uid) cannot starve another's forks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_commands_get_their_own_uid() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    if sb.run_as().is_none() {
        return;
    }
    let (a, b) = (workspace(&sb), workspace(&sb));
    let bomb_req = ExecRequest {
        limits: Some(Limits {
            nproc: 64,
            ..short(4_000)
        }),
        ..ExecRequest::bash(a.path(), "id -u; b() { b & b & sleep 2; }; b 2>/dev/null")
    };
    let bomb = tokio::spawn({
        let sb = sb.clone();
        async move { sb.run(bomb_req).await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    let mut req = ExecRequest::bash(
        b.path(),
        "id -u; for i in $(seq 20); do (true); done; echo forked",
    );
    req.limits = Some(Limits {
        nproc: 64,
        ..short(20_000)
    });
    let ok = sb.run(req).await.unwrap();
    let bomb = bomb.await.unwrap();
    assert!(ok.stdout.contains("forked"), "starved by the bomb: {ok:?}");
    let uid = |o: &ExecOutput| o.stdout.lines().next().unwrap_or("").trim().to_string();
    assert_ne!(uid(&ok), uid(&bomb), "{ok:?} {bomb:?}");
    for o in [&ok, &bomb] {
        let u: u32 = uid(o).parse().unwrap();
        assert!(uid_pool().contains(&u), "{o:?}");
    }
}

/// `owned_by` skips the `lchown` walk only when it names exactly the uid
/// the command gets; without the hint the walk hands every entry over.
/// Root only (otherwise nothing is chowned and the hint is moot).
#[tokio::test]
async fn owner_hint_skips_only_a_matching_walk() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    // Not root: nothing is chowned and the hint is moot.
    if !testkit::root_user() {
        return;
    }
    let ws = workspace(&sb);
    // First command: the workspace is handed to a pool uid U.
    let o = sh(&sb, Start::Cold, ws.path(), "true").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let root_owner = |p: &Path| {
        let m = std::fs::symlink_metadata(p).unwrap();
        (m.uid(), m.gid())
    };
    let u = root_owner(ws.path());
    assert!(uid_pool().contains(&u.0), "{u:?}");
    // A root-owned file appears (as the host could create one).
    let planted = ws.path().join("root-owned.txt");
    std::fs::write(&planted, "x").unwrap();
    assert_eq!(std::fs::symlink_metadata(&planted).unwrap().uid(), 0);
    // A hint naming U: if the command got U again (the preferred uid; a
    // concurrent test may hold it), the walk was skipped and the file is
    // still root's; otherwise the walk ran and handed it over.
    let mut req = ExecRequest::bash(ws.path(), "true");
    req.owned_by = Some(u);
    let o = sb.run(req).await.unwrap();
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let file_uid = std::fs::symlink_metadata(&planted).unwrap().uid();
    if root_owner(ws.path()) == u {
        assert_eq!(
            o.owner_walk,
            Duration::ZERO,
            "a matching hint must skip the walk"
        );
        assert_eq!(file_uid, 0, "skipped walk left the file alone");
    } else {
        assert_eq!(file_uid, root_owner(ws.path()).0);
    }
    // A hint naming a uid the command does not get never skips the walk.
    let mut req = ExecRequest::bash(ws.path(), "echo hi > root-owned.txt");
    req.owned_by = Some((DEFAULT_UID, DEFAULT_GID));
    let o = sb.run(req).await.unwrap();
    assert_eq!(o.exit_code, Some(0), "write after the walk: {o:?}");
    assert_eq!(
        std::fs::symlink_metadata(&planted).unwrap().uid(),
        root_owner(ws.path()).0
    );
}

/// What a command can observe of its own start: a warm sandbox must be
/// indistinguishable from a cold one, down to the exact command string
/// (trailing newlines, the sentinel's own letters at the end).
#[tokio::test]
async fn warm_start_is_indistinguishable() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ws = workspace(&sb);
    let probe = "env | sort; echo \"$0|$$|$PPID|$-|$SHLVL\"; ls /proc/self/fd; ulimit -a; umask; id; pwd; \
                 ps -o ppid=,comm= -e; trap -p; echo xy";
    let cold = sh(&sb, Start::Cold, ws.path(), probe).await;
    let warm = sh(&sb, Start::Warm, ws.path(), probe).await;
    assert_eq!(cold.exit_code, Some(0), "{cold:?}");
    // The per-command uid may differ (a concurrent test may hold the
    // preferred one); nothing else may.
    let strip_uid = |o: &ExecOutput| {
        o.stdout
            .lines()
            .filter(|l| !l.starts_with("uid="))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip_uid(&cold), strip_uid(&warm));
    assert_eq!(
        (cold.stderr.as_str(), cold.exit_code),
        (warm.stderr.as_str(), warm.exit_code)
    );
    for cmd in [
        "printf '%s' \"$BASH_EXECUTION_STRING\" | wc -c\n\n\n",
        "printf '%s' \"$BASH_EXECUTION_STRING\" | wc -c # ends in the sentinel x",
        "printf '%s' \"$BASH_EXECUTION_STRING\" | wc -c # xy",
        "printf '%s' \"$BASH_EXECUTION_STRING\" | wc -c # 'quotes' \"and\" $(not run) \\",
    ] {
        let o = sh(&sb, Start::Warm, ws.path(), cmd).await;
        assert_eq!(o.stdout.trim(), cmd.len().to_string(), "{cmd:?}: {o:?}");
    }
}

/// A request's stdin reaches its command the same way cold (every tier)
/// and staged: the bytes, then end of file. A staged command runs before
/// delivery and blocks at its first read; a warm (waiting) sandbox takes
/// no stdin and runs such a request cold; oversized stdin is refused.
#[tokio::test]
async fn stdin_reaches_cold_and_staged_commands() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ll = sandbox(Start::Landlock).expect("the landlock tier");
    let ws = workspace(&sb);
    // Writes a marker before reading, so a staged start is visible.
    let cmd = "echo started > started; cat; echo; ls /proc/self/fd | wc -l";
    let req = |stdin: Option<&[u8]>| {
        let mut r = ExecRequest::bash(ws.path(), cmd);
        r.limits = Some(short(20_000));
        r.stdin = stdin.map(<[u8]>::to_vec);
        r
    };
    let payload = b"key-0123456789abcdef\n\x00binary\xff";
    let cold = sb.run(req(Some(payload))).await.unwrap();
    let want = cold.stdout.clone();
    assert!(want.starts_with("key-0123456789abcdef"), "{cold:?}");
    let lws = workspace(&ll);
    let mut lreq = req(Some(payload));
    lreq.workspace = lws.path().to_path_buf();
    let landlock = ll.run(lreq).await.unwrap();
    assert!(
        landlock.stdout.starts_with("key-0123456789abcdef"),
        "{landlock:?}"
    );
    // No stdin: /dev/null, as before.
    let none = sb.run(req(None)).await.unwrap();
    assert!(none.stdout.starts_with('\n'), "{none:?}");

    let _ = std::fs::remove_file(ws.path().join("started"));
    let staged = sb.prewarm_staged(&req(None)).expect("a staged sandbox");
    let t = Instant::now();
    while !ws.path().join("started").exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the staged command never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let o = sb.run_warm(Some(staged), req(Some(payload))).await.unwrap();
    assert!(o.warm, "{o:?}");
    assert_eq!(o.stdout, want);

    // The waiting script has no stdin to give: such a request runs cold.
    let warm = sb.prewarm(&req(None));
    let o = sb.run_warm(warm, req(Some(payload))).await.unwrap();
    assert!(!o.warm && o.stdout == want, "{o:?}");

    let big = vec![b'x'; MAX_STDIN_BYTES + 1];
    let e = sb.run(req(Some(&big))).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
}

/// Host processes whose command line mentions `token` (bwrap included).
pub(crate) fn host_procs_any(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(token) {
                found.push(cmd);
            }
        }
    }
    found
}

/// Waits (up to `within`) until no host process mentions `token`; returns
/// those still there.
async fn procs_left(token: &str, within: Duration) -> Vec<String> {
    let t = Instant::now();
    while !host_procs_any(token).is_empty() && t.elapsed() < within {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    host_procs_any(token)
}

/// A warm sandbox dropped unused leaves no process behind and ran nothing.
#[tokio::test]
async fn unused_warm_sandbox_dies_and_runs_nothing() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ws = workspace(&sb);
    let token = ws.path().display().to_string();
    let w = sb.prewarm(&ExecRequest::bash(ws.path(), "")).unwrap();
    // Wait until it is up (its bwrap is visible), then drop it.
    let up = Instant::now();
    while host_procs_any(&token).is_empty() && up.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!host_procs_any(&token).is_empty(), "never started");
    drop(w);
    let left = procs_left(&token, Duration::from_secs(10)).await;
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(std::fs::read_dir(ws.path()).unwrap().count(), 0);
}

/// A warm sandbox serves only the request it was built for, and only while
/// alive; otherwise the command runs cold, with the same result.
#[tokio::test]
async fn mismatched_or_dead_warm_sandbox_runs_cold() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ws = workspace(&sb);
    let cmd = "echo \"v=$V\" > out.txt; cat out.txt";
    let mut want = ExecRequest::bash(ws.path(), cmd);
    want.env = vec![("V".into(), "2".into())];
    // Different environment.
    let mut other = want.clone();
    other.env = vec![("V".into(), "1".into())];
    let o = sb.run_warm(sb.prewarm(&other), want.clone()).await.unwrap();
    assert!(!o.warm, "{o:?}");
    assert_eq!(o.stdout, "v=2\n", "{o:?}");
    // Different limits.
    let mut other = want.clone();
    other.limits = Some(short(5_000));
    let o = sb.run_warm(sb.prewarm(&other), want.clone()).await.unwrap();
    assert!(!o.warm && o.stdout == "v=2\n", "{o:?}");
    // Killed before use.
    let mut w = sb.prewarm(&want).unwrap();
    w.tree.kill().await.unwrap();
    let o = sb.run_warm(Some(w), want.clone()).await.unwrap();
    assert!(!o.warm && o.stdout == "v=2\n", "{o:?}");
    // The workspace directory replaced at the same path: the bound one is
    // gone, so the command must not run there.
    let w = sb.prewarm(&want).unwrap();
    let old = ws.path().with_extension("old");
    std::fs::rename(ws.path(), &old).unwrap();
    std::fs::create_dir(ws.path()).unwrap();
    if let Some((u, g)) = sb.run_as() {
        prepare_workspace_owner(ws.path(), u, g).unwrap();
    }
    let o = sb.run_warm(Some(w), want.clone()).await.unwrap();
    assert!(!o.warm && o.stdout == "v=2\n", "{o:?}");
    assert!(ws.path().join("out.txt").exists());
    let _ = std::fs::remove_dir_all(&old);
    // And a matching, live one is used.
    let o = sb.run_warm(sb.prewarm(&want), want).await.unwrap();
    assert!(o.warm && o.stdout == "v=2\n", "{o:?}");
}

/// The wall limit counts from the command's delivery, not from the
/// prewarm: a sandbox that waited longer than the limit still runs its
/// command in full.
#[tokio::test]
async fn warm_wall_limit_counts_from_delivery() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ws = workspace(&sb);
    let mut req = ExecRequest::bash(ws.path(), "sleep 0.2; echo done");
    req.limits = Some(short(2_000));
    let w = sb.prewarm(&req).unwrap();
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let o = sb.run_warm(Some(w), req).await.unwrap();
    assert!(o.warm && !o.timed_out && o.stdout == "done\n", "{o:?}");
}

/// Warm sandboxes dropped at any moment of their start-up leave nothing
/// behind. bwrap's namespace child has no PR_SET_PDEATHSIG until it
/// becomes the namespace's init, and before that it waits on an eventfd
/// for bwrap to release it: a bwrap killed inside that window stranded
/// the child forever, reparented to the host's init (seen under load as
/// an unused warm sandbox outliving its session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_sandbox_dropped_during_start_leaves_nothing() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ws = workspace(&sb);
    let token = ws.path().display().to_string();
    for i in 0..60u64 {
        let w = sb.prewarm(&ExecRequest::bash(ws.path(), "")).unwrap();
        // From at once to 6 ms after the spawn: across bwrap's set-up.
        std::thread::sleep(Duration::from_micros((i * 370) % 6_000));
        drop(w);
    }
    let left = procs_left(&token, Duration::from_secs(15)).await;
    assert!(left.is_empty(), "{} left behind: {left:?}", left.len());
    assert_eq!(std::fs::read_dir(ws.path()).unwrap().count(), 0);
}

/// A command whose caller gives up at any moment of the sandbox's start
/// (a cancelled request) leaves nothing behind either: the tree is killed
/// init first by a reaper, as a timeout would kill it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_command_leaves_nothing() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ws = workspace(&sb);
    let token = ws.path().display().to_string();
    for i in 0..40u64 {
        let req = ExecRequest::bash(ws.path(), "sleep 1000");
        let give_up = Duration::from_micros(200 + (i * 370) % 8_000);
        let r = tokio::time::timeout(give_up, sb.run(req)).await;
        assert!(r.is_err(), "sleep 1000 finished: {r:?}");
    }
    let left = procs_left(&token, Duration::from_secs(15)).await;
    assert!(left.is_empty(), "{} left behind: {left:?}", left.len());
}

/// A runtime shutting down with sandboxes still alive (held by tasks, or
/// already handed to their reaper) drops them without recursing: each
/// drop of a reaper's task would otherwise spawn another, dropped at once
/// by the closing runtime (a stack overflow, seen in the full suite).
#[test]
fn runtime_shutdown_with_live_sandboxes_ends() {
    let Some(sb) = sandbox(Start::Cold) else {
        return;
    };
    let ws = workspace(&sb);
    let token = ws.path().display().to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for i in 0..8 {
            let w = sb.prewarm(&ExecRequest::bash(ws.path(), "")).unwrap();
            if i % 2 == 0 {
                // Held by a task that never ends.
                tokio::spawn(async move {
                    let _w = w;
                    std::future::pending::<()>().await
                });
            } else {
                // Handed to its reaper right before the shutdown.
                drop(w);
            }
        }
        let mut req = ExecRequest::bash(ws.path(), "sleep 1000");
        req.limits = Some(short(60_000));
        let sb = sb.clone();
        tokio::spawn(async move { sb.run(req).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
    });
    drop(rt);
    // Best effort without a runtime: what is left ends with its bwrap.
    let t = Instant::now();
    while !host_procs_any(&token).is_empty() && t.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = host_procs_any(&token);
    assert!(left.is_empty(), "{} left behind: {left:?}", left.len());
}

/// The start-up sweep kills a process of a pool uid that no one leases (a
/// dead server's leftover) and leaves alone one whose uid is leased (a
/// live server's command).
#[test]
fn sweep_kills_only_unleased_pool_processes() {
    if !testkit::root_user() || !testkit::setpriv() {
        return;
    }
    assert!(uid_lock_dir().is_some(), "root, yet no uid lock directory");
    let as_uid = |uid: u32| {
        std::process::Command::new("/usr/bin/setpriv")
            .args([
                "--reuid",
                &uid.to_string(),
                "--regid",
                "65534",
                "--clear-groups",
            ])
            .args(["/usr/bin/sleep", "1000"])
            .stdin(Stdio::null())
            .spawn()
            .unwrap()
    };
    let live = lease_uid(None).expect("a free uid");
    let mut kept = as_uid(live.uid);
    // From the top of the pool, which the rotation of concurrent tests'
    // commands rarely reaches: a uid another test leases meanwhile is
    // (rightly) spared by the sweep, and its process would never die.
    let orphan_uid = {
        let top = UID_POOL_BASE + UID_POOL_SIZE - 1 - std::process::id() % 256;
        let l = lease_uid(Some(top)).expect("a free uid");
        l.uid
    };
    let mut orphan = as_uid(orphan_uid);
    // setpriv has switched uid once its exec of sleep is visible.
    let t = Instant::now();
    while !uids::pool_processes().iter().any(|&(_, u)| u == orphan_uid)
        && t.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(sweep_orphans() >= 1);
    // Bounded: a hang here would stall the whole suite.
    let t = Instant::now();
    let st = loop {
        if let Some(st) = orphan.try_wait().unwrap() {
            break st;
        }
        if t.elapsed() > Duration::from_secs(20) {
            orphan.kill().unwrap();
            kept.kill().unwrap();
            panic!("the sweep did not kill the orphan of uid {orphan_uid}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(st.signal(), Some(libc::SIGKILL), "{st:?}");
    assert!(
        kept.try_wait().unwrap().is_none(),
        "a leased uid's process was killed"
    );
    kept.kill().unwrap();
    kept.wait().unwrap();
    drop(live);
}

/// Disk held through open files that have no name (unlinked, O_TMPFILE)
/// counts toward the disk bound: no walk of the workspace sees it (red
/// team, issue 16).
async fn unlinked_files_bounded(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let mut req = ExecRequest::bash(
        ws.path(),
        "python3 -c 'import os, time\nfs = []\nfor i in range(6):\n    f = open(\"u%d\" % i, \"wb\"); os.unlink(\"u%d\" % i); f.write(b\"x\" * (20 << 20)); f.flush(); fs.append(f)\ntime.sleep(20)'",
    );
    req.limits = Some(bounded(30_000));
    let o = run(&sb, start, req).await;
    assert_stopped_at(&o, Bound::Disk);
}

/// Memory held in memfds written with write(2) (in no process's RSS)
/// counts toward the memory bound.
async fn memfd_memory_bounded(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let mut req = ExecRequest::bash(
        ws.path(),
        "python3 -c 'import os, time\nfds = []\nfor i in range(8):\n    fd = os.memfd_create(\"m\"); os.write(fd, b\"x\" * (100 << 20)); fds.append(fd)\ntime.sleep(20)'",
    );
    req.limits = Some(bounded(30_000));
    let o = run(&sb, start, req).await;
    assert_stopped_at(&o, Bound::Memory);
}

/// A System V shared-memory segment never outlives its command (bwrap: the
/// IPC namespace dies with it; landlock: SysV IPC is refused), so it can
/// neither hold memory past the bound nor carry data to another session.
async fn sysv_ipc_never_outlives(start: Start) {
    let Some(sb) = sandbox(start) else { return };
    let ws = workspace(&sb);
    let key = 0x5a5a_0000 + start as i64 + 1;
    let o = sh(
        &sb,
        start,
        ws.path(),
        &format!(
            "python3 -c 'import ctypes\nc = ctypes.CDLL(None, use_errno=True)\nprint(\"shm\", c.shmget({key}, 1 << 20, 0o1666), ctypes.get_errno())'"
        ),
    )
    .await;
    assert!(o.stdout.contains("shm "), "{o:?}");
    if sb.tier() == Tier::Landlock {
        assert!(o.stdout.contains("shm -1 1\n"), "refused with EPERM: {o:?}");
    }
    let host = std::process::Command::new("/usr/bin/python3")
        .args([
            "-c",
            &format!("import ctypes; print(ctypes.CDLL(None).shmget({key}, 0, 0))"),
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&host.stdout).trim(),
        "-1",
        "a segment outlived the command: {o:?}"
    );
}

/// The landlock tier's supervisor outlives every descendant even once its
/// status reader is gone, as on every killed command (the server stops
/// reading before the reap). Its write of the main process's status used
/// to kill it by SIGPIPE, and what it had not reaped yet went to the
/// host's init, alive: `timeout_kills_everything` failed 3 of 40 runs
/// under CPU load that way.
#[test]
fn supervisor_outlives_its_status_reader() {
    use std::os::fd::AsRawFd;
    let token = format!("1013.7{}", std::process::id());
    let (status_r, status_w) = sys::pipe().unwrap();
    let mut cmd = std::process::Command::new("/usr/bin/bash");
    cmd.args(["-c", &format!("setsid sleep {token} & exec sleep 0.3")])
        .stdin(Stdio::null());
    sys::ChildSetup {
        rlimits: Vec::new(),
        drop_to: None,
        keep_fds: Vec::new(),
        max_fd: sys::max_fd(),
        parent_pid: std::process::id() as libc::pid_t,
        supervise: Some(status_w.as_raw_fd()),
        confine: None,
    }
    .install(&mut cmd);
    let mut supervisor = cmd.spawn().unwrap();
    drop(status_w);
    drop(status_r);
    // The main process exits after 0.3 s and its status is written into
    // a pipe nobody reads; the setsid child goes on.
    std::thread::sleep(Duration::from_millis(1500));
    let ranks = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap_or_default()
    };
    let oom = ranks(supervisor.id());
    let strays_oom: Vec<String> = host_procs(&format!("sleep {token}"))
        .iter()
        .filter_map(|s| s.split(':').next()?.parse().ok())
        .map(ranks)
        .collect();
    let alive = supervisor.try_wait().unwrap();
    // Clean up either way: the tree through the supervisor, strays by name.
    let t = Instant::now();
    let st = loop {
        procs::kill_descendants(supervisor.id() as i32);
        if let Some(st) = supervisor.try_wait().unwrap() {
            break st;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the tree never ended"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let strays = host_procs(&format!("sleep {token}"));
    kill_listed(&strays);
    assert_eq!(alive, None, "the supervisor died before its tree");
    // The command (and what it left) is the OOM killer's first choice,
    // its supervisor keeps the server's rank (see `ChildSetup::apply`).
    assert_eq!(
        oom,
        ranks(std::process::id()),
        "the supervisor's oom_score_adj"
    );
    assert!(
        !strays_oom.is_empty() && strays_oom.iter().all(|v| v.trim() == "1000"),
        "the command's oom_score_adj: {strays_oom:?}"
    );
    assert!(strays.is_empty(), "left to the host's init: {strays:?}");
    assert_eq!(st.code(), Some(0), "the main process's code: {st:?}");
}

/// The landlock-tier supervisor of a running command whose main process
/// is a `sleep {token}` (the parent of the one such process whose
/// grandparent is this test process), once at least `procs` processes
/// mention `sleep {token}`. It runs as root, so a test can kill it.
async fn supervisor_of(token: &str, procs: usize) -> i32 {
    let needle = format!("sleep {token}");
    let me = Some(std::process::id() as i32);
    let t = Instant::now();
    loop {
        let found = host_procs(&needle);
        let main = found
            .iter()
            .filter_map(|s| s.split(':').next()?.parse::<i32>().ok())
            .filter_map(tree::parent_of)
            .find(|&ppid| tree::parent_of(ppid) == me);
        if let (Some(sup), true) = (main, found.len() >= procs) {
            return sup;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "no main process: {found:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whatever kills the landlock tier's supervisor, its orphans (reparented
/// to the host's init, out of the tree) still run as the command's leased
/// uid, and are found and killed by it before the command returns.
#[tokio::test]
async fn a_killed_supervisors_orphans_are_killed_by_uid() {
    if !testkit::root_user() {
        return;
    }
    let Some(sb) = sandbox(Start::Landlock) else {
        return;
    };
    let ws = workspace(&sb);
    let token = format!("1013.8{}", std::process::id());
    let mut req = ExecRequest::bash(
        ws.path(),
        format!("setsid sleep {token} & (sleep {token} &); exec sleep {token}"),
    );
    req.limits = Some(short(30_000));
    let run = tokio::spawn(async move { sb.run(req).await.unwrap() });
    // The supervisor is the parent of the main process (the `exec`ed
    // sleep); it runs as root, so the kill comes from here.
    sys::kill(supervisor_of(&token, 3).await);
    let o = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the command returns once its supervisor is killed")
        .unwrap();
    assert!(!o.timed_out, "{o:?}");
    let left = host_procs(&format!("sleep {token}"));
    kill_listed(&left);
    assert!(left.is_empty(), "survivors: {left:?}");
}

// ---- Review rev32 (independent security review of 6d9ac98): attacks on
// the landlock tier's reap. Tests marked FINDING fail on main as of
// 65bb3ab and demonstrate a real escape.

/// A C program a command can build with the host's gcc (`/usr` is
/// readable and executable, the workspace writable and executable): 8
/// lineages of processes sharing one address space (`clone(CLONE_VM)`,
/// tens of microseconds a hop), each changing pid every hop (the parent
/// exits at once) and re-spawning any lineage whose heartbeat went stale,
/// so a scan of `/proc` followed by a kill of what it listed hits pids
/// that have already made their successors. Once its subreaper is gone (reparented to
/// pid 1) it stops hopping (a non-reaping init would fill RLIMIT_NPROC
/// with its zombies) and hides instead: the leader thread exits and a
/// second thread lives on, so `/proc/PID/status` says `Z (zombie)` and
/// its cmdline is empty. Bounded: it ends after argv[1] seconds or once
/// the file argv[2] exists.
const HOPPER_C: &str = r#"
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define NSTACK 256
#define STK 8192
#define K 8
static char *stacks; static atomic_uint next_stack;
static _Atomic int busy[NSTACK];
static _Atomic long beat[K];
static time_t end_t; static const char *stop; static int hide;
static long now_us(void){ struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1000000L+t.tv_nsec/1000; }
static int done(void){ return time(0) > end_t || access(stop, F_OK)==0; }
/* A free stack slot; its word is set to the child's tid by the kernel and
   cleared when that child exits (CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID). */
static int spawn(int (*fn)(void *), long arg, int flags) {
  for (int tries = 0; tries < NSTACK; tries++) {
    unsigned i = atomic_fetch_add(&next_stack, 1) % NSTACK; int z = 0;
    if (!atomic_compare_exchange_strong(&busy[i], &z, -1)) continue;
    int r = clone(fn, stacks + (size_t)(i + 1) * STK - 64,
                  flags | CLONE_VM | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID,
                  (void *)arg, 0, 0, &busy[i]);
    if (r <= 0) busy[i] = 0;
    return r;
  }
  return -1;
}
static int spin(void *a){ long i=(long)a; while(!done()){ beat[i]=now_us(); struct timespec ts={0,1000000}; nanosleep(&ts,0);} syscall(SYS_exit_group,0); return 0; }
static int hop(void *a) {
  long i = (long)a; unsigned seed = (unsigned)i * 2654435761u;
  for (;;) {
    if (done()) syscall(SYS_exit, 0);
    long t = now_us(); beat[i] = t;
    if (hide && getppid() == 1) {
      if (spawn(spin, i, CLONE_THREAD|CLONE_SIGHAND) > 0) syscall(SYS_exit, 0);
      continue;
    }
    seed = seed*1103515245u + 12345u; long j = (seed>>8) % K; long bj = beat[j];
    if (t - bj > 20000 && atomic_compare_exchange_strong(&beat[j], &bj, t))
      spawn(hop, j, SIGCHLD);
    if (spawn(hop, i, SIGCHLD) > 0) syscall(SYS_exit, 0);
  }
}
int main(int argc, char **argv) {
  if (argc < 4) return 2;
  end_t = time(0) + atoi(argv[1]); stop = argv[2]; hide = argv[3][0] == 'z';
  stacks = mmap(0, (size_t)NSTACK*STK, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  if (stacks == MAP_FAILED) return 3;
  for (long i = 0; i < K; i++) spawn(hop, i, SIGCHLD);
  return 0;
}
"#;

/// Host processes named `comm` that still have a live thread (a zombie
/// leader whose other threads run counts): "pid:state-of-leader".
fn live_by_comm(comm: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(c) = std::fs::read_to_string(e.path().join("comm")) else {
            continue;
        };
        if c.trim_end() != comm {
            continue;
        }
        let Ok(pid) = name.parse() else {
            continue;
        };
        if uids::has_live_thread(pid) {
            let st = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let state = st
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next().map(str::to_string))
                .unwrap_or_default();
            out.push(format!("{name}:{state}"));
        }
    }
    out
}

/// Runs the hopper in the landlock tier as a background child of a
/// command that returns at once; returns the command's output and what
/// of the hopper is alive 1 s after the command returned (then stops
/// it through its stop file).
async fn hopper_run(comm: &str, mode: &str, wall_ms: u64, tail: &str) -> (ExecOutput, Vec<String>) {
    program_run(comm, HOPPER_C, mode, wall_ms, tail).await
}

/// [`hopper_run`] for any program `src` (run as `comm 40 STOP mode`).
async fn program_run(
    comm: &str,
    src: &str,
    mode: &str,
    wall_ms: u64,
    tail: &str,
) -> (ExecOutput, Vec<String>) {
    let sb = sandbox(Start::Landlock).unwrap();
    let ws = workspace(&sb);
    std::fs::write(ws.path().join("h.c"), src).unwrap();
    let stop = ws.path().join("stop");
    let mut req = ExecRequest::bash(
        ws.path(),
        format!(
            "gcc -O2 -pthread -o {comm} h.c || exit 7; setsid ./{comm} 40 {} {mode} & sleep 0.3; {tail}",
            stop.display()
        ),
    );
    req.limits = Some(short(wall_ms));
    let o = sb.run(req).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let alive = live_by_comm(comm);
    std::fs::write(&stop, b"").unwrap();
    let t = Instant::now();
    while !live_by_comm(comm).is_empty() && t.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(live_by_comm(comm).is_empty(), "cleanup failed");
    (o, alive)
}

/// What [`hopper_run`] found alive after the command returned: nothing.
fn assert_none_alive(o: &ExecOutput, alive: &[String]) {
    assert!(
        alive.is_empty(),
        "alive after return ({:?}): {alive:?}",
        o.duration
    );
}

/// Attack tried by review rev32 (it did not succeed): pid-hopping
/// lineages against the reap. `procs::kill_descendants` lists the tree,
/// then kills what it listed; a hopper whose listed pid has already made
/// its successor would never be caught, and at REAP_WAIT (5 s) the
/// supervisor would be SIGKILLed and the hopper, reparented to pid 1,
/// would hide from `uids::kill_uid` (see
/// `finding_rev32_zombie_leader_escapes_the_uid_backstop`). In practice a
/// process spends most of its short life inside `clone`, where a SIGKILL
/// aborts it, and the lineages compete for two cores with the server:
/// the kill rounds ended every lineage within the reap in every run.
#[tokio::test]
async fn rev32_hopping_lineages_die_with_their_command() {
    if !testkit::root_user() {
        return;
    }
    let (o, alive) = hopper_run("hopz_rev32", "z", 20_000, "exit 0").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert_none_alive(&o, &alive);
}

/// The same hopper without hiding: the reap's kill rounds alone.
#[tokio::test]
async fn rev32_plain_hopping_lineages_die_with_their_command() {
    if !testkit::root_user() {
        return;
    }
    let (o, alive) = hopper_run("hopp_rev32", "p", 20_000, "exit 0").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert_none_alive(&o, &alive);
}

/// The hopper, on a command that times out (wall 4 s).
#[tokio::test]
async fn rev32_hopping_lineages_die_with_a_timed_out_command() {
    if !testkit::root_user() {
        return;
    }
    let (o, alive) = hopper_run("hopt_rev32", "z", 4_000, "sleep 30").await;
    assert!(o.timed_out, "{o:?}");
    assert_none_alive(&o, &alive);
}

/// A process whose main thread has exited while a second thread runs on
/// (`pthread_exit` in `main`, ordinary C): `/proc/PID/status` shows the
/// leader's state, `Z (zombie)`, and its cmdline is empty. Ends after
/// argv[1] seconds or once the file argv[2] exists.
const ZOMBIE_LEADER_C: &str = r#"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static time_t end_t; static const char *stop;
static void *spin(void *a) {
  (void)a;
  while (time(0) <= end_t && access(stop, F_OK) != 0) usleep(10000);
  _exit(0);
}
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  end_t = time(0) + atoi(argv[1]); stop = argv[2];
  pthread_t t; pthread_create(&t, 0, spin, 0);
  pthread_exit(0);
}
"#;

/// Waits until `comm` has a live process whose leader has exited (its
/// state `Z`), or 20 s.
async fn wait_live(comm: &str) {
    let t = Instant::now();
    while !live_by_comm(comm).iter().any(|p| p.ends_with(":Z")) {
        assert!(t.elapsed() < Duration::from_secs(20), "{comm} never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// FINDING (rev32): the backstop of 6d9ac98 (`uids::kill_uid` once a
/// supervisor was killed by a signal) skips a live process of the leased
/// uid whose main thread has exited: `uid_of` reads the leader's state
/// `Z` and treats the whole process as a zombie. Same setup as
/// `a_killed_supervisors_orphans_are_killed_by_uid`, with such a process
/// in place of the `setsid sleep`: it survives the command's return and
/// the release of its uid lease.
#[tokio::test]
async fn finding_rev32_zombie_leader_escapes_the_uid_backstop() {
    if !testkit::root_user() {
        return;
    }
    let alive = killed_supervisor_escape("zlb_rev32", ZOMBIE_LEADER_C, "").await;
    assert!(alive.is_empty(), "alive after return: {alive:?}");
}

/// The setup of `finding_rev32_zombie_leader_escapes_the_uid_backstop`
/// for any program `src` (built as `comm`, run as `comm 40 STOP mode`):
/// what of it is alive 500 ms after the command returned.
async fn killed_supervisor_escape(comm: &str, src: &str, mode: &str) -> Vec<String> {
    let sb = sandbox(Start::Landlock).unwrap();
    let ws = workspace(&sb);
    std::fs::write(ws.path().join("z.c"), src).unwrap();
    let stop = ws.path().join("stop");
    let token = format!(
        "1013.9{}{}",
        std::process::id(),
        comm.bytes().map(u32::from).sum::<u32>()
    );
    let mut req = ExecRequest::bash(
        ws.path(),
        format!(
            "gcc -O2 -pthread -o {comm} z.c || exit 7; setsid ./{comm} 40 {} {mode} & exec sleep {token}",
            stop.display()
        ),
    );
    req.limits = Some(short(30_000));
    let run = tokio::spawn(async move { sb.run(req).await.unwrap() });
    if mode.is_empty() {
        wait_live(comm).await;
    } else {
        let t = Instant::now();
        while live_by_comm(comm).is_empty() {
            assert!(t.elapsed() < Duration::from_secs(20), "{comm} never ran");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    sys::kill(supervisor_of(&token, 1).await);
    let o = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the command returns once its supervisor is killed")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let alive = live_by_comm(comm);
    std::fs::write(&stop, b"").unwrap();
    let t = Instant::now();
    while !live_by_comm(comm).is_empty() && t.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(live_by_comm(comm).is_empty(), "cleanup failed");
    eprintln!("{comm}: {o:?}");
    alive
}

/// Review rev32, question 2: pid-hopping lineages (no hiding) against
/// `uids::kill_uid`'s rounds, once the supervisor was killed.
#[tokio::test]
async fn rev32_hopping_lineages_against_the_uid_backstop() {
    if !testkit::root_user() {
        return;
    }
    let alive = killed_supervisor_escape("hpb_rev32", HOPPER_C, "p").await;
    assert!(alive.is_empty(), "alive after return: {alive:?}");
}

/// FINDING (rev32): the same gap in `uids::kill_uid` directly, as the
/// start-up sweep (`sweep_orphans`) uses it: a process of a pool uid whose
/// main thread has exited is neither listed (`pool_processes`) nor killed.
#[tokio::test]
async fn finding_rev32_kill_uid_skips_a_live_zombie_leader() {
    use std::os::unix::process::CommandExt;
    if !testkit::root_user() {
        return;
    }
    let Some(lease) = uids::lease_uid(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("z.c");
    let bin = dir.path().join("zlk_rev32");
    std::fs::write(&src, ZOMBIE_LEADER_C).unwrap();
    let st = std::process::Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let stop = dir.path().join("stop");
    let mut child = std::process::Command::new(&bin)
        .arg("40")
        .arg(&stop)
        .uid(lease.uid)
        .gid(65534)
        .spawn()
        .unwrap();
    wait_live("zlk_rev32").await;
    let killed = uids::kill_uid(lease.uid);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let alive = live_by_comm("zlk_rev32");
    std::fs::write(&stop, b"").unwrap();
    let _ = child.wait();
    assert!(live_by_comm("zlk_rev32").is_empty(), "cleanup failed");
    assert!(
        alive.is_empty(),
        "kill_uid signalled {killed}; alive: {alive:?}"
    );
}

/// Review rev32, question 3: a fork storm of `setsid` children, timed
/// out at 300 ms; nothing of it may be left once the command returned.
/// Run repeatedly under CPU load by the reviewer (see its report).
#[tokio::test]
async fn rev32_timed_out_fork_storm_leaves_nothing() {
    let Some(sb) = sandbox(Start::Landlock) else {
        return;
    };
    let ws = workspace(&sb);
    let token = format!("1013.95{}", std::process::id());
    let mut req = ExecRequest::bash(
        ws.path(),
        format!(
            "for i in 1 2 3 4; do (while :; do setsid sleep {token} & (sleep {token} &); done) & done; sleep {token}"
        ),
    );
    req.limits = Some(short(300));
    let o = sb.run(req).await.unwrap();
    eprintln!("{o:?}");
    let left = host_procs(&format!("sleep {token}"));
    kill_listed(&left);
    assert!(o.timed_out || o.bound.is_some(), "{o:?}");
    assert!(
        left.is_empty(),
        "survivors: {} {left:?} ({o:?})",
        left.len()
    );
}

/// Review rev32, question 1: the command cannot signal its (root-owned)
/// supervisor, alone or through its process group (which it shares: std
/// sets the group before the `pre_exec` hook that forks the supervisor).
#[tokio::test]
async fn rev32_command_cannot_signal_its_supervisor() {
    if !testkit::root_user() {
        return;
    }
    let Some(sb) = sandbox(Start::Landlock) else {
        return;
    };
    let ws = workspace(&sb);
    let o = sh(
        &sb,
        Start::Landlock,
        ws.path(),
        "trap '' HUP TERM PIPE; for s in KILL HUP PIPE TERM STOP; do kill -s $s $PPID 2>/dev/null; \
         echo -n \"$s=$? \"; done; kill -s HUP 0; kill -s TERM 0; kill -s PIPE 0 2>/dev/null; \
         echo group=$?",
    )
    .await;
    eprintln!("{o:?}");
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert!(
        o.stdout.starts_with("KILL=1 HUP=1 PIPE=1 TERM=1 STOP=1"),
        "{o:?}"
    );
}

/// Review rev32: a landlock command cancelled by its caller (the future
/// dropped, so the tree's reaper task kills it; the status pipe's reader
/// is gone with the dropped tree) leaves none of its `setsid` children.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rev32_cancelled_landlock_command_leaves_nothing() {
    let Some(sb) = sandbox(Start::Landlock) else {
        return;
    };
    let ws = workspace(&sb);
    let token = format!("1013.96{}", std::process::id());
    for i in 0..20u64 {
        let mut req = ExecRequest::bash(
            ws.path(),
            format!("setsid sleep {token} & (sleep {token} &); sleep {token}"),
        );
        req.limits = Some(short(60_000));
        let give_up = Duration::from_micros(2_000 + (i * 3_700) % 40_000);
        let r = tokio::time::timeout(give_up, sb.run(req)).await;
        assert!(r.is_err(), "finished: {r:?}");
    }
    let left = procs_left(&format!("sleep {token}"), Duration::from_secs(15)).await;
    for s in &left {
        eprintln!("left: {s}");
    }
    let strays = host_procs(&format!("sleep {token}"));
    kill_listed(&strays);
    assert!(left.is_empty(), "{} left behind: {left:?}", left.len());
}

/// FINDING (rev32, lower severity): a runtime shutting down with a
/// landlock command running (`Tree`'s drop without a runtime: killpg and
/// SIGKILL of the supervisor, no reap, no uid backstop, and the lease is
/// released at once by `finish`). Its `setsid` child goes to pid 1, alive
/// (4 of 4 runs), as the pool uid now free for another command; only the
/// next start-up's `sweep_orphans` would find it.
#[test]
fn finding_rev32_runtime_shutdown_strands_a_landlock_commands_setsid_child() {
    let Some(sb) = sandbox(Start::Landlock) else {
        return;
    };
    let ws = workspace(&sb);
    let token = format!("1013.97{}", std::process::id());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cmd = format!("setsid sleep {token} & (sleep {token} &); sleep {token}");
    rt.block_on(async {
        let mut req = ExecRequest::bash(ws.path(), cmd);
        req.limits = Some(short(60_000));
        let sb = sb.clone();
        tokio::spawn(async move { sb.run(req).await });
        tokio::time::sleep(Duration::from_millis(500)).await;
    });
    drop(rt);
    std::thread::sleep(Duration::from_millis(500));
    let left = host_procs(&format!("sleep {token}"));
    kill_listed(&left);
    assert!(left.is_empty(), "{} left behind: {left:?}", left.len());
}

/// Review rev32, questions 2 and 3: a process whose main thread has
/// exited, left by a command that returns (and one that times out), is
/// killed by the reap (`procs::kill_descendants` lists zombies too, and
/// the supervisor cannot reap such a leader while a thread runs).
#[tokio::test]
async fn rev32_zombie_leader_dies_with_its_command() {
    if !testkit::root_user() {
        return;
    }
    let (o, alive) = program_run("zlr_rev32", ZOMBIE_LEADER_C, "", 20_000, "exit 0").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert!(alive.is_empty(), "alive after return: {alive:?}");
    let (o, alive) = program_run("zlt_rev32", ZOMBIE_LEADER_C, "", 2_000, "sleep 30").await;
    assert!(o.timed_out, "{o:?}");
    assert!(alive.is_empty(), "alive after return: {alive:?}");
}

// ---- Review rev34 (independent security review of 1443045 and cb627a0):
// `sys::kill_all_of_uid` (a forked child takes the pool uid and calls
// `kill(-1, SIGKILL)` twice) as used by `uids::kill_uid`. Tests marked
// FINDING fail on main as of cb627a0.

/// Attacks on the uid killer, run as `comm SECS STOP MODE` (ends after
/// SECS seconds or once the file STOP exists):
/// - `s`: one process whose four threads send SIGSTOP to every other
///   process of its uid, in a loop (`kill(-1, SIGSTOP)`, which spares
///   the caller's own threads): the uid killer is such a
///   process from its `setresuid` on, and a stopped child is never
///   reported to a `waitpid` without `WUNTRACED`.
/// - `k`: once orphaned (its parent is pid 1) or at once with `K`, a
///   lineage that SIGKILLs every other process of its uid
///   (`kill(-1, SIGKILL)`, which reaches the uid killer between its
///   `setresuid` and its own walk) and changes pid each generation (fork,
///   the parent exits), so the `/proc` rounds that follow a failed killer
///   chase it.
/// - `m`: processes in states a kill could skip: a stopped one (SIGSTOP),
///   a `vfork` parent waiting on its child, a zombie leader with a live
///   thread, one that blocks and ignores every signal in its own session,
///   and one that tries to change its uid (`setresuid` to root and to the
///   next pool uid; argv[2] + ".uid" is written if any succeeds).
const UID_KILLER_ATTACK_C: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static time_t end_t; static const char *stop;
static int done(void){ return time(0) > end_t || access(stop, F_OK)==0; }
static void nap(void){ struct timespec ts={0,2000000}; nanosleep(&ts,0); }
static void *spin(void *a){ (void)a; while(!done()) nap(); _exit(0); }
static void *stopper(void *a){
  (void)a;
  for (unsigned long n = 0;; n++) { kill(-1, SIGSTOP); if ((n & 1023) == 0 && done()) _exit(0); }
}
int main(int argc, char **argv) {
  if (argc < 4) return 2;
  end_t = time(0) + atoi(argv[1]); stop = argv[2]; char mode = argv[3][0];
  if (mode == 's') {
    pthread_t t; for (int i = 0; i < 3; i++) pthread_create(&t, 0, stopper, 0);
    stopper(0);
  }
  if (mode == 'k' || mode == 'K') {
    while (mode == 'k' && getppid() != 1) { if (done()) _exit(0); nap(); }
    for (unsigned long n = 0;; n++) {
      kill(-1, SIGKILL);
      if ((n & 63) == 0 && done()) _exit(0);
      if ((n & 7) == 0) { pid_t p = fork(); if (p > 0) _exit(0); }
    }
  }
  if (mode == 'm') {
    if (fork() == 0) { for (;;) { raise(SIGSTOP); if (done()) _exit(0); } }
    if (fork() == 0) {
      pid_t p = vfork();
      if (p == 0) { while (!done()) nap(); _exit(0); }
      while (!done()) nap(); _exit(0);
    }
    if (fork() == 0) { pthread_t t; pthread_create(&t, 0, spin, 0); pthread_exit(0); }
    if (fork() == 0) {
      setsid(); sigset_t all; sigfillset(&all); sigprocmask(SIG_BLOCK, &all, 0);
      for (int s = 1; s < 65; s++) signal(s, SIG_IGN);
      while (!done()) nap(); _exit(0);
    }
    if (fork() == 0) {
      uid_t u = getuid();
      int changed = syscall(SYS_setresuid, 0, 0, 0) == 0 || syscall(SYS_setresuid, u + 1, u + 1, u + 1) == 0
        || syscall(SYS_setresuid, -1, u + 1, -1) == 0 || syscall(SYS_setresuid, -1, -1, u + 1) == 0
        || syscall(SYS_setreuid, u + 1, -1) == 0;
      if (changed) { char p[4096]; snprintf(p, sizeof p, "%s.uid", stop); int fd = open(p, O_WRONLY|O_CREAT, 0666); if (fd >= 0) close(fd); }
      while (!done()) nap(); _exit(0);
    }
    while (!done()) nap();
    return 0;
  }
  return 2;
}
"#;

/// Builds `src` as `name` in a fresh directory any uid can read and run.
fn build_c(src: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let src_path = dir.path().join("a.c");
    let bin = dir.path().join(name);
    std::fs::write(&src_path, src).unwrap();
    let st = std::process::Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src_path)
        .status()
        .unwrap();
    assert!(st.success());
    (dir, bin)
}

/// SIGKILLs every process of `uid` (a test's cleanup), in rounds.
fn kill_all_as_root(uid: u32) {
    for _ in 0..50 {
        let pids = uids::processes_of(uid);
        if pids.is_empty() {
            return;
        }
        for p in pids {
            sys::kill(p);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How often [`uids::kill_uid`] did not return within 3 s, and how often
/// the attacker was alive then, over `runs` runs of `comm` (built from
/// [`UID_KILLER_ATTACK_C`]) started directly as a leased pool uid with
/// `mode`, without Landlock: what a command's process can do on a kernel
/// whose Landlock has no signal scoping (ABI < 6, Linux < 6.12), where a
/// landlocked process may signal any process of its uid. `kill_uid` is
/// called as `sweep_orphans` and a killed supervisor's reap call it.
fn direct_attack_on_kill_uid(comm: &str, mode: &str, runs: usize) -> (usize, usize) {
    use std::os::unix::process::CommandExt;
    let (dir, bin) = build_c(UID_KILLER_ATTACK_C, comm);
    let (mut hung, mut survived) = (0, 0);
    for i in 0..runs {
        let lease = uids::lease_uid(None).expect("a pool uid");
        let uid = lease.uid;
        let stop = dir.path().join(format!("stop{i}"));
        let mut child = std::process::Command::new(&bin)
            .arg("40")
            .arg(&stop)
            .arg(mode)
            .uid(uid)
            .gid(65534)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let h = std::thread::spawn(move || uids::kill_uid(uid));
        let t = Instant::now();
        while !h.is_finished() && t.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let finished = h.is_finished();
        std::thread::sleep(Duration::from_millis(200));
        let alive = live_by_comm(comm);
        let stopped: Vec<String> = uids::pool_processes()
            .into_iter()
            .filter(|&(_, u)| u == uid)
            .map(|(p, _)| {
                let st = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                st.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
            })
            .collect();
        eprintln!(
            "{comm} run {i}: kill_uid returned: {finished}; attacker alive: {alive:?}; uid {uid}'s processes: {stopped:?}"
        );
        hung += usize::from(!finished);
        survived += usize::from(!alive.is_empty());
        std::fs::write(&stop, b"").unwrap();
        kill_all_as_root(uid);
        let _ = h.join();
        let _ = child.wait();
        assert!(live_by_comm(comm).is_empty(), "cleanup failed");
        drop(lease);
    }
    (hung, survived)
}

/// FINDING (rev34): a process of the pool uid that SIGSTOPs every other
/// process of its uid in a loop stops the uid killer (`kill_all_of_uid`'s
/// child is a process of that uid from its `setresuid` on), and the
/// killer's parent waits for it with `waitpid(pid, 0)`, which never
/// reports a stopped child: `kill_uid` never returns. Where it runs at
/// start-up (`sweep_orphans`) the server never starts; after a killed
/// supervisor the command never returns and its lease is never released;
/// in a `Tree`'s drop without a runtime the shutdown hangs. When the stop
/// lands before the killer's first `kill(-1)`, the attacker also lives
/// on. Needs a kernel without Landlock signal scoping (ABI < 6, a
/// supported configuration: the tier is best effort), or the command's
/// processes would be refused the signal (see
/// `rev34_sigstopping_guardian_cannot_stop_the_uid_killer_in_the_sandbox`).
#[test]
fn finding_rev34_sigstop_loop_hangs_kill_uid_without_signal_scoping() {
    if !testkit::root_user() {
        return;
    }
    let (hung, survived) = direct_attack_on_kill_uid("sgk_rev34", "s", 20);
    eprintln!("kill_uid hung in {hung}/20 runs; the attacker survived {survived}/20");
    assert_eq!((hung, survived), (0, 0));
}

/// Review rev34, question 1: a lineage that SIGKILLs every other process
/// of its uid and changes pid, against `kill_uid` without Landlock's
/// signal scoping (as above): the killer can be killed before its walk,
/// and the `/proc` rounds then chase a hopping lineage.
#[test]
fn rev34_killer_killing_lineage_against_kill_uid_without_signal_scoping() {
    if !testkit::root_user() {
        return;
    }
    let (hung, survived) = direct_attack_on_kill_uid("kkl_rev34", "K", 20);
    eprintln!("kill_uid hung in {hung}/20 runs; the lineage survived {survived}/20");
    assert_eq!((hung, survived), (0, 0));
}

/// [`killed_supervisor_escape`], `runs` times: how many runs left some
/// of `comm` alive.
async fn killed_supervisor_escapes(comm: &str, src: &str, mode: &str, runs: usize) -> usize {
    let mut escaped = 0;
    for i in 0..runs {
        let alive = killed_supervisor_escape(comm, src, mode).await;
        if !alive.is_empty() {
            eprintln!("{comm} run {i}: alive after return: {alive:?}");
            escaped += 1;
        }
    }
    escaped
}

/// Review rev34, question 1: in the sandbox (Landlock ABI 6 or later
/// scopes signals to the command's domain) a command's SIGSTOP loop
/// cannot reach the uid killer, which is outside it: the command returns
/// once its supervisor is killed and nothing of it is left. 20 runs.
#[tokio::test]
async fn rev34_sigstopping_guardian_cannot_stop_the_uid_killer_in_the_sandbox() {
    if !testkit::root_user() {
        return;
    }
    let n = killed_supervisor_escapes("sgs_rev34", UID_KILLER_ATTACK_C, "s", 20).await;
    assert_eq!(n, 0, "escaped in {n}/20 runs");
}

/// Review rev34, question 1: the SIGKILLing, pid-changing lineage
/// (`k`) in the sandbox, once its supervisor was killed. 20 runs.
#[tokio::test]
async fn rev34_killer_killing_lineage_dies_in_the_sandbox() {
    if !testkit::root_user() {
        return;
    }
    let n = killed_supervisor_escapes("kks_rev34", UID_KILLER_ATTACK_C, "k", 20).await;
    assert_eq!(n, 0, "escaped in {n}/20 runs");
}

/// Review rev34, question 1: the HOPPER_C lineages (no hiding) against
/// the uid backstop, 20 runs (rev32 saw 3/30 escape before 1443045).
#[tokio::test]
async fn rev34_hopping_lineages_against_the_uid_backstop_repeated() {
    if !testkit::root_user() {
        return;
    }
    let n = killed_supervisor_escapes("hpr_rev34", HOPPER_C, "p", 20).await;
    assert_eq!(n, 0, "escaped in {n}/20 runs");
}

/// Review rev34, question 1: a stopped process, a `vfork` parent, a
/// zombie leader with a live thread and a process blocking and ignoring
/// every signal in its own session, killed by `kill_uid` directly (as
/// `sweep_orphans` calls it), and no uid change possible. 20 runs.
#[test]
fn rev34_odd_process_states_die_by_kill_uid() {
    use std::os::unix::process::CommandExt;
    if !testkit::root_user() {
        return;
    }
    let comm = "odd_rev34";
    let (dir, bin) = build_c(UID_KILLER_ATTACK_C, comm);
    let mut escaped = 0;
    for i in 0..20 {
        let lease = uids::lease_uid(None).expect("a pool uid");
        let stop = dir.path().join(format!("stop{i}"));
        let mut child = std::process::Command::new(&bin)
            .arg("40")
            .arg(&stop)
            .arg("m")
            .uid(lease.uid)
            .gid(65534)
            .spawn()
            .unwrap();
        let t = Instant::now();
        while live_by_comm(comm).len() < 6 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(50));
        let before = live_by_comm(comm);
        if i == 0 {
            eprintln!("run 0, before kill_uid: {before:?}");
        }
        uids::kill_uid(lease.uid);
        let alive = live_by_comm(comm);
        if !alive.is_empty() {
            eprintln!("run {i}: before {before:?}; alive after kill_uid: {alive:?}");
            escaped += 1;
        }
        std::fs::write(&stop, b"").unwrap();
        kill_all_as_root(lease.uid);
        let _ = child.wait();
        assert!(
            !dir.path().join(format!("stop{i}.uid")).exists(),
            "a pool uid process changed its uid"
        );
    }
    assert_eq!(escaped, 0, "escaped in {escaped}/20 runs");
}

/// FINDING (rev34, lower severity; question 3): a landlock command whose
/// supervisor has died by a signal (the OOM killer, REAP_WAIT's kill, an
/// operator) and whose caller gives up on it (a dropped request) before
/// the reap ran: `Tree`'s drop hands the tree to a reaper task that kills
/// only a *running* tree (`is_running`), so the dead supervisor's orphans
/// are never killed by uid (`kill_uid` is not called) and the lease goes
/// back with them alive, for the next command to inherit.
#[tokio::test]
async fn finding_rev34_cancel_after_the_supervisor_died_skips_the_uid_backstop() {
    if !testkit::root_user() {
        return;
    }
    let Some(sb) = sandbox(Start::Landlock) else {
        return;
    };
    let mut escaped = 0;
    for i in 0..20 {
        let left = cancel_after_supervisor_death(&sb, i).await;
        if !left.is_empty() {
            eprintln!("run {i}: alive after the lease went back: {left:?}");
            escaped += 1;
        }
    }
    assert_eq!(escaped, 0, "escaped in {escaped}/20 runs");
}

/// One run of `finding_rev34_cancel_after_the_supervisor_died_skips_the_uid_backstop`:
/// what of the command's `setsid` child is alive 1 s after the drop.
async fn cancel_after_supervisor_death(sb: &Sandbox, i: u32) -> Vec<String> {
    let ws = workspace(sb);
    let token = format!("1013.98{}{i}", std::process::id());
    let orphan = format!("1013.99{}{i}", std::process::id());
    let mut req = ExecRequest::bash(
        ws.path(),
        format!("setsid sleep {orphan} & exec sleep {token}"),
    );
    req.limits = Some(short(30_000));
    let sb = sb.clone();
    let run = tokio::spawn(async move { sb.run(req).await });
    let sup = supervisor_of(&token, 1).await;
    let t = Instant::now();
    while host_procs(&format!("sleep {orphan}")).is_empty() {
        assert!(t.elapsed() < Duration::from_secs(20), "no orphan-to-be");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // From here on, no await until the abort: the run task is not polled
    // in between (a current-thread runtime), so it is cancelled before
    // it saw the supervisor's death.
    sys::kill(sup);
    let t = Instant::now();
    while !matches!(
        std::fs::read_to_string(format!("/proc/{sup}/stat"))
            .ok()
            .and_then(|s| s
                .rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('Z'))),
        None | Some(true)
    ) {
        assert!(t.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(1));
    }
    run.abort();
    let _ = run.await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let left = host_procs(&format!("sleep {orphan}"));
    kill_listed(&left);
    kill_listed(&host_procs(&format!("sleep {token}")));
    left
}

/// Review rev34, question 2: `kill_uid` of one leased pool uid signals
/// nothing else: not root's processes, not another leased pool uid's,
/// not nobody's; and `kill_all_of_uid` refuses root and the server's
/// own uid (`kill(-1)` as either would reach the host or the server).
#[test]
fn rev34_kill_uid_spares_every_other_uid() {
    use std::os::unix::process::CommandExt;
    if !testkit::root_user() {
        return;
    }
    assert!(sys::kill_all_of_uid(0, UID_POOL_BASE - 1).is_err());
    assert!(sys::kill_all_of_uid(sys::uid(), UID_POOL_BASE - 1).is_err());
    assert!(sys::kill_all_of_uid(UID_POOL_BASE, 0).is_err());
    assert!(sys::kill_all_of_uid(UID_POOL_BASE, UID_POOL_BASE).is_err());
    let token = format!("1013.77{}", std::process::id());
    let a = uids::lease_uid(None).expect("a pool uid");
    let b = uids::lease_uid(None).expect("another pool uid");
    let spawn = |uid: Option<u32>| {
        let mut c = std::process::Command::new("sleep");
        c.arg(&token);
        if let Some(u) = uid {
            c.uid(u).gid(65534);
        }
        c.spawn().unwrap()
    };
    let mut target = spawn(Some(a.uid));
    let mut others = [spawn(None), spawn(Some(b.uid)), spawn(Some(65534))];
    std::thread::sleep(Duration::from_millis(100));
    for _ in 0..20 {
        uids::kill_uid(a.uid);
    }
    std::thread::sleep(Duration::from_millis(100));
    let target_gone = target.try_wait().unwrap().is_some();
    let spared: Vec<bool> = others
        .iter_mut()
        .map(|c| c.try_wait().unwrap().is_none())
        .collect();
    for c in others.iter_mut() {
        let _ = c.kill();
        let _ = c.wait();
    }
    let _ = target.kill();
    let _ = target.wait();
    assert!(target_gone, "the leased uid's process survived");
    assert_eq!(spared, [true, true, true], "root, pool uid b, nobody");
}
