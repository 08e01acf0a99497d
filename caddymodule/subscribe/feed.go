package subscribe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

type feedKey struct {
	chain  uint64
	kind   string
	filter string // canonical filter JSON (logs), "true" (full pending transactions) or ""
}

// feed is one upstream subscription and its subscribers. Its run goroutine
// owns the socket and every field below the mutex-guarded ones.
type feed struct {
	h    *Hub
	key  feedKey
	pool *upstream.Pool

	ctx    context.Context
	cancel context.CancelFunc

	ready    chan struct{} // closed once the first upstream accepted, or start failed
	startErr error         // set before ready is closed

	mu   sync.Mutex
	subs map[*Sub]struct{}
	cur  string // the upstream the feed is subscribed on now; "" while switching

	// newHeads: the last delivered head and the hashes of recent ones.
	lastHead uint64
	heads    map[uint64]string
	// logs: what was delivered (window), the highest block a delivered log
	// was in, and the head known covered when no log came.
	seen     map[string]struct{}
	seenRing []string
	seenNext int
	logTop   uint64
	covered  uint64
	// filling: notifications now come from a gap fill, delivered paced
	// (deliver waits for buffer room up to Config.FillPatience).
	filling bool
}

func newFeed(h *Hub, key feedKey, pool *upstream.Pool) *feed {
	ctx, cancel := context.WithCancel(context.Background())
	return &feed{h: h, key: key, pool: pool, ctx: ctx, cancel: cancel, ready: make(chan struct{}),
		subs: map[*Sub]struct{}{}, heads: map[uint64]string{}, seen: map[string]struct{}{}}
}

func (f *feed) connectedTo() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur, f.cur != ""
}

func (f *feed) setCurrent(name string) {
	f.mu.Lock()
	f.cur = name
	f.mu.Unlock()
}

func (f *feed) labels() []string { return []string{metrics.Chain(f.key.chain), f.key.kind} }

// run keeps the feed subscribed on some upstream until the feed is
// cancelled (last subscriber gone, or hub closed).
func (f *feed) run() {
	defer f.h.wg.Done()
	started := false
	defer func() {
		if !started {
			if f.startErr == nil {
				f.startErr = ErrHubClosed
			}
			f.endAll(f.startErr)
			close(f.ready)
		}
	}()
	log := f.h.log.With(zap.Uint64("chain_id", f.key.chain), zap.String("kind", f.key.kind))
	exclude := map[string]bool{}
	var rejected, lastErr error
	wait := f.h.cfg.RetryMin
	for f.ctx.Err() == nil {
		t, ok := f.pool.PickWS(exclude)
		if !ok {
			if !started {
				switch {
				case rejected != nil:
					f.startErr = rejected
				case lastErr != nil:
					f.startErr = fmt.Errorf("%w: %v", ErrNoUpstream, lastErr)
				default:
					f.startErr = ErrNoUpstream
				}
				f.h.dropFeed(f)
				return
			}
			// Every upstream with a ws URL failed lately: try them all
			// again after a pause; subscribers keep their Sub meanwhile.
			clear(exclude)
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, f.h.cfg.RetryMax)
			continue
		}
		ref := t.Ref()
		conn, subID, err := f.open(t)
		if err != nil {
			exclude[ref.Name] = true
			lastErr = err
			var re *RPCError
			if errors.As(err, &re) && !started {
				// The upstream refused the subscription itself; another
				// may offer it. If none does, say why.
				if re.Code == -32602 && f.key.kind == KindLogs {
					rejected = fmt.Errorf("%w: %v", ErrBadFilter, re)
				} else {
					rejected = fmt.Errorf("%w: %v", ErrKindNotOffered, re)
				}
			}
			log.Info("upstream subscription failed", zap.String("upstream", ref.Name), zap.Error(err))
			continue
		}
		metrics.UpstreamSubscriptions.WithLabelValues(f.labels()...).Inc()
		if started {
			metrics.UpstreamResubscriptions.WithLabelValues(f.labels()...).Inc()
			log.Info("upstream subscription moved", zap.String("upstream", ref.Name))
		}
		f.setCurrent(ref.Name)
		if !started {
			started = true
			close(f.ready)
		}
		wait = f.h.cfg.RetryMin
		err = f.stream(conn, subID, ref)
		f.setCurrent("")
		metrics.UpstreamSubscriptions.WithLabelValues(f.labels()...).Dec()
		if f.ctx.Err() != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.call(ctx, nil, "eth_unsubscribe", subID)
			cancel()
			conn.close()
			return
		}
		conn.fail(err)
		log.Warn("upstream subscription lost; moving it", zap.String("upstream", ref.Name), zap.Error(err))
		// The next round prefers any other upstream; this one comes back
		// only when nothing else is left.
		clear(exclude)
		exclude[ref.Name] = true
	}
}

