//! A secret literal wrapped in a call that converts it to bytes: Go
//! `[]byte("…")`, Python `bytes("…", "utf-8")`/`bytearray(…)`, Node
//! `Buffer.from("…")`, C# `Encoding.UTF8.GetBytes("…")`, JavaScript
//! `new TextEncoder().encode("…")`, Kotlin/Scala `"…".toByteArray()`;
//! and calls that wrap a literal secret (`SecretStr("…")`,
//! `SecretValue.unsafePlainText("…")`, `pulumi.secret("…")`).
//! The call is code, but its argument is the literal the key names
//! (`var hmacSecret = []byte("…")` is the classic HMAC key of a Go JWT
//! service): [`super::assign`] reads the literal inside and judges it as
//! it would a bare one. Suffix forms (`"…".encode()`, `"…".getBytes()`,
//! Rust and Python `b"…"`) need nothing here: the literal comes first.
//! A lookup inside the call (`[]byte(os.Getenv("JWT_SECRET"))`) is no
//! literal and stays code.

/// Conversion calls (lowercase) whose first argument is the value.
const CONVERSIONS: &[&str] = &[
    "[]byte(",
    "bytes(",
    "bytearray(",
    "buffer.from(",
    "encoding.utf8.getbytes(",
    "encoding.ascii.getbytes(",
    "encoding.default.getbytes(",
    "encoding.unicode.getbytes(",
    "new textencoder().encode(",
    // Calls whose name says they wrap a literal secret (issue 18,
    // generator-8): AWS CDK, Pulumi, pydantic, .NET/Java secret strings.
    "secretvalue.unsafeplaintext(",
    "secretvalue.plaintext(",
    "pulumi.secret(",
    "pulumi.output.secret(",
    "secretstr(",
    "secretstring(",
    "new secretstring(",
    // Password-hashing calls given the plaintext (issue 18, generator-13
    // `laravel-seeder-factory`: `'password' => Hash::make('…')` in a
    // production seeder): the hash is computed at run time, so the
    // literal is the password itself. Laravel, PHP, Django, Ruby bcrypt.
    "hash::make(",
    "bcrypt(",
    "password_hash(",
    "make_password(",
    "bcrypt::password.create(",
];

/// When the right-hand side at `p` of `lower` opens a conversion call
/// whose first argument is a string literal, the offset of that literal's
/// opening quote.
pub(crate) fn literal_argument(lower: &[u8], p: usize) -> Option<usize> {
    let rest = &lower[p..];
    let call = CONVERSIONS
        .iter()
        .find(|c| rest.starts_with(c.as_bytes()))?;
    let q = p + call.len();
    matches!(lower.get(q), Some(b'"' | b'\'' | b'`')).then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scanner::{ScanConfig, Scanner};

    #[test]
    fn conversion_calls_open_on_their_literal() {
        let l = br#"[]byte("k")"#;
        assert_eq!(literal_argument(l, 0), Some(7));
        assert_eq!(literal_argument(b"buffer.from('k')", 0), Some(12));
        assert_eq!(literal_argument(b"[]byte(os.getenv(\"x\"))", 0), None);
        assert_eq!(literal_argument(b"strings.toupper(\"k\")", 0), None);
        assert_eq!(literal_argument(b"hash::make('k')", 0), Some(11));
        assert_eq!(literal_argument(b"hash::make($request->password)", 0), None);
    }

    fn values(path: &str, text: &str) -> Vec<String> {
        Scanner::new(ScanConfig::default())
            .scan_bytes(path, text.as_bytes())
            .into_iter()
            .map(|f| f.value)
            .collect()
    }

    #[test]
    fn secrets_inside_byte_conversions_are_reported() {
        let s = "OjM4KS9Of9Mpe-aG+c=uY=ZN6_#NYIM^";
        for (path, text) in [
            (
                "internal/auth/jwt.go",
                format!("var hmacSecret = []byte(\"{s}\")\n"),
            ),
            (
                "app/auth.py",
                format!("SIGNING_SECRET = bytes(\"{s}\", \"utf-8\")\n"),
            ),
            (
                "src/auth.js",
                format!("const jwtSecret = Buffer.from('{s}');\n"),
            ),
            (
                "Auth/Jwt.cs",
                format!("var jwtSecret = Encoding.UTF8.GetBytes(\"{s}\");\n"),
            ),
            ("app/auth.py", format!("SECRET_KEY = \"{s}\".encode()\n")),
            (
                "src/Auth.java",
                format!("byte[] secret = \"{s}\".getBytes();\n"),
            ),
            (
                "database/seeders/AdminSeeder.php",
                format!("                'password' => Hash::make('{s}'),\n"),
            ),
        ] {
            assert_eq!(values(path, &text), vec![s.to_string()], "{text}");
        }
    }

    #[test]
    fn lookups_and_placeholders_inside_conversions_stay_quiet() {
        for text in [
            "var hmacSecret = []byte(os.Getenv(\"JWT_SECRET\"))\n",
            "var hmacSecret = []byte(cfg.Secret)\n",
            "var hmacSecret = []byte(\"changeme\")\n",
            "var hmacSecret = []byte(\"<your-secret-here>\")\n",
            "'password' => static::$password ??= Hash::make('password'),\n",
            "'password' => Hash::make($request->password),\n",
        ] {
            assert!(values("internal/auth/jwt.go", text).is_empty(), "{text}");
        }
    }
}
