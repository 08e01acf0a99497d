package caddymodule_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gorilla/websocket"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// siwxWallet is a wallet whose key signs Sign-In-With-X messages here.
type siwxWallet struct {
	key  *ecdsa.PrivateKey
	addr string // lower-case 0x hex, as bundles are keyed
}

func newSIWXWallet(t *testing.T, label string) siwxWallet {
	t.Helper()
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("siwx socket test " + label + " " + t.Name())))
	if err != nil {
		t.Fatal(err)
	}
	return siwxWallet{key: k, addr: strings.ToLower(crypto.PubkeyToAddress(k.PublicKey).Hex())}
}

// grantBundle books a settled x402 payment of calls+1 bundle calls for w
// as the gateway does after the facilitator settled it (meter.GrantBundle
// on the gateway's Redis, the paying request drawing one): w's bundle then
// holds calls more.
func (e *meterEnv) grantBundle(t *testing.T, w siwxWallet, calls int) {
	t.Helper()
	m, err := meter.New(e.rdb, meter.Config{Prefix: e.prefix, Shards: e.layout.Shards})
	if err != nil {
		t.Fatal(err)
	}
	pg, err := m.PrepareGrant(meter.Request{ChainID: 137, Calls: 1, Method: "eth_blockNumber"},
		meter.Grant{TxHash: fmt.Sprintf("0x%064x", time.Now().UnixNano()), Wallet: w.addr, Network: "eip155:8453", Amount: money.BundlePrice, Calls: calls + 1})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := m.GrantBundle(context.Background(), pg); err != nil || d.Outcome != meter.Bundle {
		t.Fatalf("grant: %v %+v", err, d)
	}
}

