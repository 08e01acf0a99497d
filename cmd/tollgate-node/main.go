// Command tollgate-node is a node operator's command line for a Tollgate
// gateway: sign in with the wallet, prove and register a node, see its
// standing, earnings and evidence, and claim the earnings on chain — the
// steps docs/node-operators.md walks, without writing code.
//
//	tollgate-node key import --key-file wallet.key --out ~/.tollgate-node/wallet.json
//	export TOLLGATE_NODE_GATEWAY=https://rpc.example.com TOLLGATE_NODE_KEYSTORE=~/.tollgate-node/wallet.json
//	tollgate-node proof --out /var/www/node/.well-known/tollgate-node
//	tollgate-node login
//	tollgate-node register --rpc-url https://node.example.com/ --chain 137 --region eu-west
//	tollgate-node status
//	tollgate-node earnings
//	tollgate-node claim
//
// The wallet's key comes from an encrypted keystore file or a raw key file
// that only its owner may read, never from the command line (keys.go). The
// sign-in token is kept in a session file readable only by its owner, for
// the hour it is valid.
package main

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"golang.org/x/term"

	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/version"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1 // the command failed (the message says why)
	exitUsage   = 2 // the command line is wrong
	exitNothing = 3 // claim: nothing to claim
)

// Environment variables besides the key's (keys.go).
const (
	envGateway  = "TOLLGATE_NODE_GATEWAY"         // the gateway's base URL
	envSession  = "TOLLGATE_NODE_SESSION"         // the session file
	envNodeID   = "TOLLGATE_NODE_ID"              // the node commands act on
	envChainRPC = "TOLLGATE_NODE_CHAIN_RPC"       // a JSON-RPC URL of the settlement chain (claim)
	envClaims   = "TOLLGATE_NODE_CLAIMS_CONTRACT" // the ClaimsContract address to expect (claim)
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError is a wrong command line (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// errNothingToClaim ends claim with exit 3.
type nothingError struct{ msg string }

func (e nothingError) Error() string { return e.msg }

const usage = `tollgate-node: a node operator's command line for a Tollgate gateway

Usage: tollgate-node <command> [flags]

Commands:
  key new --out FILE                 create a wallet: a new key in an encrypted keystore file
  key import --key-file F --out FILE encrypt a raw hex key file into a keystore file
  address                            print the wallet's address
  proof [--out FILE] [--check URL]   the endpoint proof: what <node origin>/.well-known/tollgate-node must serve
  login                              sign in with the wallet (Sign-In with Ethereum); keeps the token for its hour
  token                              print the sign-in token (for curl: Authorization: Bearer …)
  register --rpc-url URL --chain ID --region R [--label L] [--ws-url URL]
                                     register a node (again: update it)
  status [--node ID]                 your nodes: status, probes, standing (phase, share, check rate), quarantine
  earnings [--node ID]               earned, allocated, claimed, claimable, and the node's closed epochs
  evidence [--node ID]               the evidence a node was judged by
  claim [--node ID]                  ask for a claim signature and claim it on chain (ClaimsContract)
  deregister --node ID               take a node out of service (its earnings stay claimable)
  version                            print the version

Every command takes --gateway URL (or ` + envGateway + `) and --json (machine-readable output).
The wallet: --keystore FILE (or ` + envKeystore + `) with its password in --password-file FILE
(or ` + envPasswordFile + `, or ` + envPassword + `, or typed on a terminal), or --key-file FILE
(or ` + envKeyFile + `), a raw hex key. Key, password and session files must be readable by you only.
Exit status: 0 done, 1 failed, 2 wrong usage, 3 nothing to claim.
`

// app is one run of the command.
type app struct {
	ctx     context.Context
	getenv  func(string) string
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	now     func() time.Time
	json    bool
	gateway string
	session string
	keys    keySource
	// scryptN/P: the keystore's key derivation (go-ethereum's standard;
	// tests use the light parameters).
	scryptN, scryptP int
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, now: time.Now,
		scryptN: keystoreScryptN, scryptP: keystoreScryptP}
	return a.main(args)
}

// main runs one command and returns the exit status.
func (a *app) main(args []string) int {
	stdout, stderr := a.stdout, a.stderr
	err := a.dispatch(args)
	var ue usageError
	var ne nothingError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "tollgate-node: %v\n(tollgate-node help shows the commands)\n", err)
		return exitUsage
	case errors.As(err, &ne):
		if a.json {
			_ = json.NewEncoder(stdout).Encode(map[string]any{"claimed": false, "reason": ne.msg})
		}
		fmt.Fprintf(stderr, "tollgate-node: %v\n", err)
		return exitNothing
	default:
		fmt.Fprintf(stderr, "tollgate-node: %v\n", err)
		return exitError
	}
}

