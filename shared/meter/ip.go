package meter

import "net/netip"

// Subjects names the free-tier identities of a caller's address: the
// address itself and its /24 for IPv4; the /64 and the /48 for IPv6, because
// one IPv6 subscriber is routinely given a whole /64 (often a /56 or /48)
// and could otherwise mint a fresh allowance per address. An IPv4-mapped
// IPv6 address counts as the IPv4 address it carries. An invalid address
// (no client IP known) shares one bucket, so it can never bypass the limits.
func Subjects(a netip.Addr) (ip, subnet string) {
	a = a.Unmap().WithZone("")
	switch {
	case a.Is4():
		return netip.PrefixFrom(a, 32).String(), mustPrefix(a, 24).String()
	case a.Is6():
		return mustPrefix(a, 64).String(), mustPrefix(a, 48).String()
	}
	return "invalid", "invalid"
}

func mustPrefix(a netip.Addr, bits int) netip.Prefix {
	p, err := a.Prefix(bits)
	if err != nil { // bits is always within the address length here
		return netip.PrefixFrom(a, a.BitLen())
	}
	return p
}
