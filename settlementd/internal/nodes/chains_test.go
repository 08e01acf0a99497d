package nodes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/chains"
)

// TestRegisterFollowsTheChainTable: a node may register only chains the
// table in force has; a table swapped in (settlementd's SIGHUP) takes
// effect at the next registration, without a restart.
func TestRegisterFollowsTheChainTable(t *testing.T) {
	s, _ := service(t, true)
	live := chains.NewLive(nil)
	s.cfg.Chains = live
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x7a69"}`)) // 31337
	}))
	t.Cleanup(srv.Close)
	req := RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{31337}}
	_, _, err := s.Upsert(context.Background(), "0xabc", req)
	if code(err) != "unsupported_chain" || !strings.Contains(err.Error(), "chain 31337 is not supported (configured: 137, 1, 42161, 8453, 80002)") {
		t.Fatalf("31337 with the built-in table: %v", err)
	}
	f, _ := chains.ParseFinality("2")
	fin := chains.FinalitySpec(f)
	tb, err := chains.Build([]chains.Spec{{ID: 31337, Name: "devchain", BlockTime: chains.Duration(time.Second), Finality: &fin}}, "")
	if err != nil {
		t.Fatal(err)
	}
	live.Store(tb)
	n, created, err := s.Upsert(context.Background(), "0xabc", req)
	if err != nil || !created || len(n.ChainIDs) != 1 || n.ChainIDs[0] != 31337 {
		t.Fatalf("31337 once the table has it: %+v %v %v", n, created, err)
	}
}
