package status

import (
	"testing"
	"time"

	"github.com/paraply/paraply/internal/metrics"
)

// TestIntervalShares is issue 39's "workers_busy 101%" and "idle 100%"
// with the target down: a wait is never more than the interval, busy
// never more than all of the workers' time, and while the target does not
// answer the workers wait for it rather than idle.
func TestIntervalShares(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := Sample{Time: t0, Limit: 2, TargetUp: true}
	b := Sample{Time: t0.Add(10 * time.Second), Limit: 2, BusyWaitSecs: 10.1, ExecSecs: 18, CommitSecs: 6, TargetUp: true}
	iv := between(a, b)
	if w := iv.Waits["workers_busy"]; w.Share > 1 || w.Seconds > iv.Seconds {
		t.Errorf("workers_busy %.2f s, %.0f%% of a %.0f s interval", w.Seconds, 100*w.Share, iv.Seconds)
	}
	if iv.BusyShare > 1 || iv.ExecShare+iv.TurnShare+iv.CommitShare > 1+1e-12 || iv.IdleShare != 0 {
		t.Errorf("24 worker-seconds counted in 20: busy %.3f (exec %.3f commit %.3f), idle %.3f; want busy 1", iv.BusyShare, iv.ExecShare, iv.CommitShare, iv.IdleShare)
	}
	if d := iv.ExecShare - 0.75; d > 1e-12 || d < -1e-12 {
		t.Errorf("exec share %.3f, want 0.75 (18 of 24 worker-seconds)", iv.ExecShare)
	}

	// The target down for the last 6 s of 10, nothing committed.
	c := Sample{Time: t0.Add(10 * time.Second), Limit: 2, BusyWaitSecs: 10, TargetDownSecs: 6}
	iv = between(a, c)
	if iv.TargetDownSeconds != 6 || iv.TargetWaitShare != 0.6 || iv.IdleShare < 0.39 || iv.IdleShare > 0.41 {
		t.Errorf("target down 6 s of 10: down %.1f s, waiting for the target %.2f, idle %.2f; want 6 s, 0.6, 0.4", iv.TargetDownSeconds, iv.TargetWaitShare, iv.IdleShare)
	}
	ws := []metrics.WorkerStats{{Worker: 0, Transactions: 9, ExecSeconds: 3}, {Worker: 1}}
	rows, _ := allowedWorkers(ws, ws, 2, 10, 0.6)
	for _, r := range rows {
		if r.TargetWaitShare != 0.6 || r.IdleShare < 0.39 || r.IdleShare > 0.41 {
			t.Errorf("worker %d, the target down 6 s of 10: waiting for it %.2f, idle %.2f; want 0.6 and 0.4", r.Worker, r.TargetWaitShare, r.IdleShare)
		}
	}
}

// TestSourceRate is issue 39's "received 17357/s (the source's own writes
// 17357/s)" during a catch-up from an idle source: what the source wrote
// comes from its position, not from what was received.
func TestSourceRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := Sample{Time: t0, Received: 1000, SourceTxns: 500000, SourceAt: t0.Add(-300 * time.Millisecond)}
	b := Sample{Time: t0.Add(10 * time.Second), Received: 174570, SourceTxns: 500000, SourceAt: t0.Add(9700 * time.Millisecond)}
	iv := between(a, b)
	if iv.ReceivedRate != 17357 || iv.SourceRate != 0 {
		t.Errorf("catch-up from an idle source: received %.0f/s, source %.0f/s; want 17357 and 0", iv.ReceivedRate, iv.SourceRate)
	}
	b.SourceTxns, b.Heartbeats = 502000+40, 40
	if iv := between(a, b); iv.SourceRate != 200 {
		t.Errorf("the source wrote 2000 in 10 s (and 40 heartbeats): %.1f/s, want 200", iv.SourceRate)
	}
	// Binlog files: no position; what they hold is what the source wrote.
	a.SourceAt, b.SourceAt, b.Heartbeats = time.Time{}, time.Time{}, 0
	if iv := between(a, b); iv.SourceRate != 17357 {
		t.Errorf("no source position: %.0f/s, want the received 17357", iv.SourceRate)
	}
}
