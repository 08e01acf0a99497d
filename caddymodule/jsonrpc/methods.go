package jsonrpc

import "slices"

// knownMethods interns the method names EVM clients send most, so parsing a
// call whose method is one of them costs no allocation: a map index with a
// string(bytes) key does not allocate, and the stored string is shared. With
// 100-call batches that is 100 fewer allocations per request. Unknown names
// are still accepted (allocated normally); whether a method is allowed or
// priced is the gateway's decision, not the codec's.
var knownMethods = func() map[string]string {
	names := []string{
		"eth_blockNumber", "eth_chainId", "net_version", "web3_clientVersion", "net_listening",
		"net_peerCount", "eth_syncing", "eth_gasPrice", "eth_maxPriorityFeePerGas", "eth_feeHistory",
		"eth_blobBaseFee", "eth_getBalance", "eth_getCode", "eth_getStorageAt", "eth_getTransactionCount",
		"eth_call", "eth_estimateGas", "eth_createAccessList", "eth_simulateV1", "eth_getProof",
		"eth_getBlockByNumber", "eth_getBlockByHash", "eth_getBlockReceipts",
		"eth_getBlockTransactionCountByNumber", "eth_getBlockTransactionCountByHash",
		"eth_getUncleCountByBlockNumber", "eth_getUncleCountByBlockHash",
		"eth_getTransactionByHash", "eth_getTransactionByBlockNumberAndIndex",
		"eth_getTransactionByBlockHashAndIndex", "eth_getTransactionReceipt",
		"eth_getLogs", "eth_newFilter", "eth_newBlockFilter", "eth_newPendingTransactionFilter",
		"eth_getFilterChanges", "eth_getFilterLogs", "eth_uninstallFilter",
		"eth_sendRawTransaction", "eth_sendRawTransactionSync", "eth_subscribe", "eth_unsubscribe",
		"eth_accounts", "eth_coinbase", "eth_mining", "eth_hashrate", "eth_protocolVersion",
		"debug_traceTransaction", "debug_traceCall", "debug_traceBlockByNumber", "debug_traceBlockByHash",
		"trace_block", "trace_transaction", "trace_filter", "trace_call", "trace_replayTransaction",
		"txpool_status", "txpool_content", "bor_getAuthor", "bor_getCurrentValidators",
		"bor_getRootHash", "bor_getSignersAtHash", "bor_getSnapshot",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}()

// internMethod returns the method name for raw bytes, shared when known.
func internMethod(b []byte) string {
	if s, ok := knownMethods[string(b)]; ok {
		return s
	}
	return string(b)
}

// MetricLabel returns method for the interned, well-known EVM methods and
// "other" for anything else, so a metrics label can never grow with
// caller-chosen method names.
func MetricLabel(method string) string {
	if _, ok := knownMethods[method]; ok {
		return method
	}
	return "other"
}

// RequestLabel is the method label of a request's calls for its revenue
// event: MetricLabel of the method when every call names the same one (a
// single call included), "batch" when they differ, "" for no calls.
func RequestLabel(calls []Item) string {
	if len(calls) == 0 {
		return ""
	}
	m := calls[0].Method
	for _, c := range calls[1:] {
		if c.Method != m {
			return "batch"
		}
	}
	return MetricLabel(m)
}

// KnownMethods lists the well-known EVM method names, sorted (tests walk
// every method the gateway serves with it).
func KnownMethods() []string {
	out := make([]string, 0, len(knownMethods))
	for m := range knownMethods {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}
