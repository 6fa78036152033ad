//! Values that read as words, fixtures or references: the false-positive
//! classes of the credential-assignment rule measured on held-out code
//! (issue 18). A credential is random, or at least not made only of
//! English-like words; a value that *names* where a credential lives
//! (`var.db_password`, `{{ .Values.token }}`, `vault:secret/data/app#key`,
//! a URL without userinfo) is the fix, not the leak.
//!
//! Each judgement is by shape, not by instance: word-likeness looks at
//! vowels and consonant runs of every part, fixture words at whole parts,
//! references at the syntax of the templating and reference languages.

/// Parts (whole, lowercase) that mark a word-like value as a test fixture
/// or a fake: `test-token-123`, `mock-jwt-token`, `"password": "test1234"`.
const FIXTURE_WORDS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "mock",
    "mocked",
    "fake",
    "dummy",
    "stub",
    "fixture",
    "sample",
    "example",
    "placeholder",
    "redacted",
    "changeme",
    "demo",
    "foo",
    "bar",
    "baz",
    "lorem",
    "ipsum",
    "todo",
    "fixme",
    "xxx",
    "invalid",
    "bogus",
    "unused",
];

/// Longest part judged as one English-like word (longer letter runs are
/// not words; `correcthorsebatterystaple` is a passphrase).
const MAX_WORD: usize = 20;
/// Longest consonant run inside an English-like word (`strengths` has 5).
const MAX_CONSONANTS: usize = 5;
/// Longest digit run a word-like value may carry (`v2`, `2024`, `test1234`).
const MAX_DIGIT_RUN: usize = 4;

/// One part of a value split at separators, case changes and letter/digit
/// boundaries.
#[derive(Debug, PartialEq)]
enum Part<'a> {
    Letters(&'a str),
    Digits(usize),
}

/// Splits `v` into letter words (camelCase and acronyms split as
/// `HTTPServer` → `HTTP`, `Server`) and digit runs; `None` when `v` holds a
/// byte other than letters, digits and `- _ .` or space.
fn parts(v: &str) -> Option<Vec<Part<'_>>> {
    let b = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if matches!(c, b'-' | b'_' | b'.' | b' ') {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push(Part::Digits(i - s));
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return None;
        }
        let s = i;
        let caps = b[i..].iter().take_while(|c| c.is_ascii_uppercase()).count();
        if caps >= 2 {
            // An acronym; before a lowercase letter its last capital starts
            // the next word.
            let next_lower = b.get(i + caps).is_some_and(u8::is_ascii_lowercase);
            i += if next_lower { caps - 1 } else { caps };
        } else {
            i += caps;
            while i < b.len() && b[i].is_ascii_lowercase() {
                i += 1;
            }
        }
        out.push(Part::Letters(&v[s..i]));
    }
    Some(out)
}

fn is_vowel(c: u8) -> bool {
    matches!(
        c.to_ascii_lowercase(),
        b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
    )
}

/// An English-like word: an acronym of up to five capitals, a short
/// lowercase abbreviation (`jwt`, `db`), or letters with vowels where
/// consonant runs stay short. Random letters fail the consonant-run and
/// vowel tests far more often than words do.
fn is_word(w: &str) -> bool {
    let b = w.as_bytes();
    if b.len() > MAX_WORD {
        return false;
    }
    if b.iter().all(u8::is_ascii_uppercase) && b.len() <= 5 {
        return true;
    }
    if b.len() <= 3 {
        return true;
    }
    let vowels = b.iter().filter(|&&c| is_vowel(c)).count();
    if vowels * 8 < b.len() {
        return false;
    }
    let mut run = 0;
    for &c in b {
        run = if is_vowel(c) { 0 } else { run + 1 };
        if run > MAX_CONSONANTS {
            return false;
        }
    }
    // A letter tripled (`aaab`) is not a word.
    !b.windows(3).any(|w| w[0] == w[1] && w[1] == w[2])
}

/// True when `v` is made only of English-like words joined by `- _ .`,
/// spaces or case changes (`tenant-window`, `OAuth2AccessTokenResponse`,
/// `mock-jwt-token`). With `allow_digits`, short digit runs may appear
/// (`v2`, `release-2024`); without, any digit makes the value not
/// word-like (`hunter2`). Short words must not dominate: at least half the
/// letters sit in words of four or more letters.
pub(crate) fn is_word_like(v: &str, allow_digits: bool) -> bool {
    let Some(ps) = parts(v) else { return false };
    if glued_digit_runs(v) > MAX_GLUED_DIGITS {
        return false;
    }
    let (mut letters, mut long_letters, mut digits) = (0usize, 0usize, 0usize);
    for p in &ps {
        match p {
            Part::Letters(w) => {
                if !is_word(w) {
                    return false;
                }
                letters += w.len();
                if w.len() >= 4 {
                    long_letters += w.len();
                }
            }
            Part::Digits(n) => {
                if !allow_digits || *n > MAX_DIGIT_RUN {
                    return false;
                }
                digits += n;
            }
        }
    }
    // A lone short word (`app` in `secret/data/app`) is a word; among
    // several, short ones must not dominate (random text splits into many).
    letters > 0
        && digits <= letters
        && (ps.len() == 1 || long_letters * 3 >= letters)
        && letters + digits >= ps.len() * 3
}

/// Digit runs with a letter on both sides a word-like value may hold
/// (`oauth2client`). Random lowercase-and-digit text (`869xjkbfe0bnj3bid`,
/// `w3od2uf9iawqub`) splits at its digits into short pieces that each pass
/// for a word; words people write put digits at the ends or between
/// separators (`release-2024`, `test1234`, `v2`).
const MAX_GLUED_DIGITS: usize = 1;

