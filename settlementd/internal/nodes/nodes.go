// Package nodes is node registration: POST /api/nodes/register (JWT) checks
// the operator's RPC URL (http/https, public address unless private targets
// are allowed, eth_chainId equal to every declared chain), stores the node in
// Postgres (nodes, wallet = the token's wallet) and writes the registry
// record the gateway routes to (<prefix>nodes in Redis). The Prober job
// re-probes registered nodes and marks one offline after consecutive
// failures (online again after a success). GET /api/nodes and
// DELETE /api/nodes/{id} let an operator list and deregister their nodes
// (manage.go).
package nodes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"github.com/tollgate-rpc/tollgate/shared/netpolicy"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Defaults.
const (
	DefaultProbeTimeout = 5 * time.Second
	DefaultMaxFailures  = 3
	MaxLabel            = 64
	// ProbeSampleRetention is how long each probe's outcome and latency
	// are kept (node_probe_samples).
	ProbeSampleRetention = 7 * 24 * time.Hour
)

// Config of the nodes service.
type Config struct {
	Pool         *pgxpool.Pool
	Redis        redis.Cmdable
	Prefix       string // Redis key prefix shared with the gateway
	Auth         *auth.Service
	AllowPrivate bool           // TOLLGATE_ALLOW_PRIVATE_NODES=1: loopback/private targets allowed (dev, tests)
	AllowCIDRs   []netip.Prefix // TOLLGATE_NODE_ALLOW_CIDRS: addresses allowed whatever the policy says
	ProbeTimeout time.Duration  // per eth_chainId probe
	MaxFailures  int            // consecutive failed probes before a node is offline
	Log          *zap.Logger
	// Chains is the chain table in force (settlementd's chains file,
	// swapped on SIGHUP); nil: the built-in chains. A node may register
	// only chains it lists.
	Chains *chains.Live
	// Proof: registration asks the endpoint for the ownership proof
	// (proof.go). RegisterPerHour: registrations a wallet may attempt an
	// hour (0: DefaultRegisterPerHour; negative: no limit, tests).
	Proof           bool
	RegisterPerHour int
}

// Service registers and probes nodes.
type Service struct {
	cfg    Config
	client *http.Client
	dialer *net.Dialer // the policy-checking dialer of client, for the ws probe too
	// publishHook, when set (tests only), runs before each registry write.
	publishHook func(*Node)
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil || cfg.Redis == nil || cfg.Auth == nil {
		return nil, errors.New("nodes: pool, redis and auth are required")
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = DefaultProbeTimeout
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = DefaultMaxFailures
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	s := &Service{cfg: cfg}
	// The dialer re-checks every address it connects to, so a name that
	// resolves to a public address at validation and a private one at
	// probe time (DNS rebinding) is still refused.
	dialer := &net.Dialer{Timeout: cfg.ProbeTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		a, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("nodes: dialling %q, not an address", host)
		}
		if err := s.policy().Check(a); err != nil {
			return fmt.Errorf("nodes: dial refused: %w", err)
		}
		return nil
	}}
	s.dialer = dialer
	s.client = &http.Client{Timeout: cfg.ProbeTimeout, Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil,
		MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return s, nil
}

// Register adds POST /api/nodes/register, GET /api/nodes and
// DELETE /api/nodes/{id} (manage.go).
func (s *Service) Register(handle func(string, http.Handler)) {
	handle("POST /api/nodes/register", s.cfg.Auth.Require(s.register))
	handle("GET /api/nodes", s.cfg.Auth.Require(s.list))
	handle("DELETE /api/nodes/{id}", s.cfg.Auth.Require(s.deregister))
}

// policy is the address policy a node must pass, here at registration and
// at every probe, and in the gateway at every dial (shared/netpolicy).
func (s *Service) policy() netpolicy.Policy {
	return netpolicy.Policy{AllowPrivate: s.cfg.AllowPrivate, Allow: s.cfg.AllowCIDRs}
}

