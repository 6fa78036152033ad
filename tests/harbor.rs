//! `secaudit export harbor` and `secaudit grade`, checked with Harbor's own
//! code (harbor 0.26.0 from PyPI in `.tools/harbor`, `scripts/harbor_check.py`:
//! its linter and task loader) and by running the verifier's grading path:
//!
//! - every task and a seeded variant of each passes Harbor's checker, with a
//!   separate verifier whose image bundles the tests;
//! - the agent's image context holds exactly the workspace a server's reset
//!   hands out, and no ground truth; the truth is only under tests/;
//! - the Dockerfiles reference only files of their own build context;
//! - an unmodified workspace scores 0 and the exported solution scores 1.0
//!   through `secaudit grade` with the arguments test.sh passes;
//! - a task Harbor would refuse is refused by the checker (it can fail), and
//!   `grade` writes no reward when it cannot grade.
//!
//! No Docker engine runs here, so the images are not built.
//! A missing `.tools/harbor` is a failure with a hint, never a silent pass.

use crate::openenv_client::run_bounded;
use crate::util;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Seeded variant exported beside every canonical task.
const SEED: u64 = 7;

/// Tasks graded end to end (unmodified and solved): one dir-mode, one
/// git-mode with history rewriting. HARBOR_GRADE_TASKS=all (or 1,5) widens.
const GRADED: [&str; 2] = ["task_01", "task_13"];

fn harbor_python() -> PathBuf {
    let py = util::root().join(".tools/harbor/bin/python");
    assert!(
        py.is_file(),
        "{} is missing: run scripts/setup.sh (installs harbor==0.26.0 into .tools/harbor)",
        py.display()
    );
    py
}

/// Exports every task plus variant [`SEED`] into a fresh directory.
fn export_all() -> tempfile::TempDir {
    let out = tempfile::tempdir().expect("tempdir");
    let r = run_bounded(
        Command::new(util::bin())
            .current_dir(util::root())
            .args(["export", "harbor", "--out"])
            .arg(out.path())
            .args(["--seeds", &SEED.to_string()]),
        Duration::from_secs(300),
    );
    assert!(r.status.success(), "export failed: {}", r.stderr);
    out
}

fn task_dirs(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("task.toml").is_file())
        .collect();
    v.sort();
    v
}

/// Runs Harbor's checker on `dirs`; one JSON object per task.
fn harbor_check(dirs: &[PathBuf]) -> (bool, Vec<Value>, String) {
    let r = run_bounded(
        Command::new(harbor_python())
            .arg(util::root().join("scripts/harbor_check.py"))
            .args(dirs),
        Duration::from_secs(120),
    );
    let results = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (r.status.success(), results, r.stderr)
}

/// Unpacks `tar` into `dest` with the system tar (not the writer's library).
fn untar(tar: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    let st = Command::new("tar")
        .arg("-xf")
        .arg(tar)
        .arg("-C")
        .arg(dest)
        .status()
        .expect("tar");
    assert!(st.success(), "untar {}", tar.display());
}

