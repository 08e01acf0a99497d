-- Ingest speed: revenue_events is the hottest table, written at
-- up to 100k+ rows a second, and each of its btree indexes is maintained per
-- row. booked_epoch only serves "this epoch's events" (the epoch close, the
-- status page's open-epoch total), and rows arrive in booking order: a
-- late event is booked into the epoch open when it arrives, so it sits
-- among that epoch's rows on disk. A BRIN index (the min/max per block
-- range) finds an epoch's blocks as well and costs next to nothing per
-- insert; blocks not yet summarised are always scanned, so it is never
-- wrong, and autosummarize keeps that tail short.
DROP INDEX IF EXISTS revenue_events_booked_epoch;
CREATE INDEX revenue_events_booked_epoch_brin ON revenue_events USING brin (booked_epoch)
    WITH (pages_per_range = 32, autosummarize = on);
