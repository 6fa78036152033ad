//! False-positive classes measured on held-out code (issue 18), one test
//! per class: several cases in the style of each class that are not
//! secrets, and negative controls proving a real secret in the same
//! context is still found. The cases are written fresh for these tests,
//! not copied from the held-out corpus, so they test the class and not
//! its instances.

use graders::scanner::{Finding, ScanConfig, Scanner};

/// Under the redactor's configuration, which reports random tokens whether
/// or not anything names them a secret: the classes are judged on the
/// random-token rule itself. A scan reports a subset of these findings.
fn scan(path: &str, text: &str) -> Vec<Finding> {
    Scanner::new(ScanConfig::redaction()).scan_bytes(path, text.as_bytes())
}

/// Every `(path, text)` yields no finding at all.
fn clean(cases: &[(&str, &str)]) {
    for (path, text) in cases {
        let f = scan(path, text);
        assert!(
            f.is_empty(),
            "false positive in {path}: {text:?} gave {:?}",
            f.iter().map(|f| (&f.rule, &f.value)).collect::<Vec<_>>()
        );
    }
}

/// Every `(path, text, value)` yields a finding whose value is `value`.
fn found(cases: &[(&str, &str, &str)]) {
    for (path, text, want) in cases {
        let f = scan(path, text);
        assert!(
            f.iter().any(|f| f.value == *want),
            "missed {want:?} in {path}: {text:?}; got {:?}",
            f.iter().map(|f| (&f.rule, &f.value)).collect::<Vec<_>>()
        );
    }
}

const HEX40: &str = "4e1d9a7c03b2f58e6a917cd02b3f4e5a6c7d8e9f";
const GHP: &str = "ghp_R8sT2vW4yZ6bD8fH0jL2nP4rT6vX8zB0dF2h";

#[test]
fn commit_ids_in_vcs_contexts() {
    let changelog = format!(
        "# Changelog\n\n## 2.4.1\n- Rotate signing secret handling in webhook verifier ({HEX40})\n* Token cache eviction fix {HEX40}\n"
    );
    let cases = [
        ("CHANGELOG.md", changelog.as_str()),
        (
            "docs/notes.md",
            &format!("Session expiry bug, fixes {HEX40}.\n"),
        ),
        (
            "NOTES.txt",
            &format!("reverts {HEX40} (auth header parsing)\n"),
        ),
        (
            "README.md",
            &format!("See https://github.com/acme/billing/commit/{HEX40} for the token fix\n"),
        ),
        (
            "docs/upgrade.md",
            &format!("cherry-picked {HEX40} onto release-2.3\n"),
        ),
        ("RELEASES.md", &format!("- Secret rotation [{HEX40}]\n")),
        (
            ".github/workflows/release.yml",
            &format!("      - uses: acme/sign-action@v2\n        with:\n          ref: {HEX40}\n"),
        ),
        (
            "docs/debug.md",
            &format!("git bisect bad; first bad commit is pinned {HEX40}\n"),
        ),
        (
            "docs/diff.md",
            &format!(
                "compare https://gitlab.example.org/a/b/-/compare/{HEX40}...{}\n",
                &HEX40[..12]
            ),
        ),
    ];
    let cases: Vec<(&str, &str)> = cases.iter().map(|(p, t)| (*p, *t)).collect();
    clean(&cases);
    // Controls: a provider token next to a changelog word, and a hex key
    // assigned to a credential name on a changelog bullet, still fire.
    found(&[
        ("CHANGELOG.md", &format!("- Fix leaked token {GHP}\n"), GHP),
        (
            "CHANGELOG.md",
            &format!("- Fix webhook: signing_secret = {HEX40}\n"),
            HEX40,
        ),
        ("notes.txt", &format!("deploy {HEX40} now\n"), HEX40),
    ]);
}

#[test]
fn fixtures_and_fake_values() {
    clean(&[
        (
            "tests/test_login.py",
            "payload = {\"password\": \"test1234\"}\n",
        ),
        ("spec/auth_spec.rb", "let(:token) { 'mock-jwt-token' }\n"),
        ("src/api.test.ts", "const apiToken = \"test-token-123\";\n"),
        (
            "fixtures/user.json",
            "{\"api_key\": \"fake_api_key_value\"}\n",
        ),
        (
            "tests/conftest.py",
            "SECRET_KEY = \"dummy-secret-for-tests\"\n",
        ),
        ("config/test.yaml", "client_secret: sample-client-secret\n"),
        (
            ".env.test",
            "GITHUB_TOKEN=ghp_000000000000000000000000000000000000\n",
        ),
        (".env.ci", "AWS_ACCESS_KEY_ID=AKIA0000000000000000\n"),
        ("app.cfg", "api_token = 123456789012345\n"),
        ("README.md", "password: changeme123\n"),
        ("docs/setup.md", "token: placeholder-token\n"),
    ]);
    // Controls: a random value under a fixture-ish name, a short real
    // password, and real provider tokens in a test file.
    found(&[
        (
            "tests/test_api.py",
            "API_TOKEN = \"test_Zk3mQ8pL2xN7vR4tW9yB\"\n",
            "test_Zk3mQ8pL2xN7vR4tW9yB",
        ),
        ("tests/conftest.py", &format!("TOKEN = \"{GHP}\"\n"), GHP),
        ("config/db.ini", "password = hunter2\n", "hunter2"),
        (
            "config/db.ini",
            "password = \"Tr0ub4dor&3\"\n",
            "Tr0ub4dor&3",
        ),
        (".env", "DB_PASSWORD=P@ssw0rd!\n", "P@ssw0rd!"),
    ]);
}

#[test]
fn public_keys() {
    let rsa = "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7k9q2Lm4Kp7RtZk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9wB3dF6hJ0lN4pR8tV2xZ6bD0fH4jL8nP2rT6vX0zB4dF8hJ2lN6pR0tV4xZ8bD2fH6jL0nP4rT8vX2zB6dF0hJ4lN8pR2tV6xZ0bD4fH8jL2nP6rT0vX4zB8dF2hJ6lN0pR4tV8xZ2bD6fH0jL4nP8rT2vX6zB0dF4h";
    let ed = "AAAAC3NzaC1lZDI1NTE5AAAAIJk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7";
    let ecdsa = "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBJk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9wB3dF6hJ0lN4pR8tV2xZ6bD0fH4jL8=";
    let pgp = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGRk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9w\nB3dF6hJ0lN4pR8tV2xZ6bD0fH4jL8nP2rT6vX0zB4dF8hJ2lN6pR0tV4xZ8bD2fH6jL\n=Zk3m\n-----END PGP PUBLIC KEY BLOCK-----\n";
    let pem_pub = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAq8Zk3mQ8pL2xN7vR4tW9yB1c\nHq5sD8fJ2kM6nP0rT3vX7zA1cE4gI8kL2oQ5uY9wB3dF6hJ0lN4pR8tV2xZ6bD0fH4jL\n-----END PUBLIC KEY-----\n";
    let authorized = format!(
        "ssh-rsa {rsa} deploy@ci\nssh-ed25519 {ed} ops@bastion\necdsa-sha2-nistp256 {ecdsa}\nsk-ssh-ed25519@openssh.com {ed} yubikey\n"
    );
    let helm = format!("deployKey:\n  publicKey: \"ssh-ed25519 {ed} argocd\"\n");
    let tf = format!(
        "resource \"aws_key_pair\" \"deployer\" {{\n  public_key = \"ssh-rsa {rsa} deployer\"\n}}\n"
    );
    let go = format!("const hostKey = `ecdsa-sha2-nistp256 {ecdsa}`\n");
    let age = "recipients:\n  - age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n";
    clean(&[
        ("home/deploy/.ssh/authorized_keys", authorized.as_str()),
        ("charts/app/values.yaml", helm.as_str()),
        ("infra/keys.tf", tf.as_str()),
        ("cmd/agent/hostkey.go", go.as_str()),
        ("keys/release.asc", pgp),
        ("keys/jwt.pub", pem_pub),
        (".sops.yaml", age),
    ]);
    // Control: a private key next to a public one, and an age secret key.
    let private = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACCZN5kPKS9sTe70eLVvcgdXB6ubA/HydpDpz9K0697+wAAAAJhZk3mQ8p\n-----END OPENSSH PRIVATE KEY-----";
    let both = format!("{private}\nssh-ed25519 {ed} me@host\n");
    let f = scan("keys/id_ed25519", &both);
    assert!(
        f.iter().any(|f| f.rule == "private-key"),
        "private half still found: {f:?}"
    );
    assert!(
        f.iter().all(|f| f.rule == "private-key"),
        "only the private half: {f:?}"
    );
    found(&[(
        "keys/age.txt",
        "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGP\nAPI_TOKEN=Zk3mQ8pL2xN7vR4tW9yB1cHq\n",
        "Zk3mQ8pL2xN7vR4tW9yB1cHq",
    )]);
}

