//! Local development defaults in connection strings:
//! `DATABASE_URL=postgres://postgres:postgres@localhost:5432/app_dev` in
//! `.env.sample`, `amqp://guest:guest@127.0.0.1:5672/` in a README.
//!
//! Blind round 4 of issue 18 (generator-4, `env-example-placeholders`)
//! measured these as the connection-string rule's false positives. Two
//! facts make a credential in a URL not a secret, and the decision needs
//! both to be about *where* it works, not how it looks:
//! - **The host is the loopback interface** (`localhost`, `*.localhost`,
//!   `127.0.0.0/8`, `::1`, `0.0.0.0`): the credential opens a database on
//!   the reader's own machine, which whoever reads it already controls.
//! - And one of: **the password is the user name** (`postgres:postgres`,
//!   `guest:guest`, `root:root`: the image's or product's documented
//!   default, which tells no one anything the user name does not), or
//!   **the file is a template** (`.env.example`, `.env.sample`,
//!   `config.template.yml`, `settings.py.dist`): a file written to be
//!   copied and filled in, whose values are its authors' local defaults.
//!
//! A default credential in a template also counts when the host is a
//! single name (`@db:5432`, a Compose service): templates describe the
//! developer's stack, not a deployment.
//!
//! So does one in a CI pipeline's definition (`.gitlab-ci.yml`,
//! `.github/workflows/*.yml`, `.circleci/config.yml`, …) to a single-name
//! host (generator-8, `gitlab-ci-service-default-creds`:
//! `postgresql://postgres:postgres@postgres:5432/test`): the host is a
//! service container the job starts from a public image with the image's
//! documented default, reachable only from that job's network and gone
//! when it ends.
//!
//! So does one in a test stack's Compose file (`docker-compose.test.yml`,
//! `compose.ci.yaml`, `docker-compose.e2e.yml`: issue 18, generator-14
//! `test-dummy-cloud-credentials`), to a single-name host: the file says
//! by its name that it starts throwaway containers for a test run, as a
//! CI job's services are. The project's main `docker-compose.yml` stays
//! judged as before: it may be how the service is deployed.
//!
//! What stays reported, everywhere: any password to a host with a domain
//! or a routable address (`@db.internal`, `@10.0.3.7`,
//! `@pg-main.rds.amazonaws.com`), even `admin:admin` (a weak credential
//! to a reachable host is a finding, not an excuse), and a password that
//! is not the user name to loopback outside a template (a developer's
//! real password is often reused).

/// Template suffixes and infixes of file names (lowercase): the last
/// dot-separated part of the name, or any part after the first
/// (`config.example.yml`, `.env.sample`).
const TEMPLATE_PARTS: &[&str] = &["example", "sample", "template", "tmpl", "tpl", "dist"];

/// True when the file is a template to copy: a part of its name after the
/// first is one of [`TEMPLATE_PARTS`].
fn is_template(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let name = name.to_ascii_lowercase();
    let name = name.strip_prefix('.').unwrap_or(&name);
    name.split('.').skip(1).any(|p| TEMPLATE_PARTS.contains(&p))
}

/// True for a CI pipeline's definition file, whose service containers
/// live for one job.
fn is_ci_pipeline(path: &str) -> bool {
    let p = path.replace('\\', "/").to_ascii_lowercase();
    let name = p.rsplit('/').next().unwrap_or(&p);
    let yaml = name.ends_with(".yml") || name.ends_with(".yaml");
    name.ends_with(".gitlab-ci.yml")
        || name.starts_with(".gitlab-ci")
        || matches!(
            name,
            "bitbucket-pipelines.yml"
                | ".travis.yml"
                | "azure-pipelines.yml"
                | ".drone.yml"
                | ".woodpecker.yml"
                | "buildkite.yml"
                | "jenkinsfile"
        )
        || (yaml
            && [
                "/.github/workflows/",
                "/.circleci/",
                "/.woodpecker/",
                "/.buildkite/",
            ]
            .iter()
            .any(|d| format!("/{p}").contains(d)))
}

/// Parts of a Compose file's name (after its first) that mark a test
/// stack.
const TEST_STACK_PARTS: &[&str] = &["test", "tests", "ci", "e2e", "it", "integration"];

/// True for a Compose file a test run brings up: `docker-compose` or
/// `compose`, then a part of [`TEST_STACK_PARTS`] (`docker-compose.test.yml`,
/// `docker-compose-ci.yaml`, `compose.e2e.yml`), then `.yml`/`.yaml`.
fn is_test_stack(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let name = name.to_ascii_lowercase();
    let Some(stem) = name
        .strip_suffix(".yml")
        .or_else(|| name.strip_suffix(".yaml"))
    else {
        return false;
    };
    let Some(rest) = stem
        .strip_prefix("docker-compose")
        .or_else(|| stem.strip_prefix("compose"))
    else {
        return false;
    };
    rest.starts_with(['.', '-', '_'])
        && rest
            .split(['.', '-', '_'])
            .any(|p| TEST_STACK_PARTS.contains(&p))
}

/// True for the loopback interface (and the unspecified address that
/// binds it in development).
fn is_loopback(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    let h = h.trim_start_matches('[').trim_end_matches(']');
    h == "localhost"
        || h.ends_with(".localhost")
        || h == "::1"
        || h == "0.0.0.0"
        || h.strip_prefix("127.").is_some_and(|r| {
            r.split('.').count() == 3 && r.split('.').all(|o| o.parse::<u8>().is_ok())
        })
}

