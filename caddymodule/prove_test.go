package caddymodule_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// provedOpts: a metered gateway with probation off (a node serves callers
// once its probe passes: the proofs are about answers after probation) and
// a fast registry refresh.
func provedOpts() meterOpts {
	return meterOpts{free: 10_000_000, subnet: 10_000_000, adminToken: "admin-token-0123456789",
		extra: "upstreams {\n\t\t\t\tregistry_refresh 100ms\n\t\t\t\tallow_private_nodes\n\t\t\t\tprobation off\n\t\t\t\ttimeout 2s\n\t\t\t}"}
}

// provedCounts reads tollgate_gateway_node_answers_proved_total as
// method → outcome → count.
func (e *meterEnv) provedCounts(t *testing.T) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	e.counters(t, "tollgate_gateway_node_answers_proved_total", func(label func(string) string, n int) {
		m := label("method")
		if out[m] == nil {
			out[m] = map[string]int{}
		}
		out[m][label("outcome")] = n
	})
	return out
}

// proofHeaderFetches reads tollgate_gateway_proof_header_fetches_total:
// the provider headers the proofs fetched, by "hash" and by "number".
func (e *meterEnv) proofHeaderFetches(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	e.counters(t, "tollgate_gateway_proof_header_fetches_total", func(label func(string) string, n int) { out[label("by")] = n })
	return out
}

// counters calls each with every series of the counter name on the
// gateway's /metrics: a reader of its labels and its value.
func (e *meterEnv) counters(t *testing.T, name string, each func(label func(string) string, n int)) {
	t.Helper()
	resp, err := http.Get("http://" + e.gw.AdminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		n, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		each(func(label string) string {
			i := strings.Index(line, label+`="`)
			if i < 0 {
				return ""
			}
			rest := line[i+len(label)+2:]
			return rest[:strings.IndexByte(rest, '"')]
		}, int(n))
	}
}

// provedLiar starts a fault proxy in front of the dev chain, set up by
// setup, registers it as node id, waits until it serves a caller (honest
// until then) and turns its lies on (LieSometimes): every lie it tells is
// then told to a caller of the test.
func (e *meterEnv) provedLiar(t *testing.T, id string, setup func(*faultproxy.Proxy)) *faultproxy.Proxy {
	t.Helper()
	liar := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(liar.Close)
	setup(liar)
	e.registerNode(t, id, liar.URL())
	e.waitForNodeOn(t, id, func() string { return headNumber })
	liar.SetMode(faultproxy.LieSometimes)
	return liar
}

// liarServed is what callers got until a liar's quarantine: the calls
// made, the wrong answers delivered, the answers the node served.
type liarServed struct{ calls, delivered, byNode int }

// askUntilQuarantined makes call (a caller's call, and whether the answer
// delivered is wrong) until node id is quarantined; the test fails if it
// is not within the time given, or if a call is not answered 200.
func (e *meterEnv) askUntilQuarantined(t *testing.T, id string, liar *faultproxy.Proxy, within time.Duration, call func() (answer, bool)) liarServed {
	t.Helper()
	var s liarServed
	deadline := time.Now().Add(within)
	for {
		s.calls++
		a, wrong := call()
		if a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", s.calls, a.status, a.body)
		}
		if wrong {
			s.delivered++
		}
		if a.header.Get("X-Tollgate-Upstream") == id {
			s.byNode++
		}
		if st := e.upstreamState(t, id); st == nil || st["quarantined"] == true {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not caught after %d calls (%d served by it; %d lies told in %d answers, %d delivered)",
				id, s.calls, s.byNode, liar.Lies.Load(), liar.Answered.Load(), s.delivered)
		}
	}
}

// allProved checks an honest node's run of calls: every answer it served
// with a value to methods (byNode, by method; no methods: every method of
// byNode) counted proved between the proof counts before and after, none
// rerouted or a lie, enough served to mean anything (a tenth of the
// calls), and the node not convicted. It returns the answers to methods
// the node served.
func (e *meterEnv) allProved(t *testing.T, nodeID string, calls int, byNode map[string]int, before, after map[string]map[string]int, methods ...string) int {
	t.Helper()
	if len(methods) == 0 {
		for m := range byNode {
			methods = append(methods, m)
		}
	}
	served := 0
	for _, m := range methods {
		served += byNode[m]
		if d := after[m]["proved"] - before[m]["proved"]; d != byNode[m] {
			t.Errorf("%s: the node served %d answers with a value, %d were proved before delivery (want all)", m, byNode[m], d)
		}
		for _, o := range []string{"rerouted", "lie"} {
			if d := after[m][o] - before[m][o]; d != 0 {
				t.Errorf("%s: %d answers of an honest node %s", m, d, o)
			}
		}
	}
	if served < calls/10 {
		t.Fatalf("the node served %d of %d calls with a value: too few to show anything (%v)", served, calls, byNode)
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
		t.Fatalf("an honest node was convicted: %v", st)
	}
	return served
}

