//! The secret scanner: the harness's redactor (seed 000, "What is redacted,
//! and what cannot be") turned into a scanner over bytes, a working tree or
//! a git object graph.
//!
//! Detectors, in priority order when their spans overlap:
//! 1. provider rules ([`rules`]): AWS, GitHub, Slack, Stripe, Google/Firebase,
//!    service tokens, PEM keys, JWTs, connection strings, SQL passwords, npm,
//!    SendGrid, Twilio, OpenAI/Anthropic, Azure storage;
//! 2. base64/hex runs decoded and rescanned (findings point at the encoding,
//!    `encoded: true`);
//! 3. credential-named assignments (`KEY=value`, not when the value is code);
//! 4. the random-token rule with an entropy floor per alphabet.
//!
//! Masked values, placeholders and documented example keys are never
//! findings. Every pass is a linear scan or a regex (linear time in the
//! `regex` crate), and every input is bounded: files are read in overlapping
//! 1 MiB windows, decoded bytes and findings per file are capped, and whole
//! scans stop at a byte budget that is *reported*, never silent.

mod allowlist;
mod assign;
mod decode;
mod history;
mod mask;
pub(crate) mod random;
pub(crate) mod rules;
mod tree;

pub use allowlist::{Allowlist, AllowlistError};
pub use history::{BlobCache, HistoryScan};
pub use tree::TreeScan;

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;

/// Window size for reading large inputs.
pub(crate) const WINDOW: usize = 1 << 20;
/// Overlap between windows: longer than any secret we report whole (PEM
/// RSA-4096 keys are ~3.3 KB), so none is cut in two.
const OVERLAP: usize = 16 << 10;
/// Bytes looked at to decide a file is binary (as git does).
const BINARY_SNIFF: usize = 8000;
/// Candidates kept per rule per window (bounds memory on hostile input).
const MAX_PER_RULE: usize = 10_000;

/// Incremental scans: margin after a finding's start covering its span
/// and any look-ahead ([`Scanner::scan_incremental`]).
const INC_SPAN: usize = 2048;
/// Incremental scans: look-back context any detector reads.
const INC_CTX: usize = 1024;
/// A PEM marker: multi-line spans, so incremental scanning is not used.
static PEM_MARK: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
    regex::bytes::Regex::new("-----(?:BEGIN|END) ").expect("pem marker regex")
});

/// Length of the common prefix (compared in 64-byte blocks first).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 64 <= n && a[i..i + 64] == b[i..i + 64] {
        i += 64;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix, at most `max`.
fn common_suffix(a: &[u8], b: &[u8], max: usize) -> usize {
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + 64 <= max && a[la - i - 64..la - i] == b[lb - i - 64..lb - i] {
        i += 64;
    }
    while i < max && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

/// Inline ignore comments (gitleaks and detect-secrets forms).
static INLINE_IGNORE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?i)gitleaks:allow|pragma:\s*allowlist[ \-]secret")
        .expect("inline ignore regex")
});
/// Newlines, found with the optimized regex engine.
static NEWLINE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new("\n").expect("newline regex"));

/// Errors of a history scan.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}

/// Scanner settings. One [`BlobCache`] should be used with one config.
#[derive(Debug, Clone)]
pub struct ScanConfig {
    /// `.gitleaks.toml` allowlist applied to every finding.
    pub allowlist: Allowlist,
    /// Drop findings on lines with `gitleaks:allow` / `pragma: allowlist
    /// secret`. Off by default: an agent could add the comment instead of
    /// removing the secret. The flag is reported on findings either way.
    pub honor_inline_ignore: bool,
    /// Total bytes one tree or history scan reads before it stops and sets
    /// `budget_exceeded`.
    pub max_total_bytes: u64,
    /// Findings kept per file (or blob).
    pub max_findings_per_file: usize,
    /// How many layers of base64/hex are decoded (0 = none).
    pub decode_depth: u8,
    /// Decoded bytes produced per file before decoding stops.
    pub max_decoded_bytes: usize,
    /// Directory names not entered in tree mode (reported in `skipped`).
    pub skip_dirs: Vec<String>,
    /// Files visited in tree mode before the walk stops (budget_exceeded).
    pub max_files: usize,
    /// History mode: after the reachable graph, also scan every other blob
    /// in the object database (`Odb::foreach`): unreachable, dangling,
    /// expired-reflog objects still sit on disk until gc.
    pub history_all_objects: bool,
}

