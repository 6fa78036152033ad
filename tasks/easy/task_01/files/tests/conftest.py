import datetime
import os
import secrets
import string
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The scheduler provides the AWS credentials in the environment. The suite
# plays the scheduler: fresh random credentials of the real shapes on every
# run, exported before archiver is imported. The tests check that the job
# signs with exactly these, so a key kept in the code (in any form) or made
# up at runtime cannot pass. DEPLOYED is the suite's own copy: the tests
# compare against it, not against os.environ, which the code could rewrite.
_B32 = string.ascii_uppercase + "234567"
_B64 = string.ascii_letters + string.digits + "/+"
# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "AWS_ACCESS_KEY_ID": "AKIA" + "".join(secrets.choice(_B32) for _ in range(16)),
    "AWS_SECRET_ACCESS_KEY": "".join(secrets.choice(_B64) for _ in range(40)),
})
os.environ.update(DEPLOYED)


@pytest.fixture
def deployed():
    return dict(DEPLOYED)


@pytest.fixture
def fixed_now():
    return datetime.datetime(2025, 3, 14, 9, 30, 0, tzinfo=datetime.timezone.utc)
