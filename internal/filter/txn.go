package filter

import (
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
)

// Filter applies Rules to decoded transactions, one at a time, in stream
// order. Not safe for concurrent use.
type Filter struct {
	rules Rules
}

// New returns a Filter applying r.
func New(r Rules) *Filter { return &Filter{rules: r} }

// Outcome says what filtering did to one transaction.
type Outcome struct {
	// Rows and Statements are the row changes and the statements (DDL,
	// statement-format DML) left out.
	Rows, Statements int
	// Whole is set when the transaction had changes and none is left: it
	// is only recorded as applied.
	Whole bool
	// Renamed is set when a kept table or statement was renamed.
	Renamed bool
	// DroppedDML is set when statement-format DML was left out: its query
	// events must go from the raw events too (see Raw).
	DroppedDML bool
	// Mixed lists the kept DDL statements that also name tables or
	// databases left out (they run whole, as on MariaDB's replica).
	Mixed []string
}

// Changed reports whether the transaction differs from the source's.
func (o Outcome) Changed() bool { return o.Rows > 0 || o.Statements > 0 || o.Renamed }

// Txn filters and renames t in place: its rows, its large transaction
// summary and its statements. An error (a statement whose subjects or
// names cannot be known, see Statement) leaves t as it was.
func (f *Filter) Txn(t *binlog.Txn) (Outcome, error) {
	var o Outcome
	if f.rules.Empty() {
		return o, nil
	}
	changes := t.RowCount() + countChanges(t.Statements)
	stmts, err := f.statements(t, &o)
	if err != nil {
		return Outcome{}, err
	}
	maps := map[*replication.TableMapEvent]*replication.TableMapEvent{}
	kept := t.Rows[:0:0]
	// keptBefore[i] counts the rows events kept before t.Rows[i]; open is
	// the current statement's last rows event kept.
	keptBefore := make([]int, len(t.Rows)+1)
	var open *binlog.Rows
	for i, r := range t.Rows {
		keptBefore[i] = len(kept)
		end := r.Flags&binlog.RowsFlagStmtEnd != 0
		tm, ok := f.table(r.Table, maps, &o)
		switch {
		case ok:
			r.Table = tm
			kept = append(kept, r)
			open = r
		case end && open != nil:
			// As Raw moves the flag in the events.
			open.Flags |= binlog.RowsFlagStmtEnd
			fallthrough
		default:
			o.Rows += r.Changes()
		}
		if end {
			open = nil
		}
	}
	keptBefore[len(t.Rows)] = len(kept)
	for i := range stmts {
		stmts[i].At = keptBefore[min(stmts[i].At, len(t.Rows))]
	}
	t.Rows, t.Statements = kept, stmts
	f.large(t, maps, &o)
	if o.Statements > 0 {
		t.DDL = hasKind(stmts, binlog.StmtDDL)
		if !hasKind(stmts, binlog.StmtDML) {
			t.StatementDML, t.LoadData = false, false
		}
	}
	if changes > 0 && t.RowCount() == 0 && countChanges(stmts) == 0 && !t.StatementDML {
		o.Whole = true
		t.Statements, t.DDL, t.Large, t.LargeTables, t.LargeTableRows = nil, false, false, nil, nil
	}
	return o, nil
}

// table returns the table map for a kept table, renamed if its database
// is (one copy per table map: the source's is shared), and false for a
// table left out.
func (f *Filter) table(tm *replication.TableMapEvent, maps map[*replication.TableMapEvent]*replication.TableMapEvent, o *Outcome) (*replication.TableMapEvent, bool) {
	if out, ok := maps[tm]; ok {
		return out, out != nil
	}
	db, renamed := f.rules.Database(string(tm.Schema))
	var out *replication.TableMapEvent
	if f.rules.Table(db, string(tm.Table)) {
		out = tm
		if renamed {
			cp := *tm
			cp.Schema = []byte(db)
			out = &cp
			o.Renamed = true
		}
	}
	maps[tm] = out
	return out, out != nil
}

// large filters the summary of a large transaction: the tables its rows
// touch and their counts (its events are filtered as the worker reads
// them, see Raw).
func (f *Filter) large(t *binlog.Txn, maps map[*replication.TableMapEvent]*replication.TableMapEvent, o *Outcome) {
	if !t.Large {
		return
	}
	var tables []*replication.TableMapEvent
	var rows []int
	for i, tm := range t.LargeTables {
		n := 0
		if i < len(t.LargeTableRows) {
			n = t.LargeTableRows[i]
		}
		if out, ok := f.table(tm, maps, o); ok {
			tables, rows = append(tables, out), append(rows, n)
			continue
		}
		o.Rows += n
		t.LargeRows -= n
	}
	t.LargeTables, t.LargeTableRows = tables, rows
}

// countChanges counts the statements that change something (DDL and
// DML, not savepoints).
func countChanges(stmts []binlog.Statement) int {
	n := 0
	for _, s := range stmts {
		if s.Kind == binlog.StmtDDL || s.Kind == binlog.StmtDML {
			n++
		}
	}
	return n
}

func hasKind(stmts []binlog.Statement, k binlog.StmtKind) bool {
	for _, s := range stmts {
		if s.Kind == k {
			return true
		}
	}
	return false
}

// Counts add up what filtering left out, for status and metrics.
type Counts struct {
	// Transactions had changes, every one left out: they were only
	// recorded as applied.
	Transactions int64
	// Rows are row changes left out, of any transaction.
	Rows int64
	// Statements are DDL and statement-format DML left out.
	Statements int64
}

// Add counts o.
func (c *Counts) Add(o Outcome) {
	if o.Whole {
		c.Transactions++
	}
	c.Rows += int64(o.Rows)
	c.Statements += int64(o.Statements)
}
