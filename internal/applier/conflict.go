package applier

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// Naming a conflict: the statement whose affected rows differ from the
// binlog's, or, when a packet of statements failed as a whole, the
// transaction, table and row that fail alone.

// check compares the affected rows of each statement of b, built from
// work, with what the binlog says it touched.
func check(b *sqlgen.Batch, work *stage.Work, affected []int64) error {
	exp := b.Expects()
	if len(affected) != len(exp) {
		return fmt.Errorf("target answered %d results for %d statements", len(affected), len(exp))
	}
	for i, e := range exp {
		if e.Rows >= 0 && affected[i] != e.Rows {
			return rowCountConflict(work, e, affected[i])
		}
	}
	return nil
}

// rowCountConflict is the conflict of a statement, built from work, that
// affected rows on the target where the binlog says e.Rows.
func rowCountConflict(work *stage.Work, e sqlgen.Expect, affected int64) *stage.ConflictError {
	t := work.Txns[e.Txn]
	what := fmt.Sprintf("%s matched %d rows on the target, the source changed %d", strings.ToUpper(e.Op.String()), affected, e.Rows)
	if affected == 0 {
		what = fmt.Sprintf("row to %s not found on the target", e.Op)
	}
	return &stage.ConflictError{GTID: t.GTID, Table: e.Table.String(), Key: e.Key, What: what}
}

// pinpoint finds the transaction and table behind batchErr, a fatal
// error of work's statements run as one packet, which does not say which
// statement failed. It runs work's row events again one by one, in a
// target transaction that it rolls back, and returns a ConflictError for
// the first that fails. If none fails (the target changed meanwhile), the
// error names the work's transactions.
func (w *worker) pinpoint(ctx context.Context, conn *sql.Conn, work *stage.Work, batchErr error) error {
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return err
	}
	defer w.rollback(conn)
	var b sqlgen.Batch
	for i, t := range work.Txns {
		off, on := rowChecks(t)
		for j, r := range t.Txn.Rows {
			b.Reset()
			rawAll(&b, off)
			table := t.Tables[j].Name.String()
			if err := b.Add(t.Tables[j], r, i); err != nil {
				return &stage.ConflictError{GTID: t.GTID, Table: table, What: "cannot build SQL", Err: err}
			}
			rawAll(&b, on)
			mismatch, err := w.runBatch(ctx, conn, &b, work)
			if err != nil {
				if retryable(err) {
					return err
				}
				return &stage.ConflictError{GTID: t.GTID, Table: table, What: describe(err), Err: err}
			}
			if mismatch != nil {
				return mismatch
			}
		}
	}
	w.log.Warn("the work failed as a whole but its row events apply one by one", "gtid", work.Txns[0].GTID, "err", batchErr)
	return w.conflict(work, batchErr)
}

// conflict turns a fatal error of work's statements into a ConflictError
// naming its transaction, or the range of its transactions.
func (w *worker) conflict(work *stage.Work, err error) error {
	t := work.Txns[0]
	if len(work.Txns) > 1 {
		return &stage.ConflictError{GTID: t.GTID + " .. " + work.Txns[len(work.Txns)-1].GTID, What: describe(err), Err: err}
	}
	return &stage.ConflictError{GTID: t.GTID, What: describe(err), Err: err}
}
