#!/usr/bin/env python3
"""Blind held-out corpus, round 6: the Python ecosystem in depth.

Writes generator9.jsonl next to this script. Standard library only and
deterministic (random.Random(20261207)). Every "secret" case holds exactly
one live-shaped credential; every "none" case holds only look-alikes.
"""
import base64
import binascii
import hashlib
import json
import os
import string
import uuid
import zlib
import random

R = random.Random(20261207)
ORIGIN = "make_blind_round6.py seed 20261207"
SOURCE = "generator-9"

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
DJANGO_CHARS = LO + DIG + "!@#$%^&*(-_=+)"

USED = set()


def uniq(v):
    assert v not in USED, v
    USED.add(v)
    return v


def rs(alpha, n):
    while True:
        v = "".join(R.choice(alpha) for _ in range(n))
        if alpha in (ALNUM, URLSAFE) and n >= 12:
            if not (any(c.isdigit() for c in v) and any(c.isupper() for c in v) and any(c.islower() for c in v)):
                continue
        if v not in USED:
            USED.add(v)
            return v


def hx(n):
    return rs(HEX, n)


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def b64(n):
    return uniq(base64.b64encode(rbytes(n)).decode())


def uid():
    return uniq(str(uuid.UUID(int=R.getrandbits(128), version=4)))


def digits(n):
    return str(R.randint(10 ** (n - 1), 10 ** n - 1))


def pick(seq):
    return R.choice(seq)


def b62(num, width):
    out = ""
    while num:
        num, r = divmod(num, 62)
        out = (DIG + UP + LO)[r] + out
    return out.rjust(width, "0")


# ---------------------------------------------------------------- credentials
def aws_pair():
    return "AKIA" + rs(UP + "234567", 16), rs(ALNUM + "+/", 40)


def ghp():
    body = rs(ALNUM, 30)
    return uniq("ghp_" + body + b62(zlib.crc32(body.encode()), 6))


def gh_fine():
    return "github_pat_" + rs(ALNUM, 22) + "_" + rs(ALNUM, 59)


def stripe_live():
    return "sk_live_" + pick(["51", "4e", ""]) + rs(ALNUM, pick([24, 32, 97]))


def stripe_restricted():
    return "rk_live_" + rs(ALNUM, pick([24, 34]))


def slack_bot():
    return "xoxb-%s-%s-%s" % (digits(12), digits(13), rs(ALNUM, 24))


def slack_hook():
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(UP + DIG, 10), rs(UP + DIG, 10), rs(ALNUM, 24))


def sendgrid():
    return "SG." + rs(URLSAFE, 22) + "." + rs(URLSAFE, 43)


def openai_key():
    return "sk-proj-" + rs(URLSAFE, 74) + "T3BlbkFJ" + rs(URLSAFE, 74)


def anthropic_key():
    return "sk-ant-api03-" + rs(URLSAFE, 93) + "AA"


def hf_token():
    return "hf_" + rs(UP + LO, 34)


def gitlab_pat():
    return "glpat-" + rs(URLSAFE, 20)


def pypi_token():
    return "pypi-AgEIcHlwaS5vcmcCJ" + rs(URLSAFE, 150)


def django_key():
    return rs(DJANGO_CHARS, 50)


def pw(n=None):
    return rs(ALNUM, n or R.randint(18, 28))


def azure_account_key():
    return b64(64)


def vault_token():
    return "hvs.CAESI" + rs(URLSAFE, 86)


def databricks():
    return "dapi" + hx(32)


def telegram():
    return "%d:AA%s" % (R.randint(10 ** 9, 7 * 10 ** 9), rs(URLSAFE, 33))


def mailgun():
    return "key-" + hx(32)


def fernet_key():
    return uniq(base64.urlsafe_b64encode(rbytes(32)).decode())


def linear_key():
    return "lin_api_" + rs(ALNUM, 40)


def google_api_key():
    return "AIza" + rs(URLSAFE, 35)


def gcp_oauth_secret():
    return "GOCSPX-" + rs(URLSAFE, 28)


def azure_ad_secret():
    return rs(ALNUM, 3) + pick(DIG) + "Q~" + rs(ALNUM + "~._-", 34)


def shopify():
    return "shpat_" + hx(32)


def pem_lines(der):
    s = base64.b64encode(der).decode()
    uniq(s)
    return "\n".join(s[i:i + 64] for i in range(0, len(s), 64))


def rsa_pem():
    der = bytes.fromhex("308204a40201000282010100") + rbytes(1192 - 12)
    return "-----BEGIN RSA PRIVATE KEY-----\n" + pem_lines(der) + "\n-----END RSA PRIVATE KEY-----\n"


def pkcs8_pem():
    head = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7308204a3020100028201010000")
    der = head + rbytes(1217 - len(head))
    return "-----BEGIN PRIVATE KEY-----\n" + pem_lines(der) + "\n-----END PRIVATE KEY-----\n"


def ec_pem():
    der = (bytes.fromhex("307702010104 20".replace(" ", "")) + rbytes(32)
           + bytes.fromhex("a00a06082a8648ce3d030107a144034200 04".replace(" ", "")) + rbytes(64))
    return "-----BEGIN EC PRIVATE KEY-----\n" + pem_lines(der) + "\n-----END EC PRIVATE KEY-----\n"


# ---------------------------------------------------------------- look-alikes
def sha256_hex():
    return hx(64)


def git_sha():
    return hx(40)


def pbkdf2_hash():
    return "pbkdf2_sha256$%d$%s$%s" % (pick([600000, 720000, 870000, 260000]), rs(ALNUM, 22), b64(32))


def argon2_hash():
    salt = base64.b64encode(rbytes(16)).decode().rstrip("=")
    h = base64.b64encode(rbytes(32)).decode().rstrip("=")
    return uniq("argon2$argon2id$v=19$m=102400,t=2,p=8$%s$%s" % (salt, h))


