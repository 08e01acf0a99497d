ALTER TABLE dead_letters DROP COLUMN replayed_at, DROP COLUMN replayed_as;
