package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/devnet"
)

type fixture struct {
	t        *testing.T
	ctx      context.Context
	net      *devnet.Devnet
	client   *ethclient.Client
	deployer common.Address
	env      func(string) string
	usdt     common.Address
	symbol   string
	dir      string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	c, err := ethclient.DialContext(ctx, d.Manifest.Polygon.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	key := devnet.DevKey("deployer")
	f := &fixture{t: t, ctx: ctx, net: d, client: c, deployer: crypto.PubkeyToAddress(key.PublicKey),
		env: func(k string) string {
			return map[string]string{"TOLLGATE_DEPLOYER_KEY": hex.EncodeToString(crypto.FromECDSA(key))}[k]
		},
		usdt: common.HexToAddress(d.Manifest.Polygon.USDT), dir: t.TempDir()}
	erc20 := testusdt.NewTestUSDT()
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: &f.usdt, Data: erc20.PackSymbol()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.symbol, err = erc20.UnpackSymbol(out); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) addr(name string) common.Address {
	return crypto.PubkeyToAddress(devnet.DevKey(name).PublicKey)
}

// args are a full deployment's flags against the dev chain's TestUSDT.
func (f *fixture) args(state string, extra ...string) []string {
	return append([]string{"-rpc", f.net.Manifest.Polygon.RPCURL, "-chain", "137", "-token", f.usdt.Hex(), "-symbol", f.symbol,
		"-treasury", f.addr("treasury").Hex(), "-governor", f.addr("governor").Hex(),
		"-claim-creators", f.addr("relayer").Hex() + "," + f.addr("claim-signer").Hex(),
		"-state", filepath.Join(f.dir, state), "-out", filepath.Join(f.dir, state+".env")}, extra...)
}

func (f *fixture) run(args []string, dialer func(context.Context, string) (Backend, func(), error)) (stdout, stderr string, err error) {
	if dialer == nil {
		dialer = dial
	}
	var o, e bytes.Buffer
	err = run(f.ctx, args, f.env, &o, &e, dialer)
	return o.String(), e.String(), err
}

func (f *fixture) nonce() uint64 {
	n, err := f.client.PendingNonceAt(f.ctx, f.deployer)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) settings(state string) map[string]string {
	b, err := os.ReadFile(filepath.Join(f.dir, state+".env"))
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			out[k] = v
		}
	}
	return out
}

