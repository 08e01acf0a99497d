package verify

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// Outcome is what comparing a node's answer with a provider's proved.
type Outcome int

const (
	// Unjudged: nothing is proven either way (the provider could not
	// answer, the block was reorged, the node lags).
	Unjudged Outcome = iota
	Match
	Mismatch
)

// Head tolerances for eth_blockNumber: a node may be a little ahead of the
// provider (it saw the newest block first) or behind (it lags; its probes
// deal with that). Only a head no provider can have is a lie.
const (
	headAhead = 3  // blocks a node may be ahead of the provider's head
	headLag   = 16 // blocks behind beyond which the answer is not judged
)

// Compare judges a node's answer to call against a provider's answer to
// the same call as pinned (pin). It asks the provider once more only to
// tell a fork from a lie: a block-by-number answer whose hash differs from
// the provider's is a lie only if the provider has never seen that block.
func Compare(ctx context.Context, pool *upstream.Pool, call *jsonrpc.Item, pin Pin, node, trusted jsonrpc.Reply) Outcome {
	if node.Err != nil || node.Response.Error != nil || isNull(node.Result) {
		return Unjudged // an error or "not found" is never a lie: lag, pruning, a fork
	}
	if trusted.Err != nil || trusted.Response.Error != nil || isNull(trusted.Result) {
		return Unjudged
	}
	switch pin.Judge {
	case evm.JudgeHead:
		n, ok1 := quantity(node.Result)
		p, ok2 := quantity(trusted.Result)
		switch {
		case !ok1 || !ok2:
			return Unjudged
		case n > p+headAhead:
			return Mismatch
		case n+headLag < p:
			return Unjudged
		}
		return Match
	case evm.JudgeBlock:
		nh, th := member(node.Result, "hash"), member(trusted.Result, "hash")
		if nh != "" && th != "" && !strings.EqualFold(nh, th) {
			// Not the provider's block at that number: a block of another
			// branch (a reorg) the provider knows, or one nobody made.
			if known, ok := blockKnown(ctx, pool, nh); !ok || known {
				return Unjudged
			}
			return Mismatch
		}
	}
	if Same(node.Result, trusted.Result) {
		return Match
	}
	return Mismatch
}

// CheckSend checks a send's answer: the hash must be keccak256 of the raw
// transaction the caller sent (for eth_sendRawTransactionSync, the
// receipt's transactionHash). lie is true with the true hash as evidence.
func CheckSend(call *jsonrpc.Item, result json.RawMessage) (lie bool, truth json.RawMessage) {
	var params []string
	if json.Unmarshal(call.Params, &params) != nil || len(params) == 0 {
		return false, nil
	}
	raw, err := hexutil.Decode(params[0])
	if err != nil || len(raw) == 0 {
		return false, nil
	}
	want := crypto.Keccak256Hash(raw).Hex()
	got := ""
	if json.Unmarshal(result, &got) != nil {
		got = member(result, "transactionHash")
	}
	if got == "" {
		return false, nil
	}
	if strings.EqualFold(got, want) {
		return false, nil
	}
	return true, json.RawMessage(strconv.Quote(want))
}

// sendHash is keccak256 of a send's raw transaction ("" if unreadable).
func sendHash(params json.RawMessage) string {
	var p []string
	if json.Unmarshal(params, &p) != nil || len(p) == 0 {
		return ""
	}
	raw, err := hexutil.Decode(p[0])
	if err != nil || len(raw) == 0 {
		return ""
	}
	return crypto.Keccak256Hash(raw).Hex()
}

// blockKnown asks a provider whether it has the block with hash h (ok
// false when it could not tell).
func blockKnown(ctx context.Context, pool *upstream.Pool, h string) (known, ok bool) {
	if pool == nil {
		return false, false
	}
	items := []jsonrpc.Item{{Method: "eth_getBlockByHash", Params: json.RawMessage(`[` + strconv.Quote(h) + `,false]`), ID: json.RawMessage("0")}}
	body, err := jsonrpc.EncodeUpstream(items)
	if err != nil {
		return false, false
	}
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	res, err := pool.Forward(cctx, body, upstream.ForwardOptions{ProvidersOnly: true})
	if err != nil {
		return false, false
	}
	r, err := jsonrpc.MatchReplies(items, res.Body)
	if err != nil || r[0].Error != nil {
		return false, false
	}
	return !isNull(r[0].Result), true
}

// member reads a top-level string member of a JSON object ("" if absent).
func member(obj json.RawMessage, name string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[name], &s)
	return s
}

func quantity(r json.RawMessage) (uint64, bool) {
	var s string
	if json.Unmarshal(r, &s) != nil || len(s) < 3 || s[:2] != "0x" {
		return 0, false
	}
	n, err := strconv.ParseUint(s[2:], 16, 64)
	return n, err == nil
}
