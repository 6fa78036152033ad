//! Credentials in the syntax of a daemon's, framework's or tool's own
//! configuration, where no credential word names the value (issue 18,
//! generator-10): each rule is a documented setting or call whose value
//! *is* the secret, so the setting's name is the context.
//! - Erlang distribution cookies (`-setcookie <cookie>` in `vm.args` or an
//!   `erl` command line): whoever has it can run code on the node;
//! - WordPress authentication keys and salts (`define('LOGGED_IN_KEY',
//!   '…')`): they sign every login cookie;
//! - private JSON Web Keys: a JWK with `"kty"` and a private member `"d"`;
//! - Kerberos keys printed by `klist -K` (`principal@REALM (0x<key>)`);
//! - Consul ACL tokens in the agent's `tokens { … }` block and its gossip
//!   `encrypt` key (base64 of 32 bytes);
//! - PagerDuty integration keys in an Alertmanager `pagerduty_configs`
//!   block (`routing_key`, `service_key`, on the indented lines after
//!   it): a bare `routing_key` elsewhere
//!   is a message broker's routing key ([`crate::scanner::naming`]);
//! - Bundler host credentials (`BUNDLE_GEMS__EXAMPLE__COM: "user:token"`,
//!   a host name with `.` written `__`);
//! - calls that authenticate with a literal: a method named `auth`
//!   (Redis clients' `red:auth("…")`, `client.auth('…')`) and a setter
//!   named for a user and a password (paho-mqtt's `username_pw_set(user,
//!   "…")`), whose last literal argument is the password;
//! - Honeycomb API keys in the `X-Honeycomb-Team` header Honeycomb reads
//!   them from (issue 18, generator-14 `otel-collector-exporter-auth`:
//!   an OpenTelemetry Collector exporter's `headers:`), in the key
//!   formats Honeycomb documents: an ingest key (`hc`, a letter, `ik_`
//!   and 58), a configuration key (22 alphanumerics) or a classic key
//!   (32 hex). The header's name carries no credential word, and it is
//!   the whole context: a value it is given is a key.
//!
//! Values are judged as the credential-assignment rule judges literals
//! ([`literal`]): words, fixtures, references and sentences are not secrets.
use super::RuleDef;

