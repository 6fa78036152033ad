import datetime
import re
import sys
import types

import pytest

from etl import db, rollup


def pg(user, pw, host="db.local", port="6543", name="metrics"):
    # assembled at runtime so the test file holds no credential-shaped literal
    return "postgresql" + "://" + user + ":" + pw + "@" + host + ":" + port + "/" + name


def test_parse_postgres_dsn():
    cfg = db.parse_dsn(pg("alice", "s%40fe"))
    assert cfg == {"scheme": "postgresql", "user": "alice", "password": "s@fe",
                   "host": "db.local", "port": 6543, "dbname": "metrics"}


def test_parse_sqlite_dsn():
    assert db.parse_dsn("sqlite:///metrics.db") == {"scheme": "sqlite", "path": "metrics.db"}
    assert db.parse_dsn("sqlite://")["path"] == ":memory:"


def test_unknown_scheme():
    with pytest.raises(ValueError):
        db.parse_dsn("mysql://h/db")


def test_redact_hides_password():
    assert db.redact_dsn(pg("bob", "hunter2")) == "postgresql://bob:***@db.local:6543/metrics"
    assert db.redact_dsn("sqlite:///x.db") == "sqlite:///x.db"


def test_configured_url_is_supported():
    cfg = db.parse_dsn(db.DATABASE_URL)
    assert cfg["scheme"] in ("sqlite", "postgresql")
    if cfg.get("password"):
        assert cfg["password"] not in db.redact_dsn(db.DATABASE_URL)


# Masked or placeholder values are not credentials: a "fix" that leaves the
# job unable to log in must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)


def looks_real(value: str) -> bool:
    return (bool(re.fullmatch(r"[A-Za-z0-9._~%-]{12,128}", value or ""))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


@pytest.mark.parametrize("field", ["user", "password", "host", "dbname"])
def test_configured_url_is_a_real_warehouse(field):
    # The job must really be configured: a PostgreSQL URL with a login,
    # whether it comes from the code (today) or from DATABASE_URL.
    cfg = db.parse_dsn(db.DATABASE_URL)
    assert cfg["scheme"] == "postgresql"
    assert cfg[field], f"DATABASE_URL has no {field}"
    assert looks_real(cfg["password"]), "DATABASE_URL carries no usable password"


def test_connect_logs_in_with_configured_credentials(monkeypatch):
    seen = {}
    fake = types.ModuleType("psycopg")
    fake.connect = lambda **kw: seen.update(kw) or "conn"
    monkeypatch.setitem(sys.modules, "psycopg", fake)
    assert db.connect() == "conn"
    cfg = db.parse_dsn(db.DATABASE_URL)
    assert seen == {"host": cfg["host"], "port": cfg["port"], "dbname": cfg["dbname"],
                    "user": cfg["user"], "password": cfg["password"]}
    assert looks_real(seen["password"])


def test_rollup_counts_one_day(conn):
    assert rollup.rollup(conn, datetime.date(2025, 3, 14)) == 2
    rows = conn.execute("SELECT day, name, events, users FROM daily_metrics ORDER BY name").fetchall()
    assert rows == [("2025-03-14", "checkout", 1, 1), ("2025-03-14", "login", 3, 2)]


def test_rollup_is_idempotent(conn):
    rollup.rollup(conn, datetime.date(2025, 3, 14))
    rollup.rollup(conn, datetime.date(2025, 3, 14))
    assert conn.execute("SELECT COUNT(*) FROM daily_metrics").fetchone() == (2,)


def test_main_with_sqlite_file(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert rollup.main(["--day", "2025-03-14", "--database-url", url]) == 0
    assert "0 metrics written" in capsys.readouterr().err