#[test]
fn infrastructure_references() {
    clean(&[
        ("infra/rds.tf", "  password = var.db_password\n"),
        (
            "infra/rds.tf",
            "  master_password = data.aws_secretsmanager_secret_version.rds.secret_string\n",
        ),
        (
            "infra/app.tf",
            "  api_token = local.api_token\n  secret_key = module.kms.secret_key\n",
        ),
        ("infra/app.tf", "  auth_token = each.value.auth_token\n"),
        (
            "charts/app/templates/deploy.yaml",
            "  DB_PASSWORD: {{ .Values.db.password | quote }}\n  apiToken: {{.Values.apiToken}}\n",
        ),
        (
            ".github/workflows/ci.yml",
            "  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  deploy_token: ${{secrets.DEPLOY_TOKEN}}\n",
        ),
        (
            "k8s/deploy.yaml",
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: billing-db-credentials\n        key: password\n",
        ),
        (
            "config/app.yaml",
            "db_password: vault:secret/data/billing#password\n",
        ),
        ("config/app.yaml", "api_token: secret/data/app#api_key\n"),
        (
            "config/app.yaml",
            "client_secret: ref+vault://secret/oauth#client_secret\n",
        ),
        (
            "config/app.yaml",
            "password: op://Engineering/billing-db/password\n",
        ),
        (
            "template.yaml",
            "MasterUserPassword: '{{resolve:secretsmanager:prod/db:SecretString:password}}'\n",
        ),
        (
            "docker-compose.yml",
            "  POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?required}\n  REDIS_PASSWORD: $REDIS_PASSWORD\n",
        ),
        ("app.ini", "password = %(db_password)s\n"),
        (
            ".env.example",
            "API_TOKEN=<your-api-token>\nSTRIPE_SECRET_KEY=sk_live_your_key_here\n",
        ),
        ("deploy.rb", "secret_token = ENV.fetch(\"SECRET_TOKEN\")\n"),
        ("settings.conf", "secret_key = config.get(\"secret_key\")\n"),
        (
            "config/app.yaml",
            "password_file: /run/secrets/db_password\napi_token: /etc/billing/api-token\n",
        ),
    ]);
    // Controls: a literal next to references still fires.
    found(&[
        (
            "infra/rds.tf",
            "  password = \"Zq8v2Lm4Kp7Rt\"\n  username = var.db_user\n",
            "Zq8v2Lm4Kp7Rt",
        ),
        (
            ".github/workflows/ci.yml",
            "  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  API_TOKEN: Zk3mQ8pL2xN7vR4tW9yB1cHq\n",
            "Zk3mQ8pL2xN7vR4tW9yB1cHq",
        ),
    ]);
}

#[test]
fn urls_without_userinfo() {
    clean(&[
        (
            "config/app.yaml",
            "tokenEndpoint: postgres://db.internal:5432/billing\n",
        ),
        (
            "src/main/resources/application.yml",
            "tokenUrl: https://auth.internal.acme.io/oauth2/token\n",
        ),
        (
            "config.json",
            "{\"secretsEndpoint\": \"https://vault.service.consul:8200/v1\"}\n",
        ),
        (
            ".env",
            "AUTH_TOKEN_URI=https://login.microsoftonline.com/common/oauth2/v2.0/token\n",
        ),
        (
            "config.toml",
            "token_issuer = \"https://issuer.acme.dev/realms/billing\"\n",
        ),
    ]);
    found(&[
        (
            "config/app.yaml",
            "tokenEndpoint: postgres://billing:Zq8v2Lm4Kp7Rt@db.internal:5432/billing\n",
            "postgres://billing:Zq8v2Lm4Kp7Rt@db.internal:5432/billing",
        ),
        (
            "config/app.yaml",
            "callback: https://hooks.acme.io/in?token=Zk3mQ8pL2xN7vR4tW9yB1cHq\n",
            "Zk3mQ8pL2xN7vR4tW9yB1cHq",
        ),
    ]);
}

#[test]
fn identifiers_and_words_as_values() {
    clean(&[
        (
            "src/main/resources/app.properties",
            "security.oauth2.token-factory=OAuth2AccessTokenResponseClientFactory\n",
        ),
        ("config.yaml", "token_list: \"tenant-window\"\n"),
        ("config.yaml", "secret_store: orders-rollout\n"),
        ("settings.ini", "auth_token_mode = refresh.sliding\n"),
        ("app.yaml", "apiKeyHeader: X-Billing-Api-Key\n"),
        ("app.yaml", "token_strategy: JwtBearerTokenStrategy\n"),
        ("app.yaml", "password_policy_name: strong-default\n"),
    ]);
    found(&[
        (
            "config.yaml",
            "token_list: \"q8Zk3Vb7Lm2Np9Rt\"\n",
            "q8Zk3Vb7Lm2Np9Rt",
        ),
        (
            "settings.ini",
            "auth_token = a8f3k2m9x7q4\n",
            "a8f3k2m9x7q4",
        ),
    ]);
}

