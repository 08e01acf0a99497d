package history

// A key's usage history and credits: GET /api/keys/history and
// GET /api/keys/credits.

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// Key is the key a history request reads: its own (X-API-Key) or one bound
// to the JWT's wallet.
type Key struct {
	ID     string
	Kind   string
	Wallet string // lower-case 0x wallet the key is bound to; "" when none
}

var (
	errNoCredentials = &apiError{http.StatusUnauthorized, "missing_api_key", "send your API key in the X-API-Key header, or the wallet's Authorization: Bearer <JWT> for a wallet-bound key"}
	errMalformedKey  = &apiError{http.StatusUnauthorized, "invalid_api_key", "X-API-Key is not a Tollgate API key (tg_ followed by 43 letters and digits)"}
	errUnknownKey    = &apiError{http.StatusUnauthorized, "invalid_api_key", "unknown API key"}
	errRevokedKey    = &apiError{http.StatusUnauthorized, "revoked_api_key", "this API key has been revoked"}
	errBadToken      = &apiError{http.StatusUnauthorized, "invalid_token", "the token is invalid or expired; log in again"}
	errOtherKey      = &apiError{http.StatusForbidden, "not_key_owner", "an API key reads only its own history"}
	errNotWallets    = &apiError{http.StatusForbidden, "not_key_owner", "this key is not bound to the token's wallet"}
	errNoWalletKey   = &apiError{http.StatusNotFound, "key_not_found", "this wallet has no wallet-bound key; create one with POST /api/keys/wallet"}
	errBadKeyID      = &apiError{http.StatusBadRequest, "invalid_key_id", "key_id is not a key id (key_…)"}
)

// Authenticate finds the key a request may read. With X-API-Key it is that
// key (a key_id naming another key is 403); with a wallet JWT it is key_id
// if that key is bound to the wallet, else the wallet's active wallet key.
// A key found by the JWT may be revoked (its history stays the wallet's).
func (s *Service) Authenticate(ctx context.Context, r *http.Request) (*Key, error) {
	want := r.URL.Query().Get("key_id")
	if want != "" && (!strings.HasPrefix(want, "key_") || len(want) > 64) {
		return nil, errBadKeyID
	}
	if secret, ok := r.Header[http.CanonicalHeaderKey("X-API-Key")]; ok {
		v := ""
		if len(secret) > 0 {
			v = strings.TrimSpace(secret[0])
		}
		if v == "" {
			return nil, errNoCredentials
		}
		if !meter.WellFormedKey(v) {
			return nil, errMalformedKey
		}
		var k Key
		var revoked *time.Time
		err := s.cfg.Pool.QueryRow(ctx, `SELECT key_id, COALESCE(kind, ''), COALESCE(lower(wallet), ''), revoked_at FROM api_keys WHERE key_hash = $1`,
			meter.HashKey(v)).Scan(&k.ID, &k.Kind, &k.Wallet, &revoked)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil, errUnknownKey
		case err != nil:
			return nil, err
		case revoked != nil:
			return nil, errRevokedKey
		case want != "" && want != k.ID:
			return nil, errOtherKey
		}
		return &k, nil
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(tok) == "" {
		return nil, errNoCredentials
	}
	wallet, err := s.cfg.Auth.Wallet(strings.TrimSpace(tok))
	if err != nil {
		return nil, errBadToken
	}
	var k Key
	if want != "" {
		err = s.cfg.Pool.QueryRow(ctx, `SELECT key_id, COALESCE(kind, ''), COALESCE(lower(wallet), '') FROM api_keys WHERE key_id = $1`, want).
			Scan(&k.ID, &k.Kind, &k.Wallet)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil, errNotWallets // the same answer as another wallet's key: ids are not probed
		case err != nil:
			return nil, err
		case k.Wallet == "" || k.Wallet != wallet:
			return nil, errNotWallets
		}
		return &k, nil
	}
	err = s.cfg.Pool.QueryRow(ctx, `SELECT key_id, kind, lower(wallet) FROM api_keys
		WHERE lower(wallet) = $1 AND kind = 'wallet' AND key_hash IS NOT NULL AND revoked_at IS NULL
		ORDER BY created_at DESC, key_id DESC LIMIT 1`, wallet).Scan(&k.ID, &k.Kind, &k.Wallet)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoWalletKey
	}
	return &k, err
}