impl Default for ScanConfig {
    fn default() -> Self {
        ScanConfig {
            allowlist: Allowlist::default(),
            honor_inline_ignore: false,
            max_total_bytes: 512 << 20,
            max_findings_per_file: 1000,
            decode_depth: 2,
            max_decoded_bytes: 4 << 20,
            skip_dirs: vec![".git".to_string()],
            max_files: 200_000,
            history_all_objects: false,
        }
    }
}

/// One detected secret. `value` is never serialized by serde nor shown by
/// `Debug`; use [`to_json`] with `show_secrets` to include it.
#[derive(Clone, Serialize, PartialEq, Eq)]
pub struct Finding {
    /// Rule id, e.g. `aws-access-key-id`, `credential-assignment`, `random-token`.
    pub rule: String,
    /// Secret type from tasks/FORMAT.md, e.g. `aws_access_key_id`, `generic_secret`.
    #[serde(rename = "type")]
    pub secret_type: String,
    /// Path relative to the scan root (tree), or path in the commit (history).
    pub file: String,
    /// 1-based line of the value's first byte.
    pub line: usize,
    /// 1-based byte column of the first byte.
    pub col_start: usize,
    /// Column one past the last byte (`col_start + byte length`; for a
    /// multi-line value this runs past the first line).
    pub col_end: usize,
    /// Commit where the blob was first seen (history mode), else `None`.
    pub commit: Option<String>,
    /// The value was found inside a base64/hex run; the span is the run's.
    pub encoded: bool,
    /// Short sha256 of `rule:value`, stable across runs and locations.
    pub fingerprint: String,
    /// The secret itself (decoded, for `encoded` findings).
    #[serde(skip)]
    pub value: String,
    /// The line carries an inline ignore comment.
    pub inline_ignored: bool,
    /// Byte offset of the span in the scanned input.
    #[serde(skip)]
    pub byte_start: usize,
    /// Byte offset one past the span.
    #[serde(skip)]
    pub byte_end: usize,
    /// The finding's line, truncated, for `regexTarget = "line"` allowlists.
    #[serde(skip)]
    pub(crate) line_text: String,
}

impl std::fmt::Debug for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finding")
            .field("rule", &self.rule)
            .field("secret_type", &self.secret_type)
            .field("file", &self.file)
            .field("line", &self.line)
            .field("col_start", &self.col_start)
            .field("commit", &self.commit)
            .field("encoded", &self.encoded)
            .field("fingerprint", &self.fingerprint)
            .field("value", &"[REDACTED]")
            .finish()
    }
}

/// Findings as a JSON array; `value` is included only with `show_secrets`.
pub fn to_json(findings: &[Finding], show_secrets: bool) -> serde_json::Value {
    serde_json::Value::Array(
        findings
            .iter()
            .map(|f| {
                let mut v = serde_json::to_value(f).unwrap_or(serde_json::Value::Null);
                if let (true, Some(o)) = (show_secrets, v.as_object_mut()) {
                    o.insert("value".into(), serde_json::Value::String(f.value.clone()));
                }
                v
            })
            .collect(),
    )
}

/// Findings as a SARIF 2.1.0 log; values only with `show_secrets`.
pub fn to_sarif(findings: &[Finding], show_secrets: bool) -> serde_json::Value {
    let results: Vec<_> = findings
        .iter()
        .map(|f| {
            let msg = if show_secrets {
                format!("{} ({}): {}", f.secret_type, f.rule, f.value)
            } else {
                format!("{} ({})", f.secret_type, f.rule)
            };
            serde_json::json!({
                "ruleId": f.rule,
                "level": "error",
                "message": { "text": msg },
                "partialFingerprints": { "secaudit/v1": f.fingerprint },
                "locations": [{ "physicalLocation": {
                    "artifactLocation": { "uri": f.file },
                    "region": { "startLine": f.line, "startColumn": f.col_start, "endColumn": f.col_end }
                }}],
                "properties": { "type": f.secret_type, "commit": f.commit, "encoded": f.encoded }
            })
        })
        .collect();
    serde_json::json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{ "tool": { "driver": { "name": "secaudit", "informationUri": "https://example.invalid/secaudit" } }, "results": results }]
    })
}

/// Short fingerprint: first 16 hex digits of sha256(`rule:value`).
pub fn fingerprint(rule: &str, value: &str) -> String {
    let mut h = Sha256::new();
    h.update(rule.as_bytes());
    h.update(b":");
    h.update(value.as_bytes());
    let d = h.finalize();
    hex::encode(&d[..8])
}

/// A raw candidate before line mapping and de-duplication.
#[derive(Debug, Clone)]
pub(crate) struct Cand {
    pub start: usize,
    pub end: usize,
    pub rule: &'static str,
    pub ty: &'static str,
    pub value: String,
    pub encoded: bool,
    pub prio: u8,
}

/// The scanner. Cheap to clone and shareable across threads; the regexes
/// are compiled once per process.
#[derive(Debug, Clone)]
pub struct Scanner {
    cfg: Arc<ScanConfig>,
}

fn is_code_file(path: &str) -> bool {
    let ext = path.rsplit('.').next().unwrap_or("");
    matches!(
        ext,
        "py" | "js"
            | "ts"
            | "jsx"
            | "tsx"
            | "mjs"
            | "cjs"
            | "go"
            | "rb"
            | "java"
            | "kt"
            | "rs"
            | "php"
            | "cs"
            | "swift"
            | "scala"
            | "c"
            | "cc"
            | "cpp"
            | "h"
    )
}

impl Scanner {
    /// Builds a scanner (forcing regex compilation now, not on first scan).
    pub fn new(cfg: ScanConfig) -> Scanner {
        std::sync::LazyLock::force(&rules::RULES);
        std::sync::LazyLock::force(&rules::KEYWORDS);
        Scanner { cfg: Arc::new(cfg) }
    }

    /// The config in use.
    pub fn config(&self) -> &ScanConfig {
        &self.cfg
    }

    /// Scans one input (any size: large inputs go in windows), applying the
    /// allowlist and, if configured, inline ignores.
    pub fn scan_bytes(&self, path: &str, data: &[u8]) -> Vec<Finding> {
        let mut r = data;
        let (mut f, _) = self.scan_reader_raw(path, &mut r).unwrap_or_default();
        self.filter(&mut f, path, None);
        f
    }

    /// Drops allowlisted (and, if configured, inline-ignored) findings.
    pub(crate) fn filter(&self, f: &mut Vec<Finding>, path: &str, commit: Option<&str>) {
        let honor = self.cfg.honor_inline_ignore;
        let al = &self.cfg.allowlist;
        f.retain(|x| {
            !(honor && x.inline_ignored)
                && (al.is_empty() || !al.allows(path, &x.line_text, &x.value, commit))
        });
    }

