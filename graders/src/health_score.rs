//! Scoring one pytest run against the pristine manifest: the JUnit report,
//! the bootstrap's keyed verdicts and the hidden canary give the health
//! score. Pure: bytes in, a summary out. The server's health grader
//! (`server/src/health/`) copies, lints and runs; everything that decides
//! the number is here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use crate::junit::{self, JunitReport, Outcome};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The pristine test manifest: the denominator of the health score.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExpectedTests {
    /// `classname::name` of every test in the pristine run, sorted.
    pub names: Vec<String>,
    /// `names.len()`.
    pub total: u32,
}

/// The health of one run: the fraction of the pristine manifest that
/// passed, or 0 with the reason. The server's `HealthSummary` is this plus
/// whether it came from the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthScore {
    /// Pristine tests that passed.
    pub passed: u32,
    /// Pristine tests that failed, were skipped or went missing.
    pub failed: u32,
    /// Errors reported by pytest (collection or fixture errors).
    pub errors: u32,
    /// The pristine number of tests (the denominator).
    pub total: u32,
    /// The health score in [0, 1].
    pub score: f64,
    /// Why the health run failed, if it did (timeout, no report, ...).
    pub error: Option<String>,
}

/// A score and the suite's own time inside pytest (its JUnit report's
/// session time), when a readable report came back; nothing is scored from
/// the time.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredRun {
    /// The grade.
    pub summary: HealthScore,
    /// pytest's own session time.
    pub in_pytest: Option<Duration>,
}

/// The exit code with which the bootstrap's audit hook or checkpoints end a
/// run they caught tampering (`os._exit`, which code under test cannot
/// intercept). pytest itself exits 0 to 5.
pub const TAMPER_EXIT: i32 = 86;

/// What one pytest run produced.
pub struct RunResult {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The report bytes, if a regular file was written.
    pub report: Result<Vec<u8>, String>,
    /// The bootstrap's own verdict file (see [`Verdicts`]).
    pub verdicts: Result<Vec<u8>, String>,
    /// What the bootstrap's tamper note says, if it wrote one.
    pub tamper: Option<String>,
    /// Served by a staged run, whose wall limit counted from delivery.
    pub staged: bool,
    /// Wall time from start (cold) or delivery (staged) to the end.
    pub duration: Duration,
    /// Fresh per run, sent to the bootstrap on stdin (it never touches a
    /// file) to chain-hash its verdict lines, so neither code under test
    /// nor a process it starts can write a line the grader accepts.
    pub key: String,
}

/// The hidden per-run canary (see `server/src/health/mod.rs`): one must-fail and
/// one must-pass test in a module whose name, like the test names, is
/// fresh randomness for every run, so nothing in the workspace can name
/// it in advance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canary {
    /// Function name of the test that must pass (carries the nonce).
    pub pass_name: String,
    /// Function name of the test that must fail.
    pub fail_name: String,
    /// Where the module was written, relative to the copy's root.
    pub rel: PathBuf,
}

