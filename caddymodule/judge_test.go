package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// shapeTraffic is what a client following the head asks, in every shape a
// liar may answer in: balances and blocks at and just below the head, the
// head, the receipt of a transaction sent a moment ago and of a hash the
// chain does not know.
type shapeTraffic struct {
	head headTraffic
	i    int
	// final: ask, in turn, blocks 1, 2, … while they are final (64 below
	// the head): blocks below the providers' recent chain.
	final     bool
	nextFinal uint64
	// oldState: every third call reads state (balance, nonce, code, a
	// storage slot) at a block below oldBelow, as a full node no longer
	// keeps it.
	oldState, oldBelow uint64
	mu                 sync.Mutex
	sent               []string        // hashes of transfers sent, newest last
	known              map[string]bool // hashes known to have succeeded (lower case)
}

func (s *shapeTraffic) next() (method, body string) {
	s.i++
	if s.oldBelow > 1 && s.i%3 == 0 {
		s.oldState++
		// Each call another account or slot: none is a cache hit.
		n := "0x" + strconv.FormatUint(1+s.oldState%(s.oldBelow-1), 16)
		a := fmt.Sprintf("0x%040x", s.oldState)
		switch s.oldState % 4 {
		case 0:
			return "eth_getBalance", `{"jsonrpc":"2.0","id":11,"method":"eth_getBalance","params":["` + a + `","` + n + `"]}`
		case 1:
			return "eth_getTransactionCount", `{"jsonrpc":"2.0","id":12,"method":"eth_getTransactionCount","params":["` + a + `","` + n + `"]}`
		case 2:
			return "eth_getCode", `{"jsonrpc":"2.0","id":13,"method":"eth_getCode","params":["` + a + `","` + n + `"]}`
		}
		return "eth_getStorageAt", `{"jsonrpc":"2.0","id":14,"method":"eth_getStorageAt","params":["` + a + `","0x` + strconv.FormatUint(s.oldState, 16) + `","` + n + `"]}`
	}
	if s.final && s.i%2 == 0 && s.nextFinal+70 < s.head.head {
		s.nextFinal++
		return "eth_getBlockByNumber", blockN(int(s.nextFinal))
	}
	switch s.i % 7 {
	case 5:
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.sent) > 0 {
			h := s.sent[len(s.sent)-1]
			return "eth_getTransactionReceipt", `{"jsonrpc":"2.0","id":6,"method":"eth_getTransactionReceipt","params":["` + h + `"]}`
		}
		fallthrough
	case 6:
		unknown := crypto.Keccak256Hash([]byte(strconv.Itoa(s.i) + time.Now().String())).Hex()
		return "eth_getTransactionReceipt", `{"jsonrpc":"2.0","id":7,"method":"eth_getTransactionReceipt","params":["` + unknown + `"]}`
	}
	b := s.head.next()
	var c struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal([]byte(b), &c)
	return c.Method, b
}

