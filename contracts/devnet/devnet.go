// Package devnet runs Tollgate's local development chains in-process: chain
// 137 with TestUSDT, RevenueVault and ClaimsContract, and chain 8453 with
// TestUSDC and the x402 batch-settlement contracts, both served over JSON-RPC (HTTP and WebSocket on one port) on 127.0.0.1 and mined like a real
// chain (pending transactions at once, an empty block on an interval so
// confirmations accumulate). Reorg reorganises a chain's head on demand, and
// ServeAdmin offers that over JSON-RPC (devchain_reorg) to other processes.
// `go run ./contracts/devchain` wraps it; end-to-end tests start it directly.
package devnet

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/simchain"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Config of the dev chains. Zero values take the defaults.
type Config struct {
	PolygonPort   int           // HTTP port of chain 137; 0 picks a free port
	BasePort      int           // HTTP port of chain 8453; 0 picks a free port
	BlockInterval time.Duration // empty-block cadence; default 1 s, negative disables
	MinDeposit    money.Units   // RevenueVault minimum deposit; default 1 USDT
	// TokensOnly leaves RevenueVault and ClaimsContract undeployed (the
	// manifest names none): the chain as an operator finds a real one, with
	// the tokens and funded accounts, for the deploy command to start from.
	TokensOnly bool
	// ExtraChains are more chains to start, by chain id (e.g. 31337): plain
	// EVM chains with the dev accounts funded and no contracts, for chains
	// the gateway serves by configuration only.
	ExtraChains []uint64
}

// Funding of the dev accounts.
var (
	ethPerAccount = new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(1e18))
	devUSDT       = 10_000 * money.Scale
	devUSDC       = 1_000 * money.Scale
)

// Devnet is the running pair of chains.
type Devnet struct {
	Polygon *simchain.Chain
	Base    *simchain.Chain
	// Extra are the Config.ExtraChains, in that order.
	Extra    []*simchain.Chain
	Manifest *Manifest

	sealers map[uint64]*sealer // by chain ID; nil until the set-up is done
	admin   *adminServer       // nil unless ServeAdmin was called
}

// Start brings both chains up, deploys and funds everything, and starts mining.
func Start(ctx context.Context, cfg Config) (_ *Devnet, err error) {
	if cfg.BlockInterval == 0 {
		cfg.BlockInterval = time.Second
	}
	if cfg.MinDeposit == 0 {
		cfg.MinDeposit = money.Scale
	}
	for _, p := range []*int{&cfg.PolygonPort, &cfg.BasePort} {
		if *p == 0 {
			if *p, err = simchain.FreePort(); err != nil {
				return nil, fmt.Errorf("devnet: pick a port: %w", err)
			}
		}
	}
	accts := devAccounts()
	alloc := types.GenesisAlloc{}
	for _, a := range accts {
		alloc[a.Addr()] = types.Account{Balance: ethPerAccount}
	}
	d := &Devnet{}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if d.Polygon, err = simchain.New(simchain.Config{ChainID: 137, Alloc: alloc, HTTPPort: cfg.PolygonPort}); err != nil {
		return nil, fmt.Errorf("devnet: chain 137: %w", err)
	}
	// Chain 8453 also holds the x402 batch-settlement channel contract and its deposit collector
	// at their fixed addresses (genesis code, no deployment), so the official client works unchanged.
	baseAlloc, err := deploy.BatchSettlementAlloc()
	if err != nil {
		return nil, fmt.Errorf("devnet: chain 8453: %w", err)
	}
	maps.Copy(baseAlloc, alloc)
	if d.Base, err = simchain.New(simchain.Config{ChainID: 8453, Alloc: baseAlloc, HTTPPort: cfg.BasePort}); err != nil {
		return nil, fmt.Errorf("devnet: chain 8453: %w", err)
	}
	for _, id := range cfg.ExtraChains {
		if id == 137 || id == 8453 {
			return nil, fmt.Errorf("devnet: extra chain %d is one of the devnet's own", id)
		}
		port, err := simchain.FreePort()
		if err != nil {
			return nil, fmt.Errorf("devnet: pick a port: %w", err)
		}
		c, err := simchain.New(simchain.Config{ChainID: id, Alloc: alloc, HTTPPort: port})
		if err != nil {
			return nil, fmt.Errorf("devnet: chain %d: %w", id, err)
		}
		d.Extra = append(d.Extra, c)
	}
	byName := map[string]common.Address{}
	for _, a := range accts {
		byName[a.Name] = a.Addr()
	}

	// Set-up runs with explicit commits, before the miners start, so it is
	// deterministic: the same addresses on every start.
	polyDeployer := bind.NewKeyedTransactor(DevKey("deployer"), d.Polygon.ChainID())
	poly := &deploy.Polygon{}
	if cfg.TokensOnly {
		poly.USDT, err = deploy.DeployUSDT(ctx, d.Polygon.Client(), polyDeployer, deploy.WithCommit(func() { d.Polygon.Commit() }))
	} else {
		poly, err = deploy.DeployPolygon(ctx, d.Polygon.Client(), polyDeployer, deploy.PolygonParams{
			Treasury: byName["treasury"], Governor: byName["governor"], ClaimCreator: byName["claim-signer"],
			MinDeposit: cfg.MinDeposit.Big(),
		}, deploy.WithCommit(func() { d.Polygon.Commit() }))
	}
	if err != nil {
		return nil, fmt.Errorf("devnet: deploy on 137: %w", err)
	}
	usdc, err := deploy.DeployUSDC(ctx, d.Base.Client(), bind.NewKeyedTransactor(DevKey("deployer"), d.Base.ChainID()),
		deploy.WithCommit(func() { d.Base.Commit() }))
	if err != nil {
		return nil, fmt.Errorf("devnet: deploy on 8453: %w", err)
	}

	usdt := testusdt.NewTestUSDT()
	usdtC := usdt.Instance(d.Polygon.Client(), poly.USDT)
	claims := claimscontract.NewClaimsContract()
	usdcB := testusdc.NewTestUSDC()
	usdcC := usdcB.Instance(d.Base.Client(), usdc)
	creatorRole := crypto.Keccak256Hash([]byte("CLAIM_CREATOR_ROLE"))

	var polySteps []step
	if !cfg.TokensOnly {
		polySteps = append(polySteps, step{"grant CLAIM_CREATOR_ROLE to relayer", claims.Instance(d.Polygon.Client(), poly.Claims),
			claims.PackGrantRole(creatorRole, byName["relayer"])})
	}
	baseSteps := []step{}
	for _, name := range []string{"developer-1", "developer-2"} {
		polySteps = append(polySteps, step{"mint USDT to " + name, usdtC, usdt.PackMint(byName[name], devUSDT.Big())})
	}
	for _, name := range []string{"developer-1", "developer-2", "payer"} {
		baseSteps = append(baseSteps, step{"mint USDC to " + name, usdcC, usdcB.PackMint(byName[name], devUSDC.Big())})
	}
	if err := run(ctx, d.Polygon, DevKey("deployer"), polySteps); err != nil {
		return nil, err
	}
	if err := run(ctx, d.Base, DevKey("deployer"), baseSteps); err != nil {
		return nil, err
	}

	d.sealers = map[uint64]*sealer{}
	for _, c := range append([]*simchain.Chain{d.Polygon, d.Base}, d.Extra...) {
		s := &sealer{c: c, interval: cfg.BlockInterval}
		s.start()
		d.sealers[c.ChainID().Uint64()] = s
	}
	vaultAddr, claimsAddr, minDep := poly.Vault.Hex(), poly.Claims.Hex(), cfg.MinDeposit.String()
	if cfg.TokensOnly {
		vaultAddr, claimsAddr, minDep = "", "", ""
	}
	d.Manifest = &Manifest{
		StartedAt:       time.Now().UTC().Format(time.RFC3339),
		BlockIntervalMs: cfg.BlockInterval.Milliseconds(),
		Polygon: Polygon{ChainID: 137, RPCURL: d.Polygon.HTTPURL(), WSURL: d.Polygon.WSURL(), USDT: poly.USDT.Hex(), RevenueVault: vaultAddr,
			ClaimsContract: claimsAddr, MinDepositUnits: minDep},
		Base: Base{ChainID: 8453, RPCURL: d.Base.HTTPURL(), WSURL: d.Base.WSURL(), USDC: usdc.Hex(),
			BatchSettlement: deploy.BatchSettlementAddress.Hex(), DepositCollector: deploy.ERC3009CollectorAddress.Hex()},
		Accounts: accts,
		Extra:    extraManifest(d.Extra),
		Note:     "development chains and keys only; the keys are derived from public strings",
	}
	return d, nil
}

