package binlog

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/replication"
)

// Pos is where an event starts: a binlog (or relay log) file name and a byte
// offset in it. For a replication stream, File is the source's binlog file
// and Offset the event's position in it.
type Pos struct {
	File   string
	Offset int64
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Offset) }

// Clock is the source's own record of which transactions may run in parallel.
type Clock struct {
	// Logical is true when the transaction carried a MySQL logical timestamp.
	Logical bool
	// LastCommitted and SequenceNumber are MySQL's logical clock, numbered
	// from 1 in each binlog file; LastCommitted 0 means "unknown parent".
	LastCommitted, SequenceNumber int64
	// CommitID is MariaDB's group commit id; 0 when the transaction was not
	// part of a group commit.
	CommitID uint64
	// MariaFlags are the MariaDB GTID event flags (standalone, transactional,
	// allow-parallel, waited, ddl).
	MariaFlags uint8
}

// Waited reports whether MariaDB recorded a row lock wait for this
// transaction on the source (its optimistic mode serializes those).
func (c Clock) Waited() bool { return c.MariaFlags&replication.BINLOG_MARIADB_FL_WAITED != 0 }

// Op is the kind of a row change.
type Op uint8

// Row change kinds.
const (
	Insert Op = iota + 1
	Update
	Delete
)