def ulid():
    return rs("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26)


CASES = []
CREDS = []  # (credential as written, case text): checked, never written out


def add(cls, label, ext, path, text, cred=None):
    if label == "secret":
        assert cred, (cls, path)
        assert cred in text, (cls, path)
        CREDS.append((cred, text))
    CASES.append({"source": SOURCE, "class": cls, "label": label, "ext": ext, "path": path,
                  "origin": ORIGIN, "text": text})


SVC = ["billing", "ledger", "orders", "catalog", "notify", "reports", "ingest", "auth", "search",
       "payouts", "inventory", "crm", "analytics", "shipping", "gateway", "accounts", "media"]
PROJ = ["acme_portal", "tidewater", "northwind", "glassbox", "pinecrest", "harborline", "quillstack",
        "redfern", "bluejay_api", "mossgate", "ferrous", "lanternhq", "orchard", "saltmarsh"]


# ================================================================ SECRET cases
def django_prod_secret_key():
    for i in range(3):
        p = pick(PROJ)
        key = django_key()
        q = pick(["'", '"'])
        host = "%s.%s" % (pick(["www", "app", "portal"]), pick(["example.org", "acme-corp.net", "tidewater.io"]))
        layouts = [
            f'''"""Production settings for {p}."""
from .base import *  # noqa: F401,F403

DEBUG = False
ALLOWED_HOSTS = ["{host}"]

SECRET_KEY = {q}{key}{q}

SECURE_SSL_REDIRECT = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = 31536000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True

DATABASES["default"]["HOST"] = os.environ["DB_HOST"]
DATABASES["default"]["PASSWORD"] = os.environ["DB_PASSWORD"]

LOGGING["root"]["level"] = "WARNING"
STATIC_ROOT = BASE_DIR / "staticfiles"
''',
            f'''import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent

# SECURITY WARNING: keep the secret key used in production secret!
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", {q}{key}{q})

DEBUG = os.environ.get("DJANGO_DEBUG", "0") == "1"
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "{host}").split(",")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "{p}.core",
]

ROOT_URLCONF = "{p}.urls"
WSGI_APPLICATION = "{p}.wsgi.application"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_TZ = True
''',
            f'''# settings/staging.py
from .common import *

DEBUG = False
SECRET_KEY = (
    {q}{key}{q}
)
ALLOWED_HOSTS = ["staging.{host.split('.', 1)[1]}"]
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = "smtp.{host.split('.', 1)[1]}"
EMAIL_PORT = 587
EMAIL_USE_TLS = True
CACHES = {{
    "default": {{
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": os.environ["REDIS_URL"],
        "KEY_PREFIX": "{p}-staging",
    }}
}}
''',
        ]
        path = [f"{p}/settings/production.py", f"{p}/settings/base.py", f"config/settings/staging.py"][i]
        add("django-settings-secret-key", "secret", "py", path, layouts[i], key)


def django_db_password():
    for i in range(2):
        p = pick(PROJ)
        password = pw()
        user = pick(["app_rw", "django", p[:6] + "_svc"])
        host = pick(["db.internal.%s.net" % p.replace("_", ""), "10.%d.%d.%d" % (R.randint(0, 255), R.randint(0, 255), R.randint(2, 250)),
                     "%s-prod.c%s.eu-west-1.rds.amazonaws.com" % (p.replace("_", "-"), rs(LO + DIG, 12))])
        if i == 0:
            text = f'''from .base import *

DEBUG = False

DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "{p}",
        "USER": "{user}",
        "PASSWORD": "{password}",
        "HOST": "{host}",
        "PORT": "5432",
        "CONN_MAX_AGE": 60,
        "OPTIONS": {{"sslmode": "require"}},
    }},
    "replica": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "{p}",
        "USER": "readonly",
        "PASSWORD": os.environ.get("REPLICA_DB_PASSWORD", ""),
        "HOST": os.environ.get("REPLICA_DB_HOST", "localhost"),
    }},
}}
DATABASE_ROUTERS = ["{p}.routers.PrimaryReplicaRouter"]
'''
            path = f"{p}/settings/prod.py"
        else:
            text = f'''import dj_database_url

from .base import *  # noqa

# Heroku-style URL kept here until the ops ticket lands (OPS-{R.randint(100, 999)})
DATABASES = {{
    "default": dj_database_url.parse(
        "postgres://{user}:{password}@{host}:5432/{p}",
        conn_max_age=600,
        ssl_require=True,
    )
}}

CELERY_TASK_ALWAYS_EAGER = False
SENTRY_ENVIRONMENT = "production"
'''
            path = f"src/{p}/settings/production.py"
        add("django-settings-database-password", "secret", "py", path, text, password)


def flask_config_class():
    for i in range(2):
        p = pick(PROJ)
        if i == 0:
            key = hx(pick([32, 48, 64]))
            text = f'''import os

basedir = os.path.abspath(os.path.dirname(__file__))


class Config:
    SQLALCHEMY_TRACK_MODIFICATIONS = False
    JSON_SORT_KEYS = False
    SESSION_COOKIE_NAME = "{p}_session"
    WTF_CSRF_TIME_LIMIT = None


class DevelopmentConfig(Config):
    DEBUG = True
    SECRET_KEY = "dev"
    SQLALCHEMY_DATABASE_URI = "sqlite:///" + os.path.join(basedir, "dev.db")


class ProductionConfig(Config):
    DEBUG = False
    SECRET_KEY = "{key}"
    SQLALCHEMY_DATABASE_URI = os.environ.get("DATABASE_URL")


config = {{
    "development": DevelopmentConfig,
    "production": ProductionConfig,
    "default": DevelopmentConfig,
}}
'''
            add("flask-config-class", "secret", "py", f"{p}/config.py", text, key)
        else:
            password = pw()
            host = "mysql-%s.internal" % pick(SVC)
            text = f'''from flask import Flask
from flask_sqlalchemy import SQLAlchemy

db = SQLAlchemy()


def create_app(test_config=None):
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(
        SQLALCHEMY_DATABASE_URI="mysql+pymysql://{pick(SVC)}:{password}@{host}:3306/{p}?charset=utf8mb4",
        SQLALCHEMY_ENGINE_OPTIONS={{"pool_pre_ping": True, "pool_recycle": 280}},
    )
    if test_config is not None:
        app.config.update(test_config)

    db.init_app(app)

    from . import views

    app.register_blueprint(views.bp)
    return app
'''
            add("flask-app-factory-db-uri", "secret", "py", f"{p}/__init__.py", text, password)


def fastapi_openai():
    for i in range(2):
        if i == 0:
            key = openai_key()
            text = f'''from fastapi import FastAPI, HTTPException
from openai import AsyncOpenAI
from pydantic import BaseModel

app = FastAPI(title="summarizer")
client = AsyncOpenAI(api_key="{key}")


class SummarizeIn(BaseModel):
    text: str
    max_words: int = 120


@app.post("/summarize")
async def summarize(body: SummarizeIn) -> dict:
    if not body.text.strip():
        raise HTTPException(status_code=422, detail="empty text")
    resp = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {{"role": "system", "content": f"Summarize in at most {{body.max_words}} words."}},
            {{"role": "user", "content": body.text}},
        ],
    )
    return {{"summary": resp.choices[0].message.content}}
'''
            add("fastapi-openai-client", "secret", "py", "app/main.py", text, key)
        else:
            key = anthropic_key()
            text = f'''"""Starlette endpoint proxying to Claude."""
from anthropic import Anthropic
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

_client = Anthropic(
    api_key="{key}",
    max_retries=3,
)


async def ask(request: Request) -> JSONResponse:
    payload = await request.json()
    msg = _client.messages.create(
        model="claude-3-5-sonnet-latest",
        max_tokens=512,
        messages=[{{"role": "user", "content": payload["question"]}}],
    )
    return JSONResponse({{"answer": msg.content[0].text}})


app = Starlette(routes=[Route("/ask", ask, methods=["POST"])])
'''
            add("starlette-anthropic-client", "secret", "py", "service/app.py", text, key)


def pydantic_settings_default():
    makers = [("stripe_api_key", stripe_live), ("sendgrid_api_key", sendgrid), ("slack_bot_token", slack_bot)]
    for field, mk in makers:
        key = mk()
        p = pick(PROJ)
        text = f'''from functools import lru_cache

from pydantic import AnyHttpUrl, Field, PostgresDsn, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_prefix="{p.upper()}_", extra="ignore")

    app_name: str = "{p}"
    debug: bool = False
    database_url: PostgresDsn = Field(default="postgresql://localhost/{p}")
    allowed_origins: list[AnyHttpUrl] = []
    jwt_algorithm: str = "HS256"
    access_token_expire_minutes: int = {pick([15, 30, 60])}
    {field}: SecretStr = SecretStr("{key}")
    request_timeout: float = 10.0


@lru_cache
def get_settings() -> Settings:
    return Settings()
'''
        add("pydantic-settings-default", "secret", "py", f"src/{p}/core/config.py", text, key)


def celery_broker():
    for i in range(2):
        password = pw()
        p = pick(PROJ)
        user = pick(["celery", "worker", p[:5]])
        if i == 0:
            text = f'''from celery.schedules import crontab

broker_url = "amqp://{user}:{password}@rabbitmq.{p.replace('_', '-')}.svc:5672/{p}"
result_backend = "redis://redis.{p.replace('_', '-')}.svc:6379/1"
task_serializer = "json"
result_serializer = "json"
accept_content = ["json"]
timezone = "Europe/Berlin"
enable_utc = True
task_acks_late = True
worker_prefetch_multiplier = 1

beat_schedule = {{
    "purge-expired-sessions": {{
        "task": "{p}.tasks.purge_sessions",
        "schedule": crontab(minute=0, hour="*/6"),
    }},
    "nightly-report": {{
        "task": "{p}.tasks.nightly_report",
        "schedule": crontab(minute=30, hour=2),
    }},
}}
'''
            add("celery-config-broker-url", "secret", "py", f"{p}/celeryconfig.py", text, password)
        else:
            text = f'''import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "{p}.settings")

app = Celery(
    "{p}",
    broker="sqs://",
    backend="rpc://",
)
app.conf.broker_transport_options = {{
    "region": "us-east-2",
    "visibility_timeout": 3600,
    "polling_interval": 1,
}}
app.conf.update(
    broker_url="amqps://{user}:{password}@b-{uid()}.mq.us-east-2.amazonaws.com:5671",
    task_default_queue="{p}-default",
)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
'''
            add("celery-app-amqps-url", "secret", "py", f"{p}/celery.py", text, password)


def rq_dramatiq_redis():
    for i in range(2):
        password = pw(32)
        host = "redis-%s.%s.cache.amazonaws.com" % (rs(LO + DIG, 6), pick(["use1", "euw1", "aps2"]))
        if i == 0:
            text = f'''from redis import Redis
from rq import Queue, Retry

redis_conn = Redis.from_url("rediss://default:{password}@{host}:6380/0")
high = Queue("high", connection=redis_conn, default_timeout=600)
low = Queue("low", connection=redis_conn)


def enqueue_thumbnail(image_id: int) -> str:
    job = low.enqueue("media.jobs.make_thumbnail", image_id, retry=Retry(max=3, interval=[10, 30, 60]))
    return job.id
'''
            add("rq-queue-redis-url", "secret", "py", "media/queues.py", text, password)
        else:
            text = f'''import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import AgeLimit, Retries, TimeLimit

broker = RedisBroker(
    host="{host}",
    port=6379,
    password="{password}",
    db=2,
)
broker.add_middleware(AgeLimit())
broker.add_middleware(TimeLimit(time_limit=5 * 60 * 1000))
broker.add_middleware(Retries(max_retries=5))
dramatiq.set_broker(broker)


@dramatiq.actor(queue_name="emails", max_retries=3)
def send_digest(user_id: int) -> None:
    from .mail import build_digest, deliver

    deliver(build_digest(user_id))
'''
            add("dramatiq-redis-broker", "secret", "py", "worker/broker.py", text, password)


def alembic_env_url():
    for i in range(2):
        password = pw()
        p = pick(PROJ)
        url = f"postgresql+psycopg2://{p[:6]}_owner:{password}@pg-{pick(SVC)}.internal:5432/{p}"
        if i == 0:
            text = f'''from logging.config import fileConfig

from alembic import context
from sqlalchemy import engine_from_config, pool

from {p}.models import Base

config = context.config
config.set_main_option("sqlalchemy.url", "{url}")

if config.config_file_name is not None:
    fileConfig(config.config_file_name)

target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True, dialect_opts={{"paramstyle": "named"}})
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = engine_from_config(config.get_section(config.config_ini_section, {{}}),
                                     prefix="sqlalchemy.", poolclass=pool.NullPool)
    with connectable.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
'''
            add("alembic-env-hardcoded-url", "secret", "py", "migrations/env.py", text, password)
        else:
            text = f'''# A generic, single database configuration.

[alembic]
script_location = alembic
prepend_sys_path = .
version_path_separator = os
sqlalchemy.url = {url}

[post_write_hooks]
hooks = ruff
ruff.type = exec
ruff.executable = %(here)s/.venv/bin/ruff
ruff.options = format REVISION_SCRIPT_FILENAME

[loggers]
keys = root,sqlalchemy,alembic

[handlers]
keys = console

[formatters]
keys = generic

[logger_root]
level = WARN
handlers = console

[logger_alembic]
level = INFO
handlers =
qualname = alembic
'''
            add("alembic-ini-sqlalchemy-url", "secret", "ini", "alembic.ini", text, password)


def airflow_connection():
    for i in range(2):
        if i == 0:
            password = pw()
            text = f'''from datetime import datetime, timedelta

from airflow import DAG
from airflow.models import Connection
from airflow.operators.python import PythonOperator
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.settings import Session

WAREHOUSE = Connection(
    conn_id="warehouse_rw",
    conn_type="postgres",
    host="warehouse.{pick(PROJ).replace('_', '')}.internal",
    schema="analytics",
    login="etl_loader",
    password="{password}",
    port=5432,
)


def _ensure_conn():
    session = Session()
    if not session.query(Connection).filter(Connection.conn_id == WAREHOUSE.conn_id).first():
        session.add(WAREHOUSE)
        session.commit()


def _load(**context):
    hook = PostgresHook(postgres_conn_id="warehouse_rw")
    hook.run("CALL analytics.refresh_daily(%s)", parameters=[context["ds"]])


with DAG(
    dag_id="warehouse_daily_refresh",
    start_date=datetime(2024, 1, 1),
    schedule="@daily",
    catchup=False,
    default_args={{"retries": 2, "retry_delay": timedelta(minutes=5)}},
) as dag:
    ensure = PythonOperator(task_id="ensure_conn", python_callable=_ensure_conn)
    load = PythonOperator(task_id="load", python_callable=_load)
    ensure >> load
'''
            add("airflow-dag-connection-object", "secret", "py", "dags/warehouse_daily_refresh.py", text, password)
        else:
            key = databricks()
            text = f'''AIRFLOW__CORE__EXECUTOR=CeleryExecutor
AIRFLOW__CORE__LOAD_EXAMPLES=False
AIRFLOW__WEBSERVER__EXPOSE_CONFIG=False
AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL=60
AIRFLOW_CONN_DATABRICKS_DEFAULT=databricks://:{key}@adb-{digits(16)}.{R.randint(1, 19)}.azuredatabricks.net
AIRFLOW_VAR_ENVIRONMENT=prod
AIRFLOW_UID=50000
_PIP_ADDITIONAL_REQUIREMENTS=apache-airflow-providers-databricks==6.9.0
'''
            add("airflow-env-conn-uri", "secret", "env", "deploy/airflow/.env", text, key)


def airflow_cfg_fernet():
    key = fernet_key()
    text = f'''[core]
dags_folder = /opt/airflow/dags
hostname_callable = airflow.utils.net.getfqdn
default_timezone = utc
executor = LocalExecutor
parallelism = 32
max_active_tasks_per_dag = 16
load_examples = False
fernet_key = {key}
donot_pickle = True
dagbag_import_timeout = 30.0

[database]
sql_alchemy_conn_cmd = cat /run/secrets/airflow_db_uri
sql_alchemy_pool_size = 5

[logging]
base_log_folder = /opt/airflow/logs
remote_logging = False
logging_level = INFO

[webserver]
base_url = http://localhost:8080
web_server_port = 8080
'''
    add("airflow-cfg-fernet-key", "secret", "cfg", "airflow/airflow.cfg", text, key)


def scrapy_settings():
    for i in range(2):
        p = pick(["pricewatch", "jobscraper", "realty_spider", "newsbot"])
        if i == 0:
            password = pw(16)
            user = "brd-customer-hl_%s-zone-%s" % (hx(8), pick(["datacenter", "residential"]))
            text = f'''BOT_NAME = "{p}"

SPIDER_MODULES = ["{p}.spiders"]
NEWSPIDER_MODULE = "{p}.spiders"

ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 8
DOWNLOAD_DELAY = 1.5
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0

DOWNLOADER_MIDDLEWARES = {{
    "scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware": 110,
    "{p}.middlewares.RotatingProxyMiddleware": 610,
}}
HTTP_PROXY = "http://{user}:{password}@brd.superproxy.io:22225"

ITEM_PIPELINES = {{
    "{p}.pipelines.DedupPipeline": 300,
    "{p}.pipelines.PostgresPipeline": 800,
}}
FEED_EXPORT_ENCODING = "utf-8"
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
'''
            add("scrapy-settings-proxy-auth", "secret", "py", f"{p}/settings.py", text, password)
        else:
            key = hx(32)
            text = f'''BOT_NAME = "{p}"
SPIDER_MODULES = ["{p}.spiders"]

# Zyte API
ADDONS = {{"scrapy_zyte_api.Addon": 500}}
ZYTE_API_KEY = "{key}"
ZYTE_API_TRANSPARENT_MODE = True

DEFAULT_REQUEST_HEADERS = {{
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en",
}}
HTTPCACHE_ENABLED = True
HTTPCACHE_EXPIRATION_SECS = 86400
HTTPCACHE_DIR = "httpcache"
LOG_LEVEL = "INFO"
'''
            add("scrapy-settings-api-key", "secret", "py", f"{p}/settings.py", text, key)


def nb(cells):
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                                     "language_info": {"name": "python", "version": "3.11.%d" % R.randint(4, 9)}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def code_cell(src, outputs=None, n=None):
    lines = src.split("\n")
    return {"cell_type": "code", "execution_count": n, "id": hx(8), "metadata": {},
            "outputs": outputs or [], "source": [l + "\n" for l in lines[:-1]] + [lines[-1]]}


def md_cell(src):
    lines = src.split("\n")
    return {"cell_type": "markdown", "id": hx(8), "metadata": {}, "source": [l + "\n" for l in lines[:-1]] + [lines[-1]]}


def stream(text):
    return {"name": "stdout", "output_type": "stream", "text": [l + "\n" for l in text.split("\n")]}


def notebook_secrets():
    key = hf_token()
    cells = [md_cell("# Fine-tune a sentiment classifier\n\nUses the `distilbert-base-uncased` checkpoint."),
             code_cell("from huggingface_hub import login\nfrom datasets import load_dataset\n\nlogin(token=\"%s\")" % key, n=1),
             code_cell("ds = load_dataset(\"imdb\")\nds", [{"data": {"text/plain": ["DatasetDict({\n", "    train: Dataset({\n", "        features: ['text', 'label'],\n", "        num_rows: 25000\n", "    })\n", "})"]}, "execution_count": 2, "metadata": {}, "output_type": "execute_result"}], n=2),
             code_cell("tokenized = ds.map(lambda b: tok(b[\"text\"], truncation=True), batched=True)", n=3)]
    add("jupyter-notebook-hf-login", "secret", "ipynb", "notebooks/finetune_sentiment.ipynb", nb(cells), key)

    a, s = aws_pair()
    cells = [md_cell("## Pull raw events from S3"),
             code_cell("import boto3\nimport pandas as pd\n\nsession = boto3.Session(\n    aws_access_key_id=\"%s\",\n    aws_secret_access_key=\"%s\",\n    region_name=\"eu-central-1\",\n)\ns3 = session.client(\"s3\")" % (a, s), n=4),
             code_cell("objs = s3.list_objects_v2(Bucket=\"raw-events-%s\", Prefix=\"2024/06/\")\nlen(objs[\"Contents\"])" % rs(LO + DIG, 6),
                       [{"data": {"text/plain": ["1000"]}, "execution_count": 5, "metadata": {}, "output_type": "execute_result"}], n=5)]
    add("jupyter-notebook-boto3-session", "secret", "ipynb", "analysis/events_exploration.ipynb", nb(cells), s)

    tok = databricks()
    cells = [code_cell("import os\nos.environ[\"DATABRICKS_HOST\"] = \"https://adb-%s.%d.azuredatabricks.net\"" % (digits(16), R.randint(1, 19)), n=1),
             code_cell("!databricks auth env", [stream("{\n  \"env\": {\n    \"DATABRICKS_AUTH_TYPE\": \"pat\",\n    \"DATABRICKS_TOKEN\": \"%s\"\n  }\n}" % tok)], n=2),
             md_cell("Token printed above came from the profile; rotate after the demo.")]
    add("jupyter-notebook-output-token", "secret", "ipynb", "notebooks/databricks_setup.ipynb", nb(cells), tok)


def vcr_cassette_auth():
    tok = ghp()
    repo = "%s/%s" % (pick(["acme", "tidewater-labs", "northwind-oss"]), pick(["widgets", "pipeline", "infra"]))
    etag = hx(64)
    text = f'''interactions:
- request:
    body: null
    headers:
      Accept:
      - application/vnd.github+json
      Authorization:
      - token {tok}
      User-Agent:
      - python-requests/2.32.3
      X-GitHub-Api-Version:
      - '2022-11-28'
    method: GET
    uri: https://api.github.com/repos/{repo}/pulls?state=open&per_page=50
  response:
    body:
      string: '[]'
    headers:
      Content-Type:
      - application/json; charset=utf-8
      ETag:
      - W/"{etag}"
      X-RateLimit-Remaining:
      - '4987'
      X-GitHub-Request-Id:
      - {rs(UP + DIG, 4)}:{rs(UP + DIG, 5)}:{rs(UP + DIG, 7)}:{rs(UP + DIG, 7)}:{rs(UP + DIG, 8)}
    status:
      code: 200
      message: OK
version: 1
'''
    add("vcr-cassette-auth-header", "secret", "yaml", "tests/cassettes/test_list_open_pulls.yaml", text, tok)

    key = stripe_restricted()
    text = f'''interactions:
- request:
    body: amount=2500&currency=eur&payment_method_types%5B%5D=card
    headers:
      Authorization:
      - Bearer {key}
      Content-Type:
      - application/x-www-form-urlencoded
      Idempotency-Key:
      - {uid()}
      Stripe-Version:
      - '2024-06-20'
    method: POST
    uri: https://api.stripe.com/v1/payment_intents
  response:
    body:
      string: '{{"id": "pi_{rs(ALNUM, 24)}", "object": "payment_intent", "amount": 2500, "status": "requires_payment_method"}}'
    headers:
      Request-Id:
      - req_{rs(ALNUM, 14)}
    status:
      code: 200
      message: OK
version: 1
'''
    add("vcr-cassette-auth-header", "secret", "yaml", "tests/fixtures/vcr/test_create_intent.yaml", text, key)


def requirements_private_index():
    for i in range(2):
        tok = pw(pick([24, 32]))
        pkgs = [("django", "5.0.7"), ("psycopg", "3.2.1"), ("celery", "5.4.0"), ("redis", "5.0.7"), ("sentry-sdk", "2.10.0")]
        if i == 0:
            head = f"--index-url https://ci-reader:{tok}@nexus.{pick(PROJ).replace('_', '')}.com/repository/pypi-group/simple\n"
            path = "requirements/prod.txt"
        else:
            head = f"--extra-index-url https://deploy-bot:{tok}@pkgs.{pick(PROJ).replace('_', '')}.dev/simple/\n--trusted-host pkgs.internal\n"
            path = "requirements.txt"
        body = "".join(f"{n}=={v} \\\n    --hash=sha256:{sha256_hex()}\n" for n, v in pkgs)
        add("requirements-private-index-credentials", "secret", "txt", path, head + "\n" + body + f"{pick(PROJ).replace('_', '-')}-common==1.{R.randint(0, 20)}.{R.randint(0, 9)}\n", tok)


def pip_conf_creds():
    tok = pw(28)
    text = f'''[global]
timeout = 60
index-url = https://builder:{tok}@artifacts.{pick(PROJ).replace('_', '')}.io/api/pypi/pypi-virtual/simple
extra-index-url = https://pypi.org/simple
disable-pip-version-check = true

[install]
trusted-host = artifacts.internal
'''
    add("pip-conf-index-credentials", "secret", "conf", "docker/pip.conf", text, tok)


def pypirc_token():
    tok = pypi_token()
    text = f'''[distutils]
index-servers =
    pypi
    testpypi

[pypi]
username = __token__
password = {tok}

[testpypi]
repository = https://test.pypi.org/legacy/
username = __token__
'''
    add("pypirc-upload-token", "secret", "pypirc", ".pypirc", text, tok)
    pwd = pw(20)
    text = f'''[distutils]
index-servers = internal

[internal]
repository = https://devpi.{pick(PROJ).replace('_', '')}.net/release/prod/
username = release-bot
password = {pwd}
'''
    add("pypirc-private-repo-password", "secret", "pypirc", "ci/.pypirc", text, pwd)


def dotenv_prod():
    makers = [("STRIPE_SECRET_KEY", stripe_live), ("TWILIO_AUTH_TOKEN", lambda: hx(32)), ("GITLAB_TOKEN", gitlab_pat)]
    for name, mk in makers:
        v = mk()
        extra = ""
        if name == "TWILIO_AUTH_TOKEN":
            extra = "TWILIO_ACCOUNT_SID=AC%s\nTWILIO_FROM_NUMBER=+1%s\n" % (hx(32), digits(10))
        p = pick(PROJ)
        text = f'''# production env - loaded by systemd EnvironmentFile
DJANGO_SETTINGS_MODULE={p}.settings.production
DJANGO_ALLOWED_HOSTS={p.replace('_', '')}.com,www.{p.replace('_', '')}.com
DATABASE_URL=postgres://{p}@/var/run/postgresql/{p}
REDIS_URL=redis://127.0.0.1:6379/0
LOG_LEVEL=info
WEB_CONCURRENCY=4
{extra}{name}={v}
FEATURE_NEW_CHECKOUT=true
CACHE_KEY_PREFIX={p}:v{R.randint(2, 9)}
'''
        add("dotenv-production", "secret", "env", pick([".env", ".env.production", "deploy/.env.prod"]), text, v)


def gcp_service_account():
    key = pkcs8_pem()
    proj = "%s-%d" % (pick(["analytics", "ml-platform", "ingest"]), R.randint(100000, 999999))
    sa = "%s@%s.iam.gserviceaccount.com" % (pick(["bq-loader", "etl-runner", "vertex-ci"]), proj)
    doc = {"type": "service_account", "project_id": proj, "private_key_id": hx(40), "private_key": key,
           "client_email": sa, "client_id": digits(21), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
           "token_uri": "https://oauth2.googleapis.com/token",
           "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
           "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/" + sa.replace("@", "%40"),
           "universe_domain": "googleapis.com"}
    text = json.dumps(doc, indent=2) + "\n"
    add("gcp-service-account-json", "secret", "json", "credentials/bq-loader.json", text, json.dumps(key)[1:60])


def boto3_hardcoded():
    for i in range(3):
        a, s = aws_pair()
        bucket = "%s-%s-%s" % (pick(PROJ).replace("_", "-"), pick(["uploads", "exports", "backups"]), rs(LO + DIG, 5))
        if i == 0:
            text = f'''import boto3
from botocore.config import Config

_cfg = Config(region_name="eu-west-1", retries={{"max_attempts": 10, "mode": "standard"}})

s3 = boto3.client(
    "s3",
    aws_access_key_id="{a}",
    aws_secret_access_key="{s}",
    config=_cfg,
)

BUCKET = "{bucket}"


def upload_report(path: str, key: str) -> str:
    s3.upload_file(path, BUCKET, key, ExtraArgs={{"ServerSideEncryption": "aws:kms"}})
    return f"s3://{{BUCKET}}/{{key}}"
'''
            add("boto3-client-static-keys", "secret", "py", "reports/storage.py", text, s)
        elif i == 1:
            text = f'''"""One-off backfill; run from a bastion."""
import os

import boto3

os.environ["AWS_ACCESS_KEY_ID"] = "{a}"
os.environ["AWS_SECRET_ACCESS_KEY"] = "{s}"
os.environ.setdefault("AWS_DEFAULT_REGION", "us-west-2")

ddb = boto3.resource("dynamodb")
table = ddb.Table("{pick(SVC)}-events")

with table.batch_writer() as batch:
    for n in range(1000):
        batch.put_item(Item={{"pk": f"EVT#{{n:06d}}", "sk": "META", "status": "migrated"}})
'''
            add("boto3-environ-assignment", "secret", "py", "scripts/backfill_events.py", text, s)
        else:
            text = f'''[default]
region = us-east-1
output = json

[{pick(SVC)}-deployer]
aws_access_key_id = {a}
aws_secret_access_key = {s}
region = eu-north-1
'''
            add("aws-credentials-file", "secret", "ini", "deploy/aws/credentials", text, s)


def azure_storage():
    for i in range(2):
        key = azure_account_key()
        acct = pick(["stmedia", "stlogs", "stexports"]) + rs(LO + DIG, 8)
        conn = f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net"
        if i == 0:
            text = f'''from azure.storage.blob import BlobServiceClient, ContentSettings

CONNECTION_STRING = (
    "{conn}"
)
CONTAINER = "thumbnails"

_service = BlobServiceClient.from_connection_string(CONNECTION_STRING)


def put_thumbnail(name: str, data: bytes) -> str:
    blob = _service.get_blob_client(container=CONTAINER, blob=name)
    blob.upload_blob(data, overwrite=True, content_settings=ContentSettings(content_type="image/webp"))
    return blob.url
'''
            add("azure-blob-connection-string", "secret", "py", "media/azure_store.py", text, key)
        else:
            text = f'''{{
  "IsEncrypted": false,
  "Values": {{
    "AzureWebJobsStorage": "{conn}",
    "FUNCTIONS_WORKER_RUNTIME": "python",
    "QUEUE_NAME": "ingest-requests",
    "APPINSIGHTS_ROLE": "ingest-fn"
  }}
}}
'''
            add("azure-functions-local-settings", "secret", "json", "ingest_fn/local.settings.json", text, key)


def requests_session_auth():
    tok = gh_fine()
    text = f'''import requests

API = "https://api.github.com"

session = requests.Session()
session.headers.update(
    {{
        "Authorization": "Bearer {tok}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    }}
)


def open_issue(repo: str, title: str, body: str) -> int:
    r = session.post(f"{{API}}/repos/{{repo}}/issues", json={{"title": title, "body": body}}, timeout=15)
    r.raise_for_status()
    return r.json()["number"]
'''
    add("requests-session-bearer", "secret", "py", "tools/triage/github_api.py", text, tok)

    tok = gitlab_pat()
    text = f'''import httpx

GITLAB_URL = "https://gitlab.{pick(PROJ).replace('_', '')}.com/api/v4"


async def pipeline_status(project_id: int, ref: str = "main") -> str:
    async with httpx.AsyncClient(headers={{"PRIVATE-TOKEN": "{tok}"}}, timeout=10.0) as client:
        resp = await client.get(f"{{GITLAB_URL}}/projects/{{project_id}}/pipelines", params={{"ref": ref, "per_page": 1}})
        resp.raise_for_status()
        pipelines = resp.json()
        return pipelines[0]["status"] if pipelines else "none"
'''
    add("httpx-client-private-token", "secret", "py", "ops/gitlab_status.py", text, tok)

    tok = linear_key()
    text = f'''from __future__ import annotations

import requests

LINEAR_GRAPHQL = "https://api.linear.app/graphql"
HEADERS = {{"Authorization": "{tok}", "Content-Type": "application/json"}}

QUERY = """
query Issues($team: String!) {{
  issues(filter: {{ team: {{ key: {{ eq: $team }} }} }}, first: 50) {{
    nodes {{ identifier title state {{ name }} }}
  }}
}}
"""


def team_issues(team: str) -> list[dict]:
    r = requests.post(LINEAR_GRAPHQL, json={{"query": QUERY, "variables": {{"team": team}}}}, headers=HEADERS, timeout=20)
    r.raise_for_status()
    return r.json()["data"]["issues"]["nodes"]
'''
    add("requests-headers-dict-key", "secret", "py", "scripts/linear_export.py", text, tok)


def slack_webhook_logging():
    hook = slack_hook()
    text = f'''import logging
import logging.config

LOGGING = {{
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {{
        "plain": {{"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    }},
    "handlers": {{
        "console": {{"class": "logging.StreamHandler", "formatter": "plain"}},
        "slack": {{
            "class": "{pick(PROJ)}.log_handlers.SlackWebhookHandler",
            "level": "ERROR",
            "webhook_url": "{hook}",
        }},
    }},
    "root": {{"handlers": ["console", "slack"], "level": "INFO"}},
}}

logging.config.dictConfig(LOGGING)
'''
    add("logging-config-slack-webhook", "secret", "py", "app/logging_setup.py", text, hook)
    tok = slack_bot()
    text = f'''from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

client = WebClient(token="{tok}")
CHANNEL = "#deploys"


def announce(version: str, sha: str) -> None:
    try:
        client.chat_postMessage(channel=CHANNEL, text=f":rocket: deployed {{version}} ({{sha[:8]}})")
    except SlackApiError as exc:
        print("slack error:", exc.response["error"])
'''
    add("slack-sdk-bot-token", "secret", "py", "deploy/notify.py", text, tok)


def sentry_legacy():
    pub, sec = hx(32), hx(32)
    dsn = f"https://{pub}:{sec}@sentry.{pick(PROJ).replace('_', '')}.net/{R.randint(2, 90)}"
    text = f'''import sentry_sdk
from sentry_sdk.integrations.django import DjangoIntegration

sentry_sdk.init(
    dsn="{dsn}",
    integrations=[DjangoIntegration()],
    traces_sample_rate=0.05,
    send_default_pii=False,
    environment="production",
    release="{pick(PROJ)}@{R.randint(1, 4)}.{R.randint(0, 30)}.{R.randint(0, 9)}",
)
'''
    add("sentry-legacy-dsn-with-secret", "secret", "py", "config/sentry.py", text, sec)


def twilio_clients():
    sid, tok = "AC" + hx(32), hx(32)
    text = f'''from twilio.rest import Client

ACCOUNT_SID = "{sid}"
AUTH_TOKEN = "{tok}"

client = Client(ACCOUNT_SID, AUTH_TOKEN)


def send_otp(phone: str, code: str) -> str:
    msg = client.messages.create(to=phone, from_="+1{digits(10)}", body=f"Your code is {{code}}")
    return msg.sid
'''
    add("twilio-client-auth-token", "secret", "py", "accounts/sms.py", text, tok)
    ksid, ksec = "SK" + hx(32), rs(ALNUM, 32)
    text = f'''from twilio.jwt.access_token import AccessToken
from twilio.jwt.access_token.grants import VideoGrant

TWILIO_ACCOUNT_SID = "AC{hx(32)}"
TWILIO_API_KEY_SID = "{ksid}"
TWILIO_API_KEY_SECRET = "{ksec}"


def video_token(identity: str, room: str) -> str:
    token = AccessToken(TWILIO_ACCOUNT_SID, TWILIO_API_KEY_SID, TWILIO_API_KEY_SECRET, identity=identity, ttl=3600)
    token.add_grant(VideoGrant(room=room))
    return token.to_jwt()
'''
    add("twilio-api-key-secret", "secret", "py", "video/tokens.py", text, ksec)


def sendgrid_mail():
    key = sendgrid()
    text = f'''from django.core.mail.backends.base import BaseEmailBackend
from sendgrid import SendGridAPIClient
from sendgrid.helpers.mail import Mail

SENDGRID_KEY = "{key}"


class SendGridBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        sg = SendGridAPIClient(SENDGRID_KEY)
        sent = 0
        for m in email_messages:
            mail = Mail(from_email=m.from_email, to_emails=m.to, subject=m.subject, plain_text_content=m.body)
            if sg.send(mail).status_code < 300:
                sent += 1
        return sent
'''
    add("django-email-backend-sendgrid", "secret", "py", "core/email_backends.py", text, key)


def obscured_base64():
    k = stripe_live()
    enc = base64.b64encode(k.encode()).decode()
    text = f'''import base64

import stripe

# not plaintext so the linter stays quiet
_K = "{enc}"
stripe.api_key = base64.b64decode(_K).decode()


def refund(charge_id: str, amount: int | None = None):
    return stripe.Refund.create(charge=charge_id, amount=amount)
'''
    add("obscured-base64-literal", "secret", "py", "payments/refunds.py", text, enc)
    k = openai_key()
    enc = base64.b64encode(k.encode()).decode()
    text = f'''from base64 import b64decode as _d
from openai import OpenAI

client = OpenAI(api_key=_d(b"{enc}").decode("ascii"))


def embed(texts: list[str]) -> list[list[float]]:
    out = client.embeddings.create(model="text-embedding-3-small", input=texts)
    return [d.embedding for d in out.data]
'''
    add("obscured-base64-bytes", "secret", "py", "search/embeddings.py", text, enc)
    u, pwd = pick(["svc_reporting", "etl"]), pw()
    enc = base64.b64encode(f"{u}:{pwd}".encode()).decode()
    text = f'''import requests

JIRA = "https://jira.{pick(PROJ).replace('_', '')}.com/rest/api/2"
HEADERS = {{
    "Authorization": "Basic {enc}",
    "Accept": "application/json",
}}


def search(jql: str) -> list[dict]:
    r = requests.get(f"{{JIRA}}/search", params={{"jql": jql, "maxResults": 100}}, headers=HEADERS, timeout=30)
    r.raise_for_status()
    return r.json()["issues"]
'''
    add("basic-auth-header-base64", "secret", "py", "reporting/jira_client.py", text, enc)


def obscured_split():
    k = sendgrid()
    cut = [0, 9, 25, 47, len(k)]
    parts = [k[cut[j]:cut[j + 1]] for j in range(4)]
    text = f'''import os

# split so secret scanners do not trip on it
SENDGRID_API_KEY = os.getenv(
    "SENDGRID_API_KEY",
    "{parts[0]}"
    "{parts[1]}"
    "{parts[2]}"
    "{parts[3]}",
)
DEFAULT_FROM = "noreply@{pick(PROJ).replace('_', '')}.com"
'''
    add("obscured-implicit-concatenation", "secret", "py", "notifications/settings.py", text, parts[2])
    k = ghp()
    text = f'''from github import Auth, Github

_PREFIX = "ghp_"
_BODY = "{k[4:]}"


def client() -> Github:
    return Github(auth=Auth.Token(_PREFIX + _BODY), per_page=100)
'''
    add("obscured-prefix-join", "secret", "py", "release/gh.py", text, k[4:])


def obscured_hex():
    k = anthropic_key()
    h = k.encode().hex()
    text = f'''import anthropic

_ENC = bytes.fromhex(
    "{h}"
)

client = anthropic.Anthropic(api_key=_ENC.decode())
'''
    add("obscured-hex-bytes", "secret", "py", "llm/client.py", text, h[40:90])
    k = hf_token()
    esc = "".join("\\x%02x" % c for c in k.encode())
    text = f'''from huggingface_hub import HfApi

TOKEN = b"{esc}".decode()
api = HfApi(token=TOKEN)


def push(folder: str, repo_id: str) -> None:
    api.upload_folder(folder_path=folder, repo_id=repo_id, repo_type="model", commit_message="sync weights")
'''
    add("obscured-escaped-bytes", "secret", "py", "training/push_to_hub.py", text, esc)


def dataclass_default():
    k = mailgun()
    dom = "mg.%s.com" % pick(PROJ).replace("_", "")
    text = f'''from dataclasses import dataclass, field


@dataclass(frozen=True)
class MailgunConfig:
    domain: str = "{dom}"
    api_key: str = "{k}"
    base_url: str = "https://api.eu.mailgun.net/v3"
    tags: tuple[str, ...] = field(default_factory=lambda: ("transactional",))
    timeout: float = 8.0
'''
    add("dataclass-default-api-key", "secret", "py", "mailer/config.py", text, k)
    k = shopify()
    text = f'''from dataclasses import dataclass


@dataclass
class ShopifyStore:
    shop: str = "{pick(PROJ).replace('_', '-')}.myshopify.com"
    api_version: str = "2024-07"
    access_token: str = "{k}"

    @property
    def graphql_url(self) -> str:
        return f"https://{{self.shop}}/admin/api/{{self.api_version}}/graphql.json"
'''
    add("dataclass-default-api-key", "secret", "py", "shop/store.py", text, k)


def constants_module():
    k = telegram()
    text = f'''"""Bot constants."""
from enum import Enum

BOT_TOKEN = "{k}"
API_ROOT = f"https://api.telegram.org/bot{{BOT_TOKEN}}"
ADMIN_CHAT_IDS = ({digits(9)}, {digits(10)})


class Command(str, Enum):
    START = "/start"
    HELP = "/help"
    STATUS = "/status"
'''
    add("telegram-bot-token-fstring", "secret", "py", "bot/constants.py", text, k)
    k = google_api_key()
    text = f'''import googlemaps

MAPS_API_KEY = "{k}"
gmaps = googlemaps.Client(key=MAPS_API_KEY)


def geocode(address: str) -> tuple[float, float] | None:
    res = gmaps.geocode(address)
    if not res:
        return None
    loc = res[0]["geometry"]["location"]
    return loc["lat"], loc["lng"]
'''
    add("google-maps-api-key", "secret", "py", "geo/lookup.py", text, k)


def enum_member_secret():
    k = stripe_live()
    text = f'''from enum import Enum


class PaymentSecrets(Enum):
    """Per-region processor credentials (TODO move to vault)."""

    EU = "{k}"
    US = ""


REGION_KEY = {{"eu-west-1": PaymentSecrets.EU, "us-east-1": PaymentSecrets.US}}
'''
    add("enum-member-secret", "secret", "py", "payments/regions.py", text, k)


def dict_literal_config():
    k = vault_token()
    text = f'''VAULT = {{
    "url": "https://vault.{pick(PROJ).replace('_', '')}.internal:8200",
    "token": "{k}",
    "mount_point": "kv",
    "verify": "/etc/ssl/certs/internal-ca.pem",
}}


def read_secret(path: str) -> dict:
    import hvac

    client = hvac.Client(url=VAULT["url"], token=VAULT["token"], verify=VAULT["verify"])
    return client.secrets.kv.v2.read_secret_version(path=path, mount_point=VAULT["mount_point"])["data"]["data"]
'''
    add("vault-token-dict-literal", "secret", "py", "settings/vault.py", text, k)
    pwd = pw()
    cluster = "cluster0.%s.mongodb.net" % rs(LO + DIG, 5)
    text = f'''SERVICES = {{
    "mongo": {{
        "uri": "mongodb+srv://{pick(SVC)}-app:{pwd}@{cluster}/?retryWrites=true&w=majority",
        "db": "{pick(PROJ)}",
    }},
    "search": {{"hosts": ["http://es-0:9200", "http://es-1:9200"], "index_prefix": "prod-"}},
    "cache": {{"backend": "redis", "ttl": 300}},
}}
'''
    add("mongodb-srv-uri-dict", "secret", "py", "config/services.py", text, pwd)


def pem_in_repo():
    pem = rsa_pem()
    text = f'''"""Deploy key used by the release job to push tags."""
import paramiko
from io import StringIO

DEPLOY_KEY = """{pem}"""


def ssh_client(host: str) -> paramiko.SSHClient:
    key = paramiko.RSAKey.from_private_key(StringIO(DEPLOY_KEY))
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.RejectPolicy())
    c.connect(host, username="deploy", pkey=key)
    return c
'''
    add("private-key-in-python-string", "secret", "py", "release/ssh.py", text, pem.split("\n")[3])
    pem = ec_pem()
    add("ec-private-key-file", "secret", "pem", "certs/apns_signing.pem", pem, pem.split("\n")[1])
    pem = pkcs8_pem()
    text = f'''import jwt

PRIVATE_KEY = """{pem}"""
ISSUER = "https://auth.{pick(PROJ).replace('_', '')}.com"


def issue(sub: str, ttl: int = 900) -> str:
    import time

    now = int(time.time())
    return jwt.encode({{"iss": ISSUER, "sub": sub, "iat": now, "exp": now + ttl}}, PRIVATE_KEY, algorithm="RS256")
'''
    add("jwt-signing-private-key", "secret", "py", "auth/tokens.py", text, pem.split("\n")[5])


def tox_nox_secret():
    tok = pypi_token()
    text = f'''[tox]
env_list = py310, py311, py312, lint
isolated_build = true

[testenv]
deps = -r requirements/test.txt
commands = pytest -q {{posargs}}

[testenv:lint]
deps = ruff
commands = ruff check src tests

[testenv:release]
skip_install = true
deps =
    build
    twine
setenv =
    TWINE_USERNAME = __token__
    TWINE_PASSWORD = {tok}
commands =
    python -m build
    twine upload dist/*
'''
    add("tox-ini-setenv-token", "secret", "ini", "tox.ini", text, tok)
    k = hf_token()
    text = f'''import nox

nox.options.sessions = ["tests", "lint"]
PY = ["3.10", "3.11", "3.12"]


@nox.session(python=PY)
def tests(session):
    session.install("-e", ".[test]")
    session.run("pytest", "-q", *session.posargs)


@nox.session
def lint(session):
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def publish_model(session):
    session.install("huggingface_hub")
    session.run(
        "huggingface-cli", "upload", "org/reranker-small", "artifacts/",
        env={{"HF_TOKEN": "{k}"}},
    )
'''
    add("noxfile-session-env-token", "secret", "py", "noxfile.py", text, k)


def docstring_real_key():
    k = anthropic_key()
    text = f'''def classify(text: str, *, api_key: str | None = None) -> str:
    """Classify a support ticket.

    Example::

        >>> classify("my invoice is wrong", api_key="{k}")
        'billing'

    The key above is the team sandbox key.
    """
    import anthropic

    client = anthropic.Anthropic(api_key=api_key)
    msg = client.messages.create(model="claude-3-haiku-20240307", max_tokens=5,
                                 messages=[{{"role": "user", "content": text}}])
    return msg.content[0].text.strip().lower()
'''
    add("docstring-example-real-key", "secret", "py", "support/classify.py", text, k)


def client_secrets_json():
    sec = gcp_oauth_secret()
    cid = "%s-%s.apps.googleusercontent.com" % (digits(12), rs(LO + DIG, 32))
    doc = {"web": {"client_id": cid, "project_id": "%s-%d" % (pick(PROJ).replace("_", "-"), R.randint(1000, 9999)),
                   "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
                   "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
                   "client_secret": sec, "redirect_uris": ["http://localhost:8000/oauth2callback"]}}
    add("google-oauth-client-secrets-json", "secret", "json", "client_secret.json", json.dumps(doc) + "\n", sec)


def msal_app():
    sec = azure_ad_secret()
    text = f'''import msal

TENANT_ID = "{uid()}"
CLIENT_ID = "{uid()}"
CLIENT_SECRET = "{sec}"
AUTHORITY = f"https://login.microsoftonline.com/{{TENANT_ID}}"
SCOPE = ["https://graph.microsoft.com/.default"]

app = msal.ConfidentialClientApplication(CLIENT_ID, authority=AUTHORITY, client_credential=CLIENT_SECRET)


def graph_token() -> str:
    result = app.acquire_token_for_client(scopes=SCOPE)
    if "access_token" not in result:
        raise RuntimeError(result.get("error_description"))
    return result["access_token"]
'''
    add("msal-confidential-client-secret", "secret", "py", "integrations/graph_auth.py", text, sec)


def conftest_real_key():
    k = stripe_live()
    text = f'''import os

import pytest
import stripe


@pytest.fixture(scope="session", autouse=True)
def stripe_key():
    # integration tests hit the real account; CI overrides via env
    stripe.api_key = os.environ.get("STRIPE_KEY") or "{k}"
    yield stripe.api_key


@pytest.fixture
def customer(stripe_key):
    c = stripe.Customer.create(email="it@example.com")
    yield c
    stripe.Customer.delete(c.id)
'''
    add("conftest-live-key-fallback", "secret", "py", "tests/integration/conftest.py", text, k)


def django_fixture_socialapp():
    sec = gcp_oauth_secret()
    text = f'''- model: sites.site
  pk: 1
  fields:
    domain: {pick(PROJ).replace('_', '')}.com
    name: {pick(PROJ)}
- model: socialaccount.socialapp
  pk: 1
  fields:
    provider: google
    name: Google
    client_id: {digits(12)}-{rs(LO + DIG, 32)}.apps.googleusercontent.com
    secret: {sec}
    key: ''
    sites:
    - 1
'''
    add("django-fixture-socialapp-secret", "secret", "yaml", "core/fixtures/socialapps.yaml", text, sec)


def rst_doc_real_key():
    k = openai_key()
    text = f'''Quickstart
==========

Install the package and export your key:

.. code-block:: console

   $ pip install ticket-triage
   $ export OPENAI_API_KEY={k}
   $ triage --since 2024-05-01 tickets.csv

The command writes ``labels.csv`` next to the input file.

.. note::

   The classifier is cached in ``~/.cache/triage``; delete it to force a refresh.
'''
    add("rst-doc-exported-key", "secret", "rst", "docs/quickstart.rst", text, k)


def setup_cfg_secret():
    tok = pw(32)
    text = f'''[metadata]
name = {pick(PROJ)}-sdk
version = attr: {pick(PROJ)}.__version__
description = Internal SDK
long_description = file: README.md
long_description_content_type = text/markdown

[options]
packages = find:
python_requires = >=3.9
install_requires =
    requests>=2.31
    attrs>=23.1

[easy_install]
index_url = https://uploader:{tok}@pypi.{pick(PROJ).replace('_', '')}.io/simple/

[flake8]
max-line-length = 100
extend-ignore = E203
'''
    add("setup-cfg-index-credentials", "secret", "cfg", "setup.cfg", text, tok)


def settings_vault_fallback():
    k = datadog = hx(32)
    text = f'''import os

import boto3

_ssm = boto3.client("ssm", region_name=os.environ.get("AWS_REGION", "eu-west-1"))


def _param(name: str, default: str | None = None) -> str | None:
    try:
        return _ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]
    except _ssm.exceptions.ParameterNotFound:
        return default


DD_API_KEY = _param("/observability/datadog/api_key", default="{k}")
DD_SITE = "datadoghq.eu"
DD_SERVICE = "{pick(SVC)}"
'''
    add("ssm-lookup-hardcoded-fallback", "secret", "py", "app/observability.py", text, k)


def more_secrets():
    pwd = pw(16)
    p = pick(PROJ)
    text = f'''from .base import *  # noqa

EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = "email-smtp.eu-west-1.amazonaws.com"
EMAIL_PORT = 587
EMAIL_USE_TLS = True
EMAIL_HOST_USER = "{p}-mailer@{p.replace('_', '')}.com"
EMAIL_HOST_PASSWORD = "{pwd}"
DEFAULT_FROM_EMAIL = "{p.title()} <noreply@{p.replace('_', '')}.com>"
SERVER_EMAIL = "alerts@{p.replace('_', '')}.com"
ADMINS = [("Ops", "ops@{p.replace('_', '')}.com")]
'''
    add("django-email-host-password", "secret", "py", f"{p}/settings/email.py", text, pwd)

    key = hx(64)
    text = f'''from datetime import datetime, timedelta, timezone

import jwt
from fastapi import Depends, HTTPException, status
from fastapi.security import OAuth2PasswordBearer

# to get a string like this run:
# openssl rand -hex 32
SECRET_KEY = "{key}"
ALGORITHM = "HS256"
ACCESS_TOKEN_EXPIRE_MINUTES = 30

oauth2_scheme = OAuth2PasswordBearer(tokenUrl="token")


def create_access_token(data: dict, expires_delta: timedelta | None = None) -> str:
    to_encode = data.copy()
    expire = datetime.now(timezone.utc) + (expires_delta or timedelta(minutes=15))
    to_encode.update({{"exp": expire}})
    return jwt.encode(to_encode, SECRET_KEY, algorithm=ALGORITHM)


async def current_user(token: str = Depends(oauth2_scheme)) -> str:
    try:
        payload = jwt.decode(token, SECRET_KEY, algorithms=[ALGORITHM])
    except jwt.PyJWTError:
        raise HTTPException(status_code=status.HTTP_401_UNAUTHORIZED, detail="Could not validate credentials")
    return payload["sub"]
'''
    add("fastapi-jwt-secret-key", "secret", "py", "app/security.py", text, key)

    tok = pw(30)
    text = f'''[tool.poetry]
name = "{p.replace('_', '-')}"
version = "0.{R.randint(1, 30)}.{R.randint(0, 9)}"
description = ""
authors = ["Platform Team <platform@{p.replace('_', '')}.com>"]
packages = [{{ include = "{p}", from = "src" }}]

[tool.poetry.dependencies]
python = "^3.11"
fastapi = "^0.111"
{p.replace('_', '-')}-common = {{ version = "^2.3", source = "internal" }}

[[tool.poetry.source]]
name = "internal"
url = "https://poetry:{tok}@pypi.{p.replace('_', '')}.cloud/simple/"
priority = "supplemental"

[build-system]
requires = ["poetry-core"]
build-backend = "poetry.core.masonry.api"
'''
    add("pyproject-poetry-source-credentials", "secret", "toml", "pyproject.toml", text, tok)

    tok = pw(26)
    text = f'''[[source]]
url = "https://pypi.org/simple"
verify_ssl = true
name = "pypi"

[[source]]
url = "https://jenkins:{tok}@repo.{pick(PROJ).replace('_', '')}.local/api/pypi/python/simple"
verify_ssl = true
name = "corp"

[packages]
flask = "==3.0.3"
gunicorn = "*"
corp-auth = {{version = "==4.1.0", index = "corp"}}

[dev-packages]
pytest = "*"

[requires]
python_version = "3.12"
'''
    add("pipfile-source-credentials", "secret", "toml", "Pipfile", text, tok)

    tok = pw(24)
    text = f'''[project]
name = "ingest-worker"
version = "1.4.2"
requires-python = ">=3.11"
dependencies = ["httpx>=0.27", "orjson>=3.10", "corp-schemas>=7"]

[[tool.uv.index]]
name = "corp"
url = "https://oauth2accesstoken:{tok}@{pick(['europe', 'us'])}-python.pkg.dev/{pick(PROJ).replace('_', '-')}/py-internal/simple/"

[tool.uv.sources]
corp-schemas = {{ index = "corp" }}

[tool.ruff]
line-length = 110
'''
    add("pyproject-uv-index-credentials", "secret", "toml", "pyproject.toml", text, tok)

    k = openai_key()
    cells = [code_cell("%pip install -q openai tiktoken", n=1),
             code_cell("import os\nos.environ[\"OPENAI_API_KEY\"] = \"%s\"\nfrom openai import OpenAI\nclient = OpenAI()" % k, n=2),
             code_cell("r = client.chat.completions.create(model=\"gpt-4o-mini\", messages=[{\"role\": \"user\", \"content\": \"ping\"}])\nprint(r.choices[0].message.content)",
                       [stream("pong")], n=3)]
    add("jupyter-notebook-environ-key", "secret", "ipynb", "experiments/prompting.ipynb", nb(cells), k)

    k = sendgrid()
    text = f'''# test settings -- copied from staging, do not commit
DJANGO_SETTINGS_MODULE=config.settings.test
DATABASE_URL=sqlite:///test.db
CELERY_TASK_ALWAYS_EAGER=1
SENDGRID_API_KEY={k}
EMAIL_BACKEND=anymail.backends.sendgrid.EmailBackend
'''
    add("dotenv-test-real-key", "secret", "env", ".env.test", text, k)

    pwd = pw()
    text = f'''from sqlalchemy import create_engine, text
from sqlalchemy.orm import DeclarativeBase, sessionmaker

engine = create_engine(
    "mssql+pyodbc://report_user:{pwd}@sql-{pick(SVC)}.database.windows.net:1433/reports"
    "?driver=ODBC+Driver+18+for+SQL+Server&Encrypt=yes",
    pool_size=5,
    max_overflow=10,
)
SessionLocal = sessionmaker(bind=engine, autoflush=False, expire_on_commit=False)


class Base(DeclarativeBase):
    pass


def ping() -> bool:
    with engine.connect() as conn:
        return conn.execute(text("SELECT 1")).scalar() == 1
'''
    add("sqlalchemy-create-engine-password", "secret", "py", "reports/db.py", text, pwd)

    pwd = pw(20)
    text = f'''class Config:
    MAIL_SERVER = "smtp.mailgun.org"
    MAIL_PORT = 587
    MAIL_USE_TLS = True
    MAIL_USERNAME = "postmaster@mg.{pick(PROJ).replace('_', '')}.com"
    MAIL_PASSWORD = "{pwd}"
    MAIL_DEFAULT_SENDER = ("Support", "support@{pick(PROJ).replace('_', '')}.com")
    BABEL_DEFAULT_LOCALE = "en"
    LANGUAGES = ["en", "de", "fr"]
'''
    add("flask-mail-password", "secret", "py", "webapp/config.py", text, pwd)


# ================================================================ NONE cases
PKGS = [("django", "5.0.7"), ("djangorestframework", "3.15.2"), ("psycopg", "3.2.1"), ("celery", "5.4.0"),
        ("redis", "5.0.8"), ("requests", "2.32.3"), ("urllib3", "2.2.2"), ("certifi", "2024.7.4"),
        ("charset-normalizer", "3.3.2"), ("idna", "3.7"), ("pydantic", "2.8.2"), ("pydantic-core", "2.20.1"),
        ("fastapi", "0.111.1"), ("starlette", "0.37.2"), ("uvicorn", "0.30.3"), ("sqlalchemy", "2.0.31"),
        ("alembic", "1.13.2"), ("boto3", "1.34.149"), ("botocore", "1.34.149"), ("s3transfer", "0.10.2"),
        ("numpy", "2.0.1"), ("pandas", "2.2.2"), ("httpx", "0.27.0"), ("anyio", "4.4.0"), ("orjson", "3.10.6")]


def requirements_hashes():
    for i in range(3):
        sel = R.sample(PKGS, R.randint(5, 8))
        out = ["#", "# This file is autogenerated by pip-compile with Python 3.%d" % R.randint(10, 12),
               "# by the following command:", "#", "#    pip-compile --generate-hashes requirements/%s.in" % ["base", "prod", "worker"][i], "#"]
        if i == 1:
            out.insert(0, "--index-url https://pypi.org/simple")
        if i == 2:
            out.insert(0, "--extra-index-url https://${PIP_INDEX_USER}:${PIP_INDEX_TOKEN}@pkgs.%s.dev/simple/" % pick(PROJ).replace("_", ""))
        for n, v in sorted(sel):
            out.append(f"{n}=={v} \\")
            hs = [sha256_hex() for _ in range(R.randint(1, 3))]
            for j, h in enumerate(hs):
                out.append(f"    --hash=sha256:{h}" + (" \\" if j < len(hs) - 1 else ""))
            out.append(f"    # via -r requirements/{['base', 'prod', 'worker'][i]}.in")
        add("requirements-hash-pins", "none", "txt", f"requirements/{['base', 'prod', 'worker'][i]}.txt", "\n".join(out) + "\n")


def poetry_lock():
    for i in range(2):
        sel = R.sample(PKGS, 4)
        out = ["# This file is automatically @generated by Poetry 1.8.3 and should not be changed by hand.", ""]
        for n, v in sel:
            out += ["[[package]]", f'name = "{n}"', f'version = "{v}"', 'description = ""', "optional = false",
                    'python-versions = ">=3.8"', "files = [",
                    f'    {{file = "{n.replace("-", "_")}-{v}-py3-none-any.whl", hash = "sha256:{sha256_hex()}"}},',
                    f'    {{file = "{n.replace("-", "_")}-{v}.tar.gz", hash = "sha256:{sha256_hex()}"}},', "]", ""]
        out += ["[metadata]", 'lock-version = "2.0"', 'python-versions = "^3.11"', f'content-hash = "{sha256_hex()}"']
        add("poetry-lock-hashes", "none", "lock", "poetry.lock", "\n".join(out) + "\n")


def pipfile_uv_lock():
    sel = R.sample(PKGS, 4)
    doc = {"_meta": {"hash": {"sha256": sha256_hex()}, "pipfile-spec": 6, "requires": {"python_version": "3.12"},
                     "sources": [{"name": "pypi", "url": "https://pypi.org/simple", "verify_ssl": True}]},
           "default": {n: {"hashes": ["sha256:" + sha256_hex(), "sha256:" + sha256_hex()], "index": "pypi",
                           "markers": "python_version >= '3.8'", "version": "==" + v} for n, v in sel},
           "develop": {}}
    add("pipfile-lock-hashes", "none", "json", "Pipfile.lock", json.dumps(doc, indent=4) + "\n")
    sel = R.sample(PKGS, 3)
    out = ["version = 1", 'requires-python = ">=3.11"', ""]
    for n, v in sel:
        out += ["[[package]]", f'name = "{n}"', f'version = "{v}"', 'source = { registry = "https://pypi.org/simple" }',
                f'sdist = {{ url = "https://files.pythonhosted.org/packages/{hx(2)}/{hx(2)}/{hx(60)}/{n}-{v}.tar.gz", hash = "sha256:{sha256_hex()}", size = {R.randint(20000, 900000)} }}',
                "wheels = [",
                f'    {{ url = "https://files.pythonhosted.org/packages/{hx(2)}/{hx(2)}/{hx(60)}/{n}-{v}-py3-none-any.whl", hash = "sha256:{sha256_hex()}", size = {R.randint(20000, 900000)} }},',
                "]", ""]
    add("uv-lock-hashes", "none", "lock", "uv.lock", "\n".join(out))


def alembic_migrations():
    for i in range(3):
        rev, down = hx(12), hx(12)
        table = pick(["invoices", "api_keys", "oauth_tokens", "sessions", "webhook_endpoints"])
        ts = "2024-%02d-%02d %02d:%02d:%02d.%06d" % (R.randint(1, 12), R.randint(1, 28), R.randint(0, 23), R.randint(0, 59), R.randint(0, 59), R.randint(0, 999999))
        text = f'''"""add {table} {pick(['token_hash', 'secret_prefix', 'key_fingerprint'])} column

Revision ID: {rev}
Revises: {down}
Create Date: {ts}

"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "{rev}"
down_revision: Union[str, None] = "{down}"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("{table}", sa.Column("token_hash", sa.String(length=64), nullable=True))
    op.add_column("{table}", sa.Column("token_prefix", sa.String(length=8), nullable=True))
    op.create_index("ix_{table}_token_hash", "{table}", ["token_hash"], unique=True)
    op.execute("UPDATE {table} SET token_prefix = 'legacy'")


def downgrade() -> None:
    op.drop_index("ix_{table}_token_hash", table_name="{table}")
    op.drop_column("{table}", "token_prefix")
    op.drop_column("{table}", "token_hash")
'''
        add("alembic-migration-revision-ids", "none", "py", f"alembic/versions/{rev}_add_{table}_token_hash.py", text)


def django_fixtures_hashes():
    users = []
    for n in range(3):
        users.append({"model": "auth.user", "pk": n + 1, "fields": {"password": pbkdf2_hash(), "last_login": None,
                      "is_superuser": n == 0, "username": pick(["admin", "alice", "bob", "carol", "dave"]) + str(n),
                      "email": "user%d@example.com" % n, "is_staff": n == 0, "is_active": True,
                      "date_joined": "2024-0%d-1%dT09:00:00Z" % (R.randint(1, 9), n)}})
    add("django-fixture-password-hashes", "none", "json", "accounts/fixtures/users.json", json.dumps(users, indent=2) + "\n")
    text = "\n".join(f'''- model: accounts.customuser
  pk: {uid()}
  fields:
    email: {nm}@example.test
    password: {argon2_hash()}
    is_active: true
    api_key_hash: {sha256_hex()}''' for nm in ("qa-admin", "qa-viewer")) + "\n"
    add("django-fixture-password-hashes", "none", "yaml", "accounts/fixtures/qa_users.yaml", text)
    salt = rs(ALNUM, 22)
    text = f'''from django.contrib.auth.hashers import check_password, make_password

# hashes produced with make_password("correct horse battery staple", salt="{salt}")
KNOWN_HASHES = {{
    "pbkdf2": "{pbkdf2_hash()}",
    "argon2": "{argon2_hash()}",
    "bcrypt": "bcrypt_sha256$$2b$12${rs(ALNUM + './', 53)}",
    "md5_legacy": "md5${rs(ALNUM, 22)}${hx(32)}",
}}


def test_make_password_roundtrip(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    encoded = make_password("s3cret-for-tests")
    assert check_password("s3cret-for-tests", encoded)
    assert not check_password("wrong", encoded)
'''
    add("django-password-hasher-tests", "none", "py", "accounts/tests/test_hashers.py", text)


def init_version_hash():
    p = pick(PROJ)
    text = f'''"""{p} - shared domain models."""
__version__ = "{R.randint(0, 4)}.{R.randint(0, 40)}.{R.randint(0, 12)}"
__build__ = "{git_sha()}"
__build_date__ = "2024-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}T{R.randint(0, 23):02d}:{R.randint(0, 59):02d}:00Z"
__wheel_sha256__ = "{sha256_hex()}"

from .models import Account, Invoice, LineItem  # noqa: E402

__all__ = ["Account", "Invoice", "LineItem", "__version__"]
'''
    add("init-version-build-hash", "none", "py", f"src/{p}/__init__.py", text)
    sha = git_sha()
    text = f'''# file generated by setuptools_scm
# don't change, don't track in version control
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Tuple, Union

    VERSION_TUPLE = Tuple[Union[int, str], ...]
else:
    VERSION_TUPLE = object

version: str
__version__: str
__version_tuple__: VERSION_TUPLE
version_tuple: VERSION_TUPLE

__version__ = version = "1.{R.randint(0, 9)}.{R.randint(1, 9)}.dev{R.randint(1, 60)}+g{sha[:9]}"
__version_tuple__ = version_tuple = (1, 0, 0, "dev", "g{sha[:9]}")
__commit_id__ = commit_id = "{sha}"
'''
    add("setuptools-scm-version-file", "none", "py", f"src/{pick(PROJ)}/_version.py", text)


def hmac_vectors():
    key = rbytes(32)
    msg = pick([b"GET\n/v1/orders\n1718000000", b"hello webhook", b'{"event":"ping"}'])
    digest = __import__("hmac").new(key, msg, hashlib.sha256).hexdigest()
    text = f'''import hashlib
import hmac

import pytest

from webhooks.verify import verify_signature

# RFC 4231 test case 2
RFC_KEY = b"Jefe"
RFC_MSG = b"what do ya want for nothing?"
RFC_SHA256 = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"

# locally generated vector
KEY = bytes.fromhex("{key.hex()}")
MSG = {msg!r}
EXPECTED = "{digest}"


def test_rfc4231_case2():
    assert hmac.new(RFC_KEY, RFC_MSG, hashlib.sha256).hexdigest() == RFC_SHA256


@pytest.mark.parametrize("sig,ok", [(EXPECTED, True), ("0" * 64, False)])
def test_verify_signature(sig, ok):
    assert verify_signature(KEY, MSG, sig) is ok
'''
    add("hmac-test-vectors", "none", "py", "tests/test_webhook_signature.py", text)
    k2 = rbytes(16)
    iv = rbytes(12)
    text = f'''"""AES-GCM round trip vectors (generated with cryptography 42, not used in prod)."""
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

VECTORS = [
    {{
        "key": bytes.fromhex("{k2.hex()}"),
        "nonce": bytes.fromhex("{iv.hex()}"),
        "aad": b"header-v1",
        "plaintext": b"attack at dawn",
        "ciphertext": bytes.fromhex("{rbytes(30).hex()}"),
    }},
]


def test_decrypt_vectors():
    for v in VECTORS:
        aes = AESGCM(v["key"])
        ct = aes.encrypt(v["nonce"], v["plaintext"], v["aad"])
        assert aes.decrypt(v["nonce"], ct, v["aad"]) == v["plaintext"]
'''
    add("aead-test-vectors", "none", "py", "tests/crypto/test_aesgcm.py", text)


def base64_blobs():
    png = b"\x89PNG\r\n\x1a\n" + bytes.fromhex("0000000d49484452") + rbytes(150)
    enc = base64.b64encode(png).decode()
    text = f'''"""Tiny inline assets so the PDF renderer works without static files."""
import base64

LOGO_PNG_B64 = (
{chr(10).join('    "' + enc[i:i + 76] + '"' for i in range(0, len(enc), 76))}
)
PLACEHOLDER_GIF = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"


def logo_bytes() -> bytes:
    return base64.b64decode(LOGO_PNG_B64)
'''
    add("base64-embedded-image", "none", "py", "invoices/assets.py", text)
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M%d %dh%dv%dz" fill="#%s"/></svg>'
           % (R.randint(0, 8), R.randint(0, 8), R.randint(2, 8), R.randint(2, 8), hx(6))).encode()
    text = f'''{{
  "name": "status-widget",
  "icon": "data:image/svg+xml;base64,{base64.b64encode(svg).decode()}",
  "thumbnail": "data:image/jpeg;base64,{base64.b64encode(bytes.fromhex('ffd8ffe000104a464946') + rbytes(120)).decode()}",
  "refresh_seconds": 30
}}
'''
    add("base64-embedded-image", "none", "json", "dashboards/widgets/status.json", text)
    pk = b"\x80\x04\x95" + rbytes(90) + b"."
    pb = rbytes(70)
    text = f'''import pickle

import pytest

from ingest.codec import decode_event

# captured from the staging queue (no PII): pickled dict + protobuf Event
PICKLED_STATE = b"{base64.b64encode(pk).decode()}"
EVENT_PB_B64 = "{base64.b64encode(pb).decode()}"


@pytest.mark.skip(reason="pickle protocol drift, see #{R.randint(100, 999)}")
def test_pickled_state():
    import base64

    state = pickle.loads(base64.b64decode(PICKLED_STATE))
    assert "cursor" in state


def test_decode_event_rejects_garbage():
    with pytest.raises(ValueError):
        decode_event(b"\\x00\\x01")
'''
    add("base64-serialized-test-data", "none", "py", "tests/ingest/test_codec.py", text)


