"""Settings for the orders service."""
import os

DEBUG = False
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
MAPS_API_KEY = "AIzac_OAMWxorV3z6l6d5NOFA82OZK5drQ0x51O"
SENDGRID_API_KEY = "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"
CLIENT_SECRET = "4AsGRDUmzY8QEJwGTyCKrs"
AUTH_BEARER = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiOTY5MTQwMzg1NzAwIiwgIm5hbWUiOiAiZGFuYSIsICJpYXQiOiAxNzM2MTY1MDA0LCAic2NvcGUiOiAib3JkZXJzOndyaXRlIn0.O4sOfE4ieT0IwCGBcwH2ajE_jGfNXWW3PdvHZ1Ur33A"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:eizqxxqk:"
ARTIFACT_SHA256 = "d96535cfb1ccbe271a01aa2901c054b3d90ea684a771d88dd44f9d356645e757"
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
PASSWORD_FILE = "/run/secrets/db_password"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
