package caddymodule

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/httprpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/caddymodule/wsrpc"
)

// provisionSockets builds the JSON-RPC socket server (caddymodule/wsrpc),
// the WebSocket door: a message over a socket is served in process by the
// same core as a POST (core.Core.Serve: the caller's in-flight slot too),
// a notification is charged through the core (core.Core.Charge: the
// payers, then payment.Handler.Settle); a refusal reaches the socket typed.
//
// The sockets are told to go away (1001) once the server's listener is
// closed: Caddy listens with SO_REUSEPORT, and on a reload a connection
// queued on the old configuration's socket when it closes is reset, so a
// client that reconnected at once on our 1001 could land there. The
// server's on-shutdown hooks run after its listeners are closed
// (http.Server.Shutdown); Cleanup closes them again, for a server that
// never started (once a handshake has begun, it waits up to 3 s for the
// hook: a socket mid-upgrade is not yet counted open).
func (h *Handler) provisionSockets(ctx caddy.Context) {
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
	if h.hub != nil {
		wsrpc.UseHub(&b, h.hub)
	}
	h.sockets = wsrpc.New(wsrpc.Config{Backend: b, Limits: h.WebSocket, MaxMessageBytes: h.MaxBodyBytes, MaxBatch: h.MaxBatch,
		Log: h.logger.Named("wsrpc")})
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok {
		closed := make(chan struct{})
		h.listenerClosed = closed
		var once sync.Once
		srv.RegisterOnShutdown(func() {
			once.Do(func() { close(closed) })
			h.closeSockets()
		})
	}
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

// closeSockets ends this configuration's sockets with 1001 (the server's
// shutdown or Cleanup: a reload or shutdown), waiting a little for their
// close handshakes.
func (h *Handler) closeSockets() {
	if h.sockets == nil {
		return
	}
	if h.listenerClosed != nil && h.sockets.Began() {
		// Cleanup runs as soon as the server's shutdown has begun, maybe
		// before its listener is closed (provisionSockets).
		select {
		case <-h.listenerClosed:
		case <-time.After(3 * time.Second):
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	h.sockets.Close(ctx)
}

// socketOffer is a chain's WebSocket offer in service.json (wsrpc.Server.Offer).
func (h *Handler) socketOffer(base string, chainID uint64) any {
	cs := h.chains[chainID]
	if h.sockets == nil || cs == nil {
		return nil
	}
	path := "/rpc/" + strconv.FormatUint(chainID, 10)
	if chainID == h.table.DefaultID() {
		path = "/rpc"
	}
	return h.sockets.Offer("ws"+strings.TrimPrefix(base, "http")+path, func(method string) int { return cs.methods.Lookup(method).Units() })
}
