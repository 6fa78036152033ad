//! Which words before a random token name *that* token: the text
//! [`super::context`] looks for a secret word in.
//!
//! Blind round 4 of issue 18 (generator-4, `masked-values-log`,
//! `http-headers-ids`) measured two ways the old reach — anything on the
//! token's line or the line above — names ids a secret:
//! - a secret word that names another value: `cache hit key=profile:…`
//!   on the line above a `span=… trace=<hex>` log line, `api_key=[REDACTED]
//!   region=… trace=<hex>` on the same line;
//! - a compound name whose head is not a secret: `X-Cache-Key`,
//!   `primaryKey`, `publicToken`, `api_key_id`, `passwordHint`.
//!
//! So the phrase that names a token ([`phrase`]) is:
//! - on its line, the nearest key before it (the identifier before the
//!   last `=` or `:` + space, as in `key=`, `"key": `, `key := `, `Header:
//!   `) and what stands between that operator and the token (`Bearer `);
//!   with no such key, the line's text before the token;
//! - the line above only when it ends in an assignment without its own
//!   value (`api_key:`, `secret: |`, `TOKEN = (`), or when the nearest
//!   key is a generic holder (`value:` under `- name: DB_PASSWORD`,
//!   `<add key="ClientSecret" value="…"/>`), which defers to its
//!   sibling's name on the same line or the line above.
//!
//! In that phrase, compound names whose head is not a secret are blanked
//! ([`blank_compounds`]): a secret noun followed by an attribute head
//! (`key id`, `token url`, `password hint`) or preceded by a modifier that
//! makes it an index, a lookup or public material (`cache key`, `sort`,
//! `partition`, `primary`, `foreign`, `object`, `idempotency` keys,
//! `public key`, `page token`). A session's or cookie's id stays a secret:
//! the id is the credential.

/// Bytes looked back from the token on its line, at most.
const LOOKBACK: usize = 256;

/// Keys that hold a value for a sibling name: the name is elsewhere on
/// the line or on the line above.
const GENERIC_KEYS: &[&str] = &[
    "value", "val", "data", "default", "content", "text", "string",
];

/// Secret nouns an attribute head can follow (`api_key_id`, `tokenUrl`).
const SECRET_NOUNS: &[&str] = &[
    "key",
    "keys",
    "token",
    "tokens",
    "secret",
    "secrets",
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "credential",
    "credentials",
];

/// Heads that name an attribute of a credential, not the credential.
const ATTRIBUTE_HEADS: &[&str] = &[
    "id", "ids", "name", "names", "type", "url", "uri", "path", "file", "count", "length", "len",
    "size", "limit", "prefix", "suffix", "version", "index", "hint", "label", "format", "expiry",
    "ttl",
];

/// Nouns a modifier can turn into a non-secret (`cache key`, `page token`).
const MODIFIED_NOUNS: &[&str] = &["key", "keys", "token", "tokens"];

/// Modifiers that make a key or token an index, a lookup or public
/// material.
const MODIFIERS: &[&str] = &[
    "cache",
    "sort",
    "partition",
    "primary",
    "foreign",
    "object",
    "idempotency",
    "public",
    "pub",
    "routing",
    "dedup",
    "dedupe",
    "lookup",
    "range",
    "row",
    "composite",
    "unique",
    "natural",
    "surrogate",
    "index",
    "page",
    "next",
    "continuation",
    "pagination",
    "sync",
    "i18n",
    "translation",
];

/// Shortest decoded token named by its encoding alone.
const MIN_ENCODED_TOKEN: usize = 20;

/// True when the random token at `start..end` is the whole of a decoded
/// base64 or hex run (`text`, surrounding whitespace aside): a credential
/// stored encoded (`_BOOTSTRAP = "WVo1aHJY…"  # decoded at startup`).
/// Encoding a random string as text is how a secret is hidden from a
/// reader, not how hashes, nonces and signatures are kept (those encode
/// bytes, which decode to binary and are not rescanned), so the encoding
/// names it where no key does.
pub(super) fn is_the_whole_decoding(text: &str, start: usize, end: usize) -> bool {
    end - start >= MIN_ENCODED_TOKEN && text.trim() == &text[start..end]
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'$' | b'@') || c >= 0x80
}

