package caddymodule

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/health"
	"github.com/tollgate-rpc/tollgate/caddymodule/httprpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/caddymodule/wsrpc"
)

// ServeHTTP routes the handler's own paths (the route table, routes.go) and
// passes everything else on, so the handler can sit in front of other
// routes in one site block.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.dev && !loopbackConn(r) {
		h.devLeak.Do(func() {
			h.logger.Error("the dev profile is on and a request arrived on a non-loopback address: refusing every request " +
				"not made on this machine's loopback (unset TOLLGATE_DEV / dev off for a deployment)")
		})
		web.Error(w, http.StatusServiceUnavailable, "dev_profile",
			"this gateway runs in the dev profile, which only serves its own machine's loopback")
		return nil
	}
	if rt := routeFor(r.URL.Path); rt != nil {
		if !web.BodyDeadline(w, r, h.MaxBodyBytes, time.Duration(h.BodyTimeout), rt.Auth == web.AuthKeyOrFree) {
			return nil
		}
		return rt.serve(h, w, r, next)
	}
	// The balancer's paths (health.Readiness) are the operator's, not the
	// callers' API: outside the route table, so service.json and
	// openapi.yaml do not list them.
	switch r.URL.Path {
	case health.LivePath:
		return web.OnlyGET(w, r, health.Live)
	case health.ReadyPath:
		var ping func(context.Context) bool
		if rdb := h.redis; rdb != nil {
			ping = func(ctx context.Context) bool { return rdb.Ping(ctx).Err() == nil }
		}
		return web.OnlyGET(w, r, func(w http.ResponseWriter, r *http.Request) error { return h.ready.Ready(w, r, ping) })
	}
	return next.ServeHTTP(w, r)
}

// rpcEntry is /rpc's and /rpc/{chain}'s entry: CORS, a WebSocket upgrade,
// the batch-settlement refund GET, else the POST door (httprpc) inside the
// caller's in-flight slot.
func (h *Handler) rpcEntry(w http.ResponseWriter, r *http.Request, chainID uint64) error {
	if httprpc.CORS(w, r) {
		return nil
	}
	// The same paths upgrade to a JSON-RPC WebSocket (socket.go).
	if r.Method == http.MethodGet && wsrpc.IsUpgrade(r) {
		return h.serveSocket(w, r, chainID)
	}
	// A GET is the x402 batch-settlement client's cooperative refund (its
	// probe, then its refund payload) when the gateway offers the scheme.
	if r.Method == http.MethodGet && h.payers != nil && h.payers.ServeBatchRefund(w, r) {
		return nil
	}
	if r.Method != http.MethodPost {
		httprpc.NotPost(w)
		return nil
	}
	return h.meteredEntry(w, r, true, func(w http.ResponseWriter, r *http.Request) error {
		return h.post.Serve(w, r, h.chains[chainID].core)
	})
}

// loopbackConn says whether r arrived on a loopback address (or a Unix
// socket) of this machine. The dev profile accepts money addresses whose
// keys are public; it is for make demo and the tests on this machine, so a
// request that reached the gateway any other way (a balancer, a caller on
// the network) means the profile leaked into a deployment, and the gateway
// refuses it — /readyz too, so a balancer pulls the gateway.
func loopbackConn(r *http.Request) bool {
	switch a := r.Context().Value(http.LocalAddrContextKey).(type) {
	case *net.UnixAddr:
		return true
	case net.Addr:
		ap, err := netip.ParseAddrPort(a.String())
		return err == nil && ap.Addr().Unmap().IsLoopback()
	}
	return false
}