#[test]
fn masked_values() {
    clean(&[
        ("billing.md", "stripe_key: sk_live_••••9506\n"),
        (
            "logs/app.log",
            "using token=ghp_****************************a1b2\n",
        ),
        ("ops.md", "API_KEY=AKIA############\n"),
        ("README.md", "secret_key = abcd…wxyz\n"),
        ("notes.txt", "password: xxxxxxxx\n"),
        ("notes.txt", "api_token: tok_●●●●●●●●3f9a\n"),
        ("notes.txt", "client_secret: ?????????\n"),
    ]);
    found(&[(
        "billing.md",
        "stripe_key: sk_live_51HqZk3mQ8pL2xN7vR4tW9yB\n",
        "sk_live_51HqZk3mQ8pL2xN7vR4tW9yB",
    )]);
}

/// Classes the external corpus (graders/tests/external_corpus.rs) showed:
/// checksum-tool output lines, Stripe publishable keys and alphabet-walk
/// placeholders are not secrets; a secret key, a restricted key and a hex
/// key under a credential name next to them still are.
#[test]
fn checksum_listings_publishable_keys_and_walks() {
    let sha256 = "a59b03600889360a971f2db7e747c4cc51f055fcf687448dc92c58b9e3a8a010";
    let md5 = "5c94767cedb5d6987c902ac850ded2c6";
    let listing = format!("{sha256}  dist/app.tar.gz\n{md5} *release/app.zip\n");
    clean(&[
        ("SHA256SUMS", listing.as_str()),
        (
            "web/src/stripe.ts",
            "const stripe = Stripe(\"pk_live_Z6Lvl6PfQH7A2Ngjo1UdkU7V\");\n",
        ),
        (
            "config/llm.yaml",
            "anthropic_api_key: sk-ant-api03-abc123xyz-456de-klMnopqrstuvwx-3456yza789bcde-1234fghijklmnopAA\n",
        ),
    ]);
    found(&[
        (
            "deploy/notes.txt",
            &format!("upload with key {sha256} to the bucket\n"),
            sha256,
        ),
        (
            "web/src/server.ts",
            "const key = \"sk_live_Z6Lvl6PfQH7A2Ngjo1UdkU7V\";\n",
            "sk_live_Z6Lvl6PfQH7A2Ngjo1UdkU7V",
        ),
        (
            "config/app.env",
            "WEBHOOK_SECRET=a59b03600889360a971f2db7e747c4cc\n",
            "a59b03600889360a971f2db7e747c4cc",
        ),
    ]);
}

/// Masks written with any masking character repeated, in the layouts of
/// several formats; the same keys with a real value still fire.
#[test]
fn masks_with_any_repeated_masking_character() {
    clean(&[
        ("deploy/values.yaml", "apiToken: \"████████████\"\n"),
        (".env", "DB_PASSWORD=■■■■■■■■\n"),
        ("docs/setup.md", "export API_TOKEN=··········\n"),
        ("config/app.json", "{\"client_secret\": \"××××××××××\"}\n"),
        ("infra/main.tf", "  password = \"░░░░░░░░\"\n"),
        (
            "src/Config.java",
            "String apiKey = \"sk_live_∙∙∙∙∙∙∙∙∙∙4242\";\n",
        ),
    ]);
    found(&[
        (
            "deploy/values.yaml",
            "apiToken: \"Zk3mQ8pL2xN7vR4t\"\n",
            "Zk3mQ8pL2xN7vR4t",
        ),
        (".env", "DB_PASSWORD=Tr0ub4dor!3x\n", "Tr0ub4dor!3x"),
    ]);
}

