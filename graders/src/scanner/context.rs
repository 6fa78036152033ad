//! Whether a random token is *named* a secret by what surrounds it.
//!
//! The random-token rule judges a token by its alphabet and entropy alone,
//! and random text is everywhere in code that holds no secret: hashes,
//! ids, signatures, nonces, curve constants, CDN paths, CI cache keys.
//! Each held-out round of issue 18 brought families of them nobody had
//! written a skip for, and the rule flagged most of them: a list of
//! public contexts does not converge. So a scan reports a random token
//! only when something names it a secret — a secret word in the key it
//! is assigned to ([`super::naming`]: `api_key = …`, `Authorization:
//! Bearer …`, `- name: DB_PASSWORD` then `value: …`; not `cache key`,
//! `key id`, nor a key that names another value) or in the file's name
//! (`master.key`,
//! `.vault-token`) — as gitleaks' generic rule does — or the token, whole,
//! is in an issuer's exact format ([`ISSUER_FORMATS`]: what a bare token
//! of a known issuer looks like, where no name is needed). Redaction
//! keeps every random token (`ScanConfig::bare_random_tokens`):
//! over-redaction is its accepted failure.

/// Fragments of names that call a value a secret (`pass` covers
/// password/passwd/passphrase, `auth` Authorization/oauth, `cred`
/// credentials). `key` is not one of them alone: see [`KEY_QUALIFIERS`].
const SECRET_WORDS: &[&str] = &[
    "pass", "pwd", "secret", "token", "auth", "cred", "bearer", "session", "cookie", "private",
    "signing",
];

/// `key` names more things that are not credentials than that are: cache
/// keys (`key: node-cache-Linux-…`), database keys (`primaryKey`,
/// `foreignKey`), keyboard keys (`key_down_event`), map and i18n keys, and
/// client keys public by design (Pusher's `key:`, Algolia's search key,
/// reCAPTCHA's `sitekey`). A name holding `key` calls its value a secret
/// only with one of these qualifiers in the same name (`api_key`,
/// `accessKey`, `AccountKey`, `X-API-Key`, `hmac_key`) or another of
/// [`SECRET_WORDS`] (`secret_key`, `private_key`, `auth_key`); a file whose
/// name ends `.key` is key material.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "fernet",
    "access",
    "master",
    "encrypt",
    "crypt",
    "cipher",
    "hmac",
    "aes",
    "rsa",
    "jwt",
    "license",
    "licence",
    "consumer",
    "subscription",
    "account",
    "storage",
    "shared",
    "deploy",
    "ssh",
    "gpg",
    "pgp",
    "service",
    "admin",
    "root",
    "webhook",
    "sign",
    "enc_",
    "enc-",
    "dev_",
    "prod",
    "live",
    "write",
    "server",
    "sk_",
    "sk-",
];

/// Whole-token formats of issuers whose tokens are met bare, each exact
/// (length, alphabet, fixed parts): a near miss of a format is a fixture
/// or a typo, not that issuer's credential (detect-secrets labels them so).
const ISSUER_FORMATS: &[&str] = &[
    // Discord bot token: base64 user id, timestamp, HMAC.
    r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
    // Telegram bot token.
    r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
    // Mailchimp API key with its datacenter.
    r"[0-9a-f]{32}-us[0-9]{1,2}",
    // PyPI and TestPyPI macaroons.
    r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{70,}",
    // EasyPost production and test keys.
    r"EZ[AT]K[A-Za-z0-9]{54}",
    // Notion integration token.
    r"ntn_[0-9]{11}[A-Za-z0-9]{35}",
    // Sourcegraph access token.
    r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}",
    // HashiCorp Vault service, batch and recovery tokens.
    r"hv[sbr]\.[A-Za-z0-9_-]{90,}",
    // OpenShift OAuth access token.
    r"sha256~[A-Za-z0-9_-]{43}",
    // Facebook/Meta access token.
    r"EAA[MC][A-Za-z0-9]{100,}",
    // Stripe secret and restricted keys of every mode.
    r"[sr]k_(?:live|prod|test)_[A-Za-z0-9]{16,}",
    // 42 intra client secret.
    r"s-s4t2(?:ud|af)-[a-f0-9]{64}",
    // Cloudflare Origin CA key.
    r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
    // Adobe client secret.
    r"p8e-[A-Za-z0-9]{32}",
    // Azure AD (Entra ID) client secret.
    r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
    // Facebook app access token: app id, `|`, app secret.
    r"[0-9]{13,17}\|[A-Za-z0-9_-]{27}",
    // Alibaba Cloud AccessKey ID.
    r"LTAI[A-Za-z0-9]{20}",
    // Grafana Cloud API token (base64 JSON) and service-account token.
    r"glc_[A-Za-z0-9+/]{32,400}={0,2}",
    r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
    // Heroku API key, second format.
    r"HRKU-AA[0-9a-zA-Z_-]{58}",
    // Slack webhook and workflow trigger URLs.
    r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/]{24,}",
];

