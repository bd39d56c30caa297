// Package metrics exports paraply's state to Prometheus: a Collector that
// reads the pipeline's status at scrape time (nothing on the apply path
// pays for metrics it does not need), and a Workers observer that counts
// what each worker does as it happens.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/stage"
)

// WorkerStats is one worker's counters.
type WorkerStats struct {
	Worker        int     `json:"worker"`
	Transactions  int64   `json:"transactions"`   // source transactions applied
	Works         int64   `json:"works"`          // target transactions committed
	Retries       int64   `json:"retries"`        // failed attempts retried
	TurnWaits     int64   `json:"turn_waits"`     // commits that had to wait for their turn
	ExecSeconds   float64 `json:"exec_seconds"`   // executing statements
	TurnSeconds   float64 `json:"turn_seconds"`   // waiting for the commit turn
	CommitSeconds float64 `json:"commit_seconds"` // in COMMIT
	// LastApplied is when the worker last committed, zero before: under
	// --workers auto the workers that apply are the ones used last (the
	// coordinator hands work to the worker that committed last), which
	// is how status tells the workers the limit allows from the rest.
	LastApplied time.Time `json:"last_applied,omitzero"`
	// Large is the large transaction the worker applies now, if any.
	Large *applier.LargeProgress `json:"large_transaction,omitempty"`
}

// turnWaitThreshold is the commit-turn wait that counts as a wait (below
// it, the turn was as good as there).
const turnWaitThreshold = 100 * time.Microsecond

// Workers implements applier.Observer. It is safe for concurrent use; mu
// guards the counters.
type Workers struct {
	mu      sync.Mutex
	workers []WorkerStats
	batch   prometheus.Histogram
}

var _ applier.Observer = (*Workers)(nil)

// NewWorkers counts for n workers.
func NewWorkers(n int) *Workers {
	w := &Workers{workers: make([]WorkerStats, n)}
	for i := range w.workers {
		w.workers[i].Worker = i
	}
	w.batch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "paraply_batch_transactions",
		Help:    "Source transactions per target transaction (target batching).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
	})
	return w
}

// Applied implements applier.Observer.
func (w *Workers) Applied(worker int, wk *stage.Work, t applier.Timing) {
	w.batch.Observe(float64(len(wk.Txns)))
	w.mu.Lock()
	defer w.mu.Unlock()
	if worker < 0 || worker >= len(w.workers) {
		return
	}
	s := &w.workers[worker]
	s.Transactions += int64(len(wk.Txns))
	s.Works++
	s.ExecSeconds += t.Exec.Seconds()
	s.TurnSeconds += t.Turn.Seconds()
	if t.Turn > turnWaitThreshold {
		s.TurnWaits++
	}
	s.CommitSeconds += t.Commit.Seconds()
	s.LastApplied = time.Now()
	s.Large = nil
}

// Progress implements applier.Observer.
func (w *Workers) Progress(worker int, p applier.LargeProgress) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if worker >= 0 && worker < len(w.workers) {
		w.workers[worker].Large = &p
	}
}

// Retried implements applier.Observer.
func (w *Workers) Retried(worker int, _ *stage.Work, _ error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if worker >= 0 && worker < len(w.workers) {
		w.workers[worker].Retries++
	}
}

// Snapshot returns a copy of every worker's counters.
func (w *Workers) Snapshot() []WorkerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WorkerStats(nil), w.workers...)
}
