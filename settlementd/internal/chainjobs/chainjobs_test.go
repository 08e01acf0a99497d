package chainjobs

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/deposits"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/jobs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

func TestBuildFromEnv(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	deps := Deps{Pool: pool, Redis: rdb, Prefix: testenv.KeyPrefix(t)}

	// Nothing configured: no chain jobs, no error.
	s, err := chainFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cj, err := Build(ctx, s, deps)
	if err != nil || len(cj.Scheduled()) != 0 {
		t.Fatalf("unconfigured: %v, %d jobs", err, len(cj.Scheduled()))
	}

	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := d.Manifest
	key := func(n string) string { a, _ := m.Account(n); return a.PrivateKey }
	addr := func(n string) string { a, _ := m.Account(n); return a.Address }
	env := map[string]string{
		"TOLLGATE_CHAIN_RPC_URL": m.Polygon.RPCURL, "TOLLGATE_USDT_ADDRESS": m.Polygon.USDT,
		"TOLLGATE_VAULT_ADDRESS": m.Polygon.RevenueVault, "TOLLGATE_CLAIMS_ADDRESS": m.Polygon.ClaimsContract,
		"TOLLGATE_DEPOSIT_CONFIRMATIONS": "3", "TOLLGATE_PLATFORM_WALLET": addr("platform"), "TOLLGATE_POOL_WALLET": addr("pool"),
		"TOLLGATE_TREASURY_KEY": key("treasury"), "TOLLGATE_RELAYER_KEY": key("relayer"), "TOLLGATE_GOVERNOR_KEY": key("governor"),
		"TOLLGATE_DEV": "1", // the dev chain's accounts and contracts are the money settings here
	}
	if s, err = chainFromEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	cj, err = Build(ctx, s, deps)
	if err != nil {
		t.Fatal(err)
	}
	defer cj.Close()
	names := map[string]bool{}
	for _, j := range cj.Scheduled() {
		if _, err := jobs.Parser.Parse(j.Schedule); err != nil {
			t.Fatalf("%s: %v", j.Job.Name(), err)
		}
		names[j.Job.Name()] = true
		if err := j.Job.Run(ctx); err != nil {
			t.Fatalf("%s: %v", j.Job.Name(), err)
		}
	}
	if !names["deposits"] || !names["settlement"] || !names["solvency"] {
		t.Fatalf("jobs %v", names)
	}

	// Misconfiguration is reported by setting name, never with the secret.
	bad := map[string]string{}
	for k, v := range env {
		bad[k] = v
	}
	bad["TOLLGATE_TREASURY_KEY"] = key("treasury")[:40] + "zz"
	bad["TOLLGATE_POOL_WALLET"] = "0xnot-an-address"
	s, _ = chainFromEnv(func(k string) string { return bad[k] })
	_, err = Build(ctx, s, deps)
	if err == nil || !strings.Contains(err.Error(), "TOLLGATE_TREASURY_KEY") || !strings.Contains(err.Error(), "TOLLGATE_POOL_WALLET") ||
		strings.Contains(err.Error(), key("treasury")[2:40]) {
		t.Fatalf("bad settings: %v", err)
	}
	// Outside the dev profile the dev chain's contracts and wallets are
	// refused, as is an address not in its EIP-55 form, by setting name.
	prod := map[string]string{}
	for k, v := range env {
		prod[k] = v
	}
	delete(prod, "TOLLGATE_DEV")
	prod["TOLLGATE_PLATFORM_WALLET"] = strings.ToLower("0xc2132D05D31c914a87C6611C10748AEb04B58e8F")
	s, _ = chainFromEnv(func(k string) string { return prod[k] })
	_, err = Build(ctx, s, deps)
	for _, want := range []string{
		"TOLLGATE_VAULT_ADDRESS " + m.Polygon.RevenueVault + " is the dev chain's deployer's contract, whose key is public",
		"TOLLGATE_POOL_WALLET " + addr("pool") + " is the dev chain's pool, whose key is public",
		`TOLLGATE_PLATFORM_WALLET "` + prod["TOLLGATE_PLATFORM_WALLET"] + `" is not in its EIP-55 checksummed form`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("without TOLLGATE_DEV: want %q in %v", want, err)
		}
	}
	// The wrong chain is refused.
	s, _ = chainFromEnv(func(k string) string { return env[k] })
	s.ChainID = 1
	if _, err := Build(ctx, s, deps); err == nil || !strings.Contains(err.Error(), "serves chain 137") {
		t.Fatalf("wrong chain: %v", err)
	}
	if _, err := chainFromEnv(func(k string) string {
		if k == "TOLLGATE_DEPOSIT_CONFIRMATIONS" {
			return "many"
		}
		return ""
	}); err == nil {
		t.Fatal("non-numeric confirmations accepted")
	}
}

// The dev chain (mined like a live chain, an empty block every 50 ms) runs
// the same code end to end: a developer's deposit over HTTP is credited in
// Postgres and Redis after the configured confirmations.
func TestDevChainDepositCredited(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := d.Manifest
	cj, err := Build(ctx, Settings{Dev: true, RPCURL: m.Polygon.RPCURL, USDT: m.Polygon.USDT, Vault: m.Polygon.RevenueVault,
		Claims: m.Polygon.ClaimsContract, Confirmations: 5}, Deps{Pool: pool, Redis: rdb, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer cj.Close()
	if cj.Settlement != nil || cj.Deposits == nil || cj.Solvency == nil {
		t.Fatalf("built %+v", cj)
	}
	account := accounts.NewID()
	res, err := devnet.Deposit(ctx, m, "developer-1", 5*money.Scale, account)
	if err != nil {
		t.Fatal(err)
	}
	settletest.Eventually(t, 30*time.Second, "the deposit to be credited", func() (bool, error) {
		if err := cj.Deposits.Run(ctx); err != nil {
			return false, err
		}
		b, err := balances.Balance(ctx, rdb, prefix, account)
		return b == 5*money.Scale, err
	})
	if n := settletest.Count(t, pool, `SELECT count(*) FROM account_ledger WHERE account = $1 AND ref = $2 AND units = $3`,
		account, deposits.DepositID(res.DepositTx, res.LogIndex), int64(5*money.Scale)); n != 1 {
		t.Fatalf("%d ledger rows", n)
	}
	head, _ := d.Polygon.Client().BlockNumber(ctx)
	if head+1 < res.Block+5 {
		t.Fatalf("credited at head %d for a deposit in block %d", head, res.Block)
	}
}

// chainFromEnv reads the chain settings from getenv the way the daemon
// does, with config.Load (the database URL only has to parse).
func chainFromEnv(getenv func(string) string) (Settings, error) {
	c, err := config.Load([]string{"-database-url", "postgres://localhost/x"}, getenv, io.Discard)
	if c == nil {
		return Settings{}, err
	}
	return c.Chain, err
}
