package applier

import (
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
)

// Building the SQL of a work's target transaction: its row changes, the
// source's savepoints and checks, and the bookkeeping of its GTIDs.

// build fills the worker's batch with the statements of part p of work,
// compacted if compact is set (see sqlgen.Batch.Compact: the work is one
// target transaction, so the order of its statements is invisible to
// others).
func (w *worker) build(work *stage.Work, compact bool, p part) error {
	b := &w.batch
	b.Compact = compact
	b.Reset()
	if p != afterTurn {
		b.Raw("START TRANSACTION")
	}
	for i, t := range work.Txns {
		if !p.holds(work, i) {
			continue
		}
		off, on := rowChecks(t)
		rawAll(b, off)
		stmts := t.Txn.Statements
		for j, r := range t.Txn.Rows {
			stmts = savepoints(b, stmts, j)
			if err := b.Add(t.Tables[j], r, i); err != nil {
				return &stage.ConflictError{GTID: t.GTID, Table: t.Tables[j].Name.String(), What: "cannot build SQL", Err: err}
			}
		}
		savepoints(b, stmts, len(t.Txn.Rows))
		rawAll(b, on)
	}
	if p != beforeTurn {
		bookkeeping(w.p.store, work, b.Raw)
	}
	return nil
}

// rawAll adds statements qs to b.
func rawAll(b *sqlgen.Batch, qs []string) {
	for _, q := range qs {
		b.Raw(q)
	}
}

// bookkeeping adds to a target transaction, through exec, the statements
// that record work's GTIDs as applied and forget the markers of DDL
// statements that ran before its rows (see worker.ddl).
func bookkeeping(store *checkpoint.Store, work *stage.Work, exec func(q string, args ...any)) {
	q, args := store.AppliedSQL(work.Last().GTID, work.Others())
	exec(q, args...)
	for _, t := range work.Txns {
		if t.DDL != nil && t.Txn.HasRows() {
			for _, m := range ddlMarkers(t) {
				q, args := store.ForgetSQL(m)
				exec(q, args...)
			}
		}
	}
}

// savepoints adds the savepoint statements of stmts logged before rows
// event at, and returns the statements after them.
func savepoints(b *sqlgen.Batch, stmts []binlog.Statement, at int) []binlog.Statement {
	for len(stmts) > 0 && stmts[0].At <= at {
		if stmts[0].Kind == binlog.StmtSavepoint {
			b.Raw(stmts[0].Query)
		}
		stmts = stmts[1:]
	}
	return stmts
}

// rowChecks returns the statements that turn off, around t's rows, the
// checks the source ran them without (its row events say so:
// foreign_key_checks=0, check_constraint_checks=0), as MariaDB's row
// applier does, and those that turn them on again; none when it ran all.
func rowChecks(t *stage.Txn) (off, on []string) {
	var flags uint16
	for _, r := range t.Txn.Rows {
		flags |= r.Flags
	}
	if flags&binlog.RowsFlagNoForeignKeyCheck != 0 {
		off, on = append(off, "SET foreign_key_checks = 0"), append(on, "SET foreign_key_checks = 1")
	}
	if flags&binlog.RowsFlagNoCheckConstraintCheck != 0 {
		off, on = append(off, "SET check_constraint_checks = 0"), append(on, "SET check_constraint_checks = 1")
	}
	return off, on
}
