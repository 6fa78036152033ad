//! String literals written in pieces (issue 18, generator-9
//! `obscured-implicit-concatenation`): Python's and C's adjacent literals
//! and `+` chains are one value, and a secret split over them ("so secret
//! scanners do not trip on it") is whole again only once they are joined.
//!
//! [`view`] gives the text with each run of adjacent pieces joined into one
//! literal, in place: the joined literal starts where the first piece did,
//! and the run's removed quotes and separators follow it as spaces, with
//! every newline kept. The view has the text's length and line count, so a
//! finding in it has the offsets and line of the run's first piece. The
//! scanner judges the view beside the text and keeps what only the view
//! shows.
//!
//! A run is two or more literals of one quote character separated only by
//! `+`, whitespace that holds a newline (a one-line `"a" "b"` is two shell
//! arguments far more often than one value) or a line continuation. Only
//! pieces without whitespace are joined: secrets have none, while split
//! messages do, and joining those would only cost time.
//!
//! Also joined (issue 18, generator-11): arrays of such pieces joined with
//! an empty separator (`['SG.x', 'y'].join('')`, through the name the array
//! is bound to, or Python's `''.join([...])`), and `String.fromCharCode`
//! of literal char codes, decoded. A key assembled from named constants
//! (a template literal, a `+` chain of names) is not a run of adjacent
//! pieces: [`super::folded`] reads those.

/// Shortest joined value worth a view: below it no detector reports.
const MIN_JOINED: usize = 16;

/// Longest piece followed: a longer literal is no piece of a token.
const MAX_PIECE: usize = 512;

/// A literal at `b[i]` (its opening quote): the index of its closing
/// quote, if it closes on the same line without whitespace inside.
fn piece_end(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() && j <= i + MAX_PIECE {
        match b[j] {
            c if c == q => return Some(j),
            b'\\' if j + 1 < b.len() && !b[j + 1].is_ascii_whitespace() => j += 2,
            c if c.is_ascii_whitespace() => return None,
            _ => j += 1,
        }
    }
    None
}

/// After the closing quote at `b[close]`: the opening quote of the next
/// piece of the same run, if only a run's separator lies between.
fn next_piece(b: &[u8], close: usize) -> Option<usize> {
    let q = b[close];
    let (mut j, mut newline, mut plus) = (close + 1, false, false);
    while j < b.len() {
        match b[j] {
            b'\n' => newline = true,
            b' ' | b'\t' | b'\r' => {}
            b'\\' if b.get(j + 1) == Some(&b'\n') => {
                newline = true;
                j += 1;
            }
            b'+' if !plus => plus = true,
            c if c == q && (newline || plus) => return Some(j),
            _ => return None,
        }
        j += 1;
    }
    None
}

/// A run found in the text: the span it takes (`start..end`, exclusive)
/// and the value it stands for.
struct Run {
    start: usize,
    end: usize,
    value: Vec<u8>,
}

/// Runs of adjacent literal pieces (`"a" "b"` over lines, `'a' + 'b'`).
/// Whether `b` may hold a run of adjacent pieces: a quote then `+`, or a
/// line ending in a quote whose next line starts with one. Newlines and
/// `+` are rarer than quotes in code, so this look costs less than
/// [`adjacent_runs`]' walk over every quote, which most texts then skip.
fn may_have_adjacent_run(b: &[u8]) -> bool {
    const SEP: usize = 64;
    let quote = |c: u8| c == b'"' || c == b'\'';
    let sep = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n' | b'\\' | b'+');
    let before = |i: usize| {
        let mut j = i;
        while j > 0 && i - j < SEP && sep(b[j - 1]) {
            j -= 1;
        }
        j > 0 && quote(b[j - 1])
    };
    let after = |i: usize| {
        let mut j = i;
        while j < b.len() && j - i < SEP && sep(b[j]) {
            j += 1;
        }
        j < b.len() && quote(b[j])
    };
    memchr::memchr2_iter(b'\n', b'+', b).any(|i| before(i) && after(i + 1))
}

