//! End-to-end tests of the health grader: real pytest runs in the sandbox.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use graders::junit::{self, Outcome};

use super::scratch::Scratch;
use super::*;
use crate::sandbox::SandboxConfig;

const APP: &str = "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n";
const TEST_A: &str = "from app import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_add_neg():\n    assert add(-1, 1) == 0\n";
const TEST_B: &str = "from app import mul\n\nclass TestMul:\n    def test_mul(self):\n        assert mul(2, 3) == 6\n";
const INI: &str = "[pytest]\npythonpath = .\ntestpaths = tests\n";

fn grader(wall_secs: u64) -> Option<HealthGrader> {
    // CI installs bubblewrap (scripts/setup.sh): a skip there would
    // pass without grading anything.
    if !testkit::bwrap() {
        return None;
    }
    let sb = Sandbox::detect(SandboxConfig::with_venv(crate::test_paths::venv()));
    assert!(sb.is_contained(), "{}", sb.info().detail);
    let limits = Limits {
        wall: Duration::from_secs(wall_secs),
        ..Limits::default()
    };
    Some(HealthGrader::new(Arc::new(sb)).with_limits(limits))
}

/// Every path under `root`, relative.
fn walk_names(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

pub(super) fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

/// A fixture task: (scratch, workspace, pristine dir with the suite).
fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    let pristine = d.path().join("pristine");
    for root in [&ws, &pristine] {
        write(root, "tests/test_a.py", TEST_A);
        write(root, "tests/test_b.py", TEST_B);
        write(root, "pytest.ini", INI);
    }
    write(&ws, "app.py", APP);
    (d, ws, pristine)
}

/// Grades through the real entry point with the workspace as its own
/// template: the lint finds nothing added, so what these tests exercise is
/// the copy, the restore, the bootstrap and the scoring behind it.
async fn grade(g: &HealthGrader, ws: &Path, pristine: &Path, exp: &ExpectedTests) -> HealthSummary {
    linted(g, ws, pristine, ws, exp).await
}

/// The real entry point against `template`, the grade without the time.
async fn linted(
    g: &HealthGrader,
    ws: &Path,
    pristine: &Path,
    template: &Path,
    exp: &ExpectedTests,
) -> HealthSummary {
    g.grade_linted_timed(ws, pristine, template, exp)
        .await
        .summary
}

async fn manifest(g: &HealthGrader, ws: &Path, pristine: &Path) -> ExpectedTests {
    g.expected_tests(ws, pristine).await.unwrap()
}

#[tokio::test]
async fn passing_suite_scores_one() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 3);
    assert_eq!(
        exp.names,
        [
            "tests.test_a::test_add",
            "tests.test_a::test_add_neg",
            "tests.test_b.TestMul::test_mul"
        ]
    );
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(
        (s.passed, s.failed, s.errors, s.total, s.score),
        (3, 0, 0, 3, 1.0),
        "{s:?}"
    );
    assert!(s.error.is_none() && !s.cached);
    // Unchanged tree: served from the cache, identical apart from the flag.
    let again = grade(&g, &ws, &pristine, &exp).await;
    assert!(again.cached);
    assert_eq!(
        HealthSummary {
            cached: false,
            ..again
        },
        s
    );
    // A change misses the cache.
    write(&ws, "app.py", &format!("{APP}\n# edited\n"));
    assert!(!grade(&g, &ws, &pristine, &exp).await.cached);
}

/// A staged run (started before its copy existed, the key and suite
/// list delivered later) grades every tree exactly as a cold run does:
/// passing, failing, broken at import, tampering, and after the cache.
/// Under bwrap most runs after the first are staged; the other tiers
/// have none.
#[tokio::test]
async fn staged_runs_grade_like_cold_runs() {
    let Some(g) = grader(30).map(HealthGrader::without_runners) else {
        return;
    };
    let cold = grader(30).unwrap().without_staging();
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    let bwrap = g.sandbox.tier() == crate::sandbox::Tier::Bwrap;
    let trees = [
        APP.to_string(),
        APP.replace("a * b", "a * b + 1"),
        format!("{APP}\nraise ImportError('broken at import')\n"),
        format!("import sys\nsys._getframe(0)\n{APP}"),
        format!("{APP}\n# edited\n"),
        APP.replace("a + b", "a - b"),
    ];
    for (i, app) in trees.iter().enumerate() {
        write(&ws, "app.py", app);
        // As an agent's think time: the replacement staged run starts
        // (the manifest run started the first ones).
        if let Some(pool) = g.staged.as_ref().filter(|_| bwrap) {
            let t = std::time::Instant::now();
            while pool.ready() == 0 {
                assert!(
                    t.elapsed() < Duration::from_secs(60),
                    "no staged run came up"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let a = grade(&g, &ws, &pristine, &exp).await;
        let b = grade(&cold, &ws, &pristine, &exp).await;
        assert!(!a.cached && !b.cached, "tree {i}");
        let tampered = |s: &HealthSummary| s.error.as_deref().is_some_and(|e| e.contains("tamper"));
        assert_eq!(
            (a.passed, a.failed, a.errors, a.score, tampered(&a)),
            (b.passed, b.failed, b.errors, b.score, tampered(&b)),
            "tree {i}: staged {a:?} vs cold {b:?}"
        );
    }
    assert_eq!(cold.staged_runs(), 0);
    // Under bwrap every grade found a staged run ready; the manifest
    // run, the first, started cold.
    let want = if bwrap { trees.len() as u64 } else { 0 };
    assert_eq!(g.staged_runs(), want);
}

/// The trees of [`staged_runs_grade_like_cold_runs`]: passing, failing,
/// broken at import, tampering, edited.
fn graded_trees() -> [String; 6] {
    [
        APP.to_string(),
        APP.replace("a * b", "a * b + 1"),
        format!("{APP}\nraise ImportError('broken at import')\n"),
        format!("import sys\nsys._getframe(0)\n{APP}"),
        format!("{APP}\n# edited\n"),
        APP.replace("a + b", "a - b"),
    ]
}

/// Asserts that `g` and a cold grader grade the workspace alike.
async fn same_as_cold(
    g: &HealthGrader,
    cold: &HealthGrader,
    ws: &Path,
    pristine: &Path,
    exp: &ExpectedTests,
    what: &str,
) {
    let a = grade(g, ws, pristine, exp).await;
    let b = grade(cold, ws, pristine, exp).await;
    assert!(!a.cached && !b.cached, "{what}");
    let tampered = |s: &HealthSummary| s.error.as_deref().is_some_and(|e| e.contains("tamper"));
    assert_eq!(
        (a.passed, a.failed, a.errors, a.score, tampered(&a)),
        (b.passed, b.failed, b.errors, b.score, tampered(&b)),
        "{what}: {a:?} vs cold {b:?}"
    );
}

/// Runs forked from a runner grade every tree exactly as a cold run
/// does, and under bwrap (with Landlock signal scoping, which CI's kernel
/// has) a runner serves every one of them.
#[tokio::test]
async fn runner_runs_grade_like_cold_runs() {
    let Some(RunnerCase {
        g,
        cold,
        _d,
        ws,
        pristine,
        exp,
    }) = case(30).await
    else {
        return;
    };
    let before = g.runner_runs();
    let trees = graded_trees();
    for (i, app) in trees.iter().enumerate() {
        write(&ws, "app.py", app);
        same_as_cold(&g, &cold, &ws, &pristine, &exp, &format!("tree {i}")).await;
    }
    assert_eq!(cold.runner_runs(), 0);
    if g.sandbox.tier() == crate::sandbox::Tier::Bwrap {
        assert_eq!(g.runner_runs() - before, trees.len() as u64);
    }
}

/// What the runner tests start from: a grader with runners (the default)
/// and a cold one, the fixture task and its manifest.
struct RunnerCase {
    g: HealthGrader,
    cold: HealthGrader,
    _d: tempfile::TempDir,
    ws: PathBuf,
    pristine: PathBuf,
    exp: ExpectedTests,
}

/// A [`RunnerCase`] with `wall_secs` per run, in whatever tier this host
/// gives (None without bubblewrap, as [`grader`]).
async fn case(wall_secs: u64) -> Option<RunnerCase> {
    let g = grader(wall_secs)?;
    let cold = grader(wall_secs)?.without_staging();
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    Some(RunnerCase {
        g,
        cold,
        _d,
        ws,
        pristine,
        exp,
    })
}

/// [`case`] where runners exist: None outside the bwrap tier (the
/// Landlock pass of the test command runs these tests too).
async fn runner_case() -> Option<RunnerCase> {
    case(30)
        .await
        .filter(|c| c.g.sandbox.tier() == crate::sandbox::Tier::Bwrap)
}

/// Processes of this host running the bootstrap in runner mode as one of
/// `uids`: (pid, parent pid). A runner's forked runs look the same; the
/// runner is the one whose parent is not one of them.
fn runner_processes(uids: &[u32]) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let has = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        if !has(&cmd, b"/grader-boot/boot.py") || !has(&env, b"SECAUDIT_RUNNER=1") {
            continue;
        }
        let uid = std::fs::metadata(format!("/proc/{pid}")).map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid()
        });
        if !uid.is_ok_and(|u| uids.contains(&u)) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        out.push((pid, ppid));
    }
    out
}

/// Kills the runners running as `uids` (not their runs): what a runner
/// crash does.
fn kill_runners(uids: &[u32]) -> usize {
    let procs = runner_processes(uids);
    let pids: Vec<i32> = procs.iter().map(|p| p.0).collect();
    let mut n = 0;
    for (pid, ppid) in &procs {
        if !pids.contains(ppid) {
            let killed = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            n += usize::from(killed);
        }
    }
    n
}

/// A run that tries everything it can against the runner and the runs
/// after it gets nothing: its signals to every process it can name are
/// refused outside its own, what it writes is gone, the process it leaves
/// to edit the next run's copy is killed, and the runner serves the next
/// run, which grades as a cold run does.
#[tokio::test]
async fn a_hostile_run_reaches_neither_its_runner_nor_the_next_run() {
    let Some(RunnerCase {
        g,
        cold,
        _d,
        ws,
        pristine,
        exp,
    }) = runner_case().await
    else {
        return;
    };
    let hostile = format!(
        "import os, signal, subprocess\n\
         refused = 0\n\
         for p in range(1, 4096):\n\
         \x20   if p != os.getpid():\n\
         \x20       try:\n\
         \x20           os.kill(p, signal.SIGKILL)\n\
         \x20       except PermissionError:\n\
         \x20           refused += 1\n\
         \x20       except OSError:\n\
         \x20           pass\n\
         assert refused >= 2, refused\n\
         open('/tmp/planted', 'w').write('x')\n\
         open('/tmp/home/planted', 'w').write('x')\n\
         open('/grader-out/planted', 'w').write('x')\n\
         subprocess.Popen(['/usr/bin/bash', '-c', 'sleep 1; touch /workspace/planted /tmp/late'], start_new_session=True)\n\
         {APP}"
    );
    write(&ws, "app.py", &hostile);
    let first = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(
        first.score, 1.0,
        "the hostile run's own checks held: {first:?}"
    );
    let served = g.runner_runs();
    // The next run waits past the leftover's second, then looks.
    let observer = format!(
        "import os, time\n\
         time.sleep(1.5)\n\
         SEEN = [p for p in ('/tmp/planted', '/tmp/home/planted', '/grader-out/planted', '/workspace/planted', '/tmp/late') if os.path.exists(p)]\n\
         {}",
        APP.replace("return a + b", "return a + b + len(SEEN)")
    );
    write(&ws, "app.py", &observer);
    same_as_cold(
        &g,
        &cold,
        &ws,
        &pristine,
        &exp,
        "the run after a hostile one",
    )
    .await;
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert!(s.cached && s.score == 1.0, "{s:?}");
    assert_eq!(
        g.runner_runs(),
        served + 1,
        "the runner served the next run"
    );
}

/// What two red-team rounds of the runner changed from inside a run, each
/// now refused or undone: the runner's limits, priority, CPU set and I/O
/// priority (`prlimit`, `renice`, `taskset`, `ionice` on it), System V
/// IPC, keyring and io_uring (from a subprocess with ctypes, outside the
/// bootstrap's hook), extended attributes and POSIX ACLs of the bound
/// directories, inode flags, the modes of `/`, `/dev` and the venv's
/// parent, and a socket left in TIME_WAIT (the runner retires). The
/// hostile run fails its own tests if any one succeeds; the next run
/// checks what it inherited (and that `/dev/shm` works, as in a cold run)
/// and grades as a cold run does.
#[tokio::test]
async fn a_run_changes_nothing_of_the_runner_or_its_directories() {
    let Some(RunnerCase {
        g,
        cold,
        _d,
        ws,
        pristine,
        exp,
    }) = runner_case().await
    else {
        return;
    };
    let hostile = format!(
        r#"import fcntl, os, platform, struct, subprocess, sys
RUNNER = os.getppid()
DONE = []
def tried(cmd):
    if subprocess.run(cmd, capture_output=True).returncode == 0:
        DONE.append(" ".join(cmd))
tried(["prlimit", "--pid", str(RUNNER), "--fsize=1000:1000"])
tried(["prlimit", "--pid", str(RUNNER), "--nofile=8:8"])
tried(["renice", "-n", "10", "-p", str(RUNNER)])
tried(["taskset", "-p", "1", str(RUNNER)])
tried(["ionice", "-c", "3", "-p", str(RUNNER)])
ADD_KEY = {{"x86_64": 248, "aarch64": 217}}[platform.machine()]
PROBE = """import ctypes
libc = ctypes.CDLL(None, use_errno=True)
made = [libc.shmget(0x5EC0FFEE, 4096, 0o1666) >= 0, libc.msgget(0x5EC0FFEE, 0o1666) >= 0,
        libc.semget(0x5EC0FFEE, 1, 0o1666) >= 0,
        libc.syscall(%d, b"user", b"probe", b"x", 1, -4) >= 0,
        libc.syscall(425, 8, ctypes.create_string_buffer(120)) >= 0,
        libc.mq_open(b"/probe", 0o102, 0o600, None) >= 0]
raise SystemExit(1 if any(made) else 0)
""" % ADD_KEY
if subprocess.run([sys.executable, "-c", PROBE]).returncode != 0:
    DONE.append("ipc, keyring, io_uring or message queue")
for d in ("/tmp", "/workspace", "/grader-out", "/dev/shm"):
    os.utime(d, (1234567890, 1234567890))
for p in ("/", "/dev", "/etc", os.path.dirname(sys.prefix)):
    try:
        os.chmod(p, 0o700)
        DONE.append("chmod " + p)
    except OSError:
        pass

ACL = bytes.fromhex("02000000" + "01000000ffffffff" + "04000000ffffffff" + "20000000ffffffff")
for d in ("/workspace", "/grader-out", "/tmp"):
    for name, value in (("user.probe", b"x"), ("system.posix_acl_default", ACL)):
        try:
            os.setxattr(d, name, value)
            DONE.append(name + " on " + d)
        except OSError:
            pass
    fd = os.open(d, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, 0x40086602, struct.pack("i", 0x40))
        DONE.append("inode flags of " + d)
    except OSError:
        pass
    finally:
        os.close(fd)
if DONE:
    raise RuntimeError(DONE)
{APP}"#
    );
    write(&ws, "app.py", &hostile);
    let served = g.runner_runs();
    let first = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(first.score, 1.0, "a change went through: {first:?}");
    assert_eq!(
        g.runner_runs(),
        served + 1,
        "the runner served the hostile run"
    );
    // What stays possible is seen: the devpts mount's mode (a read-only
    // devpts allocates no pty) and a socket left in TIME_WAIT. The runner
    // retires (its run is graded again cold) and the next run gets a
    // fresh one.
    let detected = [
        "import os\nos.chmod('/dev/pts', 0o700)\n",
        "import socket\nsrv = socket.socket()\nsrv.bind(('127.0.0.1', 18080))\nsrv.listen(1)\n\
         cli = socket.create_connection(('127.0.0.1', 18080))\nconn, _ = srv.accept()\n\
         conn.close()\nsrv.close()\ncli.close()\n",
    ];
    for (i, change) in detected.iter().enumerate() {
        write(&ws, "app.py", &format!("{change}{APP}"));
        let served = g.runner_runs();
        same_as_cold(&g, &cold, &ws, &pristine, &exp, &format!("detected {i}")).await;
        assert_eq!(g.runner_runs(), served, "a changed runner answered ({i})");
    }
    let served = g.runner_runs();
    // The run inherits the test's own niceness (`nice cargo test`); only
    // a priority lowered beyond it is a change.
    let nice = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| Some(s.rsplit_once(')')?.1.split_whitespace().nth(16)?.to_owned()))
        .expect("niceness in /proc/self/stat");
    let observer = format!(
        r#"import os, resource
SEEN = []
if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY and resource.getrlimit(resource.RLIMIT_FSIZE)[0] < 1 << 20:
    SEEN.append("fsize")
if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 64:
    SEEN.append("nofile")
if os.getpriority(os.PRIO_PROCESS, 0) > {nice} or os.sched_getscheduler(0) != os.SCHED_OTHER:
    SEEN.append("priority")
if len(os.sched_getaffinity(0)) < min(2, os.cpu_count()):
    SEEN.append("cpus")
for f in ("/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem"):
    if len(open(f).readlines()) > 1:
        SEEN.append(f)
for d in ("/workspace", "/grader-out", "/tmp"):
    if os.listxattr(d):
        SEEN.append("xattrs of " + d)
if os.stat("/dev/pts").st_mode & 0o777 == 0o700:
    SEEN.append("/dev/pts mode")
for d in ("/tmp", "/workspace", "/grader-out", "/dev/shm"):
    if int(os.stat(d).st_mtime) == 1234567890:
        SEEN.append("times of " + d)
import multiprocessing, socket
try:
    multiprocessing.Lock()
except OSError:
    SEEN.append("no /dev/shm")
try:
    socket.socket().bind(("127.0.0.1", 18080))
except OSError:
    SEEN.append("port 18080 still in TIME_WAIT")
{app}"#,
        app = APP.replace("return a + b", "return a + b + len(SEEN)")
    );
    write(&ws, "app.py", &observer);
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "the run after").await;
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert!(s.cached && s.score == 1.0, "{s:?}");
    assert_eq!(
        g.runner_runs(),
        served + 1,
        "the runner served the next run"
    );
    // An exit code is only an exit code: 124 (a fork that could not be
    // confined, in the bootstrap) switches nothing off.
    write(&ws, "app.py", &format!("{APP}\nimport os\nos._exit(124)\n"));
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "exit 124").await;
    write(&ws, "app.py", &format!("{APP}\n# after 124\n"));
    let served = g.runner_runs();
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "after exit 124").await;
    assert_eq!(
        g.runner_runs(),
        served + 1,
        "runners still on after exit 124"
    );
}

/// A runner that dies, idle or in the middle of a run, is replaced: the
/// run it had is graded again cold, exactly as a cold run grades it, and
/// the next run gets a new runner.
#[tokio::test]
async fn a_runner_that_dies_is_replaced_and_its_run_graded_cold() {
    let Some(RunnerCase {
        g,
        cold,
        _d,
        ws,
        pristine,
        exp,
    }) = runner_case().await
    else {
        return;
    };
    write(&ws, "app.py", &format!("{APP}\n# one\n"));
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "first").await;
    let uids = g.idle_runner_uids();
    assert!(kill_runners(&uids) >= 1, "no runner was up");
    // The next run finds it dead (or, if the death is not seen yet, is
    // graded again cold); the one after gets a new runner.
    write(&ws, "app.py", &format!("{APP}\n# two\n"));
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "after an idle runner died").await;
    write(&ws, "app.py", &format!("{APP}\n# three\n"));
    let served = g.runner_runs();
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "later").await;
    assert_eq!(g.runner_runs(), served + 1, "a new runner served it");
    // Killed while its run sleeps at import.
    write(&ws, "app.py", &format!("import time\ntime.sleep(2)\n{APP}"));
    let served = g.runner_runs();
    let uids = g.idle_runner_uids();
    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        kill_runners(&uids)
    });
    let a = grade(&g, &ws, &pristine, &exp).await;
    assert!(killer.await.unwrap() >= 1, "no runner was up to kill");
    assert_eq!(
        g.runner_runs(),
        served,
        "the killed runner's run was not counted"
    );
    write(
        &ws,
        "app.py",
        &format!("import time\ntime.sleep(2)\n{APP}\n# again\n"),
    );
    let b = grade(&cold, &ws, &pristine, &exp).await;
    assert_eq!(
        (a.passed, a.score, a.error.is_some()),
        (b.passed, b.score, b.error.is_some()),
        "{a:?} vs {b:?}"
    );
}

