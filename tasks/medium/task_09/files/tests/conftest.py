import io
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


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
