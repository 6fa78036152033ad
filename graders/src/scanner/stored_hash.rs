//! Stored password and key hashes under a credential-named key (issue 18,
//! generator-7 `fixture-hashed-users`, `seed-bcrypt`).
//!
//! A user table's fixture or seed data holds what the application stores:
//! `"api_key_hash": "<64 hex>"`, `secret_digest: "<sha256>"`, Django's
//! `"password": "pbkdf2_sha256$600000$…"`. The key word (`api_key`,
//! `secret`, `password`) made the credential-assignment rule report the
//! value, but a one-way digest is not the credential. Two shapes of the
//! class:
//! - a key whose last word names a digest (`*_hash`, `*_digest`,
//!   `*_sha256`, `*Checksum`) holding a digest-shaped value
//!   ([`is_digest_shaped`]), anywhere;
//! - a password key holding a digest-shaped value in fixture, seed or
//!   test data ([`is_seed_or_fixture_path`]): a hex API secret in ordinary
//!   configuration (`API_SECRET=<64 hex>` in `config/prod.env`) is still
//!   reported.
//!
//! A provider key under such a name (`"key_hash": "sk_live_…"`) is not
//! digest-shaped and is judged as before.

/// Last words of a key that name a one-way digest of the value it is
/// derived from.
const DIGEST_WORDS: &[&str] = &[
    "hash", "hashed", "digest", "sha1", "sha256", "sha512", "md5", "checksum",
];

/// Hex lengths of common digests: MD5, SHA-1, SHA-224, SHA-256, SHA-384,
/// SHA-512.
const DIGEST_HEX_LENS: &[usize] = &[32, 40, 56, 64, 96, 128];

/// Password-hash formats with an algorithm tag: PHC strings (`$argon2id$`,
/// `$scrypt$`, `$pbkdf2-sha256$`), bcrypt (`$2a$`, `$2b$`, `$2y$`),
/// crypt(3) SHA (`$5$`, `$6$`), Django's `algorithm$…` (`pbkdf2_sha256$`,
/// `argon2$`, `bcrypt_sha256$`, `sha1$`).
const TAGGED_PREFIXES: &[&str] = &[
    "$argon2",
    "$scrypt$",
    "$pbkdf2",
    "$2a$",
    "$2b$",
    "$2y$",
    "$5$",
    "$6$",
    "pbkdf2_sha256$",
    "pbkdf2_sha1$",
    "argon2$",
    "bcrypt_sha256$",
    "bcrypt$",
    "scrypt$",
    "sha1$",
    "md5$",
];

/// Bytes of a digest in base64, stored alone or with a salt of one of
/// [`SALT_BYTES`] before or after it: RabbitMQ's `password_hash` is a
/// 4-byte salt and a SHA-256 (36 bytes), `{SSHA}` a SHA-1 and its salt.
const DIGEST_BYTES: &[usize] = &[16, 20, 28, 32, 48, 64];
/// Salt lengths stored beside a digest.
const SALT_BYTES: &[usize] = &[0, 4, 8, 16];

/// True for a digest's text: hex of a digest's length, standard base64 of
/// a digest and its salt, or a tagged password-hash format.
pub(crate) fn is_digest_shaped(v: &str) -> bool {
    let hex = v.bytes().all(|c| c.is_ascii_hexdigit())
        && (v.bytes().all(|c| !c.is_ascii_uppercase())
            || v.bytes().all(|c| !c.is_ascii_lowercase()));
    (hex && DIGEST_HEX_LENS.contains(&v.len()))
        || base64_digest(v)
        || (TAGGED_PREFIXES.iter().any(|p| v.starts_with(p)) && v.matches('$').count() >= 2)
}

/// Standard base64 (whole groups of four, padded) of a digest's length,
/// alone or with a salt ([`DIGEST_BYTES`], [`SALT_BYTES`]).
fn base64_digest(v: &str) -> bool {
    use base64::Engine as _;
    if !v.len().is_multiple_of(4) || !v.bytes().any(|c| c.is_ascii_digit()) {
        return false;
    }
    base64::engine::general_purpose::STANDARD
        .decode(v)
        .is_ok_and(|d| {
            DIGEST_BYTES
                .iter()
                .any(|&n| SALT_BYTES.iter().any(|&s| d.len() == n + s))
        })
}

