package status

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/sandbox"
	"github.com/paraply/paraply/internal/sandbox/sandboxtest"
	"github.com/paraply/paraply/internal/workload"
)

// lagTolerance is how close paraply's lag must be to the lag a heartbeat
// row shows on the target (issue 16).
const lagTolerance = 100 * time.Millisecond

// TestKeepingUpAndLag is issue 16's healthy replica, in one run of about a
// minute and a half: a steady sysbench write_only load on the source,
// followed by two paraply pipelines with four workers each, one dating the
// lag by receive times (the default) and one by heartbeats it writes on
// the source (--heartbeat-table).
//
//   - Three samples over 16 seconds: neither shows a warning, both say they keep
//     up, and their lag is within 0.1 s of the lag a heartbeat row shows
//     (written with NOW(6) on the source every 20 ms by the test, read on
//     the target; for the receive-time lag less its age on the source, see
//     measureLag).
//   - Then both targets are locked for 10 s (FLUSH TABLES WITH READ LOCK):
//     at 10 s behind, the lag is again within 0.1 s of the heartbeat's, and
//     neither says it keeps up.
//
// /metrics and `paraply status` say which method dates the lag.
func TestKeepingUpAndLag(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	src := sandboxtest.ForTest(t, sandbox.Options{Name: "kusrc", Binlog: true})
	tgts := []*sandbox.Server{
		sandboxtest.ForTest(t, sandbox.Options{Name: "kutgt1", ServerID: 2}),
		sandboxtest.ForTest(t, sandbox.Options{Name: "kutgt2", ServerID: 3}),
	}
	if err := src.Exec(ctx, "CREATE DATABASE warmup"); err != nil {
		t.Fatal(err)
	}
	start := pageGTIDPosition(t, src)
	if err := src.Exec(ctx, "CREATE DATABASE hbtest", "CREATE TABLE hbtest.beat (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL)",
		"INSERT INTO hbtest.beat VALUES (1, NOW(6))", "CREATE DATABASE hb", "CREATE DATABASE sbtest"); err != nil {
		t.Fatal(err)
	}
	methods := []string{"receive-time", "heartbeat"}
	ins := []*instance{
		startInstance(t, src, tgts[0], start, func(c *replicate.Config) { c.Workers = 4 }),
		startInstance(t, src, tgts[1], start, func(c *replicate.Config) {
			c.Workers, c.HeartbeatTable, c.ServerID = 4, "hb.paraply", 4142
		}),
	}
	if err := workload.Sysbench(ctx, src, "prepare", "oltp_write_only", 4, 10000, 4, 0); err != nil {
		t.Fatal(err)
	}

	// The load: sysbench at a steady rate, and the test's heartbeat.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var loadWG sync.WaitGroup
	defer func() { stopLoad(); loadWG.Wait() }()
	bench := src.Sysbench(loadCtx, "oltp_write_only", "--tables=4", "--table-size=10000", "--threads=4", "--rate=200",
		"--time=0", "--events=0", "--report-interval=0", "--rand-seed=16", "run")
	var benchOut bytes.Buffer
	bench.Stdout, bench.Stderr = &benchOut, &benchOut
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	loadWG.Add(2)
	benchDone := make(chan error, 1)
	go func() { defer loadWG.Done(); benchDone <- bench.Wait() }()
	srcDB, err := src.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer srcDB.Close()
	go func() {
		defer loadWG.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
				srcDB.ExecContext(loadCtx, "UPDATE hbtest.beat SET ts = NOW(6) WHERE id = 1")
			}
		}
	}()
	dbs := make([]*sql.DB, len(tgts))
	for i, tg := range tgts {
		if dbs[i], err = tg.DB(""); err != nil {
			t.Fatal(err)
		}
		defer dbs[i].Close()
	}

	// Caught up with sysbench's prepare, under load.
	for i, in := range ins {
		pageWaitFor(t, ctx, 60*time.Second, fmt.Sprintf("%s caught up", methods[i]), func() bool {
			in.alive()
			st := in.rep.Status()
			return st.Lag < 300*time.Millisecond && st.Backlog < 200 && st.LagMethod == methods[i]
		})
	}

	began := time.Now()
	for n := 1; n <= 3; n++ {
		time.Sleep(time.Until(began.Add(time.Duration(n) * 5500 * time.Millisecond)))
		for i, in := range ins {
			r := in.srv.Report(10 * time.Second)
			var text bytes.Buffer
			WriteText(&text, r)
			for _, f := range r.Diagnosis {
				if f.Severity == "warn" {
					t.Errorf("sample %d, %s: a replica keeping up warns %q:\n%s", n, methods[i], f.Cause, text.String())
				}
			}
			if !has(r, "keeping_up") {
				t.Errorf("sample %d, %s: it does not say it keeps up (%v):\n%s", n, methods[i], causes(r), text.String())
			}
			if !strings.Contains(text.String(), "dated by "+methods[i]) {
				t.Errorf("sample %d: paraply status does not say the lag is dated by %s:\n%s", n, methods[i], text.String())
			}
			if n == 1 {
				t.Logf("paraply status (%s), keeping up:\n%s", methods[i], text.String())
				recordSnapshot(t, "keeping_up-"+methods[i], r, []string{"keeping_up"},
					[]string{"workers_busy", "dependency_mode", "hot_rows", "commit_order", "slow_commits", "relay_full", "lagging", "source_idle", "source_disconnected"})
			}
			paraply, beat := measureLag(t, in, srcDB, dbs[i], methods[i])
			t.Logf("sample %d, %s: lag %v, heartbeat %v; %s", n, methods[i], paraply, beat, r.Diagnosis[0].Title)
			if d := paraply - beat; d.Abs() > lagTolerance {
				t.Errorf("sample %d, %s: caught up, paraply says %v, the heartbeat %v", n, methods[i], paraply, beat)
			}
		}
	}
	checkMetrics(t, ins, methods)

	// 10 s behind: both targets locked.
	locks := make([]*sql.Conn, len(dbs))
	for i, db := range dbs {
		if locks[i], err = db.Conn(ctx); err != nil {
			t.Fatal(err)
		}
		defer locks[i].Close()
		if _, err := locks[i].ExecContext(ctx, "FLUSH TABLES WITH READ LOCK"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Second)
	for i, in := range ins {
		paraply, beat := measureLag(t, in, srcDB, dbs[i], methods[i])
		t.Logf("10 s behind, %s: lag %v, heartbeat %v", methods[i], paraply, beat)
		if d := paraply - beat; d.Abs() > lagTolerance || paraply < 9*time.Second {
			t.Errorf("10 s behind, %s: paraply says %v, the heartbeat %v", methods[i], paraply, beat)
		}
		if r := in.srv.Report(10 * time.Second); has(r, "keeping_up") || has(r, "source_idle") {
			t.Errorf("10 s behind, %s: diagnosis %v", methods[i], causes(r))
		}
	}
	for _, l := range locks {
		if _, err := l.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
			t.Fatal(err)
		}
	}
	for i, in := range ins {
		pageWaitFor(t, ctx, 60*time.Second, methods[i]+" caught up after the lock", func() bool {
			in.alive()
			return in.rep.Status().Lag < 500*time.Millisecond
		})
	}
	select {
	case err := <-benchDone:
		t.Errorf("sysbench stopped before the test ended: %v\n%s", err, benchOut.String())
	default:
	}
}

