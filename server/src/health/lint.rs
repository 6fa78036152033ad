//! The tamper lint (spec.md §6, the lint for pytest-internals tampering):
//! Python files outside the pristine
//! suite may not add pytest internals, interpreter hooks or odd encodings
//! beyond what the task's template already has.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::treecopy::{CopyBudget, open_regular};

/// Substrings that code outside the task's test suite has no business
/// adding: they reach into pytest or the interpreter, run code indirectly,
/// or touch the report (see [`super::HealthGrader::grade_linted_timed`]). Counted per
/// file against the same file of the template, so the task's own code
/// (task 7 uses `__import__("os")`) is not flagged.
pub const TAMPER_TOKENS: &[&str] = &[
    "pytest",
    "pluggy",
    "junit",
    "grader-out",
    "report.xml",
    "conftest",
    "sys.modules",
    // `import sys as s; s.modules[...]`, `from sys import modules`,
    // `getattr(s, 'modules')`.
    ".modules",
    "import modules",
    "modules as",
    "'modules'",
    "\"modules\"",
    "getattr(sys",
    "vars(sys",
    "__dict__",
    "importlib",
    "__import__",
    "__builtins__",
    "builtins",
    "__loader__",
    "__spec__",
    "_getframe",
    "f_back",
    "f_globals",
    "f_locals",
    "inspect",
    "traceback",
    "import gc",
    "gc.",
    "addaudithook",
    "settrace",
    "setprofile",
    "atexit",
    "_exit",
    "os.abort",
    "signal",
    "faulthandler",
    "threading",
    "_thread",
    "multiprocessing",
    "subprocess",
    "os.system",
    "os.popen",
    "os.fork",
    "os.exec",
    "os.spawn",
    "posix",
    "ctypes",
    "exec(",
    "eval(",
    "compile(",
    "__code__",
    "__globals__",
    "__subclasses__",
    "__class__",
    "__bases__",
    "__mro__",
    "marshal",
    "pickle",
    "zipimport",
    "meta_path",
    "path_hooks",
];

/// What in a Python file is suspicious, counted so the template's own code
/// can be subtracted: reason → occurrences.
pub(super) fn tamper_counts(text: &[u8]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    static FINDERS: std::sync::OnceLock<Vec<memchr::memmem::Finder<'static>>> =
        std::sync::OnceLock::new();
    let finders = FINDERS.get_or_init(|| {
        TAMPER_TOKENS
            .iter()
            .map(|t| memchr::memmem::Finder::new(t.as_bytes()))
            .collect()
    });
    for (t, f) in TAMPER_TOKENS.iter().zip(finders) {
        let n = count_found(text, f);
        if n > 0 {
            m.insert(*t, n);
        }
    }
    // PEP 263 cookie in the first two lines: anything but UTF-8, ASCII or
    // Latin-1 (utf-7, a registered custom codec) can hide the tokens.
    for line in text.split(|b| *b == b'\n').take(2) {
        let l = String::from_utf8_lossy(line).to_ascii_lowercase();
        let Some(hash) = l.find('#') else { continue };
        let Some(pos) = l[hash..].find("coding") else {
            continue;
        };
        let rest = l[hash + pos + 6..].trim_start_matches([':', '=', ' ', '\t']);
        let enc: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
            .collect();
        pub(super) const OK: &[&str] = &[
            "utf-8",
            "utf8",
            "utf_8",
            "ascii",
            "us-ascii",
            "latin-1",
            "latin1",
            "latin_1",
            "iso-8859-1",
            "iso8859-1",
        ];
        if !enc.is_empty() && !OK.contains(&enc.as_str()) {
            *m.entry("a source encoding other than UTF-8").or_default() += 1;
        }
    }
    // Identifiers are NFKC-normalised: `_ｐytest` is `_pytest`.
    let lookalikes = String::from_utf8_lossy(text)
        .chars()
        .filter(|c| {
            matches!(*c as u32,
                0x2070..=0x209F | 0x2100..=0x214F | 0x2160..=0x217F | 0x1D2C..=0x1D6A
                | 0xFB00..=0xFB06 | 0xFF00..=0xFFEF | 0x1D400..=0x1D7FF)
        })
        .count();
    if lookalikes > 0 {
        m.insert("NFKC look-alike letters", lookalikes);
    }
    m
}

/// Occurrences of `needle` in `hay`, overlapping ones included (as many
/// as windows of the needle's length equal to it: `__dict__dict__` holds
/// `__dict__` twice).
#[cfg(test)]
pub(super) fn count_sub(hay: &[u8], needle: &[u8]) -> usize {
    if needle.is_empty() {
        return 0;
    }
    count_found(hay, &memchr::memmem::Finder::new(needle))
}

