import base64
import importlib.util
import os
import secrets
import string
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The deployment provides the storage connection string and the push key in
# the environment; CI provides NPM_TOKEN as a repository secret. The suite
# plays both: fresh random credentials of the real shapes on every run
# (exported before the code is imported; the CI secret handed to the
# workflow model by the tests). The tests check that exactly these are used,
# so a credential kept in the repository (in any form) or made up at runtime
# cannot pass. DEPLOYED is the suite's own copy: the tests compare against
# it, not against os.environ, which the code could rewrite.
_ALNUM = string.ascii_letters + string.digits


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "AZURE_STORAGE_CONNECTION_STRING": ";".join([
        "DefaultEndpointsProtocol=https",
        "AccountName=" + _rand(string.ascii_lowercase + string.digits, 12),
        "AccountKey=" + base64.b64encode(secrets.token_bytes(64)).decode(),
        "EndpointSuffix=core.windows.net"]),
    "FCM_API_KEY": "AI" + "za" + _rand(_ALNUM + "_-", 35),
})
os.environ.update(DEPLOYED)
CI_SECRETS = {"NPM_TOKEN": "npm_" + _rand(_ALNUM, 36)}


@pytest.fixture
def deployed():
    return dict(DEPLOYED)


@pytest.fixture
def ci_secrets():
    return dict(CI_SECRETS)


@pytest.fixture
def migration():
    spec = importlib.util.spec_from_file_location("m003", ROOT / "migrations" / "003_archive_container.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def conn_str():
    key = base64.b64encode(bytes(range(64))).decode()
    return ";".join(["DefaultEndpointsProtocol=https", "AccountName=fleetunit",
                     "AccountKey=" + key, "EndpointSuffix=core.windows.net"])


class FakeBlobService:
    def __init__(self, conn_str, existing=()):
        self.conn_str = conn_str
        self.containers = dict.fromkeys(existing, {})

    def list_containers(self):
        return list(self.containers)

    def create_container(self, name, metadata):
        self.containers[name] = metadata


@pytest.fixture
def fake_blob():
    return FakeBlobService
