//! Values that look random but are not the secret they sit next to, in
//! formats whose structure says so (issue 18, third generator's classes):
//! - password hashes in Modular Crypt Format and Django's format
//!   (`$2b$12$…`, `$6$salt$…`, `$argon2id$v=19$…`, `pbkdf2_sha256$600000$…`):
//!   a hash is not the password (gitleaks and detect-secrets report none);
//! - ciphertext of tools built to be committed: SOPS `ENC[AES256_GCM,…]`
//!   values, ansible-vault payloads, SealedSecret `encryptedData`, Pulumi
//!   and Travis CI `secure:` values, Rails encrypted credentials
//!   (`data--iv--tag` on a line of its own) (the key that opens them is not
//!   in the repository);
//! - public identifiers with an issuer's structure: Stripe object ids
//!   (`cus_…`, `price_…`, `evt_…`; the secret `sk_`/`rk_` keys and `whsec_`
//!   are not object types), Twilio resource SIDs (two capitals and 32
//!   lowercase hex), Mapbox public tokens (`pk.` + a JWT-like body),
//!   Ethereum addresses (`0x` + 40 hex: 20 bytes, no key is that long) and
//!   Bitcoin addresses whose bech32 or base58check checksum holds.
//!
//! Round 4 of the third generator added, each by its format's structure:
//! - ciphertext of more tools built to be committed: ejson `EJ[1:…]`,
//!   dotenvx `encrypted:…`, dotenv-vault `DOTENV_VAULT_<ENV>` lines, AWS
//!   KMS ciphertext blobs (their fixed `01 0x 0x 00 78` header);
//! - published identities: minisign public keys (`RW` + base64 of 42 bytes
//!   opening `Ed`; a minisign *secret* key is 158 bytes), nostr `npub1…`
//!   whose bech32 checksum holds (`nsec1` is not public and stays judged),
//!   Tor v3 `.onion` names, the public key of a Sentry DSN (`https://<32
//!   hex>@…sentry.io/<project>`, documented public; a legacy DSN with a
//!   `:secret@` does not match);
//! - client keys their vendors document as public (made to run in a
//!   browser or app): Adyen client keys (`live_`/`test_` + 32 capitals or
//!   digits; the API key is a different, longer format) and Statsig client
//!   SDK keys (`client-…`; server keys are `secret-…`), and (generator-6)
//!   Datadog client tokens (`pub` + 32 hex, for browser and mobile RUM);
//! - Breakpad symbol-file `MODULE` lines (a debug id: 33 hex);
//! - a value its author declares public in a comment on its line or on
//!   the line above (`// Public API key: it is safe to commit it`, the
//!   comment Algolia DocSearch configs carry; `# publishable key`), unless
//!   its own key names a secret, a private key or a password;
//! - correlation ids: W3C `traceparent` values and ULIDs whose 48-bit time
//!   falls in 2015–2040 (a random 26-character Crockford token does so with
//!   probability ~0.2%).
//!
//! Generator-6 (issue 18) added JSON Web Tokens whose payload declares a
//! public role (`"role": "anon"`, Supabase's anon key, shipped in every
//! client); the `jwt` rule skips them too, and `service_role` keys stay
//! reported.
//!
//! Unlike [`super::public`] spans, these silence only the generic detectors
//! (`credential-assignment`, `random-token`): a provider-format key placed
//! inside one of these shapes is still reported by its provider rule.

use sha2::{Digest, Sha256};
use std::sync::LazyLock;

/// Detectors these spans silence.
pub(crate) const GENERIC_RULES: &[&str] = &["credential-assignment", "random-token"];

/// Password hashes: MCF (`$id$[params$]salt$hash`, bcrypt's `$2b$NN$` +
/// 53 chars, Apache's `$apr1$`, yescrypt's `$y$j9T$salt$hash`, mosquitto's
/// `$7$101$salt$<base64>`), Django/passlib (`algo$iter$salt$hash`), the
/// RFC 2307 scheme prefix of LDAP and htpasswd (`{SSHA}<base64>`,
/// `{SHA}`, `{PBKDF2-SHA256}`; not `{CLEARTEXT}`) and MySQL's native
/// password hash (`*` + 40 capital hex).
static PASSWORD_HASH: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(concat!(
        r"\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}",
        r"|\$(?:1|5|6|apr1|md5|sha1|y|gy|7)\$(?:[./A-Za-z0-9=,]{1,64}\$){1,2}[./A-Za-z0-9+]{16,}={0,2}",
        r"|(?i:\{(?:s?sha(?:1|224|256|384|512)?|s?md5|crypt|pbkdf2(?:-sha\d+)?|argon2(?:id|i|d)?|bcrypt|ssha3?-?\d*)\})[A-Za-z0-9+/.$]{16,}={0,2}",
        r"|\B\*[0-9A-F]{40}\b",
        r"|\$(?:argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)\$[^\s$]*\$(?:[^\s$]*\$)*[A-Za-z0-9+/.=_-]{16,}",
        r"|\b(?:pbkdf2_sha\d+|pbkdf2_sha1|bcrypt_sha256|argon2|scrypt|sha1|md5)\$\d*\$?[A-Za-z0-9./+=]{4,}\$[A-Za-z0-9./+=]{16,}",
    ))
    .expect("password hash regex")
});

/// SOPS-encrypted values.
static SOPS: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"ENC\[(?:AES256_GCM|AES256_CBC),data:[A-Za-z0-9+/=]*,iv:[A-Za-z0-9+/=]+,tag:[A-Za-z0-9+/=]+,type:[a-z]+\]")
        .expect("sops regex")
});

