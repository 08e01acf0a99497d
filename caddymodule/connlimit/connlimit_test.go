package connlimit

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestClientKey: IPv4 (also written IPv4-mapped) counts per address, IPv6 per
// /64, so one subscriber cannot dodge the cap by cycling through its prefix.
func TestClientKey(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"203.0.113.7:443", "203.0.113.7"},
		{"[::ffff:203.0.113.7]:443", "203.0.113.7"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:80", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:443", "2001:db8:1:3::/64"},
	} {
		a, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := clientKey(a); got != c.want {
			t.Errorf("%s counts as %q, want %q", c.addr, got, c.want)
		}
	}
}

// TestCapAtAccept: through a real TCP listener, the connection over the cap
// is closed at accept, a closed connection frees its slot once (closing it
// twice does not free two), and another address is not affected.
func TestCapAtAccept(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := (&Limit{PerIP: 2}).WrapListener(inner)
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	next := func() net.Conn {
		t.Helper()
		select {
		case c := <-accepted:
			return c
		case <-time.After(5 * time.Second):
			t.Fatal("no connection accepted")
			return nil
		}
	}

	a1, a2 := dial("127.0.0.1"), dial("127.0.0.1")
	s1, _ := next(), next()
	a3 := dial("127.0.0.1") // over the cap
	if !closedByServer(a3) {
		t.Fatal("the third connection of 127.0.0.1 was not closed")
	}
	b1 := dial("127.0.0.2") // another address has its own share
	next()
	if closedByServer(a1) || closedByServer(a2) || closedByServer(b1) {
		t.Fatal("a connection within the cap was closed")
	}

	_ = s1.Close()
	_ = s1.Close() // a second Close must not free a second slot
	dial("127.0.0.1")
	next()
	a5 := dial("127.0.0.1")
	if !closedByServer(a5) {
		t.Fatal("closing one connection twice freed two slots")
	}
}

func TestUnmarshalCaddyfile(t *testing.T) {
	var l Limit
	if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("tollgate_conn_limit {\n per_ip 64\n exempt 10.0.0.0/8 2001:db8::1\n}")); err != nil ||
		l.PerIP != 64 || len(l.Exempt) != 2 {
		t.Fatalf("%+v, %v", l, err)
	}
	for _, bad := range []string{
		"tollgate_conn_limit {\n per_ip 0\n}",
		"tollgate_conn_limit {\n per_ip -3\n}",
		"tollgate_conn_limit {\n per_ip many\n}",
		"tollgate_conn_limit {\n per_ip 1 2\n}",
		"tollgate_conn_limit {\n per_host 5\n}",
		"tollgate_conn_limit {\n exempt\n}",
		"tollgate_conn_limit {\n exempt 10.0.0.0/33\n}",
		"tollgate_conn_limit {\n exempt balancer.internal\n}",
		"tollgate_conn_limit 5",
	} {
		if err := new(Limit).UnmarshalCaddyfile(caddyfile.NewTestDispenser(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestCapSurvivesReload: a config reload wraps the same socket again while
// the old server's connections drain; they still count, and their release
// frees a slot under the new wrapper.
func TestCapSurvivesReload(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	old := (&Limit{PerIP: 2}).WrapListener(inner)
	var held []net.Conn
	for range 2 {
		dial()
		s, err := old.Accept() // the dial is queued: this does not block
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
	}

	// The reload: the old server stops accepting, the new one takes over.
	reloaded := (&Limit{PerIP: 2}).WrapListener(inner)
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := reloaded.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	if c3 := dial(); !closedByServer(c3) {
		t.Fatal("after a reload the cap started from zero: a third connection was kept")
	}
	_ = held[0].Close() // one of the old server's connections ends
	dial()
	select {
	case s := <-accepted:
		_ = s.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the slot freed by the old server's connection was not reusable")
	}
	_ = held[1].Close()
}

// closedByServer: the peer closed c (a read fails other than by timing out
// within half a second).
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:])
	ne, ok := err.(net.Error)
	return err != nil && !(ok && ne.Timeout())
}

// TestExempt: a load balancer's address listed under exempt is not capped
// (it carries many clients), every other address still is.
func TestExempt(t *testing.T) {
	l := &Limit{PerIP: 1, Exempt: []string{"127.0.0.2"}}
	p, err := parsePrefix(l.Exempt[0])
	if err != nil {
		t.Fatal(err)
	}
	l.exempt = []netip.Prefix{p}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := l.WrapListener(inner)
	defer ln.Close()
	go func() {
		for {
			if _, err := ln.Accept(); err != nil {
				return
			}
		}
	}()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	for i := range 5 {
		if c := dial("127.0.0.2"); closedByServer(c) {
			t.Fatalf("exempt connection %d closed", i+1)
		}
	}
	if c := dial("127.0.0.1"); closedByServer(c) {
		t.Fatal("first connection from 127.0.0.1 closed")
	}
	if c := dial("127.0.0.1"); !closedByServer(c) {
		t.Fatal("127.0.0.1 is not exempt but its second connection was not closed")
	}
}
