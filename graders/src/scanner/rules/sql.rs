//! SQL passwords: `PASSWORD 'x'` / `IDENTIFIED BY 'x'`; the value is the
//! password alone.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "sql-password",
    secret_type: "sql_password",
    description: "Password in a SQL statement (IDENTIFIED BY / PASSWORD '...')",
    keywords: &["password", "identified"],
    // A space or `=` before the quote: `s['password']}…{s['host']` (a
    // Python subscript in an f-string) has the word glued to its quote.
    pattern: r"(?i:\bPASSWORD|\bIDENTIFIED\s+BY)(?:\s+|\s*=\s*)'([^'\s]{3,256})'",
    group: 1,
    check_group: 0,
    context_type: None,
    validate: None,
    gate: None,
}];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn sql() {
        check(
            "sql_password",
            &[
                (
                    "CREATE USER app WITH PASSWORD 'Tr0ub4dor&3x';",
                    "Tr0ub4dor&3x",
                ),
                ("ALTER USER 'r'@'%' IDENTIFIED BY 'nM7q2xKp';", "nM7q2xKp"),
            ],
            &[
                ("ALTER ROLE app PASSWORD 'changeme';", "placeholder"),
                ("CREATE USER app WITH PASSWORD '<hidden-value>';", "masked"),
                (
                    "f\"postgresql://{s['username']}:{s['password']}@{s['host']}/db\"",
                    "a subscript, not SQL",
                ),
            ],
        );
    }
}
