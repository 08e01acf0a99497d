-- Schema bookkeeping only; the core tables arrive in 0002+.
CREATE TABLE IF NOT EXISTS settlement_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