// bundleLeft is w's bundle calls left, as Redis holds them.
func (e *meterEnv) bundleLeft(t *testing.T, w siwxWallet) int {
	t.Helper()
	n, err := e.rdb.HGet(context.Background(), e.layout.Bundle(w.addr), "calls").Int()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// walletDebits sums the Debit events of w's bundle on the stream.
func (e *meterEnv) walletDebits(t *testing.T, w siwxWallet) (debits, calls int) {
	t.Helper()
	for _, ev := range e.stream(t) {
		if d, ok := ev.(*events.Debit); ok && d.Account == w.addr {
			if d.Payer != events.PayerBundle {
				t.Fatalf("a debit of %s is not a bundle debit: %+v", w.addr, d)
			}
			debits++
			calls += d.Calls
		}
	}
	return debits, calls
}

// loseRedis plays a Redis that lost its data: every key of the deployment
// (its prefix) is gone, the used Sign-In-With-X nonces with the rest.
func (e *meterEnv) loseRedis(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var cursor uint64
	for {
		keys, next, err := e.rdb.Scan(ctx, cursor, e.prefix+"*", 500).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			if err := e.rdb.Unlink(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if cursor = next; cursor == 0 {
			return
		}
	}
}

// rebuiltAt writes every shard's generation marker as settlementd's rebuild
// does (balances.GenerationValue: the rebuild's time and its token).
func (e *meterEnv) rebuiltAt(t *testing.T, at time.Time) {
	t.Helper()
	for i := range e.layout.N() {
		if err := e.rdb.Set(context.Background(), e.layout.Shard(i).Generation(), balances.GenerationValue(at, "01TEST"), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// siwx answers a fresh 402's sign-in-with-x challenge (POST /rpc, the
// PAYMENT-REQUIRED header) as the x402 client extension does: the
// challenge's fields, the address, chainId and type, and the EIP-191
// signature of the EIP-4361 text by signer (go-ethereum), base64 JSON.
func (e *meterEnv) siwx(t *testing.T, w siwxWallet, signer *ecdsa.PrivateKey) string {
	t.Helper()
	return e.siwxIssued(t, w, signer, 0)
}

// siwxIssued is siwx with the challenge's issuedAt moved by shift before
// signing (a message the wallet signed that long before or after the
// challenge was made; the gateway takes any issuedAt of the last 5 minutes).
func (e *meterEnv) siwxIssued(t *testing.T, w siwxWallet, signer *ecdsa.PrivateKey, shift time.Duration) string {
	t.Helper()
	a := e.rpc(t, blockNumber)
	raw, err := base64.StdEncoding.DecodeString(a.header.Get("PAYMENT-REQUIRED"))
	var v2 struct {
		Extensions map[string]struct {
			Info struct {
				Domain, URI, Version, Nonce, IssuedAt, ExpirationTime, Statement string
				Resources                                                        []string
			} `json:"info"`
		} `json:"extensions"`
	}
	if a.status != http.StatusPaymentRequired || err != nil || json.Unmarshal(raw, &v2) != nil {
		t.Fatalf("want a 402 with PAYMENT-REQUIRED: %d %v %s", a.status, err, a.body)
	}
	i := v2.Extensions["sign-in-with-x"].Info
	if i.Nonce == "" {
		t.Fatalf("no sign-in-with-x challenge: %s", raw)
	}
	if shift != 0 {
		at, err := time.Parse(time.RFC3339Nano, i.IssuedAt)
		if err != nil {
			t.Fatal(err)
		}
		i.IssuedAt = at.Add(shift).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	p := map[string]any{"domain": i.Domain, "address": crypto.PubkeyToAddress(w.key.PublicKey).Hex(), "statement": i.Statement, "uri": i.URI,
		"version": i.Version, "chainId": "eip155:8453", "type": "eip191", "nonce": i.Nonce, "issuedAt": i.IssuedAt,
		"expirationTime": i.ExpirationTime, "resources": i.Resources}
	var b strings.Builder
	fmt.Fprintf(&b, "%s wants you to sign in with your Ethereum account:\n%s\n\n", i.Domain, p["address"])
	if i.Statement != "" {
		b.WriteString(i.Statement + "\n")
	}
	fmt.Fprintf(&b, "\nURI: %s\nVersion: %s\nChain ID: 8453\nNonce: %s\nIssued At: %s", i.URI, i.Version, i.Nonce, i.IssuedAt)
	if i.ExpirationTime != "" {
		b.WriteString("\nExpiration Time: " + i.ExpirationTime)
	}
	if len(i.Resources) > 0 {
		b.WriteString("\nResources:")
		for _, r := range i.Resources {
			b.WriteString("\n- " + r)
		}
	}
	sig, err := crypto.Sign(accounts.TextHash([]byte(b.String())), signer)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	p["signature"] = hexutil.Encode(sig)
	out, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(out)
}

// refusedWith checks a socket answer is the 402 refusal of reason (in
// error.data.payment_required, the x402 body's "<reason>: <why>").
func refusedWith(t *testing.T, what string, got []byte, reason string) {
	t.Helper()
	var a struct {
		Error *struct {
			Code int `json:"code"`
			Data struct {
				PaymentRequired struct {
					Error string `json:"error"`
				} `json:"payment_required"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(got, &a) != nil || a.Error == nil || a.Error.Code != 402 || !strings.HasPrefix(a.Error.Data.PaymentRequired.Error, reason+": ") {
		t.Fatalf("%s: want the 402 refusal %q, got %s", what, reason, got)
	}
}

// wsMsg is any message a socket sends: an answer or a notification.
type wsMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params struct {
		Subscription json.RawMessage `json:"subscription"`
		Code         int             `json:"code"`
		Reason       string          `json:"reason"`
		Error        struct {
			Code int `json:"code"`
			Data struct {
				PaymentRequired struct {
					Error string `json:"error"`
				} `json:"payment_required"`
			} `json:"data"`
		} `json:"error"`
	} `json:"params"`
}

func (c *wsClient) nextMsg() wsMsg {
	c.t.Helper()
	var m wsMsg
	b := c.next()
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("not a JSON-RPC message: %v: %s", err, b)
	}
	return m
}

// TestSocketSignedInWithSIWX: a socket whose handshake carries a valid
// SIGN-IN-WITH-X message is signed in as the wallet for its life (the
// message checked and its nonce spent once, by the first call), and every
// call and notification draws from the wallet's bundle (docs/callers.md).
func TestSocketSignedInWithSIWX(t *testing.T) {
	e := startSockets(t, meterOpts{free: -1})
	siwxHeader := "SIGN-IN-WITH-X: "

	// 20 single calls, a batch of 5 paid calls and eth_chainId (free), an
	// eth_subscribe, its notifications, an eth_unsubscribe (free): the
	// bundle falls by exactly the units served, every debit names the
	// wallet; then the spent message is refused over POST, on a second
	// socket and over MCP, and the bundle stays as it was.
	t.Run("calls and notifications from the bundle", func(t *testing.T) {
		w := newSIWXWallet(t, "served")
		e.grantBundle(t, w, 1_000)
		debits0, calls0 := e.walletDebits(t, w)
		msg := e.siwx(t, w, w.key)
		c := e.dial(t, "/rpc", siwxHeader+msg)
		const singles = 20
		for i := range singles {
			a := decodeOne(t, c.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"}`, i)))
			if a.Error != nil || string(a.ID) != strconv.Itoa(i) || len(a.Result) < 4 {
				t.Fatalf("call %d over the signed-in socket: %s", i, mustJSON(a))
			}
		}
		batch := decodeBatch(t, c.call(`[`+strings.TrimSuffix(strings.TrimPrefix(batchOf(5), "["), "]")+`,{"jsonrpc":"2.0","id":99,"method":"eth_chainId"}]`))
		if len(batch) != 6 {
			t.Fatalf("batch: %s", mustJSON(batch))
		}
		for _, a := range batch {
			if a.Error != nil {
				t.Fatalf("batch: %s", mustJSON(batch))
			}
		}
		if left := e.bundleLeft(t, w); left != 1_000-singles-5 {
			t.Fatalf("after %d calls and a batch of 5: %d bundle calls left, want %d", singles, left, 1_000-singles-5)
		}
		sub := decodeOne(t, c.call(`{"jsonrpc":"2.0","id":"s","method":"eth_subscribe","params":["newHeads"]}`))
		if sub.Error != nil || len(sub.Result) < 4 {
			t.Fatalf("eth_subscribe: %s", mustJSON(sub))
		}
		notes := 0
		for notes < 5 {
			m := c.nextMsg()
			if m.Method != "eth_subscription" || string(m.Params.Subscription) != string(sub.Result) {
				t.Fatalf("after %d notifications: %+v", notes, m)
			}
			notes++
		}
		c.send(`{"jsonrpc":"2.0","id":"u","method":"eth_unsubscribe","params":[` + string(sub.Result) + `]}`)
		for {
			m := c.nextMsg()
			if m.Method == "eth_subscription" {
				notes++ // charged and sent before the unsubscribe took effect
				continue
			}
			if string(m.ID) != `"u"` || string(m.Result) != "true" {
				t.Fatalf("eth_unsubscribe: %+v", m)
			}
			break
		}
		units := singles + 5 + 1 + notes
		if left := e.bundleLeft(t, w); left != 1_000-units {
			t.Fatalf("%d bundle calls left after %d calls, a batch of 5, eth_subscribe and %d notifications; want %d", left, singles, notes, 1_000-units)
		}
		debits, calls := e.walletDebits(t, w)
		if debits-debits0 != singles+1+1+notes || calls-calls0 != units {
			t.Fatalf("%d debits of %d calls naming the wallet, want %d of %d", debits-debits0, calls-calls0, singles+2+notes, units)
		}

		// The message's nonce is spent: refused everywhere else.
		a := e.rpc(t, blockNumber, siwxHeader+msg)
		var v1 struct {
			Error string `json:"error"`
		}
		if a.status != http.StatusPaymentRequired || json.Unmarshal(a.body, &v1) != nil || !strings.HasPrefix(v1.Error, "siwx_nonce_used: ") {
			t.Fatalf("the socket's message over POST: %d %s", a.status, a.body)
		}
		second := e.dial(t, "/rpc", siwxHeader+msg)
		refusedWith(t, "the socket's message on a second socket", second.call(blockNumber), "siwx_nonce_used")
		refusedWith(t, "and its next call", second.call(blockNumber), "siwx_nonce_used")
		if r, m := e.mcpRPC(t, `{"method":"eth_blockNumber"}`, "", siwxHeader+msg); !m.Result.IsError ||
			!strings.Contains(string(m.Result.StructuredContent), "siwx_nonce_used") {
			t.Fatalf("the socket's message over MCP: %d %s", r.status, r.body)
		}
		// The first socket is still signed in.
		if a := decodeOne(t, c.call(blockNumber)); a.Error != nil {
			t.Fatalf("the signed-in socket after the replays: %s", mustJSON(a))
		}
		if left := e.bundleLeft(t, w); left != 1_000-units-1 {
			t.Fatalf("%d bundle calls left after the replays, want %d", left, 1_000-units-1)
		}
		t.Logf("%d calls, a batch of 5 and %d notifications drawn from the bundle; the spent message refused over POST, a second socket and MCP", singles, notes)
	})

	// The bundle running out mid-socket: a call gets POST's refusal
	// (bundle_exhausted), the socket stays signed in and draws again once
	// the wallet buys another bundle; a subscription gets exactly the
	// notifications the bundle pays for, then tollgate_closing and 4402.
	t.Run("bundle runs out", func(t *testing.T) {
		w := newSIWXWallet(t, "runs out")
		e.grantBundle(t, w, 3)
		c := e.dial(t, "/rpc", siwxHeader+e.siwx(t, w, w.key))
		for i := range 3 {
			if a := decodeOne(t, c.call(blockNumber)); a.Error != nil {
				t.Fatalf("call %d of 3: %s", i, mustJSON(a))
			}
		}
		refusedWith(t, "the 4th call", c.call(blockNumber), "bundle_exhausted")
		if left := e.bundleLeft(t, w); left != 0 {
			t.Fatalf("%d calls left, want 0", left)
		}
		e.grantBundle(t, w, 2+1+4)
		for i := range 2 {
			if a := decodeOne(t, c.call(blockNumber)); a.Error != nil {
				t.Fatalf("call %d after the new bundle: %s", i, mustJSON(a))
			}
		}
		sub := decodeOne(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`))
		if sub.Error != nil {
			t.Fatalf("eth_subscribe: %s", mustJSON(sub))
		}
		notes := 0
		for {
			m := c.nextMsg()
			if m.Method == "eth_subscription" {
				notes++
				continue
			}
			if m.Method != "tollgate_closing" || m.Params.Code != 4402 || m.Params.Reason != "payment_required" || m.Params.Error.Code != 402 ||
				!strings.HasPrefix(m.Params.Error.Data.PaymentRequired.Error, "bundle_exhausted: ") {
				t.Fatalf("after %d notifications: %+v", notes, m)
			}
			break
		}
		if notes != 4 {
			t.Fatalf("%d notifications delivered, the bundle paid for 4", notes)
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := c.ws.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4402 {
			t.Fatalf("after tollgate_closing: message %q, error %v; want close 4402 and nothing else", b, err)
		}
		if left := e.bundleLeft(t, w); left != 0 {
			t.Fatalf("%d calls left, want 0", left)
		}
		if _, calls := e.walletDebits(t, w); calls != 1+3+1+2+1+4 {
			t.Fatalf("the wallet's debits count %d calls, want 12 (2 grants' requests, 5 calls, eth_subscribe, 4 notifications)", calls)
		}
	})

	// Redis loses its data (no generation marker, the wallet's bundle gone):
	// a signed-in socket's call is answered 503 "retry shortly" and nothing
	// is served; once Redis is rebuilt with a bundle for the wallet, the
	// same socket draws again without another signature.
	t.Run("redis recovering", func(t *testing.T) {
		w := newSIWXWallet(t, "recovering")
		e.grantBundle(t, w, 10)
		c := e.dial(t, "/rpc", siwxHeader+e.siwx(t, w, w.key))
		if a := decodeOne(t, c.call(blockNumber)); a.Error != nil {
			t.Fatalf("signed in: %s", mustJSON(a))
		}
		ctx := context.Background()
		for i := range e.layout.N() {
			if err := e.rdb.Del(ctx, e.layout.Shard(i).Generation()).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.rdb.Del(ctx, e.layout.Bundle(w.addr)).Err(); err != nil {
			t.Fatal(err)
		}
		var a struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Data struct {
					HTTPStatus int `json:"http_status"`
					RetryAfter int `json:"retry_after"`
				} `json:"data"`
			} `json:"error"`
		}
		got := c.call(blockNumber)
		testenv.MarkRebuiltLayout(t, e.rdb, e.layout)
		if json.Unmarshal(got, &a) != nil || a.Error == nil || a.Error.Data.HTTPStatus != 503 || a.Error.Data.RetryAfter < 1 || a.Result != nil {
			t.Fatalf("a signed-in call while Redis is rebuilt: %s", got)
		}
		e.grantBundle(t, w, 5)
		if a := decodeOne(t, c.call(blockNumber)); a.Error != nil || e.bundleLeft(t, w) != 4 {
			t.Fatalf("after the rebuild: %s, %d left (want 4)", mustJSON(a), e.bundleLeft(t, w))
		}
	})

	// Redis loses its data while a socket is signed in (every key of the
	// deployment gone: the used nonces with the rest) and settlementd
	// rebuilds it (the generation marker with the rebuild's time, the
	// wallet's bundle from PostgreSQL). The message that signed the socket in
	// is still young enough to be checked, but it was used: another socket
	// presenting it is refused at every call (siwx_nonce_used), not signed
	// in as the wallet for its life, and nothing is drawn for it; while the
	// marker is missing a sign-in is "retry shortly" (503), never served.
	// The signed-in socket keeps drawing, and a message signed after the
	// rebuild signs a new socket in.
	t.Run("redis loss", func(t *testing.T) {
		w := newSIWXWallet(t, "loss")
		e.grantBundle(t, w, 10)
		// Signed two minutes ago; Redis lost and rebuilt a minute ago.
		msg := e.siwxIssued(t, w, w.key, -2*time.Minute)
		owner := e.dial(t, "/rpc", siwxHeader+msg)
		if a := decodeOne(t, owner.call(blockNumber)); a.Error != nil {
			t.Fatalf("signed in: %s", mustJSON(a))
		}
		e.loseRedis(t)
		e.grantBundle(t, w, 10) // the bundle, as a rebuild restores it
		replay := e.dial(t, "/rpc", siwxHeader+msg)
		var a struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Data struct {
					HTTPStatus int `json:"http_status"`
				} `json:"data"`
			} `json:"error"`
		}
		if got := replay.call(blockNumber); json.Unmarshal(got, &a) != nil || a.Error == nil || a.Error.Data.HTTPStatus != 503 || a.Result != nil {
			t.Fatalf("the used message on another socket before the rebuild: %s", got)
		}
		e.rebuiltAt(t, time.Now().Add(-time.Minute))
		for i := range 3 {
			refusedWith(t, fmt.Sprintf("the used message on another socket after the rebuild, call %d", i), replay.call(blockNumber), "siwx_nonce_used")
		}
		if left := e.bundleLeft(t, w); left != 10 {
			t.Fatalf("%d bundle calls left, want 10: the replay drew", left)
		}
		if a := decodeOne(t, owner.call(blockNumber)); a.Error != nil || e.bundleLeft(t, w) != 9 {
			t.Fatalf("the signed-in socket after the rebuild: %s, %d left (want 9)", mustJSON(a), e.bundleLeft(t, w))
		}
		fresh := e.dial(t, "/rpc", siwxHeader+e.siwx(t, w, w.key))
		if a := decodeOne(t, fresh.call(blockNumber)); a.Error != nil || e.bundleLeft(t, w) != 8 {
			t.Fatalf("a message signed after the rebuild: %s, %d left (want 8)", mustJSON(a), e.bundleLeft(t, w))
		}
	})

	// One message on eight sockets whose first calls (each a batch of 3,
	// several per socket) go at once: exactly one socket signs in, every
	// other one is refused siwx_nonce_used at every call and stays refused,
	// and the bundle falls by exactly what the winner was served.
	t.Run("one message races on many sockets", func(t *testing.T) {
		w := newSIWXWallet(t, "race")
		e.grantBundle(t, w, 1_000)
		msg := e.siwx(t, w, w.key)
		const sockets, each = 8, 3
		clients := make([]*wsClient, sockets)
		for i := range clients {
			clients[i] = e.dial(t, "/rpc", siwxHeader+msg)
		}
		start := make(chan struct{})
		served := make([]int, sockets)
		var wg sync.WaitGroup
		for k, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range each {
					c.send(fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":%d,"method":"eth_gasPrice"},{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"}]`, 3*i, 3*i+1, 3*i+2))
				}
				for range each {
					_ = c.ws.SetReadDeadline(time.Now().Add(time.Minute))
					_, b, err := c.ws.ReadMessage()
					if err != nil {
						t.Errorf("socket %d: %v", k, err)
						return
					}
					var batch []json.RawMessage
					if json.Unmarshal(b, &batch) == nil && len(batch) == 3 && !strings.Contains(string(b), `"error"`) {
						served[k]++
						continue
					}
					var one struct {
						Error *struct {
							Code int `json:"code"`
							Data struct {
								PaymentRequired struct {
									Error string `json:"error"`
								} `json:"payment_required"`
							} `json:"data"`
						} `json:"error"`
					}
					if json.Unmarshal(b, &batch) != nil || len(batch) == 0 || json.Unmarshal(batch[0], &one) != nil || one.Error == nil ||
						one.Error.Code != 402 || !strings.HasPrefix(one.Error.Data.PaymentRequired.Error, "siwx_nonce_used: ") {
						t.Errorf("socket %d: %s", k, b)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		winners, calls := 0, 0
		for k, n := range served {
			if n > 0 {
				winners++
				calls += 3 * n
				if n != each {
					t.Errorf("the signed-in socket %d was served %d of its %d batches", k, n, each)
				}
			}
		}
		if winners != 1 || e.bundleLeft(t, w) != 1_000-calls {
			t.Fatalf("%d sockets signed in with one message (%v), %d bundle calls left; want 1 and %d", winners, served, e.bundleLeft(t, w), 1_000-calls)
		}
		for k, c := range clients {
			if served[k] == 0 {
				refusedWith(t, fmt.Sprintf("losing socket %d afterwards", k), c.call(blockNumber), "siwx_nonce_used")
			}
		}
		if e.bundleLeft(t, w) != 1_000-calls {
			t.Fatalf("%d bundle calls left after the losers' calls, want %d", e.bundleLeft(t, w), 1_000-calls)
		}
	})

	// Four sockets of one wallet, each signed in with its own message, send
	// 20 calls each at once against a bundle of 50: exactly 50 are served,
	// the rest refused bundle_exhausted, nothing overdrawn.
	t.Run("concurrent sockets", func(t *testing.T) {
		w := newSIWXWallet(t, "concurrent")
		const bundle, sockets, each = 50, 4, 20
		e.grantBundle(t, w, bundle)
		clients := make([]*wsClient, sockets)
		for i := range clients {
			clients[i] = e.dial(t, "/rpc", siwxHeader+e.siwx(t, w, w.key))
		}
		var mu sync.Mutex
		served, refused := 0, 0
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"}`, i))
				}
				for range each {
					_ = c.ws.SetReadDeadline(time.Now().Add(time.Minute))
					_, b, err := c.ws.ReadMessage()
					if err != nil {
						t.Errorf("read: %v", err)
						return
					}
					var a struct {
						Result json.RawMessage `json:"result"`
						Error  *struct {
							Code int `json:"code"`
							Data struct {
								PaymentRequired struct {
									Error string `json:"error"`
								} `json:"payment_required"`
							} `json:"data"`
						} `json:"error"`
					}
					_ = json.Unmarshal(b, &a)
					mu.Lock()
					switch {
					case a.Error == nil && len(a.Result) > 2:
						served++
					case a.Error != nil && a.Error.Code == 402 && strings.HasPrefix(a.Error.Data.PaymentRequired.Error, "bundle_exhausted: "):
						refused++
					default:
						t.Errorf("unexpected answer %s", b)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if served != bundle || refused != sockets*each-bundle || e.bundleLeft(t, w) != 0 {
			t.Fatalf("%d served, %d refused, %d left; want %d, %d, 0", served, refused, e.bundleLeft(t, w), bundle, sockets*each-bundle)
		}
		if _, calls := e.walletDebits(t, w); calls != 1+bundle {
			t.Fatalf("the wallet's debits count %d calls, want %d", calls, 1+bundle)
		}
	})

	// A stranger gets no draw from the wallet without its signature: a
	// message signed by another key for the wallet's address is refused at
	// every call; the wallet's spent message is refused on another socket,
	// over POST and over MCP (header and _meta); the message in a query
	// parameter is not a credential (the free tier, off here: 402
	// payment_required). The bundle moves only for the owner's socket.
	t.Run("attacker", func(t *testing.T) {
		w := newSIWXWallet(t, "victim")
		e.grantBundle(t, w, 100)
		intruder := newSIWXWallet(t, "intruder")
		forged := e.dial(t, "/rpc", siwxHeader+e.siwx(t, w, intruder.key))
		refusedWith(t, "a message the wallet did not sign", forged.call(blockNumber), "invalid_siwx_signature")
		refusedWith(t, "its next call", forged.call(blockNumber), "invalid_siwx_signature")

		msg := e.siwx(t, w, w.key)
		owner := e.dial(t, "/rpc", siwxHeader+msg)
		if a := decodeOne(t, owner.call(blockNumber)); a.Error != nil {
			t.Fatalf("the owner's socket: %s", mustJSON(a))
		}
		stranger := e.dial(t, "/rpc", siwxHeader+msg)
		for i := range 3 {
			refusedWith(t, fmt.Sprintf("the owner's message on a stranger's socket, call %d", i), stranger.call(blockNumber), "siwx_nonce_used")
		}
		q := url.QueryEscape(msg)
		byQuery := e.dial(t, "/rpc?siwx="+q+"&sign-in-with-x="+q+"&SIGN-IN-WITH-X="+q)
		if a := decodeOne(t, byQuery.call(blockNumber)); a.Error == nil || a.Error.Code != 402 || strings.Contains(string(a.Error.Data), "siwx_") {
			t.Fatalf("the message in the query: %s", mustJSON(a))
		}
		if a := e.rpc(t, blockNumber, siwxHeader+msg); a.status != http.StatusPaymentRequired || !strings.Contains(string(a.body), "siwx_nonce_used") {
			t.Fatalf("the owner's message over POST: %d %s", a.status, a.body)
		}
		if r, m := e.mcpRPC(t, `{"method":"eth_blockNumber"}`, "", siwxHeader+msg); !m.Result.IsError ||
			!strings.Contains(string(m.Result.StructuredContent), "siwx_nonce_used") {
			t.Fatalf("over MCP's header: %d %s", r.status, r.body)
		}
		if r, m := e.mcpRPC(t, `{"method":"eth_blockNumber"}`, `{"x402/sign-in-with-x":"`+msg+`"}`); !m.Result.IsError ||
			!strings.Contains(string(m.Result.StructuredContent), "siwx_nonce_used") {
			t.Fatalf("over MCP's _meta: %d %s", r.status, r.body)
		}
		if left := e.bundleLeft(t, w); left != 99 {
			t.Fatalf("%d bundle calls left, want 99: only the owner's call drew", left)
		}
		if a := decodeOne(t, owner.call(blockNumber)); a.Error != nil || e.bundleLeft(t, w) != 98 {
			t.Fatalf("the owner's socket after the attempts: %s, %d left", mustJSON(a), e.bundleLeft(t, w))
		}
	})
}

// TestSocketSignInEndsOnReload: a socket's sign-in lives in its
// configuration. A reload that moves the gateway to another public_url
// (the domain a Sign-In-With-X message must name) ends the signed-in socket
// with 1001; on the new configuration the message that signed it in is
// refused at every call (invalid_siwx_domain_mismatch) and draws nothing,
// and a message signed for the new domain signs a new socket in.
func TestSocketSignInEndsOnReload(t *testing.T) {
	e := startSockets(t, meterOpts{free: -1})
	w := newSIWXWallet(t, "reload")
	e.grantBundle(t, w, 10)
	msg := e.siwx(t, w, w.key)
	old := e.dial(t, "/rpc", "SIGN-IN-WITH-X: "+msg)
	if a := decodeOne(t, old.call(blockNumber)); a.Error != nil {
		t.Fatalf("signed in: %s", mustJSON(a))
	}
	moved := strings.Replace(e.caddyfile, "chain 137 {", "public_url http://gw.example\n\t\t\tchain 137 {", 1)
	if moved == e.caddyfile {
		t.Fatal("no chain 137 block to put public_url before")
	}
	e.gw.Reload(moved)
	_ = old.ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, b, err := old.ws.ReadMessage()
		if err == nil {
			t.Fatalf("the signed-in socket after the reload sent %s", b)
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 1001 {
			t.Fatalf("the signed-in socket after the reload: %v, want close 1001", err)
		}
		break
	}
	again := e.dial(t, "/rpc", "SIGN-IN-WITH-X: "+msg)
	for i := range 2 {
		refusedWith(t, fmt.Sprintf("the message for the old domain, call %d", i), again.call(blockNumber), "invalid_siwx_domain_mismatch")
	}
	if left := e.bundleLeft(t, w); left != 9 {
		t.Fatalf("%d bundle calls left, want 9", left)
	}
	fresh := e.dial(t, "/rpc", "SIGN-IN-WITH-X: "+e.siwx(t, w, w.key))
	for range 2 {
		if a := decodeOne(t, fresh.call(blockNumber)); a.Error != nil {
			t.Fatalf("a message for the new domain: %s", mustJSON(a))
		}
	}
	if left := e.bundleLeft(t, w); left != 7 {
		t.Fatalf("%d bundle calls left, want 7", left)
	}
}

// TestSignedInSocketAndTheAddressRate: a signed-in socket keeps POST's rule
// for the address's request rate (shard.go): every draw counts against the
// address's rate in the same round trip, a draw the bundle pays is served
// past it (it is paid, like a key's paid call), and once the bundle cannot
// pay, a call from an address over its rate is refused 429 with
// retry_after, not 402; a POST from the address is limited too.
func TestSignedInSocketAndTheAddressRate(t *testing.T) {
	e := startSockets(t, meterOpts{free: -1, ipRate: "3 1m 3"})
	w := newSIWXWallet(t, "rate")
	e.grantBundle(t, w, 5)
	c := e.dial(t, "/rpc", "SIGN-IN-WITH-X: "+e.siwx(t, w, w.key)) // the 402 took one of the address's 3
	for i := range 5 {
		if a := decodeOne(t, c.call(blockNumber)); a.Error != nil {
			t.Fatalf("paid call %d past the address's rate: %s", i, mustJSON(a))
		}
	}
	var a struct {
		Error *struct {
			Code int `json:"code"`
			Data struct {
				HTTPStatus int `json:"http_status"`
				RetryAfter int `json:"retry_after"`
			} `json:"data"`
		} `json:"error"`
	}
	if got := c.call(blockNumber); json.Unmarshal(got, &a) != nil || a.Error == nil || a.Error.Data.HTTPStatus != 429 || a.Error.Data.RetryAfter < 1 {
		t.Fatalf("a call the bundle cannot pay from an address over its rate: %s", got)
	}
	if r := e.rpc(t, blockNumber); r.status != http.StatusTooManyRequests {
		t.Fatalf("a POST from the address: %d %s", r.status, r.body)
	}
	if left := e.bundleLeft(t, w); left != 0 {
		t.Fatalf("%d bundle calls left, want 0", left)
	}
}