/// Names whose digits are part of the name (lowercase): encodings,
/// integer and float types, digests, certificate and protocol versions.
/// In camelCase (`urlBase64ToUint8Array`, `parseX509Cert`,
/// `readInt32BE`, `toUtf8Bytes`, `OAuth2Client`) the digits end a hump and
/// the next hump starts with a capital: the digits are glued to a word, not
/// scattered through random text (issue 18, generator-8
/// `web-push-vapid-public-key`).
const NUMBERED_TERMS: &[&str] = &[
    "base16",
    "base32",
    "base36",
    "base58",
    "base62",
    "base64",
    "base85",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float32",
    "float64",
    "bigint64",
    "biguint64",
    "utf8",
    "utf16",
    "utf32",
    "ucs2",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3",
    "md5",
    "crc32",
    "x509",
    "x25519",
    "ed25519",
    "p256",
    "oauth1",
    "oauth2",
    "http1",
    "http2",
    "http3",
    "ipv4",
    "ipv6",
    "s3",
    "ec2",
    "k8s",
    "i18n",
    "l10n",
    "vec2",
    "vec3",
    "vec4",
    "mat4",
    "pkcs1",
    "pkcs7",
    "pkcs8",
    "pkcs12",
    "aes128",
    "aes256",
    "rsa2048",
    "rsa4096",
];

/// True when the digits at `s..e` of `b` end a camel hump that is a
/// [`NUMBERED_TERMS`] name and a capital starts the next hump.
fn ends_numbered_term(b: &[u8], s: usize, e: usize) -> bool {
    if !b.get(e).is_some_and(u8::is_ascii_uppercase) {
        return false;
    }
    let mut h = s;
    while h > 0 && b[h - 1].is_ascii_lowercase() {
        h -= 1;
    }
    // The hump's capital(s): `Base64`, `X509`, `OAuth2`.
    while h > 0 && b[h - 1].is_ascii_uppercase() {
        h -= 1;
    }
    let term = b[h..e].to_ascii_lowercase();
    NUMBERED_TERMS
        .iter()
        .any(|t| t.as_bytes() == term.as_slice())
}

/// Counts digit runs with an ASCII letter right before and right after,
/// but for digits that end a [`NUMBERED_TERMS`] camel hump.
fn glued_digit_runs(v: &str) -> usize {
    let b = v.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if s > 0
                && b[s - 1].is_ascii_alphabetic()
                && b.get(i).is_some_and(u8::is_ascii_alphabetic)
                && !ends_numbered_term(b, s, i)
            {
                n += 1;
            }
        } else {
            i += 1;
        }
    }
    n
}

/// True for a word-like value (digits allowed) with a fixture word among
/// its parts: `test-token-123`, `mock-jwt-token`, `fake_api_key`,
/// `test1234`. A random value next to a fixture word (`test_Zk3mQ8pL2x…`)
/// is not word-like and stays a finding.
pub(crate) fn is_fixture(v: &str) -> bool {
    let Some(ps) = parts(v) else { return false };
    let has_fixture = ps.iter().any(|p| match p {
        Part::Letters(w) => FIXTURE_WORDS.iter().any(|f| f.eq_ignore_ascii_case(w)),
        Part::Digits(_) => false,
    });
    has_fixture && is_word_like(v, true)
}

/// A run of one character this long is filler (`AKIA0000000000000000`);
/// issued keys are random and practically never repeat a character ten
/// times in a row.
const MAX_SAME_RUN: usize = 10;

/// An alphabet or digit walk this long anywhere in a value
/// (`klmnopqrstuv`, `3456789a`) is typed by a person: in random base62 text
/// a given eight-character ascending run has odds near 62^-7 per position.
const MAX_WALK: usize = 8;

/// True when `v` holds [`MAX_WALK`] or more characters each one past the
/// previous (case folded): `sk-ant-api03-abc123xyz-…-klmnopqrstuvwx`.
fn has_walk(v: &[u8]) -> bool {
    let mut run = 1;
    for w in v.windows(2) {
        let (a, b) = (w[0].to_ascii_lowercase(), w[1].to_ascii_lowercase());
        run = if a.is_ascii_alphanumeric() && b == a + 1 {
            run + 1
        } else {
            1
        };
        if run >= MAX_WALK {
            return true;
        }
    }
    false
}

/// Longest block whose repetition [`has_repeated_block`] looks for.
const MAX_BLOCK: usize = 8;
/// Shortest repeated run that marks a filler (`123123123123`,
/// `abcd1234abcd1234abcd1234`): at least three copies of the block and at
/// least this many characters.
const MIN_REPEAT_RUN: usize = 12;

/// True when a block of 2 to [`MAX_BLOCK`] characters repeats back to back
/// over [`MIN_REPEAT_RUN`] or more characters (and at least three copies),
/// covering at least 40% of the value: typed filler such as `GR1348941` +
/// `12312312…`. In random base36 text a given 12-character run with period
/// 4 has odds near 36^-8 per position. A long token with one repeated
/// stretch (base64 of zero bytes, a masked claim inside a JWT) is judged
/// by the rest of it.
fn has_repeated_block(v: &[u8]) -> bool {
    (2..=MAX_BLOCK).any(|p| {
        let need = (3 * p).max(MIN_REPEAT_RUN);
        let mut run = p;
        for i in p..v.len() {
            run = if v[i] == v[i - p] { run + 1 } else { p };
            if run >= need && run * 5 >= v.len() * 2 {
                return true;
            }
        }
        false
    })
}

/// True for a value with at most two distinct characters past its first
/// separator (`ghp_000000…`, `sk_live_abababab`), a long run of one
/// character, or counting up or down (`123456789`, `abcdefgh`):
/// placeholders, never issued keys.
pub(crate) fn is_degenerate(v: &str) -> bool {
    let vb = v.as_bytes();
    if has_walk(vb) || has_repeated_block(vb) {
        return true;
    }
    let mut run = 1;
    for w in vb.windows(2) {
        run = if w[0] == w[1] { run + 1 } else { 1 };
        if run >= MAX_SAME_RUN {
            return true;
        }
    }
    let body = v
        .rfind(['_', '-'])
        .filter(|&i| v.len() - i > 8)
        .map_or(v, |i| &v[i + 1..]);
    let b = body.as_bytes();
    if b.len() < 6 {
        return false;
    }
    let mut seen = [false; 256];
    let mut distinct = 0;
    for &c in b {
        if !seen[usize::from(c)] {
            seen[usize::from(c)] = true;
            distinct += 1;
        }
    }
    if distinct <= 2 {
        return true;
    }
    let step = |d: i16| b.windows(2).all(|w| i16::from(w[1]) - i16::from(w[0]) == d);
    step(1) || step(-1)
}

