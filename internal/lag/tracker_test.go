package lag

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// base is a fixed instant with a fraction of a second, so that second
// boundaries matter.
var base = time.Unix(1_700_000_000, 300_000_000)

func secs(t time.Time) uint32 { return uint32(t.Unix()) }

func near(t *testing.T, what string, got, want, tol time.Duration) {
	t.Helper()
	if d := got - want; d < -tol || d > tol {
		t.Errorf("%s: lag %v, want %v ±%v", what, got, want, tol)
	}
}

// TestLiveArrivalsDateTransactions: a stream received live, one
// transaction every 10 ms, the source 2 s behind paraply's clock: the
// oldest unapplied transaction is dated by its arrival, to the
// millisecond, whatever the second its source timestamp says.
func TestLiveArrivalsDateTransactions(t *testing.T) {
	tr := NewTracker(0)
	tr.AddOffset(2*time.Second, time.Millisecond)
	for i := 0; i < 300; i++ {
		at := base.Add(time.Duration(i) * 10 * time.Millisecond)
		tr.Received(uint64(i+1), fmt.Sprintf("0-1-%d", i+1), secs(at.Add(-2*time.Second)), at)
	}
	now := base.Add(3 * time.Second)
	// 150 applied: 151 arrived at base+1.5 s.
	r := tr.Lag(now, 150, 300, 0)
	near(t, "live", r.Lag, 1500*time.Millisecond, markEvery)
	if r.Method != MethodReceiveTime || !r.ClockOffsetKnown || r.ClockOffset != 2*time.Second {
		t.Errorf("reading %+v", r)
	}
	if r := tr.Lag(now, 300, 300, 0); r.Lag != 0 {
		t.Errorf("everything applied: lag %v", r.Lag)
	}
}

// TestLateArrivalsUseTheSourceSecond: transactions committed 20 s before
// they arrived (a backlog) are dated by the middle of their source second,
// not by their arrival.
func TestLateArrivalsUseTheSourceSecond(t *testing.T) {
	tr := NewTracker(0)
	committed := base.Add(-20 * time.Second)
	tr.Received(1, "0-1-1", secs(committed), base)
	tr.Received(2, "0-1-2", secs(committed)+1, base.Add(time.Millisecond))
	now := base.Add(time.Second)
	r := tr.Lag(now, 0, 2, 0)
	want := now.Sub(time.Unix(int64(secs(committed)), 500_000_000))
	near(t, "late", r.Lag, want, time.Millisecond)
	if r.Lag < 20*time.Second || r.Lag > 22*time.Second {
		t.Errorf("a 20 s old backlog reads %v", r.Lag)
	}
}

// TestUnreceivedTransactionsUseTheCoordinatorsTimestamp: a transaction the
// relay log held from an earlier run has no arrival; MariaDB's whole
// second dates it to ±0.5 s, MySQL's original_commit_timestamp exactly.
func TestUnreceivedTransactionsUseTheCoordinatorsTimestamp(t *testing.T) {
	tr := NewTracker(0)
	tr.Received(100, "0-1-100", secs(base), base) // this run starts at 100
	now := base.Add(10 * time.Second)
	whole := time.Unix(base.Unix()-5, 0)
	near(t, "whole second", tr.Lag(now, 10, 100, whole.UnixMicro()).Lag, now.Sub(whole)-500*time.Millisecond, time.Millisecond)
	exact := base.Add(-5*time.Second + 123*time.Microsecond)
	near(t, "exact", tr.Lag(now, 10, 100, exact.UnixMicro()).Lag, now.Sub(exact), time.Microsecond)
	if r := tr.Lag(now, 10, 100, 0); r.Lag != 0 {
		t.Errorf("nothing dates it: lag %v, want 0 (unknown)", r.Lag)
	}
}

// TestHeartbeatsBracketLateArrivals: a backlog received 20 s late, with a
// heartbeat committed every 100 ms among the transactions: the lag is
// known to the heartbeat interval, not to the source's second.
func TestHeartbeatsBracketLateArrivals(t *testing.T) {
	tr := NewTracker(100 * time.Millisecond)
	start := base.Add(-20 * time.Second)
	idx := uint64(0)
	commitOf := map[uint64]time.Time{}
	for i := 0; i < 100; i++ { // 10 s of source time, 10 transactions per heartbeat
		for j := 0; j < 10; j++ {
			idx++
			c := start.Add(time.Duration(i)*100*time.Millisecond + time.Duration(j)*10*time.Millisecond)
			commitOf[idx] = c
			g := fmt.Sprintf("0-1-%d", idx)
			if j == 9 {
				tr.Wrote(g, c)
			}
			tr.Received(idx, g, secs(c), base.Add(time.Duration(idx)*time.Microsecond))
		}
	}
	// The writer went on; those heartbeats are not received yet.
	for i := 100; i < 200; i++ {
		tr.Wrote(fmt.Sprintf("0-2-%d", i), start.Add(time.Duration(i)*100*time.Millisecond+90*time.Millisecond))
	}
	now := base.Add(100 * time.Millisecond)
	for _, applied := range []uint64{0, 333, 504, 999} {
		r := tr.Lag(now, applied, idx, 0)
		if r.Method != MethodHeartbeat {
			t.Fatalf("method %s (%s)", r.Method, r.HeartbeatError)
		}
		near(t, fmt.Sprintf("applied %d", applied), r.Lag, now.Sub(commitOf[applied+1]), 100*time.Millisecond)
	}
	if r := tr.Lag(now, 999, idx, 0); r.Heartbeats != 100 {
		t.Errorf("%d heartbeats received, want 100", r.Heartbeats)
	}
}

