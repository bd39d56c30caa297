package status

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
)

func labels(a Axis) []string {
	var out []string
	for _, t := range a.Ticks {
		out = append(out, t.Label)
	}
	return out
}

// TestAxisLabels: the charts' y axis labels say each tick apart, in a unit
// that fits (issue 31's lag axis read "0.1s 0.1s 0.0s 0.0s").
func TestAxisLabels(t *testing.T) {
	for _, c := range []struct {
		axis Axis
		want string
	}{
		{durationAxis(0.12), "0 ms|50 ms|100 ms|150 ms"}, // the lag, a tenth of a second
		{durationAxis(0.1), "0 ms|50 ms|100 ms"},
		{durationAxis(0.0042), "0 ms|2 ms|4 ms|6 ms"},
		{durationAxis(0.0004), "0 µs|100 µs|200 µs|300 µs|400 µs"},
		{durationAxis(0.0031), "0 ms|1 ms|2 ms|3 ms|4 ms"},
		{durationAxis(0.9), "0 ms|500 ms|1000 ms"},
		{durationAxis(2.5), "0 s|1 s|2 s|3 s"},
		{durationAxis(20.4), "0 s|10 s|20 s|30 s"},
		{durationAxis(50), "0 s|15 s|30 s|45 s|60 s"},
		{durationAxis(700), "0 min|5 min|10 min|15 min"},
		{durationAxis(5 * 3600), "0 h|2 h|4 h|6 h"},
		{durationAxis(0), "0 ms|500 ms|1000 ms"},
		{countAxis(1510), "0|500|1,000|1,500|2,000"},
		{countAxis(700), "0|200|400|600|800"},
		{countAxis(25000), "0|10k|20k|30k"},
		{countAxis(12500), "0|5k|10k|15k"},
		{countAxis(3), "0|1|2|3"},
		{countAxis(0.6), "0|0.2|0.4|0.6"},
		{countAxis(2.5e7), "0|10M|20M|30M"},
		{shareAxis(), "0%|25%|50%|75%|100%"},
	} {
		if got := strings.Join(labels(c.axis), "|"); got != c.want {
			t.Errorf("labels %s, want %s", got, c.want)
		}
	}
	// Over any range: labels differ, ticks rise, the axis holds the
	// maximum, and there are 3 to 6 ticks.
	for e := -5.0; e <= 6; e += 0.01 {
		v := math.Pow(10, e)
		for _, a := range []Axis{durationAxis(v), countAxis(v)} {
			ls := labels(a)
			if a.Max < v*(1-1e-9) || len(ls) < 3 || len(ls) > 6 {
				t.Errorf("max %g: axis to %g, labels %v", v, a.Max, ls)
			}
			for i := 1; i < len(ls); i++ {
				if ls[i] == ls[i-1] || a.Ticks[i].Value <= a.Ticks[i-1].Value {
					t.Errorf("max %g: labels %v do not tell ticks apart", v, ls)
					break
				}
			}
		}
	}
}

