//! pytest's JUnit XML (`--junitxml`) into per-test outcomes and the suite's
//! own counts.
//!
//! The report is written by a pytest process that ran agent-influenced code,
//! so it is untrusted input: the size is bounded, DTDs and unknown elements
//! are ignored, and both the per-case outcomes and the `<testsuite>`
//! attribute counts are returned so the caller can cross-check them against
//! each other and against pytest's exit code (a tampered report that claims
//! `failures="0"` next to a `<failure>` element is detectable).
//!
//! Outcomes follow pytest's writer: a `<testcase>` with no child is a pass,
//! `<failure>` a failed call (also a strict XPASS), `<error>` a setup,
//! teardown or collection error, `<skipped>` a skip *or an xfail* (pytest
//! writes xfail as `<skipped type="pytest.xfail">`). A test whose teardown
//! errors appears twice (once per report), so the case list can hold the same
//! name more than once.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// Largest report accepted. pytest writes about 200 bytes per passing test
/// and the captured traceback per failure; a task suite is a few dozen tests.
pub const MAX_REPORT_BYTES: usize = 8 * 1024 * 1024;

/// Most `<testcase>` elements accepted, so a hostile report cannot make the
/// caller allocate without bound even under the byte cap.
pub const MAX_CASES: usize = 100_000;

/// The outcome of one `<testcase>` element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// No `<failure>`, `<error>` or `<skipped>` child.
    Passed,
    /// A `<skipped>` child: `pytest.skip`, a skip marker, or an xfail.
    Skipped,
    /// A `<failure>` child: the test body failed (or a strict XPASS).
    Failed,
    /// An `<error>` child: setup, teardown or collection failed.
    Error,
}

/// One `<testcase>` element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    /// The `classname` attribute (`tests.test_app` or
    /// `tests.test_app.TestClass`; empty for collection errors).
    pub classname: String,
    /// The `name` attribute (`test_x`, `test_p[1]`).
    pub name: String,
    /// The worst child seen (error > failure > skipped > pass).
    pub outcome: Outcome,
}

impl TestCase {
    /// `classname::name`, the key the health manifest uses.
    pub fn key(&self) -> String {
        format!("{}::{}", self.classname, self.name)
    }
}

/// A parsed report: every case plus the counts the `<testsuite>` elements
/// claim (summed over suites).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JunitReport {
    /// Cases in document order.
    pub cases: Vec<TestCase>,
    /// Sum of the `tests` attributes.
    pub tests: u32,
    /// Sum of the `failures` attributes.
    pub failures: u32,
    /// Sum of the `errors` attributes.
    pub errors: u32,
    /// Sum of the `skipped` attributes.
    pub skipped: u32,
    /// Sum of the `time` attributes, in seconds: pytest's own time for the
    /// session. Informational only (nothing is scored from it); a missing,
    /// unreadable or negative value counts 0.
    pub seconds: f64,
}

impl JunitReport {
    /// Number of cases with the given outcome.
    pub fn count(&self, outcome: Outcome) -> u32 {
        let n = self.cases.iter().filter(|c| c.outcome == outcome).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// True when the suite attributes agree with the cases: as many cases
    /// as `tests`, and as many failed, errored and skipped cases as the
    /// attributes say. pytest's own writer always satisfies this.
    pub fn is_consistent(&self) -> bool {
        u32::try_from(self.cases.len()).ok() == Some(self.tests)
            && self.count(Outcome::Failed) == self.failures
            && self.count(Outcome::Error) == self.errors
            && self.count(Outcome::Skipped) == self.skipped
    }
}

/// Why a report was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JunitError {
    /// Larger than [`MAX_REPORT_BYTES`].
    #[error("report is {0} bytes, over the {MAX_REPORT_BYTES} byte limit")]
    TooLarge(usize),
    /// More than [`MAX_CASES`] test cases.
    #[error("report has more than {MAX_CASES} test cases")]
    TooManyCases,
    /// Not well-formed XML (or bad escapes/encoding).
    #[error("malformed XML: {0}")]
    Malformed(String),
    /// Well-formed, but no `<testsuite>` element.
    #[error("no <testsuite> element")]
    NoSuite,
    /// A count attribute is not a non-negative integer.
    #[error("bad {attr} attribute: {value:?}")]
    BadCount {
        /// The attribute name.
        attr: &'static str,
        /// Its (truncated) value.
        value: String,
    },
    /// A `<testcase>` outside any `<testsuite>`, or nested in another case.
    #[error("misplaced <testcase> element")]
    Misplaced,
}

