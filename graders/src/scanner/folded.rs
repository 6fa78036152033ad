//! String constants folded into the expressions that assemble them
//! (issue 18, generator-11 `template-literal-assembled-stripe`,
//! generator-9 `obscured-prefix-join`): a key written as named pieces,
//! `const p1 = '…'` then `` `sk_${mode}_${p1}${p2}` ``, or `_PREFIX =
//! "ghp_"` then `_PREFIX + _BODY`, is whole only once the names are read.
//!
//! This is the least data flow that does it, in one file: a name bound
//! exactly once to a literal without whitespace (`const`/`let`/`var` in
//! JavaScript and TypeScript, a module-level assignment in Python, Ruby
//! and the like), and an expression that is a template literal whose
//! every `${…}` is such a name, or a `+` chain of such names and
//! literals with at least one name. A name bound twice, to something
//! else than a literal, or an expression with a call or a property is
//! not folded. [`find`] gives each expression's span and its value,
//! which the scanner judges on its own line ([`Fold::line`]).

use std::collections::HashMap;
use std::sync::LazyLock;

/// Longest literal bound to a name, and longest folded value.
const MAX_VALUE: usize = 512;
/// Shortest folded value worth judging: below it no detector reports.
const MIN_FOLDED: usize = 16;

/// A name bound to a literal: `const NAME = 'x'`, `NAME = "x"` at a
/// line's start (optionally typed: `const p: string = 'x'`).
static BINDING: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r#"(?m)^[ \t]*(?:export[ \t]+)?(?:(?:const|let|var|final|val)[ \t]+)?([A-Za-z_$][A-Za-z0-9_$]*)[ \t]*(?::[ \t]*[A-Za-z]+[ \t]*)?=[ \t]*(?:"([^"\s\\]{1,512})"|'([^'\s\\]{1,512})')[ \t]*;?[ \t]*(?:(?://|#).*)?$"#,
    )
    .expect("binding regex")
});

/// Any assignment of a name (to see names bound more than once).
static ANY_BINDING: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?m)^[ \t]*(?:export[ \t]+)?(?:(?:const|let|var|final|val)[ \t]+)?([A-Za-z_$][A-Za-z0-9_$]*)[ \t]*(?::[ \t]*[A-Za-z]+[ \t]*)?[+]?=[^=]")
        .expect("any binding regex")
});

/// A one-line template literal.
static TEMPLATE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"`([^`\n\\]{1,512})`").expect("template regex"));

/// A `+` chain of names and literals (at least two operands).
static PLUS_CHAIN: LazyLock<regex::Regex> = LazyLock::new(|| {
    let op = r#"(?:[A-Za-z_$][A-Za-z0-9_$]*|"[^"\s\\]*"|'[^'\s\\]*')"#;
    regex::Regex::new(&format!(r"{op}(?:[ \t]*\+[ \t]*{op})+")).expect("plus chain regex")
});

/// One folded expression: its span in the text and its value.
pub(crate) struct Fold {
    pub start: usize,
    pub end: usize,
    pub value: String,
}

impl Fold {
    /// The expression's line with the folded value, quoted, in its place
    /// (up to the expression's end): the text the detectors judge, with
    /// the value at byte [`Fold::value_at`] of it.
    pub(crate) fn line(&self, text: &str) -> (String, usize) {
        let ls = text[..self.start].rfind('\n').map_or(0, |p| p + 1);
        let prefix = &text[ls..self.start];
        (format!("{prefix}\"{}\"\n", self.value), prefix.len() + 1)
    }
}

/// Names bound exactly once in `text`, each to a literal.
fn bindings(text: &str) -> HashMap<&str, &str> {
    let mut out = HashMap::new();
    for c in BINDING.captures_iter(text) {
        let name = c.get(1).map_or("", |m| m.as_str());
        let lit = c.get(2).or_else(|| c.get(3)).map_or("", |m| m.as_str());
        out.insert(name, lit);
    }
    if out.is_empty() {
        return out;
    }
    let mut count: HashMap<&str, usize> = HashMap::new();
    for c in ANY_BINDING.captures_iter(text) {
        *count
            .entry(c.get(1).map_or("", |m| m.as_str()))
            .or_default() += 1;
    }
    out.retain(|name, _| count.get(name) == Some(&1));
    out
}

/// A template literal's body with every `${name}` replaced by the name's
/// literal, if every one is a bound name and the rest has no whitespace.
fn fold_template(body: &str, names: &HashMap<&str, &str>) -> Option<String> {
    let (mut out, mut rest, mut subst) = (String::new(), body, false);
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let close = rest[i..].find('}')? + i;
        out.push_str(names.get(rest[i + 2..close].trim())?);
        subst = true;
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    (subst && !out.contains(char::is_whitespace)).then_some(out)
}

