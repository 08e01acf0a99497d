-- Stuck transactions: every signed version of one chain_txs row.
-- A transaction not mined within TOLLGATE_TX_STUCK_AFTER is replaced by a
-- copy at the SAME nonce with higher fees; each version is committed here
-- BEFORE it is broadcast. Only one of them can ever be mined (one nonce), and
-- the receipt check looks at every hash, so whichever one the chain took is
-- recorded, once, whatever the order of mining, replacing and crashing.
-- chain_txs.tx_hash / raw_tx always hold the newest version (the one to
-- rebroadcast) until the row is resolved; then they hold the mined one.
CREATE TABLE chain_tx_attempts (
    id           bigserial   PRIMARY KEY,
    chain_tx_id  bigint      NOT NULL REFERENCES chain_txs (id),
    tx_hash      text        NOT NULL UNIQUE,
    raw_tx       bytea       NOT NULL,
    -- EIP-1559 fees of this version, in wei (NULL: recorded before 0044).
    tip_wei      numeric(78) CHECK (tip_wei >= 0),
    fee_cap_wei  numeric(78) CHECK (fee_cap_wei >= 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- First broadcast of this version: the stuck timer starts here.
    sent_at      timestamptz
);
CREATE INDEX chain_tx_attempts_tx ON chain_tx_attempts (chain_tx_id, id);
INSERT INTO chain_tx_attempts (chain_tx_id, tx_hash, raw_tx, created_at, sent_at)
    SELECT id, tx_hash, raw_tx, created_at, sent_at FROM chain_txs;
-- replacements: versions after the first. fee_ceiling_at: when the fee
-- ceiling stopped a further replacement (the alert fires once per row).
ALTER TABLE chain_txs ADD COLUMN replacements integer NOT NULL DEFAULT 0;
ALTER TABLE chain_txs ADD COLUMN fee_ceiling_at timestamptz;
-- Nonce gap fills are 0-value self-transfers recorded like any intent.
