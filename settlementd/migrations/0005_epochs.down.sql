DROP TABLE IF EXISTS node_earnings;
DROP TABLE IF EXISTS epoch_node_shares;
DROP TABLE IF EXISTS epochs;
