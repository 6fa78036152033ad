import base64
import datetime
import hashlib
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The scheduler provides the AWS credentials in the environment; the suite
# provides test-only ones of the same shape (derived at runtime, so no
# key-shaped literal sits in the repository) before archiver is imported.
_seed = hashlib.sha256(b"invoice-archiver tests").digest()
os.environ["AWS_ACCESS_KEY_ID"] = "AKIA" + base64.b32encode(_seed).decode()[:16]
os.environ["AWS_SECRET_ACCESS_KEY"] = base64.b64encode(_seed + _seed[:8]).decode()[:40]


@pytest.fixture
def fixed_now():
    return datetime.datetime(2025, 3, 14, 9, 30, 0, tzinfo=datetime.timezone.utc)
