package caddymodule

import (
	"context"
	"net/http"

	"github.com/tollgate-rpc/tollgate/caddymodule/core"
	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/httprpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/mcp"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/version"
)

// mcpBackend is what the MCP room (caddymodule/mcp) reaches of the hall: a
// tool's calls are served in process by the core (core.Core.Serve) as
// POST /rpc/{chain}'s are, its refusals typed.
type mcpBackend struct{ h *Handler }

var _ mcp.Backend = mcpBackend{}

func (b mcpBackend) Chains() *chains.Table { return b.h.table }

func (b mcpBackend) Method(chainID uint64, method string) evm.Method {
	if cs := b.h.chains[chainID]; cs != nil {
		return cs.methods.Lookup(method)
	}
	return evm.Lookup(method)
}

func (b mcpBackend) Serve(ctx context.Context, who *payment.Caller, hdr http.Header, chainID uint64, msg *jsonrpc.Message) mcp.Served {
	o := b.h.core.Serve(ctx, core.Request{Chain: b.h.chains[chainID].core, Message: msg, Caller: *who, Door: core.MCP, Reply: hdr})
	return mcp.Served{Resps: o.Resps, Status: httprpc.Status(o), Refusal: o.Refused, Booked: o.Payer != "", Charged: o.Charged}
}

func (b mcpBackend) Limits() (int64, int) { return b.h.MaxBodyBytes, b.h.MaxBatch }

func (b mcpBackend) Head(chainID uint64) uint64 {
	if cs := b.h.chains[chainID]; cs != nil {
		return cs.pool.BestHead()
	}
	return 0
}

func (b mcpBackend) Meter() *meter.Meter { return b.h.meter }

func (b mcpBackend) Document(w http.ResponseWriter, r *http.Request, path string) error {
	g := r.Clone(r.Context())
	g.Method, g.Body, g.ContentLength = http.MethodGet, http.NoBody, 0
	g.URL.Path = path
	switch path {
	case "/llms.txt":
		return b.h.discovery.LLMsTxt(w, g)
	default:
		return b.h.discovery.ServiceJSON(w, g)
	}
}

// moduleVersion is the gateway module's version as the binary was built
// ("(devel)" for a build of the working tree).
func moduleVersion() string { return version.String() }
