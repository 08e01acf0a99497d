package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Backend is the chain as the deployment uses it.
type Backend interface {
	deploy.Backend
	ChainID(ctx context.Context) (*big.Int, error)
	BlockNumber(ctx context.Context) (uint64, error)
	TransactionByHash(ctx context.Context, hash common.Hash) (*types.Transaction, bool, error)
}

// Token is a stablecoin preset: the address and what its decimals() and
// symbol() must answer before anything is deployed against it.
type Token struct {
	Address  common.Address
	Decimals uint8
	Symbols  []string // any of these
}

// Presets are the real tokens by name.
var Presets = map[string]Token{
	// Polygon PoS USDT (bridged; renamed USDT0 by its issuer in 2025).
	"polygon-usdt": {common.HexToAddress("0xc2132D05D31c914a87C6611C10748AEb04B58e8F"), 6, []string{"USDT", "USDT0"}},
	// Circle's native USDC on Base (the x402 asset).
	"base-usdc": {common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), 6, []string{"USDC"}},
}

// Plan is what to deploy and who gets which role.
type Plan struct {
	ChainID       uint64
	Token         Token
	Treasury      common.Address
	Admin         common.Address // RevenueVault owner, ClaimsContract DEFAULT_ADMIN_ROLE; zero: the deployer
	Governor      common.Address
	ClaimCreators []common.Address // the first is set in the constructor, the others granted after
	MinDeposit    *big.Int         // USDT base units
}

// Step is one deployed contract or granted role in the state file: it is
// written when the transaction is signed, before it is sent, so a crash
// between sending and recording is found again by its hash.
type Step struct {
	Tx      common.Hash    `json:"tx"`
	Address common.Address `json:"address,omitempty"` // contracts
	Block   uint64         `json:"block,omitempty"`   // mined in
}

// State is the deployment's record (the -state file).
type State struct {
	ChainID  uint64           `json:"chain_id"`
	Deployer common.Address   `json:"deployer"`
	USDT     common.Address   `json:"usdt"`
	Vault    *Step            `json:"revenue_vault,omitempty"`
	Claims   *Step            `json:"claims_contract,omitempty"`
	Grants   map[string]*Step `json:"grants,omitempty"` // "<role>:<address>"
}

// Unsigned is a transaction an admin multisig must send.
type Unsigned struct {
	What string         `json:"what"`
	To   common.Address `json:"to"`
	Data string         `json:"data"`
}

// Result is what a run did.
type Result struct {
	State    State
	Sent     int        // transactions sent in this run
	Unsigned []Unsigned // for the admin to send (it is not the deployer)
	// MinDeposit is the vault's minimum deposit as read back from the chain,
	// in base units of a token with Decimals decimals.
	MinDeposit *big.Int
	Decimals   uint8
}

type runner struct {
	ctx       context.Context
	b         Backend
	key       *bind.TransactOpts
	statePath string
	st        State
	sent      int
	logf      func(format string, args ...any)
}

// Run deploys what the state file does not record yet, grants the roles,
// then verifies everything on chain. It is idempotent: a second run sends
// nothing.
func Run(ctx context.Context, b Backend, key *bind.TransactOpts, p Plan, statePath string, logf func(string, ...any)) (*Result, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain id: %w", err)
	}
	if id.Uint64() != p.ChainID {
		return nil, fmt.Errorf("the RPC serves chain %d, not %d", id, p.ChainID)
	}
	if p.Admin == (common.Address{}) {
		p.Admin = key.From
	}
	if p.Treasury == (common.Address{}) || p.Governor == (common.Address{}) || len(p.ClaimCreators) == 0 || p.MinDeposit == nil {
		return nil, errors.New("treasury, governor, at least one claim creator and the minimum deposit are required")
	}
	if err := checkToken(ctx, b, p.Token); err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, b: b, key: key, statePath: statePath, logf: logf}
	if err := r.load(p); err != nil {
		return nil, err
	}
	vault, claims := revenuevault.NewRevenueVault(), claimscontract.NewClaimsContract()
	vaultInit := append(common.FromHex(revenuevault.RevenueVaultMetaData.Bin),
		vault.PackConstructor(p.Token.Address, p.Treasury, p.MinDeposit, p.Admin)...)
	claimsInit := append(common.FromHex(claimscontract.ClaimsContractMetaData.Bin),
		claims.PackConstructor(p.Token.Address, p.Admin, p.Governor, p.ClaimCreators[0])...)
	if r.st.Vault, err = r.contract("RevenueVault", r.st.Vault, vaultInit); err != nil {
		return nil, err
	}
	if r.st.Claims, err = r.contract("ClaimsContract", r.st.Claims, claimsInit); err != nil {
		return nil, err
	}

	creator := r.call32(r.st.Claims.Address, claims.PackCLAIMCREATORROLE(), claims.UnpackCLAIMCREATORROLE)
	res := &Result{}
	for _, a := range p.ClaimCreators[1:] {
		name := "CLAIM_CREATOR_ROLE:" + a.Hex()
		if r.hasRole(r.st.Claims.Address, creator, a) {
			continue
		}
		data := claims.PackGrantRole(creator, a)
		if p.Admin != key.From {
			res.Unsigned = append(res.Unsigned, Unsigned{What: "grantRole(" + name + ")", To: r.st.Claims.Address, Data: hexutil.Encode(data)})
			continue
		}
		if r.st.Grants[name], err = r.transact(name, r.st.Grants[name], &r.st.Claims.Address, data); err != nil {
			return nil, err
		}
	}
	if err := r.save(); err != nil {
		return nil, err
	}
	if err := r.verify(p, vaultInit, claimsInit, len(res.Unsigned) == 0); err != nil {
		return nil, err
	}
	res.State, res.Sent, res.MinDeposit, res.Decimals = r.st, r.sent, p.MinDeposit, p.Token.Decimals
	return res, nil
}