/// Parses pytest's JUnit XML. Accepts both layouts pytest has written
/// (`<testsuites><testsuite>` and a bare `<testsuite>` root).
pub fn parse_junit(xml: &[u8]) -> Result<JunitReport, JunitError> {
    if xml.len() > MAX_REPORT_BYTES {
        return Err(JunitError::TooLarge(xml.len()));
    }
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().check_end_names = true;
    let mut report = JunitReport::default();
    let mut suites = 0u32;
    let mut suite_depth = 0u32;
    // The case being read (set between <testcase> and </testcase>).
    let mut open_case: Option<TestCase> = None;
    let mut buf = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| JunitError::Malformed(e.to_string()))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                match e.local_name().as_ref() {
                    b"testsuite" => {
                        if open_case.is_some() {
                            return Err(JunitError::Misplaced);
                        }
                        suites += 1;
                        add_counts(&mut report, e)?;
                        if !empty {
                            suite_depth += 1;
                        }
                    }
                    b"testcase" => {
                        if suite_depth == 0 || open_case.is_some() {
                            return Err(JunitError::Misplaced);
                        }
                        if report.cases.len() >= MAX_CASES {
                            return Err(JunitError::TooManyCases);
                        }
                        let case = TestCase {
                            classname: attr(e, b"classname")?.unwrap_or_default(),
                            name: attr(e, b"name")?.unwrap_or_default(),
                            outcome: Outcome::Passed,
                        };
                        if empty {
                            report.cases.push(case);
                        } else {
                            open_case = Some(case);
                        }
                    }
                    tag => {
                        if let Some(case) = open_case.as_mut() {
                            let seen = match tag {
                                b"failure" => Outcome::Failed,
                                b"error" => Outcome::Error,
                                b"skipped" => Outcome::Skipped,
                                _ => Outcome::Passed,
                            };
                            case.outcome = case.outcome.max(seen);
                        }
                    }
                }
            }
            Event::End(ref e) => match e.local_name().as_ref() {
                b"testcase" => {
                    if let Some(case) = open_case.take() {
                        report.cases.push(case);
                    }
                }
                b"testsuite" => suite_depth = suite_depth.saturating_sub(1),
                _ => {}
            },
            Event::Eof => {
                // A report cut off mid-suite (a killed writer) is rejected
                // rather than read as the tests that happened to be flushed.
                if suite_depth > 0 || open_case.is_some() {
                    return Err(JunitError::Malformed("truncated report".into()));
                }
                break;
            }
            _ => {}
        }
        buf.clear();
    }
    if suites == 0 {
        return Err(JunitError::NoSuite);
    }
    Ok(report)
}

/// Adds one `<testsuite>`'s counts to the totals (missing attributes are 0,
/// as in pytest's writer for empty suites).
fn add_counts(report: &mut JunitReport, e: &BytesStart<'_>) -> Result<(), JunitError> {
    for (key, slot) in [
        ("tests", &mut report.tests),
        ("failures", &mut report.failures),
        ("errors", &mut report.errors),
        ("skipped", &mut report.skipped),
    ] {
        if let Some(value) = attr(e, key.as_bytes())? {
            let n: u32 = value.trim().parse().map_err(|_| JunitError::BadCount {
                attr: key,
                value: value.chars().take(32).collect(),
            })?;
            *slot = slot.saturating_add(n);
        }
    }
    let t = attr(e, b"time")?
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t > 0.0);
    report.seconds += t.unwrap_or(0.0);
    Ok(())
}

