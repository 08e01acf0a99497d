package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// Meta keys of a tool result (x402's MCP binding, and ours).
const (
	metaPayment         = "x402/payment"          // params._meta: the x402 v2 PaymentPayload
	metaSIWX            = "x402/sign-in-with-x"   // params._meta: a SIGN-IN-WITH-X payload (object or its header value)
	metaPaymentResponse = "x402/payment-response" // result._meta: the SettlementResponse
	metaPayer           = "tollgate/payer"
	metaCalls           = "tollgate/calls"
	metaRequestID       = "tollgate/request-id"
	metaBundleKey       = "tollgate/bundle-key"
)

// The headers of /rpc's answer the room reads (caddymodule/payment).
const (
	hdrPaymentSignature = "PAYMENT-SIGNATURE"
	hdrPaymentV1        = "X-PAYMENT"
	hdrSIWX             = "SIGN-IN-WITH-X"
	hdrPaymentRequired  = "PAYMENT-REQUIRED"
	hdrPaymentResponse  = "PAYMENT-RESPONSE"
	hdrBundleKey        = "X-Tollgate-Bundle-Key"
	hdrRetryAfter       = "Retry-After"
)

// remaining maps the answer's "what is left" headers to result meta keys.
var remaining = map[string]string{
	"X-Tollgate-Credits-Remaining": "tollgate/credits-remaining",
	"X-Tollgate-Free-Remaining":    "tollgate/free-remaining",
	"X-Tollgate-Bundle-Remaining":  "tollgate/bundle-remaining",
	"X-Tollgate-Payer":             metaPayer,
	"X-Tollgate-Request-Id":        metaRequestID,
}

// call is one JSON-RPC call a tool makes.
type call struct {
	Method string
	Params []any
}

// answer is one call's answer.
type answer struct {
	Result json.RawMessage
	Error  *rpcError
}

// rpcError is a JSON-RPC error object as the node (or the gateway) sent it.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// paid is what a tool's calls came back with: the answers in order and the
// result meta of the payment; or, when nothing was served, the tool result
// the caller gets instead (refused is then non-nil).
type paid struct {
	answers []answer
	meta    sdk.Meta
	refused *sdk.CallToolResult
}

// pay serves calls on chain for the tool call req as one JSON-RPC batch
// through the hall (one metering decision).
func (s *Server) pay(req *sdk.CallToolRequest, tool string, chainID uint64, calls []call) paid {
	orig, ok := s.origin(req.Extra)
	if !ok {
		return paid{refused: toolError("the request this tool call came in is gone; send it again")}
	}
	batch := make([]map[string]any, len(calls))
	for i, c := range calls {
		params := c.Params
		if params == nil {
			params = []any{}
		}
		batch[i] = map[string]any{"jsonrpc": "2.0", "id": i, "method": c.Method, "params": params}
	}
	body, err := json.Marshal(batch)
	if err != nil {
		return paid{refused: toolError("could not encode the calls: " + err.Error())}
	}
	r := orig.Clone(orig.Context())
	r.Method = http.MethodPost
	r.URL = &url.URL{Path: "/rpc/" + strconv.FormatUint(chainID, 10)}
	r.RequestURI = r.URL.Path
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Del(originHeader)
	// Credentials in _meta go where /rpc reads them. A client that also
	// sent the payment as a header (some do) sent the same object; _meta
	// wins. A sign-in's nonce is good for one request, so a session's fixed
	// SIGN-IN-WITH-X header pays one tool call; an agent that signs in per
	// call puts the proof in _meta, where it replaces the header.
	if v, ok := req.Params.Meta[metaPayment]; ok && v != nil {
		hv, err := headerValue(v, false)
		if err != nil {
			return paid{refused: toolError("_meta." + metaPayment + " is not a JSON object")}
		}
		r.Header.Set(hdrPaymentSignature, hv)
		r.Header.Del(hdrPaymentV1)
	}
	if v, ok := req.Params.Meta[metaSIWX]; ok && v != nil {
		hv, err := headerValue(v, true)
		if err != nil {
			return paid{refused: toolError("_meta." + metaSIWX + " is not a SIGN-IN-WITH-X payload")}
		}
		r.Header.Set(hdrSIWX, hv)
	}
	rec := web.NewRecorder()
	if err := s.backend.ServeRPC(rec, r, chainID); err != nil {
		s.logger.Error("a tool's calls could not be served", zap.String("tool", tool), zap.Error(err))
		return paid{refused: toolError("the gateway could not serve the call; retry shortly")}
	}
	return s.read(rec, tool)
}

