//! Fake credentials in test code: `password="hunter2"` in a pytest
//! fixture, `password: "P@ssw0rd!"` in a Jest suite.
//!
//! A test suite needs a password to log in with, and people type one:
//! a dictionary word with a digit or two, perhaps spelled with `@`, `0`
//! or `$`. Under a password key the credential-assignment rule reports
//! such a value from six characters on, and elsewhere it should: a
//! `hunter2` in `config/prod.py` may well be the production password. In
//! a test file it is the suite's own fake, the class blind round 4 of
//! issue 18 measured (generator-4, `test-fixture-fake-values`).
//!
//! So in test code only ([`is_test_path`]), a credential-assignment value
//! that a person typed ([`is_typed`]) is not reported. What is not typed
//! stays a finding in tests too: a random value (a real key pasted into a
//! test is still a leak) and anything a provider rule or the random-token
//! rule finds, since only credential-assignment consults this module.

use super::words;

/// Directory names that hold test code and its data.
const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "testdata",
    "test_data",
    "fixtures",
    "__fixtures__",
    "__mocks__",
    "mocks",
    "e2e",
];

/// File-name suffixes of test files (after lowercasing): Go, Python,
/// JavaScript/TypeScript, Ruby, Java/Kotlin/C#/PHP/Swift conventions.
const TEST_FILE_SUFFIXES: &[&str] = &[
    "_test.go",
    "_test.py",
    "_tests.py",
    "_spec.rb",
    "_test.rb",
    "_test.rs",
    "_tests.rs",
    "test.java",
    "tests.java",
    "test.kt",
    "tests.kt",
    "test.cs",
    "tests.cs",
    "test.php",
    "tests.swift",
    "test.swift",
];

/// Infixes of JavaScript/TypeScript test files (`inventory.test.ts`,
/// `auth.spec.jsx`).
const TEST_FILE_INFIXES: &[&str] = &[".test.", ".spec.", ".e2e."];

/// True when `path` is test code or test data: under a test directory, or
/// a file named as a test by its language's convention (`test_*.py`,
/// `conftest.py`, `*_test.go`, `*.test.ts`, `*Test.java`).
pub(crate) fn is_test_path(path: &str) -> bool {
    let lower = path.replace('\\', "/").to_ascii_lowercase();
    let mut parts = lower.split('/').collect::<Vec<_>>();
    let file = parts.pop().unwrap_or("");
    if parts.iter().any(|d| TEST_DIRS.contains(d)) {
        return true;
    }
    (file.starts_with("test_") && file.ends_with(".py"))
        || file == "conftest.py"
        || TEST_FILE_SUFFIXES.iter().any(|s| file.ends_with(s))
        || TEST_FILE_INFIXES.iter().any(|s| file.contains(s))
}

/// Longest value judged as typed by a person after undoing look-alike
/// spellings: a longer value with `@`, `$` and digits in it is as likely
/// random as typed.
const MAX_TYPED_LEET: usize = 16;

/// True for a value a person typed: English-like words with short digit
/// runs (`hunter2`, `password123`, `letmein`, `secret-2024`), or, up to
/// [`MAX_TYPED_LEET`] characters, the same once look-alike characters are
/// read as letters and closing `!`/`?`/`.`/`#` dropped (`P@ssw0rd!`,
/// `s3cr3t`). A random value (`x9Kq2mLpR7`) splits into short pieces
/// that are not words and stays a finding.
pub(crate) fn is_typed(v: &str) -> bool {
    if words::is_word_like(v, true) {
        return true;
    }
    let core = v.trim_end_matches(['!', '?', '.', '#']);
    if core.is_empty() || core.len() > MAX_TYPED_LEET {
        return false;
    }
    // Look-alikes inside a word; digits at the end stay digits
    // (`Passw0rd1`: `0` is an `o`, the final `1` a number).
    let digits_at_end = core.len() - core.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (body, tail) = core.split_at(core.len() - digits_at_end);
    let unleet: String = body
        .chars()
        .map(|c| match c {
            '@' | '4' => 'a',
            '0' => 'o',
            '1' | '!' => 'i',
            '3' => 'e',
            '$' | '5' => 's',
            '7' => 't',
            other => other,
        })
        .collect();
    words::is_word_like(&format!("{unleet}{tail}"), true)
}

/// Words by which a test names its value a fixture.
const FIXTURE_WORDS: &[&str] = &[
    "test", "testing", "fake", "dummy", "mock", "fixture", "example", "sample", "stub",
];

/// Longest suffix after the labelling words: a test's own uniqueness
/// salt (`test-secret-sckhnzsi`, `fake-token-a1b2c3`), not a key's body.
const MAX_SALT: usize = 8;