/// The text that names the token starting at `start` of `lower` (ASCII
/// lowercase), whose line starts at `line`, with non-secret compounds
/// blanked (see the module doc).
pub(super) fn phrase(lower: &str, line: usize, start: usize) -> String {
    let mut from = line.max(start.saturating_sub(LOOKBACK));
    while !lower.is_char_boundary(from) {
        from += 1;
    }
    let p = &lower[from..start];
    let above = line_above(lower, line);
    match nearest_key(p) {
        Some((k, op)) => {
            let key = p[k..op].trim_matches(|c: char| !c.is_ascii_alphanumeric());
            if GENERIC_KEYS.contains(&key) {
                return format!("{}\n{}", blank_compounds(p), blank_compounds(above));
            }
            let words = previous_words(&p[..k]);
            blank_compounds(&format!("{words} {}", &p[k..]))
        }
        None if ends_without_value(above) || names_next_argument(lower, line, p) => {
            format!("{}\n{}", blank_compounds(p), blank_compounds(above))
        }
        None => blank_compounds(p),
    }
}

/// Where the nearest key before the end of `p` starts (0 when there is
/// none): the part of a line's text before a token that may name it.
pub(super) fn nearest_key_start(p: &str) -> usize {
    nearest_key(p).map_or(0, |(k, _)| k)
}

/// The line above the line starting at `line` (empty for the first).
fn line_above(lower: &str, line: usize) -> &str {
    if line == 0 {
        return "";
    }
    let s = lower[..line - 1].rfind('\n').map_or(0, |p| p + 1);
    &lower[s..line - 1]
}

/// The nearest key before the end of `p`: `(start of the key, offset of
/// its operator)`. An operator is `=` (with `:= ?= .= += == != =>`
/// around it) or a `:` followed by a space, a tab or a quote; a `:`
/// inside a value (`audit:v2:`, `https://`) is not one.
fn nearest_key(p: &str) -> Option<(usize, usize)> {
    let b = p.as_bytes();
    let mut i = b.len();
    while i > 0 {
        i -= 1;
        let op = b[i] == b'='
            || (b[i] == b':'
                && b.get(i + 1)
                    .is_some_and(|c| matches!(c, b' ' | b'\t' | b'"' | b'\'')));
        if !op {
            continue;
        }
        let mut j = i;
        while j > 0
            && matches!(
                b[j - 1],
                b'=' | b'!' | b'<' | b'>' | b':' | b'?' | b'.' | b'+'
            )
        {
            j -= 1;
        }
        while j > 0 && matches!(b[j - 1], b' ' | b'\t' | b'"' | b'\'' | b'`' | b']' | b')') {
            j -= 1;
        }
        let mut k = j;
        while k > 0 && is_ident(b[k - 1]) {
            k -= 1;
        }
        if k < j && b[k..j].iter().any(u8::is_ascii_alphanumeric) {
            return Some((k, i));
        }
        return None;
    }
    None
}

/// Up to two words right before a key, each separated by one space and
/// made of letters (`cache hit` before `key=`), for the modifier test.
fn previous_words(p: &str) -> &str {
    let mut s = p.len();
    for _ in 0..2 {
        let Some(rest) = p[..s].strip_suffix(' ') else {
            break;
        };
        let w = rest.len()
            - rest
                .bytes()
                .rev()
                .take_while(u8::is_ascii_alphabetic)
                .count();
        if w == rest.len() {
            break;
        }
        s = w;
    }
    &p[s..]
}

