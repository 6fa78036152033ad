//! Seeded variants: fresh secret values of the same type and shape, and,
//! where the task allows it (`variants` in `task.json`), other file names
//! and directories, other placements of leaked lines within their files
//! and other encodings of its deep secrets.
//!
//! A variant is the same templates rendered with another [`Values`], so a
//! policy can memorise neither the canonical values nor where they sit.
//! Every draw has its own ChaCha20 stream seeded from sha256(domain, task
//! id, seed, what is drawn): the variant is the same on every machine and
//! adding a secret or a rename to a task does not change the other draws.
//! Canonical episodes (`seed: None`) use `task.json` unchanged.

use super::model::{Encoding, SecretType, Task};
use super::render::Values;
use anyhow::bail;
use base64::Engine as _;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const DIGITS: &[u8] = b"0123456789";
const HEX: &[u8] = b"0123456789abcdef";

/// Everything variant `seed` of `task` renders with: fresh values, the
/// drawn encoding of each deep secret listed in `variants.encodings` and
/// the drawn path of each file listed in `variants.paths`.
pub fn variant_values(task: &Task, seed: u64) -> anyhow::Result<Values> {
    let mut out = canonical_values(task);
    out.secrets.clear();
    for s in &task.secrets {
        let mut rng = secret_rng(task.id, seed, &s.id);
        // A drawn value must not look like a placeholder the scanner skips
        // (`EXAMPLE`) nor equal the canonical one; both are astronomically
        // rare for random draws, so a bounded retry is plenty.
        let mut value = None;
        for _ in 0..16 {
            let v = fresh_value(s.secret_type, &s.value, &mut rng);
            if !v.contains("EXAMPLE") && v != s.value && !out.secrets.values().any(|o| o == &v) {
                value = Some(v);
                break;
            }
        }
        let Some(v) = value else {
            bail!(
                "secret {}: could not draw a variant value (does the canonical contain EXAMPLE?)",
                s.id
            );
        };
        out.secrets.insert(s.id.clone(), v);
    }
    for (id, choices) in &task.variants.encodings {
        let mut rng = draw_rng(b"encoding", task.id, seed, id);
        if let Some(&e) = choices.get(rng.random_range(0..choices.len().max(1))) {
            out.encodings.insert(id.clone(), e);
        }
    }
    for (name, pl) in &task.variants.placements {
        let mut rng = draw_rng(b"placement", task.id, seed, name);
        let k = rng.random_range(2..=pl.slots.max(2));
        out.placements.insert(name.clone(), (k, pl.text.clone()));
    }
    for (from, choices) in &task.variants.paths {
        let mut rng = draw_rng(b"path", task.id, seed, from);
        if let Some(to) = choices.get(rng.random_range(0..choices.len().max(1))) {
            out.paths.insert(from.clone(), to.clone());
        }
    }
    Ok(out)
}

/// The canonical episode: `task.json` values and encodings, every
/// renamable path mapped to itself.
pub fn canonical_values(task: &Task) -> Values {
    Values {
        secrets: task
            .secrets
            .iter()
            .map(|s| (s.id.clone(), s.value.clone()))
            .collect(),
        encodings: task
            .secrets
            .iter()
            .filter_map(|s| s.encoding.map(|e| (s.id.clone(), e)))
            .collect::<std::collections::BTreeMap<String, Encoding>>(),
        paths: task
            .variants
            .paths
            .keys()
            .map(|p| (p.clone(), p.clone()))
            .collect(),
        placements: task
            .variants
            .placements
            .iter()
            .map(|(n, pl)| (n.clone(), (1, pl.text.clone())))
            .collect(),
    }
}

/// The stream of one non-value draw (`what` = `encoding` / `path`).
fn draw_rng(what: &[u8], task_id: u32, seed: u64, key: &str) -> ChaCha20Rng {
    let mut h = Sha256::new();
    h.update(b"secaudit-variant-v1\0");
    h.update(what);
    h.update([0]);
    h.update(task_id.to_le_bytes());
    h.update(seed.to_le_bytes());
    h.update(key.as_bytes());
    ChaCha20Rng::from_seed(h.finalize().into())
}

fn secret_rng(task_id: u32, seed: u64, secret_id: &str) -> ChaCha20Rng {
    let mut h = Sha256::new();
    h.update(b"secaudit-variant-v1\0");
    h.update(task_id.to_le_bytes());
    h.update(seed.to_le_bytes());
    h.update(secret_id.as_bytes());
    ChaCha20Rng::from_seed(h.finalize().into())
}

fn pick(rng: &mut impl Rng, alphabet: &[u8], n: usize) -> String {
    (0..n)
        .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
        .collect()
}