// open dials t and subscribes.
func (f *feed) open(t upstream.WSTarget) (*rpcConn, string, error) {
	ctx, cancel := context.WithTimeout(f.ctx, f.h.cfg.CallTimeout)
	defer cancel()
	ws, err := t.Dial(ctx)
	if err != nil {
		return nil, "", err
	}
	conn := newRPCConn(ws, &f.h.cfg)
	params := []any{f.key.kind}
	switch f.key.kind {
	case KindLogs:
		params = append(params, json.RawMessage(f.key.filter))
	case KindPendingTxs:
		if f.key.filter == "true" {
			params = append(params, true)
		}
	}
	var id string
	if err := conn.call(ctx, &id, "eth_subscribe", params...); err != nil {
		conn.fail(err)
		return nil, "", err
	}
	if f.key.kind == KindLogs && f.covered == 0 && f.logTop == 0 {
		// Logs up to the head now are not this feed's; a later switch
		// fills from here.
		var head hexUint
		if err := conn.call(ctx, &head, "eth_blockNumber"); err != nil {
			conn.fail(err)
			return nil, "", err
		}
		f.covered = uint64(head)
	}
	return conn, id, nil
}

var errStalled = errors.New("no new head within the stall timeout")

// stream catches up on what the previous upstream may have missed, then
// passes notifications on until the socket fails or stalls or the feed ends.
func (f *feed) stream(conn *rpcConn, subID string, ref upstream.Ref) error {
	by := ref.ServedBy()
	if err := f.catchUp(conn, by); err != nil {
		return err
	}
	beat := f.h.cfg.stallAfter(f.key.chain)
	timer := time.NewTimer(beat)
	defer timer.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return nil
		case <-conn.done:
			return conn.err
		case <-timer.C:
			if f.key.kind == KindNewHeads {
				return errStalled
			}
			// logs and pending transactions may legitimately be quiet:
			// ask for the head instead, which also marks how far the
			// chain is covered for a later switch.
			ctx, cancel := context.WithTimeout(f.ctx, f.h.cfg.CallTimeout)
			var head hexUint
			err := conn.call(ctx, &head, "eth_blockNumber")
			cancel()
			if err != nil {
				if f.ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("upstream liveness check: %w", err)
			}
			if f.key.kind == KindLogs && uint64(head) > 2 {
				// A couple of blocks back: logs of the newest blocks may
				// still be on their way.
				f.covered = max(f.covered, uint64(head)-2)
			}
			timer.Reset(beat)
		case n := <-conn.notes:
			if n.sub != subID {
				continue
			}
			if err := f.handle(conn, n.result, by); err != nil {
				return err
			}
			if f.key.kind == KindNewHeads {
				if !timer.Stop() {
					select {
					case <-timer.C:
					default:
					}
				}
				timer.Reset(beat)
			}
		}
	}
}

