package caddymodule

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// Authentication of a route, as service.json and the OpenAPI document name it.
const (
	authNone       = "none"
	authKeyOrFree  = "api_key_or_free_tier" // X-API-Key optional: credits, else the IP's free allowance
	authAPIKey     = "api_key"              // X-API-Key required
	authAdminToken = "admin_token"          // X-Admin-Token
)

// route is one entry of the gateway's route table: ServeHTTP dispatches
// with it and /.well-known/service.json lists it, so the two cannot drift.
type route struct {
	method  string // the method served (admin routes: the main one; others answer 405)
	path    string // as documented: {name} marks a path parameter
	auth    string
	summary string
	match   func(p string) bool
	serve   func(h *Handler, w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error
}

func exact(paths ...string) func(string) bool {
	return func(p string) bool {
		for _, x := range paths {
			if p == x {
				return true
			}
		}
		return false
	}
}

func prefixed(pre string) func(string) bool {
	return func(p string) bool { return strings.HasPrefix(p, pre) }
}

// adminSub matches the gateway admin paths under /admin/<root> (admin.IsAdminPath's
// roots): every depth when maxSeg is 0, else at most maxSeg segments after
// /admin/. admin.Handler answers a sub-path it does not know with its own 404.
func adminSub(root string, maxSeg int) func(string) bool {
	return func(p string) bool {
		if p != "/admin/"+root && !strings.HasPrefix(p, "/admin/"+root+"/") {
			return false
		}
		return maxSeg == 0 || strings.Count(p, "/")-1 <= maxSeg
	}
}

func metered(fn func(h *Handler, w http.ResponseWriter, r *http.Request) error) func(*Handler, http.ResponseWriter, *http.Request, caddyhttp.Handler) error {
	return func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
		return h.meteredEntry(w, r, false, func(w http.ResponseWriter, r *http.Request) error { return fn(h, w, r) })
	}
}

func get(fn func(h *Handler, w http.ResponseWriter, r *http.Request) error) func(h *Handler, w http.ResponseWriter, r *http.Request) error {
	return func(h *Handler, w http.ResponseWriter, r *http.Request) error {
		return web.OnlyGET(w, r, func(w http.ResponseWriter, r *http.Request) error { return fn(h, w, r) })
	}
}

func adminRoute(h *Handler, w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return h.admin.ServeHTTP(w, r, next)
}

// routes is the table, matched in order (first match wins). /rpc comes
// first: it is the hot path. It is filled in init: its handlers refer to it
// (service.json lists it).
var routes []route

func init() { routes = routeTable() }

