//! The credential-named assignment rule: `KEY=value`, `key: "value"`,
//! `"key": "value"`, `export KEY=value`, where the key names a credential
//! and the value is a literal of 8+ characters, not code (`os.environ[...]`,
//! `os.getenv(`, `process.env.X`, `${VAR}`, a call, an attribute path).
//!
//! Round 5 (issue 18): password directives without an operator (HAProxy
//! `user x insecure-password <pw>`); not values: ICU MessageFormat
//! arguments, `@file` arguments, comma lists of secret names,
//! `name:/path` pairs, fields of an ARN, git remotes with a user and no
//! password.
//!
//! Hand-scanned in one pass over identifiers rather than with a lookahead
//! regex: each byte is visited a bounded number of times, so cost stays
//! linear on hostile lines like `a=a=a=...`.

use super::mask::is_masked_or_placeholder;
use super::{identifier, prose, words};

/// Key words that name a password: a password may be a short human-chosen
/// string (`hunter2`), so these keys accept [`MIN_PASSWORD`] characters,
/// but a value of plain words (`tenant-window`) is not one.
const PASSWORD_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    // LDAP clients' and servers' password directives (nslcd, pam_ldap,
    // slapd.conf).
    "bindpw",
    "rootpw",
];
/// Shortest literal judged for password keys.
const MIN_PASSWORD: usize = 6;
/// Shortest literal judged for other credential keys.
const MIN_VALUE: usize = 8;

/// Key words that make any 8+ character literal a secret.
const STRONG: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "credential",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "accesskey",
    "private_key",
    "privatekey",
    "signing_key",
    "encryption_key",
    // Fernet (Python `cryptography`, Airflow's `fernet_key`): the key that
    // decrypts every stored connection.
    "fernet_key",
    "auth_key",
    "authkey",
    "client_secret",
    "bearer",
    "bindpw",
    "rootpw",
    // Drupal's `hash_salt`: the site-wide key of its one-time login links,
    // form tokens and session ids, not a password hash's salt.
    "hash_salt",
    // Last, so the longer words above win where both match: `pass` and
    // `pw` count only as the key's last segment ([`pass_segment`]): `pw`
    // is the password in `DB_PW`, `smtp_pw`, `_PW` (issue 18,
    // generator-14 `platform-app-signing-key`), and nothing in
    // `username_pw_set` or `pwa`. `pw` is looked for with the separator
    // before it (`find` drops it): a two-byte word would make the
    // automaton's prefilter match every few bytes of text.
    "pass",
    "_pw",
    "-pw",
    ".pw",
];

/// Key suffixes that name something about a credential, not the credential.
const NOT_SECRET_SUFFIX: &[&str] = &[
    "_file",
    "_path",
    "_url",
    "_uri",
    "_name",
    "_type",
    "_id",
    "_len",
    "_length",
    "_env",
    "_var",
    "_field",
    "_header",
    "_endpoint",
    "_expiry",
    "_ttl",
    "_at",
    "_count",
    "_prefix",
    "_format",
    "_dir",
    "_policy",
    "_enabled",
    "_required",
    "_timeout",
    "_version",
    "_kind",
    // A template the secret is made from, not the secret: CloudFormation's
    // `GenerateSecretString: SecretStringTemplate: '{"username": "etl"}'`
    // holds the fields a generated password is added to (issue 18,
    // generator-14 `cloudformation-dynamic-references`).
    "template",
    // UI text about a credential (`secret_question`, `password_hint`):
    // i18n catalogues hold sentences under such keys.
    "_question",
    "_label",
    "_hint",
    "_message",
    "_text",
    "_prompt",
    "_title",
    "_description",
    "_placeholder",
    "_tooltip",
    "-file",
    "-path",
    "-url",
    "-name",
    "-type",
    "-header",
    "file",
    "path",
    "tokenizer",
    "tokens",
    // camelCase and bare forms (`tokenUrl`, `authEndpoint`, `secretName`,
    // `secretKeyRef`): the key is lowercased before the test.
    "url",
    "uri",
    "urls",
    "endpoint",
    "host",
    "hostname",
    "name",
    "names",
    "ref",
    "arn",
    "header",
    "type",
    // `UserSecretsId`, `tokenId`: an identifier (`secret_id` is excluded
    // by `_id` already).
    "id",
];

/// Right-hand sides that are code reading the value from elsewhere.
const CODE_PREFIX: &[&str] = &[
    "os.environ",
    "os.getenv",
    "getenv",
    "process.env",
    "env(",
    "env.",
    "env[",
    "${",
    "$(",
    "system.getenv",
    "config.",
    "settings.",
    "self.",
    "this.",
    "request.",
    "vault.",
    "secrets.",
    "environ",
    "std::env",
];

/// All strong key words as one case-insensitive regex: one optimized pass
/// finds candidate keys, instead of ~20 `contains` calls per identifier.
/// Used on texts holding a non-ASCII letter that folds to an ASCII one
/// (see [`super::rules::has_ascii_folds`]).
static KEY_WORDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    let alt: Vec<String> = STRONG.iter().map(|w| regex::escape(w)).collect();
    regex::Regex::new(&format!("(?i){}", alt.join("|"))).expect("key word regex")
});

/// The same search on the ASCII-lowercased text, for every other text: the
/// same leftmost-first matches at the same offsets (the words are lowercase
/// ASCII and lowercasing ASCII keeps offsets), at a fraction of the regex's
/// cost on a history scan.
static KEY_WORDS_LOWER: std::sync::LazyLock<aho_corasick::AhoCorasick> =
    std::sync::LazyLock::new(|| {
        aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build(STRONG)
            .expect("key word automaton")
    });

/// Spans of strong key words in `text` (`lower` is its ASCII lowercase).
fn key_words(text: &str, lower: &str) -> Vec<(usize, usize)> {
    if super::rules::has_ascii_folds(text) {
        KEY_WORDS
            .find_iter(text)
            .map(|m| (m.start(), m.end()))
            .collect()
    } else {
        KEY_WORDS_LOWER
            .find_iter(lower)
            .map(|m| (m.start(), m.end()))
            .collect()
    }
}

/// Longest key considered.
const MAX_KEY: usize = 128;

/// Pushes byte spans of assigned literal values.
pub(crate) fn find(text: &str, lower: &str, code_file: bool, out: &mut Vec<(usize, usize)>) {
    let b = text.as_bytes();
    let lb = lower.as_bytes();
    let n = b.len();
    // Everything before `done` has been judged; hits inside it are skipped,
    // so each byte is expanded over a bounded number of times.
    let mut done = 0;
    for (mut m_start, mut m_end) in key_words(text, lower) {
        // `_pw`, `-pw`, `.pw`: the word without its separator, or `pwd`
        // (the match took the bytes `pwd` would have started at).
        if matches!(lb[m_start], b'_' | b'-' | b'.') {
            m_start += 1;
            if lb.get(m_end) == Some(&b'd') {
                m_end += 1;
            }
        }
        if m_start < done {
            continue;
        }
        let mut start = m_start;
        while start > done && is_ident(b[start - 1]) && m_start - start < MAX_KEY {
            start -= 1;
        }
        let mut end = m_end;
        while end < n && is_ident(b[end]) {
            end += 1;
        }
        let before = done;
        done = end;
        if end - start > MAX_KEY || (start > 0 && is_ident(b[start - 1])) {
            continue;
        }
        // `tokenizer`, `secretary`: another word (a later key word in
        // the identifier is still judged).
        if words::in_derived_word(lower, m_start, m_end) {
            done = before;
            continue;
        }
        let key = &lower[start..end];
        let short_pass = matches!(&lower[m_start..m_end], "pass" | "pw");
        if short_pass && !pass_segment(b, start, m_start, m_end, end) {
            // Another key word later in the identifier (`bypass_token`)
            // is still judged.
            done = before;
            continue;
        }
        if NOT_SECRET_SUFFIX.iter().any(|s| key.ends_with(s))
            || in_arn(lower, start)
            || in_dynamic_reference(lb, start)
            || words::names_public(key)
        {
            continue;
        }
        let password = short_pass || PASSWORD_WORDS.iter().any(|w| key.contains(w));
        // `${TOKEN:?message}`, `${TOKEN:-default}`: a shell parameter
        // expansion reads the variable; only a default it supplies is a
        // literal value.
        if let Some(expansion) = parameter_expansion(b, start, end) {
            if let Some((vs, ve)) = expansion {
                let mut scanned = ve;
                if let Some(span) = judge(b, lb, vs, ve, password, &mut scanned) {
                    out.push(span);
                }
                done = done.max(ve);
            }
            continue;
        }
        // A Go struct tag naming the variable (`env:"REDIS_PASSWORD"`):
        // only the default the tag supplies is a literal.
        if let Some(default) = struct_tag_default(b, start, end) {
            if let Some((vs, ve)) = default {
                let mut scanned = ve;
                if let Some(span) = judge(b, lb, vs, ve, password, &mut scanned) {
                    out.push(span);
                }
                done = done.max(ve);
            }
            continue;
        }
        // A declared parameter's or variable's default (CloudFormation
        // `Parameters: DBPassword: … Default:`, Terraform `variable
        // "db_password" { default = … }`): the literal is the value.
        if let Some(default) = declared_default(b, start, end) {
            if let Some((vs, ve)) = default {
                let mut scanned = ve;
                if let Some(span) = judge(b, lb, vs, ve, password, &mut scanned) {
                    out.push(span);
                }
                done = done.max(ve);
            }
            continue;
        }
        if password
            && !code_file
            && let Some((vs, ve)) =
                netrc_value(b, start, end).or_else(|| directive_value(b, start, end))
        {
            let mut scanned = ve;
            if let Some(span) = judge(b, lb, vs, ve, password, &mut scanned) {
                out.push(span);
            }
            done = done.max(ve);
            continue;
        }
        // `password_hasher`, `tokenProvider`: a component, not a credential;
        // `next_page_token`, `cacheKey`: a compound whose head is no secret.
        if identifier::names_a_component(&text[start..end]) || non_secret_compound(key) {
            continue;
        }
        let form = KeyForm::of(b, start, end);
        match value_after(b, lb, end, code_file, password, form) {
            Ok((vs, ve)) => {
                out.push((vs, ve));
                done = done.max(ve);
            }
            // Resume after what was scanned as a value: re-reading it from
            // every key inside it would be quadratic (`password=password=...`).
            Err(resume) => done = done.max(resume),
        }
    }
}

/// True when `pass` at `m_start..m_end` is the last segment of the key
/// `start..end`: `db_pass`, `DB_PASS`, `dbPass`, `pass` (a password), not
/// `bypass`, `compass` or `passenger`.
fn pass_segment(b: &[u8], start: usize, m_start: usize, m_end: usize, end: usize) -> bool {
    m_end == end
        && (m_start == start
            || matches!(b[m_start - 1], b'_' | b'-' | b'.')
            || (b[m_start].is_ascii_uppercase() && b[m_start - 1].is_ascii_lowercase()))
}

/// True when blanking the key's non-secret compounds
/// ([`super::naming::blank_compounds`]: `page token`, `cache key`,
/// `public key`) leaves no strong key word in it.
fn non_secret_compound(key: &str) -> bool {
    let kept = super::naming::blank_compounds(key);
    kept != key && !STRONG.iter().any(|w| kept.contains(w))
}

/// True when the key at `start` is a field of an ARN
/// (`arn:aws:secretsmanager:eu-west-1:…:secret:prod/api-key-AbC123`): the
/// piece of text it ends opens with `arn:`, so `secretsmanager:` and
/// `secret:` are an ARN's service and resource type, not assignments.
fn in_arn(lower: &str, start: usize) -> bool {
    // From a char boundary: a character before the key may be several
    // bytes long (`—` in a README's prose).
    let mut from = start.saturating_sub(MAX_KEY);
    while !lower.is_char_boundary(from) {
        from += 1;
    }
    super::random::is_arn_tail(&lower[from..start])
}

