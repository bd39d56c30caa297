package prepare

import (
	"fmt"
	"sort"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/stage"
)

// temporaries follows the temporary tables each source connection holds,
// from the statements of statement-format binlogs that create and drop
// them, so that the statements of a connection that holds one run in its
// own target session (stage.Txn.Session), as on a replica's SQL thread.
//
// Those created before paraply last stopped are lost: the target sessions
// that held them closed. A statement of such a connection is never
// applied as if they were there (it could read an empty result, or a base
// table of the same name): it stops replication, naming the tables and
// where they were created, until the connection drops them (MariaDB logs
// DROP TEMPORARY TABLE IF EXISTS for what a connection holds when it
// ends), or the source restarts.
type temporaries struct {
	open map[uint32]map[schema.TableName]bool
	lost map[uint32]map[schema.TableName]string // by connection: the GTID that created each
}

// newTemporaries starts with the tables lost at the last stop.
func newTemporaries(lost map[uint32]map[schema.TableName]string) *temporaries {
	tt := &temporaries{open: map[uint32]map[schema.TableName]bool{}, lost: map[uint32]map[schema.TableName]string{}}
	for id, m := range lost {
		tt.lost[id] = map[schema.TableName]string{}
		for n, g := range m {
			tt.lost[id][n] = g
		}
	}
	return tt
}

// route decides where it, a transaction of statement-format statements
// or temporary-table DDL, is applied. A statement that creates, drops or
// alters a temporary table is no DDL for the catalog or the DDL path: it
// runs among the connection's statements (its kind becomes StmtDML). A
// transaction that creates one, or whose connection holds one, gets the
// connection's session. It returns an error for a transaction of a
// connection whose tables were lost.
func (tt *temporaries) route(txn *binlog.Txn, it *stage.Txn) error {
	id := txn.ThreadID
	open := tt.open[id]
	var created, dropped []schema.TableName
	statements, ddl := false, false
	for i := range txn.Statements {
		st := &txn.Statements[i]
		ch := schema.TemporaryTables(st.Schema, st.Text())
		switch {
		case len(ch.Created) > 0:
			for _, n := range ch.Created {
				if !open[n] {
					created = append(created, n)
				}
			}
			st.Kind = binlog.StmtDML
		case ch.Temporary:
			dropped = append(dropped, ch.Dropped...)
			st.Kind = binlog.StmtDML
		case st.Kind == binlog.StmtDDL && len(open) > 0 && namesAny(st, open):
			st.Kind = binlog.StmtDML // ALTER TABLE of a temporary table
		}
		switch st.Kind {
		case binlog.StmtDML:
			statements = true
		case binlog.StmtDDL:
			ddl = true
		}
	}
	if !statements || ddl && len(created)+len(dropped) == 0 {
		return nil
	}
	if lost := tt.lost[id]; len(lost) > 0 {
		for _, n := range dropped {
			delete(lost, n)
		}
		if len(created)+len(dropped) == 0 || !onlyTemporary(txn) {
			return tt.lostError(it, id, lost)
		}
	}
	if len(open) == 0 && len(created) == 0 {
		return nil // any session: the connection holds no temporary table
	}
	if open == nil {
		open = map[schema.TableName]bool{}
		tt.open[id] = open
	}
	for _, n := range created {
		open[n] = true
	}
	for _, n := range dropped {
		delete(open, n)
	}
	it.Session, it.TempCreated, it.TempDropped = id, created, dropped
	if len(open) == 0 {
		it.SessionEnds = true
		delete(tt.open, id)
	}
	if txn.DDL && !ddl {
		// The server flags CREATE and DROP TEMPORARY TABLE as DDL; they
		// are the connection's statements.
		txn.DDL, txn.StatementDML = false, true
	}
	return nil
}

// forget drops every connection's tables: the source restarted, and its
// temporary tables with it. It reports whether there were any.
func (tt *temporaries) forget() bool {
	had := len(tt.open)+len(tt.lost) > 0
	clear(tt.open)
	clear(tt.lost)
	return had
}

// lostError is the error for a statement of connection id, whose tables
// lost were lost at the last stop.
func (tt *temporaries) lostError(it *stage.Txn, id uint32, lost map[schema.TableName]string) error {
	var names []string
	for n, g := range lost {
		names = append(names, n.String()+" (created by "+g+")")
	}
	sort.Strings(names)
	return &stage.ConflictError{GTID: it.GTID, What: fmt.Sprintf("a statement of source connection %d, which held the temporary tables %s when paraply last stopped: "+
		"they were lost with the target sessions that held them, as a native replica loses its own at a restart, and the statement may read them. "+
		"Apply what the connection did after that by hand and record it with paraply skip, or replicate again from before the tables were created",
		id, strings.Join(names, ", "))}
}

// namesAny reports whether DDL statement st names one of the tables in
// set anywhere: an ALTER of a temporary table, a CREATE TABLE ... LIKE or
// ... SELECT that reads one.
func namesAny(st *binlog.Statement, set map[schema.TableName]bool) bool {
	return schema.Mentions(st.Schema, st.Text(), set)
}

// onlyTemporary reports whether every statement of txn creates or drops
// a temporary table.
func onlyTemporary(txn *binlog.Txn) bool {
	for _, st := range txn.Statements {
		ch := schema.TemporaryTables(st.Schema, st.Text())
		if len(ch.Created) == 0 && !ch.Temporary {
			return false
		}
	}
	return true
}

// single reports whether the statements of txn must commit alone (see
// stage.Txn.Single): one writes a table the catalog does not know as a
// plain base table (system-versioned tables are not: transaction-precise
// ones record the writing transaction in each row, so that writes batched
// into one target transaction would leave out history rows), or one's
// writes cannot be told (CALL, SELECT f()), or one searches a full-text
// index (readsFullText).
func single(txn *binlog.Txn, cat *schema.Catalog) bool {
	for _, st := range txn.Statements {
		if st.Kind != binlog.StmtDML || st.Load != nil {
			continue
		}
		if readsFullText(st.Text()) {
			return true
		}
		s, err := schema.StatementSubjects(st.Schema, st.Text())
		if err != nil {
			return true
		}
		for _, n := range s.Tables {
			if cat.Table(n.Schema, n.Name) == nil || cat.Unknown(n.Schema, n.Name) {
				return true
			}
		}
	}
	return false
}

// readsFullText reports whether a statement may search a full-text index
// (MATCH ... AGAINST). InnoDB updates such an index when a transaction
// commits, so a search sees only what earlier target transactions
// committed: batched into one target transaction with the source
// transactions before it, it would not find the rows they wrote (MariaDB's
// suite/innodb_fts/innodb_fts_transaction at MIXED: a DELETE ... WHERE
// MATCH missed a row inserted by the source transaction before it). A
// statement that merely names a column "match" is sent alone too; that
// costs a batch, never a difference.
func readsFullText(q string) bool {
	i := schema.IndexFold(q, "match")
	return i >= 0 && schema.IndexFold(q[i:], "against") >= 0
}
