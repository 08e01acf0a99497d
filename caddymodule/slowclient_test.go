package caddymodule_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowServers caps connections per address and keeps Caddy's own header
// timeout long, so what cuts a slow body is the tollgate handler's
// body_timeout (2 s here).
const slowServers = `servers {
		listener_wrappers {
			tollgate_conn_limit {
				per_ip 50
			}
		}
		timeouts {
			read_header 30s
		}
	}`

// rawRequest writes head (a request line and headers) on a fresh connection
// and returns the connection.
func rawRequest(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlowAndOversizedBodies: a body trickled one byte a second, and a
// chunked body that never ends, are cut at body_timeout with a JSON 408; a
// Content-Length over max_body is answered 413 at once, without a byte of
// the body.
func TestSlowAndOversizedBodies(t *testing.T) {
	e := startMeteredWith(t, meterOpts{free: 100}, slowServers, "body_timeout 2s")
	addr := strings.TrimPrefix(e.gw.URL(), "http://")

	for _, c := range []struct {
		name, head string
		piece      string
	}{
		{"trickled body", "POST /rpc HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", "{"},
		{"endless chunked body", "POST /rpc HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", "1\r\n{\r\n"},
		{"trickled REST body", "POST /api/keys HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", "{"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := rawRequest(t, addr, c.head)
			began := time.Now()
			stop := make(chan struct{})
			go func() { // a piece every second, until the server gives up
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Second):
					}
					if _, err := io.WriteString(conn, c.piece); err != nil {
						return
					}
				}
			}()
			defer close(stop)
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer within 10 s: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			took := time.Since(began)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "did not arrive within 2s") ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if took < 1500*time.Millisecond || took > 5*time.Second {
				t.Fatalf("cut after %v, want about 2 s", took)
			}
		})
	}

	t.Run("over-limit Content-Length", func(t *testing.T) {
		conn := rawRequest(t, addr, "POST /rpc HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n")
		began := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		// At once: before body_timeout (2 s) would have cut the request.
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "-32600") || time.Since(began) > 1900*time.Millisecond {
			t.Fatalf("%d after %v: %s", resp.StatusCode, time.Since(began), body)
		}
	})
}

// TestSlowlorisFromOneAddress: 5,000 connections held open from 127.0.0.1
// (each sends half a request line and nothing more) do not stop paid calls
// from 127.0.0.2; the listener closes every connection of 127.0.0.1 beyond
// its per-address cap at once.
func TestSlowlorisFromOneAddress(t *testing.T) {
	e := startMeteredWith(t, meterOpts{free: -1}, slowServers, "")
	secret, id := e.createKey(t)
	e.credit(t, id, 1_000_000)
	addr := strings.TrimPrefix(e.gw.URL(), "http://")

	const held = 5000
	conns := make([]net.Conn, 0, held)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}, Timeout: 5 * time.Second}
	for range held {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", len(conns), err)
		}
		_, _ = io.WriteString(c, "POST /rpc HTT")
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})

	// Paid calls from another address go through meanwhile.
	other := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	for i := range 20 {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, e.gw.URL()+"/rpc", strings.NewReader(blockNumber))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", secret)
		resp, err := other.Do(req)
		if err != nil {
			t.Fatalf("paid call %d from 127.0.0.2: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Tollgate-Payer") != "credits" {
			t.Fatalf("paid call %d from 127.0.0.2: %d %s", i, resp.StatusCode, body)
		}
	}

	// Of 127.0.0.1's connections, all but the cap were closed by the
	// server (EOF); the rest are still open.
	var closed, open atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			var b [1]byte
			if _, err := c.Read(b[:]); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					open.Add(1)
					return
				}
				closed.Add(1)
			}
		}()
	}
	wg.Wait()
	if open.Load() > 50 || closed.Load() < held-50 {
		t.Fatalf("%d held connections still open, %d closed; want at most the cap (50) open", open.Load(), closed.Load())
	}
	t.Logf("%d of %d held connections closed at accept, %d open (cap 50); 20 paid calls from another address all served",
		closed.Load(), held, open.Load())
}

// startMeteredWith is startMetered with a servers block and extra tollgate
// options.
func startMeteredWith(t *testing.T, o meterOpts, servers, extra string) *meterEnv {
	t.Helper()
	o.servers, o.extra = servers, extra
	return startMetered(t, o)
}

// TestSlowBodyOverHTTP2: behind TLS most clients speak HTTP/2, where one
// connection carries many streams and the deadline must cut the stream, not
// rely on the connection. A body trickled a byte a second on an h2c stream
// is cut at body_timeout with the same JSON 408.
func TestSlowBodyOverHTTP2(t *testing.T) {
	e := startMeteredWith(t, meterOpts{free: 100}, `servers {
		protocols h1 h2c
	}`, "body_timeout 2s")
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Protocols: &p}}

	pr, pw := io.Pipe()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			if _, err := io.WriteString(pw, "{"); err != nil {
				return
			}
			select {
			case <-stop:
				_ = pw.Close()
				return
			case <-time.After(time.Second):
			}
		}
	}()
	req, _ := http.NewRequest(http.MethodPost, e.gw.URL()+"/rpc", pr)
	req.Header.Set("Content-Type", "application/json")
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(began)
	if resp.ProtoMajor != 2 {
		t.Fatalf("spoke %s, want HTTP/2", resp.Proto)
	}
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "did not arrive within 2s") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if took < 1500*time.Millisecond || took > 5*time.Second {
		t.Fatalf("cut after %v, want about 2 s", took)
	}
	t.Logf("HTTP/2 stream cut after %v", took)
}
