-- Dead letters can be replayed (POST /admin/dead-letters/replay): the
-- entry's fields are appended to the stream again, for a settlementd that
-- can now read them (an upgrade, a fixed bug), and the row records when
-- and under which new stream id. The row itself stays: what was parked is
-- never deleted.
ALTER TABLE dead_letters
    ADD COLUMN replayed_at timestamptz,
    ADD COLUMN replayed_as text;
