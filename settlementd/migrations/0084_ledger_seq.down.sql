ALTER TABLE ingest_watermark DROP COLUMN ledger_seq;