/// Every path under `dir` with its content: bytes (with the exec bit) or a
/// link target. The git index holds the stat data of whoever wrote it
/// (two generations differ there), so it counts by its entries (mode,
/// object, path), as git reads it.
fn tree(dir: &Path) -> BTreeMap<String, (bool, Vec<u8>)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.insert(format!("{rel}/"), (false, vec![]));
                stack.push(p);
            } else if ft.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, (false, t.to_string_lossy().as_bytes().to_vec()));
            } else if rel == ".git/index" {
                let o = Command::new("git")
                    .arg("-C")
                    .arg(dir)
                    .args(["ls-files", "-s"])
                    .output()
                    .unwrap();
                assert!(o.status.success(), "git ls-files in {}", dir.display());
                out.insert(rel, (false, o.stdout));
            } else {
                let exec = e.metadata().unwrap().permissions().mode() & 0o111 != 0;
                out.insert(rel, (exec, std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// The task definition and seed an exported directory was made from.
fn def_of(dir: &Path) -> (server::tasks::TaskDef, Option<u64>) {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let (slug, seed) = match name.split_once("-seed_") {
        Some((s, n)) => (s.to_string(), Some(n.parse().unwrap())),
        None => (name, None),
    };
    let reg = server::tasks::TaskRegistry::load(&util::root().join("tasks")).unwrap();
    let def = reg
        .list()
        .iter()
        .find(|d| d.task.slug == slug)
        .unwrap_or_else(|| panic!("no task {slug}"))
        .clone();
    (def, seed)
}

/// Dockerfile instructions, continuation lines joined, comments dropped.
fn instructions(dockerfile: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in dockerfile.lines() {
        let t = line.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            cur.push_str(head);
            cur.push(' ');
            continue;
        }
        cur.push_str(t);
        let mut words = cur.split_whitespace().map(str::to_string);
        let op = words.next().unwrap().to_ascii_uppercase();
        out.push((op, words.collect()));
        cur.clear();
    }
    assert!(cur.is_empty(), "dangling continuation in:\n{dockerfile}");
    out
}

/// Checks a Dockerfile against its build context: the base image, and
/// every COPY/ADD source is a file of the context. Returns the instructions.
fn check_dockerfile(context: &Path) -> Vec<(String, Vec<String>)> {
    let path = context.join("Dockerfile");
    let text = std::fs::read_to_string(&path).unwrap();
    let ins = instructions(&text);
    assert_eq!(ins[0].0, "FROM", "{}", path.display());
    assert_eq!(ins[0].1, [secaudit::harbor::BASE_IMAGE]);
    for (op, args) in &ins {
        assert!(
            [
                "FROM", "RUN", "COPY", "ADD", "ENV", "WORKDIR", "USER", "LABEL"
            ]
            .contains(&op.as_str()),
            "{}: unexpected {op}",
            path.display()
        );
        if op == "COPY" || op == "ADD" {
            assert!(args.len() >= 2, "{op} {args:?}");
            for src in &args[..args.len() - 1] {
                assert!(
                    !src.starts_with("--"),
                    "{op} flags are not expected: {args:?}"
                );
                assert!(
                    context.join(src).is_file() && !src.contains(".."),
                    "{}: {op} source {src} is not a file of the build context",
                    path.display()
                );
                if op == "ADD" {
                    assert!(src.ends_with(".tar"), "ADD is only for unpacking: {src}");
                }
            }
        }
    }
    ins
}

#[test]
fn export_passes_harbors_checker_and_keeps_truth_out_of_the_agent_image() {
    let out = export_all();
    let dirs = task_dirs(out.path());
    let reg = server::tasks::TaskRegistry::load(&util::root().join("tasks")).unwrap();
    assert_eq!(dirs.len(), reg.list().len() * 2, "{dirs:?}");
    // No scratch left behind.
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        dirs.len(),
        "only task directories in --out"
    );

    let (ok, results, stderr) = harbor_check(&dirs);
    assert_eq!(results.len(), dirs.len(), "{stderr}");
    for r in &results {
        let dir = r["task_dir"].as_str().unwrap();
        assert_eq!(r["harbor"], "0.26.0");
        assert_eq!(r["findings"], serde_json::json!([]), "{dir}: {r}");
        assert_eq!(r["valid_dir"], true, "{dir}: {r}");
        assert!(r.get("load_error").is_none(), "{dir}: {r}");
        assert_eq!(r["verifier_mode"], "separate", "{dir}");
        assert_eq!(r["verifier_bundled_tests"], true, "{dir}");
        assert!(r["verifier_dir"].as_str().unwrap().ends_with("/tests"));
        assert_eq!(r["artifacts"], serde_json::json!(["/app"]), "{dir}");
        assert_eq!(r["agent_user"], secaudit::harbor::AGENT_USER);
        assert!(r["instruction_chars"].as_u64().unwrap() > 200, "{dir}");
        assert!(
            r["name"]
                .as_str()
                .unwrap()
                .starts_with("secrets-audit-env/task-")
        );
        assert!(
            ["easy", "medium", "hard"].contains(&r["metadata"]["difficulty"].as_str().unwrap())
        );
    }
    assert!(ok, "{stderr}");

    for dir in &dirs {
        let (def, seed) = def_of(dir);
        let ctx = dir.display().to_string();
        // The agent's build context: the Dockerfile and the workspace, no
        // other file.
        let mut env_files: Vec<String> = std::fs::read_dir(dir.join("environment"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        env_files.sort();
        assert_eq!(env_files, ["Dockerfile", "workspace.tar"], "{ctx}");
        check_dockerfile(&dir.join("environment"));
        let ins = check_dockerfile(&dir.join("tests"));
        assert!(
            ins.iter()
                .any(|(op, a)| op == "ADD" && a == &["truth.tar", "/tests/truth/"]),
            "{ctx}"
        );
        let tmp = tempfile::tempdir().unwrap();
        // The workspace is byte for byte what a server's reset hands out.
        let ws = tmp.path().join("app");
        untar(&dir.join("environment/workspace.tar"), &ws);
        let fresh = server::tasks::generate_task(&def, seed, &tmp.path().join("fresh")).unwrap();
        assert!(
            tree(&ws) == tree(&fresh.workspace),
            "{ctx}: workspace differs from a fresh generation"
        );
        // The ground truth is in tests/ (as the verifier loads it) ...
        let truth = tmp.path().join("truth");
        untar(&dir.join("tests/truth.tar"), &truth);
        let g = server::tasks::load_generated(&truth).unwrap();
        assert_eq!((g.task_id, g.seed), (def.task.id, seed), "{ctx}");
        assert_eq!(
            server::env::finished::read_info(&truth).unwrap(),
            def.task.to_info()
        );
        assert!(tree(&truth.join("workspace")) == tree(&ws), "{ctx}");
        assert!(!g.secrets.is_empty());
        // ... and in nothing the agent reads but the workspace itself.
        for f in ["instruction.md", "task.toml", "environment/Dockerfile"] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            for s in &g.secrets {
                assert!(!text.contains(&s.value), "{ctx}/{f} holds secret {}", s.id);
            }
        }
        for name in [
            "truth.json",
            "info.json",
            "allowlist.toml",
            "pristine",
            ".stamp",
            "oracle.json",
        ] {
            assert!(!ws.join(name).exists(), "{ctx}: {name} in the workspace");
        }
        // The verifier's binary and script.
        use std::os::unix::fs::PermissionsExt;
        for f in ["tests/secaudit", "tests/test.sh", "solution/solve.sh"] {
            let m = std::fs::metadata(dir.join(f)).unwrap().permissions().mode();
            assert!(m & 0o111 != 0, "{ctx}/{f} not executable");
        }
    }
}

/// The grade command test.sh runs, with the image's paths mapped to `map`.
fn test_sh_grade(dir: &Path, map: &[(&str, &Path)]) -> Command {
    let text = std::fs::read_to_string(dir.join("tests/test.sh")).unwrap();
    let line = text
        .replace("\\\n", " ")
        .lines()
        .find(|l| l.starts_with("exec "))
        .expect("test.sh execs secaudit")
        .to_string();
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[1], "/usr/local/bin/secaudit");
    assert_eq!(words[2], "grade");
    let mut cmd = Command::new(util::bin());
    cmd.arg("grade");
    for w in &words[3..] {
        let mapped = map
            .iter()
            .find(|(from, _)| from == w)
            .map(|(_, to)| to.as_os_str().to_owned());
        assert!(
            w.starts_with("--") || mapped.is_some(),
            "test.sh path {w} not mapped"
        );
        cmd.arg(mapped.unwrap_or_else(|| w.into()));
    }
    cmd
}

struct Graded {
    code: Option<i32>,
    reward_txt: Option<f64>,
    reward_json: Option<Value>,
    stdout: String,
    stderr: String,
}

/// Grades `ws` as the verifier would, against the truth shipped in `dir`;
/// `docker_like`: under Docker's default confinement
/// (`scripts/docker-like.py`), as in the verifier's container.
fn grade_in(dir: &Path, ws: &Path, truth: &Path, docker_like: bool) -> Graded {
    let logs = tempfile::tempdir().unwrap();
    let venv = util::venv();
    let direct = test_sh_grade(
        dir,
        &[
            ("/tests/truth", truth),
            ("/app", ws),
            (secaudit::harbor::VENV, &venv),
            ("/logs/verifier", logs.path()),
        ],
    );
    let mut cmd = if docker_like {
        let mut c = Command::new("/usr/bin/python3");
        c.arg(util::root().join("scripts/docker-like.py"))
            .arg("--")
            .arg(direct.get_program())
            .args(direct.get_args())
            // What `auto` picks there is the point, whatever the test
            // run's own tier variable says.
            .env("SECAUDIT_SANDBOX", "auto");
        c
    } else {
        direct
    };
    let r = run_bounded(&mut cmd, Duration::from_secs(300));
    let read = |f: &str| std::fs::read_to_string(logs.path().join(f)).ok();
    Graded {
        code: r.status.code(),
        reward_txt: read("reward.txt").map(|t| t.trim().parse().expect("reward.txt is a number")),
        reward_json: read("reward.json").map(|t| serde_json::from_str(&t).unwrap()),
        stdout: r.stdout,
        stderr: r.stderr,
    }
}

fn grade(dir: &Path, ws: &Path, truth: &Path) -> Graded {
    grade_in(dir, ws, truth, false)
}

fn graded_tasks() -> Vec<String> {
    match std::env::var("HARBOR_GRADE_TASKS").ok().as_deref() {
        Some("all") => (1..=13).map(|n| format!("task_{n:02}")).collect(),
        Some(list) => list
            .split(',')
            .map(|n| format!("task_{:02}", n.trim().parse::<u32>().unwrap()))
            .collect(),
        None => GRADED.map(String::from).to_vec(),
    }
}

#[test]
fn verifier_scores_unmodified_zero_and_the_solution_one() {
    let out = tempfile::tempdir().unwrap();
    let tasks = graded_tasks();
    let ids: Vec<String> = tasks
        .iter()
        .map(|t| {
            t.trim_start_matches("task_")
                .trim_start_matches('0')
                .to_string()
        })
        .collect();
    let r = run_bounded(
        Command::new(util::bin())
            .current_dir(util::root())
            .args(["export", "harbor", "--out"])
            .arg(out.path())
            .args(["--tasks", &ids.join(","), "--seeds", &SEED.to_string()]),
        Duration::from_secs(300),
    );
    assert!(r.status.success(), "{}", r.stderr);
    // Canonical tasks, and the variant of the first.
    let mut dirs: Vec<PathBuf> = tasks.iter().map(|t| out.path().join(t)).collect();
    dirs.push(out.path().join(format!("{}-seed_{SEED}", tasks[0])));
    for dir in &dirs {
        let ctx = dir.display().to_string();
        let tmp = tempfile::tempdir().unwrap();
        let truth = tmp.path().join("truth");
        untar(&dir.join("tests/truth.tar"), &truth);

        let before = tmp.path().join("before");
        untar(&dir.join("environment/workspace.tar"), &before);
        let g = grade(dir, &before, &truth);
        assert_eq!(g.code, Some(0), "{ctx}: {}\n{}", g.stdout, g.stderr);
        assert_eq!(g.reward_txt, Some(0.0), "{ctx}: {}", g.stdout);
        let j = g.reward_json.expect("reward.json");
        assert_eq!(j["reward"], 0.0);
        assert_eq!(j["success"], 0);
        assert_eq!(j["leaks_current"], j["leaks_initial"], "{ctx}: {j}");

        let after = tmp.path().join("after");
        untar(&dir.join("environment/workspace.tar"), &after);
        let venv_bin = util::venv().join("bin");
        let path = format!(
            "{}:{}",
            venv_bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let s = run_bounded(
            Command::new("bash")
                .arg(dir.join("solution/solve.sh"))
                .env("SECAUDIT_WORKSPACE", &after)
                .env("PATH", path)
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .env("GIT_AUTHOR_NAME", "Agent")
                .env("GIT_AUTHOR_EMAIL", "agent@sandbox.invalid")
                .env("GIT_COMMITTER_NAME", "Agent")
                .env("GIT_COMMITTER_EMAIL", "agent@sandbox.invalid"),
            Duration::from_secs(300),
        );
        assert!(s.status.success(), "{ctx}: solve.sh: {}", s.stderr);
        let g = grade(dir, &after, &truth);
        assert_eq!(g.code, Some(0), "{ctx}: {}\n{}", g.stdout, g.stderr);
        let j = g.reward_json.expect("reward.json");
        assert_eq!(
            g.reward_txt,
            Some(1.0),
            "{ctx}: {j}\n{}\nsolve: {}",
            g.stdout,
            s.stderr
        );
        assert_eq!(j["reward"], 1.0);
        assert_eq!(j["success"], 1, "{ctx}: {j}");
        assert_eq!(j["leaks_current"], 0);
        if dir == &dirs[0] {
            // The verifier's container: no namespaces, so Landlock.
            let g = grade_in(dir, &after, &truth, true);
            assert_eq!(g.code, Some(0), "{ctx}: {}\n{}", g.stdout, g.stderr);
            assert_eq!(g.reward_txt, Some(1.0), "{ctx}: {}", g.stdout);
            let out: Value = serde_json::from_str(&g.stdout).unwrap();
            assert_eq!(out["sandbox"]["tier"], "landlock", "{}", g.stdout);
        }
    }
}

#[test]
fn checker_refuses_broken_tasks_and_grade_fails_closed() {
    let out = tempfile::tempdir().unwrap();
    let r = run_bounded(
        Command::new(util::bin())
            .current_dir(util::root())
            .args(["export", "harbor", "--tasks", "2", "--out"])
            .arg(out.path()),
        Duration::from_secs(120),
    );
    assert!(r.status.success(), "{}", r.stderr);
    let dir = out.path().join("task_02");
    // Exporting again over it needs --force.
    let again = run_bounded(
        Command::new(util::bin())
            .current_dir(util::root())
            .args(["export", "harbor", "--tasks", "2", "--out"])
            .arg(out.path()),
        Duration::from_secs(120),
    );
    assert!(
        !again.status.success() && again.stderr.contains("--force"),
        "{}",
        again.stderr
    );

    // Three breakages Harbor must see: a misspelt field, a shared verifier,
    // and a missing instruction.
    let toml = std::fs::read_to_string(dir.join("task.toml")).unwrap();
    /// A name, what breaks the task, and what Harbor must then say.
    type Breakage<'a> = (&'a str, Box<dyn Fn(&Path)>, &'a str);
    let cases: [Breakage; 3] = [
        (
            "typo",
            Box::new({
                let toml = toml.clone();
                move |d: &Path| {
                    std::fs::write(
                        d.join("task.toml"),
                        toml.replace("timeout_sec", "timeout_secs"),
                    )
                    .unwrap()
                }
            }),
            "unknown-config-field",
        ),
        (
            "shared",
            Box::new({
                let toml = toml.clone();
                move |d: &Path| {
                    let t = toml
                        .replace(
                            "environment_mode = \"separate\"",
                            "environment_mode = \"shared\"",
                        )
                        .replace("[verifier.environment]", "[unused]");
                    std::fs::write(d.join("task.toml"), t).unwrap()
                }
            }),
            "shared-verifier",
        ),
        (
            "no-instruction",
            Box::new(|d: &Path| std::fs::remove_file(d.join("instruction.md")).unwrap()),
            "invalid-task-files",
        ),
    ];
    for (name, breakit, rule) in &cases {
        let broken = out.path().join(format!("broken-{name}"));
        let st = Command::new("cp")
            .arg("-a")
            .arg(&dir)
            .arg(&broken)
            .status()
            .unwrap();
        assert!(st.success());
        breakit(&broken);
        let (ok, results, stderr) = harbor_check(std::slice::from_ref(&broken));
        assert!(
            !ok,
            "{name}: the checker passed a broken task: {results:?} {stderr}"
        );
        let rules: Vec<&str> = results[0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap())
            .collect();
        assert!(
            rules.contains(rule),
            "{name}: wanted {rule}, got {results:?}"
        );
    }

    // Grade refuses, writing no reward, when it cannot grade: truth
    // without its info.json, or no truth at all.
    let tmp = tempfile::tempdir().unwrap();
    let truth = tmp.path().join("truth");
    untar(&dir.join("tests/truth.tar"), &truth);
    let ws = tmp.path().join("app");
    untar(&dir.join("environment/workspace.tar"), &ws);
    std::fs::remove_file(truth.join(server::env::finished::INFO_FILE)).unwrap();
    let g = grade(&dir, &ws, &truth);
    assert_eq!(g.code, Some(2), "{}", g.stderr);
    assert!(g.reward_txt.is_none() && g.reward_json.is_none());
    let g = grade(&dir, &ws, &tmp.path().join("nothing"));
    assert_eq!(g.code, Some(2), "{}", g.stderr);
    assert!(g.reward_txt.is_none());
}
