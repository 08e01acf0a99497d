-- Whether new claim signatures may be issued (one row). The solvency check
-- pauses them when ClaimsContract holds less USDT than it owes; only an admin
-- unpause resumes them. incident counts pauses; alert_sent_at is NULL while
-- the chat alert for the current pause is still owed (so a failed or
-- interrupted POST is retried, and a sent one is not repeated).
-- onchain_paused: we also paused the contract itself with the governor key.
CREATE TABLE claims_state (
    id             smallint    PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    paused         boolean     NOT NULL DEFAULT false,
    reason         text,
    incident       bigint      NOT NULL DEFAULT 0,
    paused_at      timestamptz,
    paused_by      text,
    alert_sent_at  timestamptz,
    onchain_paused boolean     NOT NULL DEFAULT false,
    unpaused_at    timestamptz,
    unpaused_by    text,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO claims_state (id) VALUES (1);

-- Every solvency check's reading, for the audit trail and dashboards.
CREATE TABLE solvency_checks (
    id            bigserial      PRIMARY KEY,
    chain_id      bigint         NOT NULL,
    block_number  bigint         NOT NULL,
    balance_raw   numeric(78, 0) NOT NULL,
    owed_raw      numeric(78, 0) NOT NULL,
    solvent       boolean        NOT NULL,
    checked_at    timestamptz    NOT NULL DEFAULT now()
);
