// Package httpx holds the JSON helpers the settlementd API handlers share:
// the REST error body and JSON answers (shared/httpx, written the same
// way by the gateway), bounded JSON request decoding and the caller's
// address behind the gateway's proxy.
package httpx

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tollgate-rpc/tollgate/shared/httpx"
)

// MaxBody bounds every JSON request body of the API.
const MaxBody = 64 << 10

// Error writes {"error":{"code","message"}} with status (shared/httpx.Error).
func Error(w http.ResponseWriter, status int, code, msg string) { httpx.Error(w, status, code, msg) }

// JSON writes v with status, never cached (shared/httpx.JSON).
func JSON(w http.ResponseWriter, status int, v any) { httpx.JSON(w, status, v) }

// Decode reads one JSON object into v (unknown fields refused). On failure
// it has answered 400 (or 413) and returns false.
func Decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		Error(w, http.StatusBadRequest, "invalid_content_type", "the body must be application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			Error(w, http.StatusRequestEntityTooLarge, "body_too_large", "the body is over 64 KiB")
			return false
		}
		Error(w, http.StatusBadRequest, "invalid_json", "the body is not the expected JSON object: "+err.Error())
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		Error(w, http.StatusBadRequest, "invalid_json", "the body must hold exactly one JSON object")
		return false
	}
	return true
}

// StorableText reports whether s can be a PostgreSQL text parameter: valid
// UTF-8 without NUL. A handler checks the key fields of a cursor a caller
// sent with it, so a crafted cursor is a 400, not a query PostgreSQL
// refuses and the handler answers 503.
func StorableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}
