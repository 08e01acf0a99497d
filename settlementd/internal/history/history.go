// Package history is what people read about their own money over time:
// a key's usage history (calls and spend per UTC day or hour by
// chain, method and payer) and its credits with their transactions, and a
// node operator's nodes with their traffic, probes, verification state and
// earnings per day and per epoch.
//
// Every read is bounded and cheap: usage comes from the rollups the ingest
// writes in the same statement as the revenue events (usage_hourly,
// usage_daily, node_usage_hourly; migration 0046), never from a scan of
// revenue_events; lists are keyset-paginated.
//
// Who may read what: a key's history with its own X-API-Key (through the
// gateway, which passes /api/keys/history and /api/keys/credits on to
// settlementd), or with the JWT of the wallet a wallet-bound key belongs to;
// a wallet's nodes with that wallet's JWT only.
package history

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/claims"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
)

// Bounds of the reads.
const (
	MaxDays        = 90   // day granularity: at most 90 UTC days
	DefaultDays    = 30   //
	MaxHours       = 168  // hour granularity: at most a week of hours
	DefaultHours   = 48   //
	MaxRows        = 1000 // breakdown rows per page
	DefaultRows    = 500  //
	MaxCredits     = 100  // credit entries per page
	MaxNodes       = 50   // nodes per overview page
	DefaultNodes   = 20   //
	MaxEpochs      = 500  // epochs per page of a node's epochs
	DefaultEpochs  = 60   //
	OverviewEpochs = 60   // the latest epochs in the overview (an hour)
)

// Config of the service.
type Config struct {
	Pool   *pgxpool.Pool
	Auth   *auth.Service   // checks the wallet JWT
	Claims *claims.Service // a node's claimed and claimable
	Now    func() time.Time
	Log    *zap.Logger
}

// Service answers the history routes.
type Service struct{ cfg Config }

// New checks the config.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil || cfg.Auth == nil || cfg.Claims == nil {
		return nil, errors.New("history: pool, auth and claims are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Service{cfg: cfg}, nil
}

// Register adds the key routes (X-API-Key or JWT) and the operator routes
// (JWT). operator is the handle the JWT-only routes go through (it answers
// 503 when wallet login is not configured).
func (s *Service) Register(handle, operator func(string, http.Handler)) {
	handle("GET /api/keys/history", http.HandlerFunc(s.keyHistory))
	handle("GET /api/keys/credits", http.HandlerFunc(s.keyCredits))
	operator("GET /api/nodes/overview", s.cfg.Auth.Require(s.overview))
	operator("GET /api/nodes/{id}/epochs", s.cfg.Auth.Require(s.nodeEpochs))
}

type apiError struct {
	status     int
	code, text string
}

func (e *apiError) Error() string { return e.text }

func fail(w http.ResponseWriter, log *zap.Logger, what string, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.status == http.StatusUnauthorized && strings.Contains(ae.code, "key") {
			w.Header().Set("WWW-Authenticate", `APIKey header="X-API-Key"`)
		}
		httpx.Error(w, ae.status, ae.code, ae.text)
		return
	}
	log.Error(what+" failed", zap.Error(err))
	httpx.Error(w, http.StatusServiceUnavailable, "database_unavailable", what+" could not be read; try again")
}

// intParam reads an integer query parameter in [1, maxN] (def when absent).
func intParam(r *http.Request, name string, def, maxN int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxN {
		return 0, &apiError{http.StatusBadRequest, "invalid_" + name, name + " must be an integer 1…" + strconv.Itoa(maxN)}
	}
	return n, nil
}

// Cursors are opaque: base64url of the keyset fields joined by "|".
func encodeCursor(parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Join(parts, "|")))
}

func decodeCursor(v string, n int) ([]string, error) {
	bad := &apiError{http.StatusBadRequest, "invalid_cursor", "cursor is not a cursor this API returned"}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(string(b), "|")
	if len(parts) != n || !httpx.StorableText(string(b)) {
		return nil, bad
	}
	return parts, nil
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func writeJSON(w http.ResponseWriter, v any) { httpx.JSON(w, http.StatusOK, v) }
