package replicate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/handover"
	"github.com/paraply/paraply/internal/lag"
	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/prepare"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/retry"
	"github.com/paraply/paraply/internal/scheduler"
	"github.com/paraply/paraply/internal/source"
	"github.com/paraply/paraply/internal/stage"
)

// Replica is a replication pipeline.
type Replica struct {
	cfg  Config
	log  *slog.Logger
	feed feed

	// unrecorded are tables the stream wrote and its bookkeeping does not
	// record yet; only the saver's goroutine touches them (overlap.go).
	unrecorded []checkpoint.Object

	mu       sync.Mutex // guards everything below: Run sets it, Status reads it
	info     source.Info
	receiver producer
	// shared are tables another stream writes too (overlap.go).
	shared  map[checkpoint.Object][]string
	lock    *checkpoint.TargetLock // the stream's, while a pass runs
	relay   *relaylog.Log
	prep    *prepare.Preparer
	seq     *stage.Sequencer
	lag     *lag.Tracker  // dates transactions for Status.Lag; lives across passes
	srcPos  *livePosition // the source's position now, for Status
	target  *connWatch    // whether the target answers, for Status
	redo    *redoWatch    // the target's redo log, for Status
	stats   scheduler.Stats
	saved   scheduler.Progress
	savedAt time.Time
	started time.Time
}

// New returns a pipeline for cfg; Run starts it.
func New(cfg Config) *Replica {
	cfg.RelayDir = cfg.relayDir()
	r := &Replica{cfg: cfg, log: cfg.logger(), lag: lag.NewTracker(cfg.heartbeatInterval()),
		srcPos: &livePosition{}, target: &connWatch{secret: cfg.Target.Password()}, redo: &redoWatch{}}
	r.feed = network{cfg: cfg, log: r.log, lag: r.lag, pos: r.srcPos}
	return r
}

// Logger is the pipeline's logger.
func (r *Replica) Logger() *slog.Logger { return r.log }

// Run replicates with cfg until ctx is done (see Replica.Run).
func Run(ctx context.Context, cfg Config) error { return New(cfg).Run(ctx) }

// maxRefetch bounds how many times one Run starts the relay log again
// because it found damage in it: damage that keeps coming back is a disk
// or memory fault that refetching does not cure.
const maxRefetch = 3

// Run replicates until ctx is done, or, with UntilCaughtUp, until the
// target has everything the source had at the start. It may be called once.
//
// A damaged relay log record (relaylog.ErrCorrupt: a bit flip, a truncated
// segment) is never applied. Run logs the segment file and offset, removes
// the relay log and starts it again from the target's checkpoint, so that
// the source sends what it held once more; the checkpoint's applied GTIDs
// make that safe, as after a crash. If the source no longer has the binlogs
// for that, Run returns the damage together with the source's refusal.
func (r *Replica) Run(ctx context.Context) error {
	if err := r.feed.validate(r.cfg); err != nil {
		return err
	}
	defer r.watchTarget(ctx)()
	err := r.run(ctx)
	var bad *relaylog.CorruptError
	for n := 0; n < maxRefetch && ctx.Err() == nil && errors.As(err, &bad); n++ {
		r.log.Warn("the relay log is damaged: starting it again from the target's checkpoint and fetching it from the source again",
			"segment", bad.Path, "offset", bad.Offset, "relay_index", bad.Index, "reason", bad.Reason)
		damage := err
		if rerr := relaylog.Remove(r.cfg.RelayDir); rerr != nil {
			return fmt.Errorf("%w (removing the damaged relay log: %v)", damage, rerr)
		}
		if err = r.run(ctx); errors.Is(err, source.ErrPositionGone) {
			return fmt.Errorf("%w; fetching it again from the source failed: %w", damage, err)
		}
	}
	return err
}

