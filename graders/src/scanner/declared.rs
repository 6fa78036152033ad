//! Values that look like credentials and are, by their syntax or by a
//! published convention, something else: a type name in a schema, a
//! secret store's address, a format placeholder or environment lookup, a
//! famous documentation sample, a client config public by design
//! (generator-5, the blind round measured before these: 0.888 / 0.988).

/// Type names of schema and type languages: SQL column types, GraphQL
/// scalars, protobuf scalars, TypeScript, Go, Rust, Java/Kotlin/C#.
/// Compared lowercase, after [`type_base`] strips modifiers.
const TYPE_NAMES: &[&str] = &[
    // SQL
    "text",
    "varchar",
    "char",
    "character",
    "nvarchar",
    "nchar",
    "ntext",
    "citext",
    "bytea",
    "blob",
    "clob",
    "binary",
    "varbinary",
    "uuid",
    "int",
    "integer",
    "bigint",
    "smallint",
    "tinyint",
    "serial",
    "bigserial",
    "boolean",
    "bool",
    "json",
    "jsonb",
    "timestamp",
    "timestamptz",
    "date",
    "datetime",
    "numeric",
    "decimal",
    "real",
    "float",
    "double",
    "longtext",
    "mediumtext",
    "tinytext",
    "longblob",
    "mediumblob",
    "raw",
    "varchar2",
    "nvarchar2",
    "uniqueidentifier",
    "inet",
    // GraphQL, protobuf, TypeScript, Go, Rust, JVM, C#
    "string",
    "id",
    "bytes",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "sint32",
    "sint64",
    "fixed32",
    "fixed64",
    "number",
    "any",
    "unknown",
    "byte",
    "str",
    "secretstring",
    "securestring",
    "charsequence",
    "object",
];

/// The base type of a declared type: `String!` → `string`, `[String!]!`,
/// `VARCHAR(12)`, `[]byte`, `*string`, `Option<String>`, `string?`,
/// `BYTEA,` (a column list's comma).
fn type_base(v: &str) -> String {
    let mut t = v.trim().trim_end_matches([',', ';']).to_ascii_lowercase();
    loop {
        let before = t.len();
        t = t.trim_end_matches(['!', '?', ',']).to_string();
        if let Some(r) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            t = r.to_string();
        }
        if let Some(r) = t.strip_prefix("[]") {
            t = r.to_string();
        }
        t = t.trim_start_matches(['*', '&']).to_string();
        for w in [
            "option<",
            "optional<",
            "vec<",
            "list<",
            "array<",
            "nullable<",
        ] {
            if let Some(r) = t.strip_prefix(w).and_then(|r| r.strip_suffix('>')) {
                t = r.to_string();
            }
        }
        if let Some(open) = t.find('(')
            && t.ends_with(')')
            && t[open + 1..t.len() - 1]
                .bytes()
                .all(|c| c.is_ascii_digit() || c == b',' || c == b' ')
        {
            t.truncate(open);
        }
        if t.len() == before {
            return t;
        }
    }
}

/// True when the unquoted value `v` is a type name: the key is a column or
/// field being *declared* (`password_hash BYTEA,` in SQL DDL, `token:
/// String!` in GraphQL SDL, `secret: string;` in a TypeScript interface,
/// `Token []byte` in a Go struct), not assigned.
pub(crate) fn is_type_name(v: &str) -> bool {
    TYPE_NAMES.contains(&type_base(v).as_str())
}

/// Marks of a secret store's reference in a URL, ARN or resource name:
/// Azure Key Vault (`https://x.vault.azure.net/secrets/<name>/<version>`),
/// AWS Secrets Manager and SSM ARNs, GCP Secret Manager
/// (`projects/…/secrets/…/versions/N`), HashiCorp Vault API paths.
const STORE_MARKS: &[&str] = &[
    ".vault.azure.net/secrets/",
    ".vault.azure.net/keys/",
    ".vault.azure.net/certificates/",
    ".vault.azure.cn/secrets/",
    ".vault.usgovcloudapi.net/secrets/",
    "arn:aws:secretsmanager:",
    "arn:aws:ssm:",
    "secretmanager.googleapis.com/",
    "/v1/secret/data/",
    "/v1/secret/metadata/",
    "/v1/kv/data/",
];

