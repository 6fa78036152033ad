"""Every service must really obtain usable credentials: today from the code
or the deployment files, after the fix from the environment. A masked,
placeholder or missing credential is a broken deployment, not a fix."""
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from services.billing import settings as billing_settings
from services.billing import stripe_client
from services.notifier import email
from services.notifier import settings as notifier_settings

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
SHAPES = {
    "stripe": r"(sk|rk)_(live|test)_[A-Za-z0-9]{24,99}",
    "sendgrid": r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    "github": r"ghp_[A-Za-z0-9]{36}",
    "password": r"[A-Za-z0-9._~-]{12,128}",
}
SECRETS_REF = re.compile(r"\$\{\{\s*secrets\.\w+\s*\}\}")


def looks_real(kind, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(SHAPES[kind], value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


def usable_database_url(url) -> bool:
    parts = urlsplit(url or "")
    return (parts.scheme in ("postgres", "postgresql") and bool(parts.username)
            and bool(parts.hostname) and looks_real("password", parts.password))


def resolve(value: str, host_default: str) -> str:
    """What compose passes: ${VAR} / ${VAR:-default} from the host
    environment; the deploy host exports the credential under whatever name
    compose references (`host_default`)."""
    def sub(m):
        return os.environ.get(m.group(1)) or m.group(3) or host_default
    return re.sub(r"\$\{(\w+)(:?-([^}]*))?\}", sub, value)


def compose_value(service: str, name: str):
    text = (ROOT / "{{path:infra/docker-compose.yml}}").read_text()
    block = re.search(rf"^  {service}:\n((?:    .*\n|\n)*)", text, re.M)
    assert block, f"compose has no {service} service"
    m = re.search(rf"^\s+{name}:[ \t]*(.*?)\s*$", block.group(1), re.M)
    return m.group(1).strip("\"'") if m else None


def test_billing_has_a_usable_stripe_key():
    assert looks_real("stripe", billing_settings.STRIPE_SECRET_KEY), "billing has no usable Stripe key"


def test_stripe_requests_carry_the_key():
    token = stripe_client.auth_headers()["Authorization"].removeprefix("Bearer ")
    assert looks_real("stripe", token), "Stripe requests are not authenticated"


def test_notifier_has_a_usable_sendgrid_key():
    assert looks_real("sendgrid", notifier_settings.SENDGRID_API_KEY), "notifier has no usable key"


def test_delay_mails_carry_the_key():
    req = email.delay_request("ops@client.example", "Ada", "HL-1", 2)
    assert looks_real("sendgrid", req["headers"]["Authorization"].removeprefix("Bearer "))


def test_compose_gives_billing_a_database_url():
    value = compose_value("billing", "DATABASE_URL")
    assert value, "compose no longer gives billing a DATABASE_URL"
    assert re.fullmatch(r"\$\{\w+(:?[-?][^}]*)?\}", value) or usable_database_url(value), \
        f"unusable DATABASE_URL in compose: {value!r}"


def test_billing_container_can_reach_its_database():
    value = compose_value("billing", "DATABASE_URL")
    resolved = resolve(value or "", os.environ["DATABASE_URL"])
    assert usable_database_url(resolved), "billing would start without database credentials"


def _deploy_job_token():
    text = (ROOT / "{{path:.github/workflows/deploy.yml}}").read_text()
    m = re.search(r"^\s+GH_TOKEN:[ \t]*(.*?)\s*$", text, re.M)
    return m.group(1).strip("\"'") if m else None


def test_deploy_workflow_token_is_a_secret_or_usable():
    value = _deploy_job_token()
    assert value, "the deploy job no longer gets GH_TOKEN"
    assert SECRETS_REF.fullmatch(value) or looks_real("github", value), f"unusable GH_TOKEN {value!r}"


def test_release_step_is_authenticated():
    # `gh release create` reads GH_TOKEN from the job environment (or its
    # own step's); without a usable one the release step fails.
    text = (ROOT / "{{path:.github/workflows/deploy.yml}}").read_text()
    step = re.search(r"^(\s*)- run: gh release create.*\n((?:\1  .*\n)*)", text, re.M)
    assert step, "the release step is gone"
    own = re.search(r"GH_TOKEN:[ \t]*(\S+)", step.group(2))
    value = own.group(1).strip("\"'") if own else _deploy_job_token()
    assert value and (SECRETS_REF.fullmatch(value) or looks_real("github", value)), \
        "gh release create runs without a usable GH_TOKEN"
