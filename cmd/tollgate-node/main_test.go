package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// testApp is one run of the command with light keystore parameters and
// its own home directory.
type testApp struct {
	t              *testing.T
	env            map[string]string
	stdout, stderr bytes.Buffer
}

func newTestApp(t *testing.T) *testApp {
	return &testApp{t: t, env: map[string]string{"HOME": t.TempDir()}}
}

func (ta *testApp) run(args ...string) int {
	ta.stdout.Reset()
	ta.stderr.Reset()
	a := &app{ctx: context.Background(), getenv: func(k string) string { return ta.env[k] }, stdin: strings.NewReader(""),
		stdout: &ta.stdout, stderr: &ta.stderr, now: time.Now, scryptN: keystore.LightScryptN, scryptP: keystore.LightScryptP}
	return a.main(args)
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // not the umask's
		t.Fatal(err)
	}
	return path
}

func newKeyT(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k, crypto.PubkeyToAddress(k.PublicKey).Hex()
}

// TestKeyLoading: a raw key file and a keystore file load; a key,
// keystore or password file others may read is refused, as are a wrong
// password, a keystore whose clear address is not its key's, two sources
// at once and none; no error repeats the secret.
func TestKeyLoading(t *testing.T) {
	dir := t.TempDir()
	key, addr := newKeyT(t)
	hexKey := hexutil.Encode(crypto.FromECDSA(key))
	raw := writeFile(t, filepath.Join(dir, "wallet.key"), "  "+hexKey+"\n", 0o600)
	ks := filepath.Join(dir, "wallet.json")
	if _, err := writeKeystore(ks, key, "correct horse", keystore.LightScryptN, keystore.LightScryptP); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(ks); fi.Mode().Perm() != 0o600 {
		t.Fatalf("the keystore was written with mode %v", fi.Mode().Perm())
	}
	pass := writeFile(t, filepath.Join(dir, "password"), "correct horse\r\n", 0o600)

	load := func(k keySource) (string, error) {
		p, err := k.Load()
		if err != nil {
			return "", err
		}
		return crypto.PubkeyToAddress(p.PublicKey).Hex(), nil
	}
	for name, k := range map[string]keySource{
		"raw key file":                 {KeyFile: raw},
		"keystore, password file":      {Keystore: ks, PasswordFile: pass},
		"keystore, password from env":  {Keystore: ks, Password: "correct horse", hasPassword: true},
		"keystore, password on prompt": {Keystore: ks, prompt: func(string) (string, error) { return "correct horse", nil }},
	} {
		if got, err := load(k); err != nil || got != addr {
			t.Errorf("%s: %s %v, want %s", name, got, err, addr)
		}
	}
	// The address without the password (proof, address).
	if got, err := (keySource{Keystore: ks}).Address(); err != nil || got.Hex() != addr {
		t.Errorf("keystore address without a password: %s %v", got.Hex(), err)
	}

	open := writeFile(t, filepath.Join(dir, "open.key"), hexKey, 0o644)
	groupKS := filepath.Join(dir, "group.json")
	b, _ := os.ReadFile(ks)
	writeFile(t, groupKS, string(b), 0o640)
	openPass := writeFile(t, filepath.Join(dir, "open-password"), "correct horse\n", 0o604)
	bad := writeFile(t, filepath.Join(dir, "bad.key"), "0x"+strings.Repeat("zz", 32), 0o600)
	// The clear address field of the keystore names another wallet.
	var f map[string]any
	_ = json.Unmarshal(b, &f)
	_, other := newKeyT(t)
	f["address"] = strings.ToLower(other[2:])
	tb, _ := json.Marshal(f)
	tampered := writeFile(t, filepath.Join(dir, "tampered.json"), string(tb), 0o600)
	for name, c := range map[string]struct {
		k    keySource
		want string
	}{
		"raw key readable by others":    {keySource{KeyFile: open}, "is accessible by others (permissions 0644): it must be readable by you only; run chmod 600"},
		"keystore readable by group":    {keySource{Keystore: groupKS, PasswordFile: pass}, "accessible by others (permissions 0640)"},
		"password file open":            {keySource{Keystore: ks, PasswordFile: openPass}, "password file " + openPass + " is accessible by others"},
		"wrong password":                {keySource{Keystore: ks, Password: "wrong", hasPassword: true}, "wrong password"},
		"no password, no terminal":      {keySource{Keystore: ks}, "no keystore password: set TOLLGATE_NODE_PASSWORD_FILE"},
		"two passwords":                 {keySource{Keystore: ks, PasswordFile: pass, Password: "x", hasPassword: true}, "use one"},
		"not a key":                     {keySource{KeyFile: bad}, "not a secp256k1 private key"},
		"missing key file":              {keySource{KeyFile: filepath.Join(dir, "nope")}, "does not exist"},
		"not a keystore":                {keySource{Keystore: raw, PasswordFile: pass}, "not a keystore file"},
		"tampered address":              {keySource{Keystore: tampered, PasswordFile: pass}, "the address it names is not its key's"},
		"keystore and raw key together": {keySource{Keystore: ks, KeyFile: raw}, "use one"},
		"no key at all":                 {keySource{}, "a key is never taken on the command line"},
	} {
		_, err := load(c.k)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), hexKey[2:]) || strings.Contains(err.Error(), "correct horse")) {
			t.Errorf("%s: the error repeats a secret: %v", name, err)
		}
	}
}

