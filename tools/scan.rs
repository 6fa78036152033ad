//! `secaudit scan [PATH...]`: scans a directory, or with `--history` a git
//! repository's history, and reports the findings. It takes gitleaks'
//! place in scripts, CI and pre-commit: the flags gitleaks users type mean
//! the same here.
//!
//! One directory (default `.`) is the scan root: findings are named
//! relative to it and its `.gitleaks.toml` / `.gitleaksignore` apply. Files,
//! or several paths (pre-commit passes the files of a commit), are named
//! as given, and the current directory's config and ignore file apply.
//!
//! | flag | meaning (gitleaks' flag of the same name unless said) |
//! | --- | --- |
//! | `-f`, `--format`, `--report-format` | `json` (ours, the default), `gitleaks` (gitleaks' JSON report shape), `sarif`, `text`; with `--report-path X.sarif` and no format, `sarif` |
//! | `-r`, `--report-path PATH` | write the report there (`-`: stdout); stdout then stays empty and a one-line summary goes to stderr |
//! | `--exit-code N` | exit status when findings remain (default 1) |
//! | `--redact[=PERCENT]` | hide secrets; bare = 100; `=P` keeps the first (100-P)% of each secret, then `...` |
//! | `--show-secrets` | ours: secrets whole (= `--redact=0`) |
//! | `-c`, `--config`, `--allowlist PATH` | the gitleaks config to use (also `$GITLEAKS_CONFIG`, then `$GITLEAKS_CONFIG_TOML` as content); default: `PATH/.gitleaks.toml` if present |
//! | `-b`, `--baseline-path PATH` | a previous `--format gitleaks` report; findings equal to its entries are not reported |
//! | `-i`, `--gitleaks-ignore-path PATH` | a `.gitleaksignore`, or a directory holding one (default `.`); `PATH/.gitleaksignore` of the scan root is read too |
//!
//! Unlike gitleaks, secrets are hidden unless `--show-secrets`/`--redact=0`
//! (gitleaks shows them unless `--redact`), inline `gitleaks:allow`
//! comments count only with `--honor-inline-ignore`, and an unreadable
//! baseline is an error rather than a logged line. What of a gitleaks
//! config is honoured is in `graders::scanner::Allowlist`; `[extend]` and
//! `minVersion` are ignored with a warning.
//!
//! Exit status, next to gitleaks':
//!
//! | status | secaudit scan | gitleaks |
//! | --- | --- | --- |
//! | 0 | no findings (after allowlists, ignore file, baseline) | no leaks |
//! | `--exit-code` (default 1) | findings | leaks |
//! | 2 | error: bad arguments, unreadable path/config/baseline, git failure | 1 (errors share the leak status); 126 for an unknown flag |

use anyhow::Context;
use graders::scanner::report::gitleaks::{self, Baseline, IgnoreList};
use graders::scanner::{
    BlobCache, Finding, Redaction, ScanConfig, Scanner, rule_catalog, to_json, to_sarif,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The tool version reports carry (SARIF `tool.driver.version`).
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// gitleaks' name for "stdout" as a report path.
const STDOUT_PATH: &str = "-";
/// The config file read from the scan root by default.
const CONFIG_FILE: &str = ".gitleaks.toml";
/// The ignore file read from the scan root and `--gitleaks-ignore-path`.
const IGNORE_FILE: &str = ".gitleaksignore";

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Our findings array (`rule`, `type`, `file`, `line`, ..., `fingerprint`).
    Json,
    /// One line per finding.
    Text,
    /// SARIF 2.1.0 with every rule listed (GitHub code scanning).
    Sarif,
    /// gitleaks' JSON report (`RuleID`, `File`, `StartLine`, `Secret`,
    /// `Commit`, `Fingerprint`, ...), readable by `--baseline-path`.
    Gitleaks,
}

