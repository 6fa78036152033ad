//! Issuer tokens the random-token rule cannot see (issue 18, generator-7
//! `notebook-source-key`, `fixture-live-key`): a Telegram bot token's
//! 35-character secret is URL-safe base64 whose `-` and `_` split it into
//! parts shorter than the rule judges, and a Databricks personal access
//! token is `dapi` and 32 hex digits, read as a hex run of too little
//! entropy with a word glued on. Both formats are exact (length,
//! alphabet, fixed parts), so they need no name.
//!
//! A Web Push VAPID private key (generator-8 `web-push-vapid-private-key`)
//! is a P-256 private scalar: 32 bytes, 43 characters of unpadded
//! URL-safe base64 whose `-` and `_` split it the same way. It has no
//! format of its own, so it is found where the protocol puts it: the third
//! argument of `setVapidDetails(subject, publicKey, privateKey)` (the
//! `web-push` library, whose public key is 65 bytes, 87 characters from
//! `B`), or a value named a VAPID private key.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "telegram-bot-token",
        secret_type: "telegram_bot_token",
        description: "Telegram bot API token (bot id, `:AA`, 33 URL-safe base64 characters)",
        keywords: &[":aa"],
        pattern: r"(?:^|[^0-9A-Za-z_:/-])([0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?:[^A-Za-z0-9_-]|$)",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "vapid-private-key",
        secret_type: "private_key",
        description: "Web Push VAPID private key (43-character base64url P-256 scalar) in setVapidDetails or under a VAPID private-key name",
        keywords: &["vapid"],
        pattern: r#"(?i:setVapidDetails\s*\(\s*(?:'[^'\n]*'|"[^"\n]*"|`[^`\n]*`|[^,()\n]+)\s*,\s*(?:['"`]B[A-Za-z0-9_-]{86}['"`]|[A-Za-z_][\w.\[\]'"]*)\s*,\s*['"`]|vapid[_.-]?private[_-]?key['"]?\s*[:=]\s*['"]?)([A-Za-z0-9_-]{43})(?:[^A-Za-z0-9_=-]|$)"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "databricks-token",
        secret_type: "databricks_token",
        description: "Databricks personal access token (dapi + 32 hex)",
        keywords: &["dapi"],
        pattern: r"\b(dapi[a-f0-9]{32}(?:-[0-9])?)\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
];

#[cfg(test)]
mod tests {
    use crate::scanner::{ScanConfig, Scanner};

    /// Values of `ty` found in `input` by a scan.
    fn found(ty: &str, input: &str) -> Vec<String> {
        Scanner::new(ScanConfig::default())
            .scan_bytes("config/app.env", input.as_bytes())
            .into_iter()
            .filter(|f| f.secret_type == ty)
            .map(|f| f.value)
            .collect()
    }

    #[test]
    fn vapid_private_keys() {
        const PUB: &str = "BEgcZNDOuzdIu1b7yE0bYPLJwYzaPJ-1mIIa4rKI8pV8ZUQcArCFLeuAaR90P8IBEM_JZAgrB8ljPepo29M2tI8";
        const PRIV: &str = "06_2MtFXttmZp6TXucl0VD_nVTaK2BP7gotr0_NF6X0";
        for input in [
            format!(
                "webpush.setVapidDetails(\n  'mailto:ops@example.com',\n  '{PUB}',\n  '{PRIV}'\n);\n"
            ),
            format!("webpush.setVapidDetails(subject, keys.publicKey, \"{PRIV}\");\n"),
            format!("VAPID_PRIVATE_KEY={PRIV}\n"),
            format!("  vapidPrivateKey: '{PRIV}',\n"),
        ] {
            assert_eq!(found("private_key", &input), [PRIV], "{input}");
        }
        for input in [
            // The private key read from the environment; the public key alone.
            format!(
                "webpush.setVapidDetails('mailto:a@b.c', '{PUB}', process.env.VAPID_PRIVATE_KEY);\n"
            ),
            format!("const VAPID_PUBLIC_KEY = \"{PUB}\";\n"),
            "VAPID_PRIVATE_KEY=<your-vapid-private-key-here-43-characters-x>\n".to_string(),
        ] {
            assert!(found("private_key", &input).is_empty(), "{input}");
        }
    }

    #[test]
    fn telegram_bot_tokens() {
        for (input, want) in [
            (
                "    \"BOT = \\\"0054490884:AArN-TI2cBhb6WEh1Od-xun_47CSykesD_L\\\"\\n\",",
                "0054490884:AArN-TI2cBhb6WEh1Od-xun_47CSykesD_L",
            ),
            (
                "TELEGRAM_TOKEN=7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM",
                "7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM",
            ),
        ] {
            assert_eq!(found("telegram_bot_token", input), [want], "{input}");
        }
        for input in [
            // Glued to a word and one character short; one too many.
            "bot110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw",
            "0054490884:AArN-TI2cBhb6WEh1Od-xun_47CSykesD_Lx",
            "https://api.telegram.org/bot{BOT}/sendMessage",
        ] {
            assert!(found("telegram_bot_token", input).is_empty(), "{input}");
        }
    }

    #[test]
    fn databricks_tokens() {
        for (input, want) in [
            (
                "\"value\": \"dapiacef321812fdc96528d49224a1af1004\"",
                "dapiacef321812fdc96528d49224a1af1004",
            ),
            (
                "DATABRICKS_TOKEN=dapi9f2c4e7a1b3d5f60a8e7c6b5d4f3e2a1-2",
                "dapi9f2c4e7a1b3d5f60a8e7c6b5d4f3e2a1-2",
            ),
        ] {
            assert_eq!(found("databricks_token", input), [want], "{input}");
        }
        for input in [
            "dapi0123456789abcdef",
            "dapiacef321812fdc96528d49224a1af10045",
            "xdapiacef321812fdc96528d49224a1af1004",
        ] {
            assert!(found("databricks_token", input).is_empty(), "{input}");
        }
    }
}
