package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/registry"
)

const liar = "NODE-EU-LIARLIAR"

func mismatch(id string, at time.Time, node string) *events.NodeMismatch {
	return &events.NodeMismatch{ID: id, TimeMs: at.UnixMilli(), ChainID: 137, NodeID: node, RequestID: "req-" + id,
		Method: "eth_getBalance", Params: json.RawMessage(`["0x00000000000000000000000000000000000000aa", "0x10"]`), Block: 16,
		NodeAnswer: json.RawMessage(`"0xde0b6b3a7640000"`), TrustedAnswer: json.RawMessage(`{"x": [1, 2]}`), TrustedBy: "alchemy"}
}

// registered stores node as registration would: its Postgres row and the
// registry record the gateway reads.
func (e *env) registered(t *testing.T, node string) string {
	t.Helper()
	if _, err := e.pool.Exec(context.Background(), `INSERT INTO nodes (node_id, wallet, region, url, chain_ids, status)
		VALUES ($1, $2, 'EU', 'https://liar.example', '{137}', 'online')`, node, settletest.Wallet(7)); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSuffix(e.stream, "events") + registry.NodesKey
	v, err := registry.Encode(&registry.Node{ID: node, Wallet: settletest.Wallet(7), Region: "EU", URL: "https://liar.example",
		ChainIDs: []uint64{137}, Status: registry.StatusOnline})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.HSet(context.Background(), key, node, v).Err(); err != nil {
		t.Fatal(err)
	}
	return key
}

// Evidence delivered twice is stored once with every field as sent; the
// first quarantines its node in Postgres (logged once) and in the Redis
// registry record, which then no longer serves; later evidence adds rows
// but no second quarantine; evidence about a node settlement does not know
// is kept; evidence Postgres cannot store as json is parked, not lost.
func TestEvidenceStoredOnceAndQuarantines(t *testing.T) {
	e := newEnv(t)
	key := e.registered(t, liar)
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	first, later := mismatch("chk-1", at, liar), mismatch("chk-2", at.Add(time.Second), liar)
	later.Method, later.Params, later.Block = "eth_getBlockByNumber", json.RawMessage(`["0x11",false]`), 17
	stranger := mismatch("chk-3", at, "NODE-US-NOBODYAA")
	bad := mismatch("chk-4", at, liar)
	bad.TrustedAnswer = json.RawMessage("\"\xff\"") // json.Valid accepts it, Postgres json does not
	settletest.XAdd(t, e.rdb, e.stream, first, later, first, stranger, bad)
	settletest.XAdd(t, e.rdb, e.stream, first)
	e.start(t, Config{Batch: 2})
	e.drained(t)

	if n := e.count(t, `SELECT count(*) FROM node_evidence`); n != 3 {
		t.Fatalf("%d evidence rows, want 3 (chk-1 once, chk-2, chk-3)", n)
	}
	var (
		ts                                           time.Time
		epoch, booked, chain, block                  int64
		node, req, method, params, na, ta, trustedBy string
	)
	if err := e.pool.QueryRow(context.Background(), `SELECT ts, epoch_id, booked_epoch, chain_id, node_id, request_id, method,
		params::text, block, node_answer::text, trusted_answer::text, trusted_by FROM node_evidence WHERE id = 'chk-1'`).
		Scan(&ts, &epoch, &booked, &chain, &node, &req, &method, &params, &block, &na, &ta, &trustedBy); err != nil {
		t.Fatal(err)
	}
	// The answers as they travel in the stream (events.Encode compacts the
	// JSON), byte for byte.
	if !ts.Equal(at) || epoch != events.EpochOf(at) || booked != epoch || chain != 137 || node != liar || req != "req-chk-1" ||
		method != "eth_getBalance" || params != compact(t, first.Params) || block != 16 || na != compact(t, first.NodeAnswer) ||
		ta != compact(t, first.TrustedAnswer) || trustedBy != "alchemy" {
		t.Fatalf("stored %v %d %d %d %s %s %s %s %d %s %s %s", ts, epoch, booked, chain, node, req, method, params, block, na, ta, trustedBy)
	}
	if n := e.count(t, `SELECT count(*) FROM dead_letters WHERE reason LIKE 'node_mismatch: a field is not UTF-8%'`); n != 1 {
		t.Fatalf("%d dead letters for the malformed answer, want 1", n)
	}

	var status, reason string
	if err := e.pool.QueryRow(context.Background(), `SELECT status, quarantine_reason FROM nodes WHERE node_id = $1 AND quarantined_at IS NOT NULL`,
		liar).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != registry.StatusQuarantined || !strings.Contains(reason, "eth_getBalance") || !strings.Contains(reason, "chk-1") ||
		!strings.Contains(reason, "alchemy") {
		t.Fatalf("status %q reason %q", status, reason)
	}
	if n := e.count(t, `SELECT count(*) FROM node_quarantine_log WHERE node_id = $1 AND action = 'quarantined' AND evidence_id = 'chk-1'`, liar); n != 1 ||
		e.count(t, `SELECT count(*) FROM node_quarantine_log`) != 1 {
		t.Fatalf("quarantine log: %d rows for chk-1, %d in all; want 1 and 1", n, e.count(t, `SELECT count(*) FROM node_quarantine_log`))
	}

	raw, err := e.rdb.HGet(context.Background(), key, liar).Result()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := registry.Decode(raw)
	if err != nil || rec.Status != registry.StatusQuarantined || rec.Serves(137) {
		t.Fatalf("registry record %+v, %v", rec, err)
	}

	// The prober seeing a good probe, or a re-registration, sets 'online':
	// the quarantine holds.
	if err := e.pool.QueryRow(context.Background(), `UPDATE nodes SET status = 'online', probe_failures = 0 WHERE node_id = $1 RETURNING status`,
		liar).Scan(&status); err != nil || status != registry.StatusQuarantined {
		t.Fatalf("after a writer set it online: %q, %v", status, err)
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Evidence whose epoch has closed is booked into the open epoch, like a
// late revenue event.
func TestLateEvidenceBookedForward(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	open := events.EpochOf(now)
	if _, err := e.pool.Exec(context.Background(), `INSERT INTO epochs (id, state, starts_at, ends_at) VALUES ($1, 'open', $2, $3)`,
		open, time.Unix(open*events.EpochSeconds, 0), time.Unix((open+1)*events.EpochSeconds, 0)); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-3 * events.EpochSeconds * time.Second)
	settletest.XAdd(t, e.rdb, e.stream, mismatch("late", old, liar), mismatch("now", now, liar))
	e.start(t, Config{})
	e.drained(t)
	for id, want := range map[string][2]int64{"late": {events.EpochOf(old), open}, "now": {open, open}} {
		var epoch, booked int64
		if err := e.pool.QueryRow(context.Background(), `SELECT epoch_id, booked_epoch FROM node_evidence WHERE id = $1`, id).Scan(&epoch, &booked); err != nil {
			t.Fatal(err)
		}
		if epoch != want[0] || booked != want[1] {
			t.Fatalf("%s: epoch %d booked %d, want %v", id, epoch, booked, want)
		}
	}
}
