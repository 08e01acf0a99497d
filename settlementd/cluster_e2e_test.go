package main

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/oklog/ulid/v2"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/internal/rediscluster"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The cluster test's shape and the bounds it states and checks.
const (
	// clusterShards: metering shards the gateways and settlementd use.
	clusterShards  = 6
	clusterKeys    = 12
	clusterWallets = 3
	clusterFree    = 2 // anonymous workers
	clusterPaid    = 250
	// clusterFailoverBound: from the SIGKILL of a master until every key is
	// served paid again: cluster-node-timeout (1 s) + the election + the
	// gateways' slot map reload (1 s).
	clusterFailoverBound = 10 * time.Second
	// clusterLossWindow: a paid call decided this long before a master's
	// SIGKILL may have its debit and events lost with the master
	// (asynchronous replication), and a call served by a SIGKILLed gateway
	// this long before the kill may have its revenue event lost with the
	// gateway's event writer buffer.
	clusterLossWindow = 2 * time.Second
	// clusterLagged: paid calls booked while the victim's replica receives
	// nothing (LagReplica), before the master's SIGKILL.
	clusterLagged = 90
)

// rebookedRe reads a gateway's log line of facts booked again on a Redis
// that came back without them.
var rebookedRe = regexp.MustCompile(`money facts booked again.*?"facts":\s*(\d+)`)

// clusterPrefix: with one shard the prefix itself is the hash tag (every key
// in one slot); sharded, each shard's keys carry their own tag.
var clusterPrefix = map[bool]string{true: "tollgate:", false: "{tollgate}:"}[clusterShards > 1]

// clusterCaddyfile: one of three gateways on the cluster; the free tier is
// on (for the anonymous load) but a key or a SIWX wallet never falls back to
// it, which the test checks by the payer of every answer.
const clusterCaddyfile = `{
	admin {ADMIN}
	persist_config off
	auto_https off
}
http://127.0.0.1:{PORT} {
	route {
		tollgate {
			redis_url {env.TG_REDIS_URL}
			redis_cluster
			key_prefix @PREFIX@
			@SHARDS@
			request_timeout 5s
			upstream_timeout 2s
			probe_interval 100ms
			free_daily_limit 1000000
			free_subnet_limit 1000000
			rate_limit_ip off
			rate_limit_key off
			key_create_limit off
			ip_concurrency off
			vault_address @VAULT@
			usdt_address @USDT@
			x402_asset @USDC@
			x402_pay_to @PAYTO@
			chain 137 {
				provider devchain @RPC@
			}
		}
		respond 404
	}
}
`

// clusterAnswer is one request of the load as its client saw it.
type clusterAnswer struct {
	kind   string // key, siwx, free
	who    int    // key or wallet index
	gw     int    // gateway slot
	gen    int    // which process in the slot (0: first, 1: the restart)
	status int
	err    bool // no answer (the gateway was killed)
	payer  string
	reqID  string
	body   string
	sent   time.Time
	done   time.Time
}

func (a *clusterAnswer) decided(t *testing.T) time.Time {
	id, err := ulid.Parse(a.reqID)
	if err != nil {
		t.Fatalf("request id %q: %v", a.reqID, err)
	}
	return ulid.Time(id.Time())
}

// sdProc is one settlementd replica.
type sdProc struct {
	cmd  *exec.Cmd
	addr string
	log  *syncBuf
	done chan struct{}
}

