package config

import "strconv"

// MaxShards bounds redis-shards: a shard is a hash tag, and more shards than
// a cluster has slots to spread them over buys nothing.
const MaxShards = 1024

// shardStreams names every shard's event stream.
func shardStreams(prefix string, shards int) []string {
	if shards <= 1 {
		return []string{prefix + "events"}
	}
	out := make([]string, shards)
	for i := range out {
		out[i] = shardPrefix(prefix, i) + "events"
	}
	return out
}

// shardPrefix is the key prefix of shard i: the prefix, then the shard's
// hash tag (the gateway's shared/balances layout names the same keys).
func shardPrefix(prefix string, i int) string { return prefix + "{s" + strconv.Itoa(i) + "}:" }