func (f *fixture) hasRole(claims common.Address, role func(*claimscontract.ClaimsContract) []byte, who common.Address) bool {
	c := claimscontract.NewClaimsContract()
	out, err := f.client.CallContract(f.ctx, ethereum.CallMsg{To: &claims, Data: role(c)}, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	r, _ := c.UnpackCLAIMCREATORROLE(out)
	out, err = f.client.CallContract(f.ctx, ethereum.CallMsg{To: &claims, Data: c.PackHasRole(r, who)}, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	ok, _ := c.UnpackHasRole(out)
	return ok
}

// From nothing: both contracts deployed and the second claim creator
// granted (3 transactions), everything verified on chain, the settings
// written; a re-run sends nothing.
func TestDeployFromNothingThenIdempotent(t *testing.T) {
	f := newFixture(t)
	before := f.nonce()
	_, log, err := f.run(f.args("state.json"), nil)
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, log)
	}
	if got := f.nonce() - before; got != 3 {
		t.Fatalf("%d transactions sent, want 3 (vault, claims, one grant)\n%s", got, log)
	}
	s := f.settings("state.json")
	vault, claims := common.HexToAddress(s["TOLLGATE_VAULT_ADDRESS"]), common.HexToAddress(s["TOLLGATE_CLAIMS_ADDRESS"])
	if s["TOLLGATE_CHAIN_ID"] != "137" || s["TOLLGATE_USDT_ADDRESS"] != f.usdt.Hex() || s["TOLLGATE_VAULT_START_BLOCK"] == "0" ||
		s["TOLLGATE_CLAIMS_START_BLOCK"] == "" || vault == (common.Address{}) || claims == (common.Address{}) {
		t.Fatalf("settings %v", s)
	}
	// Independently of the command: the vault's settings and the roles.
	v := revenuevault.NewRevenueVault()
	out, err := f.client.CallContract(f.ctx, ethereum.CallMsg{To: &vault, Data: v.PackTreasury()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr, _ := v.UnpackTreasury(out); tr != f.addr("treasury") {
		t.Fatalf("vault treasury %s", tr.Hex())
	}
	creator := func(c *claimscontract.ClaimsContract) []byte { return c.PackCLAIMCREATORROLE() }
	for _, who := range []string{"relayer", "claim-signer"} {
		if !f.hasRole(claims, creator, f.addr(who)) {
			t.Fatalf("%s lacks CLAIM_CREATOR_ROLE", who)
		}
	}
	if f.hasRole(claims, creator, f.addr("treasury")) {
		t.Fatal("the check is blind: the treasury has CLAIM_CREATOR_ROLE")
	}

	if s["TOLLGATE_MIN_DEPOSIT"] != "1" {
		t.Fatalf("TOLLGATE_MIN_DEPOSIT %q, want 1 (1000000 units read back from the vault)", s["TOLLGATE_MIN_DEPOSIT"])
	}
	file, _ := os.ReadFile(filepath.Join(f.dir, "state.json.env"))
	// The production example shows exactly the variables written.
	example, err := os.ReadFile("../../deploy/production/deploy.env.example")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, l := range strings.Split(string(example), "\n") {
		if k, _, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			want = append(want, k)
		}
	}
	for _, l := range strings.Split(string(file), "\n") {
		if k, _, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			got = append(got, k)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the settings file sets %v, deploy/production/deploy.env.example %v", got, want)
	}

	n := f.nonce()
	_, log, err = f.run(f.args("state.json"), nil)
	if err != nil || f.nonce() != n || !strings.Contains(log, "0 transaction(s) sent") {
		t.Fatalf("re-run: %v, nonce %d → %d\n%s", err, n, f.nonce(), log)
	}
	if s2 := f.settings("state.json"); s2["TOLLGATE_VAULT_ADDRESS"] != s["TOLLGATE_VAULT_ADDRESS"] || s2["TOLLGATE_CLAIMS_ADDRESS"] != s["TOLLGATE_CLAIMS_ADDRESS"] {
		t.Fatalf("re-run changed the settings: %v → %v", s, s2)
	}
	if again, _ := os.ReadFile(filepath.Join(f.dir, "state.json.env")); !bytes.Equal(again, file) {
		t.Fatalf("re-run changed the settings file:\n%s\n→\n%s", file, again)
	}
}

func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		units string
		d     uint8
		want  string
	}{{"1000000", 6, "1"}, {"1500000", 6, "1.5"}, {"0", 6, "0"}, {"1", 6, "0.000001"}, {"123", 0, "123"}, {"1230", 2, "12.3"}} {
		u, _ := new(big.Int).SetString(c.units, 10)
		if got := decimal(u, c.d); got != c.want {
			t.Errorf("decimal(%s, %d) = %s, want %s", c.units, c.d, got, c.want)
		}
	}
}

// lossyBackend sends a transaction but reports failure for the n-th send,
// as when the connection drops after the node accepted it.
type lossyBackend struct {
	Backend
	n, sends int
}

func (l *lossyBackend) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	l.sends++
	if err := l.Backend.SendTransaction(ctx, tx); err != nil {
		return err
	}
	if l.sends == l.n {
		return errors.New("connection reset by peer")
	}
	return nil
}

