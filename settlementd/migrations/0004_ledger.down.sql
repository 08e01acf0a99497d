DROP VIEW IF EXISTS account_balances;
DROP TABLE IF EXISTS account_ledger;
DROP FUNCTION IF EXISTS forbid_ledger_change();
