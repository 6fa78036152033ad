"""Aggregate raw events into daily_metrics."""
import argparse
import datetime
import sys

from . import db

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (ts TEXT NOT NULL, name TEXT NOT NULL, user_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS daily_metrics (
    day TEXT NOT NULL, name TEXT NOT NULL, events INTEGER NOT NULL, users INTEGER NOT NULL,
    PRIMARY KEY (day, name));
"""


def ensure_schema(conn) -> None:
    conn.executescript(SCHEMA)


def rollup(conn, day: datetime.date) -> int:
    """Recompute one day; returns the number of metric rows written."""
    start = day.isoformat()
    end = (day + datetime.timedelta(days=1)).isoformat()
    rows = conn.execute(
        "SELECT name, COUNT(*), COUNT(DISTINCT user_id) FROM events "
        "WHERE ts >= ? AND ts < ? GROUP BY name ORDER BY name", (start, end)).fetchall()
    conn.execute("DELETE FROM daily_metrics WHERE day = ?", (start,))
    conn.executemany("INSERT INTO daily_metrics VALUES (?, ?, ?, ?)",
                     [(start, name, n, users) for name, n, users in rows])
    conn.commit()
    return len(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="etl.rollup")
    parser.add_argument("--day", type=datetime.date.fromisoformat, required=True)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args(argv)
    conn = db.connect(args.database_url)
    ensure_schema(conn)
    n = rollup(conn, args.day)
    print(f"{args.day}: {n} metrics written to {db.redact_dsn(args.database_url or db.DATABASE_URL)}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