    /// Scans a reader in overlapping windows; findings before filtering,
    /// and the number of bytes read.
    pub(crate) fn scan_reader_raw(
        &self,
        path: &str,
        r: &mut dyn Read,
    ) -> std::io::Result<(Vec<Finding>, u64)> {
        let mut out = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let (mut base_off, mut base_line, mut total) = (0usize, 1usize, 0u64);
        let mut binary: Option<bool> = None;
        let mut decode_budget = self.cfg.max_decoded_bytes;
        loop {
            let want = (WINDOW - buf.len()) as u64;
            let got = r.take(want).read_to_end(&mut buf)? as u64;
            total += got;
            let eof = got < want;
            if buf.is_empty() {
                break;
            }
            let bin =
                *binary.get_or_insert_with(|| buf[..buf.len().min(BINARY_SNIFF)].contains(&0));
            let cut = if eof { buf.len() } else { buf.len() - OVERLAP };
            let mut f = self.scan_chunk(path, &buf, bin, &mut decode_budget);
            f.retain(|x| x.byte_start < cut);
            for x in &mut f {
                x.line += base_line - 1;
                x.byte_start += base_off;
                x.byte_end += base_off;
            }
            out.extend(f);
            if out.len() >= self.cfg.max_findings_per_file {
                out.truncate(self.cfg.max_findings_per_file);
                // Keep reading so the byte count is honest, but stop scanning.
                total += std::io::copy(r, &mut std::io::sink())?;
                break;
            }
            if eof {
                break;
            }
            base_line += buf[..cut].iter().filter(|&&c| c == b'\n').count();
            base_off += cut;
            buf.drain(..cut);
        }
        Ok((out, total))
    }

