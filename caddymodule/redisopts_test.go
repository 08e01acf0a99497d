package caddymodule

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/rediscluster"
)

// slowScript counts its runs, then keeps Redis busy for ARGV[1] ms, past
// the client's read timeout: it has run, but its answer comes too late.
var slowScript = redis.NewScript(`
redis.call('INCR', KEYS[1])
local t = redis.call('TIME')
local start = t[1] * 1000 + math.floor(t[2] / 1000)
repeat
  t = redis.call('TIME')
until t[1] * 1000 + math.floor(t[2] / 1000) - start >= tonumber(ARGV[1])
return 1`)

// A metering script whose answer is lost may have run: the gateway's Redis
// Cluster client must answer the error, never send it again (a second run
// would charge twice). go-redis's cluster client re-sends a command or a
// pipeline after a timeout or a lost connection up to MaxRedirects times,
// whatever MaxRetries says.
func TestClusterClientNeverRunsAScriptTwice(t *testing.T) {
	c := rediscluster.Start(t)
	o, err := clusterOptions(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	// A shorter read timeout than the gateway's 1 s, so that the busy
	// script stays well inside the cluster's node timeout (1 s here: a
	// master silent for longer is failed over).
	o.ReadTimeout = 150 * time.Millisecond
	rdb := redis.NewClusterClient(o)
	defer rdb.Close()
	ctx := context.Background()
	const slow = 250 // ms: past the read timeout
	for _, via := range []string{"a single call", "a pipeline"} {
		key := "{runs}:" + via
		// Loading is idempotent: on a busy machine a load may outlast the
		// short read timeout, so it is asked again.
		for deadline := time.Now().Add(30 * time.Second); ; {
			err := slowScript.Load(ctx, rdb).Err()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("loading the script: %v", err)
			}
		}
		if via == "a single call" {
			err = slowScript.Run(ctx, rdb, []string{key}, slow).Err()
		} else {
			_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				slowScript.EvalSha(ctx, p, []string{key}, slow)
				return nil
			})
		}
		if err == nil {
			t.Fatalf("%s: the late answer was read", via)
		}
		// Redis runs one command at a time: a GET answers once the script
		// is done (or times out while it runs: asked again).
		n, err := rdb.Get(ctx, key).Int()
		for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); {
			n, err = rdb.Get(ctx, key).Int()
		}
		if err != nil || n != 1 {
			t.Fatalf("%s: the script ran %d times (%v), want once", via, n, err)
		}
	}
}
