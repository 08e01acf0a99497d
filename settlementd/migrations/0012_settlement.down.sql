DROP VIEW IF EXISTS node_allocations;
DROP TABLE IF EXISTS settled_epochs;
DROP TABLE IF EXISTS settlement_batches;
-- nodes is shared with the nodes API and is left in place.
