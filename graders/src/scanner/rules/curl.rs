//! Passwords on a command line: curl's basic auth (`curl -u user:password`
//! or `--user user:password`) and the MySQL clients' `-p<password>` /
//! `--password=<password>` (shell scripts, Dockerfiles, CI steps, runbooks).
//! `mysql -p` followed by a space prompts for the password: the next word
//! is the database, not a password, and is not matched.
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
    },
];

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

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

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
