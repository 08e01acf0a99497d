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
//
// The doors build it from the typed refusal (RefusalOf); this form reads an
// HTTP answer back, for what still arrives as one.
func RefusalError(status int, hdr http.Header, body []byte) *jsonrpc.Error {
	var rpc struct {
		Error *jsonrpc.Error `json:"error"`
	}
	var x402 struct {
		Error       string          `json:"error"`
		X402Version int             `json:"x402Version"`
		Onboarding  json.RawMessage `json:"onboarding"`
	}
	retry := 0
	if s, err := strconv.Atoi(hdr.Get("Retry-After")); err == nil && s > 0 {
		retry = s
	}
	switch {
	case status == http.StatusPaymentRequired && json.Unmarshal(body, &x402) == nil && x402.X402Version > 0:
		return RefusalOf(status, retry, nil, &X402Refusal{Error: x402.Error, Body: body})
	case json.Unmarshal(body, &rpc) == nil && rpc.Error != nil:
		return RefusalOf(status, retry, rpc.Error, nil)
	}
	return RefusalOf(status, retry, nil, nil)
}

// X402Refusal is a 402's x402 answer: its error text and its body (the v1
// PaymentRequired object with onboarding).
type X402Refusal struct {
	Error string
	Body  []byte
}

// RefusalOf is RefusalError built from the refusal's parts rather than read
// back from an HTTP answer: its status, its Retry-After seconds (0: none),
// the JSON-RPC error its HTTP body carries (nil for a 402) and, for a 402,
// its x402 answer. Every door renders a refusal's JSON-RPC error through it.
func RefusalOf(status, retryAfter int, rpc *jsonrpc.Error, x402 *X402Refusal) *jsonrpc.Error {
	d := map[string]json.RawMessage{"http_status": json.RawMessage(strconv.Itoa(status))}
	e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: http.StatusText(status)}
	switch {
	case status == http.StatusPaymentRequired && x402 != nil:
		e.Code, e.Message = jsonrpc.CodePaymentRequired, "Payment required"
		if x402.Error != "" {
			e.Message += ": " + x402.Error
		}
		d["payment_required"] = json.RawMessage(bytes.TrimSpace(x402.Body))
	case rpc != nil:
		e.Code, e.Message = rpc.Code, rpc.Message
		var fields map[string]json.RawMessage
		switch {
		case len(rpc.Data) == 0 || !json.Valid(rpc.Data):
		case json.Unmarshal(rpc.Data, &fields) == nil && fields != nil:
			for k, v := range fields {
				if _, taken := d[k]; !taken {
					d[k] = v
				}
			}
		default:
			d["detail"] = rpc.Data
		}
	case status == http.StatusPaymentRequired:
		e.Code, e.Message = jsonrpc.CodePaymentRequired, "Payment required"
	}
	if _, ok := d["retry_after"]; !ok && retryAfter > 0 {
		d["retry_after"] = json.RawMessage(strconv.Itoa(retryAfter))
	}
	e.Data, _ = json.Marshal(d) // map keys sorted: a stable encoding
	return e
}
