//! Names of algorithms and code components assigned to credential-named
//! keys: `password_hasher = argon2id`, `jwt_secret_alg: HS256`,
//! `token_cipher = "aes-256-gcm"`, `passwordEncoder = Pbkdf2Sha256Encoder`.
//!
//! Security configuration names *how* credentials are handled next to the
//! credentials, under keys that hold the credential's word. Two shapes say
//! the value is not one (blind round 4 of issue 18, generator-4,
//! `class-names-as-values`):
//! - the key's head noun names a component, not the credential
//!   ([`names_a_component`]: a password *hasher*, a token *provider*, a
//!   secret *resolver*, a signing *algorithm*);
//! - the value is an algorithm's identifier ([`is_algorithm_or_component`]:
//!   pieces that are standard algorithm and mode names, with digits and
//!   words around them) or a class named for a component
//!   (`Argon2PasswordEncoder`).
//!
//! Word-like identifiers (`get_secret_token`, `ClientSecretBasicAuth…`)
//! are already not values ([`super::words::is_word_like`]); these shapes
//! carry digits, which a password key otherwise reads as a password's.

use super::words;

/// Head nouns of keys and class names that name a component handling a
/// credential, never the credential itself.
const COMPONENT_HEADS: &[&str] = &[
    "hasher",
    "hashers",
    "encoder",
    "decoder",
    "provider",
    "providers",
    "resolver",
    "factory",
    "handler",
    "converter",
    "validator",
    "generator",
    "serializer",
    "algorithm",
    "algorithms",
    "algo",
    "alg",
    "scheme",
    "strategy",
    "backend",
    "class",
    "impl",
    "manager",
];

/// Standard names of hash, password-hashing, signature, cipher and mode
/// algorithms, each matched against a whole piece of a value
/// (case-insensitive). A value is an algorithm identifier when one of its
/// pieces is one of these and the rest are digits, modes or words.
const ALGORITHMS: &str = r"(?ix)^(?:
    argon2(?:id|i|d)? | bcrypt | scrypt | yescrypt | pbkdf2 | hkdf
  | sha(?:1|224|256|384|512)? | sha3 | md5 | md4 | ripemd160 | blake2[bs]? | blake3
  | hmac | [hrpe]s(?:256|384|512)k? | eddsa | ed25519 | ed448 | x25519 | x448
  | rsa | ecdsa | ecdh | ecdhe
  | aes(?:128|192|256)? | 3des | tripledes | rc4 | chacha20 | xchacha20 | poly1305
  | salsa20 | twofish | blowfish | camellia
  | secp256k1 | secp256r1 | secp384r1 | secp521r1 | prime256v1
)$";

/// Mode and padding names: algorithm pieces only beside an algorithm.
const MODES: &str =
    r"(?i)^(?:gcm|cbc|ctr|ccm|ecb|cfb|ofb|siv|ocb|xts|kw|oaep|pss|pkcs1|pkcs7|pkcs8|id|i|d|k)$";

static ALGORITHM: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(ALGORITHMS).expect("algorithm names"));
static MODE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(MODES).expect("mode names"));

/// Splits an identifier into pieces at `_ - . / $` and spaces and before
/// a capital that follows a lowercase letter or a digit (`Pbkdf2Sha256`
/// → `Pbkdf2`, `Sha256`); digits stay with the letters before them.
fn pieces(v: &str) -> Vec<&str> {
    let b = v.as_bytes();
    let mut out = Vec::new();
    let mut s = 0;
    for i in 0..=b.len() {
        let sep = i < b.len() && matches!(b[i], b'_' | b'-' | b'.' | b'/' | b'$' | b' ');
        let camel = i > 0
            && i < b.len()
            && b[i].is_ascii_uppercase()
            && (b[i - 1].is_ascii_lowercase() || b[i - 1].is_ascii_digit());
        if i == b.len() || sep || camel {
            if i > s {
                out.push(&v[s..i]);
            }
            s = if sep { i + 1 } else { i };
        }
    }
    out
}

/// Prepositions that end a name's head: in `tokenWithNoneAlg` the head
/// is `token`, what follows `With` qualifies it.
const PREPOSITIONS: &[&str] = &["with", "without", "for", "of", "from", "by", "using", "via"];

