import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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
