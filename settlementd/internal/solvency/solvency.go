// Package solvency is the solvency check (every 5 minutes on the leader) and
// the claims pause switch it drives.
//
// ClaimsContract must always hold what it owes: outstanding() = allocations −
// claimed. When its USDT balance is below that, the check pauses new claim
// signatures (claims_state.paused, read by the claims API through
// ClaimsPaused) and POSTs one alert to the chat webhook. The pause is sticky:
// the condition clearing does not resume signatures, only an admin Unpause
// does. With the governor key configured, the contract itself is paused on
// chain too (pause(), GOVERNOR_ROLE) and Unpause lifts that as well.
//
// The alert is sent once per pause ("incident"): claims_state.alert_sent_at
// is cleared when the pause starts and set when the webhook accepts the
// POST, so an alert that failed (or was cut off by a crash) is retried by the
// next run, and a delivered one is not repeated while the pause lasts.
package solvency

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/claimscontract"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// PausedBySolvency is the paused_by of a pause the check made.
const PausedBySolvency = "solvency-check"

// Config of the check. Zero values take the defaults.
type Config struct {
	Pool    *pgxpool.Pool  // required
	Client  chain.Backend  // required: the chain-137 RPC
	ChainID uint64         // default 137
	USDT    common.Address // required
	Claims  common.Address // required: ClaimsContract
	// WebhookURL receives the alert as Slack/Discord-compatible JSON
	// {"text": ..., "content": ...}. Empty: the alert is only logged. The
	// URL embeds the channel's secret, so it is never logged.
	WebhookURL string
	HTTPClient *http.Client // default: 10 s timeout
	// Governor (GOVERNOR_ROLE), when set, also pauses the contract on chain
	// when it is found insolvent, and Unpause unpauses it. nil: signatures
	// only.
	Governor       *chain.Signer
	ReceiptTimeout time.Duration  // wait for pause/unpause transactions (default 2 min)
	PollInterval   time.Duration  // receipt polling (default 1 s)
	TxPolicy       chain.TxPolicy // fee ceiling and stuck-transaction replacement (chain defaults)
	Fence          chain.Fencer   // nil: no leader fencing
	Log            *zap.Logger
}

// Checker is the "solvency" job and the pause switch.
type Checker struct {
	cfg     Config
	log     *zap.Logger
	sender  *chain.Sender
	usdt    *testusdt.TestUSDT
	claims  *claimscontract.ClaimsContract
	usdtC   *bind.BoundContract
	claimsC *bind.BoundContract
}