/// The data key of a SOPS file, encrypted to each master key, in the
/// file's `sops` metadata: `"enc": "<base64>"` (KMS, GCP KMS, Azure Key
/// Vault entries). Looked for only in a file holding SOPS values.
static SOPS_DATA_KEY: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r#"(?m)^[ \t]*(?:-[ \t]*)?["']?enc["']?[ \t]*:[ \t]*["']?([A-Za-z0-9+/_-]{40,}={0,2})"#,
    )
    .expect("sops data key regex")
});

/// The master keys a SOPS file's data key is encrypted to, named in its
/// `sops` metadata: an age recipient (`recipient: age1…`, a public key)
/// or a PGP fingerprint (`fp: …`). Public by design: anyone may encrypt
/// to them. Looked for only in a file holding SOPS values (issue 18,
/// generator-11 `sops-encrypted-secrets-yaml`).
static SOPS_MASTER_KEY_ID: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r#"(?m)^[ \t]*(?:-[ \t]*)?["']?(?:recipient|fp)["']?[ \t]*:[ \t]*["']?([A-Za-z0-9]{16,})"#,
    )
    .expect("sops master key id regex")
});

/// Pulumi stack config and Travis CI encrypted values: the value of a YAML
/// key named exactly `secure`.
static SECURE_VALUE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#"(?m)^[ \t]*(?:-[ \t]*)?secure:[ \t]*"?([A-Za-z0-9+/=:]{16,})"?[ \t]*$"#)
        .expect("secure value regex")
});

/// Rails `MessageEncryptor` output (`credentials.yml.enc`): base64 data,
/// IV and auth tag joined by `--`, alone on its line.
static RAILS_ENCRYPTED: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?m)^[A-Za-z0-9+/]{16,}={0,2}--[A-Za-z0-9+/]{16}={0,2}--[A-Za-z0-9+/]{22}={0,2}[ \t]*$",
    )
    .expect("rails encrypted regex")
});

/// Stripe object ids: a documented object-type prefix, `_`, 14+ alphanumerics.
static STRIPE_OBJECT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(concat!(
        r"\b(?:acct|ba|card|ch|cn|cs_live|cs_test|cus|dp|du|evt|file|ii|il|in|ipi|link|mbur|pi|pm|po|",
        r"price|prod|promo|py|re|seti|si|sli|src|sub|sub_sched|tok|tr|txn|trr|we)_[A-Za-z0-9]{14,34}\b"
    ))
    .expect("stripe object regex")
});

/// Twilio resource SIDs (`AC`, `MG`, `PN`, `SK`, … + 32 lowercase hex):
/// identifiers; the auth token is a separate 32-hex value with no prefix.
static TWILIO_SID: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\b[A-Z]{2}[0-9a-f]{32}\b").expect("twilio sid regex"));

/// Mapbox public tokens; secret ones start `sk.`.
static MAPBOX_PUBLIC: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\bpk\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{20,}").expect("mapbox regex")
});

/// Ethereum addresses; a private key is 32 bytes (64 hex), not 20.
static ETH_ADDRESS: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\b0x[0-9a-fA-F]{40}\b").expect("eth address regex"));

/// Bitcoin-style address candidates, confirmed by their checksum.
static BTC_CANDIDATE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"\b(?:(?:bc|tb|ltc)1[02-9ac-hj-np-z]{25,87}|[13mn2][1-9A-HJ-NP-Za-km-z]{25,34})\b",
    )
    .expect("btc address regex")
});

/// ejson values (`EJ[1:<public>:<nonce>:<box>]`).
static EJSON: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"EJ\[1:[A-Za-z0-9+/=]{40,}:[A-Za-z0-9+/=]{24,}:[A-Za-z0-9+/=]+\]")
        .expect("ejson regex")
});

/// dotenvx values: `encrypted:` and the base64 of an ECIES box.
static DOTENVX: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\bencrypted:[A-Za-z0-9+/]{40,}={0,2}").expect("dotenvx regex")
});

/// dotenv-vault lines: `DOTENV_VAULT_<ENV>="<base64 ciphertext>"`.
static DOTENV_VAULT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#"(?m)^DOTENV_VAULT_[A-Z0-9_]+=("?)[A-Za-z0-9+/]{40,}={0,2}("?)[ \t]*$"#)
        .expect("dotenv-vault regex")
});

/// AWS KMS ciphertext blob candidates (`AQICAH…`, `AQECAH…`), confirmed by
/// [`kms_blob_ok`].
static KMS_BLOB: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\bAQ[EI]CAH[A-Za-z0-9+/]{90,}={0,2}").expect("kms regex"));

/// minisign public-key candidates, confirmed by [`minisign_public_ok`].
static MINISIGN: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\bRW[A-Za-z0-9+/]{54}\b").expect("minisign regex"));

/// nostr public keys (bech32, confirmed by [`bech32_ok`]).
static NPUB: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\bnpub1[02-9ac-hj-np-z]{58}\b").expect("npub regex"));

/// Tor v3 onion service names: 56 base32 characters and `.onion`.
static ONION: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\b[a-z2-7]{56}\.onion\b").expect("onion regex"));

/// The public key of a Sentry DSN: 32 hex right before `@` and a Sentry
/// ingest host with a numeric project id.
static SENTRY_DSN: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"//[0-9a-f]{32}@[a-z0-9.-]*\bsentry\.io/\d+").expect("sentry dsn regex")
});

