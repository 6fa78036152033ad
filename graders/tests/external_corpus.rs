//! Accuracy of the scanner on labelled cases it was not tuned on
//! (issue 18): public cases imported from other scanners' test suites
//! (`graders/corpus/external/import.py`: gitleaks' per-rule `tps`/`fps`,
//! detect-secrets' plugin fixtures), a second generator with its own
//! templates, languages and seed (`graders/corpus/external/make_cases.py`)
//! and a third written as an adversary of precision: whole files of hard
//! negatives and secrets in new layouts, scanned under their own file
//! names (`graders/corpus/external/make_hard_negatives.py`).
//!
//! Each JSONL line is one case, scanned alone as a file `case.<ext>`. A
//! case labelled `secret` is found when the scanner reports anything in
//! it; a case labelled `none` must produce no finding. Precision is found
//! secrets / (found secrets + flagged non-secrets), per source.
//!
//! Two gates:
//! - each source holds its precision and recall floors;
//! - each leak-grade rule (`LEAK_GRADE_RULES`, the findings that may cost
//!   an agent reward as new leaks, spec.md "Grading") has precision at
//!   least 0.99 on the external sources and fires on at least
//!   `MIN_LEAK_GRADE_EVIDENCE` of their cases, so a rule added to that list
//!   without evidence fails here.
//!
//! The printed tables (per source, per class, per rule) say which cases to
//! look at when a floor fails.