/// [`ISSUER_FORMATS`], each anchored to the whole token.
static ISSUERS: std::sync::LazyLock<regex::RegexSet> = std::sync::LazyLock::new(|| {
    regex::RegexSet::new(ISSUER_FORMATS.iter().map(|f| format!("^(?:{f})$")))
        .expect("issuer formats")
});

/// Bytes looked back from the token on its line, at most, for an
/// environment-variable name ([`env_key_before`]).
const LOOKBACK: usize = 256;

/// Whether the random token at `start..end` of `text` is named a secret:
/// by a secret word before it ([`names_a_secret`]) or by its own format
/// ([`in_issuer_format`]). `lower` is `text` in ASCII lowercase.
pub(super) fn named(text: &str, lower: &str, start: usize, end: usize, path: &str) -> bool {
    names_a_secret(lower, start, path)
        || env_key_before(text, start)
        || in_issuer_format(text, start, end)
        || key_material(text, lower, start, end)
        || writing_search_client_key(lower, start)
}

/// A search client built with an application id and a key literal
/// (`algoliasearch('APPID', '<key>')`), looked for in the token's line
/// (lowercase) before it.
static SEARCH_CLIENT_KEY_ARG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"\balgoliasearch\s*\(\s*['"`][a-z0-9]{6,20}['"`]\s*,\s*['"`]$"#)
        .expect("search client key regex")
});

/// Index operations only a key with write rights may call (Algolia's
/// `addObject`/`deleteObject`/`editSettings` ACLs: admin and write keys).
const INDEX_WRITES: &[&str] = &[
    "saveobject",
    "replaceallobjects",
    "partialupdateobject",
    "deleteobject",
    "deleteby(",
    "clearobjects",
    "setsettings",
    "savesynonym",
    "saverule",
    "replaceallsynonyms",
    "replaceallrules",
];

/// Whether the token at `start` is the key argument of a search client
/// (`algoliasearch(appId, '<key>')`) in a file that writes to the index
/// with it (issue 18, generator-11 `algolia-admin-key-indexer`). The
/// key's format says nothing of its rights: a search-only key, public by
/// design and shipped to every browser (`algoliasearch/lite` in a
/// component), looks exactly like the admin key. The file's own calls
/// tell them apart: `saveObjects`, `replaceAllObjects`, `setSettings`
/// need a key with write rights, which is a secret; a file that only
/// searches is judged as before (unnamed: not reported).
fn writing_search_client_key(lower: &str, start: usize) -> bool {
    let line = lower[..start].rfind('\n').map_or(0, |p| p + 1);
    SEARCH_CLIENT_KEY_ARG.is_match(&lower[line..start])
        && INDEX_WRITES.iter().any(|w| lower.contains(w))
}

/// The span `start..end` of `b` widened over letters, digits and `extra`
/// on both sides: the whole token a detector saw a part of.
fn widen(b: &[u8], start: usize, end: usize, extra: &[u8]) -> (usize, usize) {
    let tok = |c: u8| c.is_ascii_alphanumeric() || extra.contains(&c);
    let mut a = start;
    while a > 0 && tok(b[a - 1]) {
        a -= 1;
    }
    let mut z = end;
    while z < b.len() && tok(b[z]) {
        z += 1;
    }
    (a, z)
}

/// Names that call a value a key without saying what kind: alone they
/// name cache, map and database keys too ([`KEY_QUALIFIERS`]), and
/// `primary`/`secondary` are read as a database's keys ([`super::naming`]).
const BARE_KEY_NAMES: &[&str] = &["key", "primarykey", "secondarykey"];

/// Shortest base64 text of [`MIN_KEY_BYTES`] bytes.
const MIN_KEY_B64: usize = 43;
/// A symmetric key's shortest length in bytes (AES-256, HMAC-SHA256,
/// Fernet, Azure's 64-byte account keys).
const MIN_KEY_BYTES: usize = 32;

