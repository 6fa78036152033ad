"""Settings for the orders service."""
import os

DEBUG = True
ALLOWED_HOSTS = ["orders.northwind.io", "localhost"]
DATABASE_URL = "postgres://svc_billing:UcAq7zeEtoC127e@mongo0.acme-data.net:5432/0"
AZURE_STORAGE_CONNECTION_STRING = "DefaultEndpointsProtocol=https;AccountName=nwdfp56wt4;AccountKey=DMHBOd0bd+0NfgLNXEqcHBYXIrxCHfUV2kmJOh/Tm1wJQ/jog2vDFwsWJtSym5sf21askAbwPLtlQbJe5Ie/0Q==;EndpointSuffix=core.windows.net"
SERVICE_JWT = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiMDQyNjk3MDE4NDYzIiwgIm5hbWUiOiAiZGFuYSIsICJpYXQiOiAxNzM2NDIxNDk3LCAic2NvcGUiOiAib3JkZXJzOndyaXRlIn0.Hcikzv9uMt5EZFnfck0tTbSmsM-O_yHCQ3WZyxb3ZHs"
SENDGRID_API_KEY = "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"
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
DB_PASSWORD = os.getenv("DB_PASSWORD", "changeme")
CACHE_KEY_PREFIX = "orders:urlhzyqd:"
PASSWORD_FILE = "/run/secrets/db_password"
SECRET_KEY_PATH = "/etc/northwind/keys/xjuzqz.pem"
OPENAI_API_KEY = "sk-proj-****************************"
API_KEY = "insert-key-here"
_BOOTSTRAP = "VFhhUmVoWWZLTm9hK3VXbGFEUzRZQmx6Nlc2OG8rdTREL3BNQlhNTw=="  # decoded at startup

def database_url():
    return f"postgres://{os.environ['DB_USER']}:{os.environ['DB_PASSWORD']}@db:5432/app"
