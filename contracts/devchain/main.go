// Command devchain runs Tollgate's local chains (137 and 8453) with the
// contracts deployed, and offers two client subcommands the demo uses.
//
//	devchain [-polygon-port 18545] [-base-port 18546] [-block-interval 1s] [-manifest .run/devchain.json] [-tokens-only]
//	devchain summary -manifest FILE
//	devchain deposit -manifest FILE -from developer-1 -amount 5 [-account key_…]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

func main() {
	args := os.Args[1:]
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(args)
	case "summary":
		err = summary(args)
	case "deposit":
		err = deposit(args)
	default:
		err = fmt.Errorf("unknown subcommand %q (serve, summary, deposit)", cmd)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "devchain:", err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("devchain", flag.ContinueOnError)
	polyPort := fs.Int("polygon-port", 18545, "JSON-RPC port (HTTP and WebSocket) of chain 137 on 127.0.0.1")
	basePort := fs.Int("base-port", 18546, "JSON-RPC port (HTTP and WebSocket) of chain 8453 on 127.0.0.1")
	interval := fs.Duration("block-interval", time.Second, "seal an empty block this often so confirmations accumulate (0 disables); below 1s the chain clock runs ahead of real time (each block is at least 1s after its parent), which a long-running stack notices in x402 windows and claim deadlines")
	minDep := fs.String("min-deposit", "1", "RevenueVault minimum deposit in USDT")
	manifest := fs.String("manifest", ".run/devchain.json", "where to write the manifest")
	tokensOnly := fs.Bool("tokens-only", false, "deploy only the tokens and fund the accounts: RevenueVault and ClaimsContract are left to tollgate-deploy")
	extra := fs.String("extra-chains", "", "comma-separated chain ids of more plain chains to start (e.g. 31337: no contracts, dev accounts funded; free ports, in the manifest's extra_chains), to try a chain added by configuration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	min, err := money.Parse(*minDep)
	if err != nil {
		return fmt.Errorf("-min-deposit: %w", err)
	}
	bi := *interval
	if bi == 0 {
		bi = -1 // devnet: negative disables, zero means default
	}
	var extraIDs []uint64
	for _, f := range strings.FieldsFunc(*extra, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := strconv.ParseUint(f, 10, 64)
		if err != nil || id == 0 {
			return fmt.Errorf("-extra-chains: %q is not a chain id", f)
		}
		extraIDs = append(extraIDs, id)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	d, err := devnet.Start(ctx, devnet.Config{PolygonPort: *polyPort, BasePort: *basePort, BlockInterval: bi, MinDeposit: min, TokensOnly: *tokensOnly,
		ExtraChains: extraIDs})
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Manifest.Write(*manifest); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "devchain: up in %s — chain 137 at %s (%s), chain 8453 at %s (%s); manifest %s\n",
		time.Since(start).Round(time.Millisecond), d.Manifest.Polygon.RPCURL, d.Manifest.Polygon.WSURL,
		d.Manifest.Base.RPCURL, d.Manifest.Base.WSURL, *manifest)
	for _, c := range d.Manifest.Extra {
		fmt.Fprintf(os.Stderr, "devchain: chain %d at %s (%s)\n", c.ChainID, c.RPCURL, c.WSURL)
	}
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "devchain: shutting down")
	_ = os.Remove(*manifest) // a stale manifest would point the demo at dead ports
	return d.Close()
}