/// Whether the token at `start..end` is key material under a bare key
/// name ([`BARE_KEY_NAMES`]: `key: …`, Azure's `"primaryKey": "…"`): the
/// whole value is base64 of at least [`MIN_KEY_BYTES`] bytes. A database,
/// cache or map key is a word, a number, an id or a path, never 32 random
/// bytes in base64; public-key encodings (DER's `MI…`/`MF…`, SSH's
/// `AAAA…`) are left out, and a name that declares its value public does
/// not count.
fn key_material(text: &str, lower: &str, start: usize, end: usize) -> bool {
    use base64::Engine as _;
    let line = lower[..start].rfind('\n').map_or(0, |p| p + 1);
    let p = &lower[line..start];
    let k = super::naming::nearest_key_start(p);
    let name: String = p[k..]
        .split(['=', ':'])
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    if !BARE_KEY_NAMES.contains(&name.as_str()) {
        return false;
    }
    let b = text.as_bytes();
    let (a, mut z) = widen(b, start, end, b"+/-_");
    while z < b.len() && b[z] == b'=' {
        z += 1;
    }
    // The value ends there: a quote, a separator or the line's end.
    if b.get(z)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.')
    {
        return false;
    }
    let body = text[a..z].trim_end_matches('=');
    if z - a - body.len() > 2 {
        return false;
    }
    if body.len() < MIN_KEY_B64 || ["MI", "MF", "AAAA"].iter().any(|p| body.starts_with(p)) {
        return false;
    }
    // Random bytes in base64 mix both cases and digits; a hex digest or
    // a slug with one (`pip-cf0fb358…`, a CI cache key) does not.
    let count = |f: fn(&u8) -> bool| body.bytes().filter(f).count();
    if count(u8::is_ascii_uppercase) < 4
        || count(u8::is_ascii_lowercase) < 4
        || count(u8::is_ascii_digit) < 2
    {
        return false;
    }
    let std = base64::engine::general_purpose::STANDARD_NO_PAD;
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    std.decode(body)
        .or_else(|_| url.decode(body))
        .is_ok_and(|d| d.len() >= MIN_KEY_BYTES)
}

/// Whether an environment-variable name ending in `_KEY` (`MAILGUN_KEY`,
/// `APP_KEY`, `STRIPE_WEBHOOK_KEY`) is on the value's line before it. By
/// convention such a variable holds a credential, unlike a lowercase or
/// camelCase `key` (cache, map, database and keyboard keys); a name that
/// declares its value public (`NEXT_PUBLIC_…_KEY`, `PUSHER_APP_KEY` is
/// not one) does not count ([`super::words::names_public`]).
fn env_key_before(text: &str, start: usize) -> bool {
    let line = text[..start].rfind('\n').map_or(0, |p| p + 1);
    let mut from = line.max(start.saturating_sub(LOOKBACK));
    while !text.is_char_boundary(from) {
        from += 1;
    }
    // Only the nearest key names the token (`APP_KEY=… trace=<id>`).
    let from = from + super::naming::nearest_key_start(&text[from..start]);
    text[from..start]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|name| {
            name.len() > 4
                && name.ends_with("_KEY")
                && name
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
                && !super::words::names_public(&name.to_ascii_lowercase())
                && !names_another_key(name)
        })
}

/// Whether an upper-case `…_KEY` name is a compound whose head is no
/// secret ([`super::naming::blank_compounds`]: `CI_CACHE_KEY`,
/// `SORT_KEY`, `PRIMARY_KEY`, `IDEMPOTENCY_KEY`): a cache key or a
/// lookup key holds a content hash or an id, not a credential (issue 18,
/// generator-8 `circleci-context-references`).
fn names_another_key(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    super::naming::blank_compounds(&lower) != lower
}

/// Whether the whole token around `start..end` (the random rule judges
/// parts of tokens: a Discord token's three, a URL's path segments) is in
/// an issuer's format. The token extends over letters, digits and
/// `_ - . ~ : | /`, and loses a trailing `.`, `:` or `/`.
fn in_issuer_format(text: &str, start: usize, end: usize) -> bool {
    let (a, z) = widen(text.as_bytes(), start, end, b"_-.~:|/");
    let whole = text[a..z].trim_end_matches(['.', ':', '/']);
    ISSUERS.is_match(whole)
}

