package caddymodule_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goldenRoutes are the answers that name the served chains, as a caller or
// an indexer reads them. With the built-in chain table they must stay byte
// for byte what they were before chains became configurable: the
// golden files were written by this test at commit 3f41922.
var goldenRoutes = []struct{ file, method, path, body string }{
	{"service.json", http.MethodGet, "/.well-known/service.json", ""},
	{"x402.json", http.MethodGet, "/.well-known/x402", ""},
	{"llms.txt", http.MethodGet, "/llms.txt", ""},
	{"openapi.yaml", http.MethodGet, "/openapi.yaml", ""},
	{"catalog.json", http.MethodGet, "/v1/intelligence", ""},
	{"rpc-unknown-chain.json", http.MethodPost, "/rpc/56", blockNumber},
	{"rpc-unknown-name.json", http.MethodPost, "/rpc/bsc", blockNumber},
	{"stats-unknown-chain.json", http.MethodGet, "/rpc/stats/bsc", ""},
	{"rpc-402.json", http.MethodPost, "/rpc/8453", blockNumber},
}

// goldenVolatile are the parts of an answer that change from run to run:
// clocks, and the gateway's port (in every absolute URL).
var goldenVolatile = []*regexp.Regexp{
	regexp.MustCompile(`"(generated_at|resets_at)":"[^"]*"`),
}

func normalizeGolden(body []byte, base string) []byte {
	body = bytes.ReplaceAll(body, []byte(base), []byte("http://GATEWAY"))
	body = bytes.ReplaceAll(body, []byte("ws"+strings.TrimPrefix(base, "http")), []byte("ws://GATEWAY"))
	for _, re := range goldenVolatile {
		body = re.ReplaceAll(body, []byte(`"$1":"TIME"`))
	}
	return body
}

// TestDefaultChainsDiscoveryGolden: with no chain configured beyond
// providers, every discovery answer is what the compiled-in table gave.
// TOLLGATE_UPDATE_GOLDEN=1 rewrites testdata/chains-golden (only ever at the
// base commit).
func TestDefaultChainsDiscoveryGolden(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1})
	dir := filepath.Join("testdata", "chains-golden")
	update := os.Getenv("TOLLGATE_UPDATE_GOLDEN") == "1"
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range goldenRoutes {
		a := e.do(t, g.method, g.path, g.body)
		got := append([]byte(http.StatusText(a.status)+"\n"), normalizeGolden(a.body, e.gw.URL())...)
		path := filepath.Join(dir, g.file)
		if update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s %s differs from %s:\n got %s\nwant %s", g.method, g.path, path, got, want)
		}
	}
}