/// A password verifier in a format that says so by its own structure,
/// whatever key or rule found it (issue 18, generator-8
/// `sql-migration-scram-verifier`, `jupyter-server-hashed-password`):
/// what a server stores to check a password against, never the password.
/// - PHC strings and crypt(3): `$argon2id$v=19$…`, `$scrypt$…`,
///   `$pbkdf2-sha256$…`, bcrypt `$2a$`/`$2b$`/`$2y$` + cost, `$1$`, `$5$`,
///   `$6$` + salt and hash;
/// - Django `algorithm$…` ([`TAGGED_PREFIXES`]) with two `$` or more;
/// - PostgreSQL `SCRAM-SHA-256$<iterations>:<salt>$<stored>:<server>` and
///   `md5` + 32 hex;
/// - Werkzeug `pbkdf2:sha256:600000$salt$hash`, `scrypt:32768:8:1$salt$hash`;
/// - Jupyter `algorithm:…` around one of the above, or `sha1:salt:hex`.
pub(crate) fn is_password_hash_format(v: &str) -> bool {
    let v = v.trim();
    if v.len() < 20 || v.contains(char::is_whitespace) {
        return false;
    }
    // ASP.NET Core Identity's v3 format starts `AQAAAA` (its header's
    // first bytes in base64).
    if v.starts_with("AQAAAA") {
        return is_aspnet_identity_v3(v);
    }
    let dollars = v.matches('$').count();
    // PHC and crypt(3): `$id$…$…`.
    if let Some(rest) = v.strip_prefix('$') {
        let id = rest.split('$').next().unwrap_or("");
        let known = matches!(
            id,
            "1" | "5" | "6" | "apr1" | "2a" | "2b" | "2y" | "2x" | "y" | "7" | "sha1" | "md5"
        ) || id.starts_with("argon2")
            || id.starts_with("pbkdf2")
            || id == "scrypt"
            || id == "bcrypt";
        return known && dollars >= 3;
    }
    if let Some(rest) = v
        .strip_prefix("SCRAM-SHA-256$")
        .or_else(|| v.strip_prefix("SCRAM-SHA-1$"))
    {
        // `<iterations>:<salt>$<StoredKey>:<ServerKey>`.
        let (head, keys) = rest.split_once('$').unwrap_or(("", ""));
        return head
            .split_once(':')
            .is_some_and(|(i, _)| i.parse::<u32>().is_ok())
            && keys.contains(':');
    }
    if let Some(hex) = v.strip_prefix("md5") {
        return hex.len() == 32 && hex.bytes().all(|c| c.is_ascii_hexdigit());
    }
    if TAGGED_PREFIXES.iter().any(|p| v.starts_with(p)) && dollars >= 2 {
        return true;
    }
    // Werkzeug: `method:params…$salt$hash`.
    if let Some((method, _)) = v.split_once(':')
        && matches!(method, "pbkdf2" | "scrypt")
        && dollars == 2
    {
        return true;
    }
    // Jupyter: `algorithm:` before a PHC string, or `sha1:salt:hexdigest`.
    if let Some((algo, rest)) = v.split_once(':')
        && matches!(algo, "argon2" | "sha1" | "sha256" | "sha512" | "md5")
    {
        if rest.starts_with('$') {
            return is_password_hash_format(rest);
        }
        if let Some((salt, hex)) = rest.split_once(':') {
            return !salt.is_empty()
                && DIGEST_HEX_LENS.contains(&hex.len())
                && hex.bytes().all(|c| c.is_ascii_hexdigit());
        }
    }
    false
}