/// The unescaped value of attribute `key`, if present.
fn attr(e: &BytesStart<'_>, key: &[u8]) -> Result<Option<String>, JunitError> {
    for a in e.attributes() {
        let a = a.map_err(|err| JunitError::Malformed(err.to_string()))?;
        if a.key.local_name().as_ref() == key {
            let v = a
                .unescape_value()
                .map_err(|err| JunitError::Malformed(err.to_string()))?;
            return Ok(Some(v.into_owned()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pytest 8.3.5 output for a module with a pass, a failure, a fixture
    /// error, a skip, an xfail, a strict XPASS and two parametrized cases.
    const MIXED: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="2" skipped="2" tests="8" time="0.038" timestamp="2026-12-02T18:24:37.733520+00:00" hostname="vm"><testcase classname="test_s" name="test_pass" time="0.000" /><testcase classname="test_s" name="test_fail" time="0.000"><failure message="assert 1 == 2">&gt;   def test_fail(): assert 1 == 2
E   assert 1 == 2

test_s.py:3: AssertionError</failure></testcase><testcase classname="test_s" name="test_error" time="0.000"><error message="failed on setup with &quot;RuntimeError: fixture boom&quot;">@pytest.fixture
&gt;   def bad(): raise RuntimeError("fixture boom")
E   RuntimeError: fixture boom

test_s.py:5: RuntimeError</error></testcase><testcase classname="test_s" name="test_skip" time="0.000"><skipped type="pytest.skip" message="nope">/tmp/jx/test_s.py:7: nope</skipped></testcase><testcase classname="test_s" name="test_xfail" time="0.000"><skipped type="pytest.xfail" message="" /></testcase><testcase classname="test_s" name="test_xpass_strict" time="0.000"><failure message="[XPASS(strict)] ">[XPASS(strict)] </failure></testcase><testcase classname="test_s.TestK" name="test_p[1]" time="0.000" /><testcase classname="test_s.TestK" name="test_p[2]" time="0.000" /></testsuite></testsuites>"#;

    /// pytest 8.3.5 output when a test module fails to import.
    const COLLECTION_ERROR: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="1" time="0.126" timestamp="2026-12-02T18:24:37.924538+00:00" hostname="vm"><testcase classname="" name="ce.test_c" time="0.000"><error message="collection failure">ImportError while importing test module '/tmp/jx/ce/test_c.py'.
E   ModuleNotFoundError: No module named 'nonexistent_mod_x'</error></testcase></testsuite></testsuites>"#;

    /// pytest 8.3.5: a teardown error on a passing and on a failing test
    /// (the failing one is reported twice).
    const TEARDOWN: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="2" failures="1" skipped="0" tests="3" time="0.037" hostname="vm"><testcase classname="test_t" name="test_a" time="0.001"><error message="failed on teardown">boom</error></testcase><testcase classname="test_t" name="test_b" time="0.001"><failure message="assert 0">assert 0</failure></testcase><testcase classname="test_t" name="test_b" time="0.000"><error message="failed on teardown">boom</error></testcase></testsuite></testsuites>"#;

    /// pytest 8.3.5 with everything deselected (exit code 5).
    const EMPTY: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0.013" hostname="vm" /></testsuites>"#;

    fn outcome(r: &JunitReport, key: &str) -> Outcome {
        r.cases.iter().find(|c| c.key() == key).unwrap().outcome
    }

    #[test]
    fn mixed() {
        let r = parse_junit(MIXED.as_bytes()).unwrap();
        assert_eq!((r.tests, r.failures, r.errors, r.skipped), (8, 2, 1, 2));
        assert_eq!(r.seconds, 0.038);
        assert_eq!(r.cases.len(), 8);
        assert!(r.is_consistent());
        assert_eq!(outcome(&r, "test_s::test_pass"), Outcome::Passed);
        assert_eq!(outcome(&r, "test_s::test_fail"), Outcome::Failed);
        assert_eq!(outcome(&r, "test_s::test_error"), Outcome::Error);
        assert_eq!(outcome(&r, "test_s::test_skip"), Outcome::Skipped);
        assert_eq!(outcome(&r, "test_s::test_xfail"), Outcome::Skipped);
        assert_eq!(outcome(&r, "test_s::test_xpass_strict"), Outcome::Failed);
        assert_eq!(outcome(&r, "test_s.TestK::test_p[2]"), Outcome::Passed);
        assert_eq!(r.count(Outcome::Passed), 3);
    }

    #[test]
    fn collection_error() {
        let r = parse_junit(COLLECTION_ERROR.as_bytes()).unwrap();
        assert_eq!(r.errors, 1);
        assert_eq!(r.cases[0].classname, "");
        assert_eq!(r.cases[0].name, "ce.test_c");
        assert_eq!(r.cases[0].outcome, Outcome::Error);
        assert!(r.is_consistent());
    }

    #[test]
    fn teardown_twice() {
        let r = parse_junit(TEARDOWN.as_bytes()).unwrap();
        assert_eq!(r.cases.len(), 3);
        assert!(r.is_consistent());
        assert_eq!(r.count(Outcome::Error), 2);
    }

    #[test]
    fn empty_suite() {
        let r = parse_junit(EMPTY.as_bytes()).unwrap();
        assert!(r.cases.is_empty());
        assert_eq!(r.tests, 0);
        assert!(r.is_consistent());
    }

    #[test]
    fn bare_testsuite_root() {
        let xml = r#"<testsuite tests="1" failures="0" errors="0" skipped="0"><testcase classname="a" name="t"/></testsuite>"#;
        let r = parse_junit(xml.as_bytes()).unwrap();
        assert_eq!(r.cases.len(), 1);
        assert!(r.is_consistent());
    }

    /// A conftest-patched report that claims no failures next to a
    /// `<failure>` element is parsed, and flagged as inconsistent.
    #[test]
    fn tampered_counts() {
        let xml = MIXED.replace(r#"failures="2""#, r#"failures="0""#);
        let r = parse_junit(xml.as_bytes()).unwrap();
        assert!(!r.is_consistent());
    }

    #[test]
    fn rejects() {
        assert!(matches!(
            parse_junit(b"<testsuites><testsuite tests=\"1\"><testcase name=\"x\"/>"),
            Err(JunitError::Malformed(_))
        ));
        assert!(matches!(
            parse_junit(b"<a><b></a>"),
            Err(JunitError::Malformed(_))
        ));
        assert_eq!(parse_junit(b""), Err(JunitError::NoSuite));
        assert_eq!(parse_junit(b"<testsuites/>"), Err(JunitError::NoSuite));
        assert!(matches!(
            parse_junit(br#"<testsuite tests="-1"/>"#),
            Err(JunitError::BadCount { attr: "tests", .. })
        ));
        assert_eq!(
            parse_junit(br#"<testcase name="x"/>"#),
            Err(JunitError::Misplaced)
        );
        let big = vec![b' '; MAX_REPORT_BYTES + 1];
        assert_eq!(
            parse_junit(&big),
            Err(JunitError::TooLarge(MAX_REPORT_BYTES + 1))
        );
    }
}