    /// Findings of blob `b` from the findings of an earlier version `a` of
    /// the same file plus a scan of only the region that changed (with
    /// margins), as `git log -p` scanners look only at added lines — but the
    /// result is the full-blob result, with `b`'s lines and offsets.
    ///
    /// Exact under the assumptions the windowed reader already makes: every
    /// detector is line-local apart from a look-back of at most
    /// [`INC_CTX`] bytes (Firebase context 512, SHA context 256) and spans
    /// under [`INC_SPAN`] bytes; rule keywords lie inside their matches.
    /// Multi-line PEM blocks break that, so a blob with a PEM marker, a
    /// binary/UTF-8 mode change, a blob of a window or more, or an `a` whose
    /// findings were truncated, returns `None` and is scanned whole. The
    /// decode budget starts fresh for the region, so a hostile file can
    /// only yield more decoded findings than a whole scan, never fewer.
    pub(crate) fn scan_incremental(
        &self,
        path: &str,
        a: &[u8],
        a_f: &[Finding],
        b: &[u8],
    ) -> Option<Vec<Finding>> {
        if a.len() >= WINDOW
            || b.len() >= WINDOW
            || a.is_empty()
            || b.is_empty()
            || a_f.len() >= self.cfg.max_findings_per_file
            || PEM_MARK.is_match(b)
        {
            return None;
        }
        let raw = |d: &[u8]| {
            d[..d.len().min(BINARY_SNIFF)].contains(&0) || std::str::from_utf8(d).is_err()
        };
        let b_raw = raw(b);
        if raw(a) != b_raw {
            return None;
        }
        let p = common_prefix(a, b);
        let s = common_suffix(a, b, a.len().min(b.len()) - p);
        let line_start = |x: usize| {
            b[..x]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |i| i + 1)
        };
        let next_line = |x: usize| {
            b[x..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |i| x + i + 1)
        };
        let cs = line_start(p.saturating_sub(INC_SPAN));
        let ws = line_start(cs.saturating_sub(INC_CTX));
        let ce = next_line((b.len() - s + INC_CTX).min(b.len()));
        let we = next_line((ce + INC_SPAN).min(b.len()));
        // `ce` in `a`'s coordinates: the suffixes are identical from here.
        let ce_a = ce + a.len() - b.len();
        let nl = |d: &[u8]| d.iter().filter(|&&c| c == b'\n').count();
        let dl = nl(&b[p..b.len() - s]) as isize - nl(&a[p..a.len() - s]) as isize;
        let mut out: Vec<Finding> = Vec::new();
        for f in a_f.iter().filter(|f| f.byte_start < cs) {
            if f.byte_end > p {
                return None; // a span longer than the margin: scan whole
            }
            out.push(f.clone());
        }
        let mut budget = self.cfg.max_decoded_bytes;
        let base_line = nl(&b[..ws]);
        let mut mid = self.scan_chunk(path, &b[ws..we], b_raw, &mut budget);
        mid.retain(|f| (cs..ce).contains(&(ws + f.byte_start)));
        for mut f in mid {
            f.line += base_line;
            f.byte_start += ws;
            f.byte_end += ws;
            out.push(f);
        }
        for f in a_f.iter().filter(|f| f.byte_start >= ce_a) {
            let mut f = f.clone();
            f.line = (f.line as isize + dl) as usize;
            f.byte_start = f.byte_start + b.len() - a.len();
            f.byte_end = f.byte_end + b.len() - a.len();
            out.push(f);
        }
        out.truncate(self.cfg.max_findings_per_file);
        Some(out)
    }

    /// Scans one window of bytes. Binary (or non-UTF-8) input is scanned as
    /// its printable runs: other bytes become spaces, so offsets still hold.
    fn scan_chunk(
        &self,
        path: &str,
        bytes: &[u8],
        binary: bool,
        decode_budget: &mut usize,
    ) -> Vec<Finding> {
        let mapped;
        let text: &str = match (binary, std::str::from_utf8(bytes)) {
            (false, Ok(s)) => s,
            _ => {
                mapped = bytes
                    .iter()
                    .map(|&c| {
                        if (0x20..0x7f).contains(&c) || c == b'\n' || c == b'\t' {
                            c as char
                        } else {
                            ' '
                        }
                    })
                    .collect::<String>();
                &mapped
            }
        };
        self.scan_str(path, text, decode_budget)
    }

    /// Scans text; findings before allowlist filtering, lines 1-based
    /// within `text`.
    pub(crate) fn scan_str(
        &self,
        path: &str,
        text: &str,
        decode_budget: &mut usize,
    ) -> Vec<Finding> {
        let mut cands = self.candidates(path, text, 0, decode_budget);
        cands.truncate(self.cfg.max_findings_per_file);
        if cands.is_empty() {
            return Vec::new();
        }
        let nl: Vec<usize> = NEWLINE.find_iter(text).map(|m| m.start()).collect();
        // Inline-ignore verdict per line, computed once per line.
        let mut ignored: std::collections::HashMap<usize, bool> = std::collections::HashMap::new();
        cands
            .into_iter()
            .map(|c| {
                let idx = nl.partition_point(|&p| p < c.start);
                let ls = if idx == 0 { 0 } else { nl[idx - 1] + 1 };
                let le = nl.get(idx).copied().unwrap_or(text.len());
                let mut lt_end = le.min(ls + 512);
                while !text.is_char_boundary(lt_end) {
                    lt_end -= 1;
                }
                let line_text = &text[ls..lt_end];
                let inline_ignored = *ignored
                    .entry(idx)
                    .or_insert_with(|| INLINE_IGNORE.is_match(&text[ls..le]));
                Finding {
                    rule: c.rule.to_string(),
                    secret_type: c.ty.to_string(),
                    file: path.to_string(),
                    line: idx + 1,
                    col_start: c.start - ls + 1,
                    col_end: c.end - ls + 1,
                    commit: None,
                    encoded: c.encoded,
                    fingerprint: fingerprint(c.rule, &c.value),
                    value: c.value,
                    inline_ignored,
                    byte_start: c.start,
                    byte_end: c.end,
                    line_text: line_text.to_string(),
                }
            })
            .collect()
    }

    /// All detectors over `text`, de-duplicated by priority.
    fn candidates(
        &self,
        path: &str,
        text: &str,
        depth: u8,
        decode_budget: &mut usize,
    ) -> Vec<Cand> {
        let lower = text.to_ascii_lowercase();
        let present = rules::KEYWORDS.present(text);
        let mut c: Vec<Cand> = Vec::new();
        for rule in rules::RULES.iter() {
            let d = rule.def;
            if !present.any(d.keywords) {
                continue;
            }
            for caps in rule.re.captures_iter(text).take(MAX_PER_RULE) {
                let Some(m) = caps.get(d.group) else { continue };
                let chk = caps
                    .get(if d.check_group == 0 {
                        d.group
                    } else {
                        d.check_group
                    })
                    .map_or("", |x| x.as_str());
                if mask::is_masked_or_placeholder(chk)
                    || (d.check_group != 0 && mask::is_masked_or_placeholder_strict(m.as_str()))
                {
                    continue;
                }
                let ty = match d.context_type {
                    Some((kw, alt)) => {
                        let from = m.start().saturating_sub(512);
                        let lp = path.to_ascii_lowercase();
                        if lower.as_bytes()[from..m.start()]
                            .windows(kw.len())
                            .any(|w| w == kw.as_bytes())
                            || lp.contains(kw)
                        {
                            alt
                        } else {
                            d.secret_type
                        }
                    }
                    None => d.secret_type,
                };
                c.push(Cand {
                    start: m.start(),
                    end: m.end(),
                    rule: d.name,
                    ty,
                    value: m.as_str().to_string(),
                    encoded: false,
                    prio: 0,
                });
            }
        }
        if present.any(&[rules::PEM_KEYWORD]) {
            let mut spans = Vec::new();
            rules::pem::find(text, &mut spans);
            for (s, e) in spans {
                c.push(Cand {
                    start: s,
                    end: e,
                    rule: "private-key",
                    ty: "private_key",
                    value: text[s..e].to_string(),
                    encoded: false,
                    prio: 0,
                });
            }
        }
        let mut spans = Vec::new();
        assign::find(text, &lower, is_code_file(path), &mut spans);
        for (s, e) in spans.into_iter().take(MAX_PER_RULE) {
            c.push(Cand {
                start: s,
                end: e,
                rule: "credential-assignment",
                ty: "generic_secret",
                value: text[s..e].to_string(),
                encoded: false,
                prio: 2,
            });
        }
        let mut public = Vec::new();
        if text.contains("-----BEGIN ") {
            rules::pem::find_public(text, &mut public);
        }
        let mut spans = Vec::new();
        random::find(text, &lower, path, &public, &mut spans);
        for (s, e) in spans.into_iter().take(MAX_PER_RULE) {
            let v = &text[s..e];
            if mask::is_masked_or_placeholder(v) {
                continue;
            }
            c.push(Cand {
                start: s,
                end: e,
                rule: "random-token",
                ty: "generic_secret",
                value: v.to_string(),
                encoded: false,
                prio: 3,
            });
        }
        if depth < self.cfg.decode_depth && *decode_budget > 0 {
            for d in decode::find(text, decode_budget) {
                for inner in self.candidates(path, &d.text, depth + 1, decode_budget) {
                    c.push(Cand {
                        start: d.start,
                        end: d.end,
                        rule: inner.rule,
                        ty: inner.ty,
                        value: inner.value,
                        encoded: true,
                        prio: 1,
                    });
                }
            }
        }
        dedupe(c)
    }
}

