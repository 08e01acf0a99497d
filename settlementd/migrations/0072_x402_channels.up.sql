-- x402 batch-settlement channels: the newest state the gateway held of each
-- channel (ChannelState events), so settlementd can rebuild the Redis hash
-- after a Redis loss. The latest voucher's amount and signature exist
-- nowhere else: the chain knows only what was claimed. seq orders the
-- states of a channel (the newest wins whatever order they are stored in);
-- amounts in integer base units.
CREATE TABLE IF NOT EXISTS x402_channels (
    channel_id text        PRIMARY KEY CHECK (channel_id ~ '^0x[0-9a-f]{64}$'),
    seq        bigint      NOT NULL CHECK (seq > 0),
    wallet     text        NOT NULL,
    balance    bigint      NOT NULL CHECK (balance >= 0),
    claimed    bigint      NOT NULL CHECK (claimed >= 0),
    charged    bigint      NOT NULL CHECK (charged >= 0),
    signed     bigint      NOT NULL CHECK (signed >= 0),
    signature  text        NOT NULL,
    config     text        NOT NULL,
    closed     boolean     NOT NULL,
    ts         timestamptz NOT NULL
);

-- The deposit transactions each channel's known balance was raised by (the
-- gateway records a deposit once per transaction; the rebuild restores the
-- set so a retried old deposit is not applied again).
CREATE TABLE IF NOT EXISTS x402_channel_deposits (
    channel_id text NOT NULL,
    tx_hash    text NOT NULL,
    PRIMARY KEY (channel_id, tx_hash)
);