fn adjacent_runs(b: &[u8], out: &mut Vec<Run>) {
    // Past the last run or lone piece judged: quotes inside are skipped.
    let mut next_from = 0;
    for i in memchr::memchr2_iter(b'"', b'\'', b) {
        if i < next_from {
            continue;
        }
        let Some(first_end) = piece_end(b, i) else {
            continue;
        };
        // Most literals stand alone: nothing to gather, nothing allocated.
        let Some(second) = next_piece(b, first_end) else {
            next_from = first_end + 1;
            continue;
        };
        let mut pieces = vec![(i + 1, first_end)];
        let mut end = first_end;
        let mut next = Some(second);
        while let Some(n) = next {
            let Some(e) = piece_end(b, n) else { break };
            pieces.push((n + 1, e));
            end = e;
            next = next_piece(b, e);
        }
        if pieces.len() >= 2 {
            out.push(Run {
                start: i,
                end: end + 1,
                value: pieces.iter().flat_map(|&(s, e)| b[s..e].to_vec()).collect(),
            });
        }
        next_from = end + 1;
    }
}

/// Whitespace (newlines included) from `j`: the index after it.
fn skip_ws(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    j
}

/// Empty separators of a join: `join('')`, `join("")` (JavaScript,
/// Ruby), and Python's `''.join(` / `"".join(` before the array.
const EMPTY_JOINS: [&str; 2] = [".join('')", ".join(\"\")"];
const PY_EMPTY_JOINS: [&str; 2] = ["''.join(", "\"\".join("];

/// True when `after` starts with a join whose separator is empty:
/// [`EMPTY_JOINS`], or Ruby's `.join` with no argument (`Array#join`
/// joins with `$,`, nil by default: `["SG.x", "y"].join`, issue 18,
/// generator-13 `rails-initializer-service`) or `.join()`.
fn empty_join(after: &str) -> bool {
    if EMPTY_JOINS.iter().any(|j| after.starts_with(j)) {
        return true;
    }
    let Some(rest) = after.strip_prefix(".join") else {
        return false;
    };
    rest.starts_with("()")
        || rest
            .bytes()
            .next()
            .is_none_or(|c| !ident_char(c) && !matches!(c, b'(' | b' ' | b'\t' | b'"' | b'\''))
}

/// Arrays of literal pieces joined with an empty separator (issue 18,
/// generator-11 `array-join-split-token`): `['SG.x', 'y', 'z'].join('')`,
/// or the array bound to a name that is joined so elsewhere in the text
/// (`const parts = [...]` then `parts.join('')`), or Python's
/// `''.join([...])`. Only arrays whose every element is a literal without
/// whitespace, all of one quote character; a list of words joined by
/// spaces or commas is not a value in pieces.
fn array_runs(text: &str, b: &[u8], out: &mut Vec<Run>) {
    let joined = std::cell::OnceCell::new();
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'[', &b[i..]) {
        let open = i + k;
        i = open + 1;
        let first = skip_ws(b, open + 1);
        if first >= b.len() || !matches!(b[first], b'"' | b'\'') {
            continue;
        }
        let q = b[first];
        let (mut pieces, mut j) = (Vec::new(), first);
        let close = loop {
            if j >= b.len() || b[j] != q {
                break None;
            }
            let Some(e) = piece_end(b, j) else { break None };
            pieces.push((j + 1, e));
            j = skip_ws(b, e + 1);
            if b.get(j) == Some(&b',') {
                j = skip_ws(b, j + 1);
            }
            if b.get(j) == Some(&b']') {
                break Some(j);
            }
        };
        let Some(close) = close else { continue };
        if pieces.len() < 2
            || !joined_empty(
                text,
                open,
                close,
                joined.get_or_init(|| empty_joined_names(text)),
            )
        {
            continue;
        }
        // The run: first piece's opening quote to the last's closing one.
        out.push(Run {
            start: first,
            end: pieces.last().map_or(first, |&(_, e)| e + 1),
            value: pieces.iter().flat_map(|&(s, e)| b[s..e].to_vec()).collect(),
        });
        i = close + 1;
    }
}

