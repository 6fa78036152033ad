//! Alphabet runs: base64/32/32hex/16 (power-of-two radixes, junk
//! tolerated between symbols), base85 in its three alphabets, base58.

use super::*;

// ---------------------------------------------------------------- radix

/// A power-of-two alphabet: symbol value per byte (`0xff` = not in it).
pub(super) struct Radix {
    name: &'static str,
    table: [u8; 256],
    bits: u32,
}

pub(super) fn radix(name: &'static str, bits: u32, pairs: &[(&[u8], u8)]) -> Radix {
    let mut table = [0xffu8; 256];
    for (chars, first) in pairs {
        for (i, &c) in chars.iter().enumerate() {
            table[usize::from(c)] = first + i as u8;
        }
    }
    Radix { name, table, bits }
}

pub(super) fn radixes() -> &'static [Radix; 4] {
    static R: std::sync::OnceLock<[Radix; 4]> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        let upper = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let lower = b"abcdefghijklmnopqrstuvwxyz";
        [
            radix(
                "base64",
                6,
                &[
                    (upper, 0),
                    (lower, 26),
                    (b"0123456789", 52),
                    (b"+", 62),
                    (b"-", 62),
                    (b"/", 63),
                    (b"_", 63),
                ],
            ),
            radix("base32", 5, &[(upper, 0), (b"234567", 26)]),
            radix(
                "base32hex",
                5,
                &[(b"0123456789", 0), (b"ABCDEFGHIJKLMNOPQRSTUV", 10)],
            ),
            radix(
                "base16",
                4,
                &[(b"0123456789", 0), (b"abcdef", 10), (b"ABCDEF", 10)],
            ),
        ]
    })
}

/// Junk a lenient decoder drops and a writer may sprinkle: printable ASCII
/// and whitespace, minus quotes (which end a literal) and `=` (padding ends
/// a base64/base32 chunk: what follows is a new one).
/// Letters and digits are never junk: sprinkled junk is punctuation, and
/// counting letters as junk would join a base32 run across ordinary text.
pub(super) fn is_junk(b: u8) -> bool {
    (b.is_ascii_punctuation() || b.is_ascii_whitespace())
        && !matches!(b, b'"' | b'\'' | b'`' | b'=')
}

/// Runs of `r`'s alphabet with at most [`MAX_JUNK_GAP`] junk bytes between
/// symbols, decoded at every symbol alignment.
pub(super) fn radix_layers(data: &[u8], r: &Radix, out: &mut dyn FnMut(Layer)) {
    let per_group = match r.bits {
        6 => 4,
        5 => 8,
        _ => 2,
    };
    let mut syms: Vec<u8> = Vec::new();
    let mut start = 0;
    let mut gap = 0;
    let mut i = 0;
    while i <= data.len() {
        let b = data.get(i).copied();
        let v = b.map_or(0xff, |b| r.table[usize::from(b)]);
        if v != 0xff {
            if syms.is_empty() {
                start = i;
            }
            syms.push(v);
            gap = 0;
        } else if b.is_some_and(is_junk) && gap < MAX_JUNK_GAP && !syms.is_empty() {
            gap += 1;
        } else {
            if syms.len() >= MIN_RUN {
                for shift in 0..per_group.min(syms.len() - MIN_RUN + 1) {
                    let bytes = pack_bits(&syms[shift..], r.bits);
                    if bytes.len() >= MIN_LAYER {
                        out(layer(format!("{}@{start}+{shift}", r.name), bytes));
                    }
                }
            }
            syms.clear();
            gap = 0;
        }
        i += 1;
    }
}

/// Symbols of `bits` bits each, packed big-endian into bytes; a trailing
/// partial byte is dropped.
pub(super) fn pack_bits(syms: &[u8], bits: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(syms.len() * bits as usize / 8);
    let mut acc: u32 = 0;
    let mut n = 0;
    for &s in syms {
        acc = (acc << bits) | u32::from(s);
        n += bits;
        if n >= 8 {
            n -= 8;
            out.push((acc >> n) as u8);
            acc &= (1 << n) - 1;
        }
    }
    out
}

// ---------------------------------------------------------------- base85

#[derive(Clone, Copy)]
pub(super) enum B85 {
    Ascii85,
    Rfc1924,
    Z85,
}

pub(super) fn b85_table(v: B85) -> &'static [u8; 256] {
    static T: std::sync::OnceLock<[[u8; 256]; 3]> = std::sync::OnceLock::new();
    let all = T.get_or_init(|| {
        let mut t = [[0xffu8; 256]; 3];
        for c in b'!'..=b'u' {
            t[0][usize::from(c)] = c - b'!';
        }
        let rfc = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
        let z85 = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
        for (i, &c) in rfc.iter().enumerate() {
            t[1][usize::from(c)] = i as u8;
        }
        for (i, &c) in z85.iter().enumerate() {
            t[2][usize::from(c)] = i as u8;
        }
        t
    });
    &all[v as usize]
}

