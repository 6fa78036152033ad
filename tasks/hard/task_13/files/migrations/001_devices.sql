CREATE TABLE devices (
    id          TEXT PRIMARY KEY,
    site        TEXT NOT NULL,
    installed   DATE NOT NULL,
    retired     DATE
);
