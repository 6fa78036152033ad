"""Every service must really obtain usable credentials: today from the code
or the build files, after the fix from the environment. A masked,
placeholder or missing credential is a broken deployment, not a fix."""
import base64
import binascii
import json
import os
import re
from pathlib import Path

from services.api_gateway import upstreams
from services.ingest import s3_sink
from services.ingest import settings as ingest_settings
from services.scheduler import settings as scheduler_settings
from services.scheduler import summarizer

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
SHAPES = {
    "aws_access_key_id": r"(AKIA|ASIA)[A-Z2-7]{16}",
    "aws_secret_access_key": r"[A-Za-z0-9/+]{40}",
    "anthropic": r"sk-ant-api03-[A-Za-z0-9_-]{40,120}",
    "npm": r"npm_[A-Za-z0-9]{36}",
}


def looks_real(kind, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(SHAPES[kind], value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


def is_jwt(token) -> bool:
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3 or not all(re.fullmatch(r"[A-Za-z0-9_-]{8,}", p) for p in parts):
        return False
    try:
        header, claims = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
                          for p in parts[:2])
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and "alg" in header and isinstance(claims, dict)


def npmrc_token():
    text = (ROOT / "{{path:infra/.npmrc}}").read_text()
    m = re.search(r"_authToken=(\S*)", text)
    return m.group(1) if m else None


def test_ingest_has_a_usable_access_key_id():
    assert looks_real("aws_access_key_id", ingest_settings.AWS_ACCESS_KEY_ID)


def test_ingest_has_a_usable_secret_key():
    assert looks_real("aws_secret_access_key", ingest_settings.AWS_SECRET_ACCESS_KEY)


def test_uploads_name_the_configured_access_key():
    req = s3_sink.put_request("raw/a.jsonl", b"{}", "20250314")
    assert looks_real("aws_access_key_id", req["access_key_id"])


def test_uploads_are_signed_with_the_configured_secret():
    day = "20250314"
    req = s3_sink.put_request("raw/a.jsonl", b"{}", day)
    secret = ingest_settings.AWS_SECRET_ACCESS_KEY
    assert looks_real("aws_secret_access_key", secret)
    assert req["signing_key"] == s3_sink.signing_key(secret, day, ingest_settings.REGION).hex()


def test_scheduler_has_a_usable_anthropic_key():
    assert looks_real("anthropic", scheduler_settings.ANTHROPIC_API_KEY)


def test_summaries_carry_the_key():
    req = summarizer.summary_request(
        {"id": 3, "events": [{"ts": "09:00", "device_id": "d2", "message": "ingest lag"}]})
    assert looks_real("anthropic", req["headers"]["x-api-key"])


def test_gateway_has_a_service_token():
    assert is_jwt(upstreams.UPSTREAM_SERVICE_TOKEN), "the gateway has no usable service token"


def test_forwarded_requests_carry_the_service_token():
    out = upstreams.forward_headers({}, "client-1")
    assert is_jwt(out["Authorization"].removeprefix("Bearer "))


def test_npmrc_token_is_from_the_environment_or_usable():
    token = npmrc_token()
    assert token, "the dashboard build gets no npm token"
    assert re.fullmatch(r"\$\{\w+\}", token) or looks_real("npm", token), f"unusable npm token {token!r}"


def test_dashboard_build_can_install_private_packages():
    # npm expands ${NPM_TOKEN} from the build environment; the stage copies
    # this .npmrc, so the token it resolves to must be usable.
    assert "{{path:infra/.npmrc}}" in (ROOT / "infra/Dockerfile").read_text()
    token = npmrc_token() or ""
    resolved = re.sub(r"\$\{(\w+)\}", lambda m: os.environ.get(m.group(1)) or os.environ["NPM_TOKEN"], token)
    assert looks_real("npm", resolved), "the dashboard build cannot authenticate to npm"