var regionRe = regexp.MustCompile(`^[a-z0-9-]{2,16}$`)

// RegisterRequest is the registration payload.
type RegisterRequest struct {
	Region   string   `json:"region"`
	RPCURL   string   `json:"rpc_url"`
	ChainIDs []uint64 `json:"chain_ids"`
	Label    string   `json:"label"`
	// WSURL is the node's JSON-RPC-over-WebSocket endpoint (ws:// or
	// wss://), optional: the gateway opens eth_subscribe subscriptions
	// there. Checked like rpc_url (address policy, eth_chainId).
	WSURL string `json:"ws_url,omitempty"`
}

// Node is a registered node as the API shows it.
type Node struct {
	NodeID    string   `json:"node_id"`
	Wallet    string   `json:"wallet"`
	Region    string   `json:"region"`
	RPCURL    string   `json:"rpc_url"`
	WSURL     string   `json:"ws_url,omitempty"`
	ChainIDs  []uint64 `json:"chain_ids"`
	Label     string   `json:"label"`
	Status    string   `json:"status"`
	CreatedAt string   `json:"created_at"`
}

type apiError struct {
	status     int
	code, text string
}

func (e *apiError) Error() string { return e.text }

func bad(code, format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, code, fmt.Sprintf(format, args...)}
}

