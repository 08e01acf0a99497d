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

// TestProviderCapDropsAndCounts: with a low cap on the checks' provider
// calls, a node checked at rate 1 under a flood gets its checks over the
// cap dropped and counted as such (dropped_cap, in the node's accounting
// and the verifications counter), its capacity factor falls, and the
// provider sees no more check calls than the bucket allows (rate × seconds
// + burst), whatever the worker count.
func TestProviderCapDropsAndCounts(t *testing.T) {
	var providerCalls atomic.Int64
	prov := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		providerCalls.Add(1)
		// A batch of eth_getBalance calls or one: each answered 0x10.
		calls, rej := jsonrpc.Parse(b, jsonrpc.Options{})
		if rej != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		var out []string
		for _, c := range calls.Items {
			out = append(out, `{"jsonrpc":"2.0","id":`+string(c.ID)+`,"result":"0x10"}`)
		}
		w.Header().Set("Content-Type", "application/json")
		if calls.Batch {
			io.WriteString(w, "["+strings.Join(out, ",")+"]")
		} else {
			io.WriteString(w, out[0])
		}
	}))
	defer prov.Close()
	pool, err := upstream.New(upstream.Config{ChainID: 137, ProbeInterval: -1, Trust: upstream.TrustConfig{Off: true},
		Providers: []upstream.Upstream{{Name: "prov", URL: prov.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Destruct()
	if err := pool.SetNodes([]upstream.Upstream{{Name: "n", URL: "http://127.0.0.1:1", NodeID: "NODE-N"}}); err != nil {
		t.Fatal(err)
	}
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
