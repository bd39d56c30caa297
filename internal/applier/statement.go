package applier

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/mysqlerr"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
	"github.com/paraply/paraply/internal/stmtmerge"
)

// Statement-format transactions (binlog_format=STATEMENT, and MIXED's
// safe statements) carry statements, not rows: a replica runs each one in
// the source session's context (MariaDB's Query_log_event::do_apply_event
// and the context events before it). A work that holds one is applied
// here, in source order, in one target transaction with the checkpoint
// rows, as any work.
//
// Consecutive statements, across the work's transactions, go in one
// packet of statements (a round trip per statement made paraply slower
// than a native replica). The target's cost of a statement is what bounds
// a statement-format stream, so a packet carries little besides the
// statements (docs/benchmark.md, "A MIXED source"):
//   - the source session's settings (time zone, charsets, sql_mode, flags,
//     auto-increment; statementSession) go as a SET of those that differ
//     from what the work's earlier statements set, which for one stream
//     is almost always none after the first;
//   - what may change with every statement: its clock and its connection
//     id go in a SET inside the compound statement when they differ from
//     the statement's before, which in one source transaction they rarely
//     do (onSession); a forced insert_id rides on the statement itself,
//     as SET STATEMENT insert_id=... FOR <statement>, which the server
//     applies for that statement alone (statementPrefix);
//   - USE when the database changes, and the user variables a statement
//     reads;
//   - the statement as logged: its bytes are in the source session's
//     character set, and a '?' in it is no placeholder, so the packet
//     carries no placeholders at all; every value paraply adds is a
//     literal (hex for strings: the statement's own sql_mode may have
//     changed how quotes read);
//   - or, for consecutive statements that each write one row by its key
//     with the same session (stage.Txn.Merges), the statements stmtmerge
//     makes of them: one UPDATE, DELETE or INSERT per table and shape,
//     which cost the target less than half of what the statements one by
//     one did. A packet that fails is applied again one statement at a
//     time, unmerged, as any.
//
// A packet stops at its first failing statement, and the server does not
// say which that was. The work is then rolled back and applied again one
// statement per round trip, which names it (a retryable error is retried
// as any). A statement logged with an error goes alone, so that the error
// it stops on is the one to compare; so does every statement of a work
// that changes non-transactional tables, whose changes a rollback would
// not undo. Rows events between statements go as SQL (or BINLOG
// statements where SQL is not exact) once the worker's own session
// settings are back; so does the checkpoint row at the end (restoreSession
// comes first). A LOAD DATA goes alone, with its file.

// stmtPacket collects consecutive statements for one round trip.
type stmtPacket struct {
	text  strings.Builder
	stmts []stmtRef // in packet order
	// set and db are the session variables and the database the work's
	// statements have set so far, on the session (a statement sets only
	// those its own context changes: consecutive statements share most of
	// theirs). Both are forgotten once the worker's settings are back.
	set map[string]string
	db  string
	// single sends every statement in a packet of its own.
	single bool
	// compound puts consecutive statements in one compound statement
	// (BEGIN NOT ATOMIC ... END), which the target answers once; open
	// says one is open in text.
	compound, open bool
	// last is the session of the statement added last, its clock left
	// out, when the session has all its settings (hasLast): a statement
	// of the same session needs no SET (addStatement).
	last    binlog.QuerySession
	hasLast bool
	// txn is the transaction of the work whose statements are being
	// added: a packet of its setup alone (USE, SET, DROP TEMPORARY TABLE)
	// that fails is named by it.
	txn int
	// merger holds the statements added last that may merge
	// (stage.Txn.Merges), mergeBytes their length: they go into text,
	// merged, before anything else does (settle).
	merger     stmtmerge.Merger
	mergeBytes int
}

// reset empties p's text, keeping what it set on the session (and what
// merger holds, which flushStatements settles before).
func (p *stmtPacket) reset() {
	p.text.Reset()
	p.stmts = p.stmts[:0]
	p.open = false
}

