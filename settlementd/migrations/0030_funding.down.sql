DROP TABLE IF EXISTS funding_venues;
DROP TABLE IF EXISTS funding_snapshots;
