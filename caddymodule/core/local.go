package core

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
)

// answerLocally answers, free and without an upstream, the calls the method
// table (caddymodule/evm) says the gateway answers itself: facts of the
// chain (eth_chainId, net_version, eth_accounts — so a client can always
// detect the network, even with its free tier used up), methods no public
// RPC serves (-32601, never sent to a node), and eth_getLogs calls wider
// than the limit (-32602 naming it). The answers go into resps at the
// caller's positions (index[k] for calls[k]); the calls left to meter and
// forward are returned with their positions. Each counts in rpc_calls_total
// with source "local".
func answerLocally(cs *Chain, calls []jsonrpc.Item, index []int, resps []jsonrpc.Response) ([]jsonrpc.Item, []int) {
	var restCalls []jsonrpc.Item
	var restIndex []int
	for k := range calls {
		resp, local := localAnswer(cs, &calls[k])
		if !local {
			if restCalls != nil {
				restCalls, restIndex = append(restCalls, calls[k]), append(restIndex, index[k])
			}
			continue
		}
		if restCalls == nil { // the first local answer: copy what came before
			restCalls, restIndex = append(make([]jsonrpc.Item, 0, len(calls)), calls[:k]...), append(make([]int, 0, len(calls)), index[:k]...)
		}
		resps[index[k]] = resp
		metrics.RPCCalls.WithLabelValues(cs.Metrics.label, jsonrpc.MetricLabel(calls[k].Method), "local").Inc()
	}
	if restCalls == nil {
		return calls, index
	}
	return restCalls, restIndex
}

func localAnswer(cs *Chain, it *jsonrpc.Item) (jsonrpc.Response, bool) {
	m := cs.Methods.Lookup(it.Method)
	limit := m.MaxBlockRange
	if it.Method == "eth_newFilter" {
		// eth_getFilterLogs answers a filter's whole range: a filter is
		// held to eth_getLogs' limit (and reading) when it is made, or a
		// filter from block 0 would fetch every log for two calls' price.
		limit = cs.Methods.Lookup("eth_getLogs").MaxBlockRange
	}
	switch {
	case m.Denied != "":
		return jsonrpc.ErrorResponse(it.ResponseID(), &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: "the method " + it.Method + " is not served by this gateway: " + m.Denied}), true
	case m.Local != nil && noParams(it.Params):
		return jsonrpc.ResultResponse(it.ResponseID(), m.Local(cs.ID)), true
	case limit > 0:
		span, ok, err := evm.LogsSpan(it.Params, cs.Pool.BestHead())
		if err != nil { // a range the gateway cannot judge is not sent on unjudged
			return jsonrpc.ErrorResponse(it.ResponseID(), jsonrpc.InvalidParams(it.Method+": "+err.Error())), true
		}
		if ok && span > limit {
			return jsonrpc.ErrorResponse(it.ResponseID(), &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: it.Method + " spans " + strconv.FormatUint(span, 10) + " blocks; this gateway serves at most " +
					strconv.FormatUint(limit, 10) + " per call: split the range"}), true
		}
	}
	return jsonrpc.Response{}, false
}

func noParams(p json.RawMessage) bool {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		return true
	}
	if len(p) < 2 || p[0] != '[' || p[len(p)-1] != ']' {
		return false
	}
	return len(bytes.TrimSpace(p[1:len(p)-1])) == 0
}
