-- Ingest speed: account_ledger gets a row for almost every paid
-- request (its debit), and each btree on it is maintained per row. The plain
-- (account) index served no query: a key's credits are read through the
-- partial account_ledger_credits (account, id DESC) index (history), and
-- reconcile reads every key_… or bundle account at once (a full scan and a
-- grouping, where an index on account does not help). A lookup of one
-- account's whole ledger would now scan; none is made in settlementd.
DROP INDEX IF EXISTS account_ledger_account;