// provableTraffic cycles through the four provable state reads (at latest
// and a few blocks below the head, where reads are pinned to the providers'
// block hash) and block headers by number.
type provableTraffic struct {
	addr, token string
	head        uint64
	i           int
}

func (p *provableTraffic) next() (method, body string) {
	p.i++
	at := "latest"
	if p.i%2 == 0 && p.head > 3 {
		at = "0x" + strconv.FormatUint(p.head-2, 16)
	}
	switch p.i % 6 {
	case 0:
		return "eth_getBalance", `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + p.addr + `","` + at + `"]}`
	case 1:
		return "eth_getTransactionCount", `{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionCount","params":["` + p.addr + `","` + at + `"]}`
	case 2:
		return "eth_getCode", `{"jsonrpc":"2.0","id":1,"method":"eth_getCode","params":["` + p.token + `","` + at + `"]}`
	case 3:
		return "eth_getStorageAt", `{"jsonrpc":"2.0","id":1,"method":"eth_getStorageAt","params":["` + p.token + `","0x2","` + at + `"]}`
	case 4:
		return "eth_getBlockByNumber", `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["` + at + `",false]}`
	}
	return "eth_blockNumber", headNumber
}

func (p *provableTraffic) observe(method string, body []byte) {
	if method != "eth_blockNumber" {
		return
	}
	var r struct {
		Result string `json:"result"`
	}
	if json.Unmarshal(body, &r) == nil && strings.HasPrefix(r.Result, "0x") {
		if n, err := strconv.ParseUint(r.Result[2:], 16, 64); err == nil {
			p.head = n
		}
	}
}

// providerCalls is how many calls of methods the two providers received.
func (e *meterEnv) providerCalls(methods ...string) int {
	n := 0
	for _, m := range methods {
		n += e.alpha.Calls(m) + e.beta.Calls(m)
	}
	return n
}

var provableState = []string{"eth_getBalance", "eth_getTransactionCount", "eth_getCode", "eth_getStorageAt"}

// TestProvedAnswersOfAnHonestNode: an honest node's answers to the four
// provable state reads and to blocks by number are proved before they are
// delivered — every one (the counter's "proved" equals the calls it
// served, method by method) — and all are delivered; it is never
// convicted. No provider is asked a provable read again (the providers
// got exactly the callers' reads they served, and no eth_getProof), and
// the providers were asked at most one header per block. The latency the
// proof adds (one node round trip) is logged.
func TestProvedAnswersOfAnHonestNode(t *testing.T) {
	e := startMetered(t, provedOpts())
	honest := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
	t.Cleanup(honest.Close)
	const nodeID = "NODE-EU-PROVEDOK"
	e.registerNode(t, nodeID, honest.URL())
	e.waitForNode(t, nodeID)
	acct, _ := e.net.Manifest.Account("deployer")
	traffic := &provableTraffic{addr: acct.Address, token: e.net.Manifest.Polygon.USDT}
	for traffic.head == 0 {
		m, b := traffic.next()
		a := e.rpc(t, b)
		traffic.observe(m, a.body)
	}

	before := e.provedCounts(t)
	stateBefore := e.providerCalls(provableState...)
	proofsBefore := e.providerCalls("eth_getProof")
	headersBefore := e.providerCalls("eth_getBlockByHash")
	nodeProofsBefore := honest.Calls("eth_getProof")
	headStart := traffic.head

	byNode := map[string]int{}
	byProvider := 0 // provable state reads the providers served the callers
	// Latency: proved reads served by the node, against the node's
	// eth_blockNumber (the same path with nothing to prove) and provable
	// reads the providers served.
	var nodeLatency, headLatency, providerLatency []time.Duration
	const calls = 240
	for range calls {
		m, b := traffic.next()
		start := time.Now()
		a := e.rpc(t, b)
		took := time.Since(start)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) {
			t.Fatalf("%s: %d %s", m, a.status, a.body)
		}
		traffic.observe(m, a.body)
		up := a.header.Get("X-Tollgate-Upstream")
		state := m != "eth_blockNumber" && m != "eth_getBlockByNumber"
		switch {
		case up == nodeID:
			byNode[m]++
			if state {
				nodeLatency = append(nodeLatency, took)
			} else if m == "eth_blockNumber" {
				headLatency = append(headLatency, took)
			}
		case state && (up == "alpha" || up == "beta"):
			byProvider++
			providerLatency = append(providerLatency, took)
		}
	}
	after := e.provedCounts(t)
	headEnd := traffic.head

	served := e.allProved(t, nodeID, calls, byNode, before, after, append(provableState, "eth_getBlockByNumber")...)
	// No provider replays: the providers got exactly the provable reads they
	// served to callers, never an eth_getProof, and at most one header per
	// block the head moved through (the head poll's headers carry most
	// state roots: usually none at all).
	if got := e.providerCalls(provableState...) - stateBefore; got != byProvider {
		t.Errorf("providers got %d provable reads, served %d to callers: %d replays", got, byProvider, got-byProvider)
	}
	if got := e.providerCalls("eth_getProof") - proofsBefore; got != 0 {
		t.Errorf("providers were asked %d eth_getProof", got)
	}
	blocks := int(headEnd-headStart) + 3 // the blocks the traffic could name: latest and head-2 over the run
	headers := e.providerCalls("eth_getBlockByHash") - headersBefore
	if headers > blocks {
		t.Errorf("providers were asked %d headers by hash over %d blocks", headers, blocks)
	}
	nodeProofs := honest.Calls("eth_getProof") - nodeProofsBefore
	if nodeProofs < served-byNode["eth_getBlockByNumber"] {
		t.Errorf("the node was asked %d proofs for %d proved state reads", nodeProofs, served-byNode["eth_getBlockByNumber"])
	}
	t.Logf("node served %v; %d proofs asked of it; providers served %d provable reads with no replay, %d headers by hash over %d blocks; "+
		"latency of a proved node read p50 %v mean %v, of the node's eth_blockNumber (nothing to prove) p50 %v mean %v, of a provider's read p50 %v mean %v",
		byNode, nodeProofs, byProvider, headers, blocks, p50(nodeLatency), mean(nodeLatency), p50(headLatency), mean(headLatency),
		p50(providerLatency), mean(providerLatency))
}

