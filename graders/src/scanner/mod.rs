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
//! 4. the random-token rule with an entropy floor per alphabet, reported by
//!    a scan only where something names the token a secret ([`context`]).
//!
//! Masked values, placeholders and documented example keys are never
//! findings. Every pass is a linear scan or a regex (linear time in the
//! `regex` crate), and every input is bounded: files are read in overlapping
//! 1 MiB windows, decoded bytes and findings per file are capped, and whole
//! scans stop at a byte budget that is *reported*, never silent.

mod allowlist;
mod assign;
mod ciphertext;
mod context;
mod convert;
mod declared;
mod decode;
mod devdefault;
mod encoded_placeholder;
mod fake_name;
mod fixture;
mod folded;
mod gpg;
mod history;
mod identifier;
mod inert;
mod instruction;
mod joined;
mod leak_grade;
mod linehash;
mod mask;
mod naming;
mod notebook;
mod pack;
#[doc(hidden)]
pub mod pack_probe;
mod prose;
mod public;
pub(crate) mod random;
pub mod report;
pub(crate) mod rules;
mod store_name;
mod stored_hash;
mod tfstate;
mod tree;
mod words;

pub use allowlist::{Allowlist, AllowlistError};
pub use history::{BlobCache, HistoryScan};
pub use leak_grade::{LEAK_GRADE_RULES, counts_as_new_leak};
pub use report::sarif::to_sarif;
pub use report::{Redaction, RuleInfo, rule_catalog, to_json};
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

/// A PEM marker: blocks span lines, so history scans of added lines
/// scan such blobs whole (`history::scan_added`).
static PEM_MARK: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
    regex::bytes::Regex::new("-----(?:BEGIN|END) ").expect("pem marker regex")
});

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
    /// Report random tokens that nothing around them names a secret
    /// ([`context`]). Off for scans: unnamed random text is mostly hashes,
    /// ids and signatures, and precision on code the scanner has not seen
    /// fell on them round after round (issue 18). On for redaction
    /// ([`ScanConfig::redaction`]), whose accepted failure is hiding too
    /// much.
    pub bare_random_tokens: bool,
}

impl ScanConfig {
    /// The redactor's configuration: the defaults, with every random
    /// token reported, named or not.
    pub fn redaction() -> ScanConfig {
        ScanConfig {
            bare_random_tokens: true,
            ..ScanConfig::default()
        }
    }
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
            bare_random_tokens: false,
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
    /// Builds a scanner. The first call in a process starts compiling the
    /// rule regexes and the keyword automaton on a thread of its own
    /// ([`warm_in_background`]), so they are ready by the first scan
    /// without the caller waiting for them; a scan that needs them sooner
    /// waits for them.
    pub fn new(cfg: ScanConfig) -> Scanner {
        warm_in_background();
        Scanner::new_lazy(cfg)
    }

