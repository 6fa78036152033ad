//! Provider rules: one module per provider family, each a small table of
//! regexes whose *value group* is the secret, so key names around it survive
//! redaction. Every rule carries lowercase keywords; a rule's regex runs only
//! when one of them occurs in the (lowercased) text, which keeps a scan of a
//! file with no credential-looking text close to a single `contains` pass.

use regex::Regex;
use std::sync::{LazyLock, OnceLock};

mod ai;
mod aws;
mod azure;
mod connstr;
mod curl;
mod daemon;
mod devtools;
mod github;
mod gitlab;
mod google;
mod jwt;
mod npm;
pub(crate) mod pem;
mod saas;
mod sendgrid;
mod service;
mod slack;
mod split_body;
mod sql;
mod stripe;
mod twilio;
mod webhook;

pub(crate) use jwt::declares_public_role;

/// A rule as written in a provider module.
pub(crate) struct RuleDef {
    /// Rule id reported in findings (`Finding::rule`).
    pub name: &'static str,
    /// Secret type from tasks/FORMAT.md (`Finding::secret_type`).
    pub secret_type: &'static str,
    /// One line for reports (SARIF `rules[].shortDescription`).
    pub description: &'static str,
    /// Lowercase substrings; the regex runs only if one is in the text.
    pub keywords: &'static [&'static str],
    /// The regex; compiled once for the process, the first time a text
    /// holds one of the keywords ([`Rule::re`]).
    pub pattern: &'static str,
    /// Capture group holding the reported value.
    pub group: usize,
    /// Capture group judged for masks/placeholders (0 = same as `group`).
    pub check_group: usize,
    /// `(keyword, type)`: if the keyword is within 512 bytes before the match
    /// (or in the path), report `type` instead (Firebase keys look like Google's).
    pub context_type: Option<(&'static str, &'static str)>,
    /// Structure check the regex cannot express (a JWT header that decodes
    /// to a JSON object); a match it rejects is not a finding.
    pub validate: Option<fn(&str) -> bool>,
    /// A cheap test on the whole text, true whenever the regex can match
    /// (a necessary condition, never a judgement): for a rule whose
    /// keyword is too common to gate it (`:`), so its regex does not run
    /// on every text holding one.
    pub gate: Option<fn(&str) -> bool>,
}

/// The hand-written detectors of `scanner::candidates` (not regex tables):
/// id and one-line description, for reports' rule lists.
pub(crate) const DETECTORS: &[(&str, &str)] = &[
    (
        "private-key",
        "PEM private key block (-----BEGIN ... PRIVATE KEY-----)",
    ),
    (
        "credential-assignment",
        "Literal value assigned to a credential-named key (password, api_key, token, ...)",
    ),
    (
        "random-token",
        "High-entropy random token (entropy floor per alphabet)",
    ),
];

/// A rule and, once a text has needed it, its compiled regex.
pub(crate) struct Rule {
    pub def: &'static RuleDef,
    re: OnceLock<Regex>,
}

impl Rule {
    /// The rule's regex, compiled on first use. Compiling every rule up
    /// front was most of a small scan's CPU (one rule with a bounded
    /// Unicode class alone took a third of it), and a scan runs only the
    /// rules whose keywords occur, so most never need theirs.
    pub fn re(&self) -> &Regex {
        self.re.get_or_init(|| {
            Regex::new(self.def.pattern).unwrap_or_else(|e| panic!("rule {}: {e}", self.def.name))
        })
    }
}

/// Every rule definition in priority order (the order of [`RULES`]),
/// without compiling anything: reports list rules before a scan needs
/// their regexes.
pub(crate) fn defs() -> impl Iterator<Item = &'static RuleDef> {
    let tables: [&'static [RuleDef]; 21] = [
        ai::RULES,
        aws::RULES,
        azure::RULES,
        github::RULES,
        gitlab::RULES,
        slack::RULES,
        webhook::RULES,
        stripe::RULES,
        service::RULES,
        google::RULES,
        jwt::RULES,
        npm::RULES,
        sendgrid::RULES,
        twilio::RULES,
        devtools::RULES,
        daemon::RULES,
        saas::RULES,
        split_body::RULES,
        connstr::RULES,
        curl::RULES,
        sql::RULES,
    ];
    tables.into_iter().flatten()
}

