package upstream

import (
	"sync"
	"time"
)

// health is what the probes know about an upstream.
//
// Hysteresis (unhealthy after N consecutive failed probes, healthy again
// after M consecutive good ones) keeps one lost probe from dropping an
// upstream and one lucky probe from bringing a flapping one back. A wrong
// chain id is different: serving another chain's data is never acceptable,
// so it makes the upstream unhealthy at once and selection never uses it,
// not even as a last resort.
type health struct {
	mu         sync.Mutex
	probed     bool // at least one probe finished
	healthy    bool
	wrongChain bool
	reason     string // why unhealthy
	consecFail int
	consecOK   int
	head       uint64
	headAt     time.Time
	lagging    bool
	lag        uint64
}

type healthView struct {
	probed, healthy, wrongChain, lagging bool
	reason                               string
	head, lag                            uint64
	headAt                               time.Time
}

func newHealth(probing bool) *health {
	// Optimistic start: an upstream is healthy until probes say otherwise.
	// Until the first probe it is "unprobed", which selection ranks below
	// probed upstreams. With probing off there is nothing to wait for.
	return &health{healthy: true, probed: !probing}
}

func (h *health) view() healthView {
	h.mu.Lock()
	defer h.mu.Unlock()
	return healthView{
		probed: h.probed, healthy: h.healthy, wrongChain: h.wrongChain, lagging: h.lagging,
		reason: h.reason, head: h.head, lag: h.lag, headAt: h.headAt,
	}
}

// change describes a health transition worth logging.
type change struct {
	changed bool
	healthy bool
	reason  string
}

// probeOK records a probe that answered. chainOK is false when eth_chainId
// named another chain (reason says which).
func (h *health) probeOK(chainOK bool, reason string, head uint64, now time.Time, healthyAfter int) change {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probed = true
	if !chainOK {
		h.consecOK = 0
		h.consecFail++
		was := h.healthy
		h.healthy, h.wrongChain, h.reason = false, true, reason
		h.lagging = false
		return change{changed: was, healthy: false, reason: reason}
	}
	h.consecFail = 0
	h.consecOK++
	h.head, h.headAt = head, now
	if !h.healthy && h.consecOK >= healthyAfter {
		h.healthy, h.wrongChain, h.reason = true, false, ""
		return change{changed: true, healthy: true}
	}
	return change{}
}

// probeFailed records a probe that got no usable answer.
func (h *health) probeFailed(reason string, unhealthyAfter int) change {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probed = true
	h.consecOK = 0
	h.consecFail++
	if h.healthy && h.consecFail >= unhealthyAfter {
		h.healthy, h.reason = false, reason
		return change{changed: true, healthy: false, reason: reason}
	}
	if !h.healthy && !h.wrongChain {
		h.reason = reason
	}
	return change{}
}

// setLag compares the last head with the pool's reference head.
func (h *health) setLag(ref, threshold uint64) (lagging bool, changed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var lag uint64
	if h.probed && !h.wrongChain && h.head < ref {
		lag = ref - h.head
	}
	was := h.lagging
	h.lag = lag
	h.lagging = lag > threshold
	return h.lagging, h.lagging != was
}
