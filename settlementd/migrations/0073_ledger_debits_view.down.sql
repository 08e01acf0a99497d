-- Back to a debit stored twice: the debit rows are written into the ledger
-- table again from debits (new ids, after every existing row; created_at is
-- the downgrade's time).
DROP VIEW IF EXISTS account_balances;
DROP VIEW IF EXISTS account_ledger;
DROP FUNCTION IF EXISTS account_ledger_insert();
DROP TRIGGER IF EXISTS debits_append_only ON debits;

ALTER TABLE account_ledger_entries RENAME TO account_ledger;
ALTER TABLE account_ledger DROP CONSTRAINT account_ledger_kind_check;
ALTER TABLE account_ledger ADD CONSTRAINT account_ledger_kind_check CHECK (kind IN ('deposit', 'debit', 'refund',
    'bundle_grant', 'bundle_debit', 'bundle_refund', 'adjustment'));

INSERT INTO account_ledger (account, kind, ref, units, calls, ts)
SELECT account, CASE payer WHEN 'credits' THEN 'debit' ELSE 'bundle_debit' END, id, -amount_units, -calls, ts
FROM debits WHERE payer IN ('credits', 'bundle')
ORDER BY ts, id;

CREATE VIEW account_balances AS
SELECT account,
       COALESCE(sum(units) FILTER (WHERE kind IN ('deposit', 'debit', 'refund', 'adjustment')), 0)::bigint AS credit_units,
       COALESCE(-sum(units) FILTER (WHERE kind IN ('debit', 'refund')), 0)::bigint                        AS spent_units,
       COALESCE(sum(calls) FILTER (WHERE kind LIKE 'bundle\_%'), 0)::bigint                               AS bundle_calls
FROM account_ledger
GROUP BY account;
