package replicate

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/applier"
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/scheduler"
	"github.com/paraply/paraply/internal/schema"
)

// begun is what the start of a pass opened, checked and decided, for the
// stages to run on.
type begun struct {
	tgt        *sql.DB
	catalog    *schema.Catalog
	path       applier.Path
	sameFlavor bool // the target is of the source's flavor
	lock       *checkpoint.TargetLock
	store      *checkpoint.Store
	state      *checkpoint.State
	rerun      map[string]bool // DDL to run again (loadCheckpoint)
	lost       map[uint32]map[schema.TableName]string
	relay      *relaylog.Log
	prefix     uint64 // the relay indexes applied already
	start      string // where receiving resumes
	// until is where the run ends (nil: never), and caughtUp says the
	// target holds it already: there is nothing to run.
	until    mysql.GTIDSet
	caughtUp bool
}

// close releases what begin opened, newest first.
func (b *begun) close() {
	if b.relay != nil {
		_ = b.relay.Close() // the run has ended: a failed close changes nothing in it
	}
	if b.lock != nil {
		b.lock.Release()
	}
	if b.tgt != nil {
		b.tgt.Close()
	}
}

// begin opens the target and checks it, takes its lock, reads the
// checkpoint, opens the relay log and works out where the run ends. It
// returns what it opened even with an error, for the caller to close.
func (r *Replica) begin(ctx context.Context) (*begun, error) {
	st := &begun{}
	info, err := r.feed.inspect(ctx)
	if err != nil {
		return st, err
	}
	r.mu.Lock()
	r.info, r.started = info, time.Now()
	r.mu.Unlock()
	if err := r.openTarget(ctx, st); err != nil {
		return st, err
	}
	if err := r.takeTarget(ctx, st); err != nil {
		return st, err
	}
	if st.relay, st.prefix, st.start, err = r.openRelay(ctx, st.state, st.store); err != nil {
		return st, err
	}
	r.log.Info("replicating", "source", r.feed, "flavor", r.info.Flavor, "target", r.cfg.Target,
		"dependency", r.cfg.Mode, "workers", r.cfg.Pool(), "auto_workers", r.cfg.Auto(), "apply", st.path, "from", st.start, "relay_index", st.prefix)
	if err := r.stopPosition(st); err != nil {
		return st, err
	}
	// What the target has at start is saved already (the status says so
	// until the first save).
	r.mu.Lock()
	r.saved = scheduler.Progress{RelayIndex: st.prefix, Position: st.state.Position, Reached: st.state.Position}
	r.mu.Unlock()
	return st, nil
}

// openTarget connects to the target, reads its tables' keys (waiting for
// a target that is restarting), and checks what applying needs of it.
func (r *Replica) openTarget(ctx context.Context, st *begun) error {
	tgt, err := r.cfg.Target.WithTLS(r.cfg.TargetTLS).Open(applier.ConfigureSession)
	if err != nil {
		return err
	}
	st.tgt = tgt
	// The workers' sessions, those of source connections that hold
	// temporary tables, and a few for the checkpoint, the lock and checks.
	tgt.SetMaxOpenConns(r.cfg.Pool() + applier.MaxThreadSessions + 4)
	tgt.SetMaxIdleConns(r.cfg.Pool() + 4)
	if err := untilReachable(ctx, r.cfg.ConnectWait, r.log, "target", r.cfg.Target.String(), func() (err error) {
		st.catalog, err = r.feed.catalog(ctx, tgt)
		return err
	}); err != nil {
		return r.cfg.Target.WithTLS(r.cfg.TargetTLS).ExplainDenied("target", err)
	}
	if r.info.Flavor == binlog.FlavorMySQL {
		st.catalog.SetFlavor(schema.MySQL)
	}
	if st.path, err = r.applyPath(ctx, tgt); err != nil {
		return err
	}
	if st.sameFlavor, err = r.sameFlavor(ctx, tgt); err != nil {
		return err
	}
	if r.cfg.PreserveGTIDs {
		if err := checkPreserveGTIDs(ctx, tgt, r.info.Flavor, checkpoint.SchemaOf(r.cfg.Name)); err != nil {
			return fmt.Errorf("--preserve-gtids: target %s: %w", r.cfg.Target, err)
		}
	}
	return r.checkPrivileges(ctx, tgt, st.catalog)
}

// takeTarget takes the target's lock and reads its checkpoint: where the
// last run stopped, or where the target's own replication did, checked
// against --start-gtid.
func (r *Replica) takeTarget(ctx context.Context, st *begun) error {
	var err error
	if st.lock, err = checkpoint.LockStream(ctx, st.tgt, r.cfg.Name); err != nil {
		return fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	if err := r.checkClone(ctx, st.tgt); err != nil {
		return err
	}
	st.store = checkpoint.NewStreamStore(st.tgt, r.feed.origin(), r.cfg.Name)
	if st.state, st.rerun, err = loadCheckpoint(ctx, st.store, r.log); err != nil {
		return fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	if r.watchesNative(st.sameFlavor) {
		if err := r.fromNative(ctx, st.tgt, st.state, st.store); err != nil {
			return fmt.Errorf("target %s: %w", r.cfg.Target, err)
		}
	}
	if err := r.checkStart(ctx, st.tgt, st.state); err != nil {
		return err
	}
	if err := r.checkPosition(ctx, st.state); err != nil {
		return err
	}
	// Read with the rest of the start, before "replicating": a target
	// lost after that is ridden out, not an error.
	st.lost, err = lostTemporary(ctx, st.store)
	return err
}

// stopPosition works out where the run ends (--until-gtid, a hand-over's
// gap fill, --until-caught-up), and whether the target holds it already:
// with --until-gtid once the checkpoint holds it (what the relay log holds
// beyond it waits for the next run); else once everything the relay log
// holds is applied and receiving would start at or past it (no checkpoint
// yet, and a source with nothing new, included: no progress would ever be
// saved to say so).
func (r *Replica) stopPosition(st *begun) error {
	var at string
	switch {
	case r.cfg.UntilGTID != "":
		at = r.cfg.UntilGTID
	case r.cfg.fillTo != "":
		at = r.cfg.fillTo
	case r.cfg.UntilCaughtUp:
		at = r.info.Position
	default:
		return nil
	}
	until, err := binlog.ParseGTIDSet(r.info.Flavor, at)
	if err != nil {
		if r.cfg.UntilGTID != "" {
			return fmt.Errorf("--until-gtid %q: %w", r.cfg.UntilGTID, err)
		}
		return err
	}
	st.until = until
	has := binlog.Covers(r.info.Flavor, st.state.Position, until)
	applied := st.prefix >= lastIndex(st.relay)
	if r.cfg.UntilGTID != "" && has || applied && (has || binlog.Covers(r.info.Flavor, st.start, until)) {
		r.log.Info("already caught up", "position", cmp.Or(st.state.Position, st.start, "(no transaction yet)"))
		st.caughtUp = true
	}
	return nil
}