/// Randomises `body` character by character within each character's class
/// (digit, lower, upper); other characters (`-`, `_`, `.`) stay. Keeps the
/// exact length and layout of provider formats we do not model in detail.
fn reshape(rng: &mut impl Rng, body: &str) -> String {
    body.chars()
        .map(|c| {
            let class: &[u8] = if c.is_ascii_digit() {
                DIGITS
            } else if c.is_ascii_lowercase() {
                LOWER
            } else if c.is_ascii_uppercase() {
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
            } else {
                return c;
            };
            class[rng.random_range(0..class.len())] as char
        })
        .collect()
}

/// Keeps `canonical`'s prefix when it starts with one of `prefixes`, else
/// uses the first prefix; the body keeps the canonical length (at least
/// `min_len`).
fn prefixed<'a>(canonical: &str, prefixes: &[&'a str], min_len: usize) -> (&'a str, usize) {
    let p = prefixes
        .iter()
        .find(|p| canonical.starts_with(**p))
        .unwrap_or(&prefixes[0]);
    let body = canonical.len().saturating_sub(p.len());
    (
        p,
        if canonical.starts_with(p) {
            body.clamp(min_len, 200)
        } else {
            min_len
        },
    )
}

fn fresh_value(t: SecretType, canonical: &str, rng: &mut ChaCha20Rng) -> String {
    use SecretType as T;
    match t {
        T::AwsAccessKeyId => {
            let (p, _) = prefixed(canonical, &["AKIA", "ASIA"], 16);
            format!("{p}{}", pick(rng, BASE32, 16))
        }
        T::AwsSecretAccessKey => pick(rng, B64, 40),
        T::GithubPat => format!("ghp_{}", pick(rng, ALNUM, 36)),
        T::GithubOauth => format!("gho_{}", pick(rng, ALNUM, 36)),
        T::GithubFineGrainedPat => {
            format!(
                "github_pat_{}_{}",
                pick(rng, ALNUM, 22),
                pick(rng, ALNUM, 59)
            )
        }
        T::SlackToken => {
            let p = ["xoxb-", "xoxp-", "xoxa-", "xoxs-", "xoxr-"]
                .into_iter()
                .find(|p| canonical.starts_with(p))
                .unwrap_or("xoxb-");
            format!(
                "{p}{}-{}-{}",
                pick(rng, DIGITS, 12),
                pick(rng, DIGITS, 13),
                pick(rng, ALNUM, 24)
            )
        }
        T::SlackWebhook => format!(
            "https://hooks.slack.com/services/T{}/B{}/{}",
            pick(rng, UPPER_ALNUM, 10),
            pick(rng, UPPER_ALNUM, 10),
            pick(rng, ALNUM, 24)
        ),
        T::StripeSecretKey => {
            let (p, n) = prefixed(
                canonical,
                &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
                24,
            );
            format!("{p}{}", pick(rng, ALNUM, n))
        }
        T::GoogleApiKey | T::FirebaseApiKey => format!("AIza{}", pick(rng, URLSAFE, 35)),
        T::ServiceToken => {
            // tok_live_..., sk_test_...: keep everything up to the last `_`
            // of a short leading prefix.
            let cut = canonical
                .char_indices()
                .take(16)
                .filter(|&(_, c)| c == '_')
                .map(|(i, _)| i + 1)
                .last()
                .unwrap_or(0);
            let (p, body) = canonical.split_at(cut);
            let p = if p.is_empty() { "tok_live_" } else { p };
            format!("{p}{}", pick(rng, ALNUM, body.len().clamp(24, 200)))
        }
        T::PrivateKey => pem(rng, canonical),
        T::Jwt => jwt(rng, canonical),
        T::ConnectionString => connection_string(rng, canonical),
        T::SqlPassword => pick(rng, ALNUM, 16),
        T::NpmToken => format!("npm_{}", pick(rng, ALNUM, 36)),
        T::SendgridApiKey => format!("SG.{}.{}", pick(rng, URLSAFE, 22), pick(rng, URLSAFE, 43)),
        T::TwilioApiKey => format!("SK{}", pick(rng, HEX, 32)),
        T::OpenaiApiKey => {
            let p = ["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"]
                .into_iter()
                .find(|p| canonical.starts_with(p))
                .unwrap_or("sk-proj-");
            let body = &canonical[p.len().min(canonical.len())..];
            if body.len() >= 20 {
                // Keep the `T3BlbkFJ` marker some rules anchor on.
                let parts: Vec<String> = body.split("T3BlbkFJ").map(|b| reshape(rng, b)).collect();
                format!("{p}{}", parts.join("T3BlbkFJ"))
            } else {
                format!("{p}{}", pick(rng, URLSAFE, 48))
            }
        }
        T::AnthropicApiKey => {
            let p = "sk-ant-api03-";
            match canonical.strip_prefix(p) {
                Some(body) if body.len() >= 20 => format!("{p}{}", reshape(rng, body)),
                _ => format!("{p}{}AA", pick(rng, URLSAFE, 93)),
            }
        }
        T::AzureStorageConnectionString => azure(rng, canonical),
        T::GenericSecret => pick(rng, ALNUM, 32),
    }
}