// validate checks the payload and the URL's address (not the probe).
func (s *Service) validate(ctx context.Context, req *RegisterRequest) (*url.URL, error) {
	req.Region = strings.ToLower(strings.TrimSpace(req.Region))
	if !regionRe.MatchString(req.Region) {
		return nil, bad("invalid_region", "region must match [a-z0-9-]{2,16}")
	}
	req.Label = strings.TrimSpace(req.Label)
	if len(req.Label) > MaxLabel {
		return nil, bad("invalid_label", "label is at most %d bytes", MaxLabel)
	}
	if len(req.ChainIDs) == 0 {
		return nil, bad("invalid_chain_ids", "chain_ids must list at least one supported chain")
	}
	slices.Sort(req.ChainIDs)
	req.ChainIDs = slices.Compact(req.ChainIDs)
	table := s.cfg.Chains.Load()
	for _, id := range req.ChainIDs {
		if _, ok := table.ByID(id); !ok {
			return nil, bad("unsupported_chain", "chain %d is not supported (configured: %s)", id, table.IDs())
		}
	}
	u, err := url.Parse(strings.TrimSpace(req.RPCURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, bad("invalid_rpc_url", "rpc_url must be an http or https URL without credentials")
	}
	if publicProvider(u.Hostname()) {
		return nil, &apiError{http.StatusForbidden, "public_provider", "rpc_url is a public provider's endpoint, not a node you operate"}
	}
	if err := s.checkHost(ctx, "rpc_url", u.Hostname()); err != nil {
		return nil, err
	}
	if req.WSURL = strings.TrimSpace(req.WSURL); req.WSURL != "" {
		w, err := url.Parse(req.WSURL)
		if err != nil || (w.Scheme != "ws" && w.Scheme != "wss") || w.Host == "" || w.User != nil || w.Fragment != "" {
			return nil, bad("invalid_ws_url", "ws_url must be a ws or wss URL without credentials")
		}
		if err := s.checkHost(ctx, "ws_url", w.Hostname()); err != nil {
			return nil, err
		}
		req.WSURL = w.String()
	}
	req.RPCURL = u.String()
	return u, nil
}

// checkHost resolves host (of the named field) and refuses addresses the
// node policy forbids.
func (s *Service) checkHost(ctx context.Context, field, host string) error {
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(rctx, host)
		if err != nil || len(addrs) == 0 {
			return bad("unresolvable_host", "the %s host %q does not resolve", field, host)
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		a, _ := netip.AddrFromSlice(ip)
		if err := s.policy().Check(a.Unmap()); err != nil {
			return bad("private_address", "%s resolves to %s, which nodes may not use: %v", field, ip, err)
		}
	}
	return nil
}

// ChainID asks rawURL for eth_chainId.
func (s *Service) ChainID(ctx context.Context, rawURL string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, errors.New("the endpoint did not answer")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the endpoint answered HTTP %d", resp.StatusCode)
	}
	var out struct {
		Result string          `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(body), &out); err != nil || len(out.Error) > 0 && string(out.Error) != "null" || !strings.HasPrefix(out.Result, "0x") {
		return 0, errors.New("the endpoint did not return a JSON-RPC eth_chainId result")
	}
	id, err := ethparse.Quantity(out.Result)
	if err != nil {
		return 0, errors.New("the endpoint returned a malformed chain id")
	}
	return id, nil
}

// probe checks that the endpoint serves every declared chain. A URL serves
// one chain, so several declared chains can only all match when they are the
// same; the gateway's per-chain pools call the same URL.
func (s *Service) probe(ctx context.Context, rawURL string, ids []uint64) error {
	got, err := s.ChainID(ctx, rawURL)
	if err != nil {
		return &apiError{http.StatusBadRequest, "probe_failed", "probing rpc_url with eth_chainId failed: " + err.Error()}
	}
	for _, id := range ids {
		if id != got {
			return &apiError{http.StatusBadRequest, "chain_mismatch", fmt.Sprintf("rpc_url answers eth_chainId %d, declared chain %d", got, id)}
		}
	}
	return nil
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns NODE-<REGION>-<8 base32 chars>.
func NewID(region string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "NODE-" + strings.ToUpper(region) + "-" + b32.EncodeToString(b[:])
}

func (s *Service) register(w http.ResponseWriter, r *http.Request) {
	wallet := auth.WalletFrom(r.Context())
	var req RegisterRequest
	if !httpx.Decode(w, r, &req) {
		return
	}
	n, created, err := s.Upsert(r.Context(), wallet, req)
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		httpx.Error(w, ae.status, ae.code, ae.text)
		return
	case err != nil:
		s.cfg.Log.Error("node registration failed", zap.Error(err))
		httpx.Error(w, http.StatusServiceUnavailable, "registration_unavailable", "the node could not be stored; try again")
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpx.JSON(w, status, n)
}

// Upsert validates, probes and stores a node for wallet. created is false
// when the wallet had already registered this URL (the node is returned,
// its region, chains and label updated).
func (s *Service) Upsert(ctx context.Context, wallet string, req RegisterRequest) (*Node, bool, error) {
	if _, err := s.validate(ctx, &req); err != nil {
		return nil, false, err
	}
	if err := s.allowRegistration(ctx, wallet); err != nil {
		return nil, false, err
	}
	// Cheap ownership check before probing; repeated under the lock below.
	if _, err := s.lookup(ctx, s.cfg.Pool, wallet, req.RPCURL); err != nil {
		return nil, false, err
	}
	if s.cfg.Proof {
		if err := s.proveControl(ctx, req.RPCURL, wallet); err != nil {
			return nil, false, err
		}
	}
	if err := s.probe(ctx, req.RPCURL, req.ChainIDs); err != nil {
		return nil, false, err
	}
	if req.WSURL != "" {
		if err := s.probeWS(ctx, req.WSURL, req.ChainIDs); err != nil {
			return nil, false, err
		}
	}
	ids := make([]int64, len(req.ChainIDs))
	for i, id := range req.ChainIDs {
		ids[i] = int64(id)
	}
	var id string
	var created bool
	var at time.Time
	n := &Node{Wallet: wallet, Region: strings.ToUpper(req.Region), RPCURL: req.RPCURL, WSURL: req.WSURL, ChainIDs: req.ChainIDs,
		Label: req.Label, Status: registry.StatusOnline}
	err := pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		// One registration (or deregistration) of a URL at a time, so a
		// URL maps to one live node and a re-registration never updates a
		// node being deregistered.
		if err := lockURL(ctx, tx, req.RPCURL); err != nil {
			return err
		}
		existing, err := s.lookup(ctx, tx, wallet, req.RPCURL)
		if err != nil {
			return err
		}
		created, id = existing == "", existing
		if created {
			id = NewID(req.Region)
			return tx.QueryRow(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status, label, last_probe_at, ws_url)
				VALUES ($1, $2, $3, $4, $5, 'online', $6, now(), NULLIF($7, '')) RETURNING created_at`,
				id, wallet, strings.ToUpper(req.Region), req.RPCURL, ids, req.Label, req.WSURL).Scan(&at)
		}
		return tx.QueryRow(ctx, `UPDATE nodes SET region = $2, chain_ids = $3, label = $4, status = 'online', probe_failures = 0,
			last_probe_at = now(), last_probe_error = NULL, updated_at = now(), ws_url = NULLIF($5, '') WHERE node_id = $1 RETURNING created_at`,
			id, strings.ToUpper(req.Region), ids, req.Label, req.WSURL).Scan(&at)
	})
	if err != nil {
		return nil, false, err
	}
	n.NodeID, n.CreatedAt = id, at.UTC().Format(time.RFC3339)
	// After the commit, so the gateway never routes to (and books revenue
	// for) a node the database does not have.
	if err := s.publishLive(ctx, n); err != nil {
		return nil, false, err
	}
	if created {
		s.countRegistration(ctx) // only proven, stored registrations spend the service-wide limit
		s.cfg.Log.Info("node registered", zap.String("node", id), zap.String("wallet", wallet), zap.Uint64s("chains", req.ChainIDs))
	}
	return n, created, nil
}