def token_named_constants():
    p = pick(PROJ)
    text = f'''"""Cache / session key names. None of these are secrets."""

SESSION_TOKEN_KEY = "_auth_user_token"
CSRF_TOKEN_KEY = "csrftoken"
CSRF_HEADER_KEY = "HTTP_X_CSRFTOKEN"
REFRESH_TOKEN_COOKIE = "rt"
API_KEY_HEADER = "X-Api-Key"
SECRET_KEY_SETTING = "DJANGO_SECRET_KEY"
PASSWORD_RESET_TOKEN_KEY = "password_reset_token"
ACCESS_TOKEN_CACHE_KEY = "{p}:oauth:access_token:{{user_id}}"
RATE_LIMIT_KEY = "{p}:rl:{{ip}}:{{bucket}}"
FEATURE_FLAG_KEY = "{p}:ff:{{name}}"
STRIPE_KEY_NAME = "STRIPE_SECRET_KEY"
GITHUB_TOKEN_ENV = "GITHUB_TOKEN"
'''
    add("token-named-constants-nonsecret", "none", "py", f"{p}/cache_keys.py", text)
    text = f'''from enum import Enum, auto


class TokenType(str, Enum):
    ACCESS = "access_token"
    REFRESH = "refresh_token"
    ID = "id_token"
    API_KEY = "api_key"
    PASSWORD_RESET = "password_reset"


class SortKey(str, Enum):
    CREATED = "-created_at"
    NAME = "name"
    SECRET_NAME = "secret__name"


class Key(Enum):
    """Keyboard shortcuts in the admin grid."""

    ESCAPE = "Escape"
    ENTER = "Enter"
    SECRET_TOGGLE = "ctrl+shift+s"
    TOKEN_COPY = "ctrl+alt+c"


PRIVATE_KEY_FIELD = "private_key_pem"
'''
    add("enum-token-names-nonsecret", "none", "py", "core/enums.py", text)
    text = '''# i18n message ids used by the login templates
MESSAGES = {
    "auth.error.invalid_token": "Your session has expired. Please sign in again.",
    "auth.error.secret_mismatch": "The security answer did not match.",
    "auth.hint.password_policy": "Use at least 12 characters.",
    "settings.api_keys.title": "API keys",
    "settings.api_keys.create": "Generate new key",
    "settings.api_keys.revoke_confirm": "Revoke key {prefix}…? Apps using it will stop working.",
    "settings.tokens.copy_once": "Copy this token now; you won't see it again.",
}

FEATURE_FLAGS = {
    "enable_api_key_rotation": True,
    "use_new_token_service": False,
    "secret_santa_campaign_2024": False,
    "password_less_login_beta": True,
}
'''
    add("i18n-and-feature-flag-keys", "none", "py", "web/messages.py", text)


