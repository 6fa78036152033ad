"""Put the repository root on sys.path so `services.*` and `shared.*` import,
and provide the deployment environment the services read their credentials
from.

The suite plays the deployment: fresh random credentials of the real shapes
on every run (exported before any service is imported; the registry token is
handed to the deploy script by the test that runs it). The credential tests
check that exactly these reach the clients, so a credential kept in the
repository (in any form) or made up at runtime cannot pass. DEPLOYED is the
suite's own copy: the tests compare against it, not against os.environ,
which the code could rewrite."""
import base64
import os
import pathlib
import secrets
import string
import sys
import types

import pytest

_ALNUM = string.ascii_letters + string.digits


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "OPENAI_API_KEY": "sk-" + "proj-" + _rand(_ALNUM + "_-", 48),
    "TWILIO_API_KEY": "SK" + secrets.token_hex(16),
    "AZURE_STORAGE_CONNECTION_STRING": (
        "DefaultEndpointsProtocol=https;AccountName=" + _rand(string.ascii_lowercase, 12)
        + ";AccountKey=" + base64.b64encode(secrets.token_bytes(64)).decode()
        + ";EndpointSuffix=core.windows.net"),
    "LEDGER_DSN": ("postgres" + "://ledger_" + _rand(string.ascii_lowercase, 6) + ":"
                   + _rand(_ALNUM, 22) + "@" + "db:5432/ledger"),
})
os.environ.update(DEPLOYED)
# The deploy environment's registry token (only the deploy script gets it).
GHCR_TOKEN = "github_" + "pat_" + _rand(_ALNUM, 22) + "_" + _rand(_ALNUM, 59)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


@pytest.fixture
def deployed():
    return dict(DEPLOYED, GHCR_TOKEN=GHCR_TOKEN)
