"""Settings for the orders service."""
import os

DEBUG = False
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
GITHUB_OAUTH_TOKEN = "gho_qQ5LgCBADEJ7zQhOOXXIayoQGzbLgrRVstS4"
TWILIO_API_KEY = "SK6a6d851e6a1b1d676b6ee4eab1a93993"
PAYMENTS_TOKEN = "tok_live_iwT7AJJGwOux66ZIezhLPYmonbrjK6qI"
FIREBASEAPIKEY = "AIzaeTEMfdLTTW_4amvoYUCvcsXq5EjjeYIL1Dt"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:unczmsxq:"
SECRET_KEY = "YOUR_API_KEY"
REQUEST_ID = "efc59791-05e5-42e1-acf1-b4b5e2ebae0b"
API_KEY = "<your-token-here>"
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