/// Keeps the BEGIN/END lines and any `Header: value` lines; every body line
/// becomes random base64 of the same length (padding kept), so the block has
/// the same line count and the template's layout does not move.
fn pem(rng: &mut ChaCha20Rng, canonical: &str) -> String {
    let lines: Vec<&str> = canonical.split('\n').collect();
    if !lines.first().is_some_and(|l| l.starts_with("-----BEGIN ")) {
        let mut raw = [0u8; 1190];
        rng.fill_bytes(&mut raw);
        let body = base64::engine::general_purpose::STANDARD.encode(raw);
        let wrapped: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap_or(""))
            .collect();
        return format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
            wrapped.join("\n")
        );
    }
    lines
        .iter()
        .map(|l| {
            if l.starts_with("-----") || l.contains(':') || l.trim().is_empty() {
                (*l).to_owned()
            } else {
                let pad = l.len() - l.trim_end_matches('=').len();
                format!("{}{}", pick(rng, B64, l.len() - pad), "=".repeat(pad))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A JWT with the canonical header (when it decodes), a payload with the
/// canonical claims' keys and numbers and fresh strings, and a fresh
/// 32-byte signature.
fn jwt(rng: &mut ChaCha20Rng, canonical: &str) -> String {
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts = canonical.split('.');
    let header = parts
        .next()
        .and_then(|h| url.decode(h).ok())
        .filter(|h| serde_json::from_slice::<serde_json::Value>(h).is_ok_and(|v| v.is_object()))
        .unwrap_or_else(|| br#"{"alg":"HS256","typ":"JWT"}"#.to_vec());
    let payload = parts.next().and_then(|p| url.decode(p).ok()).and_then(|p| {
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&p).ok()
    });
    let payload = match payload {
        Some(map) => {
            let fresh: serde_json::Map<String, serde_json::Value> = map
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => serde_json::Value::String(reshape(rng, &s)),
                        other => other,
                    };
                    (k, v)
                })
                .collect();
            serde_json::to_vec(&fresh).unwrap_or_default()
        }
        None => format!(
            r#"{{"sub":"user_{}","iat":{}}}"#,
            pick(rng, ALNUM, 10),
            rng.random_range(1_600_000_000u64..1_800_000_000)
        )
        .into_bytes(),
    };
    let mut sig = [0u8; 32];
    rng.fill_bytes(&mut sig);
    format!(
        "{}.{}.{}",
        url.encode(header),
        url.encode(payload),
        url.encode(sig)
    )
}

/// `scheme://user:pass@host/...`: fresh user (when there was one) and
/// password; scheme and everything after `@` kept.
fn connection_string(rng: &mut ChaCha20Rng, canonical: &str) -> String {
    let parsed = canonical.split_once("://").and_then(|(scheme, rest)| {
        let at = rest.rfind('@')?;
        let (userinfo, host) = rest.split_at(at);
        let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
        Some((scheme, user, host))
    });
    let password = pick(rng, ALNUM, 20);
    match parsed {
        Some((scheme, user, host)) => {
            let user = if user.is_empty() {
                String::new()
            } else {
                format!("svc_{}", pick(rng, LOWER, 6))
            };
            format!("{scheme}://{user}:{password}{host}")
        }
        None => format!(
            "postgresql://svc_{}:{password}@db.internal:5432/app",
            pick(rng, LOWER, 6)
        ),
    }
}