/// Whether `c` may be part of an identifier.
fn ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// Names joined with an empty separator somewhere in `text`:
/// `name.join('')` (not a property, `a.name.join('')`) and Python's
/// `''.join(name)`. Found once per text, so an array's lookup is a set's.
fn empty_joined_names(text: &str) -> std::collections::HashSet<&str> {
    let b = text.as_bytes();
    let mut out = std::collections::HashSet::new();
    for (at, _) in text.match_indices(".join") {
        if empty_join(&text[at..]) {
            let mut a = at;
            while a > 0 && ident_char(b[a - 1]) {
                a -= 1;
            }
            if a < at && (a == 0 || b[a - 1] != b'.') {
                out.insert(&text[a..at]);
            }
        }
    }
    for j in PY_EMPTY_JOINS {
        for (at, _) in text.match_indices(j) {
            let from = at + j.len();
            let mut z = from;
            while z < b.len() && ident_char(b[z]) {
                z += 1;
            }
            if z > from && b.get(z) == Some(&b')') {
                out.insert(&text[from..z]);
            }
        }
    }
    out
}

/// Whether the array `text[open..=close]` is joined with an empty
/// separator: right after it, by Python's `''.join(` right before it, or
/// through the name it is bound to (`name = [` … `name.join('')`, a name
/// of `joined`: [`empty_joined_names`]).
fn joined_empty(
    text: &str,
    open: usize,
    close: usize,
    joined: &std::collections::HashSet<&str>,
) -> bool {
    if empty_join(&text[close + 1..]) {
        return true;
    }
    let before = text[..open].trim_end();
    if PY_EMPTY_JOINS.iter().any(|j| before.ends_with(j)) {
        return true;
    }
    let Some(lhs) = before.strip_suffix('=') else {
        return false;
    };
    let lhs = lhs.trim_end();
    let name_start = lhs
        .char_indices()
        .rev()
        .find(|&(_, c)| !c.is_ascii() || !ident_char(c as u8))
        .map_or(0, |(p, c)| p + c.len_utf8());
    let name = &lhs[name_start..];
    !name.is_empty() && !name.as_bytes()[0].is_ascii_digit() && joined.contains(name)
}

/// Fewest elements of a char array read as one string (a password of
/// eight characters).
const MIN_CHAR_ELEMENTS: usize = 8;

/// One element of a char array at `j`: a char literal `'c'` (a printable
/// ASCII character, not a quote or backslash), possibly after a cast
/// (`(char) 'a'`). The character and the index after it.
fn array_element(b: &[u8], j: usize) -> Option<(u8, usize)> {
    let mut j = j;
    if b.get(j) == Some(&b'(') {
        let close = j + 1 + b[j + 1..].iter().take(16).position(|&c| c == b')')?;
        if !b[j + 1..close].iter().all(|c| c.is_ascii_alphabetic()) {
            return None;
        }
        j = skip_ws(b, close + 1);
    }
    let c = *b.get(j + 1)?;
    (b.get(j) == Some(&b'\'')
        && (0x20..0x7f).contains(&c)
        && c != b'\''
        && c != b'\\'
        && b.get(j + 2) == Some(&b'\''))
    .then_some((c, j + 3))
}

/// Arrays of char literals (issue 18, generator-12
/// `java-char-byte-array-secret`): Java keeps passwords in `char[]`
/// (`{ 'y', 'E', '1', … }`, Kotlin `charArrayOf(…)` is a call and not
/// read), so they never land in the string pool. A char array is the
/// string it spells: the whole initializer, braces included, becomes one
/// literal, and the name it is bound to judges it as it would a string.
/// Only arrays of at least [`MIN_CHAR_ELEMENTS`] chars and nothing else.
/// Byte arrays are read by [`byte_array_runs`], from 32 bytes on.
fn literal_array_runs(b: &[u8], out: &mut Vec<Run>) {
    let mut i = 0;
    while let Some(k) = memchr::memchr2(b'{', b'[', &b[i..]) {
        let open = i + k;
        i = open + 1;
        let close_char = if b[open] == b'{' { b'}' } else { b']' };
        let mut j = skip_ws(b, open + 1);
        let mut value = Vec::new();
        let close = loop {
            let Some((c, e)) = array_element(b, j) else {
                break None;
            };
            value.push(c);
            j = skip_ws(b, e);
            if b.get(j) == Some(&b',') {
                j = skip_ws(b, j + 1);
            }
            if b.get(j) == Some(&close_char) {
                break Some(j);
            }
        };
        let Some(close) = close else { continue };
        if value.len() >= MIN_CHAR_ELEMENTS {
            out.push(Run {
                start: open,
                end: close + 1,
                value,
            });
            i = close + 1;
        }
    }
}

