package applier

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/stage"
)

// ddl runs a DDL transaction. It is a barrier: everything before it has
// committed and nothing after it runs until it is done. DDL commits
// implicitly on MariaDB, so it cannot share a transaction with the
// checkpoint row; checkpoint.Store brackets it instead (BeginDDL records a
// fingerprint of what it changes, EndDDL records it applied).
//
// A transaction with rows as well (CREATE TABLE ... SELECT) runs its DDL
// here, each statement recorded under a marker GTID (GTID/ddlN), and
// leaves its rows to the caller, whose target transaction records the
// GTID and forgets the markers: a crash in between runs only the rows
// again.
func (w *worker) ddl(ctx context.Context, conn *sql.Conn, work *stage.Work) error {
	t := work.Txns[0]
	// A barrier runs only once everything before it has committed, not
	// merely executed.
	if err := w.p.seq.WaitTurn(ctx, work.First()); err != nil {
		return err
	}
	stmts := ddlStatements(t.DDL.Statements)
	markers := ddlMarkers(t)
	for i, st := range stmts {
		marker := markers[i]
		if marker != t.GTID {
			if n, err := w.p.store.Applied(ctx, []string{marker}); err != nil {
				return err
			} else if n > 0 {
				continue // ran before a crash
			}
		}
		// A previous attempt may have failed while the statement ran (the
		// target restarted): its bracket row tells whether it took effect.
		if p, err := w.p.store.PendingFor(ctx, marker); err != nil {
			return err
		} else if p != nil {
			out, err := w.p.store.ResolveDDL(ctx, p)
			if err != nil {
				return err
			}
			if out == checkpoint.DDLApplied {
				continue
			}
			t.DDL.Rerun = true
		}
		// The bracket row only informs whoever reads paraply.ddl: a
		// statement such as CREATE USER carries a password in clear.
		if err := w.p.store.BeginDDL(ctx, marker, st.Schema, binlog.RedactSecrets(st.Query), t.DDL.Objects); err != nil {
			if classify(err) == fatal {
				// Reading what the DDL changes, before it runs: a CREATE
				// DATABASE the account may not see.
				return ddlConflict(t, &st, "cannot record the stage.DDL's objects before it runs", err)
			}
			return err
		}
		if st.Schema != "" {
			if _, err := conn.ExecContext(ctx, "USE "+schema.QuoteIdent(st.Schema)); err != nil {
				if !isUnknownDatabase(err) {
					return err
				}
				// The statement names its tables fully, or fails below
				// with a clearer error.
			}
		}
		q := st.Query
		if r, ok := schema.ReplicaEvent(q); ok {
			q = r // as a replica keeps it: not run by the target's scheduler
		}
		// The session the source ran it in, as a replica runs it: its
		// clock and time zone (a CURRENT_TIMESTAMP default fills existing
		// rows with them), foreign_key_checks, character sets (a CREATE
		// DATABASE takes collation_server's), sql_mode; and what a CREATE
		// ... SELECT reads: user variables, CONNECTION_ID(), INSERT_ID.
		// The session is closed after the DDL, so this goes with it.
		defer w.closeConn()
		thread := strings.Contains(strings.ToUpper(q), "CONNECTION_ID")
		as := statementContext(statementSession(&st, w.p.cfg.SourceSession, w.mariadb), &st, thread)
		if w.mariadb {
			// A replica keeps the history of a system-versioned table
			// that the source's ALTER kept.
			as = append(as, assignment{"@@session.system_versioning_alter_history", "KEEP"})
		}
		set := setStatement(as)
		for _, v := range st.Context.UserVars {
			uq, args, err := userVarSQL(v, w.mariadb)
			if err != nil {
				return ddlConflict(t, &st, "user variable @"+v.Name, err)
			}
			set += ";\n" + inline(uq, args)
		}
		if _, err := conn.ExecContext(ctx, set); err != nil {
			if classify(err) == fatal {
				return ddlConflict(t, &st, "cannot give the target session the source session's settings for stage.DDL", err)
			}
			return err
		}
		if err := w.sourceGTID(ctx, conn, t); err != nil {
			return err
		}
		if err := w.runDDL(ctx, conn, t, &st, q); err != nil {
			var ce *stage.ConflictError
			if errors.As(err, &ce) {
				if aerr := w.p.store.AbandonDDL(ctx, marker); aerr != nil {
					w.log.Warn("DDL failed; its bracket row stays", "gtid", marker, "err", aerr)
				}
			}
			return err
		}
		if marker != t.GTID {
			if err := w.retrying(ctx, func() error { return w.p.store.EndDDL(ctx, marker) }); err != nil {
				return err
			}
		}
	}
	w.p.refusals.reset()
	if t.Txn.HasRows() {
		return nil
	}
	// The DDL ran: record it, waiting out a target restart rather than
	// running it again.
	if err := w.retrying(ctx, func() error { return w.p.store.EndDDL(ctx, t.GTID, markers...) }); err != nil {
		return err
	}
	work.Committed(w.p.seq)
	return nil
}

// ddlMarkers are the GTIDs each DDL statement of t is recorded under: the
// transaction's own for a lone DDL statement, GTID/ddlN when there are
// several or rows follow.
func ddlMarkers(t *stage.Txn) []string {
	stmts := ddlStatements(t.DDL.Statements)
	out := make([]string, len(stmts))
	for i := range stmts {
		out[i] = t.GTID
		if len(stmts) > 1 || t.Txn.HasRows() {
			out[i] += "/ddl" + strconv.Itoa(i+1)
		}
	}
	return out
}

// retrying calls fn until it succeeds, fails for good, or ctx ends.
func (w *worker) retrying(ctx context.Context, fn func() error) error {
	backoff := 50 * time.Millisecond
	for {
		err := fn()
		if err == nil || !Retryable(err) {
			return err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(2*backoff, w.p.cfg.MaxBackoff)
	}
}

// redacted hides secrets an error message may quote from a statement (a
// syntax error quotes the text near it).
type redacted struct{ err error }

func (r redacted) Error() string { return binlog.RedactSecrets(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

// ddlStatements are the statements of a DDL transaction to run.
func ddlStatements(all []binlog.Statement) []binlog.Statement {
	var out []binlog.Statement
	for _, s := range all {
		if s.Kind == binlog.StmtDDL {
			out = append(out, s)
		}
	}
	return out
}

// alreadyDone reports errors that mean a re-run DDL's change is already
// there (table, database, key, column or user exists or is already gone).
func alreadyDone(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1007, 1008, 1050, 1051, 1060, 1061, 1091, 1396, 1826:
		return true
	}
	return false
}

func isUnknownDatabase(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1049
}

func abbreviate(q string) string {
	if len(q) > 200 {
		return q[:200] + "…"
	}
	return q
}