/// Arguments of `secaudit scan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory to scan, or files (named as given); with --history, one git repository.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Scan every blob reachable from any ref, stash, note or reflog.
    #[arg(long)]
    pub history: bool,
    /// With --history: also every other blob in the object database.
    #[arg(long)]
    pub all_objects: bool,
    /// Also report random tokens nothing names a secret (hashes, ids and
    /// signatures among them: higher recall, much lower precision).
    #[arg(long)]
    pub bare_random_tokens: bool,
    /// Report format [default: json; sarif for a --report-path ending .sarif].
    #[arg(long, short = 'f', visible_alias = "report-format", value_enum)]
    pub format: Option<Format>,
    /// Write the report to this file ("-": stdout) instead of stdout.
    #[arg(long, short = 'r')]
    pub report_path: Option<PathBuf>,
    /// Exit status when findings remain.
    #[arg(long, default_value_t = 1)]
    pub exit_code: u8,
    /// Redact secrets: bare = 100 (hidden), =P keeps the first (100-P)%.
    /// Secrets are hidden by default; --redact=0 shows them.
    #[arg(long, value_name = "PERCENT", num_args = 0..=1, require_equals = true, default_missing_value = "100")]
    pub redact: Option<u8>,
    /// Include secret values in the output (same as --redact=0).
    #[arg(long, conflicts_with = "redact")]
    pub show_secrets: bool,
    /// A gitleaks config (.gitleaks.toml) to apply [default: PATH/.gitleaks.toml if present].
    #[arg(
        long,
        short = 'c',
        visible_alias = "allowlist",
        env = "GITLEAKS_CONFIG"
    )]
    pub config: Option<PathBuf>,
    /// A previous `--format gitleaks` report whose findings are not reported again.
    #[arg(long, short = 'b')]
    pub baseline_path: Option<PathBuf>,
    /// A .gitleaksignore file, or a directory holding one (PATH/.gitleaksignore is read too).
    #[arg(long, short = 'i', default_value = ".")]
    pub gitleaks_ignore_path: PathBuf,
    /// Honour inline `gitleaks:allow` / `pragma: allowlist secret` comments.
    #[arg(long)]
    pub honor_inline_ignore: bool,
}

impl Args {
    fn redaction(&self) -> Redaction {
        match (self.show_secrets, self.redact) {
            (true, _) => Redaction::NONE,
            (false, Some(p)) => Redaction::percent(p),
            (false, None) => Redaction::FULL,
        }
    }

    fn format(&self) -> Format {
        self.format.unwrap_or_else(|| {
            match self
                .report_path
                .as_deref()
                .and_then(Path::extension)
                .and_then(|e| e.to_str())
            {
                Some(e) if e.eq_ignore_ascii_case("sarif") => Format::Sarif,
                _ => Format::Json,
            }
        })
    }

    /// The report file, or None for stdout.
    fn report_file(&self) -> Option<&Path> {
        self.report_path
            .as_deref()
            .filter(|p| p.as_os_str() != STDOUT_PATH)
    }
}

/// The gitleaks config in effect, by gitleaks' precedence: `--config` (or
/// `$GITLEAKS_CONFIG`), `$GITLEAKS_CONFIG_TOML`, `ROOT/.gitleaks.toml`.
fn load_config(args: &Args, root_dir: Option<&Path>) -> anyhow::Result<gitleaks::LoadedConfig> {
    if let Some(p) = &args.config {
        return Ok(gitleaks::load_config(p)?);
    }
    if let Ok(text) = std::env::var("GITLEAKS_CONFIG_TOML") {
        return gitleaks::config_from_str(&text).context("$GITLEAKS_CONFIG_TOML");
    }
    match root_dir.map(|d| d.join(CONFIG_FILE)) {
        Some(p) if p.is_file() => Ok(gitleaks::load_config(&p)?),
        _ => Ok(gitleaks::LoadedConfig::default()),
    }
}

/// `.gitleaksignore` entries from `--gitleaks-ignore-path` and the root.
fn load_ignores(args: &Args, root_dir: Option<&Path>) -> anyhow::Result<IgnoreList> {
    let mut files: Vec<PathBuf> = Vec::new();
    let i = &args.gitleaks_ignore_path;
    if i.is_file() {
        files.push(i.clone());
    } else if i.join(IGNORE_FILE).is_file() {
        files.push(i.join(IGNORE_FILE));
    }
    if let Some(d) = root_dir {
        files.push(d.join(IGNORE_FILE));
    }
    let mut list = IgnoreList::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    for f in files {
        let Ok(canon) = f.canonicalize() else {
            continue;
        };
        if seen.contains(&canon) || !canon.is_file() {
            continue;
        }
        for w in list.add_file(&f)? {
            eprintln!("secaudit scan: {}: {w}", f.display());
        }
        seen.push(canon);
    }
    Ok(list)
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let redaction = args.redaction();
    let format = args.format();
    if args.history && args.paths.len() != 1 {
        anyhow::bail!(
            "--history scans one repository, not {} paths",
            args.paths.len()
        );
    }
    let root_dir = match args.paths.as_slice() {
        [one] if one.is_dir() => one.as_path(),
        _ => Path::new("."),
    };
    let root_dir = Some(root_dir);
    let config = load_config(&args, root_dir)?;
    for w in &config.warnings {
        eprintln!("secaudit scan: gitleaks config: {w}");
    }
    let ignores = load_ignores(&args, root_dir)?;
    let baseline = match &args.baseline_path {
        Some(p) => Some(Baseline::load(p)?),
        None => None,
    };
    let rules = rule_catalog(&config.allowlist);
    let cfg = ScanConfig {
        honor_inline_ignore: args.honor_inline_ignore,
        allowlist: config.allowlist,
        bare_random_tokens: args.bare_random_tokens,
        ..ScanConfig::default()
    };
    let mut findings = scan(&args, cfg)?;
    findings.retain(|f| !ignores.suppresses(f));
    let meta = if args.history && (format == Format::Gitleaks || baseline.is_some()) {
        gitleaks::commit_meta(&args.paths[0], &findings)?
    } else {
        BTreeMap::new()
    };
    if let Some(b) = &baseline {
        let shaped = gitleaks::to_gitleaks(&findings, &rules, redaction, &meta);
        let mut keep = shaped.iter().map(|g| !b.contains(g, redaction));
        findings.retain(|_| keep.next().unwrap_or(true));
    }
    let report = render(format, &findings, &rules, redaction, &meta)?;
    match args.report_file() {
        Some(p) => {
            std::fs::write(p, report).with_context(|| format!("writing report {}", p.display()))?;
            eprintln!(
                "secaudit scan: {} finding(s); report written to {}",
                findings.len(),
                p.display()
            );
        }
        None => {
            print!("{report}");
            if format == Format::Text {
                eprintln!("{} finding(s)", findings.len());
            }
        }
    }
    Ok(if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(args.exit_code)
    })
}