/// [`count_sub`] with the needle's finder built once.
fn count_found(hay: &[u8], finder: &memchr::memmem::Finder<'_>) -> usize {
    if finder.needle().is_empty() {
        return 0;
    }
    let (mut n, mut at) = (0, 0);
    while let Some(i) = finder.find(&hay[at..]) {
        n += 1;
        at += i + 1;
    }
    n
}

/// Largest Python file the lint reads; a larger one fails the lint (no
/// task ships one, and it could hide anything past the limit).
pub(super) const LINT_MAX_FILE: u64 = 4 << 20;

/// Reads a regular file of at most [`LINT_MAX_FILE`] bytes.
pub(super) fn read_for_lint(path: &Path) -> std::io::Result<Vec<u8>> {
    let (f, m) = open_regular(path)?;
    if m.len() > LINT_MAX_FILE {
        return Err(std::io::Error::other(format!(
            "larger than {LINT_MAX_FILE} bytes"
        )));
    }
    let mut text = Vec::new();
    f.take(LINT_MAX_FILE).read_to_end(&mut text)?;
    Ok(text)
}

/// The tamper lint (see [`super::HealthGrader::grade_linted_timed`]) over the prepared
/// copy: every `.py`/`.pyw` file that is not a restored suite file, compared
/// with the same path in `template`. A symlink with a Python name must
/// point at a `.py` file (which is linted itself); anything else could
/// import a file the lint never reads.
pub(super) fn lint_tree(
    tree: &Path,
    template: &Path,
    shipped: &[PathBuf],
    budget: &CopyBudget,
) -> Result<(), String> {
    let shipped: BTreeSet<&Path> = shipped.iter().map(PathBuf::as_path).collect();
    let mut stack = vec![(PathBuf::new(), 0usize)];
    let mut seen = 0usize;
    while let Some((rel, depth)) = stack.pop() {
        if depth > budget.max_depth {
            return Err("tamper lint: copy nests too deep".into());
        }
        let rd = std::fs::read_dir(tree.join(&rel)).map_err(|e| format!("tamper lint: {e}"))?;
        for e in rd {
            let e = e.map_err(|e| format!("tamper lint: {e}"))?;
            seen += 1;
            if seen > budget.max_entries {
                return Err("tamper lint: copy over budget".into());
            }
            let r = rel.join(e.file_name());
            let ft = e.file_type().map_err(|e| format!("tamper lint: {e}"))?;
            if ft.is_dir() {
                stack.push((r, depth + 1));
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if !(name.ends_with(".py") || name.ends_with(".pyw")) || shipped.contains(r.as_path()) {
                continue;
            }
            if ft.is_symlink() {
                let target =
                    std::fs::read_link(tree.join(&r)).map_err(|e| format!("tamper lint: {e}"))?;
                if !target.to_string_lossy().ends_with(".py") {
                    return Err(format!(
                        "tamper lint: {} is a symlink to {}, not to a Python file",
                        r.display(),
                        target.display()
                    ));
                }
                continue;
            }
            let text = read_for_lint(&tree.join(&r))
                .map_err(|e| format!("tamper lint: {}: {e}", r.display()))?;
            let now = tamper_counts(&text);
            if now.is_empty() {
                continue;
            }
            let before = read_for_lint(&template.join(&r))
                .map(|t| tamper_counts(&t))
                .unwrap_or_default();
            let added: Vec<&str> = now
                .iter()
                .filter(|(k, n)| before.get(*k).copied().unwrap_or(0) < **n)
                .map(|(k, _)| *k)
                .collect();
            if !added.is_empty() {
                return Err(format!(
                    "tamper lint: {} adds {} outside the test suite (code under test must not reach into pytest or the interpreter)",
                    r.display(),
                    added.join(", ")
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod count_tests {
    use super::*;

    /// The search counts what a window-by-window comparison counts,
    /// overlapping occurrences included.
    #[test]
    fn count_sub_counts_every_window() {
        let windows = |hay: &[u8], needle: &[u8]| {
            if needle.is_empty() || hay.len() < needle.len() {
                0
            } else {
                hay.windows(needle.len()).filter(|w| *w == needle).count()
            }
        };
        let hays: [&[u8]; 6] = [
            b"",
            b"__dict__dict__dict__",
            b"aaaaaa",
            b"import gc; gc.collect(); gc.gc.",
            b"sys.modules['x']; s.modules; from sys import modules as m",
            "_\u{ff50}ytest pytest pytestpytest".as_bytes(),
        ];
        for hay in hays {
            for needle in TAMPER_TOKENS.iter().map(|t| t.as_bytes()).chain([
                &b"aa"[..],
                b"a",
                b"__dict__",
                b"gc.",
            ]) {
                assert_eq!(
                    count_sub(hay, needle),
                    windows(hay, needle),
                    "{needle:?} in {hay:?}"
                );
            }
            assert_eq!(
                tamper_counts(hay).values().sum::<usize>() > 0,
                !hay.is_empty() && hay != b"aaaaaa"
            );
        }
    }
}
