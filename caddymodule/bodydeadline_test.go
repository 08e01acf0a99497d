package caddymodule_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyDeadlineEndsWithTheBody: body_timeout bounds the arrival of the
// body, not the whole call. A deadline left on the connection after the body
// has arrived would fire in net/http's background read and cancel the
// request's context, so a call whose upstream answers after body_timeout
// (here 200 ms of body_timeout against 300 ms of upstream latency) would be
// lost although its caller did nothing wrong.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	e := startMeteredWith(t, meterOpts{free: 100}, slowServers, "body_timeout 200ms")
	e.alpha.SetDelay(300 * time.Millisecond)
	e.beta.SetDelay(300 * time.Millisecond)
	for i := range 3 {
		began := time.Now()
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000a`+string(rune('1'+i))+`","latest"]}`)
		took := time.Since(began)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) {
			t.Fatalf("call %d after %v: %d %s", i, took, a.status, a.body)
		}
		if took < 300*time.Millisecond {
			t.Fatalf("call %d took %v: the upstream's latency did not apply, the test proves nothing", i, took)
		}
	}
}