func (a *app) dispatch(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(a.stderr, usage)
		return usageError{"no command"}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(a.stdout, usage)
		return nil
	case "version":
		fmt.Fprintln(a.stdout, "tollgate-node", version.String())
		return nil
	case "key":
		if len(rest) == 0 || (rest[0] != "new" && rest[0] != "import") {
			return usagef("key: want key new or key import")
		}
		return a.keyCmd(rest[0], rest[1:])
	case "address":
		return a.addressCmd(rest)
	case "proof":
		return a.proofCmd(rest)
	case "login":
		return a.loginCmd(rest)
	case "token":
		return a.tokenCmd(rest)
	case "register":
		return a.registerCmd(rest)
	case "status":
		return a.statusCmd(rest)
	case "earnings":
		return a.earningsCmd(rest)
	case "evidence":
		return a.evidenceCmd(rest)
	case "claim":
		return a.claimCmd(rest)
	case "deregister":
		return a.deregisterCmd(rest)
	}
	return usagef("unknown command %q", cmd)
}

// ---------------------------------------------------------------- flags

// flags is one command's flag set with the flags every command shares.
type flags struct {
	*flag.FlagSet
	a            *app
	keystore     *string
	keyFile      *string
	passwordFile *string
	node         *string
}

const (
	withGateway = 1 << iota
	withKey
	withNode
)

func (a *app) flags(name string, what int) *flags {
	fs := flag.NewFlagSet("tollgate-node "+name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	f := &flags{FlagSet: fs, a: a}
	fs.BoolVar(&a.json, "json", false, "machine-readable JSON output")
	if what&withGateway != 0 {
		fs.StringVar(&a.gateway, "gateway", a.getenv(envGateway), "the gateway's base URL ("+envGateway+")")
		fs.StringVar(&a.session, "session", a.getenv(envSession), "the session file (default ~/.config/tollgate-node/session.json; "+envSession+")")
	}
	if what&withKey != 0 {
		f.keystore = fs.String("keystore", a.getenv(envKeystore), "the wallet's encrypted keystore file ("+envKeystore+")")
		f.keyFile = fs.String("key-file", a.getenv(envKeyFile), "a file holding the wallet's raw hex key ("+envKeyFile+")")
		f.passwordFile = fs.String("password-file", a.getenv(envPasswordFile), "a file holding the keystore's password ("+envPasswordFile+")")
	}
	if what&withNode != 0 {
		f.node = fs.String("node", a.getenv(envNodeID), "the node id (default: your only node; "+envNodeID+")")
	}
	return f
}

// parse parses args and rejects stray arguments.
func (f *flags) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if f.NArg() > 0 {
		return usagef("%s: unexpected argument %q (flags come as --name value)", f.Name(), f.Arg(0))
	}
	if f.keystore != nil {
		pass, has := lookupEnv(f.a.getenv, envPassword)
		f.a.keys = keySource{Keystore: expandHome(*f.keystore, f.a.getenv), KeyFile: expandHome(*f.keyFile, f.a.getenv),
			PasswordFile: expandHome(*f.passwordFile, f.a.getenv), Password: pass, hasPassword: has, prompt: f.a.terminalPrompt()}
	}
	return nil
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// expandHome expands a leading ~/ (a shell does it in arguments, but not
// in variables a systemd unit or a quoted export sets).
func expandHome(p string, getenv func(string) string) string {
	if strings.HasPrefix(p, "~/") {
		if home := getenv("HOME"); home != "" {
			return filepath.Join(home, p[2:])
		}
	}
	return p
}

// terminalPrompt reads a password from the terminal without echo; nil when
// stdin is not a terminal (a script must name a password file).
func (a *app) terminalPrompt() func(string) (string, error) {
	f, ok := a.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return func(prompt string) (string, error) {
		fmt.Fprint(a.stderr, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		return string(b), nil
	}
}

// out prints v as JSON with --json, else calls human.
func (a *app) out(v any, human func(w io.Writer)) error {
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	human(a.stdout)
	return nil
}

// units is a base-unit amount as the API writes it: a decimal string.
type units money.Units

func (u *units) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("an amount must be a string of base units, got %s", snippet(b))
	}
	v, err := money.ParseUnits(s)
	if err != nil {
		return err
	}
	*u = units(v)
	return nil
}

