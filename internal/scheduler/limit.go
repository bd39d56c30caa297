package scheduler

import (
	"fmt"
	"time"
)

// concurrency finds, while paraply runs, how many workers should have work
// at once (--workers auto): the limit that commits the most source
// transactions per second on this target, the way TCP congestion control
// or Netflix's concurrency-limits find theirs: measure, probe a neighbour,
// keep it if it is better, go back if not.
//
// The limit also sizes batches (Coordinator.batchSize): while every
// allowed worker is busy, ready transactions pile up and the next batch
// is fuller. On a durable target a batch's commit (an fsync, a round
// trip) is what costs, so fewer, fuller batches can beat more workers;
// on a target whose rows are the cost, more workers win. Which one holds
// depends on the target, the load and the machine, hence measuring.
//
// Throughput drifts on its own (a backlog is received at full speed,
// competing for the CPU, then only applied), so a probe is bracketed: one
// sample at the limit, one at the neighbour, one at the limit again, and
// the neighbour is judged against the mean of the two around it. A
// neighbour below is kept unless it is clearly worse (fewer sessions,
// fuller batches: cheaper for the same speed); one above only if clearly
// better. Only samples with a backlog count: when the coordinator waits
// for the source, throughput says how fast the source writes, not what
// the limit does, and nothing changes (see keepUpWait for what counts as
// waiting). Nor does a sample in which nothing was applied, or whose end
// applied nothing for stallAfter (a target that stopped answering, a lock
// every worker waits on), nor any while the coordinator's Hold says so
// (the target does not answer): 0 tps says nothing of the limit, and a
// probe judged on it would move the limit at random. The limit holds, and
// measuring starts afresh, its first sample dropped, once commits resume.
type concurrency struct {
	ladder []int // the limits tried, ascending
	at     int   // index in ladder of the limit in force
	probe  int   // index being probed, -1 when none
	up     bool  // the next probe goes up
	// before is the sample at the limit just before the probe; probed
	// the probe's, once taken (done: then the limit is back at at for
	// the sample after).
	before, probed float64
	done           bool
	// quiet is how many samples to wait before the next probe: it grows
	// while probes fail, so that a settled limit is rarely disturbed.
	quiet, rest int
	// warm is set once the first sample, which the pipeline's start
	// (connecting, filling the relay log) slows, has been dropped.
	warm bool
	// backlog counts the samples in a row that had a backlog (see
	// keepUpWait); a probe starts only after backlogSamples of them.
	backlog int
	// the interval being measured
	since     time.Time
	committed int64
	waited    time.Duration
	reason    string
	// last is the commit count seen at the last call, moved when it last
	// grew: a sample whose end saw no commit for stallAfter stalled.
	last  int64
	moved time.Time
}

const (
	// limitInterval is the shortest span one throughput sample covers.
	limitInterval = 250 * time.Millisecond
	// limitMinCommits is the fewest commits a sample needs; a slower
	// target makes the span longer.
	limitMinCommits = 64
	// betterUp is how much faster a higher limit must be to be kept;
	// worseDown how much slower a lower one may be and still be kept.
	betterUp  = 1.05
	worseDown = 0.97
	// maxQuiet bounds the samples between probes once the limit settled
	// (about 4 s at the shortest interval): how long a change of load
	// may wait to be noticed.
	maxQuiet = 16
	// keepUpWait: a sample in which the coordinator waited for the source
	// more than 1/keepUpWait of the time had no backlog. Waiting for the
	// source means a worker was free and every transaction admitted was
	// handed out: the queue ran dry, so what the sample measured was, at
	// least for a while, how fast the source writes. With a backlog there
	// is no such wait at all; keeping up, it is a few percent of a second
	// at least, but not always a quarter: with batching and commit order
	// the allowed workers are busy most of the time, and a threshold of a
	// quarter made a replica keeping up probe all the time
	// (docs/benchmark.md, "The measurements behind the defaults").
	keepUpWait = 100
	// backlogSamples is how many samples in a row (a second at the
	// shortest interval) must have a backlog before a probe starts: a
	// replica keeping up has moments when its queue does not run dry for
	// a few hundred milliseconds (a slow commit on the target), and two
	// samples were too few for that; a second is also when status calls a
	// replica behind.
	backlogSamples = 4
	// stallAfter is how long without a commit makes a sample's end a
	// stall rather than a slow target: a target that commits less than
	// once a second has nothing for the limit to tune.
	stallAfter = time.Second
)

