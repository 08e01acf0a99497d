-- Registered nodes. The nodes API (a later issue) owns the writes; the
-- settlement job only reads wallet. IF NOT EXISTS: whichever migration
-- creates it first wins, and the columns below are what settlement needs.
CREATE TABLE IF NOT EXISTS nodes (
    node_id    text        PRIMARY KEY,
    wallet     text,
    region     text,
    url        text,
    chain_ids  bigint[]    NOT NULL DEFAULT '{}',
    status     text        NOT NULL DEFAULT 'offline',
    created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS wallet text;

-- One forwarding of closed epochs' revenue from the treasury: the node
-- operators' credited shares to ClaimsContract, platform and pool shares to
-- their wallets. 'forwarded' once all three transfers are mined; only then do
-- the batch's node shares count toward on-chain allocations.
CREATE TABLE settlement_batches (
    id             bigserial   PRIMARY KEY,
    chain_id       bigint      NOT NULL,
    first_epoch    bigint      NOT NULL,
    last_epoch     bigint      NOT NULL,
    epochs         integer     NOT NULL CHECK (epochs > 0),
    claims_units   bigint      NOT NULL CHECK (claims_units >= 0),
    platform_units bigint      NOT NULL CHECK (platform_units >= 0),
    pool_units     bigint      NOT NULL CHECK (pool_units >= 0),
    state          text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'forwarded')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    forwarded_at   timestamptz
);

-- Which batch forwarded each closed epoch: an epoch is forwarded at most once.
CREATE TABLE settled_epochs (
    epoch_id bigint PRIMARY KEY REFERENCES epochs (id),
    batch_id bigint NOT NULL REFERENCES settlement_batches (id)
);
CREATE INDEX settled_epochs_batch ON settled_epochs (batch_id);

-- Each node's cumulative allocation confirmed on chain (ClaimsContract
-- allocation(nodeId)), derived from the mined createClaim transactions: the
-- claims API signs cumulative amounts up to it.
CREATE VIEW node_allocations AS
SELECT node_id, max(amount_units)::bigint AS allocated_units, max(resolved_at) AS updated_at
FROM chain_txs
WHERE kind = 'create_claim' AND state = 'mined'
GROUP BY node_id;