/// Whether the key naming the token at `start` ([`super::naming`]: the
/// nearest key on its line, or an open assignment on the line above), or
/// the file's name, holds a secret word. `lower` is the scanned text in ASCII
/// lowercase.
fn names_a_secret(lower: &str, start: usize, path: &str) -> bool {
    let line = lower[..start].rfind('\n').map_or(0, |p| p + 1);
    // The nearest key before the token, or an open assignment above it.
    let mut before = super::words::without_derived_words(&without_public_names(
        &super::naming::phrase(lower, line, start),
    ));
    if loads_browser_analytics(lower) {
        before = without_write_keys(&before);
    }
    let before = before.as_str();
    // Only a credential store's name names its values ([`super::store_name`]).
    let name = if super::store_name::may_name_contents(path) {
        path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase()
    } else {
        String::new()
    };
    SECRET_WORDS
        .iter()
        .any(|w| before.contains(w) || name.contains(w))
        || names_pw(before)
        || qualified_key(before)
        || name.ends_with(".key")
        || super::store_name::is_credential_file(path)
        || qualified_key(&name)
        || bare_key_of_a_keyed_parent(lower, line, start)
        || login_argument(&lower[line..start])
}

/// Whether `phrase` holds `pw` as a whole word of a name (`_PW`, `DB_PW`,
/// `smtp.pw`): the usual abbreviation of a password, which
/// [`SECRET_WORDS`] cannot hold as a fragment (`pw` is inside `pwa`,
/// `npwp`). Issue 18, generator-14 `platform-app-signing-key`: `_PW =
/// bytes.fromhex("…").decode()`, a password kept hex-encoded.
fn names_pw(phrase: &str) -> bool {
    phrase
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w == "pw")
}

/// Words of a command line looked back over for its `login` subcommand.
const MAX_LOGIN_WORDS: usize = 6;

/// Whether the token is the argument of a command line's `login`
/// subcommand (`cargo login <token>`, `cargo login --registry x <token>`,
/// `docker login -u ci -p <token>`, `hf auth login --token <token>`):
/// `prefix` is the token's line up to it. `login` is among the few words
/// before the token, and every word after it is an option or an option's
/// value, so prose (`login page build …`) is not read as a command.
fn login_argument(prefix: &str) -> bool {
    if !prefix.ends_with([' ', '\t', '=']) {
        return false;
    }
    let words: Vec<&str> = prefix
        .split([' ', '\t', '='])
        .filter(|w| !w.is_empty())
        .collect();
    let recent = &words[words.len().saturating_sub(MAX_LOGIN_WORDS)..];
    let Some(at) = recent.iter().rposition(|&w| w == "login") else {
        return false;
    };
    let mut after_option = false;
    recent[at + 1..].iter().all(|w| {
        let ok = w.starts_with('-') || after_option;
        after_option = w.starts_with('-') && !after_option;
        ok
    })
}

/// Qualifiers that call a bare `key` a secret from its parent object's
/// name (`"Jwt": { … "Key": "…" }`, `hmac:\n  key: …`): the strongest of
/// [`KEY_QUALIFIERS`], words that name a credential's purpose.
const PARENT_QUALIFIERS: &[&str] = &[
    "api",
    "jwt",
    "hmac",
    "encrypt",
    "crypt",
    "cipher",
    "aes",
    "license",
    "licence",
    "consumer",
    "subscription",
    "ssh",
    "gpg",
    "pgp",
    "webhook",
    "master",
    "signing",
    "access",
];

/// Lines looked up for a parent object's name, at most.
const MAX_PARENT_LINES: usize = 16;

/// Whether the value at `start` (its line starts at `line`) is named by a
/// bare `key` (`key:`, `"Key":`, `key =`) inside an object whose name
/// holds one of [`PARENT_QUALIFIERS`]: the nearest line above with less
/// indentation (YAML, JSON, TOML-like nesting).
fn bare_key_of_a_keyed_parent(lower: &str, line: usize, start: usize) -> bool {
    let head = lower[line..start].trim_start();
    let name = head
        .trim_start_matches(['"', '\''])
        .split(['"', '\'', ':', '=', ' '])
        .next()
        .unwrap_or("");
    if name != "key" {
        return false;
    }
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(&lower[line..start]);
    lower[..line]
        .lines()
        .rev()
        .take(MAX_PARENT_LINES)
        .find(|l| !l.trim().is_empty() && indent(l) < own)
        .is_some_and(|p| PARENT_QUALIFIERS.iter().any(|q| p.contains(q)))
}

/// Browser analytics SDKs whose `writeKey` is an ingestion key made to be
/// shipped to every visitor's browser (Segment's analytics.js and
/// `AnalyticsBrowser`, RudderStack's JavaScript SDK): it can only send
/// events, and the vendors document it as public.
const BROWSER_ANALYTICS: &[&str] = &[
    "analyticsbrowser.load(",
    "@segment/analytics-next",
    "analytics.load(",
    "rudderanalytics.load(",
    "@rudderstack/analytics-js",
];

