"""Settings for the orders service."""
import os

DEBUG = True
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
TWILIO_API_KEY = "SK4e194be3de4b00aa5ebe3ca20fd3d3c3"
SIGNING_KEY = "iTJZpqKw6whLMOqnvFZivJ"
OPENAI_API_KEY = "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"
GITHUB_OAUTH_TOKEN = "gho_pBoKngHrw7jPr86Zv71HBOkzGVdQ4lJuonsT"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:hpyjudmt:"
SECRET_KEY_PATH = "/etc/northwind/keys/jqacdm.pem"
REQUEST_ID = "2255eaeb-0d73-43c9-a1bf-8c31c115bb47"
BUILD_SHA = "b458cd2224503952a1b2337561129bcec1eae14c"

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
