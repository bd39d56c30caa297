// Package scheduler is the coordinator between the relay log and the
// workers: it admits prepared transactions into a bounded look-ahead
// window, dispatches each to a worker as soon as what it waits for has
// committed, learns of commits, and moves the checkpoint's low-water mark.
package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/paraply/paraply/internal/stage"
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
	// Workers is the size of the worker pool, one work channel each.
	Workers int
	// Adaptive lets the coordinator find how many of the Workers have
	// work at once (--workers auto; see concurrency), starting at
	// StartLimit; otherwise all of them may.
	Adaptive   bool
	StartLimit int
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
	if c.StartLimit <= 0 || c.StartLimit > c.Workers {
		c.StartLimit = min(c.Workers, defaultStartLimit)
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
// Covered are the keys of the checkpoint rows (in paraply.applied) that
// the mark passed since the previous Progress: those rows can go.
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
	Assigned    int64 // transactions handed to workers
	Works       int64 // target transactions (batches)
	Skipped     int64 // transactions the target already had
	DepWaits    int64 // times a worker was free but the next transaction waited for a predecessor (dependency waits)
	DepWaitTime time.Duration
	// BarrierWaits are dependency waits that a barrier explains (DDL,
	// keyless tables, ...: core.headAtBarrier), counted apart from
	// DepWaits so that they are not taken for hot rows.
	BarrierWaits    int64
	BarrierWaitTime time.Duration
	BusyWaits       int64 // times something was ready but every worker was busy
	BusyWaitTime    time.Duration
	FullWaits       int64 // times the window was full
	FullWaitTime    time.Duration
	Committed       int64
	Pending         int // in the window
	Ready           int
	LowWaterMark    uint64
	LastCommitted   time.Time
	// OldestPending is the source commit time (µs since the epoch) of the
	// oldest transaction admitted and not yet committed; 0 when none.
	OldestPending int64
	// SourceWaits: times a worker was free and every admitted transaction
	// was handed out already (waiting for the source: not a problem).
	SourceWaits    int64
	SourceWaitTime time.Duration
	// Limit is how many workers may have work at once, and LimitReason
	// why (with --workers auto; otherwise Limit is the pool's size).
	Limit       int
	LimitReason string
	// HotTables counts, per table, transactions admitted while an earlier
	// writer of one of their rows there had not committed (see hotTables).
	// Shared between snapshots: read it, do not change it.
	HotTables map[string]int64
}

// seqGTID is the key of a checkpoint row, by the sequence number of its
// transaction (the newest of its work, or one skipped after a restart): a
// slice of them, appended to at each commit, costs no allocation per
// transaction as a map of slices did.
type seqGTID struct {
	seq  uint64
	gtid string
}

// Coordinator runs the dispatch loop. Its exported methods are not safe
// for concurrent use; Stats is published through the Observe callback.
type Coordinator struct {
	cfg      Config
	core     *core
	seq      *stage.Sequencer
	admitted map[uint64]time.Time // admission time of pending transactions, with BatchDelay
	// info about committed transactions awaiting the next Progress
	resume []seqResume // by sequence number, from the last low-water mark on
	gtids  []seqGTID   // in commit order
	// holds are XA PREPAREs whose XA COMMIT or ROLLBACK has not committed:
	// the low-water mark stays below them (see lwm).
	holds    map[uint64]bool
	releases map[uint64]uint64 // XA COMMIT or ROLLBACK -> the XA PREPARE it settles
	stats    Stats
	hot      hotTables
	adaptive *concurrency // nil with a fixed worker count
}

// defaultStartLimit is where --workers auto starts, and probes from: a
// backlog of a few seconds ends before probing moves far, so the start
// should already be good. Two workers, one committing while the other
// executes, measured best (docs/benchmark.md, "The measurements behind
// the defaults").
const defaultStartLimit = 2

// NewCoordinator starts with every transaction up to the sequencer's
// prefix committed; it tells seq about transactions it skips.
func NewCoordinator(cfg Config, seq *stage.Sequencer) *Coordinator {
	cfg = cfg.withDefaults()
	c := &Coordinator{cfg: cfg, core: newCore(seq.Prefix(), cfg.Window, cfg.WindowBytes), seq: seq,
		resume: []seqResume{{seq.Prefix(), cfg.Start}}, holds: map[uint64]bool{}, releases: map[uint64]uint64{}, admitted: map[uint64]time.Time{}}
	if cfg.Adaptive {
		c.adaptive = newConcurrency(cfg.StartLimit, cfg.Workers)
	}
	return c
}

// limit is how many workers may have work at once.
func (c *Coordinator) limit() int {
	if c.adaptive != nil {
		return c.adaptive.limit()
	}
	return c.cfg.Workers
}