func (o Op) String() string {
	switch o {
	case Insert:
		return "insert"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// Rows is one rows event: changes of one kind to one table.
type Rows struct {
	Op Op
	// Table is the table map the event refers to: schema, name, column
	// types and, with binlog_row_metadata=FULL, column names and the
	// primary key. Shared by every Rows on that table, of this transaction and
	// others: read only.
	Table *replication.TableMapEvent
	// Images holds one row image per change for inserts (after image) and
	// deletes (before image), and two per change for updates: before at
	// 2i, after at 2i+1. A value is nil for SQL NULL and for a column the
	// image does not carry (see Present).
	Images [][]any
	// Before and After are the column bitmaps of the before and after
	// images (binlog_row_image=MINIMAL or NOBLOB leave columns out). Bit i
	// set means column i is present. Inserts have only After, deletes only
	// Before.
	Before, After []byte
	// Flags are the rows event flags (end of statement, no foreign key
	// checks, relaxed unique checks, complete rows).
	Flags uint16
	// PartialJSON is true for a MySQL PARTIAL_UPDATE_ROWS_EVENT whose after
	// images may hold JSON diffs instead of whole values.
	PartialJSON bool
	// names holds Table's names as strings when the Decoder had them
	// (Schema, Name): only while Table is still names.tm, since a filter
	// may replace Table by a renamed copy.
	names *fullTableMap
}

// Rows event flags (MySQL/MariaDB Rows_log_event::enum_flag).
const (
	RowsFlagStmtEnd            = 0x0001
	RowsFlagNoForeignKeyCheck  = 0x0002
	RowsFlagRelaxedUniqueCheck = 0x0004
	// RowsFlagNoCheckConstraintCheck: MariaDB's, the source session ran
	// with check_constraint_checks=0.
	RowsFlagNoCheckConstraintCheck = 0x0080
)

// Changes is the number of row changes in the event.
func (r *Rows) Changes() int {
	if r.Op == Update {
		return len(r.Images) / 2
	}
	return len(r.Images)
}

// Present reports whether column col is carried by the before (after=false)
// or after (after=true) image.
func (r *Rows) Present(col int, after bool) bool {
	bm := r.Before
	if after {
		bm = r.After
	}
	if bm == nil {
		return true
	}
	return col>>3 < len(bm) && bm[col>>3]&(1<<(uint(col)&7)) != 0
}

// Schema of the table the rows belong to.
func (r *Rows) Schema() string {
	if r.names != nil && r.names.tm == r.Table {
		return r.names.schema
	}
	return string(r.Table.Schema)
}

// Name of the table the rows belong to.
func (r *Rows) Name() string {
	if r.names != nil && r.names.tm == r.Table {
		return r.names.table
	}
	return string(r.Table.Table)
}

// Statement is a query event inside a transaction other than BEGIN/COMMIT:
// DDL, DML logged in statement format, or a savepoint.
type Statement struct {
	Schema string // the session's current database on the source
	Query  string
	Kind   StmtKind
	// At is the number of the transaction's rows events logged before the
	// statement: applying Rows[:At], then the statement, then the rest
	// keeps the source's order (SAVEPOINT, ROLLBACK TO SAVEPOINT).
	At int
	// Session are the source session's settings the statement ran with
	// (DDL inherits its character sets; a replica runs it with them).
	Session QuerySession
	// When is the statement's start on the source, in seconds since the
	// epoch (the event header's timestamp; Session.Microseconds has the
	// fraction): NOW() and CURRENT_TIMESTAMP defaults read it.
	When uint32
	// ThreadID is the source session's connection id (pseudo_thread_id),
	// which tells whose temporary tables a statement sees.
	ThreadID uint32
	// ErrorCode is the error the statement met on the source (0 if none):
	// a statement that failed part way (a DROP of several tables, some
	// unknown) is logged with its error, and a replica expects the same.
	ErrorCode uint16
	// Context is what a statement-format statement read from its session
	// besides Session (see StatementContext).
	Context StatementContext
	// Load is set for a LOAD DATA logged in statement format: the file it
	// reads, which the binlog carries.
	Load *LoadData
}

// XAPhase says which half of an XA transaction a Txn is.
type XAPhase uint8

// XA phases. A one-phase XA transaction (XA COMMIT ... ONE PHASE) is an
// ordinary transaction and has none.
const (
	XANone XAPhase = iota
	// XAPrepare is XA START ... XA END, XA PREPARE: the rows, not yet
	// committed on the source.
	XAPrepare
	// XACommit and XARollback settle a prepared transaction, named by its
	// XID; they carry no rows of their own.
	XACommit
	XARollback
)

// String names the phase, as logs and errors say it.
func (p XAPhase) String() string {
	switch p {
	case XAPrepare:
		return "XA PREPARE"
	case XACommit:
		return "XA COMMIT"
	case XARollback:
		return "XA ROLLBACK"
	}
	return ""
}

// Txn is one source transaction, decoded.
type Txn struct {
	// Seq numbers transactions from 1 in the order they were read; the
	// dependency tracker and scheduler name transactions by it.
	Seq uint64
	// GTID is the source's id for the transaction (zero if it had none).
	GTID GTID
	// Start is where the transaction's first event is; End is the offset
	// just past its last event, in the same file.
	Start Pos
	End   int64
	// Bytes is the size of the transaction's events as read.
	Bytes int
	// Timestamp is the source commit time in microseconds since the epoch:
	// MySQL's original_commit_timestamp when present, else the header
	// timestamp (seconds) of the last event.
	Timestamp int64
	// ThreadID is the source session that ran the transaction (the
	// pseudo-thread id of its query events); 0 if unknown.
	ThreadID uint32
	// ServerID is the server_id in the events' headers.
	ServerID uint32
	Clock    Clock
	// Rows are the row changes in binlog order.
	Rows []*Rows
	// Statements are the query events other than BEGIN/COMMIT/ROLLBACK.
	Statements []Statement
	// DDL is set when a statement is DDL (or the MariaDB DDL flag is set).
	DDL bool
	// StatementDML is set when the transaction changes data by a statement
	// rather than by row events (binlog_format=STATEMENT or MIXED), or by
	// LOAD DATA; its rows are unknown.
	StatementDML bool
	// LoadData is set when that includes a LOAD DATA logged as a
	// statement (a Statement with Load set).
	LoadData bool
	// RolledBack is set when the transaction ends with ROLLBACK, not
	// COMMIT: the source rolled it back, and logged it because it changed
	// what a rollback does not undo (a non-transactional table, a
	// partition a versioned table added). A replica applies it and rolls
	// it back too: those changes stay, the others go.
	RolledBack bool
	// XA is the XA phase; XID names the XA transaction, in the server's
	// canonical form X'gtrid',X'bqual',formatID.
	XA  XAPhase
	XID string
	// Large is set on a transaction decoded from pieces (DecodePieces):
	// Rows is empty; LargeRows counts its row changes, and LargeTables
	// holds the table map of each table they touch, LargeTableRows the
	// row changes of each.
	Large          bool
	LargeRows      int
	LargeTables    []*replication.TableMapEvent
	LargeTableRows []int
}

// noteRows counts n row changes of the table tm maps, adding tm to
// LargeTables unless a table map of the same table with as many columns
// is there.
func (t *Txn) noteRows(tm *replication.TableMapEvent, n int) {
	t.LargeRows += n
	for i, x := range t.LargeTables {
		if string(x.Schema) == string(tm.Schema) && string(x.Table) == string(tm.Table) && x.ColumnCount == tm.ColumnCount {
			t.LargeTableRows[i] += n
			return
		}
	}
	t.LargeTables = append(t.LargeTables, tm)
	t.LargeTableRows = append(t.LargeTableRows, n)
}

// RollsBackToSavepoint reports whether the transaction rolls back to a
// savepoint in the binlog (the server logs that only when changes before
// it could not be rolled back: then the order of rows and statements
// matters).
func (t *Txn) RollsBackToSavepoint() bool {
	for _, s := range t.Statements {
		if s.Kind == StmtSavepoint && isRollbackToSavepoint(s.Query) {
			return true
		}
	}
	return false
}

// NonTransactional reports whether the source said a rollback cannot
// undo the transaction whole: MariaDB leaves FL_TRANSACTIONAL off the GTID
// event of one that changed a non-transactional table (MyISAM, Aria,
// MEMORY). A server keeps, and logs, such a change when its statement
// ends, not at COMMIT: a replica must run the transaction only once
// everything before it has committed, and never twice (MariaDB's
// optimistic replica waits for prior commit before it starts one). DDL
// has its own barrier and is not counted; MySQL's GTID event carries no
// such flag, so its transactions report false.
func (t *Txn) NonTransactional() bool {
	changes := t.HasRows() || t.StatementDML
	return t.GTID.Flavor == FlavorMariaDB && changes && !t.DDL &&
		t.Clock.MariaFlags&replication.BINLOG_MARIADB_FL_TRANSACTIONAL == 0
}

// HasRows says whether the transaction changes rows, whether they are held
// (Rows) or, for a large one, only counted (LargeTables): a CREATE ...
// SELECT whose rows are large has rows to apply all the same.
func (t *Txn) HasRows() bool { return len(t.Rows) > 0 || len(t.LargeTables) > 0 }

// RowCount is the number of row changes in the transaction.
func (t *Txn) RowCount() int {
	if t.Large {
		return t.LargeRows
	}
	n := 0
	for _, r := range t.Rows {
		n += r.Changes()
	}
	return n
}

// ID names the transaction for humans: its GTID, or its position when it
// has none.
func (t *Txn) ID() string {
	if !t.GTID.IsZero() {
		return t.GTID.String()
	}
	return t.Start.String()
}

// Schemas returns the databases the transaction touches, deduplicated, in
// order of first appearance. A statement contributes its current database.
func (t *Txn) Schemas() []string {
	var out []string
	add := func(s string) {
		for _, x := range out {
			if x == s {
				return
			}
		}
		out = append(out, s)
	}
	for _, r := range t.Rows {
		add(r.Schema())
	}
	for _, tm := range t.LargeTables {
		add(string(tm.Schema))
	}
	for _, s := range t.Statements {
		add(s.Schema)
	}
	return out
}
