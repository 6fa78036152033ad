//! Tests over fixture tasks (built in a tempdir) and over the real tasks in
//! the repository's `tasks/` directory.

use super::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A small git task: two history commits, a history-only secret, a deep
/// (base64) secret, a PEM block and an executable script.
fn fixture(root: &Path) -> PathBuf {
    let dir = root.join("tasks/hard/task_11");
    let w = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq1b2c3d4e5f6g7h8i9j0kLmNoPqRsTuVwXyZ0123456789ab\nQUJDREVGR0g=\n-----END RSA PRIVATE KEY-----";
    let task = serde_json::json!({
        "id": 11, "slug": "task_11", "title": "Fixture", "difficulty": "hard",
        "description": "A fixture.", "scan_mode": "git", "step_budget": 30,
        "secrets": [
            {"id": "s1", "type": "github_pat", "file": "app/config.py", "line": 3,
             "value": "ghp_R4nd0mV4lu3F0rT3st1ngPurp0s3s0nly12", "tier": "surface",
             "encoding": null, "reveals": ["s3"], "blocks": [], "history_only": false},
            {"id": "s2", "type": "connection_string", "file": "app/config.py", "line": 4,
             "value": "postgres://orders:Pq7vX2mK9wLs@db.internal:5432/orders", "tier": "deep",
             "encoding": "base64", "reveals": [], "blocks": ["s1"], "history_only": false},
            {"id": "s3", "type": "aws_access_key_id", "file": "deploy.sh", "line": 2,
             "value": "AKIAQ3ZT7RW2LMXN4BVC", "tier": "hidden", "encoding": null,
             "reveals": [], "blocks": [], "history_only": true},
            {"id": "s4", "type": "private_key", "file": "keys/server.pem", "line": 2,
             "value": pem, "tier": "shallow", "encoding": null,
             "reveals": [], "blocks": [], "history_only": false}
        ],
        "health": {"test_files": ["tests/test_config.py"], "expected_tests": 1},
        "allowlist": {"paths": ["^docs/"], "regexes": [], "stopwords": ["changeme"]},
        "history": [
            {"author": "Dana Whitfield <dana@northwind.example>", "date": "2025-01-06T09:14:00Z",
             "message": "Initial skeleton", "overlay": "history/01"},
            {"author": "Ravi Menon <ravi@northwind.example>", "date": "2025-01-09T16:40:00Z",
             "message": "Config module", "overlay": "files", "exact": true}
        ]
    });
    w("task.json", &serde_json::to_string_pretty(&task).unwrap());
    w(
        "oracle.json",
        r#"{"actions": ["inspect_file app/config.py", "printf '%s==>REMOVED\n' '{{secret:s3}}' > /tmp/r", "submit"]}"#,
    );
    w(
        "files/app/config.py",
        "import os\n\nGITHUB_TOKEN = \"{{secret:s1}}\"\nDB_B64 = \"{{secret:s2:base64}}\"\n",
    );
    w("files/keys/server.pem", "# server key\n{{secret:s4}}\n");
    w(
        "files/tests/test_config.py",
        "def test_ok():\n    assert True\n",
    );
    w("files/pytest.ini", "[pytest]\n");
    w(
        "files/deploy.sh",
        "#!/bin/sh\nexport AWS_ACCESS_KEY_ID=\"$AWS_ACCESS_KEY_ID\"\n",
    );
    w(
        "history/01/deploy.sh",
        "#!/bin/sh\nexport AWS_ACCESS_KEY_ID={{secret:s3}}\n",
    );
    w("history/01/README.md", "Orders service\n");
    for p in ["files/deploy.sh", "history/01/deploy.sh"] {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.join(p), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    root.join("tasks")
}

/// Every regular file under `dir` (skipping `.git`), path → bytes and mode.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt as _;
    fn go(base: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            if e.file_name() == ".git" {
                continue;
            }
            let p = e.path();
            if p.is_dir() {
                go(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
                out.insert(rel, (std::fs::read(&p).unwrap(), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    go(dir, dir, &mut out);
    out
}

fn git(ws: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", ws)
        .output()
        .expect("git CLI (tests only)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Pinned: the fixture's canonical HEAD. If this changes, generated commit
/// ids changed for every task — bump GENERATOR_VERSION and update it.
const FIXTURE_HEAD: &str = "76c044bc65f79bebb07e7a67cdce8c8d76c9994d";

#[test]
fn deterministic() {
    let t = tempfile::tempdir().unwrap();
    let reg = TaskRegistry::load(&fixture(t.path())).unwrap();
    let def = reg.get(11).unwrap();
    let a = generate_task(def, None, &t.path().join("a")).unwrap();
    let b = generate_task(def, None, &t.path().join("b")).unwrap();
    assert_eq!(a.head_commit, b.head_commit);
    assert_eq!(a.tree_id, b.tree_id);
    assert_eq!(a.commits, b.commits);
    assert_eq!(snapshot(&a.workspace), snapshot(&b.workspace));
    assert_eq!(
        snapshot(&t.path().join("a/pristine")),
        snapshot(&t.path().join("b/pristine"))
    );
    assert_eq!(
        std::fs::read(t.path().join("a/truth.json")).unwrap(),
        std::fs::read(t.path().join("b/truth.json")).unwrap()
    );
    assert_eq!(a.head_commit, FIXTURE_HEAD, "canonical commit id moved");
    // Regenerating over an existing output replaces it.
    let c = generate_task(def, None, &t.path().join("a")).unwrap();
    assert_eq!(c.head_commit, a.head_commit);
}

#[test]
fn repository_is_sound() {
    let t = tempfile::tempdir().unwrap();
    let reg = TaskRegistry::load(&fixture(t.path())).unwrap();
    let g = generate_task(reg.get(11).unwrap(), None, &t.path().join("out")).unwrap();
    let ws = &g.workspace;
    assert_eq!(git(ws, &["rev-parse", "HEAD"]).trim(), g.head_commit);
    assert_eq!(git(ws, &["symbolic-ref", "HEAD"]).trim(), "refs/heads/main");
    assert_eq!(git(ws, &["status", "--porcelain"]), "");
    // diff-index trusts the index's stat data: it must match the files.
    git(ws, &["diff-index", "--quiet", "HEAD"]);
    git(ws, &["fsck", "--strict", "--no-progress"]);
    let log = git(ws, &["log", "--format=%an <%ae>|%cn|%at|%s"]);
    assert_eq!(
        log,
        "Ravi Menon <ravi@northwind.example>|Ravi Menon|1736440800|Config module\n\
         Dana Whitfield <dana@northwind.example>|Dana Whitfield|1736154840|Initial skeleton\n"
    );
    assert_eq!(g.commits.len(), 2);
    // The history-only value is in the first commit and not the final tree.
    let s3 = g.secrets.iter().find(|s| s.id == "s3").unwrap();
    assert_eq!((s3.file.as_str(), s3.line), ("deploy.sh", 2));
    assert!(git(ws, &["show", &format!("{}:deploy.sh", g.commits[0].id)]).contains(&s3.value));
    assert!(
        !std::fs::read_to_string(ws.join("deploy.sh"))
            .unwrap()
            .contains(&s3.value)
    );
    assert_eq!(
        git(ws, &["ls-tree", "HEAD", "deploy.sh"])
            .split_whitespace()
            .next(),
        Some("100755")
    );
    // Trusted copies sit outside the workspace.
    assert_eq!(g.pristine_files, ["pytest.ini", "tests/test_config.py"]);
    assert!(g.pristine.join("pytest.ini").is_file());
    let allow = std::fs::read_to_string(&g.allowlist).unwrap();
    assert!(
        allow.contains("[allowlist]") && allow.contains("\"^docs/\"") && allow.contains("changeme"),
        "{allow}"
    );
    assert!(!ws.join("truth.json").exists() && !ws.join("task.json").exists());
    let back = load_generated(&t.path().join("out")).unwrap();
    assert_eq!(back, g);
    // Oracle placeholders are rendered.
    assert!(g.oracle[1].contains(&s3.value));
}

#[test]
fn variants() {
    let t = tempfile::tempdir().unwrap();
    let reg = TaskRegistry::load(&fixture(t.path())).unwrap();
    let def = reg.get(11).unwrap();
    let canon = generate_task(def, None, &t.path().join("c")).unwrap();
    let v1 = generate_task(def, Some(1), &t.path().join("v1")).unwrap();
    let v1b = generate_task(def, Some(1), &t.path().join("v1b")).unwrap();
    let v2 = generate_task(def, Some(2), &t.path().join("v2")).unwrap();
    for (s, spec) in canon.secrets.iter().zip(&def.task.secrets) {
        assert_eq!(s.value, spec.value, "canonical uses task.json values");
        assert_eq!(s.line, spec.line);
    }
    assert_eq!(v1.head_commit, v1b.head_commit, "a seed is deterministic");
    assert_ne!(v1.head_commit, v2.head_commit);
    assert_ne!(v1.head_commit, canon.head_commit);
    for ((a, b), c) in v1.secrets.iter().zip(&v2.secrets).zip(&canon.secrets) {
        assert_ne!(a.value, b.value);
        assert_ne!(a.value, c.value);
        assert_eq!(a.line, c.line, "same shapes keep the layout");
    }
    // Rendered values really are in the variant workspace.
    let cfg = std::fs::read_to_string(v1.workspace.join("app/config.py")).unwrap();
    assert!(cfg.contains(&v1.secrets[0].value));
    assert!(cfg.contains(&Encoding::Base64.encode(&v1.secrets[1].value)));
    assert!(!cfg.contains(&canon.secrets[0].value));
    let pem = std::fs::read_to_string(v1.workspace.join("keys/server.pem")).unwrap();
    assert!(
        pem.contains("-----BEGIN RSA PRIVATE KEY-----\n")
            && pem.contains("-----END RSA PRIVATE KEY-----")
    );
    // The canonical output never moves after variants were made.
    let again = generate_task(def, None, &t.path().join("c2")).unwrap();
    assert_eq!(again.head_commit, canon.head_commit);
}

#[test]
fn generate_all_skips_up_to_date() {
    let t = tempfile::tempdir().unwrap();
    let tasks = fixture(t.path());
    let reg = TaskRegistry::load(&tasks).unwrap();
    let data = t.path().join("data");
    let mut lines = Vec::new();
    generate_all(&reg, &data, |i, n, l| lines.push(format!("[{i}/{n}] {l}"))).unwrap();
    generate_all(&reg, &data, |i, n, l| lines.push(format!("[{i}/{n}] {l}"))).unwrap();
    assert!(lines[0].contains("generated"), "{lines:?}");
    assert!(lines[1].contains("up to date"), "{lines:?}");
    std::fs::write(tasks.join("hard/task_11/files/README.md"), "changed\n").unwrap();
    let reg = TaskRegistry::load(&tasks).unwrap();
    let g = generate_all(&reg, &data, |i, n, l| lines.push(format!("[{i}/{n}] {l}"))).unwrap();
    assert!(lines[2].contains("generated"), "{lines:?}");
    assert!(g[0].workspace.join("README.md").is_file());
    let vs = generate_variants(reg.get(11).unwrap(), 5, 2, &data, |_, _, _| {}).unwrap();
    assert_eq!(
        vs.iter().map(|v| v.seed).collect::<Vec<_>>(),
        [Some(5), Some(6)]
    );
    assert!(
        variant_dir(&data, "task_11", 6)
            .join("truth.json")
            .is_file()
    );
}

#[test]
fn authoring_mistakes_are_errors() {
    let t = tempfile::tempdir().unwrap();
    let tasks = fixture(t.path());
    let dir = tasks.join("hard/task_11");
    let task_json = dir.join("task.json");
    let orig = std::fs::read_to_string(&task_json).unwrap();
    let gen_err = || {
        let reg = TaskRegistry::load(&tasks)?;
        generate_task(reg.get(11).unwrap(), None, &t.path().join("o")).map(|_| ())
    };
    // Wrong line.
    std::fs::write(&task_json, orig.replacen("\"line\": 3", "\"line\": 5", 1)).unwrap();
    assert!(format!("{:#}", gen_err().unwrap_err()).contains("renders on line 3"));
    std::fs::write(&task_json, &orig).unwrap();
    // A hard-coded value.
    std::fs::write(dir.join("files/notes.txt"), "AKIAQ3ZT7RW2LMXN4BVC\n").unwrap();
    assert!(format!("{:#}", gen_err().unwrap_err()).contains("hard-codes"));
    std::fs::remove_file(dir.join("files/notes.txt")).unwrap();
    // History-only value left in the final tree.
    std::fs::write(dir.join("files/deploy.sh"), "{{secret:s3}}\n").unwrap();
    assert!(format!("{:#}", gen_err().unwrap_err()).contains("final tree"));
    std::fs::write(dir.join("files/deploy.sh"), "#!/bin/sh\n").unwrap();
    // Unknown reveal target.
    std::fs::write(
        &task_json,
        orig.replacen(
            "\"reveals\": [\n        \"s3\"",
            "\"reveals\": [\n        \"s9\"",
            1,
        ),
    )
    .unwrap();
    assert!(format!("{:#}", gen_err().unwrap_err()).contains("unknown id"));
    std::fs::write(&task_json, &orig).unwrap();
    // A symlink in a template tree.
    std::os::unix::fs::symlink("/etc/passwd", dir.join("files/passwd")).unwrap();
    assert!(format!("{:#}", gen_err().unwrap_err()).contains("symlink"));
}

#[test]
fn resolve_refs() {
    let t = tempfile::tempdir().unwrap();
    let reg = TaskRegistry::load(&fixture(t.path())).unwrap();
    use crate::models::TaskRef;
    for r in [
        TaskRef::Number(11),
        TaskRef::Name("task_11".into()),
        TaskRef::Name("11".into()),
    ] {
        assert_eq!(reg.resolve(&r).map(|d| d.task.id), Some(11));
    }
    for r in [
        TaskRef::Number(1),
        TaskRef::Name("task_x".into()),
        TaskRef::Name("".into()),
    ] {
        assert!(reg.resolve(&r).is_none());
    }
}

// ---- the real tasks -------------------------------------------------------

fn repo_tasks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks")
}

/// task.json files under the repository's tasks/ dir.
fn real_task_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in ["easy", "medium", "hard"] {
        let Ok(rd) = std::fs::read_dir(repo_tasks().join(d)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path().join("task.json");
            if p.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn schema_matches_model() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_tasks().join("task.schema.json")).unwrap(),
    )
    .unwrap();
    let types: Vec<&str> = schema["$defs"]["secret"]["properties"]["type"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let model: Vec<&str> = SecretType::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(types, model);
    let v = jsonschema::draft202012::new(&schema).unwrap();
    // The schema rejects what the model rejects.
    let good = serde_json::json!({
        "id": 2, "slug": "task_02", "title": "t", "difficulty": "easy", "description": "d",
        "scan_mode": "dir", "step_budget": 10,
        "secrets": [{"id": "s1", "type": "jwt", "file": "a.py", "line": 1, "value": "x", "tier": "surface"}],
        "health": {"test_files": ["tests/test_a.py"], "expected_tests": 1}
    });
    assert!(v.is_valid(&good));
    let mut with_variants = good.clone();
    with_variants["variants"] = serde_json::json!({
        "paths": {"a.py": ["b.py", "src/a.py"]}, "encodings": {"s1": ["base64", "hex"]}
    });
    assert!(v.is_valid(&with_variants));
    for (ptr, bad) in [
        ("/step_budget", serde_json::json!(20)),
        ("/id", serde_json::json!(7)),
        ("/secrets/0/type", serde_json::json!("aws_key")),
        ("/secrets/0/file", serde_json::json!("../etc/passwd")),
        ("/secrets/0/file", serde_json::json!(".git/config")),
        ("/secrets/0/history_only", serde_json::json!(true)),
        ("/secrets/0/tier", serde_json::json!("deep")),
        ("/extra", serde_json::json!(1)),
        (
            "/variants",
            serde_json::json!({"paths": {"a.py": ["../b.py"]}}),
        ),
        ("/variants", serde_json::json!({"paths": {"a.py": []}})),
        (
            "/variants",
            serde_json::json!({"encodings": {"s1": ["rot13"]}}),
        ),
        ("/variants", serde_json::json!({"lines": {}})),
    ] {
        let mut b = good.clone();
        let (parent, key) = ptr.rsplit_once('/').unwrap();
        b.pointer_mut(if parent.is_empty() { "" } else { parent })
            .unwrap()[key] = bad;
        assert!(!v.is_valid(&b), "{ptr} should be rejected");
    }
}

#[test]
fn real_tasks_validate() {
    let files = real_task_files();
    if files.is_empty() {
        eprintln!(
            "note: no task dirs under {} yet; nothing to validate",
            repo_tasks().display()
        );
        return;
    }
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_tasks().join("task.schema.json")).unwrap(),
    )
    .unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let mut problems = Vec::new();
    for f in &files {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        for e in v.iter_errors(&json) {
            problems.push(format!("{}: {} at {}", f.display(), e, e.instance_path()));
        }
    }
    assert!(
        problems.is_empty(),
        "schema violations:\n{}",
        problems.join("\n")
    );
    // Semantic checks (ids, references, budgets, ranges, slugs).
    let reg = TaskRegistry::load(&repo_tasks()).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(reg.list().len(), files.len());
    for d in reg.list() {
        assert!(
            d.oracle.actions.len() <= d.task.step_budget as usize,
            "{}: oracle has {} actions, budget {}",
            d.task.slug,
            d.oracle.actions.len(),
            d.task.step_budget
        );
    }
}

/// Every real task generates (canonical and one variant), and each rendered
/// secret is found at its stated file and line, read back from the
/// working tree or, for history-only secrets, from git.
#[test]
fn real_tasks_generate() {
    if real_task_files().is_empty() {
        eprintln!("note: no task dirs yet; nothing to generate");
        return;
    }
    let reg = TaskRegistry::load(&repo_tasks()).unwrap_or_else(|e| panic!("{e:#}"));
    let t = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for d in reg.list() {
        for seed in [None, Some(1)] {
            let out = t.path().join(format!("{}-{seed:?}", d.task.slug));
            let g = match generate_task(d, seed, &out) {
                Ok(g) => g,
                Err(e) => {
                    failures.push(format!("{} seed {seed:?}: {e:#}", d.task.slug));
                    continue;
                }
            };
            let repo = git2::Repository::open(&g.workspace).unwrap();
            for s in &g.secrets {
                let full = s
                    .encoding
                    .map_or_else(|| s.value.clone(), |e| e.encode(&s.value));
                let content = if s.history_only {
                    find_in_history(&repo, &s.file, &full)
                } else {
                    std::fs::read(g.workspace.join(&s.file)).ok()
                };
                let form = full.lines().next().unwrap_or("").to_owned();
                let ok = content.as_deref().is_some_and(|c| {
                    c.split(|&b| b == b'\n')
                        .nth(s.line as usize - 1)
                        .is_some_and(|l| l.windows(form.len()).any(|w| w == form.as_bytes()))
                });
                if !ok {
                    failures.push(format!(
                        "{} seed {seed:?}: {} not at {}:{}",
                        d.task.slug, s.id, s.file, s.line
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The content of `file` in the first commit (oldest first) whose version
/// of it contains `value`.
fn find_in_history(repo: &git2::Repository, file: &str, value: &str) -> Option<Vec<u8>> {
    let mut walk = repo.revwalk().ok()?;
    walk.push_head().ok()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
        .ok()?;
    for oid in walk.flatten() {
        let tree = repo.find_commit(oid).ok()?.tree().ok()?;
        let Ok(entry) = tree.get_path(Path::new(file)) else {
            continue;
        };
        let blob = repo.find_blob(entry.id()).ok()?;
        if blob
            .content()
            .windows(value.len())
            .any(|w| w == value.as_bytes())
        {
            return Some(blob.content().to_vec());
        }
    }
    None
}

/// Every git object id in `ws`'s object database, sorted.
fn object_ids(ws: &Path) -> Vec<String> {
    let repo = git2::Repository::open(ws).unwrap();
    let mut ids = Vec::new();
    repo.odb()
        .unwrap()
        .foreach(|id| {
            ids.push(id.to_string());
            true
        })
        .unwrap();
    ids.sort();
    ids
}

/// The fixture with `variants`: s2's encoding varies, deploy.sh (which
/// holds the history-only s3 and is deleted by no commit) and the PEM file
/// move, and files refer to the moved paths through `{{path:}}`.
fn variant_fixture(root: &Path) -> PathBuf {
    let tasks = fixture(root);
    let dir = tasks.join("hard/task_11");
    let tj = dir.join("task.json");
    let mut task: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tj).unwrap()).unwrap();
    task["variants"] = serde_json::json!({
        "paths": {"deploy.sh": ["scripts/deploy.sh", "bin/ship.sh"],
                  "keys/server.pem": ["keys/tls.pem", "certs/server.key"]},
        "encodings": {"s2": ["base64", "hex"]}
    });
    task["history"][1]["message"] = "Config module; see {{path:deploy.sh}}".into();
    std::fs::write(&tj, serde_json::to_string_pretty(&task).unwrap()).unwrap();
    std::fs::write(
        dir.join("files/app/config.py"),
        "import os\n\nGITHUB_TOKEN = \"{{secret:s1}}\"\nDB_{{enc:s2:B64|HEX}} = \"{{secret:s2:enc}}\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("files/README.md"),
        "Deploy with {{path:deploy.sh}}; key in {{name:keys/server.pem}}.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("oracle.json"),
        r#"{"actions": ["inspect_file {{path:keys/server.pem}}", "sed -i '/DB_{{enc:s2:B64|HEX}}/d' app/config.py", "submit"]}"#,
    )
    .unwrap();
    tasks
}

#[test]
fn variant_moves_files_and_encodings() {
    let t = tempfile::tempdir().unwrap();
    let reg = TaskRegistry::load(&variant_fixture(t.path())).unwrap_or_else(|e| panic!("{e:#}"));
    let def = reg.get(11).unwrap();
    // The canonical task is unchanged by the variants section.
    let canon = generate_task(def, None, &t.path().join("c")).unwrap();
    assert!(canon.renamed.is_empty());
    assert!(canon.workspace.join("deploy.sh").is_file());
    let readme = std::fs::read_to_string(canon.workspace.join("README.md")).unwrap();
    assert_eq!(readme, "Deploy with deploy.sh; key in server.pem.\n");
    assert_eq!(canon.oracle[0], "inspect_file keys/server.pem");
    assert_eq!(canon.oracle[1], "sed -i '/DB_B64/d' app/config.py");

    let mut encodings = std::collections::BTreeSet::new();
    for seed in 1..=8 {
        let g = generate_task(def, Some(seed), &t.path().join(format!("v{seed}"))).unwrap();
        let ws = &g.workspace;
        let deploy = &g.renamed["deploy.sh"];
        let pem = &g.renamed["keys/server.pem"];
        assert!(["scripts/deploy.sh", "bin/ship.sh"].contains(&deploy.as_str()));
        assert!(["keys/tls.pem", "certs/server.key"].contains(&pem.as_str()));
        // Moved in the working tree, in every commit, and in the truth.
        assert!(ws.join(deploy).is_file() && ws.join(pem).is_file());
        assert!(!ws.join("deploy.sh").exists() && !ws.join("keys/server.pem").exists());
        let repo = git2::Repository::open(ws).unwrap();
        for c in &g.commits {
            let tree = repo
                .find_commit(git2::Oid::from_str(&c.id).unwrap())
                .unwrap()
                .tree()
                .unwrap();
            assert!(tree.get_path(Path::new("deploy.sh")).is_err(), "{}", c.id);
            assert!(tree.get_path(Path::new(deploy)).is_ok(), "{}", c.id);
        }
        let s3 = g.secrets.iter().find(|s| s.id == "s3").unwrap();
        assert_eq!((s3.file.as_str(), s3.line), (deploy.as_str(), 2));
        let first = git(ws, &["show", &format!("{}:{deploy}", g.commits[0].id)]);
        assert!(first.contains(&s3.value), "history-only secret moved too");
        assert_eq!(
            git(ws, &["ls-tree", "HEAD", deploy])
                .split_whitespace()
                .next(),
            Some("100755")
        );
        assert_eq!(g.secrets.iter().find(|s| s.id == "s4").unwrap().file, *pem);
        // References and the oracle follow; the commit message too.
        let readme = std::fs::read_to_string(ws.join("README.md")).unwrap();
        let pem_name = pem.rsplit('/').next().unwrap();
        assert_eq!(
            readme,
            format!("Deploy with {deploy}; key in {pem_name}.\n")
        );
        assert_eq!(g.oracle[0], format!("inspect_file {pem}"));
        assert_eq!(
            g.commits[1].message,
            format!("Config module; see {deploy}\n")
        );
        // The encoding follows the draw in the file, the truth and the oracle.
        let s2 = g.secrets.iter().find(|s| s.id == "s2").unwrap();
        let e = s2.encoding.unwrap();
        encodings.insert(e.name());
        let cfg = std::fs::read_to_string(ws.join("app/config.py")).unwrap();
        let (key, form) = match e {
            Encoding::Base64 => ("DB_B64", Encoding::Base64.encode(&s2.value)),
            Encoding::Hex => ("DB_HEX", Encoding::Hex.encode(&s2.value)),
        };
        assert!(cfg.contains(&format!("{key} = \"{form}\"")), "{cfg}");
        assert_eq!(g.oracle[1], format!("sed -i '/{key}/d' app/config.py"));
    }
    assert_eq!(encodings.len(), 2, "8 seeds draw both encodings");
}

#[test]
fn variant_authoring_mistakes_are_errors() {
    let t = tempfile::tempdir().unwrap();
    let tasks = variant_fixture(t.path());
    let dir = tasks.join("hard/task_11");
    let gen_err = |seed: Option<u64>| {
        let reg = TaskRegistry::load(&tasks)?;
        generate_task(reg.get(11).unwrap(), seed, &t.path().join("o")).map(|_| ())
    };
    // A fixed form for a secret whose encoding varies.
    let cfg = dir.join("files/app/config.py");
    let good = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        good.replace("{{secret:s2:enc}}", "{{secret:s2:base64}}"),
    )
    .unwrap();
    assert!(gen_err(None).is_ok(), "canonical renders base64 anyway");
    assert!(format!("{:#}", gen_err(Some(1)).unwrap_err()).contains("encoding varies"));
    std::fs::write(&cfg, &good).unwrap();
    // A `{{path:}}` the task does not declare.
    std::fs::write(dir.join("files/NOTES.md"), "{{path:app/config.py}}\n").unwrap();
    assert!(format!("{:#}", gen_err(None).unwrap_err()).contains("not a path the task may rename"));
    std::fs::remove_file(dir.join("files/NOTES.md")).unwrap();
    // Moving onto a file that exists.
    std::fs::create_dir_all(dir.join("files/bin")).unwrap();
    std::fs::write(dir.join("files/bin/ship.sh"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(dir.join("files/scripts")).unwrap();
    std::fs::write(dir.join("files/scripts/deploy.sh"), "#!/bin/sh\n").unwrap();
    assert!(format!("{:#}", gen_err(Some(1)).unwrap_err()).contains("already has"));
    std::fs::remove_dir_all(dir.join("files/bin")).unwrap();
    std::fs::remove_dir_all(dir.join("files/scripts")).unwrap();
    // A secret placeholder in a commit message.
    let tj = dir.join("task.json");
    let text = std::fs::read_to_string(&tj).unwrap();
    std::fs::write(&tj, text.replace("see {{path:deploy.sh}}", "{{secret:s1}}")).unwrap();
    assert!(format!("{:#}", gen_err(None).unwrap_err()).contains("may not plant secrets"));
    std::fs::write(&tj, &text).unwrap();
    assert!(gen_err(Some(1)).is_ok());
    // A placement slot missing from the templates.
    let mut task: serde_json::Value = serde_json::from_str(&text).unwrap();
    task["variants"]["placements"] =
        serde_json::json!({"tok": {"text": "TOKEN = \"{{secret:s1}}\"\n", "slots": 2}});
    std::fs::write(&tj, serde_json::to_string(&task).unwrap()).unwrap();
    std::fs::write(
        &cfg,
        good.replace("GITHUB_TOKEN = \"{{secret:s1}}\"\n", "{{slot:tok:1}}"),
    )
    .unwrap();
    assert!(format!("{:#}", gen_err(None).unwrap_err()).contains("no {{slot:tok:2}}"));
    std::fs::write(
        &cfg,
        format!(
            "{}{{{{slot:tok:2}}}}",
            std::fs::read_to_string(&cfg).unwrap()
        ),
    )
    .unwrap();
    let reg = TaskRegistry::load(&tasks).unwrap();
    let g = generate_task(reg.get(11).unwrap(), Some(1), &t.path().join("p")).unwrap();
    let s1 = g.secrets.iter().find(|s| s.id == "s1").unwrap();
    assert_eq!(s1.line, 4, "slot 2 sits after the DB line");
    let c = generate_task(reg.get(11).unwrap(), None, &t.path().join("pc")).unwrap();
    assert_eq!(c.secrets.iter().find(|s| s.id == "s1").unwrap().line, 3);
}

/// The real tasks' variants: the same seed gives byte-identical output (the
/// working tree with modes, truth.json, every git object id); different
/// seeds and the canonical task differ in every value and, where the task
/// varies them, in every renamable path; and the rename is complete (no
/// commit keeps the canonical path).
#[test]
fn real_variants_deterministic_and_distinct() {
    let reg = TaskRegistry::load(&repo_tasks()).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(reg.list().len(), 13);
    let t = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for d in reg.list() {
        let slug = &d.task.slug;
        let out = |name: &str| t.path().join(format!("{slug}-{name}"));
        let canon = generate_task(d, None, &out("c")).unwrap();
        let a = generate_task(d, Some(7), &out("a")).unwrap();
        let b = generate_task(d, Some(7), &out("b")).unwrap();
        let other = generate_task(d, Some(8), &out("o")).unwrap();
        if snapshot(&a.workspace) != snapshot(&b.workspace)
            || object_ids(&a.workspace) != object_ids(&b.workspace)
            || std::fs::read(out("a").join("truth.json")).unwrap()
                != std::fs::read(out("b").join("truth.json")).unwrap()
            || (a.head_commit.as_str(), a.tree_id.as_str())
                != (b.head_commit.as_str(), b.tree_id.as_str())
        {
            failures.push(format!("{slug}: seed 7 differs between two generations"));
        }
        for ((x, y), c) in a.secrets.iter().zip(&other.secrets).zip(&canon.secrets) {
            if x.value == y.value || x.value == c.value || y.value == c.value {
                failures.push(format!("{slug}: {} repeats a value across seeds", x.id));
            }
        }
        if a.head_commit == other.head_commit || a.head_commit == canon.head_commit {
            failures.push(format!("{slug}: variants share a commit id"));
        }
        for g in [&a, &other] {
            let repo = git2::Repository::open(&g.workspace).unwrap();
            for from in d.task.variants.paths.keys() {
                let Some(to) = g.renamed.get(from) else {
                    failures.push(format!("{slug} seed {:?}: {from} not moved", g.seed));
                    continue;
                };
                let mut found = false;
                for c in &g.commits {
                    let tree = repo
                        .find_commit(git2::Oid::from_str(&c.id).unwrap())
                        .unwrap()
                        .tree()
                        .unwrap();
                    found |= tree.get_path(Path::new(to)).is_ok();
                    if tree.get_path(Path::new(from)).is_ok() {
                        failures.push(format!(
                            "{slug} seed {:?}: {from} still in {}",
                            g.seed, c.id
                        ));
                    }
                }
                if !found {
                    failures.push(format!("{slug} seed {:?}: {to} in no commit", g.seed));
                }
            }
            // A placement puts the leak on other lines than canonical.
            if !d.task.variants.placements.is_empty()
                && g.secrets
                    .iter()
                    .zip(&canon.secrets)
                    .all(|(x, c)| x.line == c.line)
            {
                failures.push(format!("{slug} seed {:?}: placement did not move", g.seed));
            }
            // Secrets in a moved file say so.
            for s in &g.secrets {
                let spec = d.task.secret(&s.id).unwrap();
                let want = g.renamed.get(&spec.file).unwrap_or(&spec.file);
                if &s.file != want {
                    failures.push(format!("{slug}: {} truth says {} not {want}", s.id, s.file));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
