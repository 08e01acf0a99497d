package verify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// balanceProvider is a provider double answering every eth_getBalance
// (one or a batch) 0x10, counting the requests it gets.
func balanceProvider(t *testing.T, calls *atomic.Int64) *httptest.Server {
	t.Helper()
	prov := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		calls.Add(1)
		parsed, rej := jsonrpc.Parse(b, jsonrpc.Options{})
		if rej != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		var out []string
		for _, c := range parsed.Items {
			out = append(out, `{"jsonrpc":"2.0","id":`+string(c.ID)+`,"result":"0x10"}`)
		}
		w.Header().Set("Content-Type", "application/json")
		if parsed.Batch {
			io.WriteString(w, "["+strings.Join(out, ",")+"]")
		} else {
			io.WriteString(w, out[0])
		}
	}))
	t.Cleanup(prov.Close)
	return prov
}

// nodePool is a pool on chainID of the provider at url and one node.
func nodePool(t *testing.T, chainID uint64, url, node string) *upstream.Pool {
	t.Helper()
	pool, err := upstream.New(upstream.Config{ChainID: chainID, ProbeInterval: -1, Trust: upstream.TrustConfig{Off: true},
		Providers: []upstream.Upstream{{Name: "prov", URL: url}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Destruct() })
	if err := pool.SetNodes([]upstream.Upstream{{Name: node, URL: "http://127.0.0.1:1", NodeID: "NODE-" + node}}); err != nil {
		t.Fatal(err)
	}
	return pool
}

// TestProviderCapIsFairPerNode (found in review): the cap on the checks'
// provider calls is one bucket for the whole gateway, so a flood of one
// node's checks must not use it up for the others. Here a caller floods a
// chain whose only node is checked at rate 1 (about 500 sampled answers a
// second, far over the cap of 40), while a node on another chain — one
// the flood cannot reach by routing — offers 10 a second, under its fair
// share of the cap (half of it: two nodes are checked). With one bucket
// for all, the quiet node's checks were dropped as often as the flooded
// one's (d ≈ 1 − 40/510 ≈ 0.9: its lies were checked at a tenth of its
// rate, and its traffic fell for drops it did not cause). Each node is
// owed its share of the cap: the quiet node loses no check, the flooded
// one is dropped, and the provider still sees no more than the cap (rate
// × seconds + the bucket, once more for the nodes' own shares).
func TestProviderCapIsFairPerNode(t *testing.T) {
	var providerCalls atomic.Int64
	prov := balanceProvider(t, &providerCalls)
	flooded, quiet := nodePool(t, 137, prov.URL, "flooded"), nodePool(t, 1, prov.URL, "quiet")
	const qps, burst = 40, 10
	v := New(Config{Rate: 1, FirstAnswers: 0, ProviderQPS: qps, ProviderBurst: burst})
	defer v.Close()

	call := jsonrpc.Item{Method: "eth_getBalance", Params: json.RawMessage(`["0x00000000000000000000000000000000000000e1","0x5"]`), ID: json.RawMessage("1")}
	job := func(pool *upstream.Pool, chain uint64, node string) Job {
		return Job{Pool: pool, ChainID: chain, Node: upstream.Ref{Name: node, Kind: upstream.KindNode},
			Calls: []jsonrpc.Item{call}, Replies: []jsonrpc.Reply{reply(`"0x10"`)}, Pins: []Pin{{Judge: evm.JudgeFinal, Block: 5}}}
	}
	began := time.Now()
	tick := time.NewTicker(2 * time.Millisecond) // pacing the flood (about 500 answers a second), not waiting on a condition
	defer tick.Stop()
	lastQuiet := began
	for time.Since(began) < 3*time.Second {
		<-tick.C
		v.Offer(job(flooded, 137, "flooded"))
		if time.Since(lastQuiet) >= 100*time.Millisecond { // the quiet node: 10 a second
			lastQuiet = time.Now()
			v.Offer(job(quiet, 1, "quiet"))
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	var fv, qv upstream.CheckView
	for {
		fv, _ = flooded.Checks("flooded")
		qv, _ = quiet.Checks("quiet")
		drained := func(c upstream.CheckView) bool { return c.Checked+c.Dropped+c.Failed == c.Offered }
		if drained(fv) && drained(qv) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checks never drained: flooded %+v, quiet %+v", fv, qv)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition under a deadline
	}
	elapsed := time.Since(began).Seconds()
	t.Logf("flooded: offered %d, checked %d, dropped by the cap %d, factor %.3f; quiet: offered %d, checked %d, dropped by the cap %d, factor %.3f; provider calls %d in %.1f s",
		fv.Offered, fv.Checked, fv.DroppedCap, fv.CapacityFactor, qv.Offered, qv.Checked, qv.DroppedCap, qv.CapacityFactor, providerCalls.Load(), elapsed)
	if qv.Offered < 20 || fv.Offered < 500 {
		t.Fatalf("the test offered too little: flooded %+v, quiet %+v", fv, qv)
	}
	if qv.Dropped != 0 || qv.Checked != qv.Offered || qv.CapacityFactor != 1 {
		t.Fatalf("the flood on another chain's node dropped the quiet node's checks: %+v (d = %.2f)", qv, float64(qv.Dropped)/float64(qv.Offered))
	}
	if fv.DroppedCap == 0 || fv.CapacityFactor >= 1 {
		t.Fatalf("the flooded node's checks over the cap were not dropped: %+v", fv)
	}
	if limit := int64(qps*elapsed) + 2*burst; providerCalls.Load() > limit {
		t.Fatalf("the provider saw %d check calls in %.1f s: more than %d (cap %d/s, burst %d)", providerCalls.Load(), elapsed, limit, qps, burst)
	}
}

// TestProviderCapDropsAndCounts: with a low cap on the checks' provider
// calls, a node checked at rate 1 under a flood gets its checks over the
// cap dropped and counted as such (dropped_cap, in the node's accounting
// and the verifications counter), its capacity factor falls, and the
// provider sees no more check calls than the bucket allows (rate × seconds
// + burst), whatever the worker count.
func TestProviderCapDropsAndCounts(t *testing.T) {
	var providerCalls atomic.Int64
	prov := balanceProvider(t, &providerCalls)
	pool := nodePool(t, 137, prov.URL, "n")
	const qps, burst = 20, 5
	v := New(Config{Rate: 1, FirstAnswers: 0, ProviderQPS: qps, ProviderBurst: burst})
	defer v.Close()
	capBefore := testutil.ToFloat64(metrics.Verifications.WithLabelValues("dropped_cap"))

	call := jsonrpc.Item{Method: "eth_getBalance", Params: json.RawMessage(`["0x00000000000000000000000000000000000000e1","0x5"]`), ID: json.RawMessage("1")}
	began := time.Now()
	tick := time.NewTicker(2 * time.Millisecond) // pacing the flood (about 500 answers a second), not waiting on a condition
	defer tick.Stop()
	for time.Since(began) < 2500*time.Millisecond {
		<-tick.C
		v.Offer(Job{Pool: pool, ChainID: 137, Node: upstream.Ref{Name: "n", Kind: upstream.KindNode},
			Calls: []jsonrpc.Item{call}, Replies: []jsonrpc.Reply{reply(`"0x10"`)}, Pins: []Pin{{Judge: evm.JudgeFinal, Block: 5}}})
	}
	// Let the queue drain: every offered check ends checked or dropped.
	deadline := time.Now().Add(30 * time.Second)
	var cv upstream.CheckView
	for {
		cv, _ = pool.Checks("n")
		if cv.Checked+cv.Dropped+cv.Failed == cv.Offered || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling a condition under a deadline
	}
	elapsed := time.Since(began).Seconds()
	if cv.Checked+cv.Dropped+cv.Failed != cv.Offered {
		t.Fatalf("checks never drained: %+v", cv)
	}
	if cv.DroppedCap == 0 || cv.DroppedCap > cv.Dropped {
		t.Fatalf("no check dropped by the cap, or more than dropped: %+v", cv)
	}
	if got := testutil.ToFloat64(metrics.Verifications.WithLabelValues("dropped_cap")) - capBefore; got != float64(cv.DroppedCap) {
		t.Fatalf("the counter says %v dropped_cap, the node's accounting %d", got, cv.DroppedCap)
	}
	if limit := int64(qps*elapsed) + burst; providerCalls.Load() > limit {
		t.Fatalf("the provider saw %d check calls in %.1f s: more than %d (cap %d/s, burst %d)", providerCalls.Load(), elapsed, limit, qps, burst)
	}
	if providerCalls.Load() == 0 || cv.Checked == 0 {
		t.Fatalf("no check reached the provider: %+v", cv)
	}
	if cv.CapacityFactor >= 1 {
		t.Fatalf("the capacity factor did not fall: %+v", cv)
	}
	t.Logf("offered %d, checked %d, dropped %d (%d by the cap), provider calls %d in %.1f s, factor %.3f",
		cv.Offered, cv.Checked, cv.Dropped, cv.DroppedCap, providerCalls.Load(), elapsed, cv.CapacityFactor)
}
