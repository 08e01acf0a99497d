package caddymodule

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// benchCall is make bench's call: eth_blockNumber, never served by the
// edge cache, so every request is metered and forwarded.
const benchCall = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`

// benchUpstream answers eth_blockNumber (and the health probe's calls) at
// once, as internal/bench's fast upstream does.
func benchUpstream(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	s := string(b)
	switch {
	case strings.HasPrefix(s, "["):
		// The probe's batch: answer each call with its id.
		var out strings.Builder
		out.WriteByte('[')
		for i, part := range strings.Split(strings.Trim(s, "[]"), "},{") {
			if i > 0 {
				out.WriteByte(',')
			}
			out.WriteString(answerOf(part))
		}
		out.WriteByte(']')
		_, _ = io.WriteString(w, out.String())
	default:
		_, _ = io.WriteString(w, answerOf(s))
	}
}

func answerOf(call string) string {
	id := "1"
	if i := strings.Index(call, `"id":`); i >= 0 {
		rest := call[i+5:]
		if j := strings.IndexAny(rest, ",}"); j >= 0 {
			id = rest[:j]
		}
	}
	if strings.Contains(call, "eth_chainId") {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":"0x89"}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"result":"0x4b7c3a1"}`
}

// benchGateway provisions the handler as make bench's gateway: metering on
// the real Redis, limits off, one fast upstream.
func benchGateway(b *testing.B) (*Handler, string) {
	b.Helper()
	rdb := testenv.Redis(b)
	prefix := testenv.KeyPrefix(b)
	testenv.MarkRebuilt(b, rdb, prefix)
	up := httptest.NewServer(http.HandlerFunc(benchUpstream))
	b.Cleanup(up.Close)
	big, noConc := int64(1<<40), 0
	h := &Handler{Gateway: config.Gateway{
		RedisURL: os.Getenv("REDIS_URL"), KeyPrefix: prefix,
		Upstreams: config.Upstreams{AllowPrivateNodes: true},
		Chains:    []config.ChainConfig{{Spec: chains.Spec{ID: 137}, Providers: []config.ProviderConfig{{Name: "bench", URL: up.URL}}}},
		Metering: config.Metering{FreeDailyLimit: &big, FreeSubnetLimit: &big, RateLimitIP: &config.RateConfig{},
			RateLimitKey: &config.RateConfig{}, KeyCreateLimit: &config.RateConfig{}, IPConcurrency: &noConc},
		Payments: config.Payments{VaultAddress: "0x07e145A59Eb7c67fF710f75246a3ee3001B78571",
			USDTAddress: "0x5Ff6DEA68F4318F2cBB8857aa9633610A80499AB", X402PayTo: "0x6DfbfCdd02050Ed54e9B69c697B7987C9b4265F5"},
	}}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	b.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Cleanup() })
	k, err := h.meter.CreateKey(context.Background(), meter.NewKeyRequest{Kind: events.KeyAPI, Label: "bench", IP: netip.MustParseAddr("192.0.2.1")})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := balances.Credit(context.Background(), rdb, prefix, k.ID, 1_000_000*money.Scale, "bench:"+k.ID); err != nil {
		b.Fatal(err)
	}
	// Wait until the upstream serves (its first probe passed).
	deadline := time.Now().Add(2 * time.Minute) // generous: ends as soon as it serves
	for serveBench(h, k.Secret) != http.StatusOK {
		if time.Now().After(deadline) {
			b.Fatal("the bench upstream never served")
		}
		time.Sleep(10 * time.Millisecond) // polling the pool through the handler
	}
	return h, k.Secret
}

var nextNotFound = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	w.WriteHeader(http.StatusNotFound)
	return nil
})

func serveBench(h *Handler, key string) int {
	req := httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(benchCall))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	rec := httptest.NewRecorder()
	_ = h.ServeHTTP(rec, req, nextNotFound)
	return rec.Code
}

// BenchmarkPaidCall is one make bench (c) request through the handler —
// metered from a funded key, forwarded to a fast upstream — without Caddy's
// server around it: its allocations per call are what the handler adds
// (go test -bench PaidCall -benchmem ./caddymodule/).
func BenchmarkPaidCall(b *testing.B) {
	h, key := benchGateway(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if c := serveBench(h, key); c != http.StatusOK {
			b.Fatalf("status %d", c)
		}
	}
}

// BenchmarkFreeCall is make bench's (d): the anonymous free tier.
func BenchmarkFreeCall(b *testing.B) {
	h, _ := benchGateway(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if c := serveBench(h, ""); c != http.StatusOK {
			b.Fatalf("status %d", c)
		}
	}
}