/// Typed filler that no issuer emits: a block repeated over most of the
/// value, an alphabet or digit walk, one character repeated (the shapes
/// `graders/corpus/external/import.py` re-labels); random values of the
/// same length and layout still fire.
#[test]
fn filler_values() {
    clean(&[
        (
            "config/ibm.yaml",
            "ibm_cloud_api_key: abcd1234abcd1234abcd1234ABCD1234ABCD1234\n",
        ),
        (
            "ci/.gitlab-ci.yml",
            "  REGISTRATION_TOKEN: GR134894112312312312312312312\n",
        ),
        (".env", "SNYK_TOKEN=12345678-ABCD-ABCD-ABCD-1234567890AB\n"),
        (
            "cos.py",
            "secret_access_key = \"deadbeefdeadbeefdeadbeefdeadbeef\"\n",
        ),
    ]);
    found(&[
        (
            "config/ibm.yaml",
            "ibm_cloud_api_key: q8Zk3Vb7Lm2Np9RtW4xY6cJ1hF5sD0gA\n",
            "q8Zk3Vb7Lm2Np9RtW4xY6cJ1hF5sD0gA",
        ),
        (
            ".env",
            "SNYK_TOKEN=3f9a1c7e-5b2d-4086-af1e-9c3b7d5a2f8e\n",
            "3f9a1c7e-5b2d-4086-af1e-9c3b7d5a2f8e",
        ),
    ]);
}

/// Declarations in the languages of the held-out corpus: each literal
/// under a credential name is found, each reference is not.
#[test]
fn declarations_across_languages() {
    let v = "q8Zk3Vb7Lm2Np9Rt";
    let found_cases: Vec<(&str, String)> = vec![
        ("cmd/main.go", format!("var apiToken string = \"{v}\"\n")),
        (
            "src/config.ts",
            format!("export const apiToken: string = '{v}';\n"),
        ),
        (
            "src/App.kt",
            format!("val clientSecret: String = \"{v}\"\n"),
        ),
        (
            "src/Main.java",
            format!("System.setProperty(\"db.password\", \"{v}\");\n"),
        ),
        (
            "settings.xml",
            format!("<server><id>corp</id><password>{v}</password></server>\n"),
        ),
        ("Makefile", format!("API_TOKEN ?= {v}\n")),
        ("Dockerfile", format!("ENV API_TOKEN={v}\n")),
        ("app.php", format!("$apiToken .= \"{v}\";\n")),
    ];
    let f: Vec<(&str, &str, &str)> = found_cases
        .iter()
        .map(|(p, t)| (*p, t.as_str(), v))
        .collect();
    found(&f);
    clean(&[
        (
            "cmd/main.go",
            "var apiToken string = os.Getenv(\"API_TOKEN\")\n",
        ),
        (
            "src/config.ts",
            "export const apiToken: string = process.env.API_TOKEN ?? '';\n",
        ),
        (
            "src/Main.java",
            "System.setProperty(\"db.password\", System.getenv(\"DB_PASSWORD\"));\n",
        ),
        (
            "settings.xml",
            "<server><password>${env.NEXUS_PASSWORD}</password></server>\n",
        ),
        ("Makefile", "API_TOKEN ?= $(shell cat .token)\n"),
        ("Dockerfile", "ARG NPM_TOKEN\nENV NPM_TOKEN=${NPM_TOKEN}\n"),
    ]);
}

/// A lone JOSE header or a JWT whose header is broken is encoded JSON
/// text, not a random secret; an encoded registry credential
/// (`.dockerconfigjson`, base64 of JSON without a JOSE header) in a
/// Kubernetes Secret still is one.
#[test]
fn encoded_jose_headers_and_encoded_configs() {
    clean(&[
        (
            "docs/auth.md",
            "The header `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9` says HS256.\n",
        ),
        (
            "src/auth.test.ts",
            "const broken = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ.eyJzdWIiOiIxMjM0NTY3ODkwIn0';\n",
        ),
    ]);
    let blob =
        "eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJZbTkwT2xwck0yMVJPSEJNTW5oT04zWlNOSFE9In19fQ==";
    let text = format!(
        "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: {blob}\n"
    );
    // Found whole or through the decoder (the nested `auth` value).
    let f = scan("k8s/registry-secret.yaml", &text);
    assert!(
        f.iter().any(|f| f.line == 5),
        "encoded registry credential missed: {:?}",
        f.iter().map(|f| (&f.rule, &f.value)).collect::<Vec<_>>()
    );
}

