-- Epochs that withheld a share do not satisfy the previous invariant; it is
-- restored as NOT VALID for them.
ALTER TABLE epoch_node_shares DROP CONSTRAINT IF EXISTS epoch_node_shares_withheld;
ALTER TABLE epoch_node_shares DROP COLUMN IF EXISTS withheld_units;
ALTER TABLE epochs DROP CONSTRAINT epochs_check;
ALTER TABLE epochs ADD CONSTRAINT epochs_check CHECK (state = 'open' OR (
    total_units IS NOT NULL AND closed_at IS NOT NULL
    AND operators_units + platform_units + pool_units = total_units
    AND distributed_units + carry_out_units + platform_operators_units = operators_units + carry_in_units)) NOT VALID;
ALTER TABLE epochs DROP COLUMN IF EXISTS withheld_units;
DROP TABLE IF EXISTS node_quarantine_log;
DROP TRIGGER IF EXISTS nodes_quarantine_holds ON nodes;
DROP FUNCTION IF EXISTS nodes_quarantine_holds();
UPDATE nodes SET status = 'offline' WHERE status = 'quarantined';
ALTER TABLE nodes DROP CONSTRAINT IF EXISTS nodes_quarantine;
ALTER TABLE nodes DROP COLUMN IF EXISTS quarantine_reason;
ALTER TABLE nodes DROP COLUMN IF EXISTS quarantined_at;
DROP TABLE IF EXISTS node_evidence;
