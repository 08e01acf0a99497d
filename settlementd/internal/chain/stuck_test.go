package chain

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/hardhat"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// hhEnv is a Hardhat Network node (automine off: the test mines) serving
// chain 137 with the contracts, and a Sender that may replace the relayer's
// transactions after 300 ms.
type hhEnv struct {
	t       *testing.T
	ctx     context.Context
	n       *hardhat.Node
	claims  *claimscontract.ClaimsContract
	claimsA common.Address
	relayer *Signer
	sender  *Sender
	logs    *observer.ObservedLogs
}

func newHHEnv(t *testing.T, policy TxPolicy) *hhEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	n := hardhat.Start(t, 137)
	addr := func(name string) common.Address { return crypto.PubkeyToAddress(devnet.DevKey(name).PublicKey) }
	for _, name := range []string{"deployer", "relayer", "governor"} {
		if err := n.SetBalance(ctx, addr(name), new(big.Int).Mul(big.NewInt(1e6), big.NewInt(1e18))); err != nil {
			t.Fatal(err)
		}
	}
	var poly *deploy.Polygon
	if err := n.Automined(ctx, func() (err error) {
		poly, err = deploy.DeployPolygon(ctx, n.Client, bind.NewKeyedTransactor(devnet.DevKey("deployer"), big.NewInt(137)),
			deploy.PolygonParams{Treasury: addr("deployer"), Governor: addr("governor"), ClaimCreator: addr("relayer"), MinDeposit: big.NewInt(1)},
			deploy.WithPollInterval(10*time.Millisecond))
		return err
	}); err != nil {
		t.Fatalf("deploying onto hardhat: %v\n%s", err, n.Output())
	}
	_, pool := settletest.DB(t)
	core, logs := observer.New(zapcore.InfoLevel)
	e := &hhEnv{t: t, ctx: ctx, n: n, claims: claimscontract.NewClaimsContract(), claimsA: poly.Claims,
		relayer: NewSigner("relayer", devnet.DevKey("relayer")), logs: logs}
	if policy.StuckAfter == 0 {
		policy.StuckAfter = 300 * time.Millisecond
	}
	var err error
	if e.sender, err = NewSender(SenderConfig{Pool: pool, Client: n.Client, ChainID: 137, PollInterval: 20 * time.Millisecond,
		Policy: policy, Signers: []*Signer{e.relayer}, Log: zap.New(core)}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *hhEnv) intent(purpose, node string, amount int64) Intent {
	return Intent{Purpose: purpose, Kind: KindCreateClaim, To: e.claimsA, NodeID: node, Unpack: e.claims.UnpackError,
		Data: e.claims.PackCreateClaim(node, big.NewInt(amount), big.NewInt(time.Now().Add(time.Hour).Unix()))}
}

func decodeRaw(t *testing.T, raw []byte) *types.Transaction {
	t.Helper()
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		t.Fatal(err)
	}
	return &tx
}

