-- Ingest speed: a debit is stored once. Until now each debit of
-- a paying payer was two rows, one in debits and one in account_ledger (kind
-- 'debit' for credits, 'bundle_debit' for a bundle), and the second row with
-- its two btrees (id, (kind, ref)) was a fifth of PostgreSQL's work per
-- ingested event. The ledger's debit rows are now read from debits:
--   account_ledger_entries  the stored ledger: every kind except the debits
--                           (deposits, refunds, grants, adjustments, …)
--   account_ledger          a view: the stored entries UNION ALL the debits of
--                           the credits payer (kind 'debit') and of the bundle
--                           payer (kind 'bundle_debit'), ref = debit id,
--                           units = -amount_units, calls = -calls; id and
--                           created_at NULL (a debit has neither)
-- Other payers (the free tier, batch-settlement channels) have no ledger
-- rows, as before. Readers keep reading account_ledger; a debit branch has a
-- constant kind, so a query filtering on other kinds (a key's credits) does
-- not read debits at all. Writers that need ON CONFLICT (kind, ref) write
-- account_ledger_entries; a plain INSERT into the view is routed there.

ALTER TABLE account_ledger RENAME TO account_ledger_entries;
DROP VIEW account_balances;

-- The debit rows debits already holds leave the stored ledger. Every one
-- must match its debit exactly, and every debit of a paying payer must have
-- had one, or balances would change: otherwise the migration fails and
-- nothing is changed.
ALTER TABLE account_ledger_entries DISABLE TRIGGER account_ledger_append_only;
DO $$
DECLARE
    deleted bigint;
    expected bigint;
BEGIN
    DELETE FROM account_ledger_entries l USING debits d
    WHERE l.kind IN ('debit', 'bundle_debit') AND d.id = l.ref
      AND l.kind = CASE d.payer WHEN 'credits' THEN 'debit' WHEN 'bundle' THEN 'bundle_debit' END
      AND l.account = d.account AND l.units = -d.amount_units AND l.calls = -d.calls AND l.ts = d.ts;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    SELECT count(*) INTO expected FROM debits WHERE payer IN ('credits', 'bundle');
    IF deleted <> expected OR EXISTS (SELECT 1 FROM account_ledger_entries WHERE kind IN ('debit', 'bundle_debit')) THEN
        RAISE EXCEPTION 'account_ledger debit rows do not match debits (% matched, % debits of paying payers): not migrated',
            deleted, expected;
    END IF;
END $$;
ALTER TABLE account_ledger_entries ENABLE TRIGGER account_ledger_append_only;

ALTER TABLE account_ledger_entries DROP CONSTRAINT account_ledger_kind_check;
ALTER TABLE account_ledger_entries ADD CONSTRAINT account_ledger_kind_check CHECK (kind IN ('deposit', 'refund',
    'bundle_grant', 'bundle_refund', 'adjustment'));

-- debits now holds ledger entries, which are corrected by new entries,
-- never edited (no cost on insert: the trigger fires on UPDATE and DELETE).
CREATE TRIGGER debits_append_only BEFORE UPDATE OR DELETE ON debits
    FOR EACH ROW EXECUTE FUNCTION forbid_ledger_change();

CREATE VIEW account_ledger AS
SELECT id, account, kind, ref, units, calls, ts, created_at FROM account_ledger_entries
UNION ALL
SELECT NULL::bigint, account, 'debit'::text, id, -amount_units, -calls::bigint, ts, NULL::timestamptz
FROM debits WHERE payer = 'credits'
UNION ALL
SELECT NULL::bigint, account, 'bundle_debit'::text, id, -amount_units, -calls::bigint, ts, NULL::timestamptz
FROM debits WHERE payer = 'bundle';

-- A plain INSERT into the ledger (an operator's manual deposit, tests) goes
-- to the stored entries; its CHECK refuses debit kinds (a debit is a debits
-- row). INSERT … ON CONFLICT needs the table: account_ledger_entries.
CREATE FUNCTION account_ledger_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO account_ledger_entries (account, kind, ref, units, calls, ts, created_at)
    VALUES (NEW.account, NEW.kind, NEW.ref, NEW.units, COALESCE(NEW.calls, 0), NEW.ts, COALESCE(NEW.created_at, now()))
    RETURNING id, calls, created_at INTO NEW.id, NEW.calls, NEW.created_at;
    RETURN NEW;
END $$;
CREATE TRIGGER account_ledger_insert INSTEAD OF INSERT ON account_ledger
    FOR EACH ROW EXECUTE FUNCTION account_ledger_insert();

CREATE VIEW account_balances AS
SELECT account,
       COALESCE(sum(units) FILTER (WHERE kind IN ('deposit', 'debit', 'refund', 'adjustment')), 0)::bigint AS credit_units,
       COALESCE(-sum(units) FILTER (WHERE kind IN ('debit', 'refund')), 0)::bigint                        AS spent_units,
       COALESCE(sum(calls) FILTER (WHERE kind LIKE 'bundle\_%'), 0)::bigint                               AS bundle_calls
FROM account_ledger
GROUP BY account;
