package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/contracts/devnet"
	"github.com/tollgate-rpc/tollgate/internal/caddyrun"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/ingest"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/reconcile"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
	"github.com/tollgate-rpc/tollgate/shared/balances"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The bounds the Redis loss test states and checks.
const (
	// lossRebuildBound: once settlementd runs next to the restarted, empty
	// Redis (the test pauses it across the kill and resumes it after it
	// has seen the gateway answer "recovering"), it must have noticed the
	// missing generation marker, rebuilt every key and balance from
	// PostgreSQL and set the marker, and every key must have been served a
	// paid call again, within this. Restarted from its AOF, Redis needs no
	// rebuild: every key is paid again within this of Redis answering.
	lossRebuildBound = 15 * time.Second
	lossKeys         = 4
	lossWorkers      = 2 // per key
	lossPaidBefore   = 400
	lossPaidAfter    = 400
	// lossKills: Redis is killed this many times in one run, under the
	// load, with no step by anyone: restarted empty, or (every
	// second kill) from an RDB snapshot it saved lossInUse before the kill
	// — a Redis older than the ledger, as the default `save` settings
	// bring back after a crash.
	lossKills = 10
	// lossInUse: every key is served paid for at least this long before
	// each kill (keys in use, not fresh ones).
	lossInUse = 10 * time.Second
)

// replayedRe reads the gateway's log line of a replay to an empty Redis.
var replayedRe = regexp.MustCompile(`money facts not yet stored appended again.*?"facts":\s*(\d+)`)

// lossCaddyfile: our gateway on the test's own redis-server, chain 137 from
// the dev chain, no free tier (a key call that is not paid from credits is
// refused, so a call served without payment cannot hide in the free tier),
// no rate limits.
const lossCaddyfile = `{
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
			upstream_timeout 2s
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
			chain 137 {
				provider devchain @RPC@
			}
		}
		respond 404
	}
}
`

// ownRedis is a redis-server of this test on its own port, killed with
// SIGKILL and restarted on the same port (and, with AOF, the same data).
type ownRedis struct {
	t    *testing.T
	port int
	dir  string
	args []string
	cmd  *exec.Cmd
	done chan struct{}
	log  *syncBuf
}

// fsync is the AOF's appendfsync ("always", "everysec"), "" for none.
func startOwnRedis(t *testing.T, fsync string) *ownRedis {
	t.Helper()
	r := &ownRedis{t: t, port: caddyrun.FreePort(t), log: &syncBuf{}, dir: t.TempDir()}
	r.args = []string{"--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--dir", r.dir, "--daemonize", "no"}
	if fsync != "" {
		// Every write reaches the AOF file (the kernel's page cache, which a
		// process kill does not lose) before its reply is sent, whatever the
		// fsync policy: that decides what a machine crash loses, not a kill.
		r.args = append(r.args, "--appendonly", "yes", "--appendfsync", fsync)
	} else {
		r.args = append(r.args, "--appendonly", "no")
	}
	r.start()
	t.Cleanup(func() {
		if r.cmd != nil {
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

func (r *ownRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

func (r *ownRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", r.args...)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("redis-server: %v", err)
	}
	done := make(chan struct{})
	r.done = done
	cmd := r.cmd
	go func() { _ = cmd.Wait(); close(done) }()
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port), MaxRetries: -1})
	defer c.Close()
	settletest.Eventually(r.t, 20*time.Second, "own redis-server answers", func() (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("redis-server exited: %s", r.log)
		default:
		}
		// PING answers while an AOF is still loading (-LOADING); DBSIZE does not.
		return c.DBSize(context.Background()).Err() == nil, nil
	})
}

// kill SIGKILLs the server and waits until the process is gone.
func (r *ownRedis) kill() {
	r.t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
	<-r.done
	r.cmd = nil
}