impl Canary {
    /// Fresh names, placed next to one of the pristine test modules
    /// (picked by the nonce) and named like it (`test_*.py` or
    /// `*_test.py`), so the suite's own collection rules pick it up.
    pub fn new(pristine_files: &[PathBuf]) -> Canary {
        let hex = || uuid::Uuid::new_v4().simple().to_string();
        let (module, pass, fail) = (hex(), hex(), hex());
        let tests: Vec<&PathBuf> = pristine_files
            .iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| is_test_module(&n.to_string_lossy()))
            })
            .collect();
        let pick = u128::from_str_radix(&module[..16], 16).unwrap_or(0) as usize;
        let sibling = (!tests.is_empty()).then(|| tests[pick % tests.len()]);
        let stem = &module[..12];
        let file = match sibling.and_then(|p| p.file_name()) {
            Some(n) if !n.to_string_lossy().starts_with("test_") => format!("{stem}_test.py"),
            _ => format!("test_{stem}.py"),
        };
        let rel = match sibling.and_then(|p| p.parent()) {
            Some(dir) => dir.join(file),
            None => PathBuf::from(file),
        };
        Canary {
            pass_name: format!("test_{}", &pass[..16]),
            fail_name: format!("test_{}", &fail[..16]),
            rel,
        }
    }

    /// The module's source: no imports, nothing the code under test can
    /// influence except through pytest itself.
    pub fn source(&self) -> String {
        format!(
            "def {}():\n    assert len('ok') == 2\n\n\ndef {}():\n    assert len('ok') == 3\n",
            self.pass_name, self.fail_name
        )
    }

    /// Is `case` one of the canary's two tests?
    pub fn owns(&self, case: &junit::TestCase) -> bool {
        case.name == self.pass_name || case.name == self.fail_name
    }

    /// Checks the canary's two outcomes in `report`: the must-pass test
    /// passed, the must-fail test failed, each reported exactly once.
    pub fn verify(&self, report: &JunitReport) -> Result<(), String> {
        let outcome = |name: &str| -> Result<Outcome, String> {
            let mut hits = report.cases.iter().filter(|c| c.name == name);
            match (hits.next(), hits.next()) {
                (Some(c), None) => Ok(c.outcome),
                (None, _) => Err("is missing from the report".into()),
                (Some(_), Some(_)) => Err("is reported twice".into()),
            }
        };
        let tampered = |which: &str, what: String| {
            Err(format!(
                "health canary tripped: the hidden {which} test {what}; test outcomes or the JUnit report were tampered with (e.g. a plugin or patch that rewrites results), so health is 0"
            ))
        };
        match outcome(&self.fail_name) {
            Ok(Outcome::Failed) => {}
            Ok(o) => return tampered("must-fail", format!("was reported {o:?}")),
            Err(e) => return tampered("must-fail", e),
        }
        match outcome(&self.pass_name) {
            Ok(Outcome::Passed) => Ok(()),
            Ok(o) => tampered("must-pass", format!("was reported {o:?}")),
            Err(e) => tampered("must-pass", e),
        }
    }
}

/// The bootstrap's own record of the run: for every test, what each of
/// its phases (setup, call, teardown) raised, taken where the phase's
/// exception reaches the grader's first-called hook wrapper rather than
/// from pytest's reports, and the seal (`END <exit code>`) written after
/// `pytest.main` returned and the final checks passed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdicts {
    /// JUnit key (`classname::name`) -> phase -> outcome word.
    pub phases: BTreeMap<String, BTreeMap<String, String>>,
    /// The exit code in the seal.
    pub sealed_rc: i32,
    /// The bootstrap's own start-up before it waited for the key (its
    /// first line, `S <ms>`, written before any code under test runs).
    pub startup: Duration,
}

