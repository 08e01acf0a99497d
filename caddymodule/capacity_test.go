package caddymodule_test

import (
	"bufio"
	"context"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// nodeCheckMetrics reads tollgate_gateway_node_checks_total by outcome and
// tollgate_gateway_node_check_capacity for one node on chain 137.
func (e *meterEnv) nodeCheckMetrics(t *testing.T, node string) (map[string]float64, float64) {
	t.Helper()
	return e.nodeCheckMetricsOn(t, 137, node)
}

// nodeCheckMetricsOn is nodeCheckMetrics for a node on chain.
func (e *meterEnv) nodeCheckMetricsOn(t *testing.T, chain uint64, node string) (map[string]float64, float64) {
	t.Helper()
	resp, err := http.Get("http://" + e.gw.AdminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, capacity := map[string]float64{}, -1.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `chain_id="`+strconv.FormatUint(chain, 10)+`"`) || !strings.Contains(line, `upstream="`+node+`"`) {
			continue
		}
		v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		switch {
		case strings.HasPrefix(line, "tollgate_gateway_node_checks_total{"):
			i := strings.Index(line, `outcome="`) + len(`outcome="`)
			out[line[i:i+strings.IndexByte(line[i:], '"')]] = v
		case strings.HasPrefix(line, "tollgate_gateway_node_check_capacity{"):
			capacity = v
		}
	}
	return out, capacity
}

