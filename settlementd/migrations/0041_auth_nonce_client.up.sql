-- Login challenges are limited per client (IPv4 address or IPv6 /64) as well
-- as per (wallet, client), so strangers flooding a wallet's challenges from
-- their own addresses cannot lock its owner out.
ALTER TABLE auth_nonces ADD COLUMN client_net text NOT NULL DEFAULT '';
CREATE INDEX auth_nonces_open_by_client ON auth_nonces (client_net, expires_at) WHERE used_at IS NULL;
