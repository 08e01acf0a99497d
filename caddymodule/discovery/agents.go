package discovery

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate-rpc/tollgate/caddymodule/mcp"
	"github.com/tollgate-rpc/tollgate/caddymodule/paycheck"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Discovery for agents and x402 indexers, generated from the same route
// table as /.well-known/service.json so the three cannot drift:
//
//   - /.well-known/x402: the x402 discovery document indexers read
//     (x402scan's well-known form: version, resources, instructions): every
//     concrete URL an x402 payment buys calls on;
//   - /llms.txt: what the service is and how an agent uses it, in the
//     llms.txt Markdown convention.

// x402Resources are the concrete URLs of the x402-payable routes (those a
// keyless caller pays for): /rpc and /rpc/{chain} for every chain.
func (h *Handler) x402Resources(base string) []string {
	var out []string
	for _, rt := range h.routes {
		// /mcp is paid through tool results, not a 402: its tools are
		// listed under "mcp".
		if rt.Auth != web.AuthKeyOrFree || rt.Path == mcp.Path {
			continue
		}
		if !strings.Contains(rt.Path, "{chain}") {
			out = append(out, base+rt.Path)
			continue
		}
		for _, c := range h.chains.All() {
			out = append(out, base+strings.ReplaceAll(rt.Path, "{chain}", strconv.FormatUint(c.ID, 10)))
		}
	}
	return out
}

// WellKnownX402 answers GET /.well-known/x402.
func (h *Handler) WellKnownX402(w http.ResponseWriter, r *http.Request) error {
	base := h.pay.BaseURL(r)
	doc := map[string]any{
		"version":      1,
		"resources":    h.x402Resources(base),
		"instructions": h.agentGuide(base),
	}
	doc["mcp"] = h.mcpService(base)
	if h.meter != nil {
		doc["accepts"] = map[string]any{"scheme": paycheck.Scheme, "network": paycheck.NetworkV2, "asset": h.pay.Asset,
			"payTo": h.pay.PayTo, "amount": money.BundlePrice.String(), "calls": money.BundleCalls}
	}
	web.JSON(w, http.StatusOK, doc)
	return nil
}

// LLMsTxt answers GET /llms.txt.
func (h *Handler) LLMsTxt(w http.ResponseWriter, r *http.Request) error {
	base := h.pay.BaseURL(r)
	var b strings.Builder
	b.WriteString("# Tollgate\n\n")
	b.WriteString("> A metered blockchain JSON-RPC gateway. POST JSON-RPC 2.0 to " + base + "/rpc (Polygon, chain 137) or " +
		base + "/rpc/{chainId}. Pay per call: a daily free tier per IP, prepaid USDT credits on an API key, or keyless x402 USDC payments.\n\n")
	b.WriteString(h.agentGuide(base))
	b.WriteString(h.mcpGuide(base))
	b.WriteString("\n## Endpoints\n\n")
	for _, rt := range h.routes {
		if rt.Auth == web.AuthAdminToken {
			continue
		}
		fmt.Fprintf(&b, "- %s %s%s (auth: %s): %s\n", rt.Method, base, rt.Path, rt.Auth, rt.Summary)
	}
	b.WriteString("\n## Machine-readable\n\n")
	fmt.Fprintf(&b, "- [service.json](%s/.well-known/service.json): services, prices, ways to pay, every endpoint\n", base)
	fmt.Fprintf(&b, "- [x402 discovery](%s/.well-known/x402): the x402-payable resources\n", base)
	fmt.Fprintf(&b, "- [OpenAPI](%s/openapi.yaml): every request and answer schema\n", base)
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(b.String()))
	return nil
}

