"""Settings for the orders service."""
import os

DEBUG = True
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
SENDGRID_API_KEY = "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"
BROKER_URL = "mysql://app:0jJIDhUPvzZIY5lSD7cc@pg-prod-2.corp.lan:3306/billing"
AZURE_STORAGE_CONNECTION_STRING = "DefaultEndpointsProtocol=https;AccountName=nw58bszazo;AccountKey=d/dLtiK6CXTe0AHCobhYKS2KYIIV+EZK3eJttRKCE63hhHh9p6fjut8QvlgnizpYFahOnhu5+IzxatDX2HXxGg==;EndpointSuffix=core.windows.net"
FIREBASE_API_KEY = "AIzaDouOjWjlVBZX85W2Xd1u36FBuv74GJ0N9eO"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:uofjdrau:"
SECRET_KEY = "example-token"
SECRET_KEY_PATH = "/etc/northwind/keys/rimvbr.pem"
PASSWORD = "********"

SIGNING_KEY = """-----BEGIN RSA PRIVATE KEY-----
jXqpEEu80gcHzmB+Ouud9/nLQbb5dGGL7lSK3Ny/p0PNzXhxrJaXgcd3ZH62aGhE
J2g7yKRmNgXhmHUsZE62dsllJH5zMOQ1Z5vJiniNLGPZ52E4K2JyXDOwxE1bya57
zb0WoPbKu64UHsk9SvlBx2aPai7OYNtU
-----END RSA PRIVATE KEY-----"""

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