/// True when the token at `start..end` lies inside a secret store's
/// reference: a path segment of a Key Vault URI (its version id), of a GCP
/// Secret Manager name (`projects/…/secrets/…/versions/…`) or a Vault API
/// path. The store holds the secret; its address and version ids are ids.
pub(crate) fn in_secret_store_reference(text: &str, start: usize, end: usize) -> bool {
    let stop = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | ')' | ',');
    let from = text[..start].rfind(stop).map_or(0, |i| i + 1);
    let to = text[end..].find(stop).map_or(text.len(), |i| end + i);
    // A path segment: not in the query string or fragment after it.
    if text[from..start].contains(['?', '#', '&']) {
        return false;
    }
    let piece = text[from..to].to_ascii_lowercase();
    if STORE_MARKS.iter().any(|m| piece.contains(m)) {
        return true;
    }
    // GCP Secret Manager resource names.
    piece
        .find("projects/")
        .is_some_and(|p| piece[p..].contains("/secrets/") && piece[p..].contains("/versions/"))
}

/// True for a format placeholder or environment lookup in place of a URL's
/// password: `{pw}`, `{0}`, `%(password)s`, `%s`, `${NAME}`, `$NAME`,
/// `<password>`, `$env:NAME`, `%NAME%`.
pub(crate) fn is_placeholder_password(v: &str) -> bool {
    let ident = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
    };
    if let Some(inner) = v.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        return inner.is_empty() || ident(inner.split(':').next().unwrap_or(""));
    }
    if let Some(inner) = v.strip_prefix("%(").and_then(|r| r.strip_suffix(")s")) {
        return ident(inner);
    }
    if matches!(v, "%s" | "%v" | "%d" | "?" | "{}") {
        return true;
    }
    if let Some(inner) = v.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        return !inner.is_empty();
    }
    is_env_lookup(v)
}

/// True for an environment variable lookup written in a shell's or a
/// language's syntax: `$NAME`, `${NAME}`, `${NAME:-x}`, `$env:NAME`
/// (PowerShell), `%NAME%` (cmd), `$ENV{NAME}` (Perl), `ENV['NAME']`,
/// `ENV.fetch("NAME")`, `os.getenv("NAME")`, `process.env.NAME`,
/// `System.getenv("NAME")`, `env("NAME")`.
pub(crate) fn is_env_lookup(v: &str) -> bool {
    let v = v.trim();
    let l = v.to_ascii_lowercase();
    let name = |s: &str| {
        s.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    };
    if let Some(r) = l.strip_prefix("$env:").or_else(|| l.strip_prefix("env:")) {
        return name(r);
    }
    if let Some(r) = l.strip_prefix("${env:").and_then(|r| r.strip_suffix('}')) {
        return name(r);
    }
    if let Some(r) = l.strip_prefix('%').and_then(|r| r.strip_suffix('%')) {
        return name(r);
    }
    if let Some(r) = l.strip_prefix("$env{").and_then(|r| r.strip_suffix('}')) {
        return name(r.trim_matches(['"', '\'']));
    }
    if let Some(r) = l.strip_prefix('$') {
        if name(r) {
            return true;
        }
        if let Some(inner) = r.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            let head = inner.split([':', '-', '?', '=']).next().unwrap_or("");
            return name(head);
        }
    }
    if let Some(r) = l.strip_prefix("process.env.") {
        return name(r);
    }
    for open in [
        "env[",
        "environ[",
        "getenv(",
        "env.fetch(",
        "env.get(",
        "environ.get(",
        "env(",
    ] {
        if let Some(p) = l.find(open) {
            let head = &l[..p];
            let arg = l[p + open.len()..].trim_end_matches([')', ']']);
            let arg = arg
                .split(',')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\'']);
            if head
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':'))
                && name(arg)
            {
                return true;
            }
        }
    }
    false
}

/// Famous published documentation samples, fixed public strings that
/// authorize nothing anywhere: the default token on jwt.io (header
/// `{"alg":"HS256","typ":"JWT"}`, payload `sub 1234567890 / John Doe / iat
/// 1516239022`, signed with the page's `your-256-bit-secret`) and AWS's
/// documented example key pair (`AKIAIOSFODNN7EXAMPLE` /
/// `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`). This is a deliberately
/// small list of exact strings, not a heuristic. A sample is dropped only
/// where the file says what it is ([`SAMPLE_WORDS`]): a bare copy with
/// nothing around it is still reported, as detect-secrets' own fixtures
/// expect (someone may have signed real claims with the sample's key).
const PUBLISHED_SAMPLES: &[&str] = &[
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
];