use graders::scanner::{LEAK_GRADE_RULES, ScanConfig, Scanner};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// (source, minimum precision, minimum recall). Floors are what is
/// measured, rounded down so that one more miss or false positive on
/// detect-secrets or generator-2 (a few dozen on gitleaks) fails; raise them
/// as the scanner improves. Labels are upstream's after `import.py`'s filler
/// rule (typed filler such as `12345678-ABCD-…` re-labelled non-secret; the
/// figures under upstream's labels are printed too).
/// Measured 2026-12-04: gitleaks 0.986 / 0.991, detect-secrets 0.621 /
/// 0.837, generator-2 1.000 / 0.993 (before issue 18's second pass, under
/// upstream's labels: 0.984 / 0.895, 0.765 / 0.523, 1.000 / 0.982).
/// detect-secrets' precision is under the 0.97 target: 20 of its 25 false
/// positives are random-looking near misses of an issuer format (a Discord
/// token with a character changed, a Mailchimp key without its `-usN`
/// suffix, a JWT signature after a broken header) that detect-secrets'
/// per-plugin regex rejects and our entropy detector reports; its misses
/// are `username:password` in a URL and a punctuation-heavy password.
/// generator-3 (`make_hard_negatives.py`, whole files of hard negatives,
/// issue 18's third pass) measured 1.000 / 1.000 after that pass (before
/// it, same cases: see README "Cases written by other projects").
/// generator-3-r4 (its fourth round, written before this round's fixes):
/// 0.304 / 0.739 before them, the floor is what the fixes reach; its
/// remaining false positives are listed in the README (public-by-design
/// client keys in SDK calls, published RFC examples, hashes without a
/// naming key).
/// generator-3-r5 (its fifth round, written before that round's fixes):
/// 0.476 / 0.909 before them, 0.917 / 1.000 after; its two remaining false
/// positives are a vendor's published documentation key (Stripe's
/// `sk_test_` docs key, reported by the leak-grade `service-token` rule)
/// and the AES S-box as a hex string. The r4 floor rose with that round's
/// history-point keys (`before`/`after`).
/// 2026-12-05, a scan reports a random token only when something names it
/// a secret or it is whole in an issuer's format (`scanner::context`):
/// precision gitleaks 0.987 → 0.993, detect-secrets 0.621 → 0.889, r4
/// 0.742 → 0.885, r5 0.917 → 0.957; recall gitleaks 0.991 → 0.989 and
/// detect-secrets 0.837 → 0.816 (bare tokens whose issuer is named only by
/// a vendor word, `cloudflare: "…"`, and one Discord token outside its
/// format). The recall floors came down by that much: the trade is made
/// on purpose, for precision on code nobody has written a skip for.
/// 2026-12-05, second pass on the remaining errors, by class (template
/// syntax judged by its structure, comparisons and C++ initializers, `key`
/// alone no secret word, names that declare a value public or fake, seeds
/// that decode to text, an issuer's marker altered): precision
/// detect-secrets 0.889 → 0.920, r4 0.885 → 1.000, r5 0.957 → 1.000,
/// gitleaks 0.993 → 0.994; recall detect-secrets 0.816 → 0.939, gitleaks
/// 0.989 → 0.989, generator-2/3 unchanged (0.993, 1.000). detect-secrets'
/// four remaining false positives are npm legacy tokens (UUIDs) under a
/// misspelt or unscoped `_authToken` key: upstream labels them by its
/// regex's anchoring; we report them on purpose, since the value is the
/// token whatever the key's spelling and npm ≤ 8 read an unscoped
/// `_authToken`. Its three misses are labelled secrets that are not:
/// `https://username:password@…` (placeholder words), a Discord token with
/// a character glued in front (no Discord user id encodes to `A…`; the
/// label comes from an unanchored regex) and the IP address `1.1.1.1`.
const FLOORS: &[(&str, f64, f64)] = &[
    ("gitleaks", 0.99, 0.985),
    ("detect-secrets", 0.91, 0.93),
    ("generator-2", 0.999, 0.99),
    ("generator-3", 0.999, 0.99),
    ("generator-3-r4", 0.999, 0.99),
    ("generator-3-r5", 0.999, 0.99),
    // Written blind (without reading the scanner or the other cases),
    // measured before any fix on it: 0.850 / 1.000 (17 false positives) —
    // that is its blind figure. Its five classes were then fixed against
    // it (2026-12-05: typed passwords in test code, algorithm and
    // component names, the key that names a random token, natural-language
    // values, local development defaults in connection strings), so it is
    // a development set now: 1.000 / 1.000 after, no longer evidence of
    // precision on unseen code.
    ("generator-4", 0.999, 0.99),
    // Written blind after generator-4's fixes, measured before any fix on
    // it: 0.888 / 0.988 (10 false positives, 1 miss) — its blind figure.
    // Its classes were then fixed against it (2026-12-05: type names in
    // schema declarations, secret-store references, format placeholders
    // as a URL's password, environment lookups in any shell, a form
    // body's `&` read as a type, published samples a file calls samples,
    // Firebase web configs a file calls public) and its miss (an Azure SAS URL's `sig`, now
    // the azure-sas-token rule), so it is a development set now: 1.000 /
    // 1.000 after, no longer evidence of precision on unseen code.
    ("generator-5", 0.999, 0.99),
    // Written blind after generator-5's fixes, measured before any fix on
    // it: 0.930 / 0.959 (7 false positives, 4 misses) — its blind figure.
    // Its classes were then fixed against it (2026-12-05: instructions
    // written where a secret goes, Datadog client tokens, Firebase configs
    // a file calls "not a credential", JWTs whose payload declares the
    // anon role, RFC test cases labelled by their heading in tests that
    // cite the standard, translation catalogs' UI text, OpenPGP key ids
    // and fingerprints; SaaS provider formats such as Brevo and Linear, a
    // literal inside a byte-conversion call, a value ending in base64
    // padding read as a typed declaration), so it is a development set
    // now: 1.000 / 1.000 after, no longer evidence of precision on unseen
    // code.
    ("generator-6", 0.999, 0.99),
    // Written blind after generator-6's round (data, artifacts and
    // prose), measured before any fix on it: 0.843 / 0.977 (16 false
    // positives, 2 misses) — its blind figure. Its classes were then fixed
    // against it (2026-12-05: only a credential store's file name names its
    // values, stored hashes under credential-named keys, base64 of a
    // placeholder, Terraform state's provider-private metadata, Telegram
    // and Databricks token formats, notebook cells judged unescaped), so
    // it is a development set now: 1.000 / 1.000 after (with
    // generator-6's classes, published test vectors — also in Rust test
    // modules — and translation catalogs), no longer evidence of precision
    // on unseen code.
    ("generator-7", 0.999, 0.99),
    // Written blind after generator-7's round (front-end build output,
    // mobile apps, CI/infra, data-science glue), measured before any fix
    // on it: 0.908 / 0.937 (9 false positives, 6 misses) — its blind
    // figure. Its classes were then fixed against it (2026-12-05: shell
    // parameter expansions, password-verifier formats for every rule,
    // encrypted data under credential names, cache-key variables,
    // numbered type names in camelCase, CI service-container defaults;
    // plist key/string pairs, name-value argument lists, netrc tokens on
    // one line, calls that wrap a literal secret, VAPID private keys,
    // known credential files by name), so it is a development set now:
    // 0.990 / 1.000 after. Its one remaining false positive is kept on
    // purpose: an AWS access key id in Terraform state beside its
    // PGP-encrypted secret (access key ids are reported, as gitleaks and
    // git-secrets do).
    ("generator-8", 0.98, 0.99),
    // Written blind (the Python ecosystem: Django, Flask, FastAPI, Celery,
    // Airflow, notebooks, packaging files, tests and fixtures), measured
    // before any fix on it: 0.901 / 0.943 (9 false positives, 5 misses) —
    // its blind figure. Its classes were then fixed against it
    // (2026-12-05, stop 35): a call or index is a reference only when it
    // is one whole (Django keys hold brackets), a value in parentheses on
    // the next line, literals split over lines or `+` joined
    // (`scanner::joined`), Fernet keys, words that hold a secret word
    // (`tokenizer`, `secretary`), key templates with a placeholder, tox's
    // `{env:X:default}`, keyboard shortcuts, `hashed_*` keys, SQL's
    // `PASSWORD 'x'` needing its space, connection strings with a one- to
    // three-character password, values assembled from the file's own
    // constants (`scanner::folded`: `_PREFIX + _BODY`): 0.978 / 1.000
    // after. Left: a Faker snapshot's hex values under `api_token` in
    // test code (labelled none: the file generates them with Faker, which
    // no mechanism of ours reads) and a typed test password
    // `pw-12345-tests` (`pw` is no word to our word test).
    ("generator-9", 0.97, 0.99),
    // Written blind after generator-8's round (languages and configuration
    // formats off the beaten path: Perl, Lua, Erlang, Nix, LDIF, HCL,
    // systemd, plists), measured before any fix on it: 0.804 / 0.848 (19
    // false positives, 14 misses) — its blind figure. Its classes were then
    // fixed against it (2026-12-05: variable references in each
    // language's syntax — `$ENV{X}`, `$a.b.c`, `$__file{…}`, `%param%/path`,
    // YAML `!secret name` tags; a markup closing tag ending a value; a
    // `name:` label before continued data; stored hashes — yescrypt and
    // mosquitto MCF with parameters, RFC 2307 `{SSHA}` schemes, MySQL
    // `*HEX40`, base64 digests under digest-named keys, LDIF's base64 of
    // a stored hash; a SOPS file's encrypted data key; the key of a
    // backslash-continued statement; misses: `#define` literals,
    // subscript keys, LDAP `bindpw`, Drupal `hash_salt`, OpenVPN static
    // key blocks, a `login` subcommand's argument, and settings whose value is the secret — Erlang
    // `-setcookie`, WordPress keys, private JWKs, `klist -K` dumps, Consul
    // ACL tokens, PagerDuty keys in Alertmanager, Bundler host
    // credentials, `auth("…")` and user/password setter calls), so it is a
    // development set now: 1.000 / 1.000 after, no longer evidence of
    // precision on unseen code. The Bundler rule also found gitleaks'
    // eight `sidekiq-secret` cases it had missed (recall 0.989 → 0.991).
    ("generator-10", 0.999, 0.99),
    // Written blind after generator-10's round (the JavaScript/TypeScript
    // application ecosystem: serverless functions, SDK clients, bundles,
    // obfuscated code, tests), measured before any fix on it: 0.929 /
    // 0.848 (6 false positives, 14 misses) — its blind figure. Its classes
    // were then fixed against it (2026-12-05, prec24): Discord webhook
    // URLs, LaunchDarkly server-side SDK keys and Apollo GraphOS keys as
    // provider formats; a search client's key named a secret by the
    // file's writes to the index (Algolia admin vs search-only keys);
    // arrays of pieces joined with `''` and `String.fromCharCode` codes in
    // the joined view; string constants folded into template literals and
    // `+` chains (`scanner::folded`); SOPS master-key ids (age
    // recipients, PGP fingerprints) in its metadata; a browser analytics
    // SDK's `writeKey`; test values labelled fixtures with a short salt
    // (`test-secret-<8>`). 1.000 / 1.000 after, so it is a development
    // set now, no longer evidence of precision on unseen code. Nothing of
    // it is left.
    ("generator-11", 0.999, 0.99),
    // Written blind after generator-11's round (JVM, .NET, Go and Rust
    // backend services: Spring, Play, sbt, logging appenders, Android
    // builds), measured before any fix on it: 0.883 / 0.852 (13 false
    // positives, 17 misses) — its blind figure. Its classes were then
    // fixed against it (2026-12-06, prec25): configuration encryptors'
    // ciphertext in their documented wrappers (Spring Cloud Config
    // `{cipher}`, Jasypt `ENC(…)`, Maven's braced `<password>`); the
    // Azurite and Cosmos DB emulators' published keys where the file names
    // the emulator; Android Firebase configs (`google-services.json`, its
    // generated string resources) and Google browser keys the file says
    // are referrer-restricted; ASP.NET Core Identity v3 password hashes;
    // misses: Spring `${a.b-password:default}` defaults, Go struct tag
    // `envDefault`, Go MySQL DSNs `user:pw@tcp(host)/db`, Mailgun keys in
    // a text naming Mailgun, `.properties` values holding `&`, Java
    // `char[]` passwords, IdentityServer `new Secret("…".Sha256())`.
    // 0.972 / 0.904 after (3 false positives, 11 misses). Left, each its
    // own class not written yet: byte-array keys (`byte[] KEY = {(byte)
    // 0xa0, …}`, Rust `[u8; 32]` named `DEK`: a 16-byte array is as often
    // a UUID, generator-3-r5 `r5-ble-uuids`), a JAAS password filled in by
    // `String.format`, a password in a Javadoc sentence, Gradle
    // `storePassword 'x'` (no operator), sbt `Credentials(realm, host,
    // user, pw)` and a Go `NewClient(url, "<key>")` in a test (positional
    // arguments), a JDBC URL's query `password=`, Logz.io and Datadog
    // appender tokens in XML elements, a Play secret with `<`/`>` in it;
    // false positives: a SendGrid template id `d-<hex>` and an event topic
    // under credential words (camelCase `…Topic`, `…TemplateId`), and a
    // README's `<from 1Password: payments-db>` placeholder cut at its
    // space.
    ("generator-12", 0.97, 0.90),
    // Written blind with generator-12 (Rails, PHP and Phoenix apps, the
    // operator's dotfiles, Kubernetes and Ansible), measured before any
    // fix on it: 0.920 / 0.954 (9 false positives, 5 misses) — its blind
    // figure. Its classes were then fixed against it (2026-12-06,
    // prec25): names in a language's own syntax where a literal would be
    // (Ruby and Elixir symbols, `{:system, "X"}` tuples, Ruby bang-method
    // chains, `static::$password`), an auth scheme before a reference
    // (`Bearer $GITHUB_TOKEN`), a shell redirection (`>/dev/null`), a
    // URL whose whole authority is a random-looking host (an EKS
    // endpoint), a Google browser key said to be referrer-restricted;
    // misses: Ruby's bare `Array#join` of split pieces, Google OAuth
    // client secrets `GOCSPX-`, Mailgun keys in a text naming Mailgun,
    // the literal in `secure_compare(password, "…")`, the plaintext given
    // to a password-hashing call (`Hash::make('…')` in a seeder). 0.991 /
    // 1.000 after. Left: Rails' generated `database.yml` comment
    // `postgres://myuser:mypass@localhost/somedatabase` (a documentation
    // example; `my*` placeholder credentials are no class of ours yet).
    ("generator-13", 0.99, 0.99),
    // Written blind after generator-12/13's round (IaC, serverless, data
    // pipelines, database tooling, observability: CloudFormation, CDK,
    // Terraform, Spark, Airflow, Kafka, NATS, OpenTelemetry), measured
    // before any fix on it: 0.943 / 0.900 (6 false positives, 11 misses)
    // — its blind figure. Its classes were then fixed against it
    // (2026-12-06, prec26): PostHog project keys (`phc_`) public by
    // design; a provider key written whole in a constant judged where it
    // is written, not again where a template interpolates it (a browser
    // key said to be referrer-restricted); a test stack's Compose file
    // (`docker-compose.test.yml`) with an image default to its own
    // service; secret-store paths with an abbreviated segment
    // (`ci/github-token`); CloudFormation dynamic references' fields and
    // `SecretStringTemplate`; misses: NATS nkey seeds, HubSpot private
    // app tokens, Honeycomb keys in `X-Honeycomb-Team`, values in escaped
    // quotes (Kafka JAAS `password=\"…\"`), a lookup's default by
    // keyword (`default_var=`), CloudFormation `Parameters` and Terraform
    // `variable` defaults, `pw` as a name's word (`_PW =
    // bytes.fromhex(…)`), a call's name argument on the line above its
    // value (`spark.conf.set(\n "fs.azure.account.key…",\n "<key>")`),
    // byte arrays of 32+ bytes (Go `[]byte{0x…}`) as hex. 1.000 / 1.000
    // after, every other source unchanged, so it is a development set
    // now. Nothing of it is left.
    ("generator-14", 0.999, 0.99),
];
/// Sources written by other projects: the leak-grade gate is measured on
/// these only (our own generator is not evidence of precision on unseen code).
const EXTERNAL: &[&str] = &["gitleaks", "detect-secrets"];
const MIN_LEAK_GRADE_PRECISION: f64 = 0.99;
/// A leak-grade rule must fire on at least this many external cases: a
/// precision over a handful of findings is no measurement.
const MIN_LEAK_GRADE_EVIDENCE: usize = 5;
/// Leak-grade rules kept without that evidence: the external sources hold
/// fewer than `MIN_LEAK_GRADE_EVIDENCE` cases of their format (gitleaks
/// writes Stripe keys as `sk_test_`/`sk_prod_`, Slack webhooks without a
/// scheme, no AWS secret-key or Azure connection-string cases). Dropping
/// them would let an agent replace a planted key with a fabricated one of
/// the same issuer at no cost, so they stay, provisionally, each still held
/// to precision 1.0 on the external cases it does fire on and to 0.99 on
/// our corpus (graders/tests/corpus.rs). Every entry needs a reason; a rule
/// that reaches the evidence floor must leave this list (the test fails).
const PROVISIONAL: &[(&str, &str)] = &[
    (
        "aws-secret-access-key",
        "no external case: gitleaks' aws rule covers key ids only",
    ),
    (
        "slack-webhook",
        "gitleaks' webhook cases have no https:// scheme",
    ),
    (
        "stripe-secret-key",
        "gitleaks' Stripe cases are sk_test_/sk_prod_, not live keys",
    ),
    ("firebase-fcm-server-key", "no external case"),
    (
        "sendgrid-api-key",
        "gitleaks' SendGrid cases use a different body alphabet",
    ),
    (
        "anthropic-api-key",
        "gitleaks' Anthropic cases are alphabet-walk placeholders",
    ),
    ("azure-storage-connection-string", "no external case"),
    ("private-key", "three PEM cases upstream"),
];

