package jsonrpc

import "strings"

// UpstreamFault reports whether a JSON-RPC error returned by an upstream is
// the upstream's fault (it should count against the upstream's circuit
// breaker and health, and the call may be tried elsewhere) rather than the
// caller's (the answer goes back to the caller as is).
//
// The guiding rule: an error a caller can provoke at will must not be the
// upstream's fault, or any client could open the breakers of every upstream
// with crafted requests. So when a code is ambiguous, the default is "caller".
//
//	code            meaning                                   fault
//	-32700          parse error                               caller
//	-32600          invalid request                           caller
//	-32601, -32004  method not found / not supported          caller
//	-32602          invalid params                            caller
//	3               execution reverted (geth)                 caller
//	-32001          resource not found (EIP-1474)             caller
//	-32003          transaction rejected (EIP-1474)           caller
//	-32006          JSON-RPC version not supported            caller
//	-32603          internal error                            upstream
//	-32002          resource unavailable (EIP-1474)           upstream
//	-32005          limit exceeded / rate limited             upstream, except size
//	                                                          limits on the caller's
//	                                                          query (see querySizeHints)
//	-32011, -32012, proxyd: no healthy backend, over          upstream
//	-32014, -32016  capacity, batch too large, rate limited
//	401 402 403 429 HTTP-style codes some providers put in    upstream (our key,
//	500 502 503 504 JSON-RPC errors (web3-proxy, Alchemy)     billing or capacity)
//	-32000          geth's catch-all: upstream only when the  see serverSideHints
//	                message names a server-side condition
//	anything else                                             caller
//
// Whether a rate limit (-32005, 429) should trip a breaker or only divert
// traffic for a while is the breaker's policy (DESIGN §3 says 429 does not
// trip); this function only says whose fault the error is.
func UpstreamFault(err *Error) bool {
	if err == nil {
		return false
	}
	switch err.Code {
	case CodeInternalError, -32002, -32011, -32012, -32014, -32016,
		401, 402, 403, 429, 500, 502, 503, 504:
		return true
	case CodeLimitExceeded:
		return !containsAny(err.Message, querySizeHints)
	case -32000:
		return containsAny(err.Message, serverSideHints)
	}
	return false
}

// querySizeHints mark a -32005 that limits the caller's query (eth_getLogs
// block ranges, result counts, response sizes) rather than the upstream's
// capacity. The caller can shrink the query; it is not the node's fault.
var querySizeHints = []string{
	"query returned more than",
	"block range",
	"range is too large",
	"range too large",
	"too many blocks",
	"too many results",
	"response size",
	"response is too big",
	"logs matched by query exceeds",
}

// serverSideHints mark a -32000 that describes the node itself: its state,
// storage or load, which another upstream would not share.
//
// "header not found" is the classic symptom of a node lagging behind the
// chain head, which is why peers treat it as retriable elsewhere. A caller can
// also provoke it by naming a future block, so the gateway should refuse
// blocks beyond the pool's head before forwarding (or not let this one
// error alone open a breaker). Execution timeouts and "missing trie node"
// (history a non-archive node has pruned) are deliberately absent: a caller
// provokes those with heavy calls or old blocks.
var serverSideHints = []string{
	"header not found",
	"internal error",
	"database",
	"leveldb",
	"pebble",
	"no suitable peers",
	"no peers available",
	"node is syncing",
	"service unavailable",
	"server is busy",
	"server busy",
	"overloaded",
	"too many requests",
	"rate limit",
	"capacity exceeded",
	"connection refused",
}

func containsAny(msg string, hints []string) bool {
	m := strings.ToLower(msg)
	for _, h := range hints {
		if strings.Contains(m, h) {
			return true
		}
	}
	return false
}
