// Package prepare is the stage between the relay log and the coordinator:
// it decodes each transaction, follows its DDL in the schema catalog,
// computes its writeset and dependencies, applies the filters, routes
// statements that need their source connection's session, and pairs the
// halves of XA transactions. It sends stage.Prepared, in stream order.
package prepare

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
	"github.com/paraply/paraply/internal/stmtmerge"
)

// EntrySource yields relay log entries in order, blocking at the end.
type EntrySource interface {
	Next(ctx context.Context) (*relaylog.Entry, error)
}

// Preparer is the stage between the relay log and the coordinator: it
// decodes each transaction, follows DDL in the schema catalog, computes the
// writeset and the dependencies (the tracker needs stream order, so this
// is one goroutine), and resolves each rows event's table for SQL
// generation, so that workers never read the catalog while it changes.
type Preparer struct {
	Catalog *schema.Catalog
	Mode    deptrack.Mode
	History int
	// SQLOnly says workers apply rows with SQL statements only (--apply
	// sql): each rows event's table must be resolved for SQL generation,
	// and the raw events the binlog path sends need no filtering.
	SQLOnly bool
	// SourceSession: workers run DDL with the source session's character
	// sets (the applier's Config.SourceSession), so the catalog follows it so.
	SourceSession bool
	// Logger receives what degrades dependency tracking (default: discard).
	Logger *slog.Logger
	// ReadPart reads a piece of a large transaction from the relay log.
	ReadPart func(relaylog.PartRef) ([]binlog.Event, error)
	// Until, if set, ends the run (Run closes its output and returns
	// nil) once a transaction passed on brings the source position to
	// cover it: --until-caught-up, --until-gtid, a hand-over's gap fill.
	// With UntilGTID (--until-gtid), the first transaction beyond Until in
	// its domain ends the run too, before it: it is not passed on, nor is
	// anything after it. Start is the position the run starts from (the
	// checkpoint's), and Flavor says how to read positions.
	Until     mysql.GTIDSet
	UntilGTID bool
	Start     string
	Flavor    binlog.Flavor
	// Delay holds each transaction until its source commit time plus
	// Delay (--delay, as MASTER_DELAY).
	Delay time.Duration
	// ClockOffset, if set, says how far paraply's clock is ahead of the
	// source's, which the delay counts in (as MariaDB's replica corrects
	// MASTER_DELAY by its clock difference with the primary).
	ClockOffset func() (time.Duration, bool)
	// Applied are GTIDs the target already has (from the checkpoint).
	Applied map[string]bool
	// Rerun are GTIDs of DDL whose outcome a crash left unknown.
	Rerun map[string]bool
	// Filter, if set, applies --include, --exclude and --rewrite-db (see
	// filter.go).
	Filter *filter.Filter
	// LostTemporary are the temporary tables source connections held when
	// paraply last stopped (checkpoint.TempTables), by connection: the GTID
	// that created each. See temporaries.
	LostTemporary map[uint32]map[schema.TableName]string

	decoder   *binlog.Decoder
	temps     *temporaries
	format    *binlog.Format // of the last transaction prepared
	extractor *deptrack.Extractor
	// prepared holds XA transactions prepared and not yet settled, by XID.
	prepared map[string]*stage.Txn
	tracker  *deptrack.Tracker
	ws       deptrack.Writeset
	// recognizer reads the statements workers may merge (merges);
	// quoted caches their tables' quoted names.
	recognizer stmtmerge.Recognizer
	quoted     map[schema.TableName]string
	tables     map[tableKey]*sqlgen.Table

	mu    sync.Mutex // guards stats and written
	stats Stats
	// written are the target tables rows were applied to (as the filters
	// name them), at most maxWritten; fresh those TakeWritten has not
	// returned yet.
	written map[schema.TableName]bool
	fresh   []schema.TableName
}

// Stats says what shaped the dependencies so far, for diagnosis.
type Stats struct {
	Tracker deptrack.Stats
	// BarrierTables names tables behind barriers and serializations
	// (unknown schema, keyless, cascades), by cause.
	BarrierTables map[string]map[string]bool
	// DelayedUntil is when the transaction held for --delay goes on (zero
	// when none is held).
	DelayedUntil time.Time
	// Filtered counts what --include and --exclude left out.
	Filtered filter.Counts
}

// maxTracked bounds the tables counted in Stats.
const maxTracked = 1000

// Stats returns a copy of the preparer's statistics; safe to call while
// Run runs.
func (p *Preparer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := Stats{Tracker: p.stats.Tracker, BarrierTables: map[string]map[string]bool{}, DelayedUntil: p.stats.DelayedUntil, Filtered: p.stats.Filtered}
	for c, ts := range p.stats.BarrierTables {
		out.BarrierTables[c] = map[string]bool{}
		for t := range ts {
			out.BarrierTables[c][t] = true
		}
	}
	return out
}

