-- Gateway admin adjustments: an operator's manual credit (+units) or debit
-- (-units) of a key_… account, with the reason, as the gateway's admin
-- script wrote it to the stream (event type "adjustment", id = its
-- idempotency id). The ledger row is written from the same statement's
-- RETURNING, like debits and refunds:
--   adjustment     ±units          ref = adjustment id
-- An adjustment moves the balance (credit_units) but is not spending, so
-- spent_units is unchanged.
CREATE TABLE adjustments (
    id      text        PRIMARY KEY,
    account text        NOT NULL,
    units   bigint      NOT NULL CHECK (units <> 0),
    reason  text        NOT NULL,
    ts      timestamptz NOT NULL
);
CREATE INDEX adjustments_account ON adjustments (account);

ALTER TABLE account_ledger DROP CONSTRAINT account_ledger_kind_check;
ALTER TABLE account_ledger ADD CONSTRAINT account_ledger_kind_check CHECK (kind IN ('deposit', 'debit', 'refund',
    'bundle_grant', 'bundle_debit', 'bundle_refund', 'adjustment'));

CREATE OR REPLACE VIEW account_balances AS
SELECT account,
       COALESCE(sum(units) FILTER (WHERE kind IN ('deposit', 'debit', 'refund', 'adjustment')), 0)::bigint AS credit_units,
       COALESCE(-sum(units) FILTER (WHERE kind IN ('debit', 'refund')), 0)::bigint                        AS spent_units,
       COALESCE(sum(calls) FILTER (WHERE kind LIKE 'bundle\_%'), 0)::bigint                               AS bundle_calls
FROM account_ledger
GROUP BY account;