/// Roots of Terraform/HCL references (`var.x`, `local.x`, `module.m.out`,
/// `data.aws_secretsmanager_secret_version.x.secret_string`).
const HCL_ROOTS: &[&str] = &[
    "var.",
    "local.",
    "locals.",
    "module.",
    "data.",
    "each.",
    "self.",
    "path.",
    "terraform.",
    "count.",
    "resource.",
];

/// Prefixes that make a value a secret-store reference by themselves:
/// Vault, 1Password, AWS/GCP/Azure secret managers, SOPS/helm-secrets,
/// CloudFormation and Ansible tags.
const STORE_SCHEME: &[&str] = &[
    "vault:",
    "ref+",
    "op://",
    "arn:aws:secretsmanager:",
    "arn:aws:ssm:",
    "aws-sm://",
    "awssm://",
    "gcp-sm://",
    "gcpsm://",
    "akv://",
    "azurekeyvault://",
    "@microsoft.keyvault(",
    "!ref ",
    "!getatt ",
    "!sub ",
    "!vault",
];

/// Prefixes of store paths and CI/Helm contexts, references only when the
/// rest is a path of words (`secret/data/app#password`,
/// `secrets.API_TOKEN`, `.Values.db.password`).
const STORE_PATH: &[&str] = &[
    "secret/",
    "secrets/",
    "kv/",
    "projects/",
    "sm://",
    "env:",
    "file:",
    "secrets.",
    "inputs.",
    "values.",
    ".values.",
    "vars.",
];

/// Fragments of a name (lowercase) that declare its value public by
/// design: `publicToken`, `PUBLISHABLE_KEY`, reCAPTCHA/hCaptcha
/// `sitekey`, Algolia's `searchKey`/`search_api_key`/`search-only` key,
/// Supabase's `anon_key`, and the prefixes frameworks give variables they
/// ship to every browser (`NEXT_PUBLIC_`, `EXPO_PUBLIC_`, `NUXT_PUBLIC_`,
/// SvelteKit's `PUBLIC_`). Such a value is meant to be read by anyone.
const PUBLIC_NAME: &[&str] = &[
    "public",
    "publishable",
    "sitekey",
    "site_key",
    "site-key",
    "searchkey",
    "search_key",
    "search-key",
    "search_api_key",
    "searchapikey",
    "search_only",
    "search-only",
    "searchonly",
    "anonkey",
    "anon_key",
    "anon-key",
    // Anti-forgery tokens: made per session and written into every page
    // the server renders (Rails `authenticity_token`, `csrf-token` meta
    // tags, .NET `__RequestVerificationToken`); they authenticate nothing.
    "csrf",
    "xsrf",
    "authenticity_token",
    "antiforgery",
    "anti-forgery",
    "requestverificationtoken",
];

/// English words that hold a secret word's letters and name something
/// else (issue 18, generator-9 `hashlib-artifact-digests`: a digest under
/// `"tokenizer.json"`): a letter run starting with one of these is not the
/// secret word. `author` only whole or inflected: `authorization` is one.
const DERIVED_WORDS: &[&str] = &[
    "tokeniz",
    "tokenis",
    "secretar",
    "secretion",
    "passeng",
    "passport",
    "passage",
    "passiv",
    "passthrough",
    "compass",
    "encompass",
    "bypass",
    "surpass",
];

/// Whole words for [`DERIVED_WORDS`]' `author` family.
const AUTHOR_WORDS: &[&str] = &["author", "authors", "authored", "authoring", "authorship"];

/// Whether the letter run `w` (lowercase) is a derived word
/// ([`DERIVED_WORDS`]).
fn is_derived_word(w: &str) -> bool {
    DERIVED_WORDS.iter().any(|d| w.starts_with(d)) || AUTHOR_WORDS.contains(&w)
}

/// Whether the match `m_start..m_end` of a secret word in `lower` lies in
/// a derived word ([`DERIVED_WORDS`]: `tokenizer`, `secretary`).
pub(crate) fn in_derived_word(lower: &str, m_start: usize, m_end: usize) -> bool {
    let b = lower.as_bytes();
    let mut a = m_start;
    while a > 0 && b[a - 1].is_ascii_lowercase() {
        a -= 1;
    }
    let mut z = m_end;
    while z < b.len() && b[z].is_ascii_lowercase() {
        z += 1;
    }
    is_derived_word(&lower[a..z])
}

/// `s` (lowercase) with its derived words ([`DERIVED_WORDS`]) blanked.
pub(crate) fn without_derived_words(s: &str) -> String {
    blank_runs(s, |c| c.is_ascii_lowercase(), is_derived_word)
}

/// `s` with every maximal run of `part` characters that `blank` accepts
/// replaced by as many spaces (offsets kept).
pub(crate) fn blank_runs(s: &str, part: fn(char) -> bool, blank: fn(&str) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let n = rest.find(|c: char| !part(c)).unwrap_or(rest.len());
        let (run, tail) = rest.split_at(n);
        if blank(run) {
            out.extend(std::iter::repeat_n(' ', run.len()));
        } else {
            out.push_str(run);
        }
        let m = tail.find(part).unwrap_or(tail.len());
        out.push_str(&tail[..m]);
        rest = &tail[m..];
    }
    out
}

/// Whether a name (lowercase) declares its value public or per-page
/// ([`PUBLIC_NAME`]),
/// unless it also names a secret or a private key (`public_secret`?
/// `PUBLIC_KEY_PASSWORD` is a password).
pub(crate) fn names_public(name: &str) -> bool {
    PUBLIC_NAME.iter().any(|p| name.contains(p))
        && !["secret", "private", "passw", "pwd"]
            .iter()
            .any(|w| name.contains(w))
}

