package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chainjobs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/claims"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/history"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/nodes"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/status"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// registerNodeAPI adds the operator, status and admin endpoints and their
// leader jobs. client is the daemon's chain-137 client (nil without
// TOLLGATE_CHAIN_RPC_URL), shared with the chain jobs. Settings
// (config.Auth, Nodes, Claims, Gateway; environment only):
//
//	TOLLGATE_JWT_SECRET           HS256 key (≥ 32 bytes) for wallet logins; unset: the operator routes answer 503
//	TOLLGATE_AUTH_DOMAIN          EIP-4361 domain of the login message (required: without it the operator routes answer 503)
//	TOLLGATE_DEV                  1: development; an unset TOLLGATE_AUTH_DOMAIN falls back to the request's Host
//	TOLLGATE_ALLOW_PRIVATE_NODES  1: node URLs may be loopback/private (dev, tests)
//	TOLLGATE_NODE_PROOF           required|off: registration asks <origin>/.well-known/tollgate-node for the wallet
//	                              (default required; off only with private nodes allowed, where it is the default)
//	TOLLGATE_NODE_REGISTER_PER_HOUR registrations a wallet may attempt an hour (default 10; 20× that in all; -1: no limit)
//	TOLLGATE_NODE_ALLOW_CIDRS     addresses (CIDRs) nodes may use whatever the policy says (shared/netpolicy)
//	TOLLGATE_NODE_PROBE_SCHEDULE  node re-probe (default every 30 s); TOLLGATE_NODE_MAX_FAILURES (default 3)
//	TOLLGATE_CLAIM_SIGNER_KEY     hex key with CLAIM_CREATOR_ROLE that signs claims; unset: claims answer 503
//	TOLLGATE_CLAIM_VALIDITY       signature lifetime, Go duration (default 48h)
//	TOLLGATE_CLAIM_WATCH_SCHEDULE Claimed-event watcher (default every 5 s); TOLLGATE_CLAIM_CONFIRMATIONS (default 5);
//	                              TOLLGATE_CLAIMS_START_BLOCK (first block without a checkpoint)
//	TOLLGATE_CLAIM_SWEEP_SCHEDULE expiry of unclaimed signatures (default every 30 s)
//	TOLLGATE_GATEWAY_URL          gateway base URL; its unmetered POST /admin/probe/137 is sampled for /api/status
//	                              (TOLLGATE_GATEWAY_PROBE_SCHEDULE, default 30 s) with TOLLGATE_GATEWAY_ADMIN_TOKEN
//	                              (default: TOLLGATE_ADMIN_TOKEN, which the root Caddyfile gives the gateway too)
//	TOLLGATE_ADMIN_TOKEN          X-Admin-Token of /admin/*; unset: /admin/* is 404
func registerNodeAPI(ctx context.Context, d *daemon.Daemon, cfg *config.Config, log *zap.Logger, cj *chainjobs.Jobs, client *ethclient.Client, served *chains.Live) (func(), error) {
	log = log.Named("nodeapi")
	handle := d.API().Handle
	// The operator routes (login, nodes, earnings, claims) need the JWT
	// secret; without it they answer 503 auth_not_configured, and the
	// public and admin routes still work.
	operatorHandle := handle
	refuse := func(what string) {
		operatorHandle = func(pattern string, _ http.Handler) {
			handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				httpx.Error(w, http.StatusServiceUnavailable, "auth_not_configured", "wallet login is not configured on this server ("+what+")")
			}))
		}
	}
	secret := []byte(cfg.Auth.JWTSecret)
	if len(secret) == 0 {
		secret = make([]byte, auth.MinSecretN) // placeholder: nothing can log in
		_, _ = rand.Read(secret)
		log.Warn("TOLLGATE_JWT_SECRET is not set: login, node registration, earnings and claims answer 503")
		refuse("TOLLGATE_JWT_SECRET")
	}
	// The sign-in domain is configuration: taking it from the request's
	// Host would accept a login message signed for another site.
	domain, dev := cfg.Auth.Domain, cfg.Auth.Dev
	if domain == "" && !dev {
		log.Error("TOLLGATE_AUTH_DOMAIN is not set: the operator routes (login, node registration, earnings, claims) answer 503; " +
			"set it to the public host name sign-in messages must name (TOLLGATE_DEV=1 takes it from the request's Host, for development only)")
		refuse("TOLLGATE_AUTH_DOMAIN")
		dev = true // the routes are off; the service is built only for the nodes API's token checks
	}
	s := cfg.Chain
	chainID := s.ChainID
	a, err := auth.New(auth.Config{Pool: d.Pool(), Secret: secret, Domain: domain, Dev: dev, ChainID: chainID})
	if err != nil {
		return nil, err
	}
	a.Register(operatorHandle)

	ns, err := nodes.New(nodes.Config{Pool: d.Pool(), Redis: d.Redis(), Prefix: cfg.Prefix, Auth: a,
		AllowPrivate: cfg.Nodes.AllowPrivate, AllowCIDRs: cfg.Nodes.AllowCIDRs, MaxFailures: cfg.Nodes.MaxFailures, Log: log, Chains: served,
		Proof: cfg.Nodes.Proof, RegisterPerHour: cfg.Nodes.RegisterPerHour})
	if err != nil {
		return nil, err
	}
	ns.Register(operatorHandle)
	var errs []error
	add := func(env, spec string, j interface {
		Name() string
		Run(ctx context.Context) error
	}) {
		if err := d.Scheduler().Add(spec, j); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", env, err))
		}
	}
	add("TOLLGATE_NODE_PROBE_SCHEDULE", cfg.Nodes.ProbeSchedule, ns.Prober())

	// Claims: the signer, and the chain for claimed() and the watcher.
	var signer *claim.Signer
	closeFn := func() {} // the chain client is the daemon's: runDaemon closes it
	validity := cfg.Claims.Validity
	if k := cfg.Claims.SignerKey; k != "" {
		key, err := ethparse.PrivateKey(k)
		contract, aerr := ethparse.Address(s.Claims)
		switch {
		case err != nil:
			errs = append(errs, errors.New("TOLLGATE_CLAIM_SIGNER_KEY is not a hex private key"))
		case aerr != nil || contract == (common.Address{}):
			errs = append(errs, errors.New("TOLLGATE_CLAIM_SIGNER_KEY needs TOLLGATE_CLAIMS_ADDRESS"))
		default:
			signer = claim.NewSigner(key, claim.Domain{ChainID: chainID, Contract: contract})
		}
	} else {
		log.Warn("TOLLGATE_CLAIM_SIGNER_KEY is not set: claim requests answer 503")
	}
	watching := signer != nil && client != nil
	if watching {
		checkSignerRole(ctx, client, signer, log)
		add("TOLLGATE_CLAIM_WATCH_SCHEDULE", cfg.Claims.WatchSchedule, &claims.Watcher{Pool: d.Pool(), Client: client, ChainID: chainID,
			Contract: signer.Domain().Contract, StartBlock: cfg.Claims.StartBlock, Confirmations: cfg.Claims.Confirmations, Log: log})
	}
	cc := claims.Config{Pool: d.Pool(), Auth: a, Signer: signer, Validity: validity, Log: log}
	if client != nil {
		cc.Client = client
	}
	cs, err := claims.New(cc)
	if err != nil {
		closeFn()
		return nil, err
	}
	cs.Register(operatorHandle)
	hs, err := history.New(history.Config{Pool: d.Pool(), Auth: a, Claims: cs, Log: log})
	if err != nil {
		closeFn()
		return nil, err
	}
	hs.Register(handle, operatorHandle)
	add("TOLLGATE_CLAIM_SWEEP_SCHEDULE", cfg.Claims.SweepSchedule, claims.Sweeper{Pool: d.Pool()})

	// Status, public data and admin.
	sc := status.Config{Pool: d.Pool(), Redis: d.Redis(), Prefix: cfg.Prefix, Shards: cfg.RedisShards, AdminToken: cfg.AdminToken,
		OnChain: s.GovernorKey != "", IsLeader: d.Elector().IsLeader, Log: log}
	if cj != nil && cj.Solvency != nil {
		sc.Solvency = cj.Solvency
	}
	if cj != nil && cj.Settlement != nil {
		sc.Settle = cj.Settlement
	}
	st, err := status.New(sc)
	if err != nil {
		closeFn()
		return nil, err
	}
	st.Register(handle)
	gwToken := cfg.Gateway.AdminToken // default: TOLLGATE_ADMIN_TOKEN, which the root Caddyfile gives the gateway
	if u := cfg.Gateway.URL; u != "" && gwToken != "" {
		add("TOLLGATE_GATEWAY_PROBE_SCHEDULE", cfg.Gateway.ProbeSchedule, &status.Sampler{Pool: d.Pool(), Gateway: u, AdminToken: gwToken})
	} else if u != "" {
		log.Warn("TOLLGATE_GATEWAY_URL is set but no gateway admin token (TOLLGATE_GATEWAY_ADMIN_TOKEN or TOLLGATE_ADMIN_TOKEN): no gateway health samples, since the unmetered probe needs it")
	} else {
		log.Warn("TOLLGATE_GATEWAY_URL is not set: no gateway health samples (uptime and latency in /api/status stay null)")
	}
	if len(errs) > 0 {
		closeFn()
		return nil, errors.Join(errs...)
	}
	log.Info("node API registered", zap.Bool("claims", signer != nil), zap.Bool("claim_watcher", watching),
		zap.Bool("admin", sc.AdminToken != ""), zap.Duration("claim_validity", validity))
	return closeFn, nil
}

// checkSignerRole warns when the claim signer lacks CLAIM_CREATOR_ROLE:
// its signatures would revert InvalidSigner.
func checkSignerRole(ctx context.Context, client *ethclient.Client, s *claim.Signer, log *zap.Logger) {
	cc := claimscontract.NewClaimsContract()
	c := cc.Instance(client, s.Domain().Contract)
	role, err := bind.Call(c, &bind.CallOpts{Context: ctx}, cc.PackCLAIMCREATORROLE(), cc.UnpackCLAIMCREATORROLE)
	if err != nil {
		log.Warn("could not read CLAIM_CREATOR_ROLE", zap.Error(err))
		return
	}
	ok, err := bind.Call(c, &bind.CallOpts{Context: ctx}, cc.PackHasRole(role, s.Address()), cc.UnpackHasRole)
	if err != nil || !ok {
		log.Error("TOLLGATE_CLAIM_SIGNER_KEY does not hold CLAIM_CREATOR_ROLE: its claim signatures will revert", zap.Stringer("signer", s.Address()))
	}
}