def uuid_ulid_fixtures():
    rows = [(uid(), ulid(), pick(["paid", "open", "void"])) for _ in range(5)]
    text = "import uuid\n\nimport pytest\n\nINVOICES = [\n" + "".join(
        f'    {{"id": uuid.UUID("{a}"), "ulid": "{b}", "status": "{c}"}},\n' for a, b, c in rows) + '''
]


@pytest.fixture
def invoices(db):
    from billing.models import Invoice

    return [Invoice.objects.create(**row) for row in INVOICES]


def test_lookup_by_ulid(invoices, client):
    resp = client.get(f"/api/invoices/{INVOICES[0]['ulid']}/")
    assert resp.status_code == 200
'''
    add("uuid-ulid-test-fixtures", "none", "py", "billing/tests/test_invoice_api.py", text)
    rows = [{"request_id": uid(), "trace_id": hx(32), "span_id": hx(16), "idempotency_key": uid()} for _ in range(3)]
    add("trace-ids-json-fixture", "none", "json", "tests/data/trace_samples.json", json.dumps(rows, indent=2) + "\n")


def vcr_cassettes_clean():
    text = f'''interactions:
- request:
    body: '{{"model": "gpt-4o-mini", "messages": [{{"role": "user", "content": "Say hi"}}]}}'
    headers:
      Authorization:
      - <REDACTED>
      Content-Type:
      - application/json
      User-Agent:
      - OpenAI/Python 1.37.1
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: '{{"id": "chatcmpl-{rs(ALNUM, 29)}", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
        "choices": [{{"index": 0, "message": {{"role": "assistant", "content": "Hi!"}}, "finish_reason": "stop"}}],
        "system_fingerprint": "fp_{hx(10)}"}}'
    headers:
      openai-organization:
      - user-{rs(LO + DIG, 24)}
      x-request-id:
      - req_{hx(32)}
      CF-RAY:
      - {hx(16)}-FRA
    status:
      code: 200
      message: OK
version: 1
'''
    add("vcr-cassette-redacted-auth", "none", "yaml", "tests/cassettes/test_chat_hi.yaml", text)
    text = f'''interactions:
- request:
    body: null
    headers:
      Accept:
      - '*/*'
      Authorization:
      - Bearer FILTERED
    method: GET
    uri: https://api.anthropic.com/v1/models?limit=20
  response:
    body:
      string: '{{"data": [{{"id": "claude-3-5-sonnet-20241022", "type": "model"}}], "has_more": false, "first_id": "claude-3-5-sonnet-20241022"}}'
    headers:
      request-id:
      - req_{rs(ALNUM, 24)}
      anthropic-organization-id:
      - {uid()}
      ETag:
      - '"{hx(32)}"'
    status:
      code: 200
      message: OK
version: 1
'''
    add("vcr-cassette-redacted-auth", "none", "yaml", "tests/cassettes/test_list_models.yaml", text)
    text = f'''import pytest


@pytest.fixture(scope="module")
def vcr_config():
    return {{
        "filter_headers": [("authorization", "DUMMY"), ("x-api-key", "DUMMY"), "cookie"],
        "filter_query_parameters": ["api_key", "access_token", "sig"],
        "record_mode": "once",
        "decode_compressed_response": True,
    }}


@pytest.mark.vcr
def test_fetch_release(client):
    rel = client.get_release("v2.3.1")
    assert rel.etag == 'W/"{hx(64)}"'
    assert rel.target_commitish == "{git_sha()}"
    assert rel.asset_sha256 == "{sha256_hex()}"
'''
    add("pytest-vcr-config-filters", "none", "py", "tests/test_releases.py", text)


