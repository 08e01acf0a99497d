package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
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
	hdrPaymentResponse  = "Payment-Response" // PAYMENT-RESPONSE, in the form Get looks up without copying
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
	// refused: the gateway's parser refused the call (no node saw it).
	refused bool
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
// through the gateway's core, in process (one metering decision).
func (s *Server) pay(req *sdk.CallToolRequest, tool string, chainID uint64, calls []call) paid {
	orig, ok := s.origin(req.Extra)
	if !ok {
		return paid{refused: toolError("the request this tool call came in is gone; send it again")}
	}
	body, err := encodeBatch(calls)
	if err != nil {
		return paid{refused: toolError("could not encode the calls: " + err.Error())}
	}
	// The batch is held to POST's limits, as if it had been POSTed.
	maxBody, maxBatch := s.backend.Limits()
	var msg *jsonrpc.Message
	var rej *jsonrpc.Rejection
	if int64(len(body)) > maxBody {
		rej = jsonrpc.BodyTooLarge(maxBody)
	} else {
		msg, rej = jsonrpc.Parse(body, jsonrpc.Options{MaxBatch: maxBatch})
	}
	if rej != nil {
		return paid{refused: refusedResult(rej.Response.Error.Message, web.RefusalOf(rej.Status, 0, rej.Response.Error, nil), sdk.Meta{})}
	}
	// Who asks is the tool call's request, as if it had POSTed the batch
	// to /rpc/{chain} (the resource a 402 offers).
	who := payment.CallerOf(orig)
	who.Path = "/rpc/" + strconv.FormatUint(chainID, 10)
	// Credentials in _meta go where the payers read them. A client that
	// also sent the payment as a header (some do) sent the same object;
	// _meta wins. A sign-in's nonce is good for one request, so a session's
	// fixed SIGN-IN-WITH-X header pays one tool call; an agent that signs
	// in per call puts the proof in _meta, where it replaces the header.
	if v, ok := req.Params.Meta[metaPayment]; ok && v != nil {
		hv, err := headerValue(v, false)
		if err != nil {
			return paid{refused: toolError("_meta." + metaPayment + " is not a JSON object")}
		}
		who.PaymentName, who.Payment = hdrPaymentSignature, hv
	}
	if v, ok := req.Params.Meta[metaSIWX]; ok && v != nil {
		hv, err := headerValue(v, true)
		if err != nil {
			return paid{refused: toolError("_meta." + metaSIWX + " is not a SIGN-IN-WITH-X payload")}
		}
		who.SIWX = hv
	}
	hdr := http.Header{}
	return s.read(msg, s.backend.Serve(orig.Context(), &who, hdr, chainID, msg), hdr, tool)
}

// encodeBatch is the JSON-RPC batch of calls, ids 0, 1, ... in order: the
// bytes json.Marshal gives for []map[string]any{{"jsonrpc": "2.0", "id": i,
// "method": m, "params": p}} (its keys sorted, params [] when nil), written
// without building the maps.
func encodeBatch(calls []call) ([]byte, error) {
	b := make([]byte, 0, 64*len(calls)+16)
	b = append(b, '[')
	for i, c := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"jsonrpc":"2.0","method":`...)
		m, err := json.Marshal(c.Method)
		if err != nil {
			return nil, err
		}
		b = append(b, m...)
		b = append(b, `,"params":`...)
		if c.Params == nil {
			b = append(b, "[]"...)
		} else {
			p, err := json.Marshal(c.Params)
			if err != nil {
				return nil, err
			}
			b = append(b, p...)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// read turns the core's outcome into answers and meta, or the tool result
// of a refusal, rendered from the typed refusal.
func (s *Server) read(msg *jsonrpc.Message, o Served, hdr http.Header, tool string) paid {
	meta := sdk.Meta{}
	for h, k := range remaining {
		if v := hdr.Get(h); v != "" {
			if n, ok := headerInt(v); ok && k != metaRequestID {
				meta[k] = n
			} else {
				meta[k] = v
			}
		}
	}
	if v := hdr.Get(hdrPaymentResponse); v != "" {
		if obj, err := decodeHeader(v); err == nil {
			meta[metaPaymentResponse] = obj
		}
	}
	if v := hdr.Get(hdrBundleKey); v != "" {
		meta[metaBundleKey] = v
	}
	if ref := o.Refusal; ref != nil {
		if ref.Offer() != nil {
			return paid{refused: paymentRequired(ref.Offer(), tool, meta)}
		}
		// A refusal (401, 429, 503...): its own message, and the same
		// error (code, message, data fields) a socket caller gets for it:
		// docs/errors.md's one contract.
		msg := ref.RPCError().Message
		if ra := ref.Retry(); ra > 0 {
			msg += " (retry after " + strconv.Itoa(ra) + " s)"
		}
		return paid{refused: refusedResult(msg, ref.JSONRPC(), meta)}
	}
	if o.Status != http.StatusOK {
		// No upstream answered any call (503): refunded.
		return paid{refused: refusedResult("no upstream could answer; nothing was charged", web.RefusalOf(o.Status, 0, nil, nil), meta)}
	}
	answers := make([]answer, len(o.Resps))
	for i, r := range o.Resps {
		e, refused := r.Error, false
		if i < len(msg.Items) && msg.Items[i].Err != nil {
			// An item the parser refused (a method name over the length
			// limit) was neither served nor charged, and the core left
			// its response empty: its answer is the parser's error, as
			// POST's answer carries it, never a served null result.
			e, refused = msg.Items[i].Err, true
		}
		answers[i] = answer{Result: r.Result}
		if e != nil {
			answers[i] = answer{Error: &rpcError{Code: e.Code, Message: e.Message, Data: e.Data}, refused: refused}
		}
	}
	// What was charged, as the core booked and settled it: a tool's calls
	// at their weights would count a call answered here for free, one the
	// parser refused, and calls refunded when no upstream answered them.
	if o.Booked {
		meta[metaCalls] = o.Charged
	}
	return paid{answers: answers, meta: meta}
}

// headerInt is strconv.ParseInt(v, 10, 64) without the error value it
// allocates for a word (the payer's name, a request id): only what looks
// like a decimal integer is parsed.
func headerInt(v string) (int64, bool) {
	d := strings.TrimLeft(v, "+-")
	if len(v)-len(d) > 1 || d == "" || strings.TrimLeft(d, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// refusedResult is the tool result of a refused call: msg for the model,
// the JSON-RPC error as structuredContent.
func refusedResult(msg string, e *jsonrpc.Error, meta sdk.Meta) *sdk.CallToolResult {
	raw, _ := json.Marshal(map[string]any{"error": e})
	res := toolError(msg)
	res.StructuredContent = json.RawMessage(raw)
	res.Meta = meta
	return res
}

// paymentRequired is the x402 tool-result binding of a 402: isError, the
// PaymentRequired object (the same offer as /rpc's PAYMENT-REQUIRED
// header) as structuredContent and as the text content, its resource the
// tool's mcp:// URL.
func paymentRequired(o *payment.Offer, tool string, meta sdk.Meta) *sdk.CallToolResult {
	var obj map[string]any
	if json.Unmarshal(o.V2, &obj) != nil || obj == nil {
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
	if len(o.Onboarding) > 0 {
		obj["onboarding"] = o.Onboarding
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