/// Longest template expression looked at (`{{ … }}`, `${…}`).
const MAX_TEMPLATE: usize = 256;

/// True when `l` (lowercase) holds a template expression *with its
/// structure*: `{{ expr }}` (Go, Jinja, Helm, Mustache, GitHub Actions
/// `${{ }}`), `${name…}` and `#{expr}` (shell, Compose, Terraform, Ruby
/// interpolation), `%(name)`, ERB/JSP `<%…`, or `<words>` (`<your-key>`).
/// An expression's inside is names, paths, pipes, quotes and calls; a
/// password of punctuation that happens to hold `{{` or `${`
/// (`m{{h}o)p${e]nob(ody…}}`, a detect-secrets fixture) is not one, and
/// neither is a lone `<` or `>` inside a value.
pub(crate) fn has_template(l: &str) -> bool {
    let b = l.as_bytes();
    let expr = |c: u8| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b' ' | b'\t'
                    | b'.'
                    | b'_'
                    | b'-'
                    | b'|'
                    | b':'
                    | b'\''
                    | b'"'
                    | b'('
                    | b')'
                    | b','
                    | b'/'
                    | b'$'
                    | b'='
                    | b'['
                    | b']'
                    | b'!'
                    | b'?'
                    | b'+'
                    | b'@'
                    | b'#'
                    | b'%'
                    | b'*'
                    | b'^'
            )
    };
    // The inside of an expression opened at `from`, up to `close`.
    let closed = |from: usize, close: &[u8], first: &dyn Fn(u8) -> bool| {
        let rest = &b[from..b.len().min(from + MAX_TEMPLATE)];
        // A value read up to a `}` ends inside its template
        // (`{{.Values.apiToken` of an unquoted YAML value): the rest of
        // it is the expression.
        let end = rest
            .windows(close.len())
            .position(|w| w == close)
            .or((from + rest.len() == b.len()).then_some(rest.len()));
        let Some(end) = end else {
            return false;
        };
        let inner = &rest[..end];
        inner.first().is_none_or(|&c| first(c)) && inner.iter().all(|&c| expr(c))
    };
    let name_start = |c: u8| c.is_ascii_alphabetic() || matches!(c, b'_' | b' ' | b'.' | b'$');
    for i in 0..b.len() {
        let next = &b[i..];
        let found = if next.starts_with(b"${{") {
            closed(i + 3, b"}}", &|_: u8| true)
        } else if next.starts_with(b"{{") {
            closed(i + 2, b"}}", &|_: u8| true)
        } else if next.starts_with(b"${") || next.starts_with(b"#{") {
            closed(i + 2, b"}", &name_start)
        } else if next.starts_with(b"%(") {
            closed(i + 2, b")", &|c: u8| c.is_ascii_alphabetic() || c == b'_')
        } else if next.starts_with(b"<%") {
            true
        } else if next.starts_with(b"<") {
            closed(i + 1, b">", &|c: u8| c.is_ascii_alphabetic())
                && b[i + 1..].iter().take_while(|&&c| c != b'>').all(|&c| {
                    c.is_ascii_alphanumeric() || matches!(c, b' ' | b'_' | b'-' | b'.' | b'/')
                })
        } else {
            false
        };
        if found {
            return true;
        }
    }
    false
}

/// True when `v` is not a literal but a reference to where the value lives:
/// template syntax (`{{ }}`, `${…}`, `$VAR`, `%(name)s`, `<your-key>`,
/// `#{…}`), an environment or config read (`os.environ[…]`,
/// `process.env.X`, `config.get(…)`, `ENV.fetch(…)`), a Terraform
/// reference, or a secret-store path (`vault:secret/data/app#key`,
/// `secret/data/app#password`, `arn:aws:secretsmanager:…`). The value of a
/// reference is elsewhere: writing one is the remediation we ask for.
pub(crate) fn is_reference(v: &str) -> bool {
    let t = v.trim();
    let l = t.to_ascii_lowercase();
    if has_template(&l) {
        return true;
    }
    // A format placeholder: `{SumoAccessKey}`, `{api_key}` (C#, Python
    // `str.format`, Rust), possibly cut at its `}` by an unquoted value's
    // reader.
    if let Some(inner) = l.strip_prefix('{') {
        let inner = inner.strip_suffix('}').unwrap_or(inner);
        if inner
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && inner
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        {
            return true;
        }
    }
    if let Some(rest) = l.strip_prefix('$')
        && is_sigil_reference(rest)
    {
        return true;
    }
    if is_parameter_path(&l) {
        return true;
    }
    if l.starts_with('<') && l.ends_with('>') {
        return true;
    }
    if HCL_ROOTS.iter().any(|r| l.starts_with(r)) && is_dotted_path(&l) {
        return true;
    }
    if STORE_SCHEME.iter().any(|p| l.starts_with(p))
        || (STORE_PATH.iter().any(|p| l.starts_with(p)) && is_path_of_words(t))
    {
        return true;
    }
    // ARM template expressions: `[parameters('adminPassword')]`,
    // `[listKeys(resourceId(…), '2022-09-01').keys[0].value]`.
    if let Some(inner) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']'))
        && let Some(open) = inner.find('(')
        && inner
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && inner[..open]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
    {
        return true;
    }
    // An authorization scheme before a reference (`Bearer $GITHUB_TOKEN`,
    // `token ${{ secrets.PAT }}`): the header is built from the reference.
    if let Some((scheme, rest)) = t.split_once(' ')
        && matches!(
            scheme.to_ascii_lowercase().as_str(),
            "bearer" | "basic" | "token" | "bot"
        )
        && is_reference(rest)
    {
        return true;
    }
    if is_language_name(t) {
        return true;
    }
    // `os.environ["X"]`, `config.get("x")`, `ENV.fetch("X")`, `Secret(...)`:
    // a call or index on a dotted name.
    is_call_chain(t)
}

