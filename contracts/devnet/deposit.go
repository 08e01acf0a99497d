package devnet

import (
	"context"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/contracts/deploy"
	"github.com/tollgate-rpc/tollgate/contracts/revert"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// DepositResult is what a deposit did on chain, read back from the receipt.
type DepositResult struct {
	ApproveTx, DepositTx          common.Hash
	ApproveBlock, Block           uint64
	LogIndex                      uint
	Account                       string
	From                          common.Address
	Amount                        money.Units
	TreasuryBefore, TreasuryAfter money.Units
}

// Deposit does what a developer's wallet does, over HTTP JSON-RPC like any
// client: approve RevenueVault for amount, then deposit(amount, account). It
// returns the decoded Deposited event and the treasury's balance change.
func Deposit(ctx context.Context, m *Manifest, from string, amount money.Units, account string) (*DepositResult, error) {
	acct, err := m.Account(from)
	if err != nil {
		return nil, err
	}
	key, err := acct.Key()
	if err != nil {
		return nil, err
	}
	acc32, err := accounts.ToBytes32(account)
	if err != nil {
		return nil, err
	}
	client, err := ethclient.DialContext(ctx, m.Polygon.RPCURL)
	if err != nil {
		return nil, fmt.Errorf("devnet: dial %s: %w", m.Polygon.RPCURL, err)
	}
	defer client.Close()
	chainID, err := client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("devnet: eth_chainId: %w", err)
	}
	usdt, vault := testusdt.NewTestUSDT(), revenuevault.NewRevenueVault()
	usdtC := usdt.Instance(client, common.HexToAddress(m.Polygon.USDT))
	vaultAddr := common.HexToAddress(m.Polygon.RevenueVault)
	vaultC := vault.Instance(client, vaultAddr)
	treasury, err := m.Account("treasury")
	if err != nil {
		return nil, err
	}
	balance := func() (money.Units, error) {
		b, err := bind.Call(usdtC, &bind.CallOpts{Context: ctx}, usdt.PackBalanceOf(treasury.Addr()), usdt.UnpackBalanceOf)
		if err != nil {
			return 0, fmt.Errorf("devnet: balanceOf: %w", err)
		}
		return money.FromBig(b)
	}
	res := &DepositResult{}
	if res.TreasuryBefore, err = balance(); err != nil {
		return nil, err
	}
	opts := bind.NewKeyedTransactor(key, chainID)
	opts.Context = ctx
	send := func(c *bind.BoundContract, data []byte, what string, unpack revert.Unpacker) (*types.Receipt, error) {
		tx, err := bind.Transact(c, opts, data)
		if err != nil {
			// Gas estimation runs the call first, so a revert surfaces here with its data.
			if reason, derr := revert.Decode(err, unpack); derr == nil {
				return nil, fmt.Errorf("devnet: %s reverted: %T%+v", what, reason, reason)
			}
			return nil, fmt.Errorf("devnet: %s: %w", what, err)
		}
		r, err := deploy.WaitReceipt(ctx, client, tx.Hash(), 50*time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("devnet: %s: %w", what, err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return nil, fmt.Errorf("devnet: %s reverted (tx %s)", what, tx.Hash().Hex())
		}
		return r, nil
	}
	ar, err := send(usdtC, usdt.PackApprove(vaultAddr, amount.Big()), "approve", usdt.UnpackError)
	if err != nil {
		return nil, err
	}
	res.ApproveTx, res.ApproveBlock = ar.TxHash, ar.BlockNumber.Uint64()
	dr, err := send(vaultC, vault.PackDeposit(amount.Big(), acc32), "deposit", vault.UnpackError)
	if err != nil {
		return nil, err
	}
	res.DepositTx, res.Block = dr.TxHash, dr.BlockNumber.Uint64()
	var ev *revenuevault.RevenueVaultDeposited
	for _, l := range dr.Logs {
		if l.Address == vaultAddr {
			if e, err := vault.UnpackDepositedEvent(l); err == nil {
				ev, res.LogIndex = e, l.Index
			}
		}
	}
	if ev == nil {
		return nil, fmt.Errorf("devnet: deposit tx %s emitted no Deposited event", dr.TxHash.Hex())
	}
	if res.Account, err = accounts.FromBytes32(ev.Account); err != nil {
		return nil, err
	}
	res.From = ev.From
	if res.Amount, err = money.FromBig(ev.Amount); err != nil {
		return nil, err
	}
	if res.TreasuryAfter, err = balance(); err != nil {
		return nil, err
	}
	return res, nil
}
