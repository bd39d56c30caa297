// Package scheduler is the coordinator between the relay log and the
// workers: it admits prepared transactions into a bounded look-ahead
// window, dispatches each to a worker as soon as what it waits for has
// committed, learns of commits, and moves the checkpoint's low-water mark.
package scheduler

import (
	"context"
	"log/slog"
	"time"

	"github.com/paraply/paraply/internal/applier"
)

// Config sizes the coordinator.
type Config struct {
	// Start is the source position after the sequencer's prefix: the
	// checkpoint the run starts from, saved again while the low-water mark
	// stays there (below an XA PREPARE held from before a restart).
	Start string
	// Window bounds the transactions admitted and not yet committed, in
	// count and bytes (the look-ahead).
	Window      int
	WindowBytes int
	// BatchTxns and BatchBytes bound one target transaction (target
	// batching); 1 disables batching.
	BatchTxns  int
	BatchBytes int
	// BatchDelay is how long a ready transaction may wait for others to
	// fill its batch when fewer than BatchTxns are ready (0: never wait).
	BatchDelay time.Duration
	// Workers is the size of the worker pool (used to size batches: with
	// few transactions ready, each worker gets one).
	Workers int
	// PreserveOrder says workers commit in source order (so one worker is
	// kept for the oldest transaction).
	PreserveOrder bool
	// ProgressEvery is how often the low-water mark is saved.
	ProgressEvery time.Duration
	Logger        *slog.Logger
}

// Defaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.Window <= 0 {
		c.Window = 4096
	}
	if c.WindowBytes <= 0 {
		c.WindowBytes = 64 << 20
	}
	if c.BatchTxns <= 0 {
		c.BatchTxns = 1
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = 4 << 20
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 200 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Progress is the low-water mark to save: every transaction up to
// RelayIndex has committed; Position is the source position after it;
// Covered are the GTIDs committed since the previous Progress (their
// checkpoint rows can go).
type Progress struct {
	RelayIndex uint64
	Position   string
	Covered    []string
	// Reached is the source position after the newest transaction that,
	// with everything before it, is applied or held (an XA PREPARE waiting
	// for its XA COMMIT): how far applying has come, though a restart
	// starts again from Position.
	Reached string
}

// Stats are the coordinator's counters, in the spirit of MySQL's
// "Multi-threaded replica statistics": what it assigned, and why it waited.
type Stats struct {
	Assigned      int64 // transactions handed to workers
	Works         int64 // target transactions (batches)
	Skipped       int64 // transactions the target already had
	DepWaits      int64 // times a worker was free but the next transaction waited for a predecessor (dependency waits)
	DepWaitTime   time.Duration
	BusyWaits     int64 // times something was ready but every worker was busy
	BusyWaitTime  time.Duration
	FullWaits     int64 // times the window was full
	FullWaitTime  time.Duration
	Committed     int64
	Pending       int // in the window
	Ready         int
	LowWaterMark  uint64
	LastCommitted time.Time
	// OldestPending is the source commit time (µs since the epoch) of the
	// oldest transaction admitted and not yet committed; 0 when none.
	OldestPending int64
	// SourceWaits: times a worker was free and every admitted transaction
	// was handed out already (waiting for the source: not a problem).
	SourceWaits    int64
	SourceWaitTime time.Duration
	// HotTables counts, per table, transactions admitted while an earlier
	// writer of one of their rows there had not committed (see hotTables).
	// Shared between snapshots: read it, do not change it.
	HotTables map[string]int64
}

// Coordinator runs the dispatch loop. Its exported methods are not safe
// for concurrent use; Stats is published through the Observe callback.
type Coordinator struct {
	cfg      Config
	core     *core
	seq      *applier.Sequencer
	admitted map[uint64]time.Time // admission time of pending transactions, with BatchDelay
	// info about committed transactions awaiting the next Progress
	resume map[uint64]string
	gtids  map[uint64][]string
	// holds are XA PREPAREs whose XA COMMIT or ROLLBACK has not committed:
	// the low-water mark stays below them (see lwm).
	holds    map[uint64]bool
	releases map[uint64]uint64 // XA COMMIT or ROLLBACK -> the XA PREPARE it settles
	stats    Stats
	hot      hotTables
}

// NewCoordinator starts with every transaction up to the sequencer's
// prefix committed; it tells seq about transactions it skips.
func NewCoordinator(cfg Config, seq *applier.Sequencer) *Coordinator {
	cfg = cfg.withDefaults()
	return &Coordinator{cfg: cfg, core: newCore(seq.Prefix(), cfg.Window, cfg.WindowBytes), seq: seq,
		resume: map[uint64]string{seq.Prefix(): cfg.Start}, gtids: map[uint64][]string{}, holds: map[uint64]bool{}, releases: map[uint64]uint64{}, admitted: map[uint64]time.Time{}}
}

// Run dispatches until ctx is done or a channel closes. in brings prepared
// transactions; work goes to workers, done brings it back once committed; save is called
// with each new low-water mark from this goroutine (it may block briefly;
// the last call, made when ctx is done, must not depend on ctx); observe, if not nil, receives stats every ProgressEvery.
func (c *Coordinator) Run(ctx context.Context, in <-chan *Prepared, work chan<- *applier.Work, done <-chan *applier.Work,
	save func(Progress) error, observe func(Stats)) error {
	tick := time.NewTicker(c.cfg.ProgressEvery)
	defer tick.Stop()
	var next *applier.Work
	idle := c.cfg.Workers // workers without work, as far as the coordinator knows
	saved, reached := c.lwm(), c.seq.Prefix()
	waitSince := time.Time{}
	waitKind := waitNone
	delay := time.NewTimer(time.Hour)
	delay.Stop()
	for {
		holding := false
		if next == nil {
			if d := c.holdFor(time.Now()); d > 0 {
				delay.Reset(d)
				holding = true
			} else {
				next = c.form(idle)
			}
		} else if c.cfg.PreserveOrder && idle <= 1 && next.First() != c.core.head() {
			c.core.undo(next)
			next = c.form(idle)
		}
		c.account(&waitSince, &waitKind, classifyWait(next != nil, idle, holding, c.core.head() != 0, c.core.full()))
		var out chan<- *applier.Work
		if next != nil {
			out = work
		}
		inCh := in
		if c.core.full() {
			inCh = nil
		}
		select {
		case <-ctx.Done():
			if c.lwm() != saved || c.seq.Prefix() != reached {
				return save(c.progress())
			}
			return nil
		case p, ok := <-inCh:
			if !ok {
				return nil
			}
			c.admit(p)
		case out <- next:
			c.stats.Assigned += int64(len(next.Txns))
			c.stats.Works++
			idle--
			next = nil
		case w := <-done:
			idle++
			c.committed(w.Txns)
		case <-delay.C:
		case <-tick.C:
			if l, r := c.lwm(), c.seq.Prefix(); l != saved || r != reached {
				if err := save(c.progress()); err != nil {
					return err
				}
				saved, reached = l, r
			}
			if observe != nil {
				c.flushWait(&waitSince, waitKind, time.Now())
				observe(c.Stats())
			}
		}
	}
}

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
// Handing out a blocked head anyway, with what follows, to run once
// everything before it commits, made batches fuller (59 transactions
// against 25 at --batch-max-txns 64) but applied 15-27% slower on the
// benchmark's durable backlogs (execution then waits for the commits
// before it), so a blocked head waits.
func (c *Coordinator) form(idle int) *applier.Work {
	size := c.batchSize(idle)
	if !c.cfg.PreserveOrder {
		return c.core.nextUnordered(size, c.cfg.BatchBytes, 4*c.cfg.BatchTxns)
	}
	onlyHead := idle <= 1 || c.cfg.BatchTxns > 1
	return c.core.next(size, c.cfg.BatchBytes, onlyHead)
}

// batchSize spreads the window over the workers: with a backlog, full
// batches (each commit then covers many source transactions, which is what
// bounds throughput when commits are serialized or fsynced); with a
// trickle, one transaction each, so that latency stays low.
func (c *Coordinator) batchSize(idle int) int {
	if c.cfg.BatchTxns <= 1 {
		return 1
	}
	n := c.core.pending() / c.cfg.Workers
	return max(1, min(n, c.cfg.BatchTxns))
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
	case waitBusy:
		c.stats.BusyWaitTime += d
	case waitFull:
		c.stats.FullWaitTime += d
	case waitSource:
		c.stats.SourceWaitTime += d
	}
	*since = now
}

