package nodes

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// rpcServer answers eth_chainId with chain 137 (0x89) until broken.
func rpcServer(t *testing.T) (*httptest.Server, *atomic.Bool) {
	var broken atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x89"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &broken
}

func service(t *testing.T, allowPrivate bool) (*Service, string) {
	t.Helper()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	a, err := auth.New(auth.Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32)), Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Pool: pool, Redis: rdb, Prefix: prefix, Auth: a, AllowPrivate: allowPrivate, MaxFailures: 3})
	if err != nil {
		t.Fatal(err)
	}
	return s, prefix
}

func code(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.code
	}
	return ""
}

// Without the dev flag, URLs that reach loopback, private or link-local
// addresses are refused before any probe.
func TestRegisterRefusesPrivateTargets(t *testing.T) {
	s, _ := service(t, false)
	srv, _ := rpcServer(t)
	for _, u := range []string{srv.URL, "http://10.1.2.3:8545", "http://192.168.1.10", "http://169.254.169.254/latest", "http://[::1]:8545",
		"http://localhost:8545", "http://0.0.0.0:8545"} {
		_, _, err := s.Upsert(context.Background(), "0xabc", RegisterRequest{Region: "eu", RPCURL: u, ChainIDs: []uint64{137}})
		if code(err) != "private_address" {
			t.Errorf("%s: %v, want private_address", u, err)
		}
	}
	if _, _, err := s.Upsert(context.Background(), "0xabc", RegisterRequest{Region: "eu", RPCURL: "http://no-such-host.invalid", ChainIDs: []uint64{137}}); code(err) != "unresolvable_host" {
		t.Errorf("unresolvable host: %v", err)
	}
}

// A node that fails MaxFailures probes in a row goes offline in Postgres and
// in the gateway's registry, and comes back online after one success.
func TestProberMarksOfflineAndOnline(t *testing.T) {
	s, prefix := service(t, true)
	srv, broken := rpcServer(t)
	ctx := context.Background()
	wallet := "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	n, created, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "ap-south", RPCURL: srv.URL, ChainIDs: []uint64{137, 137}, Label: "x"})
	if err != nil || !created || !registry.ValidID(n.NodeID) || !strings.HasPrefix(n.NodeID, "NODE-AP-SOUTH-") || len(n.ChainIDs) != 1 {
		t.Fatalf("register: %+v %v %v", n, created, err)
	}
	again, created, err := s.Upsert(ctx, wallet, RegisterRequest{Region: "ap-south", RPCURL: srv.URL, ChainIDs: []uint64{137}, Label: "y"})
	if err != nil || created || again.NodeID != n.NodeID {
		t.Fatalf("re-register: %+v %v %v", again, created, err)
	}
	if _, _, err := s.Upsert(ctx, "0x0000000000000000000000000000000000000001", RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}}); code(err) != "url_registered" {
		t.Fatalf("another wallet: %v", err)
	}
	status := func() (string, string) {
		var pg string
		if err := s.cfg.Pool.QueryRow(ctx, `SELECT status FROM nodes WHERE node_id = $1`, n.NodeID).Scan(&pg); err != nil {
			t.Fatal(err)
		}
		v, err := s.cfg.Redis.HGet(ctx, prefix+registry.NodesKey, n.NodeID).Result()
		if err != nil {
			t.Fatal(err)
		}
		rec, err := registry.Decode(v)
		if err != nil {
			t.Fatal(err)
		}
		return pg, rec.Status
	}
	p := s.Prober()
	broken.Store(true)
	for i := 1; i <= 3; i++ {
		if err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		pg, rd := status()
		want := "online"
		if i == 3 {
			want = "offline"
		}
		if pg != want || rd != want {
			t.Fatalf("after %d failed probes: postgres %s, redis %s, want %s", i, pg, rd, want)
		}
	}
	broken.Store(false)
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if pg, rd := status(); pg != "online" || rd != "online" {
		t.Fatalf("after a good probe: %s %s", pg, rd)
	}
}
