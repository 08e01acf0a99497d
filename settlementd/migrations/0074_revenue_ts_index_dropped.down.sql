CREATE INDEX IF NOT EXISTS revenue_events_ts_id ON revenue_events (ts DESC, id DESC);
