package upstream

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
)

// quarantine holds the upstreams taken out of traffic because one of their
// answers was proven wrong (a registered node answering a deterministic
// question unlike a trusted provider). It is kept by name at the pool, not
// on the member, so a refresh of the node set cannot bring a quarantined
// node back; only Unquarantine (an operator's review) does.
//
// It follows the endpoint's host too: a liar that registers its endpoint
// again under a new node id (or a second id on the same host) is
// quarantined with it. A host is its name (or public IP) — a new port on
// the same machine is the same host; loopback and private addresses (only
// reachable with allow_private_nodes, development) are told apart by port
// as well, since every local test node shares one.
type quarantine struct {
	mu     sync.RWMutex
	reason map[string]string
	hosts  map[string]string // endpoint host → the quarantined node's name
	lifted []string          // names lifted since TakeLifted (the gateway deletes their shared records)
}

func (q *quarantine) of(name string) (string, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	r, ok := q.reason[name]
	return r, ok
}

// ofHost: the quarantined node whose host this is.
func (q *quarantine) ofHost(host string) (string, bool) {
	if host == "" {
		return "", false
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	n, ok := q.hosts[host]
	return n, ok
}

// endpointHost is the host quarantine follows for a node's URL, in one
// canonical spelling: a name lower-cased without the root's trailing dot,
// an address in netip's form (IPv4-mapped IPv6 unmapped, IPv6 compressed,
// zone dropped). Otherwise a liar re-registering the same endpoint as
// NODE.example.com, node.example.com., [::ffff:203.0.113.7] or an
// uncompressed IPv6 address would be a new host. Names are not resolved
// here (no lookups on the request path): another name of the same machine
// is bound by the registration proof and the wallet penalty instead.
func endpointHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	h := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
	if h == "" {
		return ""
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return h
	}
	a = a.Unmap().WithZone("")
	if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsLinkLocalUnicast() {
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "wss": "443"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		return net.JoinHostPort(a.String(), port)
	}
	return a.String()
}

// isQuarantined: m by its name, or (a node) by its endpoint's host.
func (p *Pool) isQuarantined(m *member) bool {
	if _, q := p.quarantined.of(m.up.Name); q {
		return true
	}
	if m.up.Kind != KindNode {
		return false
	}
	_, q := p.quarantined.ofHost(endpointHost(m.url))
	return q
}

// Quarantine stops every call to the named upstream, selection and Only
// alike, and to every node on the same endpoint host, until Unquarantine.
// It reports whether the upstream was not quarantined already (the first
// proof is the one recorded). The node's wallet goes back to the start of
// probation, penalised (TrustConfig.PenaltyFactor).
func (p *Pool) Quarantine(name, reason string) bool {
	p.quarantined.mu.Lock()
	if _, ok := p.quarantined.reason[name]; ok {
		p.quarantined.mu.Unlock()
		return false
	}
	if p.quarantined.reason == nil {
		p.quarantined.reason = map[string]string{}
		p.quarantined.hosts = map[string]string{}
	}
	p.quarantined.reason[name] = reason
	if m := p.member(name); m != nil && m.up.Kind == KindNode {
		if h := endpointHost(m.url); h != "" {
			p.quarantined.hosts[h] = name
		}
	}
	p.quarantined.mu.Unlock()
	// Outside the lock: the reset counts the wallet's nodes that are not
	// quarantined (a reader of the same lock).
	p.resetTrust(name, true)
	return true
}

// resetTrust puts the named node's wallet back at the start of probation
// (penalised after a quarantine): a wallet proven wrong, or lifted after
// review, earns its standing again. Every node of the wallet shares the
// new standing.
func (p *Pool) resetTrust(name string, penalty bool) {
	m := p.member(name)
	if m == nil || m.up.Kind != KindNode {
		return
	}
	if p.cfg.Trust.Off { // no standings: each node trusted on its own
		m.trust.Store(newTrust(&p.cfg.Trust, false))
		return
	}
	key := operatorKey(m.up)
	p.standing.mu.Lock()
	old := p.standing.m[key]
	t := newTrust(&p.cfg.Trust, penalty)
	if old != nil {
		old.mu.Lock()
		t.gen, t.penalty = old.gen+1, penalty || old.penalty
		old.mu.Unlock()
	} else {
		t.gen = 1
	}
	t.dirty = true
	if p.standing.m == nil {
		p.standing.m = map[string]*trust{}
	}
	p.standing.m[key] = t
	p.standing.mu.Unlock()
	for _, o := range p.list() {
		if o.up.Kind == KindNode && operatorKey(o.up) == key {
			o.trust.Store(t)
		}
	}
	p.countWalletNodes(p.list())
}

// Unquarantine returns the named upstream (and its host) to traffic; false
// if it was not quarantined. Its wallet keeps the penalty: a lift restores
// traffic, not standing.
func (p *Pool) Unquarantine(name string) bool {
	p.quarantined.mu.Lock()
	if _, ok := p.quarantined.reason[name]; !ok {
		p.quarantined.mu.Unlock()
		return false
	}
	delete(p.quarantined.reason, name)
	p.quarantined.lifted = append(p.quarantined.lifted, name)
	for h, n := range p.quarantined.hosts {
		if n == name {
			delete(p.quarantined.hosts, h)
		}
	}
	p.quarantined.mu.Unlock()
	p.resetTrust(name, false)
	return true
}

// Quarantined reports whether the named upstream is quarantined — itself,
// or by its endpoint's host — and why.
func (p *Pool) Quarantined(name string) (reason string, ok bool) {
	if r, ok := p.quarantined.of(name); ok {
		return r, true
	}
	if m := p.member(name); m != nil && m.up.Kind == KindNode {
		if n, ok := p.quarantined.ofHost(endpointHost(m.url)); ok {
			r, _ := p.quarantined.of(n)
			return "same endpoint host as quarantined node " + n + ": " + r, true
		}
	}
	return "", false
}

// QuarantinedNodes lists the pool's quarantined names and reasons (the
// gateway shares them with every other gateway through Redis).
func (p *Pool) QuarantinedNodes() map[string]string {
	p.quarantined.mu.RLock()
	defer p.quarantined.mu.RUnlock()
	out := make(map[string]string, len(p.quarantined.reason))
	for n, r := range p.quarantined.reason {
		out[n] = r
	}
	return out
}

// TakeLifted returns the names lifted by Unquarantine since the last call.
func (p *Pool) TakeLifted() []string {
	p.quarantined.mu.Lock()
	defer p.quarantined.mu.Unlock()
	out := p.quarantined.lifted
	p.quarantined.lifted = nil
	return out
}
