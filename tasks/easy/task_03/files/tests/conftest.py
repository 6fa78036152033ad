import os
import secrets
import string
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Production provides STRIPE_SECRET_KEY in the environment. The suite plays
# production: a fresh random test-mode key of the real shape on every run,
# exported before refundctl is imported. The tests check that the CLI
# authenticates with exactly this key, so a key kept in the code (in any
# form) or made up at runtime cannot pass. DEPLOYED is the suite's own copy:
# the tests compare against it, not against os.environ, which the code could
# rewrite.
_ALNUM = string.ascii_letters + string.digits
# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({"STRIPE_SECRET_KEY": "sk_test_" + "".join(secrets.choice(_ALNUM) for _ in range(32))})
os.environ.update(DEPLOYED)


@pytest.fixture
def deployed():
    return dict(DEPLOYED)