/// A comment declaring the value it annotates public (lowercased text).
static DECLARED_PUBLIC: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(concat!(
        r"\b(?:publishable|public(?: api| client| search(?:-only)?)? (?:key|token|dsn|id|identifier)",
        r"|safe to (?:commit|expose|share|embed|publish)|public by design|meant to be public)\b"
    ))
    .expect("declared public regex")
});

/// Where a line's comment starts: `//`, `#` or `<!--` at the start of the
/// line or after whitespace (not `https://` or a `#fragment`).
fn comment_start(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (0..b.len()).find(|&i| {
        let opens = b[i..].starts_with(b"//") || b[i] == b'#' || b[i..].starts_with(b"<!--");
        opens && (i == 0 || b[i - 1].is_ascii_whitespace())
    })
}

/// Lines whose value a comment declares public (see the module doc).
fn declared_public(text: &str, out: &mut Vec<(usize, usize)>) {
    let mut off = 0;
    let mut prev_declares = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end();
        let code_end = comment_start(body).unwrap_or(body.len());
        let declares = code_end < body.len()
            && DECLARED_PUBLIC.is_match(&body[code_end..].to_ascii_lowercase());
        let code = &body[..code_end];
        let key = code
            .split([':', '='])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let secret_named = ["secret", "private", "passw", "pwd"]
            .iter()
            .any(|w| key.contains(w));
        if !code.trim().is_empty() && (declares || prev_declares) && !secret_named {
            out.push((off, off + code.len()));
        }
        // A comment alone on its line annotates the next line.
        prev_declares = declares && code.trim().is_empty();
        off += line.len();
    }
}

/// A citation of a standard: `RFC 7636`, `rfc6749`, `draft-ietf-…`.
static STANDARD_CITED: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\brfc ?\d{3,5}\b|\bdraft-ietf-[a-z0-9-]+").expect("standard citation regex")
});

/// True for documentation or a test whose text cites a standard and calls
/// its values examples or vectors ("the examples from RFC 6749 and RFC
/// 7636", "Vectors from RFC 7515 Appendix A.1"): the OAuth codes, PKCE
/// verifiers, JWS keys and tokens printed in an RFC authorize nothing. The
/// caller then drops the generic detectors' and the JWT rule's findings
/// in the whole file; provider rules still fire. (Rounds 1–3 accepted
/// published *hex* vectors in tests; this is the same class for every
/// alphabet and for documentation.)
pub(crate) fn published_examples(path: &str, lower: &str) -> bool {
    let lp = path.to_ascii_lowercase();
    let name = lp.rsplit('/').next().unwrap_or(&lp);
    let doc = lp.starts_with("docs/")
        || lp.contains("/docs/")
        || [".md", ".rst", ".adoc", ".txt"]
            .iter()
            .any(|e| name.ends_with(e));
    // Test code by its path (`fixture::is_test_path`), or by Rust's test
    // module marker in the file itself.
    let test = lp.starts_with("test")
        || lp.contains("/test")
        || super::fixture::is_test_path(path)
        || lower.contains("#[cfg(test)]");
    let cited = || STANDARD_CITED.is_match(lower);
    ((doc || test) && ["example", "vector"].iter().any(|w| lower.contains(w)) && cited())
        || (test && TEST_CASE_LABEL.is_match(lower) && cited())
}

/// How a test labels a standard's numbered test case when it does not
/// say "vector" or "example": RFC 8032's `TEST 1`, RFC 4231's `Test Case
/// 2`, `section 7.1`, `Appendix A.2`, `§ 6.1` — the standard's own
/// headings (generator-6's Ed25519 test cites "RFC 8032 section 7.1,
/// TEST 1").
static TEST_CASE_LABEL: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"\btest(?: case)? #?\d+\b|\bsection \d+(?:\.\d+)*|\bappendix [a-z](?:\.\d+)*\b|§ ?\d",
    )
    .expect("test case label regex")
});

/// Adyen client keys, Statsig client SDK keys and Datadog client tokens
/// (`pub` + 32 hex, for browser and mobile RUM and logs: Datadog documents
/// them as safe to expose; its API and application keys are bare hex).
static CLIENT_KEY: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"\b(?:(?:live|test)_[A-Z0-9]{32}|client-[A-Za-z0-9]{32,64}|pub[0-9a-f]{32})\b",
    )
    .expect("client key regex")
});

/// A Breakpad symbol file's header: `MODULE <os> <arch> <debug id> <name>`.
static BREAKPAD_MODULE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?m)^MODULE [A-Za-z]+ [A-Za-z0-9_]+ [0-9A-F]{33} \S+[ \t]*$")
        .expect("breakpad regex")
});

/// W3C trace context: version, 32-hex trace id, 16-hex span id, flags.
static TRACEPARENT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\b00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}\b").expect("traceparent regex")
});

/// ULID candidates (Crockford base32, first character 0–7), confirmed by
/// [`ulid_time_ok`].
static ULID: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b").expect("ulid regex"));

/// JSON Web Tokens, confirmed public by their payload's role
/// ([`super::rules::declares_public_role`]: the Supabase anon key).
static JWT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]{8,})?")
        .expect("jwt regex")
});

