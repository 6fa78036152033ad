//! The random-token rule (seed 000, "What is redacted"): a token of 20+
//! characters from `[A-Za-z0-9+/._\-@=]` is split on `/ . _ - @ =` and each
//! part of 16+ characters is judged against an entropy floor *for its
//! alphabet* — hex carries at most 4 bits a character, so one floor for all
//! alphabets would miss most hex keys.
//!
//! Skipped: `sha512-`/`sha256-` integrity strings, camelCase/snake identifiers
//! (few character-class transitions, or letters-only words), the scanned
//! file's own path, and 40/64-hex values only where the preceding 256 bytes
//! of the line mark a git SHA or checksum (or the file is a lockfile /
//! go.sum). Anywhere else such a value is treated as a key. Hex of any
//! length is also a hash when a checksum/bundler word ([`HASH_WORDS`]) is
//! within 256 bytes on its line, before *or after* it; values of `*_id`
//! keys and of Firebase app ids are public identifiers; base64 tokens that
//! open with a binary file signature are embedded files. Issue 18's third
//! generator added: values of keys named public (`public_key`,
//! `NEXT_PUBLIC_*`) or after a cipher/hash parameter (`iv`, `nonce`,
//! `salt`, `txHash`, `etag`), public JWK members in a JWK set, ARN tails,
//! hashed `known_hosts` salts, CSP nonces, asset content hashes
//! (`main.<hex>.js`), AWS resource ids (`sg-` + 17 hex), submodule-status
//! lines, hex or base64 that decodes to text (the decoder judges the text),
//! base64 DER of a public key or certificate, and hex in test files that
//! say they hold published test vectors. Round 5 added: hex whose bytes
//! count by a constant step, inline WebAssembly and the wrapped lines of a
//! base64 file whose first line opens with a file signature, certificate
//! pins (`sha256/…`, standard base64 of a digest's length on a line naming
//! a digest), `enode://` public keys, base58 multihashes (IPFS CIDv0,
//! libp2p peer ids), weak ETags (`W/"…"`), a leading `+` operator, 40-hex
//! under a GnuPG key listing or a git command's line, SQL `INSERT` values
//! whose column names a hash, and keys naming a point in history
//! (`baseline`, `before`, `after`). Each skip has a
//! false-positive row, and a true-positive row showing where it stops, in
//! the tests below. Over-redaction is accepted; under-redaction is not.

use std::sync::LazyLock;

/// Minimum token length.
const MIN_TOKEN: usize = 20;
/// Minimum part length judged.
const MIN_PART: usize = 16;
/// Segments longer than this are data blobs (images, archives), left to the
/// decoder rather than reported whole.
const MAX_SEGMENT: usize = 1024;
/// Look-back for SHA/checksum context, in bytes.
const LOOKBACK: usize = 256;

/// Words that mark a nearby 40/64-hex value as a hash, not a key.
const SHA_CONTEXT: &[&str] = &[
    "index",
    "commit",
    "@",
    "#",
    "revision",
    "rev",
    "checksum",
    "resolved",
    "sha",
    "hash",
    "digest",
    "integrity",
    "checkout",
    "reset",
    "cherry-pick",
    "revert",
    "sum",
    "object",
    "tree",
    "parent",
    "blob",
    "merge",
    "head",
    "tag",
    "reference",
    "fingerprint",
    "pgp",
    "gpg",
    "release",
    "version",
    // Round 5: keys naming a point in a repository's history (vcpkg's
    // `builtin-baseline`, push events' `before`/`after`).
    "baseline",
    "before",
    "after",
];

/// Words that mark a hex value of *any* length as a content hash when they
/// occur on its line, before or after it: checksum tools print
/// `<hex>  file` and are piped to `sha256sum -c` after the value, and
/// bundlers write `{964:"4dc5e000fdf347a3d080"}[e]+".chunk.js"` chunk maps.
/// Narrower than [`SHA_CONTEXT`] (no `@`, `#`, `head`…) because it also
/// looks ahead and applies to every hex length.
const HASH_WORDS: &[&str] = &[
    "checksum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "shasum",
    "md5sum",
    "b2sum",
    "digest",
    "integrity",
    "contenthash",
    "chunk",
    "etag",
    "if-none-match",
    "if-match",
];

/// Base64 openings of binary file signatures (PNG, JPEG, GIF, WebP/RIFF,
/// PDF, zip, gzip, ICO, WOFF/WOFF2, TrueType). A token that opens with one
/// is an embedded file (`data:image/png;base64,…`, notebook outputs), not
/// a key; the decoder still sees it, and drops it for not being text.
const FILE_MAGIC_B64: &[&str] = &[
    "iVBORw0KGgo",
    "/9j/",
    "R0lGODlh",
    "R0lGODdh",
    "UklGR",
    "JVBERi0",
    "UEsDB",
    "H4sI",
    "AAABAA",
    "d09GRg",
    "d09GMg",
    "AAEAAAA",
    // WebAssembly (`\0asm`), inlined by bundlers as base64.
    "AGFzbQ",
];
/// Shortest token judged as an embedded file: the smallest PNG is 67 bytes
/// (92 base64 chars), so a short token with a magic-like opening is still
/// judged as a key.
const MIN_FILE_B64: usize = 64;

/// Name fragments that make a `*_id` key a credential after all (Vault's
/// `secret_id`, session ids, auth ids).
const SECRET_ID_WORDS: &[&str] = &["secret", "token", "passw", "pwd", "session", "auth"];

/// The key name a value is assigned to, if the line prefix ends like
/// `"name": "`, `name = '`, `name: ` or `name=`.
pub(crate) fn key_name(prefix: &str) -> &str {
    if let Some(name) = xml_element_name(prefix) {
        return name;
    }
    let p = prefix.trim_end_matches(['"', '\'', '`', ' ', '\t']);
    let p = p.trim_end_matches([':', '=']);
    let p = p.trim_end_matches(['"', '\'', '`', ' ', '\t']);
    let start = p
        .bytes()
        .rposition(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')))
        .map_or(0, |i| i + 1);
    &p[start..]
}

/// The local name of the XML element whose text starts right after
/// `prefix` (`<ds:SignatureValue>` → `SignatureValue`): an element's name
/// is its value's key, as a JSON member's is.
fn xml_element_name(prefix: &str) -> Option<&str> {
    let p = prefix.strip_suffix('>')?;
    if p.ends_with('/') {
        return None;
    }
    let open = p.rfind('<')?;
    let tag = &p[open + 1..];
    let name = tag.split([' ', '\t']).next()?;
    let local = name.rsplit(':').next()?;
    let ok = !local.is_empty()
        && local
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && local
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'));
    ok.then_some(local)
}

/// The name of the header a line belongs to, for header-shaped lines
/// (`Stripe-Signature: t=…`, `X-Amz-Cf-Id: …`) and the folded lines that
/// continue a hyphenated one (`DKIM-Signature:` then tab-indented `b=…`).
/// `line_start` is the offset of the token's line in `text`.
fn header_of_line(text: &str, line_start: usize) -> Option<&str> {
    let name_of = header_name;
    let line = &text[line_start..];
    if !line.starts_with([' ', '\t']) {
        return name_of(line);
    }
    // A folded header: walk back over continuation lines to its first line.
    let mut end = line_start;
    for _ in 0..MAX_FOLDED_LINES {
        if end == 0 {
            break;
        }
        let start = text[..end - 1].rfind('\n').map_or(0, |i| i + 1);
        let prev = &text[start..end - 1];
        if !prev.starts_with([' ', '\t']) {
            return name_of(prev).filter(|n| n.contains('-'));
        }
        end = start;
    }
    None
}

/// Continuation lines walked back to find a folded header's first line
/// (a DKIM signature folds into a handful): bounds the walk on deeply
/// indented files, where every line would otherwise walk to the top.
const MAX_FOLDED_LINES: usize = 16;

/// Longest header name read (`ARC-Message-Signature` is 21).
const MAX_HEADER_NAME: usize = 64;

/// `Name` of a line that opens `Name: ` (letters, digits, `-`).
fn header_name(line: &str) -> Option<&str> {
    let head = &line.as_bytes()[..line.len().min(MAX_HEADER_NAME + 1)];
    let colon = head.iter().position(|&c| c == b':')?;
    let name = &line[..colon];
    let ok = name.len() >= 2
        && name.bytes().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
        && line[colon + 1..].starts_with([' ', '\t']);
    ok.then_some(name)
}

/// Longest line prefix read to find a CSV field's column, and longest
/// header row read: past them a field is judged without its column name.
const MAX_CSV_SCAN: usize = 4096;

/// The header row of a `.csv`/`.tsv` file: a column's name is its values'
/// key, as a JSON member's name is.
struct CsvHeader<'a> {
    sep: char,
    names: Vec<&'a str>,
}

impl<'a> CsvHeader<'a> {
    fn of(path: &str, text: &'a str) -> Option<Self> {
        let lp = path.to_ascii_lowercase();
        let sep = if lp.ends_with(".csv") {
            ','
        } else if lp.ends_with(".tsv") {
            '\t'
        } else {
            return None;
        };
        let header = text.lines().next()?;
        if header.len() > MAX_CSV_SCAN {
            return None;
        }
        let names = header
            .split(sep)
            .map(|h| h.trim().trim_matches('"'))
            .collect();
        Some(Self { sep, names })
    }

    /// The column name of a field whose line so far is `before` (fields
    /// split naively: a quoted separator shifts the column, which can only
    /// name another column of the header row, never one it lacks). The
    /// caller skips the header row itself.
    fn column(&self, before: &str) -> Option<&'a str> {
        if before.len() > MAX_CSV_SCAN {
            return None;
        }
        self.names.get(before.matches(self.sep).count()).copied()
    }
}

/// A value computed once per line start.
#[derive(Default)]
struct LineMemo {
    line: Option<(usize, bool)>,
}

impl LineMemo {
    fn get_or_insert_with(&mut self, line_start: usize, f: impl FnOnce() -> bool) -> &bool {
        if self.line.is_none_or(|(l, _)| l != line_start) {
            self.line = Some((line_start, f()));
        }
        &self.line.as_ref().expect("just set").1
    }
}

/// True for a CSV column whose name says its values are not secrets
/// (Liquibase's `MD5SUM`, an `ID` or `*_id` column, `checksum`).
fn column_is_non_secret(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    names_non_secret(name, false) || is_id_key(name) || HASH_WORDS.contains(&l.as_str())
}

/// Lines walked back from a bare list element to its list's key.
const MAX_LIST_LINES: usize = 64;

/// The key of the list a bare element belongs to: the token at `ts` is
/// alone on its line but for indentation, a quote or a YAML `- `, and the
/// lines above it are such elements up to one ending in `[` (JSON) or `:`
/// (YAML): `"hashes": [` then one digest per line. An element's key is its
/// list's, as a member's is its name.
fn list_key(text: &str, line_start: usize, ts: usize) -> Option<&str> {
    let bare = |before: &str| {
        let t = before.trim_start();
        matches!(t, "" | "\"" | "'" | "- " | "- \"" | "- '")
    };
    if !bare(&text[line_start..ts]) {
        return None;
    }
    let mut end = line_start;
    for _ in 0..MAX_LIST_LINES {
        if end == 0 {
            return None;
        }
        // Only the last bytes are searched: a longer line is no element.
        let mut lo = (end - 1).saturating_sub(LOOKBACK * 4);
        while !text.is_char_boundary(lo) {
            lo += 1;
        }
        let start = match text[lo..end - 1].rfind('\n') {
            Some(i) => lo + i + 1,
            None if lo == 0 => 0,
            None => return None,
        };
        let line = text[start..end - 1].trim_end();
        if let Some(head) = line.strip_suffix('[').or_else(|| line.strip_suffix(':')) {
            return Some(key_name(head.trim_end().trim_end_matches(':')));
        }
        let t = line.trim_start();
        let element = t.starts_with('"') || t.starts_with('\'') || t.starts_with("- ");
        if !element {
            return None;
        }
        end = start;
    }
    None
}

