// Package wsrpc serves JSON-RPC over WebSocket on /rpc and /rpc/{chain}: a
// GET with Upgrade: websocket on the same paths becomes a socket. Every
// call or batch sent over it goes through the gateway's HTTP JSON-RPC path
// (Backend.Call, injected by caddymodule) as if it had been POSTed with the
// handshake's credentials, so it is metered, rate-limited and refused
// exactly like an HTTP call; a refusal becomes a JSON-RPC error in the
// caller's ids. eth_subscribe and eth_unsubscribe are answered here: each
// client subscription reads a shared upstream subscription of the hub
// (caddymodule/subscribe) under an id the gateway assigns, and every
// notification is paid for (Backend.Charge, the payers' path) before it is
// queued to the client. The socket's bounds — subscriptions per connection
// and per IP, the send buffer, ping/pong, message size, idle time — and its
// close codes are in this package (CloseCodes).
package wsrpc