/// Fewest elements of a byte array read as key material: 32 bytes, a
/// symmetric key's usual length (AES-256, HMAC-SHA256, an Ed25519 seed).
/// A 16-byte array is as often a UUID (a BLE characteristic's bytes) as
/// an AES-128 key, so shorter arrays are not read.
const MIN_KEY_BYTES: usize = 32;
/// Most elements of a byte array read: a longer one is a table (an
/// S-box, a CRC table, an embedded file), not a key.
const MAX_KEY_BYTES: usize = 128;

/// One element of a byte array at `j`: `0x` and one or two hex digits,
/// possibly after a cast (`(byte) 0xd0`) or with Rust's `u8` suffix.
/// The byte and the index after it.
fn byte_element(b: &[u8], j: usize) -> Option<(u8, usize)> {
    let mut j = j;
    if b.get(j) == Some(&b'(') {
        let close = j + 1 + b[j + 1..].iter().take(16).position(|&c| c == b')')?;
        if !b[j + 1..close].iter().all(|c| c.is_ascii_alphabetic()) {
            return None;
        }
        j = skip_ws(b, close + 1);
    }
    if !(b.get(j) == Some(&b'0') && matches!(b.get(j + 1), Some(b'x' | b'X'))) {
        return None;
    }
    let s = j + 2;
    let digits = b[s..]
        .iter()
        .take(3)
        .take_while(|c| c.is_ascii_hexdigit())
        .count();
    if !(1..=2).contains(&digits) {
        return None;
    }
    let hex = std::str::from_utf8(&b[s..s + digits]).ok()?;
    let v = u8::from_str_radix(hex, 16).ok()?;
    let mut e = s + digits;
    if b[e..].starts_with(b"u8") {
        e += 2;
    }
    Some((v, e))
}

/// Words of a declaration that may name key material: an array bound
/// to none of them (`sbox`, `crcTable`, `kTestVector`) is not read, so
/// a file of tables costs no second scan of its view. Whether the name
/// calls the bytes a secret is still the detectors' judgement.
const KEY_DECLARATION_WORDS: &[&[u8]] = &[
    b"key", b"secret", b"token", b"pass", b"pw", b"private", b"sign", b"hmac", b"seed", b"cred",
    b"auth", b"cookie", b"session",
];

/// Longest declaration head looked back over from an array's bracket.
const MAX_DECLARATION: usize = 128;

/// Whether the text on the array's line before its bracket at `open`
/// (`var signingKey = []byte`, `static const uint8_t kKey[32] =`) holds
/// one of [`KEY_DECLARATION_WORDS`], case ignored.
fn declared_as_key(b: &[u8], open: usize) -> bool {
    let from = open.saturating_sub(MAX_DECLARATION);
    let head = &b[from..open];
    let head = match head.iter().rposition(|&c| c == b'\n') {
        Some(i) => &head[i + 1..],
        None => head,
    };
    let lower = head.to_ascii_lowercase();
    KEY_DECLARATION_WORDS
        .iter()
        .any(|w| lower.windows(w.len()).any(|x| x == *w))
}

/// Byte arrays of literal bytes (issue 18, generator-14
/// `lambda-node-go-java-embedded-secret`): Go's `[]byte{0xd0, 0xc5, …}`,
/// C's and Java's `{ (byte) 0xd0, … }`, Rust's `[0xd0u8, …]`, a key kept
/// as bytes so it never appears as a string. The array is the hex string
/// of its bytes, one literal in the view, which the name it is bound to
/// judges as it would the hex string (`signingKey`, `hmacSecret`: named;
/// `sbox`, `DEK`, `magic`: not). Only arrays of [`MIN_KEY_BYTES`] to
/// [`MAX_KEY_BYTES`] `0x` bytes and nothing else, declared on their line
/// under a name that may name a key ([`declared_as_key`]).
fn byte_array_runs(b: &[u8], out: &mut Vec<Run>) {
    let mut i = 0;
    while let Some(k) = memchr::memchr2(b'{', b'[', &b[i..]) {
        let open = i + k;
        i = open + 1;
        let close_char = if b[open] == b'{' { b'}' } else { b']' };
        let mut j = skip_ws(b, open + 1);
        let mut value = Vec::new();
        let close = loop {
            let Some((v, e)) = byte_element(b, j) else {
                break None;
            };
            if value.len() >= MAX_KEY_BYTES * 2 {
                break None;
            }
            value.extend_from_slice(format!("{v:02x}").as_bytes());
            j = skip_ws(b, e);
            if b.get(j) == Some(&b',') {
                j = skip_ws(b, j + 1);
            }
            if b.get(j) == Some(&close_char) {
                break Some(j);
            }
        };
        let Some(close) = close else { continue };
        if value.len() >= MIN_KEY_BYTES * 2 && declared_as_key(b, open) {
            out.push(Run {
                start: open,
                end: close + 1,
                value,
            });
        }
        i = close + 1;
    }
}

