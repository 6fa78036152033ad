//! Template rendering (FORMAT.md, "Templates"): the placeholders
//!
//! - `{{secret:ID}}`, `{{secret:ID:base64}}`, `{{secret:ID:hex}}`: the
//!   episode's value of secret `ID`, plain or in a fixed encoding;
//! - `{{secret:ID:enc}}`: the value in the episode's encoding of `ID` (a
//!   deep secret whose encoding a seeded variant may change);
//! - `{{enc:ID:TEXT_IF_BASE64|TEXT_IF_HEX}}`: text that follows that
//!   encoding (the decoding call, a key name such as `token_b64`; `\n`
//!   stands for a newline);
//! - `{{path:P}}` / `{{name:P}}`: the episode's path (or file name) of the
//!   file a variant may rename, `P` being its canonical path;
//! - `{{slot:NAME:K}}`: where placement block `NAME` (its text, with
//!   secret placeholders, is in `task.json`) goes when the episode chose
//!   slot `K`; empty otherwise (slot 1 is the canonical placement),
//!
//! and nothing else. Rendering works on bytes, so a template that is not
//! UTF-8 and holds no placeholder is copied byte for byte. Every secret
//! placeholder's output line is recorded: that is how the generator
//! recomputes a secret's `line` when a seeded variant changes the values.

use super::model::Encoding;
use anyhow::{Context, bail};
use std::collections::BTreeMap;

const OPEN: &[u8] = b"{{";
/// Longest text between `{{` and `}}`; a longer run is a typo.
const MAX_INNER: usize = 160;

/// What one episode renders templates with: secret values, the encoding of
/// each deep secret and the path of each file a variant renames. The
/// canonical episode uses `task.json` (paths map to themselves); a seeded
/// variant draws all three ([`super::variants`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Values {
    /// Value by secret id.
    pub secrets: BTreeMap<String, String>,
    /// Encoding by deep secret id.
    pub encodings: BTreeMap<String, Encoding>,
    /// Episode path by canonical path, for every path the task may rename
    /// (identity in the canonical episode).
    pub paths: BTreeMap<String, String>,
    /// Placement blocks by name: the chosen slot (1 = canonical) and the
    /// block's template text, rendered where `{{slot:NAME:K}}` has K equal
    /// to the chosen slot.
    pub placements: BTreeMap<String, (u32, String)>,
}

impl Values {
    /// The episode path of canonical path `p` (itself when not renamed).
    pub fn path<'a>(&'a self, p: &'a str) -> &'a str {
        self.paths.get(p).map_or(p, String::as_str)
    }
}

/// Which form a secret placeholder asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `{{secret:ID}}`.
    Plain,
    /// `{{secret:ID:base64}}` / `{{secret:ID:hex}}`.
    Fixed(Encoding),
    /// `{{secret:ID:enc}}`: the episode's encoding.
    Episode(Encoding),
}

/// One secret placeholder found while rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Secret id.
    pub id: String,
    /// `None` for the plain value.
    pub encoding: Option<Encoding>,
    /// How the template spelled it.
    pub form: Form,
    /// 1-based output line the value starts on.
    pub line: u32,
}

/// Renders one template. Unknown ids, paths and malformed placeholders are
/// errors: "no other templating exists", so `{{secret:`, `{{enc:`,
/// `{{path:` and `{{name:` are never literal text. Any other `{{` (Jinja,
/// GitHub Actions `${{ }}`) is copied as is.
pub fn render(template: &[u8], values: &Values) -> anyhow::Result<(Vec<u8>, Vec<Hit>)> {
    render_inner(template, values, false)
}

