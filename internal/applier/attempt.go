package applier

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/retry"
	"github.com/paraply/paraply/internal/stage"
)

// One attempt at a work: the session it runs in, its DDL, its changes by
// the path that suits them, and the COMMIT in its turn.

// attempt applies work once and says where the time went.
func (w *worker) attempt(ctx context.Context, work *stage.Work, turnFirst bool) (tm Timing, err error) {
	t := work.Txns[0]
	conn, err := w.session(ctx)
	if err != nil {
		return tm, err
	}
	if t.SourceRestarted {
		w.p.threads.close()
		if _, err := conn.ExecContext(ctx, w.p.store.TempForgetSQL()); err != nil {
			return tm, fmt.Errorf("forgetting the temporary tables of the source before its restart: %w", err)
		}
	}
	if t.Session != 0 {
		var giveBack func(committed bool)
		if conn, giveBack, err = w.borrowSession(ctx, t); err != nil {
			return tm, err
		}
		defer func() { giveBack(err == nil) }()
	}
	if t.DDL != nil {
		t0 := time.Now()
		err := w.ddl(ctx, conn, work)
		tm.Exec = time.Since(t0)
		if err != nil || !t.Txn.HasRows() {
			return tm, err
		}
		// CREATE ... SELECT: its rows, now that the table exists; the DDL
		// waited for its turn (and may have closed the session).
		turnFirst = true
		if conn, err = w.session(ctx); err != nil {
			return tm, err
		}
	}
	err = w.runAndCommit(ctx, conn, work, turnFirst, &tm)
	return tm, err
}

// runAndCommit applies work's changes on conn, by the path that suits
// them, then commits them. turnFirst says every transaction before work
// has committed or is waited for first.
func (w *worker) runAndCommit(ctx context.Context, conn *sql.Conn, work *stage.Work, turnFirst bool, tm *Timing) error {
	if turnFirst && (w.p.cfg.PreserveOrder || work.Txns[0].WaitsFirst()) {
		if err := w.waitTurn(ctx, work, tm); err != nil {
			return err
		}
	}
	if err := w.sourceGTID(ctx, conn, work.Txns[0]); err != nil {
		return err
	}
	path, stmts := w.p.cfg.Path, hasStatements(work)
	if path == AutoPath && !stmts {
		var err error
		if path, err = w.choosePath(ctx, conn, work); err != nil {
			return err
		}
	}
	if work.AfterTurn != nil && !turnFirst && w.p.cfg.PreserveOrder && path == BinlogPath && !stmts {
		// SQL and statements apply a work in two parts (see execute,
		// executeStatements); BINLOG statements do not.
		if err := w.waitTurn(ctx, work, tm); err != nil {
			return err
		}
		turnFirst = true
	}
	var d time.Duration
	var err error
	switch {
	case work.Txns[0].Large != nil:
		d, err = w.applyLarge(ctx, conn, work, path, turnFirst)
	case stmts:
		d, err = w.executeStatements(ctx, work, turnFirst, tm)
	case path == BinlogPath:
		d, err = w.replayWork(ctx, conn, work, turnFirst)
	default:
		d, err = w.executeSQL(ctx, work, turnFirst, tm)
	}
	tm.Exec += d
	if err != nil {
		return err
	}
	return w.commit(ctx, work, turnFirst, tm)
}

// waitTurn waits until every transaction before work has committed, and
// adds the wait to tm.Turn.
func (w *worker) waitTurn(ctx context.Context, work *stage.Work, tm *Timing) error {
	t0 := time.Now()
	if err := w.p.seq.WaitTurn(ctx, work.First()); err != nil {
		return err
	}
	tm.Turn += time.Since(t0)
	return nil
}

// commit ends work's target transaction, open on the worker's session, in
// its turn (which turnFirst says it has waited for already). After a
// COMMIT whose answer was lost, the checkpoint rows say whether it
// happened.
func (w *worker) commit(ctx context.Context, work *stage.Work, turnFirst bool, tm *Timing) error {
	conn, err := w.session(ctx)
	if err != nil {
		return err
	}
	if w.p.cfg.PreserveOrder && !turnFirst {
		if err := w.waitTurn(ctx, work, tm); err != nil {
			w.rollback(conn)
			return err
		}
	}
	t0 := time.Now()
	if work.Txns[0].Txn.RolledBack {
		err = w.rollBackAsSource(ctx, conn, work)
	} else {
		_, err = conn.ExecContext(ctx, "COMMIT")
	}
	tm.Commit = time.Since(t0)
	if err == nil {
		return nil
	}
	if mysqlerr.Classify(err) != mysqlerr.ConnLost {
		w.rollback(conn)
		return err
	}
	// The COMMIT may or may not have happened: the checkpoint rows say.
	w.closeConn()
	if ok, cerr := w.committed(ctx, work); cerr != nil || !ok {
		return err
	}
	return nil
}

// committed asks the target whether work's GTIDs are recorded, after a
// COMMIT whose answer was lost: every 200ms while the target cannot say.
func (w *worker) committed(ctx context.Context, work *stage.Work) (bool, error) {
	gtids := work.GTIDs()
	var n int
	err := retry.Do(ctx, retry.Policy{Base: 200 * time.Millisecond}, retryable, func() (err error) {
		n, err = w.p.store.Applied(ctx, gtids)
		return err
	}, nil)
	return err == nil && n == len(gtids), err
}
