package caddymodule_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOddBodyFraming: Content-Length and Transfer-Encoding combinations a
// client can send on purpose. Each gets its documented answer within a
// second — no 500, no hang, no crash — and the gateway serves the next
// caller. Framing that net/http refuses before any handler runs gets its
// plain-text 400 (or 501 for a transfer coding it does not implement); what
// reaches the tollgate handler gets a JSON body.
func TestOddBodyFraming(t *testing.T) {
	e := startMeteredWith(t, meterOpts{free: 100}, slowServers, "body_timeout 2s\n\t\t\tmax_body 4KiB")
	addr := strings.TrimPrefix(e.gw.URL(), "http://")
	const call = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`
	big := strings.Repeat(" ", 5000)

	for _, c := range []struct {
		name, path, headers, body string
		halfClose                 bool // the client stops sending after body
		status                    int
		json                      string // "" for net/http's own plain answer; else a fragment of the JSON body
	}{
		{"negative length", "/rpc", "Content-Length: -1\r\n", "", false, 400, ""},
		{"two lengths", "/rpc", "Content-Length: 5\r\nContent-Length: 6\r\n", "", false, 400, ""},
		{"length overflows", "/rpc", "Content-Length: 99999999999999999999999\r\n", "", false, 400, ""},
		{"signed length", "/rpc", "Content-Length: +5\r\n", "", false, 400, ""},
		{"hex length", "/rpc", "Content-Length: 0x10\r\n", "", false, 400, ""},
		{"unknown coding", "/rpc", "Transfer-Encoding: gzip\r\n", "", false, 501, ""},
		{"chunked twice", "/rpc", "Transfer-Encoding: chunked, chunked\r\n", "", false, 501, ""},
		// RFC 9112 §6.3: chunked framing wins and the length is ignored.
		{"length and chunked", "/rpc", "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", chunked(call), false, 200, `"result"`},
		{"bad chunk size", "/rpc", "Transfer-Encoding: chunked\r\n", "zz\r\n{}\r\n0\r\n\r\n", false, 400, "-32700"},
		{"chunk size overflows", "/rpc", "Transfer-Encoding: chunked\r\n", "ffffffffffffffffffff\r\n{}\r\n", false, 400, "-32700"},
		{"chunked past max_body", "/rpc", "Transfer-Encoding: chunked\r\n", "1388\r\n" + big + "\r\n0\r\n\r\n", false, 413, "-32600"},
		{"length over max_body, expecting 100-continue", "/rpc", "Content-Length: 5000\r\nExpect: 100-continue\r\n", "", false, 413, "-32600"},
		{"length over max_body on a REST route", "/api/keys", "Content-Length: 2000000\r\n", "", false, 413, `"too_large"`},
		{"body shorter than its length", "/rpc", "Content-Length: 100\r\n", "{", true, 400, "-32700"},
		{"chunked body broken off", "/rpc", "Transfer-Encoding: chunked\r\n", "5\r\n{", true, 400, "-32700"},
		{"chunked, well formed", "/rpc", "Transfer-Encoding: chunked\r\n", chunked(call), false, 200, `"result"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			began := time.Now()
			req := "POST " + c.path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" + c.headers + "\r\n" + c.body
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			if c.halfClose {
				_ = conn.(*net.TCPConn).CloseWrite()
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			took := time.Since(began)
			// At once: well before body_timeout (2 s), with room for a
			// busy machine.
			if resp.StatusCode != c.status || took > 1900*time.Millisecond {
				t.Fatalf("%d after %v, want %d at once: %s", resp.StatusCode, took, c.status, body)
			}
			isJSON := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")
			if c.json == "" && isJSON || c.json != "" && (!isJSON || !strings.Contains(string(body), c.json)) {
				t.Fatalf("%d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
		})
	}

	// Still serving.
	if a := e.rpc(t, call); a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) {
		t.Fatalf("after the odd bodies: %d %s", a.status, a.body)
	}
}

// chunked frames s as two chunks and the last, empty one.
func chunked(s string) string {
	h := len(s) / 2
	return fmt.Sprintf("%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", h, s[:h], len(s)-h, s[h:])
}