func (u units) MarshalJSON() ([]byte, error) { return json.Marshal(money.Units(u).String()) }

// usdt prints an amount of base units as USDT.
func usdt(u units) string { return money.Units(u).Decimal() + " USDT" }

func unitsOf(p *units) units {
	if p == nil {
		return 0
	}
	return *p
}

// ---------------------------------------------------------------- commands

func (a *app) keyCmd(sub string, args []string) error {
	f := a.flags("key "+sub, withKey)
	out := f.String("out", "", "the keystore file to write (never overwritten)")
	if err := f.parse(args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("key %s: --out FILE is required", sub)
	}
	path := expandHome(*out, a.getenv)
	var key *ecdsa.PrivateKey
	switch sub {
	case "new":
		if a.keys.KeyFile != "" {
			return usagef("key new makes a new key; to encrypt an existing one, use key import --key-file")
		}
		k, err := crypto.GenerateKey()
		if err != nil {
			return err
		}
		key = k
	case "import":
		if a.keys.KeyFile == "" {
			return usagef("key import: --key-file FILE (or %s) names the raw key to encrypt", envKeyFile)
		}
		k, err := loadRawKey(a.keys.KeyFile)
		if err != nil {
			return err
		}
		key = k
	}
	a.keys.Keystore = "" // the password is the new keystore's
	pass, err := a.keys.newPassword()
	if err != nil {
		return err
	}
	addr, err := writeKeystore(path, key, pass, a.scryptN, a.scryptP)
	if err != nil {
		return err
	}
	return a.out(map[string]string{"address": addr.Hex(), "keystore": path}, func(w io.Writer) {
		fmt.Fprintf(w, "wallet %s in keystore %s (encrypted; readable by you only)\n", addr.Hex(), path)
		if sub == "new" {
			fmt.Fprintf(w, "keep a backup of the file and its password: without both the wallet's earnings cannot be claimed\n")
		}
	})
}

func (a *app) addressCmd(args []string) error {
	f := a.flags("address", withKey)
	if err := f.parse(args); err != nil {
		return err
	}
	addr, err := a.keys.Address()
	if err != nil {
		return err
	}
	return a.out(map[string]string{"address": addr.Hex()}, func(w io.Writer) { fmt.Fprintln(w, addr.Hex()) })
}

func (a *app) loginCmd(args []string) error {
	f := a.flags("login", withGateway|withKey)
	if err := f.parse(args); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	s, err := a.login(c)
	if err != nil {
		return err
	}
	return a.out(map[string]string{"gateway": c.base.String(), "wallet": s.Wallet, "expires_at": s.ExpiresAt}, func(w io.Writer) {
		fmt.Fprintf(w, "signed in to %s as %s until %s\n", c.base, s.Wallet, s.ExpiresAt)
	})
}

func (a *app) tokenCmd(args []string) error {
	f := a.flags("token", withGateway|withKey)
	if err := f.parse(args); err != nil {
		return err
	}
	c, err := a.signedIn()
	if err != nil {
		return err
	}
	return a.out(map[string]string{"token": c.token}, func(w io.Writer) { fmt.Fprintln(w, c.token) })
}

