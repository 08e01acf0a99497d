DROP INDEX IF EXISTS auth_nonces_open_by_client;
ALTER TABLE auth_nonces DROP COLUMN IF EXISTS client_net;