/// Pushes spans of inert values in `text`.
pub(crate) fn find(text: &str, out: &mut Vec<(usize, usize)>) {
    let spans = |re: &regex::Regex, out: &mut Vec<(usize, usize)>| {
        out.extend(re.find_iter(text).map(|m| (m.start(), m.end())));
    };
    if text.contains('$') || text.contains('{') || text.contains('*') {
        spans(&PASSWORD_HASH, out);
    }
    if text.contains("ENC[") {
        spans(&SOPS, out);
        if SOPS.is_match(text) && (text.contains("\"sops\"") || text.contains("sops:")) {
            out.extend(
                SOPS_DATA_KEY
                    .captures_iter(text)
                    .chain(SOPS_MASTER_KEY_ID.captures_iter(text))
                    .filter_map(|c| c.get(1))
                    .map(|m| (m.start(), m.end())),
            );
        }
    }
    if text.contains("secure:") {
        out.extend(
            SECURE_VALUE
                .captures_iter(text)
                .filter_map(|c| c.get(1))
                .map(|m| (m.start(), m.end())),
        );
    }
    if text.contains("--") {
        spans(&RAILS_ENCRYPTED, out);
    }
    if text.contains('_') {
        spans(&STRIPE_OBJECT, out);
    }
    spans(&TWILIO_SID, out);
    if text.contains("pk.eyJ") {
        spans(&MAPBOX_PUBLIC, out);
    }
    if text.contains("0x") {
        spans(&ETH_ADDRESS, out);
    }
    out.extend(
        BTC_CANDIDATE
            .find_iter(text)
            .filter(|m| bech32_ok(m.as_str()) || base58check_ok(m.as_str()))
            .map(|m| (m.start(), m.end())),
    );
    if text.contains("$ANSIBLE_VAULT;") {
        ansible_vault(text, out);
    }
    if text.contains("SealedSecret") {
        sealed_secret(text, out);
    }
    if text.contains("EJ[1:") {
        spans(&EJSON, out);
    }
    if text.contains("encrypted:") {
        spans(&DOTENVX, out);
    }
    if text.contains("DOTENV_VAULT_") {
        spans(&DOTENV_VAULT, out);
    }
    let confirmed = |re: &regex::Regex, ok: fn(&str) -> bool, out: &mut Vec<(usize, usize)>| {
        out.extend(
            re.find_iter(text)
                .filter(|m| ok(m.as_str()))
                .map(|m| (m.start(), m.end())),
        );
    };
    if text.contains("AQ") {
        confirmed(&KMS_BLOB, kms_blob_ok, out);
    }
    if text.contains("RW") {
        confirmed(&MINISIGN, minisign_public_ok, out);
    }
    if text.contains("npub1") {
        confirmed(&NPUB, bech32_ok, out);
    }
    if text.contains(".onion") {
        spans(&ONION, out);
    }
    if text.contains("sentry.io") {
        spans(&SENTRY_DSN, out);
    }
    if text.contains("live_")
        || text.contains("test_")
        || text.contains("client-")
        || text.contains("pub")
    {
        spans(&CLIENT_KEY, out);
    }
    if text.contains("ublic") || text.contains("ublishable") || text.contains("safe to") {
        declared_public(text, out);
    }
    if text.contains("MODULE ") {
        spans(&BREAKPAD_MODULE, out);
    }
    if text.contains("00-") {
        spans(&TRACEPARENT, out);
    }
    confirmed(&ULID, ulid_time_ok, out);
    if text.contains("eyJ") {
        confirmed(&JWT, super::rules::declares_public_role, out);
    }
}

fn b64_std(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(s.trim_end_matches('='))
        .ok()
}

/// An AWS KMS `CiphertextBlob`: version 1, then the key-reference header
/// bytes KMS always writes (`01 0[12] 0[12] 00 78`).
fn kms_blob_ok(s: &str) -> bool {
    let head = &s[..s.len().min(8)];
    b64_std(head).is_some_and(|b| {
        b.len() >= 6
            && b[0] == 1
            && matches!(b[1], 1 | 2)
            && matches!(b[2], 1 | 2)
            && b[3] == 0
            && b[4] == 0x78
    })
}

/// A minisign public key: 42 bytes, signature algorithm `Ed`, 8-byte key
/// id, 32-byte Ed25519 public key.
fn minisign_public_ok(s: &str) -> bool {
    b64_std(s).is_some_and(|b| b.len() == 42 && b.starts_with(b"Ed"))
}

/// A ULID's first 10 characters are milliseconds since 1970: accept
/// 2015-01-01 to 2040-01-01, where generated ids are.
fn ulid_time_ok(s: &str) -> bool {
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    const FROM_MS: u64 = 1_420_070_400_000;
    const TO_MS: u64 = 2_208_988_800_000;
    let mut t: u64 = 0;
    for c in s.bytes().take(10) {
        let Some(v) = CROCKFORD.iter().position(|&x| x == c) else {
            return false;
        };
        t = t * 32 + v as u64;
    }
    (FROM_MS..TO_MS).contains(&t)
}

/// The hex lines after each `$ANSIBLE_VAULT;` header.
fn ansible_vault(text: &str, out: &mut Vec<(usize, usize)>) {
    let mut from = 0;
    while let Some(p) = text[from..].find("$ANSIBLE_VAULT;") {
        let head = from + p;
        let start = text[head..].find('\n').map_or(text.len(), |q| head + q + 1);
        let mut end = start;
        for line in text[start..].split_inclusive('\n') {
            let t = line.trim();
            if t.is_empty() || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
                break;
            }
            end += line.len();
        }
        out.push((head, end));
        from = end.max(head + 1);
    }
}

