package caddymodule

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/caddymodule/wsrpc"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// provisionSockets builds the JSON-RPC socket server (caddymodule/wsrpc) on
// this handler's HTTP path and payers: a message over a socket is served by
// the same meteredEntry and serveRPC as a POST, a notification is charged
// through payment.Handler.Authorize and settled by payment.Handler.Settle.
func (h *Handler) provisionSockets() {
	if h.WebSocket.Off {
		return
	}
	b := wsrpc.Backend{
		Call: func(w http.ResponseWriter, r *http.Request) error {
			chainID, _ := chainOf(r)
			return h.meteredEntry(w, r, true, func(w http.ResponseWriter, r *http.Request) error {
				return h.serveRPC(w, r, h.chains[chainID])
			})
		},
		Charge: h.chargeSocket,
	}
	h.hookSubscriptions(&b)
	h.sockets = wsrpc.New(wsrpc.Config{Backend: b, Limits: h.WebSocket, MaxMessageBytes: h.MaxBodyBytes, MaxBatch: h.MaxBatch,
		Log: h.logger.Named("wsrpc")})
}

// chainKey carries the socket's chain in its requests' context.
type chainKey struct{}

func chainOf(r *http.Request) (uint64, bool) {
	id, ok := r.Context().Value(chainKey{}).(uint64)
	return id, ok
}

// serveSocket upgrades a GET /rpc[/chain] with Upgrade: websocket.
func (h *Handler) serveSocket(w http.ResponseWriter, r *http.Request, chainID uint64) error {
	if h.sockets == nil {
		web.RPCError(w, http.StatusNotFound, jsonrpc.ErrorResponse(nil, jsonrpc.InvalidRequest("this gateway offers no WebSocket; POST JSON-RPC to this URL")))
		return nil
	}
	r = r.WithContext(context.WithValue(r.Context(), chainKey{}, chainID))
	h.sockets.Serve(w, r, chainID)
	return nil
}

// chargeSocket books one call of method for the socket's payer, the way
// serveRPC books an HTTP request's calls (the same payers, order, rate
// limits and refusals), and returns the ticket that closes the books:
// revenue for the server when delivered, a refund when not. Without
// metering every ticket is free.
func (h *Handler) chargeSocket(w http.ResponseWriter, r *http.Request, chainID uint64, method string) wsrpc.Ticket {
	cs := h.chains[chainID]
	if h.meter == nil || cs == nil {
		return func(events.ServedBy, bool) {}
	}
	msg := &jsonrpc.Message{Items: []jsonrpc.Item{{ID: []byte("1"), Method: method}}}
	calls, _ := msg.Calls()
	units := cs.units(calls, nil)
	d, ok := h.payers.Authorize(w, r, chainID, msg, calls, units)
	if !ok {
		return nil
	}
	return func(by events.ServedBy, delivered bool) {
		failed := 0
		if !delivered {
			failed = units
		}
		h.payers.Settle(r, discard{}, &d, by, failed)
	}
}

// discard is a response writer whose output nobody reads (Settle's
// remaining-credit headers of a notification).
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

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

// hookSubscriptions gives the sockets the subscription hub, when there is one.
func (h *Handler) hookSubscriptions(b *wsrpc.Backend) {}
