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

/// True for a digest's text: hex of a digest's length, or a tagged
/// password-hash format.
pub(crate) fn is_digest_shaped(v: &str) -> bool {
    let hex = v.bytes().all(|c| c.is_ascii_hexdigit())
        && (v.bytes().all(|c| !c.is_ascii_uppercase())
            || v.bytes().all(|c| !c.is_ascii_lowercase()));
    (hex && DIGEST_HEX_LENS.contains(&v.len()))
        || (TAGGED_PREFIXES.iter().any(|p| v.starts_with(p)) && v.matches('$').count() >= 2)
}

/// True when the key's last word names a digest (`api_key_hash`,
/// `secretDigest`, `token-sha256`).
pub(crate) fn names_a_digest(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
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
    super::random::key_name(&text[line..start])
}

#[cfg(test)]
mod tests {
    use crate::scanner::{ScanConfig, Scanner};

    fn flagged(path: &str, text: &str) -> Vec<String> {
        Scanner::new(ScanConfig::default())
            .scan_bytes(path, text.as_bytes())
            .into_iter()
            .map(|f| format!("{}={}", f.rule, f.value))
            .collect()
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
            (
                "fixtures/dev_users.json",
                format!("  \"password\": \"{HEX64}\",\n"),
            ),
            ("seed/users.json", format!("  \"password\": \"{HEX64}\",\n")),
            (
                "fixtures/dev_users.json",
                "  \"password\": \"pbkdf2_sha256$600000$ViHV8MrSBRQ4DtxJNQnOlK$CMR1zNukb6+n/3iPar90BdHpR7333sjmZzVA4dPt51o=\",\n".to_string(),
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
            (
                "fixtures/dev_users.json",
                format!("  \"api_key\": \"{HEX64}\",\n"),
            ),
        ] {
            assert!(!flagged(path, &text).is_empty(), "{path}: {text}");
        }
    }

    #[test]
    fn digest_names_and_shapes() {
        for k in [
            "api_key_hash",
            "secretDigest",
            "token-sha256",
            "password_hashed",
            "keyChecksum",
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
