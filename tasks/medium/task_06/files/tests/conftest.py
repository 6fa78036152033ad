import os
import secrets
import string
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The deploy host exports the credentials compose passes to the container.
# The suite plays the deploy host: fresh random credentials of the real
# shapes on every run, exported before tilecache is imported. The tests
# check that the container and the code get exactly these, so a credential
# kept in the repository (in any form) or made up at runtime cannot pass.
# DEPLOYED is the suite's own copy: the tests compare against it, not
# against os.environ, which the code could rewrite.
_ALNUM = string.ascii_letters + string.digits
_URLSAFE = _ALNUM + "_-"


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "GOOGLE_MAPS_API_KEY": "AI" + "za" + _rand(_URLSAFE, 35),
    "SENDGRID_API_KEY": "SG" + "." + _rand(_URLSAFE, 22) + "." + _rand(_URLSAFE, 43),
    "TILECACHE_UPSTREAM_TOKEN": "tok_" + "live_" + _rand(_ALNUM, 32),
})
os.environ.update(DEPLOYED)


@pytest.fixture
def deployed():
    return dict(DEPLOYED)


from tilecache import config  # noqa: E402


@pytest.fixture
def cfg(monkeypatch):
    monkeypatch.delenv("TILECACHE_CONFIG", raising=False)
    return config.load()


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return FakeClock()
