//! `ourscan PATH [--history]`: scans a directory (or its git history) with
//! `graders::scanner` and prints the findings as a JSON array with values,
//! the shape of `secaudit scan --format json --show-secrets`. Exit 1 when
//! there are findings, 0 when clean, 2 on error, like the CLI.

use graders::scanner::{BlobCache, ScanConfig, Scanner, to_json};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let history = args.iter().any(|a| a == "--history");
    let Some(path) = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
    else {
        eprintln!("usage: ourscan PATH [--history]");
        return ExitCode::from(2);
    };
    let scanner = Scanner::new(ScanConfig::default());
    let findings = if history {
        match scanner.scan_history(&path, &BlobCache::new()) {
            Ok(s) => s.findings,
            Err(e) => {
                eprintln!("ourscan: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        match scanner.scan_tree(&path) {
            Ok(s) => s.findings,
            Err(e) => {
                eprintln!("ourscan: {e}");
                return ExitCode::from(2);
            }
        }
    };
    println!("{}", to_json(&findings, true));
    ExitCode::from(if findings.is_empty() { 0 } else { 1 })
}
