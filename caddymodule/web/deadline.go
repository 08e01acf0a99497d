package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// BodyDeadline starts the body's read deadline (timeout) and refuses,
// before reading a byte, a body its Content-Length already puts over the
// route's limit (limit; rpc: a JSON-RPC route, answered in JSON-RPC). ok is
// false when the answer (413) has been written.
func BodyDeadline(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration, rpc bool) (ok bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	if r.ContentLength > limit {
		// Not read at all: net/http closes the connection rather than
		// drain a body this large.
		w.Header().Set("Connection", "close")
		if rpc {
			rej := jsonrpc.BodyTooLarge(limit)
			Raw(w, rej.Status, rej.Body())
		} else {
			Error(w, http.StatusRequestEntityTooLarge, "too_large", "the body must be at most "+strconv.FormatInt(limit, 10)+" bytes")
		}
		return false
	}
	// Through Caddy's response-writer wrappers (they Unwrap) to the
	// connection. A server that cannot set it (none of Caddy's) keeps its
	// own timeouts.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
	return true
}
