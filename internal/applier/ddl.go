package applier

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/retry"
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
	markers := ddlMarkers(t)
	// A statement runs with the source session's settings (ddlSession),
	// which the session keeps: it is closed after the DDL, so they go
	// with it.
	set := false
	defer func() {
		if set {
			w.closeConn()
		}
	}()
	for i, st := range ddlStatements(t.DDL.Statements) {
		s, err := w.ddlStatement(ctx, conn, t, &st, markers[i])
		set = set || s
		if err != nil {
			return err
		}
	}
	w.p.refusals.reset()
	if t.Txn.HasRows() {
		return nil
	}
	// The DDL ran: record it, waiting out a target restart rather than
	// running it again.
	return w.retrying(ctx, func() error { return w.p.store.EndDDL(ctx, t.GTID, markers...) })
}

// ddlStatement runs DDL statement st of t, recorded under marker, unless
// it ran before. set says the session was given the source session's
// settings, for the caller to close.
func (w *worker) ddlStatement(ctx context.Context, conn *sql.Conn, t *stage.Txn, st *binlog.Statement, marker string) (set bool, err error) {
	if ran, err := w.ddlRan(ctx, t, marker); err != nil || ran {
		return false, err
	}
	// The bracket row only informs whoever reads paraply.ddl: a
	// statement such as CREATE USER carries a password in clear.
	if err := w.p.store.BeginDDL(ctx, marker, st.Schema, binlog.RedactSecrets(st.Text()), t.DDL.Objects); err != nil {
		if !retryable(err) {
			// Reading what the DDL changes, before it runs: a CREATE
			// DATABASE the account may not see.
			return false, ddlConflict(t, st, "cannot record the DDL's objects before it runs", err)
		}
		return false, err
	}
	if err := useSchema(ctx, conn, st.Schema); err != nil {
		return false, err
	}
	q := st.Sent()
	if r, ok := schema.ReplicaEvent(q); ok {
		q = r // as a replica keeps it: not run by the target's scheduler
	}
	if err := w.ddlSession(ctx, conn, t, st, q); err != nil {
		return true, err
	}
	if err := w.sourceGTID(ctx, conn, t); err != nil {
		return true, err
	}
	if err := w.runDDL(ctx, conn, t, st, q); err != nil {
		var ce *stage.ConflictError
		if errors.As(err, &ce) {
			if aerr := w.p.store.AbandonDDL(ctx, marker); aerr != nil {
				w.log.Warn("DDL failed; its bracket row stays", "gtid", marker, "err", aerr)
			}
		}
		return true, err
	}
	if marker != t.GTID {
		return true, w.retrying(ctx, func() error { return w.p.store.EndDDL(ctx, marker) })
	}
	return true, nil
}

// ddlRan reports whether the DDL statement of t recorded under marker
// took effect before: its marker is recorded (it ran before a crash), or
// its bracket row, left by an attempt that failed while it ran (the
// target restarted), says so. When the bracket row says it did not, t's
// DDL runs again (Rerun: its change may be there in part).
func (w *worker) ddlRan(ctx context.Context, t *stage.Txn, marker string) (bool, error) {
	if marker != t.GTID {
		n, err := w.p.store.Applied(ctx, []string{marker})
		if err != nil || n > 0 {
			return err == nil, err
		}
	}
	p, err := w.p.store.PendingFor(ctx, marker)
	if err != nil || p == nil {
		return false, err
	}
	out, err := w.p.store.ResolveDDL(ctx, p)
	if err != nil {
		return false, err
	}
	if out == checkpoint.DDLApplied {
		return true, nil
	}
	t.DDL.Rerun = true
	return false, nil
}

// useSchema makes name the session's default database. One the target
// does not know is left: the statement names its tables fully, or fails
// with a clearer error.
func useSchema(ctx context.Context, conn *sql.Conn, name string) error {
	if name == "" {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "USE "+schema.QuoteIdent(name)); err != nil && !isUnknownDatabase(err) {
		return err
	}
	return nil
}

// ddlSession gives conn the session the source ran st in (q is the query
// to run), as a replica runs it: its clock and time zone (a
// CURRENT_TIMESTAMP default fills existing rows with them),
// foreign_key_checks, character sets (a CREATE DATABASE takes
// collation_server's), sql_mode; and what a CREATE ... SELECT reads: user
// variables, CONNECTION_ID(), INSERT_ID.
func (w *worker) ddlSession(ctx context.Context, conn *sql.Conn, t *stage.Txn, st *binlog.Statement, q string) error {
	thread := schema.IndexFold(q, "connection_id") >= 0
	as := statementContext(statementSession(st, w.p.cfg.SourceSession, w.mariadb), st, thread)
	if w.mariadb {
		// A replica keeps the history of a system-versioned table
		// that the source's ALTER kept.
		as = append(as, assignment{"@@session.system_versioning_alter_history", "KEEP"})
	}
	set := setStatement(as)
	for _, v := range st.Context.UserVars {
		uq, args, err := userVarSQL(v, w.mariadb)
		if err != nil {
			return ddlConflict(t, st, "user variable @"+v.Name, err)
		}
		set += ";\n" + inline(uq, args)
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		if !retryable(err) {
			return ddlConflict(t, st, "cannot give the target session the source session's settings for DDL", err)
		}
		return err
	}
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

// retrying calls fn until it succeeds, fails for good, or ctx ends,
// pausing from 50ms doubling up to Config.MaxBackoff.
func (w *worker) retrying(ctx context.Context, fn func() error) error {
	return retry.Do(ctx, retry.Policy{Base: 50 * time.Millisecond, Cap: w.p.cfg.MaxBackoff}, retryable, fn, nil)
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