/// Whether the file (lowercase) loads a browser analytics SDK
/// ([`BROWSER_ANALYTICS`]).
fn loads_browser_analytics(lower: &str) -> bool {
    BROWSER_ANALYTICS.iter().any(|w| lower.contains(w))
}

/// `s` with the analytics SDKs' write-key names blanked (issue 18,
/// generator-11 `segment-browser-write-key`): in a file that loads a
/// browser analytics SDK, `writeKey` names its public ingestion key, not
/// a key with write rights ([`KEY_QUALIFIERS`]' `write`).
fn without_write_keys(s: &str) -> String {
    let mut out = s.to_string();
    for name in ["writekey", "write_key", "write-key"] {
        out = out.replace(name, &" ".repeat(name.len()));
    }
    out
}

/// `s` with every name that declares its value public blanked
/// ([`super::words::names_public`]: `publicToken`, `csrf-token`,
/// `authenticity_token`, `NEXT_PUBLIC_API_KEY`): such a name calls
/// nothing a secret.
fn without_public_names(s: &str) -> String {
    super::words::blank_runs(
        s,
        |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'),
        super::words::names_public,
    )
}

/// Whether a name in `s` (lowercase) holds `key` with a credential
/// qualifier ([`KEY_QUALIFIERS`]) in the same name. A name runs over
/// letters, digits, `_`, `-` and `.`.
fn qualified_key(s: &str) -> bool {
    let b = s.as_bytes();
    let part = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    s.match_indices("key").any(|(i, _)| {
        let mut a = i;
        while a > 0 && part(b[a - 1]) {
            a -= 1;
        }
        let mut z = i + 3;
        while z < b.len() && part(b[z]) {
            z += 1;
        }
        let name = &s[a..z];
        KEY_QUALIFIERS.iter().any(|q| name.contains(q))
    })
}

#[cfg(test)]
mod tests {
    use super::{in_issuer_format, key_material, names_a_secret, writing_search_client_key};

    /// Issue 18, generator-11: a browser analytics SDK's `writeKey` is its
    /// public ingestion key; elsewhere a write key is still a secret.
    #[test]
    fn browser_analytics_write_keys() {
        let named = |text: &str, tok: &str| {
            names_a_secret(
                &text.to_ascii_lowercase(),
                text.find(tok).unwrap(),
                "src/a.ts",
            )
        };
        let tok = "FGW7waptkFxqggyMKCL08ysUfL4lP6lq";
        let browser = format!(
            "import {{ AnalyticsBrowser }} from '@segment/analytics-next'\nexport const analytics = AnalyticsBrowser.load({{ writeKey: '{tok}' }})\n"
        );
        assert!(!named(&browser, tok));
        let snippet = format!("analytics.load('x');\nconst cfg = {{ writeKey: '{tok}' }}\n");
        assert!(!named(&snippet, tok));
        // No browser SDK: a write key (Algolia's, a storage write key) is
        // a secret; and a browser SDK file's other secrets still are.
        assert!(named(
            &format!("const cfg = {{ writeKey: '{tok}' }}\n"),
            tok
        ));
        assert!(named(
            &format!("analytics.load('x')\nconst cfg = {{ apiSecret: '{tok}' }}\n"),
            tok
        ));
    }

    /// Issue 18, generator-11: a search client's key literal is a secret
    /// where the file writes to the index with it (admin or write key),
    /// not where it only searches (a search-only key, public by design).
    #[test]
    fn search_client_keys_by_the_files_use() {
        let judge = |text: &str| {
            let l = text.to_ascii_lowercase();
            writing_search_client_key(&l, l.find("77585d18").unwrap())
        };
        let client =
            "const client = algoliasearch('SX08RVBPMM', '77585d18cd8d87d4e336c9115036a6b2')\n";
        let index = "const index = client.initIndex('posts')\n";
        assert!(judge(&format!(
            "{client}{index}await index.replaceAllObjects(posts)\n"
        )));
        assert!(judge(&format!("{client}{index}index.saveObjects(rows)\n")));
        // Search only, or the key not the client's argument.
        assert!(!judge(&format!(
            "{client}<InstantSearch searchClient={{client}} />\n"
        )));
        assert!(!judge(
            "const id = lookup('SX08RVBPMM', '77585d18cd8d87d4e336c9115036a6b2')\nindex.saveObjects(rows)\n"
        ));
    }

