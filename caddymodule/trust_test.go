package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
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

// trustOpts: a metered gateway whose registry refresh, probes and head are
// fast (100 ms), with the default probation (50 matches over 3 methods),
// ladder and check rates.
func trustOpts() meterOpts {
	return meterOpts{free: 10_000_000, subnet: 10_000_000, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\ttimeout 2s\n\t\t\t}"}
}

// headTraffic makes the calls a client following the head makes, the ones
// a liar at the head alters: balances and blocks at latest and a few
// blocks below the head, and the head itself.
type headTraffic struct {
	addr string
	head uint64
	i    int
}

func (h *headTraffic) next() string {
	h.i++
	below := func(d uint64) string {
		if h.head <= d {
			return "latest"
		}
		return "0x" + strconv.FormatUint(h.head-d, 16)
	}
	switch h.i % 5 {
	case 0:
		return `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + h.addr + `","latest"]}`
	case 1:
		return `{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["latest",false]}`
	case 2:
		return `{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["` + h.addr + `","` + below(2) + `"]}`
	case 3:
		return `{"jsonrpc":"2.0","id":4,"method":"eth_getBlockByNumber","params":["` + below(3) + `",false]}`
	}
	return `{"jsonrpc":"2.0","id":5,"method":"eth_blockNumber","params":[]}`
}

// observe reads the head from an eth_blockNumber answer and reports
// whether the answer is one of the liar's (faultproxy's made-up balance or
// block hash).
func (h *headTraffic) observe(body []byte) (lie bool) {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(body, &r) != nil {
		return false
	}
	var s string
	if json.Unmarshal(r.Result, &s) == nil {
		if h.i%5 == 0 || h.i%5 == 2 { // a balance
			return s == faultproxy.LieBalance
		}
		if h.i%5 == 4 && strings.HasPrefix(s, "0x") {
			if n, err := strconv.ParseUint(s[2:], 16, 64); err == nil {
				h.head = n
			}
		}
		return false
	}
	return strings.Contains(string(r.Result), faultproxy.LieHash)
}

func (e *meterEnv) trustOf(t *testing.T, id string) map[string]any {
	t.Helper()
	st := e.upstreamState(t, id)
	if st == nil {
		return nil
	}
	tv, _ := st["trust"].(map[string]any)
	return tv
}

// adminTrustOf is the node's standing in the admin view, which alone shows
// the counts that move with its checks (verified_matches and the like).
func (e *meterEnv) adminTrustOf(t *testing.T, id string) map[string]any {
	t.Helper()
	tv, _ := e.adminUpstreams(t)[id]["trust"].(map[string]any)
	return tv
}

// liarRun is what a liar did before its quarantine, seen by the callers.
type liarRun struct {
	calls, byNode, delivered, servedAfterLie int
}

// untilQuarantined sends head traffic through the gateway until the node is
// quarantined (or within is over), counting the wrong answers callers got
// and the calls the node served, before and after its first lie.
func (e *meterEnv) untilQuarantined(t *testing.T, nodeID string, liar *faultproxy.Proxy, within time.Duration) liarRun {
	t.Helper()
	acct, _ := e.net.Manifest.Account("deployer")
	traffic := &headTraffic{addr: acct.Address}
	var r liarRun
	deadline := time.Now().Add(within)
	for {
		r.calls++
		a := e.rpc(t, traffic.next())
		if a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", r.calls, a.status, a.body)
		}
		if traffic.observe(a.body) {
			r.delivered++
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			r.byNode++
			if liar.Lies.Load() > 0 {
				r.servedAfterLie++
			}
		}
		if st := e.upstreamState(t, nodeID); st == nil || st["quarantined"] == true {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the liar was not caught after %d calls (%d lies told, %d delivered): %v",
				r.calls, liar.Lies.Load(), r.delivered, e.upstreamState(t, nodeID))
		}
	}
}

