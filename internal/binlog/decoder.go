package binlog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
)

// Decoder turns raw transactions into Txns. It keeps go-mysql's parser,
// whose table maps live only inside one statement, so one Decoder can decode
// transactions of one stream in any order. Not safe for concurrent use.
type Decoder struct {
	// parser decodes every event but compressed transaction payloads,
	// and table maps without their optional metadata (see tableMap);
	// full decodes those.
	parser *replication.BinlogParser
	full   *replication.BinlogParser
	maps   fullTableMaps
	// tables are the table maps of the statement being decoded, by table
	// id; lazy those go-mysql's parser has not seen (see rowsfast.go).
	tables  map[uint64]*fullTableMap
	lazy    []Event
	rowsDec *rowsDecoder
	format  *Format
	// summary is set while DecodePieces runs: rows are counted, their
	// tables noted, and their images dropped.
	summary bool
	// pending is the context of the next statement (see
	// StatementContext); loads the LOAD DATA files being read, by file id.
	pending StatementContext
	loads   map[uint32][]byte
	// schema is the last statement's current database, which the next
	// ones of a stream most often share: kept rather than copied anew.
	schema string
}

// NewDecoder returns a Decoder. Values decode as the applier needs them:
// DECIMAL as exact strings, temporal types as strings, TIMESTAMP in UTC
// (the applier's sessions use time_zone '+00:00'), JSON as text. Rows of
// tables with MariaDB 5.3-format temporal columns need the columns'
// precision, which the binary log does not carry (SetPrecision).
func NewDecoder() *Decoder {
	d := &Decoder{rowsDec: &rowsDecoder{}, tables: map[uint64]*fullTableMap{}}
	d.parser = d.newParser()
	d.parser.SetTableMapOptionalMetaDecodeFunc(skipOptionalMeta)
	return d
}

func (d *Decoder) newParser() *replication.BinlogParser {
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(false) // the Framer verified it, with the in-use fix
	p.SetUseDecimal(false)
	p.SetParseTime(false)
	p.SetTimestampStringLocation(time.UTC)
	p.SetRenderJSONAsMySQLText(true)
	p.SetPayloadDecoderConcurrency(1)
	p.SetRowsEventDecodeFunc(d.rowsDec.decode) // inherited by compressed payloads' parsers
	return p
}

// Decode decodes every event of rt. Errors name the event's position.
func (d *Decoder) Decode(rt *RawTxn) (*Txn, error) {
	if len(rt.Events) == 0 {
		return nil, fmt.Errorf("binlog: empty transaction")
	}
	if err := d.useFormat(rt.Format); err != nil {
		return nil, posErr(rt.Events[0], err)
	}
	d.pending, d.loads = StatementContext{}, nil
	first, last := rt.Events[0], rt.Events[len(rt.Events)-1]
	t := &Txn{
		Start:    first.Pos,
		End:      last.Pos.Offset + int64(len(last.Data)),
		Bytes:    rt.Bytes(),
		ServerID: first.ServerID(),
	}
	if n := queryEvents(rt) - 1; n >= 2 {
		// A statement-format transaction: room for its statements at
		// once (all but BEGIN), rather than growing one by one.
		t.Statements = make([]Statement, 0, n)
	}
	if err := d.events(t, rt); err != nil {
		return nil, err
	}
	if t.Timestamp == 0 {
		t.Timestamp = int64(last.Timestamp()) * 1e6
	}
	t.settleDDLFlag()
	return t, nil
}

// queryEvents counts rt's query events, from their headers.
func queryEvents(rt *RawTxn) int {
	n := 0
	for _, e := range rt.Events {
		if t := e.Type(); t == replication.QUERY_EVENT || t == replication.MARIADB_QUERY_COMPRESSED_EVENT {
			n++
		}
	}
	return n
}

