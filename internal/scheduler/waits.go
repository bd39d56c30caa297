package scheduler

import "time"

// waitKind is why the coordinator is not handing out work at an instant,
// in the terms of MySQL's "Multi-threaded replica statistics" (seed 000).
type waitKind uint8

const (
	// waitNone: work is being handed out, or every worker has work and
	// nothing more is ready, or a batch is being let fill (BatchDelay):
	// nothing to explain.
	waitNone waitKind = iota
	// waitDep is "waited at clock conflicts": a worker is free, and the
	// next admitted transaction not yet handed out cannot go because a
	// predecessor it depends on has not committed.
	waitDep
	// waitBarrier is a waitDep whose head waits because of a barrier (a
	// DDL, a keyless table's writers, ...) rather than for an earlier
	// writer of its rows (core.headAtBarrier).
	waitBarrier
	// waitBusy is "waited when workers occupied": work is ready and every
	// worker has some.
	waitBusy
	// waitFull is "waited due a worker queue full": every worker has work,
	// nothing is ready, and the look-ahead window is full.
	waitFull
	// waitSource: a worker is free and every admitted transaction has
	// been handed out; the coordinator waits for the next one to arrive.
	// That is a replica keeping up, not a problem to diagnose.
	waitSource
)

// classifyWait names the wait of a coordinator that formed next (nil if
// none) with idle workers free (of those the concurrency limit allows). holding says it lets a batch fill on
// purpose; blocked says an admitted transaction is not handed out yet
// (the core's head exists); full says the window is full.
//
// The distinction between waitDep and waitSource is what keeps a replica
// that keeps up from reporting dependency waits: a free worker with every
// admitted transaction already running elsewhere waits for the source, not
// for a predecessor.
func classifyWait(next bool, idle int, holding, blocked, full bool) waitKind {
	switch {
	case next && idle <= 0:
		return waitBusy
	case next || holding:
		return waitNone
	case idle > 0 && blocked:
		return waitDep
	case idle > 0:
		return waitSource
	case full:
		return waitFull
	}
	return waitNone
}

// account keeps the wait statistics: a wait starts when the coordinator
// cannot hand out work, and is attributed to its reason k (classifyWait).
func (c *Coordinator) account(since *time.Time, kind *waitKind, k waitKind) {
	if k == *kind {
		return
	}
	now := time.Now()
	c.flushWait(since, *kind, now)
	switch k {
	case waitDep:
		c.stats.DepWaits++
	case waitBarrier:
		c.stats.BarrierWaits++
	case waitBusy:
		c.stats.BusyWaits++
	case waitFull:
		c.stats.FullWaits++
	case waitSource:
		c.stats.SourceWaits++
	}
	*kind = k
	if k == waitNone {
		*since = time.Time{}
	} else {
		*since = now
	}
}

// flushWait adds the wait of the given kind in progress since *since to its
// time, up to now, and restarts it there: the statistics published while a
// long wait lasts include it.
func (c *Coordinator) flushWait(since *time.Time, kind waitKind, now time.Time) {
	if since.IsZero() {
		return
	}
	d := now.Sub(*since)
	switch kind {
	case waitDep:
		c.stats.DepWaitTime += d
	case waitBarrier:
		c.stats.BarrierWaitTime += d
	case waitBusy:
		c.stats.BusyWaitTime += d
	case waitFull:
		c.stats.FullWaitTime += d
	case waitSource:
		c.stats.SourceWaitTime += d
	}
	*since = now
}