// outside adds q, ended, outside any compound statement: what changes how
// the statements after it are read (the database, the session's
// settings) must run before a compound statement is parsed.
func (p *stmtPacket) outside(q string) {
	p.settle()
	if p.open {
		p.text.WriteString("END;\n")
		p.open = false
	}
	p.text.WriteString(q)
}

// inside adds q, ended, to the compound statement open, opening one if
// p makes them.
func (p *stmtPacket) inside(q string) {
	p.settle()
	p.insideNow(q)
}

// insideNow is inside without settling the statements merger holds.
func (p *stmtPacket) insideNow(q string) {
	if p.compound && !p.open {
		p.text.WriteString("BEGIN NOT ATOMIC\n")
		p.open = true
	}
	p.text.WriteString(q)
}

// settle writes the statements merger holds into text, merged: they ran
// with the session as it is, so they go before whatever changes it.
func (p *stmtPacket) settle() {
	for _, q := range p.merger.Flush() {
		p.insideNow(q + "\n;")
	}
	p.mergeBytes = 0
}

// String is p's text, any compound statement closed.
func (p *stmtPacket) String() string {
	if p.open {
		return p.text.String() + "END"
	}
	return p.text.String()
}

// stmtRef is a statement in a packet: the transaction of the work it is
// in, and the statement.
type stmtRef struct {
	txn int
	st  *binlog.Statement
}

// errStatementsFailed is a packet of statements that stopped at one of
// them, which the server does not name: the work is applied again one
// statement at a time (see executeStatements).
var errStatementsFailed = errors.New("a packet of statements failed")

// executeStatements applies work, which holds statement-format DML, and
// leaves the target transaction open for the COMMIT. Work with AfterTurn
// that is not yet at its turn runs in two parts, as SQL does (see
// execute): the transactions that wait for no earlier work at once, the
// others once every transaction before the work has committed (the wait
// is added to tm.Turn).
func (w *worker) executeStatements(ctx context.Context, work *stage.Work, turnFirst bool, tm *Timing) (time.Duration, error) {
	// Changes of non-transactional tables stay on the target when their
	// statement is rolled back: such work goes statement by statement.
	single := work.Txns[0].WaitsFirst()
	d, err := w.statementsOnce(ctx, work, turnFirst, single, tm)
	if errors.Is(err, errStatementsFailed) {
		w.log.Info("a packet of statements failed; applying the work again one statement at a time to name it", "gtid", work.Txns[0].GTID, "err", err)
		var d2 time.Duration
		// In two parts again if the first was: the wait for the turn
		// returns at once if it came already.
		d2, err = w.statementsOnce(ctx, work, turnFirst, true, tm)
		d += d2
	}
	return d, err
}

