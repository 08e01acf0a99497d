package ingest

import "github.com/prometheus/client_golang/prometheus"

// metrics of the ingest. Labels are bounded: event types come from the
// registered decoders, dead-letter classes and results are constants.
type metrics struct {
	events       *prometheus.CounterVec
	dead         *prometheus.CounterVec
	batches      *prometheus.CounterVec
	batchSeconds prometheus.Histogram
	claimed      prometheus.Counter
	// copyConflicts: batches whose COPY met an already stored row and
	// were written again with ON CONFLICT (copy.go).
	copyConflicts prometheus.Counter
	watermarkLag  prometheus.Gauge
	pending       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "settlementd_ingest_events_total",
			Help: "Events committed to Postgres, by type (each event of a packed entry counts; redeliveries included).",
		}, []string{"type"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "settlementd_ingest_dead_letters_total",
			Help: "Stream entries parked in dead_letters, by reason class.",
		}, []string{"reason"}),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "settlementd_ingest_batches_total",
			Help: "Batch transactions by result (ok, error).",
		}, []string{"result"}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "settlementd_ingest_batch_seconds",
			Help:    "Time to commit one batch.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		claimed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "settlementd_ingest_reclaimed_total",
			Help: "Pending entries taken over from dead consumers or recovered after a restart.",
		}),
		copyConflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "settlementd_ingest_copy_conflicts_total",
			Help: "Batches whose COPY met an already stored entry (a redelivery) and were written again with ON CONFLICT.",
		}),
		watermarkLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "settlementd_ingest_watermark_lag_seconds",
			Help: "Now minus the stream watermark (entries older than it are all committed).",
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "settlementd_ingest_pending_entries",
			Help: "Entries delivered to the consumer group and not yet acknowledged.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.events, m.dead, m.batches, m.batchSeconds, m.claimed, m.copyConflicts, m.watermarkLag, m.pending)
	}
	return m
}

func (m *metrics) observe(b *batch) {
	for typ, n := range b.counts {
		m.events.WithLabelValues(typ).Add(float64(n))
	}
	for _, d := range b.dead {
		m.dead.WithLabelValues(d.class).Inc()
	}
}
