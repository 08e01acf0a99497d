// Package api is settlementd's HTTP listener. Every replica serves it (only
// the jobs are leader-only). It starts with /health and /metrics; the node,
// auth, earnings, claim, status and admin endpoints register on it with
// Handle.
package api

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Checks are the dependencies /health reports on. Nil checks are skipped.
type Checks struct {
	DB     func(ctx context.Context) error
	Redis  func(ctx context.Context) error
	Leader func() bool
}

// Server is the HTTP API.
type Server struct {
	mux     *http.ServeMux
	checks  Checks
	version string
	start   time.Time
	srv     *http.Server

	requests *prometheus.CounterVec
}

// New returns a server exposing /health and, from gatherer, /metrics.
// Metrics of the server itself go to reg.
func New(version string, checks Checks, gatherer prometheus.Gatherer, reg prometheus.Registerer) *Server {
	s := &Server{mux: http.NewServeMux(), checks: checks, version: version, start: time.Now(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "settlementd_http_requests_total",
			Help: "HTTP requests by route pattern (not raw path, so the label set stays bounded) and status code.",
		}, []string{"route", "code"})}
	if reg != nil {
		reg.MustRegister(s.requests)
	}
	s.mux.HandleFunc("GET /health", s.health)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	return s
}

// Handle registers a route (http.ServeMux pattern syntax, e.g. "GET /api/status").
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// ServeHTTP routes the request and counts it by its matched pattern.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
	s.mux.ServeHTTP(rec, r)
	route := r.Pattern // set by ServeMux on the request it routed
	if route == "" {
		route = "unmatched"
	}
	s.requests.WithLabelValues(route, strconv.Itoa(rec.code)).Inc()
}

// Serve serves on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.srv.Serve(ln)
	if err == http.ErrServerClosed {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for requests in flight.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Health is the /health body. The original specification fixes ok, server, db and uptime;
// the rest says what an operator looks at next.
type Health struct {
	OK      bool   `json:"ok"`
	Server  string `json:"server"` // "running"
	DB      string `json:"db"`     // "connected" | "disconnected"
	Uptime  int64  `json:"uptime"` // seconds since the process started
	Redis   string `json:"redis,omitempty"`
	Leader  bool   `json:"leader"`
	Version string `json:"version"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	h := Health{OK: true, Server: "running", DB: "connected", Uptime: int64(time.Since(s.start).Seconds()), Version: s.version}
	if s.checks.DB != nil && s.checks.DB(ctx) != nil {
		h.OK, h.DB = false, "disconnected"
	}
	if s.checks.Redis != nil {
		h.Redis = "connected"
		if s.checks.Redis(ctx) != nil {
			h.OK, h.Redis = false, "disconnected"
		}
	}
	if s.checks.Leader != nil {
		h.Leader = s.checks.Leader()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !h.OK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(h)
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