// newConcurrency starts at start workers (rounded to the ladder) within
// 1..max.
func newConcurrency(start, max int) *concurrency {
	c := &concurrency{probe: -1, reason: "starting"}
	for _, n := range []int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256} {
		if n <= max {
			c.ladder = append(c.ladder, n)
		}
	}
	if len(c.ladder) == 0 || c.ladder[len(c.ladder)-1] != max {
		c.ladder = append(c.ladder, max)
	}
	for i, n := range c.ladder {
		if n <= start {
			c.at = i
		}
	}
	return c
}

// limit is the number of workers that may have work now.
func (c *concurrency) limit() int {
	if c.probe >= 0 && !c.done {
		return c.ladder[c.probe]
	}
	return c.ladder[c.at]
}

// observe takes the coordinator's running totals: source transactions
// committed, and time spent waiting for the source; hold, when not "",
// says why the limit must not move now. It returns whether the limit
// changed.
func (c *concurrency) observe(now time.Time, committed int64, sourceWait time.Duration, hold string) bool {
	if committed != c.last || c.moved.IsZero() {
		c.last, c.moved = committed, now
	}
	if hold != "" {
		c.pause(now, committed, sourceWait, fmt.Sprintf("holding at %d: %s", c.limit(), hold))
		return false
	}
	if c.since.IsZero() || committed == 0 {
		// The clock starts with the first commit.
		c.since, c.committed, c.waited = now, committed, sourceWait
		return false
	}
	span, n := now.Sub(c.since), committed-c.committed
	if span < limitInterval || n < limitMinCommits && span < 8*limitInterval {
		return false
	}
	waited := sourceWait - c.waited
	switch idle := now.Sub(c.moved); {
	case n == 0 && waited > span/keepUpWait:
		c.pause(now, committed, sourceWait, "keeping up with the source: nothing to apply")
		return false
	case n == 0 || idle >= stallAfter:
		c.pause(now, committed, sourceWait, fmt.Sprintf("holding at %d: nothing applied for %.1f s", c.limit(), idle.Seconds()))
		return false
	}
	c.since, c.committed, c.waited = now, committed, sourceWait
	if !c.warm {
		c.warm = true
		return false
	}
	before := c.limit()
	tps := float64(n) / span.Seconds()
	keepingUp := waited > span/keepUpWait
	if keepingUp {
		c.backlog = 0
	} else {
		c.backlog++
	}
	switch {
	case keepingUp:
		// Keeping up: the sample measures the source. Whatever was being
		// probed is dropped.
		c.probe, c.done = -1, false
		c.reason = "keeping up with the source"
	case c.probe < 0:
		c.before = tps
		c.reason = fmt.Sprintf("%.0f tps at %d", tps, c.ladder[c.at])
		if c.backlog < backlogSamples {
			break
		}
		if c.rest > 0 {
			c.rest--
			break
		}
		c.startProbe()
	case !c.done:
		c.probed, c.done = tps, true // back to the limit for the sample after
	default:
		c.endProbe(tps)
	}
	return c.limit() != before
}

// pause drops the sample being measured and holds the limit, a probe in
// force included, for the reason given: measuring starts again at now,
// and its first sample, which the stall ends in, is dropped as the
// pipeline's first is.
func (c *concurrency) pause(now time.Time, committed int64, sourceWait time.Duration, reason string) {
	c.since, c.committed, c.waited = now, committed, sourceWait
	c.warm, c.backlog, c.reason = false, 0, reason
}

// startProbe tries the next limit up or down, turning at the ends.
func (c *concurrency) startProbe() {
	next := c.at - 1
	if c.up {
		next = c.at + 1
	}
	if next < 0 || next >= len(c.ladder) {
		c.up = !c.up
		next = 2*c.at - next
	}
	if next < 0 || next >= len(c.ladder) {
		c.reason = fmt.Sprintf("%.0f tps at %d, the only limit", c.before, c.limit())
		return
	}
	c.probe, c.done = next, false
	c.reason = fmt.Sprintf("%.0f tps at %d; trying %d", c.before, c.ladder[c.at], c.ladder[next])
}

// endProbe keeps the probed limit or stays, on the probe's tps against
// the mean of the samples before and after it.
func (c *concurrency) endProbe(after float64) {
	from, to := c.ladder[c.at], c.ladder[c.probe]
	base := (c.before + after) / 2
	keep := c.probed >= base*betterUp
	if to < from {
		keep = c.probed >= base*worseDown
	}
	if keep {
		c.reason = fmt.Sprintf("%d: %.0f tps against %.0f at %d", to, c.probed, base, from)
		c.at = c.probe
		c.quiet = 0
	} else {
		c.reason = fmt.Sprintf("%d: %.0f tps at %d was no better than %.0f", from, c.probed, to, base)
		c.up = !c.up
		c.quiet = min(2*c.quiet+2, maxQuiet)
		c.rest = c.quiet
	}
	c.before = after
	c.probe, c.done = -1, false
}