    /// Builds a scanner without starting the compilation: for a caller
    /// whose first call is a history scan, which starts it once it has a
    /// core to spare (the tree walk, after the commit listing and the
    /// tree pass have used both); other scans compile on first use.
    pub fn new_lazy(cfg: ScanConfig) -> Scanner {
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
            !(honor && x.inline_ignored) && (al.is_empty() || !al.allows_finding(x, path, commit))
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

    /// All detectors over `text`, de-duplicated by priority; in source
    /// code also over its view with split literals joined ([`joined`]),
    /// keeping what only the view shows, spread over the whole run, and
    /// over each expression assembling named string constants, folded
    /// ([`folded`]).
    fn candidates(
        &self,
        path: &str,
        text: &str,
        depth: u8,
        decode_budget: &mut usize,
    ) -> Vec<Cand> {
        let mut c = self.candidates_in(path, text, depth, decode_budget);
        if depth > 0 || !is_code_file(path) {
            return c;
        }
        let mut seen: Vec<(usize, usize)> = c.iter().map(|x| (x.start, x.end)).collect();
        if let Some((view, runs)) = joined::view(text) {
            for mut x in self.candidates_in(path, &view, depth, decode_budget) {
                if public::overlaps(&seen, x.start, x.end) {
                    continue;
                }
                if let Some(&(_, end)) = runs.iter().find(|&&(s, e)| s <= x.start && x.start < e) {
                    x.end = x.end.max(end - 1);
                }
                c.push(x);
            }
            seen = c.iter().map(|x| (x.start, x.end)).collect();
        }
        // Values assembled from the file's own constants ([`folded`]):
        // each judged as a line of its own, reported on its expression.
        for (es, ee, line) in folded::find(text) {
            if public::overlaps(&seen, es, ee) {
                continue;
            }
            let head = line
                .rfind('"')
                .and_then(|q| line[..q].rfind('"'))
                .unwrap_or(0);
            if let Some(mut x) = self
                .candidates_in(path, &line, depth, decode_budget)
                .into_iter()
                .find(|x| x.start >= head)
            {
                // A provider-format value written whole in one constant
                // was judged where it is written, with its notes (a
                // browser key said to be referrer-restricted, a
                // published example): interpolating it elsewhere
                // (`` `…?key=${MAPS_KEY}` ``) creates nothing new. Only
                // a value the fold assembles, or a generic finding a new
                // name may call a secret, is judged at the expression
                // (issue 18, generator-14 `firebase-maps-browser-key`).
                if !inert::GENERIC_RULES.contains(&x.rule) && text.contains(x.value.as_str()) {
                    continue;
                }
                x.start = es;
                x.end = ee;
                seen.push((es, ee));
                c.push(x);
            }
        }
        c.sort_by_key(|x| (x.start, x.end));
        c
    }

    /// All detectors over `text` as written, de-duplicated by priority.
    fn candidates_in(
        &self,
        path: &str,
        text: &str,
        depth: u8,
        decode_budget: &mut usize,
    ) -> Vec<Cand> {
        // A notebook's cells are JSON strings: judged with their escapes
        // blanked, offsets kept ([`notebook`]).
        let unescaped;
        let text = if depth == 0 && notebook::is_notebook(path) {
            unescaped = notebook::unescape(text);
            unescaped.as_str()
        } else {
            text
        };
        let lower = text.to_ascii_lowercase();
        let present = rules::KEYWORDS.present(text);
        let mut c: Vec<Cand> = Vec::new();
        // Spans a provider rule matched and its structure check rejected.
        let mut rejected: Vec<(usize, usize)> = Vec::new();
        for (ri, rule) in rules::RULES.iter().enumerate() {
            let d = rule.def;
            if !present.rule(ri) || d.gate.is_some_and(|may| !may(text)) {
                continue;
            }
            for caps in rule.re().captures_iter(text).take(MAX_PER_RULE) {
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
                // A password verifier (`SCRAM-SHA-256$…`, `$argon2id$…`)
                // is what a server stores, not the password, whichever
                // rule's keyword found it ([`stored_hash`]).
                if stored_hash::is_password_hash_format(m.as_str()) {
                    rejected.push((m.start(), m.end()));
                    continue;
                }
                if d.validate.is_some_and(|ok| !ok(m.as_str())) {
                    // The JWT check rejects what it does not report (an
                    // unsigned `alg: none` token), not a fixture: a name
                    // may still call the value a secret.
                    if d.name != "jwt" {
                        rejected.push((m.start(), m.end()));
                    }
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
        // Local development defaults (`postgres:postgres@localhost`), and
        // a format placeholder or environment lookup as the password
        // (`postgresql://analyst:{pw}@warehouse/dw`, `%(password)s`).
        // A password of one to three characters (`postgres://u:pw@h/db`)
        // is a schematic example, not a live credential.
        c.retain(|x| {
            x.rule != "connection-string"
                || !(devdefault::is_local_default(&x.value, path)
                    || connstr_password(&x.value).is_some_and(|p| {
                        declared::is_placeholder_password(p) || p.len() < MIN_CONNSTR_PASSWORD
                    }))
        });
        c.extend(self.cfg.allowlist.custom_candidates(path, text, &lower));
        if present.pem() || rules::pem::may_hold_symmetric_key(text) {
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
        // Typed passwords in test code, and values a test labels fixtures
        // (`test-secret-…`), are the suite's fakes (`fixture`).
        if !spans.is_empty() && fixture::is_test_path(path) {
            spans.retain(|&(s, e)| {
                !(fixture::is_typed(&text[s..e]) || fixture::is_labelled_fixture(&text[s..e]))
            });
        }
        // UI text of a translation catalog, in any language (`prose`).
        if !spans.is_empty() && prose::is_translation_catalog(path) {
            spans.retain(|&(s, e)| !prose::is_catalog_text(&text[s..e]));
        }
        // Stored hashes and encoded placeholders are not credentials.
        spans.retain(|&(s, e)| !not_a_credential(text, s, e, path));
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
        // Public key material: looked for only when a random token or a
        // candidate needs the test (`public::spans_of`).
        let public = std::cell::OnceCell::new();
        let mut spans = Vec::new();
        random::find(text, &lower, path, &public, &mut spans);
        for (s, e) in spans.into_iter().take(MAX_PER_RULE) {
            let v = &text[s..e];
            if mask::is_masked_or_placeholder(v)
                || declared::in_secret_store_reference(text, s, e)
                || not_a_credential(text, s, e, path)
                || !(self.cfg.bare_random_tokens
                    || context::named(text, &lower, s, e, path)
                    || (depth > 0 && naming::is_the_whole_decoding(text, s, e)))
            {
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
        // Public key material is never a secret, whichever detector saw it.
        let public = if c.is_empty() {
            &[][..]
        } else {
            public::spans_of(&public, text)
        };
        if !public.is_empty() {
            c.retain(|x| x.rule == "private-key" || !public::overlaps(public, x.start, x.end));
        }
        // A document or test that says its values are a standard's published
        // examples: not judged by the generic detectors or the JWT rule.
        if c.iter()
            .any(|x| inert::GENERIC_RULES.contains(&x.rule) || x.rule == "jwt")
            && inert::published_examples(path, &lower)
        {
            c.retain(|x| !inert::GENERIC_RULES.contains(&x.rule) && x.rule != "jwt");
        }
        // A Firebase config's API key, or a browser key its file says is
        // restricted, is public by design, whichever detector saw it.
        c.retain(|x| {
            !(x.rule == "google-api-key" || x.value.starts_with("AIza"))
                || !declared::is_public_google_key(&lower, x.start, x.end)
        });
        // Famous published documentation samples (the jwt.io token, AWS's
        // example key pair), whichever detector saw them.
        // Only where the file calls them samples; a bare copy is kept.
        if !c.is_empty() {
            let samples = declared::published_sample_spans(text, &lower);
            if !samples.is_empty() {
                c.retain(|x| !samples.iter().any(|&(s, e)| x.start < e && s < x.end));
            }
        }
        // A value a provider rule's structure check rejected (a seed that
        // decodes to text, a key with its issuer's marker altered) is that
        // rule's judgement: the generic detectors do not overturn it.
        if !rejected.is_empty() {
            c.retain(|x| {
                !inert::GENERIC_RULES.contains(&x.rule)
                    || !public::overlaps(&rejected, x.start, x.end)
            });
        }
        // A value its name declares fake (`FAKE_STRIPE_KEY = …`): a fixture
        // in any issuer's format. Redaction hides it anyway: its accepted
        // failure is hiding too much.
        if !c.is_empty() && !self.cfg.bare_random_tokens {
            c.retain(|x| !fake_name::declared_fake(text, x.start));
        }
        // Hashes, ciphertext, structured public ids and OpenPGP key ids and
        // fingerprints ([`gpg`]): not judged by the
        // generic detectors (a provider key inside one still is). Looked
        // for only when a generic detector found something: most texts
        // have no such candidate, and the look is a dozen regexes.
        let mut inert = Vec::new();
        if c.iter().any(|x| inert::GENERIC_RULES.contains(&x.rule)) {
            inert::find(text, &mut inert);
            gpg::find(text, &lower, &mut inert);
        }
        if !inert.is_empty() {
            c.retain(|x| {
                !inert::GENERIC_RULES.contains(&x.rule) || !public::overlaps(&inert, x.start, x.end)
            });
        }
        dedupe(c)
    }
}

/// Starts compiling the rule regexes and the keyword automaton on a thread
/// of its own, once per process (later calls do nothing).
pub(crate) fn warm_in_background() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let warm = || {
            std::sync::LazyLock::force(&rules::RULES);
            std::sync::LazyLock::force(&rules::KEYWORDS);
        };
        let spawned = std::thread::Builder::new()
            .name("scanner-warm".into())
            .spawn(warm);
        if spawned.is_err() {
            warm();
        }
    });
}

/// Keeps, in priority order, candidates that overlap nothing kept before;
/// several decoded secrets from one encoded run (same span, different
/// values) are all kept.
/// Joins a scoped worker thread of the history scan, re-raising its panic
/// in the caller with the original payload.
fn join_worker<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// A generic detector's value at `start..end` that is not a credential
/// whatever names it: a stored hash ([`stored_hash`]), base64 or hex of a
/// placeholder ([`encoded_placeholder`]), a password verifier's format,
/// ciphertext ([`ciphertext`]), Terraform state's
/// provider-private metadata ([`tfstate`]).
fn not_a_credential(text: &str, start: usize, end: usize, path: &str) -> bool {
    let v = &text[start..end];
    let key = stored_hash::key_before(text, start);
    stored_hash::is_stored_hash(key, v, path)
        || stored_hash::is_password_hash_format(v)
        || stored_hash::decodes_to_password_hash(v)
        || ciphertext::is_ciphertext(key, v)
        || ciphertext::is_config_ciphertext(text, start, end)
        || encoded_placeholder::decodes_to_placeholder(v)
        || tfstate::is_provider_private(path, text, start)
}

/// The password of a `scheme://user:password@host` URL.
/// Shortest password a connection string is reported for.
const MIN_CONNSTR_PASSWORD: usize = 4;

fn connstr_password(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let userinfo = &rest[..rest.find('@')?];
    Some(&userinfo[userinfo.find(':')? + 1..])
}

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
