-- Raw stream events as the gateway wrote them. Every table is keyed by the
-- event's own id, so a re-delivered or re-claimed stream entry is stored once
-- (the ingest inserts with ON CONFLICT DO NOTHING).

-- One row per processed request (the original specification's revenue_event). epoch_id is the
-- epoch of ts; booked_epoch is the epoch whose close counts it: the same
-- unless the event arrived after its own epoch had closed, in which case it
-- is booked into the epoch that was open when it was ingested (never dropped).
CREATE TABLE revenue_events (
    id           text        PRIMARY KEY,
    ts           timestamptz NOT NULL,
    epoch_id     bigint      NOT NULL,
    booked_epoch bigint      NOT NULL CHECK (booked_epoch >= epoch_id),
    chain_id     bigint      NOT NULL,
    payer        text        NOT NULL,
    account      text,
    asset        text        NOT NULL,
    amount_units bigint      NOT NULL CHECK (amount_units >= 0),
    calls        integer     NOT NULL CHECK (calls > 0),
    upstream     text        NOT NULL,
    node_id      text
);
-- The epoch closer sums by booked epoch.
CREATE INDEX revenue_events_booked_epoch ON revenue_events (booked_epoch);

-- Charges taken before forwarding (id = request id).
CREATE TABLE debits (
    id           text        PRIMARY KEY,
    ts           timestamptz NOT NULL,
    chain_id     bigint      NOT NULL,
    payer        text        NOT NULL,
    account      text,
    asset        text        NOT NULL,
    amount_units bigint      NOT NULL CHECK (amount_units >= 0),
    calls        integer     NOT NULL CHECK (calls > 0)
);

-- Debits given back because the upstream failed (id = the debit's request id;
-- at most one refund per request).
CREATE TABLE refunds (
    id           text        PRIMARY KEY,
    ts           timestamptz NOT NULL,
    payer        text        NOT NULL,
    account      text,
    amount_units bigint      NOT NULL CHECK (amount_units >= 0),
    calls        integer     NOT NULL CHECK (calls > 0)
);

-- Stream entries this build cannot book (unknown type or version, bad JSON,
-- out-of-range values). Parked, acknowledged, never dropped; unique on the
-- stream id so a redelivered entry is parked once. fields is the entry as
-- JSON bytes (bytea: entries may hold NUL bytes, which text/jsonb refuse).
CREATE TABLE dead_letters (
    id         bigserial   PRIMARY KEY,
    stream_id  text        NOT NULL UNIQUE,
    reason     text        NOT NULL,
    fields     bytea       NOT NULL,
    consumer   text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- How far the stream is safely in Postgres. low_ms: every stream entry whose
-- id time is below it has been committed (computed from the consumer group,
-- so it holds with any number of consumers). The epoch closer waits for it.
-- max_event_ms / last_id: the newest event time and stream id committed.
CREATE TABLE ingest_watermark (
    stream       text        PRIMARY KEY,
    low_ms       bigint      NOT NULL DEFAULT 0,
    max_event_ms bigint      NOT NULL DEFAULT 0,
    last_id      text        NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now()
);