/// True for an OpenAPI/Swagger document (a top-level `openapi:` or
/// `swagger:` member, YAML or JSON).
fn is_api_description(lower: &str) -> bool {
    ["openapi", "swagger"].iter().any(|k| {
        lower.starts_with(&format!("{k}:"))
            || lower.contains(&format!("\n{k}:"))
            || lower.contains(&format!("\"{k}\":"))
    })
}

/// `example`, `examples`, `x-example`: illustrative values of an API
/// description's schemas and parameters, documentation of a public
/// interface rather than configuration.
fn is_example_key(key: &str) -> bool {
    matches!(
        key.to_ascii_lowercase().as_str(),
        "example" | "examples" | "x-example" | "x-examples"
    )
}

/// True for a header whose values are outputs of a key or ids, never the
/// key: message signatures and digests (`Signature`, `Content-Digest`,
/// `X-Hub-Signature-256`, `DKIM-Signature`, `ARC-Seal`) and request/trace
/// ids (`X-Request-Id`, `X-Amz-Cf-Id`, `x-amz-id-2`, `cf-ray`).
fn header_is_non_secret(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    if CREDENTIAL_KEY_WORDS.iter().any(|w| l.contains(w)) || l.contains("cookie") {
        return false;
    }
    l.contains("signature")
        || l.contains("digest")
        || l.ends_with("-seal")
        || l.split('-')
            .any(|w| w == "id" || w == "ray" || w == "trace")
        || is_id_key(name)
}

/// [`key_name`] of a value that may be a URL: for `KEY=https://…` the
/// token starts at `//` after the scheme, and the key is the name before
/// `scheme:`, not the scheme.
fn value_key<'a>(prefix: &'a str, value: &str) -> &'a str {
    let k = key_name(prefix);
    match prefix.strip_suffix(':') {
        Some(p) if value.starts_with("//") && !k.is_empty() && p.ends_with(k) => {
            key_name(&p[..p.len() - k.len()])
        }
        _ => k,
    }
}

/// True for identifier names ending in an `id` word (`private_key_id`,
/// `keyId`, `client-id`) that do not name a secret: values of such keys,
/// hex or not, are public identifiers (an OAuth client id is public, RFC
/// 6749 §2.2; the random-token rule skips them since issue 18's third
/// generator, at no recall cost on the external sources); a service
/// account's `private_key_id` names the key, it does not contain it.
fn is_id_key(name: &str) -> bool {
    let lname = name.to_ascii_lowercase();
    let id_word = lname == "id"
        || lname.ends_with("_id")
        || lname.ends_with("-id")
        || lname.ends_with(".id")
        || (name.ends_with("Id") && name.len() > 2)
        || (name.ends_with("ID")
            && name.len() > 2
            && name.as_bytes()[name.len() - 3].is_ascii_lowercase());
    id_word && !SECRET_ID_WORDS.iter().any(|w| lname.contains(w))
}

/// True when `prefix` ends with a Firebase/Google app id head,
/// `<digits>:<project number>:<web|android|ios>:`: the hex that follows
/// completes a public app id that Firebase client configs embed.
fn is_app_id_head(prefix: &str) -> bool {
    let Some(p) = ["web:", "android:", "ios:"]
        .iter()
        .find_map(|pl| prefix.strip_suffix(pl))
    else {
        return false;
    };
    let Some(p) = p.strip_suffix(':') else {
        return false;
    };
    let num = p.bytes().rev().take_while(u8::is_ascii_digit).count();
    if num < 6 {
        return false;
    }
    let p = &p[..p.len() - num];
    let Some(p) = p.strip_suffix(':') else {
        return false;
    };
    p.bytes().next_back().is_some_and(|c| c.is_ascii_digit())
}

/// Words that, right before a hex value, make it a revision: `fixes
/// abc123`, `reverts 1f2e…`, `cherry-picked from …`, `landed in …`.
const VCS_WORDS: &[&str] = &[
    "fix",
    "fixes",
    "fixed",
    "fixup",
    "close",
    "closes",
    "closed",
    "resolve",
    "resolves",
    "resolved",
    "revert",
    "reverts",
    "reverted",
    "refs",
    "commit",
    "commits",
    "sha",
    "sha1",
    "rev",
    "revision",
    "merge",
    "merged",
    "picked",
    "squash",
    "squashed",
    "amend",
    "amends",
    "backport",
    "backported",
    "landed",
    "introduced",
    "hotfix",
    "changeset",
    "upstream",
    "parent",
    "ref",
    "pick",
    "pin",
    "pinned",
    "bisect",
    "blame",
];

/// URL path segments before a revision (`/commit/<sha>`, GitLab `/-/commit/`).
const VCS_URL: &[&str] = &[
    "/commit/",
    "/commits/",
    "/tree/",
    "/blob/",
    "/compare/",
    "/changeset/",
    "/rev/",
    "/revision/",
    "/raw/",
    "/src/",
    "/zipball/",
    "/tarball/",
    "/archive/",
    "...",
    "..",
];

/// Key-name fragments that keep a hex value a credential whatever the
/// context (`- Fix: api_key = 9f2c…` is still a key).
const CREDENTIAL_KEY_WORDS: &[&str] = &[
    "secret",
    "token",
    "key",
    "passw",
    "pwd",
    "auth",
    "credential",
    "api",
    "private",
];

/// Changelog-like files, whose bullets cite commits.
fn is_changelog(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    [
        "changelog",
        "changes",
        "history",
        "news",
        "release",
        "whatsnew",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// True when a hex token sits where revisions are cited: in parentheses
/// or brackets (`(dc3380ec…)`, `[1f2e3d4]`), after a VCS word (`fixes
/// abc1234…`), in a commit/compare URL, or on a changelog bullet. Not when
/// it is the value of a credential-named key. `prefix` is the line before
/// the token (whole when `whole_line`), `after` the rest of its line.
fn is_vcs_id(prefix: &str, after: &str, path: &str, whole_line: bool) -> bool {
    let key = key_name(prefix).to_ascii_lowercase();
    if CREDENTIAL_KEY_WORDS.iter().any(|w| key.contains(w)) {
        return false;
    }
    let lp = prefix.to_ascii_lowercase();
    let before = lp.bytes().next_back();
    let next = after.bytes().next();
    if matches!(before, Some(b'(' | b'[')) && matches!(next, Some(b')' | b']' | b',' | b';')) {
        return true;
    }
    if VCS_URL.iter().any(|u| lp.ends_with(u)) {
        return true;
    }
    let word: String = lp
        .trim_end_matches([' ', '\t', ':', '#', '@', '`', '\'', '"'])
        .bytes()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'-')
        .map(char::from)
        .collect::<String>()
        .chars()
        .rev()
        .collect();
    let word = word.rsplit('-').next().unwrap_or("");
    if VCS_WORDS.contains(&word) {
        return true;
    }
    if whole_line && is_changelog(path) {
        let t = prefix.trim_start();
        return t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ");
    }
    false
}

/// Lockfiles and generated project files whose hex values are checksums
/// or object ids (Xcode's `project.pbxproj` names every object by 24 hex).
fn is_lockfile(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name == "go.sum"
        || name.ends_with(".lock")
        || name.ends_with("-lock.json")
        || name.ends_with("-lock.yaml")
        || name.ends_with(".sum")
        || name.ends_with(".lock.hcl")
        || name == "packed-refs"
        || name == ".git-blame-ignore-revs"
        || name == "project.pbxproj"
}

/// Bytes of a token, as a table (see [`super::decode::next_long_run`]):
/// one load beats the chain of range checks.
static TOKEN_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric()
            || matches!(c, b'+' | b'/' | b'.' | b'_' | b'-' | b'@' | b'=');
        i += 1;
    }
    t
};

/// Whole-text facts [`find`] judges tokens by.
struct TextFacts<'a> {
    /// A JWK set: its public members (`n`, `e`, `x`, `kid`, …) are public.
    jwks: bool,
    vectors: bool,
    csv: Option<CsvHeader<'a>>,
    api_doc: bool,
    sql: bool,
}

impl<'a> TextFacts<'a> {
    fn of(path: &str, text: &'a str, lower: &str) -> Self {
        TextFacts {
            jwks: lower.contains("\"kty\""),
            vectors: is_test_vector_file(path, lower),
            csv: CsvHeader::of(path, text),
            api_doc: is_api_description(lower),
            sql: lower.contains("insert into"),
        }
    }
}