/// Longest char-code list decoded.
const MAX_CHAR_CODES: usize = 512;

/// `String.fromCharCode(…)` of literal char codes (issue 18, generator-11
/// `fromcharcode-array-token`: obfuscators write a string as its codes),
/// spread (`...[110, 112]`) or as arguments (`110, 112`), decimal or
/// `0x` hex: the string they spell. Only printable ASCII is decoded; a
/// list with another code is left alone.
fn char_code_runs(text: &str, b: &[u8], out: &mut Vec<Run>) {
    const CALL: &str = "String.fromCharCode(";
    for (at, _) in text.match_indices(CALL) {
        let mut j = skip_ws(b, at + CALL.len());
        let spread = b[j..].starts_with(b"...[");
        if spread {
            j = skip_ws(b, j + 4);
        }
        let mut value = Vec::new();
        let close = loop {
            let (n, len) = match char_code(&b[j..]) {
                Some(x) => x,
                None => break None,
            };
            if !(0x20..0x7f).contains(&n) || value.len() >= MAX_CHAR_CODES {
                break None;
            }
            value.push(n as u8);
            j = skip_ws(b, j + len);
            if b.get(j) == Some(&b',') {
                j = skip_ws(b, j + 1);
            }
            if spread && b.get(j) == Some(&b']') {
                j = skip_ws(b, j + 1);
                if b.get(j) == Some(&b')') {
                    break Some(j);
                }
                break None;
            }
            if !spread && b.get(j) == Some(&b')') {
                break Some(j);
            }
        };
        if let Some(close) = close {
            out.push(Run {
                start: at,
                end: close + 1,
                value,
            });
        }
    }
}

/// A decimal or `0x` hex integer at the start of `b`: its value and length.
fn char_code(b: &[u8]) -> Option<(u32, usize)> {
    let (radix, skip) = if b.starts_with(b"0x") || b.starts_with(b"0X") {
        (16, 2)
    } else {
        (10, 0)
    };
    let len = b[skip..]
        .iter()
        .take_while(|c| (*c).is_ascii_digit() || (radix == 16 && c.is_ascii_hexdigit()))
        .count();
    if len == 0 || len > 6 {
        return None;
    }
    let s = std::str::from_utf8(&b[skip..skip + len]).ok()?;
    Some((u32::from_str_radix(s, radix).ok()?, skip + len))
}

