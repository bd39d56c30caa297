package replicate

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"golang.org/x/sync/errgroup"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/handover"
	"github.com/paraply/paraply/internal/lag"
	"github.com/paraply/paraply/internal/prepare"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/scheduler"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/source"
	"github.com/paraply/paraply/internal/stage"
)

// errCaughtUp ends Run successfully in UntilCaughtUp mode.
var errCaughtUp = errors.New("caught up")

// Replica is a replication pipeline.
type Replica struct {
	cfg  Config
	log  *slog.Logger
	feed feed

	mu       sync.Mutex // guards everything below: Run sets it, Status reads it
	info     source.Info
	receiver producer
	relay    *relaylog.Log
	prep     *prepare.Preparer
	seq      *stage.Sequencer
	lag      *lag.Tracker // dates transactions for Status.Lag; lives across passes
	stats    scheduler.Stats
	saved    scheduler.Progress
	savedAt  time.Time
	started  time.Time
	// until is where the pipeline stops once the checkpoint reaches it
	// (nil: never): the source's position at start with UntilCaughtUp,
	// the end of the relay log once a producer's input has ended.
	until mysql.GTIDSet
	// stops says until is set, so that reachedUntil, which the
	// coordinator calls after commits, takes mu only in a run that stops.
	// With mu taken after every commit of a replica keeping up, the lag it
	// reported fell behind a heartbeat's by 160-530 ms in 2 of 3 runs of
	// TestKeepingUpAndLag (0 of 3 without, and 0 of 3 with this).
	stops atomic.Bool
}

