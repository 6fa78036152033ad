//! Connection strings with inline credentials, `scheme://user:pass@host`.
//! The value is the whole URL (so redaction hides host and user with the
//! password); only the password part is judged for placeholders, so
//! `db.example.com` hosts do not hide a real password.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
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
}];

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
}