fn external_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join("external")
}

struct Case {
    source: String,
    class: String,
    secret: bool,
    /// Upstream's label, where `import.py`'s filler rule re-labelled the
    /// case (`12345678-ABCD-…`, `abcd1234abcd1234…`, `AKCxxxxxxxx`).
    upstream_secret: bool,
    text: String,
    /// File name the case is scanned as: the case's `path` when it names
    /// one (generator-3 writes whole files, whose names are part of what
    /// the scanner may use: `package-lock.json`, `.npmrc`), else `case.<ext>`.
    path: String,
}

fn load() -> Vec<Case> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(external_dir())
        .expect("graders/corpus/external present")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for p in names {
        let text = std::fs::read_to_string(&p).expect("read jsonl");
        for (i, line) in text.lines().enumerate() {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", p.display(), i + 1));
            let s = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("{}:{}: no {k}", p.display(), i + 1))
                    .to_string()
            };
            let label = s("label");
            assert!(
                label == "secret" || label == "none",
                "{}:{}: label {label}",
                p.display(),
                i + 1
            );
            let upstream = v["upstream_label"].as_str().unwrap_or(&label);
            assert!(
                upstream == "secret" || upstream == "none",
                "{}:{}: upstream_label {upstream}",
                p.display(),
                i + 1
            );
            out.push(Case {
                source: s("source"),
                class: s("class"),
                secret: label == "secret",
                upstream_secret: upstream == "secret",
                text: s("text"),
                path: v["path"]
                    .as_str()
                    .map_or_else(|| format!("case.{}", s("ext")), str::to_string),
            });
        }
    }
    out
}

