-- Epochs: id = floor(unix seconds / 60). Exactly one row is open: the first
-- epoch not yet closed (later epochs are open implicitly and get their row
-- when their predecessor closes). Closing is one transaction that writes the
-- totals, the node shares and the next open row.
CREATE TABLE epochs (
    id                bigint      PRIMARY KEY,
    state             text        NOT NULL CHECK (state IN ('open', 'CLOSED')),
    starts_at         timestamptz NOT NULL,
    ends_at           timestamptz NOT NULL,
    carry_in_units    bigint      NOT NULL DEFAULT 0 CHECK (carry_in_units >= 0),
    events            bigint,
    calls             bigint,
    total_units       bigint      CHECK (total_units >= 0),
    node_units        bigint      CHECK (node_units >= 0),  -- W: revenue served by nodes
    operators_units   bigint      CHECK (operators_units >= 0),
    platform_units    bigint      CHECK (platform_units >= 0),
    pool_units        bigint      CHECK (pool_units >= 0),
    distributed_units bigint      CHECK (distributed_units >= 0),
    carry_out_units   bigint      CHECK (carry_out_units >= 0),
    closed_at         timestamptz,
    -- The money invariants, checked by the database as well as by the code.
    CHECK (state = 'open' OR (
        total_units IS NOT NULL AND closed_at IS NOT NULL
        AND operators_units + platform_units + pool_units = total_units
        AND distributed_units + carry_out_units = operators_units + carry_in_units))
);
CREATE UNIQUE INDEX epochs_one_open ON epochs ((true)) WHERE state = 'open';

-- Per-node breakdown of a closed epoch: weight w_i and share floor(pot·w_i/W).
CREATE TABLE epoch_node_shares (
    epoch_id     bigint NOT NULL REFERENCES epochs (id),
    node_id      text   NOT NULL,
    weight_units bigint NOT NULL CHECK (weight_units > 0),
    calls        bigint NOT NULL,
    share_units  bigint NOT NULL CHECK (share_units >= 0),
    PRIMARY KEY (epoch_id, node_id)
);

-- Node earnings ledger: what each node has been credited (kind epoch_share,
-- ref = epoch id) and, later, what it has claimed. Append-only, idempotent.
CREATE TABLE node_earnings (
    id           bigserial   PRIMARY KEY,
    node_id      text        NOT NULL,
    kind         text        NOT NULL,
    ref          text        NOT NULL,
    amount_units bigint      NOT NULL,
    epoch_id     bigint      REFERENCES epochs (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (node_id, kind, ref)
);
CREATE TRIGGER node_earnings_append_only BEFORE UPDATE OR DELETE ON node_earnings
    FOR EACH ROW EXECUTE FUNCTION forbid_ledger_change();