/// Keeps, in priority order, candidates that overlap nothing kept before;
/// several decoded secrets from one encoded run (same span, different
/// values) are all kept.
fn dedupe(mut c: Vec<Cand>) -> Vec<Cand> {
    c.sort_by_key(|x| (x.prio, x.start, std::cmp::Reverse(x.end)));
    let mut kept: BTreeMap<(usize, usize), usize> = BTreeMap::new(); // (start, seq) -> index in out
    let mut out: Vec<Cand> = Vec::new();
    for x in c {
        let mut clash = false;
        for (_, &i) in kept.range(..(x.end, 0)).rev() {
            let k = &out[i];
            if k.end <= x.start {
                break;
            }
            let same_run = k.encoded
                && x.encoded
                && k.start == x.start
                && k.end == x.end
                && k.value != x.value;
            if !same_run {
                clash = true;
                break;
            }
        }
        if !clash {
            kept.insert((x.start, out.len()), out.len());
            out.push(x);
        }
    }
    out.sort_by_key(|x| (x.start, x.end));
    out
}

#[cfg(test)]
mod incremental_tests {
    use super::{Finding, ScanConfig, Scanner};

    /// Lines mixing secrets of several rules, hard negatives and filler.
    const LINES: &[&str] = &[
        "TOKEN = \"ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h\"",
        "aws_access_key_id = AKIAZ7QW3ERT5YUI8OPA",
        "db_url = \"postgres://svc:Zq8v2Lm4Kp7Rt@db.internal:5432/app\"",
        "    value = compute(42, 'abc')",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "api_key: 9f8e7d6c5b4a39281716f5e4d3c2b1a0ffeeddcc",
        "    # just a comment line with words",
        "firebase: AIzaSyD4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t",
        "blob: dG9rZW49Z2hwX1I4c1Qydlc0eVo2YkQ4ZkgwakwyblA0clQ2dlg4ekIwZEYyaA==",
        "password = os.environ['DB_PASSWORD']",
        "SLACK = xoxb-123456789012-abcdefghijklmnop",
        "",
    ];

