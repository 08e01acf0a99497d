package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// cutter is a TCP forwarder whose link can be cut (every connection closed,
// new ones refused) and restored: a dependency going down and coming back.
type cutter struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newCutter(t *testing.T, target string) *cutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { _ = ln.Close(); c.cut(true) })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			if c.down {
				c.mu.Unlock()
				_ = in.Close()
				continue
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				c.mu.Unlock()
				_ = in.Close()
				continue
			}
			c.conns[in], c.conns[out] = true, true
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	return c
}

func (c *cutter) addr() string { return c.ln.Addr().String() }

func (c *cutter) cut(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
	if down {
		for k := range c.conns {
			_ = k.Close()
		}
		c.conns = map[net.Conn]bool{}
	}
}

func withHost(t *testing.T, raw, host string) (string, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	old := u.Host
	u.Host = host
	return u.String(), old
}

// /health answers 503 with ok:false while Postgres or Redis is unreachable
// (a real outage: the connections are cut), and 200 again once it is back.
func TestHealthDuringDependencyOutage(t *testing.T) {
	dsn := testenv.Postgres(t)
	prefix := testenv.KeyPrefix(t)
	testenv.Redis(t)
	_, pgHost := withHost(t, dsn, "")
	pg := newCutter(t, pgHost)
	proxiedDSN, _ := withHost(t, dsn, pg.addr())
	_, redisHost := withHost(t, os.Getenv("REDIS_URL"), "")
	rd := newCutter(t, redisHost)
	proxiedRedis, _ := withHost(t, os.Getenv("REDIS_URL"), rd.addr())

	cfg := testConfig(proxiedDSN, prefix, "outage")
	cfg.RedisURL = proxiedRedis
	d, err := New(context.Background(), cfg, zap.NewNop(), "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = d.Run(ctx) })
	t.Cleanup(func() { pg.cut(false); rd.cut(false); cancel(); wg.Wait() })

	status := func() (int, string, string, bool) {
		resp, err := http.Get("http://" + d.Addr().String() + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		h := health(t, &replica{d: d})
		return resp.StatusCode, h.DB, h.Redis, h.OK
	}
	wait := func(what string, code int, db, redis string) {
		t.Helper()
		settletest.Eventually(t, 15*time.Second, what, func() (bool, error) {
			c, gotDB, gotRedis, ok := status()
			return c == code && gotDB == db && gotRedis == redis && ok == (code == http.StatusOK), nil
		})
	}
	wait("healthy", 200, "connected", "connected")
	pg.cut(true)
	wait("Postgres down", 503, "disconnected", "connected")
	pg.cut(false)
	wait("Postgres back", 200, "connected", "connected")
	rd.cut(true)
	wait("Redis down", 503, "connected", "disconnected")
	rd.cut(false)
	wait("Redis back", 200, "connected", "connected")
}
