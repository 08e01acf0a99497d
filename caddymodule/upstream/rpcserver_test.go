package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// srvMode is how a fake upstream misbehaves.
type srvMode int32

const (
	modeOK         srvMode = iota
	mode502                // HTTP 502, text body
	modeHang               // never answers (until the client gives up)
	mode429                // HTTP 429
	modeRPCFault           // HTTP 200, JSON-RPC -32603 for every call
	modeRPCLimited         // HTTP 200, JSON-RPC -32005 for every call
	modeNotJSON            // HTTP 200, an HTML page
	mode503JSON            // HTTP 503 with a well-formed JSON-RPC answer (a platform fault with a body)
	mode413                // HTTP 413, text body (a refusal the caller's request size may provoke)
)

// fakeRPC is an in-process Ethereum JSON-RPC server: eth_chainId,
// eth_blockNumber, eth_getBalance, eth_sendRawTransaction, batches. Probe
// requests (only eth_chainId/eth_blockNumber) and other calls are counted
// and can be made to fail separately.
type fakeRPC struct {
	name      string
	chainID   atomic.Uint64
	head      atomic.Uint64
	mode      atomic.Int32 // for calls other than probes
	probeMode atomic.Int32
	delay     atomic.Int64  // added to every answer, ns
	noBatch   atomic.Bool   // answer batches with a single error object
	logsLimit atomic.Uint64 // eth_getLogs: widest range served (0: the method does not exist)
	finalized atomic.Uint64 // eth_getBlockByNumber("finalized"): this block's number (0: not served)
	calls     atomic.Int64  // non-probe requests that reached the server
	probes    atomic.Int64
	mu        sync.Mutex
	methods   map[string]int
	release   chan struct{}
	srv       *httptest.Server
}

func newFakeRPC(t testing.TB, name string, chainID, head uint64) *fakeRPC {
	f := &fakeRPC{name: name, methods: map[string]int{}, release: make(chan struct{})}
	f.chainID.Store(chainID)
	f.head.Store(head)
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs first: frees hanging handlers
	return f
}

func (f *fakeRPC) setMode(m srvMode)      { f.mode.Store(int32(m)) }
func (f *fakeRPC) setProbeMode(m srvMode) { f.probeMode.Store(int32(m)) }
func (f *fakeRPC) method(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.methods[name]
}

type rpcReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (f *fakeRPC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	body = bytes.TrimSpace(body)
	var reqs []rpcReq
	batch := len(body) > 0 && body[0] == '['
	if batch {
		if json.Unmarshal(body, &reqs) != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
	} else {
		var one rpcReq
		if json.Unmarshal(body, &one) != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		reqs = []rpcReq{one}
	}
	// The health probe, and the capability probes (capQuestions).
	probe := bytes.Equal(bytes.TrimSpace(body), archiveQuestion) || bytes.Equal(bytes.TrimSpace(body), debugQuestion) ||
		bytes.Equal(bytes.TrimSpace(body), traceQuestion) || bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":6,"method":"eth_getLogs"`))
	if !probe {
		probe = true
		for _, q := range reqs {
			if q.Method != "eth_chainId" && q.Method != "eth_blockNumber" {
				probe = false
			}
		}
	}
	mode := srvMode(f.mode.Load())
	if probe {
		f.probes.Add(1)
		mode = srvMode(f.probeMode.Load())
	} else {
		f.calls.Add(1)
		f.mu.Lock()
		for _, q := range reqs {
			f.methods[q.Method]++
		}
		f.mu.Unlock()
	}
	if d := time.Duration(f.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	switch mode {
	case mode502:
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	case modeHang:
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	case mode429:
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case mode413:
		http.Error(w, "request entity too large", http.StatusRequestEntityTooLarge)
		return
	case modeNotJSON:
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>maintenance</body></html>")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if mode == mode503JSON {
		w.WriteHeader(http.StatusServiceUnavailable)
		mode = modeOK
	}
	if batch && f.noBatch.Load() {
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}`)
		return
	}
	answers := make([]string, len(reqs))
	for i, q := range reqs {
		answers[i] = f.answer(q, mode)
	}
	if batch {
		fmt.Fprint(w, "["+strings.Join(answers, ",")+"]")
	} else {
		fmt.Fprint(w, answers[0])
	}
}

func (f *fakeRPC) answer(q rpcReq, mode srvMode) string {
	id := string(q.ID)
	if id == "" {
		id = "null"
	}
	fail := func(code int, msg string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
	}
	ok := func(result string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
	}
	switch mode {
	case modeRPCFault:
		return fail(-32603, "internal error")
	case modeRPCLimited:
		return fail(-32005, "request rate exceeded")
	}
	switch q.Method {
	case "eth_chainId":
		return ok(fmt.Sprintf(`"0x%x"`, f.chainID.Load()))
	case "eth_blockNumber":
		return ok(fmt.Sprintf(`"0x%x"`, f.head.Load()))
	case "eth_getBalance":
		return ok(`"0xde0b6b3a7640000"`)
	case "eth_sendRawTransaction":
		return ok(`"0x` + strings.Repeat("ab", 32) + `"`)
	case "eth_getBlockByNumber":
		if fin := f.finalized.Load(); fin != 0 && strings.Contains(string(q.Params), `"finalized"`) {
			return ok(fmt.Sprintf(`{"number":"0x%x","hash":"0x%s"}`, fin, strings.Repeat("cd", 32)))
		}
	case "eth_getLogs":
		limit := f.logsLimit.Load()
		if limit == 0 {
			break
		}
		var p []struct{ FromBlock, ToBlock string }
		_ = json.Unmarshal(q.Params, &p)
		var from, to uint64
		if len(p) == 1 {
			fmt.Sscanf(p[0].FromBlock, "0x%x", &from)
			fmt.Sscanf(p[0].ToBlock, "0x%x", &to)
		}
		if to-from+1 > limit {
			return fail(-32005, fmt.Sprintf("query exceeds max block range %d", limit))
		}
		return ok(`[]`)
	}
	return fail(-32601, "the method "+q.Method+" does not exist/is not available")
}

// deadURL is an http URL nothing listens on: connecting fails at once.
func deadURL(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

const (
	balanceCall = `{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["0x742d35Cc6634C0532925a3b844Bc454e4438f44e","latest"]}`
	sendTxCall  = `{"jsonrpc":"2.0","id":8,"method":"eth_sendRawTransaction","params":["0x02f8b1"]}`
	batchCall   = `[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x742d35Cc6634C0532925a3b844Bc454e4438f44e","latest"]},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}]`
)

// testConfig probes once at start (then hourly), so tests drive probes with
// ProbeNow, and opens breakers for 200 ms.
func testConfig(providers ...Upstream) Config {
	return Config{
		ChainID:        137,
		Providers:      providers,
		ProbeInterval:  time.Hour,
		AttemptTimeout: 2 * time.Second,
		Breaker:        BreakerConfig{OpenTimeout: 200 * time.Millisecond},
		// Nodes trusted at once: these tests are about selection, breakers
		// and probes; trust_test.go is about probation and the ladder.
		Trust: TrustConfig{Off: true},
	}
}

func newTestPool(t testing.TB, cfg Config) *Pool {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Destruct() })
	return p
}

func provider(f *fakeRPC) Upstream { return Upstream{Name: f.name, URL: f.srv.URL} }

func node(f *fakeRPC) Upstream {
	return Upstream{Name: f.name, NodeID: "NODE-EU-" + strings.ToUpper(f.name), URL: f.srv.URL}
}

func forward(t testing.TB, p *Pool, body string, opts ForwardOptions) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.Forward(ctx, []byte(body), opts)
}

func mustForward(t testing.TB, p *Pool, body string) Result {
	t.Helper()
	r, err := forward(t, p, body, ForwardOptions{})
	if err != nil {
		t.Fatalf("Forward: %v", err)
	}
	return r
}

func upstreamState(t testing.TB, p *Pool, name string) UpstreamSnapshot {
	t.Helper()
	for _, u := range p.Snapshot().Upstreams {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("no upstream %q in snapshot", name)
	return UpstreamSnapshot{}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// setNodes sets the pool's nodes and probes once, so they rank as probed.
func setNodes(t testing.TB, p *Pool, nodes ...Upstream) {
	t.Helper()
	if err := p.SetNodes(nodes); err != nil {
		t.Fatal(err)
	}
	p.ProbeNow(context.Background())
}
