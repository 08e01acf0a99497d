DROP INDEX IF EXISTS nodes_wallet;
DROP TRIGGER IF EXISTS nodes_deregistration_final ON nodes;
DROP FUNCTION IF EXISTS nodes_deregistration_final();
ALTER TABLE nodes DROP CONSTRAINT IF EXISTS nodes_deregistered_at;
ALTER TABLE nodes DROP COLUMN IF EXISTS deregistered_at;
