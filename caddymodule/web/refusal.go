package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// RefusalError is the JSON-RPC error a caller that has no HTTP status of
// its own (a WebSocket message, an MCP tool call) gets for a request the
// HTTP path refused with status, hdr and body: the HTTP answer's own error
// (code and message) when it is a JSON-RPC body, or the 402's x402 body.
// Its data holds the same fields the HTTP error's data holds (retry_after,
// reason, ...) plus http_status, retry_after from the Retry-After header
// when the body had none, and payment_required (the 402's x402 body with
// its onboarding): one contract for HTTP, WebSocket and MCP
// (docs/errors.md). A non-object data is kept under detail.
func RefusalError(status int, hdr http.Header, body []byte) *jsonrpc.Error {
	d := map[string]json.RawMessage{"http_status": json.RawMessage(strconv.Itoa(status))}
	e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: http.StatusText(status)}
	var rpc struct {
		Error *jsonrpc.Error `json:"error"`
	}
	var x402 struct {
		Error       string          `json:"error"`
		X402Version int             `json:"x402Version"`
		Onboarding  json.RawMessage `json:"onboarding"`
	}
	switch {
	case status == http.StatusPaymentRequired && json.Unmarshal(body, &x402) == nil && x402.X402Version > 0:
		e.Code, e.Message = jsonrpc.CodePaymentRequired, "Payment required"
		if x402.Error != "" {
			e.Message += ": " + x402.Error
		}
		d["payment_required"] = json.RawMessage(bytes.TrimSpace(body))
	case json.Unmarshal(body, &rpc) == nil && rpc.Error != nil:
		e.Code, e.Message = rpc.Error.Code, rpc.Error.Message
		var fields map[string]json.RawMessage
		switch {
		case len(rpc.Error.Data) == 0 || !json.Valid(rpc.Error.Data):
		case json.Unmarshal(rpc.Error.Data, &fields) == nil && fields != nil:
			for k, v := range fields {
				if _, taken := d[k]; !taken {
					d[k] = v
				}
			}
		default:
			d["detail"] = rpc.Error.Data
		}
	case status == http.StatusPaymentRequired:
		e.Code, e.Message = jsonrpc.CodePaymentRequired, "Payment required"
	}
	if _, ok := d["retry_after"]; !ok {
		if s, err := strconv.Atoi(hdr.Get("Retry-After")); err == nil && s > 0 {
			d["retry_after"] = json.RawMessage(strconv.Itoa(s))
		}
	}
	e.Data, _ = json.Marshal(d) // map keys sorted: a stable encoding
	return e
}