/// Words by which a file calls a value a published sample.
const SAMPLE_WORDS: &[&str] = &["sample", "example", "jwt.io", "documentation"];

/// Keys built into local emulators, published in their vendor's
/// documentation and the same in every installation: Azure's storage
/// emulator (Azurite) account key of `devstoreaccount1`, and the Cosmos DB
/// emulator's master key. They open only the emulator on the developer's
/// own machine. Dropped where the file names the emulator
/// ([`EMULATOR_WORDS`]), like the samples above.
const EMULATOR_KEYS: &[&str] = &[
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==",
];

/// Words by which a file names a local emulator: its name, or the
/// emulator's fixed account (`devstoreaccount1`, which only Azurite and
/// the legacy storage emulator serve).
const EMULATOR_WORDS: &[&str] = &[
    "emulator",
    "azurite",
    "devstoreaccount1",
    "usedevelopmentstorage",
];

/// Spans of [`PUBLISHED_SAMPLES`] and [`EMULATOR_KEYS`] in `text` (each
/// with the rest of its token: a JWT's signature), when the file's words
/// call them samples or name the emulator.
pub(crate) fn published_sample_spans(text: &str, lower: &str) -> Vec<(usize, usize)> {
    let mut out = sample_spans(text, lower, PUBLISHED_SAMPLES, SAMPLE_WORDS);
    out.extend(sample_spans(text, lower, EMULATOR_KEYS, EMULATOR_WORDS));
    out
}

fn sample_spans(text: &str, lower: &str, samples: &[&str], words: &[&str]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for s in samples {
        for (i, _) in text.match_indices(s) {
            let b = text.as_bytes();
            let mut e = i + s.len();
            while e < b.len()
                && (b[e].is_ascii_alphanumeric() || matches!(b[e], b'.' | b'_' | b'-'))
            {
                e += 1;
            }
            out.push((i, e));
        }
    }
    if !out.is_empty() && !words.iter().any(|w| lower.contains(w)) {
        out.clear();
    }
    out
}

/// Keys of a Firebase web config object besides `apiKey`.
const FIREBASE_KEYS: &[&str] = &["messagingsenderid", "appid", "projectid", "storagebucket"];

/// How a file says its Firebase config is public (Firebase's own
/// rationale), read over comment text joined across lines.
const SAYS_PUBLIC: &[&str] = &[
    "as public",
    "public identifier",
    "public by design",
    "meant to be public",
    "safe to expose",
    "safe to commit",
    "security rules",
    "app check",
    // Generator-12: "all of these are public, client-side identifiers".
    "client-side identifier",
    // Generator-6: "Firebase web config identifies the project; it is not
    // a credential".
    "not a credential",
    "not a secret",
    "not secret",
    "identifies the project",
    "identifies your",
];

/// True when the Google API key at `start..end` is one its file shows
/// public by design: a Firebase web config called public
/// ([`in_firebase_web_config`]), an Android app's Firebase config
/// ([`in_android_firebase_config`]), or a browser key the file says is
/// restricted ([`restricted_browser_key`]).
pub(crate) fn is_public_google_key(lower: &str, start: usize, end: usize) -> bool {
    in_firebase_web_config(lower, start, end)
        || in_android_firebase_config(lower, start, end)
        || restricted_browser_key(lower, start, end)
}

/// The byte index at most `by` before `i`, on a char boundary.
fn back(s: &str, i: usize, by: usize) -> usize {
    let mut j = i.saturating_sub(by);
    while !s.is_char_boundary(j) {
        j += 1;
    }
    j
}

/// The byte index at most `by` after `i`, on a char boundary.
fn ahead(s: &str, i: usize, by: usize) -> usize {
    let mut j = (i + by).min(s.len());
    while !s.is_char_boundary(j) {
        j -= 1;
    }
    j
}

