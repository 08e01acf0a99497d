// Package leader elects one settlementd replica to run the scheduled jobs.
//
// The leader is whoever holds a session-level Postgres advisory lock
// (pglock.Leader) on a dedicated connection — not a pooled one, whose
// session could be handed to other work or recycled. The lock lives exactly
// as long as that backend session, so:
//   - a crashed or partitioned leader loses it when Postgres drops the
//     session, and another replica's pg_try_advisory_lock then succeeds;
//   - the leader pings its connection every heartbeat and steps down the
//     moment a ping fails, cancelling the context its jobs run under.
//
// Between a session dying and the next failed ping a stale leader may still
// think it leads; Fence closes that window for work that must never run
// twice, by checking inside the job's own transaction that this replica's
// backend still holds the lock.
package leader

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/pglock"
)

// ErrNotLeader is returned by Fence when this replica does not hold the lock.
var ErrNotLeader = errors.New("leader: this replica is not the leader")

// Options tune the election. Zero values take the defaults.
type Options struct {
	Heartbeat time.Duration // how often the leader pings its connection (default 1s)
	Retry     time.Duration // how often a follower tries to take the lock (default 2s)
	Logger    *zap.Logger
	// OnChange, when set, is called with the new state on every transition.
	OnChange func(leading bool)
}

// Elector campaigns for leadership until its Run context ends.
type Elector struct {
	dsn  string
	opts Options
	log  *zap.Logger

	mu     sync.Mutex
	ctx    context.Context // leadership context; nil while following
	cancel context.CancelFunc
	pid    uint32 // backend pid holding the lock
}

// New returns an elector for the database at dsn.
func New(dsn string, opts Options) *Elector {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = time.Second
	}
	if opts.Retry <= 0 {
		opts.Retry = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Elector{dsn: dsn, opts: opts, log: opts.Logger.Named("leader")}
}

// Context returns a context that is cancelled when this replica stops
// leading, and whether it leads now.
func (e *Elector) Context() (context.Context, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		return nil, false
	}
	return e.ctx, true
}

// IsLeader reports whether this replica leads now.
func (e *Elector) IsLeader() bool {
	_, ok := e.Context()
	return ok
}

// Fence checks, on q (typically the job's transaction), that this replica's
// lock session is alive and still holds the leader lock. A job that commits
// after a successful Fence in the same transaction cannot be racing another
// leader: the other one could only have taken the lock after our session
// ended, and then Fence would have failed.
func (e *Elector) Fence(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) error {
	e.mu.Lock()
	pid, leading := e.pid, e.ctx != nil
	e.mu.Unlock()
	if !leading {
		return ErrNotLeader
	}
	var held bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND classid::bigint = $1 AND objid::bigint = $2
		  AND objsubid = 2 AND granted AND pid = $3)`,
		int64(pglock.Namespace), int64(pglock.Leader), int64(pid)).Scan(&held)
	if err != nil {
		return err
	}
	if !held {
		return ErrNotLeader
	}
	return nil
}

// Run campaigns until ctx ends, then releases the lock (if held) and returns.
func (e *Elector) Run(ctx context.Context) {
	defer e.step(false, 0)
	for ctx.Err() == nil {
		conn, err := e.connect(ctx)
		if err != nil {
			if ctx.Err() == nil {
				e.log.Warn("connecting for leader election", zap.Error(err))
			}
			wait(ctx, e.opts.Retry)
			continue
		}
		e.campaign(ctx, conn)
		e.step(false, 0)
		closeCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = conn.Close(closeCtx) // ends the session, so Postgres frees the lock
		cancel()
	}
}

func (e *Elector) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(e.dsn)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 5*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
	}
	cfg.RuntimeParams["application_name"] = "settlementd-leader"
	return pgx.ConnectConfig(ctx, cfg)
}

// campaign tries for the lock on conn until conn fails or ctx ends; while it
// holds the lock it heartbeats. It returns when the caller must reconnect.
func (e *Elector) campaign(ctx context.Context, conn *pgx.Conn) {
	for ctx.Err() == nil {
		var got bool
		qctx, cancel := context.WithTimeout(ctx, e.opts.Heartbeat+5*time.Second)
		err := conn.QueryRow(qctx, `SELECT pg_try_advisory_lock($1, $2)`, pglock.Namespace, int32(pglock.Leader)).Scan(&got)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				e.log.Warn("trying the leader lock", zap.Error(err))
			}
			return
		}
		if !got {
			wait(ctx, e.opts.Retry)
			continue
		}
		e.step(true, conn.PgConn().PID())
		for {
			wait(ctx, e.opts.Heartbeat)
			if ctx.Err() != nil {
				// Orderly shutdown: step down first (so no job of ours runs
				// on), then give the lock back at once rather than making the
				// next leader wait for the session to end.
				e.step(false, 0)
				uctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, _ = conn.Exec(uctx, `SELECT pg_advisory_unlock($1, $2)`, pglock.Namespace, int32(pglock.Leader))
				cancel()
				return
			}
			pctx, cancel := context.WithTimeout(ctx, e.opts.Heartbeat)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					e.log.Warn("leader connection lost; stepping down", zap.Error(err))
				}
				return
			}
		}
	}
}

// step records a transition and notifies.
func (e *Elector) step(leading bool, pid uint32) {
	e.mu.Lock()
	was := e.ctx != nil
	if leading && !was {
		e.ctx, e.cancel = context.WithCancel(context.Background())
		e.pid = pid
	} else if !leading && was {
		e.cancel()
		e.ctx, e.cancel, e.pid = nil, nil, 0
	}
	e.mu.Unlock()
	if leading == was {
		return
	}
	if leading {
		e.log.Info("became leader", zap.Uint32("backend_pid", pid))
	} else {
		e.log.Info("stepped down")
	}
	if e.opts.OnChange != nil {
		e.opts.OnChange(leading)
	}
}

// wait sleeps for d or until ctx ends (a timer, not synchronisation: it paces
// retries and heartbeats).
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