// TestUncheckableNodeGetsLessTraffic: every answer of an
// honest node is to be checked (verify 1; probation off, so it takes the
// calls while its checks keep up: share 1). Then the
// providers the checks ask turn slow (300 ms), so the verifier cannot keep
// up with what the node serves. The checks it cannot take are dropped and
// counted for the node (tollgate_gateway_node_checks_total{outcome=
// "dropped"}, the admin view), never silently; the node's capacity factor
// (tollgate_gateway_node_check_capacity) falls, and with it the share its
// calls are picked by (traffic_share in the admin view), and calls go to
// the providers instead; once the providers are fast again the factor climbs
// back. Every sampled answer is accounted for: offered = checked + dropped
// + failed, and the public /rpc/health does not show the node's checks.
func TestUncheckableNodeGetsLessTraffic(t *testing.T) {
	// No cap on the checks' provider calls (check_qps off): this test is
	// about the verifier's queue; at verify 1 with fast local providers the
	// default cap would drop checks too (its own test:
	// verify.TestProviderCapDropsAndCounts).
	e := startMetered(t, meterOpts{free: -1, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tverify 1\n\t\t\t\tcheck_qps off\n\t\t\t\thedge off\n\t\t\t\ttimeout 5s\n\t\t\t}"})
	honest := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(honest.Close)
	const nodeID = "NODE-EU-CAPACITY"
	e.registerNode(t, nodeID, honest.URL())
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	e.waitForNodeOn(t, nodeID, func() string { return headNumber }, "X-API-Key: "+key)

	// A sampled read (a balance is proved by the node's own proof before
	// delivery and needs no provider check): the token's totalSupply.
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"` + e.net.Manifest.Polygon.USDT + `","data":"0x18160ddd"},"latest"]}`
	var calls, byNode, byProvider atomic.Int64
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.gw.URL()+"/rpc", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-API-Key", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue // cancelled at the end
				}
				resp.Body.Close()
				calls.Add(1)
				switch resp.Header.Get("X-Tollgate-Upstream") {
				case nodeID:
					byNode.Add(1)
				case "alpha", "beta":
					byProvider.Add(1)
				}
			}
		}()
	}
	stop := func() { cancel(); wg.Wait() }
	defer stop()
	// Checks that keep up: the node (share 1, probation off) takes the
	// calls (a provider only while the node's probe finds it behind).
	for calls.Load() < 300 {
		time.Sleep(10 * time.Millisecond) // following the calls made
	}
	checks0, factor0 := e.nodeCheckMetrics(t, nodeID)
	t.Logf("fast checks: factor %.2f, node checks %v; %d calls, %d served by the node, %d by the providers",
		factor0, checks0, calls.Load(), byNode.Load(), byProvider.Load())
	if byNode.Load() == 0 {
		t.Fatal("the node served no call")
	}
	fromProviders := byProvider.Load()
	// The providers (and so the checks) turn slow: the checks fall behind,
	// drops are counted for the node, its factor falls and calls go to the
	// providers instead.
	e.alpha.SetDelay(300 * time.Millisecond)
	e.beta.SetDelay(300 * time.Millisecond)
	deadline := time.Now().Add(60 * time.Second)
	for {
		checks, factor := e.nodeCheckMetrics(t, nodeID)
		tv, _ := e.adminUpstreams(t)[nodeID]["trust"].(map[string]any)
		share, _ := tv["traffic_share"].(float64)
		if checks["dropped"] > checks0["dropped"] && factor > 0 && factor <= 0.5 && share <= 0.5 && byProvider.Load() >= fromProviders+16 {
			t.Logf("slow checks: factor %.2f, traffic share %.2f, node checks %v; %d calls, %d served by the node, %d by the providers",
				factor, share, checks, calls.Load(), byNode.Load(), byProvider.Load())
			// The public view shows the ladder's share, not the factor: a
			// node that saw its share fall below its rung would know its
			// checks are being dropped — when lying is cheap.
			if pub, _ := e.upstreamState(t, nodeID)["trust"].(map[string]any); pub == nil || pub["traffic_share"] != 1.0 {
				t.Fatalf("the public /rpc/health shows the node's capacity factor in its traffic share: %v (admin share %.2f)", pub, share)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's traffic did not fall with its checks: %d calls, %d by the node, %d by providers; checks %v, factor %v, admin view %v",
				calls.Load(), byNode.Load(), byProvider.Load(), checks, factor, e.adminUpstreams(t)[nodeID]["checks"])
		}
		time.Sleep(100 * time.Millisecond) // polling the metrics
	}
	// The providers are fast again: the factor climbs back.
	_, before := e.nodeCheckMetrics(t, nodeID)
	e.alpha.SetDelay(0)
	e.beta.SetDelay(0)
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, factor := e.nodeCheckMetrics(t, nodeID)
		if factor >= before+0.2 {
			t.Logf("fast checks again: factor %.2f (was %.2f)", factor, before)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the factor did not recover: %.2f (was %.2f)", factor, before)
		}
		time.Sleep(100 * time.Millisecond) // polling the metrics
	}
	stop()
	// Every sampled answer is accounted for once the queue is drained, and
	// the admin view says the same as the metrics. A call still in flight
	// when the callers stopped may offer a check between the two reads:
	// they must agree once nothing moves any more.
	deadline = time.Now().Add(30 * time.Second)
	for {
		checks, _ := e.nodeCheckMetrics(t, nodeID)
		if checks["offered"] > 0 && checks["offered"] == checks["checked"]+checks["dropped"]+checks["failed"] {
			view, _ := e.adminUpstreams(t)[nodeID]["checks"].(map[string]any)
			if view == nil || view["dropped"] != checks["dropped"] || view["offered"] != checks["offered"] {
				if time.Now().After(deadline) {
					t.Fatalf("the admin view %v disagrees with the metrics %v", view, checks)
				}
				time.Sleep(100 * time.Millisecond) // a straggling call's check: read both again
				continue
			}
			if pub := e.upstreamState(t, nodeID); pub["checks"] != nil {
				t.Fatalf("the public view shows the node's checks: %v", pub["checks"])
			}
			t.Logf("%d calls, %d served by the node; its checks %v", calls.Load(), byNode.Load(), checks)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("offered checks not accounted for: %v", checks)
		}
		time.Sleep(100 * time.Millisecond) // polling the metrics
	}
}

// TestCheckCapIsFairAcrossChains (found in review): the cap on the
// checks' provider calls (check_qps) is one for the whole gateway. A
// caller floods chain 137, whose only node is checked at rate 1 (verify 1,
// probation off), far over a cap of 40 a second; a node on chain 8453 —
// which no call to chain 137 can reach — serves a caller at about 10 calls
// a second, half its share (20 a second: two nodes are checked). The flood must cost the flooded
// node only: its checks over its share are dropped (dropped_cap) and its
// factor falls, while the other chain's node loses no check and keeps
// factor 1. With one shared bucket the quiet node's checks were dropped as
// often as the flooded one's: its lies went unchecked and its traffic fell
// for another chain's flood.
func TestCheckCapIsFairAcrossChains(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tverify 1\n\t\t\t\tcheck_qps 40 10\n\t\t\t\thedge off\n\t\t\t\ttimeout 5s\n\t\t\t}\n\t\t\tchain 8453 {\n\t\t\t\tprovider base @BASE_RPC@\n\t\t\t}"})
	flooded := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(flooded.Close)
	quiet := faultproxy.New(e.net.Manifest.Base.RPCURL)
	t.Cleanup(quiet.Close)
	const floodedID, quietID = "NODE-EU-FLOODING", "NODE-EU-QUIETONE"
	for _, n := range []struct {
		id, url string
		chain   uint64
	}{{floodedID, flooded.URL(), 137}, {quietID, quiet.URL(), 8453}} {
		raw, err := registry.Encode(&registry.Node{ID: n.id, Wallet: "0x0000000000000000000000000000000000000001", Region: "eu",
			URL: n.url, ChainIDs: []uint64{n.chain}, Status: registry.StatusOnline, UpdatedAt: time.Now().Unix()})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.rdb.HSet(t.Context(), e.prefix+registry.NodesKey, n.id, raw).Err(); err != nil {
			t.Fatal(err)
		}
	}
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	// A sampled read on each chain (a provider check each): a token's totalSupply.
	callOn := func(token string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"` + token + `","data":"0x18160ddd"},"latest"]}`
	}
	ask := func(ctx context.Context, path, body string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.gw.URL()+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		return resp.Header.Get("X-Tollgate-Upstream"), nil
	}
	floodCall, quietCall := callOn(e.net.Manifest.Polygon.USDT), callOn(e.net.Manifest.Base.USDC)
	for _, w := range []struct{ path, body, node string }{{"/rpc", floodCall, floodedID}, {"/rpc/8453", quietCall, quietID}} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			by, err := ask(t.Context(), w.path, w.body)
			if err == nil && by == w.node {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never served on %s: %v %q", w.node, w.path, err, by)
			}
			time.Sleep(20 * time.Millisecond) // polling the pool's state through calls
		}
	}
	checks0, _ := e.nodeCheckMetricsOn(t, 8453, quietID)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var flood, byQuiet atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := ask(ctx, "/rpc", floodCall); err == nil {
					flood.Add(1)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond) // the quiet caller's pace (10 a second), not a wait on a condition
		defer tick.Stop()
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if by, err := ask(ctx, "/rpc/8453", quietCall); err == nil && by == quietID {
				byQuiet.Add(1)
			}
		}
	}()
	stop := func() { cancel(); wg.Wait() }
	defer stop()
	// The flood runs until the flooded node's checks were dropped by the
	// cap a good many times and the quiet node has been checked 30 more
	// times (3 s of its calls).
	deadline := time.Now().Add(90 * time.Second)
	var fc, qc map[string]float64
	var ff, qf float64
	for {
		fc, ff = e.nodeCheckMetrics(t, floodedID)
		qc, qf = e.nodeCheckMetricsOn(t, 8453, quietID)
		if fc["dropped_cap"] >= 100 && qc["offered"] >= checks0["offered"]+30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no flood over the cap: %d flood calls, %d quiet calls by the node; flooded %v, quiet %v", flood.Load(), byQuiet.Load(), fc, qc)
		}
		time.Sleep(100 * time.Millisecond) // polling the metrics
	}
	stop()
	t.Logf("%d flood calls on chain 137, %d quiet calls served by the node on 8453; flooded node: checks %v, factor %.3f; quiet node: checks %v, factor %.3f",
		flood.Load(), byQuiet.Load(), fc, ff, qc, qf)
	if qc["dropped"] != 0 || qc["dropped_cap"] != 0 || qf != 1 {
		t.Fatalf("the flood on chain 137 dropped checks of the node on chain 8453: %v, factor %.3f (d = %.2f)", qc, qf, qc["dropped"]/qc["offered"])
	}
	if ff >= 1 {
		t.Fatalf("the flooded node's factor did not fall: %v, factor %.3f", fc, ff)
	}
}