impl Verdicts {
    /// Parses the file; a line out of format, a phase recorded twice, or a
    /// missing or early seal is an error (the file is written only by the
    /// bootstrap, so any of these means a run cut short or tampered with).
    pub fn parse(bytes: &[u8], key: &str) -> Result<Verdicts, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "verdicts are not UTF-8".to_string())?;
        let mut v = Verdicts::default();
        let mut sealed = None;
        let mut prev = String::new();
        for (prev_count, line) in text.lines().enumerate() {
            if sealed.is_some() {
                return Err("verdict lines after the seal".into());
            }
            // Every line ends in the keyed chain hash over it and all
            // before it: only the bootstrap, holding the key, can write one.
            let (body, mac) = line
                .rsplit_once(' ')
                .ok_or_else(|| "malformed verdict line".to_string())?;
            let mut h = Sha256::new();
            h.update(key.as_bytes());
            h.update(prev.as_bytes());
            h.update(b" ");
            h.update(body.as_bytes());
            let want: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            if want != mac {
                return Err(
                    "a verdict line does not carry the run's key (forged or reordered)".into(),
                );
            }
            prev = want;
            let f: Vec<&str> = body.split(' ').collect();
            match f.as_slice() {
                ["S", ms] if prev_count == 0 => {
                    let ms = ms
                        .parse::<u64>()
                        .map_err(|_| "bad start-up line".to_string())?;
                    v.startup = Duration::from_millis(ms);
                }
                ["END", rc] => {
                    sealed = Some(rc.parse::<i32>().map_err(|_| "bad seal".to_string())?);
                }
                ["P", phase, outcome, hex]
                    if ["setup", "call", "teardown"].contains(phase)
                        && ["passed", "failed", "skipped"].contains(outcome) =>
                {
                    let key = hex_decode(hex)
                        .and_then(|b| String::from_utf8(b).ok())
                        .ok_or_else(|| "bad verdict key".to_string())?;
                    let slot = v.phases.entry(key).or_default();
                    if slot
                        .insert(phase.to_string(), outcome.to_string())
                        .is_some()
                    {
                        return Err(format!("phase {phase} recorded twice for one test"));
                    }
                }
                _ => return Err("malformed verdict line".into()),
            }
        }
        v.sealed_rc = sealed.ok_or_else(|| "the run ended before the grader's seal".to_string())?;
        Ok(v)
    }

    /// Did every phase of `key` run and pass?
    pub fn passed(&self, key: &str) -> bool {
        self.phases
            .get(key)
            .is_some_and(|p| p.len() == 3 && p.values().all(|o| o == "passed"))
    }
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The grader's verdicts of a run that ended normally, cross-checked with
/// the JUnit report: sealed with pytest's exit code, and a test passes in
/// the report exactly when all its phases passed by the grader's own
/// record. pytest's reports can be rewritten from inside the process; the
/// grader's record is taken before them, so a disagreement is tampering.
pub fn check_verdicts(run: &RunResult, report: &JunitReport) -> Result<Verdicts, String> {
    let bytes = run.verdicts.as_ref().map_err(Clone::clone)?;
    let v = Verdicts::parse(bytes, &run.key).map_err(|e| format!("grader verdicts: {e}"))?;
    if Some(v.sealed_rc) != run.exit_code {
        return Err(format!(
            "grader verdicts sealed exit code {} but the run exited {:?}",
            v.sealed_rc, run.exit_code
        ));
    }
    for c in &report.cases {
        let key = c.key();
        let ours = v.passed(&key);
        if ours != (c.outcome == Outcome::Passed) {
            return Err(format!(
                "verdict forged: the JUnit report says {key} {:?}, but the grader saw its phases {:?}; test outcomes were rewritten inside the test process, so health is 0",
                c.outcome,
                v.phases.get(&key)
            ));
        }
    }
    Ok(v)
}

/// The run's tamper verdict: the bootstrap's exit code or note.
pub fn tamper_error(run: &RunResult) -> Option<String> {
    if run.exit_code == Some(TAMPER_EXIT) || run.tamper.is_some() {
        let why = run.tamper.as_deref().unwrap_or("no reason recorded");
        let why: String = why.chars().take(300).collect();
        return Some(format!(
            "tampering detected in the test run ({why}); code under test reached into the test process, so health is 0"
        ));
    }
    None
}

/// Whether a test (its manifest key) checks the credential flow: that the
/// app sends exactly the credentials the deployment provides. By the task
/// format's convention such tests carry `credential` in their module,
/// class or function name (`tasks/FORMAT.md`); they are the only ones
/// allowed to fail on the pristine, unfixed tree.
pub fn is_credential_flow_test(key: &str) -> bool {
    key.to_ascii_lowercase().contains("credential")
}

/// Cross-checks a report against itself and pytest's exit code: pytest's
/// own writer always agrees, so a disagreement means tampering or a crash.
pub fn check_report(report: &JunitReport, exit_code: Option<i32>) -> Result<(), String> {
    if !report.is_consistent() {
        return Err("JUnit report counts disagree with its test cases".into());
    }
    let bad = report.failures + report.errors;
    let ok = match exit_code {
        Some(0) => bad == 0 && report.tests > 0,
        Some(1) => bad > 0,
        Some(2) => report.errors > 0,
        Some(5) => report.tests == 0,
        _ => false,
    };
    if !ok {
        return Err(format!(
            "JUnit report ({} tests, {} failures, {} errors) disagrees with pytest exit code {exit_code:?}",
            report.tests, report.failures, report.errors
        ));
    }
    Ok(())
}

