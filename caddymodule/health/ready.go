package health

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// Liveness and readiness of this gateway process, for load balancers and
// orchestrators (docs/operators.md, "Health endpoints"), apart from the
// spec's /health (settlementd's, behind the gateway) and /rpc/health (the
// pools):
//
//	GET /livez   200 while the handler serves at all
//	GET /readyz  200 when this gateway can meter: its Redis answers PING;
//	             503 when it does not
//
// Readiness depends on nothing else: PostgreSQL and settlementd are off the
// hot path (a paid call never waits on them), and one chain's provider
// outage is that chain's 503, not a reason to pull every chain's gateway.
const (
	LivePath  = "/livez"
	ReadyPath = "/readyz"
	// readyCache is how long one PING's outcome answers /readyz: the path
	// is public, so a flood of probes costs Redis one PING per period.
	readyCache = 500 * time.Millisecond
	// readyTimeout bounds the PING: a Redis that cannot answer in 2 s
	// cannot meter either.
	readyTimeout = 2 * time.Second
)

// Readiness remembers the last PING's outcome.
type Readiness struct {
	mu   sync.Mutex
	at   time.Time
	ok   bool
	busy chan struct{} // closed when the PING in flight ends
}

// Live answers GET /livez.
func Live(w http.ResponseWriter, r *http.Request) error {
	web.JSON(w, http.StatusOK, map[string]string{"status": "live"})
	return nil
}

// Ready answers GET /readyz; ping is the metering Redis' PING (nil: no
// Redis is configured).
func (rd *Readiness) Ready(w http.ResponseWriter, r *http.Request, ping func(context.Context) bool) error {
	if ping == nil { // metering off, no Redis: nothing to wait for
		web.JSON(w, http.StatusOK, map[string]string{"status": "ready", "redis": "not configured"})
		return nil
	}
	if rd.check(r.Context(), ping) {
		web.JSON(w, http.StatusOK, map[string]string{"status": "ready", "redis": "ok"})
		return nil
	}
	// No error text: it may name Redis' address.
	w.Header().Set("Retry-After", "1")
	web.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "redis": "unreachable"})
	return nil
}

// check answers from the cached outcome when it is fresh, else pings once
// (concurrent callers wait for the same PING).
func (rd *Readiness) check(ctx context.Context, ping func(context.Context) bool) bool {
	rd.mu.Lock()
	if time.Since(rd.at) < readyCache {
		ok := rd.ok
		rd.mu.Unlock()
		return ok
	}
	if busy := rd.busy; busy != nil {
		rd.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return false
		}
		rd.mu.Lock()
		ok := rd.ok
		rd.mu.Unlock()
		return ok
	}
	done := make(chan struct{})
	rd.busy = done
	rd.mu.Unlock()
	pctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	ok := ping(pctx)
	cancel()
	rd.mu.Lock()
	rd.at, rd.ok, rd.busy = time.Now(), ok, nil
	rd.mu.Unlock()
	close(done)
	return ok
}
