package caddymodule_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyDeadlineEndsWithTheBody: body_timeout bounds the arrival of the
// body, not the whole call. A deadline left on the connection after the body
// has arrived would fire in net/http's background read and cancel the
// request's context, so a call whose upstream answers after body_timeout
// (here 200 ms of body_timeout against 300 ms of upstream latency) would be
// lost although its caller did nothing wrong.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	// The attempt timeout well above the upstream latency: on a busy machine
	// 300 ms of latency overran the template's 400 ms attempts (a 503 that
	// says nothing about body_timeout).
	e := startMeteredWith(t, meterOpts{free: 100}, slowServers, "body_timeout 200ms\n\t\t\tupstreams {\n\t\t\t\ttimeout 3s\n\t\t\t}")
	e.alpha.SetDelay(300 * time.Millisecond)
	e.beta.SetDelay(300 * time.Millisecond)
	for i := range 3 {
		began := time.Now()
		a := e.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000a`+string(rune('1'+i))+`","latest"]}`)
		took := time.Since(began)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"result"`) {
			t.Fatalf("call %d after %v: %d %s", i, took, a.status, a.body)
		}
		if took < 300*time.Millisecond {
			t.Fatalf("call %d took %v: the upstream's latency did not apply, the test proves nothing", i, took)
		}
	}
}

// TestAdminBodyLimits: the admin routes answer a body too large or too slow
// as every other route does — 413 too_large and 408 body_timeout — not as a
// malformed body (400).
func TestAdminBodyLimits(t *testing.T) {
	e := startMeteredWith(t, meterOpts{free: 100, adminToken: testAdminToken}, slowServers, "body_timeout 1s")
	secret, id := e.createKey(t)
	path := "/admin/keys/" + id + "/revoke"
	wantError(t, "5 KiB admin body", e.admin(t, "POST", path, `{"reason":"`+strings.Repeat("x", 5<<10)+`"}`), http.StatusRequestEntityTooLarge, "too_large", "body")

	addr := strings.TrimPrefix(e.gw.URL(), "http://")
	conn := rawRequest(t, addr, "POST "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n"+adminAuth+"\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{")
	began := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	took := time.Since(began)
	wantError(t, "half an admin body", answer{resp.StatusCode, resp.Header, body}, http.StatusRequestTimeout, "body_timeout", "body")
	if took < 800*time.Millisecond || took > 3*time.Second || !resp.Close {
		t.Fatalf("cut after %v (want about 1 s), connection closed: %v", took, resp.Close)
	}
	// The key was not revoked by either.
	if a := e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+secret); a.status != http.StatusOK {
		t.Fatalf("key after the refused bodies: %d %s", a.status, a.body)
	}
	// And a well-formed revoke does revoke it, so the check above can fail.
	if a := e.admin(t, "POST", path, `{"reason":"test"}`); a.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", a.status, a.body)
	}
	if a := e.do(t, http.MethodGet, "/api/keys/usage", "", "X-API-Key: "+secret); a.status == http.StatusOK {
		t.Fatalf("a revoked key's usage: %d %s", a.status, a.body)
	}

	// /mcp too: half an MCP message is cut at body_timeout with the
	// protocol's error (a JSON-RPC error object), 408, connection closed.
	conn = rawRequest(t, addr, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Content-Length: 80\r\n\r\n{\"jsonrpc\":\"2.0\",")
	began = time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("/mcp: no answer: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	took = time.Since(began)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"code":-32600`) || !resp.Close ||
		took < 800*time.Millisecond || took > 3*time.Second {
		t.Fatalf("half an MCP message: %d %s after %v, connection closed: %v", resp.StatusCode, body, took, resp.Close)
	}
}
