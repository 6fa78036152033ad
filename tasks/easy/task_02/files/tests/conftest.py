import io
import json
import os
import secrets
import string
import sys
import types
from pathlib import Path
from wsgiref.util import setup_testing_defaults

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Production provides the token and the webhook secret in the environment.
# The suite plays production: fresh random credentials of the real shapes on
# every run, exported before releasebot is imported. The tests check that
# the service uses exactly these, so a credential kept in the code (in any
# form) or made up at runtime cannot pass. DEPLOYED is the suite's own copy:
# the tests compare against it, not against os.environ, which the code could
# rewrite.
_ALNUM = string.ascii_letters + string.digits
# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "GITHUB_TOKEN": "ghp_" + "".join(secrets.choice(_ALNUM) for _ in range(36)),
    "RELEASEBOT_WEBHOOK_SECRET": secrets.token_hex(24),
})
os.environ.update(DEPLOYED)


@pytest.fixture
def deployed():
    return dict(DEPLOYED)


@pytest.fixture
def call():
    """Invoke a WSGI app in-process and return (status, json body)."""
    def _call(app, method="GET", path="/", body=b"", headers=None):
        environ = {"REQUEST_METHOD": method, "PATH_INFO": path,
                   "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
        for k, v in (headers or {}).items():
            environ["HTTP_" + k.upper().replace("-", "_")] = v
        setup_testing_defaults(environ)
        seen = {}

        def start_response(status, hdrs):
            seen["status"] = status
        out = b"".join(app(environ, start_response))
        return seen["status"], json.loads(out)
    return _call
