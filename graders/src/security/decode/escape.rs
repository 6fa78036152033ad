//! Escapes rewritten in one pass (`\xHH`, `\uHHHH`, `%HH`, character
//! references, …) and number lists (char-code arrays).

use super::*;

pub(super) fn hex_val(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// Up to `max` hex digits at `data[at..]`, at least `min`.
pub(super) fn hex_at(data: &[u8], at: usize, min: usize, max: usize) -> Option<(u32, usize)> {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max {
        match data.get(at + n).copied().and_then(hex_val) {
            Some(d) => v = v.wrapping_mul(16).wrapping_add(d),
            None => break,
        }
        n += 1;
    }
    (n >= min).then_some((v, n))
}

/// Pushes code point `cp` as UTF-8, or as one byte when `latin1` and it
/// fits (`html.unescape(s).encode("latin-1")`: binary written as text).
pub(super) fn push_cp(out: &mut Vec<u8>, cp: u32, latin1: bool) {
    if latin1 && cp <= 0xff {
        out.push(cp as u8);
        return;
    }
    push_char(out, cp);
}

pub(super) fn push_char(out: &mut Vec<u8>, cp: u32) {
    match char::from_u32(cp) {
        Some(c) => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        None => out.push(b'?'),
    }
}

/// One escape at `data[i..]`: (bytes it stands for, length, is a real
/// escape rather than a plain `\n`-style one).
pub(super) fn escape_at(data: &[u8], i: usize, latin1: bool) -> Option<(Vec<u8>, usize, bool)> {
    let b = data[i];
    let next = data.get(i + 1).copied();
    let mut out = Vec::new();
    match (b, next) {
        (b'\\', Some(b'x' | b'X')) => {
            let (v, n) = hex_at(data, i + 2, 1, 2)?;
            out.push(v as u8);
            Some((out, 2 + n, true))
        }
        (b'\\', Some(b'u')) if data.get(i + 2) == Some(&b'{') => {
            let (v, n) = hex_at(data, i + 3, 1, 8)?;
            (data.get(i + 3 + n) == Some(&b'}')).then_some(())?;
            push_cp(&mut out, v, latin1);
            Some((out, 4 + n, true))
        }
        (b'\\' | b'%', Some(b'u' | b'U')) if next == Some(b'u') || b == b'%' => {
            let (v, _) = hex_at(data, i + 2, 4, 4)?;
            // A surrogate pair written as two escapes.
            if (0xD800..0xDC00).contains(&v)
                && data.get(i + 6) == Some(&b)
                && matches!(data.get(i + 7), Some(b'u' | b'U'))
                && let Some((lo, 4)) = hex_at(data, i + 8, 4, 4)
                && (0xDC00..0xE000).contains(&lo)
            {
                push_cp(
                    &mut out,
                    0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00),
                    latin1,
                );
                return Some((out, 12, true));
            }
            push_cp(&mut out, v, latin1);
            Some((out, 6, true))
        }
        (b'\\', Some(b'U')) => {
            let (v, n) = hex_at(data, i + 2, 8, 8)?;
            push_cp(&mut out, v, latin1);
            Some((out, 2 + n, true))
        }
        (b'U' | b'u', Some(b'+')) => {
            let (v, n) = hex_at(data, i + 2, 4, 6)?;
            push_cp(&mut out, v, latin1);
            Some((out, 2 + n, true))
        }
        (b'\\', Some(b'0'..=b'7')) => {
            let mut v: u32 = 0;
            let mut n = 0;
            while n < 3 && matches!(data.get(i + 1 + n), Some(b'0'..=b'7')) {
                v = v * 8 + u32::from(data[i + 1 + n] - b'0');
                n += 1;
            }
            out.push(v as u8);
            Some((out, 1 + n, true))
        }
        (b'\\', Some(c)) => {
            let v = match c {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'a' => 7,
                b'b' => 8,
                b'f' => 12,
                b'v' => 11,
                b'e' => 27,
                b'\\' | b'\'' | b'"' | b'/' | b'`' | b'$' | b'?' => c,
                _ => return None,
            };
            out.push(v);
            Some((out, 2, false))
        }
        (b'%', Some(_)) => {
            let (v, 2) = hex_at(data, i + 1, 2, 2)? else {
                return None;
            };
            out.push(v as u8);
            Some((out, 3, true))
        }
        (b'&', Some(b'#')) => {
            let (v, n) = if matches!(data.get(i + 2), Some(b'x' | b'X')) {
                let (v, n) = hex_at(data, i + 3, 1, 8)?;
                (v, 3 + n)
            } else {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 10 && data.get(i + 2 + n).is_some_and(u8::is_ascii_digit) {
                    v = v
                        .saturating_mul(10)
                        .saturating_add(u32::from(data[i + 2 + n] - b'0'));
                    n += 1;
                }
                (n > 0).then_some(())?;
                (v, 2 + n)
            };
            push_cp(&mut out, v, latin1);
            let semi = usize::from(data.get(i + n) == Some(&b';'));
            Some((out, n + semi, true))
        }
        (b'&', Some(_)) => {
            for (name, c) in [
                (&b"&amp;"[..], b'&'),
                (b"&lt;", b'<'),
                (b"&gt;", b'>'),
                (b"&quot;", b'"'),
                (b"&apos;", b'\''),
            ] {
                if data[i..].len() >= name.len()
                    && data[i..i + name.len()].eq_ignore_ascii_case(name)
                {
                    out.push(c);
                    return Some((out, name.len(), false));
                }
            }
            None
        }
        _ => None,
    }
}