/// True when the key's head noun (its last piece before any preposition)
/// names a component (`password_hasher`, `tokenProvider`,
/// `JWT_SIGNING_ALG`), and the key has a word before it (a bare
/// `provider` names nothing).
pub(crate) fn names_a_component(key: &str) -> bool {
    let ps = pieces(key);
    let head = ps
        .iter()
        .position(|p| PREPOSITIONS.iter().any(|w| w.eq_ignore_ascii_case(p)))
        .unwrap_or(ps.len());
    head >= 2
        && COMPONENT_HEADS
            .iter()
            .any(|c| c.eq_ignore_ascii_case(ps[head - 1]))
}

/// True for an algorithm identifier (`argon2id`, `pbkdf2_sha256`, `HS256`,
/// `aes-256-gcm`, `hmac-sha512`) or a class or function named for a
/// component (`Argon2PasswordEncoder`, `make_pbkdf2_hasher`): identifier
/// characters only, no piece random.
pub(crate) fn is_algorithm_or_component(v: &str) -> bool {
    if v.is_empty()
        || !v
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/' | b'$'))
    {
        return false;
    }
    let ps = pieces(v);
    let algorithm = ps.iter().any(|p| ALGORITHM.is_match(p));
    let component = ps.len() >= 2
        && ps
            .last()
            .is_some_and(|h| COMPONENT_HEADS.iter().any(|c| c.eq_ignore_ascii_case(h)));
    (algorithm || component)
        && ps.iter().all(|p| {
            ALGORITHM.is_match(p)
                || (algorithm && MODE.is_match(p))
                || p.bytes().all(|c| c.is_ascii_digit())
                || words::is_word_like(p, false)
        })
}

#[cfg(test)]
mod tests {
    use super::{is_algorithm_or_component, names_a_component};
    use crate::scanner::rules::testutil::check;

    #[test]
    fn component_keys() {
        for k in [
            "password_hasher",
            "tokenProvider",
            "secretResolver",
            "JWT_SIGNING_ALG",
            "token_signing_algorithm",
            "passwordEncoder",
            "session_secret_backend",
        ] {
            assert!(names_a_component(k), "{k}");
        }
        for k in [
            "password",
            "provider",
            "api_key",
            "secret_key_base",
            "signing_key",
            "hashed_password",
            "tokenWithNoneAlg",
            "secret_for_encoder",
        ] {
            assert!(!names_a_component(k), "{k}");
        }
    }

    #[test]
    fn algorithm_and_component_values() {
        for v in [
            "argon2id",
            "pbkdf2_sha256",
            "HS256",
            "RS512",
            "ES256K",
            "aes-256-gcm",
            "AES256",
            "hmac-sha512",
            "chacha20-poly1305",
            "Argon2PasswordEncoder",
            "Pbkdf2Sha256Hasher",
            "make_pbkdf2_hasher",
            "bcrypt",
        ] {
            assert!(is_algorithm_or_component(v), "{v}");
        }
        for v in [
            "hunter2",
            "Zq8v2Lm4Kp7Rt",
            "sha256hunter",
            "aes-256-Zq8v2Lm4Kp7Rt",
            "gcm-256",
            "s3cr3t!",
            "MyDogRex2",
            "sha256:9f86d081884c7d659a2feaa0c55ad015",
        ] {
            assert!(!is_algorithm_or_component(v), "{v}");
        }
    }

    /// Algorithm and component names under credential keys are settings;
    /// a password beside them is still one.
    #[test]
    fn scanned_settings() {
        check(
            "generic_secret",
            &[
                ("password = Argon2Kx9mQ", "Argon2Kx9mQ"),
                ("jwt_secret: \"HS256-Zq8v2Lm4Kp7Rt\"", "HS256-Zq8v2Lm4Kp7Rt"),
                ("PASSWORD_SALT=Zq8v2Lm4Kp7Rt", "Zq8v2Lm4Kp7Rt"),
            ],
            &[
                ("password_hasher = argon2id", "algorithm under a hasher key"),
                ("password_hash_algorithm = pbkdf2_sha256", "algorithm"),
                ("jwt_secret_alg: HS256", "algorithm"),
                ("token_cipher = \"aes-256-gcm\"", "cipher suite"),
                (
                    "passwordEncoder: Argon2PasswordEncoder",
                    "class named for a component",
                ),
                ("session_secret: hmac-sha512", "an algorithm, not a secret"),
            ],
        );
    }
}