func routeTable() []route {
	return []route{
		{http.MethodPost, "/rpc", authKeyOrFree, "JSON-RPC 2.0 on chain 137 (single or batch); metered per call",
			exact("/rpc", "/rpc/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return h.rpcEntry(w, r, chains.Default)
			}},
		{http.MethodGet, "/rpc/health", authNone, "per-chain, per-provider success rates, latency and last error",
			exact("/rpc/health"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.serveHealth)
			}},
		{http.MethodGet, "/rpc/stats/{chain}", authNone, "circuit-breaker states and edge-cache hit rates of a chain (name or id)",
			prefixed("/rpc/stats/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, func(w http.ResponseWriter, r *http.Request) error {
					return h.serveStats(w, r, strings.TrimPrefix(r.URL.Path, "/rpc/stats/"))
				})
			}},
		{http.MethodPost, "/rpc/{chain}", authKeyOrFree, "JSON-RPC 2.0 on another supported chain (1, 42161, 8453, 80002, 137)",
			prefixed("/rpc/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return h.rpcChain(w, r)
			}},
		{http.MethodPost, "/api/keys", authNone, "create an API key (returned once)",
			exact("/api/keys"), metered(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.CreateKey(w, r, false)
			})},
		{http.MethodPost, "/v1/machine/register", authNone, "register a machine: returns an API key",
			exact("/v1/machine/register"), metered(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.CreateKey(w, r, true)
			})},
		{http.MethodGet, "/api/keys/usage", authAPIKey, "the key's tier, daily limit, requests today, spend and credits",
			exact("/api/keys/usage"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error { return h.accounts.Usage(w, r) }))},
		{http.MethodGet, "/credits/initiate", authNone, "deposit instructions: approve and deposit calldata for RevenueVault on chain 137",
			exact("/credits/initiate"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.DepositInstructions(w, r)
			}))},
		{http.MethodGet, "/credits/deposit/initiate", authNone, "alias of /credits/initiate",
			exact("/credits/deposit/initiate"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.DepositInstructions(w, r)
			}))},
		{http.MethodGet, "/stats/free-tier", authNone, "free-tier statistics of the UTC day and the limits in force",
			exact("/stats/free-tier"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error { return h.accounts.FreeTierStats(w, r) }))},
		{http.MethodGet, "/.well-known/service.json", authNone, "this discovery document: services, prices, ways to pay, endpoints",
			exact("/.well-known/service.json"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.serveDiscovery)
			}},
		{http.MethodGet, "/.well-known/x402", authNone, "x402 discovery: the x402-payable resources and how to pay",
			exact("/.well-known/x402"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.serveWellKnownX402)
			}},
		{http.MethodGet, "/llms.txt", authNone, "what this service is and how an agent uses it (Markdown)",
			exact("/llms.txt"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.serveLLMsTxt)
			}},
		{http.MethodGet, "/v1/intelligence", authNone, "catalog of intelligence metrics: per-call price, update interval, data freshness",
			exact("/v1/intelligence", "/v1/intelligence/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.serveCatalog)
			}},
		{http.MethodGet, "/v1/intelligence/{metric}", authAPIKey, "one intelligence metric, metered at its own price from the key's credits",
			prefixed("/v1/intelligence/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.serveMetric)
			}},
		{http.MethodGet, "/openapi.yaml", authNone, "the OpenAPI 3.1 document of the gateway and settlementd",
			exact("/openapi.yaml"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, serveOpenAPI)
			}},
		{http.MethodPost, "/admin/keys/{key_id}/{action}", authAdminToken, "operator: revoke, credit or debit a key (action: revoke, credit, debit)",
			adminSub("keys", 0), adminRoute},
		{http.MethodGet, "/admin/free-tier", authAdminToken, "operator: read (GET), set (PUT) or clear (DELETE) the runtime free-tier limits",
			adminSub("free-tier", 0), adminRoute},
		{http.MethodGet, "/admin/upstreams/{chain}", authAdminToken, "operator: upstream snapshots (all chains, or one)",
			adminSub("upstreams", 2), adminRoute},
		{http.MethodPost, "/admin/upstreams/{chain}/{upstream}/reset", authAdminToken, "operator: close one upstream's circuit breaker",
			adminSub("upstreams", 0), adminRoute},
		{http.MethodPost, "/admin/probe/{chain}", authAdminToken, "operator: one eth_blockNumber through the chain's upstream pool, unmetered and uncached",
			adminSub("probe", 2), adminRoute},
	}
}

// rpcChain serves POST /rpc/{chain}: an unknown chain is a JSON-RPC 404.
func (h *Handler) rpcChain(w http.ResponseWriter, r *http.Request) error {
	seg := strings.TrimPrefix(r.URL.Path, "/rpc/")
	c, err := chains.Lookup(strings.TrimSuffix(seg, "/"))
	if err != nil || strings.Contains(strings.TrimSuffix(seg, "/"), "/") {
		web.RPCError(w, http.StatusNotFound, jsonrpc.ErrorResponse(nil, &jsonrpc.Error{
			Code: jsonrpc.CodeMethodNotFound, Message: "unsupported chain: " + web.Truncate(seg, 32) + " (supported: 137, 1, 42161, 8453, 80002)"}))
		return nil
	}
	return h.rpcEntry(w, r, c.ID)
}

// routeFor returns the route serving path p, or nil (passed on to next).
func routeFor(p string) *route {
	for i := range routes {
		if routes[i].match(p) {
			return &routes[i]
		}
	}
	return nil
}
