"""Make the repository root importable so tests can `import services.*`,
and provide the deployment environment the services read their credentials
from.

The suite plays the deploy host and CI: fresh random credentials of the
real shapes on every run (exported before any service is imported; the CI
secret is handed to the workflow model by the tests). The credential tests
check that exactly these reach the clients, so a credential kept in the
repository (in any form) or made up at runtime cannot pass. DEPLOYED is the
suite's own copy: the tests compare against it, not against os.environ,
which the code could rewrite."""
import os
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
    "STRIPE_SECRET_KEY": "sk_" + "test_" + _rand(_ALNUM, 32),
    "SENDGRID_API_KEY": "SG" + "." + _rand(_ALNUM + "_-", 22) + "." + _rand(_ALNUM + "_-", 43),
    "DATABASE_URL": ("postgres" + "://billing_" + _rand(string.ascii_lowercase, 6) + ":"
                     + _rand(_ALNUM, 22) + "@" + "db:5432/billing"),
})
os.environ.update(DEPLOYED)
# The GitHub token the repository's CI secrets hold (not in the process
# environment: only the workflow gets it).
CI_GITHUB_TOKEN = "ghp" + "_" + _rand(_ALNUM, 36)

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture
def deployed():
    return dict(DEPLOYED, CI_GITHUB_TOKEN=CI_GITHUB_TOKEN)