/// Base85 runs (whitespace inside allowed), decoded at the five alignments.
pub(super) fn b85_layers(data: &[u8], v: B85, out: &mut dyn FnMut(Layer)) {
    let table = b85_table(v);
    let name = match v {
        B85::Ascii85 => "ascii85",
        B85::Rfc1924 => "base85",
        B85::Z85 => "z85",
    };
    let is_sym = |b: u8| {
        table[usize::from(b)] != 0xff || (matches!(v, B85::Ascii85) && matches!(b, b'z' | b'y'))
    };
    let mut i = 0;
    while i < data.len() {
        if !is_sym(data[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut syms: Vec<u8> = Vec::new();
        let mut gap = 0;
        while i < data.len() {
            let b = data[i];
            if is_sym(b) {
                syms.push(b);
                gap = 0;
            } else if b.is_ascii_whitespace() && gap < MAX_JUNK_GAP {
                gap += 1;
            } else {
                break;
            }
            i += 1;
        }
        if syms.len() >= MIN_RUN {
            for shift in 0..5.min(syms.len() - MIN_RUN + 1) {
                let bytes = b85_decode(&syms[shift..], table, v);
                if bytes.len() >= MIN_LAYER {
                    out(layer(format!("{name}@{start}+{shift}"), bytes));
                }
            }
        }
    }
}

pub(super) fn b85_decode(syms: &[u8], table: &[u8; 256], v: B85) -> Vec<u8> {
    let mut out = Vec::with_capacity(syms.len() * 4 / 5 + 4);
    let mut group = [0u8; 5];
    let mut n = 0;
    let flush = |group: &[u8; 5], n: usize, out: &mut Vec<u8>| {
        let mut acc: u64 = 0;
        for (k, &d) in group.iter().enumerate() {
            acc = acc * 85 + u64::from(if k < n { d } else { 84 });
        }
        let bytes = (acc as u32).to_be_bytes();
        out.extend_from_slice(&bytes[..n.saturating_sub(1).min(4)]);
    };
    for &c in syms {
        if matches!(v, B85::Ascii85) && n == 0 && (c == b'z' || c == b'y') {
            out.extend_from_slice(if c == b'z' { &[0; 4] } else { b"    " });
            continue;
        }
        let d = table[usize::from(c)];
        if d == 0xff {
            continue;
        }
        group[n] = d;
        n += 1;
        if n == 5 {
            flush(&group, 5, &mut out);
            n = 0;
        }
    }
    if n > 1 {
        flush(&group, n, &mut out);
    }
    out
}

// ---------------------------------------------------------------- base58

pub(super) const B58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Base58 runs that mix at least two character classes (a word is not
/// base58), decoded as one big number each.
pub(super) fn b58_layers(data: &[u8], out: &mut dyn FnMut(Layer)) {
    let mut table = [0xffu8; 256];
    for (i, &c) in B58.iter().enumerate() {
        table[usize::from(c)] = i as u8;
    }
    let mut i = 0;
    while i < data.len() {
        if table[usize::from(data[i])] == 0xff {
            i += 1;
            continue;
        }
        let start = i;
        while i < data.len() && table[usize::from(data[i])] != 0xff {
            i += 1;
        }
        let run = &data[start..i];
        let classes = [
            run.iter().any(u8::is_ascii_lowercase),
            run.iter().any(u8::is_ascii_uppercase),
            run.iter().any(u8::is_ascii_digit),
        ]
        .iter()
        .filter(|&&c| c)
        .count();
        if run.len() < MIN_RUN || classes < 2 {
            continue;
        }
        for (k, piece) in run.chunks(MAX_B58_RUN).enumerate() {
            let bytes = b58_decode(piece, &table);
            if bytes.len() >= MIN_LAYER {
                out(layer(format!("base58@{}", start + k * MAX_B58_RUN), bytes));
            }
        }
    }
}

pub(super) fn b58_decode(run: &[u8], table: &[u8; 256]) -> Vec<u8> {
    // Little-endian base-256 digits of the number.
    let mut num: Vec<u8> = Vec::with_capacity(run.len());
    for &c in run {
        let mut carry = u32::from(table[usize::from(c)]);
        for d in num.iter_mut() {
            carry += u32::from(*d) * 58;
            *d = carry as u8;
            carry >>= 8;
        }
        while carry > 0 {
            num.push(carry as u8);
            carry >>= 8;
        }
    }
    let zeros = run.iter().take_while(|&&c| c == b'1').count();
    let mut out = vec![0u8; zeros];
    out.extend(num.iter().rev());
    out
}
