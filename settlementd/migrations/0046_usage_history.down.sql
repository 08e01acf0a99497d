DROP TABLE IF EXISTS node_probe_samples;
DROP INDEX IF EXISTS epoch_node_shares_node;
DROP INDEX IF EXISTS node_earnings_node_epoch;
DROP INDEX IF EXISTS account_ledger_credits;
DROP TABLE IF EXISTS node_usage_hourly;
DROP TABLE IF EXISTS usage_daily;
DROP TABLE IF EXISTS usage_hourly;
