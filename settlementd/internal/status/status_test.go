package status

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"go.uber.org/zap/zaptest"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

func serve(t *testing.T, cfg Config) string {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func call(t *testing.T, method, url string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// Without samples uptime and p50 are null; requests_today is the gateway's
// counter of the UTC day; with samples they are the 24 h figures.
func TestStatusSamplesAndCounter(t *testing.T) {
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	now := time.Date(2026, 11, 21, 23, 59, 30, 0, time.UTC)
	url := serve(t, Config{Pool: pool, Redis: rdb, Prefix: prefix, Now: func() time.Time { return now }})
	code, st := call(t, "GET", url+"/api/status")
	if code != 200 || st["uptime_24h"] != nil || st["p50_latency_ms_24h"] != nil || st["requests_today"].(float64) != 0 {
		t.Fatalf("empty status: %d %v", code, st)
	}
	ep := st["current_epoch"].(map[string]any)
	if ep["starts_at"] != "2026-11-21T23:59:00Z" || ep["ends_at"] != "2026-11-22T00:00:00Z" || ep["state"] != "open" {
		t.Fatalf("epoch %v", ep)
	}
	layout := balances.Layout{Prefix: prefix}
	rdb.Set(context.Background(), layout.Requests("2026-11-21"), 42, 0)
	rdb.Set(context.Background(), layout.Requests("2026-11-20"), 7, 0)
	// Three samples in the window (one failed), one older than 24 h.
	for _, s := range []struct {
		ago time.Duration
		ok  bool
		ms  float64
	}{{time.Hour, true, 10}, {2 * time.Hour, true, 30}, {3 * time.Hour, false, 5000}, {25 * time.Hour, false, 1}} {
		if _, err := pool.Exec(context.Background(), `INSERT INTO health_samples (at, ok, latency_ms) VALUES ($1, $2, $3)`, now.Add(-s.ago), s.ok, s.ms); err != nil {
			t.Fatal(err)
		}
	}
	_, st = call(t, "GET", url+"/api/status")
	if st["requests_today"].(float64) != 42 || st["samples_24h"].(float64) != 3 || st["p50_latency_ms_24h"].(float64) != 20 ||
		st["uptime_24h"].(float64) < 0.66 || st["uptime_24h"].(float64) > 0.67 {
		t.Fatalf("status %v", st)
	}
}

// /admin/* does not exist without a token, refuses a wrong one, and pauses
// and unpauses claims off chain when no solvency checker is configured.
func TestAdminGate(t *testing.T) {
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	off := serve(t, Config{Pool: pool, Redis: rdb})
	for _, p := range []string{"/admin/claims/pause", "/admin/claims/unpause", "/admin/settlement/run"} {
		if code, _ := call(t, "POST", off+p, "X-Admin-Token: x"); code != 404 {
			t.Fatalf("%s without a configured token: %d", p, code)
		}
	}
	// Unconfigured, even an empty token (whose sum is a real value) opens nothing.
	if code, m := call(t, "GET", off+"/admin/epochs", "X-Admin-Token: "); code != 404 || errCode(m) != "not_found" {
		t.Fatalf("empty token, none configured: %d %v", code, m)
	}
	on := serve(t, Config{Pool: pool, Redis: rdb, AdminToken: "secret-token"})
	if code, _ := call(t, "GET", on+"/admin/epochs", "X-Admin-Token: secret-tokeN"); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	// Shorter, longer and missing tokens get the same JSON refusal.
	for _, h := range []string{"X-Admin-Token: secret-toke", "X-Admin-Token: secret-token-", "X-Other: secret-token"} {
		if code, m := call(t, "GET", on+"/admin/epochs", h); code != 401 || errCode(m) != "invalid_admin_token" {
			t.Fatalf("%s: %d %v", h, code, m)
		}
	}
	if code, m := call(t, "POST", on+"/admin/claims/pause", "X-Admin-Token: secret-token"); code != 200 || m["claims"].(map[string]any)["paused"] != true {
		t.Fatalf("pause: %d %v", code, m)
	}
	if code, m := call(t, "POST", on+"/admin/claims/unpause", "X-Admin-Token: secret-token"); code != 200 || m["claims"].(map[string]any)["paused"] != false {
		t.Fatalf("unpause: %d %v", code, m)
	}
	if code, m := call(t, "POST", on+"/admin/settlement/run", "X-Admin-Token: secret-token"); code != 503 {
		t.Fatalf("settlement run without the job: %d %v", code, m)
	}
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// The admin economics list pages revenue events newest first by id (the
// gateways' ULID request ids, in creation order) through the primary key:
// every event once, in order, across pages; a cursor from before the change
// (ts|id) still continues after its id; a cursor that is not one is 400.
func TestEconomicsPagesRevenueEventsNewestFirst(t *testing.T) {
	_, pool := settletest.DB(t)
	url := serve(t, Config{Pool: pool, Redis: testenv.Redis(t)})
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 11 {
		at := start.Add(time.Duration(i) * 1500 * time.Millisecond)
		id := ulid.MustNew(ulid.Timestamp(at), rand.Reader).String()
		ids = append(ids, id)
		// ts (when the call was served) runs against the ids here: the
		// order is the ids'.
		if _, err := pool.Exec(context.Background(), `INSERT INTO revenue_events (id, ts, epoch_id, booked_epoch, chain_id, payer, asset, amount_units, calls, upstream)
			VALUES ($1, $2, 1, 1, 137, 'free', 'USDT', 0, 1, 'alpha')`, id, start.Add(-time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	slices.Reverse(ids)
	var got []string
	cursor := ""
	for page := 0; ; page++ {
		q := url + "/api/admin/economics?events_limit=4"
		if cursor != "" {
			q += "&events_cursor=" + cursor
		}
		code, m := call(t, "GET", q)
		if code != 200 || page > 5 {
			t.Fatalf("page %d: %d %v", page, code, m)
		}
		for _, e := range m["revenue_events"].([]any) {
			ts := e.(map[string]any)["ts"].(string)
			var id string
			if err := pool.QueryRow(context.Background(), `SELECT id FROM revenue_events WHERE ts = $1`, ts).Scan(&id); err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		next, _ := m["next_events_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("events in the order\n%v\nwant\n%v", got, ids)
	}
	old := base64.RawURLEncoding.EncodeToString([]byte(start.Format(time.RFC3339Nano) + "|" + ids[3]))
	if code, m := call(t, "GET", url+"/api/admin/economics?events_limit=1&events_cursor="+old); code != 200 ||
		len(m["revenue_events"].([]any)) != 1 || m["revenue_events"].([]any)[0].(map[string]any)["ts"] != tsOf(t, pool, ids[4]) {
		t.Fatalf("an old cursor: %d %v", code, m)
	}
	for _, bad := range []string{"@@", base64.RawURLEncoding.EncodeToString([]byte("x|")), base64.RawURLEncoding.EncodeToString([]byte("\xff\xfe")),
		base64.RawURLEncoding.EncodeToString([]byte("01K\x00")), base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("9", 129)))} {
		if code, m := call(t, "GET", url+"/api/admin/economics?events_cursor="+bad); code != 400 || errCode(m) != "invalid_cursor" {
			t.Fatalf("cursor %q: %d %v", bad, code, m)
		}
	}
}

func tsOf(t *testing.T, pool *pgxpool.Pool, id string) string {
	t.Helper()
	var ts time.Time
	if err := pool.QueryRow(context.Background(), `SELECT ts FROM revenue_events WHERE id = $1`, id).Scan(&ts); err != nil {
		t.Fatal(err)
	}
	return ts.UTC().Format(time.RFC3339Nano)
}

// Dead letters are listed and replayed: a parked entry's fields go back on
// the stream as they were, the row records when and as which entry, a
// second replay does nothing, an entry whose content is gone is skipped,
// and ids that are not there are said so.
func TestDeadLettersReplay(t *testing.T) {
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	url := serve(t, Config{Pool: pool, Redis: rdb, Prefix: prefix, AdminToken: "tok", Log: zaptest.NewLogger(t)})
	admin := "X-Admin-Token: tok"
	ctx := context.Background()
	// What a settlementd from before packing parked: a packed entry.
	packed := map[string]any{"t": "revenue", "v": "1", "n": "2", "d": `{"id":"a"}` + "\n" + `{"id":"b"}`}
	raw, _ := json.Marshal(packed)
	var parkedID, goneID int64
	if err := pool.QueryRow(ctx, `INSERT INTO dead_letters (stream_id, reason, fields, consumer) VALUES ('1-0', 'decode revenue: …', $1, 'old') RETURNING id`, raw).Scan(&parkedID); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `INSERT INTO dead_letters (stream_id, reason, fields, consumer) VALUES ('2-0', 'entry deleted', 'null', 'old') RETURNING id`).Scan(&goneID); err != nil {
		t.Fatal(err)
	}
	if code, _ := call(t, "POST", url+"/admin/dead-letters/replay"); code != 401 {
		t.Fatalf("replay without the token: %d", code)
	}
	code, list := call(t, "GET", url+"/admin/dead-letters?limit=1", admin)
	if rows := list["dead_letters"].([]any); code != 200 || len(rows) != 1 || rows[0].(map[string]any)["id"] != float64(goneID) || list["next_cursor"] == nil {
		t.Fatalf("list: %d %v", code, list)
	}

	code, out := call(t, "POST", url+"/admin/dead-letters/replay", admin)
	if code != 200 || fmt.Sprint(out["replayed"]) != fmt.Sprintf("[%d]", parkedID) || len(out["skipped"].([]any)) != 0 {
		t.Fatalf("replay: %d %v", code, out)
	}
	stream := balances.Layout{Prefix: prefix}.Stream(0)
	msgs, err := rdb.XRange(ctx, stream, "-", "+").Result()
	want := maps.Clone(packed)
	want["replay_of"] = strconv.FormatInt(parkedID, 10)
	if err != nil || len(msgs) != 1 || !maps.Equal(msgs[0].Values, want) {
		t.Fatalf("the stream after the replay: %v %v", msgs, err)
	}
	var as string
	if err := pool.QueryRow(ctx, `SELECT replayed_as FROM dead_letters WHERE id = $1 AND replayed_at IS NOT NULL`, parkedID).Scan(&as); err != nil || as != msgs[0].ID {
		t.Fatalf("replayed as %q (%v), the stream entry is %s", as, err, msgs[0].ID)
	}
	// Again: nothing left to replay; named, the replayed one, the one with
	// no content and an unknown id are each skipped with their reason.
	code, out = post(t, url+"/admin/dead-letters/replay", fmt.Sprintf(`{"ids":[%d, %d, 999999]}`, parkedID, goneID), admin)
	if code != 200 || len(out["replayed"].([]any)) != 0 || len(out["skipped"].([]any)) != 3 {
		t.Fatalf("second replay: %d %v", code, out)
	}
	if n := rdb.XLen(ctx, stream).Val(); n != 1 {
		t.Fatalf("%d stream entries after the second replay", n)
	}
	if code, _ := post(t, url+"/admin/dead-letters/replay", `{"ids":"all"}`, admin); code != 400 {
		t.Fatalf("a bad body: %d", code)
	}
	// The replay failed again (an older settlementd parked it once more):
	// a replay of everything leaves it, naming it replays it.
	again, _ := json.Marshal(want)
	var againID int64
	if err := pool.QueryRow(ctx, `INSERT INTO dead_letters (stream_id, reason, fields, consumer) VALUES ($1, 'decode revenue: …', $2, 'old') RETURNING id`, msgs[0].ID, again).Scan(&againID); err != nil {
		t.Fatal(err)
	}
	if code, out := call(t, "POST", url+"/admin/dead-letters/replay", admin); code != 200 || len(out["replayed"].([]any)) != 0 {
		t.Fatalf("replay of everything after a failed replay: %d %v", code, out)
	}
	if code, out := post(t, url+"/admin/dead-letters/replay", fmt.Sprintf(`{"ids":[%d]}`, againID), admin); code != 200 || len(out["replayed"].([]any)) != 1 {
		t.Fatalf("replay by id of a failed replay: %d %v", code, out)
	}
	last, err := rdb.XRevRangeN(ctx, stream, "+", "-", 1).Result()
	if err != nil || len(last) != 1 || last[0].Values["replay_of"] != strconv.FormatInt(againID, 10) || last[0].Values["d"] != packed["d"] {
		t.Fatalf("the second replay's entry: %v %v", last, err)
	}
}
