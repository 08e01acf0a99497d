package caddymodule

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/mcp"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// route is one entry of the gateway's route table: ServeHTTP dispatches
// with it and /.well-known/service.json lists it, so the two cannot drift.
type route struct {
	web.Route
	match func(p string) bool
	serve func(h *Handler, w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error
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

// doc is a route as documented.
func doc(method, path, auth, summary string) web.Route {
	return web.Route{Method: method, Path: path, Auth: auth, Summary: summary}
}

// routes is the table, matched in order (first match wins). /rpc comes
// first: it is the hot path. It is filled in init: its handlers refer to it
// (service.json lists it).
var routes []route

func init() { routes = routeTable() }

func routeTable() []route {
	return []route{
		{doc(http.MethodPost, "/rpc", web.AuthKeyOrFree, "JSON-RPC 2.0 on chain 137 (single or batch); metered per call"),
			exact("/rpc", "/rpc/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return h.rpcEntry(w, r, h.table.DefaultID())
			}},
		{doc(http.MethodGet, "/rpc/health", web.AuthNone, "per-chain, per-provider success rates, latency and last error"),
			exact("/rpc/health"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.health.Health)
			}},
		{doc(http.MethodGet, "/rpc/stats/{chain}", web.AuthNone, "circuit-breaker states and edge-cache hit rates of a chain (name or id)"),
			prefixed("/rpc/stats/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, func(w http.ResponseWriter, r *http.Request) error {
					return h.health.Stats(w, r, strings.TrimPrefix(r.URL.Path, "/rpc/stats/"))
				})
			}},
		{doc(http.MethodPost, "/rpc/{chain}", web.AuthKeyOrFree, "JSON-RPC 2.0 on another supported chain (1, 42161, 8453, 80002, 137)"),
			prefixed("/rpc/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return h.rpcChain(w, r)
			}},
		{doc(http.MethodPost, mcp.Path, web.AuthKeyOrFree, "MCP server (Streamable HTTP, stateless): chain tools for agents, paid like /rpc (x402 in params._meta)"),
			exact(mcp.Path), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				h.mcp.ServeHTTP(w, r)
				return nil
			}},
		{doc(http.MethodPost, "/api/keys", web.AuthNone, "create an API key (returned once)"),
			exact("/api/keys"), metered(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.CreateKey(w, r, false)
			})},
		{doc(http.MethodPost, "/v1/machine/register", web.AuthNone, "register a machine: returns an API key"),
			exact("/v1/machine/register"), metered(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.CreateKey(w, r, true)
			})},
		{doc(http.MethodGet, "/api/keys/usage", web.AuthAPIKey, "the key's tier, daily limit, requests today, spend and credits"),
			exact("/api/keys/usage"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error { return h.accounts.Usage(w, r) }))},
		{doc(http.MethodGet, "/credits/initiate", web.AuthNone, "deposit instructions: approve and deposit calldata for RevenueVault on chain 137"),
			exact("/credits/initiate"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.DepositInstructions(w, r)
			}))},
		{doc(http.MethodGet, "/credits/deposit/initiate", web.AuthNone, "alias of /credits/initiate"),
			exact("/credits/deposit/initiate"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error {
				return h.accounts.DepositInstructions(w, r)
			}))},
		{doc(http.MethodGet, "/stats/free-tier", web.AuthNone, "free-tier statistics of the UTC day and the limits in force"),
			exact("/stats/free-tier"), metered(get(func(h *Handler, w http.ResponseWriter, r *http.Request) error { return h.accounts.FreeTierStats(w, r) }))},
		{doc(http.MethodGet, "/.well-known/service.json", web.AuthNone, "this discovery document: services, prices, ways to pay, endpoints"),
			exact("/.well-known/service.json"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.discovery.ServiceJSON)
			}},
		{doc(http.MethodGet, "/.well-known/x402", web.AuthNone, "x402 discovery: the x402-payable resources and how to pay"),
			exact("/.well-known/x402"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.discovery.WellKnownX402)
			}},
		{doc(http.MethodGet, "/llms.txt", web.AuthNone, "what this service is and how an agent uses it (Markdown)"),
			exact("/llms.txt"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.discovery.LLMsTxt)
			}},
		{doc(http.MethodGet, "/v1/intelligence", web.AuthNone, "catalog of intelligence metrics: per-call price, update interval, data freshness"),
			exact("/v1/intelligence", "/v1/intelligence/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.discovery.Catalog)
			}},
		{doc(http.MethodGet, "/v1/intelligence/{metric}", web.AuthAPIKey, "one intelligence metric, metered at its own price from the key's credits"),
			prefixed("/v1/intelligence/"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.discovery.Metric)
			}},
		{doc(http.MethodGet, "/openapi.yaml", web.AuthNone, "the OpenAPI 3.1 document of the gateway and settlementd"),
			exact("/openapi.yaml"), func(h *Handler, w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
				return web.OnlyGET(w, r, h.discovery.OpenAPI)
			}},
		{doc(http.MethodPost, "/admin/keys/{key_id}/{action}", web.AuthAdminToken, "operator: revoke, credit or debit a key (action: revoke, credit, debit)"),
			adminSub("keys", 0), adminRoute},
		{doc(http.MethodGet, "/admin/free-tier", web.AuthAdminToken, "operator: read (GET), set (PUT) or clear (DELETE) the runtime free-tier limits"),
			adminSub("free-tier", 0), adminRoute},
		{doc(http.MethodGet, "/admin/upstreams/{chain}", web.AuthAdminToken, "operator: upstream snapshots (all chains, or one)"),
			adminSub("upstreams", 2), adminRoute},
		{doc(http.MethodPost, "/admin/upstreams/{chain}/{upstream}/reset", web.AuthAdminToken, "operator: close one upstream's circuit breaker"),
			adminSub("upstreams", 0), adminRoute},
		{doc(http.MethodPost, "/admin/upstreams/{chain}/{upstream}/unquarantine", web.AuthAdminToken, "operator: return a quarantined node to traffic after review"),
			adminSub("upstreams", 0), adminRoute},
		{doc(http.MethodPost, "/admin/probe/{chain}", web.AuthAdminToken, "operator: one eth_blockNumber through the chain's upstream pool, unmetered and uncached"),
			adminSub("probe", 2), adminRoute},
	}
}

// rpcChain serves POST /rpc/{chain}: an unknown chain is a JSON-RPC 404.
func (h *Handler) rpcChain(w http.ResponseWriter, r *http.Request) error {
	seg := strings.TrimPrefix(r.URL.Path, "/rpc/")
	c, err := h.table.Lookup(strings.TrimSuffix(seg, "/"))
	if err != nil || strings.Contains(strings.TrimSuffix(seg, "/"), "/") {
		web.RPCError(w, http.StatusNotFound, jsonrpc.ErrorResponse(nil, &jsonrpc.Error{
			Code: jsonrpc.CodeMethodNotFound, Message: "unsupported chain: " + web.Truncate(seg, 32) + " (supported: " + h.table.IDs() + ")"}))
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