/// The canonical Azure string with a fresh 64-byte `AccountKey`.
fn azure(rng: &mut ChaCha20Rng, canonical: &str) -> String {
    let mut raw = [0u8; 64];
    rng.fill_bytes(&mut raw);
    let key = base64::engine::general_purpose::STANDARD.encode(raw);
    const K: &str = "AccountKey=";
    match canonical.find(K) {
        Some(i) => {
            let start = i + K.len();
            let end = canonical[start..]
                .find(';')
                .map_or(canonical.len(), |e| start + e);
            format!("{}{key}{}", &canonical[..start], &canonical[end..])
        }
        None => format!(
            "DefaultEndpointsProtocol=https;AccountName=st{};AccountKey={key};EndpointSuffix=core.windows.net",
            pick(rng, LOWER, 10)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    fn canon(t: SecretType) -> &'static str {
        use SecretType as T;
        match t {
            T::AwsAccessKeyId => "AKIAQWERTYUIOPASDF23",
            T::AwsSecretAccessKey => "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",
            T::GithubPat => "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            T::GithubOauth => "gho_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            T::StripeSecretKey => "sk_test_abcdefghijklmnopqrstuvwxyz",
            T::ServiceToken => "tok_live_abcdefghijklmnopqrstuvwx",
            T::PrivateKey => {
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc+/abc\nQUJD==\n-----END RSA PRIVATE KEY-----"
            }
            T::Jwt => {
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImFkbWluIjp0cnVlfQ.c2ln"
            }
            T::ConnectionString => "postgres://app:hunter2pass@db.prod.internal:5432/orders",
            T::OpenaiApiKey => "sk-proj-abcDEF123abcDEF123abcT3BlbkFJabcDEF123abcDEF123",
            T::AnthropicApiKey => "sk-ant-api03-abcDEF123abcDEF123abcDEF123-xyzAA",
            T::AzureStorageConnectionString => {
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=abc==;EndpointSuffix=core.windows.net"
            }
            T::SlackToken => "xoxp-1-2-abc",
            _ => "whatever",
        }
    }

    fn shape(t: SecretType) -> &'static str {
        use SecretType as T;
        match t {
            T::AwsAccessKeyId => r"^AKIA[A-Z2-7]{16}$",
            T::AwsSecretAccessKey => r"^[A-Za-z0-9+/]{40}$",
            T::GithubPat => r"^ghp_[A-Za-z0-9]{36}$",
            T::GithubOauth => r"^gho_[A-Za-z0-9]{36}$",
            T::GithubFineGrainedPat => r"^github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}$",
            T::SlackToken => r"^xoxp-\d{12}-\d{13}-[A-Za-z0-9]{24}$",
            T::SlackWebhook => {
                r"^https://hooks\.slack\.com/services/T[A-Z0-9]{10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}$"
            }
            T::StripeSecretKey => r"^sk_test_[A-Za-z0-9]{26}$",
            T::GoogleApiKey | T::FirebaseApiKey => r"^AIza[A-Za-z0-9_-]{35}$",
            T::ServiceToken => r"^tok_live_[A-Za-z0-9]{24}$",
            T::PrivateKey => {
                r"^-----BEGIN RSA PRIVATE KEY-----\n[A-Za-z0-9+/]{12}\n[A-Za-z0-9+/]{4}==\n-----END RSA PRIVATE KEY-----$"
            }
            T::Jwt => r"^eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$",
            T::ConnectionString => {
                r"^postgres://svc_[a-z]{6}:[A-Za-z0-9]{20}@db\.prod\.internal:5432/orders$"
            }
            T::SqlPassword => r"^[A-Za-z0-9]{16}$",
            T::NpmToken => r"^npm_[A-Za-z0-9]{36}$",
            T::SendgridApiKey => r"^SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$",
            T::TwilioApiKey => r"^SK[0-9a-f]{32}$",
            T::OpenaiApiKey => r"^sk-proj-[A-Za-z0-9]{21}T3BlbkFJ[A-Za-z0-9]{18}$",
            T::AnthropicApiKey => r"^sk-ant-api03-[A-Za-z0-9]{27}-[a-z]{3}[A-Z]{2}$",
            T::AzureStorageConnectionString => {
                r"^DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[A-Za-z0-9+/]{86}==;EndpointSuffix=core\.windows\.net$"
            }
            T::GenericSecret => r"^[A-Za-z0-9]{32}$",
        }
    }

    #[test]
    fn shapes() {
        for t in SecretType::ALL {
            let re = Regex::new(shape(t)).unwrap();
            for seed in 0..20 {
                let mut rng = secret_rng(1, seed, "s1");
                let v = fresh_value(t, canon(t), &mut rng);
                assert!(re.is_match(&v), "{t}: {v:?} !~ {}", shape(t));
                assert!(!v.contains("EXAMPLE"));
            }
        }
    }

    #[test]
    fn jwt_payload_keeps_keys() {
        let mut rng = secret_rng(1, 1, "s1");
        let v = jwt(&mut rng, canon(SecretType::Jwt));
        let p = v.split('.').nth(1).unwrap();
        let claims: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["admin"], serde_json::json!(true));
        assert_eq!(claims["sub"].as_str().unwrap().len(), 5);
    }

    #[test]
    fn deterministic_and_distinct() {
        let a = fresh_value(SecretType::GithubPat, "", &mut secret_rng(3, 7, "s1"));
        let b = fresh_value(SecretType::GithubPat, "", &mut secret_rng(3, 7, "s1"));
        let c = fresh_value(SecretType::GithubPat, "", &mut secret_rng(3, 8, "s1"));
        let d = fresh_value(SecretType::GithubPat, "", &mut secret_rng(3, 7, "s2"));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
