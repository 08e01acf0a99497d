// Package claims is the node operators' money: GET /api/nodes/{id}/earnings
// (with the node's quarantine, if any), GET /api/nodes/{id}/evidence and
// POST /api/nodes/{id}/claim (all JWT, node owned by the token's wallet), the Watcher that mirrors ClaimsContract's Claimed events and the
// Sweeper that expires unclaimed signatures.
//
// Amounts, per node, in USDT base units (6 decimals):
//
//	total_earned   = Σ node_earnings(kind epoch_share): credited by closed epochs
//	allocated      = node_allocations.allocated_units: raised on chain by mined createClaim
//	claimed        = highest cumulative of the node's Claimed events (= ClaimsContract.claimed)
//	reserved       = max(0, highest cumulative of pending, unexpired signatures − claimed)
//	claimable      = max(0, allocated − claimed − reserved)
//	pending_settlement = total_earned − allocated (earned, not yet on chain)
//
// A claim signature is for a cumulative amount (the contract pays amount −
// claimed[nodeId]): the API signs cumulative = claimed + reserved + claimable
// (= allocated), so a new signature never undercuts one still outstanding,
// whichever is submitted first pays at most the allocation, and the other
// then pays the rest or reverts AlreadyClaimed. An unclaimed signature stops
// reserving once its deadline second has passed (the contract accepts a block
// whose timestamp equals the deadline; claimable does not wait for the
// sweeper), so its funds are claimable again and a new signature covers them.
// The money is safe whatever the clocks say: every signature for the same
// funds carries the same cumulative amount, so the contract pays them once.
package claims

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/evidence"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/solvency"
	"github.com/tollgate-rpc/tollgate/shared/claim"
	"github.com/tollgate-rpc/tollgate/shared/money"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

// Config of the claims service.
type Config struct {
	Pool     *pgxpool.Pool
	Auth     *auth.Service
	Signer   *claim.Signer        // TOLLGATE_CLAIM_SIGNER_KEY (CLAIM_CREATOR_ROLE); nil: claims answer 503
	Client   bind.ContractBackend // chain 137; nil: the on-chain claimed() is not read
	Validity time.Duration        // signature lifetime (default claim.Validity s)
	Now      func() time.Time
	Log      *zap.Logger
}

// Service serves earnings and claims.
type Service struct {
	cfg    Config
	claims *claimscontract.ClaimsContract
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil || cfg.Auth == nil {
		return nil, errors.New("claims: pool and auth are required")
	}
	if cfg.Validity <= 0 {
		cfg.Validity = claim.Validity * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Service{cfg: cfg, claims: claimscontract.NewClaimsContract()}, nil
}

// Register adds the earnings and claim routes.
func (s *Service) Register(handle func(string, http.Handler)) {
	handle("GET /api/nodes/{id}/earnings", s.cfg.Auth.Require(s.earnings))
	handle("POST /api/nodes/{id}/claim", s.cfg.Auth.Require(s.claim))
	handle("GET /api/nodes/{id}/evidence", s.cfg.Auth.Require(s.listEvidence))
}

// Earnings is one node's balance sheet.
type Earnings struct {
	NodeID       string     `json:"node_id"`
	ClaimableUSD money.USDT `json:"claimable_usdt"`
	TotalEarned  money.USDT `json:"total_earned"`
	LastClaim    *string    `json:"last_claim"`

	TotalEarnedUnits       money.Units `json:"total_earned_units,string"`
	AllocatedUnits         money.Units `json:"allocated_units,string"`
	ClaimedUnits           money.Units `json:"claimed_units,string"`
	ReservedUnits          money.Units `json:"reserved_units,string"`
	ClaimableUnits         money.Units `json:"claimable_units,string"`
	PendingSettlementUnits money.Units `json:"pending_settlement_units,string"`
	ClaimedUSDT            money.USDT  `json:"claimed_usdt"`

	// Quarantine says whether the node is quarantined for answering unlike
	// a trusted provider, why, the evidence ids and what closed epochs
	// withheld (set by the earnings route).
	Quarantine *evidence.Quarantine `json:"quarantine,omitempty"`
}

const earningsSQL = `SELECT
	(SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE node_id = $1 AND kind = 'epoch_share')::bigint,
	(SELECT COALESCE(max(allocated_units), 0) FROM node_allocations WHERE node_id = $1)::bigint,
	(SELECT COALESCE(max(cumulative_units), 0) FROM claim_events WHERE node_id = $1)::bigint,
	(SELECT COALESCE(max(cumulative_units), 0) FROM claim_signatures WHERE node_id = $1 AND state = 'pending' AND deadline + interval '1 second' > $2)::bigint,
	(SELECT max(block_time) FROM claim_events WHERE node_id = $1)`

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Compute reads a node's earnings; onChainClaimed (if larger) overrides the
// mirrored claimed amount.
func (s *Service) Compute(ctx context.Context, q querier, node string, onChainClaimed money.Units) (*Earnings, error) {
	var earned, allocated, claimed, pending int64
	var last *time.Time
	if err := q.QueryRow(ctx, earningsSQL, node, s.cfg.Now()).Scan(&earned, &allocated, &claimed, &pending, &last); err != nil {
		return nil, err
	}
	e := &Earnings{NodeID: node, TotalEarnedUnits: money.Units(earned), AllocatedUnits: money.Units(allocated), ClaimedUnits: money.Units(claimed)}
	if onChainClaimed > e.ClaimedUnits {
		e.ClaimedUnits = onChainClaimed
	}
	e.ReservedUnits = max(0, money.Units(pending)-e.ClaimedUnits)
	e.ClaimableUnits = max(0, e.AllocatedUnits-e.ClaimedUnits-e.ReservedUnits)
	e.PendingSettlementUnits = max(0, e.TotalEarnedUnits-e.AllocatedUnits)
	e.ClaimableUSD, e.TotalEarned, e.ClaimedUSDT = money.USDT(e.ClaimableUnits), money.USDT(e.TotalEarnedUnits), money.USDT(e.ClaimedUnits)
	if last != nil {
		v := last.UTC().Format(time.RFC3339)
		e.LastClaim = &v
	}
	return e, nil
}

// owned answers 404/403 (and returns "") unless the node exists and the
// token's wallet owns it; it returns the node's wallet.
func (s *Service) owned(w http.ResponseWriter, r *http.Request) (node, wallet string, ok bool) {
	node = r.PathValue("id")
	if !registry.ValidID(node) {
		httpx.Error(w, http.StatusNotFound, "node_not_found", "no such node")
		return "", "", false
	}
	err := s.cfg.Pool.QueryRow(r.Context(), `SELECT lower(COALESCE(wallet, '')) FROM nodes WHERE node_id = $1`, node).Scan(&wallet)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		httpx.Error(w, http.StatusNotFound, "node_not_found", "no such node")
		return "", "", false
	case err != nil:
		httpx.Error(w, http.StatusServiceUnavailable, "database_unavailable", "the node could not be read")
		return "", "", false
	case wallet == "" || wallet != auth.WalletFrom(r.Context()):
		httpx.Error(w, http.StatusForbidden, "not_node_owner", "this node belongs to another wallet")
		return "", "", false
	}
	return node, wallet, true
}

