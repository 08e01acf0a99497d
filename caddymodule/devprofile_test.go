package caddymodule_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
)

// devSite is an open gateway (no Redis) listening on every interface, as
// Caddy does unless told to bind.
const devSite = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
:{PORT} {
	tollgate {
		metering off
		chain 137 {
			provider polygon-primary http://127.0.0.1:9
		}
	}
}
`

// nonLoopbackIP is an address of this machine that is not loopback: how a
// load balancer or a caller on the network reaches a deployed gateway.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatal("this machine has no non-loopback IPv4 address to reach the gateway on")
	return ""
}

// TestDevProfileOffLoopbackIsRefused: the dev profile (TOLLGATE_DEV=1)
// accepts money addresses whose keys are public; it is for make demo and the
// tests, on the machine's own loopback. A gateway that leaked it into a
// deployment must not serve: a request that arrives on a non-loopback
// address gets 503 dev_profile — /readyz included, so a balancer pulls the
// gateway — while loopback keeps working, and without the dev profile the
// same non-loopback request is served.
func TestDevProfileOffLoopbackIsRefused(t *testing.T) {
	ip := nonLoopbackIP(t)
	get := func(host string, port int, path string) (int, string) {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d%s", host, port, path))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	dev := caddyrun.Start(t, devSite, "TOLLGATE_DEV=1")
	for _, p := range []string{"/readyz", "/livez", "/rpc/health"} {
		if st, b := get("127.0.0.1", dev.Port, p); st != http.StatusOK {
			t.Errorf("dev profile, loopback %s: %d %s", p, st, b)
		}
		if st, b := get(ip, dev.Port, p); st != http.StatusServiceUnavailable || !strings.Contains(b, `"dev_profile"`) {
			t.Errorf("dev profile, reached on %s, %s: %d %s (want 503 dev_profile)", ip, p, st, b)
		}
	}
	if !strings.Contains(dev.Output(), "dev profile") {
		t.Errorf("no log line about the dev profile:\n%s", dev.Output())
	}
	prod := caddyrun.Start(t, devSite, "TOLLGATE_DEV=0")
	if st, b := get(ip, prod.Port, "/readyz"); st != http.StatusOK {
		t.Errorf("without the dev profile, reached on %s: %d %s", ip, st, b)
	}
}