/// The text with every run of literal pieces joined in place (module
/// doc) and the runs' spans (first opening quote to last closing quote,
/// exclusive), or `None` when it has no run worth joining. Runs are
/// adjacent literals, arrays of literals joined with an empty separator
/// ([`array_runs`]) and `String.fromCharCode` of char codes
/// ([`char_code_runs`]); each is written as one quoted literal where it
/// starts, its span's newlines kept and the rest blanked.
pub(crate) fn view(text: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    if may_have_adjacent_run(b) {
        adjacent_runs(b, &mut found);
    }
    // memchr's SIMD search: a history scan asks this of every code text.
    // `.join(` or Ruby's bare `.join`.
    if memchr::memmem::find(b, b".join").is_some() {
        array_runs(text, b, &mut found);
    }
    if memchr::memmem::find(b, b"fromCharCode").is_some() {
        char_code_runs(text, b, &mut found);
    }
    // A byte after another (`, 0x`, `,0x`) or after a cast (`) 0x`):
    // one pass over the text's `0x`s, which most texts have none of.
    if memchr::memmem::find_iter(b, b"0x").any(|i| {
        let before = b[..i].trim_ascii_end();
        matches!(before.last(), Some(b',' | b')')) && i - before.len() <= 1
    }) {
        byte_array_runs(b, &mut found);
    }
    // Two elements of a char array, side by side.
    if memchr::memmem::find(b, b"', '").is_some() || memchr::memmem::find(b, b"','").is_some() {
        literal_array_runs(b, &mut found);
    }
    found.retain(|r| {
        let newlines = b[r.start..r.end].iter().filter(|&&c| c == b'\n').count();
        r.value.len() >= MIN_JOINED && r.value.len() + 2 + newlines <= r.end - r.start
    });
    found.sort_by_key(|r| r.start);
    let mut out: Option<Vec<u8>> = None;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for r in found {
        if runs.last().is_some_and(|&(_, e)| r.start < e) {
            continue;
        }
        let o = out.get_or_insert_with(|| b.to_vec());
        runs.push((r.start, r.end));
        // The quote the run opens with, or `'` for a call's codes.
        let q = if matches!(b[r.start], b'"' | b'\'') {
            b[r.start]
        } else {
            b'\''
        };
        let mut w = r.start;
        o[w] = q;
        w += 1;
        o[w..w + r.value.len()].copy_from_slice(&r.value);
        w += r.value.len();
        o[w] = q;
        w += 1;
        // The rest of the span: its newlines, then spaces.
        let newlines = b[r.start..r.end].iter().filter(|&&c| c == b'\n').count();
        for _ in 0..newlines {
            o[w] = b'\n';
            w += 1;
        }
        while w < r.end {
            o[w] = b' ';
            w += 1;
        }
    }
    // Whole pieces, printable ASCII and ASCII separators: still UTF-8.
    let joined = String::from_utf8(out?).ok()?;
    Some((joined, runs))
}

#[cfg(test)]
mod tests {
    use super::view;

    #[test]
    fn adjacent_pieces_are_joined_in_place() {
        let t = "KEY = os.getenv(\n    \"KEY\",\n    \"SG.CGvSkm\"\n    \"rs9NM3a0IT\"\n    \".Knp7kOAUM\",\n)\nX = 1\n";
        let (v, runs) = view(t).expect("a run");
        assert_eq!(runs.len(), 1);
        assert_eq!(
            &t[runs[0].0..runs[0].1],
            "\"SG.CGvSkm\"\n    \"rs9NM3a0IT\"\n    \".Knp7kOAUM\""
        );
        assert_eq!(v.len(), t.len());
        assert_eq!(v.matches('\n').count(), t.matches('\n').count());
        assert!(v.contains("\"SG.CGvSkmrs9NM3a0IT.Knp7kOAUM\""), "{v}");
        assert!(v.ends_with(",\n)\nX = 1\n"), "{v}");
        let plus = "t = 'ghp_0ieJn7Bem' + 'Z7z1Mc0xmgKiCy9H4El'\n";
        assert!(
            view(plus)
                .unwrap()
                .0
                .contains("'ghp_0ieJn7BemZ7z1Mc0xmgKiCy9H4El'")
        );
        let cont = "T = \"abcdefghij\" \\\n    \"klmnopqrst\"\n";
        assert!(view(cont).unwrap().0.contains("\"abcdefghijklmnopqrst\""));
    }