// agentGuide is how an agent pays, in a few Markdown lines.
func (h *Handler) agentGuide(base string) string {
	var b strings.Builder
	b.WriteString("## How an agent pays\n\n")
	b.WriteString("- eth_chainId, net_version and eth_accounts are answered free, always.\n")
	if h.meter == nil {
		b.WriteString("- This gateway runs without metering: every call is free.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "- Every JSON-RPC call costs %s USDT (%s base units); a batch item is one call.\n",
		money.PricePerCall.Decimal(), money.PricePerCall.String())
	if w := h.pay.AllWeights(); len(w) > 0 {
		b.WriteString("- Weighted methods count as several calls (their weight) in the price, the free tier and a bundle:")
		for _, id := range slices.Sorted(maps.Keys(w)) {
			for _, m := range slices.Sorted(maps.Keys(w[id])) {
				fmt.Fprintf(&b, " %s on chain %s ×%d;", m, id, w[id][m])
			}
		}
		b.WriteString(" the 402 body's price.method_weights and service.json list them.\n")
	}
	b.WriteString("- Without credentials an IP gets a daily free tier; after it, POST /rpc answers 402. The 402 body's " +
		"`onboarding.steps` is the key-and-credits path as data (register, deposit transactions in order, poll, call), " +
		"and its `accepts` (and the PAYMENT-REQUIRED header) is an x402 offer.\n")
	fmt.Fprintf(&b, "- x402: pay %s USDC on %s (scheme %s) with any x402 client; the payment buys %d calls for the paying "+
		"wallet. While they last, the wallet's further payments are served from them and never settled, and a "+
		"SIGN-IN-WITH-X proof or the returned X-Tollgate-Bundle-Key (as X-API-Key) draws on them without signing a payment.\n",
		money.BundlePrice.Decimal(), paycheck.NetworkV2, paycheck.Scheme, money.BundleCalls)
	fmt.Fprintf(&b, "- API key: POST %s/v1/machine/register, then deposit USDT on chain %d (GET %s/credits/initiate?amount_units=…), "+
		"then send X-API-Key.\n", base, chains.Default, base)
	return b.String()
}

// mcpService describes the MCP server (caddymodule/mcp) for service.json
// and /.well-known/x402: its endpoint, tools and what each costs.
func (h *Handler) mcpService(base string) map[string]any {
	tools := make([]map[string]any, len(mcp.Tools))
	for i, t := range mcp.Tools {
		tools[i] = map[string]any{"name": t.Name, "description": t.Description, "calls": t.Calls}
		if t.Calls != "0" {
			tools[i]["x402_resource"] = "mcp://tool/" + t.Name
		}
	}
	return map[string]any{"id": "mcp", "type": "mcp", "transport": "streamable-http", "stateless": true,
		"method": http.MethodPost, "path": mcp.Path, "url": base + mcp.Path, "auth": web.AuthKeyOrFree,
		"price": priceOf(money.PricePerCall), "price_unit": "per JSON-RPC call a tool makes (method weights apply)",
		"payment": map[string]any{"api_key": "X-API-Key header",
			"siwx":      `SIGN-IN-WITH-X header, or per call in params._meta["x402/sign-in-with-x"] (a sign-in's nonce pays one request)`,
			"x402":      `params._meta["x402/payment"] after a tool result with isError and the PaymentRequired object; the receipt in result._meta["x402/payment-response"]`,
			"free_tier": "per IP, shared with /rpc"},
		"tools": tools}
}

// mcpGuide is the llms.txt section on the MCP server.
func (h *Handler) mcpGuide(base string) string {
	var b strings.Builder
	b.WriteString("\n## Agents over MCP\n\n")
	fmt.Fprintf(&b, "- MCP server (Streamable HTTP, stateless): %s%s. Every tool takes an optional `chain` (name or id).\n", base, mcp.Path)
	b.WriteString("- Paid like /rpc, from the same credentials: X-API-Key or SIGN-IN-WITH-X on the HTTP requests (a sign-in also per call in " +
		"`params._meta[\"x402/sign-in-with-x\"]`: its nonce pays one request), the free tier of your IP, " +
		"or x402: an unpaid call returns a tool result with isError and the x402 PaymentRequired object; send the same call again " +
		"with the payment in `params._meta[\"x402/payment\"]`; the receipt is in `result._meta[\"x402/payment-response\"]`.\n")
	b.WriteString("- Tools (cost in calls):")
	for _, t := range mcp.Tools {
		fmt.Fprintf(&b, " `%s` (%s);", t.Name, t.Calls)
	}
	b.WriteString("\n")
	return b.String()
}
