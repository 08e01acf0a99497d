-- Node-operator API: wallet login nonces, node registration
-- details, claim reservations, the Claimed-event mirror and the gateway
-- health samples behind /api/status.

-- Sign-In with Ethereum nonces: issued by /api/auth/challenge, consumed once
-- by /api/auth/login (used_at set in the same statement that checks it).
CREATE TABLE auth_nonces (
    nonce      text        PRIMARY KEY,
    wallet     text        NOT NULL,
    issued_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX auth_nonces_expiry ON auth_nonces (expires_at);

CREATE TABLE IF NOT EXISTS nodes (
    node_id    text        PRIMARY KEY,
    wallet     text,
    region     text,
    url        text,
    chain_ids  bigint[]    NOT NULL DEFAULT '{}',
    status     text        NOT NULL DEFAULT 'offline',
    created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS label text NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS probe_failures integer NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS last_probe_at timestamptz;
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS last_probe_error text;
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS updated_at timestamptz NOT NULL DEFAULT now();
-- Registration looks nodes up by URL (one registration per URL, serialised
-- by an advisory lock on the URL): re-registering returns the same node.
CREATE INDEX IF NOT EXISTS nodes_url ON nodes (url);

-- Claim signatures issued by the API. cumulative_units is the signed
-- (cumulative) amount; base_claimed_units what the contract had paid the
-- node when it was signed; amount_units = cumulative − base (what the wallet
-- receives). pending → claimed (a Claimed event reached cumulative) or
-- expired (deadline passed unclaimed: the funds are claimable again).
CREATE TABLE claim_signatures (
    id                 bigserial   PRIMARY KEY,
    node_id            text        NOT NULL,
    wallet             text        NOT NULL,
    cumulative_units   bigint      NOT NULL CHECK (cumulative_units > 0),
    base_claimed_units bigint      NOT NULL CHECK (base_claimed_units >= 0),
    amount_units       bigint      NOT NULL CHECK (amount_units > 0),
    signature          text        NOT NULL,
    deadline           timestamptz NOT NULL,
    state              text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'claimed', 'expired')),
    created_at         timestamptz NOT NULL DEFAULT now(),
    resolved_at        timestamptz,
    CHECK (cumulative_units = base_claimed_units + amount_units)
);
CREATE INDEX claim_signatures_node ON claim_signatures (node_id, state);

-- ClaimsContract Claimed events, mirrored by the claims watcher; idempotent
-- on (tx hash, log index).
CREATE TABLE claim_events (
    tx_hash          text        NOT NULL,
    log_index        integer     NOT NULL,
    chain_id         bigint      NOT NULL,
    block_number     bigint      NOT NULL,
    block_time       timestamptz NOT NULL,
    node_id          text        NOT NULL,
    wallet           text        NOT NULL,
    paid_units       bigint      NOT NULL,
    cumulative_units bigint      NOT NULL,
    PRIMARY KEY (tx_hash, log_index)
);
CREATE INDEX claim_events_node ON claim_events (node_id, cumulative_units);

-- The watcher's checkpoint: every block up to next_block − 1 is scanned.
CREATE TABLE claim_watch (
    chain_id   bigint      PRIMARY KEY,
    next_block bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Gateway health samples (settlementd probes the gateway's /rpc).
CREATE TABLE health_samples (
    id         bigserial   PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    ok         boolean     NOT NULL,
    latency_ms double precision NOT NULL,
    status     integer     NOT NULL DEFAULT 0,
    error      text
);
CREATE INDEX health_samples_at ON health_samples (at);

-- /api/admin/economics lists revenue events newest first, keyset-paginated.
CREATE INDEX revenue_events_ts_id ON revenue_events (ts DESC, id DESC);
