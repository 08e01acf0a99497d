package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/httprpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/subscribe"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/caddymodule/wsrpc"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// provisionSockets builds the JSON-RPC socket server (caddymodule/wsrpc),
// the WebSocket door: a message over a socket is served in process by the
// same core as a POST (core.Core.Serve: the caller's in-flight slot too),
// a notification is charged through the core (core.Core.Charge: the
// payers, then payment.Handler.Settle); a refusal reaches the socket typed.
func (h *Handler) provisionSockets() {
	if h.WebSocket.Off {
		return
	}
	b := wsrpc.Backend{
		Serve: func(ctx context.Context, who *payment.Caller, chainID uint64, msg *jsonrpc.Message) wsrpc.Answer {
			o := h.core.Serve(ctx, core.Request{Chain: h.chains[chainID].core, Message: msg, Caller: *who, Door: core.Socket})
			a := wsrpc.Answer{Resps: o.Resps, Body: o.Body, Status: httprpc.Status(o)}
			if o.Refused != nil {
				a.Refusal = o.Refused
			}
			return a
		},
		Charge: h.chargeSocket,
	}
	h.hookSubscriptions(&b)
	h.sockets = wsrpc.New(wsrpc.Config{Backend: b, Limits: h.WebSocket, MaxMessageBytes: h.MaxBodyBytes, MaxBatch: h.MaxBatch,
		Log: h.logger.Named("wsrpc")})
}

// serveSocket upgrades a GET /rpc[/chain] with Upgrade: websocket.
func (h *Handler) serveSocket(w http.ResponseWriter, r *http.Request, chainID uint64) error {
	if h.sockets == nil {
		web.RPCError(w, http.StatusNotFound, jsonrpc.ErrorResponse(nil, jsonrpc.InvalidRequest("this gateway offers no WebSocket; POST JSON-RPC to this URL")))
		return nil
	}
	h.sockets.Serve(w, r, chainID)
	return nil
}

// chargeSocket books one call of method for the socket's payer through the
// core (core.Core.Charge) and returns the ticket that closes the books, or
// the typed refusal, which the socket renders (an error, or
// tollgate_closing and its close code).
func (h *Handler) chargeSocket(ctx context.Context, who *payment.Caller, chainID uint64, method string) (wsrpc.Ticket, wsrpc.Refusal) {
	var cs *core.Chain
	if c := h.chains[chainID]; c != nil {
		cs = c.core
	}
	t, ref := h.core.Charge(ctx, who, cs, method)
	if ref != nil {
		return nil, ref
	}
	return wsrpc.Ticket(t), nil
}

// closeSockets ends this configuration's sockets with 1001 (Cleanup: a
// reload or shutdown), waiting a little for their close handshakes.
func (h *Handler) closeSockets() {
	if h.sockets == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	h.sockets.Close(ctx)
}

// hookSubscriptions gives the sockets the subscription hub, when there is
// one, and maps its typed errors to JSON-RPC codes and close codes.
func (h *Handler) hookSubscriptions(b *wsrpc.Backend) {
	hub := h.hub
	if hub == nil {
		return
	}
	b.Subscribe = func(chain uint64, kind string, params json.RawMessage, buffer int) (wsrpc.Sub, error) {
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
			return wsrpc.CloseSlowReader
		case errors.Is(err, subscribe.ErrHubClosed):
			return wsrpc.CloseGoingAway
		}
		return wsrpc.CloseInternal
	}
}

// socketOffer is a chain's WebSocket offer in service.json: where, what it
// costs (a call as over HTTP, eth_subscribe and each notification at their
// weights, eth_unsubscribe free), its bounds and close codes.
func (h *Handler) socketOffer(base string, chainID uint64) any {
	cs := h.chains[chainID]
	if h.sockets == nil || cs == nil {
		return nil
	}
	path := "/rpc/" + strconv.FormatUint(chainID, 10)
	if chainID == h.table.DefaultID() {
		path = "/rpc"
	}
	price := func(method string) map[string]any {
		u := money.PricePerCall * money.Units(cs.methods.Lookup(method).Units())
		return map[string]any{"usdt": money.USDT(u), "units": u.String(), "asset": "USDT"}
	}
	lim := h.WebSocket.WithDefaults()
	codes := map[string]string{}
	for c, what := range wsrpc.CloseCodes {
		codes[strconv.Itoa(c)] = what
	}
	offer := map[string]any{
		"url":                "ws" + strings.TrimPrefix(base, "http") + path,
		"auth":               "the handshake's X-API-Key header or key query parameter, SIGN-IN-WITH-X, else the IP's free tier: the payers of POST, in the same order",
		"calls":              "each JSON-RPC call or batch over the socket is metered, rate-limited and refused like a POST; a refusal is a JSON-RPC error in the caller's ids with the HTTP status, Retry-After and 402 onboarding in error.data",
		"subscriptions":      []string{},
		"subscribe_price":    price("eth_subscribe"),
		"notification_price": price("eth_subscription"),
		"unsubscribe_price":  map[string]any{"usdt": money.USDT(0), "units": "0", "asset": "USDT"},
		"payment_closing":    "when the payer cannot pay for a notification: a tollgate_closing notification (params.code, params.reason, params.error with the 402 onboarding), then close code 4402; nothing is delivered unpaid",
		"close_codes":        codes,
		"limits": map[string]any{"max_subscriptions": lim.MaxSubscriptions, "max_subscriptions_per_ip": lim.MaxSubscriptionsPerIP,
			"send_buffer_messages": lim.SendBuffer, "max_message_bytes": h.MaxBodyBytes, "max_in_flight": lim.MaxInFlight,
			"ping_interval_seconds": time.Duration(lim.PingInterval).Seconds(), "idle_timeout_seconds": time.Duration(lim.IdleTimeout).Seconds()},
	}
	if h.sockets.Subscriptions() {
		offer["subscriptions"] = []string{"newHeads", "logs", "newPendingTransactions"}
	}
	return offer
}