/// The health summary of one run against the manifest.
pub fn score(
    run: &RunResult,
    expected: &ExpectedTests,
    wall: Duration,
    canary: &Canary,
) -> ScoredRun {
    let mut in_pytest = None;
    let summary = score_summary(run, expected, wall, canary, &mut in_pytest);
    ScoredRun { summary, in_pytest }
}

/// [`score`]'s grade; sets `in_pytest` from the report it parses anyway.
fn score_summary(
    run: &RunResult,
    expected: &ExpectedTests,
    wall: Duration,
    canary: &Canary,
    in_pytest: &mut Option<Duration>,
) -> HealthScore {
    let total = expected.total;
    let mut s = HealthScore {
        passed: 0,
        failed: total,
        errors: 0,
        total,
        score: 0.0,
        error: None,
    };
    if run.timed_out {
        s.error = Some(format!("pytest timed out after {wall:?}"));
        return s;
    }
    if let Some(e) = tamper_error(run) {
        s.error = Some(e);
        return s;
    }
    let bytes = match &run.report {
        Ok(b) => b,
        Err(e) => {
            s.error = Some(e.clone());
            return s;
        }
    };
    let report = match junit::parse_junit(bytes) {
        Ok(r) => r,
        Err(e) => {
            s.error = Some(format!("bad JUnit report: {e}"));
            return s;
        }
    };
    *in_pytest = Some(Duration::from_secs_f64(report.seconds));
    s.errors = report.errors;
    if let Err(e) = check_report(&report, run.exit_code) {
        s.error = Some(e);
        return s;
    }
    if report.errors > 0 {
        return s;
    }
    if let Err(e) = canary.verify(&report) {
        s.error = Some(e);
        return s;
    }
    let verdicts = match check_verdicts(run, &report) {
        Ok(v) => v,
        Err(e) => {
            s.error = Some(e);
            return s;
        }
    };
    // A staged run's limit counted from delivery, after its start-up; a
    // cold run pays the start-up inside its limit. The same tree must not
    // pass staged and time out cold (found by the independent review), so
    // a staged run is held to the cold budget: its time plus the start-up
    // the bootstrap recorded.
    if run.staged && run.duration + verdicts.startup > wall {
        s.error = Some(format!("pytest timed out after {wall:?}"));
        return s;
    }
    // A name reported twice keeps its worst outcome.
    let mut outcomes: BTreeMap<String, Outcome> = BTreeMap::new();
    for c in &report.cases {
        let o = outcomes.entry(c.key()).or_insert(c.outcome);
        *o = (*o).max(c.outcome);
    }
    let expected_set: BTreeSet<&str> = expected.names.iter().map(String::as_str).collect();
    let passed = expected_set
        .iter()
        .filter(|n| outcomes.get(**n) == Some(&Outcome::Passed) && verdicts.passed(n))
        .count();
    let passed = u32::try_from(passed).unwrap_or(u32::MAX).min(total);
    s.passed = passed;
    s.failed = total - passed;
    s.score = f64::from(passed) / f64::from(total);
    s
}

