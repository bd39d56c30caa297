package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paraply/paraply/internal/replicate"
)

type fixedSnapshot struct{ s Snapshot }

func (f fixedSnapshot) Snapshot() Snapshot { return f.s }

// TestCollectorServesTheSnapshot: /metrics serves the status snapshot it
// is given, its number and the figures status computed over the window,
// and the counters those figures come from; busy per worker is all the
// time a worker had work in hand, commit-turn waits included.
func TestCollectorServesTheSnapshot(t *testing.T) {
	st := replicate.Status{Now: time.Unix(1000, 0), Workers: 2, Lag: 3500 * time.Millisecond, Delay: 3 * time.Second}
	st.Scheduler.Committed, st.Scheduler.Limit = 1234, 2
	st.TargetRedo = replicate.RedoLog{Known: true, FileBytes: 64 << 20, AgeBytes: 45, MaxAgeBytes: 50, Samples: 10, FullShare: 0.7}
	snap := Snapshot{ID: 42, Time: st.Now, Status: st, CapacitySeconds: 80,
		Workers: []WorkerStats{{Worker: 0, ExecSeconds: 10, TurnSeconds: 2, CommitSeconds: 3}, {Worker: 1, ExecSeconds: 5, TurnSeconds: 1, CommitSeconds: 1}},
		Window:  Window{Seconds: 10, AppliedPerSecond: 123.5, Exec: 0.4, Turn: 0.1, Commit: 0.2, Idle: 0.3}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(fixedSnapshot{snap}, NewWorkers(2)))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += "," + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				got[name] = m.GetGauge().GetValue()
			case m.Counter != nil:
				got[name] = m.GetCounter().GetValue()
			}
		}
	}
	for name, v := range map[string]float64{
		"paraply_status_snapshot":                                    42,
		"paraply_status_window_seconds":                              10,
		"paraply_status_applied_per_second":                          123.5,
		"paraply_status_worker_time_share,state=exec":                0.4,
		"paraply_status_worker_time_share,state=turn":                0.1,
		"paraply_status_worker_time_share,state=commit":              0.2,
		"paraply_status_worker_time_share,state=idle":                0.3,
		"paraply_status_snapshot_timestamp_seconds":                  1000,
		"paraply_worker_seconds_total,state=exec":                    15,
		"paraply_worker_seconds_total,state=turn":                    3,
		"paraply_worker_seconds_total,state=commit":                  4,
		"paraply_worker_capacity_seconds_total":                      80,
		"paraply_applied_transactions_total":                         1234,
		"paraply_lag_seconds":                                        3.5,
		"paraply_lag_beyond_delay_seconds":                           0.5,
		"paraply_delay_seconds":                                      3,
		"paraply_worker_busy_seconds_total,worker=0":                 15,
		"paraply_coordinator_wait_seconds_total,reason=commit_order": 3,
		"paraply_target_checkpoint_age_ratio":                        0.9,
		"paraply_target_redo_log_full_share":                         0.7,
	} {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
		}
	}
}

// TestCollectorRedoLogUnknown: a target that has not reported its redo
// log (MySQL, or before the first ping) has no redo gauges, rather than a
// log that looks empty.
func TestCollectorRedoLogUnknown(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(fixedSnapshot{Snapshot{ID: 1, Time: time.Unix(1000, 0)}}, NewWorkers(1)))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if n := f.GetName(); n == "paraply_target_checkpoint_age_ratio" || n == "paraply_target_redo_log_full_share" {
			t.Errorf("%s served for a target that reported no redo log", n)
		}
	}
}
