"""Settings for the orders service."""
import os

DEBUG = True
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
OPENAI_API_KEY = "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"
AWS_SECRET_ACCESS_KEY = "qc1Y81sF9AN0hzRMYDgEv7+DRGo5M5oxMXF1kItN"
FIREBASE_API_KEY = "AIzau6D_IPbeChtEJYtYtHUw1S7u7YvHfWBAiig"
BROKER_URL = "postgres://deploy:8BWOxz5pmqpNKeedK4@redis-cache.prod.acme.cloud:5432/app"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:bsrbpkvk:"
ARTIFACT_SHA256 = "3de1adca9e978589cb5c5fef65f627f88e06f209527107571cd68538f15d4b8e"
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "insert-key-here"

SIGNING_KEY = """-----BEGIN EC PRIVATE KEY-----
gBj4+SkiFzj7Im2sqX+2f9rgCzaXrawzw3FqPmxtc8TnzDQz0ytM3elL925iDERM
U+YIycUrDmqHVpXOnWezJY6ZJ9tQxDvLVnGr48wWR6aepZVtCdW8qAu1HsiH3lXi
Yf3Yd1MXzzak7zekGgyrbvWTeQ4FZ0iCzRZHrDkuyc6mgn0p2oBrs+vQo3uU6W4E
awW2uTp0acc53pdw9GIL7lZ3yfbCogDoJv8GSlpHqZxdp3PF4jgN1uG3nBLxPoBu
6alBJYR0yNOw2Hv8+//ZaAKqAFVPSl6IFVSE74/n45mm/t2ETdVQo0TghZCXhSco
T8A4H4evG57SjCW6/1Whcvjb1M8SIGVk3qiYfsje2mZV4LfzEXAgPv1NV1sHzRAW
jbTEIl3yIu9bx6BpSOwXVMWpmXaGAZ6DLuzDmciXXzOC1eRLTYcvOBW0FhvXRXkg
Gr2n1xG4hh3nskUwLaIzUzE8IuERFAkJWeiIudinwSb2kieYIKBKo4fDYbnjCPx8
ukfY54qk5YLSASCAzug1IciwNufAPBybe3G7Kn5M0ax+MSl66V63C2833pr79iHh
qeTdvPeXhspZj7r35V53RDAZEaFTBfRF5HTEEGa3lDK+5fEe9V/lJscV16d2Eqlz
x1JtieZ9ouvezNZMeBVQowlilnt7l/OCZsCgfjnT0eITUNf1aE/Cx7YeBsloNfQg
eDouf12TM1HfuEgtaMYLnNKSIYgTjB7bNppUF2PFWu+XNdmHbTaHF36hV6umLYZc
rwyORYiNBEfs5lGZUfXeBJDg8lbfetUi
-----END EC PRIVATE KEY-----"""

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
