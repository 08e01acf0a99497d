package meter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ClusterAutoPipeline is AutoPipeline on a Redis Cluster: each script call
// goes into the auto-pipeline of the master that holds its first key's slot
// (every key of a metering script shares one slot: balances.Layout's hash
// tags), so the concurrent calls to one master share its round trips as on
// a standalone Redis. Every other command passes through to the
// ClusterClient.
//
// AutoPipeline's guarantees hold per master. Never twice in particular:
// the per-master clients are the ClusterClient's own node clients, which do
// not retry (MaxRetries -1), and the ClusterClient must not re-send either
// (MaxRedirects -1: go-redis re-sends after a timeout whatever MaxRetries
// says), so NewClusterAutoPipeline refuses one that would. A call answered
// with a redirect (MOVED, ASK, TRYAGAIN, CLUSTERDOWN: the script did not
// run) fails like any other, and the slot map is reloaded: the slot's next
// calls go to its new master.
type ClusterAutoPipeline struct {
	*redis.ClusterClient

	cfg   AutoPipelineConfig
	mu    sync.Mutex
	pipes map[*redis.Client]*AutoPipeline // by master node client
}

// NewClusterAutoPipeline wraps cc, whose options must have MaxRetries and
// MaxRedirects -1.
func NewClusterAutoPipeline(cc *redis.ClusterClient, cfg AutoPipelineConfig) (*ClusterAutoPipeline, error) {
	// Options() are the initialised ones: -1 has become 0, the default 3.
	if o := cc.Options(); o.MaxRedirects != 0 || o.MaxRetries > 0 {
		return nil, fmt.Errorf("meter: cluster auto-pipelining needs a client that never re-sends (MaxRetries and MaxRedirects -1), "+
			"not MaxRetries %d, MaxRedirects %d: a re-sent metering script could run twice", o.MaxRetries, o.MaxRedirects)
	}
	return &ClusterAutoPipeline{ClusterClient: cc, cfg: cfg, pipes: map[*redis.Client]*AutoPipeline{}}, nil
}

// pipeFor is the auto-pipeline of the master holding key.
func (c *ClusterAutoPipeline) pipeFor(ctx context.Context, key string) (*AutoPipeline, error) {
	node, err := c.MasterForKey(ctx, key)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.pipes[node]; ok {
		return p, nil
	}
	p, err := NewAutoPipeline(node, c.cfg)
	if err != nil {
		return nil, err
	}
	c.pipes[node] = p
	return p, nil
}

// Eval implements redis.Scripter.
func (c *ClusterAutoPipeline) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return c.run(ctx, keys, func(p redis.Scripter) *redis.Cmd { return p.Eval(ctx, script, keys, args...) })
}

// EvalSha implements redis.Scripter.
func (c *ClusterAutoPipeline) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return c.run(ctx, keys, func(p redis.Scripter) *redis.Cmd { return p.EvalSha(ctx, sha1, keys, args...) })
}

// EvalRO implements redis.Scripter.
func (c *ClusterAutoPipeline) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return c.run(ctx, keys, func(p redis.Scripter) *redis.Cmd { return p.EvalRO(ctx, script, keys, args...) })
}

// EvalShaRO implements redis.Scripter.
func (c *ClusterAutoPipeline) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return c.run(ctx, keys, func(p redis.Scripter) *redis.Cmd { return p.EvalShaRO(ctx, sha1, keys, args...) })
}

// run sends a script call through its master's auto-pipeline (a call
// without keys goes to the ClusterClient).
func (c *ClusterAutoPipeline) run(ctx context.Context, keys []string, call func(redis.Scripter) *redis.Cmd) *redis.Cmd {
	if len(keys) == 0 {
		return call(c.ClusterClient)
	}
	p, err := c.pipeFor(ctx, keys[0])
	if err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	cmd := call(p)
	if err := cmd.Err(); err != nil && Redirected(err) {
		c.ReloadState(ctx)
	}
	return cmd
}

// Carry sends a background command (an event's XADD) with the next batch
// of script calls to the master holding its first key (AutoPipeline.Carry),
// so on a cluster too an event costs no round trip of its own under load.
// done gets the error when the master is not known; like any failed
// carried command it is then the owner's to retry (the EventWriter queues
// it for its shard and writes it through the ClusterClient). Like a script
// call, it waits for the cluster's slot map only if none was loaded yet.
func (c *ClusterAutoPipeline) Carry(cmd redis.Cmder, done func(error)) {
	key := ""
	if args := cmd.Args(); len(args) > 1 {
		key, _ = args[1].(string)
	}
	p, err := c.pipeFor(context.Background(), key)
	if err != nil {
		done(err)
		return
	}
	p.Carry(cmd, func(err error) {
		if err != nil && Redirected(err) {
			c.ReloadState(context.Background())
		}
		done(err)
	})
}

// SendCarried sends what every master carries now (a writer closing).
func (c *ClusterAutoPipeline) SendCarried() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pipes {
		p.SendCarried()
	}
}

// Stats sums the masters' batches and calls (AutoPipeline.Stats).
func (c *ClusterAutoPipeline) Stats() (batches, calls uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pipes {
		b, n := p.Stats()
		batches, calls = batches+b, calls+n
	}
	return batches, calls
}

// Redirected reports whether err is a cluster's answer that the command did
// not run where it was sent (the slot moved, is migrating, or the cluster
// is down) or that a failed master's connection was refused: the slot map
// is stale.
func Redirected(err error) bool {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		s := rerr.Error()
		for _, p := range []string{"MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN", "READONLY"} {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
	}
	return strings.Contains(err.Error(), "connection refused")
}

// asCluster is the ClusterClient behind c, or nil on a standalone Redis.
func asCluster(c redis.UniversalClient) *redis.ClusterClient {
	switch c := c.(type) {
	case *redis.ClusterClient:
		return c
	case *ClusterAutoPipeline:
		return c.ClusterClient
	}
	return nil
}
