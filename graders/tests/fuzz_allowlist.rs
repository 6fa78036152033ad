//! Fuzzing the allowlist reader (`scanner/allowlist.rs`), which parses a
//! `.gitleaks.toml` that a task ships (and `secaudit scan` reads from any
//! repository): random text and mutated configs built from every key the
//! reader knows never panic, and a config that parses answers
//! [`Allowlist::allows`] on random findings without panicking. Runs in
//! seconds in CI (`PROPTEST_CASES` raises the count).

use graders::scanner::Allowlist;
use proptest::prelude::*;

/// A value for one key: strings (regex-like or not), arrays, numbers,
/// booleans, tables, broken syntax.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,16}".prop_map(|s| format!("{:?}", s)),
        "[a-z(|)*+?.\\[\\]^$\\\\{}0-9-]{0,16}".prop_map(|s| format!("'''{s}'''")),
        proptest::collection::vec("[ -~]{0,10}", 0..4).prop_map(|v| format!(
            "[{}]",
            v.iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Just("\"(?i)(a+)+$\"".to_string()),
        Just("\"[\"".to_string()),
        Just("\"AND\"".to_string()),
        Just("\"OR\"".to_string()),
        Just("\"match\"".to_string()),
        Just("\"line\"".to_string()),
        Just("\"secret\"".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("3.5".to_string()),
        Just("true".to_string()),
        Just("{ a = 1 }".to_string()),
        Just("[".to_string()),
    ]
}

fn key() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec![
        "description",
        "id",
        "regex",
        "secretGroup",
        "entropy",
        "keywords",
        "path",
        "paths",
        "regexes",
        "stopwords",
        "commits",
        "condition",
        "regexTarget",
        "targetRules",
        "tags",
        "required",
        "unknownKey",
    ])
}

fn header() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec![
        "[allowlist]",
        "[[allowlists]]",
        "[[rules]]",
        "[rules.allowlist]",
        "[[rules.allowlists]]",
        "[extend]",
        "[other]",
        "[[rules]]\nid = \"github-pat\"",
        "[[rules]]\nid = \"aws-access-token\"",
        "[[rules]]\nid = \"custom-x\"",
    ])
}

fn config() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (header(), proptest::collection::vec((key(), value()), 0..6)),
        0..6,
    )
    .prop_map(|tables| {
        let mut s = String::new();
        for (h, kvs) in tables {
            s.push_str(h);
            s.push('\n');
            for (k, v) in kvs {
                s.push_str(&format!("{k} = {v}\n"));
            }
        }
        s
    })
}

/// Queries a parsed allowlist with random findings.
fn query(a: &Allowlist, probes: &[(String, String, String)]) {
    let _ = a.custom_rules().count();
    let _ = a.is_empty();
    for (path, line, secret) in probes {
        let _ = a.allows(path, line, secret, None);
        let _ = a.allows(
            path,
            line,
            secret,
            Some("0123456789abcdef0123456789abcdef01234567"),
        );
    }
}

fn probes() -> impl Strategy<Value = Vec<(String, String, String)>> {
    proptest::collection::vec(("[ -~]{0,20}", "[ -~]{0,40}", "[ -~]{0,20}"), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}", p in probes()) {
        if let Ok(a) = Allowlist::from_toml_str(&text) {
            query(&a, &p);
        }
    }

    #[test]
    fn configs_and_their_mutations_never_panic(
        text in config(),
        cut in any::<usize>(),
        insert in "[ -~\\n]{0,8}",
        p in probes(),
    ) {
        if let Ok(a) = Allowlist::from_toml_str(&text) {
            query(&a, &p);
        }
        // The same config cut and spliced at a char boundary.
        let mut at = cut % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let mutated = format!("{}{insert}{}", &text[..at], &text[at..]);
        if let Ok(a) = Allowlist::from_toml_str(&mutated) {
            query(&a, &p);
        }
    }
}

/// The generator reaches the reader's accepting paths too (a fuzzer whose
/// every input is a syntax error tests only the TOML crate).
#[test]
fn generated_configs_can_parse() {
    let ok = "[[allowlists]]\ndescription = \"x\"\npaths = ['''^a\\.py$''']\ncondition = \"AND\"\nregexes = ['''ab+''']\n";
    let a = Allowlist::from_toml_str(ok).expect("a valid config");
    assert!(!a.is_empty());
    assert!(a.allows("a.py", "k = abbb", "abbb", None));
    assert!(!a.allows("b.py", "k = abbb", "abbb", None));
}
