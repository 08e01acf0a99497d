package verify

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// DefaultSendGrace is how long after a node accepted a send the providers
// must know the transaction (pending or mined): a few blocks on any chain.
const DefaultSendGrace = 30 * time.Second

// sendsQueue bounds the sends waiting for their inclusion check.
const sendsQueue = 1024

// pendingSend is a send a node accepted, waiting to be looked for.
type pendingSend struct {
	job  Job
	k    int // the send's index in job.Calls
	hash string
	due  time.Time
}

// SendsBusy: the queue of inclusion checks is three quarters full. A send
// a node took now might find it full and go unchecked (a node that drops
// sends, helped by a flood of sends no provider would take, would drop
// callers' transactions unseen): while it is, sends go to providers only.
func (v *Verifier) SendsBusy() bool {
	return v != nil && len(v.sends) >= cap(v.sends)*3/4
}

// offerSend queues an accepted send for its inclusion check (dropped,
// counted, when the queue is full).
func (v *Verifier) offerSend(j Job, k int, hash string) {
	select {
	case v.sends <- pendingSend{job: j, k: k, hash: hash, due: time.Now().Add(v.cfg.SendGrace)}:
	default:
		metrics.Verifications.WithLabelValues("send_dropped").Inc()
	}
}

// runSends checks each accepted send once its grace has passed. The grace
// is the same for all, so the queue is in due order.
func (v *Verifier) runSends(ctx context.Context) {
	defer close(v.sendsDone)
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-v.sends:
			if d := time.Until(p.due); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
			v.checkInclusion(ctx, p)
		}
	}
}

// checkInclusion: a transaction a node accepted must be known to a provider
// (pending or mined) after the grace. If it is not, the raw transaction is
// offered to a provider: if the provider accepts it, it was valid and
// propagatable, so the node dropped it — evidence, and the caller's
// transaction is on its way after all. A provider refusing it (nonce used,
// underpriced, already known) proves nothing.
func (v *Verifier) checkInclusion(ctx context.Context, p pendingSend) {
	if _, q := p.job.Pool.Quarantined(p.job.Node.Name); q {
		return
	}
	call := &p.job.Calls[p.k]
	lookup := []jsonrpc.Item{{Method: "eth_getTransactionByHash", Params: json.RawMessage(`[` + strconv.Quote(p.hash) + `]`), ID: json.RawMessage("0")}}
	r, ok := v.ask(ctx, p.job.Pool, lookup)
	if !ok || r.Error != nil {
		metrics.Verifications.WithLabelValues("unjudged").Inc()
		return
	}
	if !isNull(r.Result) {
		metrics.Verifications.WithLabelValues("match").Inc()
		v.matched(p.job, call.Method)
		return
	}
	var params []json.RawMessage
	if json.Unmarshal(call.Params, &params) != nil || len(params) == 0 {
		return
	}
	if v.queued(ctx, p) {
		// A transaction whose nonce is beyond the sender's next one waits
		// in the node's queue (geth keeps such transactions to itself until
		// the gap is filled): not passing it on is what an honest node does.
		metrics.Verifications.WithLabelValues("send_queued").Inc()
		return
	}
	resend := []jsonrpc.Item{{Method: "eth_sendRawTransaction", Params: json.RawMessage(`[` + string(params[0]) + `]`), ID: json.RawMessage("0")}}
	r, ok = v.ask(ctx, p.job.Pool, resend)
	var got string
	if !ok || r.Error != nil || json.Unmarshal(r.Result, &got) != nil || !strings.EqualFold(got, p.hash) {
		metrics.Verifications.WithLabelValues("unjudged").Inc()
		return
	}
	metrics.Verifications.WithLabelValues("mismatch").Inc()
	v.cfg.Log.Warn("a node accepted a transaction no provider had seen after the grace; a provider took it on resend",
		zap.String("node", p.job.Node.Name), zap.String("tx", p.hash), zap.Duration("grace", v.cfg.SendGrace))
	v.Convict(p.job, call, Pin{Judge: evm.JudgeSend}, json.RawMessage(strconv.Quote(p.hash)),
		json.RawMessage(`{"found_after_grace":null,"provider_accepted_resend":`+strconv.Quote(got)+`}`), "inclusion", "")
}

// queued: the send's nonce is beyond its sender's next nonce as a provider
// sees it (pending transactions included), so an honest node keeps it in its
// queue without propagating it. A transaction that cannot be read or whose
// sender's nonce cannot be learnt counts as queued: nothing is proven.
func (v *Verifier) queued(ctx context.Context, p pendingSend) bool {
	raw := sendBytes(p.job.Calls[p.k].Params)
	var tx types.Transaction
	if len(raw) == 0 || tx.UnmarshalBinary(raw) != nil {
		return true
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), &tx)
	if err != nil {
		return true
	}
	items := []jsonrpc.Item{{Method: "eth_getTransactionCount", Params: json.RawMessage(`["` + from.Hex() + `","pending"]`), ID: json.RawMessage("0")}}
	r, ok := v.ask(ctx, p.job.Pool, items)
	if !ok || r.Error != nil {
		return true
	}
	next, ok := quantity(r.Result)
	return !ok || tx.Nonce() > next
}

// ask sends items to a provider and returns the first reply.
func (v *Verifier) ask(ctx context.Context, pool *upstream.Pool, items []jsonrpc.Item) (jsonrpc.Reply, bool) {
	body, err := jsonrpc.EncodeUpstream(items)
	if err != nil {
		return jsonrpc.Reply{}, false
	}
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	res, err := pool.Forward(cctx, body, upstream.ForwardOptions{ProvidersOnly: true, NoRetry: items[0].Method == "eth_sendRawTransaction"})
	if err != nil {
		return jsonrpc.Reply{}, false
	}
	rs, err := jsonrpc.MatchReplies(items, res.Body)
	if err != nil {
		return jsonrpc.Reply{}, false
	}
	return rs[0], true
}