/// True for ASP.NET Core Identity's `PasswordHasher` v3 output (issue 18,
/// generator-12 `password-hash-seed-data`: an `IdentityUser`'s
/// `PasswordHash` in EF Core seed data): base64 of a format marker `0x01`,
/// then big-endian the PRF (0 HMAC-SHA1, 1 HMAC-SHA256, 2 HMAC-SHA512),
/// the PBKDF2 iteration count and the salt's length, then the salt and
/// the derived subkey (at least 16 bytes). The header must be consistent
/// with the length, so random base64 that starts `AQAAAA` is no match.
fn is_aspnet_identity_v3(v: &str) -> bool {
    use base64::Engine as _;
    let Ok(d) = base64::engine::general_purpose::STANDARD.decode(v) else {
        return false;
    };
    let be = |i: usize| {
        d.get(i..i + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (Some(prf), Some(iterations), Some(salt)) = (be(1), be(5), be(9)) else {
        return false;
    };
    d[0] == 1
        && prf <= 2
        && iterations >= 1000
        && (8..=64).contains(&salt)
        && d.len() >= 13 + salt as usize + 16
}

/// True for base64 text that decodes to a password verifier
/// ([`is_password_hash_format`], or an RFC 2307 scheme: `{SSHA}…`,
/// `{CRYPT}$6$…`): LDIF writes attribute values with `::` in base64, so
/// `userPassword:: e1NTSEF9…` is a stored hash, not a password.
pub(crate) fn decodes_to_password_hash(v: &str) -> bool {
    use base64::Engine as _;
    if v.len() < 24 || !v.len().is_multiple_of(4) {
        return false;
    }
    let Ok(d) = base64::engine::general_purpose::STANDARD.decode(v) else {
        return false;
    };
    let Ok(t) = std::str::from_utf8(&d) else {
        return false;
    };
    let t = t.trim();
    is_password_hash_format(t) || rfc2307_scheme(t).is_some_and(|rest| rest.len() >= 16)
}

/// The text after an RFC 2307 password scheme that names a hash
/// (`{SSHA}`, `{SHA}`, `{SSHA512}`, `{CRYPT}`, `{PBKDF2-SHA256}`,
/// `{ARGON2}`; not `{CLEARTEXT}`).
fn rfc2307_scheme(t: &str) -> Option<&str> {
    let (scheme, rest) = t.strip_prefix('{')?.split_once('}')?;
    let s = scheme.to_ascii_uppercase();
    let unsalted = s
        .strip_prefix('S')
        .filter(|r| r.starts_with("SHA") || r.starts_with("MD5"))
        .unwrap_or(&s);
    let known = unsalted.starts_with("SHA")
        || unsalted == "MD5"
        || unsalted == "CRYPT"
        || unsalted.starts_with("PBKDF2")
        || unsalted.starts_with("ARGON2")
        || unsalted == "BCRYPT";
    known.then_some(rest)
}

/// True when the key's last word names a digest (`api_key_hash`,
/// `secretDigest`, `token-sha256`), or it opens with `hashed`
/// (`hashed_secret` in a detect-secrets baseline, `hashedPassword`). A
/// key that opens with a noun (`hash_key`, `digest_secret`) names a
/// secret used for hashing.
pub(crate) fn names_a_digest(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    if lower.len() > "hashed".len() && lower.starts_with("hashed") {
        return true;
    }
    let b = key.as_bytes();
    // The last word: after the last separator or lower→upper boundary.
    let mut s = b.len();
    while s > 0 {
        let c = b[s - 1];
        if matches!(c, b'_' | b'-' | b'.') {
            break;
        }
        if c.is_ascii_lowercase() && b.get(s).is_some_and(u8::is_ascii_uppercase) {
            break;
        }
        s -= 1;
    }
    DIGEST_WORDS.contains(&&lower[s..])
}

/// Path parts of seed data (`db/seeds.rb`, `seed/staging.json`,
/// `seeds/users.sql`).
const SEED_PARTS: &[&str] = &["seed", "seeds", "seeders", "seed_data", "seeddata"];

/// True for fixture, seed or test data: a test path
/// ([`super::fixture::is_test_path`], which covers `fixtures/`) or a seed
/// directory or file (`seeds.rb`, `seed.sql`).
pub(crate) fn is_seed_or_fixture_path(path: &str) -> bool {
    if super::fixture::is_test_path(path) {
        return true;
    }
    let lower = path.replace('\\', "/").to_ascii_lowercase();
    lower.split('/').any(|part| {
        let stem = part.split('.').next().unwrap_or(part);
        SEED_PARTS.contains(&stem)
    })
}

/// True when the value at `start..end` of `text` is a stored hash: see the
/// module doc. `key` is the name the value is assigned to.
pub(crate) fn is_stored_hash(key: &str, value: &str, path: &str) -> bool {
    if !is_digest_shaped(value) {
        return false;
    }
    let lk = key.to_ascii_lowercase();
    names_a_digest(key)
        || (["pass", "pwd"].iter().any(|w| lk.contains(w)) && is_seed_or_fixture_path(path))
}

/// Bytes looked back from a value for its key, at most: a line of a
/// megabyte with thousands of values must not be re-read for each.
const LOOKBACK: usize = 256;

/// The key the value at `start` is assigned to on its line.
pub(crate) fn key_before(text: &str, start: usize) -> &str {
    let mut from = start.saturating_sub(LOOKBACK);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let line = text[from..start].rfind('\n').map_or(from, |p| from + p + 1);
    if text[line..start].trim().is_empty()
        && let Some(key) = continued_key(text, line)
    {
        return key;
    }
    super::random::key_name(&text[line..start])
}

/// Continuation lines walked back over, at most, to a statement's first
/// line.
const MAX_CONTINUED: usize = 32;

/// The key of a statement continued onto the line at `line` by a
/// trailing backslash (systemd `SetCredentialEncrypted=name: \` with the
/// data on the lines after, a shell `export KEY=\`): the `KEY` before the
/// first `=` or `:` on the statement's first line.
fn continued_key(text: &str, line: usize) -> Option<&str> {
    let mut first = line;
    for _ in 0..MAX_CONTINUED {
        if first == 0 {
            break;
        }
        let prev = text[..first - 1].rfind('\n').map_or(0, |p| p + 1);
        if !text[prev..first - 1].trim_end().ends_with('\\') {
            break;
        }
        first = prev;
    }
    if first == line {
        return None;
    }
    let head = &text[first..line];
    let op = head.find(['=', ':'])?;
    let key = super::random::key_name(&head[..=op]);
    (!key.is_empty()).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::is_password_hash_format;
    use crate::scanner::{ScanConfig, Scanner};

    fn flagged(path: &str, text: &str) -> Vec<String> {
        Scanner::new(ScanConfig::default())
            .scan_bytes(path, text.as_bytes())
            .into_iter()
            .map(|f| format!("{}={}", f.rule, f.value))
            .collect()
    }

    #[test]
    fn aspnet_identity_v3_header_must_match_its_length() {
        let h =
            "AQAAAAIAAYagAAAAEB2uwspkAW63UPVYC7fxnLbiicsuLkF0Benk4Y+2FhrfENke+ePPR64CgdBb7YjcRg==";
        assert!(is_password_hash_format(h));
        // Cut short (no room for the subkey), or a random tail after the
        // same first characters (salt length out of range).
        assert!(!is_password_hash_format(&h[..40]));
        assert!(!is_password_hash_format(
            "AQAAAAZq8v2Lm4Kp7Rt9xWq3Zr8Kx2mVbN4tYwP9sLd6GhJ1aEcF7uR5oIyT=="
        ));
    }

    const HEX64: &str = "e963a8faadcbd99b1e197962aaad1f68f425849bd911e5295ff1880abdbfc0ea";

    /// Digests under digest-named keys, and digests under password keys in
    /// fixture and seed data, are stored hashes.
    #[test]
    fn stored_hashes_are_quiet() {
        for (path, text) in [
            (
                "accounts/fixtures/users.json",
                format!("{{\"fields\": {{\n  \"api_key_hash\": \"{HEX64}\",\n}}}}\n"),
            ),
            (
                "db/seeds.rb",
                format!("ApiClient.create!(name: \"dev\", secret_digest: \"{HEX64}\")\n"),
            ),
            ("config/app.yml", format!("api_token_sha256: {HEX64}\n")),
            // RabbitMQ definitions: base64 of a 4-byte salt and a SHA-256.
            (
                "rabbitmq/definitions.json",
                "  \"password_hash\": \"SOyyPHtUqlUVOGZNggKhaaIsXmbG4Uv0QjLfvbgxT8cshwgQ\",\n"
                    .to_string(),
            ),
            (
                "fixtures/dev_users.json",
                format!("  \"password\": \"{HEX64}\",\n"),
            ),
            ("seed/users.json", format!("  \"password\": \"{HEX64}\",\n")),
            (
                "fixtures/dev_users.json",
                "  \"password\": \"pbkdf2_sha256$600000$ViHV8MrSBRQ4DtxJNQnOlK$CMR1zNukb6+n/3iPar90BdHpR7333sjmZzVA4dPt51o=\",\n".to_string(),
            ),
            // ASP.NET Core Identity v3: SHA-512, 100000 iterations, a
            // 16-byte salt and a 32-byte subkey.
            (
                "src/Identity/Data/SeedData.cs",
                "            PasswordHash = \"AQAAAAIAAYagAAAAEB2uwspkAW63UPVYC7fxnLbiicsuLkF0Benk4Y+2FhrfENke+ePPR64CgdBb7YjcRg==\",\n".to_string(),
            ),
        ] {
            assert!(flagged(path, &text).is_empty(), "{path}: {text}");
        }
    }

    /// The same syntax with a credential is still reported: a hex secret
    /// under a password or API-secret key outside fixtures, a non-digest
    /// value under a digest-named key, a live key in seed data.
    #[test]
    fn credentials_in_the_same_syntax_are_reported() {
        for (path, text) in [
            ("config/prod.env", format!("API_SECRET={HEX64}\n")),
            ("config/app.json", format!("  \"password\": \"{HEX64}\",\n")),
            (
                "fixtures/dev_users.json",
                "  \"api_key_hash\": \"sk_live_4eC39HqLyjWDarjtT1zdp7dc9fK2\",\n".to_string(),
            ),
            (
                "seed/staging.json",
                "  \"api_secret\": \"Zq8v2Lm4Kp7RtX9wB3nY6cQ1\",\n".to_string(),
            ),
            // The same base64 under a key that names no digest.
            (
                "rabbitmq/definitions.json",
                "  \"password\": \"SOyyPHtUqlUVOGZNggKhaaIsXmbG4Uv0QjLfvbgxT8cshwgQ\",\n"
                    .to_string(),
            ),
            (
                "fixtures/dev_users.json",
                format!("  \"api_key\": \"{HEX64}\",\n"),
            ),
        ] {
            assert!(!flagged(path, &text).is_empty(), "{path}: {text}");
        }
    }

    /// A password verifier's own format says it is one, under any key and
    /// for every rule (SQL `PASSWORD '…'`, a Jupyter config's `password`).
    #[test]
    fn verifier_formats() {
        for v in [
            "SCRAM-SHA-256$4096:H5I5KWqNn9LNW9xe3+O8Sg==$55w54yQFuTeXDW0O2S0xZRQe8EfFDF0U0aOV2+dQNak=:adr55u/2nbR6sASvLJc/V6jLttdokJgfl/tdG39Wf18=",
            "md53175bce1d3201d16594cebf9d7eb3f9d",
            "$2b$12$E6DYbmUMNmmtsVxZ6RJyI3.U0APk4k2zD1aaV/HrCtp0yW0MDszhd",
            "$argon2id$v=19$m=65536,t=3,p=4$JD7W9/8uaU3EsAtLkgo/1g$H3LGbOWgBtailBz+qjmYzH3UjnAptI5FcdpYs+45aAQ",
            "argon2:$argon2id$v=19$m=10240,t=10,p=8$tXx0dzSvkq6YNmPHl7d1QQ$cBMq9cNaQe5fCMJ2XY4Znh8lBRUwqr4X0OmNVZXKaSc",
            "sha1:6c5b7f7f5c8e:0e7c1a9b4fa6d0a3c9fd4d7e2a3b5c6d7e8f9a0b",
            "pbkdf2:sha256:600000$Gd8kQ2mZ$2b7c1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a",
            "$6$rounds=5000$saltsalt$Kq4F7jVnIWfWkVxPq8ZbE0Qe1u9mD7aR3tY6sH2lN5oC8xB1vG4jU0iP9wE7rT3yL6kM2nA5sD8fH1gJ4qZ0c.",
            "pbkdf2_sha256$600000$ViHV8MrSBRQ4DtxJNQnOlK$CMR1zNukb6+n/3iPar90BdHpR7333sjmZzVA4dPt51o=",
        ] {
            assert!(super::is_password_hash_format(v), "{v}");
        }
        for v in [
            "Tr0ub4dor&3x$Tr0ub4dor",
            "md5notahexdigestbutapassword!",
            "$ecretP@ss$word2024",
            "argon2:hunter2hunter2hunter2",
            "SCRAM-SHA-256-is-my-password",
        ] {
            assert!(!super::is_password_hash_format(v), "{v}");
        }
        use crate::scanner::rules::testutil::rules;
        let sql = "CREATE ROLE r WITH LOGIN PASSWORD 'SCRAM-SHA-256$4096:H5I5KWqNn9LNW9xe3+O8Sg==$55w54yQFuTeXDW0O2S0xZRQe8EfFDF0U0aOV2+dQNak=:adr55u/2nbR6sASvLJc/V6jLttdokJgfl/tdG39Wf18=';\n";
        assert!(rules("db/migrations/1_role.sql", sql).is_empty());
        let jup = "c.ServerApp.password = 'argon2:$argon2id$v=19$m=65536,t=3,p=4$JD7W9/8uaU3EsAtLkgo/1g$H3LGbOWgBtailBz+qjmYzH3UjnAptI5FcdpYs+45aAQ'\n";
        assert!(rules(".jupyter/jupyter_server_config.py", jup).is_empty());
        let real = "CREATE ROLE r WITH LOGIN PASSWORD 'Zq8v2$Lm4Kp7Rt$X9wB';\n";
        assert!(!rules("db/migrations/1_role.sql", real).is_empty());
    }

    /// Issue 18, generator-10: LDIF's base64 of a stored hash is one;
    /// base64 of a cleartext password or scheme is not.
    #[test]
    fn encoded_password_hashes() {
        use base64::Engine as _;
        let enc = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        assert!(super::decodes_to_password_hash(&enc(
            "{SSHA}/gkpqPCcQACixmGLaWTPrvVcB3MVCUIv"
        )));
        assert!(super::decodes_to_password_hash(&enc(
            "{CRYPT}$6$6g.4ocnpIqRx5yQw$RXOCfoIiWIAd3yFZIyVrvrJJmtGVqLSwnFl1qBZvOW3MdVLHWQXAnc56"
        )));
        assert!(!super::decodes_to_password_hash(&enc(
            "{CLEARTEXT}Zq8v2Lm4Kp7RtX9wB3nY"
        )));
        assert!(!super::decodes_to_password_hash(&enc(
            "Zq8v2Lm4Kp7RtX9wB3nY\n"
        )));
        let ldif = format!(
            "dn: uid=a,dc=x\nuserPassword:: {}\n",
            enc("{SSHA}/gkpqPCcQACixmGLaWTPrvVcB3MVCUIv")
        );
        assert!(flagged("ldap/people.ldif", &ldif).is_empty());
        let clear = format!(
            "dn: uid=a,dc=x\nuserPassword:: {}\n",
            enc("Zq8v2Lm4Kp7RtX9wB3nY")
        );
        assert!(!flagged("ldap/people.ldif", &clear).is_empty());
    }

    /// Issue 18, generator-10: the key of a statement continued by
    /// backslashes names the data on its continued lines.
    #[test]
    fn continued_statements_keep_their_key() {
        let text =
            "SetCredentialEncrypted=db-password: \\\n        Y86aph0Zuc \\\n        pLtrY8Wihl\n";
        let at = text.find("pLtr").unwrap();
        assert_eq!(super::key_before(text, at), "SetCredentialEncrypted");
        let plain = "token=abc\n        pLtrY8Wihl\n";
        let at = plain.find("pLtr").unwrap();
        assert_eq!(super::key_before(plain, at), "");
        let scanned = flagged(
            "etc/systemd/system/app.service.d/creds.conf",
            "SetCredentialEncrypted=db-password: \\\n        Y86aph0ZuczPY5VE3dgNJnbkjA5UGI6edSGtX6wnamkQdOY+RqutnjwYVIx6sL2L \\\n        TtQ=\n",
        );
        assert!(scanned.is_empty(), "{scanned:?}");
        let clear = flagged(
            "etc/systemd/system/app.service.d/creds.conf",
            "SetCredential=db-password: \\\n        Y86aph0ZuczPY5VE3dgNJnbkjA5UGI6edSGtX6wnamkQdOY+RqutnjwYVIx6sL2L\n",
        );
        assert!(!clear.is_empty());
    }

    #[test]
    fn digest_names_and_shapes() {
        for k in [
            "api_key_hash",
            "secretDigest",
            "token-sha256",
            "password_hashed",
            "keyChecksum",
            "hashed_secret",
            "hashedPassword",
        ] {
            assert!(super::names_a_digest(k), "{k}");
        }
        for k in [
            "hash_key",
            "api_key",
            "hashicorp_token",
            "passwordHasher",
            "digest_secret",
        ] {
            assert!(!super::names_a_digest(k), "{k}");
        }
        assert!(super::is_digest_shaped(HEX64));
        assert!(super::is_digest_shaped(
            "$2b$12$E6DYbmUMNmmtsVxZ6RJyI3.U0APk4k2zD1aaV/HrCtp0yW0MDszhd"
        ));
        assert!(!super::is_digest_shaped(&HEX64[..50]));
        assert!(!super::is_digest_shaped("Zq8v2Lm4Kp7RtX9wB3nY6cQ1"));
        assert!(super::is_seed_or_fixture_path("db/seeds.rb"));
        assert!(super::is_seed_or_fixture_path("seed/staging.json"));
        assert!(!super::is_seed_or_fixture_path("config/seedling.yml"));
    }
}