/// All regex rules in priority order (earlier wins an overlap at equal span).
pub(crate) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    defs()
        .map(|def| Rule {
            def,
            re: OnceLock::new(),
        })
        .collect()
});

/// Every rule keyword (plus the PEM marker) as one ASCII-case-insensitive
/// Aho-Corasick DFA: one pass over the text tells which keywords occur,
/// instead of a `contains` per keyword. (A case-insensitive `RegexSet` did
/// the same through an NFA prefilter at ~3x the cost: it was a third of
/// rule-scan time.)
pub(crate) struct Keywords {
    /// ASCII-case-insensitive DFA (standard match semantics: a match
    /// state lists every keyword ending there) of every keyword but the
    /// [`Keywords::bytes`] ones, walked by [`Keywords::walk`].
    dfa: aho_corasick::dfa::DFA,
    /// The same keywords through the library's overlapping search: the
    /// reference [`Keywords::walk`] is tested against.
    #[cfg(test)]
    ac: aho_corasick::AhoCorasick,
    /// Keyword id of each pattern of `ac`.
    ac_ids: Vec<usize>,
    /// One-byte keywords without case (`:`), with their ids: looked for
    /// with `memchr`, which stops at the first; in the automaton they
    /// matched every few dozen bytes of code, each match a return from
    /// the search loop.
    bytes: Vec<(u8, usize)>,
    /// The same words as a Unicode `(?i)` set, for the rare text holding
    /// a non-ASCII character that case-folds onto an ASCII letter; built
    /// the first time one comes ([`Keywords::set`]).
    set: OnceLock<regex::RegexSet>,
    /// Sorted, deduplicated; index = pattern id in `ac` and `set`.
    words: Vec<&'static str>,
    /// Per rule (index in [`RULES`]), the ids of its keywords.
    rule_words: Vec<Vec<usize>>,
    /// Id of [`PEM_KEYWORD`].
    pem: usize,
}

/// Extra keyword for the hand-written PEM detector.
pub(crate) const PEM_KEYWORD: &str = "private key";

/// Non-ASCII characters whose simple case folding is an ASCII letter
/// (KELVIN SIGN ~ `k`, LATIN SMALL LETTER LONG S ~ `s`): the rules' `(?i)`
/// regexes match them, so a text holding one takes the Unicode keyword
/// set, or a keyword spelled with one would skip its rule.
const FOLDS_TO_ASCII: [&str; 2] = ["\u{212A}", "\u{17F}"];

/// True when `text` holds one of [`FOLDS_TO_ASCII`]: a search of its ASCII
/// lowercase would then miss what a `(?i)` regex matches.
pub(crate) fn has_ascii_folds(text: &str) -> bool {
    // Their UTF-8 lead bytes, checked first: almost every text has neither.
    memchr::memchr2(0xE2, 0xC5, text.as_bytes()).is_some()
        && FOLDS_TO_ASCII.iter().any(|f| text.contains(f))
}

