//! `secaudit scan` in gitleaks' place, through the built binary: report
//! path and formats, exit codes, redaction, `.gitleaks.toml` and
//! `.gitleaksignore` at the scan root, baselines, and the pre-commit hook
//! manifest.

use crate::util;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const AWS: &str = "AKIAZ7Q2LMN4PRS6TUV3";
const GH: &str = "ghp_R8mK2vQ9xL4nT7pW3sY6bD1fH5jZ0cE2aG4i";

/// Runs `secaudit ARGS` in `cwd`, with no gitleaks variables inherited.
fn secaudit(cwd: &Path, args: &[&str]) -> Output {
    Command::new(util::bin())
        .args(args)
        .current_dir(cwd)
        .env_remove("GITLEAKS_CONFIG")
        .env_remove("GITLEAKS_CONFIG_TOML")
        .output()
        .expect("run secaudit")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}{}", stdout(o), stderr(o)))
}

/// A directory with `a.py` (an AWS key id) and `b.py` (a GitHub token).
fn two_leaks() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(d.path().join("a.py"), format!("AWS_ID = \"{AWS}\"\n")).unwrap();
    std::fs::write(d.path().join("b.py"), format!("\n\nTOKEN = \"{GH}\"\n")).unwrap();
    d
}

fn rule_files(report: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = report
        .as_array()
        .expect("array")
        .iter()
        .map(|f| {
            (
                f["RuleID"].as_str().unwrap().to_string(),
                f["File"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn report_path_writes_the_file_and_leaves_stdout_empty() {
    let d = two_leaks();
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("leaks.json");
    let o = secaudit(
        d.path(),
        &[
            "scan",
            ".",
            "--report-format",
            "gitleaks",
            "--report-path",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "the report went to the file");
    assert!(stderr(&o).contains("2 finding(s)"), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        rule_files(&r),
        [
            ("aws-access-key-id".to_string(), "a.py".to_string()),
            ("github-pat".to_string(), "b.py".to_string())
        ]
    );
    let b = r
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["File"] == "b.py")
        .unwrap();
    assert_eq!(b["StartLine"], 3);
    assert_eq!(b["Fingerprint"], "b.py:github-pat:3");

    // "-" is stdout; `-r X.sarif` without a format writes SARIF.
    let o = secaudit(d.path(), &["scan", "-f", "gitleaks", "-r", "-"]);
    assert_eq!(rule_files(&json(&o)).len(), 2);
    let sarif = out.path().join("leaks.sarif");
    let o = secaudit(d.path(), &["scan", "-r", sarif.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    let s: Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    check_sarif(&s);
}

/// The SARIF 2.1.0 properties the schema requires (log: `version`, `runs`;
/// run: `tool`; tool: `driver`; driver: `name`; rule: `id`; result:
/// `message` with `text`; location URIs and regions 1-based), plus what
/// GitHub code scanning needs: every result's rule listed, by id and index.
fn check_sarif(s: &Value) {
    assert_eq!(s["version"], "2.1.0");
    assert!(s["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let run = &s["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "secaudit");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    if let Some(u) = driver.get("informationUri") {
        let u = u.as_str().unwrap();
        assert!(u.starts_with("https://") && !u.contains(".invalid"), "{u}");
    }
    let rules = driver["rules"].as_array().expect("rules");
    assert!(
        rules.len() >= 20,
        "every built-in rule listed: {}",
        rules.len()
    );
    for r in rules {
        assert!(r["id"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
        assert!(r["shortDescription"]["text"].is_string(), "{r}");
    }
    let results = run["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for r in results {
        assert!(r["message"]["text"].as_str().is_some_and(|s| !s.is_empty()));
        let i = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
        let pl = &r["locations"][0]["physicalLocation"];
        assert!(pl["artifactLocation"]["uri"].is_string());
        for k in ["startLine", "startColumn", "endLine", "endColumn"] {
            assert!(
                pl["region"][k].as_u64().is_some_and(|n| n >= 1),
                "{k}: {pl}"
            );
        }
    }
}

#[test]
fn exit_code_is_the_flag_with_findings_zero_without_two_on_error() {
    let d = two_leaks();
    assert_eq!(code(&secaudit(d.path(), &["scan", "."])), 1, "default 1");
    let o = secaudit(d.path(), &["scan", ".", "--exit-code", "7"]);
    assert_eq!(code(&o), 7, "{}", stderr(&o));
    assert_eq!(
        code(&secaudit(d.path(), &["scan", ".", "--exit-code", "0"])),
        0
    );
    let clean = tempfile::tempdir().unwrap();
    std::fs::write(clean.path().join("ok.py"), "print('hello')\n").unwrap();
    assert_eq!(
        code(&secaudit(clean.path(), &["scan", ".", "--exit-code", "7"])),
        0
    );
    // Errors are 2, never the findings status.
    let o = secaudit(d.path(), &["scan", "no-such-dir", "--exit-code", "7"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = secaudit(d.path(), &["scan", ".", "--baseline-path", "missing.json"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn redact_hides_all_or_part_of_each_secret() {
    let d = two_leaks();
    let secret_of = |args: &[&str]| -> String {
        let mut a = vec!["scan", ".", "-f", "gitleaks"];
        a.extend_from_slice(args);
        let o = secaudit(d.path(), &a);
        let r = json(&o);
        let f = r
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["File"] == "a.py")
            .unwrap()
            .clone();
        f["Secret"].as_str().unwrap().to_string()
    };
    assert_eq!(secret_of(&[]), "REDACTED", "hidden by default");
    assert_eq!(secret_of(&["--redact"]), "REDACTED");
    // gitleaks: the first round_half_even(20 * 0.5) = 10 bytes, then "...".
    assert_eq!(secret_of(&["--redact=50"]), "AKIAZ7Q2LM...");
    assert_eq!(secret_of(&["--redact=20"]), "AKIAZ7Q2LMN4PRS6...");
    assert_eq!(secret_of(&["--redact=0"]), AWS);
    assert_eq!(secret_of(&["--show-secrets"]), AWS);
    // Our JSON: `value` only when not fully redacted.
    let o = secaudit(d.path(), &["scan", ".", "--redact=50"]);
    let v = json(&o);
    let a = v
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "a.py")
        .unwrap()
        .clone();
    assert_eq!(a["value"], "AKIAZ7Q2LM...");
    let o = secaudit(d.path(), &["scan", "."]);
    assert!(json(&o)[0].get("value").is_none());
    assert!(!stdout(&o).contains(AWS));
    let o = secaudit(d.path(), &["scan", ".", "--redact=50", "--show-secrets"]);
    assert_eq!(code(&o), 2, "conflicting flags: {}", stderr(&o));
}

#[test]
fn gitleaks_toml_at_the_scan_root_is_loaded_without_a_flag() {
    let d = two_leaks();
    std::fs::write(
        d.path().join(".gitleaks.toml"),
        "[extend]\nuseDefault = true\npath = \"/elsewhere.toml\"\n\n[allowlist]\npaths = ['''^a\\.py$''']\n",
    )
    .unwrap();
    let o = secaudit(d.path(), &["scan", ".", "-f", "gitleaks"]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        rule_files(&json(&o)),
        [("github-pat".to_string(), "b.py".to_string())],
        "a.py allowlisted by the root config"
    );
    assert!(
        stderr(&o).contains("[extend] path \"/elsewhere.toml\" is not followed"),
        "{}",
        stderr(&o)
    );
    // Scanning from elsewhere finds the config at the scan root, not the cwd.
    let o = secaudit(
        Path::new("/"),
        &["scan", d.path().to_str().unwrap(), "-f", "gitleaks"],
    );
    assert_eq!(rule_files(&json(&o)).len(), 1);
    // --config (or $GITLEAKS_CONFIG) names another config instead.
    let other = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(other.path(), "[allowlist]\npaths = ['''^b\\.py$''']\n").unwrap();
    let o = secaudit(
        d.path(),
        &[
            "scan",
            ".",
            "-f",
            "gitleaks",
            "--config",
            other.path().to_str().unwrap(),
        ],
    );
    assert_eq!(
        rule_files(&json(&o)),
        [("aws-access-key-id".to_string(), "a.py".to_string())]
    );
    let o = Command::new(util::bin())
        .args(["scan", ".", "-f", "gitleaks"])
        .current_dir(d.path())
        .env("GITLEAKS_CONFIG", other.path())
        .output()
        .unwrap();
    assert_eq!(
        rule_files(&json(&o)),
        [("aws-access-key-id".to_string(), "a.py".to_string())]
    );
    // A config we cannot honour is an error, not a silent full scan.
    std::fs::write(
        d.path().join(".gitleaks.toml"),
        "[[rules]]\nid = \"unknown-rule\"\n",
    )
    .unwrap();
    let o = secaudit(d.path(), &["scan", "."]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("unknown-rule"), "{}", stderr(&o));
}

#[test]
fn gitleaksignore_suppresses_exactly_its_fingerprints_in_dir_mode() {
    let d = two_leaks();
    std::fs::write(
        d.path().join(".gitleaksignore"),
        "# reviewed: test fixture\na.py:aws-access-key-id:1\nb.py:github-pat:2\n",
    )
    .unwrap();
    let o = secaudit(d.path(), &["scan", ".", "-f", "gitleaks"]);
    assert_eq!(
        rule_files(&json(&o)),
        [("github-pat".to_string(), "b.py".to_string())],
        "a.py:1 ignored; b.py is on line 3, not 2"
    );
    // --gitleaks-ignore-path names another file.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join(".gitleaksignore"), "b.py:github-pat:3\n").unwrap();
    let o = secaudit(
        d.path(),
        &[
            "scan",
            ".",
            "-f",
            "gitleaks",
            "-i",
            other.path().to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "both ignored: {}", stdout(&o));
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args([
            "-c",
            "user.name=Dev",
            "-c",
            "user.email=dev@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2024-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2024-01-02T03:04:05Z")
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
fn gitleaksignore_commit_fingerprints_suppress_history_findings() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    git(p, &["init", "-q", "-b", "main"]);
    std::fs::write(p.join("a.py"), format!("AWS_ID = \"{AWS}\"\n")).unwrap();
    git(p, &["add", "a.py"]);
    git(p, &["commit", "-q", "-m", "add a"]);
    let first = git(p, &["rev-parse", "HEAD"]);
    std::fs::write(p.join("b.py"), format!("TOKEN = \"{GH}\"\n")).unwrap();
    git(p, &["add", "b.py"]);
    git(p, &["commit", "-q", "-m", "add b"]);
    let second = git(p, &["rev-parse", "HEAD"]);

    let o = secaudit(p, &["scan", ".", "--history", "-f", "gitleaks"]);
    let r = json(&o);
    let fps: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["Fingerprint"].as_str().unwrap())
        .collect();
    let a_fp = format!("{first}:a.py:aws-access-key-id:1");
    let b_fp = format!("{second}:b.py:github-pat:1");
    assert!(
        fps.contains(&a_fp.as_str()) && fps.contains(&b_fp.as_str()),
        "{fps:?}"
    );
    let a = r
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["File"] == "a.py")
        .unwrap();
    assert_eq!(a["Commit"], first.as_str());
    assert_eq!(a["Author"], "Dev");
    assert_eq!(a["Email"], "dev@example.com");
    assert_eq!(a["Date"], "2024-01-02T03:04:05Z");
    assert_eq!(a["Message"], "add a");

    // The commit form suppresses that finding only; the same fingerprint
    // under another commit does not.
    std::fs::write(
        p.join(".gitleaksignore"),
        format!("{a_fp}\n{first}:b.py:github-pat:1\n"),
    )
    .unwrap();
    let o = secaudit(p, &["scan", ".", "--history", "-f", "gitleaks"]);
    assert_eq!(
        rule_files(&json(&o)),
        [("github-pat".to_string(), "b.py".to_string())]
    );
    std::fs::write(p.join(".gitleaksignore"), format!("{a_fp}\n{b_fp}\n")).unwrap();
    let o = secaudit(p, &["scan", ".", "--history"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

#[test]
fn baseline_report_suppresses_its_findings() {
    let d = two_leaks();
    let out = tempfile::tempdir().unwrap();
    let base = out.path().join("baseline.json");
    let base_s = base.to_str().unwrap();
    let o = secaudit(d.path(), &["scan", ".", "-f", "gitleaks", "-r", base_s]);
    assert_eq!(code(&o), 1);
    let o = secaudit(d.path(), &["scan", ".", "--baseline-path", base_s]);
    assert_eq!(code(&o), 0, "everything is in the baseline: {}", stdout(&o));
    // A new leak is reported; the known ones stay suppressed.
    std::fs::write(d.path().join("c.py"), format!("KEY = \"{AWS}\"\n")).unwrap();
    let o = secaudit(d.path(), &["scan", ".", "-f", "gitleaks", "-b", base_s]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        rule_files(&json(&o)),
        [("aws-access-key-id".to_string(), "c.py".to_string())]
    );
    // A moved leak is new (gitleaks compares lines, not fingerprints' hashes).
    std::fs::write(d.path().join("a.py"), format!("\nAWS_ID = \"{AWS}\"\n")).unwrap();
    let o = secaudit(d.path(), &["scan", ".", "-f", "gitleaks", "-b", base_s]);
    assert_eq!(rule_files(&json(&o)).len(), 2);
    // Our own JSON format is not a baseline; the error names the format.
    let ours = out.path().join("ours.json");
    secaudit(d.path(), &["scan", ".", "-r", ours.to_str().unwrap()]);
    let o = secaudit(d.path(), &["scan", ".", "-b", ours.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--format gitleaks"), "{}", stderr(&o));
}

#[test]
fn pre_commit_hook_manifest_parses_and_its_entry_runs() {
    let py = crate::openenv_client::openenv_venv().join("bin/python");
    let o = Command::new(py)
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(util::root().join(".pre-commit-hooks.yaml"))
        .output()
        .expect("python");
    assert!(o.status.success(), "{}", stderr(&o));
    let hooks = json(&o);
    let hooks = hooks.as_array().expect("a list of hooks");
    assert!(!hooks.is_empty());
    let bin_name = util::bin()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for h in hooks {
        for k in ["id", "name", "entry", "language"] {
            assert!(h[k].as_str().is_some_and(|s| !s.is_empty()), "{k} in {h}");
        }
        assert!(
            ["rust", "system"].contains(&h["language"].as_str().unwrap()),
            "{h}"
        );
        assert_eq!(h["pass_filenames"], true, "{h}");
        let entry: Vec<&str> = h["entry"].as_str().unwrap().split_whitespace().collect();
        assert_eq!(entry[0], bin_name, "the entry runs this package's binary");
        // The entry as pre-commit runs it: from the repository root, with
        // the commit's files appended. A leak fails the commit, named by
        // its path, secret redacted; the root's .gitleaksignore applies.
        let d = two_leaks();
        std::fs::create_dir(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/c.py"), format!("KEY = \"{GH}\"\n")).unwrap();
        std::fs::write(d.path().join(".gitleaksignore"), "b.py:github-pat:3\n").unwrap();
        let run = |files: &[&str]| {
            let mut a = entry[1..].to_vec();
            a.extend_from_slice(files);
            secaudit(d.path(), &a)
        };
        let o = run(&["a.py", "src/c.py", "b.py"]);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        let out = stdout(&o);
        let named: Vec<&str> = out.lines().filter_map(|l| l.split(':').next()).collect();
        assert_eq!(named, ["a.py", "src/c.py"], "{out}");
        assert!(!stdout(&o).contains(AWS) && !stderr(&o).contains(AWS));
        assert!(!stdout(&o).contains(GH) && !stderr(&o).contains(GH));
        assert_eq!(
            code(&run(&["b.py"])),
            0,
            "ignored by the root's .gitleaksignore"
        );
        let clean = tempfile::tempdir().unwrap();
        std::fs::write(clean.path().join("ok.py"), "print('hello')\n").unwrap();
        assert_eq!(
            code(&secaudit(clean.path(), &[&entry[1..], &["ok.py"]].concat())),
            0
        );
    }
}
