CREATE TABLE journal_entries (
    id          BIGSERIAL PRIMARY KEY,
    reference   TEXT NOT NULL UNIQUE,
    posted_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE journal_lines (
    entry_id    BIGINT NOT NULL REFERENCES journal_entries(id),
    account     TEXT NOT NULL,
    debit       BIGINT NOT NULL DEFAULT 0,
    credit      BIGINT NOT NULL DEFAULT 0
);