// accounts are the rollup accounts of a key: its id, and for a bundle key
// the wallet whose bundle it draws on (bundle calls are booked to the
// wallet).
func (k *Key) bundleWallet() string {
	if k.Kind == "bundle" {
		return k.Wallet
	}
	return ""
}

// Amount is a money amount in both forms the API uses.
type Amount struct {
	Units money.Units `json:"spend_units,string"`
	USDT  money.USDT  `json:"spend_usdt"`
}

func amount(u int64) Amount { return Amount{money.Units(u), money.USDT(u)} }

// Counts are requests (a batch is one), calls and what they cost.
type Counts struct {
	Requests int64 `json:"requests"`
	Calls    int64 `json:"calls"`
	Amount
}

// Bucket is one hour or UTC day of a key's usage.
type Bucket struct {
	Start string `json:"start"` // RFC 3339, UTC
	Counts
}

// Row is one bucket's usage on one chain, method and payer.
type Row struct {
	Start   string `json:"start"`
	ChainID int64  `json:"chain_id"`
	Method  string `json:"method"` // the gateway's bounded label ("" for events older than the field)
	Payer   string `json:"payer"`  // credits | free | bundle
	Counts
}

// ChainTotal, MethodTotal and PayerTotal are the window's totals.
type ChainTotal struct {
	ChainID int64 `json:"chain_id"`
	Counts
}

// MethodTotal is the window's total of one method label.
type MethodTotal struct {
	Method string `json:"method"`
	Counts
}

// PayerTotal is the window's total of one payer kind.
type PayerTotal struct {
	Payer string `json:"payer"`
	Counts
}

// Usage is the GET /api/keys/history answer.
type Usage struct {
	KeyID       string        `json:"key_id"`
	Granularity string        `json:"granularity"` // day | hour
	From        string        `json:"from"`        // first bucket's start (inclusive)
	To          string        `json:"to"`          // end of the window (exclusive)
	Totals      Counts        `json:"totals"`
	Series      []Bucket      `json:"series"` // buckets with usage, oldest first
	ByChain     []ChainTotal  `json:"by_chain"`
	ByMethod    []MethodTotal `json:"by_method"`
	ByPayer     []PayerTotal  `json:"by_payer"`
	Rows        []Row         `json:"rows"` // newest bucket first; a page of at most limit
	NextCursor  *string       `json:"next_cursor"`
}

// window is a granularity's table and bucket column (fixed strings, never
// from the request) and the bucket range.
type window struct {
	gran, table, col string
	from, to         time.Time
}

func (s *Service) window(r *http.Request) (*window, error) {
	now := s.cfg.Now().UTC()
	switch g := r.URL.Query().Get("granularity"); g {
	case "", "day":
		n, err := intParam(r, "days", DefaultDays, MaxDays)
		if err != nil {
			return nil, err
		}
		to := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
		return &window{"day", "usage_daily", "day", to.AddDate(0, 0, -n), to}, nil
	case "hour":
		n, err := intParam(r, "hours", DefaultHours, MaxHours)
		if err != nil {
			return nil, err
		}
		to := now.Truncate(time.Hour).Add(time.Hour)
		return &window{"hour", "usage_hourly", "hour", to.Add(-time.Duration(n) * time.Hour), to}, nil
	default:
		return nil, &apiError{http.StatusBadRequest, "invalid_granularity", "granularity is day or hour"}
	}
}

// bucketTime reads a bucket column (date for days, timestamptz for hours)
// as its UTC start.
func bucketTime(v time.Time) time.Time {
	return time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), 0, 0, 0, time.UTC)
}

