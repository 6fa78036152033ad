CREATE TABLE customers (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    email        TEXT NOT NULL UNIQUE,
    stripe_id    TEXT,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
