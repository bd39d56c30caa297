// Package prepare is the stage between the relay log and the coordinator:
// it decodes each transaction, follows its DDL in the schema catalog,
// computes its writeset and dependencies, applies the filters, routes
// statements that need their source connection's session, and pairs the
// halves of XA transactions. It sends stage.Prepared, in stream order.
package prepare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/filter"
	"github.com/paraply/paraply/internal/relaylog"
	"github.com/paraply/paraply/internal/retry"
	"github.com/paraply/paraply/internal/schema"
	"github.com/paraply/paraply/internal/sqlgen"
	"github.com/paraply/paraply/internal/stage"
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
	tables   map[tableKey]*sqlgen.Table

	mu    sync.Mutex // guards stats
	stats Stats
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

type tableKey struct {
	def     *schema.Table
	name    schema.TableName
	columns uint64
}

// Run reads from src and sends to out until the end of the run, ctx is
// done or an error. The end of a run flows downstream with the data: at
// the end of src (io.EOF: binlog files, all read) or at Until, Run closes
// out and returns nil, and the coordinator, its input closed, finishes
// what it holds. On ctx or an error, out stays open.
func (p *Preparer) Run(ctx context.Context, src EntrySource, out chan<- *stage.Prepared) error {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	p.decoder = binlog.NewDecoder()
	p.decoder.SetPrecision(p.precision)
	p.extractor = deptrack.NewExtractor(p.Catalog)
	p.extractor.Explain = true // names the tables of conflicting keys
	p.tracker = deptrack.NewTracker(p.Mode, p.History)
	p.temps = newTemporaries(p.LostTemporary)
	p.tables = map[tableKey]*sqlgen.Table{}
	p.prepared = map[string]*stage.Txn{}
	passed := p.Start // the source position after the last transaction passed on
	for {
		e, err := src.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			close(out)
			return nil
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
		pr, err := p.prepare(e)
		if err != nil {
			return err
		}
		if p.UntilGTID && p.beyond(pr) {
			p.stopBefore(pr, passed)
			close(out)
			return nil
		}
		if !p.hold(ctx, pr) {
			return nil
		}
		select {
		case out <- pr:
			passed = pr.Resume
		case <-ctx.Done():
			return nil
		}
		if p.Until != nil && binlog.Covers(p.Flavor, passed, p.Until) {
			close(out)
			return nil
		}
	}
}