// lockURL serialises registrations and deregistrations of one URL (until
// the transaction ends).
func lockURL(ctx context.Context, tx pgx.Tx, url string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('tollgate-node-url:' || $1))`, url)
	return err
}

// lookup returns the live node registered at url by wallet ("" if none), or
// a 409 when another wallet registered it.
func (s *Service) lookup(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, wallet, url string) (string, error) {
	// A deregistered node no longer holds its URL: registering it again
	// (by anyone) makes a new node.
	rows, err := q.Query(ctx, `SELECT node_id, lower(COALESCE(wallet, '')) FROM nodes WHERE url = $1 AND status <> 'deregistered'
		ORDER BY created_at, node_id`, url)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	mine, other := "", false
	for rows.Next() {
		var id, w string
		if err := rows.Scan(&id, &w); err != nil {
			return "", err
		}
		if w == wallet && mine == "" {
			mine = id
		} else if w != wallet {
			other = true
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if mine == "" && other {
		return "", &apiError{http.StatusConflict, "url_registered", "this rpc_url is registered by another wallet"}
	}
	return mine, nil
}

// publishLive writes the record of a node unless it has been deregistered,
// holding the node's row meanwhile: a deregistration (which updates the row)
// removes the record after this write, never before it.
func (s *Service) publishLive(ctx context.Context, n *Node) error {
	return pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		var status string
		if err := tx.QueryRow(ctx, `SELECT status FROM nodes WHERE node_id = $1 FOR UPDATE`, n.NodeID).Scan(&status); err != nil {
			return err
		}
		if status == StatusDeregistered {
			return nil
		}
		// The record says what the database says: a re-registration of a
		// quarantined node's URL must not make it routable again (the
		// trigger keeps the row quarantined; only a review lifts it).
		n.Status = status
		return s.publish(ctx, n)
	})
}

// publish writes the node's registry record for the gateway.
func (s *Service) publish(ctx context.Context, n *Node) error {
	if s.publishHook != nil {
		s.publishHook(n)
	}
	v, err := registry.Encode(&registry.Node{ID: n.NodeID, Wallet: n.Wallet, Region: n.Region, Label: n.Label, URL: n.RPCURL,
		WSURL: n.WSURL, ChainIDs: n.ChainIDs, Status: n.Status, UpdatedAt: time.Now().Unix()})
	if err != nil {
		return err
	}
	return s.cfg.Redis.HSet(ctx, s.cfg.Prefix+registry.NodesKey, n.NodeID, v).Err()
}

// Prober is the leader job that re-probes every registered node.
type Prober struct{ s *Service }

// Prober returns the probing job.
func (s *Service) Prober() *Prober { return &Prober{s} }

// Name implements jobs.Job.
func (p *Prober) Name() string { return "node-probe" }

// Run probes each live node once: a success resets its failures (and
// brings it back online); MaxFailures consecutive failures take it offline.
// A node's ws_url is probed too and left out of its record while it fails.
// Every live node's registry record is rewritten and every deregistered
// node's record removed, so Redis follows Postgres.
func (p *Prober) Run(ctx context.Context) error {
	s := p.s
	rows, err := s.cfg.Pool.Query(ctx, `SELECT node_id, COALESCE(wallet, ''), COALESCE(region, ''), COALESCE(url, ''), chain_ids, label, status, created_at,
		COALESCE(ws_url, '')
		FROM nodes WHERE url IS NOT NULL AND wallet IS NOT NULL AND status <> 'deregistered' ORDER BY node_id`)
	if err != nil {
		return err
	}
	var all []*Node
	for rows.Next() {
		var n Node
		var ids []int64
		var at time.Time
		if err := rows.Scan(&n.NodeID, &n.Wallet, &n.Region, &n.RPCURL, &ids, &n.Label, &n.Status, &at, &n.WSURL); err != nil {
			rows.Close()
			return err
		}
		for _, id := range ids {
			n.ChainIDs = append(n.ChainIDs, uint64(id))
		}
		all = append(all, &n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var errs []error
	for _, n := range all {
		if !registry.ValidID(n.NodeID) || len(n.ChainIDs) == 0 {
			continue
		}
		began := time.Now()
		perr := s.probe(ctx, n.RPCURL, n.ChainIDs)
		took := float64(time.Since(began).Microseconds()) / 1000
		var msg, wsMsg *string
		if perr != nil {
			m := perr.Error()
			msg = &m
		} else if n.WSURL != "" {
			// The WebSocket endpoint is checked as at registration. While
			// it fails, the record is published without it (the gateway
			// sends no subscriptions there) and the node stays online for
			// HTTP; the error is shown to its operator but is not counted
			// towards taking the node offline.
			if werr := s.probeWS(ctx, n.WSURL, n.ChainIDs); werr != nil {
				m := "ws_url: " + werr.Error()
				wsMsg = &m
				n.WSURL = ""
			}
		}
		// The update skips a node deregistered since it was read, and the
		// record is written while the update holds the row: a
		// deregistration (which locks the row) removes the record after
		// this write, never before it.
		err := pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
			err := tx.QueryRow(ctx, `UPDATE nodes SET
					probe_failures = CASE WHEN $2::text IS NULL THEN 0 ELSE probe_failures + 1 END,
					status = CASE WHEN $2::text IS NULL THEN 'online' WHEN probe_failures + 1 >= $3 THEN 'offline' ELSE status END,
					last_probe_at = now(), last_probe_error = COALESCE($2, $4), updated_at = now()
				WHERE node_id = $1 AND status <> 'deregistered' RETURNING status`, n.NodeID, msg, s.cfg.MaxFailures, wsMsg).Scan(&n.Status)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			// The sample behind the operator's uptime and latency
			// (settlementd/internal/history).
			if _, err := tx.Exec(ctx, `INSERT INTO node_probe_samples (node_id, at, ok, latency_ms) VALUES ($1, clock_timestamp(), $2, $3)
				ON CONFLICT DO NOTHING`, n.NodeID, perr == nil, took); err != nil {
				return err
			}
			return s.publish(ctx, n)
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.unpublishDeregistered(ctx); err != nil {
		errs = append(errs, err)
	}
	if _, err := s.cfg.Pool.Exec(ctx, `DELETE FROM node_probe_samples WHERE at < now() - $1::bigint * interval '1 second'`, int64(ProbeSampleRetention.Seconds())); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