    /// Issue 18, generator-10: a `login` subcommand's argument is a named
    /// secret; a token after `login` in prose or another subcommand is not.
    #[test]
    fn login_arguments() {
        let named = |text: &str, tok: &str| {
            names_a_secret(&text.to_ascii_lowercase(), text.find(tok).unwrap(), "x.txt")
        };
        let tok = "cioF8SFZKdQ7ljHtNiLTOkTnl3k0buSaTJa";
        for text in [
            format!("cargo login {tok}\n"),
            format!("cargo login --registry acme {tok}\n"),
            format!("docker login -u ci -p {tok} registry.example.com\n"),
        ] {
            assert!(named(&text, tok), "{text}");
        }
        for text in [
            format!("cargo publish {tok}\n"),
            format!("login page build {tok}\n"),
            format!("docker run -p 8080 {tok}\n"),
        ] {
            assert!(!named(&text, tok), "{text}");
        }
    }

    /// 32 or more random bytes in base64 under a bare key name are key
    /// material; ids, words, hashes under other names and public-key
    /// encodings are not.
    #[test]
    fn bare_keys_holding_key_material() {
        const AZ: &str = "q3Zr8Kx2mVbN4tYwP9sLd6GhJ1aEcF7uR5oIyTnMqWz0XvBkD8lSfH2gA3jC4eUp6rN9tQ1wY5zL7xK0mV2bS8dF4g==";
        const FERNET: &str = "Jc3Qk0vX9pL2mZ8rT4yB6nH1sD7fG5wE3aK9qU0iO2c=";
        let at = |text: &str, tok: &str| {
            let s = text.find(tok).unwrap();
            // The random-token rule's span, which takes the padding too.
            key_material(text, &text.to_ascii_lowercase(), s, s + tok.len())
        };
        for text in [
            format!("    \"primaryKey\": \"{AZ}\","),
            format!("  secondaryKey: {AZ}"),
            format!("key: \"{FERNET}\""),
            format!("    key = '{FERNET}'"),
        ] {
            let tok = if text.contains(AZ) { AZ } else { FERNET };
            assert!(at(&text, tok), "{text}");
        }
        for (text, tok) in [
            (format!("cache_key: \"{FERNET}\""), FERNET),
            (format!("primaryKey: \"user_id\" # {FERNET}x"), FERNET),
            (
                "key: \"AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vX9pL2mZ8rT4yB6nH1sD7fG5wE3aK9\""
                    .to_string(),
                "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vX9pL2mZ8rT4yB6nH1sD7fG5wE3aK9",
            ),
            (
                "key: \"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvX9pL2mZ8rT4yB6nH1s\""
                    .to_string(),
                "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvX9pL2mZ8rT4yB6nH1s",
            ),
            ("key: \"b7f3c9a1e5d2\"".to_string(), "b7f3c9a1e5d2"),
            (
                "    key: pip-cf0fb3584f96768de78b1315f41b671bcd4b5ca7".to_string(),
                "cf0fb3584f96768de78b1315f41b671bcd4b5ca7",
            ),
            (
                "key: \"Jc3Qk0vX9pL2mZ8rT4yB6nH1sD7\"".to_string(),
                "Jc3Qk0vX9pL2mZ8rT4yB6nH1sD7",
            ),
        ] {
            assert!(!at(&text, tok), "{text}");
        }
    }

    /// An environment-variable name ending in `_KEY` names a credential
    /// by convention; lowercase and camelCase keys do not.
    /// A `_KEY` variable whose head is a modifier (`CI_CACHE_KEY`) holds
    /// a content hash or lookup id: the name calls nothing a secret.
    #[test]
    fn compound_key_variables() {
        const T: &str = "9fK2mQ7xL4pR8sV1wZ3bT6yU0";
        assert!(super::names_another_key("CI_CACHE_KEY"));
        assert!(super::names_another_key("SORT_KEY"));
        assert!(!super::names_another_key("MAILGUN_KEY"));
        assert!(!super::names_another_key("STRIPE_WEBHOOK_KEY"));
        let cache = format!("    CI_CACHE_KEY: v3-deps-{T}\n");
        assert!(!super::env_key_before(&cache, cache.find(T).unwrap()));
        let app = format!("    APP_KEY: {T}\n");
        assert!(super::env_key_before(&app, app.find(T).unwrap()));
    }

