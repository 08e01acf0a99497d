-- A registered node may offer JSON-RPC over WebSocket, where the
-- gateway's eth_subscribe subscriptions go. NULL: it offers none.
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS ws_url text;
