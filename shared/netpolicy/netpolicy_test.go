package netpolicy

import (
	"net/netip"
	"strings"
	"testing"
)

func TestPolicy(t *testing.T) {
	strict := Policy{}
	dev := Policy{AllowPrivate: true}
	allow, err := ParsePrefixes([]string{"127.0.0.2", "10.9.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	withAllow := Policy{Allow: allow}
	for _, c := range []struct {
		addr            string
		strict, dev, al string // "" allowed, else a word of the reason
	}{
		{"8.8.8.8", "", "", ""},
		{"2606:4700::1111", "", "", ""},
		{"127.0.0.1", "loopback", "", "loopback"},
		{"127.0.0.2", "loopback", "", ""},
		{"::1", "loopback", "", "loopback"},
		{"10.1.2.3", "private", "", "private"},
		{"10.9.3.4", "private", "", ""},
		{"172.16.0.1", "private", "", "private"},
		{"192.168.1.1", "private", "", "private"},
		{"fd00::1", "private", "", "private"},
		{"169.254.169.254", "link-local", "", "link-local"},
		{"fe80::1", "link-local", "", "link-local"},
		{"0.0.0.0", "unspecified", "unspecified", "unspecified"},
		{"::", "unspecified", "unspecified", "unspecified"},
		{"0.1.2.3", "this network", "this network", "this network"},
		{"224.0.0.1", "multicast", "multicast", "multicast"},
		{"ff02::1", "multicast", "multicast", "multicast"},
		{"255.255.255.255", "broadcast", "broadcast", "broadcast"},
		{"100.64.1.1", "carrier-grade", "carrier-grade", "carrier-grade"},
		{"192.0.2.1", "documentation", "documentation", "documentation"},
		{"198.18.0.1", "benchmarking", "benchmarking", "benchmarking"},
		{"2001:db8::1", "documentation", "documentation", "documentation"},
		{"::ffff:127.0.0.1", "loopback", "", "loopback"},
		{"::ffff:8.8.8.8", "", "", ""},
		{"::127.0.0.1", "loopback", "IPv4-compatible", "loopback"},
		{"::8.8.8.8", "IPv4-compatible", "IPv4-compatible", "IPv4-compatible"},
		{"64:ff9b::a9fe:a9fe", "link-local", "", "link-local"},
		{"64:ff9b::808:808", "", "", ""},
		{"2002:7f00:1::1", "loopback", "", "loopback"},
		{"2001:0:4136:e378::1", "Teredo", "Teredo", "Teredo"},
	} {
		a := netip.MustParseAddr(c.addr)
		for name, pc := range map[string]struct {
			p    Policy
			want string
		}{"strict": {strict, c.strict}, "dev": {dev, c.dev}, "allow-list": {withAllow, c.al}} {
			err := pc.p.Check(a)
			switch {
			case pc.want == "" && err != nil:
				t.Errorf("%s %s: refused (%v), want allowed", name, c.addr, err)
			case pc.want != "" && (err == nil || !strings.Contains(err.Error(), pc.want)):
				t.Errorf("%s %s: %v, want refused as %q", name, c.addr, err, pc.want)
			}
		}
	}
	if _, err := ParsePrefixes([]string{"nope"}); err == nil {
		t.Fatal("a bad CIDR parsed")
	}
}