func (a *app) registerCmd(args []string) error {
	f := a.flags("register", withGateway|withKey)
	rpcURL := f.String("rpc-url", "", "the node's public JSON-RPC URL, http(s) (required)")
	chains := f.String("chain", "", "the chain id(s) the node serves, comma-separated (required)")
	region := f.String("region", "", "the node's region, [a-z0-9-]{2,16}, e.g. eu-west (required)")
	label := f.String("label", "", "a label of your choosing")
	wsURL := f.String("ws-url", "", "the node's JSON-RPC-over-WebSocket URL (optional)")
	if err := f.parse(args); err != nil {
		return err
	}
	if *rpcURL == "" || *chains == "" || *region == "" {
		return usagef("register: --rpc-url, --chain and --region are required")
	}
	req := registerRequest{Region: *region, RPCURL: *rpcURL, Label: *label, WSURL: *wsURL}
	for _, c := range strings.Split(*chains, ",") {
		id, err := strconv.ParseUint(strings.TrimSpace(c), 10, 64)
		if err != nil || id == 0 {
			return usagef("register: --chain %q: want chain ids in decimal, e.g. 137 or 137,1", *chains)
		}
		req.ChainIDs = append(req.ChainIDs, id)
	}
	c, err := a.signedIn()
	if err != nil {
		return err
	}
	var n node
	raw, status, err := a.authed(c, "POST", "/api/nodes/register", req, []int{201, 200}, &n)
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == "endpoint_not_proven" {
		return fmt.Errorf("%w\n(tollgate-node proof prints the line to serve; tollgate-node proof --check %s checks it)", err, *rpcURL)
	}
	if err != nil {
		return err
	}
	return a.out(json.RawMessage(raw), func(w io.Writer) {
		what := "registered"
		if status == 200 {
			what = "already registered (updated)"
		}
		fmt.Fprintf(w, "%s %s: %s, chains %s, region %s, status %s\n", what, n.NodeID, n.RPCURL, chainList(n.ChainIDs), strings.ToLower(n.Region), n.Status)
		fmt.Fprintf(w, "the node starts on probation: tollgate-node status shows its standing\n")
	})
}

func chainList(ids []uint64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(id, 10)
	}
	return strings.Join(s, ",")
}