/// True when `line` ends in an assignment without its own value:
/// `api_key:`, `"token": `, `secret: |`, `PASSWORD = (`, `KEY=\`, or
/// in an opening XML tag (`<apiToken>`).
fn ends_without_value(line: &str) -> bool {
    let t = line.trim_end();
    // An XML element whose text starts on the next line: `<twitterToken>`.
    if let Some(open) = t.strip_suffix('>')
        && let Some(lt) = open.rfind('<')
    {
        let tag = &open[lt + 1..];
        if tag.starts_with(|c: char| c.is_ascii_alphabetic()) && !tag.ends_with('/') {
            return true;
        }
    }
    let t = [
        "|-", "|+", ">-", ">+", "|", ">", "(", "[", "{", "\\", "\"\"\"", "'''",
    ]
    .iter()
    .find_map(|o| t.strip_suffix(o))
    .map_or(t, str::trim_end);
    t.ends_with(':') || t.ends_with('=')
}

/// True when the token's line holds nothing before it but the opening
/// quote of a literal (`p`), and the line above is a call's previous
/// argument, a quoted name right after the call's `(` or alone on the
/// line after it, with its comma: a name-value call laid out one argument
/// per line, as formatters write long calls (issue 18, generator-14
/// `spark-hadoop-storage-keys`):
///
/// ```text
/// spark.conf.set(
///     f"fs.azure.account.key.{ACCOUNT}.dfs.core.windows.net",
///     "<key>",
/// )
/// ```
///
/// The name names the value as it would on one line.
fn names_next_argument(lower: &str, line: usize, p: &str) -> bool {
    let above = line_above(lower, line);
    let quote = |c: char| matches!(c, '"' | '\'' | '`');
    let opening = p.trim_start();
    let opening = opening
        .strip_prefix(['f', 'r', 'b', 'u'])
        .filter(|o| o.starts_with(quote))
        .unwrap_or(opening);
    if !(opening.len() == 1 && opening.starts_with(quote)) {
        return false;
    }
    let Some(arg) = above.trim_end().strip_suffix(',') else {
        return false;
    };
    let arg = arg.trim_end();
    let Some(q) = arg.chars().last().filter(|&c| quote(c)) else {
        return false;
    };
    let body = &arg[..arg.len() - 1];
    let Some(open) = body.rfind(q) else {
        return false;
    };
    let name = &body[open + 1..];
    let before = body[..open]
        .strip_suffix(['f', 'r', 'b', 'u'])
        .unwrap_or(&body[..open])
        .trim_end();
    // The call opens on the name's line or alone at the end of the one
    // above it; a list's items (`[`) are no name and value.
    let opens = || {
        let at = line - above.len() - 1;
        line_above(lower, at).trim_end().ends_with('(')
    };
    !name.is_empty()
        && !name.contains(char::is_whitespace)
        && (before.ends_with('(') || (before.is_empty() && opens()))
}

