-- Usage history: what a key paid for, per hour and per day, and
-- what a node served, rolled up at ingest so a history read never scans the
-- revenue events. The rows are written by the same statement that inserts
-- the revenue events, from the rows it actually inserted (RETURNING), so a
-- redelivered event adds nothing: the rollups hold exactly what
-- revenue_events holds. Times are UTC hour and day starts.
--   account   the event's account: a key_… id (credits, and a key's free
--             calls) or a 0x wallet (bundle calls); events without an
--             account (anonymous free tier) are not rolled up per account
--   requests  HTTP requests (a batch is one), calls: JSON-RPC calls,
--   amount    what was paid for the served calls (base units)
CREATE TABLE usage_hourly (
    account      text        NOT NULL,
    hour         timestamptz NOT NULL,
    chain_id     bigint      NOT NULL,
    method       text        NOT NULL,
    payer        text        NOT NULL,
    requests     bigint      NOT NULL CHECK (requests > 0),
    calls        bigint      NOT NULL CHECK (calls > 0),
    amount_units bigint      NOT NULL CHECK (amount_units >= 0),
    PRIMARY KEY (account, hour, chain_id, method, payer)
);

CREATE TABLE usage_daily (
    account      text        NOT NULL,
    day          date        NOT NULL,
    chain_id     bigint      NOT NULL,
    method       text        NOT NULL,
    payer        text        NOT NULL,
    requests     bigint      NOT NULL CHECK (requests > 0),
    calls        bigint      NOT NULL CHECK (calls > 0),
    amount_units bigint      NOT NULL CHECK (amount_units >= 0),
    PRIMARY KEY (account, day, chain_id, method, payer)
);

-- What each registered node served per hour and chain (its traffic chart
-- and served-calls count).
CREATE TABLE node_usage_hourly (
    node_id      text        NOT NULL,
    hour         timestamptz NOT NULL,
    chain_id     bigint      NOT NULL,
    requests     bigint      NOT NULL CHECK (requests > 0),
    calls        bigint      NOT NULL CHECK (calls > 0),
    amount_units bigint      NOT NULL CHECK (amount_units >= 0),
    PRIMARY KEY (node_id, hour, chain_id)
);

-- The events already stored, rolled up once.
INSERT INTO usage_hourly (account, hour, chain_id, method, payer, requests, calls, amount_units)
SELECT account, date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', chain_id, method, payer, count(*), sum(calls), sum(amount_units)
FROM revenue_events WHERE account IS NOT NULL GROUP BY 1, 2, 3, 4, 5;
INSERT INTO usage_daily (account, day, chain_id, method, payer, requests, calls, amount_units)
SELECT account, (ts AT TIME ZONE 'UTC')::date, chain_id, method, payer, count(*), sum(calls), sum(amount_units)
FROM revenue_events WHERE account IS NOT NULL GROUP BY 1, 2, 3, 4, 5;
INSERT INTO node_usage_hourly (node_id, hour, chain_id, requests, calls, amount_units)
SELECT node_id, date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', chain_id, count(*), sum(calls), sum(amount_units)
FROM revenue_events WHERE node_id IS NOT NULL GROUP BY 1, 2, 3;

-- A key's credits (deposits, admin adjustments, bundle grants) newest first
-- without reading its debits: one ledger row per request otherwise.
CREATE INDEX account_ledger_credits ON account_ledger (account, id DESC)
    WHERE kind IN ('deposit', 'adjustment', 'bundle_grant');

-- A node's earnings and shares by epoch (the unique keys lead with other
-- columns).
CREATE INDEX node_earnings_node_epoch ON node_earnings (node_id, epoch_id);
CREATE INDEX epoch_node_shares_node ON epoch_node_shares (node_id, epoch_id);

-- Every node probe: its outcome and how long eth_chainId took, for the
-- operator's uptime and latency. The prober deletes samples older than
-- seven days.
CREATE TABLE node_probe_samples (
    node_id    text             NOT NULL,
    at         timestamptz      NOT NULL DEFAULT now(),
    ok         boolean          NOT NULL,
    latency_ms double precision NOT NULL CHECK (latency_ms >= 0),
    PRIMARY KEY (node_id, at)
);
CREATE INDEX node_probe_samples_at ON node_probe_samples (at);
