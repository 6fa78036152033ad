//! Template rendering: `{{secret:ID}}`, `{{secret:ID:base64}}`,
//! `{{secret:ID:hex}}` and nothing else (FORMAT.md, "Templates").
//!
//! Rendering works on bytes, so a template that is not UTF-8 and holds no
//! placeholder is copied byte for byte. Every placeholder's output line is
//! recorded: that is how the generator recomputes a secret's `line` when a
//! seeded variant changes the values.

use super::model::Encoding;
use anyhow::{Context, bail};
use std::collections::BTreeMap;

const OPEN: &[u8] = b"{{secret:";
/// Longest `ID:form` between `{{secret:` and `}}`; a longer run is a typo.
const MAX_INNER: usize = 48;

/// The episode's secret values, by secret id.
pub type Values = BTreeMap<String, String>;

/// One placeholder found while rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Secret id.
    pub id: String,
    /// `None` for the plain value.
    pub encoding: Option<Encoding>,
    /// 1-based output line the value starts on.
    pub line: u32,
}

/// Renders one template. Unknown ids and malformed placeholders are errors:
/// "no other templating exists", so `{{secret:` is never literal text.
pub fn render(template: &[u8], values: &Values) -> anyhow::Result<(Vec<u8>, Vec<Hit>)> {
    let mut out = Vec::with_capacity(template.len());
    let mut hits = Vec::new();
    let mut line: u32 = 1;
    let mut rest = template;
    while let Some(pos) = find(rest, OPEN) {
        let (before, after) = rest.split_at(pos);
        line += count_newlines(before);
        out.extend_from_slice(before);
        let after = &after[OPEN.len()..];
        let window = &after[..after.len().min(MAX_INNER + 2)];
        let Some(end) = find(window, b"}}") else {
            bail!("line {line}: unterminated or overlong {{{{secret:...}}}} placeholder");
        };
        let inner = std::str::from_utf8(&after[..end])
            .with_context(|| format!("line {line}: placeholder is not UTF-8"))?;
        let (id, encoding) = match inner.split_once(':') {
            None => (inner, None),
            Some((id, "base64")) => (id, Some(Encoding::Base64)),
            Some((id, "hex")) => (id, Some(Encoding::Hex)),
            Some((_, form)) => bail!("line {line}: unknown placeholder form {form:?}"),
        };
        let value = values
            .get(id)
            .with_context(|| format!("line {line}: placeholder names unknown secret {id:?}"))?;
        let text = match encoding {
            None => value.clone(),
            Some(e) => e.encode(value),
        };
        if text.contains('\n') && !(out.is_empty() || out.ends_with(b"\n")) {
            bail!("line {line}: a multi-line value's placeholder must start a line");
        }
        hits.push(Hit {
            id: id.to_owned(),
            encoding,
            line,
        });
        line += count_newlines(text.as_bytes());
        out.extend_from_slice(text.as_bytes());
        rest = &after[end + 2..];
    }
    out.extend_from_slice(rest);
    Ok((out, hits))
}

/// Renders a text (oracle actions): same rules as [`render`].
pub fn render_str(template: &str, values: &Values) -> anyhow::Result<String> {
    let (bytes, _) = render(template.as_bytes(), values)?;
    // Values and the template are both UTF-8, so the output is too.
    String::from_utf8(bytes).context("rendered text is not UTF-8")
}

/// Checks a workspace-relative path from a task file: relative, `/`-separated,
/// no `.`/`..`/empty components, never inside `.git`. Task files are
/// reviewed, but the generator writes where they point, so it checks.
pub fn check_rel_path(p: &str) -> Result<(), String> {
    if p.is_empty() || p.len() > 255 {
        return Err("path must be 1-255 bytes".into());
    }
    if p.starts_with('/') || p.contains('\\') || p.contains('\0') {
        return Err("path must be relative and /-separated".into());
    }
    for c in p.split('/') {
        if c.is_empty() || c == "." || c == ".." {
            return Err("path has an empty, . or .. component".into());
        }
        if c.eq_ignore_ascii_case(".git") {
            return Err("path is inside .git".into());
        }
    }
    Ok(())
}

fn count_newlines(b: &[u8]) -> u32 {
    u32::try_from(b.iter().filter(|&&c| c == b'\n').count()).unwrap_or(u32::MAX)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals() -> Values {
        [
            ("s1".to_string(), "abc".to_string()),
            (
                "k".to_string(),
                "-----BEGIN X-----\nAA\n-----END X-----".to_string(),
            ),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn forms_and_lines() {
        let t = b"a\nx={{secret:s1}} y={{secret:s1:base64}}\n{{secret:k}}\nz={{secret:s1:hex}}\n";
        let (out, hits) = render(t, &vals()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a\nx=abc y=YWJj\n-----BEGIN X-----\nAA\n-----END X-----\nz=616263\n"
        );
        let lines: Vec<u32> = hits.iter().map(|h| h.line).collect();
        assert_eq!(lines, [2, 2, 3, 6]);
        assert_eq!(hits[1].encoding, Some(Encoding::Base64));
    }

    #[test]
    fn errors() {
        assert!(render(b"{{secret:nope}}", &vals()).is_err());
        assert!(render(b"{{secret:s1:rot13}}", &vals()).is_err());
        assert!(render(b"{{secret:s1", &vals()).is_err());
        assert!(render(b"x = {{secret:k}}", &vals()).is_err());
    }

    #[test]
    fn binary_passthrough() {
        let t = [0xff, 0xfe, b'{', b'{', 0];
        assert_eq!(render(&t, &vals()).unwrap().0, t);
    }

    #[test]
    fn paths() {
        assert!(check_rel_path("app/settings.py").is_ok());
        assert!(check_rel_path(".env").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "a//b",
            ".git/config",
            "a/.GIT/x",
            "a\\b",
        ] {
            assert!(check_rel_path(bad).is_err(), "{bad}");
        }
    }
}
