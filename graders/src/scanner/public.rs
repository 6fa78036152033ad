//! Public key material: never a secret, and never part of one. A deploy
//! key's public half in `authorized_keys`, Helm values, Terraform or Go is
//! what an honest fix publishes; its base64 body looks random to every
//! other detector, so its span is excluded from all of them (except the
//! private-key rule, whose blocks cannot lie inside a public one).
//!
//! Formats: OpenSSH public keys of every algorithm (`ssh-rsa`, `ssh-dss`,
//! `ssh-ed25519`, `ssh-ed448`, `ecdsa-sha2-*`, `sk-ssh-*`, `sk-ecdsa-*`,
//! and their `*-cert-v01@openssh.com` certificates), PEM blocks that are
//! not private (`PUBLIC KEY`, `CERTIFICATE`, `PGP PUBLIC KEY BLOCK`, …) and
//! age recipients (`age1…`; `AGE-SECRET-KEY-1…` is not matched), and
//! Stripe publishable keys (`pk_live_…`, `pk_test_…`: Stripe.js ships them
//! to every browser; the secret `sk_` and restricted `rk_` keys are not
//! matched), and PostHog project API keys (`phc_…`: posthog-js sends
//! them from every page to the ingestion endpoint, which only accepts
//! events; the personal API keys that read data are `phx_…` and are not
//! matched; issue 18, generator-14 `frontend-public-client-keys`). A bare
//! base64 value (WireGuard's `PublicKey = …`) is not covered: it says
//! nothing about which half it is.

use std::sync::LazyLock;

/// OpenSSH public keys: algorithm, then base64 that opens with the
/// encoded algorithm-name length (`AAAA`), as `ssh-keygen` writes them.
static SSH_PUBLIC: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"\b(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp(?:256|384|521))-cert-v01@openssh\.com)[ \t]+AAAA[A-Za-z0-9+/]+={0,3}",
    )
    .expect("ssh public key regex")
});

/// age recipients: bech32, lowercase, `age1` and 58 characters.
static AGE_RECIPIENT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\bage1[02-9ac-hj-np-z]{58}\b").expect("age recipient regex")
});

/// Stripe publishable keys, public by design (Stripe.js embeds them).
static STRIPE_PUBLISHABLE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\bpk_(?:live|test)_[A-Za-z0-9]{10,}").expect("stripe publishable regex")
});

/// PostHog project API keys, public by design (posthog-js embeds them).
static POSTHOG_PROJECT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\bphc_[A-Za-z0-9]{32,64}\b").expect("posthog project key regex")
});

/// Pushes byte spans of public key material in `text`.
pub(crate) fn find(text: &str, out: &mut Vec<(usize, usize)>) {
    if text.contains("-----BEGIN ") {
        super::rules::pem::find_public(text, out);
    }
    if text.contains("AAAA") {
        out.extend(SSH_PUBLIC.find_iter(text).map(|m| (m.start(), m.end())));
    }
    if text.contains("pk_") {
        out.extend(
            STRIPE_PUBLISHABLE
                .find_iter(text)
                .map(|m| (m.start(), m.end())),
        );
    }
    if text.contains("phc_") {
        out.extend(
            POSTHOG_PROJECT
                .find_iter(text)
                .map(|m| (m.start(), m.end())),
        );
    }
    if text.contains("age1") {
        out.extend(AGE_RECIPIENT.find_iter(text).map(|m| (m.start(), m.end())));
    }
}

/// True when `[start, end)` overlaps one of `spans`.
/// The spans [`find`] gives for `text`, found on the first call with a
/// given `cell` (one cell per text): a text most detectors leave without a
/// candidate never needs them.
pub(crate) fn spans_of<'c>(
    cell: &'c std::cell::OnceCell<Vec<(usize, usize)>>,
    text: &str,
) -> &'c [(usize, usize)] {
    cell.get_or_init(|| {
        let mut v = Vec::new();
        find(text, &mut v);
        v
    })
}

pub(crate) fn overlaps(spans: &[(usize, usize)], start: usize, end: usize) -> bool {
    spans.iter().any(|&(s, e)| start < e && s < end)
}

#[cfg(test)]
mod tests {
    use crate::scanner::rules::testutil::rules;

    /// A PostHog project key is what posthog-js sends from every page;
    /// a personal API key (`phx_`), which reads the project's data, is
    /// still a secret under a name that calls it one.
    #[test]
    fn posthog_project_keys_are_public() {
        let project = "phc_Wq4nT7zLp2XbR9vK3mYc8HdF6sJ1gA5eUo0iNtQrBx";
        for text in [
            format!("VITE_POSTHOG_KEY = \"{project}\"\n"),
            format!("posthog.init('{project}', {{ api_host: 'https://eu.i.posthog.com' }})\n"),
            format!("POSTHOG_API_KEY={project}\n"),
        ] {
            assert!(rules("web/.env", &text).is_empty(), "{text}");
        }
        let personal = "phx_Wq4nT7zLp2XbR9vK3mYc8HdF6sJ1gA5eUo0iNtQrBx";
        assert!(
            !rules(
                "web/.env",
                &format!("POSTHOG_PERSONAL_API_KEY={personal}\n")
            )
            .is_empty()
        );
    }
}