/// A literal that can be a credential: not word-like, a fixture, a
/// reference, an environment lookup or natural language.
fn literal(v: &str) -> bool {
    use crate::scanner::{declared, prose, words};
    !(words::is_word_like(v, true)
        || words::is_fixture(v)
        || words::is_reference(v)
        || declared::is_env_lookup(v)
        || prose::is_natural_language(v)
        || v.starts_with('-')
        || v.contains("//"))
}

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "erlang-cookie",
        secret_type: "generic_secret",
        description: "Erlang distribution cookie (-setcookie in vm.args or an erl command line)",
        keywords: &["-setcookie"],
        pattern: r#"(?m)(?:^|[ \t])-setcookie[ \t]+['"]?([^\s'"]{8,255})"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(literal),
        gate: None,
    },
    RuleDef {
        name: "wordpress-secret-key",
        secret_type: "generic_secret",
        description: "WordPress authentication key or salt (define('AUTH_KEY', ...))",
        keywords: &["define"],
        pattern: r#"define\(\s*['"](?:(?:SECURE_)?AUTH|LOGGED_IN|NONCE)_(?:KEY|SALT)['"]\s*,\s*['"]([^'"\n]{32,128})['"]\s*\)"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(literal),
        gate: None,
    },
    RuleDef {
        name: "jwk-private-key",
        // Not `private_key`, which is PEM (tasks/FORMAT.md).
        secret_type: "generic_secret",
        description: "Private JSON Web Key (a JWK with its private member \"d\")",
        keywords: &["\"kty\""],
        pattern: r#""kty"\s*:\s*"(?:EC|OKP|RSA)"[^{}]*?"d"\s*:\s*"([A-Za-z0-9_-]{32,})""#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "kerberos-key-dump",
        secret_type: "generic_secret",
        description: "Kerberos key printed by klist -K (principal@REALM (0x...))",
        keywords: &["(0x"],
        pattern: r"(?m)^[ \t]*\d+[ \t]+(?:\S+[ \t]+){0,3}\S+@[A-Za-z0-9.-]+[ \t]+(?:\([A-Za-z0-9-]+\)[ \t]+)?\(0x([0-9a-fA-F]{32,128})\)",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "consul-acl-token",
        secret_type: "generic_secret",
        description: "Consul ACL token in the agent's tokens block",
        keywords: &["tokens"],
        pattern: r#""?tokens"?\s*[=:]?\s*\{[^{}]*?\b(?:initial_management|agent_recovery|agent_master|master|agent|replication|default|dns|config_file_service_registration)"?\s*[=:]\s*"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})""#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "consul-gossip-key",
        secret_type: "generic_secret",
        description: "Consul gossip encryption key (encrypt = base64 of 32 bytes)",
        keywords: &["encrypt"],
        pattern: r#"(?m)^[ \t]*"?encrypt"?[ \t]*[=:][ \t]*"([A-Za-z0-9+/]{43}=)""#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "pagerduty-integration-key",
        secret_type: "generic_secret",
        description: "PagerDuty integration key in an Alertmanager pagerduty_configs block",
        keywords: &["pagerduty_configs"],
        pattern: r#"pagerduty_configs:[^\n]*\n(?:[ \t]+[^\n]*\n){0,8}?[ \t]+(?:-[ \t]+)?(?:routing|service)_key:[ \t]*["']?([0-9a-zA-Z]{32})\b"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "bundler-credential",
        secret_type: "generic_secret",
        description: "Bundler gem source credential (BUNDLE_HOST__NAME__COM: user:token)",
        keywords: &["bundle_"],
        pattern: r#"(?m)^[ \t]*(?:export[ \t]+)?BUNDLE_[A-Z0-9_]*[A-Z0-9]__[A-Z0-9][A-Z0-9_]*["']?[ \t]*[:=][ \t]*["']?([^\s"';&]{8,256})"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(literal),
        gate: None,
    },
    RuleDef {
        name: "auth-call",
        secret_type: "generic_secret",
        description: "A literal password passed to an auth or user/password setter call (red:auth, username_pw_set)",
        keywords: &["auth(", "auth (", "_pw", "pw_", "userpass", "user_pass"],
        pattern: r#"(?i)(?:[.:]auth\s*\(\s*|\b[a-z_]*user(?:name)?_?(?:pw|pass|password)(?:_?set)?\s*\(\s*["'][^"'\n]{1,64}["']\s*,\s*)["']([^"'\s]{6,128})["']\s*\)"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(literal),
        gate: None,
    },
    RuleDef {
        name: "honeycomb-api-key",
        secret_type: "honeycomb_api_key",
        description: "Honeycomb API key given to the X-Honeycomb-Team header",
        keywords: &["x-honeycomb-team"],
        pattern: r#"(?i)\bx-honeycomb-team["'`]?[ \t]*[:=,][ \t]*["'`]?(hc[a-z]ik_[a-z0-9]{58}|[a-f0-9]{32}|[a-z0-9]{22})(?:[^a-z0-9_-]|$)"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(literal),
        gate: None,
    },
];

#[cfg(test)]
mod tests {
    use crate::scanner::{ScanConfig, Scanner};

