DROP TABLE IF EXISTS settlement_meta;