impl Keywords {
    fn new(mut words: Vec<&'static str>) -> Keywords {
        words.sort_unstable();
        words.dedup();
        let id = |w: &str| words.binary_search(&w).expect("keyword listed");
        let rule_words = RULES
            .iter()
            .map(|r| r.def.keywords.iter().map(|w| id(w)).collect())
            .collect();
        let pem = id(PEM_KEYWORD);
        let (bytes, ac_ids): (Vec<usize>, Vec<usize>) = (0..words.len()).partition(|&i| {
            let w = words[i].as_bytes();
            w.len() == 1 && !w[0].is_ascii_alphabetic()
        });
        let bytes = bytes
            .into_iter()
            .map(|i| (words[i].as_bytes()[0], i))
            .collect();
        let dfa = aho_corasick::dfa::DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(aho_corasick::MatchKind::Standard)
            .prefilter(false)
            .build(ac_ids.iter().map(|&i| words[i]))
            .expect("keyword automaton");
        #[cfg(test)]
        let ac = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(ac_ids.iter().map(|&i| words[i]))
            .expect("keyword automaton");
        Keywords {
            dfa,
            #[cfg(test)]
            ac,
            ac_ids,
            bytes,
            set: OnceLock::new(),
            words,
            rule_words,
            pem,
        }
    }

    /// The Unicode `(?i)` keyword set (see [`Keywords::set`]).
    fn set(&self) -> &regex::RegexSet {
        self.set.get_or_init(|| {
            let pats = self
                .words
                .iter()
                .map(|w| format!("(?i){}", regex::escape(w)));
            regex::RegexSet::new(pats).expect("keyword set")
        })
    }

    /// Which keywords occur in `text` (case ignored), as a lookup.
    pub fn present(&self, text: &str) -> Present<'_> {
        let mut hit = vec![false; self.words.len()];
        if has_ascii_folds(text) {
            for i in self.set().matches(text).iter() {
                hit[i] = true;
            }
        } else {
            for &(c, i) in &self.bytes {
                hit[i] = memchr::memchr(c, text.as_bytes()).is_some();
            }
            self.walk(text.as_bytes(), &mut hit);
        }
        Present { kw: self, hit }
    }

    /// Marks in `hit` every keyword of the DFA occurring in `hay`. The DFA
    /// is walked over [`STREAMS`] slices of the text at once, each from the
    /// start state and running on into the next slice by a keyword's
    /// length less one, so every occurrence ends inside some slice's walk
    /// after starting inside it. The walks are independent chains of
    /// table loads, so the core overlaps them: one walk waits on each
    /// load before the next (the overlapping search was ~10% of a history
    /// scan's CPU).
    fn walk(&self, hay: &[u8], hit: &mut [bool]) {
        use aho_corasick::automaton::Automaton;
        let dfa = &self.dfa;
        let Ok(start) = dfa.start_state(aho_corasick::Anchored::No) else {
            return;
        };
        let mut mark = |sid| {
            if dfa.is_match(sid) {
                for k in 0..dfa.match_len(sid) {
                    hit[self.ac_ids[dfa.match_pattern(sid, k).as_usize()]] = true;
                }
            }
        };
        let n = hay.len();
        let over = dfa.max_pattern_len().saturating_sub(1);
        let part = n.div_ceil(STREAMS);
        // Short texts: one walk.
        let (mut pos, mut end) = ([0usize; STREAMS], [0usize; STREAMS]);
        let streams = if n < MIN_STREAMED { 1 } else { STREAMS };
        for k in 0..streams {
            pos[k] = (k * part).min(n);
            end[k] = if streams == 1 {
                n
            } else {
                ((k + 1) * part + over).min(n)
            };
        }
        let mut sid = [start; STREAMS];
        if streams == STREAMS {
            // Lockstep over the length every walk has, one test of the
            // four states for a special (match) one.
            let common = (0..STREAMS).map(|k| end[k] - pos[k]).min().unwrap_or(0);
            let at = |k: usize| &hay[pos[k]..pos[k] + common];
            let [mut s0, mut s1, mut s2, mut s3] = sid;
            let no = aho_corasick::Anchored::No;
            for (((&b0, &b1), &b2), &b3) in at(0).iter().zip(at(1)).zip(at(2)).zip(at(3)) {
                s0 = dfa.next_state(no, s0, b0);
                s1 = dfa.next_state(no, s1, b1);
                s2 = dfa.next_state(no, s2, b2);
                s3 = dfa.next_state(no, s3, b3);
                if dfa.is_special(s0.min(s1).min(s2).min(s3)) {
                    for s in [s0, s1, s2, s3] {
                        mark(s);
                    }
                }
            }
            sid = [s0, s1, s2, s3];
            for p in &mut pos {
                *p += common;
            }
        }
        for k in 0..streams {
            for &b in &hay[pos[k]..end[k]] {
                let s = dfa.next_state(aho_corasick::Anchored::No, sid[k], b);
                sid[k] = s;
                if dfa.is_special(s) {
                    mark(s);
                }
            }
        }
    }

    /// The keywords of the automaton in `text` through the library's
    /// overlapping search (the reference [`Keywords::walk`] is held to).
    #[cfg(test)]
    fn overlapping(&self, text: &str, hit: &mut [bool]) {
        for m in self.ac.find_overlapping_iter(text) {
            hit[self.ac_ids[m.pattern().as_usize()]] = true;
        }
    }
}