// sourceStarts drops the temporary tables of every source connection
// when the transactions that follow were written after the source
// restarted (see binlog.Format.SourceStarted), as MariaDB's replica does,
// and reports whether there were any: the target sessions that hold them
// must close (stage.Txn.SourceRestarted).
// The relay log repeats a format description at each segment's start: only
// another one (of another binlog file, as two starts within a second write
// the same bytes) counts. The first one read in a run does not count
// either, since the transactions before it may be those paraply applied
// last time: a table lost then stays lost (an error if a connection of
// the restarted source with the same thread ID writes statements), never
// forgotten while it may exist.
func (p *Preparer) sourceStarts(f *binlog.Format) bool {
	if f == nil || f == p.format {
		return false
	}
	last := p.format
	p.format = f
	same := last != nil && last.Event.Pos == f.Event.Pos && bytes.Equal(last.Event.Data, f.Event.Data)
	if last == nil || same || !f.SourceStarted() || !p.temps.forget() {
		return false
	}
	p.Logger.Info("the source restarted: its connections' temporary tables are gone, and paraply's copies are dropped")
	return true
}

// count records what shaped one transaction's dependencies.
func (p *Preparer) count(deps deptrack.Deps) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Tracker = p.tracker.Stats()
	if p.stats.BarrierTables == nil {
		p.stats.BarrierTables = map[string]map[string]bool{}
	}
	if deps.Cause != deptrack.CauseNone && p.ws.Table != "" {
		c := deps.Cause.String()
		if p.stats.BarrierTables[c] == nil {
			p.stats.BarrierTables[c] = map[string]bool{}
		}
		if len(p.stats.BarrierTables[c]) < maxTracked {
			p.stats.BarrierTables[c][p.ws.Table] = true
		}
	}
}

// prepare turns a relay log entry into a prepared transaction: decoded,
// filtered, routed to its session, paired with its XA half, its
// dependencies computed, its DDL followed and its tables resolved.
func (p *Preparer) prepare(e *relaylog.Entry) (*stage.Prepared, error) {
	it, err := p.decode(e)
	if err != nil {
		return nil, err
	}
	pr := &stage.Prepared{Txn: it, Resume: e.Resume, Skip: p.Applied[it.GTID]}
	if pr.Skip {
		// The target has it (a restart after a crash): it needs no keys,
		// no table definitions and no catalog change, since the catalog
		// was read from the target, which holds its DDL already. It still
		// takes its place in the commit-order clock.
		p.ws.Reset()
		pr.Deps = p.tracker.Add(it.Txn, &p.ws)
		return pr, nil
	}
	if err := p.shape(pr, e); err != nil {
		return nil, err
	}
	p.depend(pr)
	if err := refuse(it); err != nil {
		return nil, err
	}
	txn := it.Txn
	if txn.DDL {
		ddl, err := p.followDDL(txn)
		if err != nil {
			return nil, err
		}
		ddl.Rerun = p.Rerun[it.GTID]
		it.DDL = ddl
		if !txn.HasRows() {
			return pr, nil
		}
		// CREATE ... SELECT: the rows go into the table just created.
	}
	if it.Tables != nil || (it.Large != nil && it.Large.Tables != nil) {
		return pr, nil // an XA COMMIT: its prepare's tables, resolved then
	}
	return pr, p.resolveTables(it)
}

// decode reads the entry's transaction: at once, or, for a large one,
// piece by piece, its rows counted and dropped (the worker reads the
// pieces again).
func (p *Preparer) decode(e *relaylog.Entry) (*stage.Txn, error) {
	var txn *binlog.Txn
	var err error
	if len(e.Parts) > 0 {
		// A large transaction: read piece by piece, its rows counted and
		// dropped; the worker reads the pieces again.
		read := p.pieces(e)
		i := 0
		txn, err = p.decoder.DecodePieces(func() (*binlog.RawTxn, error) {
			if i > len(e.Parts) {
				return nil, nil
			}
			i++
			return read(i - 1)
		})
	} else {
		txn, err = p.decoder.Decode(e.Txn)
	}
	if err != nil {
		return nil, fmt.Errorf("GTID %s (relay log entry %d): %w", e.GTID, e.Index, err)
	}
	txn.Seq = e.Index
	gtid := e.GTID.String()
	it := &stage.Txn{Seq: e.Index, GTID: gtid, Txn: txn, Raw: e.Txn, Bytes: txn.Bytes}
	if txn.Large {
		it.Large = &stage.Large{Pieces: len(e.Parts) + 1, Read: p.pieces(e)}
		it.Bytes = e.Txn.Bytes() // what the window holds of it
	}
	return it, nil
}

// shape applies the filters, routes the transaction to the session its
// statements need, and pairs the halves of an XA transaction.
func (p *Preparer) shape(pr *stage.Prepared, e *relaylog.Entry) error {
	it := pr.Txn
	if err := p.filter(it); err != nil {
		return err
	}
	it.SourceRestarted = p.sourceStarts(e.Txn.Format)
	if err := p.temps.route(it.Txn, it); err != nil {
		return err
	}
	if it.Txn.StatementDML && it.Session == 0 {
		it.Single = single(it.Txn, p.Catalog)
	}
	return p.settleXA(pr)
}

