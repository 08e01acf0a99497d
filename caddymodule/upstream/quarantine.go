package upstream

import "sync"

// quarantine holds the upstreams taken out of traffic because one of their
// answers was proven wrong (a registered node answering a deterministic
// question unlike a trusted provider). It is kept by name at the pool, not
// on the member, so a refresh of the node set cannot bring a quarantined
// node back; only Unquarantine (an operator's review) does.
type quarantine struct {
	mu     sync.RWMutex
	reason map[string]string
}

func (q *quarantine) of(name string) (string, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	r, ok := q.reason[name]
	return r, ok
}

// Quarantine stops every call to the named upstream, selection and Only
// alike, until Unquarantine. It reports whether the upstream was not
// quarantined already (the first proof is the one recorded).
func (p *Pool) Quarantine(name, reason string) bool {
	p.quarantined.mu.Lock()
	defer p.quarantined.mu.Unlock()
	if _, ok := p.quarantined.reason[name]; ok {
		return false
	}
	if p.quarantined.reason == nil {
		p.quarantined.reason = map[string]string{}
	}
	p.quarantined.reason[name] = reason
	p.resetTrust(name)
	return true
}

// resetTrust puts the named node back at the start of probation: a node
// proven wrong, or lifted after review, earns its standing again.
func (p *Pool) resetTrust(name string) {
	if m := p.member(name); m != nil && m.up.Kind == KindNode {
		m.trust.Store(newTrust(&p.cfg.Trust))
	}
}

// Unquarantine returns the named upstream to traffic; false if it was not
// quarantined.
func (p *Pool) Unquarantine(name string) bool {
	p.quarantined.mu.Lock()
	defer p.quarantined.mu.Unlock()
	if _, ok := p.quarantined.reason[name]; !ok {
		return false
	}
	delete(p.quarantined.reason, name)
	p.resetTrust(name)
	return true
}

// Quarantined reports whether the named upstream is quarantined, and why.
func (p *Pool) Quarantined(name string) (reason string, ok bool) { return p.quarantined.of(name) }
