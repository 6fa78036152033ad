"""Database access for the rollup job.

The job speaks plain DB-API so it runs on SQLite locally and on PostgreSQL
in production (psycopg is only imported when a postgres URL is used).
"""
import sqlite3
import urllib.parse

{{slot:replica:1}}{{slot:dsn:1}}
{{slot:dsn:2}}SCHEMES = ("sqlite", "postgres", "postgresql")


def parse_dsn(url: str) -> dict:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ValueError(f"unsupported database scheme: {parts.scheme!r}")
    if parts.scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////abs/path.db, as in SQLAlchemy
        return {"scheme": "sqlite", "path": parts.path[1:] or ":memory:"}
    return {
        "scheme": "postgresql",
        "user": urllib.parse.unquote(parts.username or ""),
        "password": urllib.parse.unquote(parts.password or ""),
        "host": parts.hostname or "localhost",
        "port": parts.port or 5432,
        "dbname": parts.path.lstrip("/"),
    }


{{slot:replica:2}}def redact_dsn(url: str) -> str:
    """The URL with any password replaced, safe for logs."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


{{slot:replica:3}}def connect(url: str | None = None):
    cfg = parse_dsn(DATABASE_URL if url is None else url)
    if cfg["scheme"] == "sqlite":
        return sqlite3.connect(cfg["path"])
    import psycopg  # noqa: PLC0415 - optional production dependency
    return psycopg.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                           user=cfg["user"], password=cfg["password"])
{{slot:dsn:3}}