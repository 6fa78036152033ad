import os
import secrets
import sqlite3
import string
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The deployment provides DATABASE_URL. The suite plays the deployment: a
# fresh random warehouse login on every run, exported before the job's
# modules are imported. The tests check that the job logs in with exactly
# this, so a URL kept in the code (in any form) or made up at runtime cannot
# pass. DEPLOYED is the suite's own copy (the URL's parts): the tests compare
# against it, not against os.environ, which the code could rewrite.
_LOWER = string.ascii_lowercase + string.digits


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({"user": "etl_" + _rand(_LOWER, 8),
                                   "password": _rand(string.ascii_letters + string.digits, 22),
                                   "host": "pg-" + _rand(_LOWER, 8) + ".internal", "port": 20000 + secrets.randbelow(40000),
                                   "dbname": "metrics_" + _rand(_LOWER, 6)})
os.environ["DATABASE_URL"] = ("postgresql" + "://" + DEPLOYED["user"] + ":" + DEPLOYED["password"]
                              + "@" + DEPLOYED["host"] + ":" + str(DEPLOYED["port"]) + "/" + DEPLOYED["dbname"])


@pytest.fixture
def deployed():
    return dict(DEPLOYED)


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