// TestSeriesEndsAtTheReport: the charts' last point is the report's
// interval, computed once: the page's charts and header cannot disagree.
func TestSeriesEndsAtTheReport(t *testing.T) {
	src := &fixedSource{st: replicate.Status{Now: time.Unix(1000, 0), Workers: 4, AutoWorkers: true, Delay: 2 * time.Second}}
	src.st.Scheduler.Limit = 2
	srv := NewServer(src, metrics.NewWorkers(4))
	for i := range 30 {
		src.st.Now = src.st.Now.Add(time.Second)
		src.st.Scheduler.Committed += int64(100 * (i % 7))
		src.st.Lag = time.Duration(i%5) * 700 * time.Millisecond
		srv.sample(true)
	}
	r, err := srv.ReportAt(10*time.Second, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	last := r.Series.Points[len(r.Series.Points)-1]
	iv := r.Interval
	if last.ID != r.Snapshot.ID || last.Applied != iv.AppliedRate || last.Lag != iv.LagEnd || last.Exec != iv.ExecShare ||
		last.Idle != iv.IdleShare || last.LagBeyondDelay != iv.LagBeyondDelay || last.Seconds != iv.Seconds {
		t.Errorf("last point %+v, interval %+v", last, iv)
	}
	if iv.Seconds != 10 || iv.WindowSeconds != 10 {
		t.Errorf("interval of %v s over a window of %v s, want 10", iv.Seconds, iv.WindowSeconds)
	}
	// An earlier snapshot is the same report it was.
	old, err := srv.ReportAt(10*time.Second, r.Snapshot.ID-5, false)
	if err != nil {
		t.Fatal(err)
	}
	var at time.Time
	for _, smp := range srv.History() {
		if smp.ID == r.Snapshot.ID-5 {
			at = smp.Time
		}
	}
	if old.Snapshot.ID != r.Snapshot.ID-5 || at.IsZero() || !old.Interval.To.Equal(at) || !old.Snapshot.Time.Equal(at) {
		t.Errorf("snapshot %d: %+v, interval to %v; want the sample of %v", r.Snapshot.ID-5, old.Snapshot, old.Interval.To, at)
	}
	// The charts draw the samples a second apart, and the report's.
	for i, p := range r.Series.Points[1:] {
		if d := p.T - r.Series.Points[i].T; d > 1.001 {
			t.Errorf("points %d and %d are %.3f s apart", i, i+1, d)
		}
	}
	if _, err := srv.ReportAt(10*time.Second, r.Snapshot.ID+1, false); err == nil {
		t.Error("a snapshot not taken yet was served")
	}
}

// TestWorkersTableShowsTheAllowed: under a limit of 2 of 16 the table has
// the two workers used last, and says what the other 14 did.
func TestWorkersTableShowsTheAllowed(t *testing.T) {
	ws := make([]metrics.WorkerStats, 16)
	base := time.Unix(1000, 0)
	for i := range ws {
		ws[i].Worker = i
	}
	ws[0].Transactions, ws[0].LastApplied = 50, base            // used under an earlier limit
	ws[3].Transactions, ws[3].LastApplied = 900, base.Add(9e9)  // applying now
	ws[7].Transactions, ws[7].LastApplied = 800, base.Add(10e9) // applying now
	ws[5].Transactions, ws[5].LastApplied = 10, base.Add(-1e9)
	rows, pool := allowedWorkers(ws, ws, 2, 10, 0)
	var got []int
	for _, r := range rows {
		got = append(got, r.Worker)
	}
	if !slices.Equal(got, []int{3, 7}) {
		t.Errorf("rows of workers %v, want 3 and 7", got)
	}
	if pool != (Pool{Size: 16, Allowed: 2, Others: 14, OthersUsed: 2, OthersTransactions: 60}) {
		t.Errorf("pool %+v", pool)
	}
	if line := othersText(pool, true); line != "14 more in the pool, not allowed now by --workers auto (2 of them applied 60 transactions earlier, under a higher limit)" {
		t.Errorf("pool line %q", line)
	}
}

// TestProgressWords: no "-" for a position and no "never" for the
// checkpoint of a running replica: what is known, or why not.
func TestProgressWords(t *testing.T) {
	now := time.Unix(1000, 0)
	var st replicate.Status
	st.Now = now
	if p := progress(st); !strings.Contains(p.Received, "connecting") {
		t.Errorf("before start: %+v", p)
	}
	st.Started = now.Add(-3 * time.Second)
	st.SourcePosition = "0-1-5"
	st.Checkpoint.Position = "0-1-5"
	p := progress(st)
	if p.Received != "nothing yet since start 3.0 s ago (the source is at 0-1-5)" ||
		p.Applied != "0-1-5" || p.Checkpoint != "as found at start 3.0 s ago: nothing applied since" {
		t.Errorf("nothing received yet: %+v", p)
	}
	st.Receiver.Position, st.Receiver.SourceFile, st.Receiver.SourceOffset, st.Receiver.LastTxn = "0-1-9", "mariadb-bin.000001", 1234, now.Add(-200*time.Millisecond)
	st.CheckpointSaved = now.Add(-400 * time.Millisecond)
	p = progress(st)
	if p.Received != "0-1-9 (mariadb-bin.000001:1234), the last transaction 0.2 s ago" || p.Checkpoint != "saved 0.4 s ago" {
		t.Errorf("running: %+v", p)
	}
}