func (s *Service) earnings(w http.ResponseWriter, r *http.Request) {
	node, _, ok := s.owned(w, r)
	if !ok {
		return
	}
	e, err := s.Compute(r.Context(), s.cfg.Pool, node, 0)
	if err == nil {
		e.Quarantine, err = evidence.Of(r.Context(), s.cfg.Pool, node)
	}
	if err != nil {
		httpx.Error(w, http.StatusServiceUnavailable, "database_unavailable", "earnings could not be read")
		return
	}
	httpx.JSON(w, http.StatusOK, e)
}

// listEvidence: the node's evidence, both answers as the gateway compared
// them, newest first; its owner reads why it was quarantined.
func (s *Service) listEvidence(w http.ResponseWriter, r *http.Request) {
	node, _, ok := s.owned(w, r)
	if !ok {
		return
	}
	items, next, ok := evidence.Page(w, r, s.cfg.Pool, node)
	if !ok {
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"node_id": node, "evidence": items, "next_cursor": next})
}

// Signature is the claim answer's signature object.
type Signature struct {
	AmountUSDT    money.USDT     `json:"amount_usdt"`
	AmountRaw     string         `json:"amount_raw"`
	CumulativeRaw string         `json:"cumulative_raw"`
	Signature     string         `json:"signature"`
	Deadline      string         `json:"deadline"`
	DeadlineUnix  int64          `json:"deadline_unix"`
	Contract      string         `json:"contract"`
	ChainID       uint64         `json:"chain_id"`
	NodeID        string         `json:"node_id"`
	TypedData     map[string]any `json:"typed_data"`
}

// TypedData is the EIP-712 payload for eth_signTypedData_v4 / wallets
// (uint256 values as decimal strings). The type lists come from shared/claim,
// the structure the signer hashes, so the two cannot drift apart.
func TypedData(d claim.Domain, c claim.Claim) map[string]any {
	td := claim.TypedData(d, c)
	types := make(map[string]any, len(td.Types))
	for name, fields := range td.Types {
		list := make([]map[string]string, len(fields))
		for i, f := range fields {
			list[i] = map[string]string{"name": f.Name, "type": f.Type}
		}
		types[name] = list
	}
	return map[string]any{
		"types":       types,
		"primaryType": td.PrimaryType,
		"domain":      map[string]any{"name": td.Domain.Name, "version": td.Domain.Version, "chainId": d.ChainID, "verifyingContract": td.Domain.VerifyingContract},
		"message":     map[string]any{"nodeId": c.NodeID, "amount": c.Amount.String(), "deadline": fmt.Sprint(c.Deadline)},
	}
}

