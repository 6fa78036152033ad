//! OpenPGP key ids and fingerprints: 16 or 40 hex digits (or the 40 in
//! ten groups of four) that a Dockerfile, CI script or install guide
//! checks a download's signature against (`gpg --recv-keys
//! 9F671D40…`, `ENV TINI_KEY=…` then `--recv-keys "$TINI_KEY"`, `grep -q
//! "C3EC…"` over `gpg --with-fingerprint` output). A fingerprint names a
//! *public* key; it is published so that anyone can check against it
//! (generator-6, `gpg-fingerprint-keyids`).
//!
//! A hex run of that length is one when an OpenPGP word ([`GPG_WORDS`])
//! is on its line or within [`NEAR_LINES`] lines of it, and the name it is
//! assigned to (if any) does not call it a secret, token or password
//! (`GPG_PASSPHRASE=…` is judged as before). The spans silence only the
//! generic detectors ([`super::inert`]).

use std::sync::LazyLock;

/// Words (lowercase) of OpenPGP tooling and its vocabulary.
const GPG_WORDS: &[&str] = &[
    "gpg",
    "gnupg",
    "pgp",
    "--recv-key",
    "keyserver",
    "fingerprint",
    "keyid",
    "key_id",
    "key-id",
];

/// Lines around the value searched for [`GPG_WORDS`].
const NEAR_LINES: usize = 3;

/// Words that, in the name a value is assigned to, make it a secret.
const SECRET_NAME: &[&str] = &["pass", "secret", "token", "pwd", "private"];

/// Key ids (16 hex), fingerprints (40 hex, whole or in groups of four),
/// each in one case.
static KEY_ID: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"\b(?:[0-9A-F]{40}|[0-9a-f]{40}|[0-9A-F]{16}|[0-9a-f]{16}|(?:[0-9A-F]{4} {1,2}){9}[0-9A-F]{4})\b",
    )
    .expect("key id regex")
});

/// Pushes the spans of OpenPGP key ids and fingerprints in `text`.
pub(crate) fn find(text: &str, lower: &str, out: &mut Vec<(usize, usize)>) {
    if !GPG_WORDS.iter().any(|w| lower.contains(w)) {
        return;
    }
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    for m in KEY_ID.find_iter(text) {
        let line = starts.partition_point(|&s| s <= m.start()) - 1;
        let from = starts[line.saturating_sub(NEAR_LINES)];
        let to = starts
            .get(line + NEAR_LINES + 1)
            .copied()
            .unwrap_or(text.len());
        let near = &lower[from..to];
        if !GPG_WORDS.iter().any(|w| near.contains(w)) {
            continue;
        }
        let head = &lower[starts[line]..m.start()];
        let name = head
            .rsplit(['=', ':'])
            .nth(1)
            .unwrap_or("")
            .rsplit(|c: char| c.is_whitespace())
            .next()
            .unwrap_or("");
        if SECRET_NAME.iter().any(|w| name.contains(w)) {
            continue;
        }
        out.push((m.start(), m.end()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scanner::{ScanConfig, Scanner};

    fn spans(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        find(text, &text.to_ascii_lowercase(), &mut out);
        out.into_iter().map(|(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn key_ids_and_fingerprints_near_openpgp_words() {
        let fp = "9F671D407B94941C0D3106366981582EB65F449C";
        let t = format!(
            "# Release key of the tini project\nENV TINI_KEY={fp}\nRUN gpg --batch --keyserver hkps://keys.openpgp.org --recv-keys \"$TINI_KEY\"\n"
        );
        assert_eq!(spans(&t), vec![fp]);
        let t = "gpg --show-keys f.gpg | grep -q \"C3ECA438DCABDE6B623FD8B89545083BE3BA9D3A\"";
        assert_eq!(spans(t).len(), 1);
        let t = "Key fingerprint = 0A46 826A 5E90 8A21 5A06  23D4 7A66 4E79 5B3C 1D92\n";
        assert_eq!(spans(t).len(), 1);
        assert_eq!(spans("gpg --recv-keys 7A664E795B3C1D92\n").len(), 1);
    }

    #[test]
    fn hex_secrets_are_not_key_ids() {
        // No OpenPGP word near it.
        assert!(spans("API_SECRET=9F671D407B94941C0D3106366981582EB65F449C\n").is_empty());
        // Named a secret, next to gpg.
        let t =
            "GPG_PASSPHRASE=9F671D407B94941C0D3106366981582EB65F449C\nRUN gpg --import key.asc\n";
        assert!(spans(t).is_empty());
        // "signing key" alone is no OpenPGP word: HMAC keys are signing keys.
        let t = "# webhook signing key\nSIGNING_KEY=9F671D407B94941C0D3106366981582EB65F449C\n";
        assert!(spans(t).is_empty());
        // Mixed case is no fingerprint.
        assert!(spans("gpg: 9f671D407B94941C0D3106366981582EB65F449C").is_empty());
    }

    #[test]
    fn scans_report_secrets_beside_gpg_but_not_fingerprints() {
        let s = Scanner::new(ScanConfig::default());
        let fp = "ENV TINI_KEY=9F671D407B94941C0D3106366981582EB65F449C\nRUN gpg --batch --keyserver hkps://keys.openpgp.org --recv-keys \"$TINI_KEY\"\n";
        assert!(
            s.scan_bytes("docker/base/Dockerfile", fp.as_bytes())
                .is_empty()
        );
        let secret = "ENV GPG_PASSPHRASE=q8Vn2LxR7mK4pT9wZ3bY6cF1hJ5sD0gA\nRUN gpg --batch --import key.asc\n";
        assert_eq!(
            s.scan_bytes("docker/base/Dockerfile", secret.as_bytes())
                .len(),
            1
        );
    }
}