/// True when the Google API key at `start` is the client key of an
/// Android app's Firebase config (issue 18, generator-12
/// `android-firebase-public-config`), in one of the two forms the Google
/// Services Gradle plugin reads and every build ships inside the APK:
/// - `google-services.json`: the key is a `current_key` and the file holds
///   the plugin's `project_info` and `mobilesdk_app_id`;
/// - its generated string resources (`values/google_services.xml`): a
///   `google_api_key` string next to `google_app_id` and
///   `gcm_defaultSenderId`, in a file that says the config is public
///   ([`SAYS_PUBLIC`]), as the web config must.
///
/// Like the web config's, these keys identify the project; access is
/// enforced by Security Rules and App Check.
pub(crate) fn in_android_firebase_config(lower: &str, start: usize, end: usize) -> bool {
    let before = &lower[back(lower, start, 64)..start];
    if before.contains("\"current_key\"") {
        return lower.contains("\"project_info\"") && lower.contains("\"mobilesdk_app_id\"");
    }
    let near = &lower[back(lower, start, 1024)..ahead(lower, end, 1024)];
    before.contains("\"google_api_key\"")
        && near.contains("\"google_app_id\"")
        && near.contains("\"gcm_defaultsenderid\"")
        && says_public(lower)
}

/// Words by which a file says a Google API key is restricted to its
/// callers: HTTP referrers (a browser key), an Android package and
/// signing certificate, an iOS bundle.
const RESTRICTED_TO: &[&str] = &["referrer", "referer", "sha-1", "sha1", "bundle id"];

/// True when the comment or note just before the Google API key at
/// `start..end` (within [`RESTRICTION_NOTE`] bytes, or on its line) says
/// the key is restricted to its callers ([`RESTRICTED_TO`]): a browser
/// key for Maps or Places that every visitor receives in the page, by
/// design (issue 18, generator-12 `publishable-client-side-keys`,
/// generator-13 `wordpress-plugin-constants`). A key the file says
/// nothing about is still reported.
pub(crate) fn restricted_browser_key(lower: &str, start: usize, end: usize) -> bool {
    let line_end = lower[end..].find('\n').map_or(lower.len(), |i| end + i);
    let note = &lower[back(lower, start, RESTRICTION_NOTE)..line_end];
    note.contains("restrict") && RESTRICTED_TO.iter().any(|w| note.contains(w))
}

/// How far before a key its restriction note is read.
const RESTRICTION_NOTE: usize = 256;

/// True when the file's text, read over comment lines joined, says a
/// config is public ([`SAYS_PUBLIC`]).
fn says_public(lower: &str) -> bool {
    let joined: String = lower
        .split_whitespace()
        .filter(|w| !matches!(*w, "//" | "#" | "*" | "--"))
        .collect::<Vec<_>>()
        .join(" ");
    SAYS_PUBLIC.iter().any(|p| joined.contains(p))
}