/// Pushes byte spans of random-looking segments; tokens starting in the
/// public-key spans of `text` (`skip`, filled on first need by
/// [`super::public::spans_of`]) are never reported.
pub(crate) fn find(
    text: &str,
    lower: &str,
    path: &str,
    skip: &std::cell::OnceCell<Vec<(usize, usize)>>,
    out: &mut Vec<(usize, usize)>,
) {
    let b = text.as_bytes();
    let n = b.len();
    let lockfile = is_lockfile(path);
    // Lockfiles and go.sum are checksums and integrity hashes throughout.
    if lockfile {
        return;
    }
    // What tokens are judged by from the whole text, read on the first
    // token long enough to judge: most texts (an added-line segment of
    // code) have none, and these are six searches of the whole text.
    let mut facts: Option<TextFacts<'_>> = None;
    // Whether the current line is a non-secret header, computed once per
    // line: a megabyte-long line of tokens must not re-read it per token.
    let mut header_skip = LineMemo::default();
    // Start of the current line and end of the line of the last token:
    // tracked as the scan moves forward, so a megabyte-long line costs one
    // pass, not a search per token.
    let (mut line_start, mut line_end) = (0usize, 0usize);
    // The last line of a wrapped base64 file seen so far: its start and
    // width (see [`FILE_MAGIC_B64`]).
    let mut file_block: Option<(usize, usize)> = None;
    let previous_line_start =
        |ls: usize| (ls > 0).then(|| text[..ls - 1].rfind('\n').map_or(0, |p| p + 1));
    // Only tokens of MIN_TOKEN bytes or more are judged: the scan visits
    // just those, and finds the line start of each from the newlines
    // passed since the last one (a token holds none).
    let (mut from, mut nl_seen) = (0usize, 0usize);
    while let Some((ts, te)) = super::decode::next_long_run(b, &TOKEN_BYTE, MIN_TOKEN, from) {
        from = te + 1;
        if let Some(p) = memchr::memrchr(b'\n', &b[nl_seen..ts]) {
            line_start = nl_seen + p + 1;
        }
        nl_seen = ts;
        if super::public::spans_of(skip, text)
            .iter()
            .any(|&(s, e)| ts >= s && ts < e)
        {
            continue;
        }
        let facts = facts.get_or_insert_with(|| TextFacts::of(path, text, lower));
        let (jwks, vectors, api_doc, sql) = (facts.jwks, facts.vectors, facts.api_doc, facts.sql);
        let csv = &facts.csv;
        let tok = &text[ts..te];
        let ltok = &lower[ts..te];
        if ltok.starts_with("sha512-")
            || ltok.starts_with("sha384-")
            || ltok.starts_with("sha256-")
            || ltok.starts_with("sha1-")
            || is_pin_syntax(ltok)
        {
            continue;
        }
        if !path.is_empty()
            && (tok == path || tok.ends_with(path) || path.ends_with(tok.trim_start_matches("./")))
        {
            continue;
        }
        if tok.len() >= MIN_FILE_B64 && FILE_MAGIC_B64.iter().any(|m| tok.starts_with(m)) {
            if alone_on_line(text, line_start, ts, te) {
                file_block = Some((line_start, te - ts));
            }
            continue;
        }
        // The next lines of a wrapped base64 file (a `.resx` icon, MIME
        // parts): continued from a line that opened with a file signature.
        if let Some((prev_start, width)) = file_block {
            if te - ts <= width
                && alone_on_line(text, line_start, ts, te)
                && previous_line_start(line_start) == Some(prev_start)
                && tok
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
            {
                file_block = Some((line_start, width));
                continue;
            }
            file_block = None;
        }
        // The line before the token, at most LOOKBACK bytes, starting on a
        // char boundary (at most 3 bytes later than the byte count says).
        let mut from = ts.saturating_sub(LOOKBACK).max(line_start);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let prefix = &text[from..ts];
        if (tok.bytes().all(|c| c.is_ascii_hexdigit()) && is_app_id_head(prefix))
            || is_arn_tail(prefix)
            || is_digest_fingerprint(prefix, tok)
            || is_id_call_argument(prefix)
            || is_known_hosts_salt(&text[line_start..ts])
            || ltok.starts_with("nonce-")
            || is_public_key_scheme(prefix, tok)
            || is_url_host(prefix, tok)
            || is_entity_tag(prefix)
        {
            continue;
        }
        if line_end < te {
            line_end = text[te..].find('\n').map_or(n, |p| te + p);
        }
        if is_hex_object_key(tok, &text[line_start..ts], &text[te..line_end])
            || is_checksum_listing(tok, &text[line_start..ts], &text[te..line_end])
            || is_submodule_status(tok, &text[line_start..ts], &text[te..line_end])
            || (sql && sql_column(text, line_start, ts).is_some_and(column_is_non_secret))
            || *header_skip.get_or_insert_with(line_start, || {
                header_of_line(text, line_start).is_some_and(header_is_non_secret)
                    || list_key(text, line_start, ts).is_some_and(|k| {
                        // A list is named in the plural (`signatures`, `ids`).
                        let one = k.strip_suffix('s').unwrap_or(k);
                        names_non_secret(k, jwks) || names_non_secret(one, jwks) || is_id_key(one)
                    })
            })
            || csv
                .as_ref()
                .filter(|_| line_start > 0)
                .and_then(|c| c.column(&text[line_start..ts]))
                .is_some_and(column_is_non_secret)
        {
            continue;
        }
        // Segments: split on '.', '@' and '=' (keeping trailing '=' padding).
        let tb = tok.as_bytes();
        let mut s = 0;
        while s < tb.len() {
            let mut e = s;
            while e < tb.len() && !matches!(tb[e], b'.' | b'@' | b'=') {
                e += 1;
            }
            let mut seg_end = e;
            while seg_end < tb.len() && tb[seg_end] == b'=' {
                seg_end += 1;
            }
            // Padding only if the '=' run ends the token or a dotted part.
            if seg_end > e && seg_end < tb.len() && !matches!(tb[seg_end], b'.' | b'@') {
                seg_end = e;
            }
            // The key the segment is the value of: before the token, or
            // inside it for `KEY=value` written without spaces. Read from
            // at most LOOKBACK bytes back, so a long token of many
            // segments costs linear time.
            let key = if s == 0 || tb[s - 1] == b'=' {
                let mut kf = (ts + s).saturating_sub(LOOKBACK).max(from);
                while !text.is_char_boundary(kf) {
                    kf += 1;
                }
                value_key(&text[kf..ts + s], &tok[s..])
            } else {
                ""
            };
            if e - s >= MIN_PART
                && e - s <= MAX_SEGMENT
                && !is_id_key(key)
                && !names_non_secret(key, jwks)
                && (!api_doc || !is_example_key(key))
                && !is_jose_part(&tok[s..e], tb.contains(&b'.'))
                && !is_public_der(&tok[s..e])
                && !is_cbor_map(&tok[s..e])
                && !is_encoded_text(&tok[s..e])
                && !is_digest_b64(&tok[s..seg_end], &lower[from..ts])
            {
                let seg = asset_path_dir(&tok[s..e], &ltok[e..]);
                if segment_is_random(seg, |part_off, part_len| {
                    let abs = ts + s + part_off;
                    let from = abs.saturating_sub(LOOKBACK).max(line_start);
                    let ctx = &lower.as_bytes()[from..abs];
                    let after_end = line_end.min(abs + part_len + LOOKBACK);
                    let after = &lower.as_bytes()[abs + part_len..after_end];
                    if HASH_RE.is_match(ctx) || HASH_RE.is_match(after) {
                        return true;
                    }
                    if (part_len == 40 || part_len == 64) && SHA_RE.is_match(ctx) {
                        return true;
                    }
                    if vectors
                        || is_asset_hash(after)
                        || neighbour_hash_context(lower, line_start, line_end, part_len)
                        || is_aws_resource_id(&lower.as_bytes()[line_start..abs], part_len)
                        || hex_of_text(&text[abs..abs + part_len])
                    {
                        return true;
                    }
                    // `from` may fall inside a multi-byte character.
                    let mut from = from;
                    while !text.is_char_boundary(from) {
                        from += 1;
                    }
                    is_vcs_id(
                        &text[from..abs],
                        &text[abs + part_len..line_end.max(abs + part_len)],
                        path,
                        from == line_start,
                    )
                }) {
                    out.push((ts + s, ts + seg_end));
                }
            }
            s = seg_end.max(e) + 1;
        }
    }
}

/// True for base64(url) of JSON text (`eyJ…` is `{"…`) that is part of a
/// JOSE object: a segment of a dotted token (a JWT's header or payload),
/// or a lone JOSE header (`{"alg":…}`). Its bytes are text, not randomness;
/// the token as a whole is the `jwt` rule's to judge, and what the text
/// holds is judged by the decoder (`scanner::decode`). Other encoded JSON
/// (a `.dockerconfigjson` blob) is still judged as a random run: its
/// credentials may be nested encodings the decoder does not reach. A cut-off
/// run (`eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ`) is judged on the bytes it has.
fn is_jose_part(seg: &str, dotted: bool) -> bool {
    if !seg.starts_with("eyJ") {
        return false;
    }
    // Whole quads only: a cut-off run is judged on the bytes it has.
    let body = seg.trim_end_matches('=');
    b64_decode(&body[..body.len() - body.len() % 4]).is_some_and(|b| {
        std::str::from_utf8(&b).is_ok_and(|t| {
            t.chars()
                .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
                && (dotted || t.contains("\"alg\"") || t.contains("\"typ\""))
        })
    })
}

/// Last words of key names whose values are not credentials: parameters
/// and outputs of a cipher or hash (`iv`, `nonce`, `salt`, `tag`,
/// `ciphertext`, `digest`, `txHash`), content validators (`etag`,
/// `checksum`, `fingerprint`, `thumbprint`, `x5t`), key ids (`kid`) and
/// domain-verification values, which are published in DNS by design, and
/// object ids (`guid`, `uuid`, `oid`: Unity `.meta` files, .NET projects,
/// MongoDB extended JSON, git LFS) and digests named by their algorithm
/// (Nix and Bazel `sha256 = "…"`).
const NON_SECRET_LAST_WORDS: &[&str] = &[
    "iv",
    "nonce",
    "salt",
    "tag",
    "aad",
    "digest",
    "hash",
    "etag",
    "ciphertext",
    "plaintext",
    "checksum",
    "fingerprint",
    "thumbprint",
    "x5t",
    "kid",
    "verification",
    "guid",
    "uuid",
    "oid",
    "sha1",
    "sha256",
    "sha384",
    "sha512",
    "md5",
    "blake2b",
    "blake3",
    // Round 4: signatures and MACs are outputs of a key, not the key
    // (sigstore bundles, XML-DSig `SignatureValue`/`DigestValue`, webhook
    // fixtures); lists of hashes; sortable record ids. Not `sig`: an Azure
    // SAS URL's `sig=` is the signature that makes the URL a credential.
    "signature",
    "signaturevalue",
    "digestvalue",
    "hashes",
    "timestamp",
    "ksuid",
    "ulid",
    // Challenges are sent to the client (WebAuthn, PKCE `code_challenge`);
    // captcha site keys are put in every page (`data-sitekey`), the
    // server's secret key is a separate value.
    "challenge",
    "sitekey",
];

/// Public members of a JSON Web Key (RFC 7517/7518): the modulus and
/// exponent, curve coordinates, key id, certificate chain and thumbprints.
/// The private members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `k`) are not here.
const JWK_PUBLIC_MEMBERS: &[&str] = &["n", "e", "x", "y", "kid", "x5c", "x5t", "x5t#s256", "crv"];

/// The last word of an identifier (`txHash` → `hash`, `aes_gcm_iv` → `iv`).
fn last_word(name: &str) -> String {
    let b = name.as_bytes();
    let mut start = 0;
    for i in 1..b.len() {
        if matches!(b[i], b'_' | b'-' | b'.') {
            start = i + 1;
        } else if b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase() {
            start = i;
        }
    }
    name[start.min(name.len())..].to_ascii_lowercase()
}

/// True when a key's name says its value is not a secret: public key
/// material (`public_key`, `NEXT_PUBLIC_*`, `publishableKey`, `pubkey`),
/// a cipher/hash parameter or content validator ([`NON_SECRET_LAST_WORDS`]),
/// or a public JWK member in a file holding JWKs (`jwks`).
fn names_non_secret(key: &str, jwks: bool) -> bool {
    let lk = key.to_ascii_lowercase();
    if key.is_empty() {
        return false;
    }
    if lk.contains("public") || lk.contains("publishable") || lk.contains("pubkey") {
        return true;
    }
    // Ciphertext fields (Chef data bags' `encrypted_data`, `encryptedValue`).
    if lk.contains("encrypted") {
        return true;
    }
    if jwks && JWK_PUBLIC_MEMBERS.contains(&lk.as_str()) {
        return true;
    }
    // The whole name too: XML-DSig's `SignatureValue` ends in `value`.
    NON_SECRET_LAST_WORDS.contains(&last_word(key).as_str())
        || NON_SECRET_LAST_WORDS.contains(&lk.as_str())
}

/// True when the token continues an AWS ARN (`arn:aws:kms:…:key/<id>`):
/// the text since the last space or quote opens with `arn:`. ARNs name
/// resources; they carry no credential.
pub(super) fn is_arn_tail(prefix: &str) -> bool {
    let piece = prefix
        .rsplit(|c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | '[' | ',' | '=')
        })
        .next()
        .unwrap_or("");
    piece.starts_with("arn:")
}

