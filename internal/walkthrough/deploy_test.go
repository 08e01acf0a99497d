package walkthrough

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
)

// TestDeployFromNothingThenWalkthrough is the going-live path on the dev
// chain: a chain with only the tokens and funded accounts;
// tollgate-deploy deploys RevenueVault and ClaimsContract, grants and
// verifies the roles and writes the settings file; settlementd (the file
// as its environment, as systemd's EnvironmentFile= gives it) and our Caddy
// (`--envfile`, the Caddyfile's {$TOLLGATE_…} placeholders) start from that
// file alone and the walkthrough's money loop passes against them; a second
// deploy sends nothing and leaves the file as it was.
//
// Nothing else names the deployed contracts: the manifest of a tokens-only
// chain has none, and the root Caddyfile's defaults are other addresses
// (checked), so a stack that ignored the file would fail the walkthrough's
// deposit instructions (the gateway's vault) and crediting (settlementd's).
func TestDeployFromNothingThenWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack and waits for a 60 s epoch")
	}
	began := time.Now()
	_ = testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn := testenv.Postgres(t)
	root := repoRoot(t)
	x402 := X402Auto
	if requireNode() {
		x402 = X402Require
	}
	run := t.TempDir()
	settings := filepath.Join(run, "deploy.env")
	sc := StackConfig{
		Caddy:       caddyrun.Binary(t),
		Settlementd: binary(t, "TOLLGATE_SETTLEMENTD_BIN", "./settlementd", root),
		Devchain:    binary(t, "TOLLGATE_DEVCHAIN_BIN", "./contracts/devchain", root),
		RepoRoot:    root, RunDir: run, RedisURL: os.Getenv("REDIS_URL"), DatabaseURL: dsn, Prefix: prefix,
		TokensOnly: true, Settings: settings,
	}
	deployBin := binary(t, "TOLLGATE_DEPLOY_BIN", "./cmd/tollgate-deploy", root)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var log strings.Builder
	st, err := StartChains(ctx, sc, &log)
	if err != nil {
		t.Fatalf("start the dev chains: %v\n%s", err, log.String())
	}
	t.Cleanup(st.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []string{"devchain", "settlementd", "caddy"} {
				t.Logf("--- %s.log (tail) ---\n%s", p, st.Log(p))
			}
		}
	})
	m := st.Manifest
	if m.Polygon.RevenueVault != "" || m.Polygon.ClaimsContract != "" {
		t.Fatalf("a tokens-only chain names contracts: %+v", m.Polygon)
	}
	poly, err := ethclient.DialContext(ctx, m.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	defer poly.Close()
	acct := func(name string) common.Address {
		a, err := m.Account(name)
		if err != nil {
			t.Fatal(err)
		}
		return a.Addr()
	}
	deployer, err := m.Account("deployer")
	if err != nil {
		t.Fatal(err)
	}
	nonce := func() uint64 {
		n, err := poly.PendingNonceAt(ctx, deployer.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	deploy := func() string {
		cmd := exec.CommandContext(ctx, deployBin, "-rpc", m.Polygon.RPCURL, "-chain", "137", "-token", m.Polygon.USDT,
			"-treasury", acct("treasury").Hex(), "-governor", acct("governor").Hex(),
			"-claim-creators", acct("relayer").Hex()+","+acct("claim-signer").Hex(),
			"-state", filepath.Join(run, "deploy-state.json"), "-out", settings, "-timeout", "1m")
		cmd.Env = append(os.Environ(), "TOLLGATE_DEPLOYER_KEY="+deployer.PrivateKey)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tollgate-deploy: %v\n%s", err, out)
		}
		return string(out)
	}

	// 1. Deploy from nothing: two contracts and one grant, verified.
	before := nonce()
	out := deploy()
	if sent := nonce() - before; sent != 3 || !strings.Contains(out, "verified on chain") {
		t.Fatalf("first deploy: %d transactions, want 3 (vault, claims, a grant)\n%s", sent, out)
	}
	file, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string]string{}
	lines, err := ReadEnvFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		kv[k] = v
	}
	vault, claims := common.HexToAddress(kv["TOLLGATE_VAULT_ADDRESS"]), common.HexToAddress(kv["TOLLGATE_CLAIMS_ADDRESS"])
	for _, a := range []common.Address{vault, claims} {
		if code, err := poly.CodeAt(ctx, a, nil); err != nil || len(code) == 0 {
			t.Fatalf("no contract at %s (%v); settings:\n%s", a.Hex(), err, file)
		}
	}
	if !strings.EqualFold(kv["TOLLGATE_USDT_ADDRESS"], m.Polygon.USDT) || kv["TOLLGATE_VAULT_START_BLOCK"] == "" ||
		kv["TOLLGATE_CLAIMS_START_BLOCK"] == "" || kv["TOLLGATE_MIN_DEPOSIT"] != "1" {
		t.Fatalf("settings:\n%s", file)
	}
	// The roles settlementd needs, read from the chain here, not from the command.
	cc := claimscontract.NewClaimsContract()
	call := func(to common.Address, data []byte) []byte {
		b, err := poly.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	creator := crypto.Keccak256Hash([]byte("CLAIM_CREATOR_ROLE"))
	governor := crypto.Keccak256Hash([]byte("GOVERNOR_ROLE"))
	for _, c := range []struct {
		role common.Hash
		who  string
		want bool
	}{{creator, "relayer", true}, {creator, "claim-signer", true}, {governor, "governor", true}, {creator, "treasury", false}} {
		if ok, err := cc.UnpackHasRole(call(claims, cc.PackHasRole(c.role, acct(c.who)))); err != nil || ok != c.want {
			t.Fatalf("hasRole(%s, %s) = %v (%v), want %v", c.role.Hex(), c.who, ok, err, c.want)
		}
	}
	rv := revenuevault.NewRevenueVault()
	if tr, err := rv.UnpackTreasury(call(vault, rv.PackTreasury())); err != nil || tr != acct("treasury") {
		t.Fatalf("vault treasury %s (%v)", tr.Hex(), err)
	}
	// The Caddyfile has no fallback vault: a gateway that ignored the file
	// would refuse to start rather than name another vault.
	caddyfile, err := os.ReadFile(filepath.Join(root, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`vault_address \{env\.TOLLGATE_VAULT_ADDRESS\}\n`).Match(caddyfile) {
		t.Fatal("the root Caddyfile's vault_address is not the bare {env.TOLLGATE_VAULT_ADDRESS}: a default could stand in for the deployed vault")
	}
	t.Logf("deployed in %s:\n%s", time.Since(began).Round(time.Millisecond), file)

	// 2. settlementd and Caddy from the file; the walkthrough against them.
	if err := st.StartServices(ctx, &log); err != nil {
		t.Fatalf("start settlementd and Caddy from %s: %v\n%s", settings, err, log.String())
	}
	wm := *m // the client side (the developer's and operator's wallets) learns the contracts from the deployment too
	wm.Polygon.RevenueVault, wm.Polygon.ClaimsContract = vault.Hex(), claims.Hex()
	sum, err := Run(ctx, Config{Gateway: st.Gateway, Manifest: &wm, RepoRoot: root, X402: x402}, &log)
	t.Logf("walkthrough output:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, sum)

	// 3. Deploy again: nothing sent, the same file.
	n := nonce()
	out = deploy()
	if nonce() != n || !strings.Contains(out, "0 transaction(s) sent") {
		t.Fatalf("re-run: nonce %d → %d\n%s", n, nonce(), out)
	}
	if again, err := os.ReadFile(settings); err != nil || !bytes.Equal(again, file) {
		t.Fatalf("re-run changed the settings file (%v):\n%s\n→\n%s", err, file, again)
	}
	t.Logf("took %s (walkthrough %s)", time.Since(began).Round(time.Millisecond), sum.Took.Round(time.Millisecond))
}