// settleDDLFlag: MariaDB flags a transaction's GTID as DDL when a stored
// function or procedure it calls ran DDL (SELECT f() where f creates a
// temporary table: main/sp.test). With no DDL statement of its own, the
// transaction is the statements it logged, applied as statement DML.
func (t *Txn) settleDDLFlag() {
	if !t.DDL || !t.StatementDML {
		return
	}
	for _, st := range t.Statements {
		if st.Kind == StmtDDL {
			return
		}
	}
	t.DDL = false
}

// events decodes the events of rt into t. Table maps go-mysql's parser
// has not seen are given to it before rt's bytes may be reused: a
// statement may go on in the next piece of a large transaction.
func (d *Decoder) events(t *Txn, rt *RawTxn) error {
	for _, ev := range rt.Events {
		if err := d.event(t, ev); err != nil {
			return posErr(ev, err)
		}
	}
	return d.flushLazy()
}

func (d *Decoder) useFormat(fm *Format) error {
	if fm == nil {
		return fmt.Errorf("%w: no format description before the transaction", ErrCorrupt)
	}
	if fm == d.format {
		return nil
	}
	d.parser.SetFlavor(fm.Flavor.String())
	if _, err := parseWith(d.parser, fm.Event); err != nil {
		return err
	}
	d.format = fm
	return d.forgetTableMaps()
}

// parse runs go-mysql's parser on one event. Events whose content a Txn
// does not take (an XID, the statement text annotating rows) it only
// checks, and returns nil for: go-mysql would allocate three objects for
// each.
func (d *Decoder) parse(ev Event) (*replication.BinlogEvent, error) {
	d.rowsDec.typ = ev.Type()
	d.rowsDec.mysql = d.format != nil && d.format.Flavor == FlavorMySQL
	switch ev.Type() {
	case replication.XID_EVENT:
		if n := len(ev.Data) - HeaderSize - d.checksumLen(); n < 8 {
			return nil, fmt.Errorf("%w: malformed event: an XID event of %d bytes, 8 expected", ErrCorrupt, n)
		}
		return nil, nil
	case replication.MARIADB_ANNOTATE_ROWS_EVENT:
		return nil, nil
	case replication.TABLE_MAP_EVENT:
		return d.tableMapOld(ev)
	case replication.TRANSACTION_PAYLOAD_EVENT:
		// The events inside are decoded by a parser that inherits the
		// hooks of the one given the payload: the full parser's, so that
		// their table maps keep their optional metadata.
		be, err := parseWith(d.full, ev)
		return be, d.rowsDec.cause(err)
	}
	be, err := parseWith(d.parser, ev)
	return be, d.rowsDec.cause(err)
}

// parseWith runs go-mysql's parser p on one event, turning its panics on
// malformed input into ErrCorrupt.
func parseWith(p *replication.BinlogParser, ev Event) (be *replication.BinlogEvent, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: malformed event: %v", ErrCorrupt, r)
		}
	}()
	be, err = p.Parse(ev.Data)
	if err != nil {
		var ee *replication.EventError
		if errors.As(err, &ee) {
			// Its message dumps the whole event body; the position is enough.
			return nil, fmt.Errorf("%w: %s", ErrCorrupt, shortLibraryError(ee.Err))
		}
		return nil, fmt.Errorf("%w: %s", ErrCorrupt, shortLibraryError(err.Error()))
	}
	return be, nil
}

// shortLibraryError cuts a go-mysql error message to its cause. A panic
// while decoding rows comes back as "parse rows event panic <cause>, data
// <event body>, parsed rows <rows decoded so far>, table map <...>": row
// data that can run to megabytes and does not belong in a log.
func shortLibraryError(msg string) string {
	if i := strings.Index(msg, ", data "); i >= 0 {
		msg = msg[:i]
	}
	const maxLen = 300
	if len(msg) > maxLen {
		msg = msg[:maxLen] + "..."
	}
	return msg
}

