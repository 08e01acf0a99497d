package balances

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrEvictionPolicy is CheckEviction's error for a Redis that may evict keys.
var ErrEvictionPolicy = errors.New("the metering Redis may evict keys")

// CheckEviction reads the eviction policy of every master (INFO memory:
// managed Redis services disable CONFIG GET) and refuses any but
// noeviction. Every Tollgate key is money or guards it: an evicted account
// hash is a balance gone, an evicted SIWX nonce or refund guard (they carry
// a TTL, so even a volatile-* policy takes them first) lets a payment or a
// refund be used twice, an evicted stream entry is a debit PostgreSQL never
// sees. With noeviction a full Redis refuses writes instead, which the
// gateway answers 503 without charging anyone. The error names the policy
// and the fix.
func CheckEviction(ctx context.Context, rdb redis.UniversalClient) error {
	var (
		mu  sync.Mutex
		bad []string
	)
	one := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return err
		}
		policy := ""
		for line := range strings.SplitSeq(info, "\n") {
			if v, ok := strings.CutPrefix(line, "maxmemory_policy:"); ok {
				policy = strings.TrimSpace(v)
			}
		}
		if policy == "" {
			return fmt.Errorf("INFO memory of %s has no maxmemory_policy", c.Options().Addr)
		}
		if policy != "noeviction" {
			mu.Lock()
			bad = append(bad, c.Options().Addr+": "+policy)
			mu.Unlock()
		}
		return nil
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, one)
	case *redis.Client:
		err = one(ctx, c)
	default:
		return nil // a wrapper (tests): nothing to read
	}
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: maxmemory-policy %s; set maxmemory-policy noeviction (a managed Redis: its parameter group) "+
			"and size maxmemory for the keys and the ingest lag (docs/redis.md)", ErrEvictionPolicy, strings.Join(bad, ", "))
	}
	return nil
}
