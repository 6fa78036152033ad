import hashlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Production provides STRIPE_SECRET_KEY; the suite provides a test-mode key
# of the same shape (built at runtime, so no key-shaped literal sits in the
# repository) before refundctl is imported.
os.environ["STRIPE_SECRET_KEY"] = "sk_" + "test_" + hashlib.sha256(b"refundctl tests").hexdigest()[:32]
