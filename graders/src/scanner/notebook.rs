//! Code in a Jupyter notebook's cells (issue 18, generator-7
//! `notebook-source-key`). A `.ipynb` file is JSON: each cell's `source`
//! is an array of strings, so the code's quotes and newlines are escaped
//! (`"DB_PASSWORD = \"k7#Rq2…\"\n"`). The credential-assignment rule read
//! the backslash before the value's quote as part of the value and let a
//! typed password go. A notebook is scanned through a view with JSON's
//! escapes blanked ([`unescape`]): `\"` becomes ` "`, `\n`, `\t` and `\r`
//! two spaces. Every byte keeps its offset, so findings point into the
//! file as it is.

/// True for a Jupyter notebook by its name.
pub(crate) fn is_notebook(path: &str) -> bool {
    // Without lowercasing a copy of the path: this runs for every text.
    let b = path.as_bytes();
    b.len() >= 6 && b[b.len() - 6..].eq_ignore_ascii_case(b".ipynb")
}

/// `text` with JSON string escapes blanked, byte for byte: an opening
/// `\"` → ` "`, a closing one → `" `, `\n` `\t` `\r` → two spaces; `\\`
/// and other escapes are kept.
pub(crate) fn unescape(text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            match b[i + 1] {
                // An opening quote keeps its place before the value; a
                // closing one moves next to it (`\"k7\"` → ` "k7" `).
                b'"' => {
                    let opening = b.get(i + 2).is_some_and(|c| {
                        c.is_ascii_alphanumeric()
                            || !c.is_ascii()
                            || b"$%{<(#!@*&+-_./:".contains(c)
                    }) && !b[..i].last().is_some_and(u8::is_ascii_alphanumeric);
                    if !opening {
                        b[i] = b'"';
                        b[i + 1] = b' ';
                    } else {
                        b[i] = b' ';
                    }
                }
                b'n' | b't' | b'r' => {
                    b[i] = b' ';
                    b[i + 1] = b' ';
                }
                _ => {}
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII: still UTF-8.
    String::from_utf8(b).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::{is_notebook, unescape};

    #[test]
    fn escapes_are_blanked_in_place() {
        let s = r#"    "DB_PASSWORD = \"k7#Rq2\"\n","#;
        let u = unescape(s);
        assert_eq!(u.len(), s.len());
        assert_eq!(u, r#"    "DB_PASSWORD =  "k7#Rq2"   ","#);
        assert_eq!(unescape(r#"a\\"b"#), r#"a\\"b"#);
        assert_eq!(unescape("é \\\"x"), "é  \"x");
        assert!(is_notebook("notebooks/Nightly.IPYNB"));
        assert!(!is_notebook("notebooks/nightly.py"));
        assert!(is_notebook(".ipynb") && !is_notebook("ipynb") && !is_notebook(""));
    }
}
