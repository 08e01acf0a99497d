DROP INDEX IF EXISTS revenue_events_booked_epoch_brin;
CREATE INDEX revenue_events_booked_epoch ON revenue_events (booked_epoch);