// untilReachable runs fn until it succeeds, fails with an error that
// waiting does not cure, ctx ends, or within (--connect-wait) has passed:
// a server that is restarting when paraply starts is waited for, as it is
// once running, while a wrong address still fails soon.
func untilReachable(ctx context.Context, within time.Duration, log *slog.Logger, role, addr string, fn func() error) error {
	p := retry.Policy{Base: 200 * time.Millisecond, Cap: 10 * time.Second, Within: within}
	return retry.Do(ctx, p, mysqlerr.Retryable, fn, func(err error, pause time.Duration) {
		log.Warn("waiting for the "+role+" to answer", role, addr, "retry_in", pause, "err", err)
	})
}

// run is one pass of the pipeline, from opening the connections to the
// end of the run or the first error: the start (begin), then the stages
// wired together (pipe).
func (r *Replica) run(ctx context.Context) error {
	var st *begun
	// A target (or source) lost part way through the start, as one
	// restarting, is waited for and the start made again: each of its
	// steps holds again on a second go (a checkpoint the first go wrote
	// is the one its --start-gtid began).
	err := untilReachable(ctx, r.cfg.ConnectWait, r.log, "target", r.cfg.Target.String(), func() (err error) {
		if st != nil {
			st.close()
		}
		st, err = r.begin(ctx)
		return err
	})
	if st != nil {
		defer st.close()
	}
	if err != nil || st.caughtUp {
		return err
	}
	return r.pipe(ctx, st)
}

// pipe builds the stages over what begin opened and runs them. The end of
// a run flows downstream with the data: the producer seals the relay log
// when its input ends (binlog files), the preparer closes its output at
// the end of the relay log or at the position to stop at, and the
// coordinator, once everything admitted has committed, saves the
// checkpoint and returns nil; that ends what runs beside the stages (the
// producer, the probes, the lock's and the native replica's watches).
func (r *Replica) pipe(ctx context.Context, st *begun) error {
	receiver, err := r.feed.producer(r.info, st.relay)
	if err != nil {
		return err
	}
	seq := stage.NewSequencer(st.prefix)
	prep := r.preparer(st)
	r.mu.Lock()
	r.receiver, r.relay, r.prep, r.seq, r.lock = receiver, st.relay, prep, seq, st.lock
	r.mu.Unlock()
	pool := applier.NewPool(applier.Config{Path: st.path, SourceSession: st.sameFlavor, PreserveOrder: r.cfg.PreserveOrder, NoCompact: r.cfg.NoCompact,
		PreserveGTIDs: r.cfg.PreserveGTIDs, Logger: r.log.With("component", "applier"), Observer: r.cfg.Observer}, st.tgt, st.store, seq)
	coord := scheduler.NewCoordinator(scheduler.Config{
		Start: st.state.Position, Window: r.cfg.Window, BatchTxns: r.cfg.batchTxns(), BatchDelay: r.cfg.BatchDelay, Workers: r.cfg.Pool(), Adaptive: r.cfg.Auto(),
		PreserveOrder: r.cfg.PreserveOrder, Logger: r.log.With("component", "scheduler"), Hold: r.holdWorkers,
	}, seq)
	sv := newSaver(r.saveProgress(st))

	g, gctx := errgroup.WithContext(ctx)
	// beside runs what serves the stages until the run ends; its end is
	// no error.
	besideCtx, end := context.WithCancel(gctx)
	defer end()
	beside := func(fn func(context.Context) error) {
		g.Go(func() error {
			if err := fn(besideCtx); besideCtx.Err() == nil {
				return err
			}
			return nil
		})
	}
	prepared := make(chan *stage.Prepared, 256)
	work := applier.WorkChannels(r.cfg.Pool())
	done := make(chan *stage.Work, r.cfg.Pool())
	reader := st.relay.NewReader(st.prefix + 1)
	defer reader.Close()
	beside(func(ctx context.Context) error { return produce(ctx, receiver, st.relay, st.start) })
	beside(func(ctx context.Context) error { r.feed.probe(ctx, r.info); return nil })
	beside(func(ctx context.Context) error { return st.lock.Keep(ctx, lockCheckEvery, r.log) })
	if r.watchesNative(st.sameFlavor) {
		beside(func(ctx context.Context) error { return r.watchNative(ctx, st.tgt) })
	}
	g.Go(func() error { return prep.Run(gctx, reader, prepared) })
	g.Go(func() error { return pool.Run(gctx, work, done) })
	g.Go(func() error { return sv.run(gctx) })
	g.Go(func() error {
		defer sv.close()
		err := coord.Run(gctx, prepared, work, done, sv.save, r.observe)
		if err == nil && gctx.Err() == nil {
			end()
		}
		return err
	})
	if err := g.Wait(); err != nil || ctx.Err() != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log.Info("caught up: the target has everything up to the position", "position", r.saved.Reached)
	return nil
}

