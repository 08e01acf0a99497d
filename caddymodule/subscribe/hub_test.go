package subscribe

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// devChain starts a simulated chain 137 served over HTTP and WebSocket.
func devChain(t *testing.T) *simchain.Chain {
	t.Helper()
	port, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c, err := simchain.New(simchain.Config{ChainID: 137, HTTPPort: port, Alloc: testAlloc()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// proxied puts a fault proxy in front of the chain and returns it with the
// provider entry that reaches the chain through it.
func proxied(t *testing.T, c *simchain.Chain, name string) (*faultproxy.Proxy, upstream.Upstream) {
	t.Helper()
	p := faultproxy.New(c.HTTPURL())
	t.Cleanup(p.Close)
	return p, upstream.Upstream{Name: name, URL: p.URL(), WSURL: "ws" + strings.TrimPrefix(p.URL(), "http")}
}

func newPool(t *testing.T, ups ...upstream.Upstream) *upstream.Pool {
	t.Helper()
	pool, err := upstream.New(upstream.Config{ChainID: 137, Providers: ups, ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Destruct() })
	return pool
}

func newHub(t *testing.T, pool *upstream.Pool, cfg Config) *Hub {
	t.Helper()
	cfg.Pools = map[uint64]*upstream.Pool{137: pool}
	h := New(cfg)
	t.Cleanup(h.Close)
	return h
}

// next waits for one notification on s.
func next(t *testing.T, s *Sub, within time.Duration) Notification {
	t.Helper()
	select {
	case n, ok := <-s.C():
		if !ok {
			t.Fatalf("subscription ended: %v", s.Err())
		}
		return n
	case <-time.After(within):
		t.Fatalf("no notification within %s", within)
	}
	return Notification{}
}

func headNumber(t *testing.T, n Notification) uint64 {
	t.Helper()
	var h struct {
		Number hexUint `json:"number"`
		Hash   string  `json:"hash"`
	}
	if err := json.Unmarshal(n.Result, &h); err != nil || h.Hash == "" {
		t.Fatalf("not a head: %s (%v)", n.Result, err)
	}
	return uint64(h.Number)
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFanOutOneUpstreamSubscription: 500 subscribers of newHeads are served by
// one eth_subscribe on one upstream socket, counted at the upstream, and each
// receives every sealed block once, in order; the last Close unsubscribes.
func TestFanOutOneUpstreamSubscription(t *testing.T) {
	chain := devChain(t)
	proxy, up := proxied(t, chain, "alpha")
	hub := newHub(t, newPool(t, up), Config{})

	open := metrics.UpstreamSubscriptions.WithLabelValues("137", KindNewHeads)
	openBefore := gaugeValue(open)
	const n = 500
	subs := make([]*Sub, n)
	for i := range subs {
		s, err := hub.Subscribe(137, KindNewHeads, nil, 16)
		if err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
		subs[i] = s
	}
	if got := proxy.Calls("eth_subscribe"); got != 1 {
		t.Fatalf("%d eth_subscribe calls at the upstream for %d subscribers, want 1", got, n)
	}
	if got := proxy.Sockets(); got != 1 {
		t.Fatalf("%d upstream sockets, want 1", got)
	}
	if st := hub.Upstreams(137)["alpha"]; !st.Connected || st.Subscriptions != 1 {
		t.Fatalf("upstream state %+v", st)
	}
	if got := gaugeValue(open) - openBefore; got != 1 {
		t.Fatalf("upstream subscriptions gauge rose by %v, want 1", got)
	}
	var want []uint64
	for range 3 {
		chain.Commit()
		h, _ := chain.Client().BlockNumber(t.Context())
		want = append(want, h)
	}
	for i, s := range subs {
		for _, w := range want {
			nt := next(t, s, 5*time.Second)
			if got := headNumber(t, nt); got != w {
				t.Fatalf("subscriber %d: head %d, want %d", i, got, w)
			}
			if nt.ServedBy.Upstream != "alpha" {
				t.Fatalf("served by %+v", nt.ServedBy)
			}
		}
	}
	if got := proxy.Calls("eth_subscribe"); got != 1 {
		t.Fatalf("%d eth_subscribe calls after delivery, want 1", got)
	}
	for _, s := range subs[1:] {
		s.Close()
	}
	if proxy.Calls("eth_unsubscribe") != 0 {
		t.Fatal("unsubscribed upstream while a subscriber remains")
	}
	subs[0].Close()
	subs[0].Close() // idempotent
	waitFor(t, "eth_unsubscribe and the socket closed", 5*time.Second, func() bool {
		return proxy.Calls("eth_unsubscribe") == 1 && proxy.Sockets() == 0
	})
	if _, ok := <-subs[0].C(); ok || subs[0].Err() != nil {
		t.Fatalf("closed Sub: channel open or Err %v", subs[0].Err())
	}
	waitFor(t, "the gauge back down", 5*time.Second, func() bool { return gaugeValue(open) == openBefore })
	if len(hub.Upstreams(137)) != 0 {
		t.Fatalf("upstream state after the last Close: %+v", hub.Upstreams(137))
	}
}

func TestSubscribeErrors(t *testing.T) {
	chain := devChain(t)
	_, up := proxied(t, chain, "alpha")
	noWS := upstream.Upstream{Name: "plain", URL: chain.HTTPURL()}
	hub := New(Config{Pools: map[uint64]*upstream.Pool{137: newPool(t, up), 8453: func() *upstream.Pool {
		p, err := upstream.New(upstream.Config{ChainID: 8453, Providers: []upstream.Upstream{noWS}, ProbeInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Destruct() })
		return p
	}()}})
	defer hub.Close()
	for _, c := range []struct {
		chain  uint64
		kind   string
		params string
		want   error
	}{
		{1, KindNewHeads, "", ErrUnknownChain},
		{137, "syncing", "", ErrKindNotOffered},
		{137, KindLogs, `{"address":"0x12"}`, ErrBadFilter},
		{137, KindLogs, `{"fromBlock":"0x1"}`, ErrBadFilter},
		{137, KindLogs, `[1]`, ErrBadFilter},
		{137, KindNewHeads, `{"x":1}`, ErrBadFilter},
		{8453, KindNewHeads, "", ErrNoUpstream},
	} {
		var p json.RawMessage
		if c.params != "" {
			p = json.RawMessage(c.params)
		}
		if _, err := hub.Subscribe(c.chain, c.kind, p, 1); !errorsIs(err, c.want) {
			t.Errorf("Subscribe(%d, %s, %s) = %v, want %v", c.chain, c.kind, c.params, err, c.want)
		}
	}
	hub.Close()
	if _, err := hub.Subscribe(137, KindNewHeads, nil, 1); !errorsIs(err, ErrHubClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// testAlloc funds the test sender.
func testAlloc() types.GenesisAlloc {
	return types.GenesisAlloc{crypto.PubkeyToAddress(testKey.PublicKey): {Balance: new(big.Int).Mul(big.NewInt(1e18), big.NewInt(1000))}}
}

var testKey, _ = crypto.HexToECDSA("8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63")

func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	_ = g.Write(&m)
	return m.GetGauge().GetValue()
}

// TestPendingTransactionsPassThrough: newPendingTransactions, which the dev
// chain offers, is passed through: the hash of a transaction sent to the pool
// arrives before any block seals it.
func TestPendingTransactionsPassThrough(t *testing.T) {
	chain := devChain(t)
	_, up := proxied(t, chain, "alpha")
	hub := newHub(t, newPool(t, up), Config{})
	s, err := hub.Subscribe(137, KindPendingTxs, nil, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	id := chain.ChainID()
	head, err := chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := crypto.PubkeyToAddress(testKey.PublicKey)
	tx := types.MustSignNewTx(testKey, types.LatestSignerForChainID(id), &types.DynamicFeeTx{
		ChainID: id, Nonce: 0, GasTipCap: big.NewInt(1e9), GasFeeCap: new(big.Int).Add(head.BaseFee, big.NewInt(2e9)),
		Gas: 21000, To: &to, Value: big.NewInt(1),
	})
	if err := chain.Client().SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var hash string
	if err := json.Unmarshal(next(t, s, 5*time.Second).Result, &hash); err != nil || hash != tx.Hash().Hex() {
		t.Fatalf("pending transaction %q (%v), want %s", hash, err, tx.Hash().Hex())
	}
	if _, err := hub.Subscribe(137, KindPendingTxs, json.RawMessage(`"yes"`), 1); !errors.Is(err, ErrBadFilter) {
		t.Fatalf("newPendingTransactions with a string: %v", err)
	}
}