// Run dispatches until ctx is done, an error, or the end of the run. in
// brings prepared transactions; work[i] takes work to worker i, done
// brings it back once committed, and the coordinator, the one road of
// commits, records it in the sequencer (which hands out commit turns).
// save is called with each new low-water mark from this goroutine (it may
// block briefly; the last call, made when ctx is done, must not depend on
// ctx); observe, if not nil, receives stats every ProgressEvery.
//
// The end of a run comes with the data: once in is closed and everything
// admitted has committed, Run saves the low-water mark and returns nil.
// Run closes the work channels when it returns, which ends the workers.
func (c *Coordinator) Run(ctx context.Context, in <-chan *stage.Prepared, work []chan *stage.Work, done <-chan *stage.Work,
	save func(Progress) error, observe func(Stats)) error {
	if len(work) != c.cfg.Workers {
		return fmt.Errorf("scheduler: %d work channels for %d workers", len(work), c.cfg.Workers)
	}
	defer func() {
		for _, ch := range work {
			close(ch)
		}
	}()
	l := c.newLoop(work, save)
	defer l.delay.Stop()
	tick := time.NewTicker(c.cfg.ProgressEvery)
	defer tick.Stop()
	if observe != nil {
		observe(c.Stats()) // the limit, and that nothing is pending, from the start
	}
	for {
		if in == nil && c.core.pending() == 0 {
			return l.saveMoved()
		}
		out := l.plan()
		inCh := in // nil once closed, which never selects
		if c.core.full() {
			inCh = nil
		}
		select {
		case <-ctx.Done():
			return l.saveMoved()
		case p, ok := <-inCh:
			if !ok {
				in = nil
				continue
			}
			c.admit(p)
		case out <- l.next:
			l.handedOut()
		case w := <-done:
			l.committed(w)
		case <-l.delay.C:
		case <-tick.C:
			if err := l.tick(observe); err != nil {
				return err
			}
		}
	}
}

// loop is what the cases of Run's select loop share.
type loop struct {
	c    *Coordinator
	work []chan *stage.Work
	save func(Progress) error
	// next is work formed and not yet handed out.
	next *stage.Work
	// idle are the workers without work, the one that committed last on
	// top: under a limit the same few sessions apply, their caches (and
	// the target's, for their threads) warm, instead of all in turn.
	idle []int
	// saved and reached are the low-water mark and the sequencer's prefix
	// last saved.
	saved, reached uint64
	// waitSince and waitKind are the wait being accounted (account).
	waitSince time.Time
	waitKind  waitKind
	// delay wakes the loop when a batch held to fill (holdFor) is due.
	delay *time.Timer
}

func (c *Coordinator) newLoop(work []chan *stage.Work, save func(Progress) error) *loop {
	l := &loop{c: c, work: work, save: save, idle: make([]int, c.cfg.Workers), saved: c.lwm(), reached: c.seq.Prefix(), delay: time.NewTimer(time.Hour)}
	l.delay.Stop()
	for i := range l.idle {
		l.idle[i] = c.cfg.Workers - 1 - i
	}
	return l
}

// plan forms the next work when a worker can take it, accounts the wait
// when none can be handed out, and returns the channel of the worker to
// hand l.next to (nil when none).
func (l *loop) plan() chan<- *stage.Work {
	c := l.c
	holding := false
	// free may be below zero for a while after the limit went down.
	free := c.limit() - (c.cfg.Workers - len(l.idle))
	switch {
	case l.next == nil && free <= 0:
		// Work is formed when a worker can take it, not before: a run
		// formed while the workers are busy would stop at the first
		// transaction that waits for one of them, and be formed again at
		// every arrival.
	case l.next == nil:
		if d := c.holdFor(time.Now()); d > 0 {
			l.delay.Reset(d)
			holding = true
		} else {
			l.next = c.form(free)
		}
	case c.cfg.PreserveOrder && free <= 1 && l.next.First() > c.core.head():
		// The last free worker goes to the head (see form).
		c.core.undo(l.next)
		l.next = c.form(free)
	}
	ready := l.next != nil || free <= 0 && c.canForm(free)
	k := classifyWait(ready, free, holding, c.core.head() != 0, c.core.full())
	if k == waitDep && c.core.headAtBarrier() {
		k = waitBarrier
	}
	c.account(&l.waitSince, &l.waitKind, k)
	if l.next != nil && free > 0 {
		return l.work[l.idle[len(l.idle)-1]]
	}
	return nil
}

// handedOut records that l.next went to the worker on top of idle.
func (l *loop) handedOut() {
	l.c.stats.Assigned += int64(len(l.next.Txns))
	l.c.stats.Works++
	l.idle = l.idle[:len(l.idle)-1]
	l.next = nil
}

// committed records a work its worker committed: first in the sequencer,
// which gives the next commit turn, then in the window.
func (l *loop) committed(w *stage.Work) {
	w.Committed(l.c.seq)
	l.idle = append(l.idle, w.Worker)
	l.c.committed(w.Txns)
}