// depend computes the transaction's keys and dependencies.
func (p *Preparer) depend(pr *stage.Prepared) {
	it := pr.Txn
	if pr.Hold {
		// Its rows take their keys when its XA COMMIT applies them.
		p.ws.Reset()
	} else {
		p.extractor.Extract(it.Txn, &p.ws)
	}
	if it.SourceRestarted {
		pr.Deps = p.tracker.AddIsolated(it.Txn, &p.ws)
	} else {
		pr.Deps = p.tracker.Add(it.Txn, &p.ws)
	}
	pr.Conflicts = conflicts(pr.Deps, &p.ws)
	it.ConnectionIDUnread = it.Txn.StatementDML && !pr.Hold && it.Session == 0 && it.Txn.XA == binlog.XANone &&
		p.ws.Barrier == deptrack.CauseNone && !p.ws.ReadsConnectionID
	if it.ConnectionIDUnread {
		var held int
		it.Merges, held = p.merges(it.Txn, p.ws.Statements)
		it.Bytes += held
	}
	p.count(pr.Deps)
}

// merges are the statements of txn that stmtmerge may merge, of those
// that got keys (keyed), and about the bytes they hold, which the window's
// bound counts with the transaction's.
func (p *Preparer) merges(txn *binlog.Txn, keyed []deptrack.StatementKey) (out []stage.Merge, held int) {
	var forms []stmtmerge.Form // of out, in one allocation (never grown: out points into it)
	for _, k := range keyed {
		st := &txn.Statements[k.Index]
		if st.ErrorCode != 0 || !st.Context.Empty() {
			continue
		}
		if f, ok := p.recognizer.Recognize(st.Query, k.Column); ok && (f.Kind != stmtmerge.Insert || st.Session.Strict()) {
			if forms == nil {
				forms = make([]stmtmerge.Form, 0, len(keyed))
				out = make([]stage.Merge, 0, len(keyed))
			}
			forms = append(forms, f)
			out = append(out, stage.Merge{Index: k.Index, Form: &forms[len(forms)-1], Table: p.quotedName(k.Table)})
			held += mergeBytes + 40*max(len(f.Columns)-8, 0)
		}
	}
	return out, held
}

// quotedName is n.String(), kept for the next statement of the table.
func (p *Preparer) quotedName(n schema.TableName) string {
	if q, ok := p.quoted[n]; ok {
		return q
	}
	if p.quoted == nil || len(p.quoted) >= maxQuoted {
		p.quoted = map[schema.TableName]string{}
	}
	q := n.String()
	p.quoted[n] = q
	return q
}

// maxQuoted bounds the names quotedName keeps.
const maxQuoted = 4096

// mergeBytes is about what a stage.Merge of up to eight columns holds:
// the form and its lists (stmtmerge.Recognize), the entry (its strings are
// the statement's own text and the table's name, shared).
const mergeBytes = 400

// refuse stops at what paraply cannot apply in the source's order, naming
// the transaction, rather than apply part of it.
func refuse(it *stage.Txn) error {
	txn, gtid := it.Txn, it.GTID
	if txn.StatementDML && !txn.DDL && txn.Large {
		// A transaction recorded as applied is stepped over whatever it
		// holds (above): that is how an operator applies by hand what
		// paraply cannot.
		return &stage.ConflictError{GTID: gtid, What: fmt.Sprintf("statement-format DML in a transaction larger than --large-txn-piece (%d bytes): "+
			"paraply applies such statements from memory; raise --large-txn-piece above the transaction's size", txn.Bytes)}
	}
	if txn.DDL && txn.StatementDML {
		// The DDL path runs a transaction's DDL statements and its rows,
		// never its statement DML: stop rather than drop them.
		return &stage.ConflictError{GTID: gtid, What: "a transaction with both DDL and statement-format DML, which paraply cannot apply in the source's order: " +
			"apply it by hand and record it with paraply skip, or log the source at binlog_format=ROW"}
	}
	return nil
}

// pieces reads the pieces of a large entry again, one at a time: the
// ones in the relay log (Entry.Parts), then its last (Entry.Txn).
func (p *Preparer) pieces(e *relaylog.Entry) func(i int) (*binlog.RawTxn, error) {
	return func(i int) (*binlog.RawTxn, error) {
		if i >= len(e.Parts) {
			return e.Txn, nil
		}
		evs, err := p.ReadPart(e.Parts[i])
		if err != nil {
			return nil, err
		}
		return &binlog.RawTxn{Events: evs, Format: e.Txn.Format, Part: true}, nil
	}
}

// maxWritten bounds the tables Written lists.
const maxWritten = 10000

// noteWritten records that rows go to table name.
func (p *Preparer) noteWritten(name schema.TableName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.written == nil {
		p.written = map[schema.TableName]bool{}
	}
	if !p.written[name] && len(p.written) < maxWritten {
		p.written[name] = true
		p.fresh = append(p.fresh, name)
	}
}

// TakeWritten returns the target tables rows went to that it has not
// returned before (at most maxWritten in all): with several streams on
// one target, a table two of them write is the operator's choice, and
// paraply says so. Safe to call while Run runs.
func (p *Preparer) TakeWritten() []schema.TableName {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.fresh
	p.fresh = nil
	return out
}
