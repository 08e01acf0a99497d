ALTER TABLE bundle_grants DROP COLUMN IF EXISTS key_id;