// statementsOnce is one attempt of executeStatements, with every
// statement alone (single) or in packets.
func (w *worker) statementsOnce(ctx context.Context, work *stage.Work, turnFirst, single bool, tm *Timing) (time.Duration, error) {
	conn, err := w.session(ctx)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return time.Since(t0), err
	}
	p := stmtPacket{single: single, compound: !single && w.compound}
	twoParts := work.AfterTurn != nil && !turnFirst && w.p.cfg.PreserveOrder
	atTurn := turnFirst
	for _, part := range []part{beforeTurn, afterTurn} {
		if !twoParts && part == afterTurn {
			break
		}
		for i := range work.Txns {
			if twoParts && !part.holds(work, i) {
				continue
			}
			if err := w.txnStatements(ctx, conn, work, i, &p); err != nil {
				return time.Since(t0), w.abandonStatements(ctx, conn, work, err, atTurn)
			}
		}
		if err := w.flushStatements(ctx, conn, work, &p); err != nil {
			return time.Since(t0), w.abandonStatements(ctx, conn, work, err, atTurn)
		}
		if twoParts && part == beforeTurn {
			t1 := time.Now()
			if err := w.waitTurn(ctx, work, tm); err != nil {
				return time.Since(t0), w.abandonStatements(ctx, conn, work, err, atTurn)
			}
			atTurn = true
			t0 = t0.Add(time.Since(t1)) // the wait is Turn, not Exec
		}
	}
	b := &w.batch
	b.Compact = false
	b.Reset()
	if len(p.set) > 0 {
		b.Raw(w.restoreSession())
	}
	bookkeeping(w.p.store, work, b.Raw)
	for _, t := range work.Txns {
		for _, n := range t.TempCreated {
			q, args := w.p.store.TempCreatedSQL(checkpoint.TempTable{Thread: t.Session, Schema: n.Schema, Name: n.Name, GTID: t.GTID})
			b.Raw(q, args...)
		}
		for _, n := range t.TempDropped {
			q, args := w.p.store.TempDroppedSQL(t.Session, n.Schema, n.Name)
			b.Raw(q, args...)
		}
	}
	if _, err := w.runBatchAs(ctx, conn, b, work, false); err != nil {
		w.rollback(conn)
		return time.Since(t0), err
	}
	return time.Since(t0), nil
}

// abandonStatements rolls back the work's target transaction after err
// and returns the error to go on with: err, or, as for SQL (abandon), a
// transient error to retry, or errNotHead for a work that failed before
// its turn (what failed may be an earlier transaction's doing). The
// session's settings may be the source's: a session that cannot have them
// back goes (the rollback may have closed it already), and with it what
// temporary tables it held.
func (w *worker) abandonStatements(ctx context.Context, conn *sql.Conn, work *stage.Work, err error, atTurn bool) error {
	again := w.abandon(conn, work, err, atTurn)
	if w.conn != nil {
		if _, rerr := conn.ExecContext(ctx, w.restoreSession()); rerr != nil {
			w.closeConn()
		}
	}
	if again != nil {
		return again
	}
	return err
}

// txnStatements adds the i-th transaction of work to p, and runs what
// cannot wait in it (rows events, a LOAD DATA, a statement logged with an
// error), in the order they were logged.
func (w *worker) txnStatements(ctx context.Context, conn *sql.Conn, work *stage.Work, i int, p *stmtPacket) error {
	t := work.Txns[i]
	p.txn = i
	replay, err := w.replaysRows(ctx, conn, t)
	if err != nil {
		return err
	}
	for _, n := range t.TempCreated {
		// A first attempt rolled back keeps the temporary tables it made
		// (they are not transactional); on the source, none of the name
		// was there when the statement made it. The name is UTF-8 (see
		// binlog.Statement.Text), which an earlier statement's client
		// character set would misread.
		if _, set := p.set["@@session.character_set_client"]; set && strings.ContainsFunc(n.Schema+n.Name, func(r rune) bool { return r >= utf8.RuneSelf }) {
			p.outside("SET NAMES " + w.names + ";\n")
			delete(p.set, "@@session.character_set_client")
			delete(p.set, "@@session.collation_connection")
			p.hasLast = false
		}
		p.outside("DROP TEMPORARY TABLE IF EXISTS " + n.String() + "\n;")
	}
	next := 0
	rows := func(upTo int) error {
		if upTo <= next {
			return nil
		}
		if err := w.flushStatements(ctx, conn, work, p); err != nil {
			return err
		}
		if err := w.ownSettings(ctx, conn, p); err != nil {
			return err
		}
		if replay {
			from := next
			next = upTo
			return w.replayRows(ctx, conn, work, i, from, upTo)
		}
		b := &w.batch
		b.Compact = false
		b.Reset()
		off, on := rowChecks(t)
		rawAll(b, off)
		for j := next; j < upTo; j++ {
			if err := b.Add(t.Tables[j], t.Txn.Rows[j], i); err != nil {
				return &stage.ConflictError{GTID: t.GTID, Table: t.Tables[j].Name.String(), What: "cannot build SQL", Err: err}
			}
		}
		rawAll(b, on)
		next = upTo
		mismatch, err := w.runBatchAs(ctx, conn, b, work, false)
		if err != nil {
			if retryable(err) {
				return err
			}
			return &stage.ConflictError{GTID: t.GTID, What: describe(err), Err: err}
		}
		return mismatch
	}
	for k := range t.Txn.Statements {
		st := &t.Txn.Statements[k]
		if err := rows(st.At); err != nil {
			return err
		}
		switch {
		case st.Kind == binlog.StmtSavepoint:
			p.outside(st.Query + "\n;")
		case st.Kind != binlog.StmtDML:
		case st.Load != nil:
			if err := w.flushStatements(ctx, conn, work, p); err != nil {
				return err
			}
			if err := w.loadData(ctx, conn, t, st); err != nil {
				return err
			}
			clear(p.set) // loadData gave the session its own settings back
			p.hasLast = false
		default:
			if err := w.statement(ctx, conn, work, p, i, k); err != nil {
				return err
			}
		}
	}
	return rows(len(t.Txn.Rows))
}