// New checks cfg and returns the checker.
func New(cfg Config) (*Checker, error) {
	if cfg.Pool == nil || cfg.Client == nil || cfg.USDT == (common.Address{}) || cfg.Claims == (common.Address{}) {
		return nil, errors.New("solvency: Pool, Client, USDT and Claims are required")
	}
	if cfg.ChainID == 0 {
		cfg.ChainID = 137
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.ReceiptTimeout <= 0 {
		cfg.ReceiptTimeout = 2 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.WebhookURL != "" {
		if u, err := url.Parse(cfg.WebhookURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, errors.New("solvency: the alert webhook URL is not an http(s) URL")
		}
	}
	c := &Checker{cfg: cfg, log: cfg.Log.Named("solvency"), usdt: testusdt.NewTestUSDT(), claims: claimscontract.NewClaimsContract()}
	c.usdtC = c.usdt.Instance(cfg.Client, cfg.USDT)
	c.claimsC = c.claims.Instance(cfg.Client, cfg.Claims)
	if cfg.Governor != nil {
		s, err := chain.NewSender(chain.SenderConfig{Pool: cfg.Pool, Client: cfg.Client, ChainID: cfg.ChainID, Fence: cfg.Fence,
			PollInterval: cfg.PollInterval, Log: cfg.Log, Policy: cfg.TxPolicy, Signers: []*chain.Signer{cfg.Governor}})
		if err != nil {
			return nil, err
		}
		c.sender = s
	}
	return c, nil
}

// Name implements jobs.Job.
func (c *Checker) Name() string { return "solvency" }

// Reading is one solvency measurement.
type Reading struct {
	Block   uint64
	Balance *big.Int // ClaimsContract's USDT balance
	Owed    *big.Int // outstanding(): allocated − claimed
}

// Solvent reports whether the contract holds what it owes.
func (r Reading) Solvent() bool { return r.Balance.Cmp(r.Owed) >= 0 }

// Read measures the contract at the current head (both values at the same block).
func (c *Checker) Read(ctx context.Context) (Reading, error) {
	head, err := c.cfg.Client.BlockNumber(ctx)
	if err != nil {
		return Reading{}, fmt.Errorf("solvency: head block: %w", err)
	}
	opts := &bind.CallOpts{Context: ctx, BlockNumber: new(big.Int).SetUint64(head)}
	bal, err := bind.Call(c.usdtC, opts, c.usdt.PackBalanceOf(c.cfg.Claims), c.usdt.UnpackBalanceOf)
	if err != nil {
		return Reading{}, fmt.Errorf("solvency: USDT balanceOf ClaimsContract: %w", err)
	}
	owed, err := bind.Call(c.claimsC, opts, c.claims.PackOutstanding(), c.claims.UnpackOutstanding)
	if err != nil {
		return Reading{}, fmt.Errorf("solvency: ClaimsContract.outstanding: %w", err)
	}
	return Reading{Block: head, Balance: bal, Owed: owed}, nil
}

// usdt renders a raw amount as decimal USDT when it fits, else as raw units.
func usdt(v *big.Int) string {
	if u, err := money.FromBig(v); err == nil {
		return u.Decimal()
	}
	return v.String() + " units"
}

// Run is one check.
func (c *Checker) Run(ctx context.Context) error {
	if c.sender != nil {
		if err := c.sender.ResolvePending(ctx); err != nil {
			return fmt.Errorf("solvency: resolving pending transactions: %w", err)
		}
	}
	r, err := c.Read(ctx)
	if err != nil {
		return err
	}
	if _, err := c.cfg.Pool.Exec(ctx, `INSERT INTO solvency_checks (chain_id, block_number, balance_raw, owed_raw, solvent)
		VALUES ($1, $2, $3::numeric, $4::numeric, $5)`, int64(c.cfg.ChainID), int64(r.Block), r.Balance.String(), r.Owed.String(),
		r.Solvent()); err != nil {
		return fmt.Errorf("solvency: recording the check: %w", err)
	}
	if !r.Solvent() {
		short := new(big.Int).Sub(r.Owed, r.Balance)
		reason := fmt.Sprintf("ClaimsContract %s holds %s USDT but owes %s USDT (allocated − claimed) at block %d: short by %s USDT",
			c.cfg.Claims.Hex(), usdt(r.Balance), usdt(r.Owed), r.Block, usdt(short))
		if err := c.pause(ctx, PausedBySolvency, reason, false); err != nil {
			return err
		}
	}
	st, err := c.state(ctx)
	if err != nil {
		return err
	}
	var errs []error
	if st.paused && !st.alerted {
		errs = append(errs, c.deliverAlert(ctx, st))
	}
	if st.paused && !r.Solvent() && c.sender != nil {
		errs = append(errs, c.pauseOnChain(ctx, st.incident))
	}
	return errors.Join(errs...)
}

// pause starts an incident unless claims are already paused. alerted: the
// alert counts as delivered (an admin's own pause needs none).
func (c *Checker) pause(ctx context.Context, by, reason string, alerted bool) error {
	return pgx.BeginFunc(ctx, c.cfg.Pool, func(tx pgx.Tx) error {
		if err := chain.Fence(ctx, c.cfg.Fence, tx); err != nil {
			return err
		}
		var incident int64
		err := tx.QueryRow(ctx, `UPDATE claims_state SET paused = true, reason = $1, paused_by = $2, paused_at = now(),
				incident = incident + 1, alert_sent_at = CASE WHEN $3 THEN now() END, updated_at = now()
			WHERE id = 1 AND NOT paused RETURNING incident`, reason, by, alerted).Scan(&incident)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // already paused: the incident goes on
		}
		if err != nil {
			return fmt.Errorf("solvency: pausing claims: %w", err)
		}
		c.log.Error("new claim signatures paused", zap.Int64("incident", incident), zap.String("by", by), zap.String("reason", reason))
		return nil
	})
}

type state struct {
	paused, alerted, onchain bool
	reason, by               string
	incident                 int64
}

func (c *Checker) state(ctx context.Context) (state, error) {
	var s state
	err := c.cfg.Pool.QueryRow(ctx, `SELECT paused, alert_sent_at IS NOT NULL, onchain_paused, COALESCE(reason, ''),
		COALESCE(paused_by, ''), incident FROM claims_state WHERE id = 1`).Scan(&s.paused, &s.alerted, &s.onchain, &s.reason, &s.by, &s.incident)
	if err != nil {
		return s, fmt.Errorf("solvency: reading claims state: %w", err)
	}
	return s, nil
}

// deliverAlert POSTs the incident's alert and records the delivery.
func (c *Checker) deliverAlert(ctx context.Context, st state) error {
	text := fmt.Sprintf("Tollgate: new claim signatures are PAUSED (incident %d, by %s). %s. They stay paused until an admin unpauses.",
		st.incident, st.by, st.reason)
	if err := c.post(ctx, text); err != nil {
		return err
	}
	if _, err := c.cfg.Pool.Exec(ctx, `UPDATE claims_state SET alert_sent_at = now() WHERE id = 1 AND incident = $1`, st.incident); err != nil {
		return fmt.Errorf("solvency: recording the alert: %w", err)
	}
	return nil
}

// post sends text to the webhook as {"text", "content"}: Slack reads text,
// Discord reads content.
func (c *Checker) post(ctx context.Context, text string) error {
	if c.cfg.WebhookURL == "" {
		c.log.Error("alert (no webhook configured)", zap.String("text", text))
		return nil
	}
	body, _ := json.Marshal(map[string]string{"text": text, "content": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return errors.New("solvency: building the alert request failed")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		// *url.Error quotes the URL, which holds the webhook's secret.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("solvency: posting the alert: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("solvency: the alert webhook answered HTTP %d", resp.StatusCode)
	}
	c.log.Info("alert delivered")
	return nil
}

// pauseOnChain pauses ClaimsContract with the governor key (once per incident).
func (c *Checker) pauseOnChain(ctx context.Context, incident int64) error {
	paused, err := bind.Call(c.claimsC, &bind.CallOpts{Context: ctx}, c.claims.PackPaused(), c.claims.UnpackPaused)
	if err != nil {
		return fmt.Errorf("solvency: ClaimsContract.paused: %w", err)
	}
	if !paused {
		t, err := c.sender.Submit(ctx, c.cfg.Governor, chain.Intent{Purpose: fmt.Sprintf("pause:%d", incident), Kind: chain.KindPause,
			To: c.cfg.Claims, Data: c.claims.PackPause(), Unpack: c.claims.UnpackError})
		if err != nil {
			return fmt.Errorf("solvency: pausing ClaimsContract: %w", err)
		}
		if ok, err := c.sender.Await(ctx, []*chain.Tx{t}, c.cfg.ReceiptTimeout); err != nil || !ok {
			return err // not mined yet: the next run continues
		}
		if t.State != chain.StateMined {
			return fmt.Errorf("solvency: pause transaction %s ended %s", t.Hash.Hex(), t.State)
		}
	}
	_, err = c.cfg.Pool.Exec(ctx, `UPDATE claims_state SET onchain_paused = true, updated_at = now() WHERE id = 1 AND incident = $1 AND paused`, incident)
	return err
}

// Pause stops new claim signatures by an admin's decision (e.g. a critical
// bug), and with onChain also pauses the contract (needs the governor key).
// No alert is sent: the admin knows.
func (c *Checker) Pause(ctx context.Context, by, reason string, onChain bool) error {
	if by == "" {
		return errors.New("solvency: Pause needs who is pausing")
	}
	if onChain && c.sender == nil {
		return errors.New("solvency: pausing on chain needs the governor key")
	}
	if err := c.pause(ctx, by, "paused by "+by+": "+reason, true); err != nil {
		return err
	}
	if !onChain {
		return nil
	}
	st, err := c.state(ctx)
	if err != nil {
		return err
	}
	return c.pauseOnChain(ctx, st.incident)
}

// Unpause resumes new claim signatures: the admin action that ends an
// incident. If we paused the contract on chain, it is unpaused first (with
// the governor key), so the books never say "active" while claims revert.
// If the contract is still insolvent, the next check pauses again (a new
// incident, with a new alert).
func (c *Checker) Unpause(ctx context.Context, by string) error {
	if by == "" {
		return errors.New("solvency: Unpause needs who is unpausing")
	}
	st, err := c.state(ctx)
	if err != nil {
		return err
	}
	if st.onchain {
		paused, err := bind.Call(c.claimsC, &bind.CallOpts{Context: ctx}, c.claims.PackPaused(), c.claims.UnpackPaused)
		if err != nil {
			return fmt.Errorf("solvency: ClaimsContract.paused: %w", err)
		}
		if paused {
			if c.sender == nil {
				return errors.New("solvency: ClaimsContract is paused on chain and no governor key is configured to unpause it")
			}
			t, err := c.sender.Submit(ctx, c.cfg.Governor, chain.Intent{Purpose: fmt.Sprintf("unpause:%d", st.incident),
				Kind: chain.KindUnpause, To: c.cfg.Claims, Data: c.claims.PackUnpause(), Unpack: c.claims.UnpackError})
			if err != nil {
				return fmt.Errorf("solvency: unpausing ClaimsContract: %w", err)
			}
			ok, err := c.sender.Await(ctx, []*chain.Tx{t}, c.cfg.ReceiptTimeout)
			if err != nil {
				return err
			}
			if !ok || t.State != chain.StateMined {
				return fmt.Errorf("solvency: unpause transaction %s is %s; claims stay paused", t.Hash.Hex(), t.State)
			}
		}
	}
	tag, err := c.cfg.Pool.Exec(ctx, `UPDATE claims_state SET paused = false, onchain_paused = false, unpaused_at = now(),
		unpaused_by = $1, updated_at = now() WHERE id = 1 AND paused`, by)
	if err != nil {
		return fmt.Errorf("solvency: unpausing claims: %w", err)
	}
	if tag.RowsAffected() == 1 {
		c.log.Warn("claim signatures unpaused by admin", zap.String("by", by), zap.Int64("incident", st.incident))
	}
	return nil
}

// ClaimsPaused reports whether new claim signatures are paused, and why.
func (c *Checker) ClaimsPaused(ctx context.Context) (bool, string) {
	return ClaimsPaused(ctx, c.cfg.Pool)
}

// Querier is *pgxpool.Pool, *pgx.Conn or pgx.Tx.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ClaimsPaused reports whether new claim signatures are paused, and why,
// for the claims API. When the state cannot be read it answers paused:
// issuing a signature the contract may not be able to honour is worse than
// refusing one.
func ClaimsPaused(ctx context.Context, q Querier) (bool, string) {
	var paused bool
	var reason string
	if err := q.QueryRow(ctx, `SELECT paused, COALESCE(reason, '') FROM claims_state WHERE id = 1`).Scan(&paused, &reason); err != nil {
		return true, "claims state unavailable"
	}
	return paused, reason
}
