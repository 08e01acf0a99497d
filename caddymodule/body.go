package caddymodule

import (
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// bodyDeadline starts the body's read deadline and refuses, before reading a
// byte, a body its Content-Length already puts over the route's limit. ok is
// false when the answer (413) has been written.
func (h *Handler) bodyDeadline(w http.ResponseWriter, r *http.Request, rpc bool) (ok bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	if r.ContentLength > h.MaxBodyBytes {
		// Not read at all: net/http closes the connection rather than
		// drain a body this large.
		w.Header().Set("Connection", "close")
		if rpc {
			rej := jsonrpc.BodyTooLarge(h.MaxBodyBytes)
			web.Raw(w, rej.Status, rej.Body())
		} else {
			web.Error(w, http.StatusRequestEntityTooLarge, "too_large", "the body must be at most "+strconv.FormatInt(h.MaxBodyBytes, 10)+" bytes")
		}
		return false
	}
	// Through Caddy's response-writer wrappers (they Unwrap) to the
	// connection. A server that cannot set it (none of Caddy's) keeps its
	// own timeouts.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Duration(h.BodyTimeout)))
	return true
}