/// `text` with compound names whose head is not a secret replaced by
/// spaces (see the module doc).
pub(super) fn blank_compounds(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let b = text.as_bytes();
    let mut i = 0;
    let mut prev: [&str; 2] = ["", ""];
    while i < b.len() {
        if !is_ident(b[i]) || b[i] >= 0x80 {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && is_ident(b[i]) && b[i] < 0x80 {
            i += 1;
        }
        let w = &text[s..i];
        if let Some((a, z)) = non_secret_compound(w, prev) {
            out[s + a..s + z].fill(b' ');
        }
        let sep = b.get(i) == Some(&b' ');
        prev = if sep { [prev[1], w] } else { ["", ""] };
        if sep && b.get(i + 1) == Some(&b' ') {
            prev = ["", ""];
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The span within the identifier `w` that is a non-secret compound, if
/// any; `prev` holds the (up to two) words before it on the line.
fn non_secret_compound(w: &str, prev: [&str; 2]) -> Option<(usize, usize)> {
    let sep = |c: u8| matches!(c, b'_' | b'-' | b'.');
    // A secret noun then an attribute head: `api_key_id`, `tokenurl`.
    for h in ATTRIBUTE_HEADS {
        let Some(p) = w.strip_suffix(h) else { continue };
        let p = p.trim_end_matches(|c: char| sep(c as u8));
        if SECRET_NOUNS.iter().any(|n| p.ends_with(n)) {
            return Some((0, w.len()));
        }
    }
    // A modifier then a key or token: `x-cache-key`, `primarykey`.
    let wb = w.as_bytes();
    for n in MODIFIED_NOUNS {
        for (at, _) in w.match_indices(n) {
            let end = at + n.len();
            if end < w.len() && !sep(wb[end]) {
                continue;
            }
            let head = w[..at].trim_end_matches(|c: char| sep(c as u8));
            if let Some(m) = MODIFIERS.iter().find(|m| head.ends_with(*m)) {
                return Some((head.len() - m.len(), end));
            }
            // A bare key or token after a modifier word: `cache hit key`.
            if at == 0 && end == w.len() && prev.iter().any(|p| MODIFIERS.contains(p)) {
                return Some((0, end));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{blank_compounds, phrase};

    /// The phrase naming the token `T` in `text`.
    fn named_by(text: &str) -> String {
        let lower = text.to_ascii_lowercase();
        let start = lower.find("tok3n").unwrap();
        let line = lower[..start].rfind('\n').map_or(0, |p| p + 1);
        phrase(&lower, line, start)
    }

    #[test]
    fn the_nearest_key_names_the_token() {
        for (text, has, lacks) in [
            (
                "api_key=[redacted] region=eu-west-1 trace=TOK3N",
                "trace",
                "api_key",
            ),
            ("Authorization: Bearer TOK3N", "bearer", ""),
            ("curl -H 'Authorization: Bearer TOK3N'", "authorization", ""),
            (
                "headers = {\"X-Api-Token\": \"TOK3N\"}",
                "x-api-token",
                "headers",
            ),
            ("X-Cache-Key: audit:v2:TOK3N", "x-", "key"),
            ("TOKEN := TOK3N", "token", ""),
            ("$apiToken .= \"TOK3N\"", "apitoken", ""),
            ("https://x.io/v1?a=b&access_token=TOK3N", "access_token", ""),
            ("docker login -p TOK3N", "docker login", ""),
        ] {
            let p = named_by(text);
            assert!(p.contains(has), "{text:?}: {p:?} lacks {has:?}");
            assert!(
                lacks.is_empty() || !p.contains(lacks),
                "{text:?}: {p:?} has {lacks:?}"
            );
        }
    }

    #[test]
    fn the_line_above_names_only_an_open_assignment() {
        for (text, has, lacks) in [
            (
                "cache hit key=profile:96b1\nspan=1 trace=TOK3N ok",
                "trace",
                "key",
            ),
            ("# the api token\nTOK3N", "", "token"),
            ("api_key:\n  TOK3N", "api_key", ""),
            ("secret: |\n  TOK3N", "secret", ""),
            ("API_TOKEN = (\n    \"TOK3N\"", "api_token", ""),
            ("<twitterToken>\n    TOK3N", "twittertoken", ""),
            ("<b>token</b>\nTOK3N", "", "token"),
            ("- name: DB_PASSWORD\n  value: TOK3N", "db_password", ""),
            (
                "<add key=\"ClientSecret\" value=\"TOK3N\"/>",
                "clientsecret",
                "",
            ),
        ] {
            let p = named_by(text);
            assert!(
                has.is_empty() || p.contains(has),
                "{text:?}: {p:?} lacks {has:?}"
            );
            assert!(
                lacks.is_empty() || !p.contains(lacks),
                "{text:?}: {p:?} has {lacks:?}"
            );
        }
    }

    /// A call laid out one argument per line: the name argument on the
    /// line above names the value; a list of values, or a name that is
    /// not the previous argument alone, does not.
    #[test]
    fn the_previous_argument_names_the_next() {
        for (text, has) in [
            (
                "conf.set(\n    \"fs.s3a.access.key\",\n    \"TOK3N\",\n)",
                "fs.s3a.access.key",
            ),
            (
                "hadoop.set(f\"fs.azure.sas.{c}.token\",\n         \"TOK3N\")",
                "token",
            ),
        ] {
            let p = named_by(text);
            assert!(p.contains(has), "{text:?}: {p:?} lacks {has:?}");
        }
        for text in [
            // List items, a call's other argument after a value, prose.
            "HASHES = [\n    \"token-rotation\",\n    \"TOK3N\",\n]",
            "log(\"rotate\", secret_word,\n    \"TOK3N\")",
            "# the api token,\n\"TOK3N\"",
        ] {
            let p = named_by(text);
            assert!(
                !p.contains("token") && !p.contains("secret"),
                "{text:?}: {p:?}"
            );
        }
    }

    /// A random token stored encoded is named by its encoding; encoded
    /// text that is not one token is not.
    #[test]
    fn an_encoded_token_is_named_by_its_encoding() {
        use crate::scanner::{ScanConfig, Scanner};
        let s = Scanner::new(ScanConfig::default());
        let scan = |text: &str| s.scan_bytes("app/settings.py", text.as_bytes());
        // base64("Zq8v2Lm4Kp7RtX9wB3nQ5sD1fG6hJ0kL")
        let f = scan("_BOOTSTRAP = \"WnE4djJMbTRLcDdSdFg5d0IzblE1c0QxZkc2aEowa0w=\"\n");
        assert!(
            f.iter()
                .any(|f| f.encoded && f.value == "Zq8v2Lm4Kp7RtX9wB3nQ5sD1fG6hJ0kL"),
            "{f:?}"
        );
        for text in [
            // A sentence, a Relay cursor, bytes (a SHA-256 digest).
            "BANNER = \"VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==\"\n",
            "CURSOR = \"YXJyYXljb25uZWN0aW9uOjEw\"\n",
            "DIGEST = \"n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=\"\n",
        ] {
            assert!(scan(text).is_empty(), "{text:?}: {:?}", scan(text));
        }
    }

    /// The same compounds under the credential-assignment rule's keys.
    #[test]
    fn compound_keys_of_assignments() {
        let scan = |text: &str| crate::scanner::rules::testutil::rules("config/app.json", text);
        for text in [
            "{\"next_page_token\": \"CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3ZmtmO\"}",
            "continuationToken = \"Zq8v2Lm4Kp7RtX9wB3nQ\"",
            "SYNC_TOKEN=Zq8v2Lm4Kp7RtX9wB3nQ",
        ] {
            assert!(scan(text).is_empty(), "{text}: {:?}", scan(text));
        }
        for text in [
            "access_token: \"Zq8v2Lm4Kp7RtX9wB3nQ\"",
            "pageTokenSecret = \"Zq8v2Lm4Kp7RtX9wB3nQ\"",
        ] {
            assert_eq!(
                scan(text),
                ["credential-assignment=Zq8v2Lm4Kp7RtX9wB3nQ"],
                "{text}"
            );
        }
    }

    #[test]
    fn compounds_whose_head_is_not_a_secret() {
        for w in [
            "x-cache-key",
            "primarykey",
            "foreign_key",
            "publickey",
            "pubkey",
            "idempotency-key",
            "nextpagetoken",
            "api_key_id",
            "keyid",
            "tokenurl",
            "passwordhint",
            "cache hit key",
            "next page token",
        ] {
            let b = blank_compounds(w);
            assert!(
                ["key", "token", "pass"].iter().all(|s| !b.contains(s)),
                "{w}: {b:?}"
            );
        }
        for w in [
            "api_key",
            "secret_key_base",
            "session_id",
            "access_token",
            "private_key",
            "keyboard",
            "password",
            "apikey",
            // ECPay's `HashKey` is a merchant secret: `hash` is no modifier.
            "hashkey",
        ] {
            assert_eq!(blank_compounds(w), w, "{w}");
        }
    }
}
