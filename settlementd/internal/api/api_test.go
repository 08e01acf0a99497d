package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHealthAndMetrics(t *testing.T) {
	var dbDown bool
	reg := prometheus.NewRegistry()
	s := New("v1", Checks{
		DB: func(context.Context) error {
			if dbDown {
				return errors.New("down")
			}
			return nil
		},
		Leader: func() bool { return true },
	}, reg, reg)
	s.Handle("GET /api/nodes/{id}/earnings", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv := httptest.NewServer(s)
	defer srv.Close()

	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/health")
	var h map[string]any
	if err := json.Unmarshal([]byte(body), &h); err != nil || code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	for _, k := range []string{"ok", "server", "db", "uptime"} { // the original specification's fields
		if _, ok := h[k]; !ok {
			t.Errorf("health lacks %q: %s", k, body)
		}
	}
	if h["ok"] != true || h["db"] != "connected" || h["leader"] != true {
		t.Fatalf("%s", body)
	}
	dbDown = true
	if code, body := get("/health"); code != 503 || !strings.Contains(body, `"ok":false`) || !strings.Contains(body, `"db":"disconnected"`) {
		t.Fatalf("db down: %d %s", code, body)
	}
	get("/api/nodes/NODE-EU-AAAAAAAA/earnings")
	get("/api/nodes/NODE-EU-BBBBBBBB/earnings")
	get("/nope/1")
	get("/nope/2")
	_, metrics := get("/metrics")
	for _, want := range []string{
		`settlementd_http_requests_total{code="200",route="GET /api/nodes/{id}/earnings"} 2`,
		`settlementd_http_requests_total{code="404",route="unmatched"} 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
