-- The account ledger: every change to a prepaid balance (key_… accounts, in
-- units) or to a wallet's x402 bundle (0x… accounts, in calls). Append-only
-- and idempotent: (kind, ref) is unique, so a deposit log, a debit or a refund
-- is counted once however often it is delivered. Balances are sums of it.
--   deposit        +units          ref = tx hash:log index (deposit listener)
--   debit          -units, -calls  ref = request id
--   refund         +units, +calls  ref = request id
--   bundle_grant   +units, +calls  ref = settlement tx hash
--   bundle_debit   -units, -calls  ref = request id
--   bundle_refund  +units, +calls  ref = request id
CREATE TABLE account_ledger (
    id         bigserial   PRIMARY KEY,
    account    text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('deposit', 'debit', 'refund',
                                   'bundle_grant', 'bundle_debit', 'bundle_refund')),
    ref        text        NOT NULL,
    units      bigint      NOT NULL,
    calls      bigint      NOT NULL DEFAULT 0,
    ts         timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (kind, ref)
);
CREATE INDEX account_ledger_account ON account_ledger (account);

-- Ledgers are corrected by new entries, never by editing old ones.
CREATE FUNCTION forbid_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
CREATE TRIGGER account_ledger_append_only BEFORE UPDATE OR DELETE ON account_ledger
    FOR EACH ROW EXECUTE FUNCTION forbid_ledger_change();

-- Balances derived from the ledger (what `settlementd reconcile` writes to Redis).
CREATE VIEW account_balances AS
SELECT account,
       COALESCE(sum(units) FILTER (WHERE kind IN ('deposit', 'debit', 'refund')), 0)::bigint    AS credit_units,
       COALESCE(-sum(units) FILTER (WHERE kind IN ('debit', 'refund')), 0)::bigint              AS spent_units,
       COALESCE(sum(calls) FILTER (WHERE kind LIKE 'bundle\_%'), 0)::bigint                     AS bundle_calls
FROM account_ledger
GROUP BY account;
