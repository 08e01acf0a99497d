package status

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

func post(t *testing.T, url, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
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
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %s", url, resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

// The whole settlement side of a lie: the gateway's evidence goes through
// the real ingester, the node is quarantined in Postgres and in the Redis
// registry (where it no longer serves), /api/status counts it, the admin
// reads the evidence and lifts the quarantine after review (logged; online
// again in both stores), and new evidence quarantines it again.
func TestQuarantineVisibleAndLifted(t *testing.T) {
	_, pool := settletest.DB(t)
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	ctx := context.Background()
	const node, token = "NODE-EU-LIARLIAR", "admin-secret"
	if _, err := pool.Exec(ctx, `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status)
		VALUES ($1, $2, 'EU', 'https://liar.example', '{137}', 'online')`, node, settletest.Wallet(3)); err != nil {
		t.Fatal(err)
	}
	rec := func() *registry.Node {
		t.Helper()
		raw, err := rdb.HGet(ctx, prefix+registry.NodesKey, node).Result()
		if err != nil {
			t.Fatal(err)
		}
		n, err := registry.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	v, _ := registry.Encode(&registry.Node{ID: node, Wallet: settletest.Wallet(3), Region: "EU", URL: "https://liar.example",
		ChainIDs: []uint64{137}, Status: registry.StatusOnline})
	rdb.HSet(ctx, prefix+registry.NodesKey, node, v)

	in, err := ingest.New(rdb, pool, ingest.Config{Stream: prefix + "events", Consumer: "t", Block: 50 * time.Millisecond}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ictx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { in.Run(ictx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	lie := func(id string) *events.NodeMismatch {
		return &events.NodeMismatch{ID: id, TimeMs: time.Now().UnixMilli(), ChainID: 137, NodeID: node, RequestID: "r-" + id,
			Method: "eth_getTransactionReceipt", Params: json.RawMessage(`["0xabc"]`), NodeAnswer: json.RawMessage(`{"status":"0x0"}`),
			TrustedAnswer: json.RawMessage(`{"status":"0x1"}`), TrustedBy: "provider-a"}
	}
	settletest.XAdd(t, rdb, prefix+"events", lie("chk-1"))
	settletest.Eventually(t, 30*time.Second, "registry record quarantined", func() (bool, error) {
		return rec().Status == registry.StatusQuarantined, nil
	})
	if rec().Serves(137) {
		t.Fatal("a quarantined record still serves")
	}

	url := serve(t, Config{Pool: pool, Redis: rdb, Prefix: prefix, AdminToken: token})
	admin := "X-Admin-Token: " + token
	_, st := call(t, "GET", url+"/api/status")
	if st["nodes_quarantined"] != 1.0 || st["nodes_online"] != 0.0 {
		t.Fatalf("status %v", st)
	}
	if code, _ := call(t, "GET", url+"/admin/quarantine"); code != http.StatusUnauthorized {
		t.Fatalf("quarantine list without a token: %d", code)
	}
	code, q := call(t, "GET", url+"/admin/quarantine", admin)
	nodes, _ := q["nodes"].([]any)
	if code != 200 || len(nodes) != 1 {
		t.Fatalf("quarantine list %d %v", code, q)
	}
	if n := nodes[0].(map[string]any); n["node_id"] != node || n["evidence"] != 1.0 || !strings.Contains(n["quarantine_reason"].(string), "chk-1") {
		t.Fatalf("quarantined node %v", n)
	}
	code, ev := call(t, "GET", url+"/admin/nodes/"+node+"/evidence", admin)
	items, _ := ev["evidence"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("evidence %d %v", code, ev)
	}
	if it := items[0].(map[string]any); it["id"] != "chk-1" || it["method"] != "eth_getTransactionReceipt" ||
		it["node_answer"].(map[string]any)["status"] != "0x0" || it["trusted_answer"].(map[string]any)["status"] != "0x1" || it["trusted_by"] != "provider-a" {
		t.Fatalf("evidence item %v", it)
	}
	if code, _ := call(t, "GET", url+"/admin/nodes/"+node+"/evidence?limit=0", admin); code != http.StatusBadRequest {
		t.Fatalf("limit 0: %d", code)
	}

	// The review.
	if code, _ := post(t, url+"/admin/nodes/"+node+"/unquarantine", `{}`); code != http.StatusUnauthorized {
		t.Fatalf("lift without a token: %d", code)
	}
	if code, _ := post(t, url+"/admin/nodes/NODE-EU-NOBODYAA/unquarantine", `{}`, admin); code != http.StatusNotFound {
		t.Fatalf("lift of an unknown node: %d", code)
	}
	if code, _ := post(t, url+"/admin/nodes/not-a-node/unquarantine", `{}`, admin); code != http.StatusNotFound {
		t.Fatalf("lift of a malformed id: %d", code)
	}
	if code, _ := post(t, url+"/admin/nodes/"+node+"/unquarantine", `{"reason": 7}`, admin); code != http.StatusBadRequest {
		t.Fatalf("lift with a bad body: %d", code)
	}
	code, lifted := post(t, url+"/admin/nodes/"+node+"/unquarantine", `{"reason":"provider was behind; node checked","by":"ops-ann"}`, admin)
	if code != 200 || lifted["registry_published"] != true || lifted["quarantine"].(map[string]any)["quarantined"] != false {
		t.Fatalf("lift %d %v", code, lifted)
	}
	if r := rec(); r.Status != registry.StatusOnline || !r.Serves(137) {
		t.Fatalf("after the lift the record is %+v", r)
	}
	if n := settletest.Count(t, pool, `SELECT count(*) FROM nodes WHERE node_id = $1 AND status = 'online' AND quarantined_at IS NULL`, node); n != 1 {
		t.Fatal("node not online in Postgres after the lift")
	}
	if n := settletest.Count(t, pool, `SELECT count(*) FROM node_quarantine_log WHERE node_id = $1 AND action = 'unquarantined'
		AND by = 'admin:ops-ann' AND reason = 'provider was behind; node checked'`, node); n != 1 {
		t.Fatal("the lift is not logged")
	}
	if code, _ := post(t, url+"/admin/nodes/"+node+"/unquarantine", ``, admin); code != http.StatusConflict {
		t.Fatalf("second lift: %d", code)
	}
	if _, st = call(t, "GET", url+"/api/status"); st["nodes_quarantined"] != 0.0 {
		t.Fatalf("status after the lift %v", st)
	}

	// The same evidence again changes nothing; a new lie quarantines again.
	settletest.XAdd(t, rdb, prefix+"events", lie("chk-1"), lie("chk-2"))
	settletest.Eventually(t, 30*time.Second, "quarantined again", func() (bool, error) {
		return rec().Status == registry.StatusQuarantined, nil
	})
	if n := settletest.Count(t, pool, `SELECT count(*) FROM node_quarantine_log WHERE node_id = $1 AND action = 'quarantined'`, node); n != 2 ||
		settletest.Count(t, pool, `SELECT count(*) FROM node_evidence`) != 2 {
		t.Fatalf("%d quarantines logged, want 2 (one per quarantine)", n)
	}
	var reason string
	if err := pool.QueryRow(ctx, `SELECT quarantine_reason FROM nodes WHERE node_id = $1`, node).Scan(&reason); err != nil || !strings.Contains(reason, "chk-2") {
		t.Fatalf("reason %q, %v", reason, err)
	}
}
