-- The JSON-RPC method of a revenue event: the gateway's
-- bounded label — a well-known method name, 'other', or 'batch' for a batch
-- naming several methods. One row per HTTP request stays the rule (a batch
-- is one row with calls = N). Rows ingested before this column, and events
-- from gateways that predate it, carry ''.
ALTER TABLE revenue_events ADD COLUMN method text NOT NULL DEFAULT '';