// TestHeartbeatNotYetReceived: everything received is applied, but a
// heartbeat written 3 s ago has not arrived: the stream stopped delivering
// and the lag says so.
func TestHeartbeatNotYetReceived(t *testing.T) {
	tr := NewTracker(100 * time.Millisecond)
	tr.Received(1, "0-1-1", secs(base), base)
	tr.Wrote("0-1-2", base.Add(time.Second))
	tr.Wrote("0-1-3", base.Add(3900*time.Millisecond))
	now := base.Add(4 * time.Second)
	near(t, "stalled", tr.Lag(now, 1, 1, 0).Lag, 3*time.Second, time.Millisecond)
	// It arrives, before its writer learnt its GTID for the next one.
	tr.Received(2, "0-1-2", secs(base.Add(time.Second)), now)
	tr.Received(3, "0-1-4", secs(now), now)
	tr.Wrote("0-1-4", now.Add(-time.Millisecond))
	r := tr.Lag(now.Add(50*time.Millisecond), 3, 3, 0)
	if r.Lag != 0 || r.Heartbeats != 2 {
		t.Errorf("caught up: lag %v, %d heartbeats received (want 0 and 2; 0-1-3 was never logged)", r.Lag, r.Heartbeats)
	}
}

// TestHeartbeatFailureFallsBack: a heartbeat that cannot be written (no
// privilege) leaves the receive times in charge, and says why.
func TestHeartbeatFailureFallsBack(t *testing.T) {
	tr := NewTracker(100 * time.Millisecond)
	tr.BeatFailed(errors.New("INSERT command denied"))
	tr.Received(1, "0-1-1", secs(base), base)
	r := tr.Lag(base.Add(time.Second), 0, 1, 0)
	if r.Method != MethodReceiveTime || r.HeartbeatError == "" {
		t.Errorf("reading %+v, want receive-time with the error", r)
	}
	near(t, "fallback", r.Lag, time.Second, time.Millisecond)
	tr.Wrote("0-1-2", base.Add(time.Second))
	if r := tr.Lag(base.Add(time.Second), 0, 1, 0); r.Method != MethodHeartbeat {
		t.Errorf("after a write: %+v", r)
	}
	if r := tr.Lag(base.Add(10*time.Second), 0, 1, 0); r.Method != MethodReceiveTime {
		t.Errorf("no write for 9 s: %+v", r)
	}
}

// TestTrackerStaysBounded: marks and heartbeats behind the applied prefix
// are forgotten; a burst costs few marks.
func TestTrackerStaysBounded(t *testing.T) {
	tr := NewTracker(10 * time.Millisecond)
	for i := 1; i <= 100_000; i++ {
		at := base.Add(time.Duration(i) * 100 * time.Microsecond) // 10,000/s
		g := fmt.Sprintf("0-1-%d", i)
		if i%100 == 0 {
			tr.Wrote(g, at)
		}
		tr.Received(uint64(i), g, secs(at), at)
		if i%1000 == 0 {
			tr.Lag(at, uint64(i-500), uint64(i), 0)
		}
	}
	if n := len(tr.marks); n > 200 {
		t.Errorf("%d marks kept for 500 unapplied transactions", n)
	}
	if n := len(tr.beats); n > 10 {
		t.Errorf("%d heartbeats kept for 500 unapplied transactions", n)
	}
	if len(tr.byGTID) != len(tr.beats) {
		t.Errorf("index of %d heartbeats for %d", len(tr.byGTID), len(tr.beats))
	}
}

func TestParseMicros(t *testing.T) {
	for in, want := range map[string]int64{"1700000000.123456": 1700000000123456, "1700000000.5": 1700000000500000, "1700000000": 1700000000000000} {
		if got, err := parseMicros(in); err != nil || got != want {
			t.Errorf("%s: %d, %v", in, got, err)
		}
	}
	if _, err := parseMicros("x.1"); err == nil {
		t.Error("x.1 parsed")
	}
}
