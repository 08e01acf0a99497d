package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
)

// keyBackend is cannedBackend that records the API key each call is paid
// with, and holds the victim's call until released.
type keyBackend struct {
	cannedBackend
	mu      sync.Mutex
	keys    []string
	inside  chan struct{}
	release chan struct{}
}

func (b *keyBackend) Serve(ctx context.Context, who *payment.Caller, hdr http.Header, chainID uint64, msg *jsonrpc.Message) Served {
	b.mu.Lock()
	b.keys = append(b.keys, who.Key)
	b.mu.Unlock()
	if who.Key == "tg_victim" {
		close(b.inside)
		<-b.release
	}
	return b.cannedBackend.Serve(ctx, who, hdr, chainID, msg)
}

// The token that ties a tool call to its HTTP request is a counter (a
// stranger can guess a live one), so it must be unnameable: while a
// keyed caller's tool call is in flight, a keyless caller who sends the
// origin header with every token the counter can have given is paid for
// by no one but itself.
func TestOriginTokenCannotBeNamedByAClient(t *testing.T) {
	b := &keyBackend{inside: make(chan struct{}), release: make(chan struct{})}
	s := New(b, "test", zap.NewNop())
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rpc","arguments":{"method":"eth_blockNumber"}}}`
	post := func(hdr ...string) string {
		r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(call))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Add(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Body.String()
	}
	done := make(chan string)
	go func() { done <- post("X-API-Key", "tg_victim") }()
	select {
	case <-b.inside:
	case <-time.After(time.Minute):
		t.Fatal("the victim's call never reached the backend")
	}
	for n := uint64(0); n < 64; n++ {
		tok := strconv.FormatUint(n, 36)
		out := post(originHeader, tok, "x-tollgate-mcp-origin", tok)
		if !strings.Contains(out, `0x4b7c3a1`) {
			t.Fatalf("the attacker's call with token %s: %s", tok, out)
		}
	}
	close(b.release)
	if out := <-done; !strings.Contains(out, `0x4b7c3a1`) {
		t.Fatalf("the victim's call: %s", out)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.keys) != 65 {
		t.Fatalf("%d calls reached the backend, want 65", len(b.keys))
	}
	for i, k := range b.keys[1:] {
		if k != "" {
			t.Errorf("attacker call %d was paid with key %q", i, k)
		}
	}
}
