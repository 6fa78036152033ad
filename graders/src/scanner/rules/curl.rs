//! Passwords on a command line: curl's basic auth (`curl -u user:password`
//! or `--user user:password`) and the MySQL clients' `-p<password>` /
//! `--password=<password>` (shell scripts, Dockerfiles, CI steps, runbooks).
//! `mysql -p` followed by a space prompts for the password: the next word
//! is the database, not a password, and is not matched.
//! Round 4 of the third generator added the same shape in more tools and
//! call forms: `docker`/`podman`/`helm registry` `login -p <password>`
//! (`--password-stdin` reads a pipe and is not matched), the password
//! (fifth) field of a `.pgpass` line, a `psk=` of `wpa_supplicant.conf`,
//! the `secret=` of an `otpauth://` URI (a TOTP/HOTP seed), a
//! `requests`/`httpx` `auth=("user", "password")` tuple and JDBC's
//! `DriverManager.getConnection(url, "user", "password")`.
//! Round 5 added PowerShell's `ConvertTo-SecureString '<pw>' -AsPlainText`.
//! The password is the value; shell references (`$PASS`, `${{ secrets.X }}`,
//! `$(cat pw)`), template placeholders and word-like passwords
//! (`user:pass`, `username:password`) are not credentials.
use super::RuleDef;
use crate::scanner::words;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "curl-basic-auth",
        secret_type: "basic_auth_password",
        description: "Password in a curl -u/--user user:password argument",
        keywords: &["curl"],
        // The command may continue over `\`-ended lines; the user part may be
        // empty, either part quoted.
        pattern: r#"\bcurl\b(?:[^\n]|\\\n)*?\s(?:-u|--user)\s+['"]?[^\s'":]*['"]?:['"]?([^\s'"]{6,256})"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: None,
    },
    RuleDef {
        name: "mysql-cli-password",
        secret_type: "sql_password",
        description: "Password in a mysql/mysqldump -p<password> or --password= argument",
        keywords: &["mysql"],
        pattern: r#"\bmysql(?:dump|admin|import|sh|binlog|pump|check)?\b(?:[^\n]|\\\n)*?\s(?:-p|--password=)['"]?([^\s'"]{4,256})"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: None,
    },
    RuleDef {
        name: "registry-login-password",
        secret_type: "generic_secret",
        description: "Password in a docker/podman/helm registry login -p/--password argument",
        keywords: &["login"],
        pattern: r#"\b(?:docker|podman|buildah|skopeo|nerdctl|helm\s+registry)\s+login\b(?:[^\n]|\\\n)*?\s(?:-p|--password)(?:=|\s+)['"]?([^\s'"]{6,256})"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: None,
    },
    RuleDef {
        name: "pgpass-password",
        secret_type: "sql_password",
        description: "Password field of a PostgreSQL .pgpass line (host:port:database:user:password)",
        keywords: &[":"],
        // The port field is digits or `*`, as libpq requires; the password
        // is the rest of the line.
        // A colon in the password is written `\:`, so a line of more
        // fields (`/etc/shadow`: `daemon:*:19700:0:99999:7:::`) is not one.
        pattern: r"(?m)^[A-Za-z0-9_.*\[\]-]+:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:((?:[^\s:\\]|\\.){6,256})[ \t]*$",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: Some(may_be_pgpass),
    },
    RuleDef {
        name: "wifi-psk",
        secret_type: "generic_secret",
        description: "WPA pre-shared key (psk=) of a wpa_supplicant/NetworkManager network",
        keywords: &["psk"],
        pattern: r#"(?m)^[ \t]*psk[ \t]*=[ \t]*"?([^\s"]{8,64})"?[ \t]*$"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: None,
    },
    RuleDef {
        name: "otpauth-secret",
        secret_type: "generic_secret",
        description: "TOTP/HOTP seed in an otpauth:// URI (secret=)",
        keywords: &["otpauth://"],
        pattern: r#"otpauth://[th]otp/[^\s?"'`]*\?(?:[^\s"'`#]*&)?secret=([A-Za-z2-7]{16,128})"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_random_seed),
        gate: None,
    },
    RuleDef {
        name: "http-auth-tuple",
        secret_type: "generic_secret",
        description: "Password in a requests/httpx auth=(\"user\", \"password\") tuple",
        keywords: &["auth"],
        pattern: r#"\bauth\s*=\s*\(\s*['"][^'"\n]{1,128}['"]\s*,\s*['"]([^'"\n]{6,256})['"]\s*,?\s*\)"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: None,
    },
    RuleDef {
        name: "jdbc-connection-password",
        secret_type: "sql_password",
        description: "Password argument of JDBC DriverManager.getConnection(url, user, password)",
        keywords: &["getconnection"],
        pattern: r#"\bgetConnection\s*\(\s*[^,\n]+,\s*"[^"\n]*"\s*,\s*"([^"\n]{4,256})"\s*\)"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: None,
    },
    // Round 5: PowerShell's plaintext-to-SecureString conversion. The
    // string argument of `ConvertTo-SecureString … -AsPlainText` is the
    // password itself (`Read-Host -AsSecureString` and variables are not
    // literals and are not matched).
    RuleDef {
        name: "powershell-plaintext-password",
        secret_type: "generic_secret",
        description: "Literal password converted with ConvertTo-SecureString -AsPlainText (PowerShell)",
        keywords: &["convertto-securestring"],
        pattern: r#"(?i)\bConvertTo-SecureString\s+(?:-String\s+)?['"]([^'"\n]{6,256})['"]\s+(?:-\w+\s+)*-AsPlainText\b"#,
        group: 1,
        check_group: 0,
        context_type: None,
        validate: Some(is_literal_password),
        gate: None,
    },
];

