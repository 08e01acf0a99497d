package httpx

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP is the caller's address as settlementd can know it. settlementd
// listens behind the gateway's Caddy (its reverse_proxy passes settlementd's
// routes on), so the TCP peer is the proxy; when the peer is loopback or a
// private address, the last X-Forwarded-For entry is the caller: the
// shipped Caddyfiles set it to the gateway's client IP (header_up
// X-Forwarded-For {client_ip}), the address every gateway limit counts
// under, also behind a load balancer (docs/client-address.md). A peer on a
// public address is the caller itself, whatever headers it sends.
func ClientIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	if peer.IsLoopback() || peer.IsPrivate() {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if a, err := netip.ParseAddr(strings.TrimSpace(parts[len(parts)-1])); err == nil {
				return a.Unmap()
			}
		}
	}
	return peer
}

// ClientNet is the unit per-client limits count under: the IPv4 address, or
// the IPv6 /64 (one subscriber's usual allocation).
func ClientNet(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