// statement adds the k-th statement st of the i-th transaction of work
// to p, and sends the packet when st must end it: alone, logged with an
// error, or the packet full.
func (w *worker) statement(ctx context.Context, conn *sql.Conn, work *stage.Work, p *stmtPacket, i, k int) error {
	st := &work.Txns[i].Txn.Statements[k]
	alone := p.single || st.ErrorCode != 0
	if alone {
		if err := w.flushStatements(ctx, conn, work, p); err != nil {
			return err
		}
		// Alone, as the server ran it on the source: not in a compound
		// statement.
		defer func(compound bool) { p.compound = compound }(p.compound)
		p.compound = false
	}
	var m *stage.Merge
	if !alone && !w.logsStatements {
		m = mergeOf(work.Txns[i], k)
	}
	if err := w.addStatement(p, i, st, !work.Txns[i].ConnectionIDUnread || w.logsStatements, m); err != nil {
		return &stage.ConflictError{GTID: work.Txns[i].GTID, What: "cannot give the statement its session's context: " + abbreviate(binlog.RedactSecrets(st.Text())), Err: err}
	}
	if alone || p.text.Len()+p.mergeBytes > w.statementPacketBytes() {
		return w.flushStatements(ctx, conn, work, p)
	}
	return nil
}

// mergeOf is the entry of t's k-th statement in t.Merges (in statement
// order), nil if it has none.
func mergeOf(t *stage.Txn, k int) *stage.Merge {
	j, ok := slices.BinarySearchFunc(t.Merges, k, func(m stage.Merge, k int) int { return m.Index - k })
	if !ok {
		return nil
	}
	return &t.Merges[j]
}

// ownSettings gives the session the worker's own settings back if the
// work's statements changed them (see restoreSession).
func (w *worker) ownSettings(ctx context.Context, conn *sql.Conn, p *stmtPacket) error {
	if len(p.set) == 0 {
		return nil
	}
	if _, err := conn.ExecContext(ctx, w.restoreSession()); err != nil {
		return err
	}
	clear(p.set)
	p.hasLast = false
	return nil
}

// statementPacketBytes bounds the text of a packet of statements: a
// statement alone may be larger (it goes alone, as the server took it).
func (w *worker) statementPacketBytes() int {
	if w.maxPacket > 0 {
		return min(sqlgen.DefaultMaxPacket, w.maxPacket/2)
	}
	return sqlgen.DefaultMaxPacket
}