    /// `pw` names a password as a whole word of a name, not inside one.
    #[test]
    fn pw_as_a_word_names_a_password() {
        assert!(super::names_pw("_pw = bytes.fromhex(\""));
        assert!(super::names_pw("smtp.pw: "));
        assert!(!super::names_pw("pwa_manifest = \""));
        assert!(!super::names_pw("npwp: "));
        use crate::scanner::rules::testutil::rules;
        // hex("Harbor$7741Lintel")
        let hex = "486172626f7224373734314c696e74656c";
        assert_eq!(
            rules(
                "etl/db.py",
                &format!("_PW = bytes.fromhex(\"{hex}\").decode()\n")
            ),
            [format!("random-token={hex}")]
        );
        assert!(
            rules(
                "etl/db.py",
                &format!("_PWA = bytes.fromhex(\"{hex}\").decode()\n")
            )
            .is_empty()
        );
    }

    #[test]
    fn env_key_names() {
        const T: &str = "9fK2mQ7xL4pR8sV1wZ3bT6yU0";
        for text in [
            format!("MAILGUN_KEY={T}"),
            format!("export APP_KEY=\"{T}\""),
            format!("  - STRIPE_WEBHOOK_KEY={T}"),
        ] {
            assert!(
                super::env_key_before(&text, text.find(T).unwrap()),
                "{text}"
            );
        }
        for text in [
            format!("mailgun_key={T}"),
            format!("cacheKey: {T}"),
            format!("NEXT_PUBLIC_MAPS_KEY={T}"),
            format!("KEY_ID={T}"),
            format!("_KEY={T}"),
            format!("APP_KEY=[REDACTED] region=eu-west-1 trace={T}"),
        ] {
            assert!(
                !super::env_key_before(&text, text.find(T).unwrap()),
                "{text}"
            );
        }
    }

    /// A secret word inside a name that declares its value public names
    /// nothing; another name on the line still does.
    #[test]
    fn public_names_name_no_secret() {
        const T: &str = "9fK2mQ7xL4pR8sV1wZ3bT6yU0";
        for text in [
            format!("<input type=\"hidden\" name=\"authenticity_token\" value=\"{T}\">"),
            format!("<meta name=\"csrf-token\" content=\"{T}\">"),
            format!("NEXT_PUBLIC_MAPS_API_KEY={T}"),
            format!("publicToken = \"{T}\""),
        ] {
            assert!(!named(&text, T, "a.html"), "{text}");
        }
        let both = format!("publicToken: x, secretToken: \"{T}\"");
        assert!(named(&both, T, "a.js"));
    }

    /// `key` alone is no secret word: cache keys, database and keyboard
    /// keys, public client keys. A credential qualifier in the same name, a
    /// qualified parent object or a `.key` file name makes it one.
    #[test]
    fn key_needs_a_qualifier() {
        const T: &str = "9fK2mQ7xL4pR8sV1wZ3bT6yU0";
        for (text, path) in [
            (format!("API_KEY={T}"), "app.env"),
            (format!("x-api-key: {T}"), "req.http"),
            (format!("AccountKey={T};"), "app.config"),
            (format!("hmac_key = \"{T}\""), "a.py"),
            (format!("licenseKey: '{T}'"), "a.ts"),
            (
                format!("{{\n  \"Jwt\": {{\n    \"Issuer\": \"acme\",\n    \"Key\": \"{T}\""),
                "appsettings.json",
            ),
            (format!("webhook:\n  url: https://x\n  key: {T}"), "a.yml"),
            (format!("{T}\n"), "certs/server.key"),
        ] {
            assert!(named(&text, T, path), "{text:?} in {path}");
        }
        for (text, path) in [
            (format!("key: node-cache-Linux-x64-{T}"), "ci.log"),
            (format!("primaryKey={T}"), "a.properties"),
            (format!("foreignKey={T}"), "a.properties"),
            (format!("key_down_event={T}"), "a.properties"),
            (
                format!("new Echo({{\n  broadcaster: 'pusher',\n  key: '{T}',"),
                "echo.js",
            ),
            (format!("algolia:\n  search_key: {T}"), "a.yml"),
            (format!("i18n:\n  key: {T}"), "a.yml"),
            (format!("{T}\n"), "keyboard.js"),
            (format!("{T}\n"), "monkey.txt"),
        ] {
            assert!(!named(&text, T, path), "{text:?} in {path}");
        }
    }

    fn named(text: &str, token: &str, path: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        names_a_secret(
            &lower,
            lower.find(&token.to_ascii_lowercase()).unwrap(),
            path,
        )
    }