/// True for `test_*.py` / `*_test.py`, pytest's default `python_files`.
pub fn is_test_module(name: &str) -> bool {
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Verdict lines carry a keyed hash chain: a line written by anything
    /// without the run's key, a dropped line or a missing seal is refused.
    #[test]
    fn verdict_chain_refuses_forgeries() {
        let hex = |s: &str| -> String { s.bytes().map(|b| format!("{b:02x}")).collect() };
        let k = hex("m::t");
        let lines: Vec<String> = vec![
            format!("P setup passed {k}"),
            format!("P call failed {k}"),
            format!("P teardown passed {k}"),
            "END 1".into(),
        ];
        let good = chain_lines("key", &lines);
        let v = Verdicts::parse(good.as_bytes(), "key").unwrap();
        assert!(!v.passed("m::t"));
        assert_eq!(v.sealed_rc, 1);
        // Same lines under another key (what a forger without it writes).
        assert!(Verdicts::parse(chain_lines("guess", &lines).as_bytes(), "key").is_err());
        // The call line rewritten to passed, hash kept.
        let flipped = good.replacen("P call failed", "P call passed", 1);
        assert!(Verdicts::parse(flipped.as_bytes(), "key").is_err());
        // A line dropped, or the seal missing.
        let dropped: String = good
            .lines()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        assert!(Verdicts::parse(dropped.as_bytes(), "key").is_err());
        let unsealed = chain_lines("key", &lines[..3]);
        assert!(
            Verdicts::parse(unsealed.as_bytes(), "key")
                .unwrap_err()
                .contains("seal")
        );
        let all_pass: Vec<String> = lines
            .iter()
            .map(|l| l.replace("failed", "passed"))
            .collect();
        assert!(
            Verdicts::parse(chain_lines("key", &all_pass).as_bytes(), "key")
                .unwrap()
                .passed("m::t")
        );
    }

    /// A report that loses the canary (pytest told to deselect it, or a
    /// report rewritten without it) trips it as missing.
    #[test]
    fn canary_verdicts() {
        let c = Canary::new(&[PathBuf::from("tests/unit/test_x.py")]);
        assert!(c.rel.starts_with("tests/unit"), "{c:?}");
        let name = c.rel.file_name().unwrap().to_string_lossy().into_owned();
        assert!(is_test_module(&name), "{name}");
        assert_ne!(
            Canary::new(&[]).pass_name,
            Canary::new(&[]).pass_name,
            "fresh per run"
        );
        let case = |name: &str, outcome| junit::TestCase {
            classname: "tests.unit.m".into(),
            name: name.into(),
            outcome,
        };
        let rep = |cases: Vec<junit::TestCase>| JunitReport {
            tests: cases.len() as u32,
            failures: cases
                .iter()
                .filter(|c| c.outcome == Outcome::Failed)
                .count() as u32,
            errors: 0,
            skipped: 0,
            seconds: 0.0,
            cases,
        };
        let ok = rep(vec![
            case(&c.pass_name, Outcome::Passed),
            case(&c.fail_name, Outcome::Failed),
            case("test_real", Outcome::Passed),
        ]);
        assert!(c.verify(&ok).is_ok());
        for bad in [
            vec![
                case(&c.pass_name, Outcome::Passed),
                case(&c.fail_name, Outcome::Passed),
            ],
            vec![case(&c.pass_name, Outcome::Passed)],
            vec![case(&c.fail_name, Outcome::Failed)],
            vec![
                case(&c.pass_name, Outcome::Skipped),
                case(&c.fail_name, Outcome::Failed),
            ],
            vec![
                case(&c.pass_name, Outcome::Passed),
                case(&c.fail_name, Outcome::Failed),
                case(&c.fail_name, Outcome::Failed),
            ],
        ] {
            let r = rep(bad);
            let e = c.verify(&r).unwrap_err();
            assert!(e.contains("health canary tripped"), "{e}");
        }
        // Scored through `score`: tripped means 0, with the reason.
        let xml = |r: &JunitReport| {
            let mut x = format!(
                "<testsuite tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">",
                r.tests, r.failures
            );
            for c in &r.cases {
                x.push_str(&format!(
                    "<testcase classname=\"{}\" name=\"{}\">",
                    c.classname, c.name
                ));
                if c.outcome == Outcome::Failed {
                    x.push_str("<failure message=\"x\"/>");
                }
                x.push_str("</testcase>");
            }
            x.push_str("</testsuite>");
            x.into_bytes()
        };
        let exp = ExpectedTests {
            names: vec!["tests.unit.m::test_real".into()],
            total: 1,
        };
        // The bootstrap's record of the same cases (honest: it agrees).
        let verdicts = |r: &JunitReport, code: i32| {
            let mut lines = Vec::new();
            for c in &r.cases {
                let hex: String = c.key().bytes().map(|b| format!("{b:02x}")).collect();
                let call = if c.outcome == Outcome::Passed {
                    "passed"
                } else {
                    "failed"
                };
                for (phase, o) in [("setup", "passed"), ("call", call), ("teardown", "passed")] {
                    lines.push(format!("P {phase} {o} {hex}"));
                }
            }
            lines.push(format!("END {code}"));
            chain_lines("k", &lines).into_bytes()
        };
        let run = |r: &JunitReport, code| RunResult {
            staged: false,
            duration: Duration::from_millis(900),
            exit_code: Some(code),
            timed_out: false,
            report: Ok(xml(r)),
            verdicts: Ok(verdicts(r, code)),
            tamper: None,
            key: "k".into(),
        };
        let s = score(&run(&ok, 1), &exp, Duration::from_secs(1), &c).summary;
        assert_eq!((s.passed, s.total, s.score), (1, 1, 1.0), "{s:?}");
        // A staged run is held to the cold budget: its time after delivery
        // plus the start-up its bootstrap recorded (the first line).
        let with_startup = |ms: u64, after: u64| {
            let mut r = run(&ok, 1);
            let lines = String::from_utf8(verdicts(&ok, 1)).unwrap();
            let mut body: Vec<String> = vec![format!("S {ms}")];
            body.extend(
                lines
                    .lines()
                    .map(|l| l.rsplit_once(' ').unwrap().0.to_string()),
            );
            r.verdicts = Ok(chain_lines("k", &body).into_bytes());
            r.staged = true;
            r.duration = Duration::from_millis(after);
            r
        };
        let wall = Duration::from_secs(1);
        let s = score(&with_startup(300, 600), &exp, wall, &c).summary;
        assert_eq!(s.score, 1.0, "{s:?}");
        let s = score(&with_startup(300, 800), &exp, wall, &c).summary;
        assert_eq!(s.score, 0.0, "{s:?}");
        assert!(s.error.unwrap().contains("timed out"));
        // The start-up line counts only first; anywhere else it is forged.
        let mut late = with_startup(0, 100);
        let lines = String::from_utf8(verdicts(&ok, 1)).unwrap();
        let mut body: Vec<String> = lines
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
            .collect();
        body.insert(1, "S 5".into());
        late.verdicts = Ok(chain_lines("k", &body).into_bytes());
        assert_eq!(score(&late, &exp, wall, &c).summary.score, 0.0);
        let forced = rep(vec![
            case(&c.pass_name, Outcome::Passed),
            case(&c.fail_name, Outcome::Passed),
            case("test_real", Outcome::Passed),
        ]);
        let s = score(&run(&forced, 0), &exp, Duration::from_secs(1), &c).summary;
        assert_eq!(s.score, 0.0, "{s:?}");
        assert!(s.error.unwrap().contains("canary"));
    }

    /// Lines as the bootstrap writes them: each with the keyed chain hash.
    fn chain_lines(key: &str, lines: &[String]) -> String {
        let mut prev = String::new();
        let mut out = String::new();
        for l in lines {
            let mut h = Sha256::new();
            h.update(key.as_bytes());
            h.update(prev.as_bytes());
            h.update(b" ");
            h.update(l.as_bytes());
            prev = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            out.push_str(&format!("{l} {prev}\n"));
        }
        out
    }

    #[test]
    fn exit_code_cross_check() {
        let rep = |tests, failures, errors| JunitReport {
            cases: (0..tests)
                .map(|i| junit::TestCase {
                    classname: "m".into(),
                    name: format!("t{i}"),
                    outcome: if i < failures {
                        Outcome::Failed
                    } else if i < failures + errors {
                        Outcome::Error
                    } else {
                        Outcome::Passed
                    },
                })
                .collect(),
            tests,
            failures,
            errors,
            skipped: 0,
            seconds: 0.0,
        };
        assert!(check_report(&rep(3, 0, 0), Some(0)).is_ok());
        assert!(check_report(&rep(3, 1, 0), Some(0)).is_err());
        assert!(check_report(&rep(3, 0, 0), Some(1)).is_err());
        assert!(check_report(&rep(3, 1, 0), Some(1)).is_ok());
        assert!(check_report(&rep(1, 0, 1), Some(2)).is_ok());
        assert!(check_report(&rep(3, 0, 0), None).is_err());
        assert!(check_report(&rep(0, 0, 0), Some(0)).is_err());
    }
}