    #[test]
    fn daemon_and_framework_settings() {
        fires(&[
            (
                "## Cookie\n-setcookie KZEYCRZNQDMDIDFBSXZR\n",
                "KZEYCRZNQDMDIDFBSXZR",
            ),
            (
                "define( 'LOGGED_IN_KEY', '!+<{9-+b0=XP1PrcU[5nt%y%JB.bg|yib8b(,H,cs<r+rCI3' );",
                "!+<{9-+b0=XP1PrcU[5nt%y%JB.bg|yib8b(,H,cs<r+rCI3",
            ),
            (
                "   3 host/a.example.com@EXAMPLE.COM (0x574c7678d4ef4ef0adf3f4d26f4338112bf24cecae64fee882cddd219a8cd833)\n",
                "574c7678d4ef4ef0adf3f4d26f4338112bf24cecae64fee882cddd219a8cd833",
            ),
            (
                "acl {\n  tokens {\n    initial_management = \"ef602ed5-6dff-4580-8251-dc3e4e25fb1c\"\n  }\n}\n",
                "ef602ed5-6dff-4580-8251-dc3e4e25fb1c",
            ),
            (
                "encrypt = \"pUqJrVyVRj5jsiYEkM/tFQYfWyJIv4s3XkvDwy7Cu5s=\"\n",
                "pUqJrVyVRj5jsiYEkM/tFQYfWyJIv4s3XkvDwy7Cu5s=",
            ),
            (
                "    pagerduty_configs:\n      - routing_key: 1b21abdecb1f36372a14e3b08374dc6c\n",
                "1b21abdecb1f36372a14e3b08374dc6c",
            ),
            (
                "BUNDLE_GEMS__CONTRIBSYS__COM: \"ad51c19e:3bd1bbe7\"\n",
                "ad51c19e:3bd1bbe7",
            ),
            (
                "local res, err = red:auth(\"QIMJ.6nvnvb.OaDIw352\")",
                "QIMJ.6nvnvb.OaDIw352",
            ),
            (
                "client.username_pw_set(\"telemetry\", \"udf6kOkDHJ4fFViPwgAsE8tMPBv\")",
                "udf6kOkDHJ4fFViPwgAsE8tMPBv",
            ),
            (
                "exporters:\n  otlp:\n    headers:\n      x-honeycomb-team: Qd7TnW2xKp9RfL4vZc8MbJ\n",
                "Qd7TnW2xKp9RfL4vZc8MbJ",
            ),
            (
                "req.Header.Set(\"X-Honeycomb-Team\", \"hcxik_01hq2w3e4r5t6y7u8i9o0pasdfghjklzxcvbnmqwertyuiop1234567abc\")",
                "hcxik_01hq2w3e4r5t6y7u8i9o0pasdfghjklzxcvbnmqwertyuiop1234567abc",
            ),
        ]);
        quiet(&[
            ("-setcookie $ERLANG_COOKIE\n", "a reference"),
            (
                "define( 'AUTH_KEY', 'put your unique phrase here' );",
                "WordPress's placeholder",
            ),
            (
                "define( 'AUTH_KEY', getenv('WP_AUTH_KEY') );",
                "read from env",
            ),
            (
                "tokens {\n  initial_management = \"${var.token}\"\n}\n",
                "a reference",
            ),
            (
                "exchange:\n  routing_key: orders.created.v1\n",
                "an AMQP routing key",
            ),
            (
                "  pagerduty_configs:\n    - routing_key_file: /etc/pd\namqp:\n  routing_key: 0f3a9c7e2b1d4a6f8e5c3b2a1d0e9f8c\n",
                "a routing key outside the pagerduty block",
            ),
            ("BUNDLE_WITHOUT: \"development:test\"\n", "a setting"),
            (
                "BUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/: \"https://gems.example.com\"\n",
                "a mirror",
            ),
            ("passport.authenticate('local')", "a strategy name"),
            ("client.auth(\"Bearer\")", "a word"),
            (
                "client.username_pw_set(\"telemetry\", os.environ[\"MQTT_PW\"])",
                "not a literal",
            ),
            (
                "    headers:\n      x-honeycomb-team: ${env:HONEYCOMB_API_KEY}\n",
                "a reference",
            ),
            (
                "curl -H 'X-Honeycomb-Team: Qd7TnW2xKp9RfL4vZc8MbJx' https://api.honeycomb.io\n",
                "no Honeycomb key format (23 characters)",
            ),
        ]);
        fires(&[(
            r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "Cw1VKSo3hA9AISW-Qrtr5vC7xQI2p4wY38-noZEbgLQ", "d": "0406bA9hZZyMCCsLecZxbFrxdFKq8Qm8mVCr7QECkWg"}]}"#,
            "0406bA9hZZyMCCsLecZxbFrxdFKq8Qm8mVCr7QECkWg",
        )]);
        quiet(&[(
            r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "Cw1VKSo3hA9AISW-Qrtr5vC7xQI2p4wY38-noZEbgLQ"}]}"#,
            "a public JWK",
        )]);
    }

    /// One of these rules reports exactly the value, in a default scan.
    fn fires(cases: &[(&str, &str)]) {
        let s = Scanner::new(ScanConfig::default());
        for (input, want) in cases {
            let f = s.scan_bytes("config/app.conf", input.as_bytes());
            assert!(
                f.iter()
                    .any(|f| f.value == *want && super::RULES.iter().any(|r| r.name == f.rule)),
                "missed: {input:?} want {want:?}, got {f:?}"
            );
        }
    }

    /// None of these rules fires on the inputs.
    fn quiet(cases: &[(&str, &str)]) {
        let s = Scanner::new(ScanConfig::default());
        for (input, reason) in cases {
            let f = s.scan_bytes("config/app.conf", input.as_bytes());
            assert!(
                !f.iter()
                    .any(|f| super::RULES.iter().any(|r| r.name == f.rule)),
                "FP ({reason}): {input:?} gave {f:?}"
            );
        }
    }
}
