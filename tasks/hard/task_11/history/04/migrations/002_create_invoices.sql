CREATE TABLE invoices (
    id            BIGSERIAL PRIMARY KEY,
    customer_id   TEXT NOT NULL REFERENCES customers(id),
    issued_on     DATE NOT NULL,
    due_on        DATE NOT NULL,
    currency      CHAR(3) NOT NULL DEFAULT 'usd',
    total_cents   BIGINT NOT NULL CHECK (total_cents >= 0)
);
CREATE INDEX invoices_customer_idx ON invoices (customer_id);
