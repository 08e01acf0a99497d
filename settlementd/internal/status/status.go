// Package status serves settlementd's public read-outs and its operator
// endpoints:
//
//   - GET /api/status: nodes online, the current epoch, requests today (the
//     gateway's UTC-day counter in Redis), uptime and p50 latency over the
//     last 24 h of gateway health samples (null without samples);
//   - GET /api/admin/economics and GET /api/admin/settlement: public data
//     (the original specification lists them as such): epochs, revenue events, batches,
//     allocations, claims and the solvency state, with no keys or secrets;
//   - /admin/* behind X-Admin-Token: pause/unpause claims, trigger a
//     settlement run, list epochs, review quarantined nodes and lift a
//     quarantine (quarantine.go), list and replay dead letters
//     (deadletters.go);
//   - the Sampler job that probes the gateway's /rpc and stores samples.
package status

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	shttpx "github.com/tollgate-rpc/tollgate/shared/httpx"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Pauser is the solvency checker's admin surface (*solvency.Checker).
type Pauser interface {
	Pause(ctx context.Context, by, reason string, onChain bool) error
	Unpause(ctx context.Context, by string) error
}

// Config of the status service.
type Config struct {
	Pool       *pgxpool.Pool
	Redis      redis.Cmdable
	Prefix     string
	Shards     int    // metering shards (balances.Layout; 0 or 1: one)
	AdminToken string // TOLLGATE_ADMIN_TOKEN; empty: /admin/* answers 404
	Solvency   Pauser // nil: pause/unpause is off-chain only (claims_state)
	OnChain    bool   // a governor key is configured: pause on chain too
	Settle     interface {
		Run(ctx context.Context) error
	}
	IsLeader func() bool
	Now      func() time.Time
	Log      *zap.Logger
}