def stripe_publishable():
    pk = "pk_live_" + rs(ALNUM, 99)
    text = f'''from django.conf import settings


def stripe_context(request):
    """Expose the *publishable* key to templates; the secret key never leaves settings."""
    return {{
        "STRIPE_PUBLISHABLE_KEY": getattr(settings, "STRIPE_PUBLISHABLE_KEY", "{pk}"),
        "STRIPE_ACCOUNT_COUNTRY": "DE",
    }}
'''
    add("stripe-publishable-key", "none", "py", "payments/context_processors.py", text)
    text = f'''STRIPE_PUBLISHABLE_KEY=pk_live_{rs(ALNUM, 99)}
STRIPE_SECRET_KEY=
STRIPE_WEBHOOK_SECRET=
STRIPE_PRICE_PRO_MONTHLY=price_{rs(ALNUM, 24)}
STRIPE_PRICE_PRO_YEARLY=price_{rs(ALNUM, 24)}
STRIPE_PRODUCT_TEAM=prod_{rs(ALNUM, 14)}
'''
    add("dotenv-stripe-public-ids", "none", "env", ".env.example", text)


def aws_resource_ids():
    acct = digits(12)
    text = f'''import boto3

ACCOUNT_ID = "{acct}"
REGION = "eu-west-1"
ROLE_ARN = f"arn:aws:iam::{{ACCOUNT_ID}}:role/{pick(SVC)}-task-role"
KMS_KEY_ID = "{uid()}"
KMS_KEY_ARN = f"arn:aws:kms:{{REGION}}:{{ACCOUNT_ID}}:key/{{KMS_KEY_ID}}"
SNS_TOPIC_ARN = "arn:aws:sns:eu-west-1:{acct}:{pick(SVC)}-alerts"
BUCKET = "{pick(PROJ).replace('_', '-')}-artifacts-{acct}"
DISTRIBUTION_ID = "E{rs(UP + DIG, 13)}"
COGNITO_USER_POOL_ID = "eu-west-1_{rs(ALNUM, 9)}"
COGNITO_APP_CLIENT_ID = "{rs(LO + DIG, 26)}"


def assumed_session(session_name: str = "deploy") -> boto3.Session:
    sts = boto3.client("sts")
    creds = sts.assume_role(RoleArn=ROLE_ARN, RoleSessionName=session_name)["Credentials"]
    return boto3.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=REGION,
    )
'''
    add("aws-arns-and-resource-ids", "none", "py", "infra/aws_ids.py", text)
    text = f'''from google.cloud import secretmanager, storage

PROJECT_ID = "{pick(PROJ).replace('_', '-')}-prod-{R.randint(100, 999)}"
PROJECT_NUMBER = "{digits(12)}"
BUCKET = "{pick(PROJ).replace('_', '-')}-ml-artifacts"
SERVICE_ACCOUNT = f"trainer@{{PROJECT_ID}}.iam.gserviceaccount.com"
KMS_KEY = f"projects/{{PROJECT_ID}}/locations/europe-west4/keyRings/ml/cryptoKeys/artifacts"


def secret(name: str, version: str = "latest") -> str:
    client = secretmanager.SecretManagerServiceClient()
    path = f"projects/{{PROJECT_NUMBER}}/secrets/{{name}}/versions/{{version}}"
    return client.access_secret_version(name=path).payload.data.decode("utf-8")


def upload(local: str, dest: str) -> None:
    storage.Client(project=PROJECT_ID).bucket(BUCKET).blob(dest).upload_from_filename(local)
'''
    add("gcp-resource-names-secret-manager", "none", "py", "ml/gcp.py", text)
    sub = uid()
    text = f'''from azure.identity import DefaultAzureCredential
from azure.keyvault.secrets import SecretClient
from azure.mgmt.storage import StorageManagementClient

SUBSCRIPTION_ID = "{sub}"
TENANT_ID = "{uid()}"
MANAGED_IDENTITY_CLIENT_ID = "{uid()}"
RESOURCE_GROUP = "rg-{pick(SVC)}-prod-weu"
STORAGE_ACCOUNT_ID = (
    f"/subscriptions/{{SUBSCRIPTION_ID}}/resourceGroups/{{RESOURCE_GROUP}}"
    "/providers/Microsoft.Storage/storageAccounts/st{rs(LO + DIG, 10)}"
)
VAULT_URL = "https://kv-{pick(SVC)}-prod.vault.azure.net/"

credential = DefaultAzureCredential(managed_identity_client_id=MANAGED_IDENTITY_CLIENT_ID)
secrets = SecretClient(vault_url=VAULT_URL, credential=credential)
storage = StorageManagementClient(credential, SUBSCRIPTION_ID)


def db_password() -> str:
    return secrets.get_secret("postgres-admin-password").value
'''
    add("azure-resource-ids-keyvault", "none", "py", "infra/azure_clients.py", text)


def oauth_client_id_only():
    cid = "%s-%s.apps.googleusercontent.com" % (digits(12), rs(LO + DIG, 32))
    text = f'''import os

from authlib.integrations.starlette_client import OAuth

oauth = OAuth()
oauth.register(
    name="google",
    client_id="{cid}",
    client_secret=os.environ["GOOGLE_CLIENT_SECRET"],
    server_metadata_url="https://accounts.google.com/.well-known/openid-configuration",
    client_kwargs={{"scope": "openid email profile"}},
)
'''
    add("oauth-client-id-env-secret", "none", "py", "app/oauth.py", text)
    text = f'''from twilio.rest import Client
import os

TWILIO_ACCOUNT_SID = "AC{hx(32)}"
MESSAGING_SERVICE_SID = "MG{hx(32)}"
VERIFY_SERVICE_SID = "VA{hx(32)}"

client = Client(TWILIO_ACCOUNT_SID, os.environ["TWILIO_AUTH_TOKEN"])


def start_verification(phone: str) -> str:
    v = client.verify.v2.services(VERIFY_SERVICE_SID).verifications.create(to=phone, channel="sms")
    return v.status
'''
    add("twilio-sids-env-token", "none", "py", "accounts/verify.py", text)


def redacted_logs():
    text = f'''2024-06-{R.randint(10, 28)} 12:{R.randint(10, 59)}:03,114 INFO  boot: loaded settings module config.settings.production
2024-06-{R.randint(10, 28)} 12:{R.randint(10, 59)}:03,120 INFO  boot: STRIPE_SECRET_KEY=sk_live_****************{rs(ALNUM, 4)}
2024-06-{R.randint(10, 28)} 12:{R.randint(10, 59)}:03,121 INFO  boot: OPENAI_API_KEY=sk-proj-...{rs(ALNUM, 4)} (redacted)
2024-06-{R.randint(10, 28)} 12:{R.randint(10, 59)}:03,121 INFO  boot: AWS_ACCESS_KEY_ID=AKIA************ AWS_SECRET_ACCESS_KEY=[REDACTED]
2024-06-{R.randint(10, 28)} 12:{R.randint(10, 59)}:03,122 INFO  boot: DATABASE_URL=postgres://app:********@db:5432/app
2024-06-{R.randint(10, 28)} 12:{R.randint(10, 59)}:04,002 INFO  celery: worker ready, broker=amqp://guest:**@rabbitmq:5672//
2024-06-{R.randint(10, 28)} 12:{R.randint(10, 59)}:05,877 WARN  http: request_id={uid()} upstream 502, retrying
'''
    add("redacted-secrets-in-log", "none", "log", "docs/samples/boot.log", text)
    text = '''import re

_PATTERNS = [
    (re.compile(r"(sk_live_)[A-Za-z0-9]{20,}"), r"\\1********"),
    (re.compile(r"(ghp_)[A-Za-z0-9]{36}"), r"\\1********"),
    (re.compile(r"(AKIA)[A-Z0-9]{16}"), r"\\1****************"),
    (re.compile(r"(xox[baprs]-)[A-Za-z0-9-]+"), r"\\1****"),
    (re.compile(r"://([^:/]+):([^@]+)@"), r"://\\1:****@"),
]


def scrub(line: str) -> str:
    for pat, repl in _PATTERNS:
        line = pat.sub(repl, line)
    return line


def test_scrub():
    assert scrub("token=ghp_" + "a" * 36) == "token=ghp_********"
    assert scrub("postgres://u:pw@h/db") == "postgres://u:****@h/db"
'''
    add("log-scrubber-patterns", "none", "py", "app/log_scrub.py", text)


def crypto_nonce_salt():
    text = f'''import hashlib
import os

from core.crypto import derive_key, encrypt_field

SALT = bytes.fromhex("{hx(32)}")
NONCE = bytes.fromhex("{hx(24)}")
ITERATIONS = 210_000


def test_derive_key_is_deterministic():
    a = derive_key(b"correct horse", SALT, ITERATIONS)
    b = derive_key(b"correct horse", SALT, ITERATIONS)
    assert a == b and len(a) == 32


def test_encrypt_field_uses_random_nonce():
    key = os.urandom(32)
    assert encrypt_field(key, b"x") != encrypt_field(key, b"x")


def test_sha256_known_digest():
    assert hashlib.sha256(b"abc").hexdigest() == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
'''
    add("crypto-salt-nonce-tests", "none", "py", "core/tests/test_crypto.py", text)
    text = f'''"""Content-Security-Policy configuration (django-csp)."""
CSP_DEFAULT_SRC = ("'self'",)
CSP_SCRIPT_SRC = (
    "'self'",
    "'sha256-{base64.b64encode(rbytes(32)).decode()}'",
    "'sha256-{base64.b64encode(rbytes(32)).decode()}'",
    "https://js.stripe.com",
)
CSP_STYLE_SRC = ("'self'", "'sha384-{base64.b64encode(rbytes(48)).decode()}'")
CSP_INCLUDE_NONCE_IN = ["script-src"]
CSP_REPORT_URI = "/csp-report/"
'''
    add("csp-hashes-settings", "none", "py", "config/settings/csp.py", text)


def notebook_hash_outputs():
    lines = "\n".join(f"{hx(64)}  data/raw/part-{i:05d}.parquet" for i in range(4))
    cells = [md_cell("### Verify downloaded shards"),
             code_cell("!sha256sum data/raw/*.parquet", [stream(lines)], n=1),
             code_cell("import hashlib, pathlib\nexpected = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in pathlib.Path('data/raw').glob('*.parquet')}\nlen(expected)",
                       [{"data": {"text/plain": ["4"]}, "execution_count": 2, "metadata": {}, "output_type": "execute_result"}], n=2)]
    add("jupyter-notebook-checksum-outputs", "none", "ipynb", "notebooks/00_verify_data.ipynb", nb(cells))
    cells = [code_cell("from transformers import AutoModel\nmodel = AutoModel.from_pretrained(\"bert-base-uncased\", revision=\"%s\")" % git_sha(),
                       [{"name": "stderr", "output_type": "stream", "text": ["Downloading model.safetensors: 100%% 440M/440M\n", "etag: %s\n" % hx(64)]}], n=1),
             code_cell("import os\nos.environ.get(\"HF_TOKEN\") is None", [{"data": {"text/plain": ["True"]}, "execution_count": 2, "metadata": {}, "output_type": "execute_result"}], n=2),
             code_cell("import uuid\nrun_id = uuid.uuid4().hex\nrun_id", [{"data": {"text/plain": ["'%s'" % hx(32)]}, "execution_count": 3, "metadata": {}, "output_type": "execute_result"}], n=3)]
    add("jupyter-notebook-model-revision", "none", "ipynb", "notebooks/embeddings_baseline.ipynb", nb(cells))


