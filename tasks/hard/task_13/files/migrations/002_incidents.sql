CREATE TABLE incidents (
    id          BIGSERIAL PRIMARY KEY,
    opened_at   TIMESTAMPTZ NOT NULL,
    closed_at   TIMESTAMPTZ,
    summary     TEXT
);
