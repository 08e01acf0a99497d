// Package httpx is what the gateway and settlementd answer alike over HTTP:
// the REST error body, {"error":{"code":…,"message":…}}, JSON
// answers, and the check of the X-Admin-Token header that guards both
// binaries' /admin/* routes.
package httpx

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
)

// AdminHeader carries the operator token of /admin/*.
const AdminHeader = "X-Admin-Token"

// encodingFailed is the answer when v cannot be encoded (a programming
// error: a channel or a func in v); the caller still gets a JSON body.
var encodingFailed = []byte(`{"error":{"code":"internal","message":"encoding failed"}}` + "\n")

// Error writes {"error":{"code":code,"message":msg}} with status.
func Error(w http.ResponseWriter, status int, code, msg string) {
	JSON(w, status, errorBody{errorFields{code, msg}})
}

type errorBody struct {
	Error errorFields `json:"error"`
}

type errorFields struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// JSON writes v as one JSON document and a newline with status, never
// cached. v is encoded before anything is written, so an encoding failure
// is a whole 500 answer rather than a status with half a body.
func JSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, encodingFailed
	} else {
		b = append(b, '\n')
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// AdminToken is a configured admin token. Only its SHA-256 sum is kept and
// compared: comparing sums of equal length keeps the comparison
// constant-time in the token's length too (subtle.ConstantTimeCompare
// returns at once on a length mismatch, which would tell a prober the
// length). The zero value is "not configured".
type AdminToken struct {
	set bool
	sum [sha256.Size]byte
}

// NewAdminToken keeps tok's sum; an empty tok is "admin disabled".
func NewAdminToken(tok string) AdminToken {
	if tok == "" {
		return AdminToken{}
	}
	return AdminToken{set: true, sum: sha256.Sum256([]byte(tok))}
}

// Enabled reports whether a token is configured. Without one the admin
// routes do not exist (both binaries answer 404, so an unconfigured server
// does not advertise them).
func (t AdminToken) Enabled() bool { return t.set }

// Match reports whether presented is the configured token. It is false when
// no token is configured, whatever is presented (an empty header included).
func (t AdminToken) Match(presented string) bool {
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], t.sum[:]) == 1 && t.set
}