/// True when the key at `start` is a field of a CloudFormation dynamic
/// reference (`{{resolve:secretsmanager:etl/db:SecretString:password}}`,
/// `{{resolve:ssm-secure:/app/api-token:3}}`): the piece of text it ends
/// opens with `{{resolve:`, so `secretsmanager:` and `SecretString:` are
/// the reference's service and field, not assignments (issue 18,
/// generator-14 `cloudformation-dynamic-references`). `lb` is the text
/// in ASCII lowercase.
fn in_dynamic_reference(lb: &[u8], start: usize) -> bool {
    let piece = lb[start.saturating_sub(MAX_KEY)..start]
        .rsplit(|&c| {
            c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b'(' | b'[' | b',' | b'=')
        })
        .next()
        .unwrap_or(&[]);
    piece.starts_with(b"{{resolve:")
}

/// Lines of a declaration block read for its default, at most.
const MAX_DECLARATION_LINES: usize = 16;

/// The default of a parameter or variable the key at `start..end`
/// declares, where a template language declares inputs with a type and an
/// optional default:
/// - a YAML mapping key alone on its line whose indented block holds a
///   `Type:` and a `Default:` (CloudFormation and SAM `Parameters:`,
///   Serverless, OpenAPI-like schemas);
/// - Terraform's `variable "db_password" {` block with `default = "…"`.
///
/// `None` when the key is no such declaration; `Some(None)` when it is
/// one without a literal default (the value comes from whoever deploys);
/// `Some(Some(span))` for the default, judged as a literal (issue 18,
/// generator-14 `cloudformation-literal-secret`: `NoEcho: true` hides
/// the parameter from the console, not its default from the repository).
fn declared_default(b: &[u8], start: usize, end: usize) -> Option<Option<(usize, usize)>> {
    // The key's line up to it: a short head only (a long line of keys
    // costs each key a bounded look back).
    let line = directive_line_start(b, start)?;
    let head = &b[line..start];
    let line_end = |from: usize| {
        b[from..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |i| from + i)
    };
    if b.get(end) == Some(&b':') && head.iter().all(|&c| matches!(c, b' ' | b'\t')) {
        // A YAML key opening a block: nothing but a comment after it.
        if !matches!(
            b.get(skip_blanks(b, end + 1)),
            None | Some(b'\n' | b'\r' | b'#')
        ) {
            return None;
        }
        let indent = head.len();
        let (mut typed, mut default) = (false, None);
        let mut at = line_end(end + 1);
        for _ in 0..MAX_DECLARATION_LINES {
            if at >= b.len() {
                break;
            }
            let ls = at + 1;
            let le = line_end(ls);
            at = le;
            let l = &b[ls..le];
            let body = l.trim_ascii_start();
            if body.is_empty() || body.starts_with(b"#") {
                continue;
            }
            if l.len() - body.len() <= indent {
                break;
            }
            let vs = ls + (l.len() - body.len());
            if let Some(v) = yaml_field(body, b"type") {
                typed |= !v.is_empty();
            } else if let Some(v) = yaml_field(body, b"default") {
                let off = vs + (v.as_ptr() as usize - body.as_ptr() as usize);
                default = Some(unquote(b, off, off + v.len()));
            }
        }
        return typed.then_some(default);
    }
    // Terraform: `variable "NAME" {`.
    if start == 0 || b[start - 1] != b'"' || b.get(end) != Some(&b'"') {
        return None;
    }
    if head.trim_ascii_start() != b"variable \"" {
        return None;
    }
    let brace = skip_blanks(b, end + 1);
    if b.get(brace) != Some(&b'{')
        || !matches!(b.get(skip_blanks(b, brace + 1)), None | Some(b'\n' | b'\r'))
    {
        return None;
    }
    let mut at = line_end(end + 1);
    for _ in 0..MAX_DECLARATION_LINES {
        if at >= b.len() {
            break;
        }
        let ls = at + 1;
        let le = line_end(ls);
        at = le;
        let body = b[ls..le].trim_ascii();
        if body.starts_with(b"}") {
            break;
        }
        let Some(rest) = body.strip_prefix(b"default") else {
            continue;
        };
        let rest = rest.trim_ascii_start();
        let Some(v) = rest.strip_prefix(b"=") else {
            continue;
        };
        let v = v.trim_ascii();
        if v.len() < 2 || v[0] != b'"' || v[v.len() - 1] != b'"' {
            return Some(None);
        }
        let off = v.as_ptr() as usize - b.as_ptr() as usize;
        return Some(Some((off + 1, off + v.len() - 1)));
    }
    Some(None)
}

/// The index after the spaces and tabs from `p`.
fn skip_blanks(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && matches!(b[p], b' ' | b'\t') {
        p += 1;
    }
    p
}

/// The value of the YAML field `name: value` (name ASCII-case-insensitive)
/// that `body`, a line without its indentation, holds, without a trailing
/// comment (` #…`) and blanks.
fn yaml_field<'a>(body: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    if body.len() <= name.len()
        || !body[..name.len()].eq_ignore_ascii_case(name)
        || body[name.len()] != b':'
    {
        return None;
    }
    let v = &body[name.len() + 1..];
    let v = match v.windows(2).position(|w| w == b" #") {
        Some(i) if !matches!(v.trim_ascii_start().first(), Some(b'"' | b'\'')) => &v[..i],
        _ => v,
    };
    Some(v.trim_ascii())
}

/// `b[vs..ve]` without the quotes around it, if it has a matching pair.
fn unquote(b: &[u8], vs: usize, ve: usize) -> (usize, usize) {
    if ve >= vs + 2 && matches!(b[vs], b'"' | b'\'') && b[ve - 1] == b[vs] {
        (vs + 1, ve - 1)
    } else {
        (vs, ve)
    }
}

/// Where the line holding `start` begins, looked for at most
/// [`MAX_DIRECTIVE_HEAD`] bytes back: a directive's head is short, so a
/// long line of keywords (`PASSWORD 'PASSWORD '…`) costs linear time.
/// `None` when the line starts further back.
fn directive_line_start(b: &[u8], start: usize) -> Option<usize> {
    let from = start.saturating_sub(MAX_DIRECTIVE_HEAD);
    match b[from..start].iter().rposition(|&c| c == b'\n') {
        Some(i) => Some(from + i + 1),
        None if from == 0 => Some(0),
        None => None,
    }
}

/// netrc tokens that open an entry's line (`.netrc`, `_netrc`,
/// `.authinfo`): `machine <host>`, `default`, and the entry's fields.
const NETRC_TOKENS: &[&[u8]] = &[b"machine", b"default", b"login", b"account", b"port"];

/// The value of netrc's `password <value>` token pair on a line of netrc
/// tokens (`machine h login u password p`, `.authinfo`'s `machine h login
/// u password p port 443`, `password p` alone): the next whitespace-
/// separated field, wherever the pair sits on the line. Only when the
/// line opens with a netrc token and the key is exactly `password`.
fn netrc_value(b: &[u8], start: usize, end: usize) -> Option<(usize, usize)> {
    if !b[start..end].eq_ignore_ascii_case(b"password") || !matches!(b.get(end), Some(b' ' | b'\t'))
    {
        return None;
    }
    let line_start = directive_line_start(b, start)?;
    let first = b[line_start..start]
        .split(|c| matches!(c, b' ' | b'\t'))
        .find(|f| !f.is_empty())?;
    if !NETRC_TOKENS.contains(&first) {
        return None;
    }
    let mut vs = end;
    while vs < b.len() && matches!(b[vs], b' ' | b'\t') {
        vs += 1;
    }
    let limit = (vs + MAX_DIRECTIVE_HEAD * 2).min(b.len());
    let ve = (vs..limit)
        .find(|&i| matches!(b[i], b' ' | b'\t' | b'\r' | b'\n'))
        .unwrap_or(limit);
    (ve > vs && !matches!(b[vs], b'=' | b':')).then_some((vs, ve))
}

/// Longest default value of a parameter expansion read.
const MAX_EXPANSION: usize = 512;

/// A POSIX shell parameter expansion of the key at `start..end`:
/// `${NAME}`, `${NAME:?message}`, `${NAME?message}`, `${NAME:+alt}`,
/// `${NAME:-default}`, `${NAME:=default}` (also with `-`/`=` alone).
/// `None` when the key is not inside `${`; `Some(None)` when the
/// expansion holds no literal value (a reference, an error message, an
/// alternative used only when the variable is set); `Some(Some(span))`
/// for the default value it supplies, judged as a literal.
///
/// Spring's and Micronaut's property placeholders have the same shape
/// with the key as the last word of a dotted property name and a bare
/// `:` before the default: `@Value("${ldap.manager-password:Lantern5}")`
/// (issue 18, generator-12 `spring-value-annotation-default-secret`); the
/// default is what runs wherever the property is unset, so it is judged
/// as a literal like the shell's.
fn parameter_expansion(b: &[u8], start: usize, end: usize) -> Option<Option<(usize, usize)>> {
    let mut name = start;
    while name > 0
        && (b[name - 1].is_ascii_alphanumeric() || matches!(b[name - 1], b'.' | b'_' | b'-'))
    {
        name -= 1;
    }
    let open = name.checked_sub(2)?;
    if &b[open..name] != b"${" {
        return None;
    }
    let mut p = end;
    let colon = b.get(p) == Some(&b':');
    if colon {
        p += 1;
    }
    let op = *b.get(p)?;
    let vs = if matches!(op, b'-' | b'=') {
        p + 1
    } else if colon && !matches!(op, b'?' | b'+' | b'}') && b[name..end].contains(&b'.') {
        // Spring's `${a.b-password:default}`.
        p
    } else {
        // `}`, `?`, `+`, or anything else (`${TOKEN%%.*}`, `${TOKEN#x}`):
        // the variable's value, transformed; no literal credential.
        return Some(None);
    };
    let limit = (vs + MAX_EXPANSION).min(b.len());
    let ve = (vs..limit).find(|&i| matches!(b[i], b'}' | b'\n'))?;
    if b[ve] != b'}' {
        return Some(None);
    }
    // A quoted default: the quotes are the shell's, not the value's.
    let (mut vs, mut ve) = (vs, ve);
    if ve > vs + 1 && matches!(b[vs], b'"' | b'\'') && b[ve - 1] == b[vs] {
        vs += 1;
        ve -= 1;
    }
    Some(Some((vs, ve)))
}

/// Tag keys of Go configuration loaders that name an environment
/// variable (`caarlos0/env`, `kelseyhightower/envconfig`).
const ENV_TAGS: &[&[u8]] = &[b"env:\"", b"envconfig:\""];
/// Tag keys that give the variable's default.
const DEFAULT_TAGS: &[&[u8]] = &[b" envDefault:\"", b" default:\""];

/// The key at `start..end` as the whole name in a Go struct tag's
/// `env:"…"` or `envconfig:"…"` (issue 18, generator-12
/// `go-viper-config-secret`: `RedisPass string \`env:"REDIS_PASSWORD"
/// envDefault:"…"\``). `None` when it is not one; `Some(None)` when the
/// tag gives no default (the value comes from the environment);
/// `Some(Some(span))` for the default, judged as a literal.
fn struct_tag_default(b: &[u8], start: usize, end: usize) -> Option<Option<(usize, usize)>> {
    if start == 0 || b[start - 1] != b'"' || b.get(end) != Some(&b'"') {
        return None;
    }
    let mut name = start - 1;
    while name > 0 && (b[name - 1].is_ascii_alphanumeric() || b[name - 1] == b'_') {
        name -= 1;
    }
    let head = &b[..name];
    if !ENV_TAGS.iter().any(|t| head.ends_with(t)) {
        return None;
    }
    // The rest of the tag: to its closing backquote, on this line.
    let tag_end = (end..b.len().min(end + 512))
        .find(|&i| matches!(b[i], b'`' | b'\n'))
        .filter(|&i| b[i] == b'`')?;
    let tag = &b[end + 1..tag_end];
    for d in DEFAULT_TAGS {
        if let Some(at) = tag.windows(d.len()).position(|w| w == *d) {
            let vs = end + 1 + at + d.len();
            let ve = (vs..tag_end).find(|&i| b[i] == b'"')?;
            return Some(Some((vs, ve)));
        }
    }
    Some(None)
}

