package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/faultproxy"
	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/events"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// trustCaddyfile: a gateway with the default probation, ladder and check
// rates, one provider in front of the dev chain, nodes from the registry.
const trustCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			key_prefix @PREFIX@
			request_timeout 5s
			probe_interval 100ms
			free_daily_limit 0
			free_subnet_limit 0
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			upstreams {
				registry_refresh 200ms
				allow_private_nodes
				timeout 2s
			}
			chain 137 {
				provider alpha @ALPHA@
			}
		}
		respond 404
	}
}
`

// TestPatientLiarEverywhere is the patient liar end to end: two
// gateways on one Redis, settlementd ingesting and closing epochs, and a
// registered node that is honest for its first 300 answers (probation,
// then the ladder: it serves paid calls through gateway A), then lies 1 in
// 5 about balances and blocks at the head. It delivers at most 5 wrong
// answers and serves at most 25 calls after its first lie; gateway A
// quarantines it at once, settlementd puts the quarantine in the registry
// and gateway B drops it within seconds; and its share of every epoch in
// which it delivered a lie is withheld: 0 earned.
func TestPatientLiarEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two gateways, settlementd and the dev chain")
	}
	patientLiarEverywhere(t, faultproxy.ShapeValue, 5, 1)
}

// TestLiarOfEveryShapeEverywhere: the same, for a node whose
// lies after its honest start take every shape in turn — null, [], an
// error, a forged block with its parent's hash, a block without its roots,
// a value padded past 256 KiB, a wrong value. At most 3 wrong answers
// reach callers, both gateways drop it, and it earns 0 for every epoch in
// which it served. Its first three lies (null, [], an error) are about
// blocks above the finalized head, where "nothing" may be a reorg seen at
// another moment: they are rerouted unpaid, never a conviction (Judge's
// nodeShouldKnow). The bound on calls it serves counts from its fourth
// lie, the first a judge may convict it for.
func TestLiarOfEveryShapeEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two gateways, settlementd and the dev chain")
	}
	patientLiarEverywhere(t, faultproxy.ShapeMixed, 3, 4)
}

// patientLiarEverywhere runs a liar honest for 300 answers, then lying 1 in
// 5 in shape, through two gateways and settlementd: at most bound wrong
// answers delivered, at most 25 calls served after its convictable-th lie
// (the first in a shape the judge convicts at the head; measured 0 on a
// quiet machine, and the bound leaves a busy machine's checks room to
// lag), quarantined everywhere, 0 earned.
func patientLiarEverywhere(t *testing.T, shape faultproxy.Shape, bound int, convictable int64) {
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	dsn, pool := settletest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	alpha := faultproxy.New(m.Polygon.RPCURL)
	t.Cleanup(alpha.Close)
	liar := faultproxy.New(m.Polygon.RPCURL)
	t.Cleanup(liar.Close)
	liar.LieAfter.Store(300)
	liar.SetShape(shape)
	liar.SetMode(faultproxy.LieSometimes)
	payTo, _ := m.Account("treasury")
	cf := strings.NewReplacer("@PREFIX@", prefix, "@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC,
		"@PAYTO@", payTo.Address, "@ALPHA@", alpha.URL()).Replace(trustCaddyfile)
	gwA := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))
	gwB := caddyrun.Start(t, cf, "TG_REDIS_URL="+os.Getenv("REDIS_URL"))

	api := fmt.Sprintf("http://127.0.0.1:%d", caddyrun.FreePort(t))
	runInProcess(t, map[string]string{
		"DATABASE_URL": dsn, "REDIS_URL": os.Getenv("REDIS_URL"), "TOLLGATE_PREFIX": prefix,
		"TOLLGATE_HTTP_ADDR": strings.TrimPrefix(api, "http://"), "TOLLGATE_EPOCH_GRACE": "1s",
		"TOLLGATE_EPOCH_CLOSE_SCHEDULE": "* * * * * *", "TOLLGATE_INGEST_BLOCK": "200ms", "TOLLGATE_LOG_LEVEL": "warn",
		"TOLLGATE_JWT_SECRET": "trust-jwt-secret-0123456789abcdef0123456789", "TOLLGATE_ALLOW_PRIVATE_NODES": "1",
		"TOLLGATE_NODE_PROBE_SCHEDULE": "* * * * * *", "TOLLGATE_AUTH_DOMAIN": strings.TrimPrefix(api, "http://"),
	}, api+"/health")

	auth := login(t, api, devnet.DevKey("operator-1"))
	reg := e2eDo(t, http.MethodPost, api+"/api/nodes/register", mustJSON(map[string]any{"region": "eu-west", "rpc_url": liar.URL(),
		"chain_ids": []uint64{137}, "label": "patient liar"}), auth)
	if reg.status != http.StatusCreated && reg.status != http.StatusOK {
		t.Fatalf("register: %d %s", reg.status, reg.body)
	}
	nodeID := reg.obj(t)["node_id"].(string)
	const deposit = 1_000_000 * money.PricePerCall
	secrets, _ := fundedKeys(t, http.DefaultClient, pool, 1, "trust", deposit, func(int) string { return gwA.URL() },
		func(id, ref string) (bool, error) {
			applied, _, err := balances.Credit(ctx, rdb, prefix, id, deposit, ref)
			return applied, err
		})
	key := "X-API-Key: " + secrets[0]
	for _, gw := range []*caddyrun.Server{gwA, gwB} {
		settletest.Eventually(t, 30*time.Second, "the node in "+gw.URL()+"'s pool", func() (bool, error) {
			return nodeOf(t, gw, nodeID) != nil, nil
		})
	}

	// Paid traffic at the head through gateway A until A quarantines it.
	acct, _ := m.Account("deployer")
	var head uint64
	bodies := func(i int) string {
		at := "latest"
		if head > 3 && i%2 == 0 {
			at = "0x" + strconv.FormatUint(head-2, 16)
		}
		switch i % 3 {
		case 0:
			return `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + acct.Address + `","` + at + `"]}`
		case 1:
			return `{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["` + at + `",false]}`
		}
		return `{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber","params":[]}`
	}
	lieEpochs := map[int64]bool{}
	delivered, servedAfterLie, byNode := 0, 0, 0
	deadline := time.Now().Add(150 * time.Second)
	for i := 0; ; i++ {
		a := e2eDo(t, http.MethodPost, gwA.URL()+"/rpc", bodies(i), key)
		if a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
		var r struct{ Result json.RawMessage }
		_ = json.Unmarshal(a.body, &r)
		var s string
		_ = json.Unmarshal(r.Result, &s)
		lie := (i%3 == 0 && faultproxy.IsLie("eth_getBalance", a.body, nil)) || (i%3 == 1 && faultproxy.IsLie("eth_getBlockByNumber", a.body, nil))
		if i%3 == 2 && strings.HasPrefix(s, "0x") {
			head, _ = strconv.ParseUint(s[2:], 16, 64)
		}
		if lie {
			delivered++
			lieEpochs[events.EpochOf(time.Now())] = true
		}
		if a.header.Get("X-Tollgate-Upstream") == nodeID {
			byNode++
			if liar.Lies.Load() >= convictable {
				servedAfterLie++
			}
		}
		// Once a convictable lie is told, look after every call: the bound
		// measures the judge, not how often this loop looks.
		if i%10 == 0 || liar.Lies.Load() >= convictable {
			if st := nodeOf(t, gwA, nodeID); st == nil || st["quarantined"] == true {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not caught after %d calls (%d lies told, %d delivered)", i, liar.Lies.Load(), delivered)
		}
	}
	caught := time.Now()
	t.Logf("the node served %d paid calls; it told %d lies from its answer %d; %d reached callers; %d calls it served after its lie %d",
		byNode, liar.Lies.Load(), liar.FirstLieAt.Load(), delivered, servedAfterLie, convictable)
	if byNode == 0 || delivered > bound || servedAfterLie > 25 {
		t.Fatalf("served %d, delivered %d wrong answers (bound %d), %d node-served calls after lie %d (bound 25)", byNode, delivered, bound, servedAfterLie, convictable)
	}
	// Every gateway: B drops it through the registry.
	settletest.Eventually(t, 20*time.Second, "gateway B drops the node", func() (bool, error) {
		st := nodeOf(t, gwB, nodeID)
		return st == nil || st["quarantined"] == true, nil
	})
	t.Logf("gateway B dropped the node %v after gateway A caught it", time.Since(caught).Round(100*time.Millisecond))
	// 0 earned for every epoch in which it delivered a lie (and every
	// epoch it served in before it was caught: its lies may go back that far).
	var servedEpochs []int64
	settletest.Eventually(t, 150*time.Second, "the epochs the node served in closed", func() (bool, error) {
		rows, err := pool.Query(ctx, `SELECT DISTINCT e.id, e.state FROM epochs e JOIN revenue_events r ON r.booked_epoch = e.id WHERE r.node_id = $1`, nodeID)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		servedEpochs = servedEpochs[:0]
		closed := true
		for rows.Next() {
			var id int64
			var state string
			if err := rows.Scan(&id, &state); err != nil {
				return false, err
			}
			servedEpochs = append(servedEpochs, id)
			closed = closed && state == "CLOSED"
		}
		return closed && len(servedEpochs) > 0, rows.Err()
	})
	for _, e := range servedEpochs {
		var share, withheld int64
		if err := pool.QueryRow(ctx, `SELECT share_units, withheld_units FROM epoch_node_shares WHERE epoch_id = $1 AND node_id = $2`, e, nodeID).
			Scan(&share, &withheld); err != nil {
			t.Fatalf("epoch %d: %v", e, err)
		}
		if share != 0 || withheld == 0 {
			t.Fatalf("epoch %d: the liar's share %d, withheld %d; want 0 and its share withheld", e, share, withheld)
		}
	}
	for e := range lieEpochs {
		found := false
		for _, s := range servedEpochs {
			found = found || s == e
		}
		if !found {
			t.Fatalf("a lie was delivered in epoch %d, which the node's revenue never names", e)
		}
	}
	var earned int64
	if err := pool.QueryRow(ctx, `SELECT COALESCE(sum(amount_units), 0) FROM node_earnings WHERE node_id = $1`, nodeID).Scan(&earned); err != nil {
		t.Fatal(err)
	}
	if earned != 0 {
		t.Fatalf("the liar's earnings sum to %d units", earned)
	}
	t.Logf("epochs %v: the liar's share withheld in each (lies delivered in %v); earned 0", servedEpochs, lieEpochs)
}

// nodeOf is the node's entry in a gateway's /rpc/health for chain 137.
func nodeOf(t *testing.T, gw *caddyrun.Server, name string) map[string]any {
	t.Helper()
	a := e2eDo(t, http.MethodGet, gw.URL()+"/rpc/health", "")
	var h struct {
		Chains []struct {
			ChainID uint64 `json:"chain_id"`
			Pool    struct {
				Upstreams []map[string]any `json:"upstreams"`
			} `json:"pool"`
		} `json:"chains"`
	}
	if err := json.Unmarshal(a.body, &h); err != nil {
		t.Fatalf("/rpc/health: %d %s", a.status, a.body)
	}
	for _, c := range h.Chains {
		for _, u := range c.Pool.Upstreams {
			if c.ChainID == 137 && u["name"] == name {
				return u
			}
		}
	}
	return nil
}