// stopBefore says where --until-gtid stops, before pr: after the last
// transaction passed on. That is Until itself, unless the source
// interleaves several domains and one went past its position before
// another reached its own: MariaDB's replica would go on in the others;
// paraply stops (it commits in one order) and says so.
func (p *Preparer) stopBefore(pr *stage.Prepared, passed string) {
	p.Logger.Info("stopping before a transaction beyond --until-gtid", "gtid", pr.Txn.GTID, "at", passed)
	if !binlog.Covers(p.Flavor, passed, p.Until) {
		p.Logger.Warn("--until-gtid: stopping before a transaction beyond the position in its domain, before another domain reached its own",
			"until", p.Until.String(), "stopped_at", passed)
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
	p.count(pr.Deps)
}

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

// resolveTables resolves the SQL-generation view of each table the
// transaction's rows (or a large one's table maps) write.
func (p *Preparer) resolveTables(it *stage.Txn) error {
	txn := it.Txn
	maps := txn.LargeTables
	var names []schema.TableName
	if txn.Large {
		names = make([]schema.TableName, len(maps))
		for i, tm := range maps {
			names[i] = schema.TableName{Schema: string(tm.Schema), Name: string(tm.Table)}
		}
	} else {
		maps, names = make([]*replication.TableMapEvent, len(txn.Rows)), make([]schema.TableName, len(txn.Rows))
		for i, r := range txn.Rows {
			maps[i], names[i] = r.Table, schema.TableName{Schema: r.Schema(), Name: r.Name()}
		}
	}
	tables := make([]*sqlgen.Table, len(maps))
	for i, tm := range maps {
		t, err := p.table(tm, names[i])
		switch {
		case err == nil:
			tables[i] = t
		case p.SQLOnly:
			return &stage.ConflictError{GTID: it.GTID, Table: names[i].String(), What: "cannot apply rows", Err: err}
		}
		// On the binlog path the target's row applier decides, as a
		// native replica's does (it takes extra columns at the end, for
		// one); the table, when known, only names the row of a conflict.
	}
	if it.Large != nil {
		it.Large.Tables = tables
	} else {
		it.Tables = tables
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

// beyond reports whether pr comes after Until in its domain.
func (p *Preparer) beyond(pr *stage.Prepared) bool {
	if p.Until == nil || pr.Txn.GTID == "" {
		return false
	}
	one, err := binlog.ParseGTIDSet(p.Flavor, pr.Txn.GTID)
	return err == nil && !p.Until.Contain(one)
}

// hold waits until pr's source commit time plus Delay has passed (false
// when ctx ends first). A transaction the target has is not held.
func (p *Preparer) hold(ctx context.Context, pr *stage.Prepared) bool {
	if p.Delay <= 0 || pr.Skip {
		return true
	}
	due := time.UnixMicro(pr.Txn.Txn.Timestamp).Add(p.Delay)
	if p.ClockOffset != nil {
		if off, ok := p.ClockOffset(); ok {
			due = due.Add(off)
		}
	}
	wait := time.Until(due)
	if wait <= 0 {
		return true
	}
	p.mu.Lock()
	p.stats.DelayedUntil = due
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.stats.DelayedUntil = time.Time{}
		p.mu.Unlock()
	}()
	return retry.Sleep(ctx, wait)
}

// settleXA pairs the halves of an XA transaction. An XA PREPARE is held
// (the source has not committed it); its XA COMMIT takes its rows, tables
// and raw events, so that one target transaction applies them and records
// both GTIDs; an XA ROLLBACK records both and applies nothing. A held
// prepare stays in memory until then.
func (p *Preparer) settleXA(pr *stage.Prepared) error {
	it := pr.Txn
	switch it.Txn.XA {
	case binlog.XAPrepare:
		pr.Hold = true
		p.prepared[it.Txn.XID] = it
	case binlog.XACommit, binlog.XARollback:
		held := p.prepared[it.Txn.XID]
		if held == nil {
			return &stage.ConflictError{GTID: it.GTID, What: fmt.Sprintf("%s %s: its XA PREPARE was not read (it comes before where replication started)", it.Txn.XA, it.Txn.XID)}
		}
		delete(p.prepared, it.Txn.XID)
		pr.Releases = held.Seq
		it.Also = []string{held.GTID}
		if it.Txn.XA == binlog.XACommit {
			merged := *it.Txn
			merged.Rows, merged.Statements, merged.StatementDML = held.Txn.Rows, held.Txn.Statements, held.Txn.StatementDML
			merged.Large, merged.LargeRows, merged.LargeTables, merged.LargeTableRows = held.Txn.Large, held.Txn.LargeRows, held.Txn.LargeTables, held.Txn.LargeTableRows
			it.Txn, it.Raw, it.Tables, it.Large = &merged, held.Raw, held.Tables, held.Large
			it.Bytes += held.Bytes
		}
	}
	return nil
}

// followDDL applies the transaction's DDL to the catalog and says which
// objects it changes.
func (p *Preparer) followDDL(txn *binlog.Txn) (*stage.DDL, error) {
	ddl := &stage.DDL{Statements: txn.Statements}
	known := true
	for _, st := range txn.Statements {
		if st.Kind != binlog.StmtDDL {
			continue
		}
		var session schema.Session // the target's defaults
		if p.SourceSession {
			session = schema.Session{CollationServer: int(st.Session.Server), DefaultUTF8MB4: int(st.Session.DefaultUTF8MB4)}
		}
		ch, err := p.Catalog.ApplyDDLIn(session, st.Schema, st.Query)
		if err != nil {
			known = false // tables are marked unknown; fingerprint everything
			p.Logger.Warn("DDL not followed in the schema catalog: the tables it may touch are barriers, and the SQL path uses the binlog's column metadata for them, until paraply restarts and reads them from the target",
				"gtid", txn.GTID.String(), "tables", ch.Tables, "err", err)
		}
		for _, s := range ch.Schemas {
			ddl.Objects = append(ddl.Objects, checkpoint.Object{Schema: s})
		}
		for _, t := range ch.Tables {
			ddl.Objects = append(ddl.Objects, checkpoint.Object{Schema: t.Schema, Table: t.Name})
		}
	}
	if !known {
		ddl.Objects = nil
	}
	p.extractor.Invalidate()
	clear(p.tables)
	return ddl, nil
}

// precision is the decoder's binlog.PrecisionFunc: the precision of the
// catalog's columns, the target's, which MariaDB's replica also takes for
// old-format temporal columns, for the table the filters write to (skip
// for one they leave out, which the target may not have).
func (p *Preparer) precision(db, table string) ([]int, bool) {
	name, kept := p.targetName(db, table)
	if !kept {
		return nil, true
	}
	return p.Catalog.TemporalPrecision(name.Schema, name.Name)
}

// targetName is the name a source table has on the target under the
// filters (--rewrite-db), and false if they leave its rows out. The
// filter decides on decoded transactions, which this one is not yet: it
// is asked about a row of the table.
func (p *Preparer) targetName(db, table string) (schema.TableName, bool) {
	name := schema.TableName{Schema: db, Name: table}
	if p.Filter == nil {
		return name, true
	}
	tm := &replication.TableMapEvent{Schema: []byte(db), Table: []byte(table)}
	probe := &binlog.Txn{Rows: []*binlog.Rows{{Op: binlog.Insert, Table: tm}}}
	if _, err := p.Filter.Txn(probe); err != nil {
		return name, true // statements only fail it; there are none
	}
	if len(probe.Rows) == 0 {
		return name, false
	}
	return schema.TableName{Schema: probe.Rows[0].Schema(), Name: probe.Rows[0].Name()}, true
}

// table resolves the SQL-generation view of the table a table map names
// (name, as strings).
func (p *Preparer) table(tm *replication.TableMapEvent, name schema.TableName) (*sqlgen.Table, error) {
	def := p.Catalog.Table(name.Schema, name.Name)
	k := tableKey{def: def, name: name, columns: tm.ColumnCount}
	if t, ok := p.tables[k]; ok {
		return t, nil
	}
	t, err := sqlgen.NewTableIn(p.Catalog, def, tm)
	if err != nil {
		return nil, err
	}
	p.tables[k] = t
	return t, nil
}