// checksumLen is how many bytes of checksum end each event.
func (d *Decoder) checksumLen() int {
	if d.format != nil && d.format.Checksum {
		return 4
	}
	return 0
}

// apply folds one decoded event into t (nothing if be is nil: parse took
// all there was).
func (d *Decoder) apply(t *Txn, be *replication.BinlogEvent) error {
	if be == nil {
		return nil
	}
	switch e := be.Event.(type) {
	case *replication.GtidTaggedLogEvent:
		d.mysqlGTID(t, &e.GTIDEvent, be.Header.EventType)
	case *replication.GTIDEvent:
		d.mysqlGTID(t, e, be.Header.EventType)
	case *replication.MariadbGTIDEvent:
		t.GTID = mariaGTID(e, be.Header.ServerID)
		t.Clock.CommitID = e.CommitID
		t.Clock.MariaFlags = e.Flags
		if e.IsDDL() {
			t.DDL = true
		}
	case *replication.QueryEvent:
		return d.query(t, be.Header, e)
	case *replication.RowsEvent:
		return d.rows(t, e, be.Header.EventType)
	case *replication.TransactionPayloadEvent:
		for _, inner := range e.Events {
			if err := d.apply(t, inner); err != nil {
				return err
			}
		}
	case *replication.XIDEvent, *replication.TableMapEvent, *replication.RowsQueryEvent,
		*replication.MariadbAnnotateRowsEvent:
	case *replication.IntVarEvent:
		// Context of the query event that follows, which tells DML from
		// DDL (a CREATE ... SELECT reads them too).
		d.addIntvar(e)
	case *replication.BeginLoadQueryEvent:
		t.StatementDML, t.LoadData = true, true
		return d.addLoadBlock(d.eventBody(be), true)
	case *replication.ExecuteLoadQueryEvent:
		return d.executeLoad(t, be.Header, d.eventBody(be))
	case *replication.GenericEvent:
		switch be.Header.EventType {
		case replication.XA_PREPARE_LOG_EVENT:
			xid, onePhase, err := xaPrepareXID(e.Data)
			if err != nil {
				return err
			}
			if !onePhase {
				t.XA, t.XID = XAPrepare, xid
			}
		case replication.RAND_EVENT:
			return d.addRand(d.eventBody(be))
		case replication.USER_VAR_EVENT:
			return d.addUserVar(d.eventBody(be))
		case replication.APPEND_BLOCK_EVENT:
			t.StatementDML, t.LoadData = true, true
			return d.addLoadBlock(d.eventBody(be), false)
		case replication.DELETE_FILE_EVENT:
			// The LOAD DATA failed on the source: its file is not read.
			t.StatementDML, t.LoadData = true, true
		default:
			return fmt.Errorf("%w %d (%s) inside a transaction", ErrUnknownEvent, byte(be.Header.EventType), be.Header.EventType)
		}
	default:
		return fmt.Errorf("%w: %s inside a transaction", ErrCorrupt, be.Header.EventType)
	}
	return nil
}

func (d *Decoder) mysqlGTID(t *Txn, e *replication.GTIDEvent, typ replication.EventType) {
	t.GTID = mysqlGTID(e, typ)
	if e.SequenceNumber > 0 {
		t.Clock.Logical = true
		t.Clock.LastCommitted = e.LastCommitted
		t.Clock.SequenceNumber = e.SequenceNumber
	}
	if e.OriginalCommitTimestamp > 0 {
		t.Timestamp = int64(e.OriginalCommitTimestamp)
	}
}