// checkToken: code at the address, and decimals() and symbol() as expected.
func checkToken(ctx context.Context, b Backend, t Token) error {
	code, err := b.CodeAt(ctx, t.Address, nil)
	if err != nil {
		return err
	}
	if len(code) == 0 {
		return fmt.Errorf("no contract at the token address %s on this chain", t.Address.Hex())
	}
	erc20 := testusdt.NewTestUSDT()
	out, err := b.CallContract(ctx, ethereum.CallMsg{To: &t.Address, Data: erc20.PackDecimals()}, nil)
	if err != nil {
		return fmt.Errorf("token decimals(): %w", err)
	}
	dec, err := erc20.UnpackDecimals(out)
	if err != nil || dec != t.Decimals {
		return fmt.Errorf("token %s has %d decimals (%v), want %d", t.Address.Hex(), dec, err, t.Decimals)
	}
	out, err = b.CallContract(ctx, ethereum.CallMsg{To: &t.Address, Data: erc20.PackSymbol()}, nil)
	if err != nil {
		return fmt.Errorf("token symbol(): %w", err)
	}
	sym, err := erc20.UnpackSymbol(out)
	if err != nil || (len(t.Symbols) > 0 && !slices.Contains(t.Symbols, sym)) {
		return fmt.Errorf("token %s is %q (%v), want one of %v", t.Address.Hex(), sym, err, t.Symbols)
	}
	return nil
}

func (r *runner) load(p Plan) error {
	b, err := os.ReadFile(r.statePath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		r.st = State{ChainID: p.ChainID, Deployer: r.key.From, USDT: p.Token.Address}
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, &r.st); err != nil {
			return fmt.Errorf("%s: %w", r.statePath, err)
		}
		if r.st.ChainID != p.ChainID || r.st.USDT != p.Token.Address {
			return fmt.Errorf("%s records chain %d and token %s, not %d and %s: use another state file",
				r.statePath, r.st.ChainID, r.st.USDT.Hex(), p.ChainID, p.Token.Address.Hex())
		}
	}
	if r.st.Grants == nil {
		r.st.Grants = map[string]*Step{}
	}
	return nil
}

func (r *runner) save() error {
	b, err := json.MarshalIndent(r.st, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.statePath + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.statePath)
}

// contract deploys initCode unless the state records it (then it is found
// again: mined, or still pending and awaited).
func (r *runner) contract(name string, s *Step, initCode []byte) (*Step, error) {
	if s != nil {
		return r.await(name, s)
	}
	return r.transact(name, nil, nil, initCode)
}