/// Classes of the third generator (graders/corpus/external/
/// make_hard_negatives.py): hashes of passwords, committed ciphertext,
/// structured public ids, public DER, JWKS and key names that say a value
/// is public or a cipher parameter. Controls: a password, a provider key
/// inside a ciphertext-looking file and a private JWK member still fire.
#[test]
fn hashes_ciphertext_public_ids_and_parameters() {
    clean(&[
        (
            "tests/fixtures/users.json",
            "[{\"email\": \"ops@acme.io\", \"password_hash\": \"$2b$12$WCzaqFzvxiREySuOl1d3NDQHrV2ftN9YtMzHnNpzTObvBzH/bkDmd\"}]\n",
        ),
        (
            "app/fixtures/auth.json",
            "{\"password\": \"pbkdf2_sha256$600000$MagrxwcKcnsz9JV3rIgyb0$kuh+k478YTPnAsPFYu1z3JlkDZYNcMI4d7BrCDf96Xc=\"}\n",
        ),
        (
            "secrets/prod.enc.yaml",
            "db:\n    password: ENC[AES256_GCM,data:l9pOMnLDEcwq+a/f7KA1QkvF,iv:Yqfws1SQWhE/Sj+vEwdta9Nxcp9T3AjpWCbh5TQV88E=,tag:lJ/38gLtUiJj41r07fXQ6w==,type:str]\n",
        ),
        (
            "group_vars/all/vault.yml",
            "db_password: !vault |\n    $ANSIBLE_VAULT;1.1;AES256\n    105faa15e573ba3ab15ee96f3f59edc5f350b2ce856ec31af894831830824b193aca0d68cf66d93d\n",
        ),
        (
            "fixtures/stripe_event.json",
            "{\"id\": \"evt_r9SrdbhE8ISMaTb3jgpcOJCy\", \"customer\": \"cus_NffrFeUfNV2Hib\", \"price\": \"price_6XTYZScK98AUaLwzsFlIjE24\"}\n",
        ),
        (
            "src/sms.ts",
            "export const SERVICE_SID = \"MGe3edc8349ec0934d0c5796dcc19eb20f\";\n",
        ),
        (
            "deployments.json",
            "{\"address\": \"0xA0Dc3F1A773C250552F016e9A7b7C2e0fD1bfd09\", \"txHash\": \"0xefd0903194fbbc4639a58c4801972759c225b6f3e8c31af1d3b2157ab40a5854\"}\n",
        ),
        (
            "dns/records.tf",
            "  records = [\"v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDouA/7bHVTUbAYSUU3iK8bZAC+e16Sna1oNpNZ48NUVLVEFqExCTxGkOfDJyzbs8X6IKw0Ul\"]\n",
        ),
        (
            "public/jwks.json",
            "{\"keys\": [{\"kty\": \"RSA\", \"kid\": \"QYsd7_tdTnUf9rUV74OyVxM1uka\", \"n\": \"djF2EBYGJVm2fvjc7HNI4eTqlX3_Pr8qMe4vMzocp0VIpZ6uhz9TfB9dFczgozGCBjWRXkqRcp75ii32\", \"e\": \"AQAB\"}]}\n",
        ),
        (
            "tests/test_cipher.py",
            "VECTOR = {\"iv\": \"ce5631faeef20487e34701c7\", \"salt\": \"f71efe5590bb2e715f6a667541e63515\", \"tag\": \"77ab3c5fc265f107363af01b62b796e1\"}\n",
        ),
        (
            "web/.env.production",
            "NEXT_PUBLIC_AUTH0_CLIENT_ID=UNJKowfzC7GgoE1kvbjIss80gdHJBj1n\nNEXT_PUBLIC_SENTRY_DSN=https://f477c7bf613f56808390de9dedf89ba3@o1.ingest.sentry.io/2\n",
        ),
        (
            "locales/en.json",
            "{\"secret_question\": \"What was the name of your first school?\"}\n",
        ),
        (
            "App.xcodeproj/project.pbxproj",
            "\t\tB344F66EED0B7EE380F807FA /* AppDelegate.swift in Sources */ = {isa = PBXBuildFile; fileRef = B325BDD311480DABD96809BF; };\n",
        ),
        (
            "Assets/Player.cs.meta",
            "fileFormatVersion: 2\nguid: 3a0fce48ee5b155a3298b58f5e667406\n",
        ),
        (
            "docs/ssh.md",
            "ED25519 key fingerprint is SHA256:uxfwQ0+fdEybjlNXqbdYPkYbGIfdk3Gl2dqbZOWvQgQ.\n",
        ),
        ("mysql.md", "mysql -h db -u admin -p orders < dump.sql\n"),
        (
            "tests/fixtures/orders.json",
            "{\"_id\": {\"$oid\": \"65590ce26fa48f4ccf7d8680\"}}\n",
        ),
        (
            "scripts/migrate.js",
            "db.orders.find({ _id: ObjectId(\"65590ce26fa48f4ccf7d8680\") });\n",
        ),
        (
            "deploy/release.env",
            "SENTRY_RELEASE=d43b8c55c2a58b0ead6376aef89c528f7025268e\n",
        ),
        (
            "nix/default.nix",
            "    sha256 = \"500arhc2ibjxdiyd79p7ayly63i9a9rbv4cz69il7v8vlk5d7877\";\n",
        ),
        (
            "infra/azuredeploy.json",
            "\"administratorLoginPassword\": \"[parameters('adminPassword')]\"\n",
        ),
        (
            "Pulumi.prod.yaml",
            "config:\n  app:dbPassword:\n    secure: AAABAvxsZh3sbTYcHSCVfIbOrhqNpFbkNChtL2d+oJ9Qz/leALYpILQC\n",
        ),
        (
            "config/credentials.yml.enc",
            "GsbQlUh3HMVAWMfzUT4FaV8j0/l2TdMoegb4daJ4EMb8dog3IIE5Ta0+z5pA--Zk3mQ8pL2xN7vR4t--W9yB1cHq5sD8fJ2kM6nP0r==",
        ),
        (
            "data_bags/prod/db.json",
            "{\"encrypted_data\": \"dNUpdxX5GcbF3sxl9IT7mrsySS7/eJH9FWyb0JwNKLjP2VhL9Zr5\", \"iv\": \"Yqfws1SQWhE/Sj+v\"}\n",
        ),
        (
            "terraform/.terraform.lock.hcl",
            "  hashes = [\n    \"h1:LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=\",\n    \"zh:6b1140bc204f1fed3acc6fb2221e80689bfe0a9ba8c846ecdf3a374bc5dd8ddf\",\n  ]\n",
        ),
    ]);
    found(&[
        (
            "config/app.yaml",
            "password: \"Zk3$mQ8pL2xN$7vR4tW9yB\"\n",
            "Zk3$mQ8pL2xN$7vR4tW9yB",
        ),
        (
            "secrets/prod.enc.yaml",
            &format!("github: ENC[AES256_GCM,data:{GHP},iv:Yqfws1SQWhE=,tag:lJ/38gLt,type:str]\n"),
            GHP,
        ),
        (
            "public/jwks.json",
            "{\"kty\": \"RSA\", \"d\": \"djF2EBYGJVm2fvjc7HNI4eTqlX3_Pr8qMe4vMzocp0VIpZ6u\"}\n",
            "djF2EBYGJVm2fvjc7HNI4eTqlX3_Pr8qMe4vMzocp0VIpZ6u",
        ),
        (
            "src/main/resources/hibernate.cfg.xml",
            "<property name=\"connection.password\">p-zDtYs4SQNSBNy</property>\n",
            "p-zDtYs4SQNSBNy",
        ),
        (
            "docs/runbook.md",
            "mysql -h db.prod -u admin -p'evCmx1z6rT*%Nd5rF-GS*g' orders < dump.sql\n",
            "evCmx1z6rT*%Nd5rF-GS*g",
        ),
        (
            "Pulumi.dev.yaml",
            "config:\n  app:apiKey: Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\n",
            "Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
        ),
        (
            "config/master.key",
            "9f2c4e7a1b3d5f608e2a4c6b8d0f1e3a\n",
            "9f2c4e7a1b3d5f608e2a4c6b8d0f1e3a",
        ),
        (
            "config/twilio.rb",
            "c.auth_token = 'e3edc8349ec0934d0c5796dcc19eb20f'\n",
            "e3edc8349ec0934d0c5796dcc19eb20f",
        ),
    ]);
}

