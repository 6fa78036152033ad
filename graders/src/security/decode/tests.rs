use super::*;
use std::io::Write;

fn layers(data: &[u8]) -> Vec<Layer> {
    let mut v = Vec::new();
    text_layers(data, &mut |l| v.push(l));
    v
}

fn has(data: &[u8], want: &[u8], how: &str) -> bool {
    layers(data)
        .iter()
        .any(|l| l.how.starts_with(how) && l.data.windows(want.len()).any(|w| w == want))
}

const V: &[u8] = b"sk_live_Zq8vLr2NxW5tKp3YaB7c";

fn b64(d: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(d)
}

#[test]
fn base64_with_junk_and_glued_prefix() {
    let enc = b64(V);
    let junk: String = enc
        .chars()
        .enumerate()
        .flat_map(|(i, c)| if i % 3 == 2 { vec![c, '!'] } else { vec![c] })
        .collect();
    assert!(has(junk.as_bytes(), V, "base64"));
    // Glued to a key name: found at another symbol alignment.
    assert!(has(format!("key: {enc}").as_bytes(), V, "base64"));
    let url = enc.replace('+', "-").replace('/', "_").replace('=', "");
    assert!(has(url.as_bytes(), V, "base64"));
    // Wrapped lines.
    let wrapped: String = enc
        .as_bytes()
        .chunks(8)
        .map(|c| format!("{}\n", String::from_utf8_lossy(c)))
        .collect();
    assert!(has(wrapped.as_bytes(), V, "base64"));
}

