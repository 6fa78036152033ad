//! Fuzzing the JUnit parser (`junit.rs`), which reads a report written
//! inside the sandbox by a run that code under test can influence: random
//! bytes and mutated reports never panic, a parsed report never holds
//! more cases than the input has `<testcase` tags (nor more than
//! `MAX_CASES`), and a well-formed report parses to exactly what was
//! written. Runs in seconds in CI (`PROPTEST_CASES` raises the count).

use graders::junit::{MAX_CASES, MAX_REPORT_BYTES, Outcome, parse_junit};
use proptest::prelude::*;

/// One generated test case: class, name, outcome.
type Case = (String, String, Outcome);

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Passed),
        Just(Outcome::Skipped),
        Just(Outcome::Failed),
        Just(Outcome::Error),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    // Names with XML's special characters, escaped when written.
    (
        "[a-z_.]{0,12}",
        "[a-zA-Z0-9_\\[\\]<>&\"' -]{1,16}",
        outcome(),
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// A report as pytest writes it, in either layout.
fn report(cases: &[Case], wrapped: bool) -> String {
    let count = |o: Outcome| cases.iter().filter(|c| c.2 == o).count();
    let mut x = format!(
        "<testsuite name=\"pytest\" errors=\"{}\" failures=\"{}\" skipped=\"{}\" tests=\"{}\" time=\"0.5\">",
        count(Outcome::Error),
        count(Outcome::Failed),
        count(Outcome::Skipped),
        cases.len()
    );
    for (class, name, o) in cases {
        let child = match o {
            Outcome::Passed => String::new(),
            Outcome::Skipped => "<skipped type=\"pytest.skip\" message=\"m\">why</skipped>".into(),
            Outcome::Failed => "<failure message=\"assert 0\">trace &lt;x&gt;</failure>".into(),
            Outcome::Error => "<error message=\"e\"><![CDATA[boom <here>]]></error>".into(),
        };
        x.push_str(&format!(
            "<testcase classname=\"{}\" name=\"{}\" time=\"0.001\">{child}</testcase>",
            escape(class),
            escape(name)
        ));
    }
    x.push_str("</testsuite>");
    if wrapped {
        format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites>{x}</testsuites>")
    } else {
        x
    }
}

/// A byte-level mutation of a report.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
    /// Repeat a slice (nesting, duplicated tags).
    Repeat(usize, usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let snippet = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..8),
        Just(b"<testcase name=\"x\">".to_vec()),
        Just(b"</testsuite>".to_vec()),
        Just(b"<testsuite tests=\"99999999999\">".to_vec()),
        Just(b"<!DOCTYPE x [<!ENTITY a \"aaaaaaaa\">]>".to_vec()),
        Just(b"&a;&#0;&#xFFFFFF;".to_vec()),
        Just(b"<![CDATA[".to_vec()),
    ];
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Mutation::Flip(a, b)),
        (any::<usize>(), snippet).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), 0..64usize).prop_map(|(a, n)| Mutation::Delete(a, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1..200usize, 1..50u8).prop_map(|(a, n, k)| Mutation::Repeat(a, n, k)),
    ]
}

fn mutate(mut x: Vec<u8>, ms: &[Mutation]) -> Vec<u8> {
    for m in ms {
        let len = x.len().max(1);
        match m {
            Mutation::Flip(a, b) if !x.is_empty() => {
                let i = a % x.len();
                x[i] ^= b | 1;
            }
            Mutation::Flip(..) => {}
            Mutation::Insert(a, b) => {
                let i = a % (x.len() + 1);
                x.splice(i..i, b.iter().copied());
            }
            Mutation::Delete(a, n) => {
                let i = a % len;
                let j = (i + n).min(x.len());
                if i < j {
                    x.drain(i..j);
                }
            }
            Mutation::Truncate(a) => x.truncate(a % len),
            Mutation::Repeat(a, n, k) => {
                let i = a % len;
                let j = (i + n).min(x.len());
                if i < j {
                    let part = x[i..j].to_vec();
                    for _ in 0..*k {
                        x.splice(j..j, part.iter().copied());
                    }
                }
            }
        }
    }
    x
}

/// What any parse of `input` must satisfy: no panic (the call returns),
/// and a report no larger than its input.
fn check_bounded(input: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(r) = parse_junit(input) {
        let tags = input.windows(9).filter(|w| w == b"<testcase").count();
        prop_assert!(
            r.cases.len() <= tags,
            "{} cases from {} tags",
            r.cases.len(),
            tags
        );
        prop_assert!(r.cases.len() <= MAX_CASES);
        for c in &r.cases {
            prop_assert!(c.classname.len() + c.name.len() <= input.len());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check_bounded(&input)?;
    }

    #[test]
    fn well_formed_reports_parse_to_what_was_written(
        cases in proptest::collection::vec(case(), 0..20),
        wrapped in any::<bool>(),
    ) {
        let r = parse_junit(report(&cases, wrapped).as_bytes()).expect("a well-formed report");
        prop_assert!(r.is_consistent());
        let got: Vec<Case> = r.cases.iter().map(|c| (c.classname.clone(), c.name.clone(), c.outcome)).collect();
        prop_assert_eq!(got, cases);
    }

    #[test]
    fn mutated_reports_never_panic(
        cases in proptest::collection::vec(case(), 0..12),
        wrapped in any::<bool>(),
        ms in proptest::collection::vec(mutation(), 1..6),
    ) {
        let x = mutate(report(&cases, wrapped).into_bytes(), &ms);
        check_bounded(&x)?;
    }
}

/// Over the byte cap: refused before any parsing, whatever the content.
#[test]
fn oversized_reports_are_refused() {
    let x = vec![b' '; MAX_REPORT_BYTES + 1];
    assert!(parse_junit(&x).is_err());
}