/// Fields on a directive line before its password keyword
/// (`user admin insecure-password …`).
const MAX_DIRECTIVE_FIELDS: usize = 3;
/// Longest directive head (text before the keyword on its line) and
/// longest value read.
const MAX_DIRECTIVE_HEAD: usize = 128;

/// The value of a space-separated configuration directive whose keyword
/// names a password and whose value is the line's last field: HAProxy's
/// `user admin insecure-password <pw>`, `masterauth`-style lines. Only
/// plain words may precede the keyword on its line, and exactly one field
/// follows it, so prose (`the password is below`) is not read as one.
fn directive_value(b: &[u8], start: usize, end: usize) -> Option<(usize, usize)> {
    let n = b.len();
    // The keyword is a plain identifier (`insecure-password`), not a file
    // name (`add_password_resets.sql h1:…` in a checksum list).
    if !matches!(b.get(end), Some(b' ' | b'\t'))
        || b[start..end].contains(&b'.')
        || b[start].is_ascii_digit()
    {
        return None;
    }
    let line_start = directive_line_start(b, start)?;
    let head = &b[line_start..start];
    let fields = head
        .split(|c| matches!(c, b' ' | b'\t'))
        .filter(|f| !f.is_empty());
    let mut count = 0;
    for f in fields {
        count += 1;
        if count > MAX_DIRECTIVE_FIELDS
            || !f
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        {
            return None;
        }
    }
    let mut vs = end;
    while vs < n && matches!(b[vs], b' ' | b'\t') {
        vs += 1;
    }
    let mut ve = vs;
    let limit = (vs + MAX_DIRECTIVE_HEAD * 2).min(n);
    while ve < limit && !matches!(b[ve], b' ' | b'\t' | b'\r' | b'\n') {
        ve += 1;
    }
    if ve == limit && ve < n {
        return None;
    }
    let mut rest = ve;
    while rest < n && matches!(b[rest], b' ' | b'\t' | b'\r') {
        rest += 1;
    }
    if ve == vs || (rest < n && b[rest] != b'\n') {
        return None;
    }
    // An operator or a quoted value is the ordinary assignment form.
    if matches!(b[vs], b'=' | b':' | b'"' | b'\'') {
        return None;
    }
    Some((vs, ve))
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.'
}

/// Where a key sits, beyond `key = value`: the two layouts in which the
/// key is not followed by an assignment operator.
#[derive(Clone, Copy, PartialEq)]
enum KeyForm {
    /// `key = value`, `key: value`, `"key" => value`, ...
    Plain,
    /// A quoted first argument of a call: `System.setProperty("API_TOKEN",
    /// "…")`, `props.put("password", "…")`, `os.getenv("TOKEN", "…")` —
    /// the second argument is the value (or a hard-coded default).
    CallArgument,
    /// A string literal that initializes or sets the key's object: C++
    /// direct initialization `std::string secret("…");` (a type name
    /// before the key) and setter calls `secret.assign("…")`,
    /// `password.set("…")`.
    Initializer,
    /// An XML element named for the key: `<password>…</password>`
    /// (Maven settings.xml, .NET config), value in its text content.
    XmlElement,
    /// An XML element whose `name`/`key` attribute is the key, value in
    /// its text content: `<property name="connection.password">…</property>`
    /// (Hibernate, log4j, Ant).
    XmlNamedText,
    /// A property list's `<key>Name</key>` followed by the value element
    /// `<string>…</string>` (Apple Info.plist, launchd plists).
    PlistKey,
    /// A C preprocessor macro named for the key: `#define SECRET_PASS
    /// "…"` (Arduino's `arduino_secrets.h`, firmware headers); the value
    /// is the string literal after the name, with no operator.
    Define,
    /// The same attribute followed by a `value` attribute: `<add
    /// key="ApiKey" value="…"/>` (.NET appSettings), `<property
    /// name="password" value="…"/>` (Spring).
    XmlValueAttr,
}

impl KeyForm {
    fn of(b: &[u8], start: usize, end: usize) -> KeyForm {
        if start > 0 && b[start - 1] == b'<' && b.get(end) == Some(&b'>') {
            return KeyForm::XmlElement;
        }
        if start >= 5 && &b[start - 5..start] == b"<key>" && b[end..].starts_with(b"</key>") {
            return KeyForm::PlistKey;
        }
        if let Some(form) = Self::xml_named(b, start, end) {
            return form;
        }
        if Self::defined_macro(b, start, end) {
            return KeyForm::Define;
        }
        // A quoted argument naming the next one: a call's first argument
        // (`setProperty("API_TOKEN", "…")`) or a name in a name-value
        // argument list (MATLAB `weboptions('Username', u, 'Password',
        // '…')`, R, Lua, Python `*args`).
        if start > 0 && matches!(b[start - 1], b'"' | b'\'') && b.get(end) == Some(&b[start - 1]) {
            let mut i = start - 1;
            while i > 0 && matches!(b[i - 1], b' ' | b'\t') {
                i -= 1;
            }
            if i > 0 && (b[i - 1] == b'(' || (b[i - 1] == b',' && Self::after_pair(b, i - 1))) {
                return KeyForm::CallArgument;
            }
        }
        if Self::compared(b, start, end) {
            return KeyForm::CallArgument;
        }
        if b.get(end) == Some(&b'(')
            && b.get(end + 1).is_some_and(|&q| matches!(q, b'"' | b'\''))
            && (Self::setter(b, start, end)
                || Self::after_type(b, start)
                || Self::wraps_literal_secret(b, start, end))
        {
            return KeyForm::Initializer;
        }
        KeyForm::Plain
    }

    /// True when the bare key at `start..end` is the first argument of
    /// a comparison call whose second is a string literal:
    /// `secure_compare(password, "…")` (Rails, Rack basic auth),
    /// `hmac.compare_digest(token, "…")`, `String.Equals(apiKey, "…")`
    /// (issue 18, generator-13 `sidekiq-redis-initializer`). The literal
    /// is what the credential must equal: the credential itself.
    fn compared(b: &[u8], start: usize, end: usize) -> bool {
        if b.get(end) != Some(&b',') {
            return false;
        }
        let mut j = end + 1;
        while j < b.len() && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        if !b.get(j).is_some_and(|&q| matches!(q, b'"' | b'\'')) {
            return false;
        }
        let mut i = start;
        while i > 0 && matches!(b[i - 1], b' ' | b'\t') {
            i -= 1;
        }
        if i == 0 || b[i - 1] != b'(' {
            return false;
        }
        let call_end = i - 1;
        let mut k = call_end;
        while k > 0 && (b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_') {
            k -= 1;
        }
        let call = b[k..call_end].to_ascii_lowercase();
        call.ends_with(b"compare")
            || call.ends_with(b"compare_digest")
            || call.ends_with(b"equal")
            || call.ends_with(b"equals")
    }

