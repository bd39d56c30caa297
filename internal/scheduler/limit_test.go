package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

// target feeds a concurrency samples of a simulated target, its clock
// and totals running on from one call to the next.
type target struct {
	c         *concurrency
	now       time.Time
	committed float64
	waited    time.Duration
}

func newTarget(c *concurrency) *target {
	t := &target{c: c, now: time.Unix(0, 0)}
	c.observe(t.now, 0, 0, "")
	return t
}

// run passes samples intervals of a target whose throughput at each
// limit is tps(limit), with the given share of each spent waiting for the
// source, and returns the limits in force after each.
func (t *target) run(samples int, wait float64, tps func(limit int) float64) []int {
	var limits []int
	for range samples {
		t.committed += tps(t.c.limit()) * limitInterval.Seconds()
		t.waited += time.Duration(wait * float64(limitInterval))
		t.now = t.now.Add(limitInterval)
		t.c.observe(t.now, int64(t.committed), t.waited, "")
		limits = append(limits, t.c.limit())
	}
	return limits
}

// peaked is a target whose throughput is best at limit best and falls by
// a tenth for each step of the ladder away from it.
func peaked(best int) func(int) float64 {
	return func(limit int) float64 {
		steps := 0
		for l := newConcurrency(limit, 256); l.ladder[l.at] != best; {
			if l.ladder[l.at] < best {
				l.at++
			} else {
				l.at--
			}
			steps++
		}
		return 10000 * (1 - 0.1*float64(steps))
	}
}

func TestConcurrencyFindsTheBestLimit(t *testing.T) {
	for _, tc := range []struct{ start, max, best int }{
		{4, 16, 1}, {4, 16, 12}, {4, 16, 16}, {1, 32, 24}, {16, 16, 2},
	} {
		c := newConcurrency(tc.start, tc.max)
		limits := newTarget(c).run(80, 0, peaked(tc.best))
		// Probes leave it for one sample at a time; it must sit at the
		// best most of the last forty.
		at := 0
		for _, l := range limits[40:] {
			if l == tc.best {
				at++
			}
		}
		if at < 30 {
			t.Errorf("start %d, best %d: at the best in %d of the last 40 samples; limits %v", tc.start, tc.best, at, limits)
		}
		if c.reason == "" {
			t.Errorf("start %d: no reason given", tc.start)
		}
	}
}

func TestConcurrencyPrefersFewerWorkersWhenEqual(t *testing.T) {
	c := newConcurrency(8, 16)
	limits := newTarget(c).run(60, 0, func(int) float64 { return 5000 })
	if last := limits[len(limits)-1]; last != 1 {
		t.Errorf("flat throughput: limit %d at the end, want 1 (fuller batches, fewer sessions); limits %v", last, limits)
	}
}

func TestConcurrencyFollowsAChange(t *testing.T) {
	c := newConcurrency(4, 16)
	tg := newTarget(c)
	tg.run(60, 0, peaked(2))
	if c.ladder[c.at] != 2 {
		t.Fatalf("first load: settled at %d, want 2", c.ladder[c.at])
	}
	tg.run(120, 0, peaked(12))
	if c.ladder[c.at] != 12 {
		t.Errorf("after the target changed: settled at %d, want 12", c.ladder[c.at])
	}
}

func TestConcurrencyHoldsWhileKeepingUp(t *testing.T) {
	c := newConcurrency(4, 16)
	limits := newTarget(c).run(40, 0.5, peaked(16))
	for _, l := range limits {
		if l != 4 {
			t.Fatalf("waiting for the source half the time, the limit moved: %v", limits)
		}
	}
	if c.reason != "keeping up with the source" {
		t.Errorf("reason %q", c.reason)
	}
}

func TestConcurrencyNeedsEnoughCommits(t *testing.T) {
	c := newConcurrency(4, 16)
	tg := newTarget(c)
	// 10 tps: 2.5 commits per interval, far fewer than a sample needs;
	// the span stretches until 8 intervals have passed. The first such
	// sample is dropped (the pipeline's start), the second counts.
	slow := func(int) float64 { return 10 }
	tg.run(7, 0, slow)
	if c.before != 0 || c.warm {
		t.Errorf("a sample was taken from 7 intervals of 2.5 commits")
	}
	tg.run(1, 0, slow)
	if !c.warm || c.before != 0 {
		t.Errorf("after 8 intervals: warm %v, sample %v; want the first sample dropped", c.warm, c.before)
	}
	tg.run(8, 0, slow)
	if c.before == 0 {
		t.Error("no sample after 16 intervals")
	}
}

