package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

const testDomain = "rpc.tollgate.test"

type loginServer struct {
	t   *testing.T
	srv *httptest.Server
	s   *Service
}

func newLoginServer(t *testing.T) *loginServer {
	t.Helper()
	_, pool := settletest.DB(t)
	s, err := New(Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32)), Domain: testDomain})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &loginServer{t: t, srv: srv, s: s}
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

// A stranger flooding a wallet's challenges from their address hits their
// own caps (10 per wallet, 100 in all) but never the wallet's: its owner
// asks from another address, signs and logs in, and the login clears the
// wallet's open challenges (the stranger's included).
func TestChallengeFloodCannotLockOutTheOwner(t *testing.T) {
	l := newLoginServer(t)
	key, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey).Hex()
	const stranger, owner = "203.0.113.9", "198.51.100.7"
	for i := range MaxOpenChallenges {
		if c := l.challenge(stranger, wallet); c != 200 {
			t.Fatalf("stranger's challenge %d: %d", i, c)
		}
	}
	if c := l.challenge(stranger, wallet); c != http.StatusTooManyRequests {
		t.Fatalf("stranger over the per-wallet cap: %d", c)
	}
	// The same stranger on another address of its IPv6 /64 is the same client.
	for i := range MaxOpenChallenges {
		if c := l.challenge(fmt.Sprintf("2001:db8:1:2::%x", i+1), wallet); c != 200 {
			t.Fatalf("v6 challenge %d: %d", i, c)
		}
	}
	if c := l.challenge("2001:db8:1:2::ffff", wallet); c != http.StatusTooManyRequests {
		t.Fatalf("a /64 is one client: %d", c)
	}

	// The owner, from their own address, still gets a challenge and logs in.
	c, ch := l.post("/api/auth/challenge", owner, `{"wallet":"`+wallet+`"}`)
	if c != 200 {
		t.Fatalf("owner's challenge: %d %v", c, ch)
	}
	msg := ch["message"].(string)
	sig, err := crypto.Sign(personalHash(msg), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	body, _ := json.Marshal(map[string]string{"message": msg, "signature": hexutil.Encode(sig)})
	if c, out := l.post("/api/auth/login", owner, string(body)); c != 200 || out["token"] == nil {
		t.Fatalf("owner's login: %d %v", c, out)
	}
	var open int
	if err := l.s.cfg.Pool.QueryRow(t.Context(), `SELECT count(*) FROM auth_nonces WHERE wallet = $1 AND used_at IS NULL`,
		strings.ToLower(wallet)).Scan(&open); err != nil || open != 0 {
		t.Fatalf("%d open challenges of the wallet after the login (%v), want 0", open, err)
	}
	if c := l.challenge(stranger, wallet); c != 200 {
		t.Fatalf("the stranger's slots were freed by the login: %d", c)
	}

	// The per-client total: a client cannot store more than 100 open
	// challenges, whatever wallets it names.
	for i := range MaxOpenPerClient {
		if c := l.challenge("192.0.2.50", fmt.Sprintf("0x%040x", i+1)); c != 200 {
			t.Fatalf("client total %d: %d", i, c)
		}
	}
	if c := l.challenge("192.0.2.50", fmt.Sprintf("0x%040x", 999)); c != http.StatusTooManyRequests {
		t.Fatalf("client over its total: %d", c)
	}
	for body, want := range map[string]int{`{"wallet":"0x12"}`: 400, `{"wallet":1}`: 400, `not json`: 400} {
		if c, _ := l.post("/api/auth/challenge", owner, body); c != want {
			t.Errorf("%s: %d, want %d", body, c, want)
		}
	}
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
