//! Hostile inputs: pathological shapes at 100 KB and 1 MB through every
//! rule. Each case runs in a child process (this test binary re-executed
//! with `HOSTILE_CASE` set) killed after 5 s, so a regression to
//! super-linear cost fails the test instead of hanging the suite; the child
//! asserts its own scan finished under 1 s.

use graders::redact::redact_findings;
use graders::scanner::{ScanConfig, Scanner};
use std::process::Command;
use std::time::{Duration, Instant};

const SIZES: [usize; 2] = [100_000, 1_000_000];

fn repeat_to(unit: &str, n: usize) -> String {
    let mut s = unit.repeat(n / unit.len() + 1);
    s.truncate(n);
    s
}

/// Pseudo-random bytes without a dependency (xorshift).
fn noise(n: usize, alphabet: &[u8]) -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &[u8] = b"0123456789abcdef";

fn shape(name: &str, n: usize) -> String {
    match name {
        "assign_run" => repeat_to("a=", n),
        "password_run" => repeat_to("password=", n),
        "password_quote_open" => repeat_to("password=\"", n),
        "base64_line" => noise(n, B64),
        "hex_line" => noise(n, HEX),
        "nested_quotes" => repeat_to("\"'`", n),
        "separators" => repeat_to("/._-@=", n),
        "scheme_run" => repeat_to("a://b:c@", n),
        "pem_begin_run" => repeat_to("-----BEGIN PRIVATE KEY-----", n),
        "prefix_run" => repeat_to("AKIAghp_sk-xoxb-eyJ", n),
        "sql_run" => repeat_to("PASSWORD '", n),
        "newlines" => repeat_to("token: x\n", n),
        "camel_run" => repeat_to("aB", n),
        "hex_dots" => repeat_to("0123456789abcdef.", n),
        "chunk_hex" => repeat_to("chunk 0123456789abcdef.", n),
        "b64_text" => {
            use base64::Engine;
            let inner = repeat_to("token=ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h ", n * 3 / 4);
            base64::engine::general_purpose::STANDARD.encode(inner)
        }
        other => panic!("unknown case {other}"),
    }
}

const CASES: &[&str] = &[
    "assign_run",
    "password_run",
    "password_quote_open",
    "base64_line",
    "hex_line",
    "nested_quotes",
    "separators",
    "scheme_run",
    "pem_begin_run",
    "prefix_run",
    "sql_run",
    "newlines",
    "camel_run",
    "hex_dots",
    "chunk_hex",
    "b64_text",
];

/// The child side: runs one case when `HOSTILE_CASE` is set, else nothing.
#[test]
fn hostile_child() {
    let Ok(case) = std::env::var("HOSTILE_CASE") else {
        return;
    };
    let s = Scanner::new(ScanConfig::default());
    for n in SIZES {
        let input = shape(&case, n);
        let t = Instant::now();
        let f = s.scan_bytes("hostile.txt", input.as_bytes());
        let scan = t.elapsed();
        let t = Instant::now();
        let r = redact_findings(&input);
        let red = t.elapsed();
        eprintln!(
            "{case} {n}: scan {scan:?} ({} findings), redact {red:?} ({} bytes)",
            f.len(),
            r.len()
        );
        assert!(
            scan < Duration::from_secs(1),
            "{case} at {n} bytes: scan took {scan:?}"
        );
        assert!(
            red < Duration::from_secs(1),
            "{case} at {n} bytes: redact took {red:?}"
        );
    }
}

#[test]
fn hostile_shapes_finish_fast() {
    let exe = std::env::current_exe().unwrap();
    let mut failures = Vec::new();
    for case in CASES {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "hostile_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("HOSTILE_CASE", case)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break Some(st);
            }
            if start.elapsed() > Duration::from_secs(5) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        for l in err.lines().filter(|l| l.starts_with(case)) {
            println!("{l}");
        }
        match status {
            Some(st) if st.success() => {}
            Some(st) => failures.push(format!("{case}: child failed ({st}):\n{err}")),
            None => failures.push(format!("{case}: killed after 5 s")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