func (c *Coordinator) admit(p *Prepared) {
	seq := p.Txn.Seq
	if c.cfg.BatchDelay > 0 {
		c.admitted[seq] = time.Now()
	}
	c.resume[seq] = p.Resume
	if p.Releases != 0 {
		c.releases[seq] = p.Releases
	}
	switch {
	case p.Hold:
		// Nothing to apply here: later transactions may commit past it,
		// but the checkpoint may not, until its XA COMMIT has.
		c.holds[seq] = true
		c.core.commit(seq, seq)
		c.seq.Done(seq, seq)
	case p.Skip:
		c.stats.Skipped++
		c.core.commit(seq, seq)
		c.seq.Done(seq, seq)
		c.gtids[seq] = []string{p.Txn.GTID}
		delete(c.holds, c.releases[seq])
	default:
		c.hot.count(p.Conflicts, c.core.isDone)
		c.core.admit(p.Txn, p.Deps)
	}
}

func (c *Coordinator) committed(txns []*applier.Txn) {
	for _, t := range txns {
		c.core.commit(t.Seq, t.Seq)
		c.gtids[t.Seq] = append([]string{t.GTID}, t.Also...)
		delete(c.holds, c.releases[t.Seq])
		delete(c.releases, t.Seq)
		delete(c.admitted, t.Seq)
	}
	c.stats.Committed += int64(len(txns))
	c.stats.LastCommitted = time.Now()
}

// lwm is the low-water mark to save: every transaction up to it has
// committed (as the sequencer knows), short of the oldest XA PREPARE still
// held, which a restart must read again.
func (c *Coordinator) lwm() uint64 {
	lwm := c.seq.Prefix()
	for s := range c.holds {
		lwm = min(lwm, s-1)
	}
	return lwm
}

// progress collects the low-water mark and the GTIDs it now covers.
func (c *Coordinator) progress() Progress {
	lwm, reached := c.lwm(), c.seq.Prefix()
	p := Progress{RelayIndex: lwm, Position: c.resume[lwm], Reached: c.resume[reached]}
	for s, g := range c.gtids {
		if s <= lwm {
			p.Covered = append(p.Covered, g...)
			delete(c.gtids, s)
		}
	}
	for s := range c.resume {
		if s < lwm && s != reached {
			delete(c.resume, s)
		}
	}
	return p
}

// Stats returns the counters.
func (c *Coordinator) Stats() Stats {
	s := c.stats
	s.Pending = c.core.pending()
	s.Ready = c.core.nReady
	s.LowWaterMark = c.seq.Prefix()
	s.HotTables = c.hot.snapshot()
	if e := c.core.entries[s.LowWaterMark+1]; e != nil {
		s.OldestPending = e.item.Txn.Timestamp
	}
	return s
}
