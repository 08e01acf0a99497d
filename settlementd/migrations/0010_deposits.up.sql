-- RevenueVault Deposited logs as the deposit listener saw them (package
-- settlementd/internal/deposits). One row per (chain, tx hash, log index):
-- the id a deposit is credited under ("<tx hash>:<log index>", the
-- account_ledger ref and the Redis deposit-set member).
--   seen          in a block, not yet confirmed; block_hash is where it was seen
--   credited      confirmed on the canonical chain and booked in account_ledger
--                 (in the same transaction as this state change)
--   orphaned      its block was no longer canonical at confirmation time
--   unattributed  confirmed, but the account is not a valid key_… id (or the
--                 amount is unusable): parked for an operator, never credited
-- redis_applied: the Redis balance has been credited too (balances.Credit,
-- idempotent per deposit id); credited rows without it are retried each run.
CREATE TABLE chain_deposits (
    chain_id      bigint      NOT NULL,
    tx_hash       text        NOT NULL,
    log_index     integer     NOT NULL CHECK (log_index >= 0),
    vault         text        NOT NULL,
    block_number  bigint      NOT NULL,
    block_hash    text        NOT NULL,
    account_raw   bytea       NOT NULL,
    account       text,
    from_addr     text        NOT NULL,
    amount_raw    numeric(78, 0) NOT NULL CHECK (amount_raw >= 0),
    amount_units  bigint      CHECK (amount_units >= 0),
    state         text        NOT NULL CHECK (state IN ('seen', 'credited', 'orphaned', 'unattributed')),
    reason        text,
    redis_applied boolean     NOT NULL DEFAULT false,
    block_time    timestamptz,
    seen_at       timestamptz NOT NULL DEFAULT now(),
    decided_at    timestamptz,
    PRIMARY KEY (chain_id, tx_hash, log_index),
    CHECK (state <> 'credited' OR (account IS NOT NULL AND amount_units > 0 AND block_time IS NOT NULL)),
    CHECK (NOT redis_applied OR state = 'credited')
);
-- The listener's work queues: unconfirmed rows, and credits not yet mirrored.
CREATE INDEX chain_deposits_seen ON chain_deposits (chain_id, block_number) WHERE state = 'seen';
CREATE INDEX chain_deposits_unmirrored ON chain_deposits (chain_id) WHERE state = 'credited' AND NOT redis_applied;
CREATE INDEX chain_deposits_account ON chain_deposits (account);

-- How far each vault's logs are final for us: every Deposited log in a block
-- at or below confirmed_through has been decided (credited, orphaned or
-- unattributed). confirmed_hash is that block's hash: if the chain no longer
-- has it (a reorg deeper than the confirmation window, or a different chain
-- behind the same URL) the listener stops for an operator instead of
-- skipping or re-deciding logs. scanned_through is the newest block read.
CREATE TABLE deposit_checkpoints (
    chain_id          bigint      NOT NULL,
    vault             text        NOT NULL,
    confirmed_through bigint      NOT NULL,
    confirmed_hash    text,
    scanned_through   bigint      NOT NULL,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, vault)
);