// transact signs a transaction (a deployment when to is nil), records it in
// the state file, sends it and waits for its receipt.
func (r *runner) transact(name string, s *Step, to *common.Address, data []byte) (*Step, error) {
	if s != nil {
		return r.await(name, s)
	}
	opts := *r.key
	opts.Context, opts.NoSend = r.ctx, true
	var tx *types.Transaction
	var addr common.Address
	var err error
	if to == nil {
		addr, tx, err = bind.DeployContract(&opts, data, r.b, nil)
	} else {
		tx, err = bind.NewBoundContract(*to, abi.ABI{}, r.b, r.b, r.b).RawTransact(&opts, data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s = &Step{Tx: tx.Hash(), Address: addr}
	if to == nil {
		r.setPending(name, s)
	} else {
		r.st.Grants[name] = s
	}
	if err := r.save(); err != nil { // recorded before it can be mined
		return nil, err
	}
	if err := r.b.SendTransaction(r.ctx, tx); err != nil {
		return nil, fmt.Errorf("%s: sending %s: %w", name, tx.Hash().Hex(), err)
	}
	r.sent++
	r.logf("%s: sent %s", name, tx.Hash().Hex())
	return r.await(name, s)
}

func (r *runner) setPending(name string, s *Step) {
	if name == "RevenueVault" {
		r.st.Vault = s
	} else {
		r.st.Claims = s
	}
}

func (r *runner) await(name string, s *Step) (*Step, error) {
	if s.Block != 0 {
		return s, nil
	}
	rc, err := deploy.WaitReceipt(r.ctx, r.b, s.Tx, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (re-run to keep waiting for %s)", name, err, s.Tx.Hex())
	}
	if rc.Status != types.ReceiptStatusSuccessful {
		return nil, fmt.Errorf("%s: transaction %s reverted", name, s.Tx.Hex())
	}
	s.Block = rc.BlockNumber.Uint64()
	r.logf("%s: mined in block %d%s", name, s.Block, map[bool]string{true: " at " + s.Address.Hex()}[s.Address != (common.Address{})])
	return s, r.save()
}

func (r *runner) call(to common.Address, data []byte) []byte {
	out, err := r.b.CallContract(r.ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		return nil
	}
	return out
}

func (r *runner) call32(to common.Address, data []byte, unpack func([]byte) ([32]byte, error)) [32]byte {
	v, _ := unpack(r.call(to, data))
	return v
}

func (r *runner) hasRole(claims common.Address, role [32]byte, who common.Address) bool {
	c := claimscontract.NewClaimsContract()
	ok, err := c.UnpackHasRole(r.call(claims, c.PackHasRole(role, who)))
	return err == nil && ok
}

// verify checks on chain what was deployed: each contract was created by
// its recorded transaction from exactly this build's init code (bytecode and
// constructor arguments) and has code — its runtime code cannot be compared
// with an eth_call of the init code, because ClaimsContract's EIP-712 domain
// keeps its own address as an immutable — and every role and setting.
func (r *runner) verify(p Plan, vaultInit, claimsInit []byte, grantsDone bool) error {
	var errs []error
	for _, c := range []struct {
		name string
		s    *Step
		init []byte
	}{{"RevenueVault", r.st.Vault, vaultInit}, {"ClaimsContract", r.st.Claims, claimsInit}} {
		tx, pending, err := r.b.TransactionByHash(r.ctx, c.s.Tx)
		if err != nil || pending || tx.To() != nil || !bytes.Equal(tx.Data(), c.init) {
			errs = append(errs, fmt.Errorf("%s: its transaction %s is not this build's deployment (%v)", c.name, c.s.Tx.Hex(), err))
			continue
		}
		rc, err := r.b.TransactionReceipt(r.ctx, c.s.Tx)
		if err != nil || rc.Status != types.ReceiptStatusSuccessful || rc.ContractAddress != c.s.Address {
			errs = append(errs, fmt.Errorf("%s: the receipt of %s does not create %s (%v)", c.name, c.s.Tx.Hex(), c.s.Address.Hex(), err))
			continue
		}
		if code, err := r.b.CodeAt(r.ctx, c.s.Address, nil); err != nil || len(code) == 0 {
			errs = append(errs, fmt.Errorf("%s: no code at %s (%v)", c.name, c.s.Address.Hex(), err))
		}
	}
	v := revenuevault.NewRevenueVault()
	addrOf := func(data []byte, unpack func([]byte) (common.Address, error)) common.Address {
		a, _ := unpack(r.call(r.st.Vault.Address, data))
		return a
	}
	if got := addrOf(v.PackOwner(), v.UnpackOwner); got != p.Admin {
		errs = append(errs, fmt.Errorf("RevenueVault owner %s, want %s", got.Hex(), p.Admin.Hex()))
	}
	if got := addrOf(v.PackTreasury(), v.UnpackTreasury); got != p.Treasury {
		errs = append(errs, fmt.Errorf("RevenueVault treasury %s, want %s", got.Hex(), p.Treasury.Hex()))
	}
	if got := addrOf(v.PackUsdt(), v.UnpackUsdt); got != p.Token.Address {
		errs = append(errs, fmt.Errorf("RevenueVault token %s, want %s", got.Hex(), p.Token.Address.Hex()))
	}
	if got, err := v.UnpackMinDeposit(r.call(r.st.Vault.Address, v.PackMinDeposit())); err != nil || got.Cmp(p.MinDeposit) != 0 {
		errs = append(errs, fmt.Errorf("RevenueVault minimum deposit %v units (%v), want %s", got, err, p.MinDeposit))
	}
	c := claimscontract.NewClaimsContract()
	roles := map[string][32]byte{
		"DEFAULT_ADMIN_ROLE": r.call32(r.st.Claims.Address, c.PackDEFAULTADMINROLE(), c.UnpackDEFAULTADMINROLE),
		"GOVERNOR_ROLE":      r.call32(r.st.Claims.Address, c.PackGOVERNORROLE(), c.UnpackGOVERNORROLE),
		"CLAIM_CREATOR_ROLE": r.call32(r.st.Claims.Address, c.PackCLAIMCREATORROLE(), c.UnpackCLAIMCREATORROLE),
	}
	want := [][2]any{{"DEFAULT_ADMIN_ROLE", p.Admin}, {"GOVERNOR_ROLE", p.Governor}, {"CLAIM_CREATOR_ROLE", p.ClaimCreators[0]}}
	if grantsDone {
		for _, a := range p.ClaimCreators[1:] {
			want = append(want, [2]any{"CLAIM_CREATOR_ROLE", a})
		}
	}
	for _, w := range want {
		if !r.hasRole(r.st.Claims.Address, roles[w[0].(string)], w[1].(common.Address)) {
			errs = append(errs, fmt.Errorf("ClaimsContract: %s lacks %s", w[1].(common.Address).Hex(), w[0]))
		}
	}
	return errors.Join(errs...)
}

// Settings are the deployment's settings file: KEY=VALUE lines that
// settlementd and the gateway are started from. In production both systemd
// units read it with EnvironmentFile= (settlementd's environment; Caddy's,
// where the Caddyfile's {$TOLLGATE_…} placeholders take them); `caddy run
// --envfile` reads the same format. It holds addresses and block numbers
// only — no secret — and is the same bytes on every run of a deployment
// (no timestamp), so a re-run leaves it unchanged.
func (r *Result) Settings() string {
	s := r.State
	var b strings.Builder
	fmt.Fprintf(&b, "# written by tollgate-deploy for chain %d (deployer %s); no secrets\n", s.ChainID, s.Deployer.Hex())
	fmt.Fprintf(&b, "TOLLGATE_CHAIN_ID=%d\n", s.ChainID)
	fmt.Fprintf(&b, "TOLLGATE_USDT_ADDRESS=%s\n", s.USDT.Hex())
	fmt.Fprintf(&b, "TOLLGATE_VAULT_ADDRESS=%s\n", s.Vault.Address.Hex())
	fmt.Fprintf(&b, "TOLLGATE_VAULT_START_BLOCK=%d\n", s.Vault.Block)
	fmt.Fprintf(&b, "TOLLGATE_CLAIMS_ADDRESS=%s\n", s.Claims.Address.Hex())
	fmt.Fprintf(&b, "TOLLGATE_CLAIMS_START_BLOCK=%d\n", s.Claims.Block)
	if r.MinDeposit != nil {
		fmt.Fprintf(&b, "TOLLGATE_MIN_DEPOSIT=%s\n", decimal(r.MinDeposit, r.Decimals))
	}
	return b.String()
}

// decimal writes base units of a token with d decimals as a decimal
// number (1500000, 6 → 1.5), exactly.
func decimal(units *big.Int, d uint8) string {
	str := units.String()
	if d == 0 {
		return str
	}
	if len(str) <= int(d) {
		str = strings.Repeat("0", int(d)-len(str)+1) + str
	}
	whole, frac := str[:len(str)-int(d)], strings.TrimRight(str[len(str)-int(d):], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// keyFromHex is a transactor for a hex private key on chainID.
func keyFromHex(hexKey string, chainID uint64) (*bind.TransactOpts, error) {
	k, err := ethparse.PrivateKey(hexKey)
	if err != nil {
		return nil, errors.New("TOLLGATE_DEPLOYER_KEY is not a hex private key")
	}
	return bind.NewKeyedTransactor(k, new(big.Int).SetUint64(chainID)), nil
}