// saveMoved saves the progress if it moved since the last save.
func (l *loop) saveMoved() error {
	lwm, r := l.c.lwm(), l.c.seq.Prefix()
	if lwm == l.saved && r == l.reached {
		return nil
	}
	if err := l.save(l.c.progress()); err != nil {
		return err
	}
	l.saved, l.reached = lwm, r
	return nil
}

// tick saves the progress, publishes the statistics and lets --workers
// auto observe its sample.
func (l *loop) tick(observe func(Stats)) error {
	if err := l.saveMoved(); err != nil {
		return err
	}
	c := l.c
	now := time.Now()
	c.flushWait(&l.waitSince, l.waitKind, now)
	if c.adaptive != nil && c.adaptive.observe(now, c.stats.Committed, c.stats.SourceWaitTime) {
		c.cfg.Logger.Debug("concurrency limit", "workers", c.limit(), "why", c.adaptive.reason)
	}
	if observe != nil {
		observe(c.Stats())
	}
	return nil
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
// A blocked head waits: handed out anyway, with what follows, its worker
// would wait for the commits before it to execute anything, which measured
// slower though batches are fuller (docs/benchmark.md, "The measurements
// behind the defaults").
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
	return s != 0 && (!c.cfg.PreserveOrder || !c.onlyHead(free) || s == c.core.head())
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

func (c *Coordinator) admit(p *stage.Prepared) {
	seq := p.Txn.Seq
	if c.cfg.BatchDelay > 0 {
		c.admitted[seq] = time.Now()
	}
	c.addResume(seq, p.Resume)
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
		// Applied before a restart: its GTID is its row's key if it was
		// the newest of its work (deleting it otherwise deletes nothing).
		c.gtids = append(c.gtids, seqGTID{seq, p.Txn.GTID})
		delete(c.holds, c.releases[seq])
	default:
		c.hot.count(p.Conflicts, c.core.isDone)
		c.core.admit(p.Txn, p.Deps)
	}
}

// committed records that the transactions of a work, txns, committed. The
// work's row in paraply.applied is keyed by its newest transaction's GTID
// (stage.Work.Last), and compaction may delete it once the low-water
// mark has passed that transaction.
func (c *Coordinator) committed(txns []*stage.Txn) {
	last := txns[len(txns)-1]
	c.gtids = append(c.gtids, seqGTID{last.Seq, last.GTID})
	for _, t := range txns {
		c.core.commit(t.Seq, t.Seq)
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
	p := Progress{RelayIndex: lwm, Position: c.resumeAt(lwm), Reached: c.resumeAt(reached)}
	kept := c.gtids[:0]
	for _, g := range c.gtids {
		if g.seq <= lwm {
			p.Covered = append(p.Covered, g.gtid)
		} else {
			kept = append(kept, g)
		}
	}
	clear(c.gtids[len(kept):])
	c.gtids = kept
	// Positions below the low-water mark are never asked for again.
	i, _ := slices.BinarySearchFunc(c.resume, lwm, bySeq)
	n := copy(c.resume, c.resume[i:])
	clear(c.resume[n:])
	c.resume = c.resume[:n]
	return p
}

// seqResume is the resume position after a transaction.
type seqResume struct {
	seq    uint64
	resume string
}

func bySeq(r seqResume, s uint64) int { return cmp.Compare(r.seq, s) }

// addResume records the resume position after transaction s. Transactions
// are admitted in stream order, so it goes at the end.
func (c *Coordinator) addResume(s uint64, resume string) {
	if n := len(c.resume); n == 0 || c.resume[n-1].seq < s {
		c.resume = append(c.resume, seqResume{s, resume})
		return
	}
	i, found := slices.BinarySearchFunc(c.resume, s, bySeq)
	if found {
		c.resume[i].resume = resume
		return
	}
	c.resume = slices.Insert(c.resume, i, seqResume{s, resume})
}

// resumeAt is the resume position after transaction s, "" if s was not
// admitted.
func (c *Coordinator) resumeAt(s uint64) string {
	i, ok := slices.BinarySearchFunc(c.resume, s, bySeq)
	if !ok {
		return ""
	}
	return c.resume[i].resume
}

// Stats returns the counters.
func (c *Coordinator) Stats() Stats {
	s := c.stats
	s.Pending = c.core.pending()
	s.Ready = c.core.nReady
	s.LowWaterMark = c.seq.Prefix()
	s.HotTables = c.hot.snapshot()
	s.Limit = c.limit()
	if c.adaptive != nil {
		s.LimitReason = c.adaptive.reason
	}
	if e := c.core.entry(s.LowWaterMark + 1); e != nil {
		s.OldestPending = e.item.Txn.Timestamp
	}
	return s
}
