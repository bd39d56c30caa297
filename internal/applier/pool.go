package applier

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/stage"
)

// The pool: its configuration, what it tells an observer, and the workers
// it runs, one per work channel.

// Config configures the worker pool.
type Config struct {
	// Path is how row changes are applied.
	Path Path
	// SourceSession runs DDL with the character sets and sql_mode of the
	// source session, as a replica does; only meaningful when source and
	// target are of one flavor (their collation ids and modes agree).
	SourceSession bool
	// PreserveOrder makes commits happen in source order.
	PreserveOrder bool
	// MaxBackoff bounds the pause between attempts after an error.
	MaxBackoff time.Duration
	Logger     *slog.Logger
	// Observer, if set, is told what workers do (metrics).
	Observer Observer
	// NoCompact turns off compaction: without it a worker merges the
	// changes of each row of a work into one and groups the changes of
	// many rows into one statement, on tables where that is provably
	// equivalent (see sqlgen.Table.Compactable, which assumes that the
	// target has no triggers on replicated tables).
	NoCompact bool
	// PreserveGTIDs commits each work (one source transaction) under its
	// source GTID (see worker.sourceGTID).
	PreserveGTIDs bool
	// NoCompound sends SQL to a MariaDB target as multi-statement packets
	// checked by the worker, as to a MySQL target, instead of compound
	// statements that check themselves (see worker.runBatch): for tests
	// of that path.
	NoCompound bool
}

// Observer receives the workers' events. Methods are called from worker
// goroutines and must be safe for concurrent use.
type Observer interface {
	// Applied: a worker committed work. t says where the time of its last
	// attempt went.
	Applied(worker int, w *stage.Work, t Timing)
	// Retried: an attempt failed with a retryable error.
	Retried(worker int, w *stage.Work, err error)
	// Progress: how far a worker is in a large transaction (at its start
	// and after each piece).
	Progress(worker int, p LargeProgress)
}

// Timing splits a work's last attempt: executing its statements, waiting
// for its commit turn (before the COMMIT, and, for a work with AfterTurn,
// before its second part), and the COMMIT itself.
type Timing struct {
	Exec, Turn, Commit time.Duration
}

type nopObserver struct{}

func (nopObserver) Applied(int, *stage.Work, Timing) {}
func (nopObserver) Retried(int, *stage.Work, error)  {}
func (nopObserver) Progress(int, LargeProgress)      {}

// Pool is the set of workers. Work arrives on a channel and leaves, applied,
// on another; the first error that is not retryable stops every worker.
type Pool struct {
	cfg      Config
	db       *sql.DB
	store    *checkpoint.Store
	seq      *stage.Sequencer
	refusals sqlRefusals
	threads  threads
}

// NewPool applies through db (a pool on the target opened with
// SessionParams), recording progress with store and ordering commits with
// seq.
func NewPool(cfg Config, db *sql.DB, store *checkpoint.Store, seq *stage.Sequencer) *Pool {
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	return &Pool{cfg: cfg, db: db, store: store, seq: seq}
}

// Run starts one worker per channel of in and returns when ctx is done or
// a worker fails. Worker i takes its work from in[i] (one channel per
// worker, so that the coordinator chooses who applies: a worker that just
// committed has its session and buffers warm) and sends it to done once
// committed, with Work.Worker set. done is the only report of a commit:
// the coordinator records it in the Sequencer when it receives the work.
func (p *Pool) Run(ctx context.Context, in []chan *stage.Work, done chan<- *stage.Work) error {
	if len(in) == 0 {
		return errors.New("applier: no work channels")
	}
	g, ctx := errgroup.WithContext(ctx)
	for i := range in {
		w := &worker{id: i, p: p, log: p.cfg.Logger.With("worker", i)}
		g.Go(func() error { return w.run(ctx, in[i], done) })
	}
	defer p.threads.close()
	return g.Wait()
}

// WorkChannels makes the n channels of a pool of n workers.
func WorkChannels(n int) []chan *stage.Work {
	in := make([]chan *stage.Work, n)
	for i := range in {
		in[i] = make(chan *stage.Work)
	}
	return in
}
