package config

import "github.com/tollgate-rpc/tollgate/shared/balances"

// MaxShards bounds redis-shards (balances.MaxShards).
const MaxShards = balances.MaxShards

// shardStreams names every shard's event stream, as the gateways' layout
// (shared/balances) does.
func shardStreams(prefix string, shards int) []string {
	return balances.Layout{Prefix: prefix, Shards: shards}.Streams()
}

// validLayout: with several shards the prefix must carry no hash tag.
func validLayout(prefix string, shards int) error {
	return balances.Layout{Prefix: prefix, Shards: shards}.Validate()
}
