package solvency

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// receiver is a chat webhook that records what it is sent. fail makes it
// answer 500 (the POST does not count as delivered).
type receiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	got   []map[string]string
	fail  atomic.Bool
	calls atomic.Int64
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.calls.Add(1)
		if r.fail.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		b, _ := io.ReadAll(req.Body)
		var m map[string]string
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &m) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, m)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) delivered() []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]string(nil), r.got...)
}

type env struct {
	t       *testing.T
	ctx     context.Context
	m       *devnet.Manifest
	client  *ethclient.Client
	pool    *pgxpool.Pool
	usdt    *testusdt.TestUSDT
	claims  *claimscontract.ClaimsContract
	usdtA   common.Address
	claimsA common.Address
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	e := &env{t: t, ctx: ctx, m: d.Manifest, usdt: testusdt.NewTestUSDT(), claims: claimscontract.NewClaimsContract()}
	if e.client, err = ethclient.DialContext(ctx, e.m.Polygon.RPCURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.client.Close)
	_, e.pool = settletest.DB(t)
	e.usdtA, e.claimsA = common.HexToAddress(e.m.Polygon.USDT), common.HexToAddress(e.m.Polygon.ClaimsContract)
	return e
}

func (e *env) transact(from string, to common.Address, data []byte) {
	e.t.Helper()
	a, _ := e.m.Account(from)
	k, _ := a.Key()
	opts := bind.NewKeyedTransactor(k, big.NewInt(137))
	opts.Context = e.ctx
	tx, err := bind.Transact(bind.NewBoundContract(to, e.claims.GetABI(), e.client, e.client, e.client), opts, data)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := deploy.WaitReceipt(e.ctx, e.client, tx.Hash(), 20*time.Millisecond)
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("%v %v", r, err)
	}
}

// allocate raises a node's allocation without funding the contract, as a
// buggy or compromised settlement would.
func (e *env) allocate(node string, amount money.Units) {
	e.transact("relayer", e.claimsA, e.claims.PackCreateClaim(node, amount.Big(), big.NewInt(time.Now().Add(time.Hour).Unix())))
}

func (e *env) fund(amount money.Units) {
	e.transact("deployer", e.usdtA, e.usdt.PackMint(e.claimsA, amount.Big()))
}

