//! Values assembled from a file's own string constants (issue 18,
//! generator-9 `obscured-prefix-join`, generator-11
//! `template-literal-assembled-stripe`): `_PREFIX + _BODY`,
//! `` `sk_${mode}_${p1}${p2}` ``. No piece is the secret and no detector
//! sees the whole, which exists only once the expression is evaluated;
//! so the scanner evaluates the simplest kind itself, without running
//! anything: string constants bound once in the file, joined by `+` or
//! interpolated into a template literal, with literals between.
//!
//! [`find`] gives each such expression's span and its value with the
//! line's text before it (the name it is assigned to, which may call it a
//! secret): the caller judges `<line head>"<value>"` as a line of its own
//! and reports what it finds on the expression's span.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// Longest constant taken, and longest folded value judged.
const MAX_VALUE: usize = 512;
/// Shortest folded value judged: below it no detector reports.
const MIN_FOLDED: usize = 16;
/// Expressions folded per file, at most.
const MAX_EXPRS: usize = 64;

/// `NAME = 'literal'` (any of `const`/`let`/`var`/`final`… before it, a
/// type annotation after the name), alone on its line.
static CONSTANT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?m)^[ \t]*(?:export[ \t]+)?(?:(?:const|let|var|final|static|val|private|public|readonly)[ \t]+)*([A-Za-z_$][A-Za-z0-9_$]*)[ \t]*(?::[ \t]*[A-Za-z0-9_.<>\[\]]+[ \t]*)?=[ \t]*(?:"([^"\\\n]{1,512})"|'([^'\\\n]{1,512})')[ \t]*;?[ \t]*$"#,
    )
    .expect("constant regex")
});

/// A `+` chain of names and literals, or a template literal with
/// interpolations.
static EXPR: LazyLock<Regex> = LazyLock::new(|| {
    let part = r#"(?:[A-Za-z_$][A-Za-z0-9_$]*|"[^"\\\n]*"|'[^'\\\n]*')"#;
    Regex::new(&format!(
        r#"{part}(?:[ \t]*\+[ \t]*{part})+|`[^`\\\n]*\$\{{[^`\n]*`"#
    ))
    .expect("expression regex")
});

/// Template interpolation of a plain name.
static INTERP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{[ \t]*([A-Za-z_$][A-Za-z0-9_$]*)[ \t]*\}").expect("interpolation regex")
});

/// The file's string constants bound exactly once.
fn constants(text: &str) -> HashMap<&str, &str> {
    let mut seen: HashMap<&str, Option<&str>> = HashMap::new();
    for c in CONSTANT.captures_iter(text) {
        let (Some(name), Some(v)) = (c.get(1), c.get(2).or_else(|| c.get(3))) else {
            continue;
        };
        seen.entry(name.as_str())
            .and_modify(|x| *x = None)
            .or_insert(Some(v.as_str()));
    }
    seen.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

/// The value of a `+` chain or template literal `e` whose every name is a
/// constant, if at least one is.
fn fold(e: &str, consts: &HashMap<&str, &str>) -> Option<String> {
    let mut out = String::new();
    let mut used = false;
    if let Some(body) = e.strip_prefix('`').and_then(|b| b.strip_suffix('`')) {
        let mut last = 0;
        for c in INTERP.captures_iter(body) {
            let m = c.get(0)?;
            out.push_str(&body[last..m.start()]);
            out.push_str(consts.get(c.get(1)?.as_str())?);
            used = true;
            last = m.end();
        }
        let rest = &body[last..];
        if rest.contains("${") {
            return None;
        }
        out.push_str(rest);
    } else {
        for p in e.split('+').map(str::trim) {
            if let Some(lit) = p
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .or_else(|| p.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
            {
                out.push_str(lit);
            } else {
                out.push_str(consts.get(p)?);
                used = true;
            }
        }
    }
    (used && out.len() <= MAX_VALUE).then_some(out)
}

/// Each foldable expression: its span in `text`, and the synthetic line
/// to judge (the line's text before the expression, then the value
/// quoted).
pub(crate) fn find(text: &str) -> Vec<(usize, usize, String)> {
    // Cheap gate: no `=` assignment of a literal, nothing to fold.
    if !(text.contains('+') || text.contains("${")) {
        return Vec::new();
    }
    let consts = constants(text);
    if consts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for m in EXPR.find_iter(text).take(MAX_EXPRS) {
        let Some(v) = fold(m.as_str(), &consts) else {
            continue;
        };
        if v.len() < MIN_FOLDED || v.chars().any(char::is_whitespace) || v.contains('"') {
            continue;
        }
        let line = text[..m.start()].rfind('\n').map_or(0, |p| p + 1);
        out.push((
            m.start(),
            m.end(),
            format!("{}\"{v}\"\n", &text[line..m.start()]),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn constants_joined_or_interpolated_are_folded() {
        let t = "_PREFIX = \"ghp_\"\n_BODY = \"0ieJn7BemZ7z1Mc0xmgKiCy9H4ElnC2kIzIP\"\n\ndef c():\n    return Github(auth=Auth.Token(_PREFIX + _BODY))\n";
        let f = find(t);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(&t[f[0].0..f[0].1], "_PREFIX + _BODY");
        assert!(
            f[0].2
                .ends_with("Auth.Token(\"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\"\n")
        );
        let t = "const mode = 'live'\nconst p1 = 'Reai0y6VgNgf'\nconst p2 = 'jmQXyBmrEtyr'\nexport const STRIPE_KEY = `sk_${mode}_${p1}${p2}`\n";
        let f = find(t);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            f[0].2,
            "export const STRIPE_KEY = \"sk_live_Reai0y6VgNgfjmQXyBmrEtyr\"\n"
        );
    }

    #[test]
    fn unknown_or_rebound_names_are_not_folded() {
        for t in [
            // A name bound twice, a name never bound, prose.
            "A = 'ghp_'\nA = 'x'\nB = '0ieJn7BemZ7z1Mc0xmgKiCy9H4ElnC2kIzIP'\nt = A + B\n",
            "B = '0ieJn7BemZ7z1Mc0xmgKiCy9H4ElnC2kIzIP'\nt = prefix + B\n",
            "NAME = 'world'\nmsg = `hello ${NAME}, how are you today`\n",
            "X = 'abc'\ny = a + b\n",
        ] {
            assert!(find(t).is_empty(), "{t}");
        }
    }

    /// A provider-format key written whole in one constant is judged
    /// where it is written (a note there may clear it) and reported once
    /// there; only a key the fold assembles is reported at the expression.
    #[test]
    fn a_key_written_whole_is_judged_where_it_is_written() {
        use crate::scanner::rules::testutil::rules;
        let key = "AIzaSyD3k9Lq2Vz8Rt5Wp3Mn7Bc4Xf6Hj1Ke0Gu";
        let use_it = "const src = `https://maps.example.com/js?key=${MAPS_KEY}&cb=init`;\n";
        let restricted = format!(
            "// Browser key, restricted by HTTP referrer to our domains.\nconst MAPS_KEY = '{key}';\n{use_it}"
        );
        assert!(rules("web/map.js", &restricted).is_empty());
        let bare = format!("const MAPS_KEY = '{key}';\n{use_it}");
        assert_eq!(
            rules("web/map.js", &bare),
            [format!("google-api-key={key}")]
        );
        let (a, b) = key.split_at(20);
        let split = format!(
            "const A = '{a}';\nconst B = '{b}';\nconst src = `https://maps.example.com/js?key=${{A}}${{B}}`;\n"
        );
        assert_eq!(
            rules("web/map.js", &split),
            [format!("google-api-key={key}")]
        );
    }
}
