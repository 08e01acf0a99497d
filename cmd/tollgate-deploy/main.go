// Command tollgate-deploy deploys RevenueVault and ClaimsContract to a chain,
// grants their roles, verifies bytecode and roles on chain, and writes the
// settings file settlementd and the gateway are started from (addresses,
// start blocks, the vault's minimum deposit: KEY=VALUE lines that both
// systemd units read with EnvironmentFile=).
//
//	TOLLGATE_DEPLOYER_KEY=0x… tollgate-deploy -rpc https://polygon.example -chain 137 \
//	    -token polygon-usdt -treasury 0x… -governor 0x… -claim-creators 0xRelayer,0xSigner \
//	    -admin 0xMultisig -state /etc/tollgate/deploy-state.json -out /etc/tollgate/deploy.env
//
// It is idempotent: the state file records every transaction as it is signed,
// so a re-run (after a crash, a timeout, or to check) finds what exists, waits
// for what is pending, sends only what is missing, and verifies it all. When
// -admin is not the deployer, the role grants only the admin may make are
// printed as unsigned transactions (to, data) for the multisig instead.
// The deployer key comes from the environment only, never a flag or a file.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr, dial); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate-deploy:", err)
		os.Exit(1)
	}
}

func dial(ctx context.Context, url string) (Backend, func(), error) {
	c, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	return c, c.Close, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer,
	dial func(context.Context, string) (Backend, func(), error)) error {
	fs := flag.NewFlagSet("tollgate-deploy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rpc := fs.String("rpc", "", "RPC URL of the chain (required)")
	chainID := fs.Uint64("chain", 137, "chain id the RPC must serve")
	token := fs.String("token", "polygon-usdt", "the stablecoin: a preset (polygon-usdt, base-usdc) or an address (then -decimals and -symbol)")
	decimals := fs.Uint("decimals", 6, "decimals() the token at an address must answer")
	symbol := fs.String("symbol", "", "symbol() the token at an address must answer (empty: any)")
	treasury := fs.String("treasury", "", "treasury address: receives deposits (required)")
	admin := fs.String("admin", "", "RevenueVault owner and ClaimsContract admin, e.g. a multisig (default: the deployer)")
	governor := fs.String("governor", "", "ClaimsContract GOVERNOR_ROLE (pause/unpause) (required)")
	creators := fs.String("claim-creators", "", "comma-separated CLAIM_CREATOR_ROLE holders: the relayer and the claim signer (required)")
	minDeposit := fs.String("min-deposit-units", "1000000", "RevenueVault minimum deposit in token base units")
	statePath := fs.String("state", "deploy-state.json", "the deployment's state file (read and updated)")
	out := fs.String("out", "deploy.env", "the settings file settlementd and Caddy start from (e.g. /etc/tollgate/deploy.env, read by both systemd units)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up waiting after this long (a re-run resumes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rpc == "" {
		return errors.New("-rpc is required")
	}
	key, err := keyFromHex(getenv("TOLLGATE_DEPLOYER_KEY"), *chainID)
	if err != nil {
		return err
	}
	p := Plan{ChainID: *chainID}
	if t, ok := Presets[*token]; ok {
		p.Token = t
	} else if a, err := ethparse.Address(*token); err == nil {
		p.Token = Token{Address: a, Decimals: uint8(*decimals)}
		if *symbol != "" {
			p.Token.Symbols = []string{*symbol}
		}
	} else {
		return fmt.Errorf("-token %q is neither a preset (polygon-usdt, base-usdc) nor an address", *token)
	}
	var errs []error
	addr := func(flagName, v string, required bool) common.Address {
		if v == "" && !required {
			return common.Address{}
		}
		// Who receives money or holds its roles: only the EIP-55 spelling
		// is taken, so a mistyped digit is refused, not paid.
		a, err := ethparse.ChecksumAddress(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("-%s %q is not an address (0x and 40 hex digits, EIP-55 checksummed): %w", flagName, v, err))
		}
		return a
	}
	p.Treasury = addr("treasury", *treasury, true)
	p.Admin = addr("admin", *admin, false)
	p.Governor = addr("governor", *governor, true)
	for _, c := range strings.Split(*creators, ",") {
		p.ClaimCreators = append(p.ClaimCreators, addr("claim-creators", strings.TrimSpace(c), true))
	}
	var ok bool
	if p.MinDeposit, ok = new(big.Int).SetString(*minDeposit, 10); !ok || p.MinDeposit.Sign() < 0 {
		errs = append(errs, fmt.Errorf("-min-deposit-units %q is not a non-negative integer", *minDeposit))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	b, closeFn, err := dial(ctx, *rpc)
	if err != nil {
		return err
	}
	defer closeFn()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	res, err := Run(ctx, b, key, p, *statePath, logf)
	if err != nil {
		return err
	}
	if err := writeSettings(*out, res.Settings()); err != nil {
		return err
	}
	logf("verified on chain: RevenueVault %s, ClaimsContract %s; %d transaction(s) sent in this run; settings in %s",
		res.State.Vault.Address.Hex(), res.State.Claims.Address.Hex(), res.Sent, *out)
	if len(res.Unsigned) > 0 {
		logf("the admin %s must still send these transactions (then re-run to verify):", p.Admin.Hex())
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res.Unsigned)
	}
	return nil
}

// writeSettings replaces the settings file atomically (a service restarting
// meanwhile reads the old or the new file, never half of one), and not at
// all when it already holds these settings.
func writeSettings(path, settings string) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == settings {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(settings), 0o644); err != nil { // no secrets: services read it as other users
		return err
	}
	return os.Rename(tmp, path)
}