/// The buffer with every escape replaced by what it stands for, when it has
/// at least [`MIN_ESCAPES`]; code points above U+007F as UTF-8, and when
/// some are at most U+00FF, once more as single bytes (binary written as
/// Latin-1 text). Runs of escapes start new possible streams.
pub(super) fn unescape_layer(data: &[u8], out: &mut dyn FnMut(Layer)) {
    // Cheap test first: most buffers have none of the lead bytes.
    if memchr::memchr3(b'\\', b'%', b'&', data).is_none() && memchr::memchr(b'+', data).is_none() {
        return;
    }
    for latin1 in [false, true] {
        let mut res = Vec::with_capacity(data.len());
        let mut starts = Vec::new();
        let mut count = 0;
        let mut run = 0;
        let mut high = false;
        let mut i = 0;
        while i < data.len() {
            if matches!(data[i], b'\\' | b'%' | b'&' | b'U' | b'u')
                && let Some((bytes, n, real)) = escape_at(data, i, latin1)
            {
                if real {
                    count += 1;
                    if run == 0 {
                        starts.push(res.len());
                    }
                    run += 1;
                }
                high |= bytes.len() > 1 || bytes.first().is_some_and(|b| *b >= 0x80);
                res.extend_from_slice(&bytes);
                i += n;
                continue;
            }
            run = 0;
            res.push(data[i]);
            i += 1;
        }
        if count < MIN_ESCAPES {
            return;
        }
        out(Layer {
            how: if latin1 {
                "unescaped latin-1".into()
            } else {
                "unescaped".into()
            },
            data: res,
            starts,
        });
        if !high {
            return;
        }
    }
}

/// Lists of small numbers (`65, 75, 0x49`, `[0o101]`): char-code arrays.
pub(super) fn number_list_layers(data: &[u8], out: &mut dyn FnMut(Layer)) {
    let mut i = 0;
    while i < data.len() {
        if !data[i].is_ascii_digit() || (i > 0 && data[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        let mut bytes = Vec::new();
        let mut j = i;
        while let Some((v, n)) = number_at(data, j) {
            if v > 0x10FFFF {
                break;
            }
            if v <= 0xff {
                bytes.push(v as u8);
            } else {
                push_char(&mut bytes, v);
            }
            j += n;
            let mut k = j;
            let mut sep = false;
            while k < data.len() && (data[k] == b',' || data[k].is_ascii_whitespace()) {
                sep |= data[k] == b',';
                k += 1;
            }
            if !sep || k - j > 8 {
                break;
            }
            j = k;
        }
        if bytes.len() >= MIN_LAYER {
            out(layer(format!("numbers@{start}"), bytes));
        }
        i = j.max(i + 1);
    }
}

pub(super) fn number_at(data: &[u8], i: usize) -> Option<(u32, usize)> {
    if data.get(i) == Some(&b'0') && matches!(data.get(i + 1), Some(b'x' | b'X')) {
        let (v, n) = hex_at(data, i + 2, 1, 6)?;
        return Some((v, 2 + n));
    }
    let mut v: u32 = 0;
    let mut n = 0;
    while n < 7 && data.get(i + n).is_some_and(u8::is_ascii_digit) {
        v = v * 10 + u32::from(data[i + n] - b'0');
        n += 1;
    }
    if n == 0
        || data
            .get(i + n)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.')
    {
        return None;
    }
    Some((v, n))
}