#[test]
fn base32_and_hex_variants() {
    let b32 = data_b32(V, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
    assert!(has(b32.as_bytes(), V, "base32@"));
    assert!(has(b32.trim_end_matches('=').as_bytes(), V, "base32@"));
    let b32hex = data_b32(V, b"0123456789ABCDEFGHIJKLMNOPQRSTUV");
    assert!(has(b32hex.as_bytes(), V, "base32hex"));
    let spaced: String = V.iter().map(|b| format!("{b:02X} ")).collect();
    assert!(has(spaced.as_bytes(), V, "base16"));
}

fn data_b32(d: &[u8], alpha: &[u8]) -> String {
    let mut out = String::new();
    let mut acc: u64 = 0;
    let mut n = 0;
    for &b in d {
        acc = (acc << 8) | u64::from(b);
        n += 8;
        while n >= 5 {
            n -= 5;
            out.push(alpha[((acc >> n) & 31) as usize] as char);
        }
    }
    if n > 0 {
        out.push(alpha[((acc << (5 - n)) & 31) as usize] as char);
    }
    while !out.len().is_multiple_of(8) {
        out.push('=');
    }
    out
}

fn b85(d: &[u8], alpha: &[u8]) -> String {
    let mut out = String::new();
    for chunk in d.chunks(4) {
        let mut w = [0u8; 4];
        w[..chunk.len()].copy_from_slice(chunk);
        let mut v = u32::from_be_bytes(w);
        let mut digits = [0u8; 5];
        for k in (0..5).rev() {
            digits[k] = alpha[(v % 85) as usize];
            v /= 85;
        }
        out.push_str(std::str::from_utf8(&digits[..chunk.len() + 1]).unwrap());
    }
    out
}

#[test]
fn base85_alphabets() {
    let a85: Vec<u8> = (b'!'..=b'u').collect();
    assert!(has(b85(V, &a85).as_bytes(), V, "ascii85"));
    let with_delims = format!("<~{}~>", b85(V, &a85));
    assert!(has(with_delims.as_bytes(), V, "ascii85"));
    let rfc =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
    assert!(has(b85(V, rfc).as_bytes(), V, "base85"));
    let z85 =
        b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
    assert!(has(b85(V, z85).as_bytes(), V, "z85"));
    // Ascii85's `z` for four zero bytes.
    let mut zeros = vec![0u8; 4];
    zeros.extend_from_slice(V);
    let enc = b85(&zeros, &a85).replacen("!!!!!", "z", 1);
    assert!(has(enc.as_bytes(), V, "ascii85"));
}

#[test]
fn base58_roundtrip() {
    // Encode with the same big-number arithmetic in reverse.
    let mut num: Vec<u32> = Vec::new();
    for &b in V {
        let mut carry = u32::from(b);
        for d in num.iter_mut() {
            carry += *d * 256;
            *d = carry % 58;
            carry /= 58;
        }
        while carry > 0 {
            num.push(carry % 58);
            carry /= 58;
        }
    }
    let enc: String = num.iter().rev().map(|&d| B58[d as usize] as char).collect();
    assert!(has(enc.as_bytes(), V, "base58"));
    // A plain word is not decoded.
    assert!(
        layers(b"configurationmanagerfactory")
            .iter()
            .all(|l| !l.how.starts_with("base58"))
    );
}

#[test]
fn escapes_any_case() {
    let lower: String = V.iter().map(|b| format!("\\x{b:02x}")).collect();
    let upper: String = V.iter().map(|b| format!("\\x{b:02X}")).collect();
    let u4: String = V.iter().map(|b| format!("\\u{b:04X}")).collect();
    let u8_: String = V.iter().map(|b| format!("\\U{b:08x}")).collect();
    let braces: String = V.iter().map(|b| format!("\\u{{{b:x}}}")).collect();
    let octal: String = V.iter().map(|b| format!("\\{b:03o}")).collect();
    let pct: String = V.iter().map(|b| format!("%{b:02X}")).collect();
    let pct_u: String = V.iter().map(|b| format!("%u{b:04x}")).collect();
    let html_dec: String = V.iter().map(|b| format!("&#{b};")).collect();
    let html_hex: String = V.iter().map(|b| format!("&#X{b:x};")).collect();
    let uplus: String = V.iter().map(|b| format!("U+{b:04X} ")).collect();
    for s in [
        lower, upper, u4, u8_, braces, octal, pct, pct_u, html_dec, html_hex,
    ] {
        assert!(has(s.as_bytes(), V, "unescaped"), "{s}");
    }
    // `U+0041 U+004B` leaves the separators: the needle automaton's
    // normalised view joins them.
    let l = layers(uplus.as_bytes());
    let un = l.iter().find(|l| l.how == "unescaped").unwrap();
    let joined: Vec<u8> = un.data.iter().copied().filter(|b| *b != b' ').collect();
    assert!(joined.windows(V.len()).any(|w| w == V));
    // A surrogate pair joins into one character.
    let mut out = Vec::new();
    unescape_layer(b"\\ud83d\\ude00\\x41\\x42\\x43", &mut |l| out.push(l));
    assert_eq!(out[0].data, "\u{1F600}ABC".as_bytes());
}

#[test]
fn number_lists() {
    let dec: String = V.iter().map(|b| format!("{b}, ")).collect();
    assert!(has(format!("[{dec}]").as_bytes(), V, "numbers"));
    let hex: String = V.iter().map(|b| format!("0x{b:02x},")).collect();
    assert!(has(hex.as_bytes(), V, "numbers"));
    // Version numbers and dates are not lists.
    assert!(
        layers(b"version 1.2.3 on 2024-01-02")
            .iter()
            .all(|l| !l.how.starts_with("numbers"))
    );
}

#[test]
fn wide_text_both_orders() {
    for unit in [2usize, 4] {
        for be in [false, true] {
            let mut d = b"x".to_vec();
            for &b in V {
                let mut u = vec![0u8; unit];
                u[if be { unit - 1 } else { 0 }] = b;
                d.extend_from_slice(&u);
            }
            assert!(has(&d, V, &format!("utf-{}", unit * 8)), "{unit} {be}");
        }
    }
}

fn streams_of(data: &[u8]) -> Vec<Vec<u8>> {
    stream_candidates(data, &[], true)
        .into_iter()
        .map(|(at, m)| decompress(data, at, m, 1 << 20).data)
        .collect()
}

fn found_in_streams(data: &[u8]) -> bool {
    streams_of(data)
        .iter()
        .any(|o| o.windows(V.len()).any(|w| w == V))
}

#[test]
fn compression_by_trial() {
    use flate2::Compression;
    use flate2::write::{DeflateEncoder, ZlibEncoder};
    let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
    d.write_all(V).unwrap();
    let raw = d.finish().unwrap();
    assert!(found_in_streams(&raw), "raw deflate at offset 0");
    // Raw deflate inside a layer, at a stream start the layer declares.
    let mut prefixed = b"junk".to_vec();
    prefixed.extend_from_slice(&raw);
    let hit = stream_candidates(&prefixed, &[4], false)
        .into_iter()
        .any(|(at, m)| {
            decompress(&prefixed, at, m, 1 << 20)
                .data
                .windows(V.len())
                .any(|w| w == V)
        });
    assert!(hit);
    // zlib with a 512-byte window: header 0x08 | 0<<4 ... 0x18 etc.
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    z.write_all(V).unwrap();
    let mut z = z.finish().unwrap();
    z[0] = 0x18; // CINFO 1: 512-byte window (the stream uses no distance).
    let fl = (31 - (u16::from(z[0]) * 256 + u16::from(z[1] & 0xe0)) % 31) as u8;
    z[1] = (z[1] & 0xe0) | (fl % 31);
    let mut padded = b"hdr:".to_vec();
    padded.extend_from_slice(&z);
    assert!(found_in_streams(&padded), "small-window zlib at any offset");
    let mut bzp = b"xx".to_vec();
    bzp.extend_from_slice(&bz_full());
    assert!(found_in_streams(&bzp), "bzip2");
    let mut xz = Vec::new();
    lzma_rs::xz_compress(&mut std::io::Cursor::new(V), &mut xz).unwrap();
    let mut xzp = b"abc".to_vec();
    xzp.extend_from_slice(&xz);
    assert!(found_in_streams(&xzp), "xz");
    let mut lz = Vec::new();
    lzma_rs::lzma_compress(&mut std::io::Cursor::new(V), &mut lz).unwrap();
    assert!(found_in_streams(&lz), "lzma");
    let zs = ruzstd::encoding::compress_to_vec(V, ruzstd::encoding::CompressionLevel::Fastest);
    let mut zsp = b"q".to_vec();
    zsp.extend_from_slice(&zs);
    assert!(found_in_streams(&zsp), "zstd");
}

fn bz_full() -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(V).unwrap();
    e.finish().unwrap()
}

