ALTER TABLE chain_txs DROP COLUMN IF EXISTS fee_ceiling_at;
ALTER TABLE chain_txs DROP COLUMN IF EXISTS replacements;
DROP TABLE IF EXISTS chain_tx_attempts;
