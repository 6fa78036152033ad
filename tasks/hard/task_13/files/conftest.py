"""Repository root on sys.path, so tests import `services.*` / `shared.*` directly;
and the deployment environment the services read their credentials from.

The suite plays the deployment: fresh random credentials of the real shapes
on every run, exported before any service is imported (the dashboard build
reads NPM_TOKEN from the same environment). The credential tests check
that exactly these reach the clients, so a credential kept in the
repository (in any form) or made up at runtime cannot pass. DEPLOYED is
the suite's own copy: the tests compare against it, not against os.environ,
which the code could rewrite."""
import base64
import json
import os
import secrets
import string
import sys
import types

import pytest

_ALNUM = string.ascii_letters + string.digits


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "AWS_ACCESS_KEY_ID": "AKIA" + _rand(string.ascii_uppercase + "234567", 16),
    "AWS_SECRET_ACCESS_KEY": _rand(_ALNUM + "/+", 40),
    "ANTHROPIC_API_KEY": "sk-" + "ant-api03-" + _rand(_ALNUM + "_-", 93) + "AA",
    "NPM_TOKEN": "npm" + "_" + _rand(_ALNUM, 36),
    "UPSTREAM_SERVICE_TOKEN": ".".join([
        _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()),
        _b64url(json.dumps({"sub": "svc:" + secrets.token_hex(4), "aud": "atlas"}).encode()),
        _b64url(secrets.token_bytes(32))]),
})
os.environ.update(DEPLOYED)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def deployed():
    return dict(DEPLOYED)