/// Issue 18, generator-3 round 5: classes of a fifth held-out-like round,
/// written fresh here (other values and layouts than the corpus), with a
/// secret in the same place that is still found.
#[test]
fn round_five_hard_negatives() {
    let resx = "<data name=\"$this.Icon\" mimetype=\"application/x-microsoft.net.object.bytearray.base64\">\n  <value>\n        AAABAAEAICAAAAEAIACoEAAAFgAAACgAAAAgAAAAQAAAAAEAIAAAAAAAABAAABMLAAATCwAAAAAAAAAA\n        Qm9vdHN0cmFwIGljb24gZGF0YSwgbm90IGEga2V5OyBqdXN0IHBpeGVscyBvZiBhbiBpY29uIGZpbGU\n        x7Pq2Lm9Vb3Rw4Kd8Hs1Jf6Ng0Tc5Ye2Ua7Wi3Xo9Zr1Ae4Bg8Ch6Dj0Ek2Fl4Gm6Hn8Ip0Jq2Kr4Ls\n</value>\n</data>\n";
    clean(&[
        (
            "src/crypto/kdf_test.rs",
            "const IKM: &str = \"0f0e0d0c0b0a09080706050403020100fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0\";\n",
        ),
        (
            "web/vendor/zstd.min.js",
            "var b=\"AGFzbQEAAAABhoCAgAABYAF/AX9gAn9/AX9gA39/fwF/YAABf2AEf39/fwF/YAV/f39/fwF/\";\n",
        ),
        ("src/App/Form1.resx", resx),
        (
            "res/xml/network_security_config.xml",
            "<pin digest=\"SHA-256\">k3XnEYQCK79AtL9GYnT/nyhsabas03V+bhRQYHQbpXU=</pin>\n",
        ),
        (
            "src/net/Pins.java",
            "pinner.add(\"*.acme.io\", \"sha256/k3XnEYQCK79AtL9GYnT/nyhsabas03V+bhRQYHQbpXU=\");\n",
        ),
        (
            "geth/static-nodes.json",
            "[\"enode://a979fb575495b8d6db44f750317d0f4622bf4c2aa3365d6af7c284339968eef29b69ad0dce72a4d8db5ebb4968de0e3bec910127f134779fbcb0cb6d3331163c@52.16.188.185:30303\"]\n",
        ),
        (
            "tests/fixtures/cdn.har",
            "{\"name\": \"ETag\", \"value\": \"W/\\\"5e6f0a1b2c3d4e5f60718293a4b5c6d7\\\"\"}\n",
        ),
        (
            "docs/KEYS",
            "pub   ed25519 2023-05-01 [SC]\n      7C3B9E1F2A4D6B8C0E2F4A6B8D0C2E4F6A8B0D2C\nuid   Release Bot <rel@acme.io>\n",
        ),
        (
            "docs/howto.md",
            "```\n$ git rev-parse --verify HEAD\n4b7e9a1c3d5f7b9d1e3a5c7e9b1d3f5a7c9e1b3d\n```\n",
        ),
        (
            "db/seed.sql",
            "INSERT INTO reset_tokens (user_id, token_hash) VALUES\n  (7, '9f1e3d5c7b9a1e3d5c7b9a1f3e5d7c9b1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d');\n",
        ),
        (
            "ports/vcpkg.json",
            "{ \"builtin-baseline\": \"1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f\" }\n",
        ),
        (
            "src/locales/en.json",
            "{ \"apiKeys.count\": \"{n, plural, one {# API key} other {# API keys}}\" }\n",
        ),
        (
            "docs/vault.md",
            "vault kv put secret/billing stripe_key=@stripe-key.txt\n",
        ),
        (
            "ci/pipeline.yml",
            "      SecretsFilter: 'stripe-key,smtp-password'\n",
        ),
        (
            "deploy/app.service",
            "LoadCredential=api-token:/run/keys/api-token\n",
        ),
        (
            "serverless.yml",
            "    TOKEN_ARN: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/billing/token-Xy12Ab\n",
        ),
        (
            "log/sample.log",
            "  Parameters: {\"token\"=>\"[FILTERED]\", \"password\"=>\"[FILTERED]\"}\n",
        ),
        (
            "config/git.yaml",
            "secrets_repo: git@gitlab.acme.io:ops/secrets-store.git\n",
        ),
        (
            "tests/verify.test.ts",
            "const NONE = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.';\n",
        ),
    ]);
    found(&[
        (
            "src/crypto/keys.rs",
            "const KEY: &str = \"0f1e2d3c4b5a69788796a5b4c3d2e1f00718293a4b5c6d7e8f9fa1b2c3d4e5f6\";\n",
            "0f1e2d3c4b5a69788796a5b4c3d2e1f00718293a4b5c6d7e8f9fa1b2c3d4e5f6",
        ),
        (
            "db/seed.sql",
            "INSERT INTO api_clients (name, secret) VALUES\n  ('ci', '9f1e3d5c7b9a1e3d5c7b9a1f3e5d7c9b1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d');\n",
            "9f1e3d5c7b9a1e3d5c7b9a1f3e5d7c9b1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d",
        ),
        (
            "deploy/haproxy.cfg",
            "userlist ops\n    user stats insecure-password Vb8#kQ2zLm5R\n",
            "Vb8#kQ2zLm5R",
        ),
        (
            "scripts/Setup.ps1",
            "$s = ConvertTo-SecureString \"Pz4!mW8qRt2K\" -AsPlainText -Force\n",
            "Pz4!mW8qRt2K",
        ),
        (
            "config/git.yaml",
            "secrets_repo: https://oauth2:Kq8zR2mW4vT6pL9x@gitlab.acme.io/ops/secrets.git\n",
            "https://oauth2:Kq8zR2mW4vT6pL9x@gitlab.acme.io/ops/secrets.git",
        ),
        (
            "tests/verify.test.ts",
            "const SIGNED = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8';\n",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8",
        ),
    ]);
}
