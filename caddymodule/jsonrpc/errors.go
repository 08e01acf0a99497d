package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// JSON-RPC error codes the gateway emits or reasons about.
//
// The first five are the JSON-RPC 2.0 specification's own. The gateway codes
// follow the de-facto EVM conventions other gateways
// (web3-proxy among them) use so that existing wallets and SDKs react sensibly to them.
const (
	CodeParseError     = -32700 // body is not JSON (HTTP 400)
	CodeInvalidRequest = -32600 // not a valid request object, bad batch, too large (HTTP 400/413, 200 per batch item)
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603 // also "upstream unavailable" (HTTP 503)

	// CodeLimitExceeded is EIP-1474's "limit exceeded". The gateway uses it
	// only for its own rate limit (HTTP 429, Retry-After, data.retry_after),
	// because eRPC and Infura do, so client retry logic written for them
	// already backs off on it. It is never the code of a charged answer:
	// viem retries -32005 whatever the HTTP status (see RetriedCodes).
	CodeLimitExceeded = -32005

	// CodeAnswerTooLarge answers a call whose result is over the method's
	// max_response_bytes, or an upstream's charged "ask for less" (a -32005
	// about the query's size, re-coded by the gateway). It is charged (the
	// upstream did the work) and sent with HTTP 200: a client must not
	// retry it as it is, and no default client does (not in RetriedCodes).
	CodeAnswerTooLarge = -32040

	// CodeSubscriptionCap refuses an eth_subscribe past the socket's or
	// the address's subscription cap. Not charged; retrying changes
	// nothing until a subscription is dropped (eth_unsubscribe).
	CodeSubscriptionCap = -32041

	// CodeChargedUpstreamError re-codes an upstream's error answer that is
	// charged (the upstream did the caller's work) but whose own code a
	// default client retries (-32603 "execution timeout", -32007, ...), so
	// that a retry loop cannot pay for it again. data.upstream_code keeps
	// the upstream's code.
	CodeChargedUpstreamError = -32042

	// CodePaymentRequired is the code of the gateway's "pay first" error
	// (HTTP 402). 402 is what x402's JSON-RPC (MCP) transport specifies for
	// a payment-required error carrying the PaymentRequired object in
	// error.data, and what web3-proxy sends, so x402-aware JSON-RPC clients
	// recognise it without a gateway-specific table. It lies outside the
	// -32768..-32000 block the JSON-RPC spec reserves, as that spec asks of
	// application-defined codes.
	CodePaymentRequired = 402

	// CodeUnauthorized answers a request whose API key is unknown or revoked
	// (HTTP 401). There is no standard code; -32001 sits in the
	// implementation-defined server-error range next to eRPC's and
	// web3-proxy's choices.
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
// answers the whole request). The gateway keeps -32603 rather than a custom code
// because every JSON-RPC client already treats it as "server-side, may retry".
func UpstreamUnavailable(detail string) *Error {
	return &Error{Code: CodeInternalError, Message: withDetail("Upstream unavailable", detail)}
}

// RetriedCodes are the JSON-RPC error codes viem's default retry repeats
// whatever the HTTP status (viem 2.57.20, tests/js/node_modules/viem/
// utils/buildRequest.ts, shouldRetry: -1, LimitExceededRpcError -32005,
// InternalRpcError -32603, 429, -32007). Every other code is retried only
// when it comes with an HTTP status of 403, 408, 413, 429, 500, 502, 503 or
// 504 (RetriedStatus); with 200 it is not. A charged answer therefore
// never carries one of these codes nor one of those statuses.
var RetriedCodes = map[int]bool{-1: true, CodeLimitExceeded: true, CodeInternalError: true, 429: true, -32007: true}

// RetriedStatus reports whether viem's default retry repeats a request
// answered with HTTP status (same source as RetriedCodes).
func RetriedStatus(status int) bool {
	switch status {
	case 403, 408, 413, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// AnswerTooLarge is CodeAnswerTooLarge for a result of size bytes over
// the method's cap of limit bytes (charged, HTTP 200).
func AnswerTooLarge(method string, size int, limit int64) *Error {
	return &Error{Code: CodeAnswerTooLarge,
		Message: "the answer to " + method + " is " + strconv.Itoa(size) + " bytes; this gateway returns at most " +
			strconv.FormatInt(limit, 10) + " bytes per " + method + " call: ask for less (a narrower block range or filter)",
		Data: json.RawMessage(`{"charged":true,"response_bytes":` + strconv.Itoa(size) + `,"max_response_bytes":` + strconv.FormatInt(limit, 10) + `}`)}
}

// SubscriptionCap is CodeSubscriptionCap: max subscriptions are held by
// the socket (scope "connection") or the caller's address ("address").
func SubscriptionCap(scope string, max int, msg string) *Error {
	return &Error{Code: CodeSubscriptionCap, Message: msg,
		Data: json.RawMessage(`{"scope":"` + scope + `","max_subscriptions":` + strconv.Itoa(max) + `}`)}
}

// Recharged re-codes e, an upstream's error answer that was charged, when
// a default client would retry its code: CodeAnswerTooLarge for a -32005
// (the query's size: ask for less), else CodeChargedUpstreamError; the
// message is kept and data says the upstream's code (and its data). Other
// errors are returned as they are, relayed byte for byte.
func Recharged(e *Error) *Error {
	if e == nil || !RetriedCodes[e.Code] {
		return e
	}
	code := CodeChargedUpstreamError
	if e.Code == CodeLimitExceeded {
		code = CodeAnswerTooLarge
	}
	data := `{"charged":true,"upstream_code":` + strconv.Itoa(e.Code)
	if len(e.Data) > 0 && json.Valid(e.Data) {
		data += `,"upstream_data":` + string(e.Data)
	}
	return &Error{Code: code, Message: e.Message, Data: json.RawMessage(data + "}")}
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