// New returns a pipeline for cfg; Run starts it.
func New(cfg Config) *Replica {
	r := &Replica{cfg: cfg, log: cfg.Logger, lag: lag.NewTracker(cfg.heartbeatInterval())}
	r.feed = network{r}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
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
// waiting does not cure, ctx ends, or ConnectWait has passed: a server that
// is restarting when paraply starts is waited for, as it is once running,
// while a wrong address still fails soon.
func (r *Replica) untilReachable(ctx context.Context, role, addr string, fn func() error) error {
	backoff := 200 * time.Millisecond
	deadline := time.Now().Add(r.cfg.ConnectWait)
	for {
		err := fn()
		if err == nil || !applier.Retryable(err) || ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			return err
		}
		r.log.Warn("waiting for the "+role+" to answer", role, addr, "retry_in", backoff, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// run is one pass of the pipeline, from opening the connections to the
// first error.
func (r *Replica) run(ctx context.Context) error {
	info, err := r.feed.inspect(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.info, r.started = info, time.Now()
	r.mu.Unlock()
	tgtDB, err := r.cfg.Target.WithTLS(r.cfg.TargetTLS).Open(applier.ConfigureSession)
	if err != nil {
		return err
	}
	defer tgtDB.Close()
	// The workers' sessions, those of source connections that hold
	// temporary tables, and a few for the checkpoint, the lock and checks.
	tgtDB.SetMaxOpenConns(r.cfg.Pool() + applier.MaxThreadSessions + 4)
	tgtDB.SetMaxIdleConns(r.cfg.Pool() + 4)
	var cat *schema.Catalog
	if err := r.untilReachable(ctx, "target", r.cfg.Target.String(), func() (err error) {
		cat, err = r.feed.catalog(ctx, tgtDB)
		return err
	}); err != nil {
		return err
	}
	if r.info.Flavor == binlog.FlavorMySQL {
		cat.SetFlavor(schema.MySQL)
	}
	path, err := r.applyPath(ctx, tgtDB)
	if err != nil {
		return err
	}
	sameFlavor, err := r.sameFlavor(ctx, tgtDB)
	if err != nil {
		return err
	}
	if r.cfg.PreserveGTIDs {
		if err := checkPreserveGTIDs(ctx, tgtDB, r.info.Flavor); err != nil {
			return fmt.Errorf("--preserve-gtids: target %s: %w", r.cfg.Target, err)
		}
	}
	if err := r.checkPrivileges(ctx, tgtDB, cat); err != nil {
		return err
	}
	lock, err := checkpoint.Lock(ctx, tgtDB)
	if err != nil {
		return fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	defer lock.Release()
	store := checkpoint.NewStoreFor(tgtDB, r.feed.origin())
	state, rerun, err := r.loadCheckpoint(ctx, store)
	if err != nil {
		return err
	}
	if r.watchesNative(sameFlavor) {
		if err := r.fromNative(ctx, tgtDB, state, store); err != nil {
			return fmt.Errorf("target %s: %w", r.cfg.Target, err)
		}
	}
	if err := r.checkStart(ctx, tgtDB, state); err != nil {
		return err
	}
	// Read with the rest of the start, before "replicating": a target
	// lost after that is ridden out, not an error.
	lost, err := lostTemporary(ctx, store)
	if err != nil {
		return err
	}
	relay, prefix, start, err := r.openRelay(ctx, state, store)
	if err != nil {
		return err
	}
	defer relay.Close()
	r.log.Info("replicating", "source", r.feed, "flavor", r.info.Flavor, "target", r.cfg.Target,
		"dependency", r.cfg.Mode, "workers", r.cfg.Pool(), "auto_workers", r.cfg.Auto(), "apply", path, "from", start, "relay_index", prefix)

	var until, stopAfter mysql.GTIDSet
	switch {
	case r.cfg.UntilGTID != "":
		if until, err = mysql.ParseGTIDSet(flavor(r.info.Flavor), r.cfg.UntilGTID); err != nil {
			return fmt.Errorf("--until-gtid %q: %w", r.cfg.UntilGTID, err)
		}
		stopAfter = until
	case r.cfg.fillTo != "":
		if until, err = mysql.ParseGTIDSet(flavor(r.info.Flavor), r.cfg.fillTo); err != nil {
			return err
		}
	case r.cfg.UntilCaughtUp:
		if until, err = mysql.ParseGTIDSet(flavor(r.info.Flavor), r.info.Position); err != nil {
			return err
		}
	}
	// Caught up at start: with --until-gtid once the checkpoint holds it
	// (what the relay log holds beyond it waits for the next run); else
	// once everything the relay log holds is applied and receiving would
	// start at or past until (no checkpoint yet, and a source with
	// nothing new, included: no progress would ever be saved to say so).
	applied := prefix >= lastIndex(relay)
	if until != nil && (stopAfter != nil && caughtUp(r.info.Flavor, state.Position, until) ||
		applied && (caughtUp(r.info.Flavor, state.Position, until) || caughtUp(r.info.Flavor, start, until))) {
		pos := cmp.Or(state.Position, start, "(no transaction yet)")
		r.log.Info("already caught up", "position", pos)
		return nil
	}
	r.mu.Lock()
	r.until = until
	r.stops.Store(until != nil)
	// What the target has at start is saved already: a stop before
	// anything new is applied (--until-gtid passing nothing) compares
	// with it, as no save would come to say so.
	r.saved = scheduler.Progress{RelayIndex: prefix, Position: state.Position, Reached: state.Position}
	r.mu.Unlock()
	receiver, err := r.feed.producer(r.info, relay)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.receiver, r.relay = receiver, relay
	r.mu.Unlock()
	seq := stage.NewSequencer(prefix)
	prep := &prepare.Preparer{Catalog: cat, LostTemporary: lost, Mode: r.cfg.Mode, History: r.cfg.History, SQLOnly: path == applier.SQLPath, SourceSession: sameFlavor, Applied: state.Applied, Rerun: rerun,
		Logger: r.log.With("component", "preparer"), ReadPart: relay.ReadPart, StopAfter: stopAfter, Stopped: r.untilStopped(state.Position, until), Flavor: r.info.Flavor, Delay: r.cfg.Delay, ClockOffset: r.lag.ClockOffset,
		Filter: r.newFilter()}
	r.mu.Lock()
	r.prep, r.seq = prep, seq
	r.mu.Unlock()
	pool := applier.NewPool(applier.Config{Workers: r.cfg.Pool(), Path: path, SourceSession: sameFlavor, PreserveOrder: r.cfg.PreserveOrder, NoCompact: r.cfg.NoCompact,
		PreserveGTIDs: r.cfg.PreserveGTIDs, Logger: r.log.With("component", "applier"), Observer: r.cfg.Observer}, tgtDB, store, seq)
	coord := scheduler.NewCoordinator(scheduler.Config{
		Start: state.Position, Window: r.cfg.Window, BatchTxns: r.cfg.batchTxns(), BatchDelay: r.cfg.BatchDelay, Workers: r.cfg.Pool(), Adaptive: r.cfg.Auto(), PreserveOrder: r.cfg.PreserveOrder, Logger: r.log.With("component", "scheduler"),
		SaveAt: r.reachedUntil,
	}, seq)

	g, gctx := errgroup.WithContext(ctx)
	prepared := make(chan *stage.Prepared, 256)
	work := applier.WorkChannels(r.cfg.Pool())
	done := make(chan *stage.Work, r.cfg.Pool())
	reader := relay.NewReader(prefix + 1)
	defer reader.Close()
	g.Go(func() error {
		if err := receiver.Run(gctx, start); err != nil || gctx.Err() != nil {
			return err
		}
		return r.stopAtEnd(relay)
	})
	g.Go(func() error { return prep.Run(gctx, reader, prepared) })
	g.Go(func() error { return pool.Run(gctx, work, done) })
	g.Go(func() error { r.feed.probe(gctx); return nil })
	g.Go(func() error { return lock.Keep(gctx, lockCheckEvery, r.log) })
	if r.watchesNative(sameFlavor) {
		g.Go(func() error { return r.watchNative(gctx, tgtDB) })
	}
	sv := newSaver(func(wctx context.Context, p scheduler.Progress) error {
		if err := store.SaveProgress(wctx, p.Position, p.RelayIndex, p.Covered); err != nil {
			return fmt.Errorf("saving the checkpoint on the target: %w", err)
		}
		if err := relay.Purge(p.RelayIndex); err != nil {
			return err
		}
		p.Covered = nil
		r.mu.Lock()
		defer r.mu.Unlock()
		r.saved, r.savedAt = p, time.Now()
		if r.until != nil && caughtUp(r.info.Flavor, p.Reached, r.until) {
			return errCaughtUp
		}
		return nil
	})
	g.Go(func() error { return sv.run(gctx) })
	g.Go(func() error {
		defer sv.close()
		observe := func(s scheduler.Stats) {
			r.mu.Lock()
			r.stats = s
			r.mu.Unlock()
		}
		return coord.Run(gctx, prepared, work, done, sv.save, observe)
	})
	err = g.Wait()
	if errors.Is(err, errCaughtUp) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.log.Info("caught up: the target has everything up to the position", "position", r.until)
		return nil
	}
	return err
}

// loadCheckpoint reads the target's checkpoint, and settles a DDL that was
// running at the last stop: recorded as applied if it took effect, else
// to run again (the returned set).
func (r *Replica) loadCheckpoint(ctx context.Context, store *checkpoint.Store) (*checkpoint.State, map[string]bool, error) {
	if err := store.Init(ctx); err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	state, err := store.Load(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	rerun := map[string]bool{}
	if p := state.PendingDDL; p != nil {
		out, err := store.ResolveDDL(ctx, p)
		if err != nil {
			return nil, nil, fmt.Errorf("settling the DDL %s that was running at the last stop: %w", p.GTID, err)
		}
		if out == checkpoint.DDLApplied {
			state.Applied[p.GTID] = true
			r.log.Info("a DDL running at the last stop had taken effect", "gtid", p.GTID)
		} else {
			rerun[p.GTID] = true
			r.log.Info("a DDL running at the last stop had not taken effect; it will run again", "gtid", p.GTID)
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

// untilStopped is where --until-gtid stops: after the last transaction
// the preparer passed on (applied is the checkpoint when it passed none).
// That is until itself, unless the source interleaves several domains and
// one went past its position before another reached its own: MariaDB's
// replica would go on in the others; paraply stops (it commits in one
// order) and says so.
func (r *Replica) untilStopped(applied string, until mysql.GTIDSet) func(string) error {
	return func(passed string) error {
		if passed == "" {
			passed = applied
		}
		if !caughtUp(r.info.Flavor, passed, until) {
			r.log.Warn("--until-gtid: stopping before a transaction beyond the position in its domain, before another domain reached its own",
				"until", until.String(), "stopped_at", passed)
		}
		return r.stopAt(passed)
	}
}

// stopAtEnd is called when the producer's input has ended (binlog files,
// all appended): the pipeline stops once the checkpoint covers the last
// transaction in the relay log, at once if it holds none (its resume
// position is then empty) or the saved checkpoint covers it already.
// Setting until and checking the saved checkpoint under one lock, as the
// saver checks until when it saves, means that one of the two sees the
// other.
func (r *Replica) stopAtEnd(relay *relaylog.Log) error {
	end, _ := relay.Resume()
	return r.stopAt(end)
}

// stopAt makes the pipeline stop once the target has everything up to
// position end (errCaughtUp when it has already).
func (r *Replica) stopAt(end string) error {
	until, err := mysql.ParseGTIDSet(flavor(r.info.Flavor), end)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.until = until
	r.stops.Store(until != nil)
	if caughtUp(r.info.Flavor, r.saved.Reached, until) {
		return errCaughtUp
	}
	return nil
}

// applyPath resolves Config.Apply for this source and target.
func (r *Replica) applyPath(ctx context.Context, tgt *sql.DB) (applier.Path, error) {
	if r.cfg.Apply == "sql" {
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
	case ok && r.cfg.Apply == "binlog":
		return applier.BinlogPath, nil
	case ok:
		return applier.AutoPath, nil
	case r.cfg.Apply == "binlog":
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
	last, _ := relay.Last()
	resume, hasResume := relay.Resume()
	R := state.RelayIndex
	switch {
	case last > 0 && hasResume && R+1 >= relay.First() && R <= last:
		// The relay log holds everything after the checkpoint.
		return relay, R, resume, nil
	case last > 0:
		// The relay log does not continue from the checkpoint (it was cut
		// by a crash before the target's checkpoint, or belongs to another
		// run): start it again from the checkpoint.
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
	return relay, l, start, nil
}

// lockCheckEvery is how often a run checks that it still holds the
// target's lock (checkpoint.TargetLock.Keep).
const lockCheckEvery = 5 * time.Second

func lastIndex(l *relaylog.Log) uint64 {
	n, _ := l.Last()
	return n
}

// reachedUntil reports whether position is where the run stops
// (--until-caught-up, --until-gtid, the end of binlog files): the
// coordinator saves it at once, and the save ends the run.
func (r *Replica) reachedUntil(position string) bool {
	if !r.stops.Load() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.until != nil && caughtUp(r.info.Flavor, position, r.until)
}

// caughtUp reports whether position includes until.
func caughtUp(f binlog.Flavor, position string, until mysql.GTIDSet) bool {
	if until.IsEmpty() {
		return true
	}
	p, err := mysql.ParseGTIDSet(flavor(f), position)
	return err == nil && p.Contain(until)
}

func flavor(f binlog.Flavor) string {
	if f == binlog.FlavorMySQL {
		return mysql.MySQLFlavor
	}
	return mysql.MariaDBFlavor
}