// TestSendInABatchBuysNoChecks (found in review): a send makes its
// job must-check (its hash is judged every time, locally). A caller who
// puts a send — one the node refuses costs nothing: a used nonce — in a
// batch with reads must not make every read of that batch a must-check
// job: that would replay each of them on a provider (one provider call
// per node-served call instead of the check rate's share: an
// amplification the caller chooses) ahead of every node's sampled checks.
// The reads beside a send are sampled at the node's rate like any others.
func TestSendInABatchBuysNoChecks(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1,
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tverify 0.02\n\t\t\t\thedge off\n\t\t\t}"})
	honest := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(honest.Close)
	const nodeID = "NODE-EU-SENDBTCH"
	e.registerNode(t, nodeID, honest.URL())
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	e.waitForNodeOn(t, nodeID, func() string { return headNumber }, "X-API-Key: "+key)

	acct, _ := e.net.Manifest.Account("deployer")
	balance := `{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + acct.Address + `","latest"]}`
	// The node's first 20 answers on this gateway are all checked: past
	// them (the node serves state reads once the gateway can pin them),
	// and every check of them done.
	drained := func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, _ := e.nodeCheckMetrics(t, nodeID)
			if c["offered"] == c["checked"]+c["dropped"]+c["failed"] {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("checks not drained: %v", c)
			}
			time.Sleep(50 * time.Millisecond) // polling the metrics
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for honest.Calls("eth_getBalance") < 25 {
		e.rpc(t, balance, "X-API-Key: "+key)
		if time.Now().After(deadline) {
			t.Fatalf("the node answered %d balances", honest.Calls("eth_getBalance"))
		}
	}
	drained()
	// A transaction with a nonce the deployer has used: every node refuses it.
	k := devnet.DevKey("deployer")
	to := common.HexToAddress("0x00000000000000000000000000000000000000e3")
	tx, err := types.SignNewTx(k, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{
		ChainID: big.NewInt(137), Nonce: 0, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(100e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tx.MarshalBinary()
	batch := `[{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["` + hexutil.Encode(raw) + `"]},` + balance + `]`
	providers := func() int { return e.alpha.Calls("eth_getBalance") + e.beta.Calls("eth_getBalance") }
	const n = 100
	node0, prov0 := honest.Calls("eth_getBalance"), providers()
	for range n {
		if a := e.rpc(t, batch, "X-API-Key: "+key); a.status != http.StatusOK {
			t.Fatalf("batch: %d %s", a.status, a.body)
		}
	}
	byNode := honest.Calls("eth_getBalance") - node0
	if byNode < n/2 {
		t.Fatalf("the node answered %d of %d batches' reads", byNode, n)
	}
	// Every check drains (the providers are fast): wait for the offered
	// checks to be accounted for, then count the provider calls.
	drained()
	// The reads the node answered are checked at 2 %: expected 2, allow 12
	// (and whatever the providers answered for the caller themselves).
	extra := providers() - prov0 - (n - byNode)
	t.Logf("%d batches with a refused send: the node answered %d reads, the providers were asked %d more", n, byNode, extra)
	if extra > 12 {
		t.Fatalf("a refused send in each batch made %d of the node's %d reads provider replays (check rate 0.02)", extra, byNode)
	}
}

// TestRefusalsClimbNoLadder (found in review): a check whose node
// and provider both refused (the same code) found no lie, but it verified
// no work: a node answering with the refusal a provider also gives (a
// provider that refuses for now; calls a caller made invalid) must not
// climb the ladder on it. Only answers with a result are verified matches.
func TestRefusalsClimbNoLadder(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\tverify 1\n\t\t\t\thedge off\n\t\t\t}"})
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	const nodeID = "NODE-EU-REFUSALS"
	e.registerNode(t, nodeID, node.URL())
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	acct, _ := e.net.Manifest.Account("deployer")
	balance := `{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + acct.Address + `","latest"]}`
	// The node serves state reads (once the gateway can pin them).
	e.waitForNodeOn(t, nodeID, func() string { return balance }, "X-API-Key: "+key)

	for _, p := range []*faultproxy.Proxy{node, e.alpha, e.beta} {
		p.SetErrorFor("eth_getBalance", `{"code":-32602,"message":"invalid argument 0"}`)
	}
	matches := func() float64 {
		tv, _ := e.adminUpstreams(t)[nodeID]["trust"].(map[string]any)
		m, _ := tv["verified_matches"].(float64)
		return m
	}
	drained := func() map[string]float64 {
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, _ := e.nodeCheckMetrics(t, nodeID)
			if c["offered"] == c["checked"]+c["dropped"]+c["failed"] {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("checks not drained: %v", c)
			}
			time.Sleep(50 * time.Millisecond) // polling the metrics
		}
	}
	drained()
	m0, node0 := matches(), node.Calls("eth_getBalance")
	for range 30 {
		e.rpc(t, balance, "X-API-Key: "+key)
	}
	c := drained()
	byNode := node.Calls("eth_getBalance") - node0
	t.Logf("30 refused balances, %d refused by the node; verified matches %v -> %v; checks %v", byNode, m0, matches(), c)
	if byNode < 15 {
		t.Fatalf("the node was asked %d of 30 calls", byNode)
	}
	if m := matches(); m > m0 {
		t.Fatalf("refusals matched by a provider's refusal climbed the ladder: verified matches %v -> %v", m0, m)
	}
}

