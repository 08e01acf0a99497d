package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

func summary(args []string) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	path := fs.String("manifest", ".run/devchain.json", "manifest written by devchain")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, err := devnet.ReadManifest(*path)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "chain 137\t%s\n", m.Polygon.RPCURL)
	fmt.Fprintf(w, "  TestUSDT\t%s\n  RevenueVault\t%s (min deposit %s USDT)\n  ClaimsContract\t%s\n",
		m.Polygon.USDT, m.Polygon.RevenueVault, minDeposit(m), m.Polygon.ClaimsContract)
	fmt.Fprintf(w, "chain 8453\t%s\n  TestUSDC\t%s\n", m.Base.RPCURL, m.Base.USDC)
	fmt.Fprintln(w, "dev accounts (keys in the manifest)\t")
	for _, a := range m.Accounts {
		fmt.Fprintf(w, "  %s\t%s\n", a.Name, a.Address)
	}
	return w.Flush()
}

func minDeposit(m *devnet.Manifest) string {
	u, err := money.ParseUnits(m.Polygon.MinDepositUnits)
	if err != nil {
		return "?"
	}
	return u.Decimal()
}

func deposit(args []string) error {
	fs := flag.NewFlagSet("deposit", flag.ContinueOnError)
	path := fs.String("manifest", ".run/devchain.json", "manifest written by devchain")
	from := fs.String("from", "developer-1", "dev account that deposits")
	amount := fs.String("amount", "5", "USDT to deposit")
	account := fs.String("account", "", "account (API key id key_…) to credit; a fresh id when empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, err := devnet.ReadManifest(*path)
	if err != nil {
		return err
	}
	amt, err := money.Parse(*amount)
	if err != nil {
		return fmt.Errorf("-amount: %w", err)
	}
	if *account == "" {
		*account = accounts.NewID()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := devnet.Deposit(ctx, m, *from, amt, *account)
	if err != nil {
		return err
	}
	fmt.Printf("approve  tx %s (block %d)\n", res.ApproveTx.Hex(), res.ApproveBlock)
	fmt.Printf("deposit  tx %s (block %d)\n", res.DepositTx.Hex(), res.Block)
	fmt.Printf("Deposited(account=%s, from=%s, amount=%s units = %s USDT)\n",
		res.Account, res.From.Hex(), res.Amount.String(), res.Amount.Decimal())
	fmt.Printf("treasury USDT balance %s -> %s\n", res.TreasuryBefore.Decimal(), res.TreasuryAfter.Decimal())
	return nil
}