    #[test]
    fn names_on_the_line_the_line_above_or_the_file() {
        const T: &str = "9fK2mQ7xL4pR8sV1wZ3bT6yU0";
        for (text, path) in [
            (format!("API_KEY={T}"), "app.env"),
            (format!("curl -H 'Authorization: Bearer {T}'"), "run.sh"),
            (format!("- name: DB_PASSWORD\n  value: {T}"), "deploy.yaml"),
            (
                format!("<add key=\"ClientSecret\" value=\"{T}\"/>"),
                "web.config",
            ),
            (format!("{T}\n"), "config/master.key"),
            (format!("{T}\n"), "ops/.vault-token"),
        ] {
            assert!(named(&text, T, path), "{text:?} in {path}");
        }
    }

    #[test]
    fn unnamed_tokens_and_names_out_of_reach() {
        const T: &str = "9fK2mQ7xL4pR8sV1wZ3bT6yU0";
        for (text, path) in [
            (format!("{T}\n"), "README.md"),
            (format!("checksum {T}"), "SHA256SUMS"),
            (format!("url(https://fonts.example/{T}.woff2)"), "fonts.css"),
            // Two lines above is out of reach.
            (format!("api_key: see below\n\nvalue: {T}"), "notes.txt"),
            // So is a name more than LOOKBACK bytes back on a long line.
            (format!("token {} {T}", "x".repeat(300)), "a.txt"),
        ] {
            assert!(!named(&text, T, path), "{text:?} in {path}");
        }
    }

    #[test]
    fn lookback_lands_on_a_char_boundary() {
        let text = format!("{}ключ {}", "é".repeat(200), "9fK2mQ7xL4pR8sV1wZ3bT6yU0");
        assert!(!named(&text, "9fK2mQ7xL4pR8sV1wZ3bT6yU0", "a.txt"));
    }

    #[test]
    fn whole_tokens_in_an_issuer_format() {
        let yes = [
            "token MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs here",
            "7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM",
            "343ea45721923ed956e2b38c31db76aa-us30.",
            "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",
            "https://hooks.slack.com/services/v9yullchnf0f52om9486477u0g68od0j1n4nyhmoloxb5g",
            "LTAI5tQ9mXw2ZkR7pLcV3nHy",
            "HRKU-AAlQ1aVoHDujJ9QsDHdHlHO0hbzhoERRSO45ZQusSYHg_____w4_hLrAym_u",
            "glsa_9fK2mQ7xL4pR8sV1wZ3bT6yU0aB4cD6e_1a2b3c4d",
        ];
        let no = [
            // A near miss of each: one character too many or too few, a
            // prefix glued on, an upper-case hex key.
            "MZ1yGvKTj0rY0cV8i47CjAa.uHQPq.Xb1Mk2nEhe-4icrGOuegj57zMC",
            "bot110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw",
            "9276a43e2951aa46e2b1c33ED38357DB-us2",
            "ntn_456476151722wHvuYD2KAKIP6ZWv0vIiZs6VDsJOULcQ9",
            "9fK2mQ7xL4pR8sV1wZ3bT6yU0aB4cD6eF8",
        ];
        for t in yes {
            let (s, e) = random_part(t);
            assert!(in_issuer_format(t, s, e), "{t}");
        }
        for t in no {
            let (s, e) = random_part(t);
            assert!(!in_issuer_format(t, s, e), "{t}");
        }
    }

    /// The span of the longest run of letters and digits in `t`: a part
    /// the random rule could have judged.
    fn random_part(t: &str) -> (usize, usize) {
        let b = t.as_bytes();
        let (mut best, mut i) = ((0, 0), 0);
        while i < b.len() {
            let j = i + b[i..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            if j - i > best.1 - best.0 {
                best = (i, j);
            }
            i = j + 1;
        }
        best
    }

    #[test]
    fn a_scan_reports_named_tokens_and_redaction_every_token() {
        use crate::scanner::{ScanConfig, Scanner};
        const T: &str = "9fK2mQ7xL4pR8sV1wZ3bT6yU0aB";
        let rules = |cfg: ScanConfig, text: &str| -> Vec<String> {
            Scanner::new(cfg)
                .scan_bytes("src/app.py", text.as_bytes())
                .into_iter()
                .map(|f| format!("{}={}", f.rule, f.value))
                .collect()
        };
        let bare = format!("CACHE = \"{T}\"\n");
        assert!(rules(ScanConfig::default(), &bare).is_empty());
        assert_eq!(
            rules(ScanConfig::redaction(), &bare),
            [format!("random-token={T}")]
        );
        let named = format!("headers = {{\"Authorization\": \"Bearer {T}\"}}\n");
        assert!(!rules(ScanConfig::default(), &named).is_empty());
    }
}
