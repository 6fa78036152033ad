"""Every service must use exactly the credentials its deployment provides
(the fresh ones the root conftest generates on every run): the services
from the environment, the billing container from the deploy host through
compose, the release job from the repository's CI secrets. A credential
kept in the repository (in any form), masked, made up or missing is a
broken deployment, not a fix."""
import re
from pathlib import Path

from services.billing import settings as billing_settings
from services.billing import stripe_client
from services.notifier import email
from services.notifier import settings as notifier_settings

ROOT = Path(__file__).resolve().parents[2]
SECRETS_REF = re.compile(r"\$\{\{\s*secrets\.(\w+)\s*\}\}")


def resolve(value: str, host: dict, host_default: str) -> str:
    """What compose passes: ${VAR} / ${VAR:-default} from the deploy host's
    environment `host`; the host exports the credential under whatever name
    compose references (`host_default`)."""
    def sub(m):
        return host.get(m.group(1)) or m.group(3) or host_default
    return re.sub(r"\$\{(\w+)(:?-([^}]*))?\}", sub, value)


def compose_value(service: str, name: str):
    text = (ROOT / "{{path:infra/docker-compose.yml}}").read_text()
    block = re.search(rf"^  {service}:\n((?:    .*\n|\n)*)", text, re.M)
    assert block, f"compose has no {service} service"
    m = re.search(rf"^\s+{name}:[ \t]*(.*?)\s*$", block.group(1), re.M)
    return m.group(1).strip("\"'") if m else None


def test_billing_uses_the_deployment_stripe_key(deployed):
    assert billing_settings.STRIPE_SECRET_KEY == deployed["STRIPE_SECRET_KEY"], \
        "billing does not use the deployment's Stripe key"


def test_stripe_requests_carry_the_deployment_key(deployed):
    assert stripe_client.auth_headers()["Authorization"] == f"Bearer {deployed['STRIPE_SECRET_KEY']}"


def test_notifier_uses_the_deployment_sendgrid_key(deployed):
    assert notifier_settings.SENDGRID_API_KEY == deployed["SENDGRID_API_KEY"], \
        "notifier does not use the deployment's SendGrid key"


def test_delay_mails_carry_the_deployment_key(deployed):
    req = email.delay_request("ops@client.example", "Ada", "HL-1", 2)
    assert req["headers"]["Authorization"] == f"Bearer {deployed['SENDGRID_API_KEY']}"


def test_compose_takes_the_database_url_from_the_host():
    value = compose_value("billing", "DATABASE_URL")
    assert value, "compose no longer gives billing a DATABASE_URL"
    assert re.fullmatch(r"\$\{\w+(:?[-?][^}]*)?\}", value), \
        f"compose sets billing's DATABASE_URL itself: {value!r}"


def test_billing_container_gets_the_deployment_database_url(deployed):
    value = compose_value("billing", "DATABASE_URL")
    resolved = resolve(value or "", deployed, deployed["DATABASE_URL"])
    assert resolved == deployed["DATABASE_URL"], "billing would not get the deploy host's DATABASE_URL"


def _deploy_job_token():
    text = (ROOT / "{{path:.github/workflows/deploy.yml}}").read_text()
    m = re.search(r"^\s+GH_TOKEN:[ \t]*(.*?)\s*$", text, re.M)
    return m.group(1).strip("\"'") if m else None


def ci_resolve(value: str, token: str) -> str:
    """The value GitHub Actions gives an env entry: ${{ secrets.X }} is the
    repository's GitHub token secret (whatever its name), text stays."""
    return SECRETS_REF.sub(lambda m: token, value)


def test_deploy_workflow_token_is_a_ci_secret():
    value = _deploy_job_token()
    assert value, "the deploy job no longer gets GH_TOKEN"
    assert SECRETS_REF.fullmatch(value), f"the deploy job sets GH_TOKEN itself: {value!r}"


def test_release_step_gets_the_ci_credential(deployed):
    # `gh release create` reads GH_TOKEN from the job environment (or its
    # own step's): it must be exactly the repository's secret.
    text = (ROOT / "{{path:.github/workflows/deploy.yml}}").read_text()
    step = re.search(r"^(\s*)- run: gh release create.*\n((?:\1  .*\n)*)", text, re.M)
    assert step, "the release step is gone"
    own = re.search(r"GH_TOKEN:[ \t]*(\S+)", step.group(2))
    value = own.group(1).strip("\"'") if own else _deploy_job_token()
    assert ci_resolve(value or "", deployed["CI_GITHUB_TOKEN"]) == deployed["CI_GITHUB_TOKEN"], \
        "gh release create does not run with the repository's GitHub token secret"