// addStatement adds statement st of the i-th transaction to p: its
// database, the session settings its context changes, its user variables,
// then its text, with its clock and connection id (onSession) and a
// forced insert_id (statementPrefix). Without thread, the connection id
// is left as the session has it (stage.Txn.ConnectionIDUnread). A
// statement with m that needs no prefix goes to the packet's merger.
func (w *worker) addStatement(p *stmtPacket, i int, st *binlog.Statement, thread bool, m *stage.Merge) error {
	if st.Schema != "" && st.Schema != p.db {
		p.outside("USE " + schema.QuoteIdent(st.Schema) + ";\n")
		p.db = st.Schema
		delete(p.set, "@@session.collation_database") // USE set the database's own
		p.hasLast = false
	}
	if p.set == nil {
		p.set = map[string]string{}
	}
	prefixed := prefixable(st.Query)
	c := &st.Context
	same := st.Session
	same.Microseconds = 0 // the clock's: onSession sets it
	if !prefixed || !p.hasLast || same != p.last || c.HasLastInsertID || c.HasRand {
		// The settings the session lacks: none for a statement of the
		// session of the one before, the common case, which skips
		// working them out.
		var changed []assignment
		for _, a := range statementContext(statementSession(st, w.p.cfg.SourceSession, w.mariadb), st, true) {
			if prefixed && perStatement[a.name] != "" {
				continue
			}
			if v, ok := p.set[a.name]; !ok || v != a.value {
				changed = append(changed, a)
				p.set[a.name] = a.value
			}
		}
		if len(changed) > 0 {
			p.outside(setStatement(changed) + ";\n")
		}
		p.last, p.hasLast = same, prefixed
	}
	for _, v := range c.UserVars {
		q, args, err := userVarSQL(v, w.mariadb)
		if err != nil {
			return fmt.Errorf("user variable @%s: %w", v.Name, err)
		}
		p.inside(inline(q, args) + ";\n")
	}
	// A newline ends a comment the statement may end with.
	if prefixed {
		set, prefix := onSession(ownAssignments(st, thread), p.set)
		if len(set) > 0 {
			p.inside(setStatement(set) + ";\n")
		}
		pre := statementPrefix(prefix, p.set["@@session.insert_id"])
		if m != nil && pre == "" && !p.single {
			q := st.Sent()
			p.merger.Add(m.Form, q, m.Table)
			p.mergeBytes += len(q)
		} else {
			p.inside(pre + st.Sent() + "\n;")
		}
	} else {
		p.outside(st.Sent() + "\n;")
	}
	p.stmts = append(p.stmts, stmtRef{txn: i, st: st})
	return nil
}

// ownAssignments are the session variables of perStatement that st's
// context sets, as statementSession and statementContext give them; the
// connection id only with thread.
func ownAssignments(st *binlog.Statement, thread bool) []assignment {
	as := make([]assignment, 0, 3)
	if st.When != 0 {
		as = append(as, assignment{"@@session.timestamp", literal(statementTime(st))})
	}
	as = append(as, assignment{"@@session.insert_id", literal(st.Context.InsertID)})
	if st.ThreadID != 0 && thread {
		as = append(as, assignment{"@@session.pseudo_thread_id", literal(st.ThreadID)})
	}
	return as
}

// onSession splits own, the variables of perStatement that a statement's
// context sets, into those to SET on the session before it, which
// records them in set, and those to set for the statement alone
// (statementPrefix). The clock and the connection id go on the session
// when they differ from what set says it holds: consecutive statements
// mostly share them (one source transaction, one second), and SET
// STATEMENT ... FOR on every statement cost the target 10-13% of its CPU on
// a write_only stream, where a SET that changes them now and then costs
// little (docs/benchmark.md, "A MIXED source"). A forced insert_id stays
// in front of its statement: on the session, a later statement that
// inserts would take it.
func onSession(own []assignment, set map[string]string) (changed, prefix []assignment) {
	for _, a := range own {
		switch {
		case a.name == "@@session.insert_id":
			prefix = append(prefix, a)
		case set[a.name] != a.value:
			changed = append(changed, a)
			set[a.name] = a.value
		}
	}
	return changed, prefix
}