    /// Issue 18, generator-11: arrays of pieces joined with an empty
    /// separator, directly, through their name or by Python's `''.join`.
    #[test]
    fn arrays_joined_empty_are_one_literal() {
        let t = "const parts = ['SG.bQRZctY7d-Ovd-p', 'i8Bt6NB.2U4A1lgGS_',\n  '4syYcneFXp5WZmPqwX', 'YlwV9aArGNpSPwP'];\nconst API_KEY = parts.join('');\n";
        let (v, runs) = view(t).expect("a run");
        assert_eq!(v.len(), t.len());
        assert_eq!(v.matches('\n').count(), t.matches('\n').count());
        assert!(
            v.contains("'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'"),
            "{v}"
        );
        assert_eq!(&t[runs[0].0..runs[0].0 + 3], "'SG");
        let direct = "k = [\"xoxb-493117825\", \"3866-407497494\"].join(\"\")\n";
        assert!(
            view(direct)
                .unwrap()
                .0
                .contains("\"xoxb-4931178253866-407497494\"")
        );
        let py = "k = ''.join(['ghp_0ieJn7Bem', 'Z7z1Mc0xmgKiCy9H4El'])\n";
        assert!(
            view(py)
                .unwrap()
                .0
                .contains("'ghp_0ieJn7BemZ7z1Mc0xmgKiCy9H4El'")
        );
        let py_name = "P = ['ghp_0ieJn7Bem', 'Z7z1Mc0xmgKiCy9H4El']\nk = ''.join(P)\n";
        assert!(view(py_name).is_some());
        // A name after a non-ASCII character.
        let uni = "é=['ghp_0ieJn7Bem', 'Z7z1Mc0xmgKiCy9H4El']\nk = é.join('')\n";
        assert!(view(uni).is_none());
        // Joined with a separator, never joined, another name joined,
        // an element that is not a literal.
        for t in [
            "const parts = ['abcdefghij', 'klmnopqrst'];\nconst s = parts.join(', ');\n",
            "const parts = ['abcdefghij', 'klmnopqrst'];\nuse(parts);\n",
            "const parts = ['abcdefghij', 'klmnopqrst'];\nconst s = myparts.join('');\n",
            "const parts = ['abcdefghij', x, 'klmnopqrst'];\nconst s = parts.join('');\n",
        ] {
            assert!(view(t).is_none(), "{t}");
        }
    }

    /// Issue 18, generator-11: `String.fromCharCode` of literal codes is
    /// the string they spell; codes outside printable ASCII are left.
    /// Issue 18, generator-12: a char array is the string it spells;
    /// short or mixed arrays and byte arrays are left alone.
    #[test]
    fn char_arrays_are_literals() {
        let t = "    private static final char[] STORE_PASS = { 'y', 'E', '1', 't', 'h', 'V', 'j', 'B', 'd', 'd', 'G', '9', 'F', 'F', 'N', 'r' };\n";
        let (v, _) = view(t).expect("a run");
        assert!(v.contains("STORE_PASS = 'yE1thVjBddG9FFNr'"), "{v}");
        for t in [
            "let short = ['a', 'b', 'c'];\n",
            "let mixed = ['a', 0x62, 'c', 'd', 'e', 'f', 'g', 'h', 'i'];\n",
            "#define UUID_BYTES { 0x57, 0x6b, 0xfb, 0x2f, 0xe6, 0x76, 0xeb, 0x43, 0xd0, 0x34, 0xfc, 0x99, 0x54, 0xfc, 0x85, 0x00 }\n",
        ] {
            assert!(view(t).is_none(), "{t}");
        }
    }