// TestConcurrencyDropsTheStart: the first sample after the first commit is
// slow (paraply just connected); one worker is best. Measured against that
// start, two workers would look better and be kept.
func TestConcurrencyDropsTheStart(t *testing.T) {
	c := newConcurrency(1, 16)
	tg := newTarget(c)
	tg.run(1, 0, func(int) float64 { return 0 }) // connecting
	tg.run(1, 0, func(int) float64 { return 5000 })
	limits := tg.run(10, 0, peaked(1))
	for i, l := range limits {
		if l > 2 || (l == 2 && i > 0 && limits[i-1] == 2) {
			t.Fatalf("the limit left 1 for longer than a probe: %v", limits)
		}
	}
}

// TestCoordinatorKeepsToTheLimit: with --workers auto the coordinator
// hands work to no more workers at once than the limit, however many the
// pool has and however much is ready, and the batches are sized for the
// limit, not thinned for the pool; the same workers do it.
func TestCoordinatorKeepsToTheLimit(t *testing.T) {
	const n = 400
	feed := func(in chan<- *stage.Prepared) {
		for i := uint64(1); i <= n; i++ {
			in <- prepared(i, deptrack.Deps{})
		}
	}
	s, peak, used := simulatePeak(t, Config{Workers: 16, Adaptive: true, StartLimit: 2, BatchTxns: 8, PreserveOrder: true}, 2*time.Millisecond, feed)
	if peak > 2 {
		t.Errorf("%d works at once with a limit of 2", peak)
	}
	// The worker that committed last takes the next work: the same two
	// sessions apply everything, instead of all sixteen in turn.
	if used > 2 {
		t.Errorf("%d workers had work under a limit of 2", used)
	}
	if s.Limit != 2 || s.LimitReason == "" {
		t.Errorf("stats say limit %d (%q), want 2 and a reason", s.Limit, s.LimitReason)
	}
	if s.Committed != n {
		t.Errorf("committed %d of %d", s.Committed, n)
	}
	fixed, peak, _ := simulatePeak(t, Config{Workers: 16, BatchTxns: 8, PreserveOrder: true}, 2*time.Millisecond, feed)
	if peak <= 2 || fixed.Limit != 16 {
		t.Errorf("fixed pool of 16: peak %d, limit %d; want more than 2 at once", peak, fixed.Limit)
	}
}

// TestConcurrencyIgnoresDrift: throughput rises 10% a sample whatever the
// limit (the backlog's receiving ends and frees the CPU), and one worker
// is best, two 4% slower. A probe judged against the sample before it
// alone would keep two; bracketed by the samples around it, it does not.
func TestConcurrencyIgnoresDrift(t *testing.T) {
	c := newConcurrency(1, 16)
	tg := newTarget(c)
	rate := 5000.0
	limits := tg.run(12, 0, func(limit int) float64 {
		rate *= 1.1
		return rate * (1 - 0.04*float64(limit-1))
	})
	for i := 1; i < len(limits); i++ {
		if limits[i] > 1 && limits[i-1] > 1 {
			t.Fatalf("kept more than one worker on a rising throughput: %v (%s)", limits, c.reason)
		}
	}
}

// TestConcurrencyHoldsWhileNothingIsApplied: under a backlog, probing, the
// target stops committing (it is down, or every worker waits on a lock):
// samples of 0 tps must not move the limit, nor a sample that applied at
// first and then nothing for a second, nor any while the coordinator's
// Hold says so; an idle source (nothing to apply) neither. Once commits
// resume, the limit tunes again.
func TestConcurrencyHoldsWhileNothingIsApplied(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wait   float64 // share of each interval spent waiting for the source
		hold   string
		tail   bool // commits go on for half a second into the stall
		reason string
	}{
		{"nothing applied", 0, "", false, "holding at "},
		{"commits stop within a sample", 0, "", true, "holding at "},
		{"held by the coordinator", 0, "the target does not answer", false, "the target does not answer"},
		{"idle source", 1, "", false, "keeping up with the source"},
	} {
		c := newConcurrency(4, 16)
		tg := newTarget(c)
		tg.run(30, 0, peaked(12))
		before := c.limit()
		if tc.tail {
			tg.run(2, 0, peaked(12))
		}
		for i := range 40 { // 10 s
			tg.waited += time.Duration(tc.wait * float64(limitInterval))
			tg.now = tg.now.Add(limitInterval)
			c.observe(tg.now, int64(tg.committed), tg.waited, tc.hold)
			if c.limit() != before {
				t.Fatalf("%s: the limit moved from %d to %d after %d intervals without a commit (%s)", tc.name, before, c.limit(), i+1, c.reason)
			}
		}
		if !strings.Contains(c.reason, tc.reason) {
			t.Errorf("%s: reason %q, want %q", tc.name, c.reason, tc.reason)
		}
		limits := tg.run(80, 0, peaked(12))
		if last := limits[len(limits)-1]; last != 12 {
			t.Errorf("%s: commits resumed, the limit settled at %d, want 12: %v", tc.name, last, limits)
		}
	}
}
