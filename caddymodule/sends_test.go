package caddymodule_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
)

// TestSendsAreNeverReplayed: the preferred upstream receives every call and
// then loses the answer (the connection is cut), the most ambiguous failure
// there is. A read is asked again of the other upstream and served; a send —
// eth_sendRawTransaction and eth_sendRawTransactionSync alike — reaches
// exactly one upstream, once, and the caller is told it failed and not
// charged, so one transaction never becomes two broadcasts.
func TestSendsAreNeverReplayed(t *testing.T) {
	e := startMetered(t, meterOpts{free: 1000})
	e.beta.SetDelay(40 * time.Millisecond) // alpha is the faster, picked first
	e.alpha.SetMode(faultproxy.CutCalls)
	sends := func() int {
		return e.alpha.Calls("eth_sendRawTransaction") + e.beta.Calls("eth_sendRawTransaction") +
			e.alpha.Calls("eth_sendRawTransactionSync") + e.beta.Calls("eth_sendRawTransactionSync")
	}

	// A read is replayed on beta after alpha lost its answer. Which
	// upstream is asked first follows the probes' latency, so ask until a
	// read meets alpha first (beta's delay makes that soon).
	reads, replayed := 0, false
	for deadline := time.Now().Add(10 * time.Second); !replayed; reads++ {
		alphaBefore, betaBefore := e.alpha.Calls("eth_getBalance"), e.beta.Calls("eth_getBalance")
		if m := e.rpc(t, getBalance).json(t); m["result"] == nil {
			t.Fatalf("a read with the first upstream cut: %v", m)
		}
		if e.alpha.Calls("eth_getBalance") > alphaBefore {
			if e.beta.Calls("eth_getBalance") == betaBefore {
				t.Fatal("a read lost on alpha was answered without asking beta")
			}
			replayed = true
		}
		if !replayed && time.Now().After(deadline) {
			t.Fatalf("no read went to alpha first in %d reads", reads+1)
		}
	}

	sent, cutOnAlpha := 0, 0
	for deadline := time.Now().Add(10 * time.Second); cutOnAlpha < 3; sent++ {
		method := "eth_sendRawTransaction"
		if sent%2 == 1 {
			method = "eth_sendRawTransactionSync"
		}
		before, alpha := sends(), e.alpha.Calls(method)
		a := e.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":["0x02"]}`, sent, method))
		if n := sends() - before; n != 1 {
			t.Fatalf("%s reached upstreams %d times, want exactly once", method, n)
		}
		if e.alpha.Calls(method) > alpha {
			cutOnAlpha++
			// Cut after alpha got it: an error, and no charge for it.
			if a.status != http.StatusServiceUnavailable || a.header.Get("X-Tollgate-Free-Remaining") == "" {
				t.Fatalf("%s lost on alpha: %d %s (free left %q)", method, a.status, a.body, a.header.Get("X-Tollgate-Free-Remaining"))
			}
		}
		if cutOnAlpha < 3 && time.Now().After(deadline) {
			t.Fatalf("only %d of %d sends went to the cut upstream first: the test proves too little", cutOnAlpha, sent+1)
		}
	}
	// Nothing was charged for the lost sends: the free calls left are 1000
	// minus the reads, the sends beta answered and this call.
	a := e.rpc(t, blockNumber)
	if want := fmt.Sprint(1000 - reads - (sent - cutOnAlpha) - 1); a.header.Get("X-Tollgate-Free-Remaining") != want {
		t.Fatalf("free calls left %s, want %s (%d sends lost on alpha)", a.header.Get("X-Tollgate-Free-Remaining"), want, cutOnAlpha)
	}
}