// produce runs the producer; when its input ends (binlog files, all
// appended), it seals the relay log, so that the preparer reads to its
// end and stops there.
func produce(ctx context.Context, p producer, relay *relaylog.Log, start string) error {
	if err := p.Run(ctx, start); err != nil || ctx.Err() != nil {
		return err
	}
	relay.Seal()
	return nil
}

// preparer is the preparer stage for what begin opened.
func (r *Replica) preparer(st *begun) *prepare.Preparer {
	return &prepare.Preparer{Catalog: st.catalog, LostTemporary: st.lost, Mode: r.cfg.Mode, History: r.cfg.History, SQLOnly: st.path == applier.SQLPath,
		SourceSession: st.sameFlavor, Applied: st.state.Applied, Rerun: st.rerun, Logger: r.log.With("component", "preparer"), ReadPart: st.relay.ReadPart,
		Until: st.until, UntilGTID: r.cfg.UntilGTID != "", Start: st.state.Position, Flavor: r.info.Flavor, Delay: r.cfg.Delay, ClockOffset: r.lag.ClockOffset,
		Filter: r.newFilter()}
}

// saveProgress writes each low-water mark the coordinator reaches: the
// checkpoint on the target, then the relay log's purge, then the status.
func (r *Replica) saveProgress(st *begun) func(context.Context, scheduler.Progress) error {
	return func(ctx context.Context, p scheduler.Progress) error {
		if err := st.store.SaveProgressBehind(ctx, p.Position, p.RelayIndex, p.Covered, p.OldestPending); err != nil {
			return fmt.Errorf("saving the checkpoint on the target: %w", err)
		}
		if err := st.relay.Purge(p.RelayIndex); err != nil {
			return err
		}
		if err := r.noteWritten(ctx, st.store); err != nil {
			return err
		}
		p.Covered = nil
		r.mu.Lock()
		defer r.mu.Unlock()
		r.saved, r.savedAt = p, time.Now()
		return nil
	}
}

// observe publishes the coordinator's statistics to Status.
func (r *Replica) observe(s scheduler.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats = s
}

// loadCheckpoint reads the target's checkpoint, and settles a DDL that was
// running at the last stop: recorded as applied if it took effect, else
// to run again (the returned set).
func loadCheckpoint(ctx context.Context, store *checkpoint.Store, log *slog.Logger) (*checkpoint.State, map[string]bool, error) {
	if err := store.Init(ctx); err != nil {
		return nil, nil, err
	}
	state, err := store.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	rerun := map[string]bool{}
	if p := state.PendingDDL; p != nil {
		out, err := store.ResolveDDL(ctx, p)
		if err != nil {
			return nil, nil, fmt.Errorf("settling the DDL %s that was running at the last stop: %w", p.GTID, err)
		}
		if out == checkpoint.DDLApplied {
			state.Applied[p.GTID] = true
			log.Info("a DDL running at the last stop had taken effect", "gtid", p.GTID)
		} else {
			rerun[p.GTID] = true
			log.Info("a DDL running at the last stop had not taken effect; it will run again", "gtid", p.GTID)
		}
	}
	return state, rerun, nil
}

