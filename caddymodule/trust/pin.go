package trust

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tollgate-rpc/tollgate/caddymodule/cache"
	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/verify"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Plan is what the gateway makes of a caller's calls before they leave it.
type Plan struct {
	// Calls are the calls as sent upstream: with NodeOK, every block tag a
	// node could read differently is replaced by a definite block.
	Calls []jsonrpc.Item
	// Pins say per call what it was pinned to and how it is judged.
	Pins []verify.Pin
	// NodeOK: every call can be judged, so a registered node may answer;
	// otherwise only the configured providers may.
	NodeOK bool
	// Shadow: a node in probation may be asked the same (NodeOK, and no
	// call has effects: no sends).
	Shadow bool
}

// PinCalls plans calls for a chain: t is its method table, head the
// providers' recent chain, finalized the head at or below which answers
// are immutable, chainID the cache key's chain. A call a node may not
// answer makes the whole part the providers' (it travels as one upstream
// request); the calls are then sent unchanged.
func PinCalls(calls []jsonrpc.Item, t *evm.Table, head *Head, finalized, chainID uint64) Plan {
	p := Plan{Calls: calls, Pins: make([]verify.Pin, len(calls)), NodeOK: true, Shadow: true}
	var pinned []jsonrpc.Item
	for k := range calls {
		c := &calls[k]
		judge := t.Lookup(c.Method).Judge
		pin, params, ok := pinCall(c, judge, head, finalized, chainID)
		if !ok {
			p.NodeOK, p.Shadow = false, false
			p.Calls, p.Pins = calls, nil
			return p
		}
		if judge == evm.JudgeSend {
			p.Shadow = false
		}
		p.Pins[k] = pin
		if params != nil {
			if pinned == nil {
				pinned = append([]jsonrpc.Item(nil), calls...)
			}
			pinned[k].Params = params
		}
	}
	if pinned != nil {
		p.Calls = pinned
	}
	return p
}

// pinCall decides one call: its pin, its new params (nil: unchanged), and
// whether a node may answer it at all.
func pinCall(c *jsonrpc.Item, judge evm.Judge, head *Head, finalized, chainID uint64) (verify.Pin, json.RawMessage, bool) {
	pin := verify.Pin{Judge: judge}
	switch judge {
	case evm.JudgeHead, evm.JudgeSend:
		return pin, nil, true
	case evm.JudgeFinal:
		_, ok := cache.Cacheable(chainID, c, finalized)
		return pin, nil, ok
	case evm.JudgeState:
		return pinState(c, head, finalized, chainID)
	case evm.JudgeBlock:
		return pinBlock(c, head, finalized)
	}
	return pin, nil, false
}

// pinState pins a read of state at a block to that block's hash (EIP-1898
// {"blockHash": …}): node and provider then answer about one block, even
// while a reorg replaces the block at that height. Final blocks and
// hash-named blocks are left as they are (judged as final answers); tags a
// node cannot be held to (pending, safe, finalized) and blocks the
// providers' recent chain does not hold go to the providers.
func pinState(c *jsonrpc.Item, head *Head, finalized, chainID uint64) (verify.Pin, json.RawMessage, bool) {
	at := evm.Lookup(c.Method).StateAt
	params, ok := splitParams(c.Params)
	if !ok || at == 0 || len(params) > at || len(params) < at-1 {
		return verify.Pin{}, nil, false
	}
	ref := blockRef{kind: refLatest} // the block parameter omitted: latest
	if len(params) == at {
		if ref, ok = blockOf(params[at-1]); !ok {
			return verify.Pin{}, nil, false
		}
	}
	switch {
	case ref.kind == refHash || (ref.kind == refNumber && ref.n <= finalized):
		_, ok := cache.Cacheable(chainID, c, finalized)
		var out json.RawMessage
		if ref.kind == refNumber && canonicalize(params, at-1, ref.n) {
			out = joinParams(params)
		}
		return verify.Pin{Judge: evm.JudgeFinal, Block: ref.n}, out, ok
	case ref.kind == refLatest:
		if ref.n, ok = latest(head); !ok {
			return verify.Pin{}, nil, false
		}
	}
	h, ok := head.HashAt(ref.n)
	if !ok {
		return verify.Pin{}, nil, false
	}
	byHash := json.RawMessage(`{"blockHash":"` + h + `"}`)
	if len(params) == at {
		params[at-1] = byHash
	} else {
		params = append(params, byHash)
	}
	return verify.Pin{Judge: evm.JudgeState, Block: ref.n}, joinParams(params), true
}