// perStatement names the session variables that a statement's context
// sets anew for every statement, by the name SET STATEMENT gives them:
// those a DML statement takes from onSession and statementPrefix rather
// than from the SET of its session's settings.
var perStatement = map[string]string{
	"@@session.timestamp":        "timestamp",
	"@@session.pseudo_thread_id": "pseudo_thread_id",
	"@@session.insert_id":        "insert_id",
}

// statementPrefix is the SET STATEMENT ... FOR in front of a statement
// that sets its own variables (of perStatement) for it alone. An insert_id
// of 0 is left out, unless an earlier statement of the work (one that
// could not take a prefix) left another on the session, which the
// statement would otherwise use.
func statementPrefix(own []assignment, sessionInsertID string) string {
	var b strings.Builder
	for _, a := range own {
		name := perStatement[a.name]
		if name == "insert_id" && a.value == "0" && (sessionInsertID == "" || sessionInsertID == "0") {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("SET STATEMENT ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(name + "=" + a.value)
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString(" FOR ")
	return b.String()
}

// prefixable reports whether query may take a SET STATEMENT ... FOR in
// front of it: an INSERT, REPLACE, UPDATE or DELETE, after comments (a
// versioned comment, which may hold anything, or a statement of another
// kind, sets its variables on the session instead).
func prefixable(query string) bool {
	q := query
	for {
		q = strings.TrimLeft(q, " \t\r\n")
		switch {
		case strings.HasPrefix(q, "/*!"), strings.HasPrefix(q, "/*M!"):
			return false
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q[2:], "*/")
			if end < 0 {
				return false
			}
			q = q[2+end+2:]
			continue
		case strings.HasPrefix(q, "#"), strings.HasPrefix(q, "-- "):
			end := strings.IndexByte(q, '\n')
			if end < 0 {
				return false
			}
			q = q[end+1:]
			continue
		}
		break
	}
	for _, verb := range []string{"INSERT", "REPLACE", "UPDATE", "DELETE"} {
		if len(q) > len(verb) && strings.EqualFold(q[:len(verb)], verb) && !identChar(q[len(verb)]) {
			return true
		}
	}
	return false
}

// identChar reports whether c may continue an unquoted identifier.
func identChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// flushStatements sends p's statements and empties it. A packet of
// several that fails returns errStatementsFailed (the server does not say
// which failed); a statement alone that fails with the error it was
// logged with did on the target what it did on the source.
func (w *worker) flushStatements(ctx context.Context, conn *sql.Conn, work *stage.Work, p *stmtPacket) error {
	p.settle()
	if p.text.Len() == 0 {
		return nil
	}
	text := p.String()
	stmts := p.stmts
	n := len(stmts)
	var ref stmtRef
	if n > 0 {
		ref = stmts[n-1]
	}
	p.reset()
	_, err := conn.ExecContext(ctx, text)
	switch {
	case err == nil:
		return nil
	case retryable(err):
		return err
	case n == 0:
		return &stage.ConflictError{GTID: work.Txns[p.txn].GTID, What: "the session's setup for the transaction's statements failed on the target: " +
			abbreviate(binlog.RedactSecrets(text)), Err: redacted{err}}
	case n > 1:
		return fmt.Errorf("%w: %w", errStatementsFailed, redacted{err})
	}
	t, st := work.Txns[ref.txn], ref.st
	switch {
	case st.ErrorCode != 0 && equalReplErrors(st.ErrorCode, mysqlerr.Number(err)):
		// It failed part way on the source too, and did as much.
	case mysqlerr.Number(err) == erBadTable && st.ErrorCode == 0 && schema.TemporaryTables(st.Schema, st.Text()).Temporary:
		// A temporary table this session never had (lost at a restart,
		// or the source connection's end dropping what it may hold): a
		// replica steps over it too.
	case st.ErrorCode != 0:
		return &stage.ConflictError{GTID: t.GTID, What: fmt.Sprintf("the statement met error %d on the source and %s on the target: %s",
			st.ErrorCode, describeError(mysqlerr.Number(err)), abbreviate(binlog.RedactSecrets(st.Text()))), Err: redacted{err}}
	default:
		return &stage.ConflictError{GTID: t.GTID, What: "statement failed on the target: " + abbreviate(binlog.RedactSecrets(st.Text())), Err: redacted{err}}
	}
	return nil
}

// loadData runs LOAD DATA statement st of t, alone, with its session's
// context.
func (w *worker) loadData(ctx context.Context, conn *sql.Conn, t *stage.Txn, st *binlog.Statement) error {
	var b strings.Builder
	if st.Schema != "" {
		b.WriteString("USE " + schema.QuoteIdent(st.Schema) + ";\n")
	}
	b.WriteString(setStatement(statementContext(statementSession(st, w.p.cfg.SourceSession, w.mariadb), st, true)))
	for _, v := range st.Context.UserVars {
		q, args, err := userVarSQL(v, w.mariadb)
		if err != nil {
			return &stage.ConflictError{GTID: t.GTID, What: "user variable @" + v.Name, Err: err}
		}
		b.WriteString(";\n" + inline(q, args))
	}
	if _, err := conn.ExecContext(ctx, b.String()); err != nil {
		if retryable(err) {
			return err
		}
		return &stage.ConflictError{GTID: t.GTID, What: "cannot give the target session the source session's settings for LOAD DATA", Err: err}
	}
	err := w.execStatement(ctx, conn, st)
	switch {
	case st.ErrorCode != 0 && equalReplErrors(st.ErrorCode, mysqlerr.Number(err)):
	case err != nil && retryable(err):
		return err
	case err != nil:
		return &stage.ConflictError{GTID: t.GTID, What: "statement failed on the target: " + abbreviate(binlog.RedactSecrets(st.Text())), Err: redacted{err}}
	}
	_, err = conn.ExecContext(ctx, w.restoreSession())
	return err
}

// execStatement sends st's text as logged, alone (no placeholders), or,
// for a LOAD DATA, with its file from the binlog.
func (w *worker) execStatement(ctx context.Context, conn *sql.Conn, st *binlog.Statement) error {
	if st.Load == nil {
		_, err := conn.ExecContext(ctx, st.Sent())
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

// statementContext adds to the session variables as the context events
// of st: INSERT_ID, LAST_INSERT_ID, the RAND seeds, and the source
// session's connection id, which CONNECTION_ID() returns (with thread;
// it needs BINLOG REPLAY, which a DDL asks for only when it calls
// CONNECTION_ID()).
func statementContext(as []assignment, st *binlog.Statement, thread bool) []assignment {
	c := &st.Context
	// Set for every statement: one that did not use a forced value must
	// not find the previous statement's.
	as = append(as, assignment{"@@session.insert_id", literal(c.InsertID)})
	if c.HasLastInsertID {
		as = append(as, assignment{"@@session.last_insert_id", literal(c.LastInsertID)})
	}
	if c.HasRand {
		as = append(as, assignment{"@@session.rand_seed1", literal(c.RandSeed1)}, assignment{"@@session.rand_seed2", literal(c.RandSeed2)})
	}
	if st.ThreadID != 0 && thread {
		as = append(as, assignment{"@@session.pseudo_thread_id", literal(st.ThreadID)})
	}
	return as
}

// restoreSession gives a worker's session back the settings
// ConfigureSession and the driver gave it, after a statement ran with the
// source session's (see statementSession).
//
// Its strings are hex literals: the SET is parsed in the session the
// statement left, whose character_set_connection may be utf16, which a
// quoted literal would be read in ("Unknown or incorrect time zone").
func (w *worker) restoreSession() string {
	return "SET NAMES " + w.names + ", @@session.timestamp = DEFAULT, @@session.time_zone = " + literal(sessionTimeZone) + ", " +
		"@@session.sql_mode = " + literal(sessionSQLMode) + ", @@session.lc_time_names = DEFAULT, " +
		"@@session.auto_increment_increment = DEFAULT, @@session.auto_increment_offset = DEFAULT, " +
		"@@session.foreign_key_checks = 1, @@session.unique_checks = 1, @@session.sql_auto_is_null = DEFAULT, " +
		"@@session.insert_id = 0, @@session.collation_server = DEFAULT" + w.restoreInsertHistory()
}

// restoreInsertHistory is the part of restoreSession for a target that
// has system_versioning_insert_history, which a statement may have set.
func (w *worker) restoreInsertHistory() string {
	if !w.insertHistory {
		return ""
	}
	return ", @@session.system_versioning_insert_history = DEFAULT"
}

// versionAtLeast reports whether a server's VERSION() text (such as
// 10.11.19-MariaDB-0+deb12u1) is major.minor or later.
func versionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// threadError is the error of a transaction whose source connection's
// target session cannot be had.
func (w *worker) threadError(t *stage.Txn, err error) error {
	if errors.Is(err, ErrTempTablesLost) {
		return &stage.ConflictError{GTID: t.GTID, What: fmt.Sprintf("a statement of source connection %d, whose temporary tables were lost with the target session that held them (the target restarted or the connection broke): "+
			"it cannot be applied as on the source. Apply it and what follows of that connection by hand and record them with paraply skip", t.Session), Err: err}
	}
	return err
}

// replaysRows says whether t's rows events go through the target's own
// row applier (BINLOG statements) rather than SQL: with --apply binlog,
// and with --apply auto when a table of them is one SQL cannot apply
// exactly (triggers on the target, system versioning, a sequence). With
// --apply sql such a table is refused by name.
func (w *worker) replaysRows(ctx context.Context, conn *sql.Conn, t *stage.Txn) (bool, error) {
	if len(t.Txn.Rows) == 0 {
		return false, nil
	}
	switch w.p.cfg.Path {
	case BinlogPath:
		return true, nil
	case SQLPath:
		return false, w.refuseInexact(ctx, conn, &stage.Work{Txns: []*stage.Txn{t}})
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
func (w *worker) replayRows(ctx context.Context, conn *sql.Conn, work *stage.Work, i, from, to int) error {
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
		return &stage.ConflictError{GTID: t.GTID, What: "cannot replay its row events", Err: err}
	}
	for _, p := range b.Packets() {
		if n := worstSize(p.SQL, p.Args); w.maxPacket > 0 && n > w.maxPacket-1024 {
			return &stage.ConflictError{GTID: t.GTID, What: describe(errPacketTooLarge), Err: fmt.Errorf("%w: %d bytes, max_allowed_packet %d", errPacketTooLarge, n, w.maxPacket)}
		}
		if _, err := execMulti(ctx, conn, p.SQL, p.Args); err != nil {
			if retryable(err) {
				return err
			}
			return w.replayConflict(ctx, work, p, err)
		}
	}
	w.format = t.Raw.Format
	return nil
}

// inline writes the arguments of q, a SET statement of paraply's own whose
// only '?' are its placeholders, into it as literals: numbers as they are,
// strings and bytes in hex, which reads the same whatever the sql_mode
// (NO_BACKSLASH_ESCAPES, ANSI_QUOTES) and the character set of the session
// that parses it.
func inline(q string, args []any) string {
	var b strings.Builder
	for _, a := range args {
		i := strings.IndexByte(q, '?')
		if i < 0 {
			break
		}
		b.WriteString(q[:i])
		b.WriteString(literal(a))
		q = q[i+1:]
	}
	b.WriteString(q)
	return b.String()
}

// literal is v as an SQL literal.
func literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "X'" + hex.EncodeToString([]byte(v)) + "'"
	case []byte:
		return "X'" + hex.EncodeToString(v) + "'"
	}
	panic(fmt.Sprintf("applier: no literal for %T", v))
}