// measureLag reads paraply's lag and, in between two readings, the age of
// the test's heartbeat row on the target (the target's NOW(6) against the
// source's, on one machine). It returns the paraply reading nearest the
// heartbeat's: the lag moves on while the query runs. That age also
// counts a stall of the heartbeat writer on the source (a slow commit on
// this shared machine: 0.6 s seen) as lag. A heartbeat-dated lag counts it
// too, as pt-heartbeat's does; a lag dated by receive times does not, as
// nothing was written meanwhile, so for method receive-time the row's age
// on the source comes off.
func measureLag(t *testing.T, in *instance, src, tgt *sql.DB, method string) (paraply, beat time.Duration) {
	t.Helper()
	age := func(db *sql.DB) time.Duration {
		var us int64
		if err := db.QueryRow("SELECT TIMESTAMPDIFF(MICROSECOND, ts, NOW(6)) FROM hbtest.beat WHERE id = 1").Scan(&us); err != nil {
			t.Fatal(err)
		}
		return time.Duration(us) * time.Microsecond
	}
	before := in.rep.Status().Lag
	receiveTime := method == "receive-time"
	var stale time.Duration
	if receiveTime {
		stale = age(src) // read first: the target's row is at most as new
	}
	beat = age(tgt)
	after := in.rep.Status().Lag
	if receiveTime {
		beat = max(0, beat-stale)
	}
	paraply = before
	if math.Abs(float64(after-beat)) < math.Abs(float64(before-beat)) {
		paraply = after
	}
	return paraply, beat
}

// checkMetrics: /metrics names the method dating each pipeline's lag.
func checkMetrics(t *testing.T, ins []*instance, methods []string) {
	t.Helper()
	for i, in := range ins {
		resp, err := http.Get(in.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`paraply_lag_method{method=%q,stream="default"} 1`, methods[i])
		if !strings.Contains(string(body), want) || !strings.Contains(string(body), "paraply_source_clock_offset_seconds") {
			t.Errorf("/metrics of the %s pipeline lacks %s or the clock offset", methods[i], want)
		}
	}
}
