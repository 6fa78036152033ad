"""ledger-sync command line."""
import argparse
import sqlite3
import sys

from . import alerts, importer, settings


def main(argv=None, send=None) -> int:
    parser = argparse.ArgumentParser(prog="ledger_sync")
    sub = parser.add_subparsers(dest="cmd", required=True)
    imp = sub.add_parser("import")
    imp.add_argument("csv")
    imp.add_argument("--account", type=int, required=True)
    imp.add_argument("--database")
    args = parser.parse_args(argv)

    cp = settings.load()
    with open(args.csv, encoding="utf-8") as fh:
        entries = importer.parse_csv(fh.read(), cp.get("ledger", "default_currency"))
    conn = sqlite3.connect(args.database or cp.get("ledger", "database"))
    written = importer.write_entries(conn, args.account, entries)
    for e in alerts.large(entries, settings.alert_threshold(cp)):
        req = alerts.sms_request(cp, f"ledger-sync: {e.amount} {e.currency} {e.memo}")
        if send:
            send(req)
    print(f"{written} new of {len(entries)} entries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