// watchesNative reports whether this run takes over from, and guards
// against, the target's own replication: replicate onto a MariaDB target
// from a MariaDB source (handover reads MariaDB's gtid_slave_pos).
func (r *Replica) watchesNative(sameFlavor bool) bool {
	return r.feed.origin() == checkpoint.Replicate && sameFlavor && r.info.Flavor == binlog.FlavorMariaDB
}

// fromNative takes over from the target's own replication: it refuses
// while that runs, and starts where it stopped (gtid_slave_pos) when that
// is ahead of paraply's checkpoint, with a new relay log.
func (r *Replica) fromNative(ctx context.Context, tgt *sql.DB, state *checkpoint.State, store *checkpoint.Store) error {
	native, err := handover.ReadNative(ctx, tgt)
	if err != nil {
		return err
	}
	native = r.nativeOfStream(native)
	r.warnUnguarded(native)
	pos, fromNative, err := handover.Start(state.Position, r.startGTID(), native)
	if err != nil || !fromNative {
		return err
	}
	r.log.Info("starting where the target's own replication stopped (gtid_slave_pos), ahead of paraply's checkpoint",
		"gtid_slave_pos", pos, "checkpoint", state.Position)
	if err := relaylog.Remove(r.cfg.RelayDir); err != nil {
		return err
	}
	if err := store.SaveProgress(ctx, pos, 0, nil); err != nil {
		return err
	}
	state.Position, state.RelayIndex = pos, 0
	return nil
}