/// True for a name in a language's own syntax where a literal would be
/// (issue 18, generator-13's Rails, PHP and Phoenix files): a Ruby or
/// Elixir symbol (`:auth_token`); an Elixir tuple opening with one
/// (`{:system, "GUARDIAN_SECRET"}`, Guardian's and Confex's environment
/// lookup, cut at its comma by an unquoted value's reader); a Ruby method
/// chain ending in a bang or predicate
/// (`Rails.application.credentials.devise_jwt_secret_key!`); a scoped
/// name (`static::$password`, `self::API_KEY`, `config::TOKEN`). Each
/// part is an identifier, and a symbol's words read as words, so a
/// password that merely starts with `:` or holds `::` is still judged.
fn is_language_name(t: &str) -> bool {
    let ident = |s: &str| {
        s.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    };
    let symbol = |s: &str| {
        ident(s)
            && s.split('_')
                .all(|w| w.is_empty() || w.len() <= 4 || is_word_like(w, true))
    };
    if let Some(r) = t.strip_prefix(':') {
        return symbol(r);
    }
    if let Some(r) = t.strip_prefix("{:") {
        return symbol(r.strip_suffix('}').unwrap_or(r));
    }
    if let Some(chain) = t.strip_suffix(['!', '?']) {
        let mut parts = chain.split('.');
        return chain.contains('.') && parts.all(ident);
    }
    t.contains("::")
        && t.split("::")
            .all(|p| ident(p.strip_prefix('$').unwrap_or(p)))
}

/// True for a call or index chain on a dotted name, whole: `config.get("x")`,
/// `os.environ["X"]`, `ENV.fetch("X").strip()`, `Secret(...)`. Every bracket
/// closes (quotes respected) and only `.name` or another bracket follows
/// one: code is balanced, while random text with a `(` in it is not (a
/// Django key `g(jj^vttf…` starts like a call and never becomes one).
fn is_call_chain(v: &str) -> bool {
    let b = v.as_bytes();
    let name = |i: usize| {
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b':' | b'$')) {
            j += 1;
        }
        j
    };
    let mut i = name(0);
    if i == 0 {
        return false;
    }
    let mut brackets = 0;
    while i < b.len() {
        match b[i] {
            b'.' if i + 1 < b.len() && name(i + 1) > i + 1 => i = name(i + 1),
            b'(' | b'[' => {
                let Some(close) = closing(b, i) else {
                    return false;
                };
                brackets += 1;
                i = close + 1;
            }
            _ => return false,
        }
    }
    brackets > 0
}

/// The index of the bracket closing the one at `b[open]`, skipping quoted
/// strings; `None` when it never closes or another bracket closes first.
fn closing(b: &[u8], open: usize) -> Option<usize> {
    let mut stack = vec![b[open]];
    let mut i = open + 1;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                b'"' | b'\'' | b'`' => quote = Some(c),
                b'(' | b'[' | b'{' => stack.push(c),
                b')' | b']' | b'}' => {
                    let want = match stack.pop()? {
                        b'(' => b')',
                        b'[' => b']',
                        _ => b'}',
                    };
                    if c != want {
                        return None;
                    }
                    if stack.is_empty() {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// A name after a `$` sigil, in the reference syntax of a language or
/// tool: `$TOKEN` (shell), a dotted path (`$oidc.keycloak.clientSecret`,
/// Argo CD's reference into its Secret), or a name indexed by braces,
/// possibly cut at its `}` by an unquoted value's reader: Perl's
/// `$ENV{DB_PASS}` and `$config{token}`, Grafana's `$__file{/etc/secrets/x}`
/// and `$__env{NAME}`. The inside of the braces is a name or a path of
/// words; a password that merely starts with `$` (`$ecretP@ss`) has other
/// characters.
fn is_sigil_reference(rest: &str) -> bool {
    let ident = |s: &str| {
        s.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    };
    // Perl's arrow dereference (`$self->{token}`, `$cfg->{db}{password}`
    // cut at its first `}`) is a path like a dotted one.
    let rest = rest.replace("->", ".");
    let (head, index) = match rest.split_once('{') {
        Some((h, i)) => (
            h.strip_suffix('.').unwrap_or(h),
            Some(i.strip_suffix('}').unwrap_or(i)),
        ),
        None => (rest.as_str(), None),
    };
    if !head.split('.').all(ident) {
        return false;
    }
    index.is_none_or(|i| {
        let i = i.trim_matches(['"', '\'']);
        ident(i) || (i.starts_with('/') && is_word_path(i))
    })
}

/// A container parameter, alone or heading a path of words: Symfony's
/// `%kernel.project_dir%/config/jwt/private.pem`, `%env(APP_SECRET)%`,
/// `%app.secret%`. The value is built from the parameter at run time.
fn is_parameter_path(l: &str) -> bool {
    let Some((name, rest)) = l.strip_prefix('%').and_then(|r| r.split_once('%')) else {
        return false;
    };
    let name_ok = name
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'(' | b')' | b':'));
    name_ok && (rest.is_empty() || (rest.starts_with('/') && is_word_path(rest)))
}

/// `a.b.c` with identifier segments (indexes `["x"]` allowed): a reference
/// path, not a literal.
fn is_dotted_path(l: &str) -> bool {
    l.contains('.')
        && l.split('.').all(|s| {
            !s.is_empty()
                && s.bytes().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(c, b'_' | b'-' | b'[' | b']' | b'"' | b'*')
                })
        })
}

/// A path of word-like segments (`secret/data/app#password`,
/// `vault:secret/data/billing/db`): separators `/ : # . - _` and `@`.
fn is_path_of_words(l: &str) -> bool {
    l.split([
        '/', ':', '#', '@', '?', '=', '&', ',', '(', ')', '\'', '"', ' ', '!',
    ])
    .filter(|s| !s.is_empty())
    .all(|s| all_words(s) || s.bytes().all(|c| c.is_ascii_digit() || c == b'*'))
}

/// Most parts one segment of a store path has (`billing-db-credentials`);
/// random text splits into many more at its case and digit changes.
const MAX_SEGMENT_PARTS: usize = 4;

