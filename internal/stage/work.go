package stage

import (
	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stmtmerge"
)

// Txn is a source transaction prepared for applying.
type Txn struct {
	// Seq is the transaction's place in the stream (its relay log index).
	Seq  uint64
	GTID string
	Txn  *binlog.Txn
	// Raw holds the transaction's events as received: the binlog path
	// sends them to the target.
	Raw *binlog.RawTxn
	// Also are GTIDs recorded as applied together with GTID: an XA
	// COMMIT applies the rows of its XA PREPARE, and records both.
	Also []string
	// Large is set for a transaction too large to hold in memory
	// (binlog.Txn.Large): Txn has no rows, the worker reads its pieces
	// again, one at a time.
	Large *Large
	// Tables holds the SQL-generation view of each Txn.Rows' table,
	// resolved when the transaction was read (so that workers never touch
	// the schema catalog while DDL changes it).
	Tables []*sqlgen.Table
	// DDL is set when the transaction runs DDL.
	DDL *DDL
	// Bytes is the transaction's size as received (for queue bounds).
	Bytes int
	// Session is the source connection (pseudo_thread_id) whose target
	// session must apply the transaction, 0 for any: its statements
	// create, use or drop that connection's temporary tables, which live
	// in one target session (see threads.go).
	Session uint32
	// TempCreated and TempDropped are the temporary tables the
	// transaction's statements create and drop, recorded in the same
	// target transaction (checkpoint.TempCreatedSQL).
	TempCreated, TempDropped []schema.TableName
	// SessionEnds says the source connection holds no temporary table
	// after the transaction: its target session may go.
	SessionEnds bool
	// SourceRestarted marks the first transaction the source wrote after
	// it restarted, when connections held temporary tables before: they
	// are gone on the source, so their target sessions close and their
	// records go before it is applied. Everything before it has committed
	// then, and nothing after it has started (the scheduler isolates it).
	SourceRestarted bool
	// Single says the transaction's statements must commit in a target
	// transaction of their own, not batched with others: they may write a
	// table whose rows record their transaction (transaction-precise
	// system versioning), what they write cannot be told, or they search
	// a full-text index, which shows only committed rows.
	Single bool
	// ConnectionIDUnread says that nothing the transaction's statements
	// run reads the source session's connection id (CONNECTION_ID(),
	// @@pseudo_thread_id): they all have keys, so they call built-in
	// functions only, on tables without triggers, and none names either or
	// fills a column whose default calls CONNECTION_ID()
	// (deptrack.Writeset.ReadsConnectionID). The worker then leaves the
	// session's pseudo_thread_id as it is: setting it for every
	// transaction of a stream from many clients cost the target 7-11% of
	// its CPU (docs/benchmark.md).
	ConnectionIDUnread bool
	// Merges are the statements the worker may merge with the statements
	// around them in its packet (stmtmerge), in statement order: set only
	// where ConnectionIDUnread is, for statements stmtmerge recognized
	// that read nothing of their session but what their packet shares
	// (binlog.StatementContext.Empty) and met no error on the source.
	Merges []Merge
}

// Merge is a statement of Txn.Merges: its index in Txn.Txn.Statements,
// how stmtmerge read it, and its table (database and name, quoted).
type Merge struct {
	Index int
	Form  *stmtmerge.Form
	Table string
}

// Alone reports whether the transaction is applied in a work of its own:
// DDL, a large transaction, one that needs its source connection's
// session, one whose statements must commit alone (Single), the first
// after a source restart (SourceRestarted), one the source rolled back
// (its target transaction is rolled back too), and one that changes a
// non-transactional table (it waits for everything before it: WaitsFirst).
func (t *Txn) Alone() bool {
	return t.DDL != nil || t.Large != nil || t.Session != 0 || t.Single || t.SourceRestarted ||
		t.Txn != nil && (t.Txn.RolledBack || t.Txn.NonTransactional())
}

// WaitsFirst reports whether the transaction starts only once every
// transaction before it has committed, in any commit order: it changes a
// non-transactional table (binlog.Txn.NonTransactional), whose changes no
// rollback undoes, so it must not run before an earlier transaction it
// could be aborted for, nor log its changes ahead of earlier ones.
func (t *Txn) WaitsFirst() bool { return t.Txn != nil && t.Txn.NonTransactional() }

// Large is how a worker reads a large transaction again.
type Large struct {
	// Pieces is the number of pieces; Read returns piece i, in order (the
	// last one is Txn.Raw).
	Pieces int
	Read   func(i int) (*binlog.RawTxn, error)
	// Tables are the SQL path's view of the tables its rows touch, one per
	// table map of binlog.Txn.LargeTables (nil where unknown), resolved
	// when it was read, as Txn.Tables.
	Tables []*sqlgen.Table
}

// DDL describes the DDL statements of a transaction.
type DDL struct {
	Statements []binlog.Statement
	// Objects are the schemas and tables the DDL may change (empty when
	// unknown: then every schema is fingerprinted).
	Objects []checkpoint.Object
	// Rerun is set when this DDL was running at a crash and did not leave
	// a trace: errors saying its change already exists are tolerated.
	Rerun bool
}

// Work is what a worker applies as one target transaction: consecutive
// source transactions (target batching), or one DDL transaction.
type Work struct {
	Txns []*Txn
	// AfterTurn, when not nil, says which of Txns wait for a transaction
	// of an earlier work still applying on another worker, or for one of
	// Txns that does (commit order preserved: the work is a run, and what
	// it waits for is before its First). The worker applies the others
	// first, waits for its commit turn, then applies these, each part in
	// stream order: the run is not cut short at the first of them, and
	// what does not wait runs at once. Transactions of one part do not
	// wait for those of the other, so the order between parts does not
	// change what the work leaves.
	AfterTurn []bool
	// Retries counts the attempts beyond the first (filled by the worker).
	Retries int
	// Err is set when the work failed for good.
	Err error
	// Worker is the worker that applied it (set with the result).
	Worker int
}

// First is the stream position of the work's first transaction (with
// commit order preserved, work is consecutive from there).
func (w *Work) First() uint64 { return w.Txns[0].Seq }

// Committed tells seq that the work's transactions committed, a
// consecutive run at a time (work from a pool without commit order need
// not be consecutive).
func (w *Work) Committed(seq *Sequencer) {
	start := w.Txns[0].Seq
	for i, t := range w.Txns {
		if i+1 == len(w.Txns) || w.Txns[i+1].Seq != t.Seq+1 {
			seq.Done(start, t.Seq)
			if i+1 < len(w.Txns) {
				start = w.Txns[i+1].Seq
			}
		}
	}
}

// Last is the work's newest transaction (its transactions are in stream
// order). The target records the work as applied under its GTID: the key
// of the work's row in paraply.applied (checkpoint.AppliedSQL).
func (w *Work) Last() *Txn { return w.Txns[len(w.Txns)-1] }

// GTIDs lists the GTIDs the work applies: its others, then its key.
func (w *Work) GTIDs() []string { return append(w.Others(), w.Last().GTID) }

// Others lists the GTIDs the work applies besides its key (Last's GTID),
// in stream order.
func (w *Work) Others() []string {
	last := w.Last()
	out := make([]string, 0, len(w.Txns)+len(last.Also))
	for _, t := range w.Txns[:len(w.Txns)-1] {
		out = append(out, t.GTID)
		out = append(out, t.Also...)
	}
	return append(out, last.Also...)
}