// lossAnswer is one request of the load as its client saw it.
type lossAnswer struct {
	key        int
	status     int
	payer      string // X-Tollgate-Payer
	reqID      string // X-Tollgate-Request-Id
	recovering bool   // 503 metering_recovering
	retryAfter string
	body       string
	sent, done time.Time
}

// decided is when the meter decided the request (the request id is a ULID
// made at the decision).
func (a *lossAnswer) decided(t *testing.T) time.Time {
	id, err := ulid.Parse(a.reqID)
	if err != nil {
		t.Fatalf("request id %q: %v", a.reqID, err)
	}
	return ulid.Time(id.Time())
}

// TestRedisLossUnderPaidLoad shows what happens when Redis
// is SIGKILLed under paid load from several keys, through our Caddy binary
// and the settlementd binary, and restarted.
//
//   - aof, aof-everysec: Redis restarts from its AOF (appendfsync always,
//     everysec), once. Nothing
//     paid is lost: every call served paid has its debit and its revenue
//     event in PostgreSQL and no other call has revenue (revenue = served,
//     exactly, by request id); every debit is a served call, except a request
//     whose script ran in the instant of the kill and whose reply was lost —
//     the gateway answered it 503 with its request id, and the test matches
//     them.
//   - wiped: Redis is killed lossKills times in one run, each time after
//     every key was served paid for lossInUse; it restarts empty, or every
//     second time from an RDB snapshot it saved at the start of those
//     lossInUse (older than the ledger: found by the gateway's first
//     decision, wiped and rebuilt like an empty one), with no step
//     by anyone. The gateway answers every key 503 metering_recovering with
//     Retry-After (never 401 or 402) until settlementd's leader notices the
//     missing generation marker and rebuilds every key and balance from
//     PostgreSQL by itself, within lossRebuildBound. The gateway appends the
//     money facts it kept (meter.Retention: debits and revenue entries not
//     yet acknowledged as stored) to the empty Redis, and the rebuild waits
//     for them to be ingested: so every call served paid, before or after
//     any wipe, has exactly one debit and one revenue event in PostgreSQL,
//     no debit is without a served call (but for a 503 whose reply was lost
//     in a kill, reported), and the Redis balances equal deposits − the
//     debits PostgreSQL has, exactly.
//
// Both: zero 401 and zero 402 answers to the valid keys, and no call of a
// key served other than paid from credits.
func TestRedisLossUnderPaidLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway, settlementd, a dev chain and its own redis-server")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	t.Cleanup(cancel)
	d, err := devnet.Start(ctx, devnet.Config{BlockInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	bin := settlementdBinary(t)
	t.Run("aof", func(t *testing.T) { redisLoss(t, ctx, bin, d.Manifest, "always") })
	t.Run("aof-everysec", func(t *testing.T) { redisLoss(t, ctx, bin, d.Manifest, "everysec") })
	t.Run("wiped", func(t *testing.T) { redisLoss(t, ctx, bin, d.Manifest, "") })
}

// settlementdBinary is $TOLLGATE_SETTLEMENTD_BIN (make test builds it) or
// a fresh build of this package.
func settlementdBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TOLLGATE_SETTLEMENTD_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("TOLLGATE_SETTLEMENTD_BIN=%s: %v", p, err)
		}
		return p
	}
	bin := filepath.Join(t.TempDir(), "settlementd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func redisLoss(t *testing.T, ctx context.Context, bin string, m *devnet.Manifest, fsync string) {
	aof := fsync != ""
	began := time.Now()
	const prefix = "tollgate:"
	l := balances.Layout{Prefix: prefix}
	rs := startOwnRedis(t, fsync)
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", rs.port), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	dsn, pool := settletest.DB(t)

	// settlementd, the binary: ingest, leader election, the Redis watcher.
	sdLog := &syncBuf{}
	sd := exec.Command(bin, "run")
	sd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "REDIS_URL="+rs.url(), "TOLLGATE_PREFIX="+prefix,
		fmt.Sprintf("TOLLGATE_HTTP_ADDR=127.0.0.1:%d", caddyrun.FreePort(t)), "TOLLGATE_INGEST_BLOCK=100ms",
		"TOLLGATE_LEADER_HEARTBEAT=200ms", "TOLLGATE_LEADER_RETRY=200ms", "TOLLGATE_REDIS_WATCH_INTERVAL=1s",
		// Entries read just before the kill whose XACK the kill lost are
		// pending again after an AOF restart: claim them back soon.
		"TOLLGATE_CLAIM_MIN_IDLE=1s", "TOLLGATE_CLAIM_EVERY=200ms",
		"TOLLGATE_AUTH_DOMAIN=localhost")
	sd.Stdout, sd.Stderr = sdLog, sdLog
	if err := sd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sd.Process.Signal(syscall.SIGCONT) // if a failure left it paused
		_ = sd.Process.Signal(syscall.SIGTERM)
		_ = sd.Wait()
		if t.Failed() {
			t.Logf("settlementd log:\n%s", sdLog)
		}
	})
	// Its start-up check finds a new deployment without the marker and
	// sets it after a (no-op) rebuild.
	settletest.Eventually(t, 30*time.Second, "settlementd sets the generation marker", func() (bool, error) {
		ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix)
		return ok, nil
	})

	payTo, err := m.Account("treasury")
	if err != nil {
		t.Fatal(err)
	}
	gw := caddyrun.Start(t, strings.NewReplacer("@PREFIX@", prefix, "@RPC@", m.Polygon.RPCURL,
		"@VAULT@", m.Polygon.RevenueVault, "@USDT@", m.Polygon.USDT, "@USDC@", m.Base.USDC, "@PAYTO@", payTo.Address).Replace(lossCaddyfile), "TG_REDIS_URL="+rs.url())
	client := &http.Client{Timeout: 15 * time.Second}
	settletest.Eventually(t, 30*time.Second, "chain 137 healthy", func() (bool, error) {
		resp, err := client.Get(gw.URL() + "/rpc/health")
		if err != nil {
			return false, nil
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"healthy":true`)), nil
	})

	// Keys made by the gateway, credited as the deposit listener books a
	// deposit (ledger row, then the Redis credit), once settlementd has
	// ingested their creation: a key created less than an ingest cycle
	// before a wipe is lost with it (README, "Redis loss").
	const deposit = 1_000_000 * money.PricePerCall
	secrets, ids := fundedKeys(t, client, pool, lossKeys, "loss", deposit, func(int) string { return gw.URL() },
		func(id, ref string) (bool, error) {
			applied, _, err := balances.Credit(ctx, rdb, prefix, id, deposit, ref)
			return applied, err
		})

	// The load: lossWorkers clients per key, each calling back to back.
	var (
		mu      sync.Mutex
		answers []lossAnswer
		paid    atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	for k := range lossKeys {
		for range lossWorkers {
			wg.Go(func() {
				for !stop.Load() {
					req, _ := http.NewRequest(http.MethodPost, gw.URL()+"/rpc", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-API-Key", secrets[k])
					a := lossAnswer{key: k, sent: time.Now()}
					resp, err := client.Do(req)
					if err != nil {
						t.Errorf("key %d: %v", k, err)
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					a.done, a.status, a.body = time.Now(), resp.StatusCode, string(b)
					a.payer, a.reqID, a.retryAfter = resp.Header.Get("X-Tollgate-Payer"), resp.Header.Get("X-Tollgate-Request-Id"), resp.Header.Get("Retry-After")
					a.recovering = a.status == http.StatusServiceUnavailable && strings.Contains(a.body, `"reason":"metering_recovering"`)
					if a.status == http.StatusOK && a.payer == "credits" {
						paid.Add(1)
					}
					mu.Lock()
					answers = append(answers, a)
					mu.Unlock()
				}
			})
		}
	}
	stopLoad := func() {
		stop.Store(true)
		wg.Wait()
	}
	t.Cleanup(stopLoad)
	settletest.Eventually(t, 60*time.Second, fmt.Sprintf("%d paid calls before the kill", lossPaidBefore), func() (bool, error) {
		return paid.Load() >= lossPaidBefore, nil
	})

	// Kill Redis under the load and bring it back on the same port, once
	// with its AOF, lossKills times empty or from an older RDB.
	// settlementd is paused (SIGSTOP) from each kill until the test has
	// seen the gateway answer on the restarted Redis without it — so the
	// answers before a rebuild are observed on every run, not only when the
	// watcher's next tick happens to come late — then resumed (SIGCONT).
	kills := 1
	if !aof {
		kills = lossKills
	}
	var killAts []time.Time
	inUseFrom := time.Now() // every key has been served paid since
	rdbRestarts := 0
	for kill := range kills {
		// Every second kill restarts from an RDB snapshot saved now, at the
		// start of the keys' lossInUse: older than the ledger by then.
		fromRDB := !aof && kill%2 == 1
		var savedSeq, ledgerAtKill int64
		if fromRDB {
			// Read before the SAVE: the snapshot's count is at least this.
			savedSeq, _ = rdb.Get(ctx, l.Seq()).Int64()
			if err := rdb.Save(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if !aof {
			settletest.Eventually(t, 2*lossInUse, fmt.Sprintf("every key served paid for %v before kill %d", lossInUse, kill+1), func() (bool, error) {
				return time.Since(inUseFrom) >= lossInUse, nil
			})
		}
		if fromRDB {
			// The ledger has caught up past the snapshot: the restored
			// Redis is older than what PostgreSQL holds.
			settletest.Eventually(t, 30*time.Second, "the ledger's state count passes the snapshot's", func() (bool, error) {
				ledgerAtKill, _ = rdb.Get(ctx, l.LedgerSeq()).Int64()
				return ledgerAtKill > savedSeq+100, nil
			})
		}
		killAt := time.Now()
		killAts = append(killAts, killAt)
		rs.kill()
		if err := sd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if !aof && !fromRDB {
			if err := os.Remove(filepath.Join(rs.dir, "dump.rdb")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		if fromRDB {
			rdbRestarts++
		}
		rs.start()
		upAt := time.Now()
		// The gateway and settlementd reconnect at once, so "empty" is checked
		// by what cannot come back: the stream's oldest entry and the marker.
		first, err := rdb.XRangeN(ctx, l.Stream(0), "-", "+", 1).Result()
		if err != nil {
			t.Fatal(err)
		}
		if oldest := ""; len(first) > 0 {
			oldest = first[0].ID
			var ms int64
			fmt.Sscanf(oldest, "%d-", &ms)
			// Restarted empty, the stream may hold the facts the gateway
			// replayed: entries appended now.
			if restored := ms < killAt.UnixMilli(); restored != (aof || fromRDB) {
				t.Fatalf("the restarted Redis's oldest stream entry %s is from %v before the kill (aof %v)", oldest, killAt.Sub(time.UnixMilli(ms)), aof)
			}
		} else if aof || fromRDB {
			t.Fatal("the AOF or RDB restart brought no stream back")
		}
		if fromRDB {
			if v, _ := rdb.Get(ctx, l.Seq()).Int64(); v != -1 && (v < savedSeq || v >= ledgerAtKill) {
				t.Fatalf("restored from the snapshot, the state count is %d, want the snapshot's (from %d, below the ledger's %d) or -1 (found older)", v, savedSeq, ledgerAtKill)
			}
		}
		t.Logf("kill %d: Redis killed after %d paid calls; answering again %v later (from an RDB snapshot: %v)", kill+1, paid.Load(), upAt.Sub(killAt).Round(time.Millisecond), fromRDB)

		// Without settlementd: from its AOF Redis kept the marker, so keys are
		// paid at once; restarted empty it has none, so keys are "recovering".
		settletest.Eventually(t, 30*time.Second, "50 answers on the restarted Redis while settlementd is paused", func() (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, a := range answers {
				if a.sent.After(upAt) && (aof && a.status == http.StatusOK || !aof && a.recovering) {
					n++
				}
			}
			return n >= 50, nil
		})
		if err := sd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		resumeAt := time.Now()
		from := upAt // what the bound counts from: Redis answering (AOF) or settlementd running again (wiped)
		if !aof {
			from = resumeAt
		}

		// Recovery: the marker back and every key paid again, within the bound.
		var markerAt time.Time
		keyBackAt := make([]time.Time, lossKeys)
		settletest.Eventually(t, lossRebuildBound, "the marker and a paid call of every key", func() (bool, error) {
			if markerAt.IsZero() {
				if ok, _ := reconcile.MarkerPresent(ctx, rdb, prefix); ok {
					markerAt = time.Now()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			back := 0
			for k := range keyBackAt {
				if keyBackAt[k].IsZero() {
					for _, a := range answers {
						if a.key == k && a.status == http.StatusOK && a.sent.After(from) {
							keyBackAt[k] = a.done
							break
						}
					}
				}
				if !keyBackAt[k].IsZero() {
					back++
				}
			}
			return !markerAt.IsZero() && back == lossKeys, nil
		})
		slowest := time.Duration(0)
		for _, at := range keyBackAt {
			slowest = max(slowest, at.Sub(from))
		}
		if slowest > lossRebuildBound {
			t.Errorf("a key waited %v for a paid call (bound %v)", slowest, lossRebuildBound)
		}
		t.Logf("kill %d: after %s: marker present at +%v, every key paid again by +%v (bound %v)", kill+1,
			map[bool]string{true: "the restart", false: "settlementd resumed"}[aof],
			max(markerAt.Sub(from), 0).Round(time.Millisecond), slowest.Round(time.Millisecond), lossRebuildBound)

		inUseFrom = time.Time{}
		for _, at := range keyBackAt {
			if at.After(inUseFrom) {
				inUseFrom = at
			}
		}
		target := paid.Load() + lossPaidAfter
		settletest.Eventually(t, 60*time.Second, fmt.Sprintf("%d paid calls after the recovery", lossPaidAfter), func() (bool, error) {
			return paid.Load() >= target, nil
		})
	}
	upAt := killAts[len(killAts)-1]
	stopLoad()

	// Tally what the clients saw.
	var served []lossAnswer
	unavailable := map[string]bool{} // request ids of 503s whose script may have run
	var recovering, down503, bad int
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK && a.payer == "credits" && a.reqID != "":
			served = append(served, a)
		case a.recovering:
			recovering++
			if a.retryAfter == "" {
				t.Errorf("503 metering_recovering without Retry-After: %s", a.body)
				bad++
			}
		case a.status == http.StatusServiceUnavailable && strings.Contains(a.body, "metering unavailable"):
			down503++
			if a.reqID != "" {
				unavailable[a.reqID] = true
			}
		default:
			bad++
			if bad <= 5 {
				t.Errorf("key %d: unexpected answer %d payer %q: %s", a.key, a.status, a.payer, a.body)
			}
		}
	}
	t.Logf("%d requests: %d served paid, %d answered 503 metering_recovering, %d answered 503 metering unavailable (Redis down), %d other",
		len(answers), len(served), recovering, down503, bad)
	if bad != 0 {
		t.Fatalf("%d answers were neither paid service nor a 503 with Retry-After (a 401 or 402 to a valid key counts here)", bad)
	}
	if !aof && recovering == 0 {
		t.Fatal("no request met the rebuild window: the test did not exercise metering_recovering")
	}

	// The books, once the gateway's revenue events and settlementd's ingest
	// have caught up: every served call's revenue event is in PostgreSQL.
	servedIDs := map[string]*lossAnswer{}
	for i := range served {
		servedIDs[served[i].reqID] = &served[i]
	}
	settletest.Eventually(t, 60*time.Second, "the debit and revenue of every served call and the refund of every booked 503 ingested, and the stream drained", func() (bool, error) {
		rev := idSet(t, pool, `SELECT id FROM revenue_events WHERE payer = 'credits'`)
		deb := idSet(t, pool, `SELECT id FROM debits WHERE payer = 'credits'`)
		for id := range servedIDs {
			if !deb[id] || !rev[id] {
				return false, nil
			}
		}
		if aof {
			refunded := idSet(t, pool, `SELECT id FROM refunds`)
			for id := range idSet(t, pool, `SELECT id FROM debits`) {
				if servedIDs[id] == nil && !refunded[id] {
					return false, nil
				}
			}
		}
		w, err := ingest.GroupWatermark(ctx, rdb, l.Stream(0), "settlementd")
		return err == nil && w.Drained(), nil
	})
	debits := idSet(t, pool, `SELECT id FROM debits WHERE payer = 'credits'`)
	revenue := idSet(t, pool, `SELECT id FROM revenue_events WHERE payer = 'credits'`)
	if len(servedIDs) != len(served) {
		t.Fatalf("%d served answers carry %d distinct request ids", len(served), len(servedIDs))
	}

	// Revenue: never for a call that was not served.
	for id := range revenue {
		if servedIDs[id] == nil {
			t.Errorf("revenue event %s for a call no client was served", id)
		}
	}
	// Debits: each one a served call, or a request answered 503 whose
	// script ran as Redis died (its reply lost) — and the gateway gave
	// those back in full once Redis answered again (meter.VoidIfBooked).
	// With a wiped Redis such a debit can only have reached PostgreSQL if
	// it was ingested in the instant before the kill; its refund cannot
	// be found any more, and it is reported, not refunded.
	var booked503 []string
	refunds := map[string]int64{}
	rrows, err := pool.Query(ctx, `SELECT id, amount_units FROM refunds`)
	if err != nil {
		t.Fatal(err)
	}
	for rrows.Next() {
		var id string
		var units int64
		if err := rrows.Scan(&id, &units); err != nil {
			t.Fatal(err)
		}
		refunds[id] = units
	}
	rrows.Close()
	for id := range debits {
		if servedIDs[id] == nil {
			if !unavailable[id] {
				t.Errorf("debit %s for a call no client was served or refused with its request id", id)
			}
			if aof && refunds[id] != int64(money.PricePerCall) {
				t.Errorf("debit %s of a request answered 503 was not given back (refund %d)", id, refunds[id])
			}
			booked503 = append(booked503, id)
		}
	}
	for id := range refunds {
		if !debits[id] || servedIDs[id] != nil {
			t.Errorf("refund %s of a call that was served or never debited", id)
		}
	}
	if aof && len(debits)-len(booked503) != len(served) {
		t.Errorf("aof: %d debits, %d of them given back, for %d served calls", len(debits), len(booked503), len(served))
	}
	// Every call a payer was served has exactly one debit (debits are keyed
	// by request id): none is lost, however many times Redis was wiped.
	for id, a := range servedIDs {
		if !debits[id] {
			t.Errorf("call %s (key %d, decided %v after the last restart) was served without a debit", id, a.key, a.decided(t).Sub(upAt))
		}
		if !revenue[id] {
			t.Errorf("call %s (key %d) served without a revenue event", id, a.key)
		}
	}
	if !aof && len(debits)-len(booked503) != len(served) {
		t.Errorf("wiped: %d debits, %d of them of 503 answers, for %d served calls", len(debits), len(booked503), len(served))
	}
	replayed := 0
	for _, m := range replayedRe.FindAllStringSubmatch(gw.Output(), -1) {
		n, _ := strconv.Atoi(m[1])
		replayed += n
	}
	sort.Strings(booked503)
	t.Logf("PostgreSQL: %d debits, %d revenue events, %d served paid calls; debits of 503 answers (reply lost in the kill): %d %v; "+
		"money facts (debits, revenue entries) the gateway appended again to the empty Redis: %d",
		len(debits), len(revenue), len(served), len(booked503), booked503, replayed)
	if !aof && replayed == 0 {
		t.Error("the gateway replayed nothing: the wipes did not exercise the replay")
	}
	if len(revenue) != len(served) {
		t.Errorf("%d revenue events for %d served calls", len(revenue), len(served))
	}

	// Balances: Redis (rebuilt or restored) = deposits − the debits
	// PostgreSQL holds + their refunds, per key, exactly.
	for i, id := range ids {
		var spent int64
		if err := pool.QueryRow(ctx, `SELECT (SELECT COALESCE(sum(amount_units), 0) FROM debits WHERE account = $1)
			- (SELECT COALESCE(sum(amount_units), 0) FROM refunds WHERE account = $1)`, id).Scan(&spent); err != nil {
			t.Fatal(err)
		}
		bal, err := balances.Balance(ctx, rdb, prefix, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := deposit - money.Units(spent); bal != want {
			t.Errorf("key %d: Redis balance %d, want deposit − PostgreSQL debits + refunds = %d", i, bal, want)
		}
	}
	// One rebuild at start-up (a new deployment), and with a wiped Redis
	// one more; Redis restored from its AOF kept its marker.
	rebuilds := strings.Count(sdLog.String(), "Redis rebuilt from PostgreSQL")
	if aof && rebuilds != 1 || !aof && rebuilds < 1+lossKills {
		t.Errorf("settlementd logged %d rebuilds (aof %v)", rebuilds, aof)
	}
	// Each restart from a snapshot was found older than the ledger and
	// alerted (the gateway's first decision on it, or settlementd).
	alerts := strings.Count(gw.Output(), "ALERT: the metering Redis is older than the ledger") +
		strings.Count(sdLog.String(), "ALERT: Redis is older than the ledger")
	if aof && alerts != 0 || alerts < rdbRestarts {
		t.Errorf("%d alerts of a Redis older than the ledger for %d restarts from a snapshot", alerts, rdbRestarts)
	}
	t.Logf("took %v", time.Since(began).Round(time.Second))
}

func idSet(t *testing.T, pool *pgxpool.Pool, q string) map[string]bool {
	t.Helper()
	rows, err := pool.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fundedKeys creates n keys through the gateway at gatewayURL(i), waits
// until settlementd has ingested their creation (a key created less than an
// ingest cycle before a Redis wipe is lost with it), and credits each with
// deposit units as the deposit listener books a deposit: the ledger row,
// then credit(id, ref) in Redis.
func fundedKeys(t *testing.T, client *http.Client, pool *pgxpool.Pool, n int, label string, deposit money.Units,
	gatewayURL func(int) string, credit func(id, ref string) (bool, error)) (secrets, ids []string) {
	t.Helper()
	secrets, ids = make([]string, n), make([]string, n)
	for i := range n {
		resp, err := client.Post(gatewayURL(i)+"/api/keys", "application/json", strings.NewReader(fmt.Sprintf(`{"label":"%s %d","tier":"free"}`, label, i)))
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Key string `json:"api_key"`
			ID  string `json:"key_id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&k)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create key: %d %v", resp.StatusCode, err)
		}
		secrets[i], ids[i] = k.Key, k.ID
	}
	settletest.Eventually(t, 30*time.Second, "keys ingested", func() (bool, error) {
		return settletest.Count(t, pool, `SELECT count(*) FROM api_keys`) == int64(n), nil
	})
	for i, id := range ids {
		ref := fmt.Sprintf("0x%s%d:0", label, i)
		if _, err := pool.Exec(context.Background(), `INSERT INTO account_ledger (account, kind, ref, units, ts) VALUES ($1, 'deposit', $2, $3, now())`,
			id, ref, int64(deposit)); err != nil {
			t.Fatal(err)
		}
		if applied, err := credit(id, ref); err != nil || !applied {
			t.Fatalf("credit: %v %v", applied, err)
		}
	}
	return secrets, ids
}
