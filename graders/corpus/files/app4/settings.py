"""Settings for the orders service."""
import os

DEBUG = True
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
OPENAI_API_KEY = "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"
STRIPE_KEY = "sk_live_evcBqyV2M4h8OnjhpEfurxwBx8KrSV8r"
SLACK_BOT_TOKEN = "xoxb-814762953435-7234082908223-JCtNd7aADKJ3aeSEtUtEZPmp"
BROKER_URL = "postgres://app:Jv4zJNuRpjerQAlNLmy@mongo0.acme-data.net:5432/billing"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:ukpkproi:"
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
OPENAI_API_KEY = "sk-proj-****************************"
TOKEN_HANDLER = "createAuthenticationPasswordAuthenticationHandlerHeaders"

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