// TestKeyCommands: key import encrypts a raw key file into a new keystore
// (mode 0600, never overwritten) that the address command then reads; key
// new makes a keystore of a new key; a key is never an argument.
func TestKeyCommands(t *testing.T) {
	ta := newTestApp(t)
	dir := t.TempDir()
	key, addr := newKeyT(t)
	raw := writeFile(t, filepath.Join(dir, "wallet.key"), hexutil.Encode(crypto.FromECDSA(key)), 0o600)
	ta.env[envPasswordFile] = writeFile(t, filepath.Join(dir, "password"), "pw\n", 0o600)
	out := filepath.Join(dir, "ks", "wallet.json")
	if code := ta.run("key", "import", "--key-file", raw, "--out", out); code != 0 || !strings.Contains(ta.stdout.String(), addr) {
		t.Fatalf("key import: exit %d\n%s%s", code, ta.stdout.String(), ta.stderr.String())
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the keystore: %v %v", fi, err)
	}
	if code := ta.run("key", "import", "--key-file", raw, "--out", out); code != 1 || !strings.Contains(ta.stderr.String(), "never overwritten") {
		t.Fatalf("key import over an existing keystore: exit %d %s", code, ta.stderr.String())
	}
	ta.env[envKeystore] = out
	if code := ta.run("address", "--json"); code != 0 || !strings.Contains(ta.stdout.String(), `"address": "`+addr+`"`) {
		t.Fatalf("address --json: exit %d\n%s%s", code, ta.stdout.String(), ta.stderr.String())
	}
	newKS := filepath.Join(dir, "new.json")
	if code := ta.run("key", "new", "--out", newKS); code != 0 {
		t.Fatalf("key new: exit %d %s", code, ta.stderr.String())
	}
	ta.env[envKeystore] = newKS
	if code := ta.run("address"); code != 0 || ta.stdout.String() == addr+"\n" || !common.IsHexAddress(strings.TrimSpace(ta.stdout.String())) {
		t.Fatalf("address of the new keystore: exit %d %q", code, ta.stdout.String())
	}
	for _, args := range [][]string{{"address", "--key", hexutil.Encode(crypto.FromECDSA(key))}, {"login", "--private-key", "0x01"}} {
		if code := ta.run(args...); code != exitUsage {
			t.Errorf("%s with a key argument: exit %d, want %d", args[0], code, exitUsage)
		}
	}
}

// fakeGateway is a gateway that answers what a test tells it to, in the
// real API's wire format; a misbehaving or hostile gateway is outside the
// operator's control.
type fakeGateway struct {
	*httptest.Server
	routes map[string]http.HandlerFunc // "METHOD /path"
	hits   map[string]*atomic.Int64
}

