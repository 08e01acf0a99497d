// Package cache is the gateway's edge cache: a bounded,
// in-process store of JSON-RPC answers that can never change, so that a
// repeated call is answered without an upstream round trip (and metered with
// upstream "cache").
//
// The package has three layers, each in its own file:
//
//   - rules.go (with blockref.go and result.go) decides, as a pure function
//     of (chain, method, params, finalized head), whether a call is
//     cacheable (Cacheable, before forwarding) and whether a given answer
//     may be kept (Storable, after).
//     Correctness lives here: serving a stale answer forever is far worse
//     than a miss, so every rule errs towards "do not cache".
//   - canon.go and key.go turn params into a canonical form (whitespace,
//     object key order, hex case and block-number spelling do not matter)
//     and hash it, with the chain and method, into a fixed-size Key.
//   - lru.go and cache.go are a sharded LRU bounded by bytes and entries,
//     safe for concurrent use, with per-instance Stats. batch.go splits a
//     batch into cached answers and calls to forward, and merges back.
//
// One Cache serves one chain: its Stats are that chain's numbers for
// /rpc/stats/{chain}, and its byte budget is that chain's. Keys include the
// chain id anyway, so entries can never leak across chains even if
// instances were shared.
//
// Results handed out by the cache are shared, immutable byte slices: callers
// must not modify them.
package cache
