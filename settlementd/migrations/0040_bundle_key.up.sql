-- x402 bundles: the X-Tollgate-Bundle-Key created with a grant
-- (BundleGranted.key_id, a key_… id whose api_keys row has kind 'bundle'
-- and wallet = the grant's wallet). NULL for a grant that created no key
-- (and for grants ingested before the field existed).
ALTER TABLE bundle_grants ADD COLUMN key_id text;
