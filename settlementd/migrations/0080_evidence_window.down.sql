DROP TRIGGER IF EXISTS epoch_node_shares_withhold_only ON epoch_node_shares;
DROP FUNCTION IF EXISTS epoch_node_shares_withhold_only();
DROP TRIGGER IF EXISTS epochs_closed_withhold_only ON epochs;
DROP FUNCTION IF EXISTS epochs_closed_withhold_only();
DROP TABLE IF EXISTS node_withholdings;
ALTER TABLE node_evidence DROP CONSTRAINT IF EXISTS node_evidence_suspect_since;
ALTER TABLE node_evidence DROP COLUMN IF EXISTS suspect_since;