/// Lines indented under an `encryptedData:` key of a SealedSecret.
fn sealed_secret(text: &str, out: &mut Vec<(usize, usize)>) {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut off = 0;
    let mut block: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        match block {
            Some(ind) if !t.is_empty() && indent(line) > ind => out.push((off, off + line.len())),
            _ => block = None,
        }
        if t == "encryptedData:" {
            block = Some(indent(line));
        }
        off += line.len();
    }
}

/// Bech32/bech32m checksum (BIP 173/350) of a lowercase string.
fn bech32_ok(s: &str) -> bool {
    const CHARSET: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const GEN: [u32; 5] = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
    let Some(sep) = s.rfind('1') else {
        return false;
    };
    let (hrp, data) = (&s[..sep], &s[sep + 1..]);
    if hrp.is_empty() || data.len() < 6 {
        return false;
    }
    let mut vals = Vec::with_capacity(hrp.len() * 2 + 1 + data.len());
    vals.extend(hrp.bytes().map(|c| u32::from(c >> 5)));
    vals.push(0);
    vals.extend(hrp.bytes().map(|c| u32::from(c & 31)));
    for c in data.bytes() {
        match CHARSET.iter().position(|&x| x == c) {
            Some(v) => vals.push(v as u32),
            None => return false,
        }
    }
    let mut chk: u32 = 1;
    for v in vals {
        let top = chk >> 25;
        chk = ((chk & 0x1ff_ffff) << 5) ^ v;
        for (i, g) in GEN.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk == 1 || chk == 0x2bc8_30a3
}

/// Base58check: the decoded bytes end with the first four bytes of the
/// double SHA-256 of the rest (legacy Bitcoin/Litecoin addresses).
fn base58check_ok(s: &str) -> bool {
    const ALPHA: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut bytes: Vec<u8> = Vec::new();
    for c in s.bytes() {
        let Some(mut carry) = ALPHA.iter().position(|&x| x == c) else {
            return false;
        };
        for b in bytes.iter_mut().rev() {
            carry += usize::from(*b) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.insert(0, (carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = s.bytes().take_while(|&c| c == b'1').count();
    let mut full = vec![0u8; zeros];
    full.extend(bytes);
    if full.len() < 5 {
        return false;
    }
    let (body, check) = full.split_at(full.len() - 4);
    let d = Sha256::digest(Sha256::digest(body));
    &d[..4] == check
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(text: &str, value: &str) -> bool {
        let mut spans = Vec::new();
        find(text, &mut spans);
        let s = text.find(value).expect("value in text");
        spans.iter().any(|&(a, b)| a <= s && s + value.len() <= b)
    }

    #[test]
    fn password_hashes_are_inert_passwords_are_not() {
        let bcrypt = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";
        assert!(covered(&format!("\"password_hash\": \"{bcrypt}\""), bcrypt));
        let sha512 = "$6$uv39QkD/pSbeShWW$7fwUBFpmZsGSNnoYqQgaET4ajY0hKSu4K5R4zaCvlLmH";
        assert!(covered(&format!("root:{sha512}:19700:0"), sha512));
        let django = "pbkdf2_sha256$600000$MagrxwcKcnsz9JV3rIgyb0$kuh+k478YTPnAsPFYu1z3JlkDZYN=";
        assert!(covered(&format!("\"password\": \"{django}\""), django));
        let argon = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG";
        assert!(covered(argon, argon));
        // Issue 18, generator-10: yescrypt and mosquitto's PBKDF2 with
        // their parameter fields, RFC 2307 schemes (LDAP, htpasswd), MySQL
        // native password hashes.
        for (line, hash) in [
            (
                "hashedPassword = \"$y$j9T$vYhD4FBsFNk.D0MI3o9t1H$jLwx6jp7lru5AwfiVvN8TXQB7WdQv0Zr613OUlPEeT8\";",
                "$y$j9T$vYhD4FBsFNk.D0MI3o9t1H$jLwx6jp7lru5AwfiVvN8TXQB7WdQv0Zr613OUlPEeT8",
            ),
            (
                "ha:$7$101$YpdxKsxWiK7GXkMd$djGRnFvwTQhAWiAyHOPCDFMrIRx2oPg3X7Mu1FxOzCEzTC0MbHp4WA2c83c0ZD7ylyen4WUEGZWge1Z6Whpg+A==",
                "$7$101$YpdxKsxWiK7GXkMd$djGRnFvwTQhAWiAyHOPCDFMrIRx2oPg3X7Mu1FxOzCEzTC0MbHp4WA2c83c0ZD7ylyen4WUEGZWge1Z6Whpg+A==",
            ),
            (
                "legacy:{SHA}SYtt6N0hoy1QiZlMvjnYhhTwRJk=",
                "{SHA}SYtt6N0hoy1QiZlMvjnYhhTwRJk=",
            ),
            (
                "userPassword: {SSHA}/gkpqPCcQACixmGLaWTPrvVcB3MVCUIv",
                "{SSHA}/gkpqPCcQACixmGLaWTPrvVcB3MVCUIv",
            ),
            (
                "\"authentication_string\":\"*921EAB776693CF8368EBD4F750219E88EEBCA9D5\"",
                "*921EAB776693CF8368EBD4F750219E88EEBCA9D5",
            ),
        ] {
            assert!(covered(line, hash), "{line}");
        }
        // A cleartext scheme, a lowercase or short hex after `*`, a `*`
        // inside a word: not hashes.
        for (line, v) in [
            (
                "userPassword: {CLEARTEXT}Zq8v2Lm4Kp7RtX9wB3nY",
                "Zq8v2Lm4Kp7RtX9wB3nY",
            ),
            (
                "x = *921eab776693cf8368ebd4f750219e88eebca9d5",
                "921eab776693cf8368ebd4f750219e88eebca9d5",
            ),
            (
                "k=a*921EAB776693CF8368EBD4F750219E88EEBCA9D5",
                "921EAB776693CF8368EBD4F750219E88EEBCA9D5",
            ),
        ] {
            assert!(!covered(line, v), "{line}");
        }
        // A password with a dollar sign is not a hash.
        assert!(!covered(
            "password = \"Zk3$mQ8pL2xN$7vR4tW9yB\"",
            "Zk3$mQ8pL2xN$7vR4tW9yB"
        ));
    }

    /// Issue 18, generator-10: a SOPS file's encrypted data key in its
    /// `sops` metadata; the same field outside a SOPS file is judged.
    #[test]
    fn sops_data_keys() {
        let key = "cOLGuaWjv/csK+84cBzX054LwBXVPLvXSvCwoNOC0iZvzakK5xoFxvDzXG8dfg3JFBIRsNx5NQ";
        let sops = format!(
            "{{\n  \"password\": \"ENC[AES256_GCM,data:INps6by+EdXJ,iv:Ev7XGYA8j1PN7LyPl80k48N6emUB7wMf5iYkVE6xc2g=,tag:9JpzUiDKUm43heoPWgb4jw==,type:str]\",\n  \"sops\": {{\n    \"kms\": [{{\n        \"enc\": \"{key}\"\n    }}]\n  }}\n}}\n"
        );
        assert!(covered(&sops, key));
        assert!(!covered(
            &format!("{{\"sops\": {{\"enc\": \"{key}\"}}}}"),
            key
        ));
    }

    /// Issue 18, generator-11: the age recipients and PGP fingerprints a
    /// SOPS file names in its metadata are public; the same fields outside
    /// a SOPS file are judged.
    #[test]
    fn sops_master_key_ids() {
        let age = "age1y6kn2cf5uvqo6rrqftx6vbg83omw7lnkk2it6zm01wodd40at1jrynp89i";
        let fp = "85D77543B3D624B63CEA9E6DBC17301B491B3F21";
        let sops = format!(
            "api_key: ENC[AES256_GCM,data:RmKy6Cogz7Gi/fNAgVT1JXke2Us=,iv:06osj6egrJ5o17XRwwnKJOf+QE/SuJZtmgALZODAnHM=,tag:ml8h8Z3MAzIu0ziTm6XESg==,type:str]\nsops:\n    age:\n        - recipient: {age}\n    pgp:\n        - fp: {fp}\n"
        );
        assert!(covered(&sops, age));
        assert!(covered(&sops, fp));
        assert!(!covered(&format!("recipient: {age}\n"), age));
    }

    #[test]
    fn ciphertext_blocks() {
        let sops = "ENC[AES256_GCM,data:l9pOMnLDEcwq+a/f7KA1QkvF,iv:Yqfws1SQWhE/Sj+vEwdta9Nxcp9T3AjpWCbh5TQV88E=,tag:lJ/38gLtUiJj41r07fXQ6w==,type:str]";
        assert!(covered(&format!("password: {sops}\n"), sops));
        let hex = "105faa15e573ba3ab15ee96f3f59edc5f350b2ce856ec31af894831830824b19";
        let vault =
            format!("db: !vault |\n    $ANSIBLE_VAULT;1.1;AES256\n    {hex}\n    {hex}\nuser: x\n");
        assert!(covered(&vault, hex));
        assert!(!covered(&vault, "user: x"));
        let sealed = "kind: SealedSecret\nspec:\n  encryptedData:\n    password: AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq\n  template:\n    x: AgQq\n";
        assert!(covered(sealed, "AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq"));
        assert!(!covered(sealed, "x: AgQq"));
        let pulumi = "config:\n  app:dbPassword:\n    secure: AAABAvxsZh3sbTYcHSCVfIbOrhqNpFbkNChtL2d+oJ9Qz\n  app:apiKey: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\n";
        assert!(covered(
            pulumi,
            "AAABAvxsZh3sbTYcHSCVfIbOrhqNpFbkNChtL2d+oJ9Qz"
        ));
        assert!(!covered(pulumi, "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"));
        let travis =
            "env:\n  global:\n    - secure: \"rYtCCLoVFgYFWwAjpaqSipXFZayol+29ksCri68Bf6nC\"\n";
        assert!(covered(
            travis,
            "rYtCCLoVFgYFWwAjpaqSipXFZayol+29ksCri68Bf6nC"
        ));
        let rails = "GsbQlUh3HMVAWMfzUT4FaV8j0/l2TdMoegb4daJ4EMb8--Zk3mQ8pL2xN7vR4t--W9yB1cHq5sD8fJ2kM6nP0r==\n";
        assert!(covered(rails, "GsbQlUh3HMVAWMfzUT4FaV8j0"));
        // `--` inside a longer line (a command's flags) is not that format.
        let cli = "run --token GsbQlUh3HMVAWMfzUT4FaV8j0/l2TdMoegb4daJ4EMb8--Zk3mQ8pL2xN7vR4t--W9yB1cHq5sD8fJ2kM6nP0r==\n";
        assert!(!covered(cli, "GsbQlUh3HMVAWMfzUT4FaV8j0"));
        // An encryptedData key outside a SealedSecret is not trusted.
        let plain = "encryptedData:\n    password: Zk3mQ8pL2xN7vR4tW9yB\n";
        assert!(!covered(plain, "Zk3mQ8pL2xN7vR4tW9yB"));
    }

    #[test]
    fn round_four_ciphertext_formats() {
        let ejson = "EJ[1:K8tOYpTLuWzGYvxn8vWg5PXUFnXyMIzQrR9TufHL0XM=:Gy5BtKcp8pAeHMSCwVqFSuwn0ZKWbxAs:Q4dKhN3c1P2mX9]";
        assert!(covered(&format!("\"db_password\": \"{ejson}\""), ejson));
        let dx = "encrypted:BDqDBibm4wsYqMpCjTQ6BsDHmMadg9K3dAt+Z9HPMfLEIRVz50hmLXPXRuDBXaJi/LwWYEVUNiq0HISrslzQPaoyS8Lotg3gFWJTsNCdOWnqpjF2xNUX2RQiP05kAbEXM6MWVjDr";
        assert!(covered(&format!("DATABASE_URL=\"{dx}\"\n"), dx));
        let vault = "DOTENV_VAULT_PRODUCTION=\"s7NYXa809k/bVSPwIAmJhPJmEGTtU0hG58hOZy7I0ix6y5HP8LsHBp/Z8bLHvSO2oGp/aEx+HvpQ0Zm9\"\n";
        assert!(covered(vault, "s7NYXa809k"));
        let kms = "AQICAHhk1ec0H3Wcxt5AhXON8rDyB3OQOy81V5IluLp74v6cZeLDeT7IIOMgTQ2iUsLwir0ZujGMhpm41zMKwhbbH6rNvYu99vVtkVnePerUD7Q==";
        assert!(covered(&format!("payload = \"{kms}\""), kms));
        // The same names around plain values are not ciphertext.
        let plain =
            "DOTENV_VAULT_KEY=dotenv://:key_Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8@dotenv.org/vault\n";
        assert!(!covered(plain, "key_Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"));
        let not_kms = "AQIDBAZk1ec0H3Wcxt5AhXON8rDyB3OQOy81V5IluLp74v6cZeLDeT7IIOMgTQ2iUsLwir0ZujGMhpm41zMKwhbbH6rNvYu99vVtkVnePerUD7Q==";
        assert!(!covered(not_kms, not_kms));
    }

    #[test]
    fn round_four_public_identities_and_ids() {
        use base64::Engine as _;
        let mut mini = b"Ed".to_vec();
        mini.extend((0u8..40).map(|i| i.wrapping_mul(37).wrapping_add(11)));
        let mini = base64::engine::general_purpose::STANDARD.encode(&mini);
        assert!(covered(&format!("minisign -Vm f -P {mini}\n"), &mini));
        // A minisign secret key (longer, `EdSc…` header) is not covered.
        let mut sk = b"EdScB2".to_vec();
        sk.extend(std::iter::repeat_n(7u8, 152));
        let sk = base64::engine::general_purpose::STANDARD.encode(&sk);
        assert!(!covered(&sk, &sk));
        let dsn = "//7d4a94b24bbe2061abd380ec7804f223@o4506.ingest.us.sentry.io/4507";
        assert!(covered(&format!("dsn: 'https:{dsn}',"), dsn));
        let legacy =
            "//7d4a94b24bbe2061abd380ec7804f223:9f1c2e3d4b5a69788796a5b4c3d2e1f0@sentry.io/1";
        assert!(!covered(&format!("dsn: 'https:{legacy}',"), legacy));
        let tp = "00-88d12a1fd29e119c8245680da0644c26-fc76e9eb55961acb-01";
        assert!(covered(&format!("traceparent: {tp}\n"), tp));
        assert!(covered(
            "\"id\": \"01HF8ZK3Q2M4N5P6R7S8T9V0WX\"",
            "01HF8ZK3Q2M4N5P6R7S8T9V0WX"
        ));
        // Crockford-shaped but its time is in 1970 or after 2040: judged.
        assert!(!covered(
            "0000000000M4N5P6R7S8T9V0WX",
            "0000000000M4N5P6R7S8T9V0WX"
        ));
        assert!(!covered(
            "7ZZZZZZZZZM4N5P6R7S8T9V0WX",
            "7ZZZZZZZZZM4N5P6R7S8T9V0WX"
        ));
        let onion = "idkgtzeiv7vtt5s3dgwwm4g3nq6veywc574b2plxa5tiulu3bt2cydz6.onion";
        assert!(covered(&format!("http://{onion}/"), onion));
    }

    #[test]
    fn round_four_public_client_keys_and_debug_ids() {
        let adyen = "live_2HQGWBQU857JQJH6MIEKS4HMT7NVKEJ0";
        assert!(covered(&format!("clientKey: '{adyen}',"), adyen));
        let statsig = "client-bpwHbhjQdz1lVu6yG13XWrv7SKsIgdlBJpIJ6ibAkkl";
        assert!(covered(
            &format!("Statsig.initialize('{statsig}')"),
            statsig
        ));
        // Secret keys of the same vendors and `sk_live_` are not covered.
        assert!(!covered(
            "secret-bpwHbhjQdz1lVu6yG13XWrv7SKsIgdlBJpIJ6ibAkkl",
            "secret-bpwH"
        ));
        assert!(!covered(
            "sk_live_2HQGWBQU857JQJH6MIEKS4HMT7NVKEJ0",
            "sk_live_2HQGWBQU857JQJH6MIEKS4HMT7NVKEJ0"
        ));
        // Datadog: the RUM client token is public, the API key is not.
        let dd = "pub5ae9c7a9f12c5b82668e3c6989e9cacc";
        assert!(covered(&format!("clientToken: '{dd}',"), dd));
        assert!(!covered(
            "DD_API_KEY=5ae9c7a9f12c5b82668e3c6989e9cacc",
            "5ae9c7a9f12c5b82668e3c6989e9cacc"
        ));
        assert!(!covered(
            "token: 'pub5ae9c7a9f12c5b82668e3c6989e9caccd'",
            "pub5ae9c7a9f12c5b82668e3c6989e9caccd"
        ));
        let module = "MODULE Linux x86_64 9E0C06837F6B29A3350CF46E8356E8F67 libacme.so";
        assert!(covered(
            &format!("{module}\n"),
            "9E0C06837F6B29A3350CF46E8356E8F67"
        ));
        assert!(!covered(
            "KEY Linux x86_64 9E0C06837F6B29A3350CF46E8356E8F67 libacme.so",
            "9E0C06837F6B29A3350CF46E8356E8F67"
        ));
    }

    #[test]
    fn values_declared_public_by_a_comment() {
        let algolia = "    // Public API key: it is safe to commit it\n    apiKey: '9e51ad73b06d2e0ef2add382ef22c32b',\n";
        assert!(covered(algolia, "9e51ad73b06d2e0ef2add382ef22c32b"));
        let trailing = "SEARCH_KEY=Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8 # public search-only key\n";
        assert!(covered(trailing, "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"));
        // A secret-named key is judged whatever the comment says.
        let secret = "# public key is in pub.pem\nclient_secret = Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\n";
        assert!(!covered(secret, "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"));
        // A comment two lines up, or a URL fragment, declares nothing.
        let far = "// public key\n\napiKey: 'Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8'\n";
        assert!(!covered(far, "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"));
        let url = "token: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8 https://x.io/#public-key\n";
        assert!(!covered(url, "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"));
    }

    #[test]
    fn published_examples_need_a_citation_and_a_doc_or_test() {
        let text = "the values below are the examples from rfc 6749 and rfc 7636.\n";
        assert!(published_examples("docs/auth/oauth-flow.md", text));
        assert!(published_examples(
            "tests/test_jws.py",
            "vectors from rfc 7515\n"
        ));
        // No citation, or not a document or a test: judged as usual.
        assert!(!published_examples("docs/oauth.md", "the examples below\n"));
        assert!(!published_examples(
            "src/config.py",
            "examples from rfc 6749\n"
        ));
        assert!(!published_examples("README.md", "implements rfc 6749\n"));
        // A test that labels the standard's test case by its heading.
        let ed = "/// rfc 8032 section 7.1, test 1 (empty message).\n";
        assert!(published_examples(
            "tests/cryptotests/ed25519tests.swift",
            ed
        ));
        assert!(published_examples(
            "crypto/hmac_test.go",
            "// rfc 4231 test case 2\n"
        ));
        // The label without a citation, or outside a test: judged as usual.
        assert!(!published_examples(
            "tests/cryptotests/ed25519tests.swift",
            "/// section 7.1, test 1 (empty message).\n"
        ));
        assert!(!published_examples("docs/ed25519.md", ed));
        assert!(!published_examples("src/keys.swift", ed));
        // Test code by its language's file name or its test module marker
        // (generator-7's `src/crypto/kat_tests.rs`).
        assert!(published_examples("src/crypto/kat_tests.rs", ed));
        let module = format!("{ed}#[cfg(test)]\nmod kat {{}}\n");
        assert!(published_examples("src/crypto/kat.rs", &module));
        assert!(!published_examples("src/crypto/kat.rs", ed));
    }

    #[test]
    fn public_identifiers_with_issuer_structure() {
        assert!(covered(
            "\"customer\": \"cus_NffrFeUfNV2Hib\"",
            "cus_NffrFeUfNV2Hib"
        ));
        assert!(covered(
            "price: price_1MoBy5LkdIwHu7ixZhnattbh",
            "price_1MoBy5LkdIwHu7ixZhnattbh"
        ));
        assert!(!covered(
            "key: sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
        ));
        assert!(!covered(
            "s: whsec_Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
            "whsec_Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8"
        ));
        let sid = "MGe3edc8349ec0934d0c5796dcc19eb20f";
        assert!(covered(&format!("SID = \"{sid}\""), sid));
        assert!(!covered(
            "auth = \"e3edc8349ec0934d0c5796dcc19eb20f\"",
            "e3edc8349ec0934d0c5796dcc19eb20f"
        ));
        let eth = "0xA0Dc3F1A773C250552F016e9A7b7C2e0fD1bfd09";
        assert!(covered(eth, eth));
        let eth_key = "0xefd0903194fbbc4639a58c4801972759c225b6f3e8c31af1d3b2157ab40a5854";
        assert!(!covered(eth_key, eth_key));
        // BIP 173 test vectors: valid, then one character changed.
        assert!(covered(
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
        ));
        assert!(!covered(
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5",
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5"
        ));
        // The genesis address; then a random base58 string of that shape.
        assert!(covered(
            "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
            "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
        ));
        assert!(!covered(
            "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb",
            "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb"
        ));
        let mapbox = "pk.eyJ1IjoiYWNtZSIsImEiOiJjbDB4In0.1V0cYRcvpcTs_ZLVn2OHoy";
        assert!(covered(mapbox, mapbox));
        assert!(!covered(
            "sk.eyJ1IjoiYWNtZSIsImEiOiJjbDB4In0.1V0cYRcvpcTs_ZLVn2OHoy",
            "sk.eyJ1"
        ));
    }
}
