"""Every service must use exactly the credentials its deployment provides
(the fresh ones the root conftest generates on every run): the services
from the environment, the dashboard build from the build environment
through .npmrc. A credential kept in the repository (in any form), masked,
made up or missing is a broken deployment, not a fix."""
import hashlib
import hmac
import re
from pathlib import Path

from services.api_gateway import upstreams
from services.ingest import s3_sink
from services.ingest import settings as ingest_settings
from services.scheduler import settings as scheduler_settings
from services.scheduler import summarizer

ROOT = Path(__file__).resolve().parents[2]


def npmrc_token():
    text = (ROOT / "{{path:infra/.npmrc}}").read_text()
    m = re.search(r"_authToken=(\S*)", text)
    return m.group(1) if m else None


def test_ingest_uses_the_deployment_access_key_id(deployed):
    assert ingest_settings.AWS_ACCESS_KEY_ID == deployed["AWS_ACCESS_KEY_ID"]


def test_ingest_uses_the_deployment_secret_key(deployed):
    assert ingest_settings.AWS_SECRET_ACCESS_KEY == deployed["AWS_SECRET_ACCESS_KEY"]


def test_uploads_name_the_deployment_access_key(deployed):
    req = s3_sink.put_request("raw/a.jsonl", b"{}", "20250314")
    assert req["access_key_id"] == deployed["AWS_ACCESS_KEY_ID"]


def test_uploads_are_signed_with_the_deployment_secret(deployed):
    day = "20250314"
    req = s3_sink.put_request("raw/a.jsonl", b"{}", day)
    # The SigV4 signing key, derived here independently of s3_sink.
    k = ("AWS4" + deployed["AWS_SECRET_ACCESS_KEY"]).encode()
    for part in (day, ingest_settings.REGION, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    assert req["signing_key"] == k.hex()


def test_scheduler_uses_the_deployment_anthropic_key(deployed):
    assert scheduler_settings.ANTHROPIC_API_KEY == deployed["ANTHROPIC_API_KEY"]


def test_summaries_carry_the_deployment_key(deployed):
    req = summarizer.summary_request(
        {"id": 3, "events": [{"ts": "09:00", "device_id": "d2", "message": "ingest lag"}]})
    assert req["headers"]["x-api-key"] == deployed["ANTHROPIC_API_KEY"]


def test_gateway_uses_the_deployment_service_token(deployed):
    assert upstreams.UPSTREAM_SERVICE_TOKEN == deployed["UPSTREAM_SERVICE_TOKEN"], \
        "the gateway does not use the deployment's service token"


def test_forwarded_requests_carry_the_deployment_service_token(deployed):
    out = upstreams.forward_headers({}, "client-1")
    assert out["Authorization"] == f"Bearer {deployed['UPSTREAM_SERVICE_TOKEN']}"


def test_npmrc_token_is_from_the_environment():
    token = npmrc_token()
    assert token, "the dashboard build gets no npm token"
    assert re.fullmatch(r"\$\{\w+\}", token), f"the .npmrc carries a token of its own: {token!r}"


def test_dashboard_build_authenticates_with_the_deployment_npm_token(deployed):
    # npm expands ${VAR} from the build environment, which exports the
    # deployment's token (under whatever name .npmrc references); the
    # stage copies this .npmrc.
    assert "{{path:infra/.npmrc}}" in (ROOT / "infra/Dockerfile").read_text()
    token = npmrc_token() or ""
    resolved = re.sub(r"\$\{(\w+)\}", lambda m: deployed.get(m.group(1)) or deployed["NPM_TOKEN"], token)
    assert resolved == deployed["NPM_TOKEN"], "the dashboard build would not use the deployment's npm token"
