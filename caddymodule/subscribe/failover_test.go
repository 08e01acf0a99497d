package subscribe

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// mine seals a block every interval until the test ends, like the dev chain.
func mine(t *testing.T, c *simchain.Chain, every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				c.Commit()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestFailoverNoGapNoDuplicate: a newHeads subscription survives its upstream
// stalling (the socket stays open but notifications stop) and then the next
// upstream's socket being cut: the subscriber keeps its Sub and sees every
// block number exactly once, in order; the blocks sealed while no upstream
// was delivering are filled from eth_getBlockByNumber on the new upstream.
func TestFailoverNoGapNoDuplicate(t *testing.T) {
	chain := devChain(t)
	alpha, ua := proxied(t, chain, "alpha")
	beta, ub := proxied(t, chain, "beta")
	hub := newHub(t, newPool(t, ua, ub), Config{StallAfter: time.Second, PingInterval: time.Second, PongTimeout: time.Second})
	resub := metrics.UpstreamResubscriptions.WithLabelValues("137", KindNewHeads)
	before := counterValue(resub)
	mine(t, chain, 100*time.Millisecond)

	s, err := hub.Subscribe(137, KindNewHeads, nil, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A subscriber with a tiny buffer that reads as fast as it can: the
	// burst of a gap fill is paced to it, so it is not cut off as slow.
	tight, err := hub.Subscribe(137, KindNewHeads, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	tightNums := make(chan uint64, 4096)
	go func() {
		for n := range tight.C() {
			var h struct {
				Number hexUint `json:"number"`
			}
			_ = json.Unmarshal(n.Result, &h)
			tightNums <- uint64(h.Number)
		}
		close(tightNums)
	}()
	var nums []uint64
	var by []string
	// read takes notifications until until(n) holds for the latest.
	read := func(what string, until func(Notification) bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case n, ok := <-s.C():
				if !ok {
					t.Fatalf("%s: subscription ended: %v", what, s.Err())
				}
				nums = append(nums, headNumber(t, n))
				by = append(by, n.ServedBy.Upstream)
				if until(n) {
					return
				}
			case <-deadline:
				t.Fatalf("%s: timed out after heads %v served by %v", what, nums, by)
			}
		}
	}
	count := func(k int) func(Notification) bool {
		seen := 0
		return func(Notification) bool { seen++; return seen >= k }
	}
	servedBy := func(name string, thenMore int) func(Notification) bool {
		after := -1
		return func(n Notification) bool {
			if after < 0 && n.ServedBy.Upstream == name {
				after = 0
			} else if after >= 0 {
				after++
			}
			return after >= thenMore
		}
	}
	read("first heads", count(5))
	if by[0] != "alpha" {
		t.Fatalf("first upstream %s, want alpha", by[0])
	}

	alpha.SetMode(faultproxy.Hang) // notifications stop; the socket stays up
	read("move to beta after the stall", servedBy("beta", 5))
	if beta.Calls("eth_getBlockByNumber") == 0 {
		t.Fatal("no gap was filled from eth_getBlockByNumber: the test did not exercise the fill")
	}

	alpha.SetMode(faultproxy.Pass)
	beta.SetMode(faultproxy.Fail502) // no new socket to beta
	beta.CutSockets()                // and the open one dies
	read("back to alpha after beta's socket died", servedBy("alpha", 5))

	for i := 1; i < len(nums); i++ {
		if nums[i] != nums[i-1]+1 {
			t.Fatalf("heads not consecutive at %d: %v (served by %v)", i, nums, by)
		}
	}
	last := nums[len(nums)-1]
	for want := nums[0]; want <= last; want++ {
		select {
		case got, ok := <-tightNums:
			if !ok {
				t.Fatalf("the tight-buffered subscriber was ended (%v) at head %d", tight.Err(), want)
			}
			if got != want {
				t.Fatalf("tight-buffered subscriber: head %d, want %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("tight-buffered subscriber: no head %d", want)
		}
	}
	tight.Close()
	if got := counterValue(resub) - before; got < 2 {
		t.Fatalf("resubscriptions metric rose by %v, want >= 2", got)
	}
	if alpha.Calls("eth_subscribe") < 2 || beta.Calls("eth_subscribe") < 1 {
		t.Fatalf("eth_subscribe calls alpha %d beta %d", alpha.Calls("eth_subscribe"), beta.Calls("eth_subscribe"))
	}
	t.Logf("heads %d..%d, %d upstream switches, %d heads filled from beta's eth_getBlockByNumber",
		nums[0], nums[len(nums)-1], int(counterValue(resub)-before), beta.Calls("eth_getBlockByNumber"))
}

// TestSlowReaderIsCutOff: a subscriber that never reads is ended with
// ErrSlowReader once its buffer is full, holding exactly its buffer's worth of
// notifications, while another subscriber of the same feed receives every head.
func TestSlowReaderIsCutOff(t *testing.T) {
	chain := devChain(t)
	_, up := proxied(t, chain, "alpha")
	hub := newHub(t, newPool(t, up), Config{})
	const slowBuf = 4
	slow, err := hub.Subscribe(137, KindNewHeads, nil, slowBuf)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := hub.Subscribe(137, KindNewHeads, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	const blocks = 12
	var fastGot []uint64
	maxBytes := 0
	for range blocks {
		chain.Commit()
		n := next(t, fast, 5*time.Second)
		fastGot = append(fastGot, headNumber(t, n))
		maxBytes = max(maxBytes, len(n.Result))
	}
	for i := 1; i < len(fastGot); i++ {
		if fastGot[i] != fastGot[i-1]+1 {
			t.Fatalf("fast subscriber missed heads: %v", fastGot)
		}
	}
	held := 0
	for range slow.C() {
		held++
	}
	if !errors.Is(slow.Err(), ErrSlowReader) {
		t.Fatalf("slow subscriber ended with %v, want ErrSlowReader", slow.Err())
	}
	if held != slowBuf {
		t.Fatalf("slow subscriber held %d notifications, want its buffer of %d", held, slowBuf)
	}
	// The memory bound: a Sub never holds more than buffer × notification
	// size (each notification capped by Config.MaxMessageBytes, 4 MiB).
	t.Logf("slow reader cut off holding %d notifications of at most %d bytes (bound %d bytes); the other got all %d heads",
		held, maxBytes, held*maxBytes, blocks)
}

// TestLogsFilterDeliversExactlyTheChainsEvents: two subscribers of TestUSDT's
// Transfer events (the same filter spelled differently: one upstream
// subscription) receive exactly the Transfer logs the chain has, once each,
// also across an upstream failure in the middle; Approval events of the same
// contract and Transfers of another token do not reach them.
func TestLogsFilterDeliversExactlyTheChainsEvents(t *testing.T) {
	chain := devChain(t)
	ctx := t.Context()
	opts := bind.NewKeyedTransactor(testKey, chain.ChainID())
	usdtAddr, err := deploy.DeployUSDT(ctx, chain.Client(), opts, deploy.WithCommit(func() { chain.Commit() }))
	if err != nil {
		t.Fatal(err)
	}
	otherAddr, err := deploy.DeployUSDT(ctx, chain.Client(), opts, deploy.WithCommit(func() { chain.Commit() }))
	if err != nil {
		t.Fatal(err)
	}
	alpha, ua := proxied(t, chain, "alpha")
	beta, ub := proxied(t, chain, "beta")
	hub := newHub(t, newPool(t, ua, ub), Config{})
	mine(t, chain, 100*time.Millisecond)

	abi := testusdt.NewTestUSDT()
	usdt, other := abi.Instance(chain.Client(), usdtAddr), abi.Instance(chain.Client(), otherAddr)
	transfer := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	a, err := hub.Subscribe(137, KindLogs, []byte(`{"address":"`+usdtAddr.Hex()+`","topics":["`+transfer.Hex()+`"]}`), 256)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := hub.Subscribe(137, KindLogs, []byte(`{"topics":[["0x`+strings.ToUpper(transfer.Hex()[2:])+`"],null],"address":["`+strings.ToLower(usdtAddr.Hex())+`"]}`), 256)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := alpha.Calls("eth_subscribe") + beta.Calls("eth_subscribe"); got != 1 {
		t.Fatalf("%d upstream eth_subscribe calls for one filter spelled two ways, want 1", got)
	}
	from, _ := chain.Client().BlockNumber(ctx)

	// The nonces are counted here, not asked of the chain per send: while
	// mine seals blocks, the simulated pool's pending nonce can lag a
	// block's reset, and a send with a reused nonce fails ("replacement
	// transaction underpriced"; seen once under load).
	nonce, err := chain.Client().PendingNonceAt(ctx, opts.From)
	if err != nil {
		t.Fatal(err)
	}
	send := func(c *bind.BoundContract, data []byte) {
		t.Helper()
		opts.Nonce = new(big.Int).SetUint64(nonce)
		nonce++
		if _, err := bind.Transact(c, opts, data); err != nil {
			t.Fatal(err)
		}
	}
	rcpt := common.HexToAddress("0x00000000000000000000000000000000000000b0")
	batch := func() {
		for i := range 3 {
			send(usdt, abi.PackMint(rcpt, big.NewInt(int64(1000+i))))
			send(usdt, abi.PackApprove(rcpt, big.NewInt(5)))
			send(other, abi.PackMint(rcpt, big.NewInt(7)))
		}
	}
	batch()
	first := alpha.Calls("eth_subscribe") > 0
	cut := alpha
	if !first {
		cut = beta
	}
	waitFor(t, "the first batch mined", 10*time.Second, func() bool {
		n, _ := chain.Client().PendingNonceAt(ctx, opts.From)
		m, _ := chain.Client().NonceAt(ctx, opts.From, nil)
		return n == m
	})
	cut.SetMode(faultproxy.Fail502)
	cut.CutSockets()
	batch() // sent while the subscription moves: filled from eth_getLogs or delivered live
	waitFor(t, "the second batch mined", 10*time.Second, func() bool {
		n, _ := chain.Client().PendingNonceAt(ctx, opts.From)
		m, _ := chain.Client().NonceAt(ctx, opts.From, nil)
		return n == m
	})
	to, _ := chain.Client().BlockNumber(ctx)
	want, err := chain.Client().FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from + 1),
		ToBlock: new(big.Int).SetUint64(to), Addresses: []common.Address{usdtAddr}, Topics: [][]common.Hash{{transfer}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 6 {
		t.Fatalf("the chain has %d Transfer logs, want 6", len(want))
	}
	var wantKeys []string
	for _, l := range want {
		wantKeys = append(wantKeys, l.TxHash.Hex()+"/"+l.BlockHash.Hex())
	}
	for name, s := range map[string]*Sub{"a": a, "b": b} {
		var got []string
		for len(got) < len(want) {
			n := next(t, s, 10*time.Second)
			var l types.Log
			if err := l.UnmarshalJSON(n.Result); err != nil {
				t.Fatal(err)
			}
			if l.Address != usdtAddr || l.Topics[0] != transfer {
				t.Fatalf("subscriber %s got a log outside its filter: %+v", name, l)
			}
			got = append(got, l.TxHash.Hex()+"/"+l.BlockHash.Hex())
		}
		if !slices.Equal(got, wantKeys) {
			t.Fatalf("subscriber %s got\n%v\nwant\n%v", name, got, wantKeys)
		}
		select {
		case n := <-s.C():
			t.Fatalf("subscriber %s got an extra log: %s", name, n.Result)
		case <-time.After(300 * time.Millisecond):
		}
	}
	t.Logf("6 Transfer logs delivered once each to both subscribers across a cut socket (eth_getLogs fills: alpha %d, beta %d)",
		alpha.Calls("eth_getLogs"), beta.Calls("eth_getLogs"))
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

// TestUnansweredPingsMoveTheSubscription: an upstream that accepted the
// subscription and then stopped reading its socket (so it answers no ping)
// is given up after PingInterval+PongTimeout — long before the newHeads stall
// timeout — and the subscriber keeps receiving heads from the next upstream.
// The frozen upstream is a double speaking JSON-RPC over WebSocket.
func TestUnansweredPingsMoveTheSubscription(t *testing.T) {
	chain := devChain(t)
	release := make(chan struct{})
	defer close(release)
	up := websocket.Upgrader{}
	var subscribed atomic.Int64
	frozen := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if err := c.ReadJSON(&req); err != nil {
			return
		}
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":"0xfeed"}`))
		subscribed.Add(1)
		<-release // never reads again: pings go unanswered
	}))
	defer frozen.Close()
	frozenUp := upstream.Upstream{Name: "frozen", URL: frozen.URL, WSURL: "ws" + strings.TrimPrefix(frozen.URL, "http")}
	_, live := proxied(t, chain, "live")
	hub := newHub(t, newPool(t, frozenUp, live), Config{PingInterval: 200 * time.Millisecond, PongTimeout: 300 * time.Millisecond})
	mine(t, chain, 100*time.Millisecond)
	start := time.Now()
	s, err := hub.Subscribe(137, KindNewHeads, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := next(t, s, 5*time.Second)
	if subscribed.Load() == 0 {
		t.Fatal("the subscription never went to the frozen upstream first")
	}
	if n.ServedBy.Upstream != "live" {
		t.Fatalf("head served by %q, want live", n.ServedBy.Upstream)
	}
	if took, stall := time.Since(start), hub.cfg.stallAfter(137); took >= stall {
		t.Fatalf("moved after %s, not before the stall timeout %s: the ping check did not act", took, stall)
	}
	t.Logf("left the silent upstream after %s (stall timeout %s)", time.Since(start).Round(time.Millisecond), hub.cfg.stallAfter(137))
}