def changelog_rst():
    out = ["Changelog", "=========", ""]
    for j in range(5):
        out += [f"{R.randint(1, 3)}.{R.randint(0, 20)}.{j} (2024-{R.randint(1, 12):02d}-{R.randint(1, 28):02d})",
                "-" * 22, "",
                f"* Rotate API key handling to use hashed storage (:commit:`{git_sha()[:12]}`).",
                f"* Fix token refresh race in ``SessionManager`` (:pr:`{R.randint(100, 2000)}`, :commit:`{git_sha()}`).", ""]
    add("changelog-commit-shas", "none", "rst", "CHANGELOG.rst", "\n".join(out))


def placeholder_keys():
    text = f'''# Copy to .env and fill in.
DJANGO_SECRET_KEY=change-me
DATABASE_URL=postgres://USER:PASSWORD@localhost:5432/{pick(PROJ)}
STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx
OPENAI_API_KEY=sk-your-key-here
AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX
AWS_SECRET_ACCESS_KEY=<your-secret-access-key>
SLACK_BOT_TOKEN=xoxb-your-bot-token
SENTRY_DSN=
HF_TOKEN=hf_...
'''
    add("dotenv-example-placeholders", "none", "env", ".env.example", text)
    text = '''# environment template for docker-compose.dev.yml
POSTGRES_USER=app
POSTGRES_PASSWORD=${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}
POSTGRES_DB=app
REDIS_URL=redis://redis:6379/0
CELERY_BROKER_URL=amqp://${RABBIT_USER}:${RABBIT_PASS}@rabbitmq:5672//
ANTHROPIC_API_KEY=
GITHUB_TOKEN=               # needs repo:read scope
TWILIO_AUTH_TOKEN=your_auth_token
SENDGRID_API_KEY=SG.xxxxxxxx.yyyyyyyy
'''
    add("dotenv-example-placeholders", "none", "env", "env.template", text)
    text = '''import os

OPENAI_API_KEY = os.getenv("OPENAI_API_KEY", "")
ANTHROPIC_API_KEY = os.getenv("ANTHROPIC_API_KEY", "sk-ant-REPLACE_ME")
STRIPE_API_KEY = os.environ.get("STRIPE_API_KEY", "sk_test_placeholder")
GITHUB_TOKEN = os.environ.get("GITHUB_TOKEN") or None
SLACK_WEBHOOK_URL = os.getenv("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/XXX/YYY/ZZZ")
DATABASE_URL = os.getenv("DATABASE_URL", "sqlite:///./local.db")
HF_TOKEN = os.getenv("HF_TOKEN", "<hf-token>")
'''
    add("getenv-placeholder-defaults", "none", "py", "app/env.py", text)


def django_secret_from_env():
    text = '''import os

from django.core.exceptions import ImproperlyConfigured


def env(name: str) -> str:
    try:
        return os.environ[name]
    except KeyError as exc:
        raise ImproperlyConfigured(f"Set the {name} environment variable") from exc


SECRET_KEY = env("DJANGO_SECRET_KEY")
SECRET_KEY_FALLBACKS = [k for k in os.environ.get("DJANGO_SECRET_KEY_FALLBACKS", "").split(",") if k]
DEBUG = False
'''
    add("django-secret-key-from-env", "none", "py", "config/settings/production.py", text)
    text = '''from django.core.management.utils import get_random_secret_key

from .base import *  # noqa

DEBUG = True
# regenerated on every start; sessions do not survive restarts in dev
SECRET_KEY = get_random_secret_key()
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]
INTERNAL_IPS = ["127.0.0.1"]
INSTALLED_APPS += ["debug_toolbar", "django_extensions"]
'''
    add("django-secret-key-generated", "none", "py", "config/settings/local.py", text)
    text = '''import environ

env = environ.Env(DEBUG=(bool, False))
environ.Env.read_env()

SECRET_KEY = env.str("SECRET_KEY", default="django-insecure-change-me-in-production")
DEBUG = env("DEBUG")
DATABASES = {"default": env.db("DATABASE_URL", default="sqlite:///db.sqlite3")}
CACHES = {"default": env.cache("REDIS_URL", default="locmemcache://")}
EMAIL_CONFIG = env.email("EMAIL_URL", default="consolemail://")
'''
    add("django-environ-placeholder-default", "none", "py", "mysite/settings.py", text)


def pydantic_no_default():
    text = '''from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=(".env", ".env.local"), secrets_dir="/run/secrets")

    openai_api_key: SecretStr
    anthropic_api_key: SecretStr | None = None
    stripe_secret_key: SecretStr = Field(..., alias="STRIPE_SECRET_KEY")
    jwt_secret: SecretStr = Field(min_length=32)
    database_password: SecretStr
    redis_url: str = "redis://localhost:6379/0"
    token_ttl_seconds: int = 3600


settings = Settings()  # type: ignore[call-arg]
'''
    add("pydantic-secretstr-required", "none", "py", "app/settings.py", text)
    text = '''from pydantic import BaseModel, SecretStr, field_validator


class ApiCredentials(BaseModel):
    key_id: str
    secret: SecretStr

    @field_validator("secret")
    @classmethod
    def not_placeholder(cls, v: SecretStr) -> SecretStr:
        if v.get_secret_value() in {"changeme", "xxx", ""}:
            raise ValueError("placeholder secret")
        return v


def test_repr_hides_secret():
    creds = ApiCredentials(key_id="k1", secret="not-a-real-secret-value")
    assert "not-a-real" not in repr(creds)
    assert str(creds.secret) == "**********"
'''
    add("pydantic-secretstr-tests", "none", "py", "tests/test_credentials_model.py", text)


def conftest_fake_tokens():
    text = '''import pytest

FAKE_GITHUB_TOKEN = "ghp_" + "0" * 36
FAKE_STRIPE_KEY = "sk_test_fake"
FAKE_SLACK_TOKEN = "xoxb-000000000000-0000000000000-testtesttesttesttesttest"


@pytest.fixture(autouse=True)
def fake_env(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", FAKE_GITHUB_TOKEN)
    monkeypatch.setenv("STRIPE_API_KEY", FAKE_STRIPE_KEY)
    monkeypatch.setenv("SLACK_BOT_TOKEN", FAKE_SLACK_TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def api_client(client, django_user_model):
    user = django_user_model.objects.create_user("tester", password="pw-for-tests-only")
    client.force_login(user)
    return client
'''
    add("conftest-obviously-fake-tokens", "none", "py", "tests/conftest.py", text)
    text = '''import boto3
import pytest
from moto import mock_aws


@pytest.fixture
def aws_credentials(monkeypatch):
    """Mocked AWS Credentials for moto."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SECURITY_TOKEN", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def s3(aws_credentials):
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="test-bucket")
        yield client
'''
    add("conftest-moto-testing-credentials", "none", "py", "tests/aws/conftest.py", text)
    text = '''import pytest
import respx
from httpx import Response

from app.clients.openai_client import complete

DUMMY_KEY = "sk-dummy-key-for-unit-tests"


@pytest.fixture
def mocked_openai():
    with respx.mock(base_url="https://api.openai.com") as mock:
        mock.post("/v1/chat/completions").mock(
            return_value=Response(200, json={"choices": [{"message": {"content": "ok"}}]})
        )
        yield mock


def test_complete_sends_bearer(mocked_openai):
    assert complete("hi", api_key=DUMMY_KEY) == "ok"
    sent = mocked_openai.calls.last.request
    assert sent.headers["authorization"] == f"Bearer {DUMMY_KEY}"
'''
    add("respx-mock-dummy-key", "none", "py", "tests/clients/test_openai_client.py", text)


def factory_boy():
    text = '''import factory
from factory.django import DjangoModelFactory
from faker import Faker

from accounts.models import ApiKey, User

fake = Faker()


class UserFactory(DjangoModelFactory):
    class Meta:
        model = User

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "factory-password")


class ApiKeyFactory(DjangoModelFactory):
    class Meta:
        model = ApiKey

    user = factory.SubFactory(UserFactory)
    prefix = factory.LazyFunction(lambda: fake.lexify("????????"))
    hashed_key = factory.LazyFunction(lambda: fake.sha256())
    name = factory.Faker("word")
'''
    add("factory-boy-faker-keys", "none", "py", "accounts/tests/factories.py", text)
    text = f'''from faker import Faker

Faker.seed({R.randint(1000, 99999)})
fake = Faker("de_DE")


def fake_customer() -> dict:
    return {{
        "name": fake.name(),
        "iban": fake.iban(),
        "password": fake.password(length=16, special_chars=True),
        "api_token": fake.sha1(),
        "session_key": fake.md5(),
        "uuid": fake.uuid4(),
    }}


SNAPSHOT = {{
    "name": "Dr. Ilse Kranz",
    "session_key": "{hx(32)}",
    "api_token": "{hx(40)}",
    "uuid": "{uid()}",
}}
'''
    add("faker-snapshot-values", "none", "py", "tests/factories/customers.py", text)


def sphinx_docs():
    p = pick(PROJ)
    text = f'''# Configuration file for the Sphinx documentation builder.
import os
import sys

sys.path.insert(0, os.path.abspath("../src"))

project = "{p}"
copyright = "2024, {p} maintainers"
author = "{p} maintainers"
release = "2.{R.randint(0, 9)}.{R.randint(0, 9)}"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
]
intersphinx_mapping = {{
    "python": ("https://docs.python.org/3", None),
    "requests": ("https://requests.readthedocs.io/en/latest/", None),
}}
html_theme = "furo"
html_static_path = ["_static"]
html_context = {{"github_user": "{p}", "github_repo": "{p}", "github_version": "main"}}
extlinks = {{"commit": ("https://github.com/{p}/{p}/commit/%s", "%s")}}
nitpicky = True
'''
    add("sphinx-conf", "none", "py", "docs/conf.py", text)
    text = '''Authentication
==============

Every request must carry an API key in the ``Authorization`` header:

.. code-block:: python

   from acme import Client

   client = Client(api_key="YOUR_API_KEY")
   client.invoices.list(limit=10)

Keys look like ``acme_live_`` followed by 32 characters. Test keys start with
``acme_test_``. You can also set ``ACME_API_KEY`` in the environment:

.. code-block:: console

   $ export ACME_API_KEY=<your key>

.. warning::

   Never commit keys. Rotate a leaked key from *Settings → API keys*.
'''
    add("rst-doc-placeholder-keys", "none", "rst", "docs/authentication.rst", text)
    text = '''OpenAI integration
------------------

Set ``OPENAI_API_KEY`` (it starts with ``sk-``; project keys start with
``sk-proj-``). A truncated example of what the dashboard shows:
``sk-proj-...Xa3Q``. GitHub tokens look like ``ghp_`` + 36 characters, AWS access
key ids like ``AKIA`` + 16 characters.

.. code-block:: python

   import os
   from openai import OpenAI

   client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])
'''
    add("rst-doc-key-format-description", "none", "rst", "docs/integrations/openai.rst", text)


def build_configs():
    p = pick(PROJ)
    text = f'''[build-system]
requires = ["hatchling>=1.24", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "{p.replace('_', '-')}"
dynamic = ["version"]
requires-python = ">=3.10"
dependencies = [
    "fastapi>=0.110",
    "pydantic-settings>=2.2",
    "cryptography>=42",
    "itsdangerous>=2.1",
]

[project.optional-dependencies]
test = ["pytest>=8", "pytest-cov", "respx", "freezegun"]

[tool.hatch.version]
source = "vcs"

[tool.pytest.ini_options]
addopts = "-ra --strict-markers"
env = ["SECRET_KEY=test", "API_TOKEN=dummy"]

[tool.coverage.run]
branch = true
source = ["{p}"]
'''
    add("pyproject-toml-clean", "none", "toml", "pyproject.toml", text)
    text = '''[tool.ruff]
target-version = "py311"
line-length = 100
extend-exclude = ["migrations", "notebooks"]

[tool.ruff.lint]
select = ["E", "F", "I", "B", "S", "UP", "SIM"]
ignore = ["S101"]

[tool.ruff.lint.per-file-ignores]
"tests/**" = ["S105", "S106"]  # hardcoded password/token in tests are fakes
"settings/*.py" = ["F405"]

[tool.ruff.lint.flake8-bandit]
hardcoded-tmp-directory = ["/tmp/app"]
'''
    add("ruff-config", "none", "toml", "ruff.toml", text)
    text = f'''[mypy]
python_version = 3.11
strict = True
plugins = pydantic.mypy, mypy_django_plugin.main
exclude = (?x)(^migrations/|^build/)

[mypy.plugins.django-stubs]
django_settings_module = {p}.settings.test

[mypy-celery.*]
ignore_missing_imports = True

[mypy-{p}.legacy.*]
ignore_errors = True
'''
    add("mypy-ini", "none", "ini", "mypy.ini", text)
    text = '''[tox]
env_list = py{310,311,312}, docs, type
minversion = 4.6

[testenv]
package = wheel
deps = -r requirements/test.txt
pass_env =
    DATABASE_URL
    REDIS_URL
    SECRET_KEY
set_env =
    DJANGO_SETTINGS_MODULE = config.settings.test
    SECRET_KEY = {env:SECRET_KEY:test-only-not-secret}
commands = pytest {posargs:tests}

[testenv:docs]
deps = sphinx
commands = sphinx-build -W -b html docs docs/_build/html

[testenv:type]
deps = mypy
commands = mypy src
'''
    add("tox-ini-clean", "none", "ini", "tox.ini", text)
    text = '''import nox

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "uv|virtualenv"

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.run("pytest", "--cov", *session.posargs, env={"SECRET_KEY": "nox-test-key"})


@nox.session
def release(session: nox.Session) -> None:
    session.install("build", "twine")
    session.run("python", "-m", "build")
    # TWINE_PASSWORD comes from the CI secret store
    session.run("twine", "upload", "--non-interactive", "dist/*", env={"TWINE_USERNAME": "__token__"})
'''
    add("noxfile-clean", "none", "py", "noxfile.py", text)
    text = f'''[metadata]
name = {p}
author = Platform team
license = Apache-2.0

[options]
packages = find:
install_requires =
    boto3>=1.34
    keyring>=24

[options.entry_points]
console_scripts =
    {p.replace('_', '-')} = {p}.cli:main

[tool:pytest]
testpaths = tests
filterwarnings =
    error
    ignore::DeprecationWarning:botocore.*
'''
    add("setup-cfg-clean", "none", "cfg", "setup.cfg", text)
    add("python-version-file", "none", "python-version", ".python-version", pick(["3.12.4", "3.11.9", "3.10.14"]) + "\n")
    text = '''[global]
index-url = https://pypi.org/simple
extra-index-url = https://pkgs.internal.example/simple
# credentials come from keyring (artifacts-keyring) or PIP_INDEX_URL in CI
keyring-provider = subprocess
require-virtualenv = true
'''
    add("pip-conf-keyring", "none", "conf", "pip.conf", text)
    text = '''[distutils]
index-servers =
    pypi
    internal

[pypi]
username = __token__
# password read from keyring: keyring set https://upload.pypi.org/legacy/ __token__

[internal]
repository = https://devpi.internal.example/root/prod/
username = release-bot
'''
    add("pypirc-keyring-no-password", "none", "pypirc", ".pypirc", text)


def secret_lookups():
    text = '''import hvac

from .base import *  # noqa

_vault = hvac.Client(url=os.environ["VAULT_ADDR"])
_vault.auth.kubernetes.login(role="billing-api", jwt=open("/var/run/secrets/kubernetes.io/serviceaccount/token").read())

_db = _vault.secrets.database.generate_credentials(name="billing-rw")["data"]
_kv = _vault.secrets.kv.v2.read_secret_version(path="billing/prod", mount_point="kv")["data"]["data"]

SECRET_KEY = _kv["django_secret_key"]
STRIPE_SECRET_KEY = _kv["stripe_secret_key"]
DATABASES["default"].update(USER=_db["username"], PASSWORD=_db["password"])
'''
    add("vault-secret-lookups", "none", "py", "billing/settings/prod.py", text)
    text = f'''import json
from functools import lru_cache

import boto3

SECRET_IDS = {{
    "db": "arn:aws:secretsmanager:eu-west-1:{digits(12)}:secret:prod/{pick(SVC)}/db-{rs(ALNUM, 6)}",
    "stripe": "prod/{pick(SVC)}/stripe",
    "sendgrid": "/prod/{pick(SVC)}/sendgrid_api_key",
}}


@lru_cache(maxsize=None)
def get_secret(name: str) -> dict:
    client = boto3.client("secretsmanager")
    resp = client.get_secret_value(SecretId=SECRET_IDS[name])
    return json.loads(resp["SecretString"])


def database_url() -> str:
    s = get_secret("db")
    return f"postgresql://{{s['username']}}:{{s['password']}}@{{s['host']}}:{{s['port']}}/{{s['dbname']}}"
'''
    add("aws-secrets-manager-lookups", "none", "py", "app/secrets.py", text)


def logging_config():
    text = '''version: 1
disable_existing_loggers: false
formatters:
  json:
    (): pythonjsonlogger.jsonlogger.JsonFormatter
    fmt: "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s"
filters:
  redact:
    (): app.logging.RedactSecretsFilter
    keys: [authorization, password, api_key, token, secret, cookie]
handlers:
  stdout:
    class: logging.StreamHandler
    formatter: json
    filters: [redact]
loggers:
  uvicorn.access:
    level: WARNING
  app.auth.tokens:
    level: INFO
root:
  level: INFO
  handlers: [stdout]
'''
    add("logging-yaml-redact-filter", "none", "yaml", "config/logging.yaml", text)


def type_stubs():
    text = '''from typing import Any, Literal, overload

class Client:
    api_key: str
    base_url: str
    def __init__(self, api_key: str | None = ..., *, base_url: str = ..., timeout: float = ...) -> None: ...
    @overload
    def request(self, method: Literal["GET"], path: str) -> dict[str, Any]: ...
    @overload
    def request(self, method: Literal["POST"], path: str, json: dict[str, Any]) -> dict[str, Any]: ...

class Token:
    access_token: str
    refresh_token: str | None
    expires_in: int
    def is_expired(self, leeway: int = ...) -> bool: ...

def sign(secret: bytes, payload: bytes, algorithm: str = "sha256") -> str: ...
DEFAULT_SECRET_HEADER: str
'''
    add("type-stub-pyi", "none", "pyi", "src/acme_sdk/client.pyi", text)
    text = '''from collections.abc import Mapping

SECRET_KEY: str
SECRET_KEY_FALLBACKS: list[str]
PASSWORD_HASHERS: list[str]
AUTH_PASSWORD_VALIDATORS: list[Mapping[str, object]]
CSRF_COOKIE_NAME: str
SESSION_COOKIE_NAME: str
SIGNING_BACKEND: str
'''
    add("type-stub-pyi", "none", "pyi", "typings/django_settings.pyi", text)


