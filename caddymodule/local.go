package caddymodule

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// localAnswers are the methods the gateway answers itself, free and without
// touching Redis or an upstream, because the answer is a fact of the chain the
// path names rather than of any node:
//
//   - eth_chainId and net_version: client libraries (ethers' network
//     detection, viem's chain check, wallets) ask them first. Answering them
//     even to a caller whose free tier is used up lets the client detect the
//     network and then surface the 402 of the call that costs, instead of
//     reporting "failed to detect network, perhaps the URL is wrong".
//   - eth_accounts: a public node holds no accounts; every public RPC
//     answers [] (forwarding it would at best reach a node that has some).
//
// Only calls without params (absent, null or []) are answered here; anything
// else goes on like any other call, so the caller sees the node's own answer
// to a malformed call.
var localAnswers = map[string]func(cs *chainState) json.RawMessage{
	"eth_chainId":  func(cs *chainState) json.RawMessage { return quoted(cs.chain.HexID()) },
	"net_version":  func(cs *chainState) json.RawMessage { return quoted(strconv.FormatUint(cs.chain.ID, 10)) },
	"eth_accounts": func(*chainState) json.RawMessage { return json.RawMessage(`[]`) },
}

func quoted(s string) json.RawMessage { return strconv.AppendQuote(nil, s) }

// answerLocally answers the calls localAnswers covers into resps (at the
// caller's positions, index[k] for calls[k]) and returns the calls that are
// left to meter and forward, with their positions. Each local answer counts in
// rpc_calls_total with source "local". It allocates only when a
// call is answered locally.
func answerLocally(cs *chainState, calls []jsonrpc.Item, index []int, resps []jsonrpc.Response) ([]jsonrpc.Item, []int) {
	n := 0
	for k := range calls {
		if localAnswer(cs, &calls[k]) != nil {
			n++
		}
	}
	if n == 0 {
		return calls, index
	}
	restCalls := make([]jsonrpc.Item, 0, len(calls)-n)
	restIndex := make([]int, 0, len(calls)-n)
	for k := range calls {
		if result := localAnswer(cs, &calls[k]); result != nil {
			resps[index[k]] = jsonrpc.ResultResponse(calls[k].ResponseID(), result)
			rpcCalls.WithLabelValues(chainLabel(cs.chain.ID), jsonrpc.MetricLabel(calls[k].Method), "local").Inc()
			continue
		}
		restCalls = append(restCalls, calls[k])
		restIndex = append(restIndex, index[k])
	}
	return restCalls, restIndex
}

func localAnswer(cs *chainState, it *jsonrpc.Item) json.RawMessage {
	fn := localAnswers[it.Method]
	if fn == nil || !noParams(it.Params) {
		return nil
	}
	return fn(cs)
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