/// `(user, password, host)` of `scheme://user:password@host[:port]/…`.
fn parts(url: &str) -> Option<(&str, &str, &str)> {
    let rest = &url[url.find("://")? + 3..];
    let at = rest.find('@')?;
    let (user, password) = rest[..at].split_once(':')?;
    let after = &rest[at + 1..];
    let host = if after.starts_with('[') {
        &after[..after.find(']').map_or(after.len(), |i| i + 1)]
    } else {
        let end = after.find([':', '/', '?', '#']).unwrap_or(after.len());
        &after[..end]
    };
    Some((user, password, host))
}

/// True when the connection string `url`, found in the file `path`, holds
/// a local development default (see the module doc).
pub(crate) fn is_local_default(url: &str, path: &str) -> bool {
    let Some((user, password, host)) = parts(url) else {
        return false;
    };
    let default = !user.is_empty() && user == password;
    let loopback = is_loopback(host);
    let template = is_template(path);
    let service = !host.is_empty() && !host.contains(['.', ':']);
    (loopback && (default || template))
        || (default && service && (template || is_ci_pipeline(path) || is_test_stack(path)))
}

#[cfg(test)]
mod tests {
    use super::is_local_default;

    #[test]
    fn defaults_and_not() {
        for (url, path) in [
            (
                "postgres://postgres:postgres@localhost:5432/x_dev",
                ".env.sample",
            ),
            (
                "postgres://postgres:postgres@localhost:5432/x_dev",
                "docker-compose.yml",
            ),
            ("amqp://guest:guest@127.0.0.1:5672/", "README.md"),
            ("mysql://root:root@[::1]:3306/app", "config/dev.yml"),
            ("postgres://app:Zq8v2Lm4Kp7Rt@localhost/app", ".env.example"),
            (
                "redis://default:Zq8v2Lm4Kp7Rt@127.0.0.1:6379",
                "config.template.yml",
            ),
            ("postgres://postgres:postgres@db:5432/app", ".env.dist"),
            // A CI job's service container with its image's default.
            (
                "postgresql://postgres:postgres@postgres:5432/test",
                ".gitlab-ci.yml",
            ),
            ("mysql://root:root@mysql/app", ".github/workflows/test.yml"),
            ("amqp://guest:guest@rabbitmq:5672/", ".circleci/config.yml"),
            // A test stack's Compose file, to one of its services.
            (
                "postgres://postgres:postgres@db:5432/test",
                "docker-compose.test.yml",
            ),
            ("mysql://root:root@mysql/app", "ci/compose.e2e.yaml"),
        ] {
            assert!(is_local_default(url, path), "{url} in {path}");
        }
        for (url, path) in [
            // Remote hosts, whatever the file and the password.
            (
                "postgres://app:Zq8v2Lm4Kp7Rt@db.internal:5432/app",
                ".env.example",
            ),
            (
                "postgres://admin:admin@db.prod.acme.com/app",
                "config/prod.yml",
            ),
            ("postgres://postgres:postgres@10.0.3.7/app", ".env.sample"),
            // A real-looking password to loopback outside a template.
            (
                "postgres://app:Zq8v2Lm4Kp7Rt@localhost/app",
                "config/dev.yml",
            ),
            // A service host outside a template, or without a default.
            (
                "postgres://postgres:postgres@db:5432/app",
                "docker-compose.yml",
            ),
            ("postgres://app:Zq8v2Lm4Kp7Rt@db:5432/app", ".env.example"),
            // A test stack: a real password, or a host outside it; a
            // Compose file whose name only contains a test part.
            (
                "postgres://app:Zq8v2Lm4Kp7Rt@db:5432/test",
                "docker-compose.test.yml",
            ),
            (
                "postgres://postgres:postgres@db.prod.acme.com/app",
                "docker-compose.ci.yml",
            ),
            (
                "postgres://postgres:postgres@db:5432/app",
                "docker-compose.yml",
            ),
            (
                "postgres://postgres:postgres@db:5432/app",
                "latest-compose.yml",
            ),
            (
                "postgres://postgres:postgres@db:5432/app",
                "compose.testing.yml",
            ),
            // In CI: a real password, or a host outside the job.
            (
                "postgresql://app:Zq8v2Lm4Kp7Rt@postgres/test",
                ".gitlab-ci.yml",
            ),
            (
                "postgresql://postgres:postgres@db.prod.acme.com/app",
                ".github/workflows/deploy.yml",
            ),
            // Not loopback: a name that only starts like it.
            (
                "postgres://postgres:postgres@localhost.acme.com/app",
                "a.env",
            ),
            ("postgres://postgres:postgres@127.0.0.1.nip.io/app", "a.env"),
        ] {
            assert!(!is_local_default(url, path), "{url} in {path}");
        }
    }

    #[test]
    fn scans() {
        use crate::scanner::rules::testutil::rules;
        let local = "DATABASE_URL=postgres://postgres:postgres@localhost:5432/app_dev\n";
        assert!(rules(".env.sample", local).is_empty());
        let remote = "DATABASE_URL=postgres://app:Zq8v2Lm4Kp7Rt@db.internal:5432/app\n";
        assert_eq!(
            rules(".env.sample", remote),
            ["connection-string=postgres://app:Zq8v2Lm4Kp7Rt@db.internal:5432/app"]
        );
    }
}