// TestLiarFromTheStartIsCaughtInProbation: a newly registered node lies 1
// in 5 at the head (balances and blocks at latest and a few blocks below)
// from its first answer. It is in probation: providers answer every
// caller, the node gets shadow copies, and its first lie in them is caught.
// 0 wrong answers reach a caller, it serves (and so earns) nothing, and the
// evidence names the call and both answers.
func TestLiarFromTheStartIsCaughtInProbation(t *testing.T) {
	e := startMetered(t, trustOpts())
	liar := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(liar.Close)
	liar.SetMode(faultproxy.LieSometimes)
	const nodeID = "NODE-EU-LIARSTRT"
	e.registerNode(t, nodeID, liar.URL())
	e.waitForState(t, nodeID, func(st map[string]any) bool { return st != nil })
	r := e.untilQuarantined(t, nodeID, liar, 60*time.Second)
	delivered, byNode, calls := r.delivered, r.byNode, r.calls
	t.Logf("caught in probation after %d caller calls; the node told %d lies in %d answers; %d reached a caller, %d calls it served",
		calls, liar.Lies.Load(), liar.Answered.Load(), delivered, byNode)
	if delivered != 0 || byNode != 0 {
		t.Fatalf("%d wrong answers delivered, %d calls served by a node in probation; want 0 and 0", delivered, byNode)
	}
	ev := waitEvidence(t, e, nodeID)
	if ev.Method != "eth_getBalance" && ev.Method != "eth_getBlockByNumber" {
		t.Fatalf("evidence about %s", ev.Method)
	}
	for _, x := range e.stream(t) {
		if r, ok := x.(*events.Revenue); ok && r.NodeID == nodeID {
			t.Fatalf("the liar earned: %+v", r)
		}
	}
}

// TestPatientLiarIsCaughtWithinTheBound: a node honest for its first 300
// answers (probation, then the ladder, serving callers), then lying 1 in 5
// at the head. At most 5 wrong answers reach callers, and it serves at most
// 25 calls after its first lie before its quarantine.
func TestPatientLiarIsCaughtWithinTheBound(t *testing.T) {
	e := startMetered(t, trustOpts())
	liar := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(liar.Close)
	liar.LieAfter.Store(300)
	liar.SetMode(faultproxy.LieSometimes)
	const nodeID = "NODE-EU-PATIENTA"
	e.registerNode(t, nodeID, liar.URL())
	e.waitForState(t, nodeID, func(st map[string]any) bool { return st != nil })
	r := e.untilQuarantined(t, nodeID, liar, 120*time.Second)
	delivered, servedAfterLie, byNode, calls := r.delivered, r.servedAfterLie, r.byNode, r.calls
	t.Logf("caught after %d caller calls; %d served by the node; it told %d lies from answer %d; %d reached callers; %d calls it served after its first lie",
		calls, byNode, liar.Lies.Load(), liar.FirstLieAt.Load(), delivered, servedAfterLie)
	servingFrom := time.Now() // at the latest
	if byNode == 0 {
		t.Fatal("the node never served a caller before it lied: the test proves nothing about the bound")
	}
	if delivered > 5 || servedAfterLie > 25 {
		t.Fatalf("%d wrong answers delivered (bound 5), %d node-served calls after its first lie (bound 25)", delivered, servedAfterLie)
	}
	// The evidence says since when the node served callers: settlement
	// withholds its share of every epoch from then (lies before the caught
	// one are not known one by one).
	ev := waitEvidence(t, e, nodeID)
	if ev.SuspectSinceMs == 0 || ev.SuspectSinceMs > servingFrom.UnixMilli() || ev.SuspectSinceMs > ev.TimeMs {
		t.Fatalf("evidence suspect_since_ms %d (evidence at %d)", ev.SuspectSinceMs, ev.TimeMs)
	}
}

