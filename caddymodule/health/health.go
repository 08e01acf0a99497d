// Package health is the gateway's observability room: GET /rpc/health (every
// chain's upstream pool: health, breakers, latency, capabilities,
// quarantines, WebSocket subscriptions) and GET /rpc/stats/{chain} (breaker states and the edge
// cache's hit rate), read from the pools and caches the gateway owns.
package health

import (
	"net/http"
	"slices"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/cache"
	"github.com/tollgate-rpc/tollgate/caddymodule/subscribe"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// Chain is what the room reads of one served chain.
type Chain struct {
	Pool  *upstream.Pool
	Cache *cache.Cache
	// WS reports the subscriptions open per upstream name (the gateway's
	// subscribe.Hub); nil: none.
	WS func() map[string]subscribe.UpstreamState
}

// Handler serves the observability routes.
type Handler struct {
	table  *chains.Table // this config's chains, in the order shown
	chains map[uint64]Chain
	admin  func(*http.Request) bool
}

// New builds the room over the gateway's chains. admin says whether a
// request carries the gateway's admin token (nil: never): only then does
// /rpc/health show registered nodes' hosts and errors.
func New(t *chains.Table, c map[uint64]Chain, admin func(*http.Request) bool) *Handler {
	return &Handler{table: t, chains: c, admin: admin}
}

// redactNodes blanks what a registered node's operator runs and what it
// answered (its host, its last error, the reason it is unhealthy): the
// public view shows that a node is there and how it does, not where it is
// or what its software said. Providers are the platform's own and stay as
// the original specification shows them; a node's quarantine reason is the gateway's verdict
// and stays too.
func redactNodes(snap *upstream.Snapshot) {
	for i := range snap.Upstreams {
		u := &snap.Upstreams[i]
		if u.Kind != upstream.KindNode {
			continue
		}
		u.Host, u.LastError, u.HealthReason = "", "", ""
		u.Checks = nil // offered against served would tell a node its check rate
	}
}

// healthChain is one chain in GET /rpc/health.
type healthChain struct {
	ChainID   uint64            `json:"chain_id"`
	Name      string            `json:"name"`
	Healthy   bool              `json:"healthy"` // at least one upstream can take traffic
	Upstreams upstream.Snapshot `json:"pool"`
}

// Health answers GET /rpc/health: per chain, per upstream success rate,
// latency, last error, breaker state and head block; registered nodes'
// hosts and errors only with the admin token ("view": "public" or "admin").
func (h *Handler) Health(w http.ResponseWriter, r *http.Request) error {
	full := h.admin != nil && h.admin(r)
	out := struct {
		Time   string        `json:"time"`
		View   string        `json:"view"`
		Chains []healthChain `json:"chains"`
	}{Time: time.Now().UTC().Format(time.RFC3339), View: "public"}
	if full {
		out.View = "admin"
	}
	for _, c := range h.table.All() {
		cs := h.chains[c.ID]
		snap := cs.Pool.Snapshot()
		if !full {
			redactNodes(&snap)
			for i := range snap.Upstreams {
				// The public view does not publish check rates: a node that
				// knew how rarely it is checked would know when lying is
				// cheap. /admin/upstreams shows them.
				if tv := snap.Upstreams[i].Trust; tv != nil {
					v := *tv
					v.CheckRate = 0
					// Nor the capacity factor in the share: it falls when the
					// node's checks are dropped (upstream/checks.go).
					v.Share = v.RungShare
					snap.Upstreams[i].Trust = &v
				}
			}
		}
		if cs.WS != nil {
			ws := cs.WS()
			for i, u := range snap.Upstreams {
				if st, ok := ws[u.Name]; ok {
					snap.Upstreams[i].WS.Connected, snap.Upstreams[i].WS.Subscriptions = st.Connected, st.Subscriptions
				}
			}
		}
		out.Chains = append(out.Chains, healthChain{ChainID: c.ID, Name: c.Name, Healthy: Available(snap), Upstreams: snap})
	}
	web.JSON(w, http.StatusOK, out)
	return nil
}

// Stats answers GET /rpc/stats/{name|id}: breaker states and the edge
// cache hit rate of one chain.
func (h *Handler) Stats(w http.ResponseWriter, r *http.Request, which string) error {
	c, err := h.table.Lookup(which)
	if err != nil {
		web.Error(w, http.StatusNotFound, "unknown_chain", "unknown chain "+web.Truncate(which, 32)+"; use a name ("+h.table.Names()+") or a chain id")
		return nil
	}
	cs := h.chains[c.ID]
	snap := cs.Pool.Snapshot()
	type breaker struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		State  string `json:"state"`
		Health string `json:"health"`
	}
	var bs []breaker
	for _, u := range snap.Upstreams {
		bs = append(bs, breaker{Name: u.Name, Kind: string(u.Kind), State: string(u.Breaker), Health: healthState(u)})
	}
	slices.SortFunc(bs, func(a, b breaker) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	web.JSON(w, http.StatusOK, map[string]any{
		"chain_id":         c.ID,
		"name":             c.Name,
		"circuit_breakers": bs,
		"cache":            cs.Cache.Stats(),
		"hedges":           cs.Pool.Hedges(),
	})
	return nil
}

// Available reports whether any upstream of the pool can take traffic now.
func Available(s upstream.Snapshot) bool {
	for _, u := range s.Upstreams {
		if u.Healthy && u.Breaker != upstream.BreakerOpen && !u.RateLimited {
			return true
		}
	}
	return false
}

// healthState is one word for an upstream's probe state.
func healthState(u upstream.UpstreamSnapshot) string {
	switch {
	case !u.Probed:
		return "unprobed"
	case !u.Healthy:
		return "unhealthy"
	case u.Lagging:
		return "lagging"
	}
	return "healthy"
}
