package applier

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/schema"
)

// Statement-format transactions (binlog_format=STATEMENT, and MIXED's
// safe statements) carry statements, not rows: a replica runs each one in
// the source session's context (MariaDB's Query_log_event::do_apply_event
// and the context events before it). A work that holds one is applied
// here, in source order, event by event: rows events through SQL as
// elsewhere (uncompacted: the statements between them read the rows),
// each statement alone in its packet, sent as logged (its text is in the
// source session's character set, and a '?' in it is not a placeholder),
// after a SET that gives the session the statement's context and before
// one that gives the worker's session back its own settings. It stays one
// target transaction with the checkpoint rows, as any work.

// hasStatements reports whether work holds statement-format DML.
func (work *Work) hasStatements() bool {
	for _, t := range work.Txns {
		if t.Txn.StatementDML {
			return true
		}
	}
	return false
}

// executeStatements applies work, which holds statement-format DML, and
// leaves the target transaction open for the COMMIT.
func (w *worker) executeStatements(ctx context.Context, work *Work) (time.Duration, error) {
	conn, err := w.session(ctx)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return time.Since(t0), err
	}
	for i := range work.Txns {
		if err := w.txnStatements(ctx, conn, work, i); err != nil {
			w.rollback(conn)
			// The session's settings may be the source's. A session that
			// cannot have them back goes (the rollback may have closed it
			// already): with it, what temporary tables it held.
			if w.conn != nil {
				if _, rerr := conn.ExecContext(ctx, w.restoreSession()); rerr != nil {
					w.closeConn()
				}
			}
			return time.Since(t0), err
		}
	}
	b := &w.batch
	b.Compact = false
	b.Reset()
	bookkeeping(work, b.Raw)
	for _, t := range work.Txns {
		for _, n := range t.TempCreated {
			q, args := checkpoint.TempCreatedSQL(checkpoint.TempTable{Thread: t.Session, Schema: n.Schema, Name: n.Name, GTID: t.GTID})
			b.Raw(q, args...)
		}
		for _, n := range t.TempDropped {
			q, args := checkpoint.TempDroppedSQL(t.Session, n.Schema, n.Name)
			b.Raw(q, args...)
		}
	}
	if _, err := w.runBatchAs(ctx, conn, b, work, false); err != nil {
		w.rollback(conn)
		return time.Since(t0), err
	}
	return time.Since(t0), nil
}

// txnStatements applies the i-th transaction of work: its rows events
// and statements in the order they were logged.
func (w *worker) txnStatements(ctx context.Context, conn *sql.Conn, work *Work, i int) error {
	t := work.Txns[i]
	replay, err := w.replaysRows(ctx, conn, t)
	if err != nil {
		return err
	}
	for _, n := range t.TempCreated {
		// A first attempt rolled back keeps the temporary tables it made
		// (they are not transactional); on the source, none of the name
		// was there when the statement made it.
		if _, err := conn.ExecContext(ctx, "DROP TEMPORARY TABLE IF EXISTS "+n.String()); err != nil {
			return err
		}
	}
	next := 0
	rows := func(upTo int) error {
		if upTo <= next {
			return nil
		}
		if replay {
			from := next
			next = upTo
			return w.replayRows(ctx, conn, work, i, from, upTo)
		}
		b := &w.batch
		b.Compact = false
		b.Reset()
		fkOff := fkChecksOff(t)
		if fkOff {
			b.Raw("SET foreign_key_checks = 0")
		}
		for j := next; j < upTo; j++ {
			if err := b.Add(t.Tables[j], t.Txn.Rows[j], i); err != nil {
				return &ConflictError{GTID: t.GTID, Table: t.Tables[j].Name.String(), What: "cannot build SQL", Err: err}
			}
		}
		if fkOff {
			b.Raw("SET foreign_key_checks = 1")
		}
		next = upTo
		mismatch, err := w.runBatchAs(ctx, conn, b, work, false)
		if err != nil {
			if classify(err) != fatal {
				return err
			}
			return &ConflictError{GTID: t.GTID, What: describe(err), Err: err}
		}
		return mismatch
	}
	for k := range t.Txn.Statements {
		st := &t.Txn.Statements[k]
		if err := rows(st.At); err != nil {
			return err
		}
		switch st.Kind {
		case binlog.StmtSavepoint:
			if _, err := conn.ExecContext(ctx, st.Query); err != nil {
				return err
			}
		case binlog.StmtDML:
			if err := w.runStatement(ctx, conn, t, st); err != nil {
				return err
			}
		}
	}
	return rows(len(t.Txn.Rows))
}

