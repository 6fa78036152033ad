-- ledger entries imported from bank statements
CREATE TABLE IF NOT EXISTS entries (
    bank_ref   TEXT PRIMARY KEY,
    booked_on  DATE NOT NULL,
    account    INTEGER NOT NULL,
    amount     NUMERIC(14, 2) NOT NULL,
    currency   CHAR(3) NOT NULL,
    memo       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_booked_on ON entries (booked_on);
