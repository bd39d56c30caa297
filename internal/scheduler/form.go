package scheduler

import (
	"time"

	"github.com/paraply/paraply/internal/stage"
)

// holdFor says how much longer to wait before forming work, so that a
// batch can fill (BatchDelay): while fewer transactions are ready than a
// batch holds and the oldest of them has waited less than the delay.
func (c *Coordinator) holdFor(now time.Time) time.Duration {
	if c.cfg.BatchDelay <= 0 || c.cfg.BatchTxns <= 1 || c.core.nReady >= c.cfg.BatchTxns {
		return 0
	}
	s := c.core.lowestReady()
	if s == 0 {
		return 0
	}
	return c.cfg.BatchDelay - now.Sub(c.admitted[s])
}

// form builds the next work. With commit order preserved, work is a run of
// consecutive transactions, and a worker holding a later run waits for the
// earlier ones to commit; so with batching, work always starts at the
// oldest transaction not yet handed out (a run started further on would
// cut the head's run short, and runs, not workers, are what commits are
// made of), and without batching the last free worker is kept for that
// head (or all workers could wait on a transaction none is left to run).
// Without commit order, work is any set of transactions ready together.
//
// With batching, a blocked head goes out with what follows it: its worker
// applies at once what waits for no earlier work, and the rest at its
// turn (core.startsBlocked). Without batching it waits: handed out alone,
// its worker would do nothing but wait for the commits before it.
func (c *Coordinator) form(free int) *stage.Work {
	size := c.batchSize()
	if !c.cfg.PreserveOrder {
		return c.core.nextUnordered(size, c.cfg.BatchBytes, 4*c.cfg.BatchTxns)
	}
	return c.core.next(size, c.cfg.BatchBytes, c.onlyHead(free))
}

// canForm reports whether form would form work for free workers.
func (c *Coordinator) canForm(free int) bool {
	s := c.core.lowestReady()
	if !c.cfg.PreserveOrder || !c.onlyHead(free) {
		return s != 0
	}
	h := c.core.head()
	return h != 0 && (s == h || c.core.startsBlocked(h, c.batchSize()))
}

// onlyHead says whether work formed for free workers must start at the
// head (see form).
func (c *Coordinator) onlyHead(free int) bool {
	return free <= 1 || c.cfg.BatchTxns > 1
}

// batchSize spreads the window over the workers that may have work: with
// a backlog, full batches (each commit then covers many source
// transactions, which is what bounds throughput when commits are
// serialized or fsynced); with a trickle, one transaction each, so that
// latency stays low. Workers the limit keeps idle do not thin batches.
func (c *Coordinator) batchSize() int {
	if c.cfg.BatchTxns <= 1 {
		return 1
	}
	n := c.core.pending() / c.limit()
	return max(1, min(n, c.cfg.BatchTxns))
}
