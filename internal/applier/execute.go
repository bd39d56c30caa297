package applier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/paraply/paraply/internal/stage"
)

// Applying a work as SQL statements (SQLPath): compacted first, then
// statement by statement to name a conflict; in one or two parts around
// the commit turn.

// executeSQL runs work as SQL statements (SQLPath), compacted unless that
// is off, cannot keep the source's order, or a failed compacted attempt
// could not be undone before the second (stage.Txn.WaitsFirst). On
// success the target transaction stays open on w's session. A wait for
// the commit turn in the middle of work (see execute) is added to tm.Turn.
func (w *worker) executeSQL(ctx context.Context, work *stage.Work, turnFirst bool, tm *Timing) (time.Duration, error) {
	var total time.Duration
	compact := !w.p.cfg.NoCompact && !rollsBack(work) && !work.Txns[0].WaitsFirst()
	for again := false; ; compact, again = false, true {
		conn, err := w.session(ctx)
		if err != nil {
			return total, err
		}
		if again {
			// The failed attempt's rollback may have ended the session:
			// a new one must commit under the source's GTID too.
			if err := w.sourceGTID(ctx, conn, work.Txns[0]); err != nil {
				return total, err
			}
		}
		if err := w.refuseInexact(ctx, conn, work); err != nil {
			return total, err
		}
		d, err := w.execute(ctx, conn, work, compact, turnFirst, tm)
		total += d
		if !errors.Is(err, errCompacted) {
			return total, err
		}
		// Compacted statements name a range of transactions: run the
		// work again statement by statement to find the one, or to
		// succeed if the target changed meanwhile.
		w.log.Info("applying the work again without compaction", "gtid", work.Txns[0].GTID, "transactions", len(work.Txns), "err", err)
	}
}

// errCompacted is a data error met by compacted statements (see
// Config.NoCompact), which name the range of transactions they merge:
// attempt runs the work again without compaction to name the one.
var errCompacted = errors.New("data error in compacted statements")

// execute builds work's statements, runs them and checks what they
// affected. On success the target transaction stays open; on error it is
// rolled back.
//
// Work with AfterTurn, not yet at its turn, runs in two parts: the
// transactions that do not wait for earlier work, then, once every
// transaction before the work has committed (the wait is added to
// tm.Turn), those that do. The parts are one target transaction;
// compaction merges within each part only.
func (w *worker) execute(ctx context.Context, conn *sql.Conn, work *stage.Work, compact, turnFirst bool, tm *Timing) (time.Duration, error) {
	if work.AfterTurn == nil || turnFirst || !w.p.cfg.PreserveOrder {
		return w.executePart(ctx, conn, work, compact, turnFirst, wholeWork)
	}
	d, err := w.executePart(ctx, conn, work, compact, false, beforeTurn)
	if err != nil {
		return d, err
	}
	if err := w.waitTurn(ctx, work, tm); err != nil {
		w.rollback(conn)
		return d, err
	}
	d2, err := w.executePart(ctx, conn, work, compact, true, afterTurn)
	return d + d2, err
}

// part is which of a work's transactions a batch holds (see execute).
type part uint8

const (
	wholeWork  part = iota
	beforeTurn      // those not marked AfterTurn; the batch starts the target transaction
	afterTurn       // those marked AfterTurn; the batch records the work's GTIDs
)

// holds reports whether the batch of part p holds work's i-th transaction.
func (p part) holds(work *stage.Work, i int) bool {
	return p == wholeWork || work.AfterTurn[i] == (p == afterTurn)
}

// executePart is execute for part p of work. turnFirst says every
// transaction before the work has committed.
func (w *worker) executePart(ctx context.Context, conn *sql.Conn, work *stage.Work, compact, turnFirst bool, p part) (time.Duration, error) {
	if err := w.build(work, compact, p); err != nil {
		return 0, err
	}
	t0 := time.Now()
	mismatch, err := w.runBatch(ctx, conn, &w.batch, work)
	d := time.Since(t0)
	if err != nil {
		if err := w.abandon(conn, work, err, turnFirst); err != nil {
			return d, err
		}
		if compact {
			return d, fmt.Errorf("%w: %v", errCompacted, err)
		}
		return d, w.pinpoint(ctx, conn, work, err)
	}
	if err := mismatch; err != nil {
		w.rollback(conn)
		var ce *stage.ConflictError
		switch {
		case w.early(work, turnFirst):
			return d, fmt.Errorf("%w: %v", errNotHead, err)
		case compact && errors.As(err, &ce):
			// Not yet a conflict, and not of ce.GTID: of a range.
			return d, fmt.Errorf("%w: %s %s: %s", errCompacted, ce.Table, ce.Key, ce.What)
		case compact:
			return d, fmt.Errorf("%w: %v", errCompacted, err)
		}
		return d, err
	}
	return d, nil
}

// rollBackAsSource ends the target transaction of work, a transaction
// the source rolled back (binlog.Txn.RolledBack), as its replica does:
// ROLLBACK, so that only what a rollback does not undo stays (rows of
// non-transactional tables); then its GTID is recorded in a target
// transaction of its own. A crash between the two applies it again, and
// its non-transactional rows with it, as on MariaDB's replica, whose
// gtid_slave_pos is no more atomic with such rows.
func (w *worker) rollBackAsSource(ctx context.Context, conn *sql.Conn, work *stage.Work) error {
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		return err
	}
	b := &w.batch
	b.Compact = false
	b.Reset()
	b.Raw("START TRANSACTION")
	bookkeeping(w.p.store, work, b.Raw)
	if _, err := w.runBatchAs(ctx, conn, b, work, false); err != nil {
		w.rollback(conn)
		return err
	}
	_, err := conn.ExecContext(ctx, "COMMIT")
	return err
}

// rollsBack reports whether a transaction of work rolls back to a
// savepoint: its statements must then run in the source's order, which
// compaction does not keep.
func rollsBack(work *stage.Work) bool {
	for _, t := range work.Txns {
		if t.Txn.RollsBackToSavepoint() {
			return true
		}
	}
	return false
}
