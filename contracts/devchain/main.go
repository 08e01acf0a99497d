// Command devchain runs Tollgate's local chains (137 and 8453) with the
// contracts deployed, and offers two client subcommands the demo uses. The
// chains reorganise on demand through the admin JSON-RPC endpoint
// (devchain_reorg(chainId, depth), see devnet.Devnet.Reorg), or every
// -reorg-every.
//
//	devchain [-polygon-port 18545] [-base-port 18546] [-admin-port 0] [-block-interval 1s] [-manifest .run/devchain.json] [-tokens-only]
//	         [-reorg-every 30s] [-reorg-depth 2]
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
	adminPort := fs.Int("admin-port", 0, "admin JSON-RPC port on 127.0.0.1, 0 for a free one, -1 for none; the manifest's admin_url names it. devchain_reorg(chainId, depth) replaces the last depth (1-16) blocks of chain 137 or 8453 with a new branch one block longer, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"devchain_reorg\",\"params\":[137,2]}")
	reorgEvery := fs.Duration("reorg-every", 0, "reorganise both chains this often (0: only on demand, through devchain_reorg); each reorganisation also moves the chain clock about -reorg-depth seconds further ahead of real time")
	reorgDepth := fs.Int("reorg-depth", 2, fmt.Sprintf("blocks each -reorg-every reorganisation replaces (1-%d)", devnet.MaxReorgDepth))
	extra := fs.String("extra-chains", "", "comma-separated chain ids of more plain chains to start (e.g. 31337: no contracts, dev accounts funded; free ports, in the manifest's extra_chains), to try a chain added by configuration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *reorgEvery < 0 {
		return fmt.Errorf("-reorg-every %s: negative", *reorgEvery)
	}
	if *reorgDepth < 1 || *reorgDepth > devnet.MaxReorgDepth {
		return fmt.Errorf("-reorg-depth %d: out of range 1-%d", *reorgDepth, devnet.MaxReorgDepth)
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
	admin := "no admin endpoint"
	if *adminPort >= 0 {
		u, err := d.ServeAdmin(*adminPort)
		if err != nil {
			return err
		}
		admin = "admin JSON-RPC (devchain_reorg) at " + u
	}
	if err := d.Manifest.Write(*manifest); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "devchain: up in %s — chain 137 at %s (%s), chain 8453 at %s (%s); %s; manifest %s\n",
		time.Since(start).Round(time.Millisecond), d.Manifest.Polygon.RPCURL, d.Manifest.Polygon.WSURL,
		d.Manifest.Base.RPCURL, d.Manifest.Base.WSURL, admin, *manifest)
	reorgs := make(chan struct{})
	go func() {
		defer close(reorgs)
		reorgLoop(ctx, d, *reorgEvery, *reorgDepth)
	}()
	for _, c := range d.Manifest.Extra {
		fmt.Fprintf(os.Stderr, "devchain: chain %d at %s (%s)\n", c.ChainID, c.RPCURL, c.WSURL)
	}
	<-ctx.Done()
	<-reorgs
	fmt.Fprintln(os.Stderr, "devchain: shutting down")
	_ = os.Remove(*manifest) // a stale manifest would point the demo at dead ports
	return d.Close()
}

// reorgLoop reorganises both chains every interval (never when 0) until ctx is done.
func reorgLoop(ctx context.Context, d *devnet.Devnet, every time.Duration, depth int) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, id := range []uint64{137, 8453} {
			res, err := d.Reorg(ctx, id, depth)
			if err != nil {
				if ctx.Err() == nil {
					fmt.Fprintf(os.Stderr, "devchain: reorg of chain %d: %v\n", id, err)
				}
				continue
			}
			fmt.Fprintf(os.Stderr, "devchain: chain %d reorganised: blocks %d-%d replaced, new head %d %s (%d transactions re-included)\n",
				id, res.ForkPoint+1, res.ForkPoint+uint64(res.Depth), res.ForkPoint+uint64(len(res.New)), res.New[len(res.New)-1].Hex(), len(res.Reincluded))
		}
	}
}