/// True when the Google API key at `start` is the `apiKey` of a Firebase
/// web config (the enclosing `{…}` also holds `authDomain` and one of the
/// other config keys) in a file that says the config is public
/// ([`SAYS_PUBLIC`]): Firebase documents these keys as public
/// identifiers, shipped in every web client; access is enforced by
/// Security Rules and App Check. A Firebase config nobody calls public is
/// still reported: the task corpus plants Firebase keys as secrets
/// (`firebase_api_key`), and a key without restrictions is billable.
pub(crate) fn in_firebase_web_config(lower: &str, start: usize, end: usize) -> bool {
    let from = lower[..start]
        .rfind('{')
        .filter(|&i| start - i < 1024)
        .map_or(start, |i| i);
    let to = lower[end..]
        .find('}')
        .filter(|&i| i < 1024)
        .map_or(end, |i| end + i);
    let obj: String = lower[from..to].chars().filter(|&c| c != '_').collect();
    if !(obj.contains("authdomain") && FIREBASE_KEYS.iter().any(|k| obj.contains(k))) {
        return false;
    }
    says_public(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_of_schema_languages() {
        for v in [
            "BYTEA,",
            "TEXT",
            "String!",
            "[String!]!",
            "VARCHAR(12)",
            "CHAR(64)",
            "string;",
            "[]byte",
            "*string",
            "Option<String>",
            "string?",
            "bytes",
            "ID!",
            "SecureString",
        ] {
            assert!(is_type_name(v), "{v}");
        }
        for v in ["Zq8v2Lm4Kp7Rt", "String!9x", "hunter2", "bytea-Kp7Rt9"] {
            assert!(!is_type_name(v), "{v}");
        }
    }

    #[test]
    fn secret_store_references() {
        for t in [
            "uri: https://kv-x.vault.azure.net/secrets/sendgrid-api-key/36c936aec9bdbea4a3f16eff078b3974",
            "name: projects/709590043506/secrets/github-app-private-key/versions/3f16eff078b3974aa",
            "arn: arn:aws:secretsmanager:us-east-1:85343:secret:prod/stripe-mbzikS3f16eff078b3974",
            "GET https://vault.acme.io/v1/secret/data/3f16eff078b3974aa",
        ] {
            let s = t.len() - 16;
            assert!(in_secret_store_reference(t, s, t.len()), "{t}");
        }
        for t in [
            "token: https://api.acme.io/v1/hooks/36c936aec9bdbea4a3f16eff078b3974",
            "u: https://kv.vault.azure.net/secrets/a/1?sig=36c936aec9bdbea4a3f16eff078b3974",
        ] {
            assert!(!in_secret_store_reference(t, t.len() - 16, t.len()), "{t}");
        }
    }

    #[test]
    fn placeholders_and_env_lookups() {
        for v in [
            "{pw}",
            "{password}",
            "{0}",
            "%(password)s",
            "%s",
            "${DB_PASSWORD}",
            "$DB_PASSWORD",
            "<password>",
            "$env:DB_PASSWORD",
            "%DB_PASSWORD%",
        ] {
            assert!(is_placeholder_password(v), "{v}");
        }
        for v in [
            "$env:AZURE_DEVOPS_PAT",
            "%AZURE_DEVOPS_PAT%",
            "${AZURE_DEVOPS_PAT}",
            "${TOKEN:-}",
            "$ENV{'TOKEN'}",
            "ENV['TOKEN']",
            "ENV.fetch(\"TOKEN\")",
            "os.getenv(\"TOKEN\")",
            "process.env.TOKEN",
            "System.getenv(\"TOKEN\")",
            "${env:TOKEN}",
        ] {
            assert!(is_env_lookup(v), "{v}");
        }
        for v in [
            "Zq8v2Lm4Kp7Rt",
            "$Zq8v2!Lm4",
            "%Zq8v2Lm4",
            "{Zq8v2!Lm4}",
            "p%s4ss%word",
        ] {
            assert!(!is_placeholder_password(v) && !is_env_lookup(v), "{v}");
        }
    }

    #[test]
    fn published_samples_and_firebase() {
        let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
        let doc = format!("# The public sample token from jwt.io\nvalue: \"Bearer {jwt}\"\n");
        let spans = published_sample_spans(&doc, &doc.to_ascii_lowercase());
        assert_eq!(spans.len(), 1);
        assert_eq!(&doc[spans[0].0..spans[0].1], jwt);
        // A bare copy, or another token with the same header, is kept.
        assert!(published_sample_spans(jwt, &jwt.to_ascii_lowercase()).is_empty());
        let other = "sample: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI5ODc2NTQzMjEwIn0.abc";
        assert!(published_sample_spans(other, other).is_empty());
        // The storage emulator's published account key, where the file
        // names the emulator; the same key with nothing naming it is kept.
        let key = EMULATOR_KEYS[0];
        let local = format!(
            "Storage:\n  # docker compose up azurite\n  ConnectionString: \"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={key};\"\n"
        );
        assert_eq!(
            published_sample_spans(&local, &local.to_ascii_lowercase()).len(),
            1
        );
        let bare = format!("account-key: {key}\n");
        assert!(published_sample_spans(&bare, &bare.to_ascii_lowercase()).is_empty());
        let cosmos = format!(
            "// Cosmos DB Emulator\nconst string Key = \"{}\";\n",
            EMULATOR_KEYS[1]
        );
        assert_eq!(
            published_sample_spans(&cosmos, &cosmos.to_ascii_lowercase()).len(),
            1
        );
        let cfg = "const c = {\n  apiKey: \"AIzaX\",\n  authDomain: \"a.firebaseapp.com\",\n  projectId: \"a\",\n};";
        let said = format!("// Firebase documents these as public\n// identifiers.\n{cfg}");
        let l = said.to_ascii_lowercase();
        let s = l.find("aizax").unwrap();
        assert!(in_firebase_web_config(&l, s, s + 5));
        let said = format!(
            "// Firebase web config identifies the project; it is not a credential.\n{cfg}"
        );
        let l = said.to_ascii_lowercase();
        let s = l.find("aizax").unwrap();
        assert!(in_firebase_web_config(&l, s, s + 5));
        // The same config with nothing saying it is public is reported
        // (the own corpus plants such keys as `firebase_api_key`).
        let l = cfg.to_ascii_lowercase();
        let s = l.find("aizax").unwrap();
        assert!(!in_firebase_web_config(&l, s, s + 5));
        let other = "const c = {\n  apiKey: \"AIzaX\",\n  region: \"eu\",\n};";
        let l = other.to_ascii_lowercase();
        let s = l.find("aizax").unwrap();
        assert!(!in_firebase_web_config(&l, s, s + 5));
    }

    #[test]
    fn android_firebase_configs_and_restricted_browser_keys() {
        let key = "AIzaSyD3mQ8pL2xN7vR4tW9yBcK5fH1jG6sU0eA";
        let at = |t: &str| {
            let l = t.to_ascii_lowercase();
            let s = t.find(key).unwrap();
            is_public_google_key(&l, s, s + key.len())
        };
        let json = format!(
            "{{\n  \"project_info\": {{ \"project_id\": \"field\" }},\n  \"client\": [{{\n    \"client_info\": {{ \"mobilesdk_app_id\": \"1:9:android:9f\" }},\n    \"api_key\": [ {{ \"current_key\": \"{key}\" }} ]\n  }}]\n}}\n"
        );
        assert!(at(&json));
        let xml = format!(
            "<!-- Firebase client config (public identifiers) -->\n<resources>\n  <string name=\"gcm_defaultSenderId\">2862</string>\n  <string name=\"google_app_id\">1:2:android:d8</string>\n  <string name=\"google_api_key\">{key}</string>\n</resources>\n"
        );
        assert!(at(&xml));
        let php = format!(
            "// Browser key, restricted by HTTP referrer to *.example.app.\nconst MAPS_BROWSER_KEY = '{key}';\n"
        );
        assert!(at(&php));
        let note = format!(
            "\"_note\": \"browser key, HTTP-referrer restricted\",\n\"BrowserKey\": \"{key}\"\n"
        );
        assert!(at(&note));
        // The same keys with nothing saying so: a `current_key` outside
        // the plugin's file, resources nobody calls public, a key the file
        // says nothing about, a restriction note far above.
        assert!(!at(&format!("{{ \"current_key\": \"{key}\" }}\n")));
        assert!(!at(&xml.replace("(public identifiers)", "")));
        assert!(!at(&format!("const MAPS_KEY = '{key}';\n")));
        let far = format!(
            "// restricted by HTTP referrer\n{}const K = '{key}';\n",
            "x = 1;\n".repeat(60)
        );
        assert!(!at(&far));
    }

    use crate::scanner::rules::testutil::rules;

    /// Each class scanned whole: its members are not reported, and a real
    /// credential in the same syntax still is.
    #[test]
    fn scans_of_each_class() {
        let quiet: &[(&str, &str)] = &[
            (
                "db/schema.sql",
                "CREATE TABLE a (\n    password_salt   BYTEA,\n    password_hash   TEXT NOT NULL,\n    api_token VARCHAR(64)\n);\n",
            ),
            (
                "schema/auth.graphql",
                "type ApiToken {\n  token: String!\n  secret: [String!]!\n  password: ID\n}\n",
            ),
            (
                "proto/auth.proto",
                "message Login {\n  string password = 1;\n  bytes token = 2;\n}\n",
            ),
            (
                "web/src/types.ts",
                "export interface Creds {\n  password: string;\n  apiToken?: string;\n}\n",
            ),
            (
                "internal/auth.go",
                "type Creds struct {\n\tPassword string `json:\"password\"`\n\tToken []byte\n}\n",
            ),
            (
                "deploy/Deploy.ps1",
                "$token = $env:AZURE_DEVOPS_PAT\n$password = $env:SQL_PASSWORD\n",
            ),
            ("deploy/run.cmd", "set PASSWORD=%SQL_ADMIN_PASSWORD%\n"),
            ("config/app.rb", "password = ENV['DB_PASSWORD']\n"),
            ("scripts/run.pl", "my $password = $ENV{'DB_PASSWORD'};\n"),
            (
                "etl/load.py",
                "engine = create_engine(f\"postgresql://analyst:{pw}@warehouse:5432/dw\")\n",
            ),
            (
                "etl/load2.py",
                "url = \"mysql://app:%(password)s@db/app\" % cfg\n",
            ),
            (
                "etl/load3.go",
                "dsn := fmt.Sprintf(\"postgres://app:%s@db:5432/app\", pw)\n",
            ),
            (
                "etc/app.env",
                "DATABASE_URL=postgres://app:$DB_PASSWORD@db/app\n",
            ),
            (
                "docs/debug/x.http",
                "POST /oauth/token HTTP/1.1\n\ngrant_type=client_credentials&scope=orders%3Aread\n",
            ),
            (
                "deploy/s.json",
                "{\"uri\": \"https://kv-a.vault.azure.net/secrets/sendgrid-api-key/36c936aec9bdbea4a3f16eff078b3974\"}\n",
            ),
            (
                "deploy/g.yaml",
                "secret_name: projects/709590043506/secrets/github-app-private-key/versions/9f3c2a71b4d8e6f0a5c7\n",
            ),
            (
                "web/src/firebase.js",
                "// Public identifiers; access is enforced by Security Rules.\nconst firebaseConfig = {\n  apiKey: \"AIzaMQb5Cw1GC5u8ZIWjKBDO-xhza0JzcL1CqLr\",\n  authDomain: \"a-2e8r0.firebaseapp.com\",\n  projectId: \"a-2e8r0\",\n  appId: \"1:79686:web:4fb8\",\n};\n",
            ),
            (
                "api/openapi.yaml",
                "# the public sample token from jwt.io\nvalue: \"Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\"\n",
            ),
        ];
        for (path, text) in quiet {
            let f = rules(path, text);
            assert!(f.is_empty(), "{path}: {f:?}");
        }
        let loud: &[(&str, &str, &str)] = &[
            (
                "db/seed.sql",
                "INSERT INTO users (password) VALUES ('x');\n-- password Zq8v2!Lm4Kp7Rt\n",
                "Zq8v2!Lm4Kp7Rt",
            ),
            (
                "schema/auth.graphql",
                "# default\n  token: \"Zq8v2Lm4Kp7RtW9x\"\n",
                "Zq8v2Lm4Kp7RtW9x",
            ),
            (
                "deploy/Deploy.ps1",
                "$token = 'Zq8v2Lm4Kp7RtW9x'\n",
                "Zq8v2Lm4Kp7RtW9x",
            ),
            (
                "etl/load.py",
                "engine = create_engine(\"postgresql://analyst:Zq8v2Lm4Kp7Rt@warehouse:5432/dw\")\n",
                "postgresql://analyst:Zq8v2Lm4Kp7Rt@warehouse:5432/dw",
            ),
            (
                "docs/debug/x.http",
                "POST /oauth/token HTTP/1.1\n\ngrant_type=client_credentials&client_secret=Zq8v2Lm4Kp7RtW9x\n",
                "Zq8v2Lm4Kp7RtW9x",
            ),
            (
                "deploy/s.json",
                "{\"sendgrid_api_key\": \"36c936aec9bdbea4a3f16eff078b3974\"}\n",
                "36c936aec9bdbea4a3f16eff078b3974",
            ),
            (
                "web/src/config.js",
                "const firebaseConfig = {\n  apiKey: \"AIzaMQb5Cw1GC5u8ZIWjKBDO-xhza0JzcL1CqLr\",\n  authDomain: \"a-2e8r0.firebaseapp.com\",\n  appId: \"1:79686:web:4fb8\",\n};\n",
                "AIzaMQb5Cw1GC5u8ZIWjKBDO-xhza0JzcL1CqLr",
            ),
            (
                "src/maps.js",
                "const cfg = {\n  apiKey: \"AIzaMQb5Cw1GC5u8ZIWjKBDO-xhza0JzcL1CqLr\",\n  region: \"eu\",\n};\n",
                "AIzaMQb5Cw1GC5u8ZIWjKBDO-xhza0JzcL1CqLr",
            ),
            (
                "api/token.txt",
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\n",
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            ),
        ];
        for (path, text, want) in loud {
            let f = rules(path, text);
            assert!(
                f.iter().any(|f| f.ends_with(&format!("={want}"))),
                "{path}: {f:?}"
            );
        }
    }
}