func (d *Decoder) query(t *Txn, h *replication.EventHeader, e *replication.QueryEvent) error {
	q := string(e.Query)
	if t.ThreadID == 0 {
		t.ThreadID = e.SlaveProxyID
	}
	switch {
	case isKeyword(q, "BEGIN"), isKeyword(q, "COMMIT"):
		return nil
	case isKeyword(q, "ROLLBACK") && !isRollbackToSavepoint(q):
		t.RolledBack = true // it ends the transaction (see Framer)
		return nil
	}
	switch xaVerb(q) {
	case "START", "END", "PREPARE":
		return nil // the bounds of the rows, like BEGIN
	case "COMMIT", "ROLLBACK":
		if xaOnePhase(q) {
			return nil // ends an ordinary transaction, like COMMIT
		}
		xid, err := parseXID(q)
		if err != nil {
			return err
		}
		t.XA, t.XID = XACommit, xid
		if xaVerb(q) == "ROLLBACK" {
			t.XA = XARollback
		}
		return nil
	}
	kind := ClassifyStatement(q)
	if d.schema != string(e.Schema) {
		d.schema = string(e.Schema)
	}
	st := Statement{Schema: d.schema, Query: q, Kind: kind, At: len(t.Rows), Session: parseQuerySession(e.StatusVars),
		When: h.Timestamp, ThreadID: e.SlaveProxyID, ErrorCode: e.ErrorCode, Context: d.takeContext()}
	t.Statements = append(t.Statements, st)
	switch kind {
	case StmtDDL:
		t.DDL = true
	case StmtDML:
		t.StatementDML = true
	}
	return nil
}

func (d *Decoder) rows(t *Txn, e *replication.RowsEvent, typ replication.EventType) error {
	h := rowsHeader{tableID: e.TableID, flags: e.Flags, columns: int(e.ColumnCount), bitmap1: e.ColumnBitmap1, bitmap2: e.ColumnBitmap2}
	// go-mysql decoded the rows with its copy of the Decoder's table map
	// (tableMap), whose compressed columns addRows decompresses.
	full := d.tables[e.TableID]
	if full != nil && (e.Table == nil || !bytes.Equal(full.tm.ColumnType, e.Table.ColumnType)) {
		full = nil
	}
	return d.addRows(t, typ, e.Table, full, h, e.Rows)
}

// addRows adds to t the rows of an event of type typ on table tm (nil if
// it has no table map), with header h and the row images decoded. ft is
// the Decoder's own decoding of tm, if it has it: its names, and its
// compressed columns, whose values are decompressed here.
func (d *Decoder) addRows(t *Txn, typ replication.EventType, tm *replication.TableMapEvent, ft *fullTableMap, h rowsHeader, images [][]any) error {
	if h.flags&RowsFlagStmtEnd != 0 {
		// The statement's table maps end with it, as in go-mysql's parser.
		clear(d.tables)
		d.dropLazy()
	}
	r := &Rows{Table: tm, Images: images, Flags: h.flags, PartialJSON: typ == replication.PARTIAL_UPDATE_ROWS_EVENT, names: ft}
	full := func(bm []byte) []byte {
		for i := 0; i < h.columns; i++ {
			if bm[i>>3]&(1<<(uint(i)&7)) == 0 {
				return bm
			}
		}
		return nil
	}
	switch rowsKind(typ) {
	case replication.EnumRowsEventTypeInsert:
		r.Op, r.After = Insert, full(h.bitmap1)
	case replication.EnumRowsEventTypeDelete:
		r.Op, r.Before = Delete, full(h.bitmap1)
	case replication.EnumRowsEventTypeUpdate:
		r.Op, r.Before, r.After = Update, full(h.bitmap1), full(h.bitmap2)
		if len(images)%2 != 0 {
			return fmt.Errorf("%w: update rows event with an odd number of images", ErrCorrupt)
		}
	default:
		return fmt.Errorf("%w: rows event of unknown kind", ErrCorrupt)
	}
	if tm == nil {
		return fmt.Errorf("%w: rows event for table id %d without a table map", ErrCorrupt, h.tableID)
	}
	if ft != nil && len(ft.compressed) > 0 {
		// Also while summing up a large transaction: a value that does
		// not decompress stops it here, not when its pieces apply.
		if err := ft.decompressRows(images); err != nil {
			return err
		}
	}
	if d.summary {
		t.noteRows(tm, r.Changes())
		return nil
	}
	t.Rows = append(t.Rows, r)
	return nil
}

