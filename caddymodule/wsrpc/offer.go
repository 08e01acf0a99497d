package wsrpc

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/subscribe"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// UseHub gives the sockets the subscription hub and maps its typed errors
// to JSON-RPC codes and close codes.
func UseHub(b *Backend, hub *subscribe.Hub) {
	b.Subscribe = func(chain uint64, kind string, params json.RawMessage, buffer int) (Sub, error) {
		s, err := hub.Subscribe(chain, kind, params, buffer)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	b.SubscribeError = func(err error) int {
		switch {
		case errors.Is(err, subscribe.ErrBadFilter), errors.Is(err, subscribe.ErrKindNotOffered):
			return jsonrpc.CodeInvalidParams
		case errors.Is(err, subscribe.ErrNoUpstream), errors.Is(err, subscribe.ErrUnknownChain):
			return jsonrpc.CodeMethodNotFound
		}
		return jsonrpc.CodeInternalError
	}
	b.EndCode = func(err error) int {
		switch {
		case errors.Is(err, subscribe.ErrSlowReader):
			return CloseSlowReader
		case errors.Is(err, subscribe.ErrHubClosed):
			return CloseGoingAway
		}
		return CloseInternal
	}
}

// siwxAuth is the offer's "auth": who pays for a socket, and how long a
// Sign-In-With-X lasts on it (payment.Caller.HoldSignIn).
const siwxAuth = "the handshake's X-API-Key header or key query parameter, else its SIGN-IN-WITH-X header, else the IP's free tier: the payers of POST, in the same order. " +
	"A SIGN-IN-WITH-X message is checked as for POST (signature, domain and uri, chain, issuedAt, expirationTime) by the socket's first paid call, which spends its nonce; " +
	"from then on the socket is signed in as that wallet until it closes: every call and notification draws from the wallet's bundle without another signature, " +
	"whatever the message's expirationTime (it bounds when a message may sign in, not how long the socket stays signed in). " +
	"A message already used (over POST, MCP or another socket) is refused at every call (402 siwx_nonce_used); " +
	"with the bundle empty a call is refused as over POST (402 bundle_exhausted) and a subscription ends as payment_closing says, the socket staying signed in for a new bundle; " +
	"a new socket needs a freshly signed message"

// Offer is a chain's WebSocket offer in service.json: where (url), what it
// costs (a call as over HTTP, eth_subscribe and each notification at their
// weights, units(method), eth_unsubscribe free), its bounds and close codes.
func (s *Server) Offer(url string, units func(method string) int) map[string]any {
	price := func(method string) map[string]any {
		u := money.PricePerCall * money.Units(units(method))
		return map[string]any{"usdt": money.USDT(u), "units": u.String(), "asset": "USDT"}
	}
	lim := s.cfg.Limits
	codes := map[string]string{}
	for c, what := range CloseCodes {
		codes[strconv.Itoa(c)] = what
	}
	offer := map[string]any{
		"url":                url,
		"auth":               siwxAuth,
		"calls":              "each JSON-RPC call or batch over the socket is metered, rate-limited and refused like a POST; a refusal is a JSON-RPC error in the caller's ids with the HTTP status, Retry-After and 402 onboarding in error.data",
		"subscriptions":      []string{},
		"subscribe_price":    price("eth_subscribe"),
		"notification_price": price("eth_subscription"),
		"unsubscribe_price":  map[string]any{"usdt": money.USDT(0), "units": "0", "asset": "USDT"},
		"payment_closing":    "when the payer cannot pay for a notification: a tollgate_closing notification (params.code, params.reason, params.error with the 402 onboarding), then close code 4402; nothing is delivered unpaid",
		"close_codes":        codes,
		"limits": map[string]any{"max_subscriptions": lim.MaxSubscriptions, "max_subscriptions_per_ip": lim.MaxSubscriptionsPerIP,
			"send_buffer_messages": lim.SendBuffer, "max_message_bytes": s.cfg.MaxMessageBytes, "max_in_flight": lim.MaxInFlight,
			"ping_interval_seconds": time.Duration(lim.PingInterval).Seconds(), "idle_timeout_seconds": time.Duration(lim.IdleTimeout).Seconds()},
	}
	if s.Subscriptions() {
		offer["subscriptions"] = []string{"newHeads", "logs", "newPendingTransactions"}
	}
	return offer
}