// History reads key k's usage in the request's window.
func (s *Service) History(ctx context.Context, r *http.Request, k *Key) (*Usage, error) {
	win, err := s.window(r)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(r, "limit", DefaultRows, MaxRows)
	if err != nil {
		return nil, err
	}
	var after []any
	if c := r.URL.Query().Get("cursor"); c != "" {
		p, err := decodeCursor(c, 4)
		if err != nil {
			return nil, err
		}
		t, err1 := time.Parse(time.RFC3339, p[0])
		chain, err2 := strconv.ParseInt(p[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, &apiError{http.StatusBadRequest, "invalid_cursor", "cursor is not a cursor this API returned"}
		}
		after = []any{t, chain, p[2], p[3]}
	}
	u := &Usage{KeyID: k.ID, Granularity: win.gran, From: rfc3339(win.from), To: rfc3339(win.to),
		Series: []Bucket{}, ByChain: []ChainTotal{}, ByMethod: []MethodTotal{}, ByPayer: []PayerTotal{}, Rows: []Row{}}
	// The bucket bounds as the column's type: a date for days.
	from, to := any(win.from), any(win.to)
	if win.col == "day" {
		from, to = win.from.Format(time.DateOnly), win.to.Format(time.DateOnly)
	}
	where := ` FROM ` + win.table + ` WHERE (account = $1 OR (account = $2 AND payer = 'bundle'))
		AND ` + win.col + ` >= $3::` + colType(win.col) + ` AND ` + win.col + ` < $4::` + colType(win.col)
	args := []any{k.ID, k.bundleWallet(), from, to}

	// The totals and the page of rows come from one snapshot: read
	// separately, an ingest committing between them made the totals
	// disagree with the rows (seen: a page showing 20 calls in a row and 19
	// in the totals).
	tx, err := s.cfg.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(ctx) }()

	// Series and totals in one pass over the window (GROUPING SETS).
	rows, err := tx.Query(ctx, `SELECT GROUPING(`+win.col+`, chain_id, method, payer), `+win.col+`, chain_id, method, payer,
		sum(requests)::bigint, sum(calls)::bigint, sum(amount_units)::bigint`+where+`
		GROUP BY GROUPING SETS ((`+win.col+`), (chain_id), (method), (payer), ())
		ORDER BY 1, 2, 3, 4, 5`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			g              int32
			bucket         *time.Time
			chain          *int64
			method, payer  *string
			req, calls, am int64
		)
		if err := rows.Scan(&g, &bucket, &chain, &method, &payer, &req, &calls, &am); err != nil {
			rows.Close()
			return nil, err
		}
		c := Counts{req, calls, amount(am)}
		switch {
		case bucket != nil:
			u.Series = append(u.Series, Bucket{rfc3339(bucketTime(*bucket)), c})
		case chain != nil:
			u.ByChain = append(u.ByChain, ChainTotal{*chain, c})
		case method != nil:
			u.ByMethod = append(u.ByMethod, MethodTotal{*method, c})
		case payer != nil:
			u.ByPayer = append(u.ByPayer, PayerTotal{*payer, c})
		default:
			u.Totals = c
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// The breakdown, a keyset page (newest bucket first).
	q := `SELECT ` + win.col + `, chain_id, method, payer, requests, calls, amount_units` + where
	if after != nil {
		bucket := any(after[0])
		if win.col == "day" {
			bucket = after[0].(time.Time).Format(time.DateOnly)
		}
		q += ` AND (` + win.col + `, chain_id, method, payer) < ($5::` + colType(win.col) + `, $6::bigint, $7::text, $8::text)`
		args = append(args, bucket, after[1], after[2], after[3])
	}
	q += ` ORDER BY ` + win.col + ` DESC, chain_id DESC, method DESC, payer DESC LIMIT ` + strconv.Itoa(limit+1)
	rows, err = tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			bucket         time.Time
			row            Row
			req, calls, am int64
		)
		if err := rows.Scan(&bucket, &row.ChainID, &row.Method, &row.Payer, &req, &calls, &am); err != nil {
			return nil, err
		}
		row.Start, row.Counts = rfc3339(bucketTime(bucket)), Counts{req, calls, amount(am)}
		u.Rows = append(u.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(u.Rows) > limit {
		u.Rows = u.Rows[:limit]
		last := u.Rows[limit-1]
		c := encodeCursor(last.Start, strconv.FormatInt(last.ChainID, 10), last.Method, last.Payer)
		u.NextCursor = &c
	}
	return u, nil
}

func colType(col string) string {
	if col == "day" {
		return "date"
	}
	return "timestamptz"
}

func (s *Service) keyHistory(w http.ResponseWriter, r *http.Request) {
	k, err := s.Authenticate(r.Context(), r)
	if err != nil {
		fail(w, s.cfg.Log, "the key", err)
		return
	}
	u, err := s.History(r.Context(), r, k)
	if err != nil {
		fail(w, s.cfg.Log, "the usage history", err)
		return
	}
	writeJSON(w, u)
}

// Credit is one entry that added to a key's balance: a deposit (with its
// transaction), an operator's adjustment, or an x402 bundle grant.
type Credit struct {
	ID          string      `json:"id"`   // opaque, stable
	Kind        string      `json:"kind"` // deposit | adjustment | bundle_grant
	Units       money.Units `json:"units,string"`
	USDT        money.USDT  `json:"usdt"`
	Calls       int64       `json:"calls"` // bundle calls granted (0 otherwise)
	At          string      `json:"at"`
	TxHash      *string     `json:"tx_hash"`      // deposit or bundle settlement transaction
	LogIndex    *int32      `json:"log_index"`    // deposits: the Deposited log
	ChainID     *int64      `json:"chain_id"`     // deposits
	BlockNumber *int64      `json:"block_number"` // deposits
	Reason      *string     `json:"reason"`       // adjustments
}

// Credits is the GET /api/keys/credits answer.
type Credits struct {
	KeyID      string   `json:"key_id"`
	Credits    []Credit `json:"credits"` // newest first
	NextCursor *string  `json:"next_cursor"`
}

// CreditsOf lists key k's credits newest first (the ledger's partial index
// account_ledger_credits: a key's debits are never read).
func (s *Service) CreditsOf(ctx context.Context, r *http.Request, k *Key) (*Credits, error) {
	limit, err := intParam(r, "limit", 20, MaxCredits)
	if err != nil {
		return nil, err
	}
	var before *int64
	if c := r.URL.Query().Get("cursor"); c != "" {
		p, err := decodeCursor(c, 1)
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(p[0], 10, 64)
		if err != nil {
			return nil, &apiError{http.StatusBadRequest, "invalid_cursor", "cursor is not a cursor this API returned"}
		}
		before = &v
	}
	accounts := []string{k.ID}
	if w := k.bundleWallet(); w != "" {
		accounts = append(accounts, w)
	}
	rows, err := s.cfg.Pool.Query(ctx, `SELECT l.id, l.kind, l.units, l.calls, l.ts,
		CASE WHEN l.kind = 'deposit' THEN split_part(l.ref, ':', 1) WHEN l.kind = 'bundle_grant' THEN l.ref END,
		d.log_index, d.chain_id, d.block_number, a.reason
		FROM account_ledger l
		LEFT JOIN LATERAL (SELECT log_index, chain_id, block_number FROM chain_deposits
			WHERE l.kind = 'deposit' AND tx_hash = split_part(l.ref, ':', 1) AND log_index::text = split_part(l.ref, ':', 2) LIMIT 1) d ON true
		LEFT JOIN adjustments a ON l.kind = 'adjustment' AND a.id = l.ref
		WHERE l.account = ANY($1) AND l.kind IN ('deposit', 'adjustment', 'bundle_grant') AND ($2::bigint IS NULL OR l.id < $2)
		ORDER BY l.id DESC LIMIT $3`, accounts, before, limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := &Credits{KeyID: k.ID, Credits: []Credit{}}
	var lastID int64
	for rows.Next() {
		var (
			c     Credit
			id    int64
			units int64
			at    time.Time
		)
		if err := rows.Scan(&id, &c.Kind, &units, &c.Calls, &at, &c.TxHash, &c.LogIndex, &c.ChainID, &c.BlockNumber, &c.Reason); err != nil {
			return nil, err
		}
		if len(out.Credits) == limit {
			cur := encodeCursor(strconv.FormatInt(lastID, 10))
			out.NextCursor = &cur
			break
		}
		c.ID, c.Units, c.USDT, c.At = strconv.FormatInt(id, 10), money.Units(units), money.USDT(units), rfc3339(at)
		out.Credits = append(out.Credits, c)
		lastID = id
	}
	return out, rows.Err()
}

func (s *Service) keyCredits(w http.ResponseWriter, r *http.Request) {
	k, err := s.Authenticate(r.Context(), r)
	if err != nil {
		fail(w, s.cfg.Log, "the key", err)
		return
	}
	c, err := s.CreditsOf(r.Context(), r, k)
	if err != nil {
		fail(w, s.cfg.Log, "the credits", err)
		return
	}
	writeJSON(w, c)
}
