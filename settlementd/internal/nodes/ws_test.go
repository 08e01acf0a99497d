package nodes

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// TestRegisterWSURL: a node may register a ws_url; it is checked (scheme,
// address policy, eth_chainId over WebSocket), stored, shown, and published in
// the registry record the gateway builds its pools from — and kept there
// when the prober rewrites the record.
func TestRegisterWSURL(t *testing.T) {
	port, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	chain, err := simchain.New(simchain.Config{ChainID: 137, HTTPPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	ctx := context.Background()
	wallet := "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"

	strict, _ := service(t, false)
	if _, _, err := strict.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: "http://93.184.215.14", WSURL: chain.WSURL(), ChainIDs: []uint64{137}}); code(err) != "private_address" {
		t.Fatalf("loopback ws_url under the strict policy: %v, want private_address", err)
	}

	s, prefix := service(t, true)
	for _, c := range []struct{ ws, want string }{
		{"http://127.0.0.1:1", "invalid_ws_url"},
		{"ws://user:pw@127.0.0.1:1", "invalid_ws_url"},
		{"ws://no-such-host.invalid", "unresolvable_host"},
		{chain.WSURL() + "/nothing-here", "ws_probe_failed"}, // geth serves ws on / only
	} {
		_, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: chain.HTTPURL(), WSURL: c.ws, ChainIDs: []uint64{137}})
		if code(err) != c.want {
			t.Errorf("ws_url %s: %v, want %q", c.ws, err, c.want)
		}
	}
	plain := rpcServerURL(t)
	if _, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: plain, WSURL: "ws" + plain[4:], ChainIDs: []uint64{137}}); code(err) != "ws_probe_failed" {
		t.Fatalf("ws_url without a WebSocket: %v, want ws_probe_failed", err)
	}
	if _, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: chain.HTTPURL(), WSURL: chain.WSURL(), ChainIDs: []uint64{8453}}); code(err) != "chain_mismatch" {
		t.Fatalf("declared chain 8453: %v, want chain_mismatch", err)
	}

	n, _, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: chain.HTTPURL(), WSURL: chain.WSURL(), ChainIDs: []uint64{137}})
	if err != nil || n.WSURL != chain.WSURL() {
		t.Fatalf("register with ws_url: %+v %v", n, err)
	}
	record := func() *registry.Node {
		v, err := s.cfg.Redis.HGet(ctx, prefix+registry.NodesKey, n.NodeID).Result()
		if err != nil {
			t.Fatal(err)
		}
		rec, err := registry.Decode(v)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if rec := record(); rec.WSURL != chain.WSURL() {
		t.Fatalf("registry record ws_url %q", rec.WSURL)
	}
	if err := s.Prober().Run(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := record(); rec.WSURL != chain.WSURL() {
		t.Fatalf("after a probe round the record's ws_url is %q", rec.WSURL)
	}
	// A WebSocket endpoint that stops answering is left out of the record
	// (no subscriptions are sent there) while HTTP keeps the node online;
	// its operator sees why. Once it answers again it is published again.
	wsPort, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	wsChain, err := simchain.New(simchain.Config{ChainID: 137, HTTPPort: wsPort})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err = s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: chain.HTTPURL(), WSURL: wsChain.WSURL(), ChainIDs: []uint64{137}}); err != nil {
		t.Fatal(err)
	}
	wsChain.Close()
	if err := s.Prober().Run(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := record(); rec.WSURL != "" || rec.Status != "online" {
		t.Fatalf("after its WebSocket endpoint died the record is %+v", rec)
	}
	list, err := s.ListFor(ctx, wallet)
	if err != nil || len(list.Nodes) == 0 || list.Nodes[0].WSURL != wsChain.WSURL() || list.Nodes[0].Status != "online" ||
		list.Nodes[0].LastProbeError == nil || !strings.HasPrefix(*list.Nodes[0].LastProbeError, "ws_url: ") || list.Nodes[0].ProbeFailures != 0 {
		t.Fatalf("GET /api/nodes after a failed ws probe: %+v %v", list.Nodes, err)
	}
	if n, _, err = s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: chain.HTTPURL(), WSURL: chain.WSURL(), ChainIDs: []uint64{137}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Prober().Run(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := record(); rec.WSURL != chain.WSURL() {
		t.Fatalf("a working ws_url again: record %+v", rec)
	}

	list, err = s.ListFor(ctx, wallet)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Nodes) == 0 || list.Nodes[0].WSURL != chain.WSURL() {
		t.Fatalf("GET /api/nodes shows %+v", list.Nodes)
	}
	// Registering again without ws_url removes it.
	if n, _, err = s.Upsert(ctx, wallet, RegisterRequest{Region: "eu", RPCURL: chain.HTTPURL(), ChainIDs: []uint64{137}}); err != nil || n.WSURL != "" {
		t.Fatalf("re-register without ws_url: %+v %v", n, err)
	}
	if rec := record(); rec.WSURL != "" {
		t.Fatalf("registry record keeps ws_url %q", rec.WSURL)
	}
}

func rpcServerURL(t *testing.T) string {
	srv, _ := rpcServer(t)
	return srv.URL
}
