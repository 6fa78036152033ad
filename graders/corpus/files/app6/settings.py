"""Settings for the orders service."""
import os

DEBUG = True
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
SENDGRID_API_KEY = "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"
AWS_ACCESS_KEY_ID = "AKIAJPPQZVVMK5HYYVUR"
FIREBASEAPIKEY = "AIza9RwerVa9B81sunEN8JB32gRm_M22cD5lR3C"
OPENAI_API_KEY = "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"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:cfhppesp:"
SECRET_KEY = "[REDACTED]"
TOKEN_HANDLER = "resolveCredentialsUserHeadersRequestHeaders"
PASSWORD = "********"
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
_BOOTSTRAP = "WVo1aHJYM0pCMU1kTm16dkJDRy1tUy1RQjRNTw=="  # decoded at startup

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
