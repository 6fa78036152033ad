//! Connection strings with inline credentials, `scheme://user:pass@host`.
//! The value is the whole URL (so redaction hides host and user with the
//! password); only the password part is judged for placeholders, so
//! `db.example.com` hosts do not hide a real password.
//!
//! Go's MySQL driver (`go-sql-driver/mysql`) writes its DSN without a
//! scheme: `user:password@tcp(host:3306)/db?parseTime=true` (issue 18,
//! generator-12 `go-viper-config-secret`); the protocol and its
//! parenthesised address after the `@` make it one, judged the same way.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "connection-string",
        secret_type: "connection_string",
        description: "Database or broker URL with an embedded password (scheme://user:password@host)",
        keywords: &["://"],
        pattern: r#"\b([a-zA-Z][a-zA-Z0-9+.\-]{1,30}://([^\s:/@'"`<>]*):([^\s@/'"`<>]{1,256})@[^\s/'"`<>?#@]+[^\s'"`<>]*)"#,
        group: 1,
        check_group: 3,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "go-mysql-dsn",
        secret_type: "connection_string",
        description: "Go MySQL driver DSN with a password (user:password@tcp(host:port)/db)",
        keywords: &["@tcp(", "@tcp6(", "@unix("],
        pattern: r#"(?:^|[\s"'`=])([A-Za-z0-9_.\-]{1,64}:([^\s:@/'"`<>]{1,256})@(?:tcp6?|unix)\([^\s)'"`]*\)/[^\s'"`<>]*)"#,
        group: 1,
        check_group: 2,
        context_type: None,
        validate: None,
        gate: None,
    },
];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn urls() {
        check(
            "connection_string",
            &[
                (
                    "DATABASE_URL=postgres://payments:Zq8v2Lm4Kp7Rt@db.internal:5432/payments",
                    "postgres://payments:Zq8v2Lm4Kp7Rt@db.internal:5432/payments",
                ),
                (
                    "uri = \"mongodb+srv://svc:Hx7pQ2wL9m@cluster0.example.net/app?retryWrites=true\"",
                    "mongodb+srv://svc:Hx7pQ2wL9m@cluster0.example.net/app?retryWrites=true",
                ),
                (
                    "REDIS_URL=redis://:Ka93mZpQ7x@cache:6379/0",
                    "redis://:Ka93mZpQ7x@cache:6379/0",
                ),
            ],
            &[
                (
                    "postgres://user:password@localhost/db",
                    "documentation placeholder password",
                ),
                (
                    "url = f\"postgres://{user}:${DB_PASSWORD}@db/app\"",
                    "interpolated from env",
                ),
                ("see https://github.com/org/repo", "no credentials in URL"),
                ("postgres://app:****@db/app", "masked"),
            ],
        );
    }

    #[test]
    fn go_mysql_dsns() {
        check(
            "connection_string",
            &[(
                "  dsn: \"reporting_ro:5wwkN~IkTx~z.6wIBWpD@tcp(db-a.internal:3306)/inventory?parseTime=true\"",
                "reporting_ro:5wwkN~IkTx~z.6wIBWpD@tcp(db-a.internal:3306)/inventory?parseTime=true",
            )],
            &[
                (
                    "dsn := \"user:password@tcp(127.0.0.1:3306)/dbname\"",
                    "documentation placeholder password",
                ),
                (
                    "dsn := fmt.Sprintf(\"%s:%s@tcp(%s)/%s\", user, pass, host, db)",
                    "format string",
                ),
            ],
        );
    }
}
