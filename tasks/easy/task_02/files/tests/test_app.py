import hashlib
import hmac
import json

import pytest

from releasebot import app as appmod
from releasebot import config, github

RELEASES = json.dumps([
    {"tag_name": "v2.4.0", "name": "Spring", "published_at": "2025-03-01T10:00:00Z"},
    {"tag_name": "v2.3.1", "name": None, "published_at": "2025-02-11T08:00:00Z"},
]).encode()


# config attribute -> the environment variable production sets.
ENV = {"GITHUB_TOKEN": "GITHUB_TOKEN", "WEBHOOK_SECRET": "RELEASEBOT_WEBHOOK_SECRET"}


# The service must use exactly the credentials production provides (this
# run's fresh ones): a credential kept in the code, masked, or made up fails.
@pytest.mark.parametrize("name", sorted(ENV))
def test_configured_credentials_are_the_deployments(name, deployed):
    assert getattr(config, name, None) == deployed[ENV[name]], f"{name} is not the deployment's"


def sign(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_health(call):
    assert call(appmod.make_app(), path="/health") == ("200 OK", {"status": "ok"})


def test_auth_header_carries_the_deployment_credential(deployed):
    headers = github.auth_headers()
    assert headers["Authorization"] == f"Bearer {deployed['GITHUB_TOKEN']}"
    assert github.auth_headers("abc")["Authorization"] == "Bearer abc"


def test_releases_route_uses_transport(call):
    seen = []

    def transport(req):
        seen.append(req)
        return RELEASES
    status, body = call(appmod.make_app(transport), path="/releases/northwind/ledger")
    assert status == "200 OK"
    assert [r["tag"] for r in body] == ["v2.4.0", "v2.3.1"]
    assert body[1]["name"] == "v2.3.1"
    assert seen[0].full_url.startswith(config.GITHUB_API + "/repos/northwind/ledger/releases")
    assert seen[0].get_header("Authorization") == f"Bearer {config.GITHUB_TOKEN}"


def test_unknown_repo_is_404(call):
    status, _ = call(appmod.make_app(lambda req: RELEASES), path="/releases/evil/repo")
    assert status == "404 Not Found"


def test_webhook_accepts_signature_with_the_deployment_credential(call, deployed):
    appmod.RECEIVED.clear()
    body = json.dumps({"action": "published", "release": {"tag_name": "v2.5.0"}}).encode()
    signature = sign(body, deployed["RELEASEBOT_WEBHOOK_SECRET"])
    status, _ = call(appmod.make_app(), "POST", "/webhook", body, {"X-Hub-Signature-256": signature})
    assert status == "202 Accepted"
    assert appmod.RECEIVED == [{"action": "published", "tag": "v2.5.0"}]


def test_webhook_rejects_bad_signature(call):
    body = b'{"action": "published"}'
    status, _ = call(appmod.make_app(), "POST", "/webhook", body,
                     {"X-Hub-Signature-256": "sha256=" + "0" * 64})
    assert status == "401 Unauthorized"
    status, _ = call(appmod.make_app(), "POST", "/webhook", body)
    assert status == "401 Unauthorized"


def test_verify_signature_with_explicit_secret():
    body = b"payload"
    good = "sha256=" + hmac.new(b"k1", body, hashlib.sha256).hexdigest()
    assert appmod.verify_signature(body, good, secret="k1")
    assert not appmod.verify_signature(body, good, secret="k2")
