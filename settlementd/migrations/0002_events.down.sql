DROP TABLE IF EXISTS ingest_watermark;
DROP TABLE IF EXISTS dead_letters;
DROP TABLE IF EXISTS refunds;
DROP TABLE IF EXISTS debits;
DROP TABLE IF EXISTS revenue_events;
