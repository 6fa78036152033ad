"""Parse bank CSV exports and write deduplicated ledger entries."""
import csv
import dataclasses
import datetime
import decimal
import io
import sqlite3

SCHEMA = """CREATE TABLE IF NOT EXISTS entries (
    bank_ref TEXT PRIMARY KEY, booked_on TEXT NOT NULL, account INTEGER NOT NULL,
    amount TEXT NOT NULL, currency TEXT NOT NULL, memo TEXT NOT NULL)"""


@dataclasses.dataclass(frozen=True)
class Entry:
    bank_ref: str
    booked_on: datetime.date
    amount: decimal.Decimal
    currency: str
    memo: str


def parse_amount(text: str) -> decimal.Decimal:
    """Bank exports use '1.234,56' (de-DE); accept '1234.56' too."""
    text = text.strip()
    if "," in text:
        text = text.replace(".", "").replace(",", ".")
    return decimal.Decimal(text)


def parse_csv(text: str, default_currency: str = "EUR") -> list[Entry]:
    rows = csv.DictReader(io.StringIO(text), delimiter=";")
    out = []
    for row in rows:
        out.append(Entry(
            bank_ref=row["Reference"].strip(),
            booked_on=datetime.datetime.strptime(row["Booking date"], "%d.%m.%Y").date(),
            amount=parse_amount(row["Amount"]),
            currency=(row.get("Currency") or default_currency).strip(),
            memo=" ".join(row.get("Purpose", "").split()),
        ))
    return out


def write_entries(conn: sqlite3.Connection, account: int, entries: list[Entry]) -> int:
    conn.execute(SCHEMA)
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?, ?)",
        [(e.bank_ref, e.booked_on.isoformat(), account, str(e.amount), e.currency, e.memo)
         for e in entries])
    conn.commit()
    return conn.total_changes - before