// catchUp fills what happened between the last delivery and the new
// subscription (nothing on the first upstream).
func (f *feed) catchUp(conn *rpcConn, by events.ServedBy) error {
	switch {
	case f.key.kind == KindNewHeads && f.lastHead > 0:
		var head hexUint
		if err := f.call(conn, &head, "eth_blockNumber"); err != nil {
			return err
		}
		return f.fillHeads(conn, uint64(head), by)
	case f.key.kind == KindLogs && (f.logTop > 0 || f.covered > 0):
		f.filling = true
		defer func() { f.filling = false }()
		var head hexUint
		if err := f.call(conn, &head, "eth_blockNumber"); err != nil {
			return err
		}
		from := max(f.logTop, f.covered+1) // logTop again: the rest of its block's logs
		if uint64(head) < from {
			return nil
		}
		if uint64(head)-from+1 > f.h.cfg.MaxGapFill {
			from = uint64(head) - f.h.cfg.MaxGapFill + 1
		}
		var q map[string]any
		if err := json.Unmarshal([]byte(f.key.filter), &q); err != nil {
			return err
		}
		q["fromBlock"], q["toBlock"] = hexOf(from), hexOf(uint64(head))
		var logs []json.RawMessage
		if err := f.call(conn, &logs, "eth_getLogs", q); err != nil {
			return err
		}
		for _, l := range logs {
			if err := f.handle(conn, l, by); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *feed) call(conn *rpcConn, out any, method string, params ...any) error {
	ctx, cancel := context.WithTimeout(f.ctx, f.h.cfg.CallTimeout)
	defer cancel()
	return conn.call(ctx, out, method, params...)
}

// handle passes one notification on, after the kind's checks.
func (f *feed) handle(conn *rpcConn, result json.RawMessage, by events.ServedBy) error {
	switch f.key.kind {
	case KindNewHeads:
		var h struct {
			Number hexUint `json:"number"`
			Hash   string  `json:"hash"`
		}
		if err := json.Unmarshal(result, &h); err != nil {
			return fmt.Errorf("unreadable newHeads notification: %w", err)
		}
		n := uint64(h.Number)
		if f.lastHead > 0 {
			if n <= f.lastHead && f.heads[n] == h.Hash {
				return nil // delivered already (the new upstream is behind, or repeats)
			}
			if n > f.lastHead+1 {
				if err := f.fillHeads(conn, n-1, by); err != nil {
					return err
				}
			}
		}
		f.deliverHead(n, h.Hash, result, by)
	case KindLogs:
		var l struct {
			BlockHash   string  `json:"blockHash"`
			LogIndex    string  `json:"logIndex"`
			BlockNumber hexUint `json:"blockNumber"`
			Removed     bool    `json:"removed"`
		}
		if err := json.Unmarshal(result, &l); err != nil {
			return fmt.Errorf("unreadable logs notification: %w", err)
		}
		k := l.BlockHash + "/" + l.LogIndex + "/" + strconv.FormatBool(l.Removed)
		if _, dup := f.seen[k]; dup {
			return nil
		}
		f.remember(k)
		if !l.Removed {
			f.logTop = max(f.logTop, uint64(l.BlockNumber))
		}
		f.deliver(Notification{Result: result, ServedBy: by})
	default:
		f.deliver(Notification{Result: result, ServedBy: by})
	}
	return nil
}

// fillHeads delivers the heads after the last delivered one up to upto,
// read with eth_getBlockByNumber and shaped as newHeads notifications.
func (f *feed) fillHeads(conn *rpcConn, upto uint64, by events.ServedBy) error {
	from := f.lastHead + 1
	if upto >= from && upto-from+1 > f.h.cfg.MaxGapFill {
		from = upto - f.h.cfg.MaxGapFill + 1
		f.h.log.Warn("newHeads gap longer than max_gap_fill; resuming near the head",
			zap.Uint64("chain_id", f.key.chain), zap.Uint64("from", f.lastHead+1), zap.Uint64("resume", from))
	}
	f.filling = true
	defer func() { f.filling = false }()
	for n := from; n <= upto; n++ {
		var block map[string]json.RawMessage
		if err := f.call(conn, &block, "eth_getBlockByNumber", hexOf(n), false); err != nil {
			return fmt.Errorf("gap fill of block %d: %w", n, err)
		}
		if block == nil {
			return fmt.Errorf("gap fill: upstream has no block %d", n)
		}
		// A newHeads notification is the header: the block without its
		// body and the fields computed from it.
		for _, k := range []string{"transactions", "uncles", "size", "withdrawals", "totalDifficulty"} {
			delete(block, k)
		}
		raw, err := json.Marshal(block)
		if err != nil {
			return err
		}
		var hash string
		_ = json.Unmarshal(block["hash"], &hash)
		f.deliverHead(n, hash, raw, by)
	}
	return nil
}

// headWindow is how many recent head hashes are kept to recognise a repeat.
const headWindow = 256

func (f *feed) deliverHead(n uint64, hash string, raw json.RawMessage, by events.ServedBy) {
	if n < f.lastHead {
		// A reorg back to n: forget the abandoned heads above it.
		for k := range f.heads {
			if k > n {
				delete(f.heads, k)
			}
		}
	}
	f.lastHead = n
	f.heads[n] = hash
	if n > headWindow {
		delete(f.heads, n-headWindow)
	}
	f.deliver(Notification{Result: raw, ServedBy: by})
}

func (f *feed) remember(k string) {
	w := f.h.cfg.LogWindow
	if len(f.seenRing) < w {
		f.seenRing = append(f.seenRing, k)
	} else {
		delete(f.seen, f.seenRing[f.seenNext])
		f.seenRing[f.seenNext] = k
		f.seenNext = (f.seenNext + 1) % w
	}
	f.seen[k] = struct{}{}
}

// deliver offers n to every subscriber without waiting: a full buffer ends
// that subscriber with ErrSlowReader.
func (f *feed) deliver(n Notification) {
	metrics.UpstreamNotifications.WithLabelValues(f.labels()...).Inc()
	n.Credit = new(Credit) // one upstream message: its upstream earns once
	if f.filling {
		f.awaitRoom()
	}
	f.mu.Lock()
	dropped := false
	for s := range f.subs {
		select {
		case s.ch <- n:
		default:
			delete(f.subs, s)
			s.end(ErrSlowReader)
			dropped = true
		}
	}
	f.mu.Unlock()
	if dropped {
		f.h.release(f)
	}
}

// awaitRoom waits, up to Config.FillPatience, until every subscriber's
// buffer has room: a gap fill comes as a burst, and a reader that keeps up
// with live heads must not be taken for a slow one because of it.
func (f *feed) awaitRoom() {
	deadline := time.Now().Add(f.h.cfg.FillPatience)
	for {
		f.mu.Lock()
		full := false
		for s := range f.subs {
			if len(s.ch) == cap(s.ch) {
				full = true
				break
			}
		}
		f.mu.Unlock()
		if !full || time.Now().After(deadline) || f.ctx.Err() != nil {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// endAll ends every subscriber with err.
func (f *feed) endAll(err error) {
	f.mu.Lock()
	for s := range f.subs {
		delete(f.subs, s)
		s.end(err)
	}
	f.mu.Unlock()
}

// dropFeed forgets f (its start failed).
func (h *Hub) dropFeed(f *feed) {
	h.mu.Lock()
	if h.feeds[f.key] == f {
		delete(h.feeds, f.key)
	}
	h.mu.Unlock()
}

// hexUint reads a 0x quantity.
type hexUint uint64

func (u *hexUint) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ethparse.Quantity(s)
	*u = hexUint(v)
	return err
}

func hexOf(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }
