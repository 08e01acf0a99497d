package nodes

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"

	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Deregistration on real Postgres and Redis: only the owner may, the record
// leaves the registry in the same step, a second call answers the same node
// with the same time, the row is final (the database refuses to bring it
// back), the prober neither re-probes nor republishes it and removes a
// record a lost Redis write left behind, and the URL is free again: the
// same or another wallet registering it gets a new node id.
func TestDeregister(t *testing.T) {
	s, prefix := service(t, true)
	srv, _ := rpcServer(t)
	ctx := context.Background()
	const owner, other = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "0x0000000000000000000000000000000000000001"
	n, _, err := s.Upsert(ctx, owner, RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}})
	if err != nil {
		t.Fatal(err)
	}
	record := func(id string) bool {
		t.Helper()
		_, err := s.cfg.Redis.HGet(ctx, prefix+registry.NodesKey, id).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		return err == nil
	}
	if !record(n.NodeID) {
		t.Fatal("no registry record after registration")
	}
	for _, c := range []struct{ wallet, id, code string }{
		{other, n.NodeID, "not_node_owner"},
		{owner, "NODE-EU-AAAAAAAA", "node_not_found"},
		{owner, "not-a-node", "node_not_found"},
	} {
		if _, _, err := s.Deregister(ctx, c.wallet, c.id); code(err) != c.code {
			t.Errorf("Deregister(%s, %s): %v, want %s", c.wallet, c.id, err, c.code)
		}
	}
	if !record(n.NodeID) {
		t.Fatal("a refused deregistration removed the record")
	}
	m, changed, err := s.Deregister(ctx, owner, n.NodeID)
	if err != nil || !changed || m.Status != StatusDeregistered || m.DeregisteredAt == nil {
		t.Fatalf("deregister: %+v %v %v", m, changed, err)
	}
	if record(n.NodeID) {
		t.Fatal("the registry record survived the deregistration")
	}
	again, changed, err := s.Deregister(ctx, owner, n.NodeID)
	if err != nil || changed || *again.DeregisteredAt != *m.DeregisteredAt || again.Status != StatusDeregistered {
		t.Fatalf("deregister again: %+v %v %v", again, changed, err)
	}
	if _, err := s.cfg.Pool.Exec(ctx, `UPDATE nodes SET status = 'online' WHERE node_id = $1`, n.NodeID); err == nil ||
		!strings.Contains(err.Error(), "final") {
		t.Fatalf("bringing a deregistered node back: %v", err)
	}
	if _, err := s.cfg.Pool.Exec(ctx, `UPDATE nodes SET deregistered_at = now() WHERE node_id = $1`, n.NodeID); err == nil {
		t.Fatal("moving deregistered_at was accepted")
	}

	// A lost removal (the record written back behind our back) is healed
	// by the prober, which never probes or republishes the node.
	raw, _ := registry.Encode(&registry.Node{ID: n.NodeID, Wallet: owner, Region: "EU", URL: srv.URL, ChainIDs: []uint64{137}, Status: registry.StatusOnline})
	if err := s.cfg.Redis.HSet(ctx, prefix+registry.NodesKey, n.NodeID, raw).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Prober().Run(ctx); err != nil {
		t.Fatal(err)
	}
	if record(n.NodeID) {
		t.Fatal("the prober left a deregistered node's record")
	}
	var probes int
	if err := s.cfg.Pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE node_id = $1 AND last_probe_at > $2::timestamptz`, n.NodeID,
		*m.DeregisteredAt).Scan(&probes); err != nil || probes != 0 {
		t.Fatalf("the deregistered node was re-probed (%d, %v)", probes, err)
	}

	// The URL is free: the owner and then nobody else gets a new node.
	n2, created, err := s.Upsert(ctx, owner, RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}})
	if err != nil || !created || n2.NodeID == n.NodeID || !record(n2.NodeID) {
		t.Fatalf("re-registering the URL: %+v %v %v", n2, created, err)
	}
	if _, _, err := s.Upsert(ctx, other, RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}}); code(err) != "url_registered" {
		t.Fatalf("another wallet while the new node holds the URL: %v", err)
	}
	l, err := s.ListFor(ctx, owner)
	if err != nil || len(l.Nodes) != 2 || l.Nodes[0].NodeID != n.NodeID || l.Nodes[0].Status != StatusDeregistered ||
		l.Nodes[1].NodeID != n2.NodeID || l.Nodes[1].Status != registry.StatusOnline || l.Nodes[1].DeregisteredAt != nil || l.Truncated {
		t.Fatalf("list: %+v %v", l, err)
	}
	if l, err := s.ListFor(ctx, other); err != nil || len(l.Nodes) != 0 {
		t.Fatalf("another wallet's list: %+v %v", l, err)
	}
	if _, _, err := s.Deregister(ctx, owner, n2.NodeID); err != nil {
		t.Fatal(err)
	}
	n3, created, err := s.Upsert(ctx, other, RegisterRequest{Region: "us", RPCURL: srv.URL, ChainIDs: []uint64{137}})
	if err != nil || !created || n3.Wallet != other {
		t.Fatalf("another wallet registering the freed URL: %+v %v %v", n3, created, err)
	}
}

// A deregistration that arrives while a re-probe or a re-registration is
// about to write the node's record waits for that write and removes the
// record after it, so the record never comes back. The writer is held just
// before its write until the deregistration is seen waiting on a lock in
// pg_stat_activity (or has finished: then the write comes after the removal
// and the test fails).
func TestDeregisterWaitsForARecordWrite(t *testing.T) {
	for _, writer := range []string{"probe", "re-registration"} {
		t.Run(writer, func(t *testing.T) {
			s, prefix := service(t, true)
			srv, _ := rpcServer(t)
			ctx := context.Background()
			const owner = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
			req := RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}}
			n, _, err := s.Upsert(ctx, owner, req)
			if err != nil {
				t.Fatal(err)
			}
			held, release := make(chan struct{}), make(chan struct{})
			var once, releaseOnce sync.Once
			s.publishHook = func(*Node) { once.Do(func() { close(held); <-release }) }
			unblock := func() { releaseOnce.Do(func() { close(release) }) }
			t.Cleanup(unblock)
			wrote := make(chan error, 1)
			go func() {
				if writer == "probe" {
					wrote <- s.Prober().Run(ctx)
				} else {
					_, _, err := s.Upsert(ctx, owner, req)
					wrote <- err
				}
			}()
			<-held
			dereg := make(chan error, 1)
			go func() {
				_, _, err := s.Deregister(ctx, owner, n.NodeID)
				dereg <- err
			}()
			finished := false
			settletest.Eventually(t, 10*time.Second, "the deregistration waiting on a lock (or done)", func() (bool, error) {
				select {
				case err := <-dereg:
					finished = true
					return true, err
				default:
				}
				var waiting int
				err := s.cfg.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
					AND wait_event_type = 'Lock'`).Scan(&waiting) // the writer waits in Go, not in Postgres
				return waiting > 0, err
			})
			unblock()
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			if finished {
				// (The prober would heal its own late write at the end of
				// its run; the deregistration must not need that.)
				t.Fatal("the deregistration did not wait for the record write in flight")
			}
			if err := <-dereg; err != nil {
				t.Fatal(err)
			}
			if ok, err := s.cfg.Redis.HExists(ctx, prefix+registry.NodesKey, n.NodeID).Result(); err != nil || ok {
				t.Fatalf("the deregistered node's record is back in the registry (%v)", err)
			}
		})
	}
}

