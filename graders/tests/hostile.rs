//! Hostile inputs: pathological shapes at 100 KB and 1 MB through every
//! rule and the redactor. Each case runs in a child process (this test
//! binary re-executed with `HOSTILE_CASE` set) killed after a minute, so a
//! hang fails the test instead of the suite. The child compares costs
//! within its own run, never against a clock: the thread's CPU time (best
//! of [`REPS`]) on the 1 MB shape must stay within [`MAX_GROWTH`] of the
//! 100 KB one. Linear cost grows 10x over that step and quadratic 100x, so
//! a shape that makes a rule or the redactor super-linear fails on any
//! machine, and a slow or loaded one fails nothing.

use graders::redact::redact_findings;
use graders::scanner::{ScanConfig, Scanner};
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs of each measurement; the least CPU time counts (the others carry
/// the machine's noise: page faults, frequency, another process's cache).
const REPS: usize = 3;
/// How much more the 1 MB shape may cost than the 100 KB one: 10x is
/// linear, 100x quadratic; windows and findings lists add a little.
const MAX_GROWTH: f64 = 25.0;
/// CPU time below which a comparison is noise, whatever the ratio.
const FLOOR: Duration = Duration::from_millis(20);
/// A child still running after this is killed and counted as a hang.
const HANG: Duration = Duration::from_secs(60);

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

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer to a timespec for the calling thread's clock.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "thread CPU clock");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Least CPU time of [`REPS`] runs of `f`, and its last result.
fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut least = Duration::MAX;
    let mut out = None;
    for _ in 0..REPS {
        let t = thread_cpu();
        out = Some(f());
        least = least.min(thread_cpu() - t);
    }
    (least, out.expect("REPS > 0"))
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
    // Compile what the shape needs before anything is timed.
    s.scan_bytes("warm.txt", shape(&case, 1000).as_bytes());
    let mut costs = Vec::new();
    for n in SIZES {
        let input = shape(&case, n);
        let (scan, f) = best(|| s.scan_bytes("hostile.txt", input.as_bytes()));
        let (red, r) = best(|| redact_findings(&input));
        eprintln!(
            "{case} {n}: scan {scan:?} of CPU ({} findings), redact {red:?} ({} bytes)",
            f.len(),
            r.len()
        );
        costs.push((scan, red));
    }
    let [(scan_small, red_small), (scan_big, red_big)] = costs[..] else {
        unreachable!("two sizes")
    };
    for (what, small, big) in [
        ("scan", scan_small, scan_big),
        ("redact", red_small, red_big),
    ] {
        assert!(
            big < FLOOR || big.as_secs_f64() <= MAX_GROWTH * small.as_secs_f64(),
            "{case}: {what} took {big:?} of CPU at {} bytes against {small:?} at {}: \
             more than {MAX_GROWTH}x for 10x the input",
            SIZES[1],
            SIZES[0]
        );
    }
}

/// A rule or the redactor that a hostile shape makes super-linear shows
/// in its cost relative to ordinary code measured in the same run.
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
            if start.elapsed() > HANG {
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
            None => failures.push(format!("{case}: killed after {HANG:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
