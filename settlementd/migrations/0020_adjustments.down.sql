-- The ledger is append-only (a trigger forbids DELETE), so adjustment rows
-- written while 0020 was applied stay; the restored CHECK is NOT VALID so it
-- binds new rows only, and the restored view leaves them out of balances
-- again — run `settlementd reconcile` after a downgrade.
CREATE OR REPLACE VIEW account_balances AS
SELECT account,
       COALESCE(sum(units) FILTER (WHERE kind IN ('deposit', 'debit', 'refund')), 0)::bigint    AS credit_units,
       COALESCE(-sum(units) FILTER (WHERE kind IN ('debit', 'refund')), 0)::bigint              AS spent_units,
       COALESCE(sum(calls) FILTER (WHERE kind LIKE 'bundle\_%'), 0)::bigint                     AS bundle_calls
FROM account_ledger
GROUP BY account;

ALTER TABLE account_ledger DROP CONSTRAINT account_ledger_kind_check;
ALTER TABLE account_ledger ADD CONSTRAINT account_ledger_kind_check CHECK (kind IN ('deposit', 'debit', 'refund',
    'bundle_grant', 'bundle_debit', 'bundle_refund')) NOT VALID;

DROP TABLE IF EXISTS adjustments;