    fn doc(seed: &mut u64, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let l = LINES[(*seed >> 33) as usize % LINES.len()];
                format!("{l} # {}", *seed >> 50)
            })
            .collect()
    }

    fn key(f: &[Finding]) -> Vec<(String, String, usize, usize, usize, usize, bool)> {
        f.iter()
            .map(|f| {
                (
                    f.rule.clone(),
                    f.value.clone(),
                    f.line,
                    f.col_start,
                    f.byte_start,
                    f.byte_end,
                    f.encoded,
                )
            })
            .collect()
    }

    /// The incremental result equals a whole scan of the new version, for
    /// replaced, inserted and deleted line ranges anywhere in the file.
    #[test]
    fn incremental_equals_full_scan() {
        let s = Scanner::new(ScanConfig::default());
        let mut seed = 7u64;
        let mut used = 0;
        for case in 0..120 {
            let n = 40 + case * 7 % 400;
            let a_lines = doc(&mut seed, n);
            let mut b_lines = a_lines.clone();
            let at = (seed >> 20) as usize % n;
            let len = 1 + (seed >> 40) as usize % (n / 3 + 1);
            let end = (at + len).min(n);
            match case % 3 {
                0 => {
                    let repl = doc(&mut seed, end - at);
                    b_lines.splice(at..end, repl);
                }
                1 => {
                    let ins = doc(&mut seed, len);
                    b_lines.splice(at..at, ins);
                }
                _ => {
                    b_lines.drain(at..end);
                }
            }
            let a = a_lines.join("\n") + "\n";
            let b = b_lines.join("\n") + "\n";
            let full = |d: &str| {
                let mut r = d.as_bytes();
                s.scan_reader_raw("app/settings.py", &mut r).unwrap().0
            };
            let af = full(&a);
            if let Some(inc) =
                s.scan_incremental("app/settings.py", a.as_bytes(), &af, b.as_bytes())
            {
                used += 1;
                assert_eq!(key(&inc), key(&full(&b)), "case {case}");
            }
        }
        assert!(used > 100, "incremental path taken only {used} times");
    }

    /// PEM blocks span lines: such blobs are scanned whole.
    #[test]
    fn pem_blobs_are_scanned_whole() {
        let s = Scanner::new(ScanConfig::default());
        let a = "x = 1\n-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n";
        let b = "x = 2\n-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n";
        assert!(
            s.scan_incremental("k.pem", a.as_bytes(), &[], b.as_bytes())
                .is_none()
        );
    }
}
