package rediscluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/rediscluster"
)

// TestClusterFailsOver: three masters with a replica each; keys written to
// every master; a master killed with SIGKILL is replaced by its replica, and
// the cluster serves every slot again.
func TestClusterFailsOver(t *testing.T) {
	c := rediscluster.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := c.Client()
	defer rdb.Close()
	for i := range 300 {
		if err := rdb.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	per, err := c.KeysPerMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 3 {
		t.Fatalf("masters: %v, want 3", per)
	}
	for addr, n := range per {
		if n == 0 {
			t.Fatalf("master %s holds no key: %v", addr, per)
		}
	}
	masters, err := c.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := masters[0].Port
	replica, err := c.ReplicaOf(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.KillMaster(victim); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitPromoted(ctx, replica); err != nil {
		t.Fatal(err)
	}
	t.Logf("master %d killed, replica %d promoted after %v", victim, replica, time.Since(start).Round(time.Millisecond))
	// The client learns the new topology when a command fails (it reloads
	// the slot map): every key is written again once it has.
	for i := range 300 {
		for {
			err := rdb.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("after the failover: %v", err)
			}
		}
	}
	t.Logf("every key written again %v after the kill", time.Since(start).Round(time.Millisecond))
}