func newFakeGateway(t *testing.T) *fakeGateway {
	g := &fakeGateway{routes: map[string]http.HandlerFunc{}, hits: map[string]*atomic.Int64{}}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Method + " " + r.URL.Path
		if h := g.hits[k]; h != nil {
			h.Add(1)
		}
		if h, ok := g.routes[k]; ok {
			h(w, r)
			return
		}
		http.Error(w, "no route "+k, http.StatusTeapot)
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *fakeGateway) on(route string, h http.HandlerFunc) {
	g.routes[route] = h
	g.hits[route] = &atomic.Int64{}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func siwe(domain, addr string) string {
	return domain + " wants you to sign in with your Ethereum account:\n" + addr +
		"\n\nSign in to Tollgate to manage your nodes.\n\nURI: https://" + domain + "\nVersion: 1\nChain ID: 137\nNonce: abcdefgh12"
}

// TestBadServerAnswers: every answer other than the API's — an error body,
// a page that is not JSON, a document missing what the command needs, a
// sign-in for another site or wallet, a redirect, a chain that is not the
// claim's — ends the command with status 1 and a message naming what was
// asked and what came back; nothing is signed or sent that should not be.
func TestBadServerAnswers(t *testing.T) {
	key, addr := newKeyT(t)
	dir := t.TempDir()
	raw := writeFile(t, filepath.Join(dir, "wallet.key"), hexutil.Encode(crypto.FromECDSA(key)), 0o600)
	lower := strings.ToLower(addr)

	// good sets the routes of a well-behaved gateway for this wallet.
	good := func(g *fakeGateway) {
		u, _ := url.Parse(g.URL)
		g.on("POST /api/auth/challenge", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]string{"message": siwe(u.Host, addr), "expires_at": "2030-01-01T00:00:00Z"})
		})
		g.on("POST /api/auth/login", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]string{"token": "tok", "token_type": "Bearer", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "wallet": lower})
		})
		g.on("GET /api/nodes", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"wallet": lower, "truncated": false, "nodes": []map[string]any{
				{"node_id": "NODE-EU-AAAAAAAA", "status": "online", "chain_ids": []int{137}, "total_earned_units": "30"}}})
		})
		g.on("GET /api/nodes/NODE-EU-AAAAAAAA/earnings", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"node_id": "NODE-EU-AAAAAAAA", "total_earned_units": "30", "allocated_units": "30",
				"claimed_units": "0", "reserved_units": "0", "claimable_units": "30", "pending_settlement_units": "0"})
		})
	}
	cases := []struct {
		name  string
		args  []string
		setup func(g *fakeGateway)
		want  string
		never string // a route that must not be called
	}{
		{"challenge is an HTML page", []string{"login"}, func(g *fakeGateway) {
			g.on("POST /api/auth/challenge", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html>maintenance</html>")
			})
		}, `POST /api/auth/challenge: HTTP 200 but Content-Type "text/html", not JSON`, "POST /api/auth/login"},
		{"challenge for another site", []string{"login"}, func(g *fakeGateway) {
			g.on("POST /api/auth/challenge", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]string{"message": siwe("evil.example", addr)})
			})
		}, `the sign-in message is for "evil.example", not for the gateway`, "POST /api/auth/login"},
		{"challenge for another wallet", []string{"login"}, func(g *fakeGateway) {
			u, _ := url.Parse(g.URL)
			_, other := newKeyT(t)
			g.on("POST /api/auth/challenge", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]string{"message": siwe(u.Host, other)})
			})
		}, "the sign-in message names wallet", "POST /api/auth/login"},
		{"challenge is not SIWE", []string{"login"}, func(g *fakeGateway) {
			g.on("POST /api/auth/challenge", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]string{"message": "please sign 0xdeadbeef"})
			})
		}, "not a Sign-In with Ethereum message", "POST /api/auth/login"},
		{"login for another wallet", []string{"login"}, func(g *fakeGateway) {
			g.on("POST /api/auth/login", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]string{"token": "t", "expires_at": "2030-01-01T00:00:00Z", "wallet": "0x000000000000000000000000000000000000dead"})
			})
		}, "signed in as \"0x000000000000000000000000000000000000dead\"", ""},
		{"login refused", []string{"login"}, func(g *fakeGateway) {
			g.on("POST /api/auth/login", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 401, map[string]any{"error": map[string]string{"code": "nonce_expired", "message": "this challenge expired"}})
			})
		}, "POST /api/auth/login: HTTP 401 nonce_expired: this challenge expired", ""},
		{"login without expiry", []string{"login"}, func(g *fakeGateway) {
			g.on("POST /api/auth/login", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]string{"token": "t", "wallet": lower})
			})
		}, "the answer is incomplete", ""},
		{"nodes: proxy error page", []string{"status"}, func(g *fakeGateway) {
			g.on("GET /api/nodes", func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "502 Bad Gateway", http.StatusBadGateway)
			})
		}, `GET /api/nodes: HTTP 502 (not a JSON error body: "502 Bad Gateway")`, ""},
		{"nodes: a node without an id", []string{"status"}, func(g *fakeGateway) {
			g.on("GET /api/nodes", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"wallet": lower, "nodes": []map[string]any{{"status": "online"}}})
			})
		}, "GET /api/nodes: the answer is incomplete: no node_id or status", ""},
		{"nodes: truncated JSON", []string{"status"}, func(g *fakeGateway) {
			g.on("GET /api/nodes", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"wallet":"`+lower+`","nodes":[{"node_id":"N`)
			})
		}, "GET /api/nodes: the answer is not the expected JSON", ""},
		{"nodes: a redirect", []string{"status"}, func(g *fakeGateway) {
			g.on("GET /api/nodes", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://elsewhere.example/api/nodes", http.StatusFound)
			})
		}, "GET /api/nodes: HTTP 302", ""},
		{"earnings: an amount as a number", []string{"earnings"}, func(g *fakeGateway) {
			g.on("GET /api/nodes/NODE-EU-AAAAAAAA/earnings", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"node_id":"NODE-EU-AAAAAAAA","total_earned_units":30}`)
			})
		}, "an amount must be a string of base units", ""},
		{"earnings: claimable missing", []string{"earnings"}, func(g *fakeGateway) {
			g.on("GET /api/nodes/NODE-EU-AAAAAAAA/earnings", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"node_id": "NODE-EU-AAAAAAAA", "total_earned_units": "30"})
			})
		}, "the answer is incomplete: a balance is missing", ""},
		{"earnings: another wallet's node", []string{"earnings", "--node", "NODE-US-BBBBBBBB"}, func(g *fakeGateway) {
			g.on("GET /api/nodes/NODE-US-BBBBBBBB/earnings", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 403, map[string]any{"error": map[string]string{"code": "not_node_owner", "message": "this node belongs to another wallet"}})
			})
		}, "HTTP 403 not_node_owner: this node belongs to another wallet", ""},
		{"claim: a signature for another node", []string{"claim"}, func(g *fakeGateway) {
			g.on("POST /api/nodes/NODE-EU-AAAAAAAA/claim", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"success": true, "signature": map[string]any{"cumulative_raw": "30", "amount_raw": "30",
					"signature": "0x" + strings.Repeat("11", 65), "deadline_unix": time.Now().Add(time.Hour).Unix(),
					"contract": "0x000000000000000000000000000000000000c1a1", "chain_id": 137, "node_id": "NODE-EU-ZZZZZZZZ"}})
			})
		}, `the signature is for node "NODE-EU-ZZZZZZZZ"`, ""},
		{"claim: no signature object", []string{"claim"}, func(g *fakeGateway) {
			g.on("POST /api/nodes/NODE-EU-AAAAAAAA/claim", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"success": true})
			})
		}, "no complete signature object", ""},
		{"claim: the chain is not the claim's", []string{"claim"}, func(g *fakeGateway) {
			g.on("POST /api/nodes/NODE-EU-AAAAAAAA/claim", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"success": true, "signature": map[string]any{"cumulative_raw": "30", "amount_raw": "30",
					"signature": "0x" + strings.Repeat("11", 65), "deadline_unix": time.Now().Add(time.Hour).Unix(),
					"contract": "0x000000000000000000000000000000000000c1a1", "chain_id": 137, "node_id": "NODE-EU-AAAAAAAA"}})
			})
			// The gateway's /rpc/137 answers as chain 1 would.
			g.on("POST /rpc/137", func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.NewDecoder(r.Body).Decode(&req)
				writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": "0x1"})
			})
		}, "serves chain 1, but the claim is for chain 137", ""},
		{"claim: a pinned contract", []string{"claim", "--claims-contract", "0x000000000000000000000000000000000000c1a2"}, func(g *fakeGateway) {
			g.on("POST /api/nodes/NODE-EU-AAAAAAAA/claim", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"success": true, "signature": map[string]any{"cumulative_raw": "30", "amount_raw": "30",
					"signature": "0x" + strings.Repeat("11", 65), "deadline_unix": time.Now().Add(time.Hour).Unix(),
					"contract": "0x000000000000000000000000000000000000c1a1", "chain_id": 137, "node_id": "NODE-EU-AAAAAAAA"}})
			})
		}, "not the ClaimsContract you expect", "POST /rpc/137"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newFakeGateway(t)
			good(g)
			g.on("POST /rpc/137", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "unexpected", 500) })
			c.setup(g)
			ta := newTestApp(t)
			ta.env[envGateway], ta.env[envKeyFile] = g.URL, raw
			code := ta.run(c.args...)
			if code != exitError || !strings.Contains(ta.stderr.String(), c.want) {
				t.Fatalf("exit %d, want 1 with %q; stderr:\n%s\nstdout:\n%s", code, c.want, ta.stderr.String(), ta.stdout.String())
			}
			if c.never != "" && g.hits[c.never] != nil && g.hits[c.never].Load() != 0 {
				t.Fatalf("%s was called", c.never)
			}
		})
	}
}

// TestSession: a sign-in is kept (mode 0600) and reused until it expires;
// a 401 signs in again once; without a key and without a session, a
// command says to log in; nothing claimable is exit 3.
func TestSession(t *testing.T) {
	key, addr := newKeyT(t)
	dir := t.TempDir()
	raw := writeFile(t, filepath.Join(dir, "wallet.key"), hexutil.Encode(crypto.FromECDSA(key)), 0o600)
	g := newFakeGateway(t)
	u, _ := url.Parse(g.URL)
	var token atomic.Int64
	g.on("POST /api/auth/challenge", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"message": siwe(u.Host, addr)})
	})
	g.on("POST /api/auth/login", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Message, Signature string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		sig, _ := hexutil.Decode(req.Signature)
		if len(sig) == 65 {
			sig[64] -= 27
		}
		pub, err := crypto.SigToPub(crypto.Keccak256([]byte(fmt.Sprintf("\x19Ethereum Signed Message:\n%d%s", len(req.Message), req.Message))), sig)
		if err != nil || crypto.PubkeyToAddress(*pub).Hex() != addr {
			writeJSON(w, 401, map[string]any{"error": map[string]string{"code": "invalid_signature", "message": "no"}})
			return
		}
		writeJSON(w, 200, map[string]string{"token": fmt.Sprint("tok", token.Add(1)), "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"wallet": strings.ToLower(addr)})
	})
	g.on("GET /api/nodes", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != fmt.Sprint("Bearer tok", token.Load()) {
			writeJSON(w, 401, map[string]any{"error": map[string]string{"code": "invalid_token", "message": "expired"}})
			return
		}
		writeJSON(w, 200, map[string]any{"wallet": strings.ToLower(addr), "nodes": []map[string]any{
			{"node_id": "NODE-EU-AAAAAAAA", "status": "online", "chain_ids": []int{137}, "total_earned_units": "0"}}})
	})
	g.on("GET /api/nodes/NODE-EU-AAAAAAAA/earnings", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"node_id": "NODE-EU-AAAAAAAA", "total_earned_units": "0", "allocated_units": "0",
			"claimed_units": "0", "reserved_units": "0", "claimable_units": "0", "pending_settlement_units": "0"})
	})
	g.on("POST /api/nodes/NODE-EU-AAAAAAAA/claim", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 409, map[string]any{"error": map[string]string{"code": "nothing_claimable", "message": "nothing"}})
	})
	ta := newTestApp(t)
	ta.env[envGateway] = g.URL
	if code := ta.run("status"); code != exitError || !strings.Contains(ta.stderr.String(), "not signed in to") {
		t.Fatalf("status without key or session: exit %d %s", code, ta.stderr.String())
	}
	ta.env[envKeyFile] = raw
	if code := ta.run("login"); code != 0 || token.Load() != 1 {
		t.Fatalf("login: exit %d %s", code, ta.stderr.String())
	}
	sess := filepath.Join(ta.env["HOME"], ".config", "tollgate-node", "session.json")
	if fi, err := os.Stat(sess); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v %v", fi, err)
	}
	delete(ta.env, envKeyFile) // the session alone serves the hour
	if code := ta.run("status"); code != 0 || token.Load() != 1 || !strings.Contains(ta.stdout.String(), "NODE-EU-AAAAAAAA  online") {
		t.Fatalf("status with the session: exit %d logins %d\n%s%s", code, token.Load(), ta.stdout.String(), ta.stderr.String())
	}
	token.Add(1) // the gateway no longer takes the kept token
	if code := ta.run("status"); code != exitError || !strings.Contains(ta.stderr.String(), "HTTP 401 invalid_token") {
		t.Fatalf("status with a dead token and no key: exit %d %s", code, ta.stderr.String())
	}
	ta.env[envKeyFile] = raw
	if code := ta.run("status", "--json"); code != 0 || token.Load() != 3 {
		t.Fatalf("status with a dead token and the key: exit %d logins %d %s", code, token.Load(), ta.stderr.String())
	}
	if code := ta.run("claim"); code != exitNothing || !strings.Contains(ta.stderr.String(), "nothing to claim") {
		t.Fatalf("claim with nothing claimable: exit %d %s", code, ta.stderr.String())
	}
	if err := os.Chmod(sess, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := ta.run("status"); code != exitError || !strings.Contains(ta.stderr.String(), "session file "+sess+" is accessible by others") {
		t.Fatalf("status with an open session file: exit %d %s", code, ta.stderr.String())
	}
}

// TestProof: proof prints and writes the wallet's line; --check accepts the
// endpoint that serves it and refuses one that names another wallet,
// redirects, or does not serve it — as registration would.
func TestProof(t *testing.T) {
	key, addr := newKeyT(t)
	dir := t.TempDir()
	ta := newTestApp(t)
	ta.env[envKeyFile] = writeFile(t, filepath.Join(dir, "wallet.key"), hexutil.Encode(crypto.FromECDSA(key)), 0o600)
	if code := ta.run("proof"); code != 0 || ta.stdout.String() != addr+"\n" {
		t.Fatalf("proof: exit %d %q", code, ta.stdout.String())
	}
	out := filepath.Join(dir, "www", ".well-known", "tollgate-node")
	if code := ta.run("proof", "--out", out); code != 0 {
		t.Fatalf("proof --out: exit %d %s", code, ta.stderr.String())
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != addr+"\n" {
		t.Fatalf("the proof file: %q %v", b, err)
	}
	_, other := newKeyT(t)
	serve := map[string]http.HandlerFunc{
		"/ok":       func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, strings.ToLower(addr)) },
		"/other":    func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, other) },
		"/redirect": func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) },
		"/missing":  http.NotFound,
	}
	for name, c := range map[string]struct {
		code int
		want string
	}{
		"/ok":       {0, "ok: "},
		"/other":    {1, "names " + other + ", not your wallet"},
		"/redirect": {1, "HTTP 302, want 200 (redirects are not followed)"},
		"/missing":  {1, "HTTP 404"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != proofPath {
				http.NotFound(w, r)
				return
			}
			serve[name](w, r)
		}))
		code := ta.run("proof", "--check", srv.URL+"/rpc")
		srv.Close()
		if code != c.code || !strings.Contains(ta.stdout.String()+ta.stderr.String(), c.want) {
			t.Errorf("proof --check (%s): exit %d, want %d with %q:\n%s%s", name, code, c.code, c.want, ta.stdout.String(), ta.stderr.String())
		}
	}
	if code := ta.run("deregister"); code != exitUsage || !strings.Contains(ta.stderr.String(), "--node ID is required") {
		t.Errorf("deregister without --node: exit %d %s", code, ta.stderr.String())
	}
}

// TestPlainHTTPOnlyToThisMachine: over plain http anyone on the way reads
// the sign-in signature and the token, and may answer in the gateway's
// name (the claim's contract, the chain's answers). A gateway elsewhere
// must be https; the CLI once signed in to any http:// gateway. Refused
// before any connection (a usage error, not a network one).
func TestPlainHTTPOnlyToThisMachine(t *testing.T) {
	key, _ := newKeyT(t)
	raw := writeFile(t, filepath.Join(t.TempDir(), "wallet.key"), hexutil.Encode(crypto.FromECDSA(key)), 0o600)
	for _, gw := range []string{"http://rpc.example.invalid", "http://10.1.2.3:8080", "http://[2001:db8::1]:8080"} {
		ta := newTestApp(t)
		ta.env[envKeyFile], ta.env[envGateway] = raw, gw
		if code := ta.run("login"); code != exitUsage || !strings.Contains(ta.stderr.String(), "must be https") {
			t.Errorf("login to %s: exit %d %s", gw, code, ta.stderr.String())
		}
	}
	for _, gw := range []string{"https://rpc.example.com", "http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"} {
		if _, err := parseGateway(gw); err != nil {
			t.Errorf("%s: %v", gw, err)
		}
	}
}