/// The findings of the tree or history scan, before ignore file and baseline.
fn scan(args: &Args, cfg: ScanConfig) -> anyhow::Result<Vec<Finding>> {
    // A history scan starts compiling the rules itself, once its walk
    // leaves a core idle.
    let scanner = if args.history {
        Scanner::new_lazy(cfg)
    } else {
        Scanner::new(cfg)
    };
    if args.history {
        // libgit2 re-hashes every object it reads (about a quarter of a
        // cold walk's CPU). git itself never verifies on read, and the
        // scanner reads every byte either way, so this one-shot CLI process
        // turns the check off. The library never does: the server's
        // graders share the process and must see a tampered object as one.
        git2::opts::strict_hash_verification(false);
        let cache = BlobCache::new();
        let repo = &args.paths[0];
        let r = if args.all_objects {
            scanner.scan_odb(repo, &cache)
        } else {
            scanner.scan_history(repo, &cache)
        }
        .with_context(|| format!("scanning history of {}", repo.display()))?;
        if r.budget_exceeded {
            eprintln!("secaudit scan: byte budget exceeded; some blobs were not scanned");
        }
        // One scan per process: the cache (every blob's results and the
        // walk's seen sets) is never read again, and freeing it piece by
        // piece would only delay the report; the process exit frees it.
        std::mem::forget(cache);
        Ok(r.findings)
    } else {
        let r = match args.paths.as_slice() {
            [one] if one.is_dir() => scanner
                .scan_tree(one)
                .with_context(|| format!("scanning {}", one.display()))?,
            paths => {
                // A missing path is an error, as a missing root is.
                for p in paths {
                    std::fs::symlink_metadata(p)
                        .with_context(|| format!("scanning {}", p.display()))?;
                }
                scanner.scan_paths(paths)
            }
        };
        if r.budget_exceeded {
            eprintln!("secaudit scan: byte budget exceeded; some files were not scanned");
        }
        Ok(r.findings)
    }
}

/// The report text in `format`.
fn render(
    format: Format,
    findings: &[Finding],
    rules: &[graders::scanner::RuleInfo],
    redaction: Redaction,
    meta: &BTreeMap<String, gitleaks::CommitMeta>,
) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(&to_json(findings, redaction))? + "\n",
        Format::Sarif => {
            serde_json::to_string_pretty(&to_sarif(findings, rules, VERSION, redaction))? + "\n"
        }
        Format::Gitleaks => {
            serde_json::to_string_pretty(&gitleaks::to_gitleaks(findings, rules, redaction, meta))?
                + "\n"
        }
        Format::Text => {
            let mut out = String::new();
            for f in findings {
                let at = f
                    .commit
                    .as_deref()
                    .map(|c| format!(" @{}", &c[..c.len().min(12)]))
                    .unwrap_or_default();
                let v = if redaction == Redaction::FULL {
                    String::new()
                } else {
                    format!(" {}", redaction.apply(&f.value))
                };
                out.push_str(&format!(
                    "{}:{}:{}: {} ({}){}{}{}\n",
                    f.file,
                    f.line,
                    f.col_start,
                    f.secret_type,
                    f.rule,
                    if f.encoded { " [encoded]" } else { "" },
                    at,
                    v
                ));
            }
            out
        }
    })
}
