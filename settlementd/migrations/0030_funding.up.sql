-- Funding-rate snapshots polled from perpetual-futures venues:
-- the source of the funding-rate heatmap the gateway sells. Rates are
-- integers in parts per billion, parsed from the venues' decimal strings.
CREATE TABLE funding_snapshots (
    venue           text        NOT NULL,
    symbol          text        NOT NULL,
    observed_at     timestamptz NOT NULL, -- when settlementd polled
    venue_time      timestamptz,          -- the venue's own timestamp, when it sends one
    rate_ppb        bigint      NOT NULL,
    next_funding_at timestamptz,
    mark_price      numeric,
    PRIMARY KEY (venue, symbol, observed_at)
);
CREATE INDEX funding_snapshots_observed ON funding_snapshots (observed_at);

-- One row per venue: polling health (stale when last_success is old).
CREATE TABLE funding_venues (
    venue        text PRIMARY KEY,
    last_attempt timestamptz,
    last_success timestamptz,
    last_error   text
);