def doctests():
    text = '''"""Signed, URL-safe tokens.

>>> s = Signer(b"doctest-key")
>>> token = s.sign("user:42")
>>> token.split(".")[0]
'user:42'
>>> s.unsign(token)
'user:42'
>>> s.unsign("user:42.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
Traceback (most recent call last):
    ...
BadSignature: signature mismatch
"""
import base64
import hashlib
import hmac


class BadSignature(Exception):
    pass


class Signer:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def _sig(self, value: str) -> str:
        mac = hmac.new(self._key, value.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()

    def sign(self, value: str) -> str:
        return f"{value}.{self._sig(value)}"

    def unsign(self, token: str) -> str:
        value, _, sig = token.rpartition(".")
        if not hmac.compare_digest(sig, self._sig(value)):
            raise BadSignature("signature mismatch")
        return value
'''
    add("doctest-signer-example", "none", "py", "core/signing.py", text)
    text = '''def mask(value: str, visible: int = 4) -> str:
    """Mask all but the last ``visible`` characters.

    >>> mask("sk_live_abcdefghijklmnop")
    '********************mnop'
    >>> mask("ghp_example", visible=0)
    '***********'
    >>> mask("")
    ''
    """
    if visible <= 0:
        return "*" * len(value)
    return "*" * max(len(value) - visible, 0) + value[-visible:]
'''
    add("doctest-mask-example", "none", "py", "utils/masking.py", text)


def celery_airflow_env():
    text = '''import os

broker_url = os.environ.get("CELERY_BROKER_URL", "redis://localhost:6379/0")
result_backend = os.environ.get("CELERY_RESULT_BACKEND", "redis://localhost:6379/1")
broker_transport_options = {"visibility_timeout": 43200}
task_routes = {
    "reports.tasks.*": {"queue": "reports"},
    "payments.tasks.refresh_token": {"queue": "payments"},
}
task_annotations = {"payments.tasks.refresh_token": {"rate_limit": "10/m"}}
worker_send_task_events = True
'''
    add("celery-config-env-urls", "none", "py", "celeryconfig.py", text)
    text = f'''from datetime import datetime

from airflow.decorators import dag, task
from airflow.providers.amazon.aws.hooks.s3 import S3Hook
from airflow.providers.slack.notifications.slack_webhook import send_slack_webhook_notification

ON_FAIL = send_slack_webhook_notification(slack_webhook_conn_id="slack_alerts", text="{{{{ dag.dag_id }}}} failed")


@dag(schedule="0 3 * * *", start_date=datetime(2024, 3, 1), catchup=False, on_failure_callback=ON_FAIL,
     tags=["{pick(SVC)}"])
def export_orders():
    @task
    def extract(ds=None) -> str:
        hook = S3Hook(aws_conn_id="aws_exports")
        key = f"orders/{{ds}}/orders.parquet"
        hook.load_file("/tmp/orders.parquet", key=key, bucket_name="{pick(PROJ).replace('_', '-')}-exports", replace=True)
        return key

    @task
    def notify(key: str) -> None:
        print("exported", key)

    notify(extract())


export_orders()
'''
    add("airflow-dag-conn-ids", "none", "py", "dags/export_orders.py", text)
    text = '''from airflow.models import Variable
from airflow.hooks.base import BaseHook


def snowflake_params() -> dict:
    conn = BaseHook.get_connection("snowflake_default")
    return {
        "account": conn.extra_dejson.get("account"),
        "user": conn.login,
        "password": conn.password,
        "warehouse": Variable.get("snowflake_warehouse", default_var="COMPUTE_WH"),
        "role": "TRANSFORMER",
    }
'''
    add("airflow-hook-connection-lookup", "none", "py", "plugins/helpers/snowflake.py", text)


def scrapy_clean():
    text = f'''BOT_NAME = "catalog"
SPIDER_MODULES = ["catalog.spiders"]
USER_AGENT = "catalog-bot/1.0 (+https://example.org/bot)"
ROBOTSTXT_OBEY = True
HTTPCACHE_ENABLED = True
HTTPCACHE_STORAGE = "scrapy.extensions.httpcache.FilesystemCacheStorage"
DUPEFILTER_CLASS = "scrapy.dupefilters.RFPDupeFilter"
# fingerprints of pages we must never refetch (legal takedown)
BLOCKED_FINGERPRINTS = {{
    "{hx(40)}",
    "{hx(40)}",
    "{hx(40)}",
}}
PROXY_URL = None  # set SCRAPY_PROXY_URL in the environment for rotating proxies
'''
    add("scrapy-settings-fingerprints", "none", "py", "catalog/settings.py", text)


def hashlib_digests():
    text = f'''import hashlib
from pathlib import Path

KNOWN_GOOD = {{
    "model.onnx": "{sha256_hex()}",
    "tokenizer.json": "{sha256_hex()}",
    "vocab.txt": "{sha256_hex()}",
}}
LEGACY_MD5 = "{hx(32)}"
SHA512_EMPTY = "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"


def verify(directory: Path) -> list[str]:
    bad = []
    for name, digest in KNOWN_GOOD.items():
        h = hashlib.sha256((directory / name).read_bytes()).hexdigest()
        if h != digest:
            bad.append(name)
    return bad
'''
    add("hashlib-artifact-digests", "none", "py", "models/verify_artifacts.py", text)
    text = f'''version https://git-lfs.github.com/spec/v1
oid sha256:{sha256_hex()}
size {R.randint(10000, 90000000)}
'''
    add("git-lfs-pointer", "none", "pkl", "models/classifier.pkl", text)
    text = "\n".join([
        "asgiref==3.8.1",
        f"django @ git+https://github.com/django/django.git@{git_sha()}",
        f"internal-auth @ git+ssh://git@github.com/{pick(PROJ)}/internal-auth.git@{git_sha()}",
        f"mylib @ https://files.example.org/mylib-1.2.0.tar.gz#sha256={sha256_hex()}",
        "-e git+https://gitlab.com/acme/tools.git@v2.1.0#egg=acme-tools",
        "sqlparse==0.5.1", ""])
    add("pip-freeze-vcs-shas", "none", "txt", "requirements-lock.txt", text)
    text = f'''"""Pinned container images used by the integration tests."""
POSTGRES_IMAGE = "postgres:16.3@sha256:{sha256_hex()}"
REDIS_IMAGE = "redis:7.2-alpine@sha256:{sha256_hex()}"
LOCALSTACK_IMAGE = "localstack/localstack:3.5@sha256:{sha256_hex()}"
MINIO_ROOT_USER = "minioadmin"  # default of the throwaway test container
'''
    add("docker-image-digests", "none", "py", "tests/integration/images.py", text)


def sqlalchemy_env():
    text = '''import os

from sqlalchemy import URL, create_engine

url = URL.create(
    "postgresql+psycopg",
    username=os.environ["PGUSER"],
    password=os.environ["PGPASSWORD"],
    host=os.environ.get("PGHOST", "localhost"),
    port=int(os.environ.get("PGPORT", "5432")),
    database=os.environ.get("PGDATABASE", "app"),
)
engine = create_engine(url, pool_pre_ping=True, echo=False)
'''
    add("sqlalchemy-url-from-env", "none", "py", "app/db/engine.py", text)
    text = '''[alembic]
script_location = migrations
# URL is taken from DATABASE_URL in env.py; this is only the offline fallback
sqlalchemy.url = driver://user:pass@localhost/dbname

[loggers]
keys = root,sqlalchemy,alembic

[logger_root]
level = WARN
handlers = console
'''
    add("alembic-ini-template-url", "none", "ini", "alembic.ini", text)


def public_keys():
    der = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100") + rbytes(256) + bytes.fromhex("0203010001")
    text = f'''"""Public key used to verify license files. Safe to ship."""
LICENSE_PUBLIC_KEY = """-----BEGIN PUBLIC KEY-----
{pem_lines(der)}
-----END PUBLIC KEY-----
"""
JWKS_URL = "https://auth.example.com/.well-known/jwks.json"
KID = "{hx(16)}"
'''
    add("public-key-pem", "none", "py", "licensing/keys.py", text)
    der = bytes.fromhex("308203") + rbytes(700)
    text = f'''-----BEGIN CERTIFICATE-----
{pem_lines(der)}
-----END CERTIFICATE-----
'''
    add("x509-certificate-pem", "none", "pem", "certs/internal-ca.pem", text)
    text = f'''{{
  "keys": [
    {{
      "kty": "RSA",
      "use": "sig",
      "alg": "RS256",
      "kid": "{hx(20)}",
      "n": "{base64.urlsafe_b64encode(rbytes(256)).decode().rstrip('=')}",
      "e": "AQAB"
    }}
  ]
}}
'''
    add("jwks-public-json", "none", "json", "tests/data/jwks.json", text)


def fernet_runtime():
    text = '''from cryptography.fernet import Fernet, MultiFernet


def rotate(tokens: list[bytes], old_keys: list[bytes]) -> tuple[bytes, list[bytes]]:
    new_key = Fernet.generate_key()
    mf = MultiFernet([Fernet(new_key), *[Fernet(k) for k in old_keys]])
    return new_key, [mf.rotate(t) for t in tokens]


def test_rotate_roundtrip():
    k = Fernet.generate_key()
    tok = Fernet(k).encrypt(b"payload")
    new, rotated = rotate([tok], [k])
    assert Fernet(new).decrypt(rotated[0]) == b"payload"
'''
    add("fernet-generated-at-runtime", "none", "py", "tests/test_key_rotation.py", text)


def misc_hard():
    cfg = {"theme": "dark", "widgets": ["orders", "revenue"], "refresh": 60, "owner": "team-%s" % pick(SVC)}
    enc = base64.b64encode(json.dumps(cfg).encode()).decode()
    text = f'''import base64
import json

# default dashboard layout, base64 so it fits in a single env var
DEFAULT_LAYOUT_B64 = "{enc}"


def default_layout() -> dict:
    return json.loads(base64.b64decode(DEFAULT_LAYOUT_B64))
'''
    add("base64-json-config", "none", "py", "dashboards/defaults.py", text)
    half = stripe_live()[:20]
    USED.add(half)
    text = f'''import os

# the prefix identifies the account in logs; the rest of the key is injected at runtime
STRIPE_KEY_PREFIX = "{half[:12]}"
STRIPE_SECRET_KEY = STRIPE_KEY_PREFIX + os.environ["STRIPE_KEY_SUFFIX"]
'''
    add("split-key-half-from-env", "none", "py", "payments/keys.py", text)
    secret = b"whsec_test_secret_for_unit_tests"
    payload = b'{"id":"evt_test","type":"invoice.paid"}'
    ts = R.randint(1700000000, 1730000000)
    sig = __import__("hmac").new(secret, f"{ts}.".encode() + payload, hashlib.sha256).hexdigest()
    text = f'''import pytest

from payments.webhooks import verify_stripe_signature

TEST_SECRET = "whsec_test_secret_for_unit_tests"
PAYLOAD = {payload!r}
TIMESTAMP = {ts}
SIGNATURE = "{sig}"


def test_valid_signature():
    header = f"t={{TIMESTAMP}},v1={{SIGNATURE}}"
    assert verify_stripe_signature(PAYLOAD, header, TEST_SECRET, now=TIMESTAMP + 5)


def test_tampered_payload():
    header = f"t={{TIMESTAMP}},v1={{SIGNATURE}}"
    with pytest.raises(ValueError):
        verify_stripe_signature(PAYLOAD + b" ", header, TEST_SECRET, now=TIMESTAMP + 5)
'''
    add("webhook-signature-test", "none", "py", "payments/tests/test_webhooks.py", text)
    text = f'''{{% load static %}}
<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css"
        integrity="sha384-{base64.b64encode(rbytes(48)).decode()}" crossorigin="anonymous">
  <script src="https://cdn.jsdelivr.net/npm/htmx.org@2.0.1/dist/htmx.min.js"
          integrity="sha384-{base64.b64encode(rbytes(48)).decode()}" crossorigin="anonymous"></script>
  <meta name="csrf-token" content="{{{{ csrf_token }}}}">
</head>
<body>{{% block content %}}{{% endblock %}}</body>
</html>
'''
    add("template-sri-hashes", "none", "html", "templates/base.html", text)
    text = f'''<form method="post" action="/accounts/login/">
  <input type="hidden" name="csrfmiddlewaretoken" value="{rs(ALNUM, 64)}">
  <input type="email" name="login" autocomplete="email">
  <input type="password" name="password" autocomplete="current-password">
  <button type="submit">Sign in</button>
</form>
'''
    add("html-snapshot-csrf-token", "none", "html", "tests/snapshots/login_form.html", text)


def api_object_ids():
    text = f'''STRIPE_EVENT = {{
    "id": "evt_{rs(ALNUM, 24)}",
    "object": "event",
    "type": "checkout.session.completed",
    "data": {{
        "object": {{
            "id": "cs_live_{rs(ALNUM, 58)}",
            "customer": "cus_{rs(ALNUM, 14)}",
            "payment_intent": "pi_{rs(ALNUM, 24)}",
            "subscription": "sub_{rs(ALNUM, 24)}",
            "amount_total": 4900,
            "currency": "eur",
        }}
    }},
    "request": {{"id": "req_{rs(ALNUM, 14)}", "idempotency_key": "{uid()}"}},
}}
'''
    add("stripe-object-ids-fixture", "none", "py", "payments/tests/fixtures.py", text)
    text = f'''{{
  "token": "REDACTED",
  "team_id": "T{rs(UP + DIG, 10)}",
  "api_app_id": "A{rs(UP + DIG, 10)}",
  "event": {{
    "type": "message",
    "channel": "C{rs(UP + DIG, 10)}",
    "user": "U{rs(UP + DIG, 10)}",
    "text": "deploy finished",
    "ts": "{R.randint(1700000000, 1730000000)}.{digits(6)}",
    "client_msg_id": "{uid()}"
  }},
  "event_id": "Ev{rs(UP + DIG, 10)}",
  "event_time": {R.randint(1700000000, 1730000000)}
}}
'''
    add("slack-event-ids-fixture", "none", "json", "tests/fixtures/slack_message_event.json", text)
    text = f'''GITHUB_APP_ID = {R.randint(100000, 999999)}
GITHUB_INSTALLATION_ID = {R.randint(10000000, 99999999)}
GITHUB_APP_PRIVATE_KEY_PATH = "/run/secrets/github_app.pem"
WEBHOOK_DELIVERY = {{
    "X-GitHub-Delivery": "{uid()}",
    "X-GitHub-Hook-ID": "{R.randint(100000000, 999999999)}",
    "X-Hub-Signature-256": "sha256={hx(64)}",
    "after": "{git_sha()}",
    "before": "{git_sha()}",
    "node_id": "{base64.b64encode(('04:User' + digits(7)).encode()).decode()}",
}}
'''
    add("github-app-ids-and-delivery", "none", "py", "tests/github/constants.py", text)
    text = '''import os

import anthropic

client = anthropic.Anthropic()  # reads ANTHROPIC_API_KEY


def summarize(doc: str) -> str:
    msg = client.messages.create(
        model="claude-3-5-haiku-20241022",
        max_tokens=300,
        messages=[{"role": "user", "content": f"Summarize:\\n{doc}"}],
        metadata={"user_id": os.environ.get("DEPLOY_ENV", "dev")},
    )
    return msg.content[0].text
'''
    add("sdk-client-from-env", "none", "py", "summaries/llm.py", text)
    text = '''import os

import requests


def session() -> requests.Session:
    s = requests.Session()
    token = os.environ["GITHUB_TOKEN"]
    s.headers["Authorization"] = f"Bearer {token}"
    s.auth = (os.environ.get("JIRA_USER", ""), os.environ.get("JIRA_API_TOKEN", ""))
    return s
'''
    add("requests-auth-from-env", "none", "py", "tools/http.py", text)


def django_migration_uuids():
    text = f'''import uuid

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [("accounts", "00{R.randint(10, 40)}_auto_20240611_0912")]

    operations = [
        migrations.CreateModel(
            name="ApiKey",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("prefix", models.CharField(max_length=8, unique=True)),
                ("hashed_key", models.CharField(max_length=128)),
                ("name", models.CharField(max_length=64)),
            ],
        ),
        migrations.RunSQL(
            "INSERT INTO accounts_apikey (id, prefix, hashed_key, name) VALUES "
            "('{uid()}', 'sys00001', '{pbkdf2_hash()}', 'system')",
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
'''
    add("django-migration-hashed-key-seed", "none", "py", "accounts/migrations/0042_apikey.py", text)


