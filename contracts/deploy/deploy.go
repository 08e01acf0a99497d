// Package deploy deploys the Tollgate contracts with the generated bind/v2 bindings.
//
// It works on a chain that mines by itself (a real chain, or a simulated chain with an AutoCommit
// loop) and on a simulated chain driven by the caller: pass WithCommit(chain.Commit) and every
// transaction is followed by a commit. Either way each transaction is sent, then its receipt is
// awaited and checked (status 1, code at the new address) before the next one is sent.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdc"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
)

// Backend is what deployment needs: sending transactions and reading receipts and code.
// *ethclient.Client and simulated.Client satisfy it.
type Backend interface {
	bind.ContractBackend
	bind.DeployBackend
}

// PolygonParams configures DeployPolygon.
type PolygonParams struct {
	Treasury     common.Address // receives RevenueVault deposits (required)
	Governor     common.Address // ClaimsContract GOVERNOR_ROLE (required)
	ClaimCreator common.Address // ClaimsContract CLAIM_CREATOR_ROLE (required)
	MinDeposit   *big.Int       // RevenueVault minimum deposit in USDT base units (required, may be 0)

	// Admin owns RevenueVault and holds ClaimsContract's DEFAULT_ADMIN_ROLE. Zero means the deployer.
	Admin common.Address
	// USDT is an existing USDT token to use. Zero deploys a TestUSDT (open mint; test chains only).
	USDT common.Address
}

// Polygon holds the addresses deployed by DeployPolygon.
type Polygon struct {
	USDT   common.Address
	Vault  common.Address
	Claims common.Address
}

// Option adjusts a deployment.
type Option func(*options)

type options struct {
	commit       func()
	pollInterval time.Duration
}

// WithCommit calls commit after each transaction is sent, e.g. (*simchain.Chain).Commit on a chain
// that nobody else mines.
func WithCommit(commit func()) Option { return func(o *options) { o.commit = commit } }

// WithPollInterval sets how often receipts are polled (default 50 ms).
func WithPollInterval(d time.Duration) Option { return func(o *options) { o.pollInterval = d } }

// DefaultTimeout bounds a deployment whose context has no deadline.
const DefaultTimeout = 2 * time.Minute

// DeployPolygon deploys TestUSDT (unless p.USDT is set), RevenueVault and ClaimsContract, in that
// order, from deployer. The deployer's pending nonce is used (deployer.Nonce is ignored).
func DeployPolygon(ctx context.Context, backend Backend, deployer *bind.TransactOpts, p PolygonParams, opts ...Option) (*Polygon, error) {
	if p.Treasury == (common.Address{}) || p.Governor == (common.Address{}) || p.ClaimCreator == (common.Address{}) {
		return nil, errors.New("deploy: Treasury, Governor and ClaimCreator are required")
	}
	if p.MinDeposit == nil || p.MinDeposit.Sign() < 0 {
		return nil, errors.New("deploy: MinDeposit must be set and non-negative")
	}
	d, cancel := newDeployer(ctx, backend, deployer, opts)
	defer cancel()
	admin := p.Admin
	if admin == (common.Address{}) {
		admin = deployer.From
	}

	out := &Polygon{USDT: p.USDT}
	var err error
	if out.USDT == (common.Address{}) {
		if out.USDT, err = d.deploy("TestUSDT", testusdt.TestUSDTMetaData.Bin, nil); err != nil {
			return nil, err
		}
	}
	vault := revenuevault.NewRevenueVault()
	if out.Vault, err = d.deploy("RevenueVault", revenuevault.RevenueVaultMetaData.Bin,
		vault.PackConstructor(out.USDT, p.Treasury, p.MinDeposit, admin)); err != nil {
		return nil, err
	}
	claims := claimscontract.NewClaimsContract()
	if out.Claims, err = d.deploy("ClaimsContract", claimscontract.ClaimsContractMetaData.Bin,
		claims.PackConstructor(out.USDT, admin, p.Governor, p.ClaimCreator)); err != nil {
		return nil, err
	}
	return out, nil
}

// DeployUSDT deploys TestUSDT alone (open mint; test chains only): a dev chain on which
// RevenueVault and ClaimsContract are left to the operator's deploy command.
func DeployUSDT(ctx context.Context, backend Backend, deployer *bind.TransactOpts, opts ...Option) (common.Address, error) {
	d, cancel := newDeployer(ctx, backend, deployer, opts)
	defer cancel()
	return d.deploy("TestUSDT", testusdt.TestUSDTMetaData.Bin, nil)
}

// DeployUSDC deploys TestUSDC (EIP-3009, domain "USD Coin"/"2"; open mint, test chains only).
func DeployUSDC(ctx context.Context, backend Backend, deployer *bind.TransactOpts, opts ...Option) (common.Address, error) {
	d, cancel := newDeployer(ctx, backend, deployer, opts)
	defer cancel()
	return d.deploy("TestUSDC", testusdc.TestUSDCMetaData.Bin, nil)
}

// WaitReceipt polls for the receipt of hash every interval (50 ms if <= 0) until it exists or ctx
// is done. It does not check the receipt's status.
func WaitReceipt(ctx context.Context, backend bind.DeployBackend, hash common.Hash, interval time.Duration) (*types.Receipt, error) {
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastErr error // RPC errors other than "not found" are retried until ctx ends
	for {
		r, err := backend.TransactionReceipt(ctx, hash)
		if err == nil && r != nil {
			return r, nil
		}
		if err != nil && !errors.Is(err, ethereum.NotFound) {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return nil, fmt.Errorf("waiting for receipt of %s: %w (last RPC error: %v)", hash.Hex(), ctx.Err(), lastErr)
			}
			return nil, fmt.Errorf("waiting for receipt of %s: %w", hash.Hex(), ctx.Err())
		case <-t.C:
		}
	}
}

type deployer struct {
	ctx     context.Context
	backend Backend
	opts    bind.TransactOpts
	o       options
}

func newDeployer(ctx context.Context, backend Backend, from *bind.TransactOpts, opts []Option) (*deployer, context.CancelFunc) {
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
	}
	d := &deployer{ctx: ctx, backend: backend, opts: *from}
	d.opts.Context = ctx
	d.opts.Nonce = nil
	for _, opt := range opts {
		opt(&d.o)
	}
	return d, cancel
}

func (d *deployer) deploy(name, binHex string, constructorArgs []byte) (common.Address, error) {
	addr, tx, err := bind.DeployContract(&d.opts, common.FromHex(binHex), d.backend, constructorArgs)
	if err != nil {
		return common.Address{}, fmt.Errorf("deploy %s: %w", name, err)
	}
	if d.o.commit != nil {
		d.o.commit()
	}
	r, err := WaitReceipt(d.ctx, d.backend, tx.Hash(), d.o.pollInterval)
	if err != nil {
		return common.Address{}, fmt.Errorf("deploy %s: %w", name, err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return common.Address{}, fmt.Errorf("deploy %s: transaction %s failed (status %d)", name, tx.Hash().Hex(), r.Status)
	}
	if r.ContractAddress != addr {
		return common.Address{}, fmt.Errorf("deploy %s: receipt address %s, expected %s", name, r.ContractAddress.Hex(), addr.Hex())
	}
	code, err := d.backend.CodeAt(d.ctx, addr, r.BlockNumber)
	if err != nil {
		return common.Address{}, fmt.Errorf("deploy %s: reading code: %w", name, err)
	}
	if len(code) == 0 {
		return common.Address{}, fmt.Errorf("deploy %s: no code at %s", name, addr.Hex())
	}
	return addr, nil
}
