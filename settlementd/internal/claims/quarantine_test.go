package claims

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/auth"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// The operator of a quarantined node sees it on the earnings route — why,
// since when, the evidence ids, what was withheld and how review works —
// and reads the evidence itself, page by page; nobody else can.
func TestEarningsShowQuarantineAndEvidence(t *testing.T) {
	_, pool := settletest.DB(t)
	ctx := context.Background()
	const honest = "NODE-US-HONESTAA"
	wallet, other := settletest.Wallet(1), settletest.Wallet(2)
	for _, n := range []string{node, honest} {
		if _, err := pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status) VALUES ($1, $2, 'EU', $3, '{137}', 'online')`,
			n, wallet, "https://"+strings.ToLower(n)+".example"); err != nil {
			t.Fatal(err)
		}
	}
	// What ingest and the epoch close leave behind: two pieces of
	// evidence, the quarantine, and an epoch that withheld 50 units.
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	for i, id := range []string{"chk-old", "chk-new"} {
		if _, err := pool.Exec(ctx, `INSERT INTO node_evidence (id, ts, epoch_id, booked_epoch, chain_id, node_id, request_id, method, params, block,
			node_answer, trusted_answer, trusted_by) VALUES ($1, $2, 1, 1, 137, $3, 'r', 'eth_getBalance', '["0xaa","0x10"]', 16, '"0x1"', '"0x2"', 'provider-a')`,
			id, at.Add(time.Duration(i)*time.Second), node); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE nodes SET status = 'quarantined', quarantined_at = now(), quarantine_reason = 'answered eth_getBalance unlike provider-a; evidence chk-old'
		WHERE node_id = $1`, node); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO epochs (id, state, starts_at, ends_at, total_units, node_units, operators_units, platform_units, pool_units,
		distributed_units, carry_out_units, withheld_units, closed_at) VALUES (1, 'CLOSED', now(), now(), 200, 200, 100, 60, 90, 50, 0, 50, now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO epoch_node_shares (epoch_id, node_id, weight_units, calls, share_units, withheld_units)
		VALUES (1, $1, 100, 1, 0, 50), (1, $2, 100, 1, 50, 0)`, node, honest); err != nil {
		t.Fatal(err)
	}

	a, _ := auth.New(auth.Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32)), Dev: true})
	s, err := New(Config{Pool: pool, Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	get := func(path, w string) (int, map[string]any) {
		t.Helper()
		tok, _, err := a.Issue(w)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return resp.StatusCode, m
	}

	code, e := get("/api/nodes/"+node+"/earnings", wallet)
	q, _ := e["quarantine"].(map[string]any)
	if code != 200 || q == nil {
		t.Fatalf("earnings %d %v", code, e)
	}
	ids, _ := json.Marshal(q["evidence_ids"])
	if q["quarantined"] != true || q["since"] == nil || !strings.Contains(q["reason"].(string), "chk-old") || string(ids) != `["chk-new","chk-old"]` ||
		q["evidence_count"] != 2.0 || q["withheld_units"] != "50" || q["withheld_usdt"] != 0.00005 || q["review"] == "" ||
		q["evidence_url"] != "/api/nodes/"+node+"/evidence" {
		t.Fatalf("quarantine %v", q)
	}
	_, e = get("/api/nodes/"+honest+"/earnings", wallet)
	if q := e["quarantine"].(map[string]any); q["quarantined"] != false || q["reason"] != nil || q["since"] != nil ||
		len(q["evidence_ids"].([]any)) != 0 || q["withheld_units"] != "0" {
		t.Fatalf("honest node's quarantine %v", q)
	}
	if code, _ := get("/api/nodes/"+node+"/earnings", other); code != http.StatusForbidden {
		t.Fatalf("another wallet reads the earnings: %d", code)
	}

	// The evidence, one per page.
	code, p1 := get("/api/nodes/"+node+"/evidence?limit=1", wallet)
	items := p1["evidence"].([]any)
	if code != 200 || len(items) != 1 || p1["next_cursor"] == nil {
		t.Fatalf("page 1 %d %v", code, p1)
	}
	if it := items[0].(map[string]any); it["id"] != "chk-new" || it["node_answer"] != "0x1" || it["trusted_answer"] != "0x2" ||
		it["block"] != 16.0 || it["method"] != "eth_getBalance" || it["trusted_by"] != "provider-a" {
		t.Fatalf("item %v", it)
	}
	_, p2 := get("/api/nodes/"+node+"/evidence?limit=1&cursor="+url.QueryEscape(p1["next_cursor"].(string)), wallet)
	if items := p2["evidence"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != "chk-old" {
		t.Fatalf("page 2 %v", p2)
	}
	_, p3 := get("/api/nodes/"+node+"/evidence?limit=1&cursor="+url.QueryEscape(p2["next_cursor"].(string)), wallet)
	if items := p3["evidence"].([]any); len(items) != 0 || p3["next_cursor"] != nil {
		t.Fatalf("page 3 %v", p3)
	}
	// The last: a well-formed cursor whose id PostgreSQL cannot take as text.
	notText := "?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("2026-11-26T00:00:00Z|\xff\x00"))
	for _, bad := range []string{"?cursor=%21%21", "?limit=51", "?limit=x", notText} {
		if code, body := get("/api/nodes/"+node+"/evidence"+bad, wallet); code != http.StatusBadRequest || body["error"] == nil {
			t.Fatalf("%s: %d %v", bad, code, body)
		}
	}
	if code, _ := get("/api/nodes/"+node+"/evidence", other); code != http.StatusForbidden {
		t.Fatalf("another wallet reads the evidence: %d", code)
	}
}
