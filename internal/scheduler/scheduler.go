// Package scheduler is the coordinator between the relay log and the
// workers: it admits prepared transactions into a bounded look-ahead
// window, dispatches each to a worker as soon as what it waits for has
// committed, learns of commits, and moves the checkpoint's low-water mark.
package scheduler

import (
	"log/slog"
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
	// Hold, if set, is asked at each tick why the adaptive limit must not
	// move now ("" when it may): the target does not answer, say, and no
	// sample of its throughput means anything.
	Hold func() string
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
	s.OldestPending = c.oldestPending()
	return s
}