func (s *Service) onChainClaimed(ctx context.Context, node string) (money.Units, error) {
	if s.cfg.Client == nil || s.cfg.Signer == nil {
		return 0, nil
	}
	c := s.claims.Instance(s.cfg.Client, s.cfg.Signer.Domain().Contract)
	v, err := bind.Call(c, &bind.CallOpts{Context: ctx}, s.claims.PackClaimed(node), s.claims.UnpackClaimed)
	if err != nil {
		return 0, err
	}
	return money.FromBig(v)
}

func (s *Service) claim(w http.ResponseWriter, r *http.Request) {
	var req struct {
		WalletAddress string `json:"walletAddress"`
	}
	if !httpx.Decode(w, r, &req) {
		return
	}
	addr, valid := auth.ParseAddress(strings.TrimSpace(req.WalletAddress))
	if !valid {
		httpx.Error(w, http.StatusBadRequest, "invalid_address", "walletAddress must be a 0x-prefixed 20-byte address (EIP-55 if mixed case)")
		return
	}
	node, wallet, ok := s.owned(w, r)
	if !ok {
		return
	}
	if strings.ToLower(addr.Hex()) != wallet {
		httpx.Error(w, http.StatusForbidden, "wallet_mismatch", "walletAddress is not the node's wallet")
		return
	}
	if paused, reason := solvency.ClaimsPaused(r.Context(), s.cfg.Pool); paused {
		httpx.Error(w, http.StatusServiceUnavailable, "claims_paused", "new claim signatures are paused: "+reason)
		return
	}
	if s.cfg.Signer == nil {
		httpx.Error(w, http.StatusServiceUnavailable, "claims_unavailable", "no claim signer is configured")
		return
	}
	onChain, err := s.onChainClaimed(r.Context(), node)
	if err != nil {
		httpx.Error(w, http.StatusServiceUnavailable, "chain_unavailable", "ClaimsContract could not be read")
		return
	}
	sig, status, code, msg := s.issue(r.Context(), node, wallet, onChain)
	if sig == nil {
		httpx.Error(w, status, code, msg)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"success": true, "signature": sig})
}

// issue reserves and signs, one node at a time (the node row is locked).
func (s *Service) issue(ctx context.Context, node, wallet string, onChain money.Units) (*Signature, int, string, string) {
	unavailable := func(err error) (*Signature, int, string, string) {
		s.cfg.Log.Error("claim signature failed", zap.String("node", node), zap.Error(err))
		return nil, http.StatusServiceUnavailable, "claims_unavailable", "the claim could not be recorded; try again"
	}
	tx, err := s.cfg.Pool.Begin(ctx)
	if err != nil {
		return unavailable(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM nodes WHERE node_id = $1 FOR UPDATE`, node); err != nil {
		return unavailable(err)
	}
	e, err := s.Compute(ctx, tx, node, onChain)
	if err != nil {
		return unavailable(err)
	}
	if e.ClaimableUnits <= 0 {
		return nil, http.StatusConflict, "nothing_claimable", fmt.Sprintf("nothing to claim: allocated %s, claimed %s, reserved by outstanding signatures %s USDT",
			e.AllocatedUnits.Decimal(), e.ClaimedUnits.Decimal(), e.ReservedUnits.Decimal())
	}
	now := s.cfg.Now()
	deadline := now.Add(s.cfg.Validity).Truncate(time.Second)
	c := claim.Claim{NodeID: node, Amount: e.ClaimedUnits + e.ReservedUnits + e.ClaimableUnits, Deadline: deadline.Unix()}
	raw, err := s.cfg.Signer.Sign(c)
	if err != nil {
		return unavailable(err)
	}
	amount := c.Amount - e.ClaimedUnits
	if _, err := tx.Exec(ctx, `INSERT INTO claim_signatures (node_id, wallet, cumulative_units, base_claimed_units, amount_units, signature, deadline)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, node, wallet, int64(c.Amount), int64(e.ClaimedUnits), int64(amount), hexutil.Encode(raw), deadline); err != nil {
		return unavailable(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return unavailable(err)
	}
	d := s.cfg.Signer.Domain()
	s.cfg.Log.Info("claim signature issued", zap.String("node", node), zap.Int64("cumulative", int64(c.Amount)), zap.Int64("amount", int64(amount)))
	return &Signature{AmountUSDT: money.USDT(amount), AmountRaw: amount.String(), CumulativeRaw: c.Amount.String(), Signature: hexutil.Encode(raw),
		Deadline: deadline.UTC().Format(time.RFC3339), DeadlineUnix: deadline.Unix(), Contract: d.Contract.Hex(), ChainID: d.ChainID,
		NodeID: node, TypedData: TypedData(d, c)}, 0, "", ""
}

// Sweeper expires unclaimed signatures after their deadline (bookkeeping:
// claimable already ignores them).
type Sweeper struct{ Pool *pgxpool.Pool }

// Name implements jobs.Job.
func (Sweeper) Name() string { return "claim-sweeper" }

// Run marks pending signatures past their deadline expired.
func (s Sweeper) Run(ctx context.Context) error {
	_, err := s.Pool.Exec(ctx, `UPDATE claim_signatures SET state = 'expired', resolved_at = now()
		WHERE state = 'pending' AND deadline + interval '1 second' <= now()`)
	return err
}