// Service serves the endpoints.
type Service struct {
	cfg   Config
	admin shttpx.AdminToken // cfg.AdminToken's sum: what X-Admin-Token is checked against
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil || cfg.Redis == nil {
		return nil, errors.New("status: pool and redis are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.IsLeader == nil {
		cfg.IsLeader = func() bool { return true }
	}
	return &Service{cfg: cfg, admin: shttpx.NewAdminToken(cfg.AdminToken)}, nil
}

// Register adds every route.
func (s *Service) Register(handle func(string, http.Handler)) {
	handle("GET /api/status", http.HandlerFunc(s.status))
	handle("GET /api/admin/economics", http.HandlerFunc(s.economics))
	handle("GET /api/admin/settlement", http.HandlerFunc(s.settlement))
	handle("POST /admin/claims/pause", s.adminOnly(s.pause))
	handle("POST /admin/claims/unpause", s.adminOnly(s.unpause))
	handle("POST /admin/settlement/run", s.adminOnly(s.runSettlement))
	handle("GET /admin/epochs", s.adminOnly(s.epochs))
	handle("GET /admin/quarantine", s.adminOnly(s.quarantine))
	handle("GET /admin/nodes/{id}/evidence", s.adminOnly(s.nodeEvidence))
	handle("POST /admin/nodes/{id}/unquarantine", s.adminOnly(s.unquarantine))
	handle("GET /admin/dead-letters", s.adminOnly(s.deadLetters))
	handle("POST /admin/dead-letters/replay", s.adminOnly(s.replayDeadLetters))
}

func unavailable(w http.ResponseWriter, what string) {
	httpx.Error(w, http.StatusServiceUnavailable, "database_unavailable", what+" could not be read")
}

// Epoch is the current epoch in /api/status.
type Epoch struct {
	ID                int64      `json:"id"`
	State             string     `json:"state"`
	StartsAt          string     `json:"starts_at"`
	EndsAt            string     `json:"ends_at"`
	RevenueSoFarUSDT  money.USDT `json:"revenue_so_far_usdt"`
	RevenueSoFarUnits int64      `json:"revenue_so_far_units,string"`
}

// Status is the /api/status body.
type Status struct {
	NodesOnline     int64 `json:"nodes_online"`
	NodesRegistered int64 `json:"nodes_registered"`
	// NodesQuarantined: nodes caught answering unlike a trusted provider,
	// not yet lifted by an admin review (they get no traffic).
	NodesQuarantined int64    `json:"nodes_quarantined"`
	CurrentEpoch     Epoch    `json:"current_epoch"`
	RequestsToday    int64    `json:"requests_today"`
	RequestsDate     string   `json:"requests_date"`
	Uptime24h        *float64 `json:"uptime_24h"`         // fraction of ok samples, 0…1
	P50LatencyMs24h  *float64 `json:"p50_latency_ms_24h"` // of ok samples
	Samples24h       int64    `json:"samples_24h"`
	ClaimsPaused     bool     `json:"claims_paused"`
	GeneratedAt      string   `json:"generated_at"`
}

func (s *Service) status(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	now := s.cfg.Now().UTC()
	var st Status
	st.GeneratedAt = now.Format(time.RFC3339)
	cur := events.EpochOf(now)
	start := time.Unix(cur*events.EpochSeconds, 0).UTC()
	st.CurrentEpoch = Epoch{ID: cur, State: "open", StartsAt: start.Format(time.RFC3339), EndsAt: start.Add(events.EpochSeconds * time.Second).Format(time.RFC3339)}
	var uptime, p50 *float64
	err := s.cfg.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM nodes WHERE status = 'online' AND url IS NOT NULL),
		(SELECT count(*) FROM nodes WHERE url IS NOT NULL AND status <> 'deregistered'),
		(SELECT COALESCE(sum(amount_units), 0) FROM revenue_events WHERE booked_epoch = $1)::bigint,
		(SELECT count(*) FROM health_samples WHERE at > $2),
		(SELECT avg(CASE WHEN ok THEN 1.0 ELSE 0.0 END)::float8 FROM health_samples WHERE at > $2),
		(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM health_samples WHERE at > $2 AND ok),
		(SELECT paused FROM claims_state WHERE id = 1),
		(SELECT count(*) FROM nodes WHERE status = 'quarantined')`, cur, now.Add(-24*time.Hour)).
		Scan(&st.NodesOnline, &st.NodesRegistered, &st.CurrentEpoch.RevenueSoFarUnits, &st.Samples24h, &uptime, &p50, &st.ClaimsPaused,
			&st.NodesQuarantined)
	if err != nil {
		unavailable(w, "the status")
		return
	}
	st.CurrentEpoch.RevenueSoFarUSDT = money.USDT(st.CurrentEpoch.RevenueSoFarUnits)
	st.Uptime24h, st.P50LatencyMs24h = uptime, p50
	st.RequestsDate = balances.DateOf(now)
	// Every shard counts the calls it metered: the day's total is their sum.
	l := balances.Layout{Prefix: s.cfg.Prefix, Shards: s.cfg.Shards}
	for i := range l.N() {
		n, err := s.cfg.Redis.Get(ctx, l.Shard(i).Requests(st.RequestsDate)).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			httpx.Error(w, http.StatusServiceUnavailable, "redis_unavailable", "the request counter could not be read")
			return
		}
		st.RequestsToday += n
	}
	httpx.JSON(w, http.StatusOK, st)
}

// page reads limit (1…max, default def) and an opaque cursor (a bigint).
func page(w http.ResponseWriter, r *http.Request, name string, def, maxN int) (limit int, cursor *int64, ok bool) {
	limit = def
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxN {
			httpx.Error(w, http.StatusBadRequest, "invalid_limit", "limit must be 1…"+strconv.Itoa(maxN))
			return 0, nil, false
		}
		limit = n
	}
	if v := r.URL.Query().Get(name); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		c, err2 := strconv.ParseInt(string(b), 10, 64)
		if err != nil || err2 != nil {
			httpx.Error(w, http.StatusBadRequest, "invalid_cursor", name+" is not a cursor this API returned")
			return 0, nil, false
		}
		cursor = &c
	}
	return limit, cursor, true
}

func cursorOf(v int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(v, 10)))
}

// nextCursor is a page's next_cursor: the cursor of its last row's id when
// the page is full (there may be more), else nil.
func nextCursor(rows []map[string]any, limit int) any {
	if len(rows) == limit {
		if n, ok := rows[len(rows)-1]["id"].(int64); ok {
			return cursorOf(n)
		}
	}
	return nil
}

// rowsJSON renders rows as objects keyed by column name; int64 columns
// named *_units also get a *_usdt sibling.
func rowsJSON(rows pgx.Rows) ([]map[string]any, error) {
	defer rows.Close()
	var out []map[string]any
	fields := rows.FieldDescriptions()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, len(vals))
		for i, f := range fields {
			v := vals[i]
			switch x := v.(type) {
			case time.Time:
				v = x.UTC().Format(time.RFC3339)
			case int64:
				if name, ok := strings.CutSuffix(f.Name, "_units"); ok {
					m[name+"_usdt"] = money.USDT(x)
					v = strconv.FormatInt(x, 10)
				}
			}
			m[f.Name] = v
		}
		out = append(out, m)
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out, rows.Err()
}

func (s *Service) query(ctx context.Context, q string, args ...any) ([]map[string]any, error) {
	rows, err := s.cfg.Pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return rowsJSON(rows)
}

const epochCols = `id, state, starts_at, ends_at, events, calls, total_units, node_units, operators_units, platform_units, platform_operators_units, pool_units,
	distributed_units, withheld_units, carry_in_units, carry_out_units, closed_at`

// economics: closed epochs newest first (cursor: epoch id) and the latest
// revenue events newest first (cursor: the last id; no account or payer
// identity).
func (s *Service) economics(w http.ResponseWriter, r *http.Request) {
	limit, cur, ok := page(w, r, "cursor", 20, 100)
	if !ok {
		return
	}
	elimit := 50
	if v := r.URL.Query().Get("events_limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			httpx.Error(w, http.StatusBadRequest, "invalid_limit", "events_limit must be 1…200")
			return
		}
		elimit = n
	}
	// Revenue events page by id through the primary key: ids are the
	// gateways' request ids, ULIDs, whose text order is their creation
	// time, so this is newest first by arrival (migration 0074 dropped the
	// (ts, id) index the ingest paid for on every row). A cursor is the
	// last id; one from before (ts|id) is still read, by its id.
	var ecID *string
	if v := r.URL.Query().Get("events_cursor"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		if i := bytes.LastIndexByte(b, '|'); i >= 0 {
			b = b[i+1:]
		}
		if err != nil || len(b) == 0 || len(b) > 128 || !httpx.StorableText(string(b)) {
			httpx.Error(w, http.StatusBadRequest, "invalid_cursor", "events_cursor is not a cursor this API returned")
			return
		}
		id := string(b)
		ecID = &id
	}
	ctx := r.Context()
	epochs, err := s.query(ctx, `SELECT `+epochCols+` FROM epochs WHERE state = 'CLOSED' AND ($1::bigint IS NULL OR id < $1)
		ORDER BY id DESC LIMIT $2`, cur, limit)
	if err != nil {
		unavailable(w, "epochs")
		return
	}
	rows, err := s.cfg.Pool.Query(ctx, `SELECT ts, id, epoch_id, booked_epoch, chain_id, payer, asset, amount_units, calls, upstream, node_id
		FROM revenue_events WHERE ($1::text IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`, ecID, elimit)
	if err != nil {
		unavailable(w, "revenue events")
		return
	}
	var evs []map[string]any
	var lastID string
	for rows.Next() {
		var ts time.Time
		var id, payer, asset, upstream string
		var epoch, booked, chainID, units int64
		var calls int32
		var node *string
		if err := rows.Scan(&ts, &id, &epoch, &booked, &chainID, &payer, &asset, &units, &calls, &upstream, &node); err != nil {
			rows.Close()
			unavailable(w, "revenue events")
			return
		}
		lastID = id
		evs = append(evs, map[string]any{"ts": ts.UTC().Format(time.RFC3339Nano), "epoch_id": epoch, "booked_epoch": booked, "chain_id": chainID,
			"payer": payer, "asset": asset, "amount_usdt": money.USDT(units), "amount_units": strconv.FormatInt(units, 10), "calls": calls,
			"upstream": upstream, "node_id": node})
	}
	rows.Close()
	if rows.Err() != nil {
		unavailable(w, "revenue events")
		return
	}
	if evs == nil {
		evs = []map[string]any{}
	}
	for _, e := range epochs {
		for _, k := range []string{"operators", "platform", "pool"} {
			e[k+"_share"] = map[string]int{"operators": 50, "platform": 30, "pool": 20}[k]
		}
	}
	body := map[string]any{"split_percent": map[string]int{"node_operators": 50, "platform": 30, "pool": 20},
		"epochs": epochs, "revenue_events": evs, "next_cursor": nextCursor(epochs, limit), "next_events_cursor": nil}
	if len(evs) == elimit {
		body["next_events_cursor"] = base64.RawURLEncoding.EncodeToString([]byte(lastID))
	}
	httpx.JSON(w, http.StatusOK, body)
}