/// Gate of the `.pgpass` rule: a line of it holds a colon followed by
/// the port field's first character, a `\d` digit or `*`. A `\d` outside
/// ASCII starts with a byte of 0x80 or more, so such a byte after a colon
/// passes too: true whenever the rule's regex can match.
fn may_be_pgpass(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b':', b).any(|i| {
        b.get(i + 1)
            .is_some_and(|&c| c.is_ascii_digit() || c == b'*' || c >= 0x80)
    })
}

/// A literal password: no shell or template reference in it, and not a
/// word (`password`, `changeme`) — a digit or symbol, or random letters.
fn is_literal_password(v: &str) -> bool {
    let b = v.as_bytes();
    let shell_ref = b.windows(2).any(|w| {
        w[0] == b'$' && (w[1].is_ascii_alphabetic() || matches!(w[1], b'{' | b'(' | b'_'))
    });
    !(shell_ref
        || v.contains(['{', '}', '<', '>', '[', ']'])
        || words::is_reference(v)
        || words::is_word_like(v, false))
}

/// Most consecutive ASCII letters a random seed is let hold before it
/// reads as text (see [`is_random_seed`]).
const MAX_SEED_LETTERS: usize = 4;
/// Most consecutive ASCII digits likewise.
const MAX_SEED_DIGITS: usize = 7;

/// True unless the base32 seed decodes to text: documentation and test
/// seeds are written by hand, as base32 of words or counting
/// (`JBSWY3DPEHPK3PXP` is `Hello!` and `DEADBEEF`, the Google
/// Authenticator key-URI docs' example; RFC 4226/6238's test seed is
/// `12345678901234567890`). A random seed holds five word letters in a row
/// (with a vowel) about once in 500 for 20 bytes, eight digits in a row
/// about never.
fn is_random_seed(seed: &str) -> bool {
    let bytes = base32_decode(seed);
    let (mut letters, mut digits, mut vowel) = (0usize, 0usize, false);
    for &c in &bytes {
        if c.is_ascii_alphabetic() {
            letters += 1;
            vowel |= b"aeiouyAEIOUY".contains(&c);
        } else {
            letters = 0;
            vowel = false;
        }
        digits = if c.is_ascii_digit() { digits + 1 } else { 0 };
        if (letters > MAX_SEED_LETTERS && vowel) || digits > MAX_SEED_DIGITS {
            return false;
        }
    }
    true
}

