package applier

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/stage"
)

// runDDL runs q, the DDL statement st of t, on conn as MariaDB's replica
// runs a query event (Query_log_event::do_apply_event, with its default
// slave_ddl_exec_mode=IDEMPOTENT):
//
//   - A statement the source logged with an error (it failed part way: a
//     DROP of several tables, one of them unknown, drops the others) must
//     meet the same error here, and then it did what it did on the source;
//     an error the source did not meet, or none where it met one, stops
//     replication with both.
//   - A DDL that finds what it makes already there or what it drops
//     already gone does not stop replication: CREATE DATABASE and DROP
//     DATABASE as with IF [NOT] EXISTS, DROP TABLE as with IF EXISTS
//     (MariaDB drops the tables that exist and names the others), and
//     CREATE TABLE replaces a table that exists (CREATE OR REPLACE).
//   - A statement run again after a crash that left its outcome unknown
//     (t.DDL.Rerun) may find its change made.
func (w *worker) runDDL(ctx context.Context, conn *sql.Conn, t *stage.Txn, st *binlog.Statement, q string) error {
	_, err := conn.ExecContext(ctx, q)
	if err != nil && st.ErrorCode == 0 && idempotentDDLError(q, err) == createExists {
		if r, ok := orReplace(q); ok {
			_, err = conn.ExecContext(ctx, r)
		}
	}
	switch {
	case st.ErrorCode != 0:
		got := mysqlerr.Number(err)
		if equalReplErrors(st.ErrorCode, got) {
			return nil
		}
		if err != nil && retryable(err) {
			return err
		}
		what := fmt.Sprintf("the DDL met error %d on the source and %s on the target: %s", st.ErrorCode, describeError(got), abbreviate(binlog.RedactSecrets(st.Text())))
		return &stage.ConflictError{GTID: t.GTID, What: what, Err: redactedOrNil(err)}
	case err == nil:
		return w.roleAdmin(ctx, conn, t, st, q)
	case idempotentDDLError(q, err) == goneOrThere:
		w.log.Info("DDL: what it makes is there, or what it drops is gone, as a replica allows", "gtid", t.GTID, "err", redacted{err})
		return nil
	case t.DDL.Rerun && alreadyDone(err):
		return nil
	case !retryable(err):
		return ddlConflict(t, st, "DDL failed on the target", err)
	}
	return err
}

// ddlConflict is the error that stops replication at DDL statement st of
// t: what happened, the statement, and, for a missing privilege, which
// one and the GRANT that gives it.
func ddlConflict(t *stage.Txn, st *binlog.Statement, what string, err error) *stage.ConflictError {
	what += ": " + abbreviate(binlog.RedactSecrets(st.Text()))
	if hint := privilegeHint(err); hint != "" {
		what += ": " + hint
	}
	return &stage.ConflictError{GTID: t.GTID, What: what, Err: redacted{err}}
}

// idempotence is how a replica in slave_ddl_exec_mode=IDEMPOTENT treats a
// DDL's error.
type idempotence uint8

const (
	notIdempotent idempotence = iota
	// goneOrThere: the error only says that what the statement drops is
	// gone or what it makes is there, and the statement did the rest.
	goneOrThere
	// createExists: a CREATE TABLE found its table; a replica replaces it.
	createExists
)

// idempotentDDLError tells whether err, from DDL statement q, is one a
// replica in IDEMPOTENT mode does not stop for.
func idempotentDDLError(q string, err error) idempotence {
	verb, object := binlog.DDLVerb(q)
	switch n := mysqlerr.Number(err); {
	case n == erDBCreateExists && verb == "CREATE" && object == "DATABASE",
		n == erDBDropExists && verb == "DROP" && object == "DATABASE",
		n == erBadTable && verb == "DROP" && object == "TABLE",
		n == erUnknownSequences && verb == "DROP" && object == "SEQUENCE",
		n == erTriggerDoesNotExist && verb == "DROP" && object == "TRIGGER":
		return goneOrThere
	case n == erTableExists && verb == "CREATE" && object == "TABLE":
		return createExists
	}
	return notIdempotent
}

// orReplace returns CREATE TABLE statement q as CREATE OR REPLACE TABLE,
// or false if it is not a plain CREATE [TEMPORARY] TABLE (IF NOT EXISTS
// never fails for an existing table).
func orReplace(q string) (string, bool) {
	body := binlog.StatementBody(q)
	at := len(q) - len(body)
	if !strings.EqualFold(body[:min(len(body), 6)], "CREATE") {
		return "", false
	}
	return q[:at+6] + " OR REPLACE" + q[at+6:], true
}

// equalReplErrors reports whether a target's error number got is the error
// expected (MariaDB's test_if_equal_repl_errors): the same, or one of the
// duplicate-key errors for another, or "is a view" for an unknown table.
func equalReplErrors(expected uint16, got int) bool {
	if int(expected) == got {
		return true
	}
	dup := func(n int) bool {
		return n == erDupEntry || n == erDupEntryWithKeyName || n == erDupKey || n == erAutoincReadFailed
	}
	switch {
	case dup(int(expected)):
		return dup(got)
	case expected == erBadTable:
		return got == erWrongObject
	}
	return false
}

func describeError(n int) string {
	if n == 0 {
		return "no error"
	}
	return fmt.Sprintf("error %d", n)
}

func redactedOrNil(err error) error {
	if err == nil {
		return nil
	}
	return redacted{err}
}