// applyPath resolves Config.Apply for this source and target.
func (r *Replica) applyPath(ctx context.Context, tgt *sql.DB) (applier.Path, error) {
	if r.cfg.Apply == applier.SQLPath {
		return applier.SQLPath, nil
	}
	ok, why, err := applier.CanReplay(ctx, tgt)
	if err != nil {
		return 0, fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	if ok && r.info.Flavor != binlog.FlavorMariaDB {
		ok, why = false, "the source is not MariaDB (the target's row applier is exact for its own flavor's events)"
	}
	switch {
	case ok && r.cfg.Apply == applier.BinlogPath:
		return applier.BinlogPath, nil
	case ok:
		return applier.AutoPath, nil
	case r.cfg.Apply == applier.BinlogPath:
		return 0, fmt.Errorf("--apply binlog: %s", why)
	}
	r.log.Info("applying rows with SQL statements: tables whose target fires triggers, system-versioned tables and sequences will be refused", "why", why)
	return applier.SQLPath, nil
}

// sameFlavor reports whether the target is of the source's flavor
// (MariaDB or MySQL): then their collation ids and sql_mode bits agree.
func (r *Replica) sameFlavor(ctx context.Context, tgt *sql.DB) (bool, error) {
	var version string
	if err := tgt.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return false, fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	return strings.Contains(strings.ToLower(version), "mariadb") == (r.info.Flavor == binlog.FlavorMariaDB), nil
}

// openRelay opens the relay log and decides where applying resumes (the
// prefix of relay indexes already applied) and where receiving resumes.
func (r *Replica) openRelay(ctx context.Context, state *checkpoint.State, store *checkpoint.Store) (*relaylog.Log, uint64, string, error) {
	opts := relaylog.Options{Dir: r.cfg.RelayDir, MaxBytes: r.cfg.RelayMaxBytes, Sync: r.cfg.RelaySync, Logger: r.log}
	relay, err := relaylog.Open(opts)
	if err != nil {
		return nil, 0, "", err
	}
	if relay, err = r.ownRelay(relay, opts, state); err != nil {
		return nil, 0, "", err
	}
	last, _ := relay.Last()
	resume, hasResume := relay.Resume()
	R := state.RelayIndex
	switch {
	case last > 0 && hasResume && R+1 >= relay.First() && R <= last:
		// The relay log holds everything after the checkpoint.
		return relay, R, resume, r.tieRelay(ctx, relay, state, store)
	case last > 0:
		// The relay log does not continue from the checkpoint (it was cut
		// by a crash before the target's checkpoint): start it again from
		// the checkpoint.
		r.log.Warn("the relay log does not match the target's checkpoint; starting it again", "relay_first", relay.First(), "relay_last", last, "checkpoint_index", R)
		if err := relay.Close(); err != nil {
			return nil, 0, "", err
		}
		if err := relaylog.Remove(r.cfg.RelayDir); err != nil {
			return nil, 0, "", err
		}
		if relay, err = relaylog.Open(opts); err != nil {
			return nil, 0, "", err
		}
	}
	start := state.Position
	if start == "" {
		start = r.startGTID()
		if start == "" {
			start = r.info.Position
		}
	}
	l, _ := relay.Last()
	first := state.Position == ""
	if first || state.RelayIndex != l {
		// Remember where this target starts, so that a crash before the
		// first transaction does not move the start to "now"; and tie the
		// checkpoint to the new relay log's numbering, which starts again,
		// so that a crash before the next save cannot take the old log's
		// index for a position in the new one and skip transactions.
		if err := store.SaveProgress(ctx, start, l, nil); err != nil {
			return nil, 0, "", err
		}
		state.Position, state.RelayIndex = start, l
	}
	if first && r.cfg.StartGTID != "" {
		if err := store.SaveStart(ctx, r.cfg.StartGTID); err != nil {
			return nil, 0, "", err
		}
		state.Started = r.cfg.StartGTID
	}
	return relay, l, start, r.tieRelay(ctx, relay, state, store)
}

// ownRelay sets aside a relay log that was not written for the target's
// checkpoint, and returns the log to use: a relay log continues a
// checkpoint only when both name the same relay log (relaylog.Log.Owner).
// One left from before the target was seeded again, or written for another
// target or stream, or found beside a checkpoint that has none yet, is
// moved aside (kept, and named in the log), never applied. A checkpoint
// and a relay log that an older paraply wrote name none: the log is taken
// for the checkpoint's, as that release did, and tied to it.
func (r *Replica) ownRelay(relay *relaylog.Log, opts relaylog.Options, state *checkpoint.State) (*relaylog.Log, error) {
	owner, err := relay.Owner()
	if err != nil {
		_ = relay.Close() // the error to report is the owner's
		return nil, err
	}
	if last, _ := relay.Last(); last == 0 && owner == "" || state.Position != "" && owner == state.RelayLog {
		return relay, nil
	}
	if err := relay.Close(); err != nil {
		return nil, err
	}
	aside, err := relaylog.SetAside(r.cfg.RelayDir, time.Now())
	if err != nil {
		return nil, err
	}
	why := "the target has no checkpoint"
	if state.Position != "" {
		why = "the target's checkpoint names another relay log"
	}
	r.log.Warn("the relay log was not written for the target's checkpoint (the target was seeded again, or the relay directory is another target's or stream's): "+
		"set aside, not applied", "why", why, "set_aside", aside, "relay_log", owner, "checkpoint_relay_log", state.RelayLog)
	return relaylog.Open(opts)
}

// tieRelay records, in the relay log and in the checkpoint, that the one
// belongs to the other, giving the checkpoint an identity if it has none.
func (r *Replica) tieRelay(ctx context.Context, relay *relaylog.Log, state *checkpoint.State, store *checkpoint.Store) error {
	if state.RelayLog == "" {
		id := uuid.NewString()
		if err := store.SaveRelayLog(ctx, id); err != nil {
			return err
		}
		state.RelayLog = id
	}
	owner, err := relay.Owner()
	if err != nil || owner == state.RelayLog {
		return err
	}
	return relay.SetOwner(state.RelayLog)
}

// lockCheckEvery is how often a run checks that it still holds the
// target's lock (checkpoint.TargetLock.Keep).
const lockCheckEvery = 5 * time.Second

// lastIndex is the relay log's newest index.
func lastIndex(l *relaylog.Log) uint64 {
	n, _ := l.Last()
	return n
}
