import base64
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


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
