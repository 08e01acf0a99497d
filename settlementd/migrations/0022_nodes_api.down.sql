DROP INDEX IF EXISTS revenue_events_ts_id;
DROP TABLE IF EXISTS health_samples;
DROP TABLE IF EXISTS claim_watch;
DROP TABLE IF EXISTS claim_events;
DROP TABLE IF EXISTS claim_signatures;
DROP INDEX IF EXISTS nodes_url;
ALTER TABLE nodes DROP COLUMN IF EXISTS updated_at, DROP COLUMN IF EXISTS last_probe_error,
    DROP COLUMN IF EXISTS last_probe_at, DROP COLUMN IF EXISTS probe_failures, DROP COLUMN IF EXISTS label;
DROP TABLE IF EXISTS auth_nonces;