// TestRefusalsPassNoProbation: the same for the shadow calls of a node in
// probation — a node that only refuses what the providers refused must
// not earn probation's matches (it would serve callers having answered
// nothing).
func TestRefusalsPassNoProbation(t *testing.T) {
	e := startMetered(t, meterOpts{free: -1, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation 10 1\n\t\t\t\thedge off\n\t\t\t}"})
	node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(node.Close)
	const nodeID = "NODE-EU-REFUSEPR"
	for _, p := range []*faultproxy.Proxy{node, e.alpha, e.beta} {
		p.SetErrorFor("eth_getBalance", `{"code":-32602,"message":"invalid argument 0"}`)
	}
	e.registerNode(t, nodeID, node.URL())
	key, id := e.createKey(t)
	e.credit(t, id, 1_000_000_000)
	acct, _ := e.net.Manifest.Account("deployer")
	balance := `{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + acct.Address + `","latest"]}`
	deadline := time.Now().Add(30 * time.Second)
	for node.Calls("eth_getBalance") < 30 {
		e.rpc(t, balance, "X-API-Key: "+key)
		if time.Now().After(deadline) {
			t.Fatalf("the node was shadowed %d times", node.Calls("eth_getBalance"))
		}
	}
	// Wait for the shadows sent to be judged: one more call, and the
	// node's answers to it, are judged after those before.
	tv, _ := e.adminUpstreams(t)[nodeID]["trust"].(map[string]any)
	t.Logf("%d shadow refusals: standing %v", node.Calls("eth_getBalance"), tv)
	// The gateway's own probation questions (trust.Questions: blocks,
	// nonces, code, storage, transactions and receipts, and a balance
	// everyone refuses here) may match honestly meanwhile: the matches must
	// not exceed the node's answers to those other methods, which they
	// would by the 30 refusals if refusals counted.
	honest := 0
	for _, m := range []string{"eth_getBlockByNumber", "eth_getTransactionCount", "eth_getCode", "eth_getStorageAt",
		"eth_getTransactionByHash", "eth_getTransactionReceipt"} {
		honest += node.Calls(m)
	}
	if m, _ := tv["node_matches"].(float64); int(m) > honest {
		t.Fatalf("refusals matched by a provider's refusal counted for probation: %v (%d answers to other methods)", tv, honest)
	}
}