/// True for a value a test labels a fixture in its own words (issue 18,
/// generator-11 `hmac-sha256-test-vector`): words joined by `-`, `_` or
/// `.`, one of them a fixture word ([`FIXTURE_WORDS`]: `test-secret-…`,
/// `fake_api_key_…`), and at most a short random suffix of lowercase
/// letters and digits ([`MAX_SALT`]). A real key pasted after such words
/// (`test-secret-` and 32 random characters) is longer and stays a
/// finding, as does a provider key of a test mode (`sk_test_…`), which
/// provider rules judge anyway.
pub(crate) fn is_labelled_fixture(v: &str) -> bool {
    let parts: Vec<&str> = v.split(['-', '_', '.']).collect();
    let Some((last, head)) = parts.split_last() else {
        return false;
    };
    if head.is_empty()
        || head
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|c| c.is_ascii_alphabetic()))
        || !head
            .iter()
            .any(|p| FIXTURE_WORDS.contains(&p.to_ascii_lowercase().as_str()))
        || !words::is_word_like(&head.join("-"), false)
    {
        return false;
    }
    last.is_empty()
        || (last.len() <= MAX_SALT
            && last
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
        || words::is_word_like(last, true)
}

#[cfg(test)]
mod tests {
    use super::{is_labelled_fixture, is_test_path, is_typed};

    #[test]
    fn fixture_labelled_values() {
        for v in [
            "test-secret-sckhnzsi",
            "test-secret-zzzitblm",
            "fake_api_key_a1b2c3",
            "dummy-token-x9k2",
            "mock.signing.secret",
        ] {
            assert!(is_labelled_fixture(v), "{v}");
        }
        for v in [
            "test-secret-Xk29fLq8ZmN3vR7pW1yT5bQ4",
            "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
            "prod-secret-sckhnzsi",
            "sckhnzsi",
            "test-Zq8Kx2Lm4Np6Rt8V",
            "x9Kq2-test-mLpR7",
        ] {
            assert!(!is_labelled_fixture(v), "{v}");
        }
    }

    #[test]
    fn test_paths() {
        for p in [
            "tests/test_ledger.py",
            "src/__tests__/inventory.test.ts",
            "spec/fixtures/tenant.yml",
            "pkg/auth/login_test.go",
            "app/test_models.py",
            "conftest.py",
            "web/src/auth.spec.tsx",
            "src/test/java/com/acme/LoginTest.java",
            "spec/models/user_spec.rb",
            "internal/testdata/config.json",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "src/inventory.ts",
            "config/prod.py",
            "app/contest.py",
            "latest/settings.yml",
            "src/testing_utils.py",
            "attestation/keys.go",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn typed_values() {
        for v in [
            "hunter2",
            "password123",
            "letmein",
            "secret-2024",
            "P@ssw0rd!",
            "s3cr3t",
            "Passw0rd1",
            "correct-horse",
            "Summer2024!",
        ] {
            assert!(is_typed(v), "{v}");
        }
        for v in [
            "x9Kq2mLpR7",
            "Zq8v2Lm4Kp7Rt",
            "q9w8e7r6",
            "Tr0ub4dor&3",
            "9fK2mQ7xL4pR8sV1wZ3bT6yU0",
            "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ",
        ] {
            assert!(!is_typed(v), "{v}");
        }
    }

    /// Typed passwords in tests are fakes; in other files, and random or
    /// issuer-format values anywhere, they stay findings.
    #[test]
    fn tests_hide_typed_passwords_only() {
        use crate::scanner::rules::testutil::rules;
        for (path, text) in [
            ("tests/test_ledger.py", "    password=\"hunter2\",\n"),
            (
                "src/__tests__/login.test.ts",
                "  password: \"P@ssw0rd!\",\n",
            ),
            ("pkg/db/conn_test.go", "\tpassword := \"letmein99\"\n"),
        ] {
            assert!(rules(path, text).is_empty(), "{path}: {text:?}");
        }
        for (path, text, want) in [
            (
                "config/prod.py",
                "password = \"hunter2\"\n",
                "credential-assignment=hunter2",
            ),
            (
                "tests/test_ledger.py",
                "    password=\"Zq8v2Lm4Kp7Rt\",\n",
                "credential-assignment=Zq8v2Lm4Kp7Rt",
            ),
            (
                "tests/test_github.py",
                "TOKEN = \"ghp_8Kd2mQ7xL4pR8sV1wZ3bT6yU0aB4cD6eF8gH\"\n",
                "github-pat=ghp_8Kd2mQ7xL4pR8sV1wZ3bT6yU0aB4cD6eF8gH",
            ),
        ] {
            assert_eq!(rules(path, text), [want], "{path}: {text:?}");
        }
    }
}
