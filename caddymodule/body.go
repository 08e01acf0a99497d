package caddymodule

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// DefaultBodyTimeout bounds how long a request body may take to arrive on
// the handler's routes: a body trickled a byte at a time, or a chunked body
// that never ends, would otherwise hold its connection and goroutine for as
// long as the client likes.
const DefaultBodyTimeout = 10 * time.Second

// errBodyTimeout: the body did not arrive within body_timeout.
var errBodyTimeout = errors.New("request body not received in time")

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
			writeRaw(w, rej.Status, rej.Body())
		} else {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", "the body must be at most "+strconv.FormatInt(h.MaxBodyBytes, 10)+" bytes")
		}
		return false
	}
	// Through Caddy's response-writer wrappers (they Unwrap) to the
	// connection. A server that cannot set it (none of Caddy's) keeps its
	// own timeouts.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Duration(h.BodyTimeout)))
	return true
}

// readLimited reads at most limit bytes and reports errTooLarge beyond that,
// without reading an unbounded body into memory, and errBodyTimeout when the
// body's read deadline passed first.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		var ne net.Error
		if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return nil, errBodyTimeout
		}
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

// writeBodyTimeout answers a body that did not arrive in time: 408, the
// connection closed (what is left of the body is not worth waiting for).
func (h *Handler) writeBodyTimeout(w http.ResponseWriter, rpc bool) {
	w.Header().Set("Connection", "close")
	msg := "the request body did not arrive within " + time.Duration(h.BodyTimeout).String()
	if rpc {
		writeRPCError(w, http.StatusRequestTimeout, jsonrpc.ErrorResponse(nil, jsonrpc.InvalidRequest(msg)))
		return
	}
	writeError(w, http.StatusRequestTimeout, "body_timeout", msg)
}