// pinBlock pins eth_getBlockByNumber's latest to the providers' head
// number: the answer carries its own hash, which says which block it
// describes (verify.Compare).
func pinBlock(c *jsonrpc.Item, head *Head, finalized uint64) (verify.Pin, json.RawMessage, bool) {
	params, ok := splitParams(c.Params)
	if !ok || len(params) == 0 || len(params) > 2 {
		return verify.Pin{}, nil, false
	}
	ref, ok := blockOf(params[0])
	if !ok || ref.kind == refHash {
		return verify.Pin{}, nil, false
	}
	var out json.RawMessage
	if ref.kind == refLatest {
		if ref.n, ok = latest(head); !ok {
			return verify.Pin{}, nil, false
		}
		params[0] = json.RawMessage(strconv.Quote("0x" + strconv.FormatUint(ref.n, 16)))
		out = joinParams(params)
	} else if canonicalize(params, 0, ref.n) {
		out = joinParams(params)
	}
	pin := verify.Pin{Judge: evm.JudgeBlock, Block: ref.n}
	if ref.n <= finalized {
		pin.Judge = evm.JudgeFinal
	}
	return pin, out, true
}

type refKind uint8

const (
	refLatest refKind = iota
	refNumber         // a number; "earliest" is 0
	refHash
)

type blockRef struct {
	kind refKind
	n    uint64
}

// blockOf reads a block parameter: latest, earliest, a number, or an
// EIP-1898 {"blockHash"} / {"blockNumber"} object. ok is false for pending,
// safe, finalized and anything malformed: a node cannot be held to those.
func blockOf(raw json.RawMessage) (blockRef, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "latest":
			return blockRef{kind: refLatest}, true
		case "earliest":
			return blockRef{kind: refNumber}, true
		}
		// A caller's number is read as the upstream will read it
		// (ethparse.Quantity: leading zeros, however many, and 0X taken),
		// never skipped because it is spelled unusually.
		n, err := ethparse.Quantity(s)
		return blockRef{kind: refNumber, n: n}, err == nil
	}
	var obj struct {
		BlockHash   *string `json:"blockHash"`
		BlockNumber *string `json:"blockNumber"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return blockRef{}, false
	}
	switch {
	case obj.BlockHash != nil && obj.BlockNumber == nil:
		return blockRef{kind: refHash}, len(*obj.BlockHash) == 66
	case obj.BlockNumber != nil && obj.BlockHash == nil:
		return blockOf(json.RawMessage(strconv.Quote(*obj.BlockNumber)))
	}
	return blockRef{}, false
}

// providerNumber reads a block number in a provider's answer (the head
// poll): a trusted answer, read as ethparse.Quantity reads any quantity.
func providerNumber(s string) (uint64, bool) {
	n, err := ethparse.Quantity(s)
	return n, err == nil
}

func latest(head *Head) (uint64, bool) {
	if head == nil {
		return 0, false
	}
	n, _, ok := head.Latest()
	return n, ok
}

func splitParams(raw json.RawMessage) ([]json.RawMessage, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, true
	}
	var p []json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return nil, false
	}
	return p, true
}

func joinParams(p []json.RawMessage) json.RawMessage {
	out := []byte{'['}
	for i, v := range p {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, bytes.TrimSpace(v)...)
	}
	return append(out, ']')
}

// canonicalize rewrites params[k], a block number the caller spelt as a
// string in another way ("0x01", "0X1"), to its one canonical spelling: a
// node and a provider of different clients read padded numbers
// differently (geth refuses them), and since a node's refusal is an
// answer that is judged, a caller must not be able to make an honest node
// refuse what the provider answers by the spelling alone. It reports
// whether it rewrote anything.
func canonicalize(params []json.RawMessage, k int, n uint64) bool {
	if k >= len(params) || len(params[k]) == 0 || params[k][0] != '"' {
		return false
	}
	canon := strconv.Quote("0x" + strconv.FormatUint(n, 16))
	if string(params[k]) == canon {
		return false
	}
	var s string
	if json.Unmarshal(params[k], &s) != nil || s == "earliest" {
		return false
	}
	params[k] = json.RawMessage(canon)
	return true
}
