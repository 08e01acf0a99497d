ALTER TABLE revenue_events DROP COLUMN IF EXISTS method;
