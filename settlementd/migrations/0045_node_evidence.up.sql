-- Answer verification, settlement side. The gateway
-- re-asks a trusted provider a sample of the deterministic questions a
-- registered node answered; when the answers differ it appends a
-- node_mismatch event. settlementd stores each one here once (its id is the
-- primary key), quarantines the node and withholds the node's share of the
-- epoch in which it lied (docs/decisions.md).

-- The evidence, exactly as the gateway sent it: the answers are kept as
-- json (the text as received, validated), not jsonb, so what an operator
-- reads is byte for byte what was compared. booked_epoch is the epoch whose
-- close withholds the node's share: the epoch of ts, or the open epoch when
-- that one had already closed when the evidence was stored (a closed epoch
-- is never reopened; its shares may be on chain).
CREATE TABLE node_evidence (
    id             text        PRIMARY KEY,
    ts             timestamptz NOT NULL,
    epoch_id       bigint      NOT NULL,
    booked_epoch   bigint      NOT NULL,
    chain_id       bigint      NOT NULL,
    node_id        text        NOT NULL,
    request_id     text        NOT NULL DEFAULT '',
    method         text        NOT NULL,
    params         json,
    block          bigint      NOT NULL CHECK (block >= 0),
    node_answer    json        NOT NULL,
    trusted_answer json        NOT NULL,
    trusted_by     text        NOT NULL,
    received_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (booked_epoch >= epoch_id)
);
CREATE INDEX node_evidence_node ON node_evidence (node_id, ts DESC, id);
CREATE INDEX node_evidence_booked ON node_evidence (booked_epoch, node_id);
CREATE TRIGGER node_evidence_append_only BEFORE UPDATE OR DELETE ON node_evidence
    FOR EACH ROW EXECUTE FUNCTION forbid_ledger_change();

-- Quarantine: a node with evidence gets status 'quarantined' (the registry
-- record the gateway reads says so too, and the gateway routes only to
-- 'online' nodes). quarantined_at and quarantine_reason say since when and
-- why; an admin review lifts it (POST /admin/nodes/{id}/unquarantine).
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS quarantined_at timestamptz;
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS quarantine_reason text;
ALTER TABLE nodes ADD CONSTRAINT nodes_quarantine CHECK (
    (status = 'quarantined') <= (quarantined_at IS NOT NULL)
    AND (quarantined_at IS NULL) = (quarantine_reason IS NULL));

-- A quarantined node stays quarantined whatever another writer sets: the
-- prober bringing it back 'online' after a good probe, a re-registration of
-- its URL, or an 'offline' after failed probes become 'quarantined' again.
-- Only clearing quarantined_at (the admin review) lifts it; any other
-- status (a deregistration) is left to its own rules.
CREATE FUNCTION nodes_quarantine_holds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.quarantined_at IS NOT NULL AND NEW.status IN ('online', 'offline') THEN
        NEW.status := 'quarantined';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER nodes_quarantine_holds BEFORE INSERT OR UPDATE ON nodes
    FOR EACH ROW EXECUTE FUNCTION nodes_quarantine_holds();

-- Every quarantine and every lift, who and why (append-only).
CREATE TABLE node_quarantine_log (
    id          bigserial   PRIMARY KEY,
    node_id     text        NOT NULL,
    action      text        NOT NULL CHECK (action IN ('quarantined', 'unquarantined')),
    at          timestamptz NOT NULL DEFAULT now(),
    by          text        NOT NULL,
    reason      text        NOT NULL,
    evidence_id text
);
CREATE INDEX node_quarantine_log_node ON node_quarantine_log (node_id, id);
CREATE TRIGGER node_quarantine_log_append_only BEFORE UPDATE OR DELETE ON node_quarantine_log
    FOR EACH ROW EXECUTE FUNCTION forbid_ledger_change();

-- The liar's share: a node with evidence booked into an epoch gets nothing
-- for it; its would-be share floor(pot·w_i/W) is withheld and booked to the
-- pool (pool_units includes it, so settlement forwards it with the pool's
-- 20 %). withheld_units records it on the epoch and per node, and the money
-- invariants gain it: every epoch still sums exactly.
ALTER TABLE epochs ADD COLUMN withheld_units bigint NOT NULL DEFAULT 0 CHECK (withheld_units >= 0);
ALTER TABLE epochs DROP CONSTRAINT epochs_check;
ALTER TABLE epochs ADD CONSTRAINT epochs_check CHECK (state = 'open' OR (
    total_units IS NOT NULL AND closed_at IS NOT NULL
    AND operators_units + platform_units + pool_units = total_units + withheld_units
    AND distributed_units + carry_out_units + platform_operators_units + withheld_units = operators_units + carry_in_units));
ALTER TABLE epoch_node_shares ADD COLUMN withheld_units bigint NOT NULL DEFAULT 0 CHECK (withheld_units >= 0);
ALTER TABLE epoch_node_shares ADD CONSTRAINT epoch_node_shares_withheld CHECK (withheld_units = 0 OR share_units = 0);