/// Every letter part of `s` is a word (`api_key`, `db`), without
/// [`is_word_like`]'s share of long words: path segments are short names.
fn all_words(s: &str) -> bool {
    parts(s).is_some_and(|ps| {
        !ps.is_empty()
            && ps.len() <= MAX_SEGMENT_PARTS
            && ps.iter().all(|p| match p {
                Part::Letters(w) => is_word(w),
                Part::Digits(n) => *n <= MAX_DIGIT_RUN,
            })
    })
}

/// True for a URL with no userinfo (`postgres://db.internal:5432/billing`,
/// `https://auth.example.com/oauth/token`): an address, not a credential.
/// Credentials inside URLs are the connection-string rule's, and query
/// parameters (`?token=…`) are judged as assignments of their own (the
/// caller resumes its scan inside the URL).
pub(crate) fn is_plain_url(v: &str) -> bool {
    let Some(i) = v.find("://") else { return false };
    let scheme = &v[..i];
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
    {
        return false;
    }
    let rest = &v[i + 3..];
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    match authority.rfind('@') {
        None => true,
        // A user name and no password (`ssh://git@host/…`,
        // `postgres://orders@db/…`): an address. A token written as the
        // user (`https://<token>@github.com`) is not word-like and stays
        // judged.
        Some(at) => plain_user(&authority[..at]),
    }
}

/// True for a URL's user part that names an account and carries no
/// password: no `:`, and word-like.
fn plain_user(user: &str) -> bool {
    !user.contains(':') && !user.is_empty() && is_word_like(user, true)
}

/// True for a git remote in scp-like syntax, `user@host:path`
/// (`git@github.com:acme/secrets-config.git`): an address with a user name
/// and no password.
pub(crate) fn is_scp_remote(v: &str) -> bool {
    let Some((user, rest)) = v.split_once('@') else {
        return false;
    };
    let Some((host, path)) = rest.split_once(':') else {
        return false;
    };
    plain_user(user)
        && host.contains('.')
        && host
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-'))
        && !path.is_empty()
        && !path.starts_with('/')
        && !path.contains(['@', ':'])
        && is_word_path(path)
}

/// Modifier keys of a keyboard shortcut.
const KEY_MODIFIERS: &[&str] = &[
    "ctrl",
    "control",
    "alt",
    "shift",
    "cmd",
    "command",
    "meta",
    "super",
    "option",
    "opt",
    "win",
    "mod",
    "fn",
    "cmdorctrl",
    "commandorcontrol",
];

/// True for a keyboard shortcut (`ctrl+shift+s`, `Cmd+Alt+Delete`,
/// `CmdOrCtrl+K`): modifiers and one key joined by `+`, what a
/// `*_KEY` or `*_SHORTCUT` constant holds in a UI (issue 18, generator-9
/// `enum-token-names-nonsecret`).
pub(crate) fn is_key_combo(v: &str) -> bool {
    let parts: Vec<String> = v
        .split('+')
        .map(|p| p.trim().to_ascii_lowercase())
        .collect();
    let Some((last, mods)) = parts.split_last() else {
        return false;
    };
    !mods.is_empty()
        && mods.iter().all(|m| KEY_MODIFIERS.contains(&m.as_str()))
        && !last.is_empty()
        && (last.len() <= 3 || is_word_like(last, true))
}

/// True for a key or name template: word segments joined by `:`, `/` or
/// `.` with at least one placeholder segment (`{user_id}`, `%s`, `{}`,
/// `*`): `app:oauth:access_token:{user_id}` names where a token is kept
/// (a Redis or cache key), it is none (issue 18, generator-9
/// `token-named-constants-nonsecret`).
pub(crate) fn is_key_template(v: &str) -> bool {
    let placeholder = |s: &str| {
        matches!(s, "%s" | "%d" | "{}" | "*")
            || s.strip_prefix('{')
                .and_then(|r| r.strip_suffix('}'))
                .is_some_and(|inner| {
                    inner.is_empty()
                        || inner
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'_')
                })
    };
    let segs: Vec<&str> = v.split([':', '/', '.']).filter(|s| !s.is_empty()).collect();
    segs.len() >= 2
        && segs.iter().any(|s| placeholder(s))
        && segs.iter().all(|s| placeholder(s) || is_word_like(s, true))
}

/// True for tox's substitution of an environment variable,
/// `{env:NAME}` or `{env:NAME:default}`, whose default is no secret
/// (absent, words, a fixture): the value is read from the environment
/// (issue 18, generator-9 `tox-ini-clean`). Unclosed too: a value ends at
/// the first `}` some layouts cut at.
pub(crate) fn is_tox_env(v: &str) -> bool {
    let Some(rest) = v.strip_prefix("{env:") else {
        return false;
    };
    let rest = rest.strip_suffix('}').unwrap_or(rest);
    let (name, default) = rest.split_once(':').unwrap_or((rest, ""));
    !name.is_empty()
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && (default.is_empty() || is_word_like(default, true) || is_fixture(default))
}

