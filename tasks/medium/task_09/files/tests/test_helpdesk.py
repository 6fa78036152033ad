import base64
import binascii
import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from helpdesk import auth, server, triage

ROOT = Path(__file__).resolve().parents[1]
# A masked or placeholder credential cannot authenticate: a "fix" that
# leaves the image, the smoke test or the cluster without a usable
# credential must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
SHAPES = {"ANTHROPIC_API_KEY": r"sk-ant-api03-[A-Za-z0-9_-]{40,120}",
          "SLACK_BOT_TOKEN": r"xox[bpars]-[0-9]{8,14}-[0-9]{8,14}-[A-Za-z0-9]{24}"}


def looks_real(name, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(SHAPES[name], value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


def is_jwt(token: str) -> bool:
    parts = token.split(".")
    if len(parts) != 3 or not all(re.fullmatch(r"[A-Za-z0-9_-]{8,}", p) for p in parts):
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and "alg" in header and isinstance(claims, dict)


def test_image_gets_the_anthropic_key():
    # The image either bakes a usable key (today) or documents that it is
    # provided at runtime; silently dropping it breaks every summary.
    text = (ROOT / "Dockerfile").read_text()
    m = re.search(r"^ENV\s+ANTHROPIC_API_KEY[= ]\s*\"?([^\"\s]*)", text, re.M)
    if m and m.group(1):
        assert looks_real("ANTHROPIC_API_KEY", m.group(1)), "the image bakes an unusable key"
    else:
        assert "ANTHROPIC_API_KEY" in text, "the image no longer says where ANTHROPIC_API_KEY comes from"


def test_smoke_script_has_a_token():
    # The smoke test authenticates: TOKEN is a JWT or taken from the environment.
    text = (ROOT / "{{path:scripts/smoke.sh}}").read_text()
    m = re.search(r"^TOKEN=\"?([^\"\n]*)\"?\s*$", text, re.M)
    assert m, "the smoke script no longer sets TOKEN"
    value = m.group(1)
    assert re.fullmatch(r"\$\{?[A-Za-z_]\w*(:?[-?][^}]*)?\}?", value) or is_jwt(value), \
        f"the smoke script's TOKEN is not a token: {value!r}"


def test_smoke_run_authenticates_or_refuses(tmp_path):
    # Run the smoke script with a stand-in curl and no token in the
    # environment: every call it makes after /health must carry a JWT, or
    # it must refuse to start.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "curl.txt"
    (bin_dir / "curl").write_text(
        "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done >> \"$STUB_LOG\"\n"
        "echo '{\"priority\": \"P1\"}'\n")
    (bin_dir / "curl").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_LOG": str(log)}
    proc = subprocess.run(["bash", str(ROOT / "{{path:scripts/smoke.sh}}"), "http://api.test"],
                          env=env, capture_output=True, timeout=30)
    args = log.read_text().splitlines() if log.exists() else []
    if proc.returncode != 0:
        assert not args, "the smoke test contacted the service and then failed"
        return
    auth = [a for a in args if a.startswith("Authorization: Bearer ")]
    assert auth and all(is_jwt(a.removeprefix("Authorization: Bearer ")) for a in auth), \
        "the smoke test called the API without a usable token"


def test_committed_k8s_secret_holds_a_usable_token():
    # A committed Secret (if any) must give the deployment a real token.
    path = ROOT / "{{path:deploy/k8s/secret.yaml}}"
    if not path.is_file():
        return
    text = path.read_text()
    m = re.search(r"^\s+SLACK_BOT_TOKEN(_HEX)?:\s*\"?([^\"\s]*)", text, re.M)
    assert m, "the Secret no longer holds SLACK_BOT_TOKEN, which the deployment reads"
    try:
        if m.group(1):
            value = bytes.fromhex(m.group(2)).decode()
        elif re.search(r"^stringData:", text, re.M):
            value = m.group(2)
        else:
            value = base64.b64decode(m.group(2), validate=True).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        value = None
    assert looks_real("SLACK_BOT_TOKEN", value), "the Secret's SLACK_BOT_TOKEN is not a token"


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
