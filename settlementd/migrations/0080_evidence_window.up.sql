-- Evidence withholds the liar's share of every epoch in which it may have
-- lied, not only the epoch the evidence is booked into (docs/decisions.md). The gateway samples a node's answers, so the lies it
-- delivered before the one caught are not individually known: the close of
-- the epoch a piece of evidence is booked into also withholds the node's
-- share of every closed, not yet settled epoch that overlaps
-- [min(ts − lookback, suspect_since), ts], and settlement holds epochs back
-- long enough for evidence within the lookback to find them unsettled.

-- suspect_since: the optional "the node's lies may start here" of the
-- evidence event (suspect_since_ms), stored only when it is not after ts.
ALTER TABLE node_evidence ADD COLUMN suspect_since timestamptz;
ALTER TABLE node_evidence ADD CONSTRAINT node_evidence_suspect_since CHECK (suspect_since <= ts);

-- Every share withheld from a node, one row per (epoch, node): which
-- evidence withheld it, how much (what the node's share was; it went to
-- the pool) and whether the epoch is the one the evidence is booked into
-- ('booked', withheld at that epoch's close) or an earlier one within the
-- evidence's window ('window', withheld after its own close, before it was
-- settled). The operator reads it (GET /api/nodes/{id}/evidence and the
-- earnings route's quarantine). Append-only: a withholding is never undone.
CREATE TABLE node_withholdings (
    epoch_id    bigint      NOT NULL REFERENCES epochs (id),
    node_id     text        NOT NULL,
    evidence_id text        NOT NULL REFERENCES node_evidence (id),
    units       bigint      NOT NULL CHECK (units > 0),
    kind        text        NOT NULL CHECK (kind IN ('booked', 'window')),
    at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (epoch_id, node_id)
);
CREATE INDEX node_withholdings_node ON node_withholdings (node_id, epoch_id DESC);
CREATE INDEX node_withholdings_evidence ON node_withholdings (evidence_id);
CREATE TRIGGER node_withholdings_append_only BEFORE UPDATE OR DELETE ON node_withholdings
    FOR EACH ROW EXECUTE FUNCTION forbid_ledger_change();

-- The shares withheld before this migration (the booked epochs), with the
-- first evidence booked into each.
INSERT INTO node_withholdings (epoch_id, node_id, evidence_id, units, kind, at)
SELECT sh.epoch_id, sh.node_id, ev.id, sh.withheld_units, 'booked', e.closed_at
FROM epoch_node_shares sh
JOIN epochs e ON e.id = sh.epoch_id
JOIN LATERAL (SELECT v.id FROM node_evidence v WHERE v.node_id = sh.node_id AND v.booked_epoch = sh.epoch_id
              ORDER BY v.ts, v.id LIMIT 1) ev ON true
WHERE sh.withheld_units > 0;

-- A closed epoch changes only by withholding a share: its pool and its
-- withheld amount rise by what its distributed amount falls, nothing else
-- moves, and a settled epoch (in a settlement batch) does not change at
-- all — its money may already be on chain.
CREATE FUNCTION epochs_closed_withhold_only() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d bigint := NEW.withheld_units - OLD.withheld_units;
BEGIN
    IF OLD.state <> 'CLOSED' THEN
        RETURN NEW;
    END IF;
    IF EXISTS (SELECT 1 FROM settled_epochs WHERE epoch_id = OLD.id) THEN
        RAISE EXCEPTION 'epoch % is settled: it is final', OLD.id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF d < 0 OR NEW.pool_units - OLD.pool_units <> d OR OLD.distributed_units - NEW.distributed_units <> d
       OR to_jsonb(NEW) - ARRAY['pool_units', 'withheld_units', 'distributed_units']
          <> to_jsonb(OLD) - ARRAY['pool_units', 'withheld_units', 'distributed_units'] THEN
        RAISE EXCEPTION 'closed epoch %: only a withholding (distributed → withheld and pool) may change it', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER epochs_closed_withhold_only BEFORE UPDATE ON epochs
    FOR EACH ROW EXECUTE FUNCTION epochs_closed_withhold_only();

-- Likewise a node's share row: only its whole share moves to withheld, and
-- not once the epoch is settled.
CREATE FUNCTION epoch_node_shares_withhold_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM settled_epochs WHERE epoch_id = OLD.epoch_id) THEN
        RAISE EXCEPTION 'epoch % is settled: it is final', OLD.epoch_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (NEW.epoch_id, NEW.node_id, NEW.weight_units, NEW.calls) IS DISTINCT FROM (OLD.epoch_id, OLD.node_id, OLD.weight_units, OLD.calls)
       OR NEW.share_units <> 0 OR NEW.withheld_units <> OLD.withheld_units + OLD.share_units THEN
        RAISE EXCEPTION 'epoch % node %: only a withholding (share → withheld) may change a share', OLD.epoch_id, OLD.node_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER epoch_node_shares_withhold_only BEFORE UPDATE ON epoch_node_shares
    FOR EACH ROW EXECUTE FUNCTION epoch_node_shares_withhold_only();
