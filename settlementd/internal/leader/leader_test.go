package leader

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

func start(t *testing.T, dsn string) (*Elector, context.CancelFunc) {
	e := New(dsn, Options{Heartbeat: 50 * time.Millisecond, Retry: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { e.Run(ctx) })
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return e, stop
}

func leaders(es ...*Elector) (n int, who *Elector) {
	for _, e := range es {
		if e.IsLeader() {
			n++
			who = e
		}
	}
	return n, who
}

func TestOneLeaderAndFailover(t *testing.T) {
	dsn := testenv.Postgres(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	a, stopA := start(t, dsn)
	b, _ := start(t, dsn)
	c, _ := start(t, dsn)
	settletest.Eventually(t, 10*time.Second, "a leader", func() (bool, error) { n, _ := leaders(a, b, c); return n == 1, nil })
	// Never two at once, over many heartbeats.
	for range 50 {
		if n, _ := leaders(a, b, c); n != 1 {
			t.Fatalf("%d leaders", n)
		}
		time.Sleep(10 * time.Millisecond) // sampling interval
	}
	_, first := leaders(a, b, c)
	if err := first.Fence(context.Background(), pool); err != nil {
		t.Fatalf("leader's fence: %v", err)
	}
	for _, e := range []*Elector{a, b, c} {
		if e != first && e.Fence(context.Background(), pool) != ErrNotLeader {
			t.Fatal("a follower passed the fence")
		}
	}
	lctx, _ := first.Context()

	// The leader's session dies (network cut, backend killed): it must step
	// down and another replica take over.
	first.mu.Lock()
	pid := first.pid
	first.mu.Unlock()
	if _, err := pool.Exec(context.Background(), `SELECT pg_terminate_backend($1)`, int32(pid)); err != nil {
		t.Fatal(err)
	}
	settletest.Eventually(t, 10*time.Second, "leadership context cancelled", func() (bool, error) { return lctx.Err() != nil, nil })
	settletest.Eventually(t, 10*time.Second, "a new leader", func() (bool, error) {
		n, who := leaders(a, b, c)
		return n == 1 && who != nil, nil
	})

	// An orderly stop hands over at once too.
	if a.IsLeader() {
		stopA()
		settletest.Eventually(t, 10*time.Second, "a new leader after a's stop", func() (bool, error) { n, _ := leaders(b, c); return n == 1, nil })
	}
}

// A stale leader — one whose session was taken over but which has not
// noticed yet — fails the fence, so its writes roll back.
func TestFenceCatchesStaleLeader(t *testing.T) {
	dsn := testenv.Postgres(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// A long heartbeat keeps a from noticing its session's death.
	a := New(dsn, Options{Heartbeat: time.Hour, Retry: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { a.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	settletest.Eventually(t, 10*time.Second, "a leads", func() (bool, error) { return a.IsLeader(), nil })
	a.mu.Lock()
	pid := a.pid
	a.mu.Unlock()
	if _, err := pool.Exec(context.Background(), `SELECT pg_terminate_backend($1)`, int32(pid)); err != nil {
		t.Fatal(err)
	}
	b, _ := start(t, dsn)
	settletest.Eventually(t, 10*time.Second, "b leads", func() (bool, error) { return b.IsLeader(), nil })
	if !a.IsLeader() {
		t.Skip("a noticed its lost session before the check; nothing stale to fence")
	}
	if err := a.Fence(context.Background(), pool); err != ErrNotLeader {
		t.Fatalf("stale leader passed the fence: %v", err)
	}
	if err := b.Fence(context.Background(), pool); err != nil {
		t.Fatalf("new leader's fence: %v", err)
	}
}