/// `in_block`: rendering a placement block's text, where `{{slot:}}` is an
/// error (blocks do not nest, so expansion is bounded).
fn render_inner(
    template: &[u8],
    values: &Values,
    in_block: bool,
) -> anyhow::Result<(Vec<u8>, Vec<Hit>)> {
    let mut out = Vec::with_capacity(template.len());
    let mut hits = Vec::new();
    let mut line: u32 = 1;
    let mut rest = template;
    while let Some(pos) = find(rest, OPEN) {
        let (before, after) = rest.split_at(pos);
        line += count_newlines(before);
        out.extend_from_slice(before);
        let after = &after[OPEN.len()..];
        let Some(kind) = [&b"secret:"[..], b"enc:", b"path:", b"name:", b"slot:"]
            .into_iter()
            .find(|k| after.starts_with(k))
        else {
            // Not ours: keep the `{{` and go on after it.
            out.extend_from_slice(OPEN);
            rest = after;
            continue;
        };
        let body = &after[kind.len()..];
        let window = &body[..body.len().min(MAX_INNER + 2)];
        let Some(end) = find(window, b"}}") else {
            bail!("line {line}: unterminated or overlong {{{{...}}}} placeholder");
        };
        let inner = std::str::from_utf8(&body[..end])
            .with_context(|| format!("line {line}: placeholder is not UTF-8"))?;
        let text = match kind {
            b"secret:" => {
                let (id, form) = match inner.split_once(':') {
                    None => (inner, Form::Plain),
                    Some((id, "base64")) => (id, Form::Fixed(Encoding::Base64)),
                    Some((id, "hex")) => (id, Form::Fixed(Encoding::Hex)),
                    Some((id, "enc")) => (id, Form::Episode(episode_encoding(values, id, line)?)),
                    Some((_, f)) => bail!("line {line}: unknown placeholder form {f:?}"),
                };
                let value = values.secrets.get(id).with_context(|| {
                    format!("line {line}: placeholder names unknown secret {id:?}")
                })?;
                let encoding = match form {
                    Form::Plain => None,
                    Form::Fixed(e) | Form::Episode(e) => Some(e),
                };
                let text = encoding.map_or_else(|| value.clone(), |e| e.encode(value));
                if text.contains('\n') && !(out.is_empty() || out.ends_with(b"\n")) {
                    bail!("line {line}: a multi-line value's placeholder must start a line");
                }
                hits.push(Hit {
                    id: id.to_owned(),
                    encoding,
                    form,
                    line,
                });
                text
            }
            b"enc:" => {
                let Some((id, choices)) = inner.split_once(':') else {
                    bail!("line {line}: {{{{enc:ID:BASE64_TEXT|HEX_TEXT}}}} needs an id");
                };
                let Some((b64, hex)) = choices.split_once('|') else {
                    bail!("line {line}: {{{{enc:...}}}} needs two texts separated by |");
                };
                if hex.contains('|') || b64.contains('\n') || hex.contains('\n') {
                    bail!("line {line}: {{{{enc:...}}}} takes exactly two one-line texts");
                }
                // `\n` in a text stands for a newline (an import line the
                // other encoding does not need).
                match episode_encoding(values, id, line)? {
                    Encoding::Base64 => b64.replace("\\n", "\n"),
                    Encoding::Hex => hex.replace("\\n", "\n"),
                }
            }
            b"slot:" => {
                if in_block {
                    bail!("line {line}: a placement block may not hold {{{{slot:...}}}}");
                }
                let Some((name, k)) = inner.rsplit_once(':') else {
                    bail!("line {line}: {{{{slot:NAME:K}}}} needs a slot number");
                };
                let k: u32 = k
                    .parse()
                    .with_context(|| format!("line {line}: slot {k:?} is not a number"))?;
                let Some((chosen, text)) = values.placements.get(name) else {
                    bail!(
                        "line {line}: {name:?} is not a placement of the task (variants.placements)"
                    );
                };
                // Checked for every slot, chosen or not, so the canonical
                // task already catches a misplaced one.
                if !(out.is_empty() || out.ends_with(b"\n")) {
                    bail!("line {line}: a {{{{slot:...}}}} must start a line");
                }
                if *chosen != k {
                    rest = &body[end + 2..];
                    continue;
                }
                let (bytes, block_hits) = render_inner(text.as_bytes(), values, true)
                    .with_context(|| format!("line {line}: placement {name}"))?;
                hits.extend(block_hits.into_iter().map(|mut h| {
                    h.line += line - 1;
                    h
                }));
                line += count_newlines(&bytes);
                out.extend_from_slice(&bytes);
                rest = &body[end + 2..];
                continue;
            }
            _ => {
                let Some(p) = values.paths.get(inner) else {
                    bail!(
                        "line {line}: {inner:?} is not a path the task may rename (variants.paths)"
                    );
                };
                if kind == b"name:" {
                    p.rsplit('/').next().unwrap_or(p).to_owned()
                } else {
                    p.clone()
                }
            }
        };
        line += count_newlines(text.as_bytes());
        out.extend_from_slice(text.as_bytes());
        rest = &body[end + 2..];
    }
    out.extend_from_slice(rest);
    Ok((out, hits))
}

