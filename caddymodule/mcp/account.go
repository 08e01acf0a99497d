package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// account reads what the caller has left, booking nothing: the key's
// credits when the request carries X-API-Key, and the free calls its
// address has left today.
func (s *Server) account(ctx context.Context, req *sdk.CallToolRequest, _ noIn) *sdk.CallToolResult {
	r, ok := s.origin(req.Extra)
	if !ok {
		return toolError("the request this tool call came in is gone; send it again")
	}
	prices := make(map[string]string, len(Tools))
	for _, t := range Tools {
		prices[t.Name] = t.Calls
	}
	out := map[string]any{"price_per_call_usdt": money.USDT(money.PricePerCall), "price_per_call_units": money.PricePerCall.String(), "tool_calls": prices}
	m := s.backend.Meter()
	if m == nil {
		out["metering"] = "off: calls are not charged on this gateway"
		return served(out, nil)
	}
	left, lim, err := m.FreeLeft(ctx, web.ClientIP(r))
	if err != nil {
		return toolError("the metering store is unavailable; retry shortly")
	}
	out["free_calls_left_today"] = left
	out["free_calls_per_day"] = lim.DailyPerIP
	if key, present := web.APIKey(r); present {
		if !meter.WellFormedKey(key) {
			return toolError(web.MsgMalformedKey)
		}
		u, st, err := m.Usage(ctx, meter.HashKey(key))
		switch {
		case err != nil:
			return toolError("the metering store is unavailable; retry shortly")
		case st == meter.KeyUnknown:
			return toolError(web.MsgUnknownKey)
		case st == meter.KeyRevoked:
			return toolError(web.MsgRevokedKey)
		}
		key := map[string]any{"key_id": u.KeyID, "tier": u.Tier, "credits_remaining_usdt": money.USDT(u.Balance),
			"credits_remaining_calls": int64(u.Balance / money.PricePerCall), "requests_today": u.RequestsToday}
		if u.Wallet != "" {
			// A bundle key: its calls are the wallet's x402 bundle's.
			left, err := m.BundleLeft(ctx, u.Wallet)
			if err != nil {
				return toolError("the metering store is unavailable; retry shortly")
			}
			key["bundle"] = map[string]any{"wallet": u.Wallet, "calls_remaining": left}
		}
		out["api_key"] = key
	}
	return served(out, nil)
}

// Resources: the discovery document and llms.txt, as the gateway serves
// them at their HTTP paths.
var resources = []struct{ uri, name, path, desc string }{
	{"tollgate://service.json", "service.json", "/.well-known/service.json", "The gateway's discovery document: chains, prices, ways to pay, endpoints (also at /.well-known/service.json)."},
	{"tollgate://llms.txt", "llms.txt", "/llms.txt", "How an agent uses this gateway, in Markdown (also at /llms.txt)."},
}

func (s *Server) addResources() {
	for _, res := range resources {
		path := res.path
		s.sdk.AddResource(&sdk.Resource{URI: res.uri, Name: res.name, Description: res.desc},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				r, ok := s.origin(req.Extra)
				if !ok {
					return nil, errors.New("the request is gone")
				}
				rec := web.NewRecorder()
				if err := s.backend.Document(rec, r, path); err != nil {
					return nil, err
				}
				if rec.Status() != http.StatusOK {
					return nil, fmt.Errorf("%s answered HTTP %d", path, rec.Status())
				}
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI,
					MIMEType: rec.Header().Get("Content-Type"), Text: rec.Body.String()}}}, nil
			})
	}
}
