-- API keys as the gateway created them (only the SHA-256 of the secret).
-- A revocation may be ingested before its key_created (two consumers, or a
-- reclaimed entry), so either event may create the row; the CHECK keeps a
-- row meaningful: it has its hash, or it is at least a revocation.
CREATE TABLE api_keys (
    key_id        text        PRIMARY KEY,
    key_hash      text        UNIQUE,
    kind          text,
    label         text,
    tier          text,
    email         text,
    email_consent boolean     NOT NULL DEFAULT false,
    wallet        text,
    created_at    timestamptz,
    revoked_at    timestamptz,
    revoke_reason text,
    CHECK (key_hash IS NOT NULL OR revoked_at IS NOT NULL)
);

-- x402 payments settled on chain that bought bundle calls (id = tx hash).
CREATE TABLE bundle_grants (
    id           text        PRIMARY KEY,
    wallet       text        NOT NULL,
    calls        integer     NOT NULL CHECK (calls > 0),
    amount_units bigint      NOT NULL CHECK (amount_units > 0),
    network      text        NOT NULL,
    ts           timestamptz NOT NULL
);
CREATE INDEX bundle_grants_wallet ON bundle_grants (wallet);