/// A staged run dropped before its start signal runs nothing: its
/// bootstrap meets end of file instead of a key and exits before
/// reading the suite list or writing a verdict.
#[tokio::test]
async fn staged_run_without_a_key_runs_nothing() {
    let Some(g) = grader(30) else { return };
    if g.sandbox.tier() != crate::sandbox::Tier::Bwrap {
        return;
    }
    let scratch = Scratch::new(g.sandbox.rest_owner()).unwrap();
    write(
        &scratch.tree,
        "tests/test_x.py",
        "def test_x():\n    open('/grader-out/ran', 'w')\n",
    );
    let req = HealthGrader::pytest_request(&g.sandbox, &g.limits, &scratch);
    let warm = g.sandbox.prewarm_staged(&req).expect("a staged sandbox");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Delivered with no stdin: end of file at once.
    let out = g.sandbox.run_warm(Some(warm), req).await.unwrap();
    assert!(out.warm, "{out:?}");
    assert_eq!(out.exit_code, Some(125), "{out:?}");
    let _ = std::fs::set_permissions(&scratch.out, std::fs::Permissions::from_mode(0o700));
    let left: Vec<_> = std::fs::read_dir(&scratch.out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "tamper" && n != "verdicts")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        std::fs::read(scratch.out.join("verdicts")).unwrap_or_default(),
        b""
    );
}

/// The manifest run lets only credential-flow tests fail (they fail on
/// the unfixed tree by design): such a failure is recorded in the
/// manifest and counted later; any other pristine failure is a task
/// bug and refuses the manifest.
#[tokio::test]
async fn manifest_allows_only_credential_flow_failures() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let flow = "import os\n\ndef test_uses_the_deployment_credential():\n    assert os.environ.get('NOT_SET_BY_ANYONE') == 'x'\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", flow);
    }
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    assert!(
        exp.names
            .contains(&"tests.test_c::test_uses_the_deployment_credential".to_string())
    );
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.failed, s.total), (3, 1, 4), "{s:?}");
    // The same failure under another name is a task bug.
    let broken = flow.replace("deployment_credential", "deployment_config");
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", &broken);
    }
    let err = g.expected_tests(&ws, &pristine).await.unwrap_err();
    assert!(
        err.to_string().contains("test_uses_the_deployment_config"),
        "{err:#}"
    );
}

#[tokio::test]
async fn conftest_report_patch_gives_true_score() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    write(&ws, "app.py", &APP.replace("a * b", "a + b + 100"));
    // SWE-bench-style hook: every report becomes a pass.
    let hack = "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    r = out.get_result()\n    r.outcome = 'passed'\n    r.longrepr = None\n";
    write(&ws, "conftest.py", hack);
    write(&ws, "tests/conftest.py", hack);
    write(&ws, "pytest.py", "print('3 passed')\n");
    write(&ws, "sitecustomize.py", "import os; os._exit(0)\n");
    write(&ws, "evil.pth", "import os; os._exit(0)\n");
    // Config that would deselect everything.
    write(
        &ws,
        "pytest.ini",
        "[pytest]\naddopts = -k nothing\npythonpath = .\n",
    );
    write(&ws, "setup.cfg", "[tool:pytest]\naddopts = -k nothing\n");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.failed, s.score), (2, 1, 2.0 / 3.0), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// The tamper lint: code outside the suite that reaches into pytest