/// True when the token is the quoted argument of a call whose name ends in
/// an id word: `ObjectId("…")`, `Guid.Parse("…")`, `UUID.fromString("…")`.
fn is_id_call_argument(prefix: &str) -> bool {
    let Some(p) = prefix
        .strip_suffix(['"', '\''])
        .and_then(|p| p.trim_end().strip_suffix('('))
    else {
        return false;
    };
    let name = key_name(p);
    let dotted_last = name.rsplit('.').next().unwrap_or(name);
    let head = name.split('.').next().unwrap_or(name);
    [dotted_last, head].iter().any(|n| {
        matches!(
            last_word(n).as_str(),
            "id" | "guid" | "uuid" | "oid" | "objectid"
        )
    })
}

/// True for a digest written as `SHA256:<base64>` (OpenSSH and TLS
/// fingerprints, `ssh-keygen -l`): the prefix ends with the algorithm and
/// a colon, and the base64 decodes to exactly that digest's length.
fn is_digest_fingerprint(prefix: &str, tok: &str) -> bool {
    let lp = prefix.to_ascii_lowercase();
    let want = [
        ("sha256:", 32),
        ("sha1:", 20),
        ("sha384:", 48),
        ("sha512:", 64),
        ("md5:", 16),
    ]
    .iter()
    .find(|(p, _)| lp.ends_with(p))
    .map(|&(_, n)| n);
    // A sentence may end right after it (`… is SHA256:<b64>.`).
    let tok = tok.trim_end_matches('.');
    want.is_some_and(|n| b64_decode(tok).is_some_and(|b| b.len() == n))
}

/// True for the salt or the hashed host name of a hashed `known_hosts`
/// entry (`|1|<salt>|<hmac> ssh-ed25519 AAAA…`): the line so far is `|1|`
/// or `|1|<base64>|`.
fn is_known_hosts_salt(line_before: &str) -> bool {
    let Some(rest) = line_before.trim_start().strip_prefix("|1|") else {
        return false;
    };
    rest.is_empty()
        || rest.strip_suffix('|').is_some_and(|salt| {
            !salt.is_empty()
                && salt
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
        })
}

/// Words by which a test file says it holds published test vectors.
const VECTOR_WORDS: &[&str] = &[
    "test vector",
    "vectors",
    "wycheproof",
    "known answer",
    "rfc 4231",
    "rfc4231",
    "nist",
    "fips",
];

/// A test file that holds published cryptographic test vectors: its hex
/// values are the standard's inputs and outputs, not keys of this project.
fn is_test_vector_file(path: &str, lower: &str) -> bool {
    let lp = path.to_ascii_lowercase();
    let name = lp.rsplit('/').next().unwrap_or(&lp);
    let test_path = lp.contains("/test/")
        || lp.contains("/tests/")
        || lp.starts_with("test/")
        || lp.starts_with("tests/")
        || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.");
    test_path && VECTOR_WORDS.iter().any(|w| lower.contains(w))
}

/// A line of `git submodule status` / `git ls-tree`-like output: a status
/// character or nothing, a 40-hex commit, one space and a path with a `/`,
/// then optionally `(describe)`.
fn is_submodule_status(tok: &str, before: &str, after: &str) -> bool {
    if tok.len() != 40 || !tok.bytes().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    if !matches!(before, "" | " " | "+" | "-" | "U") {
        return false;
    }
    let Some(rest) = after.strip_prefix(' ') else {
        return false;
    };
    let mut words = rest.split_whitespace();
    let path_ok = words.next().is_some_and(|p| p.contains('/'));
    let describe = words.collect::<Vec<_>>().join(" ");
    path_ok && (describe.is_empty() || (describe.starts_with('(') && describe.ends_with(')')))
}

/// File extensions after a content hash in a built asset's name.
const ASSET_EXTS: &[&str] = &[
    "js",
    "mjs",
    "cjs",
    "css",
    "map",
    "html",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "webp",
    "woff",
    "woff2",
    "ttf",
    "eot",
    "ico",
    "wasm",
    "chunk",
    "bundle",
    "min",
    // Godot's import cache (`.godot/imported/<name>-<md5>.ctex`).
    "ctex",
    "scn",
    "res",
    "mesh",
    "oggvorbisstr",
    "sample",
];

/// A URL path whose last component is a built or content-addressed file
/// name (`…/v13/<id>.woff2`, `…/<hash>.png`): the path without that name,
/// which is judged as before; otherwise the whole segment. `rest` is the
/// token after the segment, lowercased: `.` and an asset extension that
/// ends the token. A file's name is its address, not a credential.
fn asset_path_dir<'a>(seg: &'a str, rest: &str) -> &'a str {
    let ext = rest.strip_prefix('.').unwrap_or("");
    match seg.rfind('/') {
        Some(slash) if ASSET_EXTS.contains(&ext) && slash > 0 => &seg[..slash],
        _ => seg,
    }
}

/// True when `after` (the text after a hex part) opens with `.<asset
/// extension>` and a non-word character: `main.3f2a…9c.js`, `webpack-<hex>.js`.
fn is_asset_hash(after: &[u8]) -> bool {
    let Some(rest) = after.strip_prefix(b".") else {
        return false;
    };
    let ext_len = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    ASSET_EXTS.iter().any(|e| e.as_bytes() == &rest[..ext_len])
}

/// True for the hex of an AWS resource id (`sg-`, `vpc-`, `i-`, `ami-`,
/// `subnet-` + 17 hex): a 17-hex part right after a short lowercase type
/// word and `-`. No digest or key has 17 hex digits.
fn is_aws_resource_id(line_before: &[u8], part_len: usize) -> bool {
    if part_len != 17 || line_before.last() != Some(&b'-') {
        return false;
    }
    let word = line_before[..line_before.len() - 1]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_lowercase())
        .count();
    (1..=12).contains(&word)
}

/// True for hex that decodes to text (`7768617420646f…` is `what do…`):
/// an encoding of words, judged by the decoder, not random bytes.
fn hex_of_text(part: &str) -> bool {
    let even = &part[..part.len() & !1];
    hex::decode(even).is_ok_and(|b| text_like(&b))
}

/// Printable ASCII with at least one space or newline in every 24 bytes:
/// prose, markup or config text. Random bytes are printable with
/// probability (95/256)^n; base64 or hex of a key holds no spaces.
fn text_like(b: &[u8]) -> bool {
    if b.len() < 8 {
        return false;
    }
    let printable = b
        .iter()
        .all(|&c| (0x20..0x7f).contains(&c) || matches!(c, b'\n' | b'\r' | b'\t'));
    let spaces = b
        .iter()
        .filter(|&&c| matches!(c, b' ' | b'\n' | b'\t'))
        .count();
    printable && spaces * 24 >= b.len()
}

/// Lenient base64 decoding (standard or URL-safe alphabet, padding
/// optional; a dangling last character, which encodes no byte, is dropped).
fn b64_decode(seg: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let body = seg.trim_end_matches('=');
    let whole = &body[..body.len() - usize::from(body.len() % 4 == 1)];
    let engine = base64::engine::general_purpose::GeneralPurpose::new(
        if body.contains(['-', '_']) {
            &base64::alphabet::URL_SAFE
        } else {
            &base64::alphabet::STANDARD
        },
        base64::engine::general_purpose::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    engine.decode(whole).ok()
}

/// True for base64 of text (`PHN2Zy…` is `<svg …`, a ConfigMap-like
/// `config.yaml` in a Secret's `data:`): the decoder rescans the text and
/// reports any secret written in it, so the encoding is not judged as
/// random. A compact JSON blob (`.dockerconfigjson`) has no spaces and is
/// still judged.
fn is_encoded_text(seg: &str) -> bool {
    seg.len() >= 24 && b64_decode(seg).is_some_and(|b| text_like(&b))
}

/// Reads a DER length at `b[i..]`: (length, bytes used).
fn der_len(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let first = *b.get(i)?;
    if first < 0x80 {
        return Some((usize::from(first), 1));
    }
    let n = usize::from(first & 0x7f);
    if n == 0 || n > 3 {
        return None;
    }
    let mut len = 0usize;
    for k in 0..n {
        len = (len << 8) | usize::from(*b.get(i + 1 + k)?);
    }
    Some((len, 1 + n))
}

/// True for base64 DER of public material: a SubjectPublicKeyInfo
/// (`SEQUENCE { SEQUENCE { OID … }, BIT STRING }`, the `MIIBIjANBgkq…` of
/// PEM public keys, DKIM `p=` records) or a certificate / CSR (`SEQUENCE {
/// SEQUENCE { [0] version | INTEGER … } … }`, JWKS `x5c`, SAML metadata).
/// Private keys open with an INTEGER version (PKCS#1, PKCS#8, SEC1), and an
/// encrypted PKCS#8 key's algorithm is followed by an OCTET STRING: both
/// stay judged.
fn is_public_der(seg: &str) -> bool {
    if !seg.starts_with('M') || seg.len() < 64 {
        return false;
    }
    // 48 base64 characters are 36 bytes: enough for the headers read here.
    let Some(b) = b64_decode(&seg[..48]) else {
        return false;
    };
    if b.first() != Some(&0x30) {
        return false;
    }
    let Some((_, l0)) = der_len(&b, 1) else {
        return false;
    };
    let i = 1 + l0;
    if b.get(i) != Some(&0x30) {
        return false;
    }
    let Some((inner_len, l1)) = der_len(&b, i + 1) else {
        return false;
    };
    let body = i + 1 + l1;
    match b.get(body) {
        // AlgorithmIdentifier, then the key: BIT STRING is a public key.
        Some(0x06) => {
            let next = body + inner_len;
            // The algorithm may run past the decoded head: decode more.
            let full = b64_decode(&seg[..seg.len().min(((next + 4) / 3 + 1) * 4)]);
            full.is_some_and(|f| f.get(next) == Some(&0x03))
        }
        // tbsCertificate's explicit version, or a CSR's INTEGER version.
        Some(0xA0) => true,
        Some(0x02) => b.get(body + 1) == Some(&1) && b.get(body + 2) == Some(&0),
        _ => false,
    }
}

/// Hash algorithm names, as a value on the line above a digest (CycloneDX
/// `"alg": "SHA-512",` then `"content": "<hex>"`).
static ALGO_RE: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    regex::bytes::Regex::new(
        r"\b(?:sha-?(?:1|224|256|384|512)|sha3-(?:224|256|384|512)|md5|blake(?:2b|2s|3))\b",
    )
    .expect("algorithm regex")
});

/// Words of a shell command that verifies keys or files: release-key
/// fingerprints listed over `\`-continued lines before `gpg --recv-keys`.
static VERIFY_RE: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    words_re(&[
        "gpg",
        "pgp",
        "recv-keys",
        "keyserver",
        "fingerprint",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "checksum",
    ])
});

/// Bytes of a `\`-continued shell command read around a digest.
const MAX_COMMAND: usize = 4096;