func (e *env) checker(webhook string, governor bool) *Checker {
	e.t.Helper()
	cfg := Config{Pool: e.pool, Client: e.client, ChainID: 137, USDT: e.usdtA, Claims: e.claimsA, WebhookURL: webhook,
		PollInterval: 20 * time.Millisecond, ReceiptTimeout: 30 * time.Second}
	if governor {
		a, _ := e.m.Account("governor")
		s, err := chain.ParseSigner("governor", a.PrivateKey)
		if err != nil {
			e.t.Fatal(err)
		}
		cfg.Governor = s
	}
	c, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) run(c *Checker) {
	e.t.Helper()
	if err := c.Run(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) contractPaused() bool {
	e.t.Helper()
	p, err := bind.Call(e.claims.Instance(e.client, e.claimsA), &bind.CallOpts{Context: e.ctx}, e.claims.PackPaused(), e.claims.UnpackPaused)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// An underfunded contract pauses new claim signatures and sends exactly one
// alert; the pause outlasts the condition until an admin unpauses; a new
// shortfall after that is a new incident with a new alert.
func TestUnderfundedPausesAndAlertsOnce(t *testing.T) {
	e := setup(t)
	rcv := newReceiver(t)
	c := e.checker(rcv.srv.URL, false)

	e.run(c) // solvent (nothing owed): nothing happens
	if paused, _ := c.ClaimsPaused(e.ctx); paused || rcv.calls.Load() != 0 {
		t.Fatalf("solvent contract: paused=%v, %d webhook calls", paused, rcv.calls.Load())
	}

	e.fund(2 * money.Scale)
	e.allocate("NODE-EU-AAAAAAAA", 5*money.Scale) // owes 5, holds 2
	for range 3 {
		e.run(c)
	}
	paused, reason := c.ClaimsPaused(e.ctx)
	if !paused || !strings.Contains(reason, "short by 3 USDT") {
		t.Fatalf("paused=%v reason=%q", paused, reason)
	}
	got := rcv.delivered()
	if len(got) != 1 {
		t.Fatalf("%d alerts delivered, want exactly 1", len(got))
	}
	if got[0]["text"] == "" || got[0]["text"] != got[0]["content"] || !strings.Contains(got[0]["text"], e.claimsA.Hex()) {
		t.Fatalf("alert body %v", got[0])
	}

	// Funding the contract does not resume signatures by itself.
	e.fund(10 * money.Scale)
	e.run(c)
	if paused, _ := ClaimsPaused(e.ctx, e.pool); !paused {
		t.Fatal("resumed without an admin")
	}
	if err := c.Unpause(e.ctx, "admin@example"); err != nil {
		t.Fatal(err)
	}
	e.run(c)
	if paused, _ := c.ClaimsPaused(e.ctx); paused {
		t.Fatal("still paused after Unpause with a solvent contract")
	}
	if n := len(rcv.delivered()); n != 1 {
		t.Fatalf("%d alerts, want 1", n)
	}

	// A new shortfall is a new incident: paused again, one more alert.
	e.allocate("NODE-EU-AAAAAAAA", 20*money.Scale) // owes 20, holds 12
	e.run(c)
	e.run(c)
	if paused, _ := c.ClaimsPaused(e.ctx); !paused || len(rcv.delivered()) != 2 {
		t.Fatalf("second incident: paused=%v, %d alerts", paused, len(rcv.delivered()))
	}
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM solvency_checks WHERE NOT solvent`); n != 5 {
		t.Fatalf("%d insolvent readings recorded, want 5", n)
	}
}

// An alert the webhook refuses is retried by the next run until delivered,
// then not repeated.
func TestAlertRetriedUntilDelivered(t *testing.T) {
	e := setup(t)
	rcv := newReceiver(t)
	rcv.fail.Store(true)
	c := e.checker(rcv.srv.URL, false)
	e.allocate("NODE-EU-AAAAAAAA", money.Scale)
	if err := c.Run(e.ctx); err == nil || strings.Contains(err.Error(), rcv.srv.URL) {
		t.Fatalf("run with the webhook down: %v", err)
	}
	if paused, _ := c.ClaimsPaused(e.ctx); !paused {
		t.Fatal("not paused while the alert is owed")
	}
	rcv.fail.Store(false)
	e.run(c)
	e.run(c)
	if n := len(rcv.delivered()); n != 1 || rcv.calls.Load() != 2 {
		t.Fatalf("%d delivered, %d calls; want 1 delivered after 2 calls", n, rcv.calls.Load())
	}
}

// With the governor key the contract itself is paused on chain, and the
// admin Unpause lifts it too.
func TestOnChainPauseWithGovernor(t *testing.T) {
	e := setup(t)
	rcv := newReceiver(t)
	c := e.checker(rcv.srv.URL, true)
	e.allocate("NODE-EU-AAAAAAAA", money.Scale)
	e.run(c)
	e.run(c)
	if !e.contractPaused() {
		t.Fatal("ClaimsContract not paused on chain")
	}
	if paused, _ := c.ClaimsPaused(e.ctx); !paused || len(rcv.delivered()) != 1 {
		t.Fatalf("paused=%v alerts=%d", paused, len(rcv.delivered()))
	}
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM chain_txs WHERE kind = 'pause' AND state = 'mined'`); n != 1 {
		t.Fatalf("%d pause transactions", n)
	}
	e.fund(money.Scale)
	if err := c.Unpause(e.ctx, "admin@example"); err != nil {
		t.Fatal(err)
	}
	if e.contractPaused() {
		t.Fatal("ClaimsContract still paused on chain")
	}
	if paused, _ := c.ClaimsPaused(e.ctx); paused {
		t.Fatal("signatures still paused")
	}
	e.run(c)
	if paused, _ := c.ClaimsPaused(e.ctx); paused || e.contractPaused() {
		t.Fatal("re-paused a solvent contract")
	}
	if n := settletest.Count(t, e.pool, `SELECT count(*) FROM chain_txs WHERE kind IN ('pause', 'unpause') AND state = 'mined'`); n != 2 {
		t.Fatalf("%d pause/unpause transactions, want 2", n)
	}

	// The admin emergency pause (a critical bug): signatures and contract.
	if err := c.Pause(e.ctx, "admin@example", "critical bug", true); err != nil {
		t.Fatal(err)
	}
	if paused, reason := c.ClaimsPaused(e.ctx); !paused || !strings.Contains(reason, "critical bug") || !e.contractPaused() {
		t.Fatalf("emergency pause: %v %q contract=%v", paused, reason, e.contractPaused())
	}
	if n := len(rcv.delivered()); n != 1 {
		t.Fatalf("an admin pause sent an alert (%d)", n)
	}
}