// rowsKind is what rows events of type typ do, as go-mysql's
// RowsEvent.Type says, a partial update being an update.
func rowsKind(typ replication.EventType) replication.EnumRowsEventType {
	switch typ {
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		return replication.EnumRowsEventTypeInsert
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.PARTIAL_UPDATE_ROWS_EVENT:
		return replication.EnumRowsEventTypeUpdate
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return replication.EnumRowsEventTypeDelete
	}
	return replication.EnumRowsEventTypeUnknown
}

// DecodePieces decodes a large transaction, handed out in pieces by next
// (one piece in memory at a time; next returns nil after the last), into a
// Txn without row images: Large is set, the rows are counted (LargeRows)
// and their tables noted (LargeTables); everything else (GTID, clock,
// statements, XA) as Decode has it. Applying such a transaction reads the
// pieces again.
func (d *Decoder) DecodePieces(next func() (*RawTxn, error)) (*Txn, error) {
	d.summary = true
	defer func() { d.summary = false }()
	d.pending, d.loads = StatementContext{}, nil
	t := &Txn{Large: true}
	var last Event
	for {
		rt, err := next()
		if err != nil {
			return nil, err
		}
		if rt == nil {
			break
		}
		if len(rt.Events) == 0 {
			continue
		}
		if err := d.useFormat(rt.Format); err != nil {
			return nil, posErr(rt.Events[0], err)
		}
		if t.Bytes == 0 {
			first := rt.Events[0]
			t.Start, t.ServerID = first.Pos, first.ServerID()
		}
		if err := d.events(t, rt); err != nil {
			return nil, err
		}
		t.Bytes += rt.Bytes()
		last = rt.Events[len(rt.Events)-1]
	}
	if t.Bytes == 0 {
		return nil, fmt.Errorf("binlog: empty transaction")
	}
	t.End = last.Pos.Offset + int64(len(last.Data))
	if t.Timestamp == 0 {
		t.Timestamp = int64(last.Timestamp()) * 1e6
	}
	t.settleDDLFlag()
	return t, nil
}

// StmtKind classifies a statement found in a query event.
type StmtKind uint8

// Statement kinds.
const (
	StmtDML       StmtKind = iota + 1 // changes rows: INSERT, UPDATE, DELETE, LOAD, CALL, SELECT f(), DO f() ...
	StmtDDL                           // changes definitions or privileges
	StmtSavepoint                     // SAVEPOINT, ROLLBACK TO, RELEASE SAVEPOINT
	StmtOther                         // session statements (SET, USE)
	StmtControl                       // transaction bounds: BEGIN, COMMIT, ROLLBACK, XA ...
)

// ClassifyStatement tells what a statement logged in a query event does,
// from its first keyword (see statementBody). A SELECT or DO in the binary
// log calls a function that changes data: it is logged as a statement only
// then, so its rows are not in the log.
func ClassifyStatement(q string) StmtKind {
	switch {
	case isKeyword(q, "BEGIN"), isKeyword(q, "COMMIT"), isKeyword(q, "XA"),
		isKeyword(q, "ROLLBACK") && !isRollbackToSavepoint(q):
		return StmtControl
	}
	w := strings.ToUpper(firstWord(statementBody(q)))
	switch w {
	case "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "GRANT", "REVOKE",
		"ANALYZE", "OPTIMIZE", "REPAIR", "INSTALL", "UNINSTALL", "FLUSH", "CHECK":
		return StmtDDL
	case "SAVEPOINT", "RELEASE":
		return StmtSavepoint
	case "ROLLBACK":
		return StmtSavepoint // ROLLBACK TO (a plain ROLLBACK is control)
	case "SET", "USE":
		return StmtOther
	}
	return StmtDML
}
