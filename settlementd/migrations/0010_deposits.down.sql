DROP TABLE IF EXISTS deposit_checkpoints;
DROP TABLE IF EXISTS chain_deposits;