func p50(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// TestProvedLiarsDeliverNothing: nodes that, serving callers, alter 1 in 5
// balances — with a proof made consistent with the altered balance (every
// trie node above the leaf rehashed), with the honest proof, or with an
// honest balance and one proof node altered — or 1 in 5 blocks' headers by
// one field (keeping the true hash) deliver 0 wrong answers and are
// quarantined at their first lie (the lie's part goes to a provider; the
// evidence is on the stream).
func TestProvedLiarsDeliverNothing(t *testing.T) {
	e := startMetered(t, provedOpts())
	acct, _ := e.net.Manifest.Account("deployer")
	// At latest: pinned to the providers' head, where the liar's proof is
	// asked at the block it lied about.
	balance := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + acct.Address + `","latest"]}`
	block := `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]}`
	for _, c := range []struct {
		name   string
		id     string
		shape  faultproxy.Shape
		method string
		by     string
	}{
		{"consistent altered proof", "NODE-EU-PROOFALT", faultproxy.ShapeProvedValue, "eth_getBalance", "eth_getProof"},
		{"honest proof, altered value", "NODE-EU-PROOFVAL", faultproxy.ShapeValue, "eth_getBalance", "eth_getProof"},
		{"one proof node altered", "NODE-EU-PROOFNOD", faultproxy.ShapeProofNode, "eth_getBalance", "eth_getProof"},
		{"one header field altered", "NODE-EU-HEADERFD", faultproxy.ShapeHeaderField, "eth_getBlockByNumber", "header hash"},
	} {
		body := balance
		if c.method == "eth_getBlockByNumber" {
			body = block
		}
		liar := e.provedLiar(t, c.id, func(p *faultproxy.Proxy) { p.SetShape(c.shape) })
		got := e.askUntilQuarantined(t, c.id, liar, 30*time.Second, func() (answer, bool) {
			a := e.rpc(t, body)
			return a, faultproxy.IsLie(c.method, a.body, nil)
		})
		t.Logf("%s: quarantined after %d calls (%d served by the node); it told %d lies in %d answers; %d wrong answers delivered",
			c.name, got.calls, got.byNode, liar.Lies.Load(), liar.Answered.Load(), got.delivered)
		if got.delivered != 0 {
			t.Errorf("%s: %d wrong balances delivered, want 0", c.name, got.delivered)
		}
		if liar.Lies.Load() != 1 {
			t.Errorf("%s: quarantined after %d lies, want at its first", c.name, liar.Lies.Load())
		}
		ev := waitEvidence(t, e, c.id)
		if ev.Method != c.method || ev.TrustedBy != c.by {
			t.Errorf("%s: evidence about %s by %s, want %s by %s", c.name, ev.Method, ev.TrustedBy, c.method, c.by)
		}
		liar.SetMode(faultproxy.Pass)
	}
	counts := e.provedCounts(t)
	if b := counts["eth_getBalance"]; b["lie"] != 3 || b["proved"] == 0 {
		t.Errorf("eth_getBalance proofs: %v, want 3 lies and some proved", b)
	}
	if b := counts["eth_getBlockByNumber"]; b["lie"] != 1 || b["proved"] == 0 {
		t.Errorf("eth_getBlockByNumber proofs: %v, want 1 lie and some proved", b)
	}
}

// TestProvedBlockBodyIsStillJudged (found in review): a block's
// proof is its header only. A node that answers blocks with their true
// header (the hash rehashes) and a made-up transaction in the body must
// still be judged by sampling, as docs/trust.md says — the header's proof
// must not mark the whole answer verified. It is caught (quarantined, the
// evidence about eth_getBlockByNumber) after at most a few lies: a fresh
// node is checked at rate 1.
func TestProvedBlockBodyIsStillJudged(t *testing.T) {
	e := startMetered(t, provedOpts())
	const nodeID = "NODE-EU-BODYLIAR"
	liar := e.provedLiar(t, nodeID, func(p *faultproxy.Proxy) { p.SetShape(faultproxy.ShapeBlockBody) })
	block := `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]}`
	before := e.provedCounts(t)["eth_getBlockByNumber"]
	// A node adding a made-up transaction to true headers, caught within 60 s.
	got := e.askUntilQuarantined(t, nodeID, liar, 60*time.Second, func() (answer, bool) {
		a := e.rpc(t, block)
		return a, faultproxy.IsLie("eth_getBlockByNumber", a.body, nil)
	})
	after := e.provedCounts(t)["eth_getBlockByNumber"]
	t.Logf("quarantined after %d calls; %d lies told, %d delivered; headers proved %d", got.calls, liar.Lies.Load(), got.delivered,
		after["proved"]-before["proved"])
	if after["proved"]-before["proved"] == 0 {
		t.Errorf("no block header of the node was proved: the test did not exercise the proof")
	}
	if got.delivered > 3 {
		t.Errorf("%d blocks with a made-up transaction delivered, want at most 3 (sampled at rate 1)", got.delivered)
	}
	if ev := waitEvidence(t, e, nodeID); ev.Method != "eth_getBlockByNumber" {
		t.Errorf("evidence about %s, want eth_getBlockByNumber", ev.Method)
	}
}

// TestProvedProofSizeIsBounded (found in review): a node whose
// eth_getProof answers are padded with 2,000 junk trie nodes (about 2 MiB,
// a proof that still verifies: VerifyProof only follows the path) must not
// make the gateway decode and hash them for every balance. Its proofs are
// not read (the counter says rerouted, never proved), the caller gets the
// true balance from a provider, and the node is not convicted (its value
// was true).
func TestProvedProofSizeIsBounded(t *testing.T) {
	e := startMetered(t, provedOpts())
	const nodeID = "NODE-EU-FATPROOF"
	// LieSometimes in this shape pads every proof and tells no lie.
	node := e.provedLiar(t, nodeID, func(p *faultproxy.Proxy) { p.SetShape(faultproxy.ShapeProofPadded) })
	acct, _ := e.net.Manifest.Account("deployer")
	balance := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + acct.Address + `","latest"]}`
	before := e.provedCounts(t)["eth_getBalance"]
	proofsBefore := node.Calls("eth_getProof")
	deadline := time.Now().Add(60 * time.Second)
	for node.Calls("eth_getProof")-proofsBefore < 5 {
		a := e.rpc(t, balance)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) || faultproxy.IsLie("eth_getBalance", a.body, nil) {
			t.Fatalf("balance: %d %s", a.status, a.body)
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			t.Fatalf("a balance proved by a padded proof was delivered as the node's: %s", a.body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node was asked %d proofs in 60 s", node.Calls("eth_getProof")-proofsBefore)
		}
	}
	after := e.provedCounts(t)["eth_getBalance"]
	asked := node.Calls("eth_getProof") - proofsBefore
	t.Logf("%d padded proofs: %d proved, %d rerouted", asked, after["proved"]-before["proved"], after["rerouted"]-before["rerouted"])
	if d := after["proved"] - before["proved"]; d != 0 {
		t.Errorf("%d balances proved by padded proofs (read whole): want 0", d)
	}
	if d := after["rerouted"] - before["rerouted"]; d < asked {
		t.Errorf("%d of %d padded proofs rerouted, want each", d, asked)
	}
	if st := e.upstreamState(t, nodeID); st["quarantined"] != false {
		t.Fatalf("a node whose values were true was convicted for padding its proofs: %v", st)
	}
}

// TestProvedEmptyStorageOfOtherClients (found in review): honest
// nodes of other clients spell the proof of an empty storage trie their own
// way — reth proves it with the empty trie's node ["0x80"], Besu gives a
// missing account no storageProof entry — and must never be convicted for
// it: an account whose proven storage root is the empty trie's has every
// slot zero, whatever storage proof comes with it. eth_getStorageAt of an
// account with no storage (the deployer) and of one that does not exist
// is proved for each, and neither node is quarantined.
func TestProvedEmptyStorageOfOtherClients(t *testing.T) {
	e := startMetered(t, provedOpts())
	acct, _ := e.net.Manifest.Account("deployer")
	for _, c := range []struct {
		id      string
		dialect int32
	}{{"NODE-EU-RETHLIKE", faultproxy.DialectReth}, {"NODE-EU-BESULIKE", faultproxy.DialectBesu}} {
		node := faultproxy.New(e.net.Manifest.Polygon.RPCURL)
		t.Cleanup(node.Close)
		node.ProofDialect.Store(c.dialect)
		e.registerNode(t, c.id, node.URL())
		e.waitForNodeOn(t, c.id, func() string { return headNumber })
		before := e.provedCounts(t)["eth_getStorageAt"]
		served := map[string]int{}
		deadline := time.Now().Add(60 * time.Second)
		for i := 0; served[acct.Address] < 3 || served[missingAccount] < 3; i++ {
			who := acct.Address
			if i%2 == 1 {
				who = missingAccount
			}
			a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_getStorageAt","params":["`+who+`","0x0","latest"]}`)
			if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result":"0x0000000000000000000000000000000000000000000000000000000000000000"`) {
				t.Fatalf("%s: storage of %s: %d %s", c.id, who, a.status, a.body)
			}
			if a.header.Get("X-Tollgate-Upstream") == c.id {
				served[who]++
			}
			if st := e.upstreamState(t, c.id); st["quarantined"] != false {
				t.Fatalf("%s: an honest node was convicted for its client's empty storage proof: %v", c.id, st)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: served %v in 60 s", c.id, served)
			}
		}
		after := e.provedCounts(t)["eth_getStorageAt"]
		if d := after["proved"] - before["proved"]; d != served[acct.Address]+served[missingAccount] {
			t.Errorf("%s: %d storage reads proved, the node served %v", c.id, d, served)
		}
		if d := after["lie"] - before["lie"]; d != 0 {
			t.Errorf("%s: %d honest storage proofs judged lies", c.id, d)
		}
		node.SetMode(faultproxy.Fail502) // out of the way of the next client's node
	}
}