// TestClusterFailoverUnderLoad runs a real Redis Cluster
// (three masters, one replica each), three of our gateways and two
// settlementd replicas on one PostgreSQL and the dev chain. Paid calls from
// many keys, SIWX bundle calls and free calls go through all three gateways
// at once while a master is SIGKILLed (its replica is promoted), a gateway
// is SIGKILLed and started again, and the settlementd leader is SIGKILLed.
// The master's replica is made to miss its last writes for
// certain (rediscluster.LagReplica: the master stops replicating; the load
// books clusterLagged paid calls before the kill), and the gateways book
// the money facts it lacks again on the promoted replica.
// Then: no call served unpaid, nobody charged twice, every served paid call
// has its debit (none lost with the master) and its revenue event (but those
// the SIGKILLed gateway's event writer held), every closed epoch sums
// exactly, and reconcile finds Redis and PostgreSQL equal but for a 503
// whose script ran as the master died and whose debit was ingested first.
func TestClusterFailoverUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Redis Cluster, three gateways, two settlementd replicas and a dev chain")
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	cl := rediscluster.Start(t)
	rdb := cl.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	m := d.Manifest
	bin := settlementdBinary(t)
	dsn, pool := settletest.DB(t)
	streams := balances.Layout{Prefix: clusterPrefix, Shards: clusterShards}.Streams()

	// Two settlementd replicas: ingest on both, jobs on the leader.
	startSD := func(name string) *sdProc {
		p := &sdProc{addr: fmt.Sprintf("127.0.0.1:%d", caddyrun.FreePort(t)), log: &syncBuf{}, done: make(chan struct{})}
		p.cmd = exec.Command(bin, "run")
		p.cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "REDIS_URL="+cl.URL, "TOLLGATE_PREFIX="+clusterPrefix,
			fmt.Sprintf("TOLLGATE_REDIS_SHARDS=%d", clusterShards), "TOLLGATE_HTTP_ADDR="+p.addr, "TOLLGATE_CONSUMER="+name,
			"TOLLGATE_INGEST_BLOCK=100ms", "TOLLGATE_LEADER_HEARTBEAT=200ms", "TOLLGATE_LEADER_RETRY=200ms",
			"TOLLGATE_REDIS_WATCH_INTERVAL=1s", "TOLLGATE_CLAIM_MIN_IDLE=2s", "TOLLGATE_CLAIM_EVERY=200ms",
			"TOLLGATE_EPOCH_GRACE=1s", "TOLLGATE_AUTH_DOMAIN=localhost")
		p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = p.cmd.Wait(); close(p.done) }()
		t.Cleanup(func() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			<-p.done
			if t.Failed() {
				t.Logf("settlementd %s log (tail):\n%s", name, tail(p.log.String(), 4000))
			}
		})
		return p
	}
	sds := []*sdProc{startSD("sd-a"), startSD("sd-b")}
	settletest.Eventually(t, 30*time.Second, "settlementd sets the generation marker", func() (bool, error) {
		ok, _ := reconcile.MarkersPresent(ctx, rdb, clusterPrefix, clusterShards)
		return ok, nil
	})

	payTo, err := m.Account("treasury")
	if err != nil {
		t.Fatal(err)
	}
	shardsLine := ""
	if clusterShards > 1 {
		shardsLine = fmt.Sprintf("redis_shards %d", clusterShards)
	}
	caddyfile := strings.NewReplacer("@PREFIX@", clusterPrefix, "@SHARDS@", shardsLine, "@RPC@", m.Polygon.RPCURL,
		"@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC, "@PAYTO@", payTo.Address).Replace(clusterCaddyfile)
	client := &http.Client{Timeout: 15 * time.Second}
	startGW := func() *caddyrun.Server {
		gw := caddyrun.Start(t, caddyfile, "TG_REDIS_URL="+cl.URL)
		settletest.Eventually(t, 30*time.Second, "chain 137 healthy", func() (bool, error) {
			resp, err := client.Get(gw.URL() + "/rpc/health")
			if err != nil {
				return false, nil
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"healthy":true`), nil
		})
		return gw
	}
	var gwMu sync.RWMutex
	gws := []*caddyrun.Server{startGW(), startGW(), startGW()}
	gwGen := []int{0, 0, 0}
	gateway := func(i int) (*caddyrun.Server, int) {
		gwMu.RLock()
		defer gwMu.RUnlock()
		return gws[i], gwGen[i]
	}

	// Keys, created through the gateways and credited as the deposit
	// listener books a deposit (ledger row, then the Redis credit).
	const deposit = 1_000_000 * money.PricePerCall
	secrets, ids := fundedKeys(t, client, pool, clusterKeys, "cluster", deposit,
		func(i int) string { g, _ := gateway(i % 3); return g.URL() },
		func(id, ref string) (bool, error) {
			applied, _, err := balances.CreditAt(ctx, rdb, balances.Layout{Prefix: clusterPrefix, Shards: clusterShards}, id, deposit, ref)
			return applied, err
		})
	// Wallets with an x402 bundle: the grant booked in PostgreSQL, written
	// to Redis by reconcile (as after a purchase whose grant Redis lost).
	const bundleCalls = 1_000_000
	wallets := make([]*ecdsa.PrivateKey, clusterWallets)
	walletAddr := make([]string, clusterWallets)
	for i := range wallets {
		wallets[i] = testKey(fmt.Sprintf("cluster wallet %d", i))
		walletAddr[i] = strings.ToLower(crypto.PubkeyToAddress(wallets[i].PublicKey).Hex())
		if _, err := pool.Exec(ctx, `INSERT INTO bundle_grants (id, wallet, calls, amount_units, network, ts) VALUES ($1, $2, $3, $4, 'eip155:8453', now())`,
			fmt.Sprintf("0x%064x", i+1), walletAddr[i], bundleCalls, 1_000_000); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reconcile.Run(ctx, pool, rdb, reconcile.Options{Prefix: clusterPrefix, Shards: clusterShards, Apply: true, Force: true}, nil); err != nil {
		t.Fatal(err)
	}

	// The load: one worker per key and per wallet, a few anonymous ones;
	// every request goes to a gateway picked at random.
	var (
		mu      sync.Mutex
		answers []clusterAnswer
		paid    atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	call := func(kind string, who int) {
		slot := rand.IntN(3)
		g, gen := gateway(slot)
		req, _ := http.NewRequest(http.MethodPost, g.URL()+"/rpc", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		switch kind {
		case "key":
			req.Header.Set("X-API-Key", secrets[who])
		case "siwx":
			req.Header.Set("SIGN-IN-WITH-X", clusterSIWX(t, g, wallets[who]))
		}
		a := clusterAnswer{kind: kind, who: who, gw: slot, gen: gen, sent: time.Now()}
		resp, err := client.Do(req)
		if err != nil {
			a.err, a.done = true, time.Now()
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			a.done, a.status, a.body = time.Now(), resp.StatusCode, string(b)
			a.payer, a.reqID = resp.Header.Get("X-Tollgate-Payer"), resp.Header.Get("X-Tollgate-Request-Id")
			if a.status == http.StatusOK && kind != "free" {
				paid.Add(1)
			}
		}
		mu.Lock()
		answers = append(answers, a)
		mu.Unlock()
	}
	worker := func(kind string, who int) {
		wg.Go(func() {
			for !stop.Load() {
				call(kind, who)
			}
		})
	}
	for k := range clusterKeys {
		worker("key", k)
	}
	for w := range clusterWallets {
		worker("siwx", w)
	}
	for f := range clusterFree {
		worker("free", f)
	}
	stopLoad := func() {
		stop.Store(true)
		wg.Wait()
	}
	t.Cleanup(stopLoad)
	waitPaid := func(n int64, what string) {
		target := paid.Load() + n
		settletest.Eventually(t, 60*time.Second, fmt.Sprintf("%d more paid calls %s", n, what), func() (bool, error) {
			return paid.Load() >= target, nil
		})
	}
	waitPaid(clusterPaid, "before the failover")

	// 1. A master dies: the one holding shard 0's stream.
	master, err := rdb.MasterForKey(ctx, streams[0])
	if err != nil {
		t.Fatal(err)
	}
	var victim int
	fmt.Sscanf(master.Options().Addr[strings.LastIndex(master.Options().Addr, ":")+1:], "%d", &victim)
	replica, err := cl.ReplicaOf(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	// Its replica is made to miss the master's last writes for certain
	// (rediscluster.LagReplica: the master stops replicating), and the load
	// books clusterLagged more paid calls — about a third of them on this
	// master — that the master alone has when it dies.
	if err := cl.LagReplica(ctx, victim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []int{victim, replica} {
				b, _ := os.ReadFile(filepath.Join(cl.Dir, strconv.Itoa(p), "redis.log"))
				t.Logf("redis :%d log (tail):\n%s", p, tail(string(b), 3000))
			}
		}
	})
	waitPaid(clusterLagged, "that the replica does not receive")
	masterKilledAt := time.Now()
	if err := cl.KillMaster(victim); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	err = cl.WaitPromoted(fctx, replica)
	fcancel()
	if err != nil {
		t.Fatal(err)
	}
	promotedAt := time.Now()
	// The gateways find the promoted replica without the master's last
	// money facts and book them again (meter.Replayer): proof that the
	// replica lacked writes, and of what was rebooked.
	var rebooked int
	settletest.Eventually(t, 30*time.Second, "the gateways rebook the money facts the promoted replica lacks", func() (bool, error) {
		rebooked = 0
		for i := range gws {
			g, _ := gateway(i)
			for _, m := range rebookedRe.FindAllStringSubmatch(g.Output(), -1) {
				n, _ := strconv.Atoi(m[1])
				rebooked += n
			}
		}
		return rebooked > 0, nil
	})
	// Every key served paid again after the promotion.
	keyBack := make([]time.Time, clusterKeys)
	settletest.Eventually(t, clusterFailoverBound, "every key served paid after the failover", func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		back := 0
		for k := range keyBack {
			if keyBack[k].IsZero() {
				for _, a := range answers {
					if a.kind == "key" && a.who == k && a.status == http.StatusOK && a.sent.After(masterKilledAt) {
						keyBack[k] = a.done
						break
					}
				}
			}
			if !keyBack[k].IsZero() {
				back++
			}
		}
		return back == clusterKeys, nil
	})
	slowest := time.Duration(0)
	for _, at := range keyBack {
		slowest = max(slowest, at.Sub(masterKilledAt))
	}
	t.Logf("master :%d SIGKILLed after %d paid calls, the last %d of them withheld from its replica; replica :%d promoted %v later; "+
		"%d money facts it lacked booked again by the gateways; every key paid again %v after the kill (bound %v)",
		victim, paid.Load(), clusterLagged, replica, promotedAt.Sub(masterKilledAt).Round(time.Millisecond), rebooked,
		slowest.Round(time.Millisecond), clusterFailoverBound)
	waitPaid(clusterPaid, "after the failover")

	// 2. A gateway dies and is started again (on a new port). First its
	// event writer must have caught up with the failover: while the failed
	// master's stream refused writes, the writer retried that batch and the
	// gateway's later events queued behind it; a crash then would lose them
	// all (a gateway crash loses what it holds, stated), and this step is
	// about what a crash in normal operation loses.
	g1, _ := gateway(1)
	settletest.Eventually(t, 30*time.Second, "gateway 1's event writer caught up", func() (bool, error) {
		n, err := eventsPending(g1)
		return err == nil && n < 64, nil
	})
	gwKilledAt := time.Now()
	g1.Kill()
	g1b := startGW()
	gwMu.Lock()
	gws[1], gwGen[1] = g1b, 1
	gwMu.Unlock()
	t.Logf("gateway 1 SIGKILLed and started again in %v", time.Since(gwKilledAt).Round(time.Millisecond))
	waitPaid(clusterPaid, "after the gateway restart")

	// 3. The settlementd leader dies; the other replica takes over.
	leaderOf := func(p *sdProc) bool {
		resp, err := client.Get("http://" + p.addr + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var h struct {
			Leader bool `json:"leader"`
		}
		return json.NewDecoder(resp.Body).Decode(&h) == nil && h.Leader
	}
	var leader, other *sdProc
	settletest.Eventually(t, 30*time.Second, "a settlementd leader", func() (bool, error) {
		for i, p := range sds {
			if leaderOf(p) {
				leader, other = p, sds[1-i]
				return true, nil
			}
		}
		return false, nil
	})
	sdKilledAt := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-leader.done
	settletest.Eventually(t, 30*time.Second, "the other settlementd replica leads", func() (bool, error) { return leaderOf(other), nil })
	t.Logf("settlementd leader SIGKILLed; the other replica leads %v later", time.Since(sdKilledAt).Round(time.Millisecond))
	waitPaid(clusterPaid, "after the leader's death")
	stopLoad()
	loadEnded := time.Now()

	// Tally what the clients saw.
	served := map[string]*clusterAnswer{} // paid calls served, by request id
	unavailable := map[string]bool{}      // 503s with a request id: their script may have run
	counts := map[string]int{}
	var noAnswer []*clusterAnswer
	for i := range answers {
		a := &answers[i]
		switch {
		case a.err:
			counts["no answer"]++
			noAnswer = append(noAnswer, a)
			if a.gw != 1 || a.gen != 0 || a.done.Before(gwKilledAt) {
				t.Errorf("%s %d: no answer from gateway %d (gen %d) at +%v; only the killed gateway may not answer",
					a.kind, a.who, a.gw, a.gen, a.sent.Sub(began))
			}
		case a.status == http.StatusOK:
			want := map[string]string{"key": "credits", "siwx": "bundle", "free": "free"}[a.kind]
			if a.payer != want {
				t.Errorf("%s %d served with payer %q, want %q: a call served unpaid or by the wrong payer", a.kind, a.who, a.payer, want)
			}
			counts[a.kind+" served"]++
			if a.kind != "free" {
				if a.reqID == "" || served[a.reqID] != nil {
					t.Fatalf("served %s call with request id %q (empty or repeated)", a.kind, a.reqID)
				}
				served[a.reqID] = a
			}
		case a.status == http.StatusServiceUnavailable:
			counts[a.kind+" 503"]++
			if a.reqID != "" {
				unavailable[a.reqID] = true
			}
		default:
			counts["other"]++
			if counts["other"] <= 5 {
				t.Errorf("%s %d: unexpected answer %d payer %q: %s", a.kind, a.who, a.status, a.payer, tail(a.body, 300))
			}
		}
	}
	t.Logf("%d requests: %v", len(answers), counts)
	// What the master's failover cost callers: the span of 503s after it.
	var first503, last503 time.Time
	for i := range answers {
		a := &answers[i]
		if a.status == http.StatusServiceUnavailable && a.sent.After(masterKilledAt) && a.sent.Before(gwKilledAt) {
			if first503.IsZero() || a.sent.Before(first503) {
				first503 = a.sent
			}
			if a.done.After(last503) {
				last503 = a.done
			}
		}
	}
	if !first503.IsZero() {
		t.Logf("master failover: 503s from +%v to +%v after the kill (%v of 503s)", first503.Sub(masterKilledAt).Round(time.Millisecond),
			last503.Sub(masterKilledAt).Round(time.Millisecond), last503.Sub(first503).Round(time.Millisecond))
	}

	// The books once every stream is ingested and every served call's
	// revenue event (outside the loss windows) is in PostgreSQL.
	inWindow := func(at, kill time.Time) bool { return !at.After(kill) && kill.Sub(at) <= clusterLossWindow }
	// A call answered by the killed gateway process in its last moments
	// (the client may read the answer a little after the SIGKILL).
	// Or one it served just before the master's kill, whose revenue event
	// its writer was still retrying against the failed master's shard (the
	// test only waits for the writer's queue to shrink below 64): revenue
	// a gateway crash loses, not a Redis loss (revenue of calls served by
	// the other gateways in that window is complete).
	lostWithGateway := func(a *clusterAnswer) bool {
		return a.gw == 1 && a.gen == 0 && (a.done.After(gwKilledAt.Add(-clusterLossWindow)) || inWindow(a.decided(t), masterKilledAt))
	}
	// Not fatal when it times out: the checks below then say which call
	// or stream is missing.
	caughtUp := func() string {
		for _, s := range streams {
			w, err := ingest.GroupWatermark(ctx, rdb, s, ingest.DefaultGroup)
			if err != nil || !w.Drained() {
				return fmt.Sprintf("stream %s not drained (%+v, %v)", s, w, err)
			}
		}
		rev := idSet(t, pool, `SELECT id FROM revenue_events`)
		deb := idSet(t, pool, `SELECT id FROM debits`)
		for id, a := range served {
			if !deb[id] {
				return "debit of " + id + " not ingested"
			}
			if !rev[id] && !lostWithGateway(a) {
				return "revenue of " + id + " not ingested"
			}
		}
		return ""
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		why := caughtUp()
		if why == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after 60 s: %s", why)
			break
		}
		time.Sleep(100 * time.Millisecond) // polling PostgreSQL and the streams
	}
	debits := map[string]string{} // id → payer
	rows, err := pool.Query(ctx, `SELECT id, payer FROM debits`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, payer string
		if err := rows.Scan(&id, &payer); err != nil {
			t.Fatal(err)
		}
		debits[id] = payer
	}
	rows.Close()
	revenue := idSet(t, pool, `SELECT id FROM revenue_events WHERE payer <> 'free'`)
	refunded := idSet(t, pool, `SELECT id FROM refunds`)

	// Revenue only for served calls.
	for id := range revenue {
		if served[id] == nil {
			t.Errorf("revenue event %s for a call no client was served", id)
		}
	}
	// Every debit is a served call, a 503 whose script ran (given back), or
	// a request in flight at the gateway's SIGKILL (never answered).
	// A 503 whose script ran on the master as it died and whose debit event
	// was ingested, while the promoted replica never got the debit: the
	// gateway's void finds nothing to give back on the new master, so
	// PostgreSQL keeps a debit Redis does not have (decisions.md, "Redis
	// Cluster").
	var inFlight, gaveBack, orphan []string
	for id, payer := range debits {
		if payer == "free" || served[id] != nil {
			continue
		}
		switch {
		case unavailable[id] && refunded[id]:
			gaveBack = append(gaveBack, id)
		case unavailable[id]:
			orphan = append(orphan, id)
			if at := ulid.Time(ulid.MustParse(id).Time()); !inWindow(at, masterKilledAt) {
				t.Errorf("debit %s of a request answered 503 (decided %v after the master's kill) was not given back", id, at.Sub(masterKilledAt))
			}
		default:
			inFlight = append(inFlight, id)
		}
	}
	inFlightClients := 0
	for _, a := range noAnswer {
		if a.kind != "free" {
			inFlightClients++
		}
	}
	if len(inFlight) > inFlightClients {
		t.Errorf("%d debits of calls nobody was served or refused, but only %d paid requests were in flight at the gateway's kill: %v",
			len(inFlight), inFlightClients, inFlight)
	}
	// Every served paid call has its debit, the ones the master took with
	// it included (the gateways booked them again on the promoted
	// replica), and its revenue event, except those the SIGKILLed gateway
	// held in its event writer.
	var lostDebit, lostRevenue []string
	for id, a := range served {
		if _, ok := debits[id]; !ok {
			t.Errorf("%s call %s (decided %v after the master's kill) served without a debit", a.kind, id, a.decided(t).Sub(masterKilledAt))
			lostDebit = append(lostDebit, id)
		}
		if !revenue[id] {
			if !lostWithGateway(a) {
				t.Errorf("%s call %s (gateway %d gen %d, decided %v after the master's kill, answered %v after the gateway's) served without a revenue event",
					a.kind, id, a.gw, a.gen, a.decided(t).Sub(masterKilledAt), a.done.Sub(gwKilledAt))
			}
			lostRevenue = append(lostRevenue, id)
		}
	}
	sort.Strings(inFlight)
	t.Logf("PostgreSQL: %d debits, %d revenue events, %d served paid calls; %d debits of 503s given back, %d not (their Redis debit died with the master); %d debits of requests in flight at the gateway's kill (%d paid requests unanswered); lost: %d debits, %d revenue events (gateway kill)",
		len(debits), len(revenue), len(served), len(gaveBack), len(orphan), len(inFlight), inFlightClients, len(lostDebit), len(lostRevenue))

	// Per key and wallet: debits (net of refunds) = served paid calls +
	// requests in flight at the gateway's kill + 503s not given back − lost
	// debits.
	perPayer := func(kind string, who int, account string) {
		t.Helper()
		var servedN, debitN int
		for _, a := range served {
			if a.kind == kind && a.who == who {
				servedN++
			}
		}
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM debits d WHERE d.account = $1 AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.id = d.id)`,
			account).Scan(&debitN); err != nil {
			t.Fatal(err)
		}
		if debitN < servedN || debitN > servedN+len(inFlight)+len(orphan) {
			t.Errorf("%s %d: %d debits for %d served calls (lost %d, in flight %d, 503s not given back %d)", kind, who, debitN, servedN,
				len(lostDebit), len(inFlight), len(orphan))
		}
	}
	for i, id := range ids {
		perPayer("key", i, id)
	}
	for i, w := range walletAddr {
		perPayer("siwx", i, w)
	}

	// The keys of the run are spread over every master.
	if clusterShards > 1 {
		per, err := cl.KeysPerMaster(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for addr, n := range per {
			if n == 0 {
				t.Errorf("master %s holds no key: %v", addr, per)
			}
		}
		t.Logf("keys per master: %v", per)
	}

	// Epochs: at least one closed with this run's revenue, each summing exactly.
	settletest.Eventually(t, 75*time.Second, "an epoch with this run's revenue closed", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM epochs WHERE state <> 'open' AND events > 0`) > 0, nil
	})
	erows, err := pool.Query(ctx, `SELECT e.id, e.carry_in_units, e.total_units, e.operators_units, e.platform_units, e.pool_units,
		e.distributed_units, e.carry_out_units, e.platform_operators_units, e.withheld_units,
		(SELECT COALESCE(sum(amount_units), 0) FROM revenue_events r WHERE r.booked_epoch = e.id)
		FROM epochs e WHERE e.state <> 'open' ORDER BY e.id`)
	if err != nil {
		t.Fatal(err)
	}
	closed := 0
	var prevID, prevCarry int64 = -1, 0
	for erows.Next() {
		var id, carryIn, total, ops, plat, pl, dist, carryOut, platOps, withheld, booked int64
		if err := erows.Scan(&id, &carryIn, &total, &ops, &plat, &pl, &dist, &carryOut, &platOps, &withheld, &booked); err != nil {
			t.Fatal(err)
		}
		closed++
		if total != booked || ops+plat+pl != total+withheld || dist+carryOut+platOps+withheld != ops+carryIn ||
			(prevID == id-1 && carryIn != prevCarry) {
			t.Errorf("epoch %d does not sum: total %d (revenue booked %d), operators %d + platform %d + pool %d, distributed %d + carry out %d + platform ops %d + withheld %d, carry in %d (previous carry out %d)",
				id, total, booked, ops, plat, pl, dist, carryOut, platOps, withheld, carryIn, prevCarry)
		}
		prevID, prevCarry = id, carryOut
	}
	erows.Close()

	// Reconcile: Redis and PostgreSQL agree on every key and bundle, except
	// for a 503 whose script ran on the master as it died and whose debit
	// PostgreSQL ingested first (an orphan above): Redis, without that
	// debit, is then ahead by exactly it. Every other debit the master
	// took with it was booked again on the promoted replica.
	orphanUnits := map[string]int64{}
	for _, id := range orphan {
		var account string
		var units int64
		if err := pool.QueryRow(ctx, `SELECT account, amount_units FROM debits WHERE id = $1`, id).Scan(&account, &units); err != nil {
			t.Fatal(err)
		}
		orphanUnits[account] += units
	}
	explained, lostUnits := 0, int64(0)
	for i, id := range ids {
		var spent int64
		if err := pool.QueryRow(ctx, `SELECT (SELECT COALESCE(sum(amount_units), 0) FROM debits WHERE account = $1)
			- (SELECT COALESCE(sum(amount_units), 0) FROM refunds WHERE account = $1)`, id).Scan(&spent); err != nil {
			t.Fatal(err)
		}
		bal, err := balances.BalanceAt(ctx, rdb, balances.Layout{Prefix: clusterPrefix, Shards: clusterShards}, id)
		if err != nil {
			t.Fatal(err)
		}
		diff := int64(bal) - int64(deposit-money.Units(spent))
		if diff == 0 {
			continue
		}
		explained++
		lostUnits += diff
		if diff != orphanUnits[id] {
			t.Errorf("key %d: Redis balance %d, PostgreSQL says %d: not explained by debits of 503s the master took with it (%d units)",
				i, bal, deposit-money.Units(spent), orphanUnits[id])
		}
	}
	walletsInWindow := 0
	for _, w := range walletAddr {
		if orphanUnits[w] > 0 {
			walletsInWindow++
		}
	}
	rep, err := reconcile.Run(ctx, pool, rdb, reconcile.Options{Prefix: clusterPrefix, Shards: clusterShards}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Changed != explained || rep.WalletsChanged > walletsInWindow {
		t.Errorf("reconcile: %d accounts and %d wallets differ (%v); the failover explains %d accounts and at most %d wallets",
			rep.Changed, rep.WalletsChanged, rep.Fields, explained, walletsInWindow)
	}
	t.Logf("%d epochs closed and sum exactly; reconcile: %d accounts, %d wallets, %d accounts and %d wallets differ, all by debits of 503s the master took with it (%d units on keys); load ran %v, test took %v",
		closed, rep.Accounts, rep.Wallets, rep.Changed, rep.WalletsChanged, lostUnits, loadEnded.Sub(began).Round(time.Second), time.Since(began).Round(time.Second))
}

// clusterSIWX is a SIGN-IN-WITH-X header for gw signed by key, with a fresh
// nonce: the gateway does not hand nonces out, it only refuses a used one.
func clusterSIWX(t *testing.T, gw *caddyrun.Server, key *ecdsa.PrivateKey) string {
	var n [16]byte
	for i := range n {
		n[i] = byte(rand.IntN(256))
	}
	host := strings.TrimPrefix(gw.URL(), "http://")
	p := map[string]any{"domain": host, "address": crypto.PubkeyToAddress(key.PublicKey).Hex(),
		"statement": "Sign in to use this wallet's Tollgate x402 bundle.", "uri": gw.URL() + "/rpc", "version": "1",
		"chainId": x402NetworkV2, "type": "eip191", "nonce": hex.EncodeToString(n[:]),
		"issuedAt": time.Now().UTC().Format(time.RFC3339), "resources": []string{gw.URL() + "/rpc"}}
	sig, err := crypto.Sign(accounts.TextHash([]byte(siweText(p))), key)
	if err != nil {
		t.Error(err)
		return ""
	}
	sig[64] += 27
	p["signature"] = hexutil.Encode(sig)
	return b64JSON(p)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// eventsPending reads a gateway's tollgate_meter_events_pending: the
// revenue and ledger events its asynchronous writer still holds.
func eventsPending(g *caddyrun.Server) (int, error) {
	resp, err := http.Get("http://" + g.AdminAddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "tollgate_meter_events_pending "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("no tollgate_meter_events_pending on %s", g.AdminAddr)
}