// A send whose answer was lost: the run fails, the re-run finds the
// recorded transaction mined and does not deploy again.
func TestDeployResumesAfterLostSend(t *testing.T) {
	f := newFixture(t)
	before := f.nonce()
	lossy := func(ctx context.Context, url string) (Backend, func(), error) {
		b, closeFn, err := dial(ctx, url)
		return &lossyBackend{Backend: b, n: 2}, closeFn, err // the ClaimsContract deployment
	}
	if _, log, err := f.run(f.args("state.json"), lossy); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("first run: %v\n%s", err, log)
	}
	var st State
	b, _ := os.ReadFile(filepath.Join(f.dir, "state.json"))
	if err := json.Unmarshal(b, &st); err != nil || st.Claims == nil || st.Claims.Tx == (common.Hash{}) {
		t.Fatalf("the lost send is not in the state file: %s", b)
	}
	if _, log, err := f.run(f.args("state.json"), nil); err != nil {
		t.Fatalf("resume: %v\n%s", err, log)
	}
	if got := f.nonce() - before; got != 3 {
		t.Fatalf("%d transactions in all, want 3: something was deployed twice", got)
	}
	if s := f.settings("state.json"); s["TOLLGATE_CLAIMS_ADDRESS"] != st.Claims.Address.Hex() {
		t.Fatalf("the resumed ClaimsContract is %s, the recorded one %s", s["TOLLGATE_CLAIMS_ADDRESS"], st.Claims.Address.Hex())
	}
}

// With a multisig admin the grant only it may make is printed, unsigned,
// and not sent; what the constructor set is verified.
func TestDeployMultisigAdminPrintsGrants(t *testing.T) {
	f := newFixture(t)
	multisig := f.addr("governor") // any address that is not the deployer
	before := f.nonce()
	out, log, err := f.run(f.args("ms.json", "-admin", multisig.Hex()), nil)
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, log)
	}
	if got := f.nonce() - before; got != 2 {
		t.Fatalf("%d transactions sent, want 2 (the grant is the admin's)", got)
	}
	var unsigned []Unsigned
	if err := json.Unmarshal([]byte(out), &unsigned); err != nil || len(unsigned) != 1 {
		t.Fatalf("stdout %q: %v", out, err)
	}
	c := claimscontract.NewClaimsContract()
	claims := common.HexToAddress(f.settings("ms.json")["TOLLGATE_CLAIMS_ADDRESS"])
	role, _ := c.UnpackCLAIMCREATORROLE(mustCall(t, f, claims, c.PackCLAIMCREATORROLE()))
	if unsigned[0].To != claims || unsigned[0].Data != hexutil.Encode(c.PackGrantRole(role, f.addr("claim-signer"))) {
		t.Fatalf("unsigned %+v", unsigned[0])
	}
}

func mustCall(t *testing.T, f *fixture, to common.Address, data []byte) []byte {
	out, err := f.client.CallContract(f.ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Refusals before anything is sent: a preset token that is not on this
// chain, a token with other decimals or symbol, the wrong chain, no key.
func TestDeployRefusals(t *testing.T) {
	f := newFixture(t)
	before := f.nonce()
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(f.args("a.json"), "-token", "polygon-usdt"), "no contract at the token address"},
		{append(f.args("b.json"), "-decimals", "18"), "has 6 decimals"},
		{append(f.args("c.json"), "-symbol", "DAI"), "want one of [DAI]"},
		{append(f.args("d.json"), "-chain", "1"), "serves chain 137, not 1"},
		{append(f.args("e.json"), "-treasury", "nope"), "-treasury \"nope\" is not an address"},
		// A mistyped checksum: the treasury receives money.
		{append(f.args("f.json"), "-treasury", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"), "bad EIP-55 checksum"},
		// All lowercase: no checksum at all, so a mistyped digit would go unnoticed.
		{append(f.args("g.json"), "-treasury", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"), "not EIP-55 checksummed"},
	} {
		_, log, err := f.run(c.args, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q\n%s", c.args[len(c.args)-2:], err, c.want, log)
		}
	}
	f.env = func(string) string { return "" }
	if _, _, err := f.run(f.args("f.json"), nil); err == nil || !strings.Contains(err.Error(), "TOLLGATE_DEPLOYER_KEY") {
		t.Errorf("no key: %v", err)
	}
	if f.nonce() != before {
		t.Fatal("a refused deployment sent a transaction")
	}
}