// missingAccount is an address no dev chain account or contract has.
const missingAccount = "0x00000000000000000000000000000000000e4e4e"

// TestProvedBlockWithAMemberNamedTwice (found in review): a node
// that writes a block's "miner" twice — a made-up one first, the true one
// last — passes a header check that reads JSON as Go does (the last member
// wins) and a sampled comparison alike, while a caller whose decoder takes
// the first member or refuses duplicates (serde, so alloy) gets the lie or
// an error. Such an answer is never delivered: the node is convicted at
// its first.
func TestProvedBlockWithAMemberNamedTwice(t *testing.T) {
	e := startMetered(t, provedOpts())
	const nodeID = "NODE-EU-NAMEDTWO"
	liar := e.provedLiar(t, nodeID, func(p *faultproxy.Proxy) { p.SetShape(faultproxy.ShapeNamedTwice) })
	block := `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]}`
	// A node writing a block's miner twice, caught within 60 s.
	got := e.askUntilQuarantined(t, nodeID, liar, 60*time.Second, func() (answer, bool) {
		a := e.rpc(t, block)
		return a, strings.Count(string(a.body), `"miner"`) > 1
	})
	t.Logf("quarantined after %d calls; %d lies told, %d delivered", got.calls, liar.Lies.Load(), got.delivered)
	if got.delivered != 0 {
		t.Errorf("%d blocks with a member named twice delivered, want 0", got.delivered)
	}
	if liar.Lies.Load() != 1 {
		t.Errorf("quarantined after %d lies, want at its first", liar.Lies.Load())
	}
}
