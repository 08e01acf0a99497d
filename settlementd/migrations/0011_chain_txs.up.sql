-- Every transaction settlementd signs (package settlementd/internal/chain).
-- A row is committed BEFORE its transaction is broadcast, with the signed
-- bytes, so a restart rebroadcasts exactly the same transaction (same hash)
-- instead of building a second one. purpose names the intent ("settle:3:claims",
-- "alloc:NODE-…:1500000"); at most one live row exists per purpose, so an
-- intent is retried with a new transaction only after the previous one
-- reverted on chain ('failed').
--   signed    committed (and possibly broadcast); outcome not yet known
--   mined     included with status 1
--   failed    included with status 0 (reverted): the intent may be retried
--   conflict  the nonce was consumed by a transaction we did not record
--             (someone else uses the key, or a manual replacement): needs an
--             operator, and blocks the purpose until one resolves it
CREATE TABLE chain_txs (
    id           bigserial   PRIMARY KEY,
    chain_id     bigint      NOT NULL,
    purpose      text        NOT NULL,
    kind         text        NOT NULL,
    role         text        NOT NULL,
    from_addr    text        NOT NULL,
    to_addr      text        NOT NULL,
    recipient    text,
    node_id      text,
    amount_units bigint      CHECK (amount_units >= 0),
    nonce        bigint      NOT NULL CHECK (nonce >= 0),
    gas_limit    bigint      NOT NULL,
    calldata     bytea       NOT NULL,
    raw_tx       bytea       NOT NULL,
    tx_hash      text        NOT NULL UNIQUE,
    state        text        NOT NULL DEFAULT 'signed' CHECK (state IN ('signed', 'mined', 'failed', 'conflict')),
    broadcasts   integer     NOT NULL DEFAULT 0,
    last_error   text,
    block_number bigint,
    block_hash   text,
    gas_used     bigint,
    created_at   timestamptz NOT NULL DEFAULT now(),
    sent_at      timestamptz,
    resolved_at  timestamptz,
    -- Two of our transactions can never share a nonce.
    UNIQUE (chain_id, from_addr, nonce)
);
CREATE UNIQUE INDEX chain_txs_live_purpose ON chain_txs (chain_id, purpose) WHERE state <> 'failed';
CREATE INDEX chain_txs_signed ON chain_txs (chain_id, from_addr, nonce) WHERE state = 'signed';
CREATE INDEX chain_txs_node ON chain_txs (node_id, kind) WHERE node_id IS NOT NULL;