// read turns /rpc's answer into answers and meta, or a refusal.
func (s *Server) read(rec *web.Recorder, tool string) paid {
	meta := sdk.Meta{}
	for h, k := range remaining {
		if v := rec.Header().Get(h); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && k != metaRequestID {
				meta[k] = n
			} else {
				meta[k] = v
			}
		}
	}
	if v := rec.Header().Get(hdrPaymentResponse); v != "" {
		if obj, err := decodeHeader(v); err == nil {
			meta[metaPaymentResponse] = obj
		}
	}
	if v := rec.Header().Get(hdrBundleKey); v != "" {
		meta[metaBundleKey] = v
	}
	switch rec.Status() {
	case http.StatusOK:
	case http.StatusPaymentRequired:
		return paid{refused: paymentRequired(rec, tool, meta)}
	default:
		// A refusal (401, 429, 503...) or a request none of whose calls an
		// upstream answered (503: refunded).
		msg := "the gateway refused the call (HTTP " + strconv.Itoa(rec.Status()) + ")"
		var whole struct {
			Error *rpcError `json:"error"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &whole) == nil && whole.Error != nil {
			msg = whole.Error.Message
		} else if rec.Status() == http.StatusServiceUnavailable {
			msg = "no upstream could answer; nothing was charged"
		}
		if ra := rec.Header().Get(hdrRetryAfter); ra != "" {
			msg += " (retry after " + ra + " s)"
		}
		// The same error (code, message, data fields) a socket caller
		// gets for this refusal: docs/errors.md's one contract.
		e := web.RefusalError(rec.Status(), rec.Header(), rec.Body.Bytes())
		raw, _ := json.Marshal(map[string]any{"error": e})
		res := toolError(msg)
		res.StructuredContent = json.RawMessage(raw)
		res.Meta = meta
		return paid{refused: res}
	}
	var items []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &items); err != nil {
		return paid{refused: toolError("the gateway's answer could not be read: " + err.Error())}
	}
	answers := make([]answer, len(items))
	for _, it := range items {
		if it.ID < 0 || it.ID >= len(answers) {
			return paid{refused: toolError("the gateway's answer has an unknown id " + strconv.Itoa(it.ID))}
		}
		answers[it.ID] = answer{Result: it.Result, Error: it.Error}
	}
	return paid{answers: answers, meta: meta}
}

// paymentRequired is the x402 tool-result binding of a 402: isError, the
// PaymentRequired object (the same offer as /rpc's PAYMENT-REQUIRED
// header) as structuredContent and as the text content, its resource the
// tool's mcp:// URL.
func paymentRequired(rec *web.Recorder, tool string, meta sdk.Meta) *sdk.CallToolResult {
	obj, err := decodeHeader(rec.Header().Get(hdrPaymentRequired))
	if err != nil {
		return toolError("payment required, but the gateway's offer could not be read")
	}
	res, _ := obj["resource"].(map[string]any)
	if res == nil {
		res = map[string]any{}
	}
	res["url"] = "mcp://tool/" + tool
	obj["resource"] = res
	// The 402's body carries the onboarding its error text points to (the
	// key-and-credits path as data); the tool result carries it too.
	var body struct {
		Onboarding json.RawMessage `json:"onboarding"`
	}
	if json.Unmarshal(rec.Body.Bytes(), &body) == nil && len(body.Onboarding) > 0 {
		obj["onboarding"] = body.Onboarding
	}
	text, _ := json.Marshal(obj)
	out := &sdk.CallToolResult{IsError: true, StructuredContent: obj, Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}
	if len(meta) > 0 {
		out.Meta = meta
	}
	return out
}

// headerValue encodes a _meta credential as its header carries it: base64
// of its JSON; a string is taken as the header's value itself when asIs.
func headerValue(v any, asIs bool) (string, error) {
	if s, ok := v.(string); ok && asIs {
		return s, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// decodeHeader decodes an x402 header: base64 of a JSON object.
func decodeHeader(v string) (map[string]any, error) {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("not an object")
	}
	return obj, nil
}

// toolError is a tool result saying what went wrong, for the model.
func toolError(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// toolErrorf is toolError with formatting.
func toolErrorf(format string, args ...any) *sdk.CallToolResult {
	return toolError(fmt.Sprintf(format, args...))
}