    /// True when the comma at `comma` ends a name-value pair: the
    /// argument before it follows `, 'Name',` (MATLAB `'Username', u,
    /// 'Password', …`), so the quoted key after it is the next pair's
    /// name, not a value (`fromSecretNameV2(this, 'DbSecret', 'prod/db')`:
    /// `this` follows `(`).
    fn after_pair(b: &[u8], comma: usize) -> bool {
        let mut j = comma;
        while j > 0 && matches!(b[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        // Skip the previous argument: a quoted string or a bare token.
        if j > 0 && matches!(b[j - 1], b'"' | b'\'') {
            let q = b[j - 1];
            j -= 1;
            while j > 0 && b[j - 1] != q && b[j - 1] != b'\n' {
                j -= 1;
            }
            j = j.saturating_sub(1);
        } else {
            while j > 0 && !matches!(b[j - 1], b',' | b'(' | b'\n' | b' ') {
                j -= 1;
            }
        }
        while j > 0 && matches!(b[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        if j == 0 || b[j - 1] != b',' {
            return false;
        }
        j -= 1;
        while j > 0 && matches!(b[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        // A quoted name: letters, digits, `_`, `-`, `.`, from a letter.
        if j == 0 || !matches!(b[j - 1], b'"' | b'\'') {
            return false;
        }
        let q = b[j - 1];
        let e = j - 1;
        let mut s = e;
        while s > 0 && (b[s - 1].is_ascii_alphanumeric() || matches!(b[s - 1], b'_' | b'-' | b'.'))
        {
            s -= 1;
        }
        s > 0 && s < e && b[s - 1] == q && b[s].is_ascii_alphabetic()
    }

    /// A call whose name says it wraps a literal secret: IdentityServer's
    /// (Duende's) `new Secret("…".Sha256())` client secret, AWS CDK's
    /// `SecretValue.unsafePlainText('…')` / `SecretValue.plainText('…')`,
    /// Pulumi's `pulumi.secret('…')` / `Output.secret('…')`, pydantic's
    /// `SecretStr('…')`, .NET and Java `SecretString("…")`,
    /// `SecureString`: its literal argument is the credential.
    fn wraps_literal_secret(b: &[u8], start: usize, end: usize) -> bool {
        let key = b[start..end].to_ascii_lowercase();
        let last = key.rsplit(|&c| c == b'.').next().unwrap_or(&key);
        let object = &key[..key.len() - last.len()];
        matches!(last, b"secretstr" | b"secretstring" | b"securestring")
            || (matches!(last, b"unsafeplaintext" | b"plaintext")
                && object.ends_with(b"secretvalue."))
            || (last == b"secret" && (object.ends_with(b"pulumi.") || object.ends_with(b"output.")))
            || (key == b"secret" && b[..start].ends_with(b"new "))
    }

    /// `#define KEY ` opens the key's line (blanks allowed around `#`),
    /// and a blank follows the key.
    fn defined_macro(b: &[u8], start: usize, end: usize) -> bool {
        if !matches!(b.get(end), Some(b' ' | b'\t')) {
            return false;
        }
        let Some(line) = directive_line_start(b, start) else {
            return false;
        };
        let head: Vec<u8> = b[line..start]
            .iter()
            .filter(|c| !matches!(c, b' ' | b'\t'))
            .copied()
            .collect();
        head == b"#define" && b[start - 1] != b'#'
    }

    /// `key.assign(`, `key.set(`, `key.setValue(`: the key ends with a
    /// setter method.
    fn setter(b: &[u8], start: usize, end: usize) -> bool {
        let key = b[start..end].to_ascii_lowercase();
        [&b".assign"[..], b".set", b".setvalue", b".set_value"]
            .iter()
            .any(|s| key.ends_with(s) && key.len() > s.len())
    }

    /// The key follows a type name on its line (`std::string secret(`,
    /// `QString password(`, `const char *token(`), not a keyword that
    /// makes `key(…)` a call (`return secret("…")`).
    fn after_type(b: &[u8], start: usize) -> bool {
        let mut j = start;
        while j > 0 && matches!(b[j - 1], b' ' | b'\t' | b'*' | b'&') {
            j -= 1;
        }
        if j == start {
            return false;
        }
        let te = j;
        while j > 0
            && (b[j - 1].is_ascii_alphanumeric() || matches!(b[j - 1], b'_' | b':' | b'<' | b'>'))
        {
            j -= 1;
        }
        let ty = &b[j..te];
        const NOT_TYPES: &[&[u8]] = &[
            b"return", b"await", b"yield", b"if", b"elif", b"else", b"and", b"or", b"not", b"in",
            b"new", b"throw", b"case", b"print", b"echo", b"assert",
        ];
        ty.first().is_some_and(u8::is_ascii_alphabetic)
            && (j == 0 || matches!(b[j - 1], b' ' | b'\t' | b'\n' | b'(' | b'{' | b';'))
            && !NOT_TYPES.contains(&ty)
    }
}

impl KeyForm {
    /// `name="KEY">` or `key="KEY" value=`: the key is a quoted `name` or
    /// `key` attribute of an XML element.
    fn xml_named(b: &[u8], start: usize, end: usize) -> Option<KeyForm> {
        let q = *b.get(start.checked_sub(1)?)?;
        if !matches!(q, b'"' | b'\'') || b.get(end) != Some(&q) {
            return None;
        }
        let before = &b[start.saturating_sub(7)..start - 1];
        let lower: Vec<u8> = before.iter().map(u8::to_ascii_lowercase).collect();
        if !(lower.ends_with(b" name=") || lower.ends_with(b" key=")) {
            return None;
        }
        if b.get(end + 1) == Some(&b'>') {
            return Some(KeyForm::XmlNamedText);
        }
        let mut j = end + 1;
        while j < b.len() && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        let rest = &b[j..(j + 7).min(b.len())];
        (rest.len() == 7
            && rest[..6].eq_ignore_ascii_case(b"value=")
            && matches!(rest[6], b'"' | b'\''))
        .then_some(KeyForm::XmlValueAttr)
    }
}

/// Longest type name skipped in a typed declaration (`var token string =`,
/// `const token: string =`, `val token: String =`).
const MAX_TYPE: usize = 32;

/// If `b[p..]` is `TYPE ws = ` (not `==`), where TYPE is a type name
/// (`string`, `&str`, `String`, `[]byte`, `Option<String>`), the offset of
/// the `=`: the value follows a typed declaration.
fn typed_declaration(b: &[u8], p: usize) -> Option<usize> {
    let n = b.len();
    let mut j = p;
    while j < n
        && j - p < MAX_TYPE
        && (b[j].is_ascii_alphanumeric()
            || matches!(b[j], b'_' | b'&' | b'[' | b']' | b'<' | b'>' | b'.' | b'*'))
    {
        j += 1;
    }
    if j == p || !b[p..j].iter().any(u8::is_ascii_alphabetic) {
        return None;
    }
    while j < n && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    if !(j < n && b[j] == b'=' && b.get(j + 1) != Some(&b'=') && b.get(j + 1) != Some(&b'>')) {
        return None;
    }
    // A declaration assigns something: an `=` that ends the line is a
    // base64 value's padding (`password: oRh_73uesBoiYhpN4=` in a Rails
    // `database.yml`, generator-6), not `name: Type =` with no value.
    let mut k = j + 1;
    while k < n && matches!(b[k], b' ' | b'\t') {
        k += 1;
    }
    (k < n && !matches!(b[k], b'\n' | b'\r')).then_some(j)
}

/// Parses `["']? ws (=|:|:=|=>|==) ws value` after a key ending at `p`;
/// on failure returns where the scan may resume.
fn value_after(
    b: &[u8],
    lb: &[u8],
    p: usize,
    code_file: bool,
    password: bool,
    form: KeyForm,
) -> Result<(usize, usize), usize> {
    let mut scanned = p;
    let r = if form == KeyForm::XmlElement {
        xml_text(b, p, &mut scanned)
    } else if form == KeyForm::XmlNamedText {
        // `p` is on the closing quote of the attribute, `>` follows.
        xml_text(b, p + 1, &mut scanned)
    } else if form == KeyForm::XmlValueAttr {
        xml_value_attr(b, p, &mut scanned)
    } else if form == KeyForm::PlistKey {
        plist_value(b, p, &mut scanned).filter(|&(vs, ve)| !plist_sdk_id(lb, p, vs, ve))
    } else {
        value_after_inner(b, lb, p, code_file, form, &mut scanned)
    };
    r.and_then(|(vs, ve)| judge(b, lb, vs, ve, password, &mut scanned))
        .ok_or(scanned)
}

/// The content of the `value="…"` attribute after the key's attribute
/// (the key ends at `p`, on its closing quote).
fn xml_value_attr(b: &[u8], p: usize, scanned: &mut usize) -> Option<(usize, usize)> {
    let n = b.len();
    let mut j = p + 1;
    while j < n && b[j] != b'=' {
        j += 1;
    }
    let q = *b.get(j + 1)?;
    let vs = j + 2;
    let limit = (vs + MAX_XML_TEXT).min(n);
    let mut ve = vs;
    while ve < limit && b[ve] != q && b[ve] != b'\n' {
        ve += 1;
    }
    *scanned = ve;
    (ve < limit && b[ve] == q && ve > vs).then_some((vs, ve))
}

/// The text of the `<string>` element after a plist's `<key>…</key>`
/// (the key ends at `p`, on the `<` of `</key>`).
fn plist_value(b: &[u8], p: usize, scanned: &mut usize) -> Option<(usize, usize)> {
    let mut j = p + b"</key>".len();
    while j < b.len() && b[j].is_ascii_whitespace() && j - p < MAX_XML_TEXT {
        j += 1;
    }
    *scanned = j;
    if !b[j..].starts_with(b"<string>") {
        return None;
    }
    xml_text(b, j + b"<string>".len() - 1, scanned)
}

/// A hex value under a plist key that calls it a token or key but not a
/// secret, password or private key (`MixpanelToken`, `AmplitudeApiKey`):
/// an analytics or SDK project id written into an app's manifest, which
/// ships inside the bundle to every user. The key ends at `key_end`.
fn plist_sdk_id(lb: &[u8], key_end: usize, vs: usize, ve: usize) -> bool {
    let key_start = lb[..key_end]
        .iter()
        .rposition(|&c| c == b'>')
        .map_or(0, |i| i + 1);
    let key = &lb[key_start..key_end];
    let secret = [&b"secret"[..], b"passw", b"private", b"pwd"]
        .iter()
        .any(|w| key.windows(w.len()).any(|x| x == *w));
    !secret && lb[vs..ve].iter().all(u8::is_ascii_hexdigit)
}

/// Longest XML text content judged as a value.
const MAX_XML_TEXT: usize = 512;

/// The text of `<key>text</key>` (the key ends at `p`, on the `>`), trimmed:
/// one line of text, no child element.
fn xml_text(b: &[u8], p: usize, scanned: &mut usize) -> Option<(usize, usize)> {
    let n = b.len();
    let mut vs = p + 1;
    let limit = (vs + MAX_XML_TEXT).min(n);
    let mut j = vs;
    while j < limit && b[j] != b'<' {
        j += 1;
    }
    *scanned = j;
    if j >= limit || !b[j..].starts_with(b"</") {
        return None;
    }
    let mut ve = j;
    while vs < ve && b[vs].is_ascii_whitespace() {
        vs += 1;
    }
    while ve > vs && b[ve - 1].is_ascii_whitespace() {
        ve -= 1;
    }
    if b[vs..ve]
        .iter()
        .any(|&c| c == b'\n' || c == b' ' || c == b'\t')
    {
        return None;
    }
    Some((vs, ve))
}

fn value_after_inner(
    b: &[u8],
    lb: &[u8],
    mut p: usize,
    code_file: bool,
    form: KeyForm,
    scanned: &mut usize,
) -> Option<(usize, usize)> {
    let n = b.len();
    // A key quoted with escaped quotes inside a string literal
    // (`"{\"password\": \"…\"}"`): its closing quote is two bytes.
    if escaped_quote(b, p) {
        p += 1;
    }
    if p < n && matches!(b[p], b'"' | b'\'' | b'`') {
        p += 1;
        // A subscript's key: `$settings['hash_salt'] = '…'` (PHP),
        // `config["password"] = "…"` (Python, Ruby, JavaScript).
        if p < n && b[p] == b']' && start_of_subscript(b, p) {
            p += 1;
        }
    }
    let key_end = p;
    while p < n && (b[p] == b' ' || b[p] == b'\t') {
        p += 1;
    }
    // `PASSWORD :'var'` is a psql variable, not a literal.
    if p + 1 < n && p > 0 && b[p] == b':' && b[p - 1] == b' ' && matches!(b[p + 1], b'\'' | b'"') {
        return None;
    }
    // Operator: `:`, `:=`, `=`, `=>`, `==`; Makefile `?=`, `::=`, `:::=`;
    // PHP `.=`; or, for a call's quoted first argument, `,`.
    let colons = b[p..].iter().take(4).take_while(|&&c| c == b':').count();
    if form == KeyForm::Initializer {
        p += 1;
    } else if form == KeyForm::Define {
        // No operator: the literal follows the name.
    } else if form == KeyForm::CallArgument {
        if p < n && b[p] == b',' {
            p += 1;
            p = after_default_keyword(b, p);
        } else {
            return None;
        }
    } else if colons == 1 {
        p += 1;
        if p < n && b[p] == b'=' {
            p += 1;
        }
    } else if (2..=3).contains(&colons) && b.get(p + colons) == Some(&b'=') {
        p += colons + 1;
    } else if p < n && b[p] == b'=' {
        p += 1;
        if p < n && (b[p] == b'>' || b[p] == b'=') {
            p += 1;
            // `===` (JavaScript, PHP).
            if b[p - 1] == b'=' && p < n && b[p] == b'=' {
                p += 1;
            }
        }
    } else if p + 1 < n && b[p] == b'!' && b[p + 1] == b'=' {
        // `!=`, `!==`: a check against a hard-coded value is the value.
        p += 2;
        if p < n && b[p] == b'=' {
            p += 1;
        }
    } else if p + 1 < n && matches!(b[p], b'?' | b'.') && b[p + 1] == b'=' {
        p += 2;
    } else if p > key_end
        && let Some(eq) = typed_declaration(b, p)
    {
        // `var token string = "…"` (Go). The type is a separate word: in
        // `grant_type=client_credentials&scope=…` (a form body) the `&`
        // joins the next field, it is no `&str`.
        p = eq + 1;
    } else {
        return None;
    }
    while p < n && (b[p] == b' ' || b[p] == b'\t') {
        p += 1;
    }
    // `token: string = "…"` (TypeScript, Kotlin, Rust): skip the type.
    if colons == 1
        && form == KeyForm::Plain
        && let Some(eq) = typed_declaration(b, p)
    {
        p = eq + 1;
        while p < n && (b[p] == b' ' || b[p] == b'\t') {
            p += 1;
        }
    }
    // `SECRET_KEY = (\n    '…'\n)`: a value in parentheses, alone on the
    // next line (Python's layout for a long literal).
    if form == KeyForm::Plain && p < n && b[p] == b'(' {
        let mut q = p + 1;
        while q < n && q < p + 64 && b[q].is_ascii_whitespace() {
            q += 1;
        }
        if q < n && matches!(b[q], b'"' | b'\'') {
            p = q;
        }
    }
    // A YAML tag before the scalar (`password: !secret wifi_password`,
    // ESPHome and Home Assistant; `!vault`, `!env_var`, `!!str`): the tag
    // names how the scalar is read, the scalar after it is the value.
    let mut tagged = false;
    if colons == 1
        && form == KeyForm::Plain
        && let Some(q) = yaml_tag_end(b, p)
    {
        p = q;
        tagged = true;
    }
    // A call's second argument must be a string literal.
    if matches!(
        form,
        KeyForm::CallArgument | KeyForm::Initializer | KeyForm::Define
    ) && !(p < n && matches!(b[p], b'"' | b'\'' | b'`'))
    {
        return None;
    }
    // `[]byte("…")`, `Buffer.from("…")`: the literal the call converts.
    if let Some(q) = super::convert::literal_argument(lb, p) {
        p = q;
    }
    // Python string prefixes r"..." b"...".
    if p + 1 < n && matches!(b[p], b'r' | b'b' | b'u') && matches!(b[p + 1], b'"' | b'\'') {
        p += 1;
    }
    if p >= n {
        return None;
    }
    let (vs, ve) = if escaped_quote(b, p) {
        // A value in escaped quotes inside a string literal: JAAS
        // `password=\"…\";` in Kafka's `sasl.jaas.config`, JSON in a
        // string (issue 18, generator-14 `kafka-sasl-literal-credential`).
        // It ends at the same escaped quote; an unescaped one ends the
        // literal around it first, and then it is no value.
        let q = b[p + 1];
        let vs = p + 2;
        let limit = (vs + 4096).min(n);
        let mut j = vs;
        while j + 1 < limit && b[j] != b'\n' && b[j] != q && !(b[j] == b'\\' && b[j + 1] == q) {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        if !(j + 1 < limit && b[j] == b'\\' && b[j + 1] == q) {
            *scanned = j.min(n);
            return None;
        }
        (vs, j)
    } else if matches!(b[p], b'"' | b'\'' | b'`') {
        let q = b[p];
        let vs = p + 1;
        let limit = (vs + 4096).min(n);
        let mut j = vs;
        while j < limit && b[j] != q && b[j] != b'\n' {
            if b[j] == b'\\' {
                j += 1;
            }
            j += 1;
        }
        if j >= limit || b[j] != q {
            *scanned = j.min(n);
            return None;
        }
        // An initializer's literal is its whole first argument.
        // IdentityServer hashes its client secret's literal in place:
        // `new Secret("…".Sha256())`.
        let hashed = [&b".Sha256()"[..], b".Sha512()"]
            .iter()
            .any(|h| b[j + 1..].starts_with(h));
        if form == KeyForm::Initializer && !hashed && !matches!(b.get(j + 1), Some(b')' | b',')) {
            *scanned = j;
            return None;
        }
        (vs, j)
    } else {
        let vs = p;
        let limit = (vs + 4096).min(n);
        let mut j = vs;
        // Asked only at an `&`: most values hold none.
        let mut whole_line = None;
        // A markup closing tag ends the text it closes (`<string>
        // webcredentials:example.app</string>` in a plist).
        while j < limit
            && !(b[j] == b'<' && b.get(j + 1) == Some(&b'/'))
            && (!matches!(
                b[j],
                b' ' | b'\t'
                    | b'\r'
                    | b'\n'
                    | b','
                    | b';'
                    | b')'
                    | b'}'
                    | b']'
                    | b'&'
                    | b'"'
                    | b'\''
            ) || (b[j] == b'&' && *whole_line.get_or_insert_with(|| whole_line_value(b, vs))))
        {
            j += 1;
        }
        *scanned = j;
        let v = &lb[vs..j];
        // A call, index or attribute path is code, not a literal.
        // So is a block or object in code (`m{{h}o)…` unquoted in C++).
        if v.contains(&b'(') || v.contains(&b'[') || (code_file && v.contains(&b'{')) {
            return None;
        }
        if code_file
            && v.iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        {
            return None;
        }
        (vs, j)
    };
    // After a tag, a name (`!secret mqtt_password`, `!env_var DB_PASS`)
    // is what the tag looks up, not the value.
    if tagged && std::str::from_utf8(&b[vs..ve]).is_ok_and(is_name) {
        return None;
    }
    Some((vs, ve))
}

/// True when `b[p..]` opens with an escaped quote (`\"`, `\'`): a quote
/// of a string inside a string literal.
fn escaped_quote(b: &[u8], p: usize) -> bool {
    b.get(p) == Some(&b'\\') && matches!(b.get(p + 1), Some(b'"' | b'\''))
}

/// Keyword arguments that give a lookup's default.
const DEFAULT_KEYWORDS: &[&[u8]] = &[
    b"default",
    b"default_var",
    b"default_value",
    b"defaultvalue",
    b"fallback",
];

/// After a lookup's name argument and its comma at `p`: past a keyword
/// that names the next argument the lookup's default (`default_var=`,
/// `default=`, `fallback=`), if one is there. Airflow's
/// `Variable.get("hubspot_token", default_var="…")`, a settings object's
/// `get("api_token", fallback="…")`, django-environ's `env.str("SECRET",
/// default="…")`: the default is what runs wherever the name is unset,
/// a literal like `os.getenv`'s second argument (issue 18, generator-14
/// `airflow-dag-embedded-credential`).
fn after_default_keyword(b: &[u8], p: usize) -> usize {
    let mut j = p;
    while j < b.len() && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    let k = j;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    let word = b[k..j].to_ascii_lowercase();
    while j < b.len() && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    if DEFAULT_KEYWORDS.contains(&word.as_slice())
        && b.get(j) == Some(&b'=')
        && b.get(j + 1) != Some(&b'=')
    {
        j + 1
    } else {
        p
    }
}

/// True when the unquoted value at `vs` is the rest of its line, as in a
/// Java `.properties` or `.env` file (`log4j.appender.DB.password=O&C^*…`,
/// issue 18, generator-12 `log4j-appender-credential`): its key starts the
/// line, with nothing but the key and its `=` before the value, and no
/// other `=` follows on the line. There an `&` is the value's own
/// character; elsewhere it joins the next field of a query or form body
/// (`?user=etl&password=…&useSSL=false`), which holds another `=`.
fn whole_line_value(b: &[u8], vs: usize) -> bool {
    if vs == 0 || b[vs - 1] != b'=' {
        return false;
    }
    let ls = b[..vs]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let key = b[ls..vs - 1].trim_ascii_start();
    let le = b[vs..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |i| vs + i);
    !key.is_empty()
        && key
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        && !b[vs..le].contains(&b'=')
}

/// True when the quoted key closed at `close - 1` (its quote), with `]`
/// at `close`, opened with `['` or `["`.
fn start_of_subscript(b: &[u8], close: usize) -> bool {
    let q = b[close - 1];
    let from = close.saturating_sub(MAX_KEY + 2);
    b[from..close - 1]
        .iter()
        .rposition(|&c| c == q)
        .is_some_and(|i| from + i > 0 && b[from + i - 1] == b'[')
}

/// Longest YAML tag skipped.
const MAX_TAG: usize = 32;

/// If a YAML tag (`!secret`, `!!str`, `!vault`) followed by blanks starts
/// at `p`, where the scalar after it starts.
fn yaml_tag_end(b: &[u8], p: usize) -> Option<usize> {
    let n = b.len();
    let mut j = p;
    while j < n && j - p < 2 && b[j] == b'!' {
        j += 1;
    }
    let name = j;
    while j < n && j - p < MAX_TAG && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'-'))
    {
        j += 1;
    }
    if j == p
        || j == name
        || !b[name].is_ascii_alphabetic()
        || !matches!(b.get(j), Some(b' ' | b'\t'))
    {
        return None;
    }
    while j < n && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    Some(j)
}

/// Judges the literal at `b[vs..ve]`: long enough, not code, a mask, a
/// reference, a fixture or words.
fn judge(
    b: &[u8],
    lb: &[u8],
    vs: usize,
    ve: usize,
    password: bool,
    scanned: &mut usize,
) -> Option<(usize, usize)> {
    // A rejected value is skipped whole: keys inside a reference
    // (`{{resolve:secretsmanager:…}}`) are part of it, not assignments.
    *scanned = ve;
    if ve - vs < if password { MIN_PASSWORD } else { MIN_VALUE } {
        return None;
    }
    let lv = &lb[vs..ve];
    if CODE_PREFIX.iter().any(|c| lv.starts_with(c.as_bytes())) {
        // A shell parameter expansion may supply a default
        // (`pw="${DB_PASSWORD:='…'}"`): its key is judged on its own.
        if lv.starts_with(b"${") {
            *scanned = vs;
        }
        return None;
    }
    let v = std::str::from_utf8(&b[vs..ve]).ok()?;
    // Long letters-only camelCase values are identifiers (handler names),
    // not passwords: few character-class changes.
    if v.len() >= 20 && v.bytes().all(|c| c.is_ascii_alphabetic()) {
        let changes = v
            .as_bytes()
            .windows(2)
            .filter(|w| w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase())
            .count();
        if changes * 10 < v.len() * 3 {
            return None;
        }
    }
    if is_masked_or_placeholder(v) || v.contains('\n') {
        return None;
    }
    // A URL without userinfo is an address; keys in its query string
    // (`?token=…`) are judged on their own, so resume inside it.
    if words::is_plain_url(v) {
        *scanned = vs;
        return None;
    }
    // References (`var.db_password`, `{{ .Values.x }}`, `$TOKEN`,
    // `vault:secret/data/app#key`), word paths (`/run/secrets/db_password`),
    // fixtures (`test-token-123`) and plain words (`tenant-window`) are
    // not credentials. Under a password key a digit or symbol makes the
    // value a password again (`hunter2`, `P@ssw0rd!`), and it is judged
    // from six characters on.
    // A type name, unquoted, declares the key (`password_hash BYTEA,` in
    // SQL DDL, `token: String!` in GraphQL SDL); an environment lookup in
    // any shell's syntax (`$env:AZURE_DEVOPS_PAT`, `%TOKEN%`) reads it.
    let quoted = vs > 0 && matches!(b[vs - 1], b'"' | b'\'' | b'`');
    if (!quoted && super::declared::is_type_name(v)) || super::declared::is_env_lookup(v) {
        return None;
    }
    if words::is_reference(v)
        || words::is_key_template(v)
        || words::is_tox_env(v)
        || words::is_key_combo(v)
        || words::is_scp_remote(v)
        || is_message_format(v)
        || is_file_argument(v)
        || is_name_list(v)
        || is_named_path(v)
        // A label before the data (`SetCredentialEncrypted=db-password: \`
        // with the data on the continued lines): a name, not the value.
        || v.strip_suffix(':').is_some_and(is_name)
        || is_sentence(v)
        || words::is_word_path(v)
        || words::is_fixture(v)
        || words::is_word_like(v, !password)
        || (password && ve - vs < MIN_VALUE && !has_non_letter(v))
    {
        return None;
    }
    // Algorithm and component names (`argon2id`, `Argon2PasswordEncoder`)
    // and natural-language text (`At least 12 characters`, `Régénérer`).
    if identifier::is_algorithm_or_component(v) || prose::is_natural_language(v) {
        return None;
    }
    // `key_env = "WAREHOUSE_KEY_FILE"` names an environment variable: the
    // very fix we ask agents for. SCREAMING_SNAKE words are not values.
    if v.contains('_')
        && v.split('_').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
        && v.bytes().any(|c| c.is_ascii_uppercase())
    {
        return None;
    }
    Some((vs, ve))
}

/// True for an ICU MessageFormat argument (`{count, plural, one {…} other
/// {…}}`, `{score, select, …}`): UI text in FormatJS/ICU bundles, under
/// keys such as `tokens.count`.
fn is_message_format(v: &str) -> bool {
    let Some(body) = v.strip_prefix('{') else {
        return false;
    };
    let mut parts = body.splitn(3, ',');
    let (Some(arg), Some(kind)) = (parts.next(), parts.next()) else {
        return false;
    };
    let arg = arg.trim();
    !arg.is_empty()
        && arg.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && matches!(
            kind.trim().trim_end_matches('}'),
            "plural" | "select" | "selectordinal" | "number" | "date" | "time"
        )
}

/// True for a file argument in `@file` syntax (`vault kv put … api_key=@key.txt`,
/// `curl -d @body.json`, httpie `token=@token.txt`): the value is read
/// from the named file.
fn is_file_argument(v: &str) -> bool {
    // A shell redirection (`>/dev/null`, `2>>log/out.txt`, `<input.sql`)
    // after a command whose words held a key: the file it writes or reads.
    let redirected = v.trim_start_matches(|c: char| c.is_ascii_digit());
    if redirected.len() < v.len() || v.starts_with(['>', '<']) {
        let f = redirected.trim_start_matches(['>', '<', '&']);
        if f.len() < redirected.len()
            && f.contains('/')
            && f.split(['/', '.']).all(|p| p.is_empty() || is_name(p))
        {
            return true;
        }
    }
    v.strip_prefix('@').is_some_and(|f| {
        !f.is_empty()
            && f.contains(['.', '/'])
            && f.split(['/', '.']).all(|p| p.is_empty() || is_name(p))
    })
}

/// True for an identifier made of word-like pieces joined by `-`/`_`
/// (`db-password`, `api_key`): each piece alone is word-like, so short
/// abbreviations may dominate, as they do in names.
fn is_name(p: &str) -> bool {
    p.split(['-', '_']).all(|w| {
        let short = w.len() <= 4 && w.bytes().all(|c| c.is_ascii_alphabetic());
        !w.is_empty() && (short || words::is_word_like(w, true))
    })
}

/// True for a comma-separated list of names (`db-password,api-key`: a
/// Key Vault task's `SecretsFilter`): which secrets to fetch, not one.
fn is_name_list(v: &str) -> bool {
    v.contains(',') && v.split(',').all(|p| is_name(p.trim()))
}

/// True for `name:/absolute/path` (systemd `LoadCredential=db-password:/etc/…`):
/// a credential's name and the file it is loaded from.
fn is_named_path(v: &str) -> bool {
    v.split_once(':').is_some_and(|(name, path)| {
        !name.is_empty()
            && words::is_word_like(name, true)
            && path.starts_with('/')
            && words::is_word_path(path)
    })
}

/// Fewest words of a value read as a sentence by [`is_sentence`].
const MIN_SENTENCE_WORDS: usize = 5;

/// True for UI prose (`You can't access this page without coming from a
/// password reset email.`, `Create a token in Settings and paste it
/// here.`): a capital first letter, five or more space-separated words,
/// most of them letters only, and closing sentence punctuation. Locale
/// catalogues (Rails, iOS `.strings`, gettext) hold such values under keys
/// like `no_token` and `apiKey.help`. A passphrase (`correct horse battery
/// staple`) is lowercase words without a closing full stop and is still
/// judged.
fn is_sentence(v: &str) -> bool {
    let v = v.trim();
    if !v.starts_with(|c: char| c.is_uppercase()) || !v.ends_with(['.', '!', '?', '…']) {
        return false;
    }
    let words: Vec<&str> = v.split_whitespace().collect();
    let wordy = words
        .iter()
        .filter(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphabetic() || c == '\'' || c == '’')
        })
        .count();
    words.len() >= MIN_SENTENCE_WORDS && wordy * 4 >= words.len() * 3
}

/// True when `v` has a digit or symbol: a short password of letters only
/// (`letmein`) is as likely a placeholder word as a password.
fn has_non_letter(v: &str) -> bool {
    v.bytes().any(|c| !c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use crate::scanner::rules::testutil::check;
    use crate::scanner::{ScanConfig, Scanner};

    /// A hard-coded value in a comparison, a C++ direct initialization or
    /// a setter call is the value; a password of punctuation is one; `pass`
    /// names a password only as a key's last segment (issue 18, the
    /// detect-secrets `keyword` fixtures and their class).
    /// A plain YAML value ending in base64 padding is the value, not a
    /// typed declaration `name: Type =` (generator-6's Rails
    /// `database.yml`); typed declarations still skip their type.
    /// Shell parameter expansions read a variable: an error message
    /// (`${TOKEN:?must be set}`) or an alternative is no value; a default
    /// the expansion supplies is judged as a literal (issue 18,
    /// generator-8 `shell-env-guard-checksum`).
    #[test]
    fn shell_parameter_expansions() {
        check(
            "generic_secret",
            &[
                ("echo \"${API_TOKEN:-Zq8v2Lm4Kp7Rt}\"\n", "Zq8v2Lm4Kp7Rt"),
                ("pw=\"${DB_PASSWORD:='Zq8v2Lm4Kp7Rt'}\"\n", "Zq8v2Lm4Kp7Rt"),
            ],
            &[
                (
                    ": \"${DEPLOY_TOKEN:?DEPLOY_TOKEN must be set}\"\n",
                    "error message",
                ),
                (
                    ": \"${DEPLOY_TOKEN?DEPLOY_TOKEN_is_unset}\"\n",
                    "error message",
                ),
                (
                    "curl ${API_TOKEN:+-H Authorization:$API_TOKEN}\n",
                    "alternative",
                ),
                ("echo ${SECRET_KEY%%.*} ${#API_TOKEN}\n", "transformations"),
            ],
        );
    }

    /// IdentityServer's client secrets: the literal hashed in place.
    #[test]
    fn identityserver_client_secrets() {
        check(
            "generic_secret",
            &[(
                "            ClientSecrets = { new Secret(\"Zq8v2Lm4Kp7Rt9xWq3Zr8Kx2\".Sha256()) },\n",
                "Zq8v2Lm4Kp7Rt9xWq3Zr8Kx2",
            )],
            &[(
                "            ClientSecrets = { new Secret(configuration[\"Clients:Spa:Secret\"].Sha256()) },\n",
                "configuration",
            )],
        );
    }

    /// The literal a credential is compared with in a comparison call.
    #[test]
    fn comparison_calls() {
        check(
            "generic_secret",
            &[
                (
                    "    ActiveSupport::SecurityUtils.secure_compare(password, \"RZOx81IrBKVR-I=KNi6PZ?\")\n",
                    "RZOx81IrBKVR-I=KNi6PZ?",
                ),
                (
                    "if hmac.compare_digest(token, 'Zq8v2Lm4Kp7Rt9xWq3') :\n",
                    "Zq8v2Lm4Kp7Rt9xWq3",
                ),
            ],
            &[
                (
                    "secure_compare(password, params[:password])\n",
                    "no literal",
                ),
                (
                    "log(password, \"Zq8v2Lm4Kp7Rt9xWq3\")\n",
                    "not a comparison",
                ),
            ],
        );
    }

    /// A Go struct tag's default for a credential-named variable is a
    /// literal; the tag's name alone is not.
    #[test]
    fn go_struct_tag_defaults() {
        check(
            "generic_secret",
            &[(
                "\tRedisPass string `env:\"REDIS_PASSWORD\" envDefault:\"7PGCm786xCgXbRaf7NOeHfgN\"`\n",
                "7PGCm786xCgXbRaf7NOeHfgN",
            )],
            &[
                (
                    "\tRedisPass string `env:\"REDIS_PASSWORD,required\"`\n",
                    "no default",
                ),
                (
                    "\tRedisPass string `env:\"REDIS_PASSWORD\"`\n",
                    "no default",
                ),
                (
                    "\tAPIToken string `envconfig:\"API_TOKEN\" default:\"\"`\n",
                    "empty default",
                ),
            ],
        );
    }

    /// Spring's `${property:default}`: the default is a literal.
    #[test]
    fn spring_placeholder_defaults() {
        check(
            "generic_secret",
            &[(
                "    @Value(\"${ldap.manager-password:Lantern+Pebble5361_}\") String managerPassword) {\n",
                "Lantern+Pebble5361_",
            )],
            &[
                (
                    "    @Value(\"${ldap.manager-password}\") String managerPassword) {\n",
                    "no default",
                ),
                (
                    "    @Value(\"${ldap.manager-password:}\") String managerPassword) {\n",
                    "empty default",
                ),
                (
                    "  password: ${spring.datasource.password:${DB_PASSWORD}}\n",
                    "default is a reference",
                ),
            ],
        );
    }

    /// An unquoted value that is the rest of its line (a `.properties`
    /// or `.env` line) keeps its `&`; in a query string `&` ends it.
    #[test]
    fn whole_line_values_keep_their_ampersand() {
        check(
            "generic_secret",
            &[
                (
                    "log4j.appender.DB.password=O&C^*Tfu24SVx$3ge9B\n",
                    "O&C^*Tfu24SVx$3ge9B",
                ),
                ("DB_PASSWORD=Kp7&Rt9xWq3Zr8\n", "Kp7&Rt9xWq3Zr8"),
                (
                    "curl https://api.example.com/v1/x?user=etl&password=Harvest_Maple4111&verbose=1\n",
                    "Harvest_Maple4111",
                ),
            ],
            &[],
        );
    }

    /// A shell redirection after a command whose words held a key
    /// (generator-13 `procfile`: `rails credentials:show >/dev/null`) is
    /// the file written; names in Ruby, PHP and Elixir syntax are names.
    #[test]
    fn redirections_and_language_names() {
        check(
            "generic_secret",
            &[(
                "config.auth_token = \"Zq8v2Lm4Kp7Rt9x\"\n",
                "Zq8v2Lm4Kp7Rt9x",
            )],
            &[
                (
                    "release: bundle exec rails db:migrate && bundle exec rails credentials:show >/dev/null\n",
                    "redirection",
                ),
                (
                    "run: vault token lookup 2>>/var/log/token.log\n",
                    "redirection",
                ),
                ("TWILIO_AUTH_TOKEN_KEY = :auth_token\n", "symbol"),
                (
                    "  jwt.secret = Rails.application.credentials.devise_jwt_secret_key!\n",
                    "bang method",
                ),
                (
                    "'password' => static::$password ??= Hash::make('password'),\n",
                    "static property",
                ),
                ("  secret_key: {:system, \"GUARDIAN_SECRET\"},\n", "tuple"),
            ],
        );
    }

    /// Key-value element pairs and name-value argument lists: the key's
    /// element or quoted name names the next value (issue 18, generator-8
    /// `ios-info-plist-literal-secret`, `matlab-weboptions-password`).
    #[test]
    fn plist_pairs_and_name_value_arguments() {
        check(
            "generic_secret",
            &[
                (
                    "<dict>\n\t<key>BackendToken</key>\n\t<string>Zq8v2Lm4Kp7RtX9wB3nY</string>\n</dict>\n",
                    "Zq8v2Lm4Kp7RtX9wB3nY",
                ),
                (
                    "opts = weboptions('Username', 'lab', 'Password', '3E4v8y*MnklFkiTk.hwV8c-Y', 'Timeout', 30);\n",
                    "3E4v8y*MnklFkiTk.hwV8c-Y",
                ),
                (
                    "<string name=\"stripe_secret\">Zq8v2Lm4Kp7RtX9wB3nY</string>\n",
                    "Zq8v2Lm4Kp7RtX9wB3nY",
                ),
                (
                    "<add key=\"ApiSecret\" value=\"Zq8v2Lm4Kp7RtX9wB3nY\"/>\n",
                    "Zq8v2Lm4Kp7RtX9wB3nY",
                ),
            ],
            &[
                (
                    "\t<key>BackendToken</key>\n\t<string>$(BACKEND_TOKEN)</string>\n",
                    "build setting reference",
                ),
                (
                    "\t<key>TokenRefreshEnabled</key>\n\t<true/>\n",
                    "not a string",
                ),
                (
                    "opts = weboptions('Username', 'lab', 'Password', pw, 'Timeout', 30);\n",
                    "variable, not a literal",
                ),
                (
                    "fields = ('username', 'password', 'password_confirm')\n",
                    "names",
                ),
                (
                    "const s = sm.Secret.fromSecretNameV2(this, 'DbSecret', 'prod/orders/db-creds9');\n",
                    "a construct id, then a secret's name",
                ),
            ],
        );
        // An SDK project id in an app manifest (a hex id under a token name).
        let sdk =
            "\t<key>MixpanelToken</key>\n\t<string>071e896e298ebc724b9da95ab1aa1958</string>\n";
        assert!(crate::scanner::rules::testutil::rules("ios/App/Info.plist", sdk).is_empty());
    }

    /// netrc's `password <value>` pair on any line layout (issue 18,
    /// generator-8 `netrc-artifact-password`).
    #[test]
    fn netrc_passwords() {
        let s = Scanner::new(ScanConfig::default());
        for (path, text) in [
            (
                ".netrc",
                "machine artifacts.example.internal login ci-reader password z_xrmCPQ!~vn+%TCVMT66WICujo\n",
            ),
            (
                "home/.authinfo",
                "machine smtp.example.com login me password Zq8v2Lm4Kp7Rt port 587\n",
            ),
            (
                "ci/netrc",
                "machine a.example.com\n  login ci\n  password Zq8v2Lm4Kp7Rt\n",
            ),
        ] {
            assert!(
                s.scan_bytes(path, text.as_bytes())
                    .iter()
                    .any(|f| f.value.starts_with("z_xrm") || f.value == "Zq8v2Lm4Kp7Rt"),
                "{path}: {text}"
            );
        }
        let prose = "Set the machine password in the admin console before the first login.\n";
        assert!(s.scan_bytes("docs/setup.txt", prose.as_bytes()).is_empty());
    }

    /// Calls whose name says they wrap a literal secret: the argument is
    /// the credential (issue 18, generator-8 `cdk-unsafe-plaintext-password`).
    #[test]
    fn literal_secret_wrappers() {
        check(
            "generic_secret",
            &[
                (
                    "credentials: rds.Credentials.fromPassword('app', SecretValue.unsafePlainText('j52iDn#hOH1prQ#KwUqi^1FoNl')),",
                    "j52iDn#hOH1prQ#KwUqi^1FoNl",
                ),
                (
                    "const k = pulumi.secret(\"Zq8v2Lm4Kp7RtX9w\");",
                    "Zq8v2Lm4Kp7RtX9w",
                ),
                (
                    "api_key = SecretStr('Zq8v2Lm4Kp7RtX9w')",
                    "Zq8v2Lm4Kp7RtX9w",
                ),
                (
                    "var s = new SecretString(\"Zq8v2Lm4Kp7RtX9w\");",
                    "Zq8v2Lm4Kp7RtX9w",
                ),
            ],
            &[
                (
                    "const v = SecretValue.secretsManager('prod/db-password');",
                    "a reference by name",
                ),
                (
                    "const v = SecretValue.unsafePlainText(props.password);",
                    "not a literal",
                ),
                (
                    "const s = pulumi.secret(cfg.require('dbPassword'));",
                    "not a literal",
                ),
            ],
        );
    }

    #[test]
    fn padded_values_are_not_typed_declarations() {
        check(
            "generic_secret",
            &[
                ("  password: oRh_73uesBoiYhpN4=\n", "oRh_73uesBoiYhpN4="),
                ("password: Zq8v2Lm4Kp7Rt+Q=\nhost: db\n", "Zq8v2Lm4Kp7Rt+Q="),
                ("token: string = \"Zq8v2Lm4Kp7Rt\"", "Zq8v2Lm4Kp7Rt"),
            ],
            &[
                (
                    "const token: string = process.env.TOKEN;",
                    "typed, read from env",
                ),
                ("password: String =\n", "typed, no value"),
            ],
        );
    }

    #[test]
    fn comparisons_initializers_and_punctuated_passwords() {
        check(
            "generic_secret",
            &[
                ("if (db_pass != \"Zq8v2Lm4Kp7Rt\")", "Zq8v2Lm4Kp7Rt"),
                ("if (token === 'Zq8v2Lm4Kp7Rt') {", "Zq8v2Lm4Kp7Rt"),
                ("if ($apiToken !== \"Zq8v2Lm4Kp7Rt\")", "Zq8v2Lm4Kp7Rt"),
                ("std::string secret(\"Zq8v2Lm4Kp7Rt\");", "Zq8v2Lm4Kp7Rt"),
                ("QString password(\"Zq8v2Lm4Kp7Rt\");", "Zq8v2Lm4Kp7Rt"),
                ("secret.assign(\"Zq8v2Lm4Kp7Rt\", 13);", "Zq8v2Lm4Kp7Rt"),
                ("apiToken.set(\"Zq8v2Lm4Kp7Rt\")", "Zq8v2Lm4Kp7Rt"),
                ("DB_PASS=Zq8v2Lm4Kp7Rt", "Zq8v2Lm4Kp7Rt"),
                ("const userPass = \"Zq8v2Lm4Kp7Rt\"", "Zq8v2Lm4Kp7Rt"),
                ("bypass_token = \"Zq8v2Lm4Kp7Rt\"", "Zq8v2Lm4Kp7Rt"),
                (
                    "password = \"p{{4}x)q${z]w(k[w>-_$#9}}\"",
                    "p{{4}x)q${z]w(k[w>-_$#9}}",
                ),
                ("api_key: \"Tr0ub4dor&3>{x}\"", "Tr0ub4dor&3>{x}"),
            ],
            &[
                (
                    "return secret(\"Zq8v2Lm4Kp7Rt\");",
                    "a call, not a declaration",
                ),
                ("compass = \"Zq8v2Lm4Kp7Rt\"", "pass inside a word"),
                (
                    "passenger = \"Zq8v2Lm4Kp7Rt\"",
                    "pass at the start of a word",
                ),
                ("secret.assign(other, 13);", "not a literal"),
                ("password: \"{{ .Values.db.password }}\"", "a Helm template"),
                ("password: \"${DB_PASSWORD:-}\"", "a default-less reference"),
            ],
        );
        let s = Scanner::new(ScanConfig::default());
        // Unquoted in code, braces are a block, not a literal.
        let code = "password = m{{h}o)p${e]nob(ody[finds>-_$#thisone}}\n";
        assert!(s.scan_bytes("src/a.cpp", code.as_bytes()).is_empty());
    }

    /// Issue 18, generator-10: references in each language's syntax, a
    /// YAML tag before a secret's name, a plist closing tag and a label
    /// before continued data are not values; literals in the same
    /// layouts still are.
    #[test]
    fn sigils_tags_closing_tags_and_labels() {
        check(
            "generic_secret",
            &[
                ("    password: !!str Zq8v2Lm4Kp7RtX9w\n", "Zq8v2Lm4Kp7RtX9w"),
                (
                    "    db_password => 'Zq8v2Lm4Kp7RtX9w',\n",
                    "Zq8v2Lm4Kp7RtX9w",
                ),
                (
                    "<string>credentials:Zq8v2Lm4Kp7RtX9w</string>",
                    "Zq8v2Lm4Kp7RtX9w",
                ),
                (
                    "SetCredential=db-password:Zq8v2Lm4Kp7RtX9w\n",
                    "db-password:Zq8v2Lm4Kp7RtX9w",
                ),
            ],
            &[
                ("    password: !secret wifi_password\n", "YAML secret tag"),
                ("    password: !secret mqtt_password\n", "YAML secret tag"),
                (
                    "    db_password => $ENV{SPROUT_DB_PASS}  // '',\n",
                    "Perl env hash",
                ),
                (
                    "    clientSecret: $oidc.keycloak.clientSecret\n",
                    "Argo CD reference",
                ),
                (
                    "      basicAuthPassword: $__file{/etc/secrets/loki_token}\n",
                    "Grafana file",
                ),
                (
                    "JWT_SECRET_KEY=%kernel.project_dir%/config/jwt/private.pem\n",
                    "Symfony parameter",
                ),
                (
                    "\t\t<string>webcredentials:example.app</string>\n",
                    "plist domain",
                ),
                (
                    "SetCredentialEncrypted=db-password: \\\n",
                    "credential label",
                ),
            ],
        );
    }

    /// Issue 18, generator-10: a macro's string literal, a subscript's
    /// key and LDAP password directives; a macro without a literal, a
    /// subscript read and a directive's reference are not values.
    #[test]
    fn macros_subscripts_and_ldap_directives() {
        check(
            "generic_secret",
            &[
                (
                    "#define SECRET_PASS \"Garnet~harbor28_PebbleBNU\"\n",
                    "Garnet~harbor28_PebbleBNU",
                ),
                (
                    "$settings['hash_salt'] = 'KCBZZMWCVAxS4iYcBJDv_Xg_mPVbGvrP';\n",
                    "KCBZZMWCVAxS4iYcBJDv_Xg_mPVbGvrP",
                ),
                (
                    "config[\"password\"] = \"Zq8v2Lm4Kp7Rt\"\n",
                    "Zq8v2Lm4Kp7Rt",
                ),
                ("bindpw UMGD^kmc4tz%UFLDk908\n", "UMGD^kmc4tz%UFLDk908"),
                ("rootpw Zq8v2Lm4Kp7Rt\n", "Zq8v2Lm4Kp7Rt"),
            ],
            &[
                ("#define SECRET_PASS_LEN 32\n", "a length"),
                ("#define SECRET_PASS read_secret()\n", "not a literal"),
                ("#define SECRET_PASS\n", "no value"),
                ("pw = $settings['hash_salt'];\n", "a read"),
                ("bindpw ${LDAP_BIND_PW}\n", "a reference"),
            ],
        );
    }

    /// What the fast key-word search relies on.
    #[test]
    fn strong_words_are_lowercase_ascii() {
        for w in super::STRONG {
            assert!(w.is_ascii() && w.to_ascii_lowercase() == *w, "{w}");
        }
    }

    proptest::proptest! {
        /// The automaton on the lowercased text finds exactly what the
        /// `(?i)` regex finds on the text, Unicode folds included.
        #[test]
        fn key_words_match_the_case_insensitive_regex(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "PassWord", "passwd", "PWD", "secret", "TOKEN", "tokenizer", "api_key",
                "Api-Key", "privatekey", "bearer", "client_secret", "\u{212A}", "\u{17F}",
                "to\u{212A}en", "\u{17F}ecret", "=", " ", "é", "x", "_", "\n",
            ]), 0..24)
        ) {
            let text: String = parts.concat();
            let lower = text.to_ascii_lowercase();
            let want: Vec<(usize, usize)> = super::KEY_WORDS
                .find_iter(&text)
                .map(|m| (m.start(), m.end()))
                .collect();
            proptest::prop_assert_eq!(super::key_words(&text, &lower), want);
        }
    }

    #[test]
    fn assignments() {
        check(
            "generic_secret",
            &[
                ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
                ("export API_TOKEN='q9w8e7r6'", "q9w8e7r6"),
                (
                    "  \"client_secret\": \"Zm9vYmFyYmF6cXV4\",",
                    "Zm9vYmFyYmF6cXV4",
                ),
                ("password: s3cretPass!", "s3cretPass!"),
            ],
            &[
                ("password = os.environ['DB_PASSWORD']", "read from env"),
                ("token = os.getenv(\"API_TOKEN\")", "read from env"),
                ("const secret = process.env.SECRET_VALUE;", "read from env"),
                ("API_TOKEN=${API_TOKEN}", "shell interpolation"),
                ("password = get_password()", "a call"),
                ("PASSWORD=changeme", "placeholder"),
                ("password = \"short\"", "under 8 characters"),
                (
                    "token_url = \"https://auth.internal/oauth/token\"",
                    "names a URL, not a token",
                ),
                ("API_KEY=YOUR_API_KEY", "placeholder"),
                (
                    "passphrase_env = \"WAREHOUSE_KEY_FILE\"",
                    "names an env var",
                ),
            ],
        );
    }

    /// Layouts beyond `key = value` (gitleaks' sample generator writes
    /// every secret in each): typed declarations, Makefile and PHP
    /// operators, a call's key/value argument pair, an XML element.
    #[test]
    fn declaration_call_and_element_layouts() {
        let v = "y42lmfb7wivbswv9b";
        let tps: Vec<(String, &str)> = [
            "var airtableToken string = \"{v}\"",
            "const apiToken: string = \"{v}\";",
            "val apiToken: String = \"{v}\"",
            "const API_TOKEN: &str = \"{v}\";",
            "$airtableToken .= \"{v}\"",
            "AIRTABLE_TOKEN ?= \"{v}\"",
            "AIRTABLE_TOKEN ::= {v}",
            "AIRTABLE_TOKEN :::= \"{v}\"",
            "System.setProperty(\"AIRTABLE_TOKEN\", \"{v}\")",
            "props.put( 'api_token', '{v}' );",
            "<airtableToken>\n    {v}\n</airtableToken>",
            "<password>{v}</password>",
            "<property name=\"connection.password\">{v}</property>",
            "<add key=\"ApiToken\" value=\"{v}\" />",
            "<property name='db.password' value='{v}'/>",
            "SECRET_KEY = (\n    '{v}'\n)",
        ]
        .iter()
        .map(|t| (t.replace("{v}", v), v))
        .collect();
        let tps: Vec<(&str, &str)> = tps.iter().map(|(t, v)| (t.as_str(), *v)).collect();
        check(
            "generic_secret",
            &tps,
            &[
                ("<password>${env.DB_PASSWORD}</password>", "interpolated"),
                (
                    "<property name=\"connection.password\">${DB_PASSWORD}</property>",
                    "named element, interpolated",
                ),
                (
                    "<add key=\"ApiTokenHeader\" value=\"X-Api-Token\" />",
                    "names a header",
                ),
                (
                    "\"administratorLoginPassword\": \"[parameters('adminPassword')]\"",
                    "ARM template expression",
                ),
                (
                    "<param name=\"password\" type=\"string\"/>",
                    "no value attribute",
                ),
                (
                    "<UserSecretsId>79a3edd0-2092-40a2-a04d-dcb46d5ca9ed</UserSecretsId>",
                    "an id",
                ),
                (
                    "<password>\n  <value>x</value>\n</password>",
                    "child element, no text",
                ),
                (
                    "var tokenKind string = \"bearer-refresh\"",
                    "names a kind (word-like)",
                ),
                (
                    "const token: string = process.env.API_TOKEN;",
                    "read from env",
                ),
                ("API_TOKEN ?= $(shell cat .token)", "shell substitution"),
                (
                    "System.setProperty(\"api_token\", System.getenv(\"T\"))",
                    "not a literal",
                ),
                (
                    "config.get(\"api_token\", \"not-configured\")",
                    "word-like default",
                ),
                (
                    "if (secret == other_secret_value) {}",
                    "a comparison with a name",
                ),
            ],
        );
    }

    #[test]
    fn code_files_treat_bare_names_as_code() {
        let s = Scanner::new(ScanConfig::default());
        assert!(
            s.scan_bytes("app/settings.py", b"PASSWORD = DB_PASSWORD_VALUE\n")
                .is_empty()
        );
        let f = s.scan_bytes(".env", b"PASSWORD=DbPassValue9\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].value, "DbPassValue9");
        assert_eq!((f[0].line, f[0].col_start), (1, 10));
    }

    /// Issue 18, generator-3 round 4: UI sentences under credential-named
    /// keys in locale files are prose; a passphrase is still a password.
    #[test]
    fn sentences_are_prose_passphrases_are_not() {
        check(
            "generic_secret",
            &[(
                "password: \"correct horse battery staple 42\"",
                "correct horse battery staple 42",
            )],
            &[
                (
                    "      no_token: \"You can't access this page without coming from a password reset email.\"",
                    "devise message",
                ),
                (
                    "\"login.apiKey.help\" = \"Create a token in Settings \u{203a} Developer and paste it here.\";",
                    "iOS strings",
                ),
            ],
        );
    }

    /// Issue 18, generator-3 round 5: values that name or point at a
    /// secret (an ICU message, an `@file` argument, a list of secret
    /// names, `name:/path`, an ARN's fields, a filter's marker, a git
    /// remote without password), and a password directive read without an
    /// operator; beside each, a literal the rule still reports.
    #[test]
    fn round_five_references_and_directives() {
        check(
            "generic_secret",
            &[
                (
                    "    user admin insecure-password Qx7!pL2mR9vT4\n",
                    "Qx7!pL2mR9vT4",
                ),
                ("SecretsFilter: 'Qx7pL2mR9vT4wZk3'", "Qx7pL2mR9vT4wZk3"),
                ("api_key=@Qx7pL2mR9vT4wZk3", "@Qx7pL2mR9vT4wZk3"),
                (
                    "secrets_repo: https://Qx7pL2mR9vT4wZk3nB8c@github.com/acme/x.git",
                    "https://Qx7pL2mR9vT4wZk3nB8c@github.com/acme/x.git",
                ),
                ("\"password\"=>\"[Qx7pL2mR9vT4]\"", "[Qx7pL2mR9vT4]"),
            ],
            &[
                (
                    "\"auth.password.strength\": \"{score, select, 0 {Very weak} other {Strong}}\"",
                    "ICU select",
                ),
                (
                    "\"tokens.count\": \"{count, plural, one {# token} other {# tokens}}\"",
                    "ICU plural",
                ),
                (
                    "vault kv put secret/orders api_key=@api_key.txt",
                    "@file argument",
                ),
                (
                    "      SecretsFilter: 'db-password,api-key'",
                    "list of secret names",
                ),
                (
                    "LoadCredential=db-password:/etc/orders/credentials/db-password",
                    "systemd credential name and path",
                ),
                (
                    "    API_ARN: arn:aws:secretsmanager:eu-west-1:373609481489:secret:prod/orders/api-key-rDOg9F",
                    "ARN fields",
                ),
                (
                    "  Parameters: {\"password\"=>\"[FILTERED]\", \"api_key\"=>\"[FILTERED]\"}",
                    "Rails filtered parameters",
                ),
                (
                    "  secrets_repo: git@github.com:acme/secrets-config.git",
                    "scp-like remote",
                ),
                (
                    "  credentials_helper: ssh://git@git.acme.io:2222/ops/credentials.git",
                    "ssh URL with a user",
                ),
                ("Enter the password below", "prose"),
            ],
        );
        // A file name in a checksum list is no directive keyword (the
        // checksum itself is the random-token rule's to judge).
        let s = Scanner::new(ScanConfig::default());
        let f = s.scan_bytes(
            "migrations/sum.txt",
            b"20261064194729_add_password_resets.sql h1:u1QGiuqF+qfkh1MAgzZr6ZYjkK+CLkxx7x0=\n",
        );
        assert!(f.iter().all(|f| f.rule != "credential-assignment"), "{f:?}");
    }

    /// Issue 18, generator-14: the classes of the IaC, data-pipeline and
    /// streaming round, each with a hard negative. `rules` is the default
    /// scan's `rule=value` list.
    fn values(path: &str, text: &str) -> Vec<String> {
        crate::scanner::rules::testutil::rules(path, text)
    }

    /// A value in escaped quotes inside a string literal (Kafka's JAAS
    /// config, JSON in a string) is a value; a reference there is not,
    /// and an unescaped quote ends the literal before any value.
    #[test]
    fn values_in_escaped_quotes() {
        let jaas = "props.put(\"sasl.jaas.config\", \"org.apache.kafka.common.security.plain.PlainLoginModule required username=\\\"svc-ledger\\\" password=\\\"Tamarind4417!quay\\\";\");\n";
        assert_eq!(
            values("src/main/java/Kafka.java", jaas),
            ["credential-assignment=Tamarind4417!quay"]
        );
        let json = "body := \"{\\\"api_key\\\": \\\"Vq3Ln8Rz2Kw6Tb9Xm4Pd\\\"}\"\n";
        assert_eq!(
            values("client/post.go", json),
            ["credential-assignment=Vq3Ln8Rz2Kw6Tb9Xm4Pd"]
        );
        for text in [
            "cfg := \"username=\\\"svc\\\" password=\\\"${KAFKA_PASSWORD}\\\";\"\n",
            "msg := \"password=\\\"\" + pw + \"\\\";\"\n",
        ] {
            assert!(values("client/kafka.go", text).is_empty(), "{text}");
        }
    }

    /// A lookup's default given by keyword (`default_var=`, `fallback=`)
    /// is a literal like a positional one; another keyword argument is
    /// not the default.
    #[test]
    fn lookup_defaults_by_keyword() {
        for text in [
            "TOKEN = Variable.get(\"crm_api_token\", default_var=\"Wm7Kq2Rv9Lx4Tz8Np3Bc\")\n",
            "TOKEN = conf.get(\"api_token\", fallback=\"Wm7Kq2Rv9Lx4Tz8Np3Bc\")\n",
            "SECRET = env.str(\"DJANGO_SECRET\", default=\"Wm7Kq2Rv9Lx4Tz8Np3Bc\")\n",
        ] {
            assert_eq!(
                values("dags/export.py", text),
                ["credential-assignment=Wm7Kq2Rv9Lx4Tz8Np3Bc"],
                "{text}"
            );
        }
        let described =
            "TOKEN = Variable.get(\"crm_api_token\", description=\"Wm7Kq2Rv9Lx4Tz8Np3Bc\")\n";
        assert!(values("dags/export.py", described).is_empty());
    }

    /// A declared parameter's or variable's literal default is its value;
    /// a declaration without one, or a block that declares nothing, is not.
    #[test]
    fn declared_parameter_defaults() {
        let cfn = "Parameters:\n  AdminPassword:\n    Type: String\n    NoEcho: true\n    Default: 'Quill8823-marsh'\n    MinLength: 12\n";
        assert_eq!(
            values("infra/stack.yaml", cfn),
            ["credential-assignment=Quill8823-marsh"]
        );
        let tf = "variable \"admin_password\" {\n  type      = string\n  sensitive = true\n  default   = \"Quill8823-marsh\"\n}\n";
        assert_eq!(
            values("infra/variables.tf", tf),
            ["credential-assignment=Quill8823-marsh"]
        );
        for (path, text) in [
            (
                "infra/stack.yaml",
                "Parameters:\n  AdminPassword:\n    Type: String\n    NoEcho: true\n  Env:\n    Type: String\n    Default: Quill8823-marsh\n",
            ),
            (
                "infra/variables.tf",
                "variable \"admin_password\" {\n  type      = string\n  sensitive = true\n}\nvariable \"env\" {\n  default = \"Quill8823-marsh\"\n}\n",
            ),
            (
                "config/app.yaml",
                "password_policy:\n  default: Quill8823-marsh\n",
            ),
        ] {
            assert!(values(path, text).is_empty(), "{text}");
        }
    }

    /// CloudFormation's dynamic references and a generated secret's
    /// template are not values; a literal beside them still is.
    #[test]
    fn dynamic_references_and_secret_templates() {
        let text = "      MasterUsername: '{{resolve:secretsmanager:app/db/master:SecretString:username}}'\n      TOKEN_PARAM: '{{resolve:ssm-secure:/app/api-token:3}}'\n      GenerateSecretString:\n        SecretStringTemplate: '{\"username\": \"app\"}'\n        GenerateStringKey: password\n";
        assert!(values("templates/db.yaml", text).is_empty());
        let literal = format!("{text}      ApiToken: Wm7Kq2Rv9Lx4Tz8Np3Bc\n");
        assert_eq!(
            values("templates/db.yaml", &literal),
            ["credential-assignment=Wm7Kq2Rv9Lx4Tz8Np3Bc"]
        );
    }

    /// `pw` is a password as a key's last segment; inside a word, or
    /// before another segment, it names nothing.
    #[test]
    fn pw_as_the_last_segment() {
        for text in [
            "DB_PW=Harbor$7741Lintel\n",
            "smtp_pw: Harbor$7741Lintel\n",
            // `pwd` after a separator is still the word `pwd`.
            "DB_PWD=Harbor$7741Lintel\n",
            "ldap.pwd: Harbor$7741Lintel\n",
        ] {
            assert_eq!(
                values("deploy/app.env", text),
                ["credential-assignment=Harbor$7741Lintel"],
                "{text}"
            );
        }
        for text in [
            "PWA_NAME=Harbor$7741Lintel\n",
            "PW_TEST_REPORTER=Harbor$7741Lintel\n",
        ] {
            assert!(values("deploy/app.env", text).is_empty(), "{text}");
        }
    }

    /// A secret store's name with an abbreviated segment (`ci/`) under a
    /// secret's name is a name, not the secret.
    #[test]
    fn store_paths_with_abbreviations() {
        assert!(
            values(
                "lib/stack.ts",
                "const GITHUB_TOKEN_SECRET = 'ci/github-token';\n"
            )
            .is_empty()
        );
        assert_eq!(
            values(
                "lib/stack.ts",
                "const GITHUB_TOKEN = 'ci/Wm7Kq2Rv9Lx4Tz8Np3Bc';\n"
            ),
            ["credential-assignment=ci/Wm7Kq2Rv9Lx4Tz8Np3Bc"]
        );
    }

    /// A key whose look back for an ARN starts inside a multi-byte
    /// character is judged, not a panic (a README's `—` 128 bytes before
    /// `password=`).
    #[test]
    fn arn_look_back_from_a_char_boundary() {
        for pad in 124..=128 {
            let text = format!("a\u{2014}{}password=Zq8v2Lm4Kp7Rt\n", " ".repeat(pad));
            assert_eq!(
                values("README.md", &text),
                ["credential-assignment=Zq8v2Lm4Kp7Rt"],
                "{pad}"
            );
        }
    }
}