// TestProbationThenLadder: an honest new node serves no caller until its
// probation (50 matching shadow answers over 3 methods) ends; then it takes
// the ladder's first share (10 % of the calls providers could take), and
// climbs as checks of its answers match. The figures are logged.
func TestProbationThenLadder(t *testing.T) {
	e := startMetered(t, trustOpts())
	honest := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(honest.Close)
	const nodeID = "NODE-EU-LADDERAB"
	e.registerNode(t, nodeID, honest.URL())
	e.waitForState(t, nodeID, func(st map[string]any) bool { return st != nil })
	acct, _ := e.net.Manifest.Account("deployer")
	traffic := &headTraffic{addr: acct.Address}

	ask := func() (byNode bool) {
		a := e.rpc(t, traffic.next())
		if a.status != http.StatusOK {
			t.Fatalf("%d %s", a.status, a.body)
		}
		traffic.observe(a.body)
		return a.header.Get("X-Tollgate-Upstream") == nodeID
	}
	// Probation: no caller is served by the node.
	calls := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		tv := e.adminTrustOf(t, nodeID)
		if tv != nil && tv["phase"] != "probation" {
			t.Logf("probation ended after %d caller calls: %v", calls, tv)
			if m, _ := tv["verified_matches"].(float64); m < 50 {
				t.Fatalf("promoted with %v matches", tv)
			}
			break
		}
		calls++
		if ask() {
			// Served by the node: its probation must have ended before
			// this call was picked (a shadow may have matched meanwhile).
			if after := e.trustOf(t, nodeID); after == nil || after["phase"] == "probation" {
				t.Fatalf("call %d served by the node in probation (%v)", calls, after)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("probation never ended after %d calls: %v", calls, tv)
		}
	}
	// The first rung: about a tenth of the calls.
	const window = 400
	served := 0
	for range window {
		if ask() {
			served++
		}
	}
	tv := e.adminTrustOf(t, nodeID)
	t.Logf("ladder: the node served %d of the next %d calls (rung share 0.10, then %v); standing %v", served, window, tv["traffic_share"], tv)
	if served == 0 || served > window/2 {
		t.Fatalf("the node served %d of %d calls on the first rung (share 0.10)", served, window)
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
		t.Fatalf("an honest node was quarantined: %v", st)
	}
	if m, _ := tv["verified_matches"].(float64); m <= 50 {
		t.Fatalf("no check after probation matched: %v", tv)
	}
}

// waitEvidence waits for the node_mismatch event naming nodeID.
func waitEvidence(t *testing.T, e *meterEnv, nodeID string) *events.NodeMismatch {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, x := range e.stream(t) {
			if m, ok := x.(*events.NodeMismatch); ok && m.NodeID == nodeID {
				if len(m.NodeAnswer) == 0 || len(m.TrustedAnswer) == 0 || (m.Block == 0 && m.Method != "eth_sendRawTransaction") {
					t.Fatalf("evidence without both answers or a block: %+v", m)
				}
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Sprintf("no node_mismatch evidence against %s on the stream", nodeID))
		}
		time.Sleep(50 * time.Millisecond) // the event writer flushes asynchronously
	}
}

// TestNodeDroppingSendsIsCaught: a node answers eth_sendRawTransaction with
// the right hash (keccak256 of the bytes) but never passes the transaction
// on. After the send grace no provider knows it; a provider accepts it on
// resend, which proves the node dropped a valid transaction: it is
// quarantined, and the caller's transaction is mined after all.
func TestNodeDroppingSendsIsCaught(t *testing.T) {
	e := startMetered(t, meterOpts{free: 10_000_000, subnet: 10_000_000, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tsend_grace 1s\n\t\t\t\ttimeout 2s\n\t\t\t}"})
	dropper := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(dropper.Close)
	dropper.SetMode(faultproxy.DropSends)
	const nodeID = "NODE-EU-DROPPERA"
	e.registerNode(t, nodeID, dropper.URL())
	e.waitForNode(t, nodeID)

	client := e.net.Polygon.Client()
	key := devnet.DevKey("developer-2")
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := client.PendingNonceAt(t.Context(), from)
	if err != nil {
		t.Fatal(err)
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000000e7")
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{ChainID: big.NewInt(137), Nonce: nonce,
		GasTipCap: big.NewInt(2e9), GasFeeCap: big.NewInt(200e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tx.MarshalBinary()
	// Probation off: the node is trusted, so it takes the send.
	a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["`+hexutil.Encode(raw)+`"]}`)
	if by := a.header.Get("X-Tollgate-Upstream"); by != nodeID {
		t.Fatalf("the send went to %q: %s", by, a.body)
	}
	if a.status != http.StatusOK || !strings.Contains(string(a.body), tx.Hash().Hex()) {
		t.Fatalf("send: %d %s", a.status, a.body)
	}
	e.waitForState(t, nodeID, func(st map[string]any) bool {
		r, _ := st["quarantine_reason"].(string)
		return st["quarantined"] == true && strings.Contains(r, "no provider knew")
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r, err := client.TransactionReceipt(t.Context(), tx.Hash()); err == nil && r.Status == types.ReceiptStatusSuccessful {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dropped transaction was never mined after the verifier's resend")
		}
		time.Sleep(50 * time.Millisecond) // polling the chain
	}
	ev := waitEvidence(t, e, nodeID)
	if ev.Method != "eth_sendRawTransaction" || !strings.Contains(string(ev.NodeAnswer), tx.Hash().Hex()) {
		t.Fatalf("evidence %+v", ev)
	}
}