/// RFC 4648 base32 (case-insensitive, no padding): the whole bytes of `s`.
fn base32_decode(s: &str) -> Vec<u8> {
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0u32);
    for c in s.bytes() {
        let v = match c.to_ascii_uppercase() {
            c @ b'A'..=b'Z' => c - b'A',
            c @ b'2'..=b'7' => c - b'2' + 26,
            _ => continue,
        };
        acc = (acc << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    /// Seeds written by hand decode to text: documentation and test
    /// seeds are not secrets; random seeds are.
    #[test]
    fn otpauth_seeds_that_decode_to_text() {
        let s = crate::scanner::Scanner::new(crate::scanner::ScanConfig::default());
        let uri =
            |seed: &str| format!("otpauth://totp/Acme:alice@acme.io?secret={seed}&issuer=Acme");
        for seed in [
            "JBSWY3DPEHPK3PXP",                 // "Hello!" + DEADBEEF
            "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", // RFC 4226/6238 "12345678901234567890"
            "KRSXG5CTMVRXEZLUKNSWKZA",          // "TestSecretSeed"
            "ORSXG5DQMFZXG53POJSA",             // "testpassword"
        ] {
            assert!(!super::is_random_seed(seed), "{seed}");
            assert!(
                s.scan_bytes("docs/2fa.md", uri(seed).as_bytes()).is_empty(),
                "{seed}"
            );
        }
        for seed in ["HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ", "7QKZ3M2XLPV4RJ5Y"] {
            assert!(super::is_random_seed(seed), "{seed}");
            assert!(
                !s.scan_bytes("docs/2fa.md", uri(seed).as_bytes()).is_empty(),
                "{seed}"
            );
        }
    }

    #[test]
    fn powershell_plaintext_passwords() {
        check(
            "generic_secret",
            &[
                (
                    "$pw = ConvertTo-SecureString 'wci0u0aWErHF9N#yBKx' -AsPlainText -Force",
                    "wci0u0aWErHF9N#yBKx",
                ),
                (
                    "ConvertTo-SecureString -String \"Qm3v!X8zR2tLp\" -Force -AsPlainText",
                    "Qm3v!X8zR2tLp",
                ),
            ],
            &[
                (
                    "$pw = ConvertTo-SecureString $env:DEPLOY_PASSWORD -AsPlainText -Force",
                    "a variable, not a literal",
                ),
                (
                    "$pw = ConvertTo-SecureString '${{ secrets.DEPLOY }}' -AsPlainText -Force",
                    "a template reference",
                ),
                (
                    "$pw = Read-Host -AsSecureString 'Password'",
                    "read at run time",
                ),
            ],
        );
    }

    #[test]
    fn curl_user_passwords() {
        check(
            "basic_auth_password",
            &[
                (
                    "curl --cacert ca.crt -u elastic:Vx7q!Lm2Rp https://localhost:9200",
                    "Vx7q!Lm2Rp",
                ),
                (
                    "curl -s \\\n  --user 'deploy:k9Tz4Wq8Pn' \\\n  https://api.internal/v1",
                    "k9Tz4Wq8Pn",
                ),
                ("RUN curl -fsSL -u \":Qm3vX8zR2t\" $URL", "Qm3vX8zR2t"),
                (
                    "curl --user ops@corp.io:'Hq5Ld9Wm2Z' -X PATCH",
                    "Hq5Ld9Wm2Z",
                ),
            ],
            &[
                ("curl -i -u 'test:test'", "placeholder"),
                ("curl -u username:password https://x", "words"),
                (
                    "curl http://127.0.0.1:5000/file --user user:pass --digest",
                    "too short",
                ),
                (
                    "curl -u \"${USERNAME}:${PASSWORD}\" $URL",
                    "shell references",
                ),
                ("curl -u \"$USER:$API_PASSWORD\" $URL", "shell references"),
                (
                    "curl -XGET -u \"${{ env.ELK_ID }}:${{ secrets.ELK_PASS }}\"",
                    "GitHub Actions expressions",
                ),
                (
                    "curl --user \"{{ $.Values.username }}:{{ $.Values.password }}\"",
                    "Helm template",
                ),
                (
                    "curl -u <user:password> https://test.com/endpoint",
                    "placeholder",
                ),
                (
                    "curl --user neo4j:[PASSWORD] http://[IP]:7474/db/data/",
                    "placeholder",
                ),
                (
                    "curl -X POST --user \"$(cat ./login.txt):$(cat ./pw.txt)\"",
                    "command substitution",
                ),
            ],
        );
    }
}

#[cfg(test)]
mod mysql_tests {
    use super::super::testutil::check;

    #[test]
    fn mysql_client_passwords() {
        check(
            "sql_password",
            &[
                (
                    "mysql -h db.prod -u admin -p'evCmx1z6rT*%Nd5rF-GS*g' orders < dump.sql",
                    "evCmx1z6rT*%Nd5rF-GS*g",
                ),
                (
                    "mysqldump --user=backup --password=Kq7vN2xLp9 --all-databases",
                    "Kq7vN2xLp9",
                ),
                ("mysql -uroot -pW8m3Zr5Qy shop", "W8m3Zr5Qy"),
            ],
            &[
                (
                    "mysql -h db -u admin -p orders < dump.sql",
                    "prompts: next word is the database",
                ),
                ("mysql -u app -p\"$DB_PASSWORD\" app", "shell reference"),
                ("mysql -u root -proot", "word-like"),
                ("mysql --port=3306 -P 3306 -h db", "no password"),
                (
                    "mysqladmin -p${MYSQL_ROOT_PASSWORD} ping",
                    "shell reference",
                ),
            ],
        );
    }
}

#[cfg(test)]
mod round_four_tests {
    use super::super::testutil::check;

    /// Issue 18, generator-3 round 4: passwords in command and call forms
    /// no source had; beside each, the same form holding no password.
    #[test]
    fn logins_pgpass_psk_otpauth_and_call_arguments() {
        check(
            "generic_secret",
            &[
                (
                    "docker login -u deploy -p '64O^gzudCh90EGCR*' registry.acme.io",
                    "64O^gzudCh90EGCR*",
                ),
                ("podman login --password=Zk3mQ8pL2x quay.io", "Zk3mQ8pL2x"),
                ("    psk=\"m_WOZ*JE3LOW!M0bU4\"", "m_WOZ*JE3LOW!M0bU4"),
                (
                    "otpauth://totp/Acme:ops@acme.io?secret=JX4Q7ZK2M5N3P8R6T2V7W3Y4A6B5C2D7&issuer=Acme",
                    "JX4Q7ZK2M5N3P8R6T2V7W3Y4A6B5C2D7",
                ),
                (
                    "    auth=(\"svc-export\", \"b7Rk!2mQ9zLx\"),",
                    "b7Rk!2mQ9zLx",
                ),
            ],
            &[
                (
                    "echo \"$CI_REGISTRY_PASSWORD\" | docker login -u ci --password-stdin $CI_REGISTRY",
                    "reads a pipe",
                ),
                (
                    "docker login -u ci -p \"$REGISTRY_PASSWORD\" ghcr.io",
                    "shell reference",
                ),
                ("  psk=\"${WIFI_PSK}\"", "template"),
                ("auth=(\"user\", \"password\")", "words"),
                ("auth=(USER, os.environ[\"PASSWORD\"])", "not literals"),
            ],
        );
        check(
            "sql_password",
            &[
                (
                    "db.prod.internal:5432:orders:orders_app:4brJ6oMVAJ!9zGw",
                    "4brJ6oMVAJ!9zGw",
                ),
                (
                    "return DriverManager.getConnection(\"jdbc:postgresql://db:5432/o\", \"orders_app\", \"Vx7q!Lm2Rp\");",
                    "Vx7q!Lm2Rp",
                ),
            ],
            &[
                (
                    "root:x:0:0:root:/root:/bin/bash",
                    "passwd line: port not digits",
                ),
                ("daemon:*:19700:0:99999:7:::", "shadow line: seven fields"),
                (
                    "DriverManager.getConnection(url, \"orders\", System.getenv(\"DB_PASSWORD\"))",
                    "reference",
                ),
            ],
        );
    }
}

#[cfg(test)]
mod gate_tests {
    use super::{RULES, may_be_pgpass};

    /// The `.pgpass` gate is true on every text its rule's regex matches
    /// (Unicode digits in the port field included), and false on code
    /// whose colons end lines or precede spaces.
    #[test]
    fn pgpass_gate_holds_every_match() {
        let rule = RULES
            .iter()
            .find(|r| r.name == "pgpass-password")
            .expect("rule");
        let re = regex::Regex::new(rule.pattern).expect("pattern");
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        // Lines of five fields, each drawn from valid and invalid ones.
        let fields = [
            "db",
            "5432",
            "*",
            "\u{663}\u{664}",
            "\u{ff15}",
            "",
            "user",
            "s3cr3tPass9",
            "a\\:b\\:cdef",
            " x",
            "**",
            "123456",
        ];
        let mut matched = 0;
        for _ in 0..20_000 {
            let mut t = String::new();
            for k in 0..5 {
                if k > 0 {
                    t.push(if next(12) == 0 { ' ' } else { ':' });
                }
                t.push_str(fields[next(fields.len())]);
            }
            if next(4) == 0 {
                t.insert_str(0, "x\n");
            }
            if re.is_match(&t) {
                matched += 1;
                assert!(may_be_pgpass(&t), "{t:?}");
            }
        }
        assert!(matched > 50, "{matched}");
        for t in [
            "localhost:5432:app:svc:Xk9vQ2mPz4",
            "h:*:d:u:passw0rd!",
            "h:\u{663}:d:u:passw0rd!",
        ] {
            assert!(re.is_match(t) && may_be_pgpass(t), "{t:?}");
        }
        assert!(!may_be_pgpass(
            "def handle(request, ctx):\n    return {'id': 4}\n"
        ));
    }
}