/// True when the lines next to a digest-length hex value say it is a
/// digest: the line above names a hash algorithm (SBOM hash objects), or
/// the value is one line of a `\`-continued shell command that verifies
/// keys or checksums (official-image Dockerfiles list release-key
/// fingerprints one per line, then `gpg --recv-keys`). Not when its own
/// line names a credential (`api_key: <hex>`): that key's value is judged.
fn neighbour_hash_context(
    lower: &str,
    line_start: usize,
    line_end: usize,
    part_len: usize,
) -> bool {
    if !DIGEST_HEX_LENS.contains(&part_len) {
        return false;
    }
    let b = lower.as_bytes();
    let own = &lower[line_start..line_end];
    let own_key = key_name(own.split([':', '=']).next().unwrap_or("")).to_ascii_lowercase();
    if CREDENTIAL_KEY_WORDS
        .iter()
        .any(|w| own_key.contains(w) || own.contains(&format!("{w}=")))
    {
        return false;
    }
    if line_start > 0 {
        let win = &b[line_start.saturating_sub(LOOKBACK + 1)..line_start - 1];
        let prev = win
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(win, |i| &win[i + 1..]);
        if ALGO_RE.is_match(prev) || (part_len == 40 && LISTING_RE.is_match(prev)) {
            return true;
        }
    }
    // The `\`-continued command around the line, bounded both ways.
    let continued = |end: usize| b[..end].trim_ascii_end().ends_with(b"\\");
    let mut from = line_start;
    while from > 0 && line_start - from < MAX_COMMAND && continued(from - 1) {
        from = b[..from - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
    }
    let mut to = line_end;
    while to < b.len() && to - line_end < MAX_COMMAND && continued(to) {
        to = b[to + 1..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |i| to + 1 + i);
    }
    (from < line_start || to > line_end) && VERIFY_RE.is_match(&b[from..to])
}

/// True for base64 of a CBOR map whose first key is a short text string
/// (WebAuthn `attestationObject`, `o2NmbXRk…` = `{"fmt": …}`): encoded
/// structured data, not a key. Random bytes open that way with
/// probability about 10⁻⁴ (map header, text header, then letters).
fn is_cbor_map(seg: &str) -> bool {
    if seg.len() < 24 {
        return false;
    }
    let Some(b) = b64_decode(&seg[..24]) else {
        return false;
    };
    let (map, text) = (b[0], b[1]);
    if !(0xa1..=0xb7).contains(&map) || !(0x62..=0x77).contains(&text) {
        return false;
    }
    let n = usize::from(text - 0x60);
    b.len() >= 2 + n.min(16)
        && b[2..2 + n.min(16)]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// True for hex used as the name of a JSON object member whose value is an
/// object (`"1a0fb4…": {"model_name": …}`: Jupyter widget state, maps of
/// records keyed by id or digest). A map from credential to metadata is
/// written with string values or non-hex tokens and stays judged.
fn is_hex_object_key(tok: &str, before: &str, after: &str) -> bool {
    tok.bytes().all(|c| c.is_ascii_hexdigit())
        && before.ends_with('"')
        && after
            .strip_prefix('"')
            .map(|a| a.trim_start())
            .and_then(|a| a.strip_prefix(':'))
            .is_some_and(|a| a.trim_start().starts_with('{'))
}

/// True when the token at `ts..te` is alone on its line but for
/// indentation and trailing spaces.
fn alone_on_line(text: &str, line_start: usize, ts: usize, te: usize) -> bool {
    let end = text[te..].find('\n').map_or(text.len(), |p| te + p);
    text[line_start..ts].trim().is_empty() && text[te..end].trim().is_empty()
}

/// Certificate-pin syntax: an algorithm, `/`, then base64 of a public
/// key's digest (OkHttp `sha256/…`, HPKP-style pin lists). A pin is a hash
/// of public material.
fn is_pin_syntax(ltok: &str) -> bool {
    ["sha1/", "sha256/", "sha384/", "sha512/"]
        .iter()
        .any(|p| ltok.starts_with(p))
}

/// URL schemes whose userinfo is the node's *public* key: an Ethereum
/// `enode://<128 hex>@host:port` names a peer by its secp256k1 public key.
fn is_public_key_scheme(prefix: &str, tok: &str) -> bool {
    tok.starts_with("//") && prefix.to_ascii_lowercase().ends_with("enode:")
}

/// True when the token is a URL's whole authority, a host name with no
/// userinfo and no path (`https://0C72A97AE2A8B09F3273E25448623F88.yl4.
/// us-east-1.eks.amazonaws.com` in a kubeconfig, issue 18, generator-13
/// `kubeconfig`): a random-looking label names a managed endpoint (EKS,
/// Cloud Run, a CDN distribution); it is an address, not a credential.
/// A token with a path after the host is judged as before.
fn is_url_host(prefix: &str, tok: &str) -> bool {
    let Some(host) = tok.strip_prefix("//") else {
        return false;
    };
    let scheme = prefix.strip_suffix(':').unwrap_or("");
    let scheme = &scheme[scheme
        .rfind(|c: char| !c.is_ascii_alphanumeric() && !matches!(c, '+' | '.' | '-'))
        .map_or(0, |i| i + 1)..];
    !scheme.is_empty()
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && host.contains('.')
        && !host.contains(['/', '@', '='])
}

/// An HTTP entity tag in its weak form, `W/"<opaque>"` (RFC 9110 §8.8.3),
/// also JSON-escaped (`W/\"…`): a validator of public content.
fn is_entity_tag(prefix: &str) -> bool {
    prefix.ends_with("W/\"") || prefix.ends_with("W/\\\"")
}

/// Decoded lengths of a digest: MD5, SHA-1, SHA-224, SHA-256, SHA-384,
/// SHA-512.
const DIGEST_BYTE_LENS: &[usize] = &[16, 20, 28, 32, 48, 64];

/// True for base64 of exactly a digest's length on a line that names a
/// digest or hash algorithm before it (`<pin digest="SHA-256">…</pin>` in
/// an Android network security config, `sha256: <base64>`): a hash of
/// public content. A key of the same length under such a line is not
/// reported by this rule (its own credential name still is, by the
/// assignment rule).
fn is_digest_b64(seg: &str, line_before: &str) -> bool {
    // Digests are written in standard base64 with its padding (SRI,
    // pins, `Content-Digest`); an unpadded base64url run of 43 characters
    // is a token's body (OpenShift's `sha256~…` tokens).
    if seg.bytes().all(|c| c.is_ascii_hexdigit())
        || !seg.len().is_multiple_of(4)
        || seg.contains(['-', '_'])
    {
        return false;
    }
    let Some(d) = b64_decode(seg) else {
        return false;
    };
    DIGEST_BYTE_LENS.contains(&d.len())
        && (HASH_RE.is_match(line_before.as_bytes()) || ALGO_RE.is_match(line_before.as_bytes()))
}

/// Base58btc decoding (Bitcoin alphabet), for short tokens only.
fn b58_decode(s: &str) -> Option<Vec<u8>> {
    const ALPHA: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    if s.len() > 128 {
        return None;
    }
    let mut out: Vec<u8> = Vec::new(); // little-endian base-256
    for c in s.bytes() {
        let mut carry = ALPHA.iter().position(|&a| a == c)? as u32;
        for b in &mut out {
            carry += u32::from(*b) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            out.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = s.bytes().take_while(|&c| c == b'1').count();
    out.extend(std::iter::repeat_n(0, zeros));
    out.reverse();
    Some(out)
}

/// True for a base58btc multihash: an IPFS CIDv0 (`Qm…`: sha2-256
/// multihash, `12 20` + 32 bytes) or a libp2p peer id (`12D3KooW…`,
/// `16Uiu2…`: the identity multihash of an Ed25519 or secp256k1 *public*
/// key). Content hashes and public identities. The header bytes are what
/// the `Qm`/`12D3KooW` opening encodes, so the test is that opening, the
/// base58 alphabet and the exact length: a random 46-character base58
/// token opens `Qm` with probability ~1/3400, and is then skipped.
fn is_multihash_b58(part: &str) -> bool {
    if !(part.starts_with("Qm") || part.starts_with("12D3KooW") || part.starts_with("16Uiu2")) {
        return false;
    }
    let Some(d) = b58_decode(part) else {
        return false;
    };
    (d.len() == 34 && d.starts_with(&[0x12, 0x20]))
        || (d.len() == 38 && d.starts_with(&[0x00, 0x24, 0x08, 0x01, 0x12, 0x20]))
        || (d.len() == 39 && d.starts_with(&[0x00, 0x25, 0x08, 0x02, 0x12, 0x21]))
}

/// True for hex whose bytes step by one constant (`000102…1f`,
/// `fffefd…`): the counting keys of test code and published vectors, a
/// filler shape, not randomness.
fn is_hex_byte_walk(b: &[u8]) -> bool {
    if b.len() < 16 || !b.len().is_multiple_of(2) {
        return false;
    }
    let nib = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
    let bytes: Vec<u8> = b.chunks(2).map(|p| nib(p[0]) << 4 | nib(p[1])).collect();
    let step = bytes[1].wrapping_sub(bytes[0]);
    bytes.windows(2).all(|w| w[1].wrapping_sub(w[0]) == step)
}

/// A line that lists key or commit ids on the lines under it: GnuPG's
/// key listing (`pub   rsa4096 2021-03-02 [SC]`, then the fingerprint on
/// its own line) and a shell transcript of git commands that print commit
/// ids (`$ git rev-parse HEAD`).
static LISTING_RE: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    regex::bytes::Regex::new(concat!(
        r"^\s*(?:(?:pub|sub|sec|ssb)\s+(?:rsa|dsa|elg|ed25519|ed448|cv25519|cv448|nistp|brainpool|secp256k1)\w*\s",
        r"|(?:\$\s*)?git\s+(?:rev-parse|rev-list|log|show|merge-base|describe|hash-object|commit-tree|write-tree)\b)",
    ))
    .expect("listing regex")
});

/// Bytes looked back from a SQL values tuple for its `INSERT INTO`.
const MAX_SQL_SCAN: usize = 4096;

/// The column of a value in a SQL `INSERT INTO t (c1, c2, …) VALUES (…)`
/// tuple: its name is the value's key, as a CSV header's is (`key_hash`,
/// `token_sha256`). Fields are counted by commas outside quotes from the
/// tuple's `(`; a quoted comma elsewhere shifts the column, which can only
/// name another column of the same statement.
fn sql_column(text: &str, line_start: usize, ts: usize) -> Option<&str> {
    // Only the end of a long line is read: a tuple is shorter than that.
    let mut line_start = line_start.max(ts.saturating_sub(MAX_SQL_SCAN));
    while !text.is_char_boundary(line_start) {
        line_start += 1;
    }
    let line = &text[line_start..ts];
    let open = line.rfind('(')?;
    let mut quoted = false;
    let mut field = 0usize;
    for c in line[open + 1..].bytes() {
        match c {
            b'\'' => quoted = !quoted,
            b',' if !quoted => field += 1,
            b')' if !quoted => return None,
            _ => {}
        }
    }
    let mut from = line_start.saturating_sub(MAX_SQL_SCAN);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let window = &text[from..line_start + open];
    let lw = window.to_ascii_lowercase();
    let ins = lw.rfind("insert into")?;
    let stmt = &window[ins..];
    let lstmt = &lw[ins..];
    let values = lstmt.find("values")?;
    let cols_open = lstmt[..values].find('(')?;
    let cols_close = lstmt[..values].rfind(')')?;
    // Another statement between the INSERT and the tuple ends it.
    if lstmt[values..].contains(';') || cols_close < cols_open {
        return None;
    }
    stmt[cols_open + 1..cols_close]
        .split(',')
        .nth(field)
        .map(|c| c.trim().trim_matches(['"', '`', '[', ']']))
}

/// Digest lengths in hex: MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512.
const DIGEST_HEX_LENS: &[usize] = &[32, 40, 56, 64, 96, 128];

/// A line of checksum-tool output (`sha256sum`, `md5sum`, `shasum`): the
/// line is a digest-length hex value, then two spaces or ` *` and a file
/// name. The layout is the tools' own, so no key is written that way.
fn is_checksum_listing(tok: &str, before: &str, after: &str) -> bool {
    DIGEST_HEX_LENS.contains(&tok.len())
        && tok.bytes().all(|c| c.is_ascii_hexdigit())
        && before.trim().is_empty()
        && (after.starts_with("  ") || after.starts_with(" *"))
        && after.split_whitespace().count() == 1
}

/// One regex per word list: the `regex` crate is built optimized even in
/// dev builds and searches all words in one pass, where a `windows()` loop
/// per word made hostile lines of many hex parts take tens of seconds.
fn words_re(words: &[&str]) -> regex::bytes::Regex {
    let alt: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
    regex::bytes::Regex::new(&alt.join("|")).expect("word list regex")
}
static HASH_RE: LazyLock<regex::bytes::Regex> = LazyLock::new(|| words_re(HASH_WORDS));
static SHA_RE: LazyLock<regex::bytes::Regex> = LazyLock::new(|| words_re(SHA_CONTEXT));

/// True when some `/ _ -` separated part of `seg` is random for its
/// alphabet. `sha_ctx(offset, len)` says a hex part is a hash in context.
fn segment_is_random(seg: &str, sha_ctx: impl Fn(usize, usize) -> bool) -> bool {
    let b = seg.as_bytes();
    let mut s = 0;
    while s < b.len() {
        let mut e = s;
        while e < b.len() && !matches!(b[e], b'/' | b'_' | b'-') {
            e += 1;
        }
        if e - s >= MIN_PART && part_is_random(&seg[s..e]) && !is_multihash_b58(&seg[s..e]) {
            let hex = b[s..e].iter().all(u8::is_ascii_hexdigit);
            if !(hex && sha_ctx(s, e - s)) {
                return true;
            }
        }
        s = e + 1;
    }
    false
}

/// Shannon entropy in bits per character (as gitleaks computes it; custom
/// allowlist rules share it).
pub(super) fn entropy(s: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &c in s {
        counts[c as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// True for letters-only camelCase/PascalCase made of real-looking words:
/// every word is a capital (optional) and 2+ lowercase letters, or an
/// acronym of 2+ capitals, and words average 4+ letters. Minified code is
/// full of names like `buildFromFromSecretFactoryManager` whose short words
/// change case often enough to pass the transition test; random letters
/// rarely form only such words (a random 20-letter mix has many one- and
/// two-letter "words").
fn is_camel_words(b: &[u8]) -> bool {
    let run = |from: usize, f: fn(&u8) -> bool| b[from..].iter().take_while(|c| f(c)).count();
    let (mut i, mut words) = (0usize, 0usize);
    while i < b.len() {
        let caps = run(i, u8::is_ascii_uppercase);
        if caps >= 2 {
            // An acronym; in "HTTPServer" its last capital starts the next word.
            let followed = i + caps < b.len();
            let acronym = if followed { caps - 1 } else { caps };
            if acronym < 2 {
                return false;
            }
            i += acronym;
        } else {
            let lows = run(i + caps, u8::is_ascii_lowercase);
            if lows < 2 {
                return false;
            }
            i += caps + lows;
        }
        words += 1;
    }
    words > 0 && b.len() >= words * 4
}

/// Shortest run judged by [`is_alphabet`]: 32 distinct characters out of
/// 62 happen by chance with probability ~3·10⁻⁴, out of 64 (base64) less.
const MIN_ALPHABET: usize = 32;

/// True for an alphabet constant: 32+ characters, none repeated (a
/// base58/Crockford alphabet, a shuffled Hashids or nanoid alphabet). A
/// random token of that length repeats some character almost surely.
fn is_alphabet(b: &[u8]) -> bool {
    if b.len() < MIN_ALPHABET {
        return false;
    }
    let mut seen = [false; 256];
    b.iter()
        .all(|&c| !std::mem::replace(&mut seen[usize::from(c)], true))
}

/// Judges one separator-free part against the floor for its alphabet.
pub(crate) fn part_is_random(p: &str) -> bool {
    let b = p.as_bytes();
    let (mut lower, mut upper, mut digit, mut other) = (0usize, 0usize, 0usize, 0usize);
    for &c in b {
        match c {
            b'a'..=b'z' => lower += 1,
            b'A'..=b'Z' => upper += 1,
            b'0'..=b'9' => digit += 1,
            _ => other += 1,
        }
    }
    let n = b.len();
    if is_alphabet(b) {
        return false;
    }
    let is_hex = b.iter().all(u8::is_ascii_hexdigit) && (lower == 0 || upper == 0);
    if is_hex {
        // Needs both digits and letters: all-digit runs are ids/timestamps.
        let letters = n - digit;
        if digit == 0 || letters == 0 || is_hex_byte_walk(b) {
            return false;
        }
        return entropy(b) >= 3.0;
    }
    let classes = usize::from(lower > 0) + usize::from(upper > 0) + usize::from(digit > 0);
    if classes < 2 {
        return false;
    }
    if digit == 0 && other == 0 && is_camel_words(b) {
        return false;
    }
    // An INI array operator or a diff line's sign before a name
    // (`+DirectoriesToAlwaysCook=`): the rest is judged without it.
    if other == 1 && b[0] == b'+' {
        return part_is_random(&p[1..]);
    }
    // Identifiers with a digit among real words (`OAuth2AccessTokenFactory`).
    if super::words::is_word_like(p, true) {
        return false;
    }
    // Identifiers (camelCase, PascalCase, version strings) change character
    // class rarely; random strings change class at most positions.
    let class_of = |c: u8| match c {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    let transitions = b
        .windows(2)
        .filter(|w| class_of(w[0]) != class_of(w[1]))
        .count();
    if transitions * 10 < n * 3 {
        return false;
    }
    let floor = if other > 0 { 3.6 } else { 3.3 };
    entropy(b) >= floor && n - digit >= 4
}

#[cfg(test)]
mod tests {
    use super::part_is_random;
    use crate::scanner::rules::testutil::check;

    #[test]
    fn parts() {
        assert!(part_is_random("9f2c4e7a1b3d5f60"));
        assert!(part_is_random("Zk3mQ8pL2xN7vR4tW9yB"));
        assert!(!part_is_random("authenticationProvider"));
        assert!(!part_is_random("HTTPSConnectionPool"));
        assert!(!part_is_random("12345678901234567890"));
        assert!(!part_is_random("internationalization"));
    }

    /// The 256-byte look-back may start inside a multi-byte character.
    #[test]
    fn lookback_on_multibyte_text() {
        let line = format!("x{} 9f2c4e7a1b3d5f608e2a4c6b", "é".repeat(200));
        let tok = line.len() - 24;
        assert!(
            !line.is_char_boundary(tok - super::LOOKBACK),
            "case exercises a mid-char start"
        );
        check(
            "generic_secret",
            &[(&line, "9f2c4e7a1b3d5f608e2a4c6b")],
            &[],
        );
    }

    /// Issue 18, third generator: values whose key, position or structure
    /// says they are not credentials; beside each, the same shape where it
    /// is one.
    #[test]
    fn non_secret_keys_positions_and_structures() {
        check(
            "generic_secret",
            &[
                // A cipher's key next to its public parameters.
                (
                    "\"key\": \"5844ff22d323f3e10b4f77f04aa428e8\"",
                    "5844ff22d323f3e10b4f77f04aa428e8",
                ),
                // `_id` and `public` stop at the key they name.
                (
                    "AUTH0_CLIENT_SECRET=UNJKowfzC7GgoE1kvbjIss80gdHJBj1n",
                    "UNJKowfzC7GgoE1kvbjIss80gdHJBj1n",
                ),
                // A private JWK member stays a secret in a JWKS file.
                (
                    "{\"kty\": \"RSA\", \"d\": \"djF2EBYGJVm2fvjc7HNI4eTqlX3_Pr8qMe4v\"}",
                    "djF2EBYGJVm2fvjc7HNI4eTqlX3_Pr8qMe4v",
                ),
                // 24 hex after a type word is not an AWS resource id (17).
                (
                    "value sg-9f2c4e7a1b3d5f608e2a4c6b",
                    "sg-9f2c4e7a1b3d5f608e2a4c6b",
                ),
                // A call whose name is not an id word.
                (
                    "login(\"65590ce26fa48f4ccf7d8680\")",
                    "65590ce26fa48f4ccf7d8680",
                ),
                // The same base64 after a name that is not a digest's.
                (
                    "session:uxfwQ0+fdEybjlNXqbdYPkYbGIfdk3Gl2dqbZOWvQgQ9x3Lq",
                    "uxfwQ0+fdEybjlNXqbdYPkYbGIfdk3Gl2dqbZOWvQgQ9x3Lq",
                ),
                // Hex of random bytes, not of text.
                (
                    "blob 3ad77bb40d7a3660a89ecaf32466ef97 end",
                    "3ad77bb40d7a3660a89ecaf32466ef97",
                ),
            ],
            &[
                ("\"iv\": \"ce5631faeef20487e34701c7\"", "cipher parameter"),
                (
                    "\"txHash\": \"0xefd0903194fbbc4639a58c4801972759c225b6f3e8c31af1d3b2157ab40a5854\"",
                    "hash key",
                ),
                ("ETag: \"9dd4e461268c8034f5c8564e155c67a6\"", "etag"),
                (
                    "If-None-Match: \"9dd4e461268c8034f5c8564e155c67a6\"",
                    "etag header",
                ),
                (
                    "NEXT_PUBLIC_AUTH0_CLIENT_ID=UNJKowfzC7GgoE1kvbjIss80gdHJBj1n",
                    "public client id",
                ),
                // An OAuth client id is public (RFC 6749 section 2.2), hex or not.
                ("client_id = \"Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\"", "id key"),
                (
                    "NEXT_PUBLIC_SENTRY_DSN=https://f477c7bf613f56808390de9dedf89ba3@o1.ingest.sentry.io/2",
                    "public key after a URL scheme",
                ),
                (
                    "verification_public_key: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                    "public key name",
                ),
                (
                    "    server: https://0C72A97AE2A8B09F3273E25448623F88.yl4.us-east-1.eks.amazonaws.com\n",
                    "a URL's host name",
                ),
                (
                    "{\"kty\": \"RSA\", \"n\": \"djF2EBYGJVm2fvjc7HNI4eTqlX3_Pr8qMe4v\", \"e\": \"AQAB\"}",
                    "jwk modulus",
                ),
                (
                    "resources = [\"arn:aws:kms:us-east-1:123456789012:key/mrk-687d69d77c00ca1a02ce9ceb26a1aa38\"]",
                    "arn",
                ),
                (
                    "\"id\": \"sg-0f1e2d3c4b5a69788\", \"vpc\": \"vpc-e52aa53c8007395ea\"",
                    "aws resource ids",
                ),
                (
                    "|1|WifEkcyGU/o8ljPIAZe0phzUlos=|IXyi4xzaenne+1JJNd1+p83MjYk= ssh-ed25519 AAAAC3",
                    "known_hosts",
                ),
                (
                    "<script nonce=\"oPxEA0IsPURtmzAQ4Wl4+A==\"></script> 'nonce-oPxEA0IsPURtmzAQ4Wl4+A=='",
                    "csp nonce",
                ),
                (
                    "\"main.js\": \"/static/js/main.06aa0903d45b6cf741b6.js\"",
                    "asset content hash",
                ),
                (
                    " a1ca1ea441473d6adb0d4bff07398357fb1482b1 vendor/profile (v3.3.8)",
                    "submodule status",
                ),
                (
                    "\"data\": \"7768617420646f2079612077616e7420666f72206e6f7468696e673f\"",
                    "hex of text",
                ),
                (
                    "  config.yaml: bG9nX2xldmVsOiBpbmZvCmZlYXR1cmVfZmxhZ3M6CiAgbmV3X2NoZWNrb3V0OiB0cnVlCnJlZ2lvbjogZXUtd2VzdC0xCg==",
                    "base64 of yaml",
                ),
                (
                    "url(\"data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAyNCAyNCI+PHBhdGggZD0iTTEyIDJMNyA3djEweiIvPjwvc3ZnPg==\")",
                    "base64 of svg",
                ),
                (
                    "\"url\": \"https://api.github.com/repos/acme/x/zipball/29e082af461a187f6769be2fecb9a206952a8ec5\"",
                    "zipball url",
                ),
                (
                    "google-site-verification=-7COMvWJGf82KU84Giut5pI3y7-XpnW1C1by_Nl8X7M",
                    "dns verification",
                ),
                ("guid: 3a0fce48ee5b155a3298b58f5e667406", "unity guid"),
                (
                    "{\"$oid\": \"65590ce26fa48f4ccf7d8680\"}",
                    "mongo extended json",
                ),
                (
                    "db.x.find({ _id: ObjectId(\"65590ce26fa48f4ccf7d8680\") })",
                    "ObjectId call",
                ),
                (
                    "SENTRY_RELEASE=d43b8c55c2a58b0ead6376aef89c528f7025268e",
                    "release commit",
                ),
                (
                    "    sha256 = \"500arhc2ibjxdiyd79p7ayly63i9a9rbv4cz69il7v8vlk5d7877\";",
                    "nix base32 digest",
                ),
                (
                    "\"encrypted_data\": \"dNUpdxX5GcbF3sxl9IT7mrsySS7/eJH9FWyb0JwNKLjP2VhL9Zr5\"",
                    "ciphertext field",
                ),
                (
                    "ED25519 key fingerprint is SHA256:uxfwQ0+fdEybjlNXqbdYPkYbGIfdk3Gl2dqbZOWvQgQ.",
                    "ssh fingerprint",
                ),
                (
                    "    pgp: '0F1ACF4E76BAC9631AC371404B806B52D9A319B3,17EA75D2F2BD9D75B569F640F924B04C8FDCC30E'",
                    "pgp fingerprints",
                ),
            ],
        );
    }

    /// DER structure decides: a SubjectPublicKeyInfo or a certificate is
    /// public; a PKCS#8 private key (INTEGER version first) is not.
    #[test]
    fn der_public_structures() {
        let spki = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA3c6eIPk7MQKNCRRX8ng3jaJ7rduBLcMMk+/FfYZEX3o+5e5haOn6RYfpnlUbnBW7oN";
        let cert = "MIICajCCAVKgAwIBAgIQ4GoWKUwfIGilckTIiJZURDANBgkqhkiG9w0BAQsFAIuhlp3TdcgYEvz90+S8Fc5eTCgIXB/kumEovL+MYuapy48sx8";
        let ec = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEDBUx/i88kgCm9SPnOwd7sJGViVU3hMtG/JZ0XSLsAKpIcnAoJI9gr80KXbf086V5ULcUm8zNC0";
        let pkcs8 = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7k9q2Lm4Kp7RtZk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1c";
        let enc = "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIZk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9w";
        assert!(super::is_public_der(spki));
        assert!(super::is_public_der(cert));
        assert!(super::is_public_der(ec));
        assert!(!super::is_public_der(pkcs8));
        assert!(!super::is_public_der(enc));
        check(
            "generic_secret",
            &[(&format!("blob {pkcs8}"), pkcs8)],
            &[(
                &format!("records = [\"v=DKIM1; k=rsa; p={spki}\"]"),
                "dkim spki",
            )],
        );
    }

    #[test]
    fn random_tokens() {
        check(
            "generic_secret",
            &[
                (
                    "the key is 9f2c4e7a1b3d5f608e2a4c6b in prose",
                    "9f2c4e7a1b3d5f608e2a4c6b",
                ),
                (
                    "X-Api: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
                (
                    "deploy c2a9f1e07b3d48c6a5e2f90b1d7c3e8a4f6b2d90 now",
                    "c2a9f1e07b3d48c6a5e2f90b1d7c3e8a4f6b2d90",
                ),
                (
                    "blob: q8Zk3Vb7Lm2Np9Rt4Wx6Yc1Df5Gh0Jk8Mn3Pq7Ss+0=",
                    "q8Zk3Vb7Lm2Np9Rt4Wx6Yc1Df5Gh0Jk8Mn3Pq7Ss+0=",
                ),
                // Hash words only mark hex: a base64 key next to "sha256sum" stays.
                (
                    "KEY=Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8 # see sha256sum",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
                // A 64-hex with no hash word anywhere on its line is a key.
                (
                    "k_seed = \"1a248888b604599a49bd44fdb67b2ddf138895b8c6507a72e0af381a195ecacd\";",
                    "1a248888b604599a49bd44fdb67b2ddf138895b8c6507a72e0af381a195ecacd",
                ),
                // `*_id` names that name a secret keep their hex values.
                (
                    "\"secret_id\": \"66ecc4a4a35ab8ebbfa7b2a136fbe3cbf2efe5cf\"",
                    "66ecc4a4a35ab8ebbfa7b2a136fbe3cbf2efe5cf",
                ),
                // Values of an id key naming a secret are still judged.
                (
                    "client_secret_id = \"Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\"",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
                // A magic-like opening on a short token is not an image.
                (
                    "v = iVBORw0KGgoZk3mQ8pL2xN7vR4tW9",
                    "iVBORw0KGgoZk3mQ8pL2xN7vR4tW9",
                ),
                // Letters-only but not word-shaped.
                (
                    "tok ZkmQpLxNvRtWyBcHqsDfGhJk end",
                    "ZkmQpLxNvRtWyBcHqsDfGhJk",
                ),
            ],
            &[
                (
                    "commit c2a9f1e07b3d48c6a5e2f90b1d7c3e8a4f6b2d90",
                    "git SHA in commit context",
                ),
                ("index 3f1a2b4..9e8d7c6 100644", "diff index line"),
                (
                    "\"integrity\": \"sha512-Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9wB3d==\"",
                    "integrity string",
                ),
                (
                    "import { authenticationProviderFactory } from './src/components/authenticationProvider'",
                    "identifiers and paths",
                ),
                (
                    "uuid = 123e4567-e89b-12d3-a456-426614174000",
                    "UUID parts are short",
                ),
                (
                    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                    "checksum context",
                ),
                (
                    "echo \"52aed715e8add5139985a40b5f05b910e152f287c63141b716edafc82038b5b9  rel.tgz\" | sha256sum -c -",
                    "checksum tool after the value",
                ),
                (
                    "n.u=function(e){return e+\".\"+{964:\"4dc5e000fdf347a3d080\"}[e]+\".chunk.js\"}",
                    "bundler chunk-hash map",
                ),
                (
                    "var mt=function(e){return e.buildFromFromSecretFactoryManager}",
                    "camelCase of short words",
                ),
                (
                    "  \"private_key_id\": \"66ecc4a4a35ab8ebbfa7b2a136fbe3cbf2efe5cf\",",
                    "hex value of an id key",
                ),
                ("keyId: 9f2c4e7a1b3d5f608e2a4c6b", "camelCase id key"),
                (
                    "  appId: \"1:513066625861:web:49b8caaef0767286627636\",",
                    "Firebase app id",
                ),
                (
                    "\"image/png\": \"iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAYAAAAXMwAIQtz+bVhHVe2zb/gmN+X4CuKcG2dwJG73S9G88gr3N5nk2VKeSGSX8AGzjAIXa9ie1DNMa0C4\"",
                    "base64 PNG",
                ),
                (
                    "<img src=\"data:image/jpeg;base64,/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT\">",
                    "base64 JPEG data URI",
                ),
            ],
        );
    }

    /// Issue 18, generator-3 round 4: signature and id headers (same line
    /// and folded), XML element names as keys, `id`/`…ID` keys, alphabet
    /// constants and CSV column names; beside each, the same place holding
    /// a credential.
    #[test]
    fn round_four_headers_elements_alphabets_and_columns() {
        check(
            "generic_secret",
            &[
                // A credential-named header is still judged.
                (
                    "X-Api-Key: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
                // A folded line under a header that is not a signature's.
                (
                    "X-Custom-Data: a=1;\n\tb=Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
                // An element named for a credential.
                (
                    "<ApiSecret>Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8</ApiSecret>",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
                // 32 characters with a repeat: not an alphabet.
                (
                    "SEED = \"Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2k\"",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2k",
                ),
            ],
            &[
                (
                    "Stripe-Signature: t=1730626327,v1=3e91d25536b4d06ac59e5957cea47d6802712521813230265fa0cc3734ef6bba",
                    "signature header",
                ),
                (
                    "Signature: sig1=:15SZvAPLua5dhwktUgAOtYmg4Vitb4bBV32Rw2cI0SfZIEsCbOufpmFwlbjiM1KlDAMnoK82O2Rh2xGIYk/KqA==:",
                    "message signature",
                ),
                (
                    "DKIM-Signature: v=1; a=rsa-sha256; d=acme.io;\n\tb=T0bOTOnmBqx3YwedaGa/ypEJ32Q7rj7B7R9LbfIigFIgc9V4uW2X5Uz8WTh2ot5I9b508X\n\tuTnK0XdyNMRi5z8sD1rxWksYAH+zidyHIEd6nBqsQP0SJfuCGkbTYttX/Ibi5fUONAypj2",
                    "folded DKIM signature",
                ),
                (
                    "x-amz-id-2: Mma6AZP3oqGk1TVByWM5yNVtrFX2ihoWkaBtj6G6qxqi3uw5uvIr/CGtzG7sbFJ43ocTYuiv6rA=",
                    "request id header",
                ),
                (
                    "<ds:SignatureValue>LJ6NHPqXeV6u93wiz1DlFe25DWWQunE971rDGg6ZC+Pc8vsa</ds:SignatureValue>",
                    "XML-DSig signature",
                ),
                (
                    "<ds:DigestValue>xHExq0Uz5N4t8V1gqUM1xWMM+8nAX7ga2GbuvZEukz4=</ds:DigestValue>",
                    "XML-DSig digest",
                ),
                (
                    "    containerID: containerd://cbc864e988d23959e4480d9291521ba51b32c7fa2f50c8cfffcdb938a680ec56",
                    "container id",
                ),
                (
                    "\"id\": \"92d9c5525649e565a1af68982a9baad07b2663fe\"",
                    "id key",
                ),
                (
                    "const Alphabet = \"JgDYbs13T95xMdEQZIAlc02PkGuphWCnOqor74mwfaVF6SXHNjiLURtyzvKB8e\"",
                    "shuffled alphabet",
                ),
                (
                    "<div class=\"g-recaptcha\" data-sitekey=\"6LPEAAAAAAl3rMkNxY94a4H-nLMkANjdm7bkIc9l\"></div>",
                    "captcha site key",
                ),
            ],
        );
    }

    #[test]
    fn csv_columns_name_their_values() {
        use crate::scanner::{ScanConfig, Scanner};
        let s = Scanner::new(ScanConfig::redaction());
        let csv = "ID,FILENAME,MD5SUM,PASSWORD\n1,a.xml,9:b358669da8c1964e1694f495d7975ff8,Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\n";
        let found: Vec<String> = s
            .scan_bytes("db/changelog.csv", csv.as_bytes())
            .into_iter()
            .map(|f| f.value)
            .collect();
        assert_eq!(found, vec!["Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8".to_string()]);
        // The same line outside a CSV file has no column names.
        let txt = "1,a.xml,9:b358669da8c1964e1694f495d7975ff8\n";
        assert!(!s.scan_bytes("notes.txt", txt.as_bytes()).is_empty());
    }

    /// Issue 18, generator-3 round 4: digests named by the line above or
    /// by the verifying shell command they belong to, and CBOR-encoded
    /// structures; beside each, a key in the same place.
    #[test]
    fn neighbour_lines_and_cbor() {
        let sha512 = "3d6960c789af0e5801f00d46962ecdf4ecaca5fefc5fbc497ae3be174b0fb1a092253d0ee25a76065ca479ca24269edb7abfc3e1b1ee2312a4b8f093194d1f3b";
        let fpr = "ABBEDF71FD63C0C1F725D1E36696C4A5163B48A1";
        let sbom = format!("{{\n  \"alg\": \"SHA-512\",\n  \"content\": \"{sha512}\"\n}}");
        let docker = format!(
            "RUN for key in \\\n    {fpr} \\\n  ; do gpg --batch --recv-keys \"$key\" ; done\n"
        );
        let keyed = format!("algorithm: sha256\napi_key: {}", &sha512[..64]);
        let not_verify = format!("RUN deploy \\\n    {fpr} \\\n  --region eu\n");
        let cbor = "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjFjbY88oi43GrTRq_xW4gYQXBp";
        check(
            "generic_secret",
            &[
                (keyed.as_str(), &sha512[..64]),
                (not_verify.as_str(), fpr),
                (
                    "k: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0r",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0r",
                ),
            ],
            &[
                (sbom.as_str(), "digest under its algorithm"),
                (docker.as_str(), "release-key fingerprints"),
                (&format!("\"attestationObject\": \"{cbor}\""), "CBOR map"),
            ],
        );
    }

    /// A bare list element's key is its list's: digests under `hashes` are
    /// skipped, keys under `api_keys` are judged.
    #[test]
    fn list_elements_take_their_list_key() {
        check(
            "generic_secret",
            &[(
                "\"api_keys\": [\n  \"Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\",\n  \"Rv0OYzEAtD+Wdjv6plOqzvewYsni5PJxLubppv\"\n]",
                "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
            )],
            &[
                (
                    "\"hashes\": [\n  \"Rv0OYzEAtD+Wdjv6plOqzvewYsni5PJxLubppv/fAqA=\",\n  \"MxjvGWs9rXSGn7dxhwpqe8qyQVBrUh9X6NCMAp45T2c=\"\n]",
                    "JSON list of hashes",
                ),
                (
                    "signatures:\n  - Rv0OYzEAtD+Wdjv6plOqzvewYsni5PJxLubppv/fAqA=\n",
                    "YAML list of signatures",
                ),
            ],
        );
    }

    /// A content-addressed file name ends a URL path; a hex id names a
    /// nested object. Beside each, a random path part before the file name
    /// and a hex member with a string value.
    #[test]
    fn asset_file_names_and_hex_object_keys() {
        check(
            "generic_secret",
            &[
                (
                    "url(https://cdn.example.io/Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8/logo.png)",
                    // The finding is the dot-separated segment, as before.
                    "io/Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8/logo",
                ),
                (
                    "{\"tokens\": {\"1a0fb44416288907075defde726c9747\": \"admin\"}}",
                    "1a0fb44416288907075defde726c9747",
                ),
            ],
            &[
                (
                    "src: url(https://fonts.gstatic.com/s/inter/v13/P2X4HAMSCboiw5JWkfKDS06R8Iwg8Jbjk3cqVN7s0MswZNbKihiFUi7rPMBM.woff2)",
                    "font file name",
                ),
                (
                    "\"state\": {\"1a0fb44416288907075defde726c9747\": {\"model_name\": \"LayoutModel\"}}",
                    "widget id",
                ),
            ],
        );
    }

    /// Round 5 classes, each with a true positive where its skip stops:
    /// counting hex keys, inline WebAssembly and the wrapped lines of a
    /// base64 file, certificate pins, enode and multihash ids, weak ETags,
    /// an INI array operator, GnuPG and git listings, SQL columns naming
    /// hashes, keys naming a point in history.
    #[test]
    fn round_five_classes() {
        let ico = "AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQAAAAIAAAAAEAIAAAAAAAAAQAABILAAASCwAAAAAAAA";
        let resx = format!(
            "<value>\n        {ico}\nZk3mQ8pL2xN7vR4tW9yB1cHq5sD8aF3kL9mP2rT6vX8zB0dF2hJ4kM6nQ8sU0wY2aC4eG6iK8m\nR8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h=\n</value>\n"
        );
        let resx_then_key = format!(
            "{resx}<data name=\"Key\"><value>R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0</value></data>\n"
        );
        let peer = "/p2p/12D3KooWMhsfdxpxoTJik3zfsbHS4PNndYVPhNP3JSbRUJ7dBc2F";
        let keys_file =
            "pub   rsa4096 2021-03-02 [SC]\n      D0FA1C534D6DE0BDB86F9CAE0346586BBFAF852E\n";
        let sql = "INSERT INTO api_keys (id, name, key_hash) VALUES\n  (1, 'ci', 'd3d737a619336eaaa2cda94e4e1b5323bb4ae58ef449910fe0447a226ab17824');\n";
        let sql_secret = "INSERT INTO api_keys (id, name, secret) VALUES\n  (1, 'ci', 'd3d737a619336eaaa2cda94e4e1b5323bb4ae58ef449910fe0447a226ab17824');\n";
        check(
            "generic_secret",
            &[
                (
                    "KEY = \"00a1b2c3d4e5f60718293a4b5c6d7e8f9fa0b1c2d3e4f5061728394a5b6c7d8e\"",
                    "00a1b2c3d4e5f60718293a4b5c6d7e8f9fa0b1c2d3e4f5061728394a5b6c7d8e",
                ),
                (resx_then_key.as_str(), "R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0"),
                (
                    "<pin>D8NnpLko+UOz07yEb3B6w1VG2CgfqdOu6fyElO14T9s=</pin>",
                    "D8NnpLko+UOz07yEb3B6w1VG2CgfqdOu6fyElO14T9s=",
                ),
                (
                    "Authorization: Bearer sha256~kV46hPnEYhCWFnB85r5NrprAxggzgb6GOeLbgcKNsH0",
                    "kV46hPnEYhCWFnB85r5NrprAxggzgb6GOeLbgcKNsH0",
                ),
                (
                    // `0` is not base58: no CID.
                    "peer = \"QmZk3mQ8pL2xN7vR4tW9yB1cHq5sD8aF3kL9mP2rT6vX0z\"",
                    "QmZk3mQ8pL2xN7vR4tW9yB1cHq5sD8aF3kL9mP2rT6vX0z",
                ),
                (
                    "      D0FA1C534D6DE0BDB86F9CAE0346586BBFAF852E\n",
                    "D0FA1C534D6DE0BDB86F9CAE0346586BBFAF852E",
                ),
                (
                    sql_secret,
                    "d3d737a619336eaaa2cda94e4e1b5323bb4ae58ef449910fe0447a226ab17824",
                ),
            ],
            &[
                (
                    "const COUNTING_KEY: &str = \"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\";",
                    "counting bytes",
                ),
                (
                    "var wasm=\"AGFzbQEAAAD0ElGZjujuD6kMzNqqvbkRmMasp9Pv0hZqGVTqsFb6J6OjTcpHVzw2LAm/k+eXpBrMmCmI\";",
                    "inline WebAssembly",
                ),
                (resx.as_str(), "wrapped base64 icon"),
                (
                    "<pin digest=\"SHA-256\">SSKwCvs8yMHkcNo3E6ddHgJMxxkmgtD9QMnwPrk4cw4=</pin>",
                    "certificate pin",
                ),
                (
                    ".add(\"api.acme.io\", \"sha256/D8NnpLko+UOz07yEb3B6w1VG2CgfqdOu6fyElO14T9s=\")",
                    "OkHttp pin",
                ),
                (
                    "\"enode://ef0a5eab587223385ba60d21468e95359789ab116b7fac5ea7153cc1c7171dcb9d7e4394620e84cc8b524777d43359895e00ddd47f0c797839f2bce1dbd0c7fa@212.103.23.232:30303\"",
                    "enode public key",
                ),
                (peer, "libp2p peer id"),
                (
                    "legacy_cid = \"QmRNGcmMdddSSWkvLsPKVym4tRgfdWJrSmBVUa8PzqBVfq\"",
                    "CIDv0",
                ),
                (
                    "{\"name\": \"etag\", \"value\": \"W/\\\"7b554221d316168d8fcbea588f10ee06\\\"\"}",
                    "weak entity tag",
                ),
                (
                    "+DirectoriesToAlwaysCook=(Path=\"/Game/Maps\")",
                    "INI array operator",
                ),
                (keys_file, "GnuPG key listing"),
                (
                    "$ git rev-parse HEAD\nc9a8bb09e5fc5669a6ff276e5e9f445a9d8cd266\n",
                    "git output",
                ),
                (sql, "SQL column naming a hash"),
                (
                    "\"builtin-baseline\": \"bc2ee7f47eda077023296da5f4cca6e6dfa975b1\",",
                    "history point",
                ),
            ],
        );
    }

    /// `example:` values of an API description are documentation; the same
    /// key in an ordinary config, and a credential-named key in the API
    /// description, are judged.
    #[test]
    fn api_description_examples() {
        let doc = |v: &str| {
            format!(
                "openapi: 3.1.0\ncomponents:\n  schemas:\n    Page:\n      properties:\n        next_cursor:\n          example: {v}\n"
            )
        };
        let cursor = doc("ord_V5IFBu0HNLAq3hqrJ7xRqewL");
        let keyed = "openapi: 3.1.0\nx-api-key: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\n";
        check(
            "generic_secret",
            &[
                (keyed, "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"),
                (
                    "example: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\n",
                    "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
                ),
            ],
            &[(cursor.as_str(), "OpenAPI example")],
        );
    }
}
