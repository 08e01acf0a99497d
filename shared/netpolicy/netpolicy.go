// Package netpolicy decides which addresses a registered node — a stranger's
// endpoint — may be reached at. settlementd applies it when a node registers
// and the gateway applies it to every address it actually dials for a node,
// after DNS (so a host name re-pointed at the gateway's own network later is
// refused at the dial, not only at registration).
package netpolicy

import (
	"fmt"
	"net/netip"
)

// Policy refuses every address that is not a public unicast address, unless
// AllowPrivate (development and tests: loopback, private and link-local
// addresses allowed) or the address is in Allow (explicit exceptions, e.g.
// one test address, checked first).
type Policy struct {
	AllowPrivate bool
	Allow        []netip.Prefix
}

// refused are the ranges no node may be reached at, with the reason shown to
// operators. Loopback, private (RFC 1918, ULA) and link-local are checked
// with netip's predicates; these are the rest.
var refused = []struct {
	p   netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "in 0.0.0.0/8 (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT space"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation space"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking space"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation space"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation space"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240/4, broadcast)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation space"},
	{netip.MustParsePrefix("100::/64"), "discard-only space"},
	{netip.MustParsePrefix("2001::/32"), "Teredo (tunnels to arbitrary IPv4)"},
}

// embeddedV4 are IPv6 forms that carry an IPv4 address the packet ends up
// at: the embedded address is checked as well.
var embeddedV4 = []struct {
	p      netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("::ffff:0:0/96"), 12},  // IPv4-mapped
	{netip.MustParsePrefix("::/96"), 12},          // IPv4-compatible (deprecated)
	{netip.MustParsePrefix("64:ff9b::/96"), 12},   // NAT64 well-known prefix
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12}, // NAT64 local-use
	{netip.MustParsePrefix("2002::/16"), 2},       // 6to4
}

// Check returns nil when a may be dialled, else an error that says why not
// ("127.0.0.1 is loopback").
func (p Policy) Check(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("not an IP address")
	}
	a = a.WithZone("")
	for _, pr := range p.Allow {
		if pr.Contains(a.Unmap()) || pr.Contains(a) {
			return nil
		}
	}
	if why := p.reason(a); why != "" {
		return fmt.Errorf("%s is %s", a, why)
	}
	return nil
}

func (p Policy) reason(a netip.Addr) string {
	if a.Is6() && !a.IsLoopback() && !a.IsUnspecified() { // ::1 and :: are themselves, not ::/96 forms
		for _, e := range embeddedV4 {
			if e.p.Contains(a) {
				b := a.As16()
				v4 := netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))
				if why := p.reason(v4); why != "" {
					return why + " (as " + v4.String() + " inside " + e.p.String() + ")"
				}
				if e.p.Bits() == 96 && e.p.Addr() == netip.IPv6Unspecified() {
					// ::a.b.c.d reaches a.b.c.d only through obsolete
					// automatic tunnels; refuse the form outright.
					return "an IPv4-compatible IPv6 address"
				}
				return ""
			}
		}
	}
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast():
		return "multicast"
	case a.IsLoopback():
		if !p.AllowPrivate {
			return "loopback"
		}
	case a.IsLinkLocalUnicast():
		if !p.AllowPrivate {
			return "link-local"
		}
	case a.IsPrivate():
		if !p.AllowPrivate {
			return "private"
		}
	}
	for _, r := range refused {
		if r.p.Contains(a) {
			return r.why
		}
	}
	if !a.IsGlobalUnicast() && !(p.AllowPrivate && (a.IsLoopback() || a.IsLinkLocalUnicast())) {
		return "not a global unicast address"
	}
	return ""
}

// ParsePrefixes parses CIDRs (a bare address is its /32 or /128).
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("netpolicy: %q is neither a CIDR nor an address", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
