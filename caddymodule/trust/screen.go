package trust

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Screen looks at a node's answers before they reach the caller, with no
// provider call: it says why (non-empty) when the part must go to a
// provider instead, the node earning nothing for it. Those answers are
// then judged by the provider's answer (verify.Job.Trusted), always.
//
// An answer is screened out when it is
//   - an error, null or [] (a node may say "not found" honestly — it lags,
//     it pruned — but it is not paid for saying so, and a liar's "not
//     found" never reaches a caller);
//   - about a block the providers' recent chain holds another hash for at
//     that height, or about a block above the providers' head: a block
//     object, or a transaction, receipt or log naming its block (an orphan
//     the providers never saw, a block made up — such as a parent's hash
//     with made-up fields — or one the node saw first);
//   - a block by number that is not at the number it was pinned to.
//
// Sends are never rerouted (a send is never made twice): their refusals
// are delivered and withheld (the gateway books their revenue to no node).
func Screen(calls []jsonrpc.Item, replies []jsonrpc.Reply, pins []verify.Pin, head *Head) string {
	if pins == nil {
		return ""
	}
	if len(SwappedSends(calls, replies, pins)) > 0 {
		return SwappedSend
	}
	for k := range calls {
		if k >= len(replies) || k >= len(pins) {
			return "no answer"
		}
		r := &replies[k]
		switch {
		case r.Err != nil:
			return "no answer"
		case r.Response.Error != nil:
			return "refused"
		case verify.IsNothing(r.Result):
			return "nothing"
		}
		if why := screenBlocks(calls[k].Method, pins[k], r.Result, head); why != "" {
			return why
		}
	}
	return ""
}

// SwappedSend is Screen's reason for a part in which a node answered a
// send with a hash that is not keccak256 of the caller's transaction.
const SwappedSend = "a send's hash that is not its transaction's"

// SwappedSends are the indexes of the sends a node answered with a hash
// that is not keccak256 of the raw transaction (a local hash, no provider
// call): a node that kept or replaced the caller's transaction. Such an
// answer must never reach the caller.
func SwappedSends(calls []jsonrpc.Item, replies []jsonrpc.Reply, pins []verify.Pin) []int {
	var out []int
	for k := range calls {
		if k >= len(replies) || k >= len(pins) || pins[k].Judge != evm.JudgeSend {
			continue
		}
		r := &replies[k]
		if r.Err != nil || r.Response.Error != nil {
			continue
		}
		if lie, _ := verify.CheckSend(&calls[k], r.Result); lie {
			out = append(out, k)
		}
	}
	return out
}

// blockNames are the members that say which block an answer is or is in.
type blockNames struct {
	Hash        *string `json:"hash"`
	Number      *string `json:"number"`
	BlockHash   *string `json:"blockHash"`
	BlockNumber *string `json:"blockNumber"`
}

func screenBlocks(method string, pin verify.Pin, result json.RawMessage, head *Head) string {
	t := bytes.TrimSpace(result)
	if len(t) == 0 || head == nil {
		return ""
	}
	block := method == "eth_getBlockByNumber" || method == "eth_getBlockByHash"
	switch t[0] {
	case '{':
		var b blockNames
		if json.Unmarshal(t, &b) != nil {
			return ""
		}
		if block {
			n, ok := hexPtr(b.Number)
			if pin.Judge == evm.JudgeBlock && (!ok || n != pin.Block) {
				return "a block of another height"
			}
			return against(head, b.Number, b.Hash)
		}
		return against(head, b.BlockNumber, b.BlockHash)
	case '[':
		var list []blockNames
		if json.Unmarshal(t, &list) != nil {
			return "" // not a list of objects (hashes, values)
		}
		for _, e := range list {
			if why := against(head, e.BlockNumber, e.BlockHash); why != "" {
				return why
			}
		}
	}
	return ""
}

// against: a (number, hash) the providers' recent chain has another hash
// for.
func against(head *Head, number, hash *string) string {
	if number == nil || hash == nil || *hash == "" {
		return "" // a pending transaction, or no block named
	}
	n, ok := hexPtr(number)
	if !ok {
		// A number the providers would not write (padded, 0X, over 64
		// bits) once skipped this check; it is not their answer.
		return "a block number in no canonical spelling"
	}
	if h, known := head.HashAt(n); known && !strings.EqualFold(h, *hash) {
		return "a block the providers do not have at that height"
	}
	if top, _, ok := head.Latest(); ok && n > top {
		// Ahead of every provider: perhaps a node that saw the newest
		// block first, perhaps a block nobody made. Not paid for until a
		// provider has it.
		return "a block the providers have not seen yet"
	}
	return ""
}

// hexPtr reads a block number in a node's answer in its one canonical
// spelling (ethparse.CanonicalQuantity, as verify judges it): a padded or
// respelled number is not what a provider answers.
func hexPtr(s *string) (uint64, bool) {
	if s == nil {
		return 0, false
	}
	n, err := ethparse.CanonicalQuantity(*s)
	return n, err == nil
}
