package core

import (
	"context"
	"encoding/json"
	"testing"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/relay"
)

// TestServeWithoutHTTP serves a batch through the core as a door would,
// with no HTTP request anywhere: the method table's own answers come back
// at the caller's positions with the caller's ids, nothing is forwarded or
// booked (metering off), and a call the table denies is refused in place.
func TestServeWithoutHTTP(t *testing.T) {
	methods, err := evm.NewTable(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &Core{Relay: relay.New(&config.Upstreams{}, nil, nil, zap.NewNop()), Timeout: 1e9}
	cs := &Chain{ID: 137, Methods: methods, Metrics: NewMetrics(137)}
	msg, rej := jsonrpc.Parse([]byte(`[{"jsonrpc":"2.0","id":"a","method":"eth_sign","params":[]},`+
		`{"jsonrpc":"2.0","id":7,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"net_version"},`+
		`{"jsonrpc":"2.0","id":8,"method":"net_version","params":[]}]`), jsonrpc.Options{MaxBatch: 10})
	if rej != nil {
		t.Fatal(rej.Response.Error.Message)
	}
	for _, door := range []Door{POST, Socket, MCP} {
		o := c.Serve(context.Background(), Request{Chain: cs, Message: msg, Door: door})
		if o.Refused != nil || o.Unavailable || o.Status != 200 || o.Label != "ok" || o.Payer != "" || o.Charged != 0 {
			t.Fatalf("door %d: outcome %+v", door, o)
		}
		var got []struct {
			ID     json.RawMessage     `json:"id"`
			Result json.RawMessage     `json:"result"`
			Error  *struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal(o.Body, &got); err != nil {
			t.Fatalf("door %d: body %s: %v", door, o.Body, err)
		}
		// The notification (no id) is not answered.
		if len(got) != 3 || string(got[0].ID) != `"a"` || got[0].Error == nil || got[0].Error.Code != jsonrpc.CodeMethodNotFound ||
			string(got[1].ID) != "7" || string(got[1].Result) != `"0x89"` || string(got[2].ID) != "8" || string(got[2].Result) != `"137"` {
			t.Fatalf("door %d: body %s", door, o.Body)
		}
	}
}