#[test]
fn zip_member_whatever_the_method_says() {
    use flate2::Compression;
    use flate2::write::DeflateEncoder;
    let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
    d.write_all(V).unwrap();
    let body = d.finish().unwrap();
    let mut zip = b"PK\x03\x04".to_vec();
    // Method field says "stored" (0): the data is deflated anyway.
    zip.extend_from_slice(&[20, 0, 0, 0, 0, 0]);
    zip.extend_from_slice(&[0; 16]);
    zip.extend_from_slice(&5u16.to_le_bytes());
    zip.extend_from_slice(&0u16.to_le_bytes());
    zip.extend_from_slice(b"a.txt");
    zip.extend_from_slice(&body);
    let mut file = b"prefix".to_vec();
    file.extend_from_slice(&zip);
    assert!(found_in_streams(&file));
}

#[test]
fn bombs_stop_at_the_cap() {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    e.write_all(&vec![0u8; 8 << 20]).unwrap();
    let bz = e.finish().unwrap();
    let out = decompress(&bz, 0, "bzip2", 1 << 16);
    assert!(out.truncated && out.data.len() == 1 << 16);
}

#[test]
fn plain_text_makes_few_layers() {
    let text =
        b"def handler(event, context):\n    return {'status': 200, 'body': json.dumps(event)}\n";
    let n: usize = layers(&text.repeat(50)).iter().map(|l| l.data.len()).sum();
    assert!(n < text.len() * 50 * 8, "{n}");
}

#[test]
#[ignore = "diagnostic"]
fn layer_census() {
    let path = std::env::var("CENSUS_FILE").unwrap();
    let data = std::fs::read(path).unwrap();
    let mut by: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    text_layers(&data, &mut |l| {
        let k = l.how.split('@').next().unwrap().to_string();
        let e = by.entry(k).or_default();
        e.0 += 1;
        e.1 += l.data.len();
    });
    println!("{} bytes: {by:?}", data.len());
}
