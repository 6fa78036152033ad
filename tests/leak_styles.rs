//! Honest fixes cost nothing (spec.md, "Grading"; issue 18): on every task
//! the workspace first gets the shapes an honest remediation writes — an
//! environment-variable read, a secrets file outside the repository named
//! by path, Terraform variables and data sources, a Kubernetes
//! `secretKeyRef` with Helm `.Values`, a GitHub Actions `secrets.` context,
//! a deploy key's public half, a `.env.example` with placeholders and local
//! values, a CHANGELOG line citing a commit id, configuration keys named
//! `*_token` with ordinary values — and none of it is a new leak. Then the
//! task's oracle runs and still reaches reward 1.0 with no leak left.

use crate::util;

/// Shell written into each workspace before the fix, one file per style,
/// under `style/` or appended, so no file the task's tests read changes.
/// `$REV` is a 40-hex revision: the repository's HEAD, or a hash of a
/// fixed string where the task has no repository.
const STYLES: &str = r#"set -e
REV=$(git rev-parse HEAD 2>/dev/null || printf 'fix' | sha1sum | cut -c1-40)
SECRETS_DIR="${TMPDIR:-/tmp}/secaudit-style-secrets"
mkdir -p "$SECRETS_DIR" style/infra style/deploy style/chart .github/workflows style/ops
# 1. Environment variables, read in code and in a launcher script.
cat > style/settings_from_env.py <<'EOF'
import os

API_TOKEN = os.environ["API_TOKEN"]
DB_PASSWORD = os.getenv("DB_PASSWORD", "")
WEBHOOK_SECRET = os.environ.get("WEBHOOK_SECRET")
EOF
cat > style/ops/run.sh <<'EOF'
#!/bin/sh
export API_TOKEN="${API_TOKEN:?set API_TOKEN}"
export DB_PASSWORD=$DB_PASSWORD
EOF
# 2. A secrets file outside the repository, named by path only.
printf 'API_TOKEN=Zk3mQ8pL2xN7vR4tW9yB1cHq5sD8\n' > "$SECRETS_DIR/app.env"
cat > style/ops/secrets.yaml <<'EOF'
secrets_file: /run/secrets/app.env
api_token_file: ~/.config/app/api-token
db_password: /etc/app/db_password
token_source: file
EOF
# 3. Terraform variables, locals and data sources.
cat > style/infra/main.tf <<'EOF'
variable "db_password" {
  type      = string
  sensitive = true
}

resource "aws_db_instance" "main" {
  username = "app"
  password = var.db_password
}

resource "aws_lambda_function" "worker" {
  environment {
    variables = {
      API_TOKEN      = data.aws_secretsmanager_secret_version.api.secret_string
      WEBHOOK_SECRET = local.webhook_secret
      SIGNING_KEY    = module.kms.signing_key
    }
  }
}
EOF
# 4. Kubernetes secretKeyRef, Helm values, CI secrets, a deploy key's public half.
cat > style/deploy/deployment.yaml <<'EOF'
env:
  - name: DB_PASSWORD
    valueFrom:
      secretKeyRef:
        name: app-credentials
        key: db-password
  - name: API_TOKEN
    value: {{ .Values.apiToken | quote }}
EOF
cat > style/chart/values.yaml <<'EOF'
apiToken: ""
tokenUrl: https://auth.internal/oauth2/token
tokenEndpoint: postgres://db.internal:5432/billing
token_list: "tenant-window"
secretStore: vault:secret/data/app#api_token
deployKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJk3mQ8pL2xN7vR4tW9yB1cHq5sD8fJ2kM6nP0rT3vX7 deploy@ci
EOF
cat > .github/workflows/style-deploy.yml <<'EOF'
jobs:
  deploy:
    steps:
      - run: ./style/ops/run.sh
        env:
          API_TOKEN: ${{ secrets.API_TOKEN }}
          DB_PASSWORD: ${{ secrets.DB_PASSWORD }}
EOF
# 5. .env.example with placeholders and local development values.
cat >> .env.example <<'EOF'
API_TOKEN=<your-api-token>
DB_PASSWORD=changeme
SECRET_KEY=dev-secret-key
WEBHOOK_SECRET=
DATABASE_URL=postgres://app:app@localhost:5432/app
GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX
EOF
# 6. A CHANGELOG citing the fixing commit.
cat >> CHANGELOG.md <<EOF

## Unreleased
- Move credentials to the environment and rotate the token ($REV)
- Secrets read from the secret store, fixes $REV
EOF
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn honest_fix_styles_are_not_new_leaks() {
    let (env, _data) = util::env_with(64).await;
    let mut failures = Vec::new();
    for t in env.tasks() {
        let ctx = format!("task {}", t.id);
        let reset = util::reset(&env, t.id).await;
        let styled = util::step(&env, &reset.session_id, STYLES).await;
        let la = styled.last_action.as_ref().expect("last action");
        assert_eq!(
            la.exit_code,
            Some(0),
            "{ctx}: styles written: {}",
            la.stderr
        );
        if styled.leaks_current != reset.leaks_current {
            failures.push(format!(
                "{ctx}: the styles alone changed leaks {} -> {}",
                reset.leaks_current, styled.leaks_current
            ));
        }
        let oracle = env.oracle(t.id, None).await.expect("oracle");
        let mut last = styled;
        for a in &oracle {
            if last.done {
                break;
            }
            last = util::step(&env, &last.session_id, a).await;
        }
        let _ = env.close(&last.session_id).await;
        if !(last.success && (last.reward - 1.0).abs() < 1e-9 && last.leaks_current == 0) {
            failures.push(format!(
                "{ctx}: success={} reward={} leaks {}/{} health {:?} errors {:?}",
                last.success,
                last.reward,
                last.leaks_current,
                last.leaks_initial,
                last.health,
                last.grading_errors
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