type step struct {
	what string
	c    *bind.BoundContract
	data []byte
}

// run sends each call from key, commits, and checks every receipt succeeded.
func run(ctx context.Context, c *simchain.Chain, key *ecdsa.PrivateKey, steps []step) error {
	opts := bind.NewKeyedTransactor(key, c.ChainID())
	opts.Context = ctx
	for _, s := range steps {
		tx, err := bind.Transact(s.c, opts, s.data)
		if err != nil {
			return fmt.Errorf("devnet: %s: %w", s.what, err)
		}
		c.Commit()
		r, err := c.Client().TransactionReceipt(ctx, tx.Hash())
		if err != nil {
			return fmt.Errorf("devnet: %s: receipt: %w", s.what, err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return fmt.Errorf("devnet: %s: reverted", s.what)
		}
	}
	return nil
}

// sealer runs a chain's two block producers (AutoCommit for pending
// transactions, emptyBlocks on the interval). Reorg stops them while it
// rewrites the head: they are the only writers of the chain besides Reorg.
type sealer struct {
	c        *simchain.Chain
	interval time.Duration

	mu     sync.Mutex // held by Reorg for the whole rewrite, and by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// start launches the producers; s.mu is held or s is not shared yet.
func (s *sealer) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.c.AutoCommit(ctx, pendingPoll)
	}()
	go func() {
		defer s.wg.Done()
		emptyBlocks(ctx, s.c, s.interval)
	}()
}

// stop ends the producers and waits until neither is inside a Commit; s.mu is held.
func (s *sealer) stop() {
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
		s.cancel = nil
	}
}

func extraManifest(cs []*simchain.Chain) []Chain {
	var out []Chain
	for _, c := range cs {
		out = append(out, Chain{ChainID: c.ChainID().Uint64(), RPCURL: c.HTTPURL(), WSURL: c.WSURL()})
	}
	return out
}

// pendingPoll is how often pending transactions are looked for: a
// transaction sent over HTTP is mined within about this delay.
const pendingPoll = 25 * time.Millisecond

// emptyBlocks seals an empty block every interval so that confirmation
// counts grow like on a live chain even when nobody transacts.
func emptyBlocks(ctx context.Context, c *simchain.Chain, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Commit()
		}
	}
}

// Close stops mining and both chains. It is safe on a partly started Devnet.
func (d *Devnet) Close() error {
	var errs []error
	if d.admin != nil {
		errs = append(errs, d.admin.close())
		d.admin = nil
	}
	for _, s := range d.sealers { // waits for a Reorg in progress
		s.mu.Lock()
		s.stop()
		s.closed = true
		s.mu.Unlock()
	}
	for _, c := range append([]*simchain.Chain{d.Polygon, d.Base}, d.Extra...) {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
