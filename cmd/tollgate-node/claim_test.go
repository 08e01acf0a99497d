package main

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// TestClaimOnChain runs claim against ClaimsContract compiled from our
// Solidity on a simulated chain 137 (served over HTTP, as a real RPC) and a
// gateway answering its API: an interrupted claim (the chain unreachable
// after the signature was issued) keeps the signature, and the next run
// sends that same signature — the gateway is not asked again, where it
// would now find the amount reserved — and the wallet receives exactly the
// allocation; then nothing is left (exit 3). A signature from a key that is
// no claim signer of the contract is refused before any transaction.
func TestClaimOnChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	deployer, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(deployer.PublicKey)
	opKey, opAddr := newKeyT(t)
	op := common.HexToAddress(opAddr)
	port, err := simchain.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	eth := new(big.Int).Lsh(common.Big1, 100)
	chain, err := simchain.New(simchain.Config{ChainID: 137, HTTPPort: port, Alloc: types.GenesisAlloc{from: {Balance: eth}, op: {Balance: eth}}})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	p, err := deploy.DeployPolygon(ctx, chain.Client(), bind.NewKeyedTransactor(deployer, chain.ChainID()),
		deploy.PolygonParams{Treasury: from, Governor: from, ClaimCreator: from, MinDeposit: common.Big1},
		deploy.WithCommit(func() { chain.Commit() }))
	if err != nil {
		t.Fatal(err)
	}
	cc, usdt := claimscontract.NewClaimsContract(), testusdt.NewTestUSDT()
	send := func(to common.Address, data []byte) {
		t.Helper()
		opts := bind.NewKeyedTransactor(deployer, chain.ChainID())
		opts.Context = ctx
		tx, err := bind.Transact(bind.NewBoundContract(to, cc.GetABI(), chain.Client(), chain.Client(), chain.Client()), opts, data)
		if err != nil {
			t.Fatal(err)
		}
		chain.Commit()
		if rc, err := chain.Client().TransactionReceipt(ctx, tx.Hash()); err != nil || rc.Status != 1 {
			t.Fatalf("setup transaction: %v %+v", err, rc)
		}
	}
	const node, alloc = "NODE-EU-AAAAAAAA", money.Units(45)
	deadline := time.Now().Add(time.Hour).Unix()
	send(p.USDT, usdt.PackMint(p.Claims, big.NewInt(1_000)))
	send(p.Claims, cc.PackSetNodeWallet(node, op))
	send(p.Claims, cc.PackCreateClaim(node, alloc.Big(), big.NewInt(deadline)))
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a block every 50 ms, as a chain mines
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				chain.Commit()
			}
		}
	}()
	balance := func() money.Units {
		b, err := bind.Call(usdt.Instance(chain.Client(), p.USDT), &bind.CallOpts{Context: ctx}, usdt.PackBalanceOf(op), usdt.UnpackBalanceOf)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := money.FromBig(b)
		return u
	}

	var claimed atomic.Bool // the gateway has seen the Claimed event
	var asked atomic.Int64
	signer := deployer
	g := newFakeGateway(t)
	u, _ := url.Parse(g.URL)
	g.on("POST /api/auth/challenge", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"message": siwe(u.Host, opAddr)})
	})
	g.on("POST /api/auth/login", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"token": "tok", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "wallet": strings.ToLower(opAddr)})
	})
	earningsOf := func(node string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			e := map[string]any{"node_id": node, "total_earned_units": "45", "allocated_units": "45", "claimed_units": "0", "reserved_units": "0",
				"claimable_units": "45", "pending_settlement_units": "0"}
			if asked.Load() > 0 {
				e["reserved_units"], e["claimable_units"] = "45", "0"
			}
			if claimed.Load() {
				e["claimed_units"], e["reserved_units"], e["claimable_units"] = "45", "0", "0"
			}
			writeJSON(w, 200, e)
		}
	}
	g.on("GET /api/nodes/"+node+"/earnings", earningsOf(node))
	g.on("POST /api/nodes/"+node+"/claim", func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) > 1 {
			writeJSON(w, 409, map[string]any{"error": map[string]string{"code": "nothing_claimable", "message": "reserved by an outstanding signature"}})
			return
		}
		sig, err := claim.Sign(signer, claim.Domain{ChainID: 137, Contract: p.Claims}, claim.Claim{NodeID: node, Amount: alloc, Deadline: deadline})
		if err != nil {
			t.Error(err)
		}
		writeJSON(w, 200, map[string]any{"success": true, "signature": map[string]any{"amount_raw": "45", "cumulative_raw": "45",
			"signature": hexutil.Encode(sig), "deadline_unix": deadline, "contract": p.Claims.Hex(), "chain_id": 137, "node_id": node}})
	})

	ta := newTestApp(t)
	ta.env[envGateway], ta.env[envNodeID] = g.URL, node
	ta.env[envKeyFile] = writeFile(t, filepath.Join(t.TempDir(), "wallet.key"), hexutil.Encode(crypto.FromECDSA(opKey)), 0o600)
	before := balance()
	if code := ta.run("claim", "--chain-rpc", "http://127.0.0.1:1"); code != exitError || asked.Load() != 1 {
		t.Fatalf("claim with the chain unreachable: exit %d, asked %d\n%s", code, asked.Load(), ta.stderr.String())
	}
	// A chain RPC (by default the gateway's own /rpc) that overstates the
	// gas claimNode needs: the wallet would sign and pay for whatever limit
	// it names (a contract that burns gas looks the same). Not sent; the
	// signature stays kept.
	lying := faultproxy.New(chain.HTTPURL())
	t.Cleanup(lying.Close)
	lying.GasOffset.Store(5_000_000)
	if code := ta.run("claim", "--chain-rpc", lying.URL()); code != exitError || asked.Load() != 1 ||
		lying.Calls("eth_sendRawTransaction") != 0 || !strings.Contains(ta.stderr.String(), "more than a claim ever costs") {
		t.Fatalf("claim through an RPC overstating gas: exit %d, asked %d, sent %d\n%s", code, asked.Load(), lying.Calls("eth_sendRawTransaction"), ta.stderr.String())
	}
	// One that suggests a priority fee of 5,000 gwei: the wallet would pay
	// it (up to 0.6 POL for this claim's gas). Not sent.
	greedy := faultproxy.New(chain.HTTPURL())
	t.Cleanup(greedy.Close)
	greedy.TipWei.Store(5_000_000_000_000)
	if code := ta.run("claim", "--chain-rpc", greedy.URL()); code != exitError || asked.Load() != 1 ||
		greedy.Calls("eth_sendRawTransaction") != 0 || !strings.Contains(ta.stderr.String(), "more than --max-fee-gwei") {
		t.Fatalf("claim through an RPC suggesting 5,000 gwei: exit %d, asked %d, sent %d\n%s", code, asked.Load(), greedy.Calls("eth_sendRawTransaction"), ta.stderr.String())
	}
	if code := ta.run("claim", "--chain-rpc", chain.HTTPURL(), "--json"); code != 0 || asked.Load() != 1 {
		t.Fatalf("claim again: exit %d, asked %d\n%s%s", code, asked.Load(), ta.stdout.String(), ta.stderr.String())
	}
	var res claimResult
	if err := json.Unmarshal(ta.stdout.Bytes(), &res); err != nil || res.PaidUnits != units(alloc) || res.CumulativeUnits != units(alloc) || res.NodeID != node {
		t.Fatalf("claim --json: %+v %v\n%s", res, err, ta.stdout.String())
	}
	if got := balance() - before; got != alloc {
		t.Fatalf("the wallet received %d base units, want %d", got, alloc)
	}
	if rc, err := chain.Client().TransactionReceipt(ctx, common.HexToHash(res.Tx)); err != nil || rc.GasUsed*2 > claimGasCap {
		t.Fatalf("claimNode's receipt: %v; gas used %d, cap %d: the cap must leave room", err, rc.GasUsed, claimGasCap)
	} else {
		t.Logf("claimNode used %d gas (cap %d)", rc.GasUsed, claimGasCap)
	}
	claimed.Store(true)
	if code := ta.run("claim", "--chain-rpc", chain.HTTPURL()); code != exitNothing {
		t.Fatalf("claim with everything claimed: exit %d %s", code, ta.stderr.String())
	}

	// A signature from a key without CLAIM_CREATOR_ROLE: not sent.
	const node2 = "NODE-EU-BBBBBBBB"
	send(p.Claims, cc.PackSetNodeWallet(node2, op))
	send(p.Claims, cc.PackCreateClaim(node2, alloc.Big(), big.NewInt(deadline)))
	var stranger *ecdsa.PrivateKey
	stranger, _ = crypto.GenerateKey()
	signer = stranger
	asked.Store(0)
	claimed.Store(false)
	g.on("GET /api/nodes/"+node2+"/earnings", earningsOf(node2))
	g.on("POST /api/nodes/"+node2+"/claim", func(w http.ResponseWriter, r *http.Request) {
		sig, _ := claim.Sign(signer, claim.Domain{ChainID: 137, Contract: p.Claims}, claim.Claim{NodeID: node2, Amount: alloc, Deadline: deadline})
		writeJSON(w, 200, map[string]any{"success": true, "signature": map[string]any{"amount_raw": "45", "cumulative_raw": "45",
			"signature": hexutil.Encode(sig), "deadline_unix": deadline, "contract": p.Claims.Hex(), "chain_id": 137, "node_id": node2}})
	})
	ta.env[envNodeID] = node2
	before = balance()
	if code := ta.run("claim", "--chain-rpc", chain.HTTPURL()); code != exitError || !strings.Contains(ta.stderr.String(), "which is no claim signer of ClaimsContract") {
		t.Fatalf("claim signed by a stranger: exit %d %s", code, ta.stderr.String())
	}
	if balance() != before {
		t.Fatal("a stranger's signature paid")
	}
}
