package replicate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/schema"
)

// StartCurrent is the --start-gtid that says, explicitly, to start at the
// source's position now: on a target that holds tables, paraply does not
// take that for granted.
const StartCurrent = "current"

// ErrStartUnknown is returned when replicate would have to guess where to
// start: the target holds tables but no checkpoint and no native replica
// position, and no --start-gtid says where its data comes from.
var ErrStartUnknown = errors.New("the target holds tables but no paraply checkpoint: give --start-gtid")

// ErrStartDisagrees is returned when --start-gtid names another position
// than the checkpoint the target holds.
var ErrStartDisagrees = errors.New("--start-gtid disagrees with the target's checkpoint")

// startGTID is --start-gtid with "current" resolved to the source's
// position, as inspected at the start of this pass.
func (r *Replica) startGTID() string {
	if r.cfg.StartGTID == StartCurrent {
		return r.info.Position
	}
	return r.cfg.StartGTID
}

// ErrCloneUnfinished is returned when the stream's target holds a clone
// (paraply clone) that has not finished: it holds part of the source's
// data, and replicating onto it would apply changes to rows it lacks.
var ErrCloneUnfinished = errors.New("a clone of this stream has not finished on the target")

// checkClone refuses a target whose clone has not finished, unless this
// run is that clone's own (Config.CloneCatchUp).
func (r *Replica) checkClone(ctx context.Context, tgt *sql.DB) error {
	if r.cfg.CloneCatchUp || r.feed.origin() != checkpoint.Replicate {
		return nil
	}
	unfinished, err := checkpoint.CloneUnfinished(ctx, tgt, r.cfg.Name)
	if err != nil {
		return fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	if unfinished {
		return fmt.Errorf("%w (%s.clone): run paraply clone again with the same settings, which resumes the copy and then replicates", ErrCloneUnfinished, checkpoint.SchemaOf(r.cfg.Name))
	}
	return nil
}

// checkStart refuses the two starts that would lose transactions without
// a word: a target loaded from a dump and started without the dump's
// position would begin at the source's current position, skipping
// everything between; and a --start-gtid given once a checkpoint exists
// would be ignored, the checkpoint winning. A --start-gtid equal to the
// checkpoint's position, or to the one its first start was given (the
// same command run again, by hand or by a service), continues from the
// checkpoint. state is the checkpoint, after the native replica's position
// was taken over (fromNative).
func (r *Replica) checkStart(ctx context.Context, tgt *sql.DB, state *checkpoint.State) error {
	if r.feed.origin() != checkpoint.Replicate || r.cfg.fillTo != "" {
		return nil // apply and handover start where their own rules say
	}
	given := r.cfg.StartGTID
	if state.Position != "" {
		// The position the checkpoint holds, or the first start's own
		// --start-gtid: the same command started again continues.
		if given == "" || sameGTIDs(r.info.Flavor, r.startGTID(), state.Position) ||
			given == state.Started || sameGTIDs(r.info.Flavor, given, state.Started) {
			return nil
		}
		return fmt.Errorf("%w: --start-gtid %s, but the target %s has applied up to %s (paraply.progress). "+
			"Restart without --start-gtid (or with the first start's) to continue from the checkpoint; "+
			"to start elsewhere on purpose, drop the checkpoint first (DROP DATABASE paraply on the target)",
			ErrStartDisagrees, given, r.cfg.Target, state.Position)
	}
	if given != "" {
		return nil
	}
	tables, err := userTables(ctx, tgt, r.includes)
	if err != nil {
		return fmt.Errorf("target %s: %w", r.cfg.Target, err)
	}
	if len(tables) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the target %s holds %s and no checkpoint, so paraply cannot tell which of the source's transactions it has; "+
		"starting at the source's current position (%s) would skip every transaction between the target's data and now. "+
		"Give --start-gtid the position the target's data was taken at (mariadb-dump --master-data=2 writes it as gtid_slave_pos in the dump; "+
		"mariabackup in xtrabackup_binlog_info), or --start-gtid %s to start at the source's current position on purpose",
		ErrStartUnknown, r.cfg.Target, strings.Join(tables, ", "), r.info.Position, StartCurrent)
}

// checkPosition asks the source, before the checkpoint's first row is
// written, whether it can stream from --start-gtid: a position ahead of
// it, or in binlogs it purged, is refused with the source's position, and
// the target is left without a checkpoint (a failed first start that
// left one would make every later start resume from it). A checkpoint
// that holds transactions the source lacks (errant transactions, a
// failover to a server that missed some) is refused too, before a
// --until-caught-up takes the source's lower position for one reached.
func (r *Replica) checkPosition(ctx context.Context, state *checkpoint.State) error {
	pos, first, what := state.Position, false, "target "+r.cfg.Target.String()
	if pos == "" {
		if r.cfg.StartGTID == "" || r.cfg.StartGTID == StartCurrent || r.cfg.fillTo != "" {
			return nil
		}
		pos, first, what = r.cfg.StartGTID, true, "--start-gtid "+r.cfg.StartGTID
	}
	// A source that is restarting is waited for, as at inspect.
	err := untilReachable(ctx, r.cfg.ConnectWait, r.log, "source", r.cfg.Source.String(), func() error {
		return r.feed.checkPosition(ctx, r.info, pos, first)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// includes reports whether the filters (--include, --exclude) would
// write to the target table db.table (target names, rewritten by
// --rewrite-db): tables they leave out say nothing about the source's
// data.
func (r *Replica) includes(db, table string) bool {
	return r.cfg.Filter.Table(db, table)
}

// userTables lists up to five tables on the target outside the system
// databases and paraply's own that include accepts, quoted.
func userTables(ctx context.Context, tgt *sql.DB, include func(db, table string) bool) ([]string, error) {
	rows, err := tgt.QueryContext(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "+
		"WHERE TABLE_SCHEMA NOT IN ('mysql', 'sys', 'information_schema', 'performance_schema') AND "+checkpoint.BookkeepingSQL("TABLE_SCHEMA")+" ORDER BY TABLE_SCHEMA, TABLE_NAME")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	n := 0
	for rows.Next() {
		var db, name string
		if err := rows.Scan(&db, &name); err != nil {
			return nil, err
		}
		if !include(db, name) {
			continue
		}
		if n++; n <= 5 {
			out = append(out, schema.TableName{Schema: db, Name: name}.String())
		}
	}
	if n > 5 {
		out = append(out, fmt.Sprintf("%d more tables", n-5))
	}
	return out, rows.Err()
}

// sameGTIDs reports whether two GTID positions of flavor f name the same
// set of transactions.
func sameGTIDs(f binlog.Flavor, a, b string) bool {
	x, err1 := binlog.ParseGTIDSet(f, a)
	y, err2 := binlog.ParseGTIDSet(f, b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// lostTemporary reads the temporary tables source connections held when
// paraply last stopped, which the target sessions that held them lost
// (see scheduler.temporaries).
func lostTemporary(ctx context.Context, store *checkpoint.Store) (map[uint32]map[schema.TableName]string, error) {
	tables, err := store.TempTables(ctx)
	if err != nil {
		return nil, err
	}
	lost := map[uint32]map[schema.TableName]string{}
	for _, t := range tables {
		if lost[t.Thread] == nil {
			lost[t.Thread] = map[schema.TableName]string{}
		}
		lost[t.Thread][schema.TableName{Schema: t.Schema, Name: t.Name}] = t.GTID
	}
	return lost, nil
}
