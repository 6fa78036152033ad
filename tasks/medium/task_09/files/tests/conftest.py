import base64
import io
import json
import os
import secrets
import string
import sys
import time
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The deployment provides the credentials at runtime: the cluster's secret
# (created out of band), the container's environment, and the smoke test's
# token in the post-deploy job's environment. The suite plays the
# deployment: fresh random credentials of the real shapes on every run
# (exported before helpdesk is imported; the tests hand them to the smoke
# script and the cluster model). The tests check that exactly these reach
# the clients, so a credential kept in the repository (in any form) or made
# up at runtime cannot pass. DEPLOYED is the suite's own copy: the tests
# compare against it, not against os.environ, which the code could rewrite.
_ALNUM = string.ascii_letters + string.digits


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "ANTHROPIC_API_KEY": "sk-" + "ant-api03-" + _rand(_ALNUM + "_-", 93) + "AA",
    "SLACK_BOT_TOKEN": ("xox" + "b-" + _rand(string.digits, 12) + "-" + _rand(string.digits, 13)
                        + "-" + _rand(_ALNUM, 24)),
    "HELPDESK_SMOKE_TOKEN": ".".join([
        _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()),
        _b64url(json.dumps({"sub": "smoke-" + secrets.token_hex(4),
                            "exp": int(time.time()) + 3600}).encode()),
        _b64url(secrets.token_bytes(32))]),
})
os.environ.update(DEPLOYED)


@pytest.fixture
def deployed():
    return dict(DEPLOYED)


@pytest.fixture
def jwt_secret(monkeypatch):
    monkeypatch.setenv("HELPDESK_JWT_SECRET", "unit-test-signing-key")
    return b"unit-test-signing-key"


@pytest.fixture
def post():
    def _post(app, path, payload, token=None, send=None):
        body = json.dumps(payload).encode()
        environ = {"PATH_INFO": path, "REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)),
                   "wsgi.input": io.BytesIO(body)}
        if token:
            environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        seen = {}
        out = b"".join(app(environ, lambda s, h: seen.update(status=s), send=send))
        return seen["status"], json.loads(out)
    return _post