/// A `+` chain's operands folded, if each is a bound name or a literal
/// and at least one is a name.
fn fold_chain(chain: &str, names: &HashMap<&str, &str>) -> Option<String> {
    let (mut out, mut named) = (String::new(), false);
    for op in chain.split('+').map(str::trim) {
        if let Some(lit) = op
            .strip_prefix('"')
            .and_then(|o| o.strip_suffix('"'))
            .or_else(|| op.strip_prefix('\'').and_then(|o| o.strip_suffix('\'')))
        {
            out.push_str(lit);
        } else {
            out.push_str(names.get(op)?);
            named = true;
        }
    }
    named.then_some(out)
}

/// The folded expressions of `text` (module doc), in text order.
pub(crate) fn find(text: &str) -> Vec<Fold> {
    let has_template = text.contains("${") && text.contains('`');
    if !has_template && !text.contains('+') {
        return Vec::new();
    }
    let names = bindings(text);
    if names.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let keep = |v: &str| (MIN_FOLDED..=MAX_VALUE).contains(&v.len());
    if has_template {
        for c in TEMPLATE.captures_iter(text) {
            let (m, body) = (c.get(0).expect("match"), c.get(1).expect("body"));
            if let Some(value) = fold_template(body.as_str(), &names).filter(|v| keep(v)) {
                out.push(Fold {
                    start: m.start(),
                    end: m.end(),
                    value,
                });
            }
        }
    }
    for m in PLUS_CHAIN.find_iter(text) {
        // Not the tail of a property or call (`a.b + c`, `f(x) + y`).
        if text[..m.start()]
            .chars()
            .next_back()
            .is_some_and(|c| c == '.' || c.is_ascii_alphanumeric())
            || text[m.end()..].starts_with(['.', '(', '['])
        {
            continue;
        }
        if let Some(value) = fold_chain(m.as_str(), &names).filter(|v| keep(v)) {
            out.push(Fold {
                start: m.start(),
                end: m.end(),
                value,
            });
        }
    }
    out.sort_by_key(|f| f.start);
    out
}

#[cfg(test)]
mod tests {
    use super::find;
    use crate::scanner::rules::testutil::rules;

    /// A scan reports the folded key at the expression, by the provider
    /// rule its value matches; pieces no expression folds stay unreported.
    #[test]
    fn a_scan_reports_the_folded_value() {
        let ts = "const mode = 'live'\nconst p1 = 'Reai0y6VgNgf'\nconst p2 = 'jmQXyBmrEtyr'\nexport const STRIPE_KEY = `sk_${mode}_${p1}${p2}`\n";
        assert_eq!(
            rules("src/payments/key.ts", ts),
            ["stripe-secret-key=sk_live_Reai0y6VgNgfjmQXyBmrEtyr"]
        );
        let py = "_PREFIX = \"ghp_\"\n_BODY = \"0ieJn7BemZ7z1Mc0xmgKiCy9H4ElnC2kIzIP\"\n\ndef c():\n    return Auth.Token(_PREFIX + _BODY)\n";
        assert_eq!(
            rules("release/gh.py", py),
            ["github-pat=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"]
        );
        let url = "const host = 'api.example.com'\nconst path = '/v1/items/list'\nconst u = `https://${host}${path}`\n";
        assert!(rules("src/a.ts", url).is_empty());
    }

    fn values(text: &str) -> Vec<String> {
        find(text).into_iter().map(|f| f.value).collect()
    }

    #[test]
    fn templates_and_chains_of_bound_literals() {
        let ts = "const mode = 'live'\nconst p1 = 'Reai0y6VgNgf'\nconst p2 = 'jmQXyBmrEtyr'\nexport const STRIPE_KEY = `sk_${mode}_${p1}${p2}`\n";
        assert_eq!(values(ts), ["sk_live_Reai0y6VgNgfjmQXyBmrEtyr"]);
        let f = &find(ts)[0];
        assert_eq!(&ts[f.start..f.end], "`sk_${mode}_${p1}${p2}`");
        let (line, at) = f.line(ts);
        assert_eq!(
            line,
            "export const STRIPE_KEY = \"sk_live_Reai0y6VgNgfjmQXyBmrEtyr\"\n"
        );
        assert_eq!(&line[at..at + 3], "sk_");
        let py = "_PREFIX = \"ghp_\"\n_BODY = \"0ieJn7BemZ7z1Mc0xmgKiCy9H4ElnC2kIzIP\"\n\ndef c():\n    return Auth.Token(_PREFIX + _BODY)\n";
        assert_eq!(values(py), ["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"]);
    }

    #[test]
    fn unbound_rebound_or_computed_pieces_are_left() {
        for t in [
            // A name from elsewhere, a name bound twice, a property.
            "const a = 'sk_live_'\nconst k = `${a}${process.env.B}`\n",
            "let a = 'sk_live_abc'\na = 'sk_live_abcdefghijkl'\nconst k = `${a}0123456789`\n",
            "const a = 'sk_live_abcdefghi'\nconst k = cfg.a + a\n",
            // Prose in a template, a sum of numbers.
            "const who = 'world'\nconst m = `hello ${who} and everyone else`\n",
            "const n = 1\nconst m = n + 2\n",
        ] {
            assert!(values(t).is_empty(), "{t}: {:?}", values(t));
        }
    }
}
