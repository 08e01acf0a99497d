// Package health is the gateway's observability room: GET /rpc/health (every
// chain's upstream pool: health, breakers, latency, capabilities,
// quarantines, WebSocket subscriptions) and GET /rpc/stats/{chain} (breaker states and the edge
// cache's hit rate), read from the pools and caches the gateway owns.
package health

import (
	"math"
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

// healthChain is one chain in GET /rpc/health. Pool is the admin view's
// upstream.Snapshot or the public view's publicSnapshot.
type healthChain struct {
	ChainID   uint64 `json:"chain_id"`
	Name      string `json:"name"`
	Healthy   bool   `json:"healthy"` // at least one upstream can take traffic
	Upstreams any    `json:"pool"`
}

// publicTrust is what the public view shows of a node's standing: its
// phase and its rung's share, never a count that moves with its checks.
// verified_matches grows by one per matched check (and verified_methods and
// node_matches with it): a node that counted what it served against it
// would learn which of its answers were checked, and its check rate — when
// lying is cheap. The operator's own views (/admin/upstreams, settlementd's
// GET /api/nodes) keep the counts.
type publicTrust struct {
	Phase            string    `json:"phase"`
	Share            float64   `json:"traffic_share"` // the rung's, before the capacity factor
	Operator         string    `json:"operator,omitempty"`
	WalletNodes      int       `json:"wallet_nodes,omitempty"`
	Penalty          bool      `json:"penalty,omitempty"`
	ProbationMatches int       `json:"probation_matches,omitempty"`
	ServingSince     time.Time `json:"serving_since,omitzero"`
}

// publicUpstream is an upstream in the public view: the snapshot with the
// node's standing as publicTrust (the field shadows the snapshot's).
type publicUpstream struct {
	upstream.UpstreamSnapshot
	Trust *publicTrust `json:"trust,omitempty"`
}

type publicSnapshot struct {
	ChainID   uint64           `json:"chain_id"`
	BestHead  uint64           `json:"best_head"`
	Upstreams []publicUpstream `json:"upstreams"`
}

// publicView is snap as the public /rpc/health shows it (after
// redactNodes).
func publicView(snap upstream.Snapshot) publicSnapshot {
	out := publicSnapshot{ChainID: snap.ChainID, BestHead: snap.BestHead, Upstreams: make([]publicUpstream, len(snap.Upstreams))}
	for i, u := range snap.Upstreams {
		if u.Kind == upstream.KindProvider {
			u = coarseCounts(u)
		}
		out.Upstreams[i].UpstreamSnapshot = u
		if tv := u.Trust; tv != nil {
			// Nor the capacity factor in the share: it falls when the
			// node's checks are dropped (upstream/checks.go).
			out.Upstreams[i].Trust = &publicTrust{Phase: tv.Phase, Share: tv.RungShare, Operator: tv.Operator, WalletNodes: tv.WalletNodes,
				Penalty: tv.Penalty, ProbationMatches: tv.ProbationMatches, ServingSince: tv.ServingSince}
		}
	}
	return out
}

// publicCountStep is the step the public view shows a provider's call
// counts in.
const publicCountStep = 1000

// coarseCounts is a provider's snapshot with its successes and latency
// samples in steps of publicCountStep, its success rate to two decimals
// and its latencies in whole milliseconds. A check of a node's answer is a
// provider call: the exact counts grew by one right after each checked
// answer, so a node serving a quiet gateway (its operator calling) would
// learn which of its answers were checked, its check rate and when checks
// are dropped — what the public trust view hides verified_matches for.
// Failures stay exact (an operator's outage signal, like last_error; a
// check moves them only when the provider fails it). A node's own counts
// are its own calls, which it knows: they stay exact.
func coarseCounts(u upstream.UpstreamSnapshot) upstream.UpstreamSnapshot {
	u.Successes -= u.Successes % publicCountStep
	u.LatencySamples -= u.LatencySamples % publicCountStep
	if u.SuccessRate != nil {
		r := math.Round(*u.SuccessRate*100) / 100
		u.SuccessRate = &r
	}
	u.P50Ms, u.P99Ms = math.Round(u.P50Ms), math.Round(u.P99Ms)
	return u
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
		if cs.WS != nil {
			ws := cs.WS()
			for i, u := range snap.Upstreams {
				if st, ok := ws[u.Name]; ok {
					snap.Upstreams[i].WS.Connected, snap.Upstreams[i].WS.Subscriptions = st.Connected, st.Subscriptions
				}
			}
		}
		hc := healthChain{ChainID: c.ID, Name: c.Name, Healthy: Available(snap), Upstreams: snap}
		if !full {
			// The public view does not publish check rates nor counts that
			// move with the checks (publicTrust); /admin/upstreams shows them.
			redactNodes(&snap)
			hc.Upstreams = publicView(snap)
		}
		out.Chains = append(out.Chains, hc)
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