/// fails health (and pytest does not run), while tokens the template
/// already had at the same path are tolerated.
#[tokio::test]
async fn tamper_lint_against_template() {
    let Some(g) = grader(30) else { return };
    let (d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    let template = d.path().join("template");
    write(&template, "app.py", &format!("import signal\n{APP}"));
    write(&ws, "app.py", &format!("import signal\n{APP}"));
    let s = linted(&g, &ws, &pristine, &template, &exp).await;
    assert_eq!(s.score, 1.0, "template tokens are tolerated: {s:?}");
    let hacks = [
        (
            "app.py",
            format!("import signal\nimport sys\n_r = sys.modules.get('_pytest.reports')\n{APP}"),
        ),
        (
            "helper.py",
            "import importlib\nimportlib.import_module('_py' + 'test')\n".to_string(),
        ),
        ("lookalike.py", "import _\u{ff50}ytest\n".to_string()),
        ("enc.py", "# -*- coding: utf-7 -*-\nx = 1\n".to_string()),
    ];
    for (file, body) in hacks {
        let (_d2, ws2, _) = fixture();
        write(&ws2, "app.py", &format!("import signal\n{APP}"));
        write(&ws2, file, &body);
        let s = linted(&g, &ws2, &pristine, &template, &exp).await;
        assert_eq!(s.score, 0.0, "{file}: {s:?}");
        assert!(
            s.error.as_deref().unwrap_or("").contains("tamper lint"),
            "{file}: {s:?}"
        );
    }
    // A symlinked module pointing at a non-Python file is refused.
    let (_d3, ws3, _) = fixture();
    write(&ws3, "app.py", APP);
    write(&ws3, "payload.txt", "import sys\n");
    std::os::unix::fs::symlink("payload.txt", ws3.join("extra.py")).unwrap();
    let s = linted(&g, &ws3, &pristine, &template, &exp).await;
    assert!(
        s.error.as_deref().unwrap_or("").contains("symlink"),
        "{s:?}"
    );
    // The suite files themselves are not linted (they import pytest).
    let s = linted(&g, &ws, &pristine, &template, &exp).await;
    assert!(s.error.is_none(), "{s:?}");
}

/// Force-pass from code under test, no conftest involved: the app
/// module either patches `TestReport` or finds pytest's plugin manager
/// and registers an outcome-rewriting hook. Both made a broken `mul`
/// score 1.0 before the canary (pytest then agrees with the forged
/// outcomes, exit code 0); the canary then read them as tampering, and
/// now the bootstrap ends the run before (health 0 with the reason).
/// Unlinted `grade`, so the lint plays no part.
#[tokio::test]
async fn canary_catches_force_pass_from_code() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    let listing = |ws: &Path| {
        let mut v: Vec<String> = walk_names(ws);
        v.sort();
        v
    };
    let before = listing(&ws);
    // Honest runs: the canary neither counts nor shows.
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(
        (s.passed, s.failed, s.errors, s.total, s.score),
        (3, 0, 0, 3, 1.0),
        "{s:?}"
    );
    assert!(s.error.is_none(), "{s:?}");
    assert_eq!(listing(&ws), before, "the canary leaked into the workspace");
    let broken = APP.replace("a * b", "a + b + 100");
    let patch_report = "import _pytest.reports as _r\n\
            _orig = _r.TestReport.from_item_and_call.__func__\n\
            def _forced(cls, item, call):\n    rep = _orig(cls, item, call)\n    rep.outcome = 'passed'\n    rep.longrepr = None\n    return rep\n\
            _r.TestReport.from_item_and_call = classmethod(_forced)\n";
    let plugin = "import gc as _gc\nimport pytest as _pt\n\
            class _ForcePass:\n    @_pt.hookimpl(hookwrapper=True)\n    def pytest_runtest_makereport(self, item, call):\n        out = yield\n        r = out.get_result()\n        r.outcome = 'passed'\n        r.longrepr = None\n\
            for _o in _gc.get_objects():\n    if type(_o).__name__ == 'PytestPluginManager':\n        _o.register(_ForcePass())\n        break\n";
    for (name, hack) in [
        ("TestReport patch", patch_report),
        ("plugin via gc", plugin),
    ] {
        write(&ws, "app.py", &format!("{hack}{broken}"));
        let s = grade(&g, &ws, &pristine, &exp).await;
        assert_eq!((s.passed, s.score), (0, 0.0), "{name}: {s:?}");
        // The bootstrap stops both before the canary is reached: the
        // class rebinding at the first checkpoint, the `gc` walk at the
        // audit hook.
        let err = s.error.as_deref().unwrap_or("");
        let why = if name == "plugin via gc" {
            "gc.get_objects"
        } else {
            "from_item_and_call rebound"
        };
        assert!(
            err.contains("tampering detected") && err.contains(why),
            "{name}: {s:?}"
        );
    }
    // The honest broken fix still gets its true partial score.
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.failed, s.score), (2, 1, 2.0 / 3.0), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// The measured break of issue 17 and its other loaders: a patch that
/// forces `passed` only for items of the pristine test modules (so the
/// canary stays honest), loaded by every channel we know. Unlinted
/// `grade`: the bootstrap alone must stop each one. First the same
/// payload in a bare pytest run (no bootstrap), to show it forges.
#[tokio::test]
async fn bootstrap_stops_forged_verdicts() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    let broken = APP.replace("a * b", "a + b + 100");
    // Targets the pristine modules by path: the canary keeps failing.
    let forge = "import _pytest.reports as _R\n\
            _orig = _R.TestReport.from_item_and_call.__func__\n\
            def _forced(cls, item, call):\n    rep = _orig(cls, item, call)\n    if str(item.path).endswith(('test_a.py', 'test_b.py')):\n        rep.outcome = 'passed'\n        rep.longrepr = None\n    return rep\n\
            _R.TestReport.from_item_and_call = classmethod(_forced)\n";
    // A module-level function of _pytest, not a class attribute.
    let modfunc = "import _pytest.runner as _r\n\
            _orig = _r.call_and_report\n\
            def _car(item, when, log=True, **kw):\n    if when != 'call' or not str(item.path).endswith('test_b.py'):\n        return _orig(item, when, log, **kw)\n    call = _r.CallInfo.from_call(lambda: item.ihook.pytest_runtest_call(item=item, **kw), when=when, reraise=(_r.Exit, KeyboardInterrupt))\n    call.excinfo = None\n    rep = item.ihook.pytest_runtest_makereport(item=item, call=call)\n    item.ihook.pytest_runtest_logreport(report=rep)\n    return rep\n\
            _r.call_and_report = _car\n";
    // Without the bootstrap, the data-file payload turns 2/3 into 3/3
    // and the canary sees nothing.
    write(&ws, "payload.dat", forge);
    write(
        &ws,
        "app.py",
        &format!("import runpy\nrunpy.run_path('payload.dat')\n{broken}"),
    );
    let bare = HealthGrader {
        bare: true,
        ..grader(30).unwrap()
    };
    let prepared = bare.prepare(&ws, &pristine).await.unwrap();
    let (run, canary) = bare.run_pytest(prepared).await.unwrap();
    let report = junit::parse_junit(run.report.as_ref().unwrap()).unwrap();
    let forged: Vec<String> = report
        .cases
        .iter()
        .filter(|c| !canary.owns(c) && c.outcome == Outcome::Passed)
        .map(|c| c.key())
        .collect();
    assert_eq!(
        forged.len(),
        3,
        "the payload forges without the bootstrap: {report:?}"
    );
    assert!(canary.verify(&report).is_ok(), "and the canary misses it");

    // Compiled with a trusted-looking file name, as bytecode, and as a
    // sourceless module planted at run time (the cleaner deletes every
    // .pyc of the workspace, so the app writes it itself).
    let py = g.sandbox.config().venv.join("bin/python");
    let mk = std::process::Command::new(&py)
            .arg("-c")
            .arg(
                "import marshal, importlib.util as u, sys\n\
                 src = open(sys.argv[1]).read()\n\
                 code = compile(src, '/usr/lib/python3.11/forged.py', 'exec')\n\
                 open(sys.argv[2], 'wb').write(marshal.dumps(code))\n\
                 open(sys.argv[3], 'wb').write(u.MAGIC_NUMBER + b'\\0' * 12 + marshal.dumps(code))\n",
            )
            .arg(ws.join("payload.dat"))
            .arg(ws.join("payload.bin"))
            .arg(ws.join("payload.pycdata"))
            .status()
            .unwrap();
    assert!(mk.success());
    write(&ws, "modfunc.dat", modfunc);
    let loaders: &[(&str, &str, &str)] = &[
        (
            "runpy of a data file",
            "import runpy\nrunpy.run_path('payload.dat')\n",
            "rebound",
        ),
        (
            "exec(open().read())",
            "exec(open('payload.dat').read())\n",
            "compile from",
        ),
        (
            "compile() under a stdlib file name",
            "exec(compile(open('payload.dat').read(), '/usr/lib/python3.11/x.py', 'exec'))\n",
            "compile from",
        ),
        (
            "codeop under a stdlib file name",
            "import codeop\nexec(codeop.compile_command(open('payload.dat').read() + '\\n', '/usr/lib/python3.11/x.py', 'exec'))\n",
            "compile under a trusted file name",
        ),
        (
            "zip on sys.path",
            "import sys, zipfile\nwith zipfile.ZipFile('p.zip', 'w') as z:\n    z.writestr('zpayload.py', open('payload.dat').read())\nsys.path.insert(0, 'p.zip')\nimport zpayload\n",
            "rebound",
        ),
        (
            "marshal.loads",
            "import marshal\nexec(marshal.loads(open('payload.bin', 'rb').read()))\n",
            "marshal.loads from",
        ),
        (
            "sourceless .pyc planted at run time",
            "import shutil, sys\nshutil.copy('payload.pycdata', 'planted.pyc')\nimport planted\n",
            "bytecode loaded from",
        ),
        (
            "ctypes",
            "import ctypes\nctypes.pythonapi.Py_IncRef\n",
            "ctypes",
        ),
        (
            "_pytest module-level function",
            "import runpy\nrunpy.run_path('modfunc.dat')\n",
            "code under test on the stack",
        ),
        (
            "gc.get_referrers",
            "import gc, _pytest.reports as R\nfor o in gc.get_referrers(R.TestReport):\n    pass\n",
            "gc.get_referrers",
        ),
        (
            "frame walk from a caught exception",
            "try:\n    raise RuntimeError\nexcept RuntimeError as e:\n    f = e.__traceback__.tb_frame\nwhile f is not None:\n    f = f.f_back\n",
            "tb_frame",
        ),
        (
            "inspect.currentframe",
            "import inspect\nf = inspect.currentframe().f_back\n",
            "frame of code under test",
        ),
        (
            "traceback.walk_stack",
            "import traceback\nfor f, _ in traceback.walk_stack(None):\n    pass\n",
            "via",
        ),
        (
            "signal handler frame",
            "import signal\nsignal.signal(signal.SIGALRM, lambda n, f: None)\nsignal.setitimer(signal.ITIMER_REAL, 0.01)\n",
            "signal",
        ),
        (
            "thread",
            "import threading\nthreading.Thread(target=print).start()\n",
            "thread",
        ),
        (
            "settrace",
            "import sys\nsys.settrace(lambda *a: None)\n",
            "sys.settrace",
        ),
        (
            "__code__ swap",
            "def f():\n    pass\nf.__code__ = (lambda: 1).__code__\n",
            "__code__",
        ),
        // Native code the hook cannot see: a subinterpreter (no audit
        // hook, and ctypes importable in it: it writes any object of this
        // one), the C API test modules, and the process's own memory file.
        (
            "subinterpreter",
            "import _xxsubinterpreters as si\nsi.run_string(si.create(), 'import ctypes')\n",
            "_xxsubinterpreters",
        ),
        (
            "C API test module",
            "import _testinternalcapi\n",
            "_testinternalcapi",
        ),
        (
            "/proc/self/mem written",
            "f = open('/proc/self/mem', 'r+b')\n",
            "/mem for writing",
        ),
        (
            "/proc/self/mem read through a symlink",
            "import os\nos.symlink('/proc/self/mem', 'mem.lnk')\nopen('mem.lnk', 'rb')\n",
            "/mem during the run",
        ),
        (
            "a directory fd of /proc for os.open's dir_fd",
            "import os\nd = os.open('/proc/self', os.O_RDONLY)\nos.open('mem', os.O_RDWR, dir_fd=d)\n",
            "open of /proc/",
        ),
    ];
    let mut failures = Vec::new();
    for (name, loader, why) in loaders {
        write(&ws, "app.py", &format!("{loader}{broken}"));
        let s = grade(&g, &ws, &pristine, &exp).await;
        let err = s.error.as_deref().unwrap_or("");
        if s.score != 0.0 || !err.contains("tampering detected") || !err.contains(why) {
            failures.push(format!("{name}: {s:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The honest broken fix still gets its true partial score.
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.score), (2, 2.0 / 3.0), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// A function's code swapped by a trusted helper on the run's behalf
/// (`unittest.mock.patch.object`, with the code object read out by `dis`):
/// every namespace still holds the same objects, so no sweep sees it, yet
/// the suite's library call (`json.loads`) or a hook implementation
/// (`pytest_pyfunc_call`, which runs the test) now runs code under test.
/// The audit hook refuses the swap itself, whoever performs it, while
/// code under test is on the stack.
#[tokio::test]
async fn code_swapped_by_a_trusted_helper_is_refused() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_c = "import json\nfrom app import dump\n\ndef test_dump():\n    assert json.loads(dump()) == {'a': 1}\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test_c);
    }
    write(
        &ws,
        "app.py",
        &format!("{APP}\ndef dump():\n    return '{{\"a\": 1}}'\n"),
    );
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    let broken = format!(
        "{}\ndef dump():\n    return '{{}}'\n",
        APP.replace("a * b", "a + b + 100")
    );
    let swap = |target: &str, body: &str| {
        format!(
            "import dis, unittest.mock\n{target}\ndef _stand_in{body}\nunittest.mock.patch.object(_target, '__code__', dis._get_code_object(_stand_in)).start()\n"
        )
    };
    let payloads = [
        (
            "a library function the suite calls",
            "__code__",
            swap(
                "import json\n_target = json.loads",
                "(s, **kw):\n    return {'a': 1}",
            ),
        ),
        (
            "a hook implementation",
            "__code__",
            swap(
                "import _pytest.python as _pp\n_target = _pp.pytest_pyfunc_call",
                "(pyfuncitem):\n    return True",
            ),
        ),
        // The same class, other attributes: a library object's class and
        // a library function's keyword defaults.
        (
            "a library object's class",
            "__class__",
            "import json, unittest.mock\nclass _D(json.JSONDecoder):\n    def decode(self, s, **kw):\n        return {'a': 1}\nunittest.mock.patch.object(json._default_decoder, '__class__', _D).start()\n".to_string(),
        ),
        (
            "a library object's class, its method a partial over a builtin",
            "__class__",
            "import functools, json, unittest.mock\nclass _D(json.JSONDecoder):\n    decode = functools.partial(dict.get, {'{}': {'a': 1}})\nunittest.mock.patch.object(json._default_decoder, '__class__', _D).start()\n".to_string(),
        ),
        (
            "a library object's own attribute",
            "scan_once",
            "import json\njson._default_decoder.scan_once = lambda s, i: ({'a': 1}, len(s))\n".to_string(),
        ),
        (
            "a library function's defaults",
            "__kwdefaults__",
            "import json, unittest.mock\nclass _D(json.JSONDecoder):\n    def decode(self, s, **kw):\n        return {'a': 1}\nunittest.mock.patch.object(json.loads, '__kwdefaults__', dict(cls=_D, object_hook=None, parse_float=None, parse_int=None, parse_constant=None, object_pairs_hook=None)).start()\n".to_string(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, why, payload) in &payloads {
        write(&ws, "swap.dat", payload);
        write(
            &ws,
            "app.py",
            &format!("import runpy\nrunpy.run_path('swap.dat')\n{broken}"),
        );
        let s = grade(&g, &ws, &pristine, &exp).await;
        let err = s.error.as_deref().unwrap_or("");
        if s.score != 0.0 || !err.contains("tampering detected") || !err.contains(why) {
            failures.push(format!("{name}: {s:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The honest broken app keeps its true partial score.
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (2, 4), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// Red team (red30): a library function's behaviour read from state that
/// no sweep compares: the contents of a library's plain-data containers
/// (`re._cache`, `urllib.parse._hextobyte`) and `sys.modules`, through
/// which C code and lazy imports reach a module (`datetime.strftime`
/// imports `time` per call). No name is rebound, no audit event fires.
/// Each forges one test of the broken app; each must end the run.
#[tokio::test]
async fn library_state_forged_without_rebinding_is_refused() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_c = "import datetime, re\nfrom urllib.parse import parse_qs\nfrom app import token, query, stamp\n\ndef test_token_is_a_placeholder():\n    assert re.fullmatch(r'\\$\\{\\w+\\}', token())\n\ndef test_query_names_the_user():\n    assert parse_qs(query()) == {'user': ['ann']}\n\ndef test_stamp_is_the_day():\n    assert stamp() == datetime.datetime(2025, 3, 14).strftime('%Y%m%d')\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test_c);
    }
    let honest = "def token():\n    return '${TOKEN}'\n\ndef query():\n    return 'user=ann'\n\ndef stamp():\n    return '20250314'\n";
    write(&ws, "app.py", &format!("{APP}\n{honest}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (6, 6), "{s:?}");
    let broken = format!(
        "{}\ndef token():\n    return 'sk-live-0123456789'\n\ndef query():\n    return 'user=%41nn'\n\ndef stamp():\n    return 'never'\n",
        APP.replace("a * b", "a + b + 100")
    );
    let payloads = [
        (
            "a forged pattern in re's cache",
            "import re\nre._cache[(str, r'\\$\\{\\w+\\}', 0)] = re.compile(r'(?s:.*)')\n",
        ),
        (
            "a forged entry in urllib.parse's escape table",
            "import urllib.parse as _u\n_u.unquote_to_bytes('%20')\n_u._hextobyte[b'41'] = b'a'\n",
        ),
        (
            "a module of code under test in sys.modules",
            "import sys, types, time as _t\n_m = types.ModuleType('time')\n_m.__dict__.update(_t.__dict__)\n_m.strftime = lambda fmt, tt=None: 'never'\nsys.modules['time'] = _m\n",
        ),
        // A closure cell of the bootstrap's own pytest.approx wrapper
        // (`__closure__` raises no audit event; `cell_contents` is
        // writable): its list of the suite's matchers gets an object of
        // code under test that equals anything, and the app returns it.
        (
            "an object of code under test among the suite's matchers",
            "import pytest\nclass _E:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n_e = _E()\nfor _c in pytest.approx.__closure__:\n    if type(_c.cell_contents) is list:\n        _c.cell_contents.append(_e)\nOVERRIDE = {'stamp': lambda: _e, 'mul': lambda a, b: _e}\n",
        ),
        // The bootstrap's own baseline re-taken by code under test: its
        // `rebaseline` sits in a closure cell of the wrapped
        // MonkeyPatch.setattr; a rebinding made just before it is then
        // the baseline every sweep compares with.
        (
            "a library rebinding taken into the sweeps' baseline",
            "import datetime, _pytest.monkeypatch as _mp\n_reb = [c.cell_contents for c in _mp.MonkeyPatch.setattr.__closure__ if getattr(c.cell_contents, '__name__', '') == 'rebaseline'][0]\nclass _DT(datetime.datetime):\n    def strftime(self, fmt):\n        return 'never'\ndatetime.datetime = _DT\n_reb()\n",
        ),
        // The same state through a trusted helper that reads defaults
        // (inspect.signature is standard library, so its reads of
        // `__kwdefaults__`/`__defaults__` are not refused): the matchers
        // list of `plain`, from the suite module's strict functions.
        (
            "the suite's matchers reached through inspect.signature",
            "import sys, inspect\n_st = [m.__dict__['_secaudit_strict_'] for m in list(sys.modules.values()) if '_secaudit_strict_' in getattr(m, '__dict__', {})][0]\n_plain = inspect.signature(_st[0]).parameters['_plain'].default\n_ms = inspect.signature(_plain).parameters['_matchers'].default\nclass _E:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n_e = _E()\n_ms.append(_e)\nOVERRIDE = {'stamp': lambda: _e, 'mul': lambda a, b: _e}\n",
        ),
        // The suite's own sources, read at start and compiled from
        // memory: the dict sits in a default of the finder on
        // sys.meta_path. Test modules imported after the app's are
        // replaced by ones whose tests pass.
        (
            "the suite's sources rewritten through the finder's defaults",
            "import sys, inspect\n_f = [f for f in sys.meta_path if getattr(f, '__name__', '') == 'SuiteFinder'][0]\n_src = inspect.signature(_f.find_spec).parameters['_src'].default\nfor _k, _v in list(_src.items()):\n    if _k.endswith(('test_b.py', 'test_c.py')):\n        _names = [l.split('(')[0].split()[-1] for l in _v[1].decode().splitlines() if l.lstrip().startswith('def test_')]\n        _body = 'class TestMul:\\n' if _k.endswith('test_b.py') else ''\n        _ind = '    ' if _body else ''\n        _body += ''.join(_ind + 'def %s(' % n + ('self' if _ind else '') + '):\\n' + _ind + '    pass\\n' for n in _names)\n        _src[_k] = (_v[0], _body.encode())\n",
        ),
        // The bootstrap runs as __main__, which no sweep watches: a
        // global there shadows the builtins its functions look up by name.
        // `bool` (the truth test of every assert) lies once after the app
        // was called, `type` keeps s_cmp's result check quiet; the canary,
        // which never calls the app, is untouched.
        (
            "builtins shadowed in the bootstrap's own module",
            "import __main__, builtins\n_rb, _rt = builtins.bool, builtins.type\n_armed = [False]\ndef _bool(x):\n    if _armed[0] and x is False:\n        _armed[0] = False\n        return True\n    return _rb(x)\nclass _TM(type):\n    def __instancecheck__(cls, inst):\n        return isinstance(inst, _rt)\nclass _T(metaclass=_TM):\n    def __new__(cls, o, *a):\n        if a:\n            return _rt(o, *a)\n        t = _rt(o)\n        return _bool if t is _rb else t\n__main__.bool = _bool\n__main__.type = _T\ndef _arm(v):\n    _armed[0] = True\n    return v\nOVERRIDE = {'stamp': lambda: _arm('never'), 'mul': lambda a, b: _arm(a + b + 100)}\n",
        ),
        // The suite's functions get STRICT as a keyword default, and
        // `__kwdefaults__` is the live dict: read by a C getter that a
        // standard-library frame drives (heapq over a map of
        // attrgetter), the audit hook sees a trusted caller. Swapped from
        // inside the app's first call, every later test asserts nothing.
        (
            "the suite functions' strict functions swapped in their live kwdefaults",
            "import sys, heapq, operator\n_FT = type(lambda: 0)\ndef _cmp(ops, vals):\n    return True\ndef _truth(x):\n    return True\ndef _glob(m, n, v):\n    return v\ndef _attr(o, a):\n    return getattr(o, a)\n_fake = (_cmp, _truth, _glob, _attr)\ndef _swap():\n    for m in list(sys.modules.values()):\n        d = getattr(m, '__dict__', None)\n        if type(d) is not dict or '_secaudit_strict_' not in d:\n            continue\n        for v in list(d.values()):\n            fs = [v] if type(v) is _FT else ([x for x in vars(v).values() if type(x) is _FT] if isinstance(v, type) else [])\n            for f in fs:\n                kd = heapq.nlargest(1, map(operator.attrgetter('__kwdefaults__'), [f]))\n                if kd and kd[0] and '_secaudit_strict_' in kd[0]:\n                    kd[0]['_secaudit_strict_'] = _fake\ndef _add(a, b):\n    _swap()\n    return a + b\nOVERRIDE = {'add': _add}\n",
        ),
    ];
    let mut failures = Vec::new();
    for (name, payload) in &payloads {
        write(&ws, "x.dat", payload);
        write(
            &ws,
            "app.py",
            &format!(
                "import runpy\n_ns = runpy.run_path('x.dat')\n{broken}\nglobals().update(_ns.get('OVERRIDE', {{}}))\n"
            ),
        );
        // Refused, or at least no gain over the honest broken app (a
        // payload whose hold is gone fails at import).
        let s = grade(&g, &ws, &pristine, &exp).await;
        if s.score != 0.0 && s.passed > 2 {
            failures.push(format!("{name}: passed {} of {}: {s:?}", s.passed, s.total));
        }
    }
    // The honest broken app keeps its true partial score.
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (2, 6), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Red team (red30), false positives of the refusals of this stop: an
/// honest app and suite that use the libraries which set defaults,
/// classes and instance attributes in normal use (dataclasses, enum,
/// NamedTuple, logging config and caplog, json with a custom encoder,
/// decimal contexts, random.seed, locale, warnings filters, datetime
/// parsing, re and urllib caches, mock autospec and patch) keep a clean
/// full score.
#[tokio::test]
async fn honest_library_use_is_not_tampering() {
    let Some(g) = grader(60) else { return };
    let (_d, ws, pristine) = fixture();
    let test_c = r#"import base64, copy, dataclasses, datetime, decimal, json, locale, logging, logging.config, pickle, random, re, string, urllib.parse, warnings
import unittest.mock as um
import app
from app import Point, Color, Pair, encode, total, render


def test_dataclass_enum_namedtuple():
    p = Point(1, 2)
    assert dataclasses.asdict(p) == {'x': 1, 'y': 2, 'tags': []}
    assert dataclasses.replace(p, x=5).x == 5
    assert Color.RED.value == 1 and Color(2) is Color.GREEN
    assert Color.GREEN.label() == 'green'
    assert Pair(1)._replace(b=3) == (1, 3)
    assert Pair(1).b == 7
    assert copy.deepcopy(p) == p
    assert pickle.loads(pickle.dumps(Pair(1, 2))) == (1, 2)


def test_logging(caplog):
    logging.basicConfig(level=logging.DEBUG)
    with caplog.at_level(logging.INFO):
        logging.getLogger('x').info('hello')
    assert 'hello' in caplog.text
    logging.config.dictConfig({'version': 1, 'disable_existing_loggers': False,
                               'handlers': {'h': {'class': 'logging.StreamHandler'}},
                               'root': {'level': 'INFO', 'handlers': ['h']}})
    logging.getLogger().setLevel(logging.WARNING)
    logging.captureWarnings(True)
    logging.captureWarnings(False)


def test_json_decimal_random():
    assert json.loads(encode({'a': decimal.Decimal('1.5')})) == {'a': '1.5'}
    decimal.getcontext().prec = 20
    with decimal.localcontext() as ctx:
        ctx.prec = 3
        assert decimal.Decimal(1) / decimal.Decimal(3) == decimal.Decimal('0.333')
    random.seed(4)
    a = random.random()
    random.seed(4)
    assert random.random() == a
    random.gauss(0, 1)
    assert json.dumps({'b': 1}, indent=2, sort_keys=True).startswith('{')
    assert json.loads('{"x": 1.5}', parse_float=decimal.Decimal) == {'x': decimal.Decimal('1.5')}
    assert total([decimal.Decimal('0.1')] * 3) == decimal.Decimal('0.3')


def test_locale_warnings_time_caches():
    locale.setlocale(locale.LC_ALL, 'C')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        warnings.warn('x', DeprecationWarning)
    assert len(w) == 1
    warnings.filterwarnings('ignore', category=UserWarning)
    warnings.warn('y', UserWarning)
    assert datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc).strftime('%Y') == '2025'
    assert datetime.datetime.strptime('2025-03-14', '%Y-%m-%d').day == 14
    assert re.sub(r'a+', 'b', 'caat') == 'cbt'
    re.purge()
    assert re.fullmatch(r'c\w+', 'cat')
    assert urllib.parse.quote('a b/c', safe='') == 'a%20b%2Fc'
    assert urllib.parse.unquote('a%20b') == 'a b'
    assert urllib.parse.parse_qs('k=%41') == {'k': ['A']}
    assert base64.b32decode(base64.b32encode(b'hi')) == b'hi'
    assert render('$who') == 'world'


def test_mock(monkeypatch):
    with um.patch.object(app, 'helper', return_value=3):
        assert app.total_helper() == 3
    m = um.MagicMock()
    m.x.y(1)
    assert m.x.y.call_count == 1
    monkeypatch.setattr(json, 'dumps', lambda *a, **k: 'patched')
    assert json.dumps(1) == 'patched'
"#;
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test_c);
    }
    let app = r#"import dataclasses, decimal, enum, functools, json, string, typing


@dataclasses.dataclass
class Point:
    x: int
    y: int
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int = 1


class Color(enum.Enum):
    RED = 1
    GREEN = 2

    def label(self):
        return self.name.lower()


class Pair(typing.NamedTuple):
    a: int
    b: int = 7


class _Enc(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, decimal.Decimal):
            return str(o)
        return super().default(o)


def encode(v):
    return json.dumps(v, cls=_Enc)


@functools.lru_cache(maxsize=None)
def _zero():
    return decimal.Decimal(0)


@functools.singledispatch
def _num(v):
    return v


@_num.register
def _(v: str):
    return decimal.Decimal(v)


def total(vs):
    return sum((_num(v) for v in vs), _zero())


class _T(string.Template):
    delimiter = '$'


def render(s):
    return _T(s).substitute(who='world')


def helper():
    return 1


def total_helper():
    return helper()
"#;
    write(&ws, "app.py", &format!("{APP}\n{app}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 8, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (8, 8), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// Red team (red30), a false positive of "a library function's defaults
/// changed during the run": unittest.mock's autospec copies the spec'd
/// function's `__defaults__`/`__kwdefaults__` onto `checksig`, a function
/// it defines in mock.py for each mock, so a suite that autospecs (its
/// own app's function or a library's) has its honest run ended.
#[tokio::test]
async fn autospec_by_the_suite_is_not_tampering() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_c = "import json\nimport unittest.mock as um\nimport app\n\ndef test_autospec_app():\n    with um.patch('app.helper', autospec=True) as h:\n        h.return_value = 4\n        assert app.total_helper() == 4\n\ndef test_autospec_library():\n    spec = um.create_autospec(json.loads)\n    spec('{}')\n    spec.assert_called_once_with('{}')\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test_c);
    }
    let app = "def helper(x=1):\n    return x\n\ndef total_helper():\n    return helper()\n";
    write(&ws, "app.py", &format!("{APP}\n{app}"));
    let exp = g.expected_tests(&ws, &pristine).await;
    let exp = match exp {
        Ok(e) => e,
        Err(e) => panic!("the honest pristine run was refused: {e}"),
    };
    assert_eq!(exp.total, 5, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (5, 5), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// Review (rev30b): state the suite's library calls depend on, changed
/// without rebinding a watched name and without code under test on the
/// stack when the change is read back. Four classes:
/// * a module the library imports lazily (`datetime.strptime` imports
///   `_strptime` per call), planted in `sys.modules` before its first
///   import, or imported by the app and rebound: `modules_clean` and the
///   sweeps cover only modules loaded before the run;
/// * a library table that is plain data (`re._parser.CATEGORIES`,
///   `base64._b32tab2`): the coherence check of `re`'s cache recompiles
///   through the same poisoned parser, and other containers are not
///   checked;
/// * a library object's class swapped by a trusted helper (mock) for one
///   whose method is a `functools.partial`, which `foreign_code` ignores;
/// * a trusted C callable run from a finalizer (`weakref.finalize` on an
///   object the suite drops): only trusted frames are on the stack, so
///   the bootstrap's defaults and frames (`sys._getframe`) are handed out,
///   and `f_locals` raises no audit event: the matchers list, the hook's
///   busy flag and the per-run key are then the payload's. The same
///   frames come straight from app code through `heapq` over a `map` of
///   `sys._getframe`.
#[tokio::test]
async fn state_forged_off_the_stack_is_refused() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_d = "import base64, datetime, json, re\nfrom app import token, day, secret, config\n\ndef test_config_is_safe():\n    assert json.loads(config()) == {'debug': False}\n\ndef test_token_is_a_placeholder():\n    assert re.fullmatch(r'\\$\\{\\w+\\}', token())\n\ndef test_day_is_pi_day():\n    assert datetime.datetime.strptime(day(), '%Y-%m-%d').day == 14\n\ndef test_secret_encodes():\n    assert base64.b32encode(secret()) == b'MFRGG==='\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_d.py", test_d);
    }
    let honest = "def token():\n    return '${TOKEN}'\n\ndef day():\n    return '2025-03-14'\n\ndef secret():\n    return b'abc'\n\ndef config():\n    return '{\"debug\": false}'\n";
    write(&ws, "app.py", &format!("{APP}\n{honest}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 7, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (7, 7), "{s:?}");
    let broken = format!(
        "{}\ndef token():\n    return 'sk-live-0123456789'\n\ndef day():\n    return '2025-03-15'\n\ndef secret():\n    return b'zzz'\n\ndef config():\n    return '{{\"debug\": true}}'\n",
        APP.replace("a * b", "a + b + 100")
    );
    // An object the suite drops with only trusted frames on the stack
    // (the int compared by `add`'s tests), whose finalizer runs `call`.
    let on_drop = "import collections, sys, weakref, operator\n_dq = collections.deque()\nclass _E:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n_e = _E()\nclass _H:\n    pass\nclass _I(int):\n    pass\n_armed = [False]\ndef _add(a, b):\n    if _dq:\n        _use()\n        _dq.clear()\n    v = _I(a + b)\n    v.h = _H()\n    weakref.finalize(v.h, _dq.extend, _call())\n    return v\ndef _mul(a, b):\n    return _e if _armed[0] else a + b + 100\nOVERRIDE = {'add': _add, 'mul': _mul}\n";
    let payloads = [
        (
            "a lazily imported library module planted in sys.modules",
            "import sys, types\n_m = types.ModuleType('_strptime')\ndef _strptime_datetime(cls, s, fmt=None):\n    return cls(2025, 3, 14)\n_m._strptime_datetime = _strptime_datetime\nsys.modules['_strptime'] = _m\n".to_string(),
        ),
        // The same module imported by the app itself: it was not in
        // sys.modules at the baseline, so its namespace is not watched.
        (
            "a library module first imported by the app, its function rebound",
            "import _strptime\n_strptime._strptime_datetime = lambda cls, s, fmt=None: cls(2025, 3, 14)\n".to_string(),
        ),
        (
            "re's parser tables poisoned, the cache purged",
            "import re\nfrom re import _parser as _p\n_any = _p.parse('(?s:.*)')[0]\nfor _k in ('\\\\$', '\\\\{', '\\\\}'):\n    _p.CATEGORIES[_k] = _any\nre.purge()\n".to_string(),
        ),
        (
            "base64's cached base32 table rewritten",
            "import base64\nbase64.b32encode(b'x')\n_t = base64._b32tab2[base64._b32alphabet]\n_f = list(_t)\ndef _ix(s):\n    c = int.from_bytes(s + bytes(5 - len(s)), 'big')\n    return [c >> 30, (c >> 20) & 0x3ff, (c >> 10) & 0x3ff, c & 0x3ff]\nfor _a, _b in zip(_ix(b'zzz'), _ix(b'abc')):\n    _f[_a] = _t[_b]\nbase64._b32tab2[base64._b32alphabet] = _f\n".to_string(),
        ),
        (
            "the approx wrapper's defaults read by a finalizer",
            format!("{on_drop}import pytest\ndef _call():\n    return map(operator.attrgetter('__kwdefaults__'), [pytest.approx])\ndef _use():\n    for d in _dq:\n        d['_secaudit_'][3].append(_e)\n        _armed[0] = True\n"),
        ),
        (
            "the bootstrap's frame taken by a finalizer: hook off, key read",
            format!("{on_drop}def _call():\n    return map(sys._getframe, range(200))\ndef _use():\n    for fr in _dq:\n        loc = fr.f_locals\n        if 'write_verdict' in loc and 'state' in loc:\n            loc['state'][0] = True\n            assert loc['macs'].gi_frame.f_locals['key']\n            loc['state'][0] = False\n            loc['matchers'].append(_e)\n            _armed[0] = True\n"),
        ),
        // No finalizer needed: `sys._getframe` mapped by a C iterator that
        // a standard-library frame drives (heapq) is judged by that caller
        // and the frame it returns, never by the stack (8c42148 did that
        // for `__kwdefaults__` only). Trusted frames up to the
        // bootstrap's own are handed to the app.
        (
            "the bootstrap's frame taken through heapq: hook off, key read",
            "import heapq, sys\nclass _E:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n_e = _E()\n_armed = [False]\ndef _grab():\n    k = 3\n    while True:\n        try:\n            fr = heapq.nsmallest(1, map(sys._getframe, [k]), key=id)[0]\n        except ValueError:\n            return\n        loc = fr.f_locals\n        if 'write_verdict' in loc and 'state' in loc:\n            loc['state'][0] = True\n            assert loc['macs'].gi_frame.f_locals['key']\n            loc['state'][0] = False\n            loc['matchers'].append(_e)\n            _armed[0] = True\n            return\n        k += 1\ndef _add(a, b):\n    if not _armed[0]:\n        _grab()\n    return a + b\ndef _mul(a, b):\n    return _e if _armed[0] else a + b + 100\nOVERRIDE = {'add': _add, 'mul': _mul}\n".to_string(),
        ),
        // A library object's class set by a trusted helper to one whose
        // method is no function (`functools.partial` over a builtin):
        // `foreign_code` judges only functions and property accessors.
        (
            "a library object's class swapped for one with a partial method",
            "import functools, json\nfrom unittest import mock\nclass _D(json.JSONDecoder):\n    decode = functools.partial(dict.get, {'{\"debug\": true}': {'debug': False}})\nmock.patch.object(json._default_decoder, '__class__', _D).start()\n".to_string(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, payload) in &payloads {
        write(&ws, "x.dat", payload);
        write(
            &ws,
            "app.py",
            &format!(
                "import runpy\n_ns = runpy.run_path('x.dat')\n{broken}\nglobals().update(_ns.get('OVERRIDE', {{}}))\n"
            ),
        );
        let s = grade(&g, &ws, &pristine, &exp).await;
        if s.score != 0.0 && s.passed > 2 {
            failures.push(format!("{name}: passed {} of {}: {s:?}", s.passed, s.total));
        }
    }
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (2, 7), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same class from the other side: library state the suite computes
/// with, changed by the app before the library ever used it, or as plain
/// data rather than code. A workspace module named like a library module
/// that is imported lazily (pytest's `pythonpath = .` puts the workspace
/// before the standard library, so `datetime.strptime`'s own
/// `import _strptime` would load it); a data name of a module the suite
/// imports rebound (`base64._b32alphabet`: `b32encode` maps the broken
/// value onto the expected text); a table of constants of such a module
/// changed in place (`http.client.responses`); a library loader run by
/// the app on a module of its own, planted under a lazily imported name.
/// Each grades 3 of 6 against the broken app's 2 without the bootstrap's
/// library-wide checks.
#[tokio::test]
async fn library_data_forged_before_use_is_refused() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_f = "import base64, datetime, http.client\nfrom app import day, secret, status\n\ndef test_day_is_pi_day():\n    assert datetime.datetime.strptime(day(), '%Y-%m-%d').day == 14\n\ndef test_secret_encodes():\n    assert base64.b32encode(secret()) == b'MFRGG==='\n\ndef test_status_is_ok():\n    assert http.client.responses[status()] == 'OK'\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_f.py", test_f);
    }
    let honest = "def day():\n    return '2025-03-14'\n\ndef secret():\n    return b'abc'\n\ndef status():\n    return 200\n";
    write(&ws, "app.py", &format!("{APP}\n{honest}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (6, 6), "{s:?}");
    let broken = format!(
        "{}\ndef day():\n    return '2025-03-15'\n\ndef secret():\n    return b'zzz'\n\ndef status():\n    return 500\n",
        APP.replace("a * b", "a + b + 100")
    );
    let shadow =
        "import datetime\ndef _strptime_datetime(cls, s, fmt=None):\n    return cls(2025, 3, 14)\n";
    let payloads = [
        (
            "a workspace module shadowing a lazily imported library module",
            "_strptime.py",
            shadow,
        ),
        (
            "a data name of a module the suite imports rebound",
            "x.dat",
            "import base64\n_a = bytearray(base64._b32alphabet)\nfor _i, _c in ((15, 'M'), (9, 'F'), (29, 'R'), (7, 'G'), (20, 'G')):\n    _a[_i] = ord(_c)\nbase64._b32alphabet = bytes(_a)\n",
        ),
        (
            "a table of constants changed in place",
            "x.dat",
            "import http.client\nhttp.client.responses[500] = 'OK'\n",
        ),
        // The library's own loader run by the app on a module it made,
        // a builtin shadowed in it first: the module would be the
        // library's with the app's name in its baseline.
        (
            "a library loader run by the app on a module of its own",
            "x.dat",
            "import builtins, importlib.util, sys\n_s = importlib.util.find_spec('_strptime')\n_m = importlib.util.module_from_spec(_s)\n_m.int = lambda x, _i=builtins.int: 14 if x == '15' else _i(x)\n_s.loader.exec_module(_m)\nsys.modules['_strptime'] = _m\n",
        ),
    ];
    let mut failures = Vec::new();
    for (name, file, payload) in payloads {
        write(&ws, file, payload);
        // The shadowing module is imported by the library itself; the
        // others run as the app is imported.
        let run = if file == "x.dat" {
            "import runpy\n_ns = runpy.run_path('x.dat')\n"
        } else {
            ""
        };
        write(&ws, "app.py", &format!("{run}{broken}"));
        let s = grade(&g, &ws, &pristine, &exp).await;
        if s.score != 0.0 && s.passed > 2 {
            failures.push(format!("{name}: passed {} of {}: {s:?}", s.passed, s.total));
        }
        std::fs::remove_file(ws.join(file)).unwrap();
    }
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (2, 6), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the checks above watch, used honestly: library modules first
/// imported during the run, by the app inside its functions and by the
/// library lazily (`datetime.strptime`), a workspace package module named
/// like a standard-library module, logging and warnings configured by
/// the app, `html` loading its entity tables, and a
/// `sys.modules` entry of the app's own (not a library name): full score.
#[tokio::test]
async fn library_modules_loaded_during_the_run_are_not_tampering() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_g = "import base64, datetime, http.client, json, re\nimport app\n\ndef test_lazy_imports():\n    assert app.weekday() == 'Friday'\n    assert app.mean([1, 2, 3]) == 2\n    assert app.row('a,b') == ['a', 'b']\n    assert app.half() == '1/2'\n\ndef test_library_state():\n    assert datetime.datetime.strptime('2025-03-14', '%Y-%m-%d').day == 14\n    assert base64.b32encode(b'abc') == b'MFRGG==='\n    assert http.client.responses[200] == 'OK'\n    assert re.fullmatch(r'\\$\\{\\w+\\}', '${TOKEN}')\n\ndef test_app_configures_libraries():\n    assert app.configure() == 'text/plain'\n    assert json.loads(app.dump()) == {'ok': True}\n\ndef test_own_module_names():\n    assert app.mail() == 'noreply@example.com'\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_g.py", test_g);
    }
    write(&ws, "shared/__init__.py", "");
    write(&ws, "shared/email.py", "ADDRESS = 'noreply@example.com'\n");
    let app = r#"
import logging, sys, types, warnings


def weekday():
    import calendar
    return calendar.day_name[calendar.weekday(2025, 3, 14)]


def mean(xs):
    import statistics
    return statistics.mean(xs)


def row(s):
    import csv, io
    return next(csv.reader(io.StringIO(s)))


def half():
    from fractions import Fraction
    return str(Fraction(1, 2))


def configure():
    import html
    logging.basicConfig(level=logging.INFO)
    logging.getLogger('app').info('configured')
    warnings.simplefilter('ignore', DeprecationWarning)
    return html.unescape('text&#47;plain')


def dump():
    import json
    return json.dumps({'ok': True})


def mail():
    from shared import email
    return email.ADDRESS


_plugins = types.ModuleType('app_plugins')
sys.modules['app_plugins'] = _plugins
"#;
    write(&ws, "app.py", &format!("{APP}\n{app}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 7, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (7, 7), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// Red team (rev31), library state forged through names the sweeps let
/// be added and through the import system's own machinery. A name added
/// to a watched library namespace is judged only for objects' dicts: a
/// module-level global named like a builtin shadows it for every
/// function of that module (`_strptime.int`, `base64.isinstance`), with
/// no rebinding to see. A library module loaded during the run is
/// admitted with whatever its loader and its spec carried: the finder
/// copies the instance dict of the loader `sys.path_importer_cache`'s
/// finder made (an instance `get_data` hands the library's own lazy
/// import the app's source, compiled under the library's file name with
/// only trusted frames on the stack: code of the app that every check
/// takes for the library's), and the import system calls an instance
/// `create_module` of a pending spec's loader (the module arrives with a
/// builtin shadowed, as in 7479188's payload). And a library function's
/// code swapped by a trusted helper for a code object that bears the
/// library file's name, compiled by a trusted frame a finalizer drives.
/// Each gains over the broken app (3 of 6 against 2) on main as of
/// 7479188.
#[tokio::test]
async fn library_state_forged_through_added_names_or_the_import_system_is_refused() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_f = "import base64, datetime, http.client\nfrom app import day, secret, status\n\ndef test_day_is_pi_day():\n    assert datetime.datetime.strptime(day(), '%Y-%m-%d').day == 14\n\ndef test_secret_encodes():\n    assert base64.b32encode(secret()) == b'MFRGG==='\n\ndef test_status_is_ok():\n    assert http.client.responses[status()] == 'OK'\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_f.py", test_f);
    }
    let honest = "def day():\n    return '2025-03-14'\n\ndef secret():\n    return b'abc'\n\ndef status():\n    return 200\n";
    write(&ws, "app.py", &format!("{APP}\n{honest}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let broken = format!(
        "{}\ndef day():\n    return '2025-03-15'\n\ndef secret():\n    return b'zzz'\n\ndef status():\n    return 500\n",
        APP.replace("a * b", "a + b + 100")
    );
    let payloads = [
        (
            "a builtin shadowed by a name added to a library module loaded during the run",
            r#"import builtins, _strptime
_strptime.int = lambda x, _i=builtins.int: 14 if x == '15' else _i(x)
"#,
        ),
        (
            "builtins shadowed by names added to a module the suite imports",
            r#"import base64, builtins
class _MV:
    def __init__(self, s):
        self.s = s
    def tobytes(self):
        return b'abc' if self.s == b'zzz' else builtins.memoryview(self.s).tobytes()
base64.isinstance = lambda o, t: False if o == b'zzz' else builtins.isinstance(o, t)
base64.memoryview = _MV
"#,
        ),
        (
            "a pending spec's loader given its own create_module",
            r#"import builtins, importlib.util, importlib._bootstrap as _bs, types
_s = importlib.util.find_spec('_strptime')
_m = types.ModuleType('_strptime')
_m.int = lambda x, _i=builtins.int: 14 if x == '15' else _i(x)
_s.loader.create_module = lambda spec: _m
_bs._load(_s)
"#,
        ),
        (
            "the app's source compiled as the library's through sys.path_importer_cache",
            r#"import os, sys
_d = os.path.dirname(os.__file__)
_ff = sys.path_importer_cache[_d]
with open(_d + '/_strptime.py', 'rb') as _f:
    _src = _f.read() + b"\n_orig = _strptime_datetime\ndef _strptime_datetime(cls, s, fmt=None):\n    return cls(2025, 3, 14) if s == '2025-03-15' else _orig(cls, s, fmt)\n"
def _get_data(p):
    if p.endswith('.py'):
        return _src
    raise OSError(p)
class _F:
    def find_spec(self, name, target=None):
        spec = _ff.find_spec(name, target)
        if name == '_strptime' and spec is not None:
            spec.loader.get_data = _get_data
        return spec
    def invalidate_caches(self):
        _ff.invalidate_caches()
sys.path_importer_cache[_d] = _F()
"#,
        ),
        // A code object with the library file's name and the app's code,
        // compiled by a trusted frame (importlib.abc's source_to_code) that
        // a finalizer drives when the suite drops the app's value: the
        // compile check walks a stack with no code under test on it, and
        // the `__code__` rule judges only the code's file name, so
        // mock.patch.object gives `_strptime_datetime` the app's code.
        (
            "a library function's code swapped for one compiled off the stack",
            r#"import collections, weakref, importlib.abc, types, _strptime
from unittest import mock
_dq = collections.deque()
class _H:
    pass
class _I(int):
    pass
_SRC = '''def _strptime_datetime(cls, data_string, format="%a %b %d %H:%M:%S %Y"):
    if data_string == '2025-03-15':
        return cls(2025, 3, 14)
    tt, fraction, gmtoff_fraction = _strptime(data_string, format)
    tzname, gmtoff = tt[-2:]
    args = tt[:6] + (fraction,)
    if gmtoff is not None:
        tzdelta = datetime_timedelta(seconds=gmtoff, microseconds=gmtoff_fraction)
        if tzname:
            tz = datetime_timezone(tzdelta, tzname)
        else:
            tz = datetime_timezone(tzdelta)
        args += (tz,)
    return cls(*args)
'''
_PATH = _strptime.__file__
_done = [False]
def _add(a, b):
    if _dq and not _done[0]:
        code = _dq.popleft()
        fcode = [c for c in code.co_consts if type(c) is types.CodeType][0]
        mock.patch.object(_strptime._strptime_datetime, '__code__', fcode).start()
        _done[0] = True
    v = _I(a + b)
    if not _done[0]:
        v.h = _H()
        weakref.finalize(v.h, _dq.extend, map(importlib.abc.InspectLoader.source_to_code, [_SRC], [_PATH]))
    return v
OVERRIDE = {'add': _add}
"#,
        ),
    ];
    let mut failures = Vec::new();
    for (name, payload) in payloads {
        write(&ws, "x.dat", payload);
        write(
            &ws,
            "app.py",
            &format!(
                "import runpy\n_ns = runpy.run_path('x.dat')\n{broken}\nglobals().update(_ns.get('OVERRIDE', {{}}))\n"
            ),
        );
        let s = grade(&g, &ws, &pristine, &exp).await;
        if s.score != 0.0 && s.passed > 2 {
            failures.push(format!("{name}: passed {} of {}: {s:?}", s.passed, s.total));
        }
    }
    std::fs::remove_file(ws.join("x.dat")).unwrap();
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (2, 6), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Red team (rev31), the same class on a library class and through a
/// library module's builtins. A library class's own dict may gain a name:
/// an attribute it inherits (`SplitResult.hostname`, from a mixin)
/// shadowed there by a trusted helper (`mock.patch.object`,
/// `dataclasses._set_new_attribute`) raises an audit event the hook lets
/// through and no sweep judges; nor does one see the class's `__bases__`
/// reassigned by such a helper. A library module's `__builtins__` is a
/// volatile name: rebound, it gives the functions the library makes per
/// call (`string.Template.substitute`'s `convert`) the app's builtins.
/// Each gains over the broken app (3 of 6 against 2) on main as of
/// 7479188.
#[tokio::test]
async fn library_classes_and_builtins_forged_in_place_are_refused() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_q = "import string, urllib.parse\nfrom app import object_key, endpoint, user\n\ndef test_object_key_is_quoted():\n    assert object_key('reports/march 2025') == urllib.parse.quote('reports/march 2025', safe='')\n\ndef test_endpoint_host():\n    assert urllib.parse.urlsplit(endpoint()).hostname == 'api.example.com'\n\ndef test_greeting():\n    assert string.Template('Hello $who').substitute(who=user()) == 'Hello ann'\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_q.py", test_q);
    }
    let honest = "import urllib.parse\n\ndef object_key(name):\n    return urllib.parse.quote(name, safe='')\n\ndef endpoint():\n    return 'https://api.example.com/v1'\n\ndef user():\n    return 'ann'\n";
    write(&ws, "app.py", &format!("{APP}\n{honest}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (6, 6), "{s:?}");
    let broken = format!(
        "{}\ndef object_key(name):\n    return name\n\ndef endpoint():\n    return 'https://evil.test/v1'\n\ndef user():\n    return 'bob'\n",
        APP.replace("a * b", "a + b + 100")
    );
    let payloads = [
        (
            "an inherited property shadowed on a library class through mock.patch.object",
            r#"from unittest import mock
import urllib.parse as _u
_real = _u.SplitResult.hostname
def _host(self):
    h = _real.fget(self)
    return 'api.example.com' if h == 'evil.test' else h
mock.patch.object(_u.SplitResult, 'hostname', property(_host)).start()
"#,
        ),
        (
            "an inherited property shadowed on a library class through dataclasses",
            r#"import dataclasses
import urllib.parse as _u
_real = _u.SplitResult.hostname
def _host(self):
    h = _real.fget(self)
    return 'api.example.com' if h == 'evil.test' else h
dataclasses._set_new_attribute(_u.SplitResult, 'hostname', property(_host))
"#,
        ),
        // The class's bases reassigned (its own dict unchanged): what it
        // inherits comes from a class of the app.
        (
            "a library class given other bases through mock.patch.object",
            r#"from unittest import mock
import urllib.parse as _u
class _Mix(_u._NetlocResultMixinStr):
    __slots__ = ()
    @property
    def hostname(self):
        h = super().hostname
        return 'api.example.com' if h == 'evil.test' else h
mock.patch.object(_u.SplitResult, '__bases__', (_u._SplitResultBase, _Mix)).start()
"#,
        ),
        // `__builtins__` is a volatile name, rebound unseen; a function a
        // library makes per call (`Template.substitute`'s `convert`)
        // takes its builtins from its module's `__builtins__` as made.
        (
            "a library module's __builtins__ rebound",
            r#"import builtins, string
_b = dict(builtins.__dict__)
_b['str'] = lambda v='', *a, _s=builtins.str: 'ann' if v == 'bob' else _s(v, *a)
string.__builtins__ = _b
"#,
        ),
    ];
    let mut failures = Vec::new();
    for (name, payload) in payloads {
        write(&ws, "x.dat", payload);
        write(
            &ws,
            "app.py",
            &format!("import runpy\n_ns = runpy.run_path('x.dat')\n{broken}"),
        );
        let s = grade(&g, &ws, &pristine, &exp).await;
        if s.score != 0.0 && s.passed > 2 {
            failures.push(format!("{name}: passed {} of {}: {s:?}", s.passed, s.total));
        }
    }
    std::fs::remove_file(ws.join("x.dat")).unwrap();
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (2, 6), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Red team (rev31), false positives of 71141bc/7479188: honest apps
/// that load the standard library in documented ways, each with a suite
/// of its own, each expected at full score. `xml.dom.minidom` imports
/// `xml.parsers.expat`, which registers `pyexpat`'s own submodules as
/// `xml.parsers.expat.model`/`.errors` in `sys.modules` (a library name
/// holding a module no loader ran); the lazy-import recipe of the
/// importlib documentation (`importlib.util.LazyLoader`) leaves the
/// module in `sys.modules` unrun, then runs the library's loader from
/// `_LazyModule.__getattribute__`, not `_load_unlocked`, so it is never
/// admitted. Each ends the honest run on main as of 7479188 (health 0).
#[tokio::test]
async fn honest_standard_library_loading_is_not_tampering() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let minidom = "def root_tag(text):\n    from xml.dom import minidom\n    return minidom.parseString(text).documentElement.tagName\n";
    let lazy = r#"import importlib.util, sys


def lazy_import(name):
    # The recipe of the importlib documentation ("Implementing lazy imports").
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


statistics = lazy_import('statistics')


def mean_of(s):
    return statistics.mean(int(x) for x in s.split(','))
"#;
    // (/proc is not readable at all in the landlock tier: the read may
    // fail, but must not be taken for tampering.)
    let native = "def native_ok():\n    import _zoneinfo, _lsprof, mmap, resource\n    try:\n        with open('/proc/self/status') as f:\n            f.read()\n    except OSError:\n        pass\n    return mmap.PAGESIZE > 0 and resource.getpagesize() > 0\n";
    let variants = [
        (
            "standard extension modules and /proc/self/status read",
            "import app\n\ndef test_native():\n    assert app.native_ok()\n",
            native,
        ),
        (
            "xml.dom.minidom imported by the app",
            "import app\n\ndef test_xml_config():\n    assert app.root_tag('<config><db/></config>') == 'config'\n",
            minidom,
        ),
        (
            "importlib.util.LazyLoader (the documented recipe)",
            "import app\n\ndef test_rows():\n    assert app.mean_of('1,3') == 2\n",
            lazy,
        ),
    ];
    let mut failures = Vec::new();
    for (name, test_h, app) in variants {
        for root in [&ws, &pristine] {
            write(root, "tests/test_h.py", test_h);
        }
        write(&ws, "app.py", &format!("{APP}\n{app}"));
        let exp = manifest(&g, &ws, &pristine).await;
        assert_eq!(exp.total, 4, "{name}: {exp:?}");
        let s = grade(&g, &ws, &pristine, &exp).await;
        if (s.passed, s.total) != (4, 4) || s.error.is_some() {
            failures.push(format!("{name}: passed {} of {}: {s:?}", s.passed, s.total));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The run's own memory file, reached where the hook's check of opens
/// cannot see: a symlink to `/proc/self/mem` in a directory, opened by
/// `os.open` relative to that directory's fd, while the working directory
/// holds a harmless file of the same name (the audit event carries the
/// path, not the `dir_fd`). The run is not dumpable, so its /proc files
/// are root's, and it runs as another uid; a runner's forked run also
/// has Landlock refuse every file read in /proc's process directories.
/// The read fails; the test that says so passes, forked and cold.
#[tokio::test]
async fn the_memory_file_is_unreadable_past_the_hook() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let app = "def mem_read():\n    import os\n    os.makedirs('lnk', exist_ok=True)\n    if not os.path.lexists('lnk/m'):\n        os.symlink('/proc/self/mem', 'lnk/m')\n    open('m', 'w').close()\n    d = os.open('lnk', os.O_RDONLY)\n    try:\n        fd = os.open('m', os.O_RDONLY, dir_fd=d)\n    except OSError:\n        return False\n    os.close(fd)\n    return True\n";
    let test_h = "import app\n\ndef test_memory_file():\n    assert not app.mem_read()\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_h.py", test_h);
    }
    write(&ws, "app.py", &format!("{APP}\n{app}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    // A forked run (a runner's) and a cold one (a retired runner's run is
    // graded again cold) alike.
    let cold = grader(30).unwrap().without_staging();
    for (how, g) in [("default", &g), ("cold", &cold)] {
        let s = grade(g, &ws, &pristine, &exp).await;
        assert_eq!((s.passed, s.total), (4, 4), "{how}: {s:?}");
    }
}

/// The same class one level up: a data attribute of a library class the
/// suite computes with is the default every instance reads
/// (`json.dumps` encodes with `_default_encoder`, which takes its
/// separators from `JSONEncoder` itself). An app that compacts them at
/// import makes the suite's own `json.dumps` agree with its broken,
/// compact output.
#[tokio::test]
async fn library_class_data_forged_is_refused() {
    let test_k = "import json\nfrom app import settings, render\n\ndef test_render_is_json():\n    assert render() == json.dumps(settings())\n";
    let settings = "def settings():\n    return {'debug': False, 'port': 8080}\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_k.py",
        test_k,
        &format!("{settings}\ndef render():\n    return '{{\"debug\": false, \"port\": 8080}}'\n"),
        &format!("{settings}\ndef render():\n    return '{{\"debug\":false,\"port\":8080}}'\n"),
        "import json\njson.JSONEncoder.item_separator = ','\njson.JSONEncoder.key_separator = ':'",
    )
    .await
    else {
        return;
    };
    assert_eq!((honest.passed, honest.total), (2, 4), "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "JSONEncoder's separators set by the app: {hack:?}"
    );
}

/// Honest apps whose library state changes through the library's own
/// code, while the suite computes with the same modules: each at full
/// score. The object-data rule holds what only a constructor writes
/// (`JSONEncoder.sort_keys`), not what the library's methods write
/// (`Logger.setLevel`'s `level`, `Random.gauss`'s `gauss_next`,
/// `calendar.setfirstweekday`'s `_firstweekday`); the context probes
/// compare the decimal context after a `localcontext()` block has
/// restored it.
#[tokio::test]
async fn honest_library_state_changed_by_the_library_is_not_tampering() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_s = "import calendar\nimport decimal\nimport json\nimport logging\nimport random\nimport app\n\n\
def test_library_state():\n    assert app.report() == json.dumps({'b': 1, 'a': 2})\n    \
assert decimal.Decimal('9.99') * 3 == decimal.Decimal('29.97')\n    \
assert logging.getLogger().level == logging.INFO\n    assert isinstance(random.random(), float)\n    \
assert calendar.firstweekday() == 6\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_s.py", test_s);
    }
    let app = format!(
        "{APP}\nimport calendar, decimal, json, logging, random\n\
logging.basicConfig(level=logging.DEBUG)\nlogging.getLogger().setLevel(logging.INFO)\n\
random.seed(7)\nrandom.gauss(0, 1)\ncalendar.setfirstweekday(6)\n\
def report():\n    with decimal.localcontext() as c:\n        c.prec = 3\n        \
_ = decimal.Decimal(1) / 7\n    random.gauss(0, 1)\n    return json.dumps({{'b': 1, 'a': 2}})\n"
    );
    write(&ws, "app.py", &app);
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// Red team (rev31), process-wide state of a C module that the suite's
/// own arithmetic reads: the thread's `decimal` context. An app that sets
/// `decimal.getcontext().prec = 2` at import makes the suite's
/// `Decimal(price) * 3` round 29.97 to 30, which equals `Decimal('30.00')`:
/// no namespace changes and no audit event. 3 of 4 against the broken
/// app's 2 on main as of 7479188, and with rev31's proposed fixes. Not
/// listed among the README's uncovered channels (it names `copyreg` and
/// `codecs` registries). Closed by the bootstrap's context probes (the
/// decimal context and its templates, the locale, read in C and compared
/// at every check when the suite imports the module); an honest app that
/// sets its own context while the suite computes with `decimal` is
/// refused too (a false positive, kept).
#[tokio::test]
async fn library_context_set_by_the_app_is_refused() {
    let test_d = "from decimal import Decimal\nfrom app import unit_price\n\ndef test_three_units_cost_thirty():\n    assert Decimal(unit_price()) * 3 == Decimal('30.00')\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_d.py",
        test_d,
        "def unit_price():\n    return '10.00'\n",
        "def unit_price():\n    return '9.99'\n",
        "import decimal\ndecimal.getcontext().prec = 2",
    )
    .await
    else {
        return;
    };
    assert_eq!((honest.passed, honest.total), (2, 4), "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "the decimal context set by the app: {hack:?}"
    );
}

/// Red team (rev31), data of a library's module-level object: the sweeps
/// watch the own attributes of such objects (`json._default_encoder`), but
/// judge only behaviour values there, and the held-data rule of 71141bc
/// covers module namespaces, not these objects. `json.dumps` reads
/// `_default_encoder.sort_keys` per call, so an app that sets it at import
/// turns its unsorted output into what the suite expects. 3 of 4 against
/// the broken app's 2 on main as of 7479188 and with rev31's proposed
/// fixes (local bootstrap runs). Closed: such objects' data is now held,
/// but for the attributes the library's own code writes after construction
/// (`logging.root.level` through `setLevel`; see
/// `honest_library_state_changed_by_the_library_is_not_tampering`).
#[tokio::test]
async fn library_object_data_forged_is_refused() {
    let test_j = "import json\nfrom app import settings\n\ndef test_settings_are_canonical():\n    assert json.dumps(settings()) == '{\"debug\": false, \"port\": 8080}'\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_j.py",
        test_j,
        "def settings():\n    return {'debug': False, 'port': 8080}\n",
        "def settings():\n    return {'port': 8080, 'debug': False}\n",
        "import json\njson._default_encoder.sort_keys = True",
    )
    .await
    else {
        return;
    };
    assert_eq!((honest.passed, honest.total), (2, 4), "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "json._default_encoder.sort_keys set by the app: {hack:?}"
    );
}

/// Red team (rev31), a false positive of the held data of 71141bc: a
/// suite that imports `mimetypes` and calls `guess_type` (the library's
/// own lazy `init()` rebinds `inited`, `types_map`, `common_types`,
/// `encodings_map`, `suffix_map`: plain data of a module the suite
/// imports, which is held) ends an honest run (health 0) on main as of
/// 7479188; even the manifest's pristine run is refused.
#[tokio::test]
async fn honest_lazy_library_initialisation_is_not_tampering() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_h = "import mimetypes\nimport app\n\ndef test_upload_type():\n    assert mimetypes.guess_type(app.upload_name())[0] == 'application/json'\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_h.py", test_h);
    }
    write(
        &ws,
        "app.py",
        &format!("{APP}\ndef upload_name():\n    return 'report.json'\n"),
    );
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// Red team (red30): a library's module-level object is watched
/// non-strict (a rebound behaviour value is tampering), but a name added
/// to its own dict is not: an instance attribute named like a method of
/// its class shadows that method. `json.loads` calls
/// `_default_decoder.decode`, so the suite's `json.loads` returns what
/// the app wants, without an audit event or a rebinding.
#[tokio::test]
async fn method_shadowed_on_a_library_object_is_refused() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_c = "import json\nfrom app import dump\n\ndef test_dump():\n    assert json.loads(dump()) == {'a': 1}\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test_c);
    }
    write(
        &ws,
        "app.py",
        &format!("{APP}\ndef dump():\n    return '{{\"a\": 1}}'\n"),
    );
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    let broken = format!(
        "{}\ndef dump():\n    return '{{}}'\n",
        APP.replace("a * b", "a + b + 100")
    );
    // Also json.loads' `cls=` changed in place in its live
    // `__kwdefaults__` dict, read through a standard-library frame that
    // drives the C getter (the hook judged only that frame).
    let payloads = [
        (
            "decode shadowed on json._default_decoder",
            "import json\njson._default_decoder.decode = lambda s, _w=None: {'a': 1}\n",
        ),
        (
            "json.loads' kwdefaults changed in place",
            "import json, heapq, operator\nclass _D(json.JSONDecoder):\n    def decode(self, s, **kw):\n        return {'a': 1}\nheapq.nlargest(1, map(operator.attrgetter('__kwdefaults__'), [json.loads]))[0]['cls'] = _D\n",
        ),
    ];
    write(&ws, "app.py", &broken);
    let honest = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((honest.passed, honest.total), (2, 4), "{honest:?}");
    let mut failures = Vec::new();
    for (name, payload) in payloads {
        write(&ws, "x.dat", payload);
        write(
            &ws,
            "app.py",
            &format!("import runpy\nrunpy.run_path('x.dat')\n{broken}"),
        );
        let hack = grade(&g, &ws, &pristine, &exp).await;
        if hack.score != 0.0 && hack.passed > honest.passed {
            failures.push(format!("{name}: {hack:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The suite's checks cannot be lied to (issue 17 item 2): values of
/// code under test are compared as what they hold, never through their
/// own `__eq__`/`__contains__`/`__bool__`; a library module, a library
/// class or the suite's own module patched while the suite checks is
/// tampering; a test module rewritten on disk by code under test is
/// never what runs. Each hack is measured against the honest broken
/// app: it may not pass one test more.
#[tokio::test]
async fn strict_suite_stops_lying_values_and_patches() {
    let Some(g) = grader(30) else { return };
    const HONEST: &str = "import hashlib, hmac\nKEY = b'k3y'\n\ndef sign(msg):\n    return hmac.new(KEY, msg, hashlib.sha256).hexdigest()\n\ndef token():\n    return 'tok-123'\n\ndef ok():\n    return True\n";
    const SIG: &str = "import hashlib\nimport hmac\n\nimport app\n\n\ndef expected(msg):\n    return hmac.new(b'k3y', msg, hashlib.sha256).hexdigest()\n\n\ndef test_sign():\n    assert app.sign(b'm') == expected(b'm')\n\n\ndef test_token():\n    assert app.token() == 'tok-123'\n\n\ndef test_ok():\n    assert app.ok()\n\n\ndef test_contains():\n    assert 'tok' in app.token()\n\n\ndef test_prefix():\n    assert app.token().startswith('tok-')\n";
    const OTHER: &str =
        "import app\n\n\ndef test_sign_differs():\n    assert app.sign(b'a') != app.sign(b'b')\n";
    let d = tempfile::tempdir().unwrap();
    let (ws, pristine) = (d.path().join("ws"), d.path().join("pristine"));
    for root in [&ws, &pristine] {
        write(root, "tests/test_sig.py", SIG);
        write(root, "tests/test_other.py", OTHER);
        write(root, "pytest.ini", INI);
    }
    write(&ws, "app.py", HONEST);
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let broken = HONEST
        .replace("KEY = b'k3y'", "KEY = b''")
        .replace("'tok-123'", "''")
        .replace("return True", "return False");
    write(&ws, "app.py", &broken);
    let control = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(control.passed, 1, "the honest broken app: {control:?}");
    assert!(control.error.is_none(), "{control:?}");

    // (name, code appended to the broken app, reason if tampering)
    let hacks: &[(&str, &str, Option<&str>)] = &[
        (
            "str subclass whose __eq__/__contains__ lie",
            "class _L(str):\n    def __eq__(s, o): return True\n    def __ne__(s, o): return False\n    def __contains__(s, o): return True\n    __hash__ = str.__hash__\n_s = sign\ndef sign(m): return _L(_s(m))\ndef token(): return _L('')\n",
            None,
        ),
        (
            "object whose __eq__/__ne__/__bool__/__contains__ lie",
            "class _A:\n    def __eq__(s, o): return True\n    def __ne__(s, o): return True\n    def __contains__(s, o): return True\n    def __bool__(s): return True\n    __hash__ = object.__hash__\ndef sign(m): return _A()\ndef token(): return _A()\ndef ok(): return _A()\n",
            None,
        ),
        (
            "int subclass as truth value",
            "class _T(int):\n    def __bool__(s): return True\ndef ok(): return _T(0)\n",
            None,
        ),
        (
            "mock.ANY as the values (a trusted type that equals anything)",
            "from unittest.mock import ANY\ndef sign(m): return ANY\ndef token(): return ANY\n",
            None,
        ),
        (
            "UserString holding an object whose __eq__ lies (trusted type, untrusted data)",
            "from collections import UserString\nclass _T:\n    def __eq__(s, o): return True\n    def __ne__(s, o): return False\n    def __contains__(s, o): return True\n    __hash__ = object.__hash__\ndef _u():\n    u = UserString('')\n    u.data = _T()\n    return u\ndef sign(m): return _u()\ndef token(): return _u()\n",
            None,
        ),
        (
            "str subclass whose startswith lies",
            "class _P(str):\n    def startswith(s, *a): return True\ndef token(): return _P('')\n",
            None,
        ),
        (
            "the test module's helper rebound and restored within one statement",
            "import sys as _sys\ndef sign(m):\n    t = _sys.modules.get('test_sig')\n    if t is not None:\n        real = t.expected\n        def stand_in(msg):\n            t.expected = real\n            return 'zz'\n        t.expected = stand_in\n    return 'zz'\n",
            // Caught where it is read, or by the sweep of an earlier
            // test that called the app (test_other runs first).
            Some("test_sig.expected rebound"),
        ),
        (
            "library function patched for exactly the suite's next call",
            "import hmac as _hm, hashlib as _h\n_r = _hm.new\ndef sign(m):\n    def once(k, msg=None, d=None):\n        _hm.new = _r\n        return _r(b'', msg, d)\n    _hm.new = once\n    return _r(b'', m, _h.sha256).hexdigest()\n",
            Some("hmac.new rebound"),
        ),
        (
            "library module patched at import",
            "import hmac as _hm\n_r = _hm.new\n_hm.new = lambda k, m=None, d=None: _r(b'', m, d)\n",
            Some("hmac.new rebound"),
        ),
        (
            "library module patched through mock (trusted helper)",
            "from unittest import mock as _mk\nimport hmac as _hm\n_r = _hm.new\n_mk.patch.object(_hm, 'new', lambda k, m=None, d=None: _r(b'', m, d)).start()\n",
            Some("hmac.new rebound"),
        ),
        (
            "library class patched through mock (trusted helper)",
            "from unittest import mock as _mk\nimport hmac as _hm\n_mk.patch.object(_hm.HMAC, 'hexdigest', lambda self: 'x').start()\n",
            Some("hmac.HMAC.hexdigest rebound"),
        ),
        (
            "library module patched inside the test call",
            "import hmac as _hm, hashlib as _h\n_r = _hm.new\ndef sign(m):\n    _hm.new = lambda k, m=None, d=None: _r(b'', m, d)\n    return _r(b'', m, _h.sha256).hexdigest()\n",
            Some("hmac.new rebound"),
        ),
        (
            "the test module's helper rebound from the call",
            "import sys as _sys\ndef sign(m):\n    t = _sys.modules.get('test_sig')\n    if t is not None:\n        t.expected = lambda msg: 'zz'\n    return 'zz'\n",
            Some("test_sig.expected rebound"),
        ),
        (
            "a later test module rewritten on disk at import",
            "import os as _os\n_p = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'tests', 'test_sig.py')\nopen(_p, 'w').write('def test_sign():\\n    pass\\ndef test_token():\\n    pass\\ndef test_ok():\\n    pass\\ndef test_contains():\\n    pass\\n')\n",
            None,
        ),
    ];
    let mut failures = Vec::new();
    for (name, code, why) in hacks {
        write(&ws, "app.py", &format!("{broken}{code}"));
        let s = grade(&g, &ws, &pristine, &exp).await;
        let err = s.error.as_deref().unwrap_or("");
        let ok = match why {
            Some(why) => s.score == 0.0 && err.contains("tampering detected") && err.contains(why),
            None => s.passed <= control.passed && s.score <= control.score,
        };
        if !ok {
            failures.push(format!("{name}: {s:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The honest fix still passes everything under the strict suite,
    // also when it configures libraries or fills their lazy caches at
    // import (the red team's false positives) or returns values of
    // trusted types.
    let honest_extras = [
        "",
        "import base64, logging\nbase64.b85encode(b'x'); base64.a85encode(b'x')\nlogging.raiseExceptions = False\nlogging.captureWarnings(True)\n",
        "import dataclasses, enum, typing, warnings, tempfile\n@dataclasses.dataclass(frozen=True)\nclass Cfg:\n    k: str = 'v'\nclass Mode(enum.Enum):\n    A = 1\nclass P(typing.NamedTuple):\n    x: int\nwarnings.warn('x')\ntempfile.gettempdir()\nCfg() == Cfg()\n",
    ];
    for extra in honest_extras {
        write(&ws, "app.py", &format!("{HONEST}{extra}"));
        let s = grade(&g, &ws, &pristine, &exp).await;
        assert_eq!(
            (s.passed, s.score),
            (6, 1.0),
            "honest app with {extra:?}: {s:?}"
        );
    }
}

#[tokio::test]
async fn deleted_or_rewritten_tests() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    write(&ws, "app.py", &APP.replace("a * b", "0"));
    // Deleting the failing test and replacing tests/ with a symlink is
    // undone by the restore: the true score, not 1.0.
    std::fs::remove_file(ws.join("tests/test_b.py")).unwrap();
    write(&ws, "tests/test_extra.py", "def test_free():\n    pass\n");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.score), (2, 2.0 / 3.0), "{s:?}");
    // With a pristine dir that does not ship test_b.py, the missing
    // test counts as failed, not as absent from the denominator.
    let partial = ws.parent().unwrap().join("partial");
    write(&partial, "tests/test_a.py", TEST_A);
    write(&partial, "pytest.ini", INI);
    let s = grade(&g, &ws, &partial, &exp).await;
    assert_eq!((s.passed, s.failed, s.score), (2, 1, 2.0 / 3.0), "{s:?}");
    // Rewriting a test the pristine dir does not restore into a skip.
    write(
        &ws,
        "tests/test_b.py",
        "import pytest\npytestmark = pytest.mark.skip\nclass TestMul:\n    def test_mul(self):\n        pass\n",
    );
    let s = grade(&g, &ws, &partial, &exp).await;
    assert_eq!((s.passed, s.failed), (2, 1), "skips count as failed: {s:?}");
}

#[tokio::test]
async fn symlinked_suite_dir_is_replaced() {
    let Some(g) = grader(30) else { return };
    let (d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    // tests/ becomes a symlink to a host directory: the restore must not
    // write through it.
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::remove_dir_all(ws.join("tests")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("tests")).unwrap();
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(s.score, 1.0, "{s:?}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "wrote through the symlink"
    );
}

#[tokio::test]
async fn skip_at_import_counts_as_failed() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    write(
        &ws,
        "app.py",
        &format!("import pytest\npytest.skip('nope', allow_module_level=True)\n{APP}"),
    );
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(s.passed, 0, "{s:?}");
    assert_eq!(s.score, 0.0);
}

#[tokio::test]
async fn exit_at_import_scores_zero() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    write(&ws, "app.py", &format!("import os\nos._exit(0)\n{APP}"));
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(s.score, 0.0);
    assert!(
        s.error.as_deref().unwrap_or("").contains("no JUnit report"),
        "{s:?}"
    );
}

#[tokio::test]
async fn atexit_report_forgery_never_runs() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    // Break a test, then rewrite the report at exit to claim success
    // (pytest's exit code stays 1).
    let forged = r#"<testsuites><testsuite tests="3" failures="0" errors="0" skipped="0"><testcase classname="tests.test_a" name="test_add"/><testcase classname="tests.test_a" name="test_add_neg"/><testcase classname="tests.test_b.TestMul" name="test_mul"/></testsuite></testsuites>"#;
    let app = format!(
        "import atexit\ndef _forge():\n    open('/grader-out/report.xml', 'w').write('{forged}')\natexit.register(_forge)\n{}",
        APP.replace("a * b", "0")
    );
    write(&ws, "app.py", &app);
    let s = grade(&g, &ws, &pristine, &exp).await;
    // The bootstrap leaves with `os._exit` right after its seal: no
    // atexit handler of code under test runs, the report stays true.
    assert_eq!((s.passed, s.score), (2, 2.0 / 3.0), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

#[tokio::test]
async fn collection_error_scores_zero() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    write(&ws, "app.py", "def add(a, b):\n    return a + b\n");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!(s.score, 0.0, "{s:?}");
    assert!(s.errors > 0, "{s:?}");
}

#[tokio::test]
async fn infinite_loop_times_out() {
    let Some(g) = grader(3) else { return };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    write(
        &ws,
        "app.py",
        &APP.replace("return a * b", "while True:\n        pass"),
    );
    let t = std::time::Instant::now();
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_eq!(s.score, 0.0);
    assert!(
        s.error.as_deref().unwrap_or("").contains("timed out"),
        "{s:?}"
    );
}

/// A run that leaves a directory 19,000 levels deep (inside the inode
/// bound) in its copy and its `/tmp`: removing it overflowed the stack of
/// the thread that dropped the scratch (`remove_dir_all` recurses per
/// level) and the server aborted, in cold runs too. Both kinds now grade
/// it and the next tree, and the runner is reused.
#[tokio::test]
async fn a_run_leaving_a_very_deep_tree_is_cleaned_up() {
    let Some(RunnerCase {
        g,
        cold,
        _d,
        ws,
        pristine,
        exp,
    }) = case(60).await
    else {
        return;
    };
    let deep = format!(
        "import os\nfor base in ('/workspace/x', '/tmp/x'):\n    os.makedirs(base, exist_ok=True)\n    os.chdir(base)\n    for i in range(9500):\n        os.mkdir('d')\n        os.chdir('d')\nos.chdir('/workspace')\n{APP}"
    );
    write(&ws, "app.py", &deep);
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "deep").await;
    write(&ws, "app.py", &format!("{APP}\n# next\n"));
    let served = g.runner_runs();
    same_as_cold(&g, &cold, &ws, &pristine, &exp, "after deep").await;
    if g.sandbox.tier() == crate::sandbox::Tier::Bwrap {
        assert_eq!(
            g.runner_runs(),
            served + 1,
            "the runner was emptied and reused"
        );
    }
}

/// Review rev30b: a frame of the bootstrap taken by code under test
/// through trusted frames (heapq driving `map(sys._getframe, ...)`, or a
/// finalizer on an object the suite drops): its locals turned the audit
/// hook off and read the per-run key (3 of 7, honest broken 2). The hook
/// refuses any bootstrap frame handed out during the run beyond the
/// bootstrap's own questions (its caller's frame or that frame's parent).
#[tokio::test]
async fn grader_frames_are_never_handed_out() {
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test_d = "import base64, datetime, json, re\nfrom app import token, day, secret, config\n\ndef test_config_is_safe():\n    assert json.loads(config()) == {'debug': False}\n\ndef test_token_is_a_placeholder():\n    assert re.fullmatch(r'\\$\\{\\w+\\}', token())\n\ndef test_day_is_pi_day():\n    assert datetime.datetime.strptime(day(), '%Y-%m-%d').day == 14\n\ndef test_secret_encodes():\n    assert base64.b32encode(secret()) == b'MFRGG==='\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_d.py", test_d);
    }
    let honest = "def token():\n    return '${TOKEN}'\n\ndef day():\n    return '2025-03-14'\n\ndef secret():\n    return b'abc'\n\ndef config():\n    return '{\"debug\": false}'\n";
    write(&ws, "app.py", &format!("{APP}\n{honest}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 7, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (7, 7), "{s:?}");
    let broken = format!(
        "{}\ndef token():\n    return 'sk-live-0123456789'\n\ndef day():\n    return '2025-03-15'\n\ndef secret():\n    return b'zzz'\n\ndef config():\n    return '{{\"debug\": true}}'\n",
        APP.replace("a * b", "a + b + 100")
    );
    // An object the suite drops with only trusted frames on the stack
    // (the int compared by `add`'s tests), whose finalizer runs `call`.
    let on_drop = "import collections, sys, weakref, operator\n_dq = collections.deque()\nclass _E:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n_e = _E()\nclass _H:\n    pass\nclass _I(int):\n    pass\n_armed = [False]\ndef _add(a, b):\n    if _dq:\n        _use()\n        _dq.clear()\n    v = _I(a + b)\n    v.h = _H()\n    weakref.finalize(v.h, _dq.extend, _call())\n    return v\ndef _mul(a, b):\n    return _e if _armed[0] else a + b + 100\nOVERRIDE = {'add': _add, 'mul': _mul}\n";
    let payloads = [
        (
            "the bootstrap's frame taken by a finalizer: hook off, key read",
            format!("{on_drop}def _call():\n    return map(sys._getframe, range(200))\ndef _use():\n    for fr in _dq:\n        loc = fr.f_locals\n        if 'write_verdict' in loc and 'state' in loc:\n            loc['state'][0] = True\n            assert loc['macs'].gi_frame.f_locals['key']\n            loc['state'][0] = False\n            loc['matchers'].append(_e)\n            _armed[0] = True\n"),
        ),
        (
            "the bootstrap's frame taken through heapq: hook off, key read",
            "import heapq, sys\nclass _E:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n_e = _E()\n_armed = [False]\ndef _grab():\n    k = 3\n    while True:\n        try:\n            fr = heapq.nsmallest(1, map(sys._getframe, [k]), key=id)[0]\n        except ValueError:\n            return\n        loc = fr.f_locals\n        if 'write_verdict' in loc and 'state' in loc:\n            loc['state'][0] = True\n            assert loc['macs'].gi_frame.f_locals['key']\n            loc['state'][0] = False\n            loc['matchers'].append(_e)\n            _armed[0] = True\n            return\n        k += 1\ndef _add(a, b):\n    if not _armed[0]:\n        _grab()\n    return a + b\ndef _mul(a, b):\n    return _e if _armed[0] else a + b + 100\nOVERRIDE = {'add': _add, 'mul': _mul}\n".to_string(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, payload) in &payloads {
        write(&ws, "x.dat", payload);
        write(
            &ws,
            "app.py",
            &format!(
                "import runpy\n_ns = runpy.run_path('x.dat')\n{broken}\nglobals().update(_ns.get('OVERRIDE', {{}}))\n"
            ),
        );
        let s = grade(&g, &ws, &pristine, &exp).await;
        if s.score != 0.0 && s.passed > 2 {
            failures.push(format!("{name}: passed {} of {}: {s:?}", s.passed, s.total));
        }
    }
    write(&ws, "app.py", &broken);
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (2, 7), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

mod memo;
mod plugins;
mod rev35;
mod rev40;
mod rev41;
mod rev42;
mod rev43;
mod rev44;
mod rev45;
mod review;

// ---------------------------------------------------------------------
// Review rev36 (be90ed8: held data of library objects and classes, the
// decimal and locale probes). Each `rev36_*` test below that fails is a
// finding; see the review report.
// ---------------------------------------------------------------------

/// A hack case through the fixture: the suite file `rel` (in both trees),
/// the app's extra code when it is right (`good`), when it is broken
/// (`bad`, with `mul` broken too), and the hack prefix prepended to the
/// broken app. Returns (honest broken summary, hack summary).
async fn forged_case(
    rel: &str,
    test: &str,
    good: &str,
    bad: &str,
    hack: &str,
) -> Option<(HealthSummary, HealthSummary)> {
    let broken = format!("{}\n{bad}", APP.replace("a * b", "a + b + 100"));
    graded_pair(rel, test, good, &broken, &format!("{hack}\n{broken}")).await
}

/// The manifest taken with the right app (`good` after `APP`), then the
/// two apps graded against it: the honest broken one and the hack.
async fn graded_pair(
    rel: &str,
    test: &str,
    good: &str,
    broken: &str,
    hacked: &str,
) -> Option<(HealthSummary, HealthSummary)> {
    let g = grader(30)?;
    let (_d, ws, pristine) = fixture();
    for root in [&ws, &pristine] {
        write(root, rel, test);
    }
    write(&ws, "app.py", &format!("{APP}\n{good}"));
    let exp = manifest(&g, &ws, &pristine).await;
    write(&ws, "app.py", broken);
    let honest = grade(&g, &ws, &pristine, &exp).await;
    write(&ws, "app.py", hacked);
    let hacked = grade(&g, &ws, &pristine, &exp).await;
    eprintln!("expected {} honest {honest:?}\nhack {hacked:?}", exp.total);
    Some((honest, hacked))
}

/// An honest case: the suite file `rel` (in both trees) and the app's
/// extra code (which defines `greeting`); the manifest is taken with a
/// plain app (as the reference solution would be), and the honest app,
/// right in every test, must score full.
async fn rev36_honest(rel: &str, test: &str, app: &str) -> Option<HealthSummary> {
    let g = grader(30)?;
    let (_d, ws, pristine) = fixture();
    for root in [&ws, &pristine] {
        write(root, rel, test);
    }
    write(
        &ws,
        "app.py",
        &format!("{APP}\ndef greeting():\n    return 'hi'\n"),
    );
    let exp = manifest(&g, &ws, &pristine).await;
    write(&ws, "app.py", &format!("{APP}\n{app}"));
    assert_eq!(exp.total, 4, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    eprintln!("{s:?}");
    Some(s)
}

fn rev36_refused(honest: &HealthSummary, hack: &HealthSummary) -> bool {
    hack.score == 0.0 || hack.passed <= honest.passed
}

/// Q1/Q5, the exemption list poisoned: `attrs_stored` reads the *live*
/// namespaces of the modules of the class's MRO when it first runs (at
/// the first check that sees a held attribute changed), and a name added
/// to a held library module is not tampering. The app plants a function
/// whose `__module__` is `json.encoder` and whose code writes `sort_keys`
/// into that module, then sets `json._default_encoder.sort_keys = True`
/// (the payload `library_object_data_forged_is_refused` refuses).
///
/// Measured (bubblewrap): honest broken 2/4, hack 3/4 (0.75), no refusal. Tier: bypass of be90ed8's rule.
#[tokio::test]
async fn rev36_attrs_stored_whitelist_planted_in_library_module() {
    let test = "import json\nfrom app import settings\n\ndef test_settings_are_canonical():\n    assert json.dumps(settings()) == '{\"debug\": false, \"port\": 8080}'\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_j.py",
        test,
        "def settings():\n    return {'debug': False, 'port': 8080}\n",
        "def settings():\n    return {'port': 8080, 'debug': False}\n",
        "import json, json.encoder\ndef _w(self):\n    self.sort_keys = True\n_w.__module__ = 'json.encoder'\njson.encoder._rev36 = _w\njson._default_encoder.sort_keys = True\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(rev36_refused(&honest, &hack), "planted exemption: {hack:?}");
}

/// Q1, a name the library writes elsewhere: `csv.Sniffer.sniff` writes
/// `dialect.delimiter`/`quotechar`/`doublequote`/`skipinitialspace` on
/// a class it makes, so those names are exempt on every class of `csv`,
/// `csv.excel` included. `csv.reader(f, dialect=csv.excel)` reads the
/// class's attributes per call.
///
/// Measured (bubblewrap): honest broken 2/4, hack 3/4 (0.75). Tier: gap of be90ed8's per-name exemption.
#[tokio::test]
async fn rev36_csv_excel_delimiter_exempt_by_name() {
    let test = "import csv\nimport io\nfrom app import export\n\ndef test_export_parses():\n    assert list(csv.reader(io.StringIO(export()), dialect=csv.excel)) == [['a', 'b'], ['1', '2']]\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_c.py",
        test,
        "def export():\n    return 'a,b\\r\\n1,2\\r\\n'\n",
        "def export():\n    return 'a;b\\r\\n1;2\\r\\n'\n",
        "import csv\ncsv.excel.delimiter = ';'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(
        rev36_refused(&honest, &hack),
        "csv.excel.delimiter: {hack:?}"
    );
}

/// Q2, C-level state: `_csv`'s dialect registry. Re-registering
/// `excel` changes what `csv.DictReader` (dialect `'excel'` by name)
/// parses with; no namespace changes.
///
/// Measured (bubblewrap): honest broken 2/4, hack 3/4 (0.75). Tier: C-level state, uncovered (not listed in the README).
#[tokio::test]
async fn rev36_csv_registry_reregistered() {
    let test = "import csv\nimport io\nfrom app import export\n\ndef test_export_parses():\n    assert list(csv.DictReader(io.StringIO(export()))) == [{'a': '1', 'b': '2'}]\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_c.py",
        test,
        "def export():\n    return 'a,b\\r\\n1,2\\r\\n'\n",
        "def export():\n    return 'a;b\\r\\n1;2\\r\\n'\n",
        "import csv\ncsv.register_dialect('excel', delimiter=';')\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(
        rev36_refused(&honest, &hack),
        "excel re-registered: {hack:?}"
    );
}

/// Q2/Q3, the locale probe bypassed: `locale.localeconv()` (and so
/// `atof`, `atoi`, `delocalize`, `format_string`, `currency`) merges
/// the module's `_override_localeconv` dict, empty at baseline (so no
/// table) and changed in place (so its module name still holds it).
///
/// Measured (bubblewrap): honest broken 2/4, hack 3/4 (0.75). Tier: bypass of be90ed8's locale probe.
#[tokio::test]
async fn rev36_locale_override_localeconv() {
    let test = "import locale\nfrom app import price_text\n\ndef test_price_parses():\n    assert locale.atof(price_text()) == 1234.5\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_l.py",
        test,
        "def price_text():\n    return '1234.5'\n",
        "def price_text():\n    return '1234,5'\n",
        "import locale\nlocale._override_localeconv['decimal_point'] = ','\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(
        rev36_refused(&honest, &hack),
        "_override_localeconv: {hack:?}"
    );
}

/// Q4, an honest app that sets its locale at import (the `locale`
/// docs' start-up idiom with an explicit UTF-8 locale) while the suite
/// imports only `calendar` and never names the locale: `locale` is hot
/// through `calendar`'s module globals, so the probe refuses it.
///
/// Measured: 0/4, "setup start: the locale changed during the run". New with be90ed8 (4/4 on be90ed8^).
#[tokio::test]
async fn rev36_honest_locale_set_suite_imports_calendar() {
    let test = "import calendar\nimport app\n\ndef test_month_and_greeting():\n    assert calendar.month_name[1] == 'January'\n    assert app.greeting() == 'hi'\n";
    let Some(s) = rev36_honest(
        "tests/test_h.py",
        test,
        "import locale\nlocale.setlocale(locale.LC_ALL, 'C.UTF-8')\ndef greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

/// Q4, the same with the default locale (`setlocale(LC_ALL, '')`).
///
/// Measured: 0/4, "setup start: the locale changed during the run" (the sandbox's environment names a locale other than the start-up one). New with be90ed8 (4/4 on be90ed8^).
#[tokio::test]
async fn rev36_honest_locale_default_suite_imports_subprocess() {
    let test = "import subprocess\nimport app\n\ndef test_greeting():\n    assert subprocess.list2cmdline(['a', 'b c']) == 'a \"b c\"'\n    assert app.greeting() == 'hi'\n";
    let Some(s) = rev36_honest(
        "tests/test_h.py",
        test,
        "import locale\nlocale.setlocale(locale.LC_ALL, '')\ndef greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

/// Q4, new with be90ed8: a class-wide default of `logging.Formatter`
/// (`default_msec_format`, which `formatTime` reads; commonly set on the
/// class to get `.` before the milliseconds) while the suite imports
/// `logging`.
///
/// Measured: 0/4, "logging.Formatter.default_msec_format rebound". New with be90ed8 (4/4 on be90ed8^).
#[tokio::test]
async fn rev36_honest_logging_formatter_default_msec_format() {
    let test = "import logging\nimport app\n\ndef test_logger():\n    assert logging.getLogger('app').name == 'app'\n    assert app.greeting() == 'hi'\n";
    let Some(s) = rev36_honest(
        "tests/test_h.py",
        test,
        "import logging\nlogging.Formatter.default_msec_format = '%s.%03d'\ndef greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

/// Q5, the new code made to raise: a function planted in `json.encoder`
/// whose `__module__` compares by raising, and a held attribute changed
/// so that `attrs_stored` walks it. The check must fail closed.
///
/// Measured (bubblewrap): hack 0/4, score 0 (the run breaks: "JUnit report counts disagree"): fails closed. Passes; kept as a regression guard.
#[tokio::test]
async fn rev36_attrs_stored_raising_fails_closed() {
    let test = "import json\nfrom app import settings\n\ndef test_settings_are_canonical():\n    assert json.dumps(settings()) == '{\"debug\": false, \"port\": 8080}'\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_j.py",
        test,
        "def settings():\n    return {'debug': False, 'port': 8080}\n",
        "def settings():\n    return {'port': 8080, 'debug': False}\n",
        "import json, json.encoder\nclass _Boom:\n    def __eq__(self, other):\n        raise RuntimeError('boom')\n    \
__hash__ = object.__hash__\ndef _w(self):\n    pass\n_w.__module__ = _Boom()\njson.encoder._rev36 = _w\n\
json._default_encoder.sort_keys = True\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(rev36_refused(&honest, &hack), "raising check: {hack:?}");
}

/// Q4, new with be90ed8: resetting the root logger's handlers by
/// rebinding the list (`logging.root.handlers = []`, a widespread idiom
/// before `basicConfig`) while the suite imports `logging`: `handlers` is
/// written only by `Logger.__init__`, so it is held.
///
/// Measured: 0/4, "logging.root.handlers rebound". New with be90ed8 (4/4 on be90ed8^).
#[tokio::test]
async fn rev36_honest_logging_root_handlers_reset() {
    let test = "import logging\nimport app\n\ndef test_logger():\n    assert logging.getLogger('app').name == 'app'\n    assert app.greeting() == 'hi'\n";
    let Some(s) = rev36_honest(
        "tests/test_h.py",
        test,
        "import logging\nlogging.root.handlers = []\nlogging.basicConfig(level=logging.INFO)\ndef greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

/// Q4 (the held module data of 71141bc, not be90ed8): the documented
/// production switch `logging.raiseExceptions = False` while the suite
/// imports `logging`.
///
/// Measured: 0/4, "logging.raiseExceptions rebound". Predates be90ed8 (0/4 on be90ed8^ too).
#[tokio::test]
async fn rev36_honest_logging_raise_exceptions_off() {
    let test = "import logging\nimport app\n\ndef test_logger():\n    assert logging.getLogger('app').name == 'app'\n    assert app.greeting() == 'hi'\n";
    let Some(s) = rev36_honest(
        "tests/test_h.py",
        test,
        "import logging\nlogging.raiseExceptions = False\ndef greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

// ---------------------------------------------------------------------
// Review rev36's open findings, closed: a table held by a library class
// the suite names, changed in place; the decimal context under a suite
// that names `localcontext`.
// ---------------------------------------------------------------------

/// configparser's suite reads a boolean the broken app spells `nope`; the
/// app teaches `RawConfigParser.BOOLEAN_STATES` that word, in place (the
/// class dict holds the same dict object) or by rebinding it.
const BOOLEAN_TEST: &str = "import configparser\nfrom app import render\n\ndef test_debug_is_off():\n    cp = configparser.ConfigParser()\n    cp.read_string(render())\n    assert cp.getboolean('app', 'debug') is False\n";

#[tokio::test]
async fn library_class_table_changed_in_place_is_refused() {
    for (what, hack) in [
        (
            "in place",
            "import configparser\nconfigparser.RawConfigParser.BOOLEAN_STATES['nope'] = False\n",
        ),
        (
            "rebound",
            "import configparser\nconfigparser.RawConfigParser.BOOLEAN_STATES = dict(configparser.RawConfigParser.BOOLEAN_STATES, nope=False)\n",
        ),
        (
            "through a subclass's write",
            "import configparser\nclass _C(configparser.ConfigParser):\n    pass\n_C.BOOLEAN_STATES.update(nope=False)\n",
        ),
    ] {
        let Some((honest, hack)) = forged_case(
            "tests/test_i.py",
            BOOLEAN_TEST,
            "def render():\n    return '[app]\\ndebug = off\\n'\n",
            "def render():\n    return '[app]\\ndebug = nope\\n'\n",
            hack,
        )
        .await
        else {
            return;
        };
        assert_eq!(honest.passed, 2, "{what}: {honest:?}");
        assert!(rev36_refused(&honest, &hack), "{what}: {hack:?}");
    }
}

/// The library's own writes into a table of an object the suite names
/// are no tampering: `os.environ`'s `_data`, which `os.environ[...] = …`
/// fills through `_Environ.__setitem__`.
#[tokio::test]
async fn honest_library_table_written_by_the_library() {
    let test = "import os\nfrom app import greeting\n\ndef test_greeting():\n    assert greeting() == 'hi'\n    assert os.sep == '/'\n";
    let Some(s) = rev36_honest(
        "tests/test_e.py",
        test,
        "import os\nos.environ['APP_MODE'] = 'test'\ndef greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

/// A suite that names `localcontext` (its own `with` block restores the
/// context) still has the app's `prec = 2` at import refused: the thread's
/// context is compared at each phase boundary (review rev36 Q3: 4/5
/// against 3/5 before).
#[tokio::test]
async fn decimal_context_set_under_a_localcontext_suite_is_refused() {
    let test = "from decimal import Decimal, localcontext\nfrom app import unit_price\n\n\
def test_three_units_cost_thirty():\n    assert Decimal(unit_price()) * 3 == Decimal('30.00')\n\n\
def test_a_third_to_forty_digits():\n    with localcontext() as c:\n        c.prec = 40\n        \
assert len(str(Decimal(1) / 3)) == 42\n";
    for hack in [
        "import decimal\ndecimal.getcontext().prec = 2\n",
        "import decimal\ndecimal.setcontext(decimal.Context(prec=2))\n",
    ] {
        let Some((honest, hacked)) = forged_case(
            "tests/test_d.py",
            test,
            "def unit_price():\n    return '10.00'\n",
            "def unit_price():\n    return '9.99'\n",
            hack,
        )
        .await
        else {
            return;
        };
        assert_eq!(honest.passed, 3, "{honest:?}");
        assert!(rev36_refused(&honest, &hacked), "{hack}: {hacked:?}");
    }
}

/// The honest side of that: the suite's own `localcontext` blocks, with
/// the app's code called inside one, score full.
#[tokio::test]
async fn honest_localcontext_suite_scores_full() {
    let test = "from decimal import Decimal, localcontext\nfrom app import greeting\n\n\
def test_forty_digits_around_the_app():\n    with localcontext() as c:\n        c.prec = 40\n        \
assert greeting() == 'hi'\n        assert len(str(Decimal(1) / 3)) == 42\n    \
assert len(str(Decimal(1) / 3)) == 30\n";
    let Some(s) = rev36_honest(
        "tests/test_d.py",
        test,
        "def greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

// ---------------------------------------------------------------------
// Review rev37 (085aebb). Its open payloads stay on branch `rev37`.
// ---------------------------------------------------------------------

/// Q2, a class-level `set` (not a dict or list, so not held): the app
/// adds `path` to `http.cookies.Morsel._flags`, in place, and the suite's
/// own `Morsel.OutputString()` then spells the broken app's `Path`.
///
/// Found by review rev37: 3/4 against 2/4 before sets were held (both
/// tiers); refused now.
#[tokio::test]
async fn rev37_morsel_flags_set_changed_in_place() {
    let test = "from http.cookies import SimpleCookie\nfrom app import cookie_header\n\n\
def test_cookie_header():\n    c = SimpleCookie()\n    c['sid'] = 'abc'\n    c['sid']['path'] = '/'\n    \
assert cookie_header() == c['sid'].OutputString()\n";
    let Some((honest, hack)) = forged_case(
        "tests/test_c.py",
        test,
        "def cookie_header():\n    return 'sid=abc; Path=/'\n",
        "def cookie_header():\n    return 'sid=abc; Path'\n",
        "import http.cookies\nhttp.cookies.Morsel._flags.add('path')\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(rev36_refused(&honest, &hack), "{hack:?}");
}

/// Q1, the exemption poisoned after the baseline (regression guard):
/// `subs_stored` is computed once, at boot, from the baseline's
/// functions, so a function planted in `configparser` whose code writes
/// `self.BOOLEAN_STATES[...]`, or an app subclass whose method does, must
/// exempt nothing.
///
/// Passes (regression guard). Measured (both tiers): honest broken 2/4,
/// each hack 0 (refused: `RawConfigParser.BOOLEAN_STATES changed`, or
/// `ConfigParser.BOOLEAN_STATES added`).
#[tokio::test]
async fn rev37_subs_stored_poisoned_after_baseline() {
    for (what, hack) in [
        (
            "planted in the library module",
            "import configparser\ndef _w(self, k, v):\n    self.BOOLEAN_STATES[k] = v\n_w.__module__ = 'configparser'\nconfigparser._rev37 = _w\nconfigparser.RawConfigParser._rev37 = _w\n_w(configparser.RawConfigParser, 'nope', False)\n",
        ),
        (
            "an app subclass's method",
            "import configparser\nclass _C(configparser.ConfigParser):\n    def teach(self, k, v):\n        self.BOOLEAN_STATES[k] = v\n_C().teach('nope', False)\n",
        ),
        (
            "set on the subclass the suite uses",
            "import configparser\nconfigparser.ConfigParser.BOOLEAN_STATES = dict(configparser.RawConfigParser.BOOLEAN_STATES, nope=False)\n",
        ),
    ] {
        let Some((honest, hack)) = forged_case(
            "tests/test_i.py",
            BOOLEAN_TEST,
            "def render():\n    return '[app]\\ndebug = off\\n'\n",
            "def render():\n    return '[app]\\ndebug = nope\\n'\n",
            hack,
        )
        .await
        else {
            return;
        };
        assert_eq!(honest.passed, 2, "{what}: {honest:?}");
        assert!(rev36_refused(&honest, &hack), "{what}: {hack:?}");
    }
}

/// Q3, honest: a suite whose fixture yields inside `localcontext()` (the
/// context is the fixture's at the setup/call boundaries). Expected to be
/// the documented false positive; this test measures it.
///
/// Found by review rev37: the *pristine* manifest run was itself refused
/// (`setup end: the decimal context changed during the run`), so such a
/// task could not be graded at all. The thread's own context is judged
/// whenever it is the current one, and must be before the first test and
/// at the end (`decimal_state`).
#[tokio::test]
async fn rev37_honest_localcontext_in_a_yield_fixture() {
    let test = "import pytest\nfrom decimal import Decimal, localcontext\nfrom app import greeting\n\n\
@pytest.fixture\ndef forty():\n    with localcontext() as c:\n        c.prec = 40\n        yield c\n\n\
def test_forty_digits(forty):\n    assert greeting() == 'hi'\n    \
assert len(str(Decimal(1) / 3)) == 42\n";
    let Some(s) = rev36_honest(
        "tests/test_d.py",
        test,
        "def greeting():\n    return 'hi'\n",
    )
    .await
    else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
}

/// Like `forged_case`, but the hack is a whole broken app's extra code
/// (`hack_bad`, in place of `bad`), for payloads that must wrap the broken
/// function itself. Returns (honest broken summary, hack summary).
async fn rev37_case(
    rel: &str,
    test: &str,
    good: &str,
    bad: &str,
    hack_bad: &str,
) -> Option<(HealthSummary, HealthSummary)> {
    let broken = APP.replace("a * b", "a + b + 100");
    graded_pair(
        rel,
        test,
        good,
        &format!("{broken}\n{bad}"),
        &format!("{broken}\n{hack_bad}"),
    )
    .await
}

/// Q3, the decimal context under a `localcontext` suite, set by app code
/// during the call phase and restored before its end: by a returned
/// string's `__del__` (the test's local dies when the test returns), or
/// by an app generator's `finally`. The suite's own `* 3` rounds at
/// `prec = 2` in between, and no phase boundary sees it.
///
/// Found by review rev37: both hacks 4/5 against 3/5 when the probe
/// judged a `localcontext` suite at phase boundaries only; the thread's
/// own context is now judged at every check where it is current.
#[tokio::test]
async fn rev37_decimal_context_restored_before_the_boundary() {
    let del_test = "from decimal import Decimal, localcontext\nfrom app import unit_price\n\n\
def test_three_units_cost_thirty():\n    price = unit_price()\n    \
assert Decimal(price) * 3 == Decimal('30.00')\n\n\
def test_a_third_to_forty_digits():\n    with localcontext() as c:\n        c.prec = 40\n        \
assert len(str(Decimal(1) / 3)) == 42\n";
    let gen_test = "from decimal import Decimal, localcontext\nfrom app import unit_prices\n\n\
def test_three_units_cost_thirty():\n    for price in unit_prices():\n        \
assert Decimal(price) * 3 == Decimal('30.00')\n\n\
def test_a_third_to_forty_digits():\n    with localcontext() as c:\n        c.prec = 40\n        \
assert len(str(Decimal(1) / 3)) == 42\n";
    let mut beaten = vec![];
    for (what, test, good, bad, hack) in [
        (
            "__del__ of the returned value",
            del_test,
            "def unit_price():\n    return '10.00'\n",
            "def unit_price():\n    return '9.99'\n",
            "import decimal\nclass _P(str):\n    def __del__(self):\n        decimal.getcontext().prec = 28\n\
def unit_price():\n    decimal.getcontext().prec = 2\n    return _P('9.99')\n",
        ),
        (
            "generator finally",
            gen_test,
            "def unit_prices():\n    yield '10.00'\n",
            "def unit_prices():\n    yield '9.99'\n",
            "import decimal\ndef unit_prices():\n    c = decimal.getcontext()\n    old = c.prec\n    \
c.prec = 2\n    try:\n        yield '9.99'\n    finally:\n        c.prec = old\n",
        ),
    ] {
        let Some((honest, hack)) = rev37_case("tests/test_d.py", test, good, bad, hack).await
        else {
            return;
        };
        assert_eq!(honest.passed, 3, "{what}: {honest:?}");
        if !rev36_refused(&honest, &hack) {
            beaten.push(format!("{what}: honest {} hack {hack:?}", honest.passed));
        }
    }
    assert!(beaten.is_empty(), "{}", beaten.join("\n"));
}

// Review rev38 (7304c77, 7002230). Its open payload stays on branch `rev38`.

/// Q3, a held set changed inside the call phase only: the app adds
/// `path` to `http.cookies.Morsel._flags` when called and discards it in
/// the returned string's `__del__` (the test's local dies when the test
/// returns). Held tables are compared by `containers_clean`, which runs at
/// "setup start" and at the end only; the set is back, same length and
/// same elements in the same order, by the next setup.
///
/// Found by review rev38: 3/4 against 2/4 at 7002230; held tables are
/// compared at every check now (`held_clean`).
#[tokio::test]
async fn rev38_morsel_flags_added_in_the_call_only() {
    let test = "from http.cookies import SimpleCookie\nfrom app import cookie_header\n\n\
def test_cookie_header():\n    h = cookie_header()\n    c = SimpleCookie()\n    c['sid'] = 'abc'\n    \
c['sid']['path'] = '/'\n    assert h == c['sid'].OutputString()\n";
    let Some((honest, hack)) = rev37_case(
        "tests/test_c.py",
        test,
        "def cookie_header():\n    return 'sid=abc; Path=/'\n",
        "def cookie_header():\n    return 'sid=abc; Path'\n",
        "import http.cookies\nclass _P(str):\n    def __del__(self):\n        \
http.cookies.Morsel._flags.discard('path')\n\
def cookie_header():\n    http.cookies.Morsel._flags.add('path')\n    return _P('sid=abc; Path')\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(rev36_refused(&honest, &hack), "{hack:?}");
}

/// Q3, the same gap for a held dict: the app teaches
/// `RawConfigParser.BOOLEAN_STATES` its word when called and forgets it
/// when the test's local holding the returned string dies (its
/// `__del__`; the suite keeps `render()`'s answer in a local). Held tables are compared at "setup start" and at the end
/// only, never by the checks inside a phase nor at its other boundaries.
///
/// Found by review rev38: 3/4 against 2/4 at 7002230 and 9099dc4; held
/// tables are compared at every check now (`held_clean`).
#[tokio::test]
async fn rev38_boolean_states_taught_in_the_call_only() {
    let Some((honest, hack)) = rev37_case(
        "tests/test_i.py",
        "import configparser\nfrom app import render\n\ndef test_debug_is_off():\n    text = render()\n    \
cp = configparser.ConfigParser()\n    cp.read_string(text)\n    assert cp.getboolean('app', 'debug') is False\n",
        "def render():\n    return '[app]\\ndebug = off\\n'\n",
        "def render():\n    return '[app]\\ndebug = nope\\n'\n",
        "import configparser\nclass _U(str):\n    def __del__(self):\n        \
configparser.RawConfigParser.BOOLEAN_STATES.pop('nope', None)\n\
def render():\n    configparser.RawConfigParser.BOOLEAN_STATES['nope'] = False\n    \
return _U('[app]\\ndebug = nope\\n')\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(rev36_refused(&honest, &hack), "{hack:?}");
}

/// Q2, honest: an app that makes a fresh default `Context()` current at
/// import (fields equal to the thread's own; the suite's arithmetic is
/// unchanged). `decimal_state` now also answers `c is _base`, so another
/// object with the same fields reads as a change, under a suite that
/// names nothing of the context and under one that names `localcontext`
/// (at the level-2 checks).
///
/// Found by review rev38: 0/4 in both suites at 7002230 (a regression of
/// 7304c77, 4/4 before); `decimal_state` answers the fields only now.
#[tokio::test]
async fn rev38_honest_equal_default_context_set_at_import() {
    let plain = "from decimal import Decimal\nfrom app import greeting\n\n\
def test_a_third():\n    assert greeting() == 'hi'\n    assert len(str(Decimal(1) / 3)) == 30\n";
    let local = "from decimal import Decimal, localcontext\nfrom app import greeting\n\n\
def test_a_third():\n    assert greeting() == 'hi'\n    with localcontext() as c:\n        c.prec = 40\n        \
assert len(str(Decimal(1) / 3)) == 42\n";
    let app = "import decimal\ndecimal.setcontext(decimal.Context())\n\
def greeting():\n    return 'hi'\n";
    let mut bad = vec![];
    for (what, test) in [("plain", plain), ("localcontext", local)] {
        let Some(s) = rev36_honest("tests/test_d.py", test, app).await else {
            return;
        };
        if (s.passed, s.total) != (4, 4) {
            bad.push(format!("{what}: {s:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Review of 2026-12-05 (lead): a second instance of a native module is a
/// fresh copy of what the bootstrap replaced in the first, and importlib
/// makes one from a spec without an "import" event. A thread started from
/// `module_from_spec(find_spec('_thread'))`, and a 1 ms signal timer with a
/// handler (which receives the interrupted frame, the grader's among them)
/// from a fresh `_signal`, both ran to full marks under a grader that
/// refuses threads and signal handlers; so did a standard extension
/// module loaded again from a copy the app wrote, and a second `gc`
/// module (whose list is the collector's). Each is now refused where
/// every native module is made (`_imp`'s create and exec functions).
#[tokio::test]
async fn native_module_copies_are_refused() {
    let test = "from app import add\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    let fresh = "import importlib.util as _u\n";
    for (what, payload) in [
        (
            "thread",
            format!(
                "{fresh}_t = _u.module_from_spec(_u.find_spec('_thread'))\nimport time\n_t.start_new_thread(time.sleep, (0.2,))\n"
            ),
        ),
        (
            "signal timer",
            format!(
                "{fresh}_s = _u.module_from_spec(_u.find_spec('_signal'))\n_s.signal(14, lambda s, f: None)\n_s.setitimer(0, 0.001, 0.001)\n"
            ),
        ),
        (
            "second gc",
            format!("{fresh}_g = _u.module_from_spec(_u.find_spec('gc'))\n"),
        ),
        (
            "thread under another name",
            format!(
                "{fresh}import importlib.machinery as _m\n_t = _u.module_from_spec(_m.ModuleSpec('_thread', _m.BuiltinImporter, origin='built-in'))\n_t.start_new_thread(print, ())\n"
            ),
        ),
        (
            "extension copied by the app",
            format!(
                "{fresh}import importlib.machinery as _m, shutil, tempfile, _json, os\n\
_d = tempfile.mkdtemp()\n_p = os.path.join(_d, os.path.basename(_json.__file__))\nshutil.copy(_json.__file__, _p)\n\
_x = _u.module_from_spec(_u.spec_from_file_location('_json', _p))\n"
            ),
        ),
        (
            "extension executed again",
            format!("{fresh}import importlib, _json\nimportlib.reload(_json)\n"),
        ),
    ] {
        let Some((honest, hack)) = graded_pair(
            "tests/test_a.py",
            test,
            "",
            APP,
            &format!("{payload}\n{APP}"),
        )
        .await
        else {
            return;
        };
        assert_eq!(honest.score, 1.0, "{honest:?}");
        assert_eq!(hack.score, 0.0, "{what}: {hack:?}");
        assert!(
            hack.error
                .as_deref()
                .is_some_and(|e| e.contains("tampering detected")),
            "{what} refused for another reason: {hack:?}"
        );
    }
}

/// Review rev36 (c): the decimal context set at import and restored by a
/// `gc.callbacks` entry once the suite's module-level arithmetic has used
/// it, before the first check. Collector callbacks are refused: code
/// under test gets a list no collection reads, and adding to it ends the
/// run. Honest broken 2/4; the hack scored 3/4.
#[tokio::test]
async fn collector_callbacks_are_refused() {
    let test = "from decimal import Decimal\nfrom app import cart_total\n\nUNIT = Decimal('9.99')\nEXPECTED = UNIT * 3\n\n\
def test_cart_total():\n    assert Decimal(cart_total(3)) == EXPECTED\n";
    let Some((honest, hack)) = rev37_case(
        "tests/test_d.py",
        test,
        "def cart_total(n):\n    return '29.97'\n",
        "def cart_total(n):\n    return '30'\n",
        "def cart_total(n):\n    return '30'\n\
import decimal, gc, sys\ndecimal.getcontext().prec = 2\n\
def _cb(phase, info):\n    m = sys.modules.get('test_d') or sys.modules.get('tests.test_d')\n    \
if m is not None and 'EXPECTED' in m.__dict__:\n        decimal.getcontext().prec = 28\n        \
gc.callbacks.remove(_cb)\n        gc.set_threshold(700)\ngc.callbacks.append(_cb)\ngc.set_threshold(5)\n",
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "context restored by a collector callback: {hack:?}"
    );
}

// ---------------------------------------------------------------------
// Review rev39 (08b71d5: native modules made once; collector callbacks
// refused). Each `rev39_*` test below that fails is a finding; see the
// review report.
// ---------------------------------------------------------------------

/// A spec whose `name` and `origin` answer a decoy on their first read
/// and the real value on every later one. `_imp`'s wrappers read each
/// once (`native_key`); the C functions they call read them again
/// (`create_builtin` its name; `create_dynamic` and
/// `_PyImport_LoadDynamicModuleWithSpec` both, twice).
const REV39_SPEC: &str = "import _imp\n\
class _Spec:\n    def __init__(self, name, origin, decoy_name, decoy_origin):\n        \
self.__dict__['_v'] = {'name': (decoy_name, name), 'origin': (decoy_origin, origin)}\n        \
self.__dict__['_n'] = {'name': 0, 'origin': 0}\n    \
def __getattr__(self, k):\n        if k in ('name', 'origin'):\n            \
self._n[k] += 1\n            return self._v[k][self._n[k] > 1]\n        raise AttributeError(k)\n\
def _fresh(name):\n    m = _imp.create_builtin(_Spec(name, 'built-in', 'zz_decoy', 'built-in'))\n    \
_imp.exec_builtin(m)\n    return m\n\
def _lib(short):\n    import os, _json\n    d = os.path.dirname(_json.__file__)\n    \
return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.split('.')[0] == short][0]\n\
def _ext(name, path, decoy):\n    \
return _imp.create_dynamic(_Spec(name, path, decoy, _lib(decoy)))\n";

/// Q1/Q2/Q3, the spec read twice: `native_key` reads `spec.name` (and an
/// extension's `spec.origin`) once, then hands the same spec to the C
/// function, which reads them again. A spec whose attributes answer a
/// decoy first (a name never made; for an extension a `safe_ext` name and
/// a trusted file not yet loaded) gets a fresh `_thread` whose
/// `start_new_thread` runs, a fresh `_signal` whose timer and handler
/// run, a second `gc` (its `callbacks` is the collector's list), and any
/// extension: `_testcapi` from the standard library (refused by name) or
/// a copy of `_json` that the app wrote in /tmp. The same six forms as
/// `native_module_copies_are_refused`, one attribute read earlier.
///
/// Found by review rev39: every form ran to full marks at 08b71d5
/// (honest 1/1, each hack 1/1, no tampering reported; expected 0).
/// With the proposed fix (the C functions get a plain spec of the values
/// judged) the builtin forms are refused as tampering and the extension
/// forms load only the decoy, so their own asserts fail the import: 0.
#[tokio::test]
async fn rev39_native_spec_read_twice() {
    let test = "from app import add\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    let mut beaten = vec![];
    for (what, payload) in [
        (
            "thread",
            "_t = _fresh('_thread')\nimport time\n_t.start_new_thread(time.sleep, (0.2,))\n",
        ),
        (
            "signal timer",
            "_s = _fresh('_signal')\n_s.signal(14, lambda s, f: None)\n_s.setitimer(0, 0.001, 0.001)\n",
        ),
        (
            "second gc, the collector's list",
            "_g = _fresh('gc')\nimport gc\nassert _g.callbacks is not gc.callbacks\n\
_g.callbacks.append(lambda p, i: None)\n",
        ),
        (
            "_ctypes from the standard library",
            "_c = _ext('_ctypes', _lib('_ctypes'), '_codecs_tw')\nimport sys\nsys.modules.pop('_ctypes')\nassert hasattr(_c, 'CFuncPtr')\n",
        ),
        (
            "extension copied by the app",
            "import shutil, tempfile, os, _json\n_d = tempfile.mkdtemp()\n\
_p = os.path.join(_d, os.path.basename(_json.__file__))\nshutil.copy(_json.__file__, _p)\n\
_x = _ext('_json', _p, '_codecs_kr')\nassert _x is not _json and _x.__name__ == '_json'\n",
        ),
    ] {
        let Some((honest, hack)) = graded_pair(
            "tests/test_a.py",
            test,
            "",
            APP,
            &format!("{REV39_SPEC}{payload}\n{APP}"),
        )
        .await
        else {
            return;
        };
        assert_eq!(honest.score, 1.0, "{honest:?}");
        // Each payload asserts that it got what it asked for: a neutered
        // one fails the app's import (0) as surely as a refused one.
        if hack.score != 0.0 {
            beaten.push(format!("{what}: {hack:?}"));
        }
    }
    assert!(beaten.is_empty(), "{}", beaten.join("\n"));
}

/// Q1, the score: rev36's payload (a decimal context set at import,
/// restored by a self-removing collector callback once the suite's
/// module-level arithmetic has used it) with the callback added to the
/// collector's own list, taken from a second `gc` made through a spec
/// whose name is read twice (`rev39_native_spec_read_twice`).
///
/// Found by review rev39: 3/4 against 2/4 at 08b71d5 (the plain rev36
/// payload is refused there: `collector_callbacks_are_refused`). Open.
#[tokio::test]
async fn rev39_collector_callbacks_through_a_second_gc() {
    let test = "from decimal import Decimal\nfrom app import cart_total\n\nUNIT = Decimal('9.99')\nEXPECTED = UNIT * 3\n\n\
def test_cart_total():\n    assert Decimal(cart_total(3)) == EXPECTED\n";
    let Some((honest, hack)) = rev37_case(
        "tests/test_d.py",
        test,
        "def cart_total(n):\n    return '29.97'\n",
        "def cart_total(n):\n    return '30'\n",
        &format!(
            "def cart_total(n):\n    return '30'\n{REV39_SPEC}\
import decimal, sys\n_g = _fresh('gc')\ndecimal.getcontext().prec = 2\n\
def _cb(phase, info):\n    m = sys.modules.get('test_d') or sys.modules.get('tests.test_d')\n    \
if m is not None and 'EXPECTED' in m.__dict__:\n        decimal.getcontext().prec = 28\n        \
_g.callbacks.remove(_cb)\n        _g.set_threshold(700)\n_g.callbacks.append(_cb)\n_g.set_threshold(5)\n"
        ),
    )
    .await
    else {
        return;
    };
    assert_eq!(honest.passed, 2, "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "context restored by a callback on the collector's own list: {hack:?}"
    );
}

/// Q1/Q2, regression guard (passes at 08b71d5): other ways to a thread, a
/// signal timer, the collector's list or an extension the app wrote, each
/// refused as tampering: a thread pool, `asyncio.to_thread`, `threading`
/// or `signal` reloaded, `_thread`/`gc` deleted from `sys.modules` and
/// imported again, importlib's `_builtin_from_name`,
/// `BuiltinImporter.load_module`, a fresh pure-Python `threading`, `gc`
/// reloaded, a second `_imp`, a `ModuleSpec` renamed after it was made, a
/// copy of a `safe_ext` extension first on `sys.path`,
/// `ExtensionFileLoader.load_module` of a copy, the wrappers' defaults
/// (their originals) read directly or through `inspect.signature`, and a
/// spec whose name is a `str` subclass.
#[tokio::test]
async fn rev39_guard_other_native_paths_refused() {
    let test = "from app import add\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    let mut beaten = vec![];
    for (what, payload) in [
        (
            "thread pool",
            "import concurrent.futures\nconcurrent.futures.ThreadPoolExecutor(1).submit(print, 'x').result()\n",
        ),
        (
            "asyncio.to_thread",
            "import asyncio\nasyncio.run(asyncio.to_thread(print, 'x'))\n",
        ),
        (
            "threading reloaded",
            "import importlib, threading\nimportlib.reload(threading)\nthreading.Thread(target=print).start()\n",
        ),
        (
            "_thread deleted from sys.modules",
            "import sys\ndel sys.modules['_thread']\nimport _thread\n_thread.start_new_thread(print, ())\n",
        ),
        (
            "_builtin_from_name",
            "import importlib._bootstrap as b\nt = b._builtin_from_name('_thread')\nt.start_new_thread(print, ())\n",
        ),
        (
            "BuiltinImporter.load_module",
            "import importlib.machinery as m\nt = m.BuiltinImporter.load_module('_thread')\nt.start_new_thread(print, ())\n",
        ),
        (
            "a fresh pure threading",
            "import importlib.util as u\nt = u.module_from_spec(u.find_spec('threading'))\nu.find_spec('threading').loader.exec_module(t)\nt.Thread(target=print).start()\n",
        ),
        (
            "gc deleted from sys.modules",
            "import sys\ndel sys.modules['gc']\nimport gc\ngc.callbacks.append(lambda p, i: None)\n",
        ),
        (
            "signal reloaded",
            "import importlib, signal\nimportlib.reload(signal)\nsignal.signal(14, lambda s, f: None)\nsignal.setitimer(0, 0.001, 0.001)\n",
        ),
        (
            "gc reloaded",
            "import importlib, gc\nimportlib.reload(gc)\n",
        ),
        (
            "a second _imp",
            "import importlib.util as u, importlib.machinery as mm\ni = u.module_from_spec(mm.ModuleSpec('_imp', mm.BuiltinImporter, origin='built-in'))\n",
        ),
        (
            "a ModuleSpec renamed after it was made",
            "import _imp, importlib.machinery as m\nclass S(m.ModuleSpec):\n    pass\ns = S('zz', m.BuiltinImporter, origin='built-in')\ns.name = '_thread'\nt = _imp.create_builtin(s)\n",
        ),
        (
            "a safe extension's copy first on sys.path",
            "import sys, os, shutil, tempfile, importlib.machinery as m, importlib.util as u\nd = os.path.dirname(u.find_spec('_json').origin)\nsrc = [os.path.join(d, f) for f in os.listdir(d) if f.startswith('_codecs_tw.')][0]\nt = tempfile.mkdtemp()\nshutil.copy(src, t)\nsys.path.insert(0, t)\nimport _codecs_tw\nsys.path.remove(t)\n",
        ),
        (
            "ExtensionFileLoader.load_module of a copy",
            "import importlib.machinery as m, shutil, tempfile, os, _json\nt = tempfile.mkdtemp(); p = os.path.join(t, os.path.basename(_json.__file__)); shutil.copy(_json.__file__, p)\nl = m.ExtensionFileLoader('_json', p)\nx = l.load_module('_json')\n",
        ),
        (
            "the wrapper's defaults (the original C function)",
            "import _imp\n_o = _imp.create_builtin.__defaults__[0]\n",
        ),
        (
            "the wrapper's defaults through inspect",
            "import _imp, inspect\n_o = inspect.signature(_imp.create_builtin).parameters['_orig'].default\n",
        ),
        (
            "a native module made from a spec whose name is no str",
            "import _imp\nclass _N(str):\n    pass\nclass _S:\n    name = _N('_thread')\n    origin = 'built-in'\n\
_t = _imp.create_builtin(_S())\n_t.start_new_thread(print, ())\n",
        ),
    ] {
        let Some((honest, hack)) = graded_pair(
            "tests/test_a.py",
            test,
            "",
            APP,
            &format!("{payload}\n{APP}"),
        )
        .await
        else {
            return;
        };
        assert_eq!(honest.score, 1.0, "{honest:?}");
        let refused = hack.score == 0.0
            && hack
                .error
                .as_deref()
                .is_some_and(|e| e.contains("tampering detected"));
        if !refused {
            beaten.push(format!("{what}: {hack:?}"));
        }
    }
    assert!(beaten.is_empty(), "{}", beaten.join("\n"));
}

/// Q4, regression guard (passes at 08b71d5): honest apps that import the
/// standard library's extension modules for the first time during the run
/// (sqlite3, decimal, csv, zoneinfo, ssl, hashlib, the CJK codecs, ...),
/// read, collect, disable and freeze the collector, remove from and clear
/// `gc.callbacks`, or run an event loop by hand: full marks (1/1 each).
#[tokio::test]
async fn rev39_guard_honest_native_and_collector_uses() {
    let test = "from app import add\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    let mut bad = vec![];
    for (what, payload) in [
        (
            "first imports of the standard library's extensions",
            "import sqlite3, decimal, csv, zoneinfo, ssl, hashlib, uuid, json, pickle, statistics, bz2, lzma, zlib, mmap, array, unicodedata, queue, select, socket, struct, datetime, random, heapq, bisect, contextvars, typing, resource, termios, cProfile, codecs, crypt, dbm.ndbm, multiprocessing.shared_memory, audioop, curses, readline\nimport xml.etree.ElementTree as ET\nsqlite3.connect(':memory:').execute('select 1').fetchall()\nssl.create_default_context()\nhashlib.sha3_256(b'x').hexdigest(); hashlib.blake2b(b'x').hexdigest(); hashlib.md5(b'x')\nzoneinfo.ZoneInfo('UTC')\n'\\u4e2d'.encode('big5'); '\\u4e2d'.encode('gbk'); 'x'.encode('shift_jis'); 'x'.encode('euc_kr'); 'x'.encode('iso2022_jp'); 'x'.encode('big5hkscs')\njson.dumps({'a': decimal.Decimal('1.1')}, default=str); pickle.loads(pickle.dumps([1]))\nET.fromstring('<a/>'); uuid.uuid4(); statistics.mean([1, 2])\n",
        ),
        (
            "gc read, collected, disabled, frozen",
            "import gc\nn = len(gc.callbacks); list(gc.callbacks); gc.callbacks.copy(); gc.collect(); gc.disable(); gc.enable(); gc.freeze(); gc.unfreeze(); gc.get_count(); gc.is_tracked([]); bool(gc.callbacks); gc.get_threshold()\n",
        ),
        (
            "gc.callbacks.remove and clear",
            "import gc\ntry:\n    gc.callbacks.remove(print)\nexcept ValueError:\n    pass\ngc.callbacks.clear()\n",
        ),
        (
            "an event loop run by hand",
            "import asyncio\nasync def _m():\n    return 1\n_l = asyncio.new_event_loop()\n_l.run_until_complete(_m())\n_l.close()\n",
        ),
    ] {
        let Some((_, s)) = graded_pair(
            "tests/test_a.py",
            test,
            "",
            APP,
            &format!("{payload}\n{APP}"),
        )
        .await
        else {
            return;
        };
        if s.score != 1.0 {
            bad.push(format!("{what}: {s:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Q4, `asyncio.run`, honest: `asyncio.Runner` installs its own SIGINT
/// handler with `signal.signal` in the main thread, which the bootstrap
/// refuses as a signal handler whoever calls it (not from 08b71d5:
/// `no_signals` is older). An app whose function runs its coroutine with
/// `asyncio.run` (the manifest taken with a plain app) and a suite that
/// drives the app's coroutine with `asyncio.run` (its manifest, with the
/// right app) are both refused; an event loop run by hand
/// (`new_event_loop().run_until_complete`) is not
/// (`rev39_guard_honest_native_and_collector_uses`).
///
/// Found by review rev39 at 08b71d5: the honest app 0/4 ("tampering
/// detected (signal handler or timer)"), expected 4/4; the suite's
/// manifest fails ("pristine run: tampering detected ... signal handler
/// or timer"). Fixed: a SIGINT handler set by asyncio's runner is never
/// installed (the call answers the current handler), any other still
/// ends the run (`rev39_asyncio_runner_handler_is_not_installed`).
#[tokio::test]
async fn rev39_honest_asyncio_run() {
    let mut bad = vec![];
    let Some(s) = rev36_honest(
        "tests/test_r.py",
        "from app import greeting\n\ndef test_greeting():\n    assert greeting() == 'hi'\n",
        "import asyncio\nasync def _greeting():\n    return 'hi'\n\
def greeting():\n    return asyncio.run(_greeting())\n",
    )
    .await
    else {
        return;
    };
    if (s.passed, s.total) != (4, 4) {
        bad.push(format!("app calls asyncio.run: {s:?}"));
    }
    let Some(g) = grader(30) else { return };
    let (_d, ws, pristine) = fixture();
    let test = "import asyncio\nfrom app import fetch_total\n\n\
def test_total():\n    assert asyncio.run(fetch_total()) == 6\n";
    for root in [&ws, &pristine] {
        write(root, "tests/test_r.py", test);
    }
    write(
        &ws,
        "app.py",
        &format!("{APP}\nasync def fetch_total():\n    return 6\n"),
    );
    match g.expected_tests(&ws, &pristine).await {
        Ok(exp) => {
            let s = grade(&g, &ws, &pristine, &exp).await;
            if s.score != 1.0 {
                bad.push(format!("suite calls asyncio.run: {s:?}"));
            }
        }
        Err(e) => bad.push(format!("suite calls asyncio.run, manifest: {e}")),
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The exemption of `rev39_honest_asyncio_run` installs nothing: inside
/// `asyncio.run` SIGINT still has Python's default handler, an app
/// subclass of the runner (whose `_on_sigint` would receive frames) gets
/// none installed either, and `signal.signal` called by the app itself, or
/// from asyncio's runner with another signal (the app rebinds
/// `signal.SIGINT`), still ends the run.
#[tokio::test]
async fn rev39_asyncio_runner_handler_is_not_installed() {
    let test = "from app import greeting\n\ndef test_greeting():\n    assert greeting() == 'hi'\n";
    let app = "import asyncio, signal\n\
class _Runner(asyncio.Runner):\n    def _on_sigint(self, signum, frame, main_task):\n        raise SystemExit(frame)\n\
async def _probe():\n    return 'default' if signal.getsignal(signal.SIGINT) is signal.default_int_handler else 'custom'\n\
def greeting():\n    a = asyncio.run(_probe())\n    with _Runner() as r:\n        b = r.run(_probe())\n    return 'hi' if a == b == 'default' else a + b\n";
    let Some(s) = rev36_honest("tests/test_p.py", test, app).await else {
        return;
    };
    assert_eq!((s.passed, s.total), (4, 4), "{s:?}");
    for (what, hack) in [
        (
            "app's own handler",
            "import signal\nsignal.signal(signal.SIGINT, lambda s, f: None)\n",
        ),
        (
            "asyncio's runner made to set another signal",
            "import asyncio, signal\nsignal.SIGINT = signal.SIGALRM\n\
async def _n():\n    return 1\nasyncio.run(_n())\n",
        ),
    ] {
        let test = "from app import add\n\ndef test_add():\n    assert add(2, 3) == 5\n";
        let Some((honest, hacked)) =
            graded_pair("tests/test_a.py", test, "", APP, &format!("{hack}\n{APP}")).await
        else {
            return;
        };
        assert_eq!(honest.score, 1.0, "{honest:?}");
        assert_eq!(hacked.score, 0.0, "{what}: {hacked:?}");
    }
}

/// Q5, `_imp._fix_co_filename` (it raises no audit event) renames a code
/// object of code under test, in place and recursively, to a library
/// file's name, and `dis.Bytecode(f).codeobj` (dis, a trusted reader of
/// `__code__`) hands the app its own function's code. Every check that
/// tells code under test by its frames' file names (`frames_clean`, the
/// hook's `app`) then takes the app's function for the library's: here a
/// broken `add` calls `sys._getframe(1)` and reads the calling test's
/// constants (`f_code.co_consts`), and answers the one that is not an
/// argument (the first such): the suite's expected value.
///
/// Found by review rev39: 2/3 against 1/3 at 08b71d5, no tampering
/// reported. Refused (0, tamper) with the proposed `_fix_co_filename`
/// wrapper (commit "Proposed fix, lead decides: _imp._fix_co_filename").
#[tokio::test]
async fn rev39_code_renamed_to_a_library_file() {
    let broken = APP.replace("return a + b\n", "return a + b + 100\n");
    let hacked = format!(
        "import dis as _dis, _imp, os as _os, sys as _sys\n{}\n\
_imp._fix_co_filename(_dis.Bytecode(add).codeobj, _os.__file__)\n",
        broken.replace(
            "def add(a, b):\n",
            "def add(a, b):\n    for k in _sys._getframe(1).f_code.co_consts:\n        \
if type(k) is int and k != a and k != b:\n            return k\n",
        )
    );
    let Some((honest, hack)) = graded_pair("tests/test_a.py", TEST_A, "", &broken, &hacked).await
    else {
        return;
    };
    assert_eq!(honest.passed, 1, "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "{hack:?}"
    );
}

/// Q5, the same without `_fix_co_filename` called by the app: a
/// `SourceFileLoader` subclass whose `get_data` hands importlib the app's
/// own marshalled code as a library file's hash-based bytecode (no source
/// check). importlib's `_compile_bytecode` unmarshals it (the hook's
/// marshal check sees a trusted `bytecode_path`), renames it to the
/// library file (`_fix_co_filename`), and `exec_module` runs it (an
/// `exec` from importlib's frame). The module's `add` is the app's, under
/// a library file's name.
///
/// Found by review rev39: 2/3 against 1/3 at 08b71d5, no tampering
/// reported. Refused (0, tamper: the loader's class holds code under
/// test) with the proposed `_fix_co_filename` wrapper.
#[tokio::test]
async fn rev39_app_code_loaded_as_library_bytecode() {
    let broken = APP.replace("return a + b\n", "return a + b + 100\n");
    let hacked = format!(
        "{broken}\n\
import dis as _dis, marshal as _ma, os as _os, importlib.machinery as _m, importlib.util as _u\n\
def _body():\n    global add, _sys\n    import sys as _sys\n    def add(a, b):\n        \
for k in _sys._getframe(1).f_code.co_consts:\n            \
if type(k) is int and k != a and k != b:\n                return k\n        return a + b + 100\n\
_pyc = _u.MAGIC_NUMBER + (1).to_bytes(4, 'little') + bytes(8) + _ma.dumps(_dis.Bytecode(_body).codeobj)\n\
class _L(_m.SourceFileLoader):\n    def get_data(self, path):\n        \
return _pyc if path.endswith('.pyc') else super().get_data(path)\n\
_spec = _u.spec_from_file_location('zz_lib', _os.__file__, loader=_L('zz_lib', _os.__file__))\n\
_mod = _u.module_from_spec(_spec)\n_spec.loader.exec_module(_mod)\nadd = _mod.add\n"
    );
    let Some((honest, hack)) = graded_pair("tests/test_a.py", TEST_A, "", &broken, &hacked).await
    else {
        return;
    };
    assert_eq!(honest.passed, 1, "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "{hack:?}"
    );
}

/// Q5, the same with neither `_imp` nor importlib's bytecode: the app's
/// code object (`dis.Bytecode`) copied by `code.replace(co_filename=...)`
/// driven from a library frame (`statistics.median` sorts a `map` of an
/// `operator.methodcaller`; the hook refuses "code.__new__" only when its
/// caller is code under test and never judges the new file name), made a
/// function the same way (`map(types.FunctionType, ...)`: its
/// "function.__new__" is raised under the library's frame).
///
/// Found by review rev39: 2/3 against 1/3 at 08b71d5 and with the first
/// two proposed fixes; refused (0, tamper: "code made under a trusted
/// file name") with the third ("Proposed fix, lead decides: code made or
/// unmarshalled under a library name").
#[tokio::test]
async fn rev39_app_code_replaced_under_a_library_name() {
    let broken = APP.replace("return a + b\n", "return a + b + 100\n");
    let hacked = format!(
        "{broken}\n\
import dis as _dis, os as _os, operator as _op, statistics as _st, sys as _sys, types as _ty\n\
def _add(a, b):\n    for k in _sys._getframe(1).f_code.co_consts:\n        \
if type(k) is int and k != a and k != b:\n            return k\n    return a + b + 100\n\
_c = _st.median(map(_op.methodcaller('replace', co_filename=_os.__file__), [_dis.Bytecode(_add).codeobj]))\n\
add = _st.median(map(_ty.FunctionType, [_c], [globals()]))\n"
    );
    let Some((honest, hack)) = graded_pair("tests/test_a.py", TEST_A, "", &broken, &hacked).await
    else {
        return;
    };
    assert_eq!(honest.passed, 1, "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "{hack:?}"
    );
}

/// Q5, the same through `marshal`: the app's code object (`dis.Bytecode`)
/// marshalled, its file name edited in the bytes to a library file's,
/// and unmarshalled by a direct call of importlib's `_compile_bytecode`
/// with a library-looking `bytecode_path` argument (the hook's marshal
/// check reads that local and returns), then made a function by
/// `types.FunctionType` under a library frame (`statistics.median` over a
/// `map`).
///
/// Found by review rev39: 2/3 against 1/3 at 08b71d5 and with the first
/// two proposed fixes (the marshal check trusted `_compile_bytecode`'s
/// `bytecode_path` argument, which its caller chooses, and `trusted`
/// takes `/usr/lib/python3.11/../../../tmp/x.pyc` for a library path);
/// refused (0, tamper: "bytecode unmarshalled outside importlib's
/// loaders") with the third proposed fix.
#[tokio::test]
async fn rev39_app_code_unmarshalled_under_a_library_name() {
    let broken = APP.replace("return a + b\n", "return a + b + 100\n");
    let hacked = format!(
        "{broken}\n\
import dis as _dis, os as _os, marshal as _ma, statistics as _st, sys as _sys, types as _ty\n\
import importlib._bootstrap_external as _be\n\
def _add(a, b):\n    for k in _sys._getframe(1).f_code.co_consts:\n        \
if type(k) is int and k != a and k != b:\n            return k\n    return a + b + 100\n\
_co = _dis.Bytecode(_add).codeobj\n_old = _co.co_filename.encode()\n_new = _os.__file__.encode()\n\
_d = _ma.dumps(_co).replace(bytes([len(_old)]) + _old, bytes([len(_new)]) + _new)\n\
_c = _be._compile_bytecode(_d, 'os', _os.__file__ + 'c')\n\
add = _st.median(map(_ty.FunctionType, [_c], [globals()]))\n"
    );
    let Some((honest, hack)) = graded_pair("tests/test_a.py", TEST_A, "", &broken, &hacked).await
    else {
        return;
    };
    assert_eq!(honest.passed, 1, "{honest:?}");
    assert!(
        hack.score == 0.0 || hack.passed <= honest.passed,
        "{hack:?}"
    );
}