/// True when `v`, a path with `/` separators (`/etc/app/db.pass`,
/// `secrets/prod/db-password.txt`), is made of word-like segments: a file
/// path or store path, not a key. Random base64 with `/` fails.
///
/// A segment of one or two lowercase letters (`ci/github-token`,
/// `db/master`, `qa/api-key`: an abbreviation naming an environment or a
/// component in a secret store's path) counts beside a word-like one,
/// never alone (issue 18, generator-14 `cdk-secret-references`: a
/// Secrets Manager name given to `SecretValue.secretsManager`).
pub(crate) fn is_word_path(v: &str) -> bool {
    let abbreviation =
        |s: &str| (1..=2).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_lowercase());
    let (mut short, mut worded) = (false, false);
    v.contains('/')
        && v.split('/').filter(|s| !s.is_empty()).all(|s| {
            if abbreviation(s) {
                short = true;
                return true;
            }
            worded = true;
            s.strip_prefix('~').unwrap_or(s).is_empty()
                || is_word_like(s, true)
                || s.split('.').all(|p| is_word_like(p, true))
        })
        && (worded || !short)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names that declare a value public by design or per page, and
    /// format placeholders.
    #[test]
    fn public_names_and_format_placeholders() {
        for n in [
            "publictoken",
            "stripe_publishable_key",
            "recaptcha_sitekey",
            "algolia_search_api_key",
            "supabase_anon_key",
            "next_public_firebase_api_key",
            "csrf-token",
            "authenticity_token",
            "__requestverificationtoken",
        ] {
            assert!(names_public(n), "{n}");
        }
        for n in [
            "api_key",
            "public_key_password",
            "publisher_secret",
            "private_key",
            "token",
        ] {
            assert!(!names_public(n), "{n}");
        }
        // Sigil references of Perl, Argo CD and Grafana, and container
        // parameters heading a path (issue 18, generator-10).
        for v in [
            "$ENV{SPROUT_DB_PASS",
            "$ENV{'API_TOKEN'}",
            "$self->{token",
            "$oidc.keycloak.clientSecret",
            "$__file{/etc/secrets/loki_token}",
            "$__env{GF_TOKEN}",
            "%kernel.project_dir%/config/jwt/private.pem",
            "%env(APP_SECRET)%",
        ] {
            assert!(is_reference(v), "{v}");
        }
        for v in [
            "$ecretP@ss$word",
            "$Zq8v{2Lm4Kp7Rt}x",
            "$a.b{Zq8v2Lm4Kp7Rt/9x+Q}",
            "$self->{Zq8v2Lm4Kp7Rt+Q}",
            "%Zq8v2%Lm4Kp7Rt",
            "%kernel.project_dir%Zq8v2Lm4Kp7Rt",
        ] {
            assert!(!is_reference(v), "{v}");
        }
        assert!(is_reference("{SumoAccessKey}"));
        assert!(is_reference("{api_key"));
        assert!(!is_reference("{9fK2mQ7x}"));
    }

    /// Template syntax is recognised by its structure; punctuation that
    /// happens to hold `{{`, `${` or `<` in a password is not a template.
    #[test]
    fn templates_by_structure() {
        for v in [
            "{{ .values.db.password | b64enc }}",
            "${{ secrets.api_token }}",
            "${db_password:-changeme}",
            "${ssm:/prod/db/password}",
            "${db_password#prefix}",
            "${db_password%%-*}",
            "#{env['api_key']}",
            "%(password)s",
            "<%= env[\"token\"] %>",
            "<your-api-key>",
            "prefix-{{ vault_token }}-suffix",
            // Cut at its first `}` by an unquoted value's reader.
            "{{.values.apitoken",
        ] {
            assert!(has_template(v), "{v}");
        }
        for v in [
            "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}",
            "x9${!kp]q}zz",
            "tr0ub4dor&3>{x",
            "p<4s#>w0rd",
            "q{{z;w}}k",
        ] {
            assert!(!has_template(v), "{v}");
        }
    }

    /// URLs and git remotes with a user and no password are addresses; a
    /// password or a token as the user is not.
    #[test]
    fn user_without_password() {
        assert!(is_plain_url(
            "ssh://git@git.acme.io:2222/ops/credentials.git"
        ));
        assert!(is_plain_url("postgres://orders@db.internal:5432/orders"));
        assert!(!is_plain_url(
            "postgres://orders:Qx7pL2mR9vT4@db.internal/orders"
        ));
        assert!(!is_plain_url(
            "https://Zk3mQ8pL2xR7vT4nW9bY6cJ1@github.com/acme/x.git"
        ));
        assert!(is_scp_remote("git@github.com:acme/secrets-config.git"));
        assert!(!is_scp_remote("deploy@github.com:Zk3mQ8pL2xR7vT4nW9bY6cJ1"));
        assert!(!is_scp_remote("admin:hunter2@db.internal:5432"));
    }

    /// Alphabet and digit walks are typed placeholders; random keys and
    /// short ascending runs (`abc`, `123`) are not caught by them.
    #[test]
    fn walks_are_degenerate() {
        assert!(is_degenerate(
            "sk-ant-api03-abc123xyz-klmnopqrstuvwx-3456yza"
        ));
        assert!(is_degenerate("key-23456789a"));
        assert!(!is_degenerate("Zk3mQ8pL2xR7vT4nW9bY6cJ1"));
        assert!(!is_degenerate("abc123xyz-def456-Q8pL2xR7"));
    }

    #[test]
    fn word_likeness() {
        for v in [
            "tenant-window",
            "orders_rollout",
            "OAuth2AccessTokenResponseClientFactory",
            "mock-jwt-token",
            "release.channel",
            "strength",
            "HTTPServerConfig",
        ] {
            assert!(is_word_like(v, true), "{v}");
        }
        for v in [
            "Zk3mQ8pL2xN7vR4tW9yB",
            "qzxkvbnmwrt",
            "Tr0ub4dor&3",
            "P@ssw0rd!",
            "ZkmQpLxNvRtWyBcHqsDf",
            "correcthorsebatterystaple",
            "a8f3k2m9",
            "W0vvwi1KQRM16mT8V9NaDkZ",
        ] {
            assert!(!is_word_like(v, true), "{v}");
        }
        // Random lowercase-and-digit text splits at its digits into
        // word-sized pieces; more than one digit run glued between
        // letters is not how people write words.
        for v in [
            "869xjkbfe0bnj3bidqewgi",
            "abwgxifuafyxl8wy0plysp3e",
            "w3od2uf9iawqubnsoupd7506",
        ] {
            assert!(!is_word_like(v, true), "{v}");
        }
        for v in [
            "oauth2client",
            "release-2024",
            "test1234",
            "orders-v2-rollout",
            // Numbered type and encoding names in camelCase.
            "urlBase64ToUint8Array",
            "readInt32BEFromUtf8Buffer",
            "parseX509CertFromBase64",
        ] {
            assert!(is_word_like(v, true), "{v}");
        }
        // Digits glued to humps that are no numbered term stay random.
        for v in ["urlBase6Q4ToUint9Array", "kXq8Tv3Bnm7Rp"] {
            assert!(!is_word_like(v, true), "{v}");
        }
        assert!(is_word_like("sunshine", false));
        assert!(!is_word_like("hunter2", false), "a digit is not a word");
    }

    #[test]
    fn fixtures_and_degenerate() {
        for v in ["test-token-123", "test1234", "mock-jwt-token", "FakeApiKey"] {
            assert!(is_fixture(v), "{v}");
        }
        for v in ["test_Zk3mQ8pL2xN7vR4tW9yB", "tenant-window", "hunter2"] {
            assert!(!is_fixture(v), "{v}");
        }
        for v in [
            "ghp_000000000000000000000000000000000000",
            "123456789",
            "abcdefghij",
            "sk_live_abababababab",
            "GR134894112312312312312312312",
            "abcd1234abcd1234abcd1234ABCD1234ABCD1234--__",
        ] {
            assert!(is_degenerate(v), "{v}");
        }
        // A block repeated twice, or a short echo inside a random key, is
        // not filler.
        assert!(!is_degenerate("Zk3mQ8pLZk3mQ8pL2xN7vR4t"));
        assert!(!is_degenerate("wJalrXUtnFEMI/K7MDENG/bPxRfiCYabab9q"));
        assert!(!is_degenerate("ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h"));
    }

    #[test]
    fn keyboard_shortcuts() {
        for v in ["ctrl+shift+s", "Cmd+Alt+Delete", "CmdOrCtrl+K", "alt+F4"] {
            assert!(is_key_combo(v), "{v}");
        }
        for v in ["k9Qz+2xLmP4", "ctrl", "shift+k9Qz2xLmP4Zr8vB3nT6w"] {
            assert!(!is_key_combo(v), "{v}");
        }
    }

    #[test]
    fn key_templates_and_tox_substitutions() {
        assert!(is_key_template("quillstack:oauth:access_token:{user_id}"));
        assert!(is_key_template("session/%s/token"));
        assert!(!is_key_template("quillstack:oauth:access_token"));
        assert!(!is_key_template("k9Qz2xLmP4:{id}:Zr8vB3nT6w"));
        assert!(is_tox_env("{env:SECRET_KEY:test-only-not-secret}"));
        assert!(is_tox_env("{env:SECRET_KEY:test-only-not-secret"));
        assert!(is_tox_env("{env:PYPI_TOKEN}"));
        assert!(!is_tox_env("{env:SECRET_KEY:k9Qz2xLmP4Zr8vB3nT6w}"));
    }

    #[test]
    fn derived_words_are_not_secret_words() {
        let t = "\"tokenizer.json\": api_token, secretary, authorization, author";
        let at = |w: &str| t.find(w).unwrap();
        assert!(in_derived_word(t, at("token"), at("token") + 5));
        assert!(!in_derived_word(
            t,
            at("api_token") + 4,
            at("api_token") + 9
        ));
        assert!(in_derived_word(t, at("secretary"), at("secretary") + 6));
        assert_eq!(
            without_derived_words(t),
            "\"         .json\": api_token,          , authorization,       "
        );
    }

    #[test]
    fn references() {
        for v in [
            "var.db_password",
            "data.aws_secretsmanager_secret_version.db.secret_string",
            "local.api_token",
            "module.secrets.token",
            "{{ .Values.db.password }}",
            "${{ secrets.API_TOKEN }}",
            "$DB_PASSWORD",
            "%(db_password)s",
            "<your-api-key>",
            "os.environ[\"TOKEN\"]",
            "config.get(\"token\")",
            "ENV.fetch(\"TOKEN\").strip()",
            "secrets[\"db\"][\"password\"]",
            "Secret(name='x', key=f(y))",
            "vault:secret/data/billing#password",
            "secret/data/app#api_key",
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
        ] {
            assert!(is_reference(v), "{v}");
        }
        for v in [
            "Zk3mQ8pL2xN7vR4tW9yB",
            "hunter2!x",
            "secret/Zk3mQ8pL2xN7vR4tW9yB",
            // Django's key alphabet holds brackets: a call never closed,
            // or closed and followed by more text, is no call.
            "g(jj^vttfbf#@u^j88%oa&mz1innpy#^$4^5qzi%_r$s^q^d&%",
            "k(x)9fQ2mZ7w#vR4tW9yB&%",
        ] {
            assert!(!is_reference(v), "{v}");
        }
        // Names in a language's own syntax (generator-13: Rails, PHP,
        // Phoenix), and a scheme before a reference.
        for v in [
            ":auth_token",
            "{:system",
            "{:system}",
            "Rails.application.credentials.devise_jwt_secret_key!",
            "current_user.admin?",
            "static::$password",
            "self::API_KEY",
            "crate::config::TOKEN",
            "Bearer $GITHUB_TOKEN",
            "token ${{ secrets.PAT }}",
        ] {
            assert!(is_reference(v), "{v}");
        }
        for v in [
            ":Zk3mQ8pL2xN7vR4tW9yB",
            "{:Zk3mQ8pL2xN7vR4tW9yB",
            "Zk3mQ8pL2xN7vR4!",
            "hunter2::x!y",
            "Bearer Zk3mQ8pL2xN7vR4tW9yB",
        ] {
            assert!(!is_reference(v), "{v}");
        }
        assert!(is_plain_url("postgres://db.internal:5432/billing"));
        assert!(!is_plain_url("postgres://app:Zq8v2Lm4@db/billing"));
        assert!(is_word_path("/run/secrets/db_password"));
        assert!(!is_word_path("wJalrXUtnFEMI/K7MDENG/bPxRfiCY"));
        // Abbreviated store-path segments beside words; alone, or beside
        // random text, they make no path.
        assert!(is_word_path("ci/github-token"));
        assert!(is_word_path("db/master/credentials"));
        assert!(!is_word_path("ci/qa"));
        assert!(!is_word_path("ci/Zq8Lw3Xv9Tr2Kp5Nm7"));
        assert!(!is_word_path("ab/K7MDENG/bPxRfiCY"));
    }
}