// TestReRegistrationKeepsAQuarantine: re-registering a quarantined node's
// URL must not publish it as online: the registry record says what the
// database says (the quarantine stays until an operator's review).
func TestReRegistrationKeepsAQuarantine(t *testing.T) {
	s, prefix := service(t, true)
	srv, _ := rpcServer(t)
	ctx := context.Background()
	const owner = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
	req := RegisterRequest{Region: "eu", RPCURL: srv.URL, ChainIDs: []uint64{137}}
	n, _, err := s.Upsert(ctx, owner, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.cfg.Pool.Exec(ctx, `UPDATE nodes SET status = 'quarantined', quarantined_at = now(),
		quarantine_reason = 'answered eth_getBalance unlike provider alpha' WHERE node_id = $1`, n.NodeID); err != nil {
		t.Fatal(err)
	}
	again, created, err := s.Upsert(ctx, owner, req)
	if err != nil || created || again.NodeID != n.NodeID {
		t.Fatalf("re-registration: %+v created %v: %v", again, created, err)
	}
	raw, err := s.cfg.Redis.HGet(ctx, prefix+registry.NodesKey, n.NodeID).Result()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := registry.Decode(raw)
	if err != nil || rec.Status != registry.StatusQuarantined || rec.Serves(137) {
		t.Fatalf("registry record after re-registration: %+v %v", rec, err)
	}
}
