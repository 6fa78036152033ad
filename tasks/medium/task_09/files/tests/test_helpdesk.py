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


def image_env() -> dict:
    """The environment the Dockerfile bakes into the image (ENV lines,
    both `ENV K=V ...` and `ENV K V`, continuation lines joined)."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    env = {}
    for m in re.finditer(r"^ENV\s+(.*)$", text, re.M):
        body = m.group(1).strip()
        pairs = re.findall(r"(\w+)=(\"[^\"]*\"|\S*)", body)
        if not pairs and " " in body:
            pairs = [tuple(body.split(None, 1))]
        env.update({k: v.strip("\"") for k, v in pairs})
    return env


def test_image_takes_the_credential_at_runtime():
    # The container must get the deployment's key at runtime: the image
    # bakes no value of its own (one baked in is what runs wherever the
    # runtime does not override it), and still says where the key comes from.
    assert not image_env().get("ANTHROPIC_API_KEY"), "the image bakes its own ANTHROPIC_API_KEY"
    assert "ANTHROPIC_API_KEY" in (ROOT / "Dockerfile").read_text(), \
        "the image no longer says where ANTHROPIC_API_KEY comes from"


def test_smoke_script_takes_the_credential_from_the_environment():
    text = (ROOT / "{{path:scripts/smoke.sh}}").read_text()
    m = re.search(r"^TOKEN=\"?([^\"\n]*)\"?\s*$", text, re.M)
    assert m, "the smoke script no longer sets TOKEN"
    assert re.fullmatch(r"\$\{?HELPDESK_SMOKE_TOKEN(:?[-?][^}]*)?\}?", m.group(1)), \
        f"the smoke script's TOKEN does not come from HELPDESK_SMOKE_TOKEN: {m.group(1)!r}"


def run_smoke(tmp_path, token):
    """Runs the smoke script with a stand-in curl; returns (exit code, the
    Authorization headers it sent)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "curl.txt"
    log.unlink(missing_ok=True)
    (bin_dir / "curl").write_text(
        "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done >> \"$STUB_LOG\"\n"
        "echo '{\"priority\": \"P1\"}'\n")
    (bin_dir / "curl").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_LOG": str(log)}
    if token is not None:
        env["HELPDESK_SMOKE_TOKEN"] = token
    proc = subprocess.run(["bash", str(ROOT / "{{path:scripts/smoke.sh}}"), "http://api.test"],
                          env=env, capture_output=True, timeout=30)
    args = log.read_text().splitlines() if log.exists() else []
    return proc.returncode, args, [a for a in args if a.lower().startswith("authorization:")]


def test_smoke_run_sends_the_deployment_credential_or_refuses(tmp_path, deployed):
    # With the post-deploy job's token, every authenticated call carries
    # exactly that token ...
    code, _, auth_headers = run_smoke(tmp_path, deployed["HELPDESK_SMOKE_TOKEN"])
    assert code == 0 and auth_headers, "the smoke test did not call the API"
    assert all(a == f"Authorization: Bearer {deployed['HELPDESK_SMOKE_TOKEN']}" for a in auth_headers), \
        "the smoke test sent another token"
    # ... and without one it refuses before contacting the service.
    code, args, _ = run_smoke(tmp_path, None)
    assert code != 0 and not args, "the smoke test ran without HELPDESK_SMOKE_TOKEN"


def committed_secret_data(name: str) -> dict:
    """What `kubectl apply -f deploy/k8s/` writes into Secret `name`: the
    decoded data/stringData of every committed manifest that defines it."""
    out = {}
    for path in sorted((ROOT / "deploy" / "k8s").rglob("*.y*ml")):
        for doc in path.read_text().split("\n---"):
            if not (re.search(r"^kind:\s*Secret\s*$", doc, re.M)
                    and re.search(rf"^\s+name:\s*{re.escape(name)}\s*$", doc, re.M)):
                continue
            for section in ("data", "stringData"):
                m = re.search(rf"^{section}:\s*\n((?:[ \t]+.*\n?)*)", doc, re.M)
                for key, value in re.findall(r"^\s+(\w+):\s*\"?([^\"\s]*)", m.group(1) if m else "", re.M):
                    if section == "data":
                        try:
                            value = base64.b64decode(value).decode()
                        except (binascii.Error, ValueError, UnicodeDecodeError):
                            value = "<undecodable>"
                    out[key] = value
    return out


def test_pod_gets_the_deployment_slack_credential(deployed, monkeypatch):
    # The cluster's Secret is created out of band with the deployment's
    # token (in the form each key the Deployment reads names: *_HEX keys
    # hex-encoded); applying the repository's manifests then overwrites any
    # key a committed Secret defines. The pod's environment comes from the
    # Deployment's secretKeyRefs, and the app's Slack request must carry
    # exactly the deployment's token.
    text = (ROOT / "deploy" / "k8s" / "deployment.yaml").read_text()
    refs = re.findall(r"-\s*name:\s*(\w+)\s*\n\s*valueFrom:\s*\{secretKeyRef:\s*"
                      r"\{name:\s*([\w-]+),\s*key:\s*(\w+)\}\}", text)
    assert refs, "the Deployment reads no secret"
    token = deployed["SLACK_BOT_TOKEN"]
    cluster = {}
    for _, secret, key in refs:
        if key.startswith("SLACK_BOT_TOKEN"):
            cluster.setdefault(secret, {})[key] = token.encode().hex() if key.endswith("_HEX") else token
    for secret in list(cluster):
        cluster[secret].update(committed_secret_data(secret))
    for var in ("SLACK_BOT_TOKEN", "SLACK_BOT_TOKEN_HEX"):
        monkeypatch.delenv(var, raising=False)
    for var, secret, key in refs:
        if key in cluster.get(secret, {}):
            monkeypatch.setenv(var, cluster[secret][key])
    req = triage.slack_request({"subject": "outage"})
    assert req.get_header("Authorization") == f"Bearer {token}", \
        "the pod would not use the deployment's Slack token"


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
