package reconcile

import "github.com/tollgate-rpc/tollgate/shared/balances"

// layouts is the deployment's layout and each shard's own (whose Stream,
// Generation and Rebuilding are that shard's).
func layouts(prefix string, shards int) (balances.Layout, []balances.Layout) {
	root := balances.Layout{Prefix: prefix, Shards: shards}
	out := make([]balances.Layout, root.N())
	for i := range out {
		out[i] = root.Shard(i)
	}
	return root, out
}

// shardStream is a shard layout's event stream.
func shardStream(l balances.Layout) string { return l.Stream(0) }
