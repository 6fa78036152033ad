//! When a file's name calls its contents a secret (issue 18, generator-7
//! `protobuf-descriptor`, `log-request-ids`, `sql-schema-hashes`).
//!
//! [`super::context`] lets the file's name name a random token, as
//! gitleaks' generic rule does: `.vault-token`, `master.key`,
//! `credentials`, `secrets.yml`, `token.txt` are credential stores whose
//! every random value is the secret. But a source, log, schema or document
//! file's name is about its domain: `token_pb2.py` is the generated code
//! of `token.proto` (its serialized descriptor is base64), `auth_access.log`
//! a log of request ids, `sessions.sql` a table's DDL and rows (bytea
//! digests), `session_store.go` code. Such a file's name names none of its
//! values; a credential in it is named by its own key, as anywhere else.

/// Extensions of files whose name is about a domain, not a store of
/// credentials: source code, generated code, logs, schemas and data
/// dumps, documents and notebooks.
const DOMAIN_EXTS: &[&str] = &[
    // Source code.
    "py", "pyi", "js", "ts", "jsx", "tsx", "mjs", "cjs", "go", "rb", "java", "kt", "kts", "rs",
    "php", "cs", "swift", "scala", "c", "cc", "cpp", "h", "hpp", "m", "mm", "dart", "lua", "pl",
    "ex", "exs", "erl", "clj", "hs", "vue", "svelte",
    // Schemas, interface definitions and queries.
    "sql", "proto", "graphql", "gql", "avsc", "thrift", // Logs and tabular data.
    "log", "csv", "tsv", "jsonl", "ndjson", // Documents, pages and notebooks.
    "md", "rst", "adoc", "html", "htm", "css", "scss", "ipynb",
];

/// True when the file's name at `path` may name its contents a secret:
/// anything but [`DOMAIN_EXTS`] files (extension-less files such as
/// `credentials`, `.pgpass`, `.netrc`, `id_rsa` included).
pub(crate) fn may_name_contents(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return true;
    };
    // A dotfile's name is its stem (`.vault-token`, `.pgpass`).
    if stem.is_empty() {
        return true;
    }
    !DOMAIN_EXTS.contains(&ext.to_ascii_lowercase().as_str())
}

/// Files a tool writes to hold its credentials, by name (lowercase), or
/// by the directory and name they always sit in: every value in them is
/// the tool's credential, whatever its key is called (Kaggle's
/// `kaggle.json` holds `{"username": …, "key": …}`). Issue 18,
/// generator-8 `kaggle-json-api-key`.
const CREDENTIAL_FILES: &[&str] = &[
    "kaggle.json",
    ".git-credentials",
    "credentials.json",
    "client_secret.json",
    "application_default_credentials.json",
    "service-account.json",
    ".databrickscfg",
    ".boto",
    ".s3cfg",
    "rclone.conf",
    ".pypirc",
    ".dockercfg",
    ".terraformrc",
    "credentials.tfrc.json",
    ".my.cnf",
    ".pgpass",
    ".netrc",
    "_netrc",
    ".authinfo",
    ".vault-token",
];

/// Credential files known by their directory and name.
const CREDENTIAL_PATHS: &[&str] = &[
    ".config/gh/hosts.yml",
    ".twilio-cli/config.json",
    ".docker/config.json",
    ".aws/credentials",
    ".kube/config",
    ".config/hub",
    ".heroku/credentials",
];

/// True when the file at `path` is a known credential file of a tool
/// ([`CREDENTIAL_FILES`], [`CREDENTIAL_PATHS`]): its name names every
/// value in it a secret.
pub(crate) fn is_credential_file(path: &str) -> bool {
    let p = path.replace('\\', "/").to_ascii_lowercase();
    let name = p.rsplit('/').next().unwrap_or(&p);
    CREDENTIAL_FILES.contains(&name)
        || CREDENTIAL_PATHS
            .iter()
            .any(|c| p == *c || p.ends_with(&format!("/{c}")))
}

#[cfg(test)]
mod tests {
    use super::{is_credential_file, may_name_contents};
    use crate::scanner::{ScanConfig, Scanner};

    #[test]
    fn stores_and_domain_files() {
        for p in [
            "ops/.vault-token",
            "config/master.key",
            "home/.aws/credentials",
            "config/secrets.yml",
            "ops/token.txt",
            "certs/server.key",
            ".pgpass",
            "secrets/prod.env",
        ] {
            assert!(may_name_contents(p), "{p}");
        }
        for p in [
            "gen/python/auth/v1/token_pb2.py",
            "test/data/auth_access.log",
            "sql/sessions.sql",
            "internal/session_store.go",
            "docs/tokens.md",
            "proto/auth/v1/token.proto",
        ] {
            assert!(!may_name_contents(p), "{p}");
        }
    }

    #[test]
    fn known_credential_files() {
        for p in [
            "notebooks/.kaggle/kaggle.json",
            "home/me/.config/gh/hosts.yml",
            ".twilio-cli/config.json",
            "ops/.databrickscfg",
            "rclone.conf",
        ] {
            assert!(is_credential_file(p), "{p}");
        }
        for p in [
            "src/kaggle_utils.json",
            "config/hosts.yml",
            "app/config.json",
        ] {
            assert!(!is_credential_file(p), "{p}");
        }
        let s = Scanner::new(ScanConfig::default());
        let kaggle = "{\"username\": \"kp06\", \"key\": \"bc2f1d4f56352fbdf6de55a128751bc1\"}\n";
        assert!(
            !s.scan_bytes("notebooks/.kaggle/kaggle.json", kaggle.as_bytes())
                .is_empty()
        );
        // The same bare key in an ordinary JSON file names nothing.
        assert!(
            s.scan_bytes("data/index.json", kaggle.as_bytes())
                .is_empty()
        );
    }

    /// A bare random token is named by a credential store's name, not by a
    /// domain file's; a keyed secret in a domain file is still reported.
    #[test]
    fn file_names_in_a_scan() {
        const T: &str = "Zq8v2Lm4Kp7RtX9wB3nY6cQ1dF5h";
        let s = Scanner::new(ScanConfig::default());
        let line = format!("2024-02-07T20:34:46Z DEBUG [auth] job={T} enqueued\n");
        assert!(
            s.scan_bytes("test/data/auth_access.log", line.as_bytes())
                .is_empty()
        );
        assert!(
            !s.scan_bytes("ops/.vault-token", format!("{T}\n").as_bytes())
                .is_empty()
        );
        assert!(
            !s.scan_bytes("ops/token.txt", format!("{T}\n").as_bytes())
                .is_empty()
        );
        // Generated protocol-buffer code: the serialized descriptor is
        // base64 in a file named for its message.
        let pb2 = format!(
            "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n# source: auth/v1/token.proto\nDESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(base64.b64decode(\"{T}{T}\"))\n"
        );
        assert!(
            s.scan_bytes("gen/python/auth/v1/token_pb2.py", pb2.as_bytes())
                .is_empty()
        );
        let keyed = format!("SESSION_SECRET = \"{T}\"\n");
        assert!(
            !s.scan_bytes("app/session_store.py", keyed.as_bytes())
                .is_empty()
        );
    }
}
