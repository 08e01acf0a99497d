package auth

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

const testDomain = "rpc.tollgate.test"

type loginServer struct {
	t   *testing.T
	srv *httptest.Server
	s   *Service
	// offset moves the service's clock (atomic: the server's goroutines
	// read it while the test sets it).
	offset atomic.Int64
}

func newLoginServer(t *testing.T) *loginServer {
	t.Helper()
	_, pool := settletest.DB(t)
	l := &loginServer{t: t}
	s, err := New(Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32)), Domain: testDomain,
		Now: func() time.Time { return time.Now().Add(time.Duration(l.offset.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	l.srv, l.s = srv, s
	return l
}

// post sends body from the client address ip, as the gateway's Caddy
// forwards it (the test server's peer is loopback, so X-Forwarded-For is
// believed, as it is behind the gateway).
func (l *loginServer) post(path, ip, body string) (int, map[string]any) {
	l.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, l.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func (l *loginServer) challenge(ip, wallet string) int {
	c, _ := l.post("/api/auth/challenge", ip, `{"wallet":"`+wallet+`"}`)
	return c
}

// login signs msg with key and sends it; it answers the status and the
// error code ("" on success).
func (l *loginServer) login(key *ecdsa.PrivateKey, msg string) (int, string) {
	l.t.Helper()
	sig, err := crypto.Sign(personalHash(msg), key)
	if err != nil {
		l.t.Fatal(err)
	}
	sig[64] += 27
	body, _ := json.Marshal(map[string]string{"message": msg, "signature": hexutil.Encode(sig)})
	c, out := l.post("/api/auth/login", "198.51.100.7", string(body))
	if c == 200 && out["token"] == nil {
		l.t.Fatalf("login answered 200 without a token: %v", out)
	}
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	return c, code
}

func (l *loginServer) nonceRows() int {
	l.t.Helper()
	var n int
	if err := l.s.cfg.Pool.QueryRow(l.t.Context(), `SELECT count(*) FROM auth_nonces`).Scan(&n); err != nil {
		l.t.Fatal(err)
	}
	return n
}

// Strangers cannot deny a wallet's sign-in: 1,000 anonymous
// challenges for one wallet from 50 client addresses (IPv4 and distinct
// IPv6 /64s) are all answered and store nothing; the owner then asks once,
// signs and logs in at the first try, which stores one used nonce.
func TestChallengeFloodCannotLockOutTheOwner(t *testing.T) {
	l := newLoginServer(t)
	key, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey).Hex()
	for i := range 1000 {
		ip := fmt.Sprintf("203.0.113.%d", i%25+1)
		if i%50 >= 25 {
			ip = fmt.Sprintf("2001:db8:%x::1", i%50)
		}
		if c := l.challenge(ip, wallet); c != 200 {
			t.Fatalf("stranger's challenge %d from %s: %d", i, ip, c)
		}
	}
	if n := l.nonceRows(); n != 0 {
		t.Fatalf("1,000 challenges stored %d auth_nonces rows, want 0", n)
	}

	c, ch := l.post("/api/auth/challenge", "198.51.100.7", `{"wallet":"`+wallet+`"}`)
	if c != 200 {
		t.Fatalf("owner's challenge: %d %v", c, ch)
	}
	if c, code := l.login(key, ch["message"].(string)); c != 200 {
		t.Fatalf("owner's login: %d %s", c, code)
	}
	if n := l.nonceRows(); n != 1 {
		t.Fatalf("%d auth_nonces rows after one login, want 1", n)
	}
	for body, want := range map[string]int{`{"wallet":"0x12"}`: 400, `{"wallet":1}`: 400, `not json`: 400} {
		if c, _ := l.post("/api/auth/challenge", "198.51.100.7", body); c != want {
			t.Errorf("%s: %d, want %d", body, c, want)
		}
	}
}

// A login message must carry a nonce this server issued for exactly its
// fields: the wallet's valid signature over a message with a tampered
// nonce, an edited expiry or statement, or a nonce signed with another key
// is refused nonce_unknown (and stores nothing); the issued message logs in
// once, then nonce_used; an expired one is nonce_expired.
func TestLoginRefusesNoncesItDidNotIssue(t *testing.T) {
	l := newLoginServer(t)
	key, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey).Hex()
	c, ch := l.post("/api/auth/challenge", "198.51.100.7", `{"wallet":"`+wallet+`"}`)
	if c != 200 {
		t.Fatalf("challenge: %d %v", c, ch)
	}
	msg := ch["message"].(string)
	m, err := Parse(msg)
	if err != nil || m.Nonce != ch["nonce"] {
		t.Fatalf("the issued message: %v %v", m, err)
	}
	edit := func(f func(*Message)) string {
		e := m
		f(&e)
		return e.String()
	}
	other, _ := NewChallenger([]byte(strings.Repeat("o", 32)))
	for name, bad := range map[string]string{
		"nonce digit flipped": edit(func(e *Message) { e.Nonce = flipHexDigit(e.Nonce, 7) }),
		"MAC digit flipped":   edit(func(e *Message) { e.Nonce = flipHexDigit(e.Nonce, len(e.Nonce)-1) }),
		"nonce upper-cased":   edit(func(e *Message) { e.Nonce = strings.ToUpper(e.Nonce) }),
		"expiry extended":     edit(func(e *Message) { e.ExpiresAt = e.ExpiresAt.Add(time.Hour) }),
		"issued-at edited":    edit(func(e *Message) { e.IssuedAt = e.IssuedAt.Add(-time.Minute) }),
		"statement edited":    edit(func(e *Message) { e.Statement = "Sign in to Tollgate." }),
		"another key's nonce": edit(func(e *Message) { e.Nonce = other.Nonce(PurposeLogin, *e) }),
	} {
		if bad == msg {
			t.Fatalf("%s: not edited", name)
		}
		if c, code := l.login(key, bad); c != http.StatusUnauthorized || code != "nonce_unknown" {
			t.Errorf("%s: %d %s, want 401 nonce_unknown", name, c, code)
		}
	}
	if n := l.nonceRows(); n != 0 {
		t.Fatalf("refused logins stored %d rows", n)
	}
	if c, code := l.login(key, msg); c != 200 {
		t.Fatalf("the issued message: %d %s", c, code)
	}
	if c, code := l.login(key, msg); c != http.StatusUnauthorized || code != "nonce_used" {
		t.Fatalf("replay: %d %s, want 401 nonce_used", c, code)
	}

	_, ch = l.post("/api/auth/challenge", "198.51.100.7", `{"wallet":"`+wallet+`"}`)
	l.offset.Store(int64(NonceTTL + time.Second))
	if c, code := l.login(key, ch["message"].(string)); c != http.StatusUnauthorized || code != "nonce_expired" {
		t.Fatalf("expired: %d %s, want 401 nonce_expired", c, code)
	}
}

// flipHexDigit changes the i-th hex digit of s to another one.
func flipHexDigit(s string, i int) string {
	d := byte('0')
	if s[i] == '0' {
		d = '1'
	}
	return s[:i] + string(d) + s[i+1:]
}

// The sign-in domain is configuration: a message naming another domain is
// refused whatever Host the request carries, and a Service without a domain
// exists only in dev mode.
func TestSignInDomainIsConfiguration(t *testing.T) {
	l := newLoginServer(t)
	key, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey).Hex()
	c, ch := l.post("/api/auth/challenge", "198.51.100.7", `{"wallet":"`+wallet+`"}`)
	if c != 200 || !strings.HasPrefix(ch["message"].(string), testDomain+" wants you to sign in") {
		t.Fatalf("challenge: %d %v", c, ch)
	}
	evil := strings.Replace(ch["message"].(string), testDomain, "evil.example", 1)
	sig, _ := crypto.Sign(personalHash(evil), key)
	sig[64] += 27
	body, _ := json.Marshal(map[string]string{"message": evil, "signature": hexutil.Encode(sig)})
	req, _ := http.NewRequest(http.MethodPost, l.srv.URL+"/api/auth/login", strings.NewReader(string(body)))
	req.Host = "evil.example" // a direct request naming the other domain as its Host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "wrong_domain") {
		t.Fatalf("a message for evil.example: %d %s", resp.StatusCode, b)
	}

	_, pool := settletest.DB(t)
	if _, err := New(Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32))}); !errors.Is(err, ErrNoDomain) {
		t.Fatalf("no domain outside dev mode: %v", err)
	}
	if _, err := New(Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32)), Dev: true}); err != nil {
		t.Fatalf("dev mode without a domain: %v", err)
	}
}
