package verify

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
)

// syncReceiptWait bounds how long a provider is given to know a receipt a
// node answered eth_sendRawTransactionSync with, in block intervals: the
// caller waited for inclusion already, and a provider one block behind
// the node is normal.
const syncReceiptWait = 2

// JudgeSyncReceipts judges, before delivery, the receipts a node answered
// eth_sendRawTransactionSync with, by a provider's receipt of the same
// transaction. A send is never made twice, so a lie cannot be rerouted the
// way other screened answers are; but its receipt can be replaced by the
// provider's, and it must be before the caller sees it: the background
// checks run on a queue, and a node whose first flipped receipt is still
// queued would deliver a second. It returns the replies with every
// receipt unlike the provider's replaced by the provider's (the node
// convicted at the first proven lie), whether any was replaced and
// whether the node was convicted. A receipt no provider knows within
// syncReceiptWait block intervals is never delivered unjudged: the caller
// gets what an honest node says when its own wait runs out (EIP-7966's
// timeout, code 4, the transaction's hash as data, so the caller polls
// eth_getTransactionReceipt), the node earns nothing for it and the
// background check judges its receipt later. The wait is the part's, once: a batch of
// many sync sends whose receipts no provider has (a node that keeps them
// and makes receipts up) once waited syncReceiptWait intervals for each
// in turn, holding the caller until request_timeout and asking providers
// ~9 times per send; past the part's deadline each further send is asked
// about once.
func (v *Verifier) JudgeSyncReceipts(ctx context.Context, j Job) (replies []jsonrpc.Reply, replaced, convicted bool) {
	if v == nil {
		return j.Replies, false, false
	}
	bt := j.BlockTime
	if bt <= 0 {
		bt = 2 * time.Second
	}
	deadline := time.Now().Add(syncReceiptWait * bt)
	var out []jsonrpc.Reply
	for k := range j.Calls {
		if k >= len(j.Replies) || k >= len(j.Pins) || j.Pins[k].Judge != evm.JudgeSend || j.Calls[k].Method != "eth_sendRawTransactionSync" {
			continue
		}
		r := j.Replies[k]
		if r.Err != nil || r.Response.Error != nil || !isObject(r.Result) {
			continue
		}
		if lie, _ := CheckSend(&j.Calls[k], r.Result); lie {
			continue // a swapped hash: trust.Screen's, never delivered
		}
		h := sendHash(j.Calls[k].Params)
		if h == "" {
			continue
		}
		params := `["` + h + `"]`
		truth, ok := v.providerReceipt(ctx, j, params, bt, deadline)
		if !ok {
			if out == nil {
				out = append([]jsonrpc.Reply(nil), j.Replies...)
			}
			out[k].Result = nil
			out[k].Response.Error = syncTimeout(h)
			continue
		}
		call := jsonrpc.Item{Method: "eth_getTransactionReceipt", Params: json.RawMessage(params), ID: json.RawMessage("0")}
		pin := Pin{Judge: evm.JudgeFinal}
		jd := Judge(ctx, Case{Pool: j.Pool, Node: j.Node, BlockTime: j.BlockTime, Call: &call, Pin: pin, Answer: r, Trusted: truth.Reply, Finalized: j.Finalized})
		switch jd.Outcome {
		case Match:
			continue
		case Mismatch:
			v.Convict(j, &call, pin, AnswerOf(r), jd.Truth, truth.By, jd.Why)
			convicted = true
		default:
			// Unlike the provider's receipt, but no proven lie: it names a
			// block the provider never saw (an orphan, or made up). The
			// caller gets the provider's receipt, which is the chain as
			// the gateway knows it, never a receipt of a block no provider
			// has (a liar once hid a flipped status behind a made-up block
			// hash this way); the node earns nothing for it.
		}
		if out == nil {
			out = append([]jsonrpc.Reply(nil), j.Replies...)
		}
		out[k].Result = truth.Result
		out[k].Response.Error = nil
	}
	if out == nil {
		return j.Replies, false, false
	}
	return out, true, convicted
}

// errCodeSyncTimeout is EIP-7966's code for an eth_sendRawTransactionSync
// whose receipt did not come within the wait: the transaction was taken,
// and its hash (the error's data) is how the caller finds its receipt.
const errCodeSyncTimeout = 4

// syncTimeout is the error a caller gets instead of a receipt the
// providers could not confirm in time, as go-ethereum words its own.
func syncTimeout(hash string) *jsonrpc.Error {
	data, _ := json.Marshal(hash)
	return &jsonrpc.Error{Code: errCodeSyncTimeout,
		Message: "The transaction was added to the transaction pool but wasn't processed in time", Data: data}
}

// providerReply is a provider's answer and the provider's name.
type providerReply struct {
	jsonrpc.Reply
	By string
}

// providerReceipt asks a provider for a receipt, every quarter of a block
// interval bt, until it has one or the deadline has passed (once at
// least).
func (v *Verifier) providerReceipt(ctx context.Context, j Job, params string, bt time.Duration, deadline time.Time) (providerReply, bool) {
	for {
		r, by, ok := askProviderBy(ctx, j.Pool, "eth_getTransactionReceipt", params)
		if ok && r.Response.Error == nil && !isNull(r.Result) {
			return providerReply{Reply: r, By: by}, true
		}
		if time.Now().After(deadline) {
			return providerReply{}, false
		}
		t := time.NewTimer(bt / 4)
		select {
		case <-ctx.Done():
			t.Stop()
			return providerReply{}, false
		case <-t.C:
		}
	}
}
