import datetime
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


@pytest.mark.parametrize("field", ["user", "password", "host", "dbname"])
def test_configured_url_is_the_deployment_credential(field, deployed):
    # The job must use exactly the warehouse login the deployment provides
    # (this run's fresh one): a URL kept in the code, masked, or made up
    # fails.
    cfg = db.parse_dsn(db.DATABASE_URL)
    assert cfg["scheme"] == "postgresql"
    assert cfg.get(field) == deployed[field], f"DATABASE_URL's {field} is not the deployment's"


def test_connect_logs_in_with_the_deployment_credentials(monkeypatch, deployed):
    seen = {}
    fake = types.ModuleType("psycopg")
    fake.connect = lambda **kw: seen.update(kw) or "conn"
    monkeypatch.setitem(sys.modules, "psycopg", fake)
    assert db.connect() == "conn"
    assert seen == deployed


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