/// Walks of [`Keywords::walk`] run at once.
const STREAMS: usize = 4;
/// Texts shorter than this are walked in one piece.
const MIN_STREAMED: usize = 256;

/// Keywords found in one text.
pub(crate) struct Present<'a> {
    kw: &'a Keywords,
    hit: Vec<bool>,
}

impl Present<'_> {
    /// True when any of `kws` (keywords of the set) occurs.
    #[cfg(test)]
    pub fn any(&self, kws: &[&str]) -> bool {
        kws.iter()
            .any(|k| self.kw.words.binary_search(k).is_ok_and(|i| self.hit[i]))
    }

    /// True when a keyword of rule `i` (index in [`RULES`]) occurs.
    pub fn rule(&self, i: usize) -> bool {
        self.kw.rule_words[i].iter().any(|&w| self.hit[w])
    }

    /// True when [`PEM_KEYWORD`] occurs.
    pub fn pem(&self) -> bool {
        self.hit[self.kw.pem]
    }
}

pub(crate) static KEYWORDS: LazyLock<Keywords> = LazyLock::new(|| {
    let mut words: Vec<&'static str> = RULES
        .iter()
        .flat_map(|r| r.def.keywords.iter().copied())
        .collect();
    words.push(PEM_KEYWORD);
    Keywords::new(words)
});

#[cfg(test)]
mod tests {
    use super::{KEYWORDS, RULES};

    /// Rules compile on first use in a scan; every pattern must compile,
    /// and a rule's regex is built once and kept.
    #[test]
    fn every_rule_compiles_once() {
        for r in RULES.iter() {
            assert!(r.re.get().is_none() || std::ptr::eq(r.re(), r.re()));
            let first: *const regex::Regex = r.re();
            assert!(std::ptr::eq(first, r.re()), "{}", r.def.name);
        }
    }

    /// The interleaved DFA walks find exactly the keywords the library's
    /// overlapping search finds, on texts (short ones walked whole, long
    /// ones in slices) glued from keywords in any case, their fragments
    /// and separators, so keywords straddle the slices' bounds.
    #[test]
    fn interleaved_walks_match_the_overlapping_search() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let words = &KEYWORDS.words;
        let seps = [" ", "_", "-", ":", ".", "/", "\"", "(", "x", "é", "\n"];
        for _ in 0..4000 {
            let mut t = String::new();
            let pieces = if next(3) == 0 {
                60 + next(300)
            } else {
                next(12)
            };
            for _ in 0..pieces {
                let w = words[next(words.len())];
                match next(4) {
                    0 => t.push_str(w),
                    1 => t.push_str(&w.to_ascii_uppercase()),
                    2 => {
                        let a = next(w.len() + 1);
                        let b = a + next(w.len() - a + 1);
                        t.push_str(&w[a..b]);
                    }
                    _ => t.push_str(seps[next(seps.len())]),
                }
            }
            let p = KEYWORDS.present(&t);
            let mut want = vec![false; words.len()];
            for &(c, i) in &KEYWORDS.bytes {
                want[i] = t.as_bytes().contains(&c);
            }
            KEYWORDS.overlapping(&t, &mut want);
            assert_eq!(p.hit, want, "{t:?}");
        }
    }

    /// The ASCII automaton finds exactly the keywords the Unicode `(?i)`
    /// set finds, and texts with a character that folds onto an ASCII
    /// letter still see the keyword spelled with it.
    #[test]
    fn keyword_automaton_matches_the_unicode_set() {
        let mut texts: Vec<String> = vec![
            String::new(),
            "nothing to see here".into(),
            "export AWS_SECRET_ACCESS_KEY=abc".into(),
            "-----BEGIN RSA PRIVATE KEY-----".into(),
            "Authorization: Bearer xoxb-1 ghp_ sk_live_ AKIA".into(),
            "ünïcödé tëxt with Token and PASSWORD ✓".into(),
        ];
        texts.extend(KEYWORDS.words.iter().map(|w| w.to_ascii_uppercase()));
        texts.push(KEYWORDS.words.join(" "));
        // Keywords that overlap, share a start or nest (`sk-ant-`, `sk-`,
        // `sk`; `ghp_` in `xghp_`), glued together.
        texts.push(KEYWORDS.words.concat());
        texts.push("xsk-ant-sk-xoxb-ghp_github_pat_akiasecretpassword".into());
        for w in &KEYWORDS.words {
            for v in &KEYWORDS.words {
                texts.push(format!("{w}{v}"));
            }
        }
        for t in &texts {
            let p = KEYWORDS.present(t);
            let want: Vec<bool> = {
                let m = KEYWORDS.set().matches(t);
                (0..KEYWORDS.words.len()).map(|i| m.matched(i)).collect()
            };
            assert_eq!(p.hit, want, "{t:?}");
        }
        // KELVIN SIGN for `k`, LONG S for `s`: the rules' `(?i)` regexes
        // match these spellings, so their keywords must count as present.
        for w in KEYWORDS
            .words
            .iter()
            .filter(|w| w.contains('k') || w.contains('s'))
        {
            let odd = w.replace('k', "\u{212A}").replace('s', "\u{17F}");
            let p = KEYWORDS.present(&odd);
            assert!(p.any(&[w]), "{w:?} spelled {odd:?}");
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::scanner::{ScanConfig, Scanner};

    /// `rule=value` of each finding of the default scan (the environment's
    /// and the CLI's) of `text` as the file `path`; one scanner for all.
    pub fn rules(path: &str, text: &str) -> Vec<String> {
        static SCANNER: std::sync::OnceLock<Scanner> = std::sync::OnceLock::new();
        SCANNER
            .get_or_init(|| Scanner::new(ScanConfig::default()))
            .scan_bytes(path, text.as_bytes())
            .iter()
            .map(|f| format!("{}={}", f.rule, f.value))
            .collect()
    }

    /// Asserts every true positive yields a finding of `ty` with exactly the
    /// expected value, and every false positive yields no finding at all.
    pub fn check(ty: &str, tps: &[(&str, &str)], fps: &[(&str, &str)]) {
        let s = Scanner::new(ScanConfig::redaction());
        for (input, want) in tps {
            let f = s.scan_bytes("config/app.env", input.as_bytes());
            assert!(
                f.iter().any(|f| f.secret_type == ty && f.value == *want),
                "TP missed: {input:?} want {want:?} ({ty}); got {:?}",
                f.iter()
                    .map(|f| (&f.secret_type, &f.value))
                    .collect::<Vec<_>>()
            );
        }
        for (input, reason) in fps {
            let f = s.scan_bytes("config/app.env", input.as_bytes());
            assert!(
                f.is_empty(),
                "FP ({reason}): {input:?} gave {:?}",
                f.iter().map(|f| (&f.rule, &f.value)).collect::<Vec<_>>()
            );
        }
    }
}