// sender sends transfers on the dev chain (to its provider, directly) so
// receipts of recent transactions exist, and records those that succeeded.
func (s *shapeTraffic) send(t *testing.T, e *meterEnv) {
	t.Helper()
	client := e.net.Polygon.Client()
	key := devnet.DevKey("developer-1")
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := client.PendingNonceAt(t.Context(), from)
	if err != nil {
		t.Fatal(err)
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000000e9")
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{ChainID: big.NewInt(137), Nonce: nonce,
		GasTipCap: big.NewInt(2e9), GasFeeCap: big.NewInt(200e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.SendTransaction(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r, err := client.TransactionReceipt(t.Context(), tx.Hash()); err == nil {
			s.mu.Lock()
			s.sent = append(s.sent, tx.Hash().Hex())
			if r.Status == types.ReceiptStatusSuccessful {
				s.known[strings.ToLower(tx.Hash().Hex())] = true
			}
			s.mu.Unlock()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a transfer was never mined")
		}
		time.Sleep(20 * time.Millisecond) // polling the dev chain for the receipt
	}
}

// TestLiarsOfEveryShape: for each shape of lie, a node that passes
// probation honestly, serves callers, then lies 1 in 5 of the answers it
// can lie in (faultproxy.LieSometimes with a Shape): it delivers at most 3
// wrong answers to callers, is quarantined, and the evidence says its lies
// may go back to when it began to serve (settlement withholds its share of
// every epoch from then: settlementd/e2e_trust_test.go shows the 0 paid).
// Each shape on a fresh stack.
func TestLiarsOfEveryShape(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape faultproxy.Shape
	}{
		{"plausible value", faultproxy.ShapeValue},
		{"null", faultproxy.ShapeNull},
		{"empty list", faultproxy.ShapeEmpty},
		{"error", faultproxy.ShapeError},
		{"omitted fields", faultproxy.ShapeOmit},
		{"fabricated or altered receipt", faultproxy.ShapeReceipt},
		{"forged block with a known hash", faultproxy.ShapeForgedBlock},
		{"padded past 256 KiB", faultproxy.ShapePadded},
		{"a block that hashes right but nobody made", faultproxy.ShapeSelfConsistentBlock},
	} {
		t.Run(c.name, func(t *testing.T) { liarOfShape(t, c.shape) })
	}
}

func liarOfShape(t *testing.T, shape faultproxy.Shape) {
	e := startMetered(t, trustOpts())
	liar := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(liar.Close)
	liar.LieAfter.Store(1 << 40) // honest until told
	liar.SetShape(shape)
	liar.SetMode(faultproxy.LieSometimes)
	nodeID := "NODE-EU-SHAPE" + string(rune('A'+int(shape))) + "ZZ"
	e.registerNode(t, nodeID, liar.URL())
	e.waitForState(t, nodeID, func(st map[string]any) bool { return st != nil })
	acct, _ := e.net.Manifest.Account("deployer")
	traffic := &shapeTraffic{head: headTraffic{addr: acct.Address}, known: map[string]bool{}}
	traffic.send(t, e)
	// Probation, then serving callers: honest all along.
	served := 0
	deadline := time.Now().Add(90 * time.Second)
	for served < 20 {
		method, body := traffic.next()
		a := e.rpc(t, body)
		if a.status != http.StatusOK {
			t.Fatalf("%d %s", a.status, a.body)
		}
		if method == "eth_blockNumber" {
			traffic.head.observe(a.body)
		}
		if faultproxy.IsLie(method, a.body, traffic.known) {
			t.Fatalf("a lie before the node lied: %s %.300s", method, a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			served++
		}
		if time.Now().After(deadline) {
			t.Fatalf("the honest phase: the node served %d calls: %v", served, e.trustOf(t, nodeID))
		}
	}
	// It lies from now on, 1 in 5 of the answers it can lie in.
	traffic.final = shape == faultproxy.ShapeSelfConsistentBlock
	liar.LieAfter.Store(liar.Answered.Load())
	startedLying := time.Now()
	standing := e.trustOf(t, nodeID)
	calls, delivered, byNode := 0, 0, 0
	deadline = time.Now().Add(90 * time.Second)
	for {
		calls++
		if calls%40 == 0 {
			traffic.send(t, e)
		}
		method, body := traffic.next()
		a := e.rpc(t, body)
		if a.status != http.StatusOK {
			t.Fatalf("call %d: %d %.300s", calls, a.status, a.body)
		}
		if method == "eth_blockNumber" {
			traffic.head.observe(a.body)
		}
		if faultproxy.IsLie(method, a.body, traffic.known) {
			delivered++
			t.Logf("wrong answer %d delivered: %s by %s: %.200s", delivered, method, a.header.Get("X-Tollgate-Upstream"), a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			byNode++
		}
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Logf("quarantined: %v", st["quarantine_reason"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not caught after %d calls (%d lies told, %d delivered); checks %v; node %v", calls, liar.Lies.Load(), delivered, e.verifications(t), e.upstreamState(t, nodeID))
		}
	}
	t.Logf("shape %d: standing when it began to lie %v; caught after %d calls (%d served by it); %d lies told, %d delivered; checks %v",
		shape, standing, calls, byNode, liar.Lies.Load(), delivered, e.verifications(t))
	if liar.Lies.Load() == 0 {
		t.Fatal("quarantined without a lie told")
	}
	if delivered > 3 {
		t.Fatalf("%d wrong answers delivered; the bound is 3", delivered)
	}
	ev := waitEvidence(t, e, nodeID)
	if ev.SuspectSinceMs == 0 || ev.SuspectSinceMs > startedLying.UnixMilli() {
		t.Fatalf("evidence suspect_since_ms %d, after the node began to lie (%d): its share of that epoch would be paid", ev.SuspectSinceMs, startedLying.UnixMilli())
	}
	if len(ev.NodeAnswer) > events.MaxEvidenceBytes || len(ev.TrustedAnswer) > events.MaxEvidenceBytes {
		t.Fatalf("evidence too large to be kept: %d and %d bytes", len(ev.NodeAnswer), len(ev.TrustedAnswer))
	}
	t.Logf("evidence: %s %s, node answered %.160s", ev.Method, ev.Params, ev.NodeAnswer)
}

// honestCalls is how many calls each honest node of TestHonestNodesOfEveryKind
// gets: 10,000. TOLLGATE_HONEST_CALLS sets it for every kind.
func honestCalls() int {
	if n, err := strconv.Atoi(os.Getenv("TOLLGATE_HONEST_CALLS")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

// TestHonestNodesOfEveryKind: honest nodes the old judge convicted, or
// could — one answering 5 block intervals late (truthfully when it
// answers), one reporting a head a block behind, one that keeps
// future-nonce sends in its own queue as geth does, one of another client
// (its own fields in blocks, its own gas estimates), one that sees orphan
// blocks at the head the providers never got — each through
// probation (shadows) and then serving callers (checks), on a fresh stack:
// never quarantined, no evidence, no mismatch. The calls and time are
// logged.
func TestHonestNodesOfEveryKind(t *testing.T) {
	for _, c := range []struct {
		name        string
		setup       func(p *faultproxy.Proxy)
		sends, slow bool
	}{
		{"five block intervals late", func(p *faultproxy.Proxy) { p.SetDelay(5 * 100 * time.Millisecond) }, false, true},
		// A full node: state older than the blocks made before it started
		// is gone (geth's "missing trie node"), and a third of the calls
		// ask for it.
		{"a full node asked about old state", func(p *faultproxy.Proxy) { p.SetMode(faultproxy.Pruned) }, false, false},
		{"a block behind", func(p *faultproxy.Proxy) { p.LagBy = 1; p.SetMode(faultproxy.Lag) }, false, false},
		{"queues future-nonce sends", func(p *faultproxy.Proxy) { p.SetMode(faultproxy.HoldFutureSends) }, true, false},
		{"another client", func(p *faultproxy.Proxy) { p.ExtraFields.Store(true); p.GasOffset.Store(1000) }, false, false},
		// 1 in 5 of its blocks at the head is one the providers never got
		// (it hashes right: an orphan); never at a final height (the
		// suite's finality_depth is 2: an orphan there would be a lie).
		{"sees orphan blocks the providers never got", func(p *faultproxy.Proxy) {
			p.OrphansAtHead.Store(true)
			p.SetShape(faultproxy.ShapeSelfConsistentBlock)
			p.SetMode(faultproxy.LieSometimes)
		}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) { honestOfKind(t, c.setup, c.sends, c.slow, honestCalls()) })
	}
}

func honestOfKind(t *testing.T, setup func(*faultproxy.Proxy), sends, slow bool, total int) {
	start := time.Now()
	e := startMetered(t, meterOpts{free: 10_000_000, subnet: 10_000_000, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tladder 0:1\n\t\t\t\tsend_grace 1s\n\t\t\t\ttimeout 2s\n\t\t\t}"})
	honest := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(honest.Close)
	setup(honest)
	const nodeID = "NODE-EU-HONESTKD"
	e.registerNode(t, nodeID, honest.URL())
	e.waitForState(t, nodeID, func(st map[string]any) bool { return st != nil })
	acct, _ := e.net.Manifest.Account("deployer")
	traffic := &shapeTraffic{head: headTraffic{addr: acct.Address}, known: map[string]bool{}}
	if honest.Mode() == faultproxy.Pruned {
		// Every block made so far is older than the state the node keeps
		// (once there are a few).
		var head uint64
		for deadline := time.Now().Add(time.Minute); head < 16; {
			var err error
			if head, err = e.net.Polygon.Client().BlockNumber(t.Context()); err != nil || time.Now().After(deadline) {
				t.Fatalf("head %d: %v", head, err)
			}
			time.Sleep(50 * time.Millisecond) // the dev chain makes a block every 100 ms
		}
		honest.PrunedBelow.Store(head)
		traffic.oldBelow = head
	}
	traffic.send(t, e)
	estimate := `{"jsonrpc":"2.0","id":9,"method":"eth_estimateGas","params":[{"from":"` + acct.Address + `","to":"0x00000000000000000000000000000000000000e9","value":"0x1"}]}`

	key := devnet.DevKey("developer-2")
	from := crypto.PubkeyToAddress(key.PublicKey)
	// futureSends counts the sends the node served; signed counts them all,
	// so each is another transaction. (A send a provider served once left
	// its transaction in the provider's queue; signed again at the same
	// nonce, the identical transaction reached the node, and its inclusion
	// check found it at the provider: a match, not a queued send.)
	futureSends, signed := 0, 0
	sendFuture := func() {
		// A nonce 5 beyond the sender's next: it waits in a queue.
		nonce, err := e.net.Polygon.Client().PendingNonceAt(t.Context(), from)
		if err != nil {
			t.Fatal(err)
		}
		to := common.HexToAddress("0x00000000000000000000000000000000000000e7")
		tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{ChainID: big.NewInt(137), Nonce: nonce + 5 + uint64(signed),
			GasTipCap: big.NewInt(2e9), GasFeeCap: big.NewInt(200e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := tx.MarshalBinary()
		signed++
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["`+hexutil.Encode(raw)+`"]}`)
		if a.status != http.StatusOK {
			t.Fatalf("send: %d %s", a.status, a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			futureSends++
		}
	}

	// Probation (shadows), until the node serves a caller.
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, body := traffic.next()
		a := e.rpc(t, body)
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			break
		}
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			t.Fatalf("an honest node quarantined in probation: %v", st)
		}
		if a.status != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("the node never served: %d %.300s; node %v; checks %v", a.status, a.body, e.upstreamState(t, nodeID), e.verifications(t))
		}
	}
	t.Logf("probation over after %v: %v", time.Since(start).Round(time.Second), e.trustOf(t, nodeID))
	// 16 callers at once; 48 for the late node, which holds each call half
	// a second (10,000 calls from 16 callers would take over 5 minutes).
	// Callers may see a rare 503 when a busy machine (the suite with -race
	// beside other work) stretches a half-second answer past the attempt's
	// timeout and the retry too, or keeps Redis from answering the
	// metering script within its second (CI at load average 17: "metering
	// unavailable" once in 10,000): the call was not served and is
	// refunded or never charged, which is no verdict on the node. Those are
	// counted and bounded (1 %) for every kind; any other answer but 200
	// fails.
	workers := 16
	if slow {
		workers = 48
	}
	unavailable := 0
	var (
		mu      sync.Mutex
		byNode  int
		failure string
		next    int
	)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				method, body := traffic.next()
				mu.Unlock()
				if i >= total || failure != "" {
					return
				}
				if i%9 == 8 {
					method, body = "eth_estimateGas", estimate
				}
				if w == 0 && i%200 < workers {
					traffic.send(t, e)
				}
				if sends && w == 1 && i%100 < workers {
					sendFuture()
				}
				a := e.rpc(t, body)
				mu.Lock()
				switch {
				case a.status == http.StatusServiceUnavailable && bytes.Contains(a.body, []byte(`"code":-32603`)):
					unavailable++
					if unavailable > total/100 && failure == "" {
						failure = fmt.Sprintf("%d calls unavailable (503), over 1 %%: %.300s", unavailable, a.body)
					}
				case a.status != http.StatusOK && failure == "":
					failure = fmt.Sprintf("call %d: %d %.300s", i, a.status, a.body)
				}
				if method == "eth_blockNumber" {
					var r struct {
						Result string `json:"result"`
					}
					if json.Unmarshal(a.body, &r) == nil && strings.HasPrefix(r.Result, "0x") {
						traffic.head.head, _ = strconv.ParseUint(r.Result[2:], 16, 64)
					}
				}
				if a.header.Get("X-Tollgate-Upstream") == nodeID {
					byNode++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failure != "" {
		t.Fatal(failure)
	}
	if sends {
		// The last future sends' grace (1 s) has passed when the verifier's
		// inclusion check has looked at each: wait for its counter.
		// A check the verifier's full queue dropped (counted as dropped:
		// 16 callers at once outrun one worker) never runs. They run one
		// at a time, each after its grace: a busy machine once took more
		// than 20 s for 80, so the deadline is generous.
		deadline := time.Now().Add(2 * time.Minute)
		for v := e.verifications(t); v["send_queued"] < futureSends; v = e.verifications(t) {
			if time.Now().After(deadline) {
				if v["send_queued"] > 0 && v["send_queued"]+v["dropped"] >= futureSends {
					break
				}
				t.Fatalf("%d future sends served by the node; inclusion checks %v", futureSends, v)
			}
			time.Sleep(100 * time.Millisecond) // the inclusion checks run after the grace
		}
		if futureSends == 0 || honest.Held.Load() == 0 {
			t.Fatalf("no future-nonce send reached the node (%d held): the test proves nothing", honest.Held.Load())
		}
	}
	if honest.Mode() == faultproxy.Pruned && honest.PrunedAnswers.Load() == 0 {
		t.Fatal("the node was never asked about state it no longer keeps: the test proves nothing")
	}
	st := e.upstreamState(t, nodeID)
	v := e.verifications(t)
	tv := e.trustOf(t, nodeID)
	t.Logf("%d calls in %v (%d unavailable), %d served by the honest node (%d future sends held, %d orphan blocks, %d old state reads refused); standing %v; checks %v",
		total, time.Since(start).Round(time.Second), unavailable, byNode, honest.Held.Load(), honest.Lies.Load(), honest.PrunedAnswers.Load(), tv, v)
	if st == nil || st["quarantined"] != false || v["mismatch"] != 0 || v["shadow_mismatch"] != 0 {
		t.Fatalf("an honest node was judged a liar: %v, checks %v", st, v)
	}
	if tv["phase"] == "probation" || byNode == 0 || v["match"] == 0 {
		t.Fatalf("the node never served or was never checked: served %d, standing %v, checks %v", byNode, tv, v)
	}
	if n := honest.Calls("eth_estimateGas"); n != 0 {
		t.Fatalf("%d gas estimates reached a node: they are the providers'", n)
	}
	for _, x := range e.stream(t) {
		if m, ok := x.(*events.NodeMismatch); ok {
			t.Fatalf("evidence against an honest node: %+v", m)
		}
	}
}

// TestRefusedSendEarnsTheNodeNothing: a send a trusted node refuses (here a
// nonce already used: the dev chain's own refusal) is delivered as it is —
// never sent again — and its revenue is booked to "withheld": no node, the
// house's, the whole amount (sums stay exact). The node is not convicted
// for a refusal. An error the node gives to a question that can be asked
// again (a block that does not exist yet) goes to a provider instead, which
// earns it.
func TestRefusedSendEarnsTheNodeNothing(t *testing.T) {
	e := startMetered(t, meterOpts{free: 10_000_000, subnet: 10_000_000, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\ttimeout 2s\n\t\t\t}"})
	const nodeID = "NODE-EU-REFUSERA"
	node, key := e.servingNode(t, nodeID, nil)

	// A transfer with nonce 0 of the account that deployed the contracts.
	k := devnet.DevKey("deployer")
	to := common.HexToAddress("0x00000000000000000000000000000000000000e7")
	_, raw := transfer(t, k, 0, to)
	sendsBefore := node.Calls("eth_sendRawTransaction")
	var a answer
	deadline := time.Now().Add(20 * time.Second)
	for {
		a = e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["`+hexutil.Encode(raw)+`"]}`, "X-API-Key: "+key)
		if node.Calls("eth_sendRawTransaction") > sendsBefore {
			break // the node got it (selection may pick a provider first)
		}
		if time.Now().After(deadline) {
			t.Fatal("no send reached the node")
		}
	}
	if !strings.Contains(string(a.body), `"error"`) {
		t.Fatalf("a send with a used nonce: %s", a.body)
	}
	if by := a.header.Get("X-Tollgate-Upstream"); by != "withheld" {
		t.Fatalf("a refused send booked to %q, want withheld", by)
	}
	if n := node.Calls("eth_sendRawTransaction") - sendsBefore; n != 1 {
		t.Fatalf("the send reached the node %d times", n)
	}
	rid := a.header.Get("X-Tollgate-Request-Id")
	var rev *events.Revenue
	deadline = time.Now().Add(10 * time.Second)
	for rev == nil {
		for _, x := range e.stream(t) {
			if r, ok := x.(*events.Revenue); ok && r.ID == rid {
				rev = r
			}
		}
		if rev == nil && time.Now().After(deadline) {
			t.Fatalf("no revenue event for request %s", rid)
		}
		time.Sleep(50 * time.Millisecond) // the event writer flushes asynchronously
	}
	if rev.Upstream != "withheld" || rev.NodeID != "" || rev.Amount <= 0 {
		t.Fatalf("revenue of a refused send: %+v", rev)
	}

	// A question that can be asked again: a block far beyond the head.
	// Any node "not found" goes to a provider, which answers and earns.
	for i := range 20 {
		a := e.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionReceipt","params":["0x%064x"]}`, 0xdead00+i), "X-API-Key: "+key)
		if by := a.header.Get("X-Tollgate-Upstream"); by == nodeID {
			t.Fatalf("a node's null was delivered as its own: %s", a.body)
		}
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
		t.Fatalf("a node convicted for a refusal or a true null: %v", st)
	}
	t.Logf("refused send: %s booked to %s (%d units); checks %v", a.body, rev.Upstream, rev.Amount, e.verifications(t))
}
