-- Node deregistration: an operator removes a node with
-- DELETE /api/nodes/{id}. The row stays (its earnings remain claimable and
-- its revenue events keep naming it); status becomes 'deregistered' and
-- deregistered_at records when. The epoch close gives the node no share of
-- revenue events served at or after deregistered_at (events served before
-- it are still owed, whenever they are ingested).
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS deregistered_at timestamptz;
ALTER TABLE nodes ADD CONSTRAINT nodes_deregistered_at CHECK ((status = 'deregistered') = (deregistered_at IS NOT NULL));

-- Deregistration is final: no writer (a re-probe racing the deregistration,
-- a re-registration) may bring the node back or move its time. Registering
-- the same URL again creates a new node id.
CREATE FUNCTION nodes_deregistration_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'deregistered' AND (NEW.status IS DISTINCT FROM 'deregistered'
            OR NEW.deregistered_at IS DISTINCT FROM OLD.deregistered_at) THEN
        RAISE EXCEPTION 'node % is deregistered; deregistration is final', OLD.node_id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER nodes_deregistration_final BEFORE UPDATE ON nodes
    FOR EACH ROW EXECUTE FUNCTION nodes_deregistration_final();

-- GET /api/nodes lists the token's wallet's nodes (wallets compare lower-case, as
-- the earnings and claim routes compare them).
CREATE INDEX IF NOT EXISTS nodes_wallet ON nodes (lower(wallet), created_at);
