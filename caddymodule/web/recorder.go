package web

import (
	"bytes"
	"net/http"
)

// Recorder is a ResponseWriter that keeps the answer: the rooms that serve
// a request through the HTTP path and send the answer another way (a
// WebSocket message, an MCP tool result) answer into one.
type Recorder struct {
	header http.Header
	status int
	Body   bytes.Buffer
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}} }

func (r *Recorder) Header() http.Header { return r.header }

// WriteHeader keeps the first status written.
func (r *Recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *Recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.Body.Write(b)
}

// Status is the answer's status: 200 when none was written.
func (r *Recorder) Status() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}
