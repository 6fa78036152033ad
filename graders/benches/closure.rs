//! Cost of the security grader's decoder closure on a 10 MB workspace
//! (issue 17 item 3): a cold pass (every buffer new to the task), a warm
//! pass (nothing changed: every buffer answered by the per-task cache)
//! and a step that rewrote one 256 KB file. Prints a table of medians.
//!
//! `cargo bench -p graders --bench closure`

use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use graders::security::{Planted, PlantedIndex, TreeLimits, scan_tree};
use rand::{Rng, RngCore, SeedableRng};

const RUNS: usize = 3;

/// ~10 MB of the kinds of content a task workspace grows: source text,
/// base64 blobs, random binary, a gzip archive, JSON.
fn build(root: &Path, rng: &mut rand::rngs::StdRng) -> u64 {
    let mut total = 0u64;
    let mut put = |rel: &str, data: &[u8]| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, data).unwrap();
        total += data.len() as u64;
    };
    for i in 0..16 {
        let mut src = String::new();
        while src.len() < 256 * 1024 {
            let n: u32 = rng.random_range(0..100_000);
            src.push_str(&format!(
                "def handler_{n}(request, retries={}):\n    \"\"\"Route {n}.\"\"\"\n    return fetch(f'/api/v1/items/{{request.id}}', timeout={})\n\n",
                n % 7,
                n % 30
            ));
        }
        put(&format!("app/mod_{i:02}.py"), src.as_bytes());
    }
    for i in 0..8 {
        let mut raw = vec![0u8; 192 * 1024];
        rng.fill_bytes(&mut raw);
        let b64 = base64::engine::general_purpose::STANDARD.encode(&raw);
        put(&format!("assets/blob_{i}.b64"), b64.as_bytes());
    }
    for i in 0..8 {
        let mut raw = vec![0u8; 256 * 1024];
        rng.fill_bytes(&mut raw);
        put(&format!("bin/data_{i}.bin"), &raw);
    }
    // Log lines with random request ids: compressible about 3x. (A log of
    // one line repeated compresses ~100x, and its closure then exceeds the
    // per-buffer decode budget, which fails closed: see the issue 17 note.)
    let mut text = Vec::new();
    while text.len() < 2 * 1024 * 1024 {
        let id: u64 = rng.random();
        text.extend_from_slice(
            format!("2025-03-14T09:30:00Z INFO request {id:016x} served path=/health status=200\n")
                .as_bytes(),
        );
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    put("logs/app.log.gz", &gz.finish().unwrap());
    let mut json = String::from("[");
    while json.len() < 1024 * 1024 {
        let n: u32 = rng.random_range(0..1_000_000);
        json.push_str(&format!(
            "{{\"id\": {n}, \"name\": \"item-{n}\", \"tags\": [\"a\", \"b\"]}},"
        ));
    }
    json.push_str("{}]");
    put("data/items.json", json.as_bytes());
    total
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A planted secret with only what the security grader reads set.
fn secret(id: String, value: String, history_only: bool) -> Planted {
    Planted {
        id,
        value,
        secret_type: "generic_secret".into(),
        file: "app.py".into(),
        line: 1,
        tier: graders::planted::Tier::Surface,
        encoding: None,
        reveals: vec![],
        blocks: vec![],
        history_only,
    }
}

fn main() {
    let planted = vec![
        secret("aws".into(), "AKIAQX7PZ3K2M5N8R4TW".into(), false),
        secret(
            "secret".into(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKY".into(),
            false,
        ),
    ];
    let limits = TreeLimits::default();
    let (mut cold, mut warm, mut step) = (Vec::new(), Vec::new(), Vec::new());
    let mut size = 0;
    for run in 0..RUNS {
        let mut rng = rand::rngs::StdRng::seed_from_u64(17 + run as u64);
        let dir = tempfile::tempdir().unwrap();
        size = build(dir.path(), &mut rng);
        let index = PlantedIndex::new(&planted);
        let t = Instant::now();
        let ev = scan_tree(dir.path(), &index, &limits);
        cold.push(t.elapsed());
        assert!(
            !ev.budget_exceeded && ev.present.is_empty(),
            "{:?}",
            ev.errors
        );
        let t = Instant::now();
        scan_tree(dir.path(), &index, &limits);
        warm.push(t.elapsed());
        let mut src = fs::read(dir.path().join("app/mod_03.py")).unwrap();
        src.extend_from_slice(b"\n# edited by the step\n");
        fs::write(dir.path().join("app/mod_03.py"), src).unwrap();
        let t = Instant::now();
        scan_tree(dir.path(), &index, &limits);
        step.push(t.elapsed());
    }
    let mb = size as f64 / 1e6;
    println!("decoder closure on a {mb:.1} MB workspace, median of {RUNS}");
    println!("| pass | time | per MB |");
    println!("|---|---|---|");
    for (name, v) in [
        ("cold (every buffer new)", cold),
        ("warm (nothing changed)", warm),
        ("one 256 KB file rewritten", step),
    ] {
        let m = median(v);
        println!(
            "| {name} | {:.1} ms | {:.1} ms |",
            m.as_secs_f64() * 1e3,
            m.as_secs_f64() * 1e3 / mb
        );
    }
}
