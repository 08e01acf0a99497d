package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// The probe asks every upstream for eth_chainId and eth_blockNumber, in one
// batch when the upstream takes batches.
//
// Probes feed health, lag and latency, but NOT the breaker. The breaker
// answers "is the traffic we send this upstream failing?", and only real
// calls can answer that. A probe is a different, trivial call (eth_chainId
// is often answered from a cache in front of the node), so:
//   - probe successes would reset the breaker's consecutive-failure count
//     every few seconds and keep it from ever opening while real calls
//     (heavier methods) keep failing; they could also take the single
//     half-open trial slot and close the breaker without one real call
//     having worked;
//   - probe failures would open breakers on their own schedule; that
//     signal already goes through health (N failures in a row).
//
// Each mechanism gates selection on its own; an upstream must pass both.
var (
	probeBatch       = []byte(`[{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}]`)
	probeChainID     = []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`)
	probeBlockNumber = []byte(`{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}`)
)

const (
	probeMaxBytes    = 64 << 10
	probeConcurrency = 16 // bounds the goroutines and sockets of one round
)

func (p *Pool) probeLoop() {
	t := time.NewTicker(p.cfg.ProbeInterval)
	defer t.Stop()
	newOnly := false
	for {
		p.probeRound(p.ctx, newOnly)
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
			newOnly = false
		case <-p.kick:
			// SetNodes added nodes: do not leave them unprobed for a whole
			// interval. Only they are probed: the others keep their rhythm,
			// and a node a caller has probed meanwhile (ProbeNow) is not
			// probed a second time by a round that started before it.
			newOnly = true
		}
	}
}

// ProbeNow probes every upstream once and waits for the answers. The loop
// does this on its own; ProbeNow is for a caller that wants fresh health
// before serving (and for tests). It returns early when ctx ends or the
// pool is destroyed.
func (p *Pool) ProbeNow(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	p.probeRound(ctx, false)
}

// probeRound probes the members (only those never probed when newOnly)
// and waits for the answers.
func (p *Pool) probeRound(ctx context.Context, newOnly bool) {
	sem := make(chan struct{}, probeConcurrency)
	var wg sync.WaitGroup
	for _, m := range p.list() {
		if newOnly && !m.probed.CompareAndSwap(false, true) {
			continue
		}
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			p.probeOne(ctx, m)
		})
	}
	wg.Wait()
	if ctx.Err() == nil {
		p.updateLag()
	}
}

type probeResult struct {
	chainID, head uint64
	latency       time.Duration
	err           string // redacted; empty on success
	limited       bool
	retryAfter    time.Duration
}

func (p *Pool) probeOne(ctx context.Context, m *member) {
	m.probed.Store(true)
	pctx, cancel := context.WithTimeout(ctx, p.cfg.ProbeTimeout)
	defer cancel()
	r := p.probeCall(pctx, m)
	if ctx.Err() != nil {
		return // shutting down: the outcome says nothing about m
	}
	now := time.Now()
	switch {
	case r.limited:
		// Throttled, not broken: back off, leave health alone.
		m.backOff(r.retryAfter, now)
		m.stats.noteError("probe: rate limited", now)
	case r.err != "":
		m.stats.noteError("probe: "+r.err, now)
		p.logHealth(m, m.health.probeFailed(r.err, p.cfg.UnhealthyAfter))
	default:
		m.stats.observe(r.latency)
		chainOK := r.chainID == p.cfg.ChainID
		reason := ""
		if !chainOK {
			reason = fmt.Sprintf("wrong chain id %d, pool serves %d", r.chainID, p.cfg.ChainID)
			m.stats.noteError("probe: "+reason, now)
		}
		p.logHealth(m, m.health.probeOK(chainOK, reason, r.head, now, p.cfg.HealthyAfter))
		if chainOK {
			if p.cfg.FinalizedTag && m.up.Kind == KindProvider {
				p.probeFinalized(pctx, m)
			}
			p.probeCapabilities(pctx, m, now)
			p.probeLogsRange(pctx, m, r.head, now)
		}
	}
}

func (p *Pool) logHealth(m *member, c change) {
	if !c.changed {
		return
	}
	if c.healthy {
		p.log.Info("upstream healthy", zap.Object("upstream", m.up))
	} else {
		p.log.Warn("upstream unhealthy", zap.Object("upstream", m.up), zap.String("reason", c.reason))
	}
}

func (p *Pool) probeCall(ctx context.Context, m *member) probeResult {
	if !m.noBatch.Load() {
		x := m.post(ctx, probeBatch, probeMaxBytes)
		r, items, batch := p.probeExchange(ctx, m, x)
		if r.err != "" || r.limited {
			return r
		}
		if batch {
			return p.probeAnswers(m, r, items)
		}
		// An object in answer to a batch: the upstream does not take
		// batches (some provider plans). Ask one call at a time from now on.
		m.noBatch.Store(true)
	}
	var r probeResult
	var items []probeItem
	for _, body := range [][]byte{probeChainID, probeBlockNumber} {
		x := m.post(ctx, body, probeMaxBytes)
		one, got, _ := p.probeExchange(ctx, m, x)
		if one.err != "" || one.limited {
			return one
		}
		r.latency += one.latency
		items = append(items, got...)
	}
	return p.probeAnswers(m, r, items)
}

type probeItem struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// probeExchange checks the HTTP side of a probe and decodes the body; batch
// says whether it was a JSON array.
func (p *Pool) probeExchange(ctx context.Context, m *member, x exchange) (r probeResult, items []probeItem, batch bool) {
	r.latency = x.latency
	switch {
	case x.err != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.err = "timeout after " + p.cfg.ProbeTimeout.String()
		} else {
			r.err = m.describe(x.err)
		}
		return
	case x.tooLarge:
		r.err = "reply too large"
		return
	case x.status == http.StatusTooManyRequests:
		r.limited, r.retryAfter = true, p.backoffFor(x.header)
		return
	case x.status < 200 || x.status > 299:
		r.err = fmt.Sprintf("HTTP %d", x.status)
		return
	}
	body := bytes.TrimLeft(x.body, " \t\r\n")
	var err error
	switch {
	case len(body) > 0 && body[0] == '[':
		batch = true
		err = json.Unmarshal(body, &items)
	case len(body) > 0 && body[0] == '{':
		var it probeItem
		if err = json.Unmarshal(body, &it); err == nil {
			items = []probeItem{it}
		}
	default:
		err = errors.New("not JSON")
	}
	if err != nil {
		r.err = "reply is not valid JSON"
	}
	return
}

// probeAnswers reads eth_chainId (id 1) and eth_blockNumber (id 2).
func (p *Pool) probeAnswers(m *member, r probeResult, items []probeItem) probeResult {
	var haveChain, haveHead bool
	for _, it := range items {
		method := map[string]string{"1": "eth_chainId", "2": "eth_blockNumber"}[string(it.ID)]
		if method == "" {
			continue
		}
		if it.Error != nil {
			if p.cfg.Classifier(*it.Error) == VerdictRateLimited {
				r.limited, r.retryAfter = true, p.cfg.RateLimitBackoff
				return r
			}
			r.err = m.red.redact(fmt.Sprintf("%s: JSON-RPC error %d: %s", method, it.Error.Code, truncate(it.Error.Message, 200)))
			return r
		}
		v, err := hexQuantity(it.Result)
		if err != nil {
			r.err = fmt.Sprintf("%s: %v", method, err)
			return r
		}
		if method == "eth_chainId" {
			r.chainID, haveChain = v, true
		} else {
			r.head, haveHead = v, true
		}
	}
	if !haveChain || !haveHead {
		r.err = "probe reply lacks eth_chainId or eth_blockNumber answer"
	}
	return r
}

// hexQuantity reads a probe answer's quantity (eth_chainId,
// eth_blockNumber, the finalized block's number) with ethparse.Quantity,
// the one quantity reader: 0x or 0X, leading zeros taken, 64 bits. The
// value is all the probe needs (which chain, how far behind); judging a
// node's spelling is verify's.
func hexQuantity(raw json.RawMessage) (uint64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, errors.New("result is not a hex string")
	}
	v, err := ethparse.Quantity(s)
	if err != nil {
		return 0, fmt.Errorf("result %q is not a hex quantity", truncate(s, 40))
	}
	return v, nil
}

// updateLag recomputes the reference head and every upstream's lag.
//
// The reference head is the highest head among healthy providers when any
// provider has one, and the highest among healthy nodes only when no
// provider does. Nodes are paid by the calls they serve; if any node's
// claim counted, a node reporting a made-up head far ahead would mark every
// other upstream as lagging and draw all traffic to itself. Providers are
// configured by us and trusted. Wrong-chain upstreams never count.
func (p *Pool) updateLag() {
	ms := p.list()
	var provHead, nodeHead uint64
	provKnown := false
	for _, m := range ms {
		h := m.health.view()
		if !h.probed || !h.healthy || h.wrongChain || h.headAt.IsZero() {
			continue
		}
		if m.up.Kind == KindProvider {
			provHead, provKnown = max(provHead, h.head), true
		} else {
			nodeHead = max(nodeHead, h.head)
		}
	}
	ref := nodeHead
	if provKnown {
		ref = provHead
	}
	p.refHead.Store(ref)
	if p.cfg.FinalizedTag {
		// Only providers' word counts: a node claiming a high finalized
		// block would make the cache keep answers that may still change.
		var fin uint64
		for _, m := range ms {
			if h := m.health.view(); m.up.Kind == KindProvider && h.healthy && !h.wrongChain {
				fin = max(fin, m.finalized.Load())
			}
		}
		p.finalHead.Store(min(fin, ref))
	}
	for _, m := range ms {
		if lagging, changed := m.health.setLag(ref, p.cfg.LagThreshold); changed {
			p.log.Info("upstream lag changed", zap.Object("upstream", m.up), zap.Bool("lagging", lagging), zap.Uint64("reference_head", ref))
		}
	}
}

// backoffFor is how long to pass over an upstream that answered 429:
// Retry-After (seconds or an HTTP date) when given, capped, else the default.
func (p *Pool) backoffFor(h http.Header) time.Duration {
	d := p.cfg.RateLimitBackoff
	if ra := h.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && secs > 0 {
			d = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil && time.Until(t) > 0 {
			d = time.Until(t)
		}
	}
	return min(d, p.cfg.MaxRateLimitBackoff)
}

var probeFinalizedBody = []byte(`{"jsonrpc":"2.0","id":3,"method":"eth_getBlockByNumber","params":["finalized",false]}`)

// probeFinalized asks a provider for the chain's "finalized" block (chains
// whose finality is the tag). A failure leaves the last answer: it only
// delays what the cache may keep.
func (p *Pool) probeFinalized(ctx context.Context, m *member) {
	x := m.post(ctx, probeFinalizedBody, probeMaxBytes)
	r, items, _ := p.probeExchange(ctx, m, x)
	if r.err != "" || r.limited || len(items) != 1 || items[0].Error != nil {
		return
	}
	var b struct {
		Number json.RawMessage `json:"number"`
	}
	if json.Unmarshal(items[0].Result, &b) != nil || b.Number == nil {
		return
	}
	if n, err := hexQuantity(b.Number); err == nil {
		m.finalized.Store(n)
	}
}
