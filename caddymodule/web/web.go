// Package web is what every room of the gateway answers with and reads from
// a request: the REST and JSON-RPC error bodies, the caller's
// address and API key, the gateway's external base URL, and bounded body
// reading. It holds no state; the rooms (accounts, payment, discovery,
// admin) and the root package's /rpc all write their answers through it, so
// one error looks the same on every route.
package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/shared/httpx"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// JSON writes v as the answer, and Error the REST error body
// ({"error":{"code":…,"message":…}}): shared/httpx's, so the gateway and
// settlementd answer alike. Neither is cached by intermediaries: answers
// carry balances, limits and one-time secrets.
func JSON(w http.ResponseWriter, status int, v any) { httpx.JSON(w, status, v) }

// Error writes the REST error body.
func Error(w http.ResponseWriter, status int, code, msg string) { httpx.Error(w, status, code, msg) }

// RPCError writes a JSON-RPC error answer with an HTTP status.
func RPCError(w http.ResponseWriter, status int, resp jsonrpc.Response) {
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// jsonContentType is the Content-Type value of every JSON answer, shared:
// Header.Set would allocate it on every request (the hot path's answers are
// written by Raw). Nothing writes into a header's value slice in place, and
// Add appends to a copy (its capacity is its length).
var jsonContentType = []string{"application/json"}

// Const sets header key (in canonical form) to a value built once, v: no
// allocation per request, unlike Header.Set.
func Const(h http.Header, key string, v []string) { h[key] = v[:len(v):len(v)] }

// Raw writes an already encoded JSON body.
func Raw(w http.ResponseWriter, status int, body []byte) {
	Const(w.Header(), "Content-Type", jsonContentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// FieldError is a refused request body naming the field at fault (400
// unless Status says otherwise: a body that did not arrive in time is 408,
// one too large 413).
type FieldError struct {
	Field   string
	Code    string
	Message string
	Status  int
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Write answers with e.
func (e *FieldError) Write(w http.ResponseWriter) {
	status := http.StatusBadRequest
	if e.Status != 0 {
		status = e.Status
	}
	if status == http.StatusRequestTimeout {
		// What is left of the body is not worth waiting for.
		w.Header().Set("Connection", "close")
	}
	JSON(w, status, map[string]any{"error": map[string]string{
		"code": e.Code, "message": e.Field + ": " + e.Message, "field": e.Field}})
}

// OnlyGET serves fn for GET and HEAD and answers 405 otherwise.
func OnlyGET(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter, *http.Request) error) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		Error(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
		return nil
	}
	return fn(w, r)
}

// Unavailable answers a REST request whose Redis call failed: 503, never
// 500, and the cause only in the log (it may name an address).
func Unavailable(w http.ResponseWriter, log *zap.Logger, err error) {
	log.Warn("metering store unavailable", zap.Error(err))
	w.Header().Set("Retry-After", "1")
	Error(w, http.StatusServiceUnavailable, "unavailable", "the metering store is unavailable; retry shortly")
}

// ClientIP is Caddy's client IP: the connection's peer, or — only when the
// peer is one of the server's trusted_proxies — the address it forwarded
// (with trusted_proxies_strict, as the shipped Caddyfiles set it, the
// right-most X-Forwarded-For address no trusted proxy owns). A raw
// X-Forwarded-For is never read here, so a client cannot pick the address
// its free tier and limits are counted under. It is the one place the
// gateway derives the address (docs/client-address.md).
func ClientIP(r *http.Request) netip.Addr {
	if v, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && v != "" {
		if a, err := netip.ParseAddr(v); err == nil {
			return a.Unmap()
		}
		if ap, err := netip.ParseAddrPort(v); err == nil {
			return ap.Addr().Unmap()
		}
	}
	// Outside a Caddy server (unit tests) the variable is unset.
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	host, _, _ = strings.Cut(host, "%")
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// APIKey reads X-API-Key. present is false when the header is absent.
// Caddy's access log prints request headers (it redacts only Authorization
// and cookies), so Caddyfiles filter this header out of the log; see the
// root Caddyfile.
func APIKey(r *http.Request) (key string, present bool) {
	v := r.Header[apiKeyField]
	if len(v) == 0 {
		return "", false
	}
	return strings.TrimSpace(v[0]), true
}

// APIKeyHeader carries a caller's API key.
const APIKeyHeader = "X-API-Key"

// apiKeyField is APIKeyHeader as net/http stores it (canonical: X-Api-Key):
// indexing the header map with it skips canonicalizing, and allocating, the
// name on every request (the POST door reads it for each one).
var apiKeyField = http.CanonicalHeaderKey(APIKeyHeader)

// What a refused API key is told, on every route (REST code and message;
// /rpc sends the message in a JSON-RPC error).
const (
	MsgMalformedKey = "X-API-Key is not a Tollgate API key (tg_ followed by 43 letters and digits)"
	MsgUnknownKey   = "unknown API key"
	MsgRevokedKey   = "this API key has been revoked"
	CodeInvalidKey  = "invalid_api_key"
	CodeRevokedKey  = "revoked_api_key"
)

// BaseURL is the gateway's external base URL: public (public_url) when
// configured, else the scheme and host the request came in on.
func BaseURL(r *http.Request, public string) string { return Origin(r.Host, r.TLS != nil, public) }

// Origin is BaseURL from a request's host and whether it came over TLS.
func Origin(host string, tls bool, public string) string {
	if public != "" {
		return public
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://" + host
}

// Truncate shortens s to n bytes for an error message that echoes input.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ErrTooLarge is a body over its route's limit; ErrBodyTimeout one that
// did not arrive within body_timeout.
var (
	ErrTooLarge    = errors.New("body too large")
	ErrBodyTimeout = errors.New("request body not received in time")
)

// ReadLimited reads at most limit bytes and reports ErrTooLarge beyond
// that, without reading an unbounded body into memory, and ErrBodyTimeout
// when the body's read deadline passed first.
func ReadLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		var ne net.Error
		if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return nil, ErrBodyTimeout
		}
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return b, nil
}

// BodyTimeout answers a body that did not arrive within limit: 408, the
// connection closed (what is left of the body is not worth waiting for).
func BodyTimeout(w http.ResponseWriter, rpc bool, limit time.Duration) {
	w.Header().Set("Connection", "close")
	msg := "the request body did not arrive within " + limit.String()
	if rpc {
		RPCError(w, http.StatusRequestTimeout, jsonrpc.ErrorResponse(nil, jsonrpc.InvalidRequest(msg)))
		return
	}
	Error(w, http.StatusRequestTimeout, "body_timeout", msg)
}

// Printable makes a caller-chosen field name safe to echo: quoted escapes,
// bounded length, and `""` for the empty name.
func Printable(s string) string {
	if s == "" {
		return `""`
	}
	if len(s) > 40 {
		s = s[:40]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// recoveringMessage tells a key holder that its key is not in doubt: a
// client that believed a 401 here would throw a valid key away.
const recoveringMessage = "metering is recovering after its store lost its data; your key and balance are safe in the ledger and are being restored; nothing was charged; retry in %d s"

// Recovering answers a request the meter could not decide because
// Redis lost its data and settlementd has not rebuilt it yet
// (meter.Recovering): 503 with Retry-After, never 401 or 402. The
// JSON-RPC code is -32603 (server-side, retry) with the reason in data.
func Recovering(w http.ResponseWriter, id json.RawMessage, d *meter.Decision) {
	secs := meter.RetrySeconds(d.RetryAfter)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	RPCError(w, http.StatusServiceUnavailable, jsonrpc.ErrorResponse(id, RecoveringError(secs)))
}

// RecoveringError is the JSON-RPC error of Recovering, retry in secs.
func RecoveringError(secs int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: "Internal error: " + fmt.Sprintf(recoveringMessage, secs),
		Data:    json.RawMessage(`{"reason":"` + meter.ReasonRecovering + `","retry_after":` + strconv.Itoa(secs) + `}`)}
}

// RecoveringREST is Recovering for the REST endpoints.
func RecoveringREST(w http.ResponseWriter) {
	secs := meter.RetrySeconds(meter.RecoveryRetryAfter)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	Error(w, http.StatusServiceUnavailable, meter.ReasonRecovering, fmt.Sprintf(recoveringMessage, secs))
}

// Authentication of a route, as service.json and the OpenAPI document name it.
const (
	AuthNone       = "none"
	AuthKeyOrFree  = "api_key_or_free_tier" // X-API-Key optional: credits, else the IP's free allowance
	AuthAPIKey     = "api_key"              // X-API-Key required
	AuthAdminToken = "admin_token"          // X-Admin-Token
)

// Route is one documented entry of the gateway's route table.
type Route struct {
	Method  string // the method served (admin routes: the main one; others answer 405)
	Path    string // as documented: {name} marks a path parameter
	Auth    string
	Summary string
}