def more_nones_a():
    text = '''import os


class Config:
    SECRET_KEY = os.environ.get("FLASK_SECRET_KEY")
    SQLALCHEMY_DATABASE_URI = os.environ.get("DATABASE_URL", "sqlite:///app.db")
    SQLALCHEMY_TRACK_MODIFICATIONS = False
    SESSION_COOKIE_SAMESITE = "Lax"
    REMEMBER_COOKIE_DURATION = 60 * 60 * 24 * 14


class DevelopmentConfig(Config):
    DEBUG = True
    SECRET_KEY = "dev"


class TestingConfig(Config):
    TESTING = True
    SECRET_KEY = "testing"
    WTF_CSRF_ENABLED = False
    SQLALCHEMY_DATABASE_URI = "sqlite://"
'''
    add("flask-config-env-dev-defaults", "none", "py", "webapp/config.py", text)
    text = '''from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

AUTH_USER_MODEL = "accounts.User"
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
CSRF_COOKIE_NAME = "__Host-csrftoken"
SESSION_COOKIE_NAME = "__Host-sessionid"
SIGNING_BACKEND = "django.core.signing.TimestampSigner"
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.TokenAuthentication"],
    "DEFAULT_THROTTLE_RATES": {"anon": "30/min", "user": "600/min"},
}
'''
    add("django-base-settings-auth", "none", "py", "config/settings/base.py", text)
    text = '''from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from fastapi.security import OAuth2PasswordRequestForm

from .auth import authenticate_user, create_access_token
from .schemas import Token

router = APIRouter(prefix="/auth", tags=["auth"])


@router.post("/token", response_model=Token)
async def login(form: Annotated[OAuth2PasswordRequestForm, Depends()]) -> Token:
    user = await authenticate_user(form.username, form.password)
    if user is None:
        raise HTTPException(status_code=400, detail="Incorrect username or password")
    return Token(access_token=create_access_token({"sub": user.username}), token_type="bearer")
'''
    add("fastapi-auth-router", "none", "py", "app/routers/auth.py", text)
    text = '''from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String, func
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    token_prefix: Mapped[str] = mapped_column(String(8), index=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[str] = mapped_column(String(255), default="read")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
'''
    add("sqlalchemy-model-token-columns", "none", "py", "app/models/api_token.py", text)
    text = '''from pydantic import BaseModel, ConfigDict, Field


class WebhookCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://example.com/hooks/orders",
                    "secret": "<generated-on-create>",
                    "events": ["order.created", "order.refunded"],
                }
            ]
        }
    )

    url: str
    secret: str | None = Field(default=None, description="Leave empty to let the server generate one")
    events: list[str]
'''
    add("pydantic-schema-examples", "none", "py", "app/schemas/webhooks.py", text)
    text = '''import pytest


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.SECRET_KEY = "tests-only"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.STRIPE_SECRET_KEY = "sk_test_dummy"


@pytest.fixture
def admin_client_logged_in(client, admin_user):
    client.force_login(admin_user)
    return client
'''
    add("pytest-django-settings-override", "none", "py", "conftest.py", text)
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rbytes(300)).decode()
    cells = [code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.title(\"latency p95\")",
                       [{"data": {"image/png": png, "text/plain": ["<Figure size 640x480 with 1 Axes>"]}, "metadata": {}, "output_type": "display_data"}], n=1)]
    add("jupyter-notebook-png-output", "none", "ipynb", "notebooks/latency.ipynb", nb(cells))
    cells = [code_cell("from getpass import getpass\nimport os\nos.environ[\"OPENAI_API_KEY\"] = getpass(\"OpenAI key: \")", [stream("OpenAI key: ··········")], n=1),
             code_cell("from langchain_openai import ChatOpenAI\nllm = ChatOpenAI(model=\"gpt-4o-mini\", temperature=0)", n=2)]
    add("jupyter-notebook-getpass", "none", "ipynb", "notebooks/rag_demo.ipynb", nb(cells))
    text = '''DJANGO_SETTINGS_MODULE=config.settings.test
DATABASE_URL=postgres://localhost/test_app
REDIS_URL=redis://localhost:6379/15
SECRET_KEY=test
STRIPE_SECRET_KEY=sk_test_unit
SENTRY_DSN=
CELERY_TASK_ALWAYS_EAGER=true
'''
    add("dotenv-test-fake-values", "none", "env", ".env.test", text)
    text = '''-r base.txt
pytest==8.3.2
pytest-django==4.8.0
pytest-cov==5.0.0
factory-boy==3.3.0
faker==26.0.0
vcrpy==6.0.1
responses==0.25.3
mypy==1.11.1
django-stubs[compatible-mypy]==5.0.4
ruff==0.5.5
'''
    add("requirements-dev-plain", "none", "txt", "requirements/dev.txt", text)
    text = '''services:
  web:
    build: .
    command: python manage.py runserver 0.0.0.0:8000
    env_file: .env
    environment:
      DATABASE_URL: postgres://app:${POSTGRES_PASSWORD}@db:5432/app
      SECRET_KEY: ${DJANGO_SECRET_KEY:-dev-insecure}
    depends_on: [db, redis]
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: app
      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}
  redis:
    image: redis:7
  worker:
    build: .
    command: celery -A config worker -l info
    env_file: .env
'''
    add("docker-compose-env-interpolation", "none", "yaml", "docker-compose.yml", text)


def more_nones_b():
    text = '''import hashlib
import json
from functools import wraps

from django.core.cache import cache


def cache_key(prefix: str, *args, **kwargs) -> str:
    raw = json.dumps([args, kwargs], sort_keys=True, default=str)
    return f"{prefix}:{hashlib.md5(raw.encode(), usedforsecurity=False).hexdigest()}"


def cached(prefix: str, ttl: int = 300):
    def deco(fn):
        @wraps(fn)
        def inner(*a, **kw):
            key = cache_key(prefix, *a, **kw)
            hit = cache.get(key)
            if hit is not None:
                return hit
            val = fn(*a, **kw)
            cache.set(key, val, ttl)
            return val
        return inner
    return deco
''' + f'''

def test_cache_key_stable():
    assert cache_key("rates", "EUR", day="2024-06-01") == "rates:{hx(32)}"
'''
    add("cache-key-md5-helper", "none", "py", "core/caching.py", text)
    text = '''# German translations
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: de\\n"

#: accounts/templates/api_keys.html:12
msgid "API key"
msgstr "API-Schlüssel"

#: accounts/templates/api_keys.html:20
msgid "Your secret token is shown only once."
msgstr "Ihr geheimes Token wird nur einmal angezeigt."

#: accounts/forms.py:44
msgid "Password"
msgstr "Passwort"

#: accounts/forms.py:51
msgid "Enter the 6-digit code from your authenticator app."
msgstr "Geben Sie den 6-stelligen Code aus Ihrer Authenticator-App ein."
'''
    add("gettext-po-token-strings", "none", "po", "locale/de/LC_MESSAGES/django.po", text)
    doc = {"openapi": "3.1.0", "info": {"title": "Orders API", "version": "1.%d.0" % R.randint(0, 9)},
           "components": {"securitySchemes": {"ApiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                                              "BearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
                          "schemas": {"Token": {"type": "object", "properties": {"access_token": {"type": "string", "example": "eyJhbGciOi..."},
                                                                                  "token_type": {"type": "string", "example": "bearer"}}}}},
           "security": [{"ApiKeyAuth": []}], "paths": {}}
    add("openapi-security-schemes", "none", "json", "openapi.json", json.dumps(doc, indent=2) + "\n")
    text = '''import re
import secrets

from hypothesis import given, strategies as st

from accounts.tokens import generate_api_key, parse_api_key

KEY_RE = re.compile(r"^acct_(live|test)_[A-Za-z0-9]{32}$")


def test_generated_key_format():
    for _ in range(50):
        assert KEY_RE.match(generate_api_key(live=True))


@given(st.text(min_size=0, max_size=80))
def test_parse_rejects_garbage(s):
    assert parse_api_key(s) is None or KEY_RE.match(s)


def test_token_urlsafe_length():
    assert len(secrets.token_urlsafe(32)) == 43
'''
    add("token-format-regex-tests", "none", "py", "accounts/tests/test_tokens.py", text)
    results = {}
    for _ in range(3):
        results[hx(40)] = {"type": pick(["Secret Keyword", "Hex High Entropy String", "Base64 High Entropy String"]),
                           "line_number": R.randint(3, 200), "is_verified": False}
    doc = {"version": "1.5.0", "plugins_used": [{"name": "AWSKeyDetector"}, {"name": "Base64HighEntropyString", "limit": 4.5}],
           "filters_used": [{"path": "detect_secrets.filters.allowlist.is_line_allowlisted"}],
           "results": {"tests/test_crypto.py": [dict(v, hashed_secret=k, filename="tests/test_crypto.py") for k, v in results.items()]},
           "generated_at": "2024-07-%02dT10:11:12Z" % R.randint(1, 28)}
    add("detect-secrets-baseline", "none", "baseline", ".secrets.baseline", json.dumps(doc, indent=2) + "\n")
    text = f'''repos:
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: {git_sha()}  # frozen: v4.6.0
    hooks:
      - id: detect-private-key
      - id: check-yaml
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: {git_sha()}  # frozen: v0.5.5
    hooks:
      - id: ruff
        args: [--fix]
      - id: ruff-format
  - repo: https://github.com/Yelp/detect-secrets
    rev: v1.5.0
    hooks:
      - id: detect-secrets
        args: ["--baseline", ".secrets.baseline"]
'''
    add("pre-commit-config-frozen-shas", "none", "yaml", ".pre-commit-config.yaml", text)
    text = '''name: release
on:
  push:
    tags: ["v*"]
jobs:
  pypi:
    runs-on: ubuntu-latest
    environment: pypi
    permissions:
      id-token: write
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: python -m pip install build && python -m build
      - uses: pypa/gh-action-pypi-publish@release/v1
      - name: notify
        env:
          SLACK_WEBHOOK_URL: ${{ secrets.SLACK_WEBHOOK_URL }}
          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
        run: python scripts/notify_release.py "${GITHUB_REF_NAME}"
'''
    add("github-workflow-secrets-refs", "none", "yaml", ".github/workflows/release.yml", text)
    text = '''# syntax=docker/dockerfile:1.7
FROM python:3.12-slim AS build
ARG PIP_INDEX_URL
ENV PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /app
COPY requirements.txt .
RUN --mount=type=secret,id=pip_conf,target=/etc/pip.conf \\
    pip install --require-hashes -r requirements.txt
COPY . .
RUN python -m compileall -q src

FROM python:3.12-slim
COPY --from=build /usr/local /usr/local
COPY --from=build /app /app
USER 10001
CMD ["gunicorn", "config.wsgi", "-b", "0.0.0.0:8000"]
'''
    add("dockerfile-build-secret-mount", "none", "dockerfile", "Dockerfile", text)
    text = f'''apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: {pick(SVC)}-env
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: vault-backend
    kind: ClusterSecretStore
  target:
    name: {pick(SVC)}-env
  data:
    - secretKey: DJANGO_SECRET_KEY
      remoteRef:
        key: kv/data/{pick(SVC)}/prod
        property: django_secret_key
    - secretKey: STRIPE_SECRET_KEY
      remoteRef:
        key: kv/data/{pick(SVC)}/prod
        property: stripe_secret_key
'''
    add("k8s-external-secret-refs", "none", "yaml", "deploy/k8s/external-secret.yaml", text)
    text = '''import os

import sentry_sdk
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.integrations.fastapi import FastApiIntegration

if dsn := os.getenv("SENTRY_DSN"):
    sentry_sdk.init(
        dsn=dsn,
        integrations=[FastApiIntegration(), CeleryIntegration()],
        traces_sample_rate=float(os.getenv("SENTRY_TRACES_RATE", "0.02")),
        release=os.getenv("GIT_SHA", "unknown"),
    )
'''
    add("sentry-init-from-env", "none", "py", "app/sentry.py", text)
    text = '''import hashlib

from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import Response


class ETagMiddleware(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        response = await call_next(request)
        if request.method != "GET" or response.status_code != 200:
            return response
        body = b"".join([chunk async for chunk in response.body_iterator])
        etag = '"' + hashlib.sha1(body, usedforsecurity=False).hexdigest() + '"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        return Response(body, status_code=200, headers={**response.headers, "ETag": etag})
''' + f'''

EXAMPLE_ETAG = '"{hx(40)}"'
'''
    add("etag-middleware", "none", "py", "app/middleware/etag.py", text)


def more_nones_c():
    text = f'''from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.test import TestCase, override_settings


@override_settings(SECRET_KEY="test-signing-key-not-used-anywhere")
class ResetTokenTests(TestCase):
    # sample token as produced by the generator in Django 5 (timestamp-hash)
    SAMPLE = "{rs(LO + DIG, 6)}-{hx(32)}"

    def test_invalid_sample(self):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.create_user("x", password="pw-12345-tests")
        self.assertFalse(PasswordResetTokenGenerator().check_token(user, self.SAMPLE))
'''
    add("django-reset-token-test", "none", "py", "accounts/tests/test_password_reset.py", text)
    text = f'''import pytest

from licensing.validate import LicenseError, validate

INVALID = [
    "XXXX-XXXX-XXXX-XXXX",
    "0000-0000-0000-0000",
    "{rs(UP + DIG, 4)}-{rs(UP + DIG, 4)}-{rs(UP + DIG, 4)}",
    "",
]


@pytest.mark.parametrize("key", INVALID)
def test_invalid_license_keys(key):
    with pytest.raises(LicenseError):
        validate(key)
'''
    add("license-key-validator-tests", "none", "py", "licensing/tests/test_validate.py", text)
    text = f'''import shortuuid
from nanoid import generate


def test_ids_are_stable_in_snapshots(snapshot):
    ids = {{
        "order": "{rs(ALNUM, 22)}",
        "short": "{rs('23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 22)}",
        "nano": "{rs(URLSAFE, 21)}",
        "cursor": "{base64.urlsafe_b64encode(json.dumps({'id': R.randint(1, 99999), 'ts': R.randint(1700000000, 1730000000)}).encode()).decode()}",
    }}
    assert ids == snapshot


def test_lengths():
    assert len(shortuuid.uuid()) == 22
    assert len(generate()) == 21
'''
    add("random-id-snapshot-values", "none", "py", "tests/test_ids.py", text)
    text = f'''import pytest

from wallets.validate import is_valid_address

VALID = [
    "0x{hx(40)}",
    "bc1q{rs('023456789acdefghjklmnpqrstuvwxyz', 38)}",
]
TX_HASH = "0x{hx(64)}"


@pytest.mark.parametrize("addr", VALID)
def test_valid(addr):
    assert is_valid_address(addr)
'''
    add("wallet-addresses-tests", "none", "py", "wallets/tests/test_validate.py", text)
    n = int.from_bytes(rbytes(128), "big") | 1
    text = f'''from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers

# public modulus of the vendor's signing key (from their published JWKS)
VENDOR_N = int(
    "{n:x}",
    16,
)
VENDOR_E = 65537


def vendor_public_key():
    return RSAPublicNumbers(VENDOR_E, VENDOR_N).public_key()
'''
    add("rsa-public-modulus", "none", "py", "integrations/vendor_key.py", text)
    text = f'''# serializer version: 1
# name: test_invoice_export
  dict({{
    'checksum': '{sha256_hex()}',
    'export_id': '{uid()}',
    'rows': 42,
    'signature': '{base64.b64encode(rbytes(64)).decode()}',
  }})
# ---
# name: test_invoice_export_headers
  dict({{
    'content-md5': '{base64.b64encode(rbytes(16)).decode()}',
    'x-request-id': '{hx(32)}',
  }})
# ---
'''
    add("syrupy-snapshot-hashes", "none", "ambr", "tests/__snapshots__/test_export.ambr", text)
    text = '''[run]
branch = True
source = src
omit =
    */migrations/*
    */settings/*
    src/*/secrets_loader.py

[report]
show_missing = True
skip_covered = True
exclude_lines =
    pragma: no cover
    if TYPE_CHECKING:
    raise NotImplementedError
'''
    add("coveragerc", "none", "ini", ".coveragerc", text)
    text = '''Auth module
===========

.. automodule:: acme.auth
   :members: issue_token, verify_token, rotate_secret

.. function:: issue_token(subject, *, secret=None, ttl=900)

   Issue a signed token for ``subject``. When ``secret`` is ``None`` the
   value of the ``ACME_SIGNING_SECRET`` setting is used.

   :param str subject: user id
   :param bytes secret: signing key; at least 32 bytes
   :returns: token string such as ``v1.<payload>.<signature>``
'''
    add("rst-api-reference-auth", "none", "rst", "docs/api/auth.rst", text)
    verifier = rs(URLSAFE, 43)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    text = f'''from oauth.pkce import code_challenge


def test_s256_challenge():
    verifier = "{verifier}"
    assert code_challenge(verifier) == "{challenge}"


def test_state_is_random():
    from oauth.pkce import new_state

    assert new_state() != new_state()
'''
    add("pkce-test-vector", "none", "py", "oauth/tests/test_pkce.py", text)
    cells = [code_cell("import ipywidgets as w\nw.IntSlider(value=3, min=0, max=10)",
                       [{"data": {"application/vnd.jupyter.widget-view+json": {"model_id": hx(32), "version_major": 2, "version_minor": 0},
                                  "text/plain": ["IntSlider(value=3, max=10)"]}, "metadata": {}, "output_type": "display_data"}], n=1)]
    add("jupyter-notebook-widget-ids", "none", "ipynb", "notebooks/interactive_threshold.ipynb", nb(cells))
    text = f'''[pytest]
DJANGO_SETTINGS_MODULE = config.settings.test
addopts = --reuse-db -p no:cacheprovider --randomly-seed={R.randint(1000, 99999)}
markers =
    vcr: uses recorded HTTP cassettes
    slow: long running
env =
    SECRET_KEY=pytest-dummy
    AWS_ACCESS_KEY_ID=testing
    AWS_SECRET_ACCESS_KEY=testing
'''
    add("pytest-ini-dummy-env", "none", "ini", "pytest.ini", text)
    text = f'''"""Feature flag definitions (unleash-style)."""
FLAGS = [
    {{"name": "checkout.new_token_flow", "enabled": False, "strategy": "gradualRollout", "groupId": "{uid()}"}},
    {{"name": "auth.passkeys", "enabled": True, "strategy": "userWithId", "userIds": ["{uid()}", "{uid()}"]}},
    {{"name": "billing.secret_menu", "enabled": False}},
]
FLAG_CACHE_KEY = "flags:v3:{hx(8)}"
'''
    add("feature-flag-definitions", "none", "py", "flags/definitions.py", text)


GENERATORS = [
    django_prod_secret_key, django_db_password, flask_config_class, fastapi_openai, pydantic_settings_default,
    celery_broker, rq_dramatiq_redis, alembic_env_url, airflow_connection, airflow_cfg_fernet, scrapy_settings,
    notebook_secrets, vcr_cassette_auth, requirements_private_index, pip_conf_creds, pypirc_token, dotenv_prod,
    gcp_service_account, boto3_hardcoded, azure_storage, requests_session_auth, slack_webhook_logging,
    sentry_legacy, twilio_clients, sendgrid_mail, obscured_base64, obscured_split, obscured_hex,
    dataclass_default, constants_module, enum_member_secret, dict_literal_config, pem_in_repo, tox_nox_secret,
    docstring_real_key, client_secrets_json, msal_app, conftest_real_key, django_fixture_socialapp,
    rst_doc_real_key, setup_cfg_secret, settings_vault_fallback, more_secrets,
    requirements_hashes, poetry_lock, pipfile_uv_lock, alembic_migrations, django_fixtures_hashes,
    init_version_hash, hmac_vectors, base64_blobs, token_named_constants, uuid_ulid_fixtures,
    vcr_cassettes_clean, stripe_publishable, aws_resource_ids, oauth_client_id_only, redacted_logs,
    crypto_nonce_salt, notebook_hash_outputs, changelog_rst, placeholder_keys, django_secret_from_env,
    pydantic_no_default, conftest_fake_tokens, factory_boy, sphinx_docs, build_configs, secret_lookups,
    logging_config, type_stubs, doctests, celery_airflow_env, scrapy_clean, hashlib_digests, sqlalchemy_env,
    public_keys, fernet_runtime, misc_hard, api_object_ids, django_migration_uuids,
    more_nones_a, more_nones_b, more_nones_c,
]


def main():
    for g in GENERATORS:
        g()
    # shuffle deterministically so classes are interleaved
    R.shuffle(CASES)
    texts = [c["text"] for c in CASES]
    assert len(set(texts)) == len(texts), "duplicate case text"
    for cred, own in CREDS:
        holders = [t for t in texts if cred in t]
        assert holders == [own], ("credential reused across cases", cred[:16])
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator9.jsonl")
    with open(out, "w", encoding="utf-8") as fh:
        for c in CASES:
            fh.write(json.dumps(c, ensure_ascii=False) + "\n")
    n_sec = sum(c["label"] == "secret" for c in CASES)
    print(f"wrote {len(CASES)} cases ({n_sec} secret, {len(CASES) - n_sec} none, "
          f"{len({c['class'] for c in CASES})} classes) to {out}")


if __name__ == "__main__":
    main()
