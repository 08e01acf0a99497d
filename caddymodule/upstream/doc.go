// Package upstream moves JSON-RPC request bodies to the upstreams of one chain
// and brings the answers back.
//
// A Pool holds the upstreams of one chain: configured providers (fixed for the
// pool's life) and registered nodes (replaced by the caller from the node
// registry with SetNodes). Every upstream has its own HTTP transport, a
// circuit breaker fed by real traffic, latency statistics and a health state
// kept by a background probe (eth_chainId + eth_blockNumber).
//
// Why we proxy ourselves instead of composing Caddy's reverse_proxy:
// JSON-RPC failures usually arrive as HTTP 200 with an
// error object, which reverse_proxy's breaker and retry logic cannot see; POST
// retries on another provider are off there; and the caller has to read the
// reply anyway to meter, cache and refund. So the breaker is gobreaker's
// TwoStepCircuitBreaker: Allow before sending, report the outcome after the
// reply body has been classified.
//
// The package treats bodies as opaque bytes. It parses only what it needs to
// judge an upstream: the top-level "error" objects of a reply and the answers
// to its own probes. It does not depend on the JSON-RPC codec package.
//
// Secrets: an upstream URL may carry an API key (in the path, the query or as
// user info) and Headers may carry an auth token. Neither is ever logged,
// printed by String, marshalled to JSON, or kept in an error message; only
// scheme://host is shown.
package upstream
