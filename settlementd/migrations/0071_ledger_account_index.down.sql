CREATE INDEX IF NOT EXISTS account_ledger_account ON account_ledger (account);