fn episode_encoding(values: &Values, id: &str, line: u32) -> anyhow::Result<Encoding> {
    values
        .encodings
        .get(id)
        .copied()
        .with_context(|| format!("line {line}: secret {id:?} has no encoding (not a deep secret)"))
}

/// Renders a text (oracle actions): same rules as [`render`].
pub fn render_str(template: &str, values: &Values) -> anyhow::Result<String> {
    let (bytes, _) = render(template.as_bytes(), values)?;
    // Values and the template are both UTF-8, so the output is too.
    String::from_utf8(bytes).context("rendered text is not UTF-8")
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
        Values {
            secrets: [
                ("s1".to_string(), "abc".to_string()),
                (
                    "k".to_string(),
                    "-----BEGIN X-----\nAA\n-----END X-----".to_string(),
                ),
            ]
            .into_iter()
            .collect(),
            encodings: [("s1".to_string(), Encoding::Hex)].into_iter().collect(),
            paths: [("config/app.json".to_string(), "etc/tiles.json".to_string())]
                .into_iter()
                .collect(),
            placements: BTreeMap::new(),
        }
    }

    #[test]
    fn episode_forms() {
        let t = b"v={{secret:s1:enc}} # {{enc:s1:b64decode(x)|bytes.fromhex(x)}}\nopen('{{path:config/app.json}}') {{name:config/app.json}} ${{ secrets.X }} {{ jinja }}\n";
        let (out, hits) = render(t, &vals()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "v=616263 # bytes.fromhex(x)\nopen('etc/tiles.json') tiles.json ${{ secrets.X }} {{ jinja }}\n"
        );
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].form, Form::Episode(Encoding::Hex));
        let mut b64 = vals();
        b64.encodings.insert("s1".into(), Encoding::Base64);
        let (out, hits) = render(
            b"import os{{enc:s1:\\nimport base64|}}\nk = {{secret:s1:enc}} {{enc:s1:A|B}}",
            &b64,
        )
        .unwrap();
        assert_eq!(out, b"import os\nimport base64\nk = YWJj A");
        assert_eq!(hits[0].line, 3, "lines count the newlines enc texts add");
        // No encoding for k, unknown path, malformed enc.
        for bad in [
            &b"{{secret:k:enc}}"[..],
            b"{{enc:k:a|b}}",
            b"{{path:other.json}}",
            b"{{enc:s1:onlyone}}",
            b"{{enc:s1:a|b|c}}",
            b"{{path:config/app.json",
        ] {
            assert!(
                render(bad, &vals()).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn placement_slots() {
        let mut v = vals();
        v.placements.insert(
            "creds".into(),
            (
                2,
                "KEY = \"{{secret:s1}}\"\nHEX = \"{{secret:s1:enc}}\"\n".into(),
            ),
        );
        let t = b"import os\n{{slot:creds:1}}A = 1\n{{slot:creds:2}}B = 2\n";
        let (out, hits) = render(t, &v).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "import os\nA = 1\nKEY = \"abc\"\nHEX = \"616263\"\nB = 2\n"
        );
        assert_eq!(hits.iter().map(|h| h.line).collect::<Vec<_>>(), [3, 4]);
        v.placements.get_mut("creds").unwrap().0 = 1;
        let (out, hits) = render(t, &v).unwrap();
        assert!(out.starts_with(b"import os\nKEY = \"abc\"\n"));
        assert_eq!(hits[0].line, 2);
        for bad in [
            &b"x{{slot:creds:1}}"[..],
            b"{{slot:other:1}}",
            b"{{slot:creds:x}}",
        ] {
            assert!(render(bad, &v).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        v.placements
            .insert("nest".into(), (1, "{{slot:creds:1}}".into()));
        assert!(render(b"{{slot:nest:1}}", &v).is_err());
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
}