// runStatement runs statement st of t as a replica runs it: in its
// database, with its session's context, expecting the error it met on the
// source (if any), then gives the session back its own settings.
func (w *worker) runStatement(ctx context.Context, conn *sql.Conn, t *Txn, st *binlog.Statement) error {
	fail := func(what string, err error) error {
		if classify(err) != fatal {
			return err
		}
		return &ConflictError{GTID: t.GTID, What: what + ": " + abbreviate(binlog.RedactSecrets(st.Query)), Err: redacted{err}}
	}
	if st.Schema != "" {
		if _, err := conn.ExecContext(ctx, "USE "+schema.QuoteIdent(st.Schema)); err != nil {
			return fail("the statement's database is missing on the target", err)
		}
	}
	set, args := statementSession(st, w.p.cfg.SourceSession, w.mariadb)
	set, args = statementContext(set, args, st)
	if _, err := conn.ExecContext(ctx, set, args...); err != nil {
		return fail("cannot give the target session the source session's settings for the statement", err)
	}
	for _, v := range st.Context.UserVars {
		q, args, err := userVarSQL(v, w.mariadb)
		if err != nil {
			return &ConflictError{GTID: t.GTID, What: "user variable @" + v.Name, Err: err}
		}
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return fail("cannot set the user variable @"+v.Name+" of the statement", err)
		}
	}
	err := w.execStatement(ctx, conn, st)
	switch {
	case st.ErrorCode != 0 && equalReplErrors(st.ErrorCode, errorNumber(err)):
		err = nil // it failed part way on the source too, and did as much
	case errorNumber(err) == erBadTable && st.ErrorCode == 0 && schema.TemporaryTables(st.Schema, st.Query).Temporary:
		// A temporary table this session never had (lost at a restart,
		// or the source connection's end dropping what it may hold): a
		// replica steps over it too.
		err = nil
	case st.ErrorCode != 0 && classify(err) == fatal:
		return &ConflictError{GTID: t.GTID, What: fmt.Sprintf("the statement met error %d on the source and %s on the target: %s",
			st.ErrorCode, describeError(errorNumber(err)), abbreviate(binlog.RedactSecrets(st.Query))), Err: redactedOrNil(err)}
	case err != nil:
		return fail("statement failed on the target", err)
	}
	if _, err := conn.ExecContext(ctx, w.restoreSession()); err != nil {
		return err
	}
	return nil
}

// execStatement sends st's text as logged, alone (no placeholders), or,
// for a LOAD DATA, with its file from the binlog.
func (w *worker) execStatement(ctx context.Context, conn *sql.Conn, st *binlog.Statement) error {
	if st.Load == nil {
		_, err := conn.ExecContext(ctx, st.Query)
		return err
	}
	name := fmt.Sprintf("paraply-load-%d", loadSeq.Add(1))
	data := st.Load.File
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(data) })
	defer mysql.DeregisterReaderHandler(name)
	_, err := conn.ExecContext(ctx, loadQuery(st, "Reader::"+name))
	return err
}

// loadSeq numbers the LOAD DATA files handed to the driver.
var loadSeq atomic.Uint64

// loadQuery is a LOAD DATA's text with the file clause the server put in
// its place (MariaDB's Execute_load_query_log_event::do_apply_event)
// replaced by one that reads file from the client (LOCAL: paraply sends
// the binlog's copy), with the statement's duplicate handling.
func loadQuery(st *binlog.Statement, file string) string {
	ld := st.Load
	var b strings.Builder
	b.WriteString(st.Query[:ld.FnStart])
	b.WriteString(" LOCAL INFILE '")
	b.WriteString(strings.ReplaceAll(file, "'", "''"))
	b.WriteString("'")
	switch ld.Dup {
	case binlog.LoadDupIgnore:
		b.WriteString(" IGNORE")
	case binlog.LoadDupReplace:
		b.WriteString(" REPLACE")
	}
	b.WriteString(" INTO ")
	b.WriteString(st.Query[ld.FnEnd:])
	return b.String()
}

