// Package jobs runs settlementd's periodic work (epoch closing now; deposits,
// settlement and solvency later) on cron schedules, on the leader only.
//
// A job is registered once with a schedule; every replica runs the same
// scheduler, and at each tick a replica that does not lead skips the run. The
// job's context is the leadership context, so losing leadership mid-run
// cancels it. Jobs that must never run twice also call the elector's Fence in
// their own transaction (see package leader).
package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"
)

// Job is one unit of periodic work. Run must honour ctx and be safe to
// repeat: a run cut short (crash, lost leadership) is simply run again.
type Job interface {
	Name() string
	Run(ctx context.Context) error
}

// Func adapts a function to Job.
type Func struct {
	JobName string
	Fn      func(ctx context.Context) error
}

func (f Func) Name() string                  { return f.JobName }
func (f Func) Run(ctx context.Context) error { return f.Fn(ctx) }

// Leadership tells the scheduler whether this replica may run jobs.
type Leadership interface {
	// Context returns a context cancelled when leadership ends, and whether
	// this replica leads now.
	Context() (context.Context, bool)
}

// Parser reads the schedules: an optional leading seconds field
// ("*/2 * * * * *" every 2 s, "0 */5 * * * *" every 5 min), the classic five
// fields, or descriptors such as "@every 5m".
var Parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Scheduler runs registered jobs on their schedules while this replica leads.
type Scheduler struct {
	lead Leadership
	log  *zap.Logger
	cron *cron.Cron

	mu      sync.Mutex
	names   map[string]bool
	started bool

	// hard is cancelled when Stop gives up waiting, cutting running jobs short.
	hard       context.Context
	hardCancel context.CancelFunc

	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	lastOK   *prometheus.GaugeVec
}

// New returns a scheduler; metrics go to reg (nil: not registered).
func New(lead Leadership, log *zap.Logger, reg prometheus.Registerer) *Scheduler {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Scheduler{
		lead:  lead,
		log:   log.Named("jobs"),
		names: map[string]bool{},
		cron:  cron.New(cron.WithParser(Parser), cron.WithLocation(time.UTC)),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "settlementd_job_runs_total",
			Help: "Scheduled job runs by job and result (ok, error, skipped: not leader, busy: previous run still going).",
		}, []string{"job", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "settlementd_job_duration_seconds",
			Help:    "Duration of job runs that executed.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"job"}),
		lastOK: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "settlementd_job_last_success_timestamp_seconds",
			Help: "Unix time of each job's last successful run.",
		}, []string{"job"}),
	}
	s.hard, s.hardCancel = context.WithCancel(context.Background())
	if reg != nil {
		reg.MustRegister(s.runs, s.duration, s.lastOK)
	}
	return s
}

// Add registers j under spec. Names must be unique: they label metrics and
// logs. Jobs may be added before or after Start.
func (s *Scheduler) Add(spec string, j Job) error {
	name := j.Name()
	if name == "" {
		return errors.New("jobs: job without a name")
	}
	sched, err := Parser.Parse(spec)
	if err != nil {
		return fmt.Errorf("jobs: %s: schedule %q: %w", name, spec, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names[name] {
		return fmt.Errorf("jobs: duplicate job %q", name)
	}
	s.names[name] = true
	s.cron.Schedule(sched, &entry{s: s, job: j})
	s.log.Info("job registered", zap.String("job", name), zap.String("schedule", spec))
	return nil
}

// Start begins scheduling.
func (s *Scheduler) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started = true
		s.cron.Start()
	}
}

// Stop stops scheduling and waits for running jobs to finish. When ctx ends
// first, running jobs are cancelled (their transactions roll back, to be
// redone by the next leader) and ctx's error is returned.
func (s *Scheduler) Stop(ctx context.Context) error {
	done := s.cron.Stop()
	select {
	case <-done.Done():
		return nil
	case <-ctx.Done():
		s.hardCancel()
		<-done.Done()
		return ctx.Err()
	}
}

// entry is one registered job; running keeps runs of the same job from
// overlapping when one outlasts its period.
type entry struct {
	s       *Scheduler
	job     Job
	running sync.Mutex
}

func (e *entry) Run() {
	s, name := e.s, e.job.Name()
	lctx, leading := s.lead.Context()
	if !leading {
		s.runs.WithLabelValues(name, "skipped").Inc()
		return
	}
	if !e.running.TryLock() {
		s.runs.WithLabelValues(name, "busy").Inc()
		return
	}
	defer e.running.Unlock()

	ctx, cancel := context.WithCancel(lctx)
	defer cancel()
	stop := context.AfterFunc(s.hard, cancel)
	defer stop()

	start := time.Now()
	err := run(ctx, e.job)
	s.duration.WithLabelValues(name).Observe(time.Since(start).Seconds())
	if err != nil {
		s.runs.WithLabelValues(name, "error").Inc()
		s.log.Error("job failed", zap.String("job", name), zap.Error(err))
		return
	}
	s.runs.WithLabelValues(name, "ok").Inc()
	s.lastOK.WithLabelValues(name).SetToCurrentTime()
}

// run calls the job, turning a panic into an error so one bad job cannot
// take the daemon (and its ingest) down.
func run(ctx context.Context, j Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return j.Run(ctx)
}