/// Counts of one row: true/false positives and negatives, in cases.
#[derive(Default, Clone, Copy)]
struct Counts {
    tp: usize,
    fn_: usize,
    fp: usize,
    tn: usize,
}

impl Counts {
    fn add(&mut self, secret: bool, flagged: bool) {
        match (secret, flagged) {
            (true, true) => self.tp += 1,
            (true, false) => self.fn_ += 1,
            (false, true) => self.fp += 1,
            (false, false) => self.tn += 1,
        }
    }
    fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }
    fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

fn short(s: &str) -> String {
    let one: String = s.replace('\n', "\\n");
    if one.chars().count() > 110 {
        format!("{}…", one.chars().take(110).collect::<String>())
    } else {
        one
    }
}

#[test]
fn external_sources_precision_recall_and_leak_grade_gate() {
    let cases = load();
    let scanner = Scanner::new(ScanConfig::default());
    let mut per_source: BTreeMap<&str, Counts> = BTreeMap::new();
    // The same cases under upstream's labels, filler values counted as
    // secrets: printed, not gated, so the README can state both.
    let mut per_source_upstream: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut per_class: BTreeMap<(&str, &str), Counts> = BTreeMap::new();
    // rule -> (external cases it fired on, of which labelled secret)
    let mut per_rule: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses: Vec<String> = Vec::new();
    let mut false_pos: Vec<String> = Vec::new();
    for c in &cases {
        let findings = scanner.scan_bytes(&c.path, c.text.as_bytes());
        let flagged = !findings.is_empty();
        per_source
            .entry(&c.source)
            .or_default()
            .add(c.secret, flagged);
        per_source_upstream
            .entry(&c.source)
            .or_default()
            .add(c.upstream_secret, flagged);
        per_class
            .entry((&c.source, &c.class))
            .or_default()
            .add(c.secret, flagged);
        let rules: BTreeSet<&str> = findings.iter().map(|f| f.rule.as_str()).collect();
        if EXTERNAL.contains(&c.source.as_str()) {
            for r in &rules {
                let row = per_rule.entry(r.to_string()).or_default();
                row.0 += 1;
                row.1 += usize::from(c.secret);
            }
        }
        if c.secret && !flagged {
            misses.push(format!(
                "MISSED   {} {} {}: {}",
                c.source,
                c.class,
                c.path,
                short(&c.text)
            ));
        }
        if !c.secret && flagged {
            // Whole files (generator-3) are longer than `short` shows: the
            // flagged values say what to look at.
            let values: Vec<String> = findings
                .iter()
                .map(|f| format!("{}={}", f.rule, short(&f.value)))
                .collect();
            false_pos.push(format!(
                "FALSEPOS {} {} {} {values:?}: {}",
                c.source,
                c.class,
                c.path,
                short(&c.text)
            ));
        }
    }
    println!(
        "\n| class (source) | cases | secret | found | flagged non-secret | precision | recall |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for ((src, class), k) in &per_class {
        if k.fn_ + k.fp > 0 {
            println!(
                "| {class} ({src}) | {} | {} | {} | {} | {:.3} | {:.3} |",
                k.tp + k.fn_ + k.fp + k.tn,
                k.tp + k.fn_,
                k.tp,
                k.fp,
                k.precision(),
                k.recall()
            );
        }
    }
    println!("(classes with no miss and no false positive are not listed)");
    for m in misses.iter().chain(&false_pos) {
        println!("{m}");
    }
    println!("\n| rule | external cases flagged | of which secret | precision | leak-grade |");
    println!("|---|---:|---:|---:|---|");
    for (r, (n, good)) in &per_rule {
        println!(
            "| {r} | {n} | {good} | {:.3} | {} |",
            ratio(*good, *n),
            LEAK_GRADE_RULES.contains(&r.as_str())
        );
    }
    println!("\n| source | cases | secret | tp | fn | fp | precision | recall |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (src, k) in &per_source {
        println!(
            "| {src} | {} | {} | {} | {} | {} | {:.3} | {:.3} |",
            k.tp + k.fn_ + k.fp + k.tn,
            k.tp + k.fn_,
            k.tp,
            k.fn_,
            k.fp,
            k.precision(),
            k.recall()
        );
    }
    println!("\nUnder upstream's labels (filler-shaped values counted as secrets):");
    println!("| source | cases | secret | tp | fn | fp | precision | recall |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (src, k) in &per_source_upstream {
        println!(
            "| {src} | {} | {} | {} | {} | {} | {:.3} | {:.3} |",
            k.tp + k.fn_ + k.fp + k.tn,
            k.tp + k.fn_,
            k.tp,
            k.fn_,
            k.fp,
            k.precision(),
            k.recall()
        );
    }

    let mut failures = Vec::new();
    for (src, min_p, min_r) in FLOORS {
        let Some(k) = per_source.get(src) else {
            failures.push(format!("source {src}: no cases (corpus file missing?)"));
            continue;
        };
        if k.precision() < *min_p {
            failures.push(format!("{src}: precision {:.3} < {min_p}", k.precision()));
        }
        if k.recall() < *min_r {
            failures.push(format!("{src}: recall {:.3} < {min_r}", k.recall()));
        }
    }
    for (rule, why) in PROVISIONAL {
        assert!(!why.is_empty(), "provisional rule {rule} needs a reason");
        if !LEAK_GRADE_RULES.contains(rule) {
            failures.push(format!(
                "provisional rule {rule} is not leak-grade: remove it"
            ));
        }
    }
    for rule in LEAK_GRADE_RULES {
        let (n, good) = per_rule.get(*rule).copied().unwrap_or_default();
        let provisional = PROVISIONAL.iter().any(|(r, _)| r == rule);
        if provisional && n >= MIN_LEAK_GRADE_EVIDENCE {
            failures.push(format!(
                "leak-grade rule {rule} now has external evidence ({n} cases): \
                 remove it from PROVISIONAL"
            ));
        }
        if provisional {
            if good < n {
                failures.push(format!(
                    "provisional leak-grade rule {rule}: {} of {n} external cases \
                     it fired on are non-secrets",
                    n - good
                ));
            }
        } else if n < MIN_LEAK_GRADE_EVIDENCE {
            failures.push(format!(
                "leak-grade rule {rule}: fired on {n} external cases, \
                 fewer than {MIN_LEAK_GRADE_EVIDENCE}: no evidence of its precision"
            ));
        } else if ratio(good, n) < MIN_LEAK_GRADE_PRECISION {
            failures.push(format!(
                "leak-grade rule {rule}: precision {:.3} < {MIN_LEAK_GRADE_PRECISION} \
                 on the external sources ({good}/{n})",
                ratio(good, n)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
