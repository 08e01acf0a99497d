package history

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/docs"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/claims"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/epochs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// world: a migrated database fed by the real ingester from a real Redis
// stream, and the history routes on an HTTP server.
type world struct {
	rdb    *redis.Client
	pool   *pgxpool.Pool
	stream string
	auth   *auth.Service
	srv    *httptest.Server
	now    time.Time
}

func newWorld(t *testing.T) *world {
	_, pool := settletest.DB(t)
	w := &world{rdb: testenv.Redis(t), pool: pool, stream: testenv.KeyPrefix(t) + "events", now: time.Now()}
	a, err := auth.New(auth.Config{Pool: pool, Secret: []byte("history-test-secret-0123456789abcdef"), Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := claims.New(claims.Config{Pool: pool, Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Pool: pool, Auth: a, Claims: cs, Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	reg := func(p string, h http.Handler) { mux.Handle(p, h) }
	s.Register(reg, reg)
	w.auth, w.srv = a, httptest.NewServer(mux)
	t.Cleanup(w.srv.Close)
	in, err := ingest.New(w.rdb, pool, ingest.Config{Stream: w.stream, Consumer: "t", Block: 50 * time.Millisecond, Batch: 37}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return w
}

// drained waits until everything XADDed so far is in Postgres.
func (w *world) drained(t *testing.T) {
	t.Helper()
	now, err := w.rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	settletest.Eventually(t, 30*time.Second, "stream ingested", func() (bool, error) {
		var low int64
		err := w.pool.QueryRow(context.Background(), `SELECT low_ms FROM ingest_watermark WHERE stream = $1`, w.stream).Scan(&low)
		return err == nil && low > now.UnixMilli(), nil
	})
}

// get asks path with one header ("Name: value", or none) and decodes the
// JSON answer.
func (w *world) get(t *testing.T, path string, header ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.srv.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("GET %s: %d %q is not JSON", path, resp.StatusCode, b)
	}
	checkOpenAPI(t, path, resp.StatusCode, b)
	return resp.StatusCode, m
}

var openapiDoc = sync.OnceValues(func() (*openapi3.T, error) { return openapi3.NewLoader().LoadFromData(docs.OpenAPI) })

// checkOpenAPI validates an answer against docs/openapi.yaml: its path,
// status and body schema must be documented.
func checkOpenAPI(t *testing.T, rawPath string, status int, body []byte) {
	t.Helper()
	doc, err := openapiDoc()
	if err != nil {
		t.Fatal(err)
	}
	p := strings.SplitN(rawPath, "?", 2)[0]
	tmpl := p
	if strings.HasPrefix(p, "/api/nodes/") && strings.HasSuffix(p, "/epochs") {
		tmpl = "/api/nodes/{id}/epochs"
	}
	item := doc.Paths.Value(tmpl)
	if item == nil || item.Get == nil {
		t.Fatalf("GET %s is not in docs/openapi.yaml", tmpl)
	}
	r := item.Get.Responses.Status(status)
	if r == nil || r.Value == nil {
		t.Fatalf("GET %s: status %d is not documented", tmpl, status)
	}
	var v any
	_ = json.Unmarshal(body, &v)
	if err := r.Value.Content.Get("application/json").Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Fatalf("GET %s %d does not match docs/openapi.yaml: %v\n%s", tmpl, status, err, body)
	}
}

func (w *world) bearer(t *testing.T, wallet string) []string {
	tok, _, err := w.auth.Issue(wallet)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"Authorization", "Bearer " + tok}
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

type cell struct {
	bucket, method, payer string
	chain                 int64
}

type tally struct{ requests, calls, units int64 }

func secretN(i int) string { return fmt.Sprintf("tg_%043d", i) }

// Key ids as the gateway makes them (key_ and a ULID).
var (
	keyA = "key_" + ulid.Make().String()
	keyB = "key_" + ulid.Make().String()
	keyC = "key_" + ulid.Make().String()
	keyX = "key_" + ulid.Make().String()
)

// TestKeyHistoryEqualsTheMix: a known mix of calls by two keys (credits and
// free, five methods, three chains, over yesterday and today, batches
// among them), plus anonymous free calls and another key's calls, goes
// through the real ingester twice (every entry redelivered); the history
// each key reads with its X-API-Key equals its own part of the mix exactly,
// per day and per hour, method, chain and payer, across pages; a key cannot
// read another key's history; a wallet's JWT reads its wallet-bound key and
// not another wallet's.
func TestKeyHistoryEqualsTheMix(t *testing.T) {
	w := newWorld(t)
	now := w.now.UTC()
	const walletC, walletD = "0x00000000000000000000000000000000000000c1", "0x00000000000000000000000000000000000000d1"
	keys := []struct {
		id, kind, wallet string
	}{{keyA, "api", ""}, {keyB, "api", ""}, {keyC, "wallet", walletC}}
	var evs []events.Event
	for i, k := range keys {
		evs = append(evs, &events.KeyCreated{KeyID: k.id, KeyHash: meter.HashKey(secretN(i)), Kind: events.KeyKind(k.kind), Tier: "free",
			Wallet: k.wallet, TimeMs: now.Add(-48 * time.Hour).UnixMilli()})
	}
	methods := []string{"eth_blockNumber", "eth_call", "eth_getLogs", "other", events.MethodBatch}
	chains := []uint64{137, 1, 8453}
	want := map[string]map[cell]tally{} // account → (day cell) → tally
	wantHour := map[string]map[cell]tally{}
	rng := rand.New(rand.NewPCG(20, 26))
	for i := range 600 {
		ts := now.Add(-time.Duration(rng.Int64N(int64(36 * time.Hour))))
		acct := []string{keyA, keyA, keyB, keyC, ""}[rng.IntN(5)]
		payer := events.PayerCredits
		if acct == "" || rng.IntN(4) == 0 {
			payer = events.PayerFree
		}
		m := methods[rng.IntN(len(methods))]
		calls := 1
		if m == events.MethodBatch {
			calls = 2 + rng.IntN(9)
		}
		var amount money.Units
		if payer == events.PayerCredits {
			amount = money.PricePerCall * money.Units(calls)
		}
		chain := chains[rng.IntN(len(chains))]
		evs = append(evs, &events.Revenue{ID: fmt.Sprintf("r%04d", i), TimeMs: ts.UnixMilli(), EpochID: events.EpochOf(ts), ChainID: chain, Method: m,
			Payer: payer, Account: acct, Asset: events.AssetUSDT, Amount: amount, Calls: calls, Upstream: "p"})
		if acct == "" {
			continue
		}
		ts = time.UnixMilli(ts.UnixMilli()).UTC()
		for _, g := range []struct {
			into   map[string]map[cell]tally
			bucket string
		}{{want, ts.Truncate(24 * time.Hour).Format(time.RFC3339)}, {wantHour, ts.Truncate(time.Hour).Format(time.RFC3339)}} {
			if g.into[acct] == nil {
				g.into[acct] = map[cell]tally{}
			}
			c := cell{g.bucket, m, string(payer), int64(chain)}
			v := g.into[acct][c]
			v.requests++
			v.calls += int64(calls)
			v.units += int64(amount)
			g.into[acct][c] = v
		}
	}
	settletest.XAdd(t, w.rdb, w.stream, evs...)
	settletest.XAdd(t, w.rdb, w.stream, evs...) // every entry delivered twice
	w.drained(t)

	// read pages through every row of one granularity.
	read := func(t *testing.T, query string, header ...string) (map[cell]tally, map[string]any) {
		t.Helper()
		got := map[cell]tally{}
		var first map[string]any
		cursor := ""
		for page := 0; ; page++ {
			q := query + "&limit=7"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			code, body := w.get(t, "/api/keys/history?"+q, header...)
			if code != http.StatusOK {
				t.Fatalf("history %s: %d %v", q, code, body)
			}
			if first == nil {
				first = body
			}
			for _, r := range body["rows"].([]any) {
				r := r.(map[string]any)
				c := cell{r["start"].(string), r["method"].(string), r["payer"].(string), int64(r["chain_id"].(float64))}
				if _, dup := got[c]; dup {
					t.Fatalf("row %v twice across pages", c)
				}
				units, _ := money.ParseUnits(r["spend_units"].(string))
				got[c] = tally{int64(r["requests"].(float64)), int64(r["calls"].(float64)), int64(units)}
			}
			next, _ := body["next_cursor"].(string)
			if next == "" {
				break
			}
			if page > 500 {
				t.Fatal("pagination does not end")
			}
			cursor = next
		}
		return got, first
	}
	equal := func(t *testing.T, what string, got, want map[cell]tally) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d cells, want %d", what, len(got), len(want))
		}
		for c, v := range want {
			if got[c] != v {
				t.Errorf("%s %+v: got %+v, want %+v", what, c, got[c], v)
			}
		}
	}
	for i, acct := range []string{keyA, keyB} {
		hdr := []string{"X-API-Key", secretN(i)}
		got, body := read(t, "granularity=day&days=3", hdr...)
		equal(t, acct+" per day", got, want[acct])
		gotH, _ := read(t, "granularity=hour&hours=48", hdr...)
		equal(t, acct+" per hour", gotH, wantHour[acct])
		// The totals and series add up to the same mix.
		var tot tally
		byDay := map[string]int64{}
		for c, v := range want[acct] {
			tot.requests += v.requests
			tot.calls += v.calls
			tot.units += v.units
			byDay[c.bucket] += v.calls
		}
		totals := body["totals"].(map[string]any)
		if int64(totals["calls"].(float64)) != tot.calls || int64(totals["requests"].(float64)) != tot.requests || totals["spend_units"] != fmt.Sprint(tot.units) {
			t.Errorf("%s totals %v, want %+v", acct, totals, tot)
		}
		for _, b := range body["series"].([]any) {
			b := b.(map[string]any)
			if int64(b["calls"].(float64)) != byDay[b["start"].(string)] {
				t.Errorf("%s series %v, want %d calls", acct, b, byDay[b["start"].(string)])
			}
			delete(byDay, b["start"].(string))
		}
		if len(byDay) != 0 {
			t.Errorf("%s: days missing from the series: %v", acct, byDay)
		}
		if body["key_id"] != acct {
			t.Errorf("key_id %v", body["key_id"])
		}
	}

	// A key cannot read another key's history, nor can a bad or no key.
	for _, c := range []struct {
		path   string
		header []string
		status int
		code   string
	}{
		{"/api/keys/history?key_id=" + keyB, []string{"X-API-Key", secretN(0)}, 403, "not_key_owner"},
		{"/api/keys/credits?key_id=" + keyB, []string{"X-API-Key", secretN(0)}, 403, "not_key_owner"},
		{"/api/keys/history", []string{"X-API-Key", secretN(99)}, 401, "invalid_api_key"},
		{"/api/keys/history", []string{"X-API-Key", "tg_short"}, 401, "invalid_api_key"},
		{"/api/keys/history", nil, 401, "missing_api_key"},
		{"/api/keys/history?granularity=week", []string{"X-API-Key", secretN(0)}, 400, "invalid_granularity"},
		{"/api/keys/history?days=91", []string{"X-API-Key", secretN(0)}, 400, "invalid_days"},
		{"/api/keys/history?cursor=!!", []string{"X-API-Key", secretN(0)}, 400, "invalid_cursor"},
		// Well formed, but a key field PostgreSQL cannot take as text.
		{"/api/keys/history?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("2026-11-26T00:00:00Z|137|eth_call|\xff")),
			[]string{"X-API-Key", secretN(0)}, 400, "invalid_cursor"},
		{"/api/keys/history?key_id=" + keyC, w.bearer(t, walletD), 403, "not_key_owner"},
		{"/api/keys/history", w.bearer(t, walletD), 404, "key_not_found"},
		{"/api/keys/history", []string{"Authorization", "Bearer nope"}, 401, "invalid_token"},
	} {
		code, body := w.get(t, c.path, c.header...)
		if code != c.status || errCode(body) != c.code {
			t.Errorf("%s %v: %d %v, want %d %s", c.path, c.header, code, body, c.status, c.code)
		}
	}
	// The wallet's JWT reads its wallet-bound key (named or not), exactly.
	for _, q := range []string{"granularity=day&days=3", "granularity=day&days=3&key_id=" + keyC} {
		got, _ := read(t, q, w.bearer(t, walletC)...)
		equal(t, "key_C by JWT", got, want[keyC])
	}
}

// TestKeyCredits: deposits (with their transaction) and admin credits of a
// key, newest first and paginated; never another key's.
func TestKeyCredits(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	now := w.now
	settletest.XAdd(t, w.rdb, w.stream,
		&events.KeyCreated{KeyID: keyA, KeyHash: meter.HashKey(secretN(0)), Kind: events.KeyAPI, Tier: "free", TimeMs: now.UnixMilli()},
		&events.KeyCreated{KeyID: keyB, KeyHash: meter.HashKey(secretN(1)), Kind: events.KeyAPI, Tier: "free", TimeMs: now.UnixMilli()},
		&events.Adjustment{ID: "adj1", Account: keyA, Units: 5 * money.Scale, Reason: "goodwill", TimeMs: now.Add(-time.Hour).UnixMilli()},
		&events.Adjustment{ID: "adj2", Account: keyB, Units: 7 * money.Scale, Reason: "other key", TimeMs: now.Add(-time.Hour).UnixMilli()},
		&events.Debit{ID: "d1", TimeMs: now.UnixMilli(), ChainID: 137, Payer: events.PayerCredits, Account: keyA, Asset: events.AssetUSDT, Amount: 30, Calls: 1},
	)
	w.drained(t)
	// Three deposits as the deposit listener books them: chain_deposits
	// row and the ledger credit in one transaction.
	for i := range 3 {
		tx := fmt.Sprintf("0x%064x", 0xdee0+i)
		if _, err := w.pool.Exec(ctx, `WITH d AS (INSERT INTO chain_deposits (chain_id, tx_hash, log_index, vault, block_number, block_hash, account_raw, account,
			from_addr, amount_raw, amount_units, state, block_time) VALUES (137, $1, 2, '0xv', $2, '0xh', '\x00', $4, '0xf', $3::bigint, $3::bigint, 'credited', now()) RETURNING 1)
			INSERT INTO account_ledger (account, kind, ref, units, ts) SELECT $4, 'deposit', $1 || ':2', $3::bigint, now() FROM d`, tx, 100+i, (i+1)*1_000_000, keyA); err != nil {
			t.Fatal(err)
		}
	}
	var seen []map[string]any
	cursor := ""
	for {
		p := "/api/keys/credits?limit=2"
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		code, body := w.get(t, p, "X-API-Key", secretN(0))
		if code != 200 {
			t.Fatalf("%s: %d %v", p, code, body)
		}
		for _, c := range body["credits"].([]any) {
			seen = append(seen, c.(map[string]any))
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 4 {
		t.Fatalf("%d credits, want 3 deposits and 1 adjustment: %v", len(seen), seen)
	}
	for i, want := range []string{"3", "2", "1"} {
		c := seen[i]
		if c["kind"] != "deposit" || fmt.Sprint(c["usdt"]) != want || c["tx_hash"] != fmt.Sprintf("0x%064x", 0xdee0+2-i) ||
			c["log_index"] != float64(2) || c["block_number"] != float64(102-i) || c["chain_id"] != float64(137) {
			t.Errorf("credit %d: %v", i, c)
		}
	}
	if c := seen[3]; c["kind"] != "adjustment" || c["reason"] != "goodwill" || c["units"] != "5000000" {
		t.Errorf("adjustment: %v", c)
	}
}

// TestOperatorSeesOnlyOwnNodes: two wallets' nodes serve calls; epochs
// close (the real closer); each wallet's overview lists its own nodes only,
// with served calls, probes, verification, earnings per day and per epoch
// that equal what the ledger holds; another wallet's node's epochs are 403.
func TestOperatorSeesOnlyOwnNodes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const w1, w2 = "0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2"
	nodes := map[string]string{"NODE-EU-AAAAAAAA": w1, "NODE-EU-BBBBBBBB": w1, "NODE-US-CCCCCCCC": w2}
	for id, wal := range nodes {
		if _, err := w.pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status) VALUES ($1, $2, 'eu', 'http://n/'||$1, '{137}', 'online')`, id, wal); err != nil {
			t.Fatal(err)
		}
	}
	// Probe samples: A good at 10 and 30 ms, one failure.
	for i, s := range []struct {
		ok bool
		ms float64
	}{{true, 10}, {true, 30}, {false, 5000}} {
		if _, err := w.pool.Exec(ctx, `INSERT INTO node_probe_samples (node_id, at, ok, latency_ms) VALUES ('NODE-EU-AAAAAAAA', now() - $1::int * interval '1 minute', $2, $3)`, i+1, s.ok, s.ms); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().Add(-3 * time.Minute)
	served := map[string]int64{}
	var evs []events.Event
	for i := range 90 {
		id := []string{"NODE-EU-AAAAAAAA", "NODE-EU-BBBBBBBB", "NODE-US-CCCCCCCC"}[i%3]
		ts := start.Add(time.Duration(i) * time.Second)
		evs = append(evs, &events.Revenue{ID: fmt.Sprintf("n%03d", i), TimeMs: ts.UnixMilli(), EpochID: events.EpochOf(ts), ChainID: 137, Method: "eth_call",
			Payer: events.PayerCredits, Account: keyX, Asset: events.AssetUSDT, Amount: money.PricePerCall, Calls: 1, Upstream: id, NodeID: id})
		served[id]++
	}
	settletest.XAdd(t, w.rdb, w.stream, evs...)
	w.drained(t)
	closer := &epochs.Closer{Pool: w.pool, Grace: time.Second, Stream: w.stream}
	if err := closer.Run(ctx); err != nil {
		t.Fatal(err)
	}

	for wallet, mine := range map[string][]string{w1: {"NODE-EU-AAAAAAAA", "NODE-EU-BBBBBBBB"}, w2: {"NODE-US-CCCCCCCC"}} {
		code, body := w.get(t, "/api/nodes/overview?days=2", w.bearer(t, wallet)...)
		if code != 200 {
			t.Fatalf("overview: %d %v", code, body)
		}
		list := body["nodes"].([]any)
		if len(list) != len(mine) {
			t.Fatalf("%s sees %d nodes, want %v", wallet, len(list), mine)
		}
		for i, n := range list {
			n := n.(map[string]any)
			id := n["node_id"].(string)
			if id != mine[i] {
				t.Fatalf("%s sees %s, want %s", wallet, id, mine[i])
			}
			var earned, shares, epochCalls int64
			if err := w.pool.QueryRow(ctx, `SELECT COALESCE((SELECT sum(amount_units) FROM node_earnings WHERE node_id = $1), 0)::bigint,
				COALESCE((SELECT sum(share_units) FROM epoch_node_shares WHERE node_id = $1), 0)::bigint,
				COALESCE((SELECT sum(calls) FROM epoch_node_shares WHERE node_id = $1), 0)::bigint`, id).Scan(&earned, &shares, &epochCalls); err != nil {
				t.Fatal(err)
			}
			if earned == 0 || epochCalls != served[id] {
				t.Fatalf("%s: the closer credited %d units for %d calls, want %d calls", id, earned, epochCalls, served[id])
			}
			sv := n["served"].(map[string]any)
			if int64(sv["calls"].(float64)) != served[id] || int64(sv["calls_24h"].(float64)) != served[id] {
				t.Errorf("%s served %v, want %d", id, sv, served[id])
			}
			var dayEarned, dayCalls int64
			for _, d := range n["daily"].([]any) {
				d := d.(map[string]any)
				u, _ := money.ParseUnits(d["earned_units"].(string))
				dayEarned += int64(u)
				dayCalls += int64(d["calls"].(float64))
			}
			var epEarned, epCalls int64
			for _, e := range n["epochs"].([]any) {
				e := e.(map[string]any)
				u, _ := money.ParseUnits(e["share_units"].(string))
				epEarned += int64(u)
				epCalls += int64(e["calls"].(float64))
			}
			if dayEarned != earned || dayCalls != served[id] || epEarned != shares || epCalls != served[id] {
				t.Errorf("%s: per day %d units %d calls, per epoch %d units %d calls; ledger %d, shares %d, served %d",
					id, dayEarned, dayCalls, epEarned, epCalls, earned, shares, served[id])
			}
			e := n["earnings"].(map[string]any)
			if e["total_earned_units"] != fmt.Sprint(earned) {
				t.Errorf("%s earnings %v, want %d", id, e, earned)
			}
			if v := n["verification"].(map[string]any); v["quarantined"] != false {
				t.Errorf("%s verification %v", id, v)
			}
			pr := n["probes"].(map[string]any)
			if id == "NODE-EU-AAAAAAAA" {
				if pr["samples_24h"] != float64(3) || pr["p50_latency_ms_24h"] != float64(20) || fmt.Sprintf("%.4f", pr["uptime_24h"]) != "0.6667" {
					t.Errorf("probes %v", pr)
				}
			} else if pr["samples_24h"] != float64(0) || pr["uptime_24h"] != nil {
				t.Errorf("%s probes %v", id, pr)
			}
		}
	}
	// Another wallet's node: 403; its own: paginated epochs.
	if code, body := w.get(t, "/api/nodes/NODE-US-CCCCCCCC/epochs", w.bearer(t, w1)...); code != 403 || errCode(body) != "not_node_owner" {
		t.Errorf("another wallet's epochs: %d %v", code, body)
	}
	if code, body := w.get(t, "/api/nodes/overview", "Authorization", "Bearer x"); code != 401 {
		t.Errorf("overview without a valid token: %d %v", code, body)
	}
	var total int64
	cursor, pages := "", 0
	for {
		p := "/api/nodes/NODE-EU-AAAAAAAA/epochs?limit=1"
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		code, body := w.get(t, p, w.bearer(t, w1)...)
		if code != 200 {
			t.Fatalf("%s: %d %v", p, code, body)
		}
		pages++
		for _, e := range body["epochs"].([]any) {
			total += int64(e.(map[string]any)["calls"].(float64))
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if total != served["NODE-EU-AAAAAAAA"] || pages < 2 {
		t.Errorf("epochs pages: %d calls over %d pages, want %d", total, pages, served["NODE-EU-AAAAAAAA"])
	}
}