// spike mines a block every 50 ms whose base fee is baseFee, until the
// returned stop is called: a gas spike that transactions priced below it
// cannot pay for, while the node keeps them pending.
func (e *hhEnv) spike(baseFee *big.Int) (stop func()) {
	ctx, cancel := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := e.n.SetNextBaseFee(ctx, baseFee); err != nil {
				return
			}
			if err := e.n.Mine(ctx); err != nil {
				return
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

func (e *hhEnv) allocation(node string) *big.Int {
	e.t.Helper()
	a, err := bind.Call(e.claims.Instance(e.n.Client, e.claimsA), &bind.CallOpts{Context: e.ctx}, e.claims.PackAllocation(node), e.claims.UnpackAllocation)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *hhEnv) versions(id int64) int64 {
	return settletest.Count(e.t, e.sender.cfg.Pool, `SELECT count(*) FROM chain_tx_attempts WHERE chain_tx_id = $1`, id)
}

// A transaction priced under a gas spike stays pending on a real node; after
// StuckAfter the Sender replaces it at the same nonce with fees 20 % higher,
// the replacement is mined, and the original never is.
func TestStuckTransactionIsReplacedAndMined(t *testing.T) {
	e := newHHEnv(t, TxPolicy{})
	tx, err := e.sender.Submit(e.ctx, e.relayer, e.intent("alloc:NODE-EU-AAAAAAAA:1000000", "NODE-EU-AAAAAAAA", 1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	orig := decodeRaw(t, tx.Raw)
	// The spike's base fee is 15 % above what the original offers: only a
	// replacement (+20 %, or priced from the spiked head) can pay it.
	stop := e.spike(new(big.Int).Div(new(big.Int).Mul(orig.GasFeeCap(), big.NewInt(115)), big.NewInt(100)))
	ok, err := e.sender.Await(e.ctx, []*Tx{tx}, 30*time.Second)
	stop()
	if err != nil || !ok || tx.State != StateMined {
		t.Fatalf("await: %v %v %s\n%s", ok, err, tx.State, e.n.Output())
	}
	if tx.Hash == orig.Hash() || tx.Nonce != orig.Nonce() || e.versions(tx.ID) < 2 {
		t.Fatalf("mined %s nonce %d, original %s; %d versions", tx.Hash.Hex(), tx.Nonce, orig.Hash().Hex(), e.versions(tx.ID))
	}
	mined := decodeRaw(t, tx.Raw)
	if mined.GasFeeCap().Cmp(bump(orig.GasFeeCap(), MinBumpPercent)) < 0 || mined.GasTipCap().Cmp(bump(orig.GasTipCap(), MinBumpPercent)) < 0 {
		t.Fatalf("replacement fees %s/%s do not bump %s/%s by 10 %%", mined.GasTipCap(), mined.GasFeeCap(), orig.GasTipCap(), orig.GasFeeCap())
	}
	if _, err := e.n.Client.TransactionReceipt(e.ctx, orig.Hash()); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("the original has a receipt: %v", err)
	}
	var dbHash string
	if err := e.sender.cfg.Pool.QueryRow(e.ctx, `SELECT tx_hash FROM chain_txs WHERE id = $1 AND state = 'mined'`, tx.ID).Scan(&dbHash); err != nil ||
		dbHash != strings.ToLower(tx.Hash.Hex()) {
		t.Fatalf("recorded %s %v, mined %s", dbHash, err, tx.Hash.Hex())
	}
	nonce, err := e.n.Client.NonceAt(e.ctx, e.relayer.Address(), nil)
	if err != nil || nonce != 1 || e.allocation("NODE-EU-AAAAAAAA").Int64() != 1_000_000 {
		t.Fatalf("relayer nonce %d (%v), allocation %s", nonce, err, e.allocation("NODE-EU-AAAAAAAA"))
	}
	if e.logs.FilterMessageSnippet("replaced with higher fees").Len() == 0 {
		t.Fatal("no replacement logged")
	}
}

// The original of a replaced transaction can still be the one mined (the
// spike ends, a node kept the original and not the replacement): the
// Sender finds its receipt among the versions and records it, once.
func TestOriginalMinedAfterItsReplacement(t *testing.T) {
	e := newHHEnv(t, TxPolicy{})
	tx, err := e.sender.Submit(e.ctx, e.relayer, e.intent("alloc:NODE-US-BBBBBBBB:2000000", "NODE-US-BBBBBBBB", 2_000_000))
	if err != nil {
		t.Fatal(err)
	}
	orig := decodeRaw(t, tx.Raw)
	origRaw := tx.Raw
	// No block is mined: once StuckAfter passes the Sender replaces it.
	settletest.Eventually(t, 10*time.Second, "replaced", func() (bool, error) {
		return tx.Hash != orig.Hash(), e.sender.Resolve(e.ctx, tx, false)
	})
	replacement := tx.Hash
	// The node lets go of the replacement and takes the original back.
	if held, err := e.n.Drop(e.ctx, replacement); err != nil || !held {
		t.Fatalf("dropping the replacement: %v %v", held, err)
	}
	if _, err := e.n.SendRaw(e.ctx, origRaw); err != nil {
		t.Fatal(err)
	}
	if err := e.n.Mine(e.ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := e.n.Client.TransactionReceipt(e.ctx, orig.Hash()); err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("original not mined: %v %v", r, err)
	}
	if err := e.sender.ResolvePending(e.ctx); err != nil {
		t.Fatal(err)
	}
	last, err := e.sender.Last(e.ctx, tx.Purpose)
	if err != nil || last.State != StateMined || last.Hash != orig.Hash() || last.ID != tx.ID {
		t.Fatalf("recorded %+v %v; want the original %s mined", last, err, orig.Hash().Hex())
	}
	// Done: Submit returns it, nothing new is built.
	again, err := e.sender.Submit(e.ctx, e.relayer, e.intent(tx.Purpose, "NODE-US-BBBBBBBB", 2_000_000))
	if err != nil || again.ID != tx.ID || e.allocation("NODE-US-BBBBBBBB").Int64() != 2_000_000 ||
		settletest.Count(t, e.sender.cfg.Pool, `SELECT count(*) FROM chain_txs`) != 1 {
		t.Fatalf("after: %+v %v", again, err)
	}
}

// A transaction the node drops from its pool (eviction, restart) is sent
// again from its recorded bytes: same hash, then mined.
func TestDroppedTransactionIsResent(t *testing.T) {
	e := newHHEnv(t, TxPolicy{StuckAfter: time.Hour})
	resent := counter(metricResent.WithLabelValues("relayer"))
	tx, err := e.sender.Submit(e.ctx, e.relayer, e.intent("alloc:NODE-AP-CCCCCCCC:3000000", "NODE-AP-CCCCCCCC", 3_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if held, err := e.n.Drop(e.ctx, tx.Hash); err != nil || !held {
		t.Fatalf("drop: %v %v", held, err)
	}
	if _, _, err := e.n.Client.TransactionByHash(e.ctx, tx.Hash); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("still known after the drop: %v", err)
	}
	if err := e.sender.Resolve(e.ctx, tx, false); err != nil {
		t.Fatal(err)
	}
	if _, pending, err := e.n.Client.TransactionByHash(e.ctx, tx.Hash); err != nil || !pending {
		t.Fatalf("not re-sent: pending %v %v", pending, err)
	}
	if err := e.n.Mine(e.ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.sender.Await(e.ctx, []*Tx{tx}, 10*time.Second); err != nil || !ok || tx.State != StateMined {
		t.Fatalf("await: %v %v %s", ok, err, tx.State)
	}
	if e.versions(tx.ID) != 1 || counter(metricResent.WithLabelValues("relayer")) != resent+1 ||
		settletest.Count(t, e.sender.cfg.Pool, `SELECT broadcasts FROM chain_txs WHERE id = $1`, tx.ID) != 2 {
		t.Fatalf("versions %d, broadcasts %d", e.versions(tx.ID), settletest.Count(t, e.sender.cfg.Pool, `SELECT broadcasts FROM chain_txs WHERE id = $1`, tx.ID))
	}
}

// Someone's transaction at our key's next nonce made the Sender take the
// nonce after it; the pool then dropped it. Our transaction can never be
// mined behind the gap: ResolvePending fills the gap with a self-transfer.
func TestNonceGapIsFilled(t *testing.T) {
	e := newHHEnv(t, TxPolicy{StuckAfter: time.Hour})
	opts := bind.NewKeyedTransactor(devnet.DevKey("relayer"), big.NewInt(137))
	opts.Context, opts.Nonce = e.ctx, big.NewInt(0)
	other, err := bind.Transact(e.claims.Instance(e.n.Client, e.claimsA), opts, e.claims.PackSetNodeWallet("NODE-EU-AAAAAAAA", common.HexToAddress("0x1")))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := e.sender.Submit(e.ctx, e.relayer, e.intent("alloc:NODE-EU-AAAAAAAA:1000000", "NODE-EU-AAAAAAAA", 1_000_000))
	if err != nil || tx.Nonce != 1 {
		t.Fatalf("submit: %+v %v", tx, err)
	}
	if held, err := e.n.Drop(e.ctx, other.Hash()); err != nil || !held {
		t.Fatalf("drop: %v %v", held, err)
	}
	if err := e.n.Mine(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.n.Client.NonceAt(e.ctx, e.relayer.Address(), nil); n != 0 {
		t.Fatalf("nonce %d: the gap did not block anything", n)
	}
	filled := counter(metricGaps.WithLabelValues("relayer"))
	if err := e.sender.ResolvePending(e.ctx); err != nil {
		t.Fatal(err)
	}
	stop := e.spike(big.NewInt(1)) // blocks again, at a low base fee
	ok, err := e.sender.Await(e.ctx, []*Tx{tx}, 10*time.Second)
	stop()
	if err != nil || !ok || tx.State != StateMined {
		t.Fatalf("await: %v %v %s\n%v", ok, err, tx.State, e.logs.All())
	}
	if err := e.sender.ResolvePending(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := settletest.Count(t, e.sender.cfg.Pool, `SELECT count(*) FROM chain_txs WHERE kind = 'nonce_fill' AND nonce = 0 AND state = 'mined'
		AND from_addr = to_addr`); got != 1 || counter(metricGaps.WithLabelValues("relayer")) != filled+1 {
		t.Fatalf("%d mined fills at nonce 0", got)
	}
	if n, _ := e.n.Client.NonceAt(e.ctx, e.relayer.Address(), nil); n != 2 {
		t.Fatalf("relayer nonce %d, want 2", n)
	}
}

// When the ceiling leaves no valid replacement the transaction keeps its
// version and the alert fires once: an error log line and the counter.
func TestFeeCeilingRaisesAnAlert(t *testing.T) {
	// The ceiling is below what the Sender would offer: the first version
	// is signed at the ceiling, and nothing can bump it.
	e := newHHEnv(t, TxPolicy{MaxFeePerGas: big.NewInt(1_000_000_000)})
	before := counter(metricCeiling.WithLabelValues("relayer"))
	tx, err := e.sender.Submit(e.ctx, e.relayer, e.intent("alloc:NODE-EU-AAAAAAAA:1000000", "NODE-EU-AAAAAAAA", 1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	orig := decodeRaw(t, tx.Raw)
	if orig.GasFeeCap().Int64() != 1_000_000_000 {
		t.Fatalf("first version's fee cap %s, want the ceiling", orig.GasFeeCap())
	}
	stop := e.spike(big.NewInt(2_000_000_000))
	defer stop()
	settletest.Eventually(t, 10*time.Second, "ceiling alert", func() (bool, error) {
		err := e.sender.Resolve(e.ctx, tx, false)
		return counter(metricCeiling.WithLabelValues("relayer")) == before+1, err
	})
	for range 3 { // later passes do not alert again
		if err := e.sender.Resolve(e.ctx, tx, false); err != nil {
			t.Fatal(err)
		}
	}
	alerts := e.logs.FilterMessageSnippet("ALERT: stuck transaction at the fee ceiling")
	if alerts.Len() != 1 || alerts.All()[0].Level != zapcore.ErrorLevel || tx.Hash != orig.Hash() || e.versions(tx.ID) != 1 ||
		counter(metricCeiling.WithLabelValues("relayer")) != before+1 {
		t.Fatalf("alerts %d, hash %s (original %s), %d versions", alerts.Len(), tx.Hash.Hex(), orig.Hash().Hex(), e.versions(tx.ID))
	}
}

func TestBumpAndParseGwei(t *testing.T) {
	for _, c := range []struct{ x, pct, want int64 }{{100, 10, 110}, {101, 10, 112}, {0, 10, 1}, {1, 10, 2}, {1_000_000_000, 20, 1_200_000_000}} {
		if got := bump(big.NewInt(c.x), c.pct); got.Int64() != c.want {
			t.Errorf("bump(%d, %d) = %s, want %d", c.x, c.pct, got, c.want)
		}
	}
	for s, want := range map[string]int64{"1000": 1_000_000_000_000, "0.05": 50_000_000, "0.000000001": 1} {
		if got, err := ParseGwei(s); err != nil || got.Int64() != want {
			t.Errorf("ParseGwei(%q) = %v %v", s, got, err)
		}
	}
	for _, s := range []string{"", "x", "-1", "1e3", "0.0000000001", "1/2"} {
		if _, err := ParseGwei(s); err == nil {
			t.Errorf("ParseGwei(%q) accepted", s)
		}
	}
	if _, err := NewSender(SenderConfig{Pool: nil}); err == nil {
		t.Fatal("NewSender without a pool")
	}
	if _, err := (TxPolicy{BumpPercent: 9}).withDefaults(); err == nil {
		t.Fatal("a 9 % bump accepted")
	}
}

// counter reads a counter's value.
func counter(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// The counters are exported once per registry, under their documented names.
func TestRegisterMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	RegisterMetrics(reg)
	RegisterMetrics(reg)
	metricCeiling.WithLabelValues("governor").Add(0)
	metricReplaced.WithLabelValues("governor").Add(0)
	metricResent.WithLabelValues("governor").Add(0)
	metricGaps.WithLabelValues("governor").Add(0)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	for _, want := range []string{"settlementd_chain_tx_replacements_total", "settlementd_chain_tx_resent_total",
		"settlementd_chain_tx_fee_ceiling_reached_total", "settlementd_chain_tx_nonce_gaps_filled_total"} {
		if !names[want] {
			t.Errorf("%s not exported (have %v)", want, names)
		}
	}
}

// A replacement the node refuses (here: the key cannot cover the higher
// fee) is sent again on every pass but replaced only once per StuckAfter,
// so a refusal cannot run the fee up; once the node accepts it, it is mined.
func TestRefusedReplacementIsRetriedNotRunAway(t *testing.T) {
	e := newHHEnv(t, TxPolicy{StuckAfter: 2 * time.Second})
	tx, err := e.sender.Submit(e.ctx, e.relayer, e.intent("alloc:NODE-EU-AAAAAAAA:1000000", "NODE-EU-AAAAAAAA", 1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	orig := decodeRaw(t, tx.Raw)
	// Enough for the original (gas × fee cap), not for +20 %.
	funds := new(big.Int).Mul(new(big.Int).SetUint64(orig.Gas()), orig.GasFeeCap())
	funds.Div(funds.Mul(funds, big.NewInt(110)), big.NewInt(100))
	if err := e.n.SetBalance(e.ctx, e.relayer.Address(), funds); err != nil {
		t.Fatal(err)
	}
	settletest.Eventually(t, 10*time.Second, "a replacement", func() (bool, error) {
		err := e.sender.Resolve(e.ctx, tx, false)
		if e.versions(tx.ID) == 2 {
			if err == nil {
				t.Fatal("the underfunded replacement was accepted")
			}
			return true, nil
		}
		return false, err
	})
	// Refused, and younger than StuckAfter: sent again, not replaced again.
	if err := e.sender.Resolve(e.ctx, tx, false); err == nil || e.versions(tx.ID) != 2 {
		t.Fatalf("second pass: %v, %d versions", err, e.versions(tx.ID))
	}
	if _, _, err := e.n.Client.TransactionByHash(e.ctx, tx.Hash); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("the refused version is known to the node: %v", err)
	}
	// Funded again: the next pass sends the newest version, the node takes it.
	if err := e.n.SetBalance(e.ctx, e.relayer.Address(), new(big.Int).Mul(big.NewInt(1e6), big.NewInt(1e18))); err != nil {
		t.Fatal(err)
	}
	if err := e.sender.Resolve(e.ctx, tx, false); err != nil {
		t.Fatal(err)
	}
	stop := e.spike(big.NewInt(1))
	ok, err := e.sender.Await(e.ctx, []*Tx{tx}, 10*time.Second)
	stop()
	if err != nil || !ok || tx.State != StateMined || tx.Hash == orig.Hash() || e.versions(tx.ID) > 3 {
		t.Fatalf("await: %v %v %s %s, %d versions", ok, err, tx.State, tx.Hash.Hex(), e.versions(tx.ID))
	}
}
