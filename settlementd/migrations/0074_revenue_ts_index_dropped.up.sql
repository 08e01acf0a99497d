-- Ingest speed: revenue_events_ts_id, a btree on (ts DESC,
-- id DESC), was maintained for every revenue row (about 1 µs of
-- PostgreSQL each on the ingest benchmark) for one reader: the admin
-- economics list of the newest revenue events. That list now pages by id
-- through the primary key: an id is the gateway's request id, a ULID,
-- whose text order is its creation time (to the millisecond), so id order
-- is newest first by when the request arrived.
DROP INDEX IF EXISTS revenue_events_ts_id;