// statementContext adds to a SET statement (set, args) the context events
// of st: INSERT_ID, LAST_INSERT_ID, the RAND seeds, and the source
// session's connection id, which CONNECTION_ID() returns.
func statementContext(set string, args []any, st *binlog.Statement) (string, []any) {
	c := &st.Context
	if c.HasInsertID {
		set += ", @@session.insert_id = ?"
		args = append(args, c.InsertID)
	}
	if c.HasLastInsertID {
		set += ", @@session.last_insert_id = ?"
		args = append(args, c.LastInsertID)
	}
	if c.HasRand {
		set += ", @@session.rand_seed1 = ?, @@session.rand_seed2 = ?"
		args = append(args, c.RandSeed1, c.RandSeed2)
	}
	if st.ThreadID != 0 {
		set += ", @@session.pseudo_thread_id = ?"
		args = append(args, st.ThreadID)
	}
	return set, args
}

// restoreSession gives a worker's session back the settings
// ConfigureSession and the driver gave it, after a statement ran with the
// source session's (see statementSession).
func (w *worker) restoreSession() string {
	return "SET NAMES " + w.names + ", @@session.timestamp = DEFAULT, @@session.time_zone = '" + sessionTimeZone + "', " +
		"@@session.sql_mode = '" + sessionSQLMode + "', @@session.lc_time_names = DEFAULT, " +
		"@@session.auto_increment_increment = DEFAULT, @@session.auto_increment_offset = DEFAULT, " +
		"@@session.foreign_key_checks = 1, @@session.unique_checks = 1, @@session.sql_auto_is_null = DEFAULT, " +
		"@@session.insert_id = 0, @@session.collation_server = DEFAULT"
}

// threadError is the error of a transaction whose source connection's
// target session cannot be had.
func (w *worker) threadError(t *Txn, err error) error {
	if errors.Is(err, ErrTempTablesLost) {
		return &ConflictError{GTID: t.GTID, What: fmt.Sprintf("a statement of source connection %d, whose temporary tables were lost with the target session that held them (the target restarted or the connection broke): "+
			"it cannot be applied as on the source. Apply it and what follows of that connection by hand and record them with paraply skip", t.Session), Err: err}
	}
	return err
}

// replaysRows says whether t's rows events go through the target's own
// row applier (BINLOG statements) rather than SQL: with --apply binlog,
// and with --apply auto when a table of them is one SQL cannot apply
// exactly (triggers on the target, system versioning, a sequence). With
// --apply sql such a table is refused by name.
func (w *worker) replaysRows(ctx context.Context, conn *sql.Conn, t *Txn) (bool, error) {
	if len(t.Txn.Rows) == 0 {
		return false, nil
	}
	switch w.p.cfg.Path {
	case BinlogPath:
		return true, nil
	case SQLPath:
		return false, w.refuseInexact(ctx, conn, &Work{Txns: []*Txn{t}})
	}
	for _, tb := range t.Tables {
		if tb == nil {
			return true, nil
		}
		why, err := w.p.refusals.check(ctx, conn, tb.Name)
		if err != nil || why != "" {
			return true, err
		}
	}
	return false, nil
}

// replayRows applies rows events from..to of the i-th transaction of
// work through the target's row applier: those events, with the table
// maps before them, in BINLOG statements (the statements between them run
// as SQL, see txnStatements).
func (w *worker) replayRows(ctx context.Context, conn *sql.Conn, work *Work, i, from, to int) error {
	t := work.Txns[i]
	sub := &binlog.RawTxn{Format: t.Raw.Format}
	n := 0 // rows events seen
	for _, ev := range t.Raw.Events {
		switch typ := ev.Type(); {
		case binlog.IsRowsEvent(typ):
			if n >= from && n < to {
				sub.Events = append(sub.Events, ev)
			}
			n++
		case typ == replication.TABLE_MAP_EVENT:
			if n >= from && n < to {
				sub.Events = append(sub.Events, ev)
			}
		}
	}
	b := w.replayBuilder()
	if t.Raw.Format != w.format {
		b.Format(t.Raw.Format)
	}
	if err := b.Txn(i, sub); err != nil {
		return &ConflictError{GTID: t.GTID, What: "cannot replay its row events", Err: err}
	}
	for _, p := range b.Packets() {
		if n := worstSize(p.SQL, p.Args); w.maxPacket > 0 && n > w.maxPacket-1024 {
			return &ConflictError{GTID: t.GTID, What: describe(errPacketTooLarge), Err: fmt.Errorf("%w: %d bytes, max_allowed_packet %d", errPacketTooLarge, n, w.maxPacket)}
		}
		if _, err := execMulti(ctx, conn, p.SQL, p.Args); err != nil {
			if classify(err) != fatal {
				return err
			}
			return w.replayConflict(ctx, work, p, err)
		}
	}
	w.format = t.Raw.Format
	return nil
}