func (a *app) statusCmd(args []string) error {
	f := a.flags("status", withGateway|withKey|withNode)
	if err := f.parse(args); err != nil {
		return err
	}
	c, err := a.signedIn()
	if err != nil {
		return err
	}
	var l nodeList
	raw, _, err := a.authed(c, "GET", "/api/nodes", nil, []int{200}, &l)
	if err != nil {
		return err
	}
	nodes := l.Nodes
	if *f.node != "" {
		nodes = nil
		for _, n := range l.Nodes {
			if n.NodeID == *f.node {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) == 0 {
			return fmt.Errorf("wallet %s has no node %s (tollgate-node status lists its nodes)", l.Wallet, *f.node)
		}
	}
	// A quarantined node's reason and evidence are on its earnings.
	q := map[string]*quarantine{}
	for _, n := range nodes {
		if n.Status == "quarantined" {
			var e earnings
			if _, _, err := a.authed(c, "GET", "/api/nodes/"+n.NodeID+"/earnings", nil, []int{200}, &e); err != nil {
				return err
			}
			q[n.NodeID] = e.Quarantine
		}
	}
	if a.json {
		if *f.node == "" {
			return a.out(json.RawMessage(raw), nil)
		}
		return a.out(map[string]any{"wallet": l.Wallet, "nodes": nodes}, nil)
	}
	w := a.stdout
	fmt.Fprintf(w, "wallet %s: %d node(s)\n", l.Wallet, len(l.Nodes))
	if len(l.Nodes) == 0 {
		fmt.Fprintln(w, "no nodes yet: tollgate-node register adds one")
	}
	for _, n := range nodes {
		fmt.Fprintf(w, "\n%s  %s\n", n.NodeID, n.Status)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  endpoint\t%s (chains %s, region %s)\n", n.RPCURL, chainList(n.ChainIDs), strings.ToLower(n.Region))
		if n.Label != "" {
			fmt.Fprintf(tw, "  label\t%s\n", n.Label)
		}
		probe := "not probed yet"
		if n.LastProbeAt != nil {
			probe = "last " + *n.LastProbeAt + ", answered"
			if n.LastProbeError != nil && *n.LastProbeError != "" {
				probe = fmt.Sprintf("last %s FAILED: %s (%d failure(s) in a row)", *n.LastProbeAt, *n.LastProbeError, n.ProbeFailures)
			}
		}
		fmt.Fprintf(tw, "  probes\t%s\n", probe)
		for _, s := range n.Standing {
			fmt.Fprintf(tw, "  chain %d\t%s\n", s.ChainID, standingLine(s))
		}
		fmt.Fprintf(tw, "  earned\t%s (closed epochs; tollgate-node earnings for the rest)\n", usdt(n.TotalEarnedUnits))
		if qq := q[n.NodeID]; qq != nil && qq.Quarantined {
			reason := ""
			if qq.Reason != nil {
				reason = *qq.Reason
			}
			since := ""
			if qq.Since != nil {
				since = *qq.Since
			}
			fmt.Fprintf(tw, "  QUARANTINED\tsince %s: %s\n", since, reason)
			fmt.Fprintf(tw, "  evidence\t%d piece(s), withheld %s (tollgate-node evidence --node %s)\n", qq.EvidenceCount, usdt(qq.WithheldUnits), n.NodeID)
			if qq.Review != "" {
				fmt.Fprintf(tw, "  review\t%s\n", qq.Review)
			}
		}
		if n.DeregisteredAt != nil {
			fmt.Fprintf(tw, "  deregistered\t%s (earnings stay claimable)\n", *n.DeregisteredAt)
		}
		_ = tw.Flush()
	}
	if l.Truncated {
		fmt.Fprintln(w, "\n(the list is truncated: the wallet has more nodes)")
	}
	return nil
}

// standingLine is one chain's standing in words.
func standingLine(s standing) string {
	var b strings.Builder
	b.WriteString("phase " + s.Phase)
	pct := func(p *float64) string {
		if p == nil {
			return "not set yet"
		}
		return strconv.FormatFloat(*p*100, 'f', -1, 64) + " %"
	}
	fmt.Fprintf(&b, ", traffic share %s, check rate %s, %d verified answers over %d methods", pct(s.Share), pct(s.CheckRate), s.VerifiedMatches, s.VerifiedMethods)
	if s.Phase == "probation" {
		fmt.Fprintf(&b, " (%d matching shadow answers so far)", s.ProbationMatches)
	}
	if s.ServingSince != nil {
		b.WriteString(", serving callers since " + *s.ServingSince)
	}
	if s.Penalty {
		b.WriteString(", PENALISED after a quarantine")
	}
	return b.String()
}

func (a *app) earningsCmd(args []string) error {
	f := a.flags("earnings", withGateway|withKey|withNode)
	limit := f.Int("epochs", 10, "how many of the latest closed epochs to list (1-100)")
	if err := f.parse(args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 100 {
		return usagef("earnings: --epochs must be 1 to 100")
	}
	c, err := a.signedIn()
	if err != nil {
		return err
	}
	id, err := a.nodeID(c, *f.node)
	if err != nil {
		return err
	}
	var e earnings
	rawE, _, err := a.authed(c, "GET", "/api/nodes/"+id+"/earnings", nil, []int{200}, &e)
	if err != nil {
		return err
	}
	var ep epochList
	rawL, _, err := a.authed(c, "GET", "/api/nodes/"+id+"/epochs?limit="+strconv.Itoa(*limit), nil, []int{200}, &ep)
	if err != nil {
		return err
	}
	return a.out(map[string]json.RawMessage{"earnings": rawE, "epochs": rawL}, func(w io.Writer) {
		fmt.Fprintf(w, "node %s\n", id)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  earned\t%s\t(credited by closed epochs)\n", usdt(unitsOf(e.TotalEarnedUnits)))
		fmt.Fprintf(tw, "  pending\t%s\t(earned, not yet allocated on chain)\n", usdt(unitsOf(e.PendingSettlementUnits)))
		fmt.Fprintf(tw, "  allocated\t%s\t(on ClaimsContract)\n", usdt(unitsOf(e.AllocatedUnits)))
		fmt.Fprintf(tw, "  claimed\t%s\t\n", usdt(unitsOf(e.ClaimedUnits)))
		fmt.Fprintf(tw, "  reserved\t%s\t(by claim signatures not yet used)\n", usdt(unitsOf(e.ReservedUnits)))
		fmt.Fprintf(tw, "  claimable\t%s\t(tollgate-node claim)\n", usdt(unitsOf(e.ClaimableUnits)))
		_ = tw.Flush()
		if e.LastClaim != nil {
			fmt.Fprintf(w, "last claim %s\n", *e.LastClaim)
		}
		if q := e.Quarantine; q != nil && q.Quarantined {
			fmt.Fprintf(w, "QUARANTINED: %d piece(s) of evidence, %s withheld (tollgate-node evidence --node %s)\n", q.EvidenceCount, usdt(q.WithheldUnits), id)
		}
		if len(ep.Epochs) == 0 {
			fmt.Fprintln(w, "no closed epoch has a share of this node yet (epochs close every minute)")
			return
		}
		fmt.Fprintln(w, "latest closed epochs (newest first):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  epoch\tstarts (UTC)\tcalls\tserved\tshare\twithheld\t")
		for _, x := range ep.Epochs {
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%s\t%s\t%s\t\n", x.EpochID, x.StartsAt, x.Calls, usdt(x.WeightUnits), usdt(x.ShareUnits), usdt(x.WithheldUnits))
		}
		_ = tw.Flush()
	})
}

func (a *app) evidenceCmd(args []string) error {
	f := a.flags("evidence", withGateway|withKey|withNode)
	if err := f.parse(args); err != nil {
		return err
	}
	c, err := a.signedIn()
	if err != nil {
		return err
	}
	id, err := a.nodeID(c, *f.node)
	if err != nil {
		return err
	}
	var l evidenceList
	raw, _, err := a.authed(c, "GET", "/api/nodes/"+id+"/evidence", nil, []int{200}, &l)
	if err != nil {
		return err
	}
	return a.out(json.RawMessage(raw), func(w io.Writer) {
		if len(l.Evidence) == 0 {
			fmt.Fprintf(w, "node %s: no evidence (no answer of it differed from a trusted provider's)\n", id)
			return
		}
		fmt.Fprintf(w, "node %s: %d piece(s) of evidence, newest first\n", id, len(l.Evidence))
		for _, e := range l.Evidence {
			var it struct {
				ID            string          `json:"id"`
				Time          string          `json:"ts"`
				ChainID       int64           `json:"chain_id"`
				Method        string          `json:"method"`
				Params        json.RawMessage `json:"params"`
				Block         int64           `json:"block"`
				NodeAnswer    json.RawMessage `json:"node_answer"`
				TrustedAnswer json.RawMessage `json:"trusted_answer"`
				TrustedBy     string          `json:"trusted_by"`
			}
			if json.Unmarshal(e, &it) != nil {
				fmt.Fprintf(w, "\n  %s\n", snippet(e))
				continue
			}
			fmt.Fprintf(w, "\n  %s at %s: chain %d, block %d, %s %s\n", it.ID, it.Time, it.ChainID, it.Block, it.Method, snippet(it.Params))
			fmt.Fprintf(w, "    your node answered: %s\n", snippet(it.NodeAnswer))
			fmt.Fprintf(w, "    %s answered:   %s\n", it.TrustedBy, snippet(it.TrustedAnswer))
		}
	})
}

func (a *app) deregisterCmd(args []string) error {
	f := a.flags("deregister", withGateway|withKey|withNode)
	if err := f.parse(args); err != nil {
		return err
	}
	// Taking a node out of service is never done by default.
	if *f.node == "" {
		return usagef("deregister: --node ID is required")
	}
	c, err := a.signedIn()
	if err != nil {
		return err
	}
	var n node
	raw, _, err := a.authed(c, "DELETE", "/api/nodes/"+*f.node, nil, []int{200}, &n)
	if err != nil {
		return err
	}
	return a.out(json.RawMessage(raw), func(w io.Writer) {
		fmt.Fprintf(w, "%s is %s: no more traffic; its earnings stay claimable (tollgate-node claim --node %s)\n", n.NodeID, n.Status, n.NodeID)
	})
}

// nodeID is the node a command acts on: the one named, or the wallet's
// only node.
func (a *app) nodeID(c *client, named string) (string, error) {
	if named != "" {
		return named, nil
	}
	var l nodeList
	if _, _, err := a.authed(c, "GET", "/api/nodes", nil, []int{200}, &l); err != nil {
		return "", err
	}
	switch len(l.Nodes) {
	case 0:
		return "", fmt.Errorf("wallet %s has no nodes: tollgate-node register adds one", l.Wallet)
	case 1:
		return l.Nodes[0].NodeID, nil
	}
	ids := make([]string, len(l.Nodes))
	for i, n := range l.Nodes {
		ids[i] = n.NodeID + " (" + n.Status + ")"
	}
	sort.Strings(ids)
	return "", usagef("wallet %s has %d nodes: name one with --node or %s: %s", l.Wallet, len(l.Nodes), envNodeID, strings.Join(ids, ", "))
}
