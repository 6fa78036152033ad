import json
import time

import pytest

from helpdesk import auth, server, triage


def test_jwt_roundtrip(jwt_secret):
    token = auth.issue({"sub": "agent-7", "exp": time.time() + 60})
    assert auth.verify(token)["sub"] == "agent-7"


def test_jwt_rejects_tampering_and_expiry(jwt_secret):
    token = auth.issue({"sub": "agent-7", "exp": time.time() + 60})
    with pytest.raises(auth.AuthError):
        auth.verify(token, secret=b"other-key")
    head, _, sig = token.split(".")
    forged = auth._b64url(json.dumps({"sub": "admin", "exp": time.time() + 60}).encode())
    with pytest.raises(auth.AuthError):
        auth.verify(f"{head}.{forged}.{sig}")
    with pytest.raises(auth.AuthError):
        auth.verify(auth.issue({"sub": "a", "exp": 10}))
    with pytest.raises(auth.AuthError):
        auth.verify("not-a-token")


@pytest.mark.parametrize("subject,level", [
    ("Outage: checkout down", "P1"), ("Export failed with error 500", "P2"),
    ("Question about invoices", "P3"), ("Thanks!", "P4")])
def test_priority(subject, level):
    assert triage.priority(subject) == level


def test_summary_request_uses_env_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key-from-env")
    req = triage.summary_request({"subject": "s", "body": "b"})
    assert req.get_header("X-api-key") == "key-from-env"
    assert json.loads(req.data)["messages"][0]["role"] == "user"


def test_triage_endpoint_announces_p1(jwt_secret, post, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "slack-from-env")
    sent = []
    token = auth.issue({"sub": "smoke", "exp": time.time() + 60})
    status, body = post(server.application, "/triage",
                        {"subject": "login broken for all users"}, token, send=sent.append)
    assert status == "200 OK" and body == {"priority": "P1", "by": "smoke"}
    assert sent[0].get_header("Authorization") == "Bearer slack-from-env"


def test_triage_requires_token(jwt_secret, post):
    assert post(server.application, "/triage", {"subject": "x"})[0] == "401 Unauthorized"
    bad = auth.issue({"sub": "x", "exp": time.time() + 60}, secret=b"wrong")
    assert post(server.application, "/triage", {"subject": "x"}, bad)[0] == "401 Unauthorized"