    /// Issue 18, generator-14: a byte array of 32 or more bytes is the
    /// hex string of its bytes, and its name judges it; a UUID's 16
    /// bytes, a mixed array and a table are left alone.
    #[test]
    fn byte_arrays_are_hex_literals() {
        let hex = "0f3123992335da4fdcab79a06851f8ae78aef1b6e922d746617fc9cdac506577";
        let bytes: Vec<String> = (0..32)
            .map(|i| format!("0x{}", &hex[2 * i..2 * i + 2]))
            .collect();
        let go = format!(
            "var hmacSecret = []byte{{\n\t{},\n\t{},\n}}\n",
            bytes[..16].join(", "),
            bytes[16..].join(", ")
        );
        let (v, _) = view(&go).expect("a run");
        assert!(v.contains(&format!("[]byte'{hex}'")), "{v}");
        let java = format!(
            "static final byte[] HMAC_KEY = {{ {} }};\n",
            bytes
                .iter()
                .map(|b| format!("(byte) {b}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(view(&java).expect("a run").0.contains(hex));
        let rust = format!(
            "const SIGNING_KEY: [u8; 32] = [{}];\n",
            bytes
                .iter()
                .map(|b| format!("{b}u8"))
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(view(&rust).expect("a run").0.contains(hex));
        for t in [
            format!("var keyUUID = []byte{{{}}}\n", bytes[..16].join(", ")),
            format!("var key = []byte{{{}, 256}}\n", bytes[..31].join(", ")),
            format!(
                "var keyTable = []uint32{{{}, 0x1db71064}}\n",
                bytes.join(", ")
            ),
        ] {
            assert!(view(&t).is_none(), "{t}");
        }
        // Named a secret, the bytes are reported; named a table, not.
        use crate::scanner::rules::testutil::rules;
        assert_eq!(
            rules("internal/auth/hmac.go", &go),
            [format!("random-token={hex}")]
        );
        let table = go.replace("hmacSecret", "sboxTable");
        assert!(rules("internal/auth/hmac.go", &table).is_empty());
        assert!(view(&table).is_none(), "a table is not read");
    }

    /// Issue 18, generator-13: Ruby's `Array#join` without an argument
    /// joins with nothing; with a separator it is a list.
    #[test]
    fn ruby_bare_join_is_empty() {
        let t = "SENDGRID_KEY = [\n  \"SG.8eud32P-t7x3mSq3Vnxlpc.\",\n  \"oNC3_p7aFGFN7kfJE6uFeyNg8T1_mAxEG18i73hMVt4\"\n].join\n";
        let (v, _) = view(t).expect("a run");
        assert!(
            v.contains("\"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\""),
            "{v}"
        );
        let bound = "parts = [\"abcdefghij\", \"klmnopqrst\"]\nKEY = parts.join\n";
        assert!(view(bound).unwrap().0.contains("\"abcdefghijklmnopqrst\""));
        for t in [
            "TAGS = [\"abcdefghij\", \"klmnopqrst\"].join(\",\")\n",
            "TAGS = [\"abcdefghij\", \"klmnopqrst\"].join \", \"\n",
            "TAGS = [\"abcdefghij\", \"klmnopqrst\"].joined\n",
        ] {
            assert!(
                view(t).is_none_or(|(v, _)| !v.contains("abcdefghijklmnopqrst")),
                "{t}"
            );
        }
    }

    #[test]
    fn char_codes_are_decoded() {
        let codes: Vec<String> = "sk_live_6cWLD0lnl1BmN9dCy59Begbj"
            .bytes()
            .map(|c| c.to_string())
            .collect();
        let t = format!(
            "function getKey() {{\n  return String.fromCharCode(...[{}]);\n}}\n",
            codes.join(", ")
        );
        let (v, runs) = view(&t).expect("a run");
        assert_eq!(v.len(), t.len());
        assert!(
            v.contains("return 'sk_live_6cWLD0lnl1BmN9dCy59Begbj'"),
            "{v}"
        );
        assert_eq!(&t[runs[0].0..runs[0].0 + 6], "String");
        let args = "s = String.fromCharCode(0x67, 0x68, 0x70, 0x5f, 104, 101, 108, 108, 111, 119, 111, 114, 108, 100, 120, 121)\n";
        assert!(view(args).unwrap().0.contains("'ghp_helloworldxy'"));
        for t in [
            "s = String.fromCharCode(10, 104, 101, 108, 108, 111, 119, 111, 114, 108, 100, 120, 121, 122, 97, 98)\n",
            "s = String.fromCharCode(code)\n",
            "s = String.fromCharCode(104, 105)\n",
        ] {
            assert!(view(t).is_none(), "{t}");
        }
    }

    #[test]
    fn the_gate_passes_every_run_layout_and_little_else() {
        use super::may_have_adjacent_run as gate;
        for t in [
            "x = ('abc'\n     'def')\n",
            "x = 'abc' + 'def'\n",
            "x = 'abc' +\n    'def'\n",
            "x = \"abc\" \\\n    \"def\"\n",
        ] {
            assert!(gate(t.as_bytes()), "{t}");
        }
        for t in ["x = f(a + b)\ny = 'abc'\n", "x = 'abc',\ny = 1 + 2\n"] {
            assert!(!gate(t.as_bytes()), "{t}");
        }
    }

    #[test]
    fn other_layouts_are_left_alone() {
        // Shell arguments on one line, a list, prose split over lines,
        // mixed quotes, short runs.
        for t in [
            "curl -H \"Authorization\" \"Bearer-abcdefghijklmnop\"\n",
            "X = [\n    \"abcdefghijklmnop\",\n    \"qrstuvwxyz012345\",\n]\n",
            "msg = (\"this is a long \"\n       \"message for users\")\n",
            "x = \"abcdefghij\"\n    'klmnopqrst'\n",
            "x = \"ab\"\n    \"cd\"\n",
        ] {
            assert!(view(t).is_none(), "{t}");
        }
    }
}
