package reconcile

import (
	"strconv"

	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// layouts is the deployment's layout and each shard's own (whose Stream,
// Generation and Rebuilding are that shard's).
func layouts(prefix string, shards int) (balances.Layout, []balances.Layout) {
	root := balances.Layout{Prefix: prefix}
	if shards <= 1 {
		return root, []balances.Layout{root}
	}
	out := make([]balances.Layout, shards)
	for i := range out {
		out[i] = balances.Layout{Prefix: prefix + "{s" + strconv.Itoa(i) + "}:"}
	}
	return root, out
}

// shardStream is a shard layout's event stream.
func shardStream(l balances.Layout) string { return l.Stream() }
