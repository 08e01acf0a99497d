package caddymodule

import (
	"encoding/json"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// ServeHTTP routes the handler's own paths (the route table, routes.go) and
// passes everything else on, so the handler can sit in front of other
// routes in one site block.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if rt := routeFor(r.URL.Path); rt != nil {
		if !h.bodyDeadline(w, r, rt.auth == authKeyOrFree) {
			return nil
		}
		return rt.serve(h, w, r, next)
	}
	return next.ServeHTTP(w, r)
}

// corsAllowedHeaders are the request headers a browser may send to /rpc:
// the x402 payment and sign-in headers, and Access-Control-Expose-Headers,
// which the x402 fetch wrappers wrongly send as a request header (research
// x402.md §5.3) — a preflight refusing it would break every browser payment.
const corsAllowedHeaders = "Content-Type, X-API-Key, PAYMENT-SIGNATURE, X-PAYMENT, SIGN-IN-WITH-X, Access-Control-Expose-Headers"

func (h *Handler) rpcEntry(w http.ResponseWriter, r *http.Request, chainID uint64) error {
	// CORS: /rpc takes no cookies (credentials are headers the caller sets),
	// so any origin may call it and read the payment headers.
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Access-Control-Expose-Headers", exposedHeaders)
	if r.Method == http.MethodOptions {
		hdr.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		hdr.Set("Access-Control-Allow-Headers", corsAllowedHeaders)
		hdr.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		writeRPCError(w, http.StatusMethodNotAllowed, jsonrpc.ErrorResponse(nil, jsonrpc.InvalidRequest("JSON-RPC requests must use POST")))
		return nil
	}
	return h.meteredEntry(w, r, true, func(w http.ResponseWriter, r *http.Request) error {
		return h.serveRPC(w, r, h.chains[chainID])
	})
}

func (h *Handler) onlyGET(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter, *http.Request) error) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
		return nil
	}
	return fn(w, r)
}

// writeError writes the REST error body of DESIGN §5.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeRPCError(w http.ResponseWriter, status int, resp jsonrpc.Response) {
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
