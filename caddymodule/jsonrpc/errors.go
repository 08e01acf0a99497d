package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// JSON-RPC error codes the gateway emits or reasons about.
//
// The first five are the JSON-RPC 2.0 specification's own. The gateway codes
// follow the de-facto EVM conventions collected in shared/research/peers.md
// §4.3 so that existing wallets and SDKs react sensibly to them.
const (
	CodeParseError     = -32700 // body is not JSON (HTTP 400)
	CodeInvalidRequest = -32600 // not a valid request object, bad batch, too large (HTTP 400/413, 200 per batch item)
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603 // also "upstream unavailable" (HTTP 503), per DESIGN §5

	// CodeLimitExceeded is EIP-1474's "limit exceeded". The gateway uses it
	// for its own rate limit (HTTP 429) because eRPC and Infura do, so client
	// retry logic written for them already backs off on it.
	CodeLimitExceeded = -32005

	// CodePaymentRequired is the code of the gateway's "pay first" error
	// (HTTP 402). 402 is what x402's JSON-RPC (MCP) transport specifies for
	// a payment-required error carrying the PaymentRequired object in
	// error.data, and what web3-proxy sends, so x402-aware JSON-RPC clients
	// recognise it without a gateway-specific table. It lies outside the
	// -32768..-32000 block the JSON-RPC spec reserves, as the spec asks of
	// application-defined codes.
	CodePaymentRequired = 402

	// CodeUnauthorized answers a request whose API key is unknown or revoked
	// (HTTP 401). There is no standard code; -32001 sits in the
	// implementation-defined server-error range next to eRPC's and
	// web3-proxy's choices (shared/research/peers.md §4.3).
	CodeUnauthorized = -32001

	// CodeExecutionReverted is geth's code for a reverted eth_call or
	// eth_estimateGas; error.data carries the revert data.
	CodeExecutionReverted = 3
)

// Error is a JSON-RPC 2.0 error object. Data is raw JSON (nil when absent).
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Raw is the object exactly as an upstream wrote it (MatchReplies sets
	// it): it is relayed byte for byte, as results are, so an upstream's
	// escapes (geth writes < as \u003c), member order and extra members
	// reach the caller unchanged. Errors the gateway makes have none.
	Raw json.RawMessage `json:"-"`
}

// Error makes *Error usable as a Go error in logs.
func (e *Error) Error() string {
	return "jsonrpc error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// MarshalJSON encodes e with the package's own encoder, so that an Error
// embedded in a REST or log payload looks exactly as on the wire.
func (e *Error) MarshalJSON() ([]byte, error) { return e.appendJSON(nil), nil }

func (e *Error) appendJSON(dst []byte) []byte {
	if len(e.Raw) > 0 {
		return append(dst, e.Raw...)
	}
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if len(e.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}

// withDetail gives "Base: detail", or just Base. Standard messages keep the
// spec's wording first so clients matching on it still match.
func withDetail(base, detail string) string {
	if detail == "" {
		return base
	}
	return base + ": " + detail
}

// ParseError is -32700 "Parse error": the body is not (exactly one) JSON value.
func ParseError() *Error { return &Error{Code: CodeParseError, Message: "Parse error"} }

// InvalidRequest is -32600, with an optional human detail naming what is wrong.
func InvalidRequest(detail string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: withDetail("Invalid Request", detail)}
}

// MethodNotFound is -32601 for method (named in the message, quoted, so that
// odd characters in a caller-chosen name stay visible).
func MethodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + strconv.Quote(method)}
}

// InvalidParams is -32602 with an optional detail.
func InvalidParams(detail string) *Error {
	return &Error{Code: CodeInvalidParams, Message: withDetail("Invalid params", detail)}
}

// InternalError is -32603 with an optional detail.
func InternalError(detail string) *Error {
	return &Error{Code: CodeInternalError, Message: withDetail("Internal error", detail)}
}

// UpstreamUnavailable is -32603 "upstream unavailable" (HTTP 503 when it
// answers the whole request). DESIGN §5 keeps -32603 rather than a custom code
// because every JSON-RPC client already treats it as "server-side, may retry".
func UpstreamUnavailable(detail string) *Error {
	return &Error{Code: CodeInternalError, Message: withDetail("Upstream unavailable", detail)}
}

// RateLimited is -32005 (HTTP 429, with Retry-After). retryAfterSeconds > 0
// is also put in data so clients that never see HTTP headers (SDKs that
// surface only the JSON-RPC error) can still back off correctly.
func RateLimited(retryAfterSeconds int) *Error {
	e := &Error{Code: CodeLimitExceeded, Message: "Rate limit exceeded"}
	if retryAfterSeconds > 0 {
		e.Data = json.RawMessage(`{"retry_after":` + strconv.Itoa(retryAfterSeconds) + `}`)
	}
	return e
}

// Unauthorized is -32001 (HTTP 401) with a detail saying what is wrong
// with the credential.
func Unauthorized(detail string) *Error {
	return &Error{Code: CodeUnauthorized, Message: withDetail("Unauthorized", detail)}
}

// PaymentRequired is CodePaymentRequired (HTTP 402). data, when non-nil,
// must be valid JSON (the x402 PaymentRequired object with onboarding).
func PaymentRequired(data json.RawMessage) *Error {
	return &Error{Code: CodePaymentRequired, Message: "Payment required", Data: data}
}
