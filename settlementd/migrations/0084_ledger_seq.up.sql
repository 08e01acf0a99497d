-- The per-shard ledger floor (docs/redis.md): the highest
-- Redis state count (<prefix>seq) PostgreSQL is known to have caught up
-- with on the stream's shard. settlementd's ingest publishes it to Redis
-- (<prefix>ledger-seq) and keeps it here, so a settlementd that restarts —
-- with the whole stack, onto a Redis restored from a snapshot — still
-- knows the floor and refuses that Redis instead of serving money from it.
ALTER TABLE ingest_watermark ADD COLUMN ledger_seq bigint NOT NULL DEFAULT 0;
