package walletkeys

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func post(t *testing.T, url string, body any) answer {
	t.Helper()
	return postFrom(t, url, "", body)
}

// postFrom sends body from the client address ip ("": the test's own), as
// the gateway's Caddy forwards it: the test server's peer is loopback, so
// X-Forwarded-For is believed, as it is behind the gateway.
func postFrom(t *testing.T, url, ip string, body any) answer {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if ip != "" {
		req.Header.Set("X-Forwarded-For", ip)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not JSON (%d): %s", resp.StatusCode, raw)
	}
	return answer{resp.StatusCode, resp.Header, m}
}

// testSecret stands for TOLLGATE_JWT_SECRET.
var testSecret = []byte(strings.Repeat("s", 32))

func sign(t *testing.T, key *ecdsa.PrivateKey, msg string) string {
	t.Helper()
	sig, err := crypto.Sign(accounts.TextHash([]byte(msg)), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

// TestWalletKeys on real Redis and PostgreSQL: one signature makes a
// wallet key that the gateway's meter knows (kind wallet, bound in
// api_keys); asking again is 409 naming the key; a nonce works once; a
// rotate signature revokes the old key, carries its balance over and
// issues a new one; concurrent creations for one wallet make one key.
func TestWalletKeys(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	_, pool := settletest.DB(t)
	ctx := context.Background()
	s, err := New(Config{Pool: pool, Redis: rdb, Prefix: prefix, Secret: testSecret, CreateLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	m, err := meter.New(rdb, meter.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}

	key, _ := crypto.GenerateKey()
	other, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey)
	lower := strings.ToLower(wallet.Hex())
	challenge := func(rotate bool) string {
		t.Helper()
		a := post(t, srv.URL+"/api/keys/wallet/challenge", map[string]any{"wallet": wallet.Hex(), "rotate": rotate})
		if a.status != 200 {
			t.Fatalf("challenge: %d %v", a.status, a.body)
		}
		return a.body["message"].(string)
	}

	// Refusals before a key exists.
	for name, c := range map[string]struct {
		body   any
		status int
		code   string
	}{
		"bad wallet":    {map[string]any{"wallet": "0x12"}, 400, "invalid_wallet"},
		"unknown field": {map[string]any{"wallet": wallet.Hex(), "x": 1}, 400, "invalid_json"},
	} {
		if a := post(t, srv.URL+"/api/keys/wallet/challenge", c.body); a.status != c.status || a.code() != c.code {
			t.Errorf("challenge %s: %d %v", name, a.status, a.body)
		}
	}
	msg := challenge(false)
	if !strings.Contains(msg, StatementCreate) || !strings.Contains(msg, wallet.Hex()) {
		t.Fatalf("message %q", msg)
	}
	for name, c := range map[string]struct {
		body   any
		status int
		code   string
	}{
		"other signer":    {map[string]any{"message": msg, "signature": sign(t, other, msg)}, 401, "invalid_signature"},
		"garbage sig":     {map[string]any{"message": msg, "signature": "0x12"}, 401, "invalid_signature"},
		"not SIWE":        {map[string]any{"message": "hello", "signature": "0x12"}, 400, "invalid_message"},
		"rotate mismatch": {map[string]any{"message": msg, "signature": sign(t, key, msg), "rotate": true}, 400, "rotate_mismatch"},
		"wrong domain": {map[string]any{"message": strings.Replace(msg, "127.0.0.1:", "evil.example:", 1),
			"signature": sign(t, key, strings.Replace(msg, "127.0.0.1:", "evil.example:", 1))}, 401, "wrong_domain"},
	} {
		if a := post(t, srv.URL+"/api/keys/wallet", c.body); a.status != c.status || a.code() != c.code {
			t.Errorf("create %s: %d %v, want %d %s", name, a.status, a.body, c.status, c.code)
		}
	}

	// One signature, one key.
	good := map[string]any{"message": msg, "signature": sign(t, key, msg)}
	a := post(t, srv.URL+"/api/keys/wallet", good)
	if a.status != 201 || a.body["kind"] != "wallet" || a.body["wallet"] != lower {
		t.Fatalf("create: %d %v", a.status, a.body)
	}
	secret, id := a.body["api_key"].(string), a.body["key_id"].(string)
	if !meter.WellFormedKey(secret) {
		t.Fatal("not an API key")
	}
	u, st, err := m.Usage(ctx, meter.HashKey(secret))
	if err != nil || st != meter.KeyActive || u.KeyID != id {
		t.Fatalf("the meter does not know the key: %v %v %v", u, st, err)
	}
	var kind, bound string
	if err := pool.QueryRow(ctx, `SELECT kind, wallet FROM api_keys WHERE key_id = $1`, id).Scan(&kind, &bound); err != nil || kind != "wallet" || bound != lower {
		t.Fatalf("api_keys: %q %q %v", kind, bound, err)
	}
	if a := post(t, srv.URL+"/api/keys/wallet", good); a.status != 401 || a.code() != "nonce_invalid" {
		t.Fatalf("the same nonce again: %d %v", a.status, a.body)
	}

	// Again: 409 naming the key.
	msg2 := challenge(false)
	a = post(t, srv.URL+"/api/keys/wallet", map[string]any{"message": msg2, "signature": sign(t, key, msg2)})
	if a.status != 409 || a.code() != "wallet_key_exists" || a.body["error"].(map[string]any)["key_id"] != id ||
		!strings.Contains(a.body["error"].(map[string]any)["message"].(string), id) {
		t.Fatalf("second key: %d %v", a.status, a.body)
	}

	// Rotate: the old key revoked, its balance moved, a new key.
	if _, _, err := balances.Credit(ctx, rdb, prefix, id, 5*money.Scale, "0xtest:1"); err != nil {
		t.Fatal(err)
	}
	msg3 := challenge(true)
	if !strings.Contains(msg3, StatementRotate) {
		t.Fatalf("rotate message %q", msg3)
	}
	if a := post(t, srv.URL+"/api/keys/wallet", map[string]any{"message": msg3, "signature": sign(t, key, msg3)}); a.status != 400 || a.code() != "rotate_mismatch" {
		t.Fatalf("rotate message without rotate: %d %v", a.status, a.body)
	}
	a = post(t, srv.URL+"/api/keys/wallet", map[string]any{"message": msg3, "signature": sign(t, key, msg3), "rotate": true})
	if a.status != 201 || a.body["replaced_key_id"] != id || a.body["carried_over_usdt"] != "5" {
		t.Fatalf("rotate: %d %v", a.status, a.body)
	}
	id2, secret2 := a.body["key_id"].(string), a.body["api_key"].(string)
	if _, st, _ := m.Usage(ctx, meter.HashKey(secret)); st != meter.KeyRevoked {
		t.Fatalf("old key status %v", st)
	}
	if u, st, _ := m.Usage(ctx, meter.HashKey(secret2)); st != meter.KeyActive || u.Balance != 5*money.Scale || u.KeyID != id2 {
		t.Fatalf("new key %v %v", u, st)
	}
	if b, _ := balances.Balance(ctx, rdb, prefix, id); b != 0 {
		t.Fatalf("old balance %d", b)
	}
	var revoked bool
	if err := pool.QueryRow(ctx, `SELECT revoked_at IS NOT NULL FROM api_keys WHERE key_id = $1`, id).Scan(&revoked); err != nil || !revoked {
		t.Fatalf("old key not revoked in api_keys: %v", err)
	}

	// A revoke by the gateway's admin (not yet ingested) frees the wallet.
	if _, err := m.Revoke(ctx, id2, "admin"); err != nil {
		t.Fatal(err)
	}
	msg4 := challenge(false)
	if a := post(t, srv.URL+"/api/keys/wallet", map[string]any{"message": msg4, "signature": sign(t, key, msg4)}); a.status != 201 {
		t.Fatalf("after an admin revoke: %d %v", a.status, a.body)
	}

	// Concurrent first keys of a fresh wallet: exactly one wins.
	fresh, _ := crypto.GenerateKey()
	fw := crypto.PubkeyToAddress(fresh.PublicKey)
	var msgs []string
	for range 4 {
		a := post(t, srv.URL+"/api/keys/wallet/challenge", map[string]any{"wallet": fw.Hex()})
		msgs = append(msgs, a.body["message"].(string))
	}
	var wg sync.WaitGroup
	codes := make([]int, len(msgs))
	for i, mm := range msgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = post(t, srv.URL+"/api/keys/wallet", map[string]any{"message": mm, "signature": sign(t, fresh, mm)}).status
		}()
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		if c == 201 {
			created++
		} else if c != 409 {
			t.Fatalf("concurrent create: %v", codes)
		}
	}
	if created != 1 {
		t.Fatalf("concurrent creates: %v", codes)
	}
}

// newServer serves the wallet-key routes and, with the same secret and
// domain (the request's Host), the operators' login, as settlementd does.
func newServer(t *testing.T) (*httptest.Server, redis.UniversalClient, string) {
	t.Helper()
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	_, pool := settletest.DB(t)
	s, err := New(Config{Pool: pool, Redis: rdb, Prefix: prefix, Secret: testSecret, CreateLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Config{Pool: pool, Secret: testSecret, Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	a.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, rdb, prefix
}

// keysUnder lists the Redis keys under prefix.
func keysUnder(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Strangers cannot deny a wallet its key: 1,000 anonymous
// challenges for one wallet (create and rotate) from 50 client addresses
// (IPv4 and distinct IPv6 /64s) are all answered and store nothing in
// Redis; the owner then asks once and creates the key at the first try.
func TestChallengeFloodCannotLockOutTheOwner(t *testing.T) {
	srv, rdb, prefix := newServer(t)
	key, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey).Hex()
	for i := range 1000 {
		ip := fmt.Sprintf("203.0.113.%d", i%25+1)
		if i%50 >= 25 {
			ip = fmt.Sprintf("2001:db8:%x::1", i%50)
		}
		a := postFrom(t, srv.URL+"/api/keys/wallet/challenge", ip, map[string]any{"wallet": wallet, "rotate": i%2 == 1})
		if a.status != 200 {
			t.Fatalf("stranger's challenge %d from %s: %d %v", i, ip, a.status, a.body)
		}
	}
	if keys := keysUnder(t, rdb, prefix); len(keys) != 0 {
		t.Fatalf("1,000 challenges stored Redis keys: %v", keys)
	}
	a := postFrom(t, srv.URL+"/api/keys/wallet/challenge", "198.51.100.7", map[string]any{"wallet": wallet})
	if a.status != 200 {
		t.Fatalf("owner's challenge: %d %v", a.status, a.body)
	}
	msg := a.body["message"].(string)
	if a := postFrom(t, srv.URL+"/api/keys/wallet", "198.51.100.7", map[string]any{"message": msg, "signature": sign(t, key, msg)}); a.status != 201 {
		t.Fatalf("owner's key: %d %v", a.status, a.body)
	}
	used := 0
	for _, k := range keysUnder(t, rdb, prefix) {
		if strings.HasPrefix(k, prefix+"walletkey:") {
			used++
		}
	}
	if used != 1 {
		t.Fatalf("%d walletkey nonces recorded after one creation, want 1", used)
	}
}

// A key message must carry a nonce /api/keys/wallet/challenge issued for
// exactly its fields and purpose. The wallet's valid signature over a
// message with a tampered nonce, an edited expiry, a create message edited
// into a rotate one, or a login nonce is refused nonce_invalid; a wallet-key
// nonce in a login message is refused nonce_unknown by the login; the
// issued message creates the key once, then nonce_invalid.
func TestWalletKeyNoncesAreSignedAndSingleUse(t *testing.T) {
	srv, rdb, prefix := newServer(t)
	key, _ := crypto.GenerateKey()
	wallet := crypto.PubkeyToAddress(key.PublicKey).Hex()
	ask := func(path string, body any) (string, auth.Message) {
		t.Helper()
		a := post(t, srv.URL+path, body)
		if a.status != 200 {
			t.Fatalf("%s: %d %v", path, a.status, a.body)
		}
		m, err := auth.Parse(a.body["message"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return a.body["message"].(string), m
	}
	msg, m := ask("/api/keys/wallet/challenge", map[string]any{"wallet": wallet})
	_, login := ask("/api/auth/challenge", map[string]any{"wallet": wallet})
	edit := func(f func(*auth.Message)) string {
		e := m
		f(&e)
		return e.String()
	}
	flip := func(s string, i int) string {
		d := byte('0')
		if s[i] == '0' {
			d = '1'
		}
		return s[:i] + string(d) + s[i+1:]
	}
	for name, c := range map[string]struct {
		msg    string
		rotate bool
	}{
		"nonce digit flipped": {edit(func(e *auth.Message) { e.Nonce = flip(e.Nonce, 3) }), false},
		"expiry extended":     {edit(func(e *auth.Message) { e.ExpiresAt = e.ExpiresAt.Add(time.Hour) }), false},
		"create made rotate":  {edit(func(e *auth.Message) { e.Statement = StatementRotate }), true},
		"a login nonce":       {edit(func(e *auth.Message) { e.Nonce = login.Nonce }), false},
	} {
		if c.msg == msg {
			t.Fatalf("%s: not edited", name)
		}
		a := post(t, srv.URL+"/api/keys/wallet", map[string]any{"message": c.msg, "signature": sign(t, key, c.msg), "rotate": c.rotate})
		if a.status != http.StatusUnauthorized || a.code() != "nonce_invalid" {
			t.Errorf("%s: %d %v, want 401 nonce_invalid", name, a.status, a.body)
		}
	}
	if keys := keysUnder(t, rdb, prefix); len(keys) != 0 {
		t.Fatalf("refused creations stored Redis keys: %v", keys)
	}

	// The other way: a wallet-key nonce does not log in.
	login.Nonce = m.Nonce
	lm := login.String()
	a := post(t, srv.URL+"/api/auth/login", map[string]any{"message": lm, "signature": sign(t, key, lm)})
	if a.status != http.StatusUnauthorized || a.code() != "nonce_unknown" {
		t.Fatalf("a wallet-key nonce at the login: %d %v, want 401 nonce_unknown", a.status, a.body)
	}

	good := map[string]any{"message": msg, "signature": sign(t, key, msg)}
	if a := post(t, srv.URL+"/api/keys/wallet", good); a.status != 201 {
		t.Fatalf("the issued message: %d %v", a.status, a.body)
	}
	if a := post(t, srv.URL+"/api/keys/wallet", good); a.status != 401 || a.code() != "nonce_invalid" {
		t.Fatalf("replay: %d %v, want 401 nonce_invalid", a.status, a.body)
	}
	// The used nonce is kept until the message expires (and a little
	// longer), no longer.
	ttl, err := rdb.PTTL(context.Background(), prefix+"walletkey:{"+strings.ToLower(wallet)+"}:nonce:"+m.Nonce).Result()
	if err != nil || ttl <= 0 || ttl > NonceTTL+usedGrace {
		t.Fatalf("the used nonce's TTL: %v %v", ttl, err)
	}
}

// An expired challenge is refused.
func TestWalletKeyExpired(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	_, pool := settletest.DB(t)
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	s, err := New(Config{Pool: pool, Redis: rdb, Prefix: prefix, Secret: testSecret, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	key, _ := crypto.GenerateKey()
	a := post(t, srv.URL+"/api/keys/wallet/challenge", map[string]any{"wallet": crypto.PubkeyToAddress(key.PublicKey).Hex()})
	msg := a.body["message"].(string)
	offset.Store(int64(NonceTTL + time.Second))
	if a := post(t, srv.URL+"/api/keys/wallet", map[string]any{"message": msg, "signature": sign(t, key, msg)}); a.status != 401 || a.code() != "nonce_expired" {
		t.Fatalf("expired: %d %v", a.status, a.body)
	}
}
