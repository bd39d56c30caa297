package binlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// RawTxn is one source transaction as raw events, not yet decoded; or,
// for a transaction larger than Framer.PartBytes, one piece of it.
type RawTxn struct {
	Events []Event
	// Format is the format description in effect for these events.
	Format *Format
	// Part is set on a piece of a transaction that continues in the next
	// RawTxn; Parts, on the last piece, says how many pieces came before.
	Part  bool
	Parts int
}

// Bytes is the total size of the transaction's events.
func (t *RawTxn) Bytes() int {
	n := 0
	for _, e := range t.Events {
		n += len(e.Data)
	}
	return n
}

// framing says how the transaction being collected will end.
type framing uint8

const (
	idle framing = iota
	// afterGTID: a MySQL GTID event, or a MariaDB GTID event flagged
	// standalone, opened it: BEGIN, XA START, one statement or a payload
	// follows.
	afterGTID
	// explicit: BEGIN or XA START seen, or a MariaDB GTID event not flagged
	// standalone (which takes BEGIN's place): everything up to XID, COMMIT,
	// ROLLBACK, XA PREPARE or a closing XA COMMIT/ROLLBACK belongs to it,
	// savepoints, statement-format DML and a CREATE ... SELECT included.
	explicit
	implicit // no GTID, no BEGIN (binlogs from before 5.6): ends with its statement
	// afterStatement: an implicit transaction's statement was seen. MySQL
	// 5.0 and 5.1 logged an autocommit InnoDB statement as the query and
	// then an XID, without BEGIN, so the transaction ends at the next
	// event, which it includes if that is the XID.
	afterStatement
)

// Framer groups raw events into transactions. Feed it every event of a
// stream in order; it returns a RawTxn each time one is complete. It also
// follows format description events (see Format). A Framer is not safe for
// concurrent use.
type Framer struct {
	// PartBytes, when positive, bounds the memory a transaction holds: once
	// the events held of an unfinished transaction reach it, they are
	// returned by Next as a piece (RawTxn.Part), and the framer goes on
	// with the rest.
	PartBytes int

	format *Format
	state  framing
	cur    []Event
	// hint is the number of events of the last transaction: the next one
	// gets that much room at once (see collect).
	hint int
	// spare is the room for events of a transaction given back by
	// Recycle, which collect reuses.
	spare []Event
	ready []*RawTxn
	// probeCRC is set by a format description without checksums: the
	// event after it is checked for one anyway (see push).
	probeCRC bool
	// The pieces of the pending transaction: how many went out, where the
	// transaction began, and the bytes of cur[:counted].
	parts     int
	start     Pos
	counted   int
	heldBytes int
}

// NewFramer returns a Framer that has seen no format description yet.
func NewFramer() *Framer { return &Framer{} }

// Format is the format description in effect, nil before the first one.
func (f *Framer) Format() *Format { return f.format }

// SetFormat installs a format description read elsewhere (the relay log
// stores it once per segment).
func (f *Framer) SetFormat(fm *Format) { f.format = fm }

// Pending reports whether events of an unfinished transaction are held.
func (f *Framer) Pending() bool { return f.state != idle && f.state != afterStatement }

// Empty reports whether the framer holds none of the events pushed to it:
// each went out with a transaction Next returned, or was dropped (the
// format description's bytes it keeps are its own copy). The caller may
// then reuse the memory of those events.
func (f *Framer) Empty() bool { return len(f.cur) == 0 && len(f.ready) == 0 }

// PendingStart is where the unfinished transaction began.
func (f *Framer) PendingStart() Pos {
	if f.parts > 0 {
		return f.start
	}
	if len(f.cur) == 0 {
		return Pos{}
	}
	return f.cur[0].Pos
}

// Reset drops a partial transaction, as after a reconnect that will resend it.
func (f *Framer) Reset() {
	f.state = idle
	f.cur = nil
	f.parts, f.counted, f.heldBytes = 0, 0, 0
}

// cut returns what is held of the pending transaction as a piece when it
// reaches PartBytes.
func (f *Framer) cut() {
	if f.PartBytes <= 0 || !f.Pending() {
		f.counted, f.heldBytes = 0, 0
		return
	}
	if len(f.cur) < f.counted {
		f.counted, f.heldBytes = 0, 0 // a new transaction began
	}
	for ; f.counted < len(f.cur); f.counted++ {
		f.heldBytes += len(f.cur[f.counted].Data)
	}
	if f.heldBytes < f.PartBytes {
		return
	}
	if f.parts == 0 {
		f.start = f.cur[0].Pos
	}
	f.ready = append(f.ready, &RawTxn{Events: f.cur, Format: f.format, Part: true})
	f.parts++
	f.cur, f.counted, f.heldBytes = nil, 0, 0
}

// Next returns the next complete transaction, if one is ready. Call it
// until it returns nil after each Push and after End.
func (f *Framer) Next() *RawTxn {
	if len(f.ready) == 0 {
		return nil
	}
	t := f.ready[0]
	f.ready[0] = nil
	f.ready = f.ready[1:]
	return t
}

// End is called when the stream ends: it completes a transaction still
// waiting for a possible XID, and reports ErrTruncated if the stream stopped
// inside a transaction.
func (f *Framer) End() error {
	if f.state == afterStatement {
		f.finish(Event{})
	}
	if f.state != idle {
		return &PosError{Pos: f.PendingStart(), Err: fmt.Errorf("%w: the stream ends inside the transaction that starts here", ErrTruncated)}
	}
	return nil
}

// Push takes the next event; transactions it completes become available
// from Next. It returns an error naming ev's position when ev is corrupt or
// cannot appear where it does. The event's Data must not be modified
// afterwards, until the framer no longer holds it (see Empty).
func (f *Framer) Push(ev Event) error {
	if err := ev.checkHeader(); err != nil {
		return posErr(ev, err)
	}
	if f.state == afterStatement {
		if ev.Type() == replication.XID_EVENT {
			if f.format.Checksum {
				if err := ev.verifyCRC(); err != nil {
					return posErr(ev, err)
				}
			}
			f.finish(ev)
			return nil
		}
		f.finish(Event{})
	}
	if err := f.push(ev); err != nil {
		return err
	}
	f.cut()
	return nil
}

// push frames ev once any statement before it is settled (see Push).
func (f *Framer) push(ev Event) error {
	t := ev.Type()
	if t == replication.FORMAT_DESCRIPTION_EVENT {
		return f.pushFormat(ev)
	}
	if f.format == nil {
		// A replication stream starts with an artificial rotate event, sent
		// before the format description; heartbeats may come any time.
		if t == replication.ROTATE_EVENT || t == replication.HEARTBEAT_EVENT || t == replication.HEARTBEAT_LOG_EVENT_V2 {
			return nil
		}
		return posErr(ev, fmt.Errorf("%w: event before any format description event", ErrCorrupt))
	}
	if err := f.verify(ev); err != nil {
		return err
	}
	return f.pushEvent(ev, t)
}

// verify checks ev's checksum, and, when the format description announced
// none, that the first event after it does not end with one after all.
func (f *Framer) verify(ev Event) error {
	if f.format.Checksum {
		if err := ev.verifyCRC(); err != nil {
			return posErr(ev, err)
		}
	}
	if f.probeCRC {
		// Whether events carry checksums is read from the server version
		// and the algorithm byte of the format description, which only the
		// checksums themselves protect: one flipped bit there would have
		// every checksum read as event data. An event without a checksum
		// ends with its own CRC32 with probability 2^-32.
		f.probeCRC = false
		if ev.verifyCRC() == nil {
			return posErr(ev, fmt.Errorf("%w: the event ends with its CRC32, but the format description at %d announces no checksums (its server version or checksum algorithm is damaged)",
				ErrCorrupt, f.format.Event.Pos.Offset))
		}
	}
	return nil
}

// pushEvent frames ev, of type t, by its type: it opens, extends or ends
// the transaction being collected, or stands outside transactions.
func (f *Framer) pushEvent(ev Event, t replication.EventType) error {
	switch t {
	case replication.ROTATE_EVENT, replication.STOP_EVENT, replication.PREVIOUS_GTIDS_EVENT,
		replication.MARIADB_GTID_LIST_EVENT, replication.MARIADB_BINLOG_CHECKPOINT_EVENT:
		if f.state != idle {
			return posErr(ev, fmt.Errorf("%w: %s inside the transaction that started at %s", ErrCorrupt, t, f.PendingStart()))
		}
		return nil
	case replication.HEARTBEAT_EVENT, replication.HEARTBEAT_LOG_EVENT_V2, replication.IGNORABLE_EVENT:
		return nil
	case replication.INCIDENT_EVENT:
		return posErr(ev, fmt.Errorf("%w: incident event: the source lost events here (a replica must not continue past it)", ErrUnsupported))
	case replication.MARIADB_START_ENCRYPTION_EVENT:
		return posErr(ev, fmt.Errorf("%w: encrypted binlog", ErrUnsupported))
	case replication.XA_PREPARE_LOG_EVENT:
		// XA PREPARE ends the first half of an XA transaction; its XA
		// COMMIT or XA ROLLBACK comes later as a group of its own.
		if f.state != explicit {
			return posErr(ev, fmt.Errorf("%w: XA PREPARE outside an XA transaction", ErrCorrupt))
		}
		f.finish(ev)
		return nil
	case replication.GTID_EVENT, replication.ANONYMOUS_GTID_EVENT, replication.GTID_TAGGED_LOG_EVENT:
		return f.open(ev, afterGTID)
	case replication.MARIADB_GTID_EVENT:
		return f.openMariaGTID(ev)
	case replication.QUERY_EVENT, replication.MARIADB_QUERY_COMPRESSED_EVENT, replication.EXECUTE_LOAD_QUERY_EVENT:
		return f.pushQuery(ev)
	case replication.XID_EVENT:
		if f.state == idle {
			return posErr(ev, fmt.Errorf("%w: commit (XID) outside a transaction", ErrCorrupt))
		}
		f.finish(ev)
		return nil
	case replication.TRANSACTION_PAYLOAD_EVENT:
		// A MySQL 8 compressed transaction: the payload holds BEGIN, the
		// rows and the commit, so it completes the transaction.
		if f.state != afterGTID {
			return posErr(ev, fmt.Errorf("%w: transaction payload without a GTID event before it", ErrCorrupt))
		}
		f.finish(ev)
		return nil
	case replication.TABLE_MAP_EVENT, replication.ROWS_QUERY_EVENT, replication.MARIADB_ANNOTATE_ROWS_EVENT,
		replication.INTVAR_EVENT, replication.RAND_EVENT, replication.USER_VAR_EVENT,
		replication.BEGIN_LOAD_QUERY_EVENT,
		replication.APPEND_BLOCK_EVENT, replication.DELETE_FILE_EVENT:
		return f.add(ev)
	}
	return f.pushOther(ev, t)
}

// openMariaGTID opens a transaction with a MariaDB GTID event, which says
// itself what follows (sql/log_event.h, Gtid_log_event): a standalone
// statement (DDL, or a statement that is not transactional), or an event
// group that it opens in BEGIN's place and that runs to its XID, COMMIT or
// XA PREPARE.
func (f *Framer) openMariaGTID(ev Event) error {
	if len(ev.Data) <= HeaderSize+12 {
		return posErr(ev, fmt.Errorf("%w: GTID event of %d bytes", ErrCorrupt, len(ev.Data)))
	}
	if ev.Data[HeaderSize+12]&replication.BINLOG_MARIADB_FL_STANDALONE != 0 {
		return f.open(ev, afterGTID)
	}
	return f.open(ev, explicit)
}

// pushOther frames ev, of type t, which pushEvent does not name: a rows
// event, of any version, or an event the source says may be ignored.
// Any other is unknown.
func (f *Framer) pushOther(ev Event, t replication.EventType) error {
	if IsRowsEvent(t) {
		if err := f.add(ev); err != nil {
			return err
		}
		// Before 5.6 there was no GTID, and very old servers logged rows of
		// non-transactional tables without BEGIN: the statement end flag is
		// the only boundary then.
		if f.state == implicit && len(ev.Data) > HeaderSize+8 && RowsFlags(ev)&RowsFlagStmtEnd != 0 {
			f.finish(Event{})
			return nil
		}
		return nil
	}
	if ev.Flags()&replication.LOG_EVENT_IGNORABLE_F != 0 {
		return nil
	}
	return posErr(ev, fmt.Errorf("%w %d (%s)", ErrUnknownEvent, byte(t), t))
}

func (f *Framer) pushFormat(ev Event) error {
	if f.state != idle {
		return posErr(ev, fmt.Errorf("%w: format description inside the transaction that started at %s", ErrCorrupt, f.PendingStart()))
	}
	// Kept for as long as it is in effect, which may be longer than the
	// caller keeps ev's memory (see Empty).
	ev.Data = bytes.Clone(ev.Data)
	fm, err := ParseFormat(ev)
	if err != nil {
		return posErr(ev, err)
	}
	f.format = fm
	f.probeCRC = !fm.Checksum
	return nil
}

func (f *Framer) open(ev Event, how framing) error {
	if f.state != idle {
		return posErr(ev, fmt.Errorf("%w: a new transaction starts before the one at %s committed", ErrCorrupt, f.PendingStart()))
	}
	f.state = how
	f.cur = nil
	f.collect(ev)
	return nil
}

func (f *Framer) add(ev Event) error {
	if f.state == idle {
		f.state = implicit
	}
	f.collect(ev)
	return nil
}

// collect appends ev to the transaction being collected. A new one gets
// room for as many events as the last one had: grown event by event, its
// slice was a tenth of what the receiver allocated.
func (f *Framer) collect(ev Event) {
	if f.cur == nil {
		if n := max(f.hint, 4); cap(f.spare) >= n {
			f.cur, f.spare = f.spare, nil
		} else {
			f.cur = make([]Event, 0, n)
		}
	}
	f.cur = append(f.cur, ev)
}

// Recycle gives back t, returned by Next, once the caller is done with it
// (the receiver, once t is in the relay log): the framer reuses the room
// that held its events, and t holds none any more.
func (f *Framer) Recycle(t *RawTxn) {
	clear(t.Events)
	f.spare, t.Events = t.Events[:0], nil
}

func (f *Framer) pushQuery(ev Event) error {
	q := "LOAD DATA" // EXECUTE_LOAD_QUERY: a LOAD DATA statement
	if ev.Type() != replication.EXECUTE_LOAD_QUERY_EVENT {
		var err error
		if q, err = QueryText(ev, f.format); err != nil {
			return posErr(ev, err)
		}
	}
	xa := xaVerb(q)
	switch {
	case isKeyword(q, "BEGIN"), xa == "START":
		switch {
		case f.state == idle:
			f.state = explicit
			f.cur = nil
			f.collect(ev)
		case f.state == afterGTID, f.state == implicit, f.openedByMariaGTID():
			// (A MariaDB GTID event already stands for BEGIN; a BEGIN
			// right after it is the same one.)
			f.state = explicit
			f.cur = append(f.cur, ev)
		default:
			return posErr(ev, fmt.Errorf("%w: %s inside the transaction that started at %s", ErrCorrupt, firstWord(q), f.PendingStart()))
		}
		return nil
	case isKeyword(q, "COMMIT"), isKeyword(q, "ROLLBACK") && !isRollbackToSavepoint(q):
		if f.state == idle {
			return posErr(ev, fmt.Errorf("%w: %s outside a transaction", ErrCorrupt, firstWord(q)))
		}
		f.finish(ev)
		return nil
	case (xa == "COMMIT" || xa == "ROLLBACK") && f.state == explicit:
		// XA COMMIT ... ONE PHASE closes the XA transaction it is in.
		f.finish(ev)
		return nil
	}
	if f.state == explicit {
		f.collect(ev)
		return nil
	}
	// A statement on its own (DDL, or DML of a non-transactional engine in
	// statement format) is a whole transaction.
	if f.state == idle {
		f.cur = nil
	}
	f.collect(ev)
	if f.state == implicit || f.state == idle {
		f.state = afterStatement
		return nil
	}
	f.finish(Event{})
	return nil
}

// openedByMariaGTID reports whether the transaction being collected holds
// nothing yet but the MariaDB GTID event that opened it.
func (f *Framer) openedByMariaGTID() bool {
	return f.state == explicit && len(f.cur) == 1 && f.cur[0].Type() == replication.MARIADB_GTID_EVENT
}

// finish closes the current transaction with last (if it has data) and
// queues it for Next.
func (f *Framer) finish(last Event) {
	if last.Data != nil {
		f.collect(last)
	}
	f.ready = append(f.ready, &RawTxn{Events: f.cur, Format: f.format, Parts: f.parts})
	f.hint = min(len(f.cur), 256)
	f.cur = nil
	f.state = idle
	f.parts, f.counted, f.heldBytes = 0, 0, 0
}

// IsRowsEvent reports whether t is a rows event, of any version.
func IsRowsEvent(t replication.EventType) bool {
	switch t {
	case replication.WRITE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv0,
		replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
		replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2,
		replication.PARTIAL_UPDATE_ROWS_EVENT,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

// RowsFlags reads the flags of a rows event; the table id before them is 6
// bytes in every v4 binlog this package accepts.
func RowsFlags(ev Event) uint16 {
	b := ev.Data[HeaderSize+6:]
	return uint16(b[0]) | uint16(b[1])<<8
}

// SetRowsFlags sets flags in the rows event data (header included) and
// recomputes its CRC32 trailer when it has one.
func SetRowsFlags(data []byte, flags uint16, checksum bool) {
	f := binary.LittleEndian.Uint16(data[HeaderSize+6:]) | flags
	binary.LittleEndian.PutUint16(data[HeaderSize+6:], f)
	if checksum {
		n := len(data) - 4
		binary.LittleEndian.PutUint32(data[n:], crc32.ChecksumIEEE(data[:n]))
	}
}

// QueryText extracts the statement text of a query event without the
// checksum trailer.
func QueryText(ev Event, fm *Format) (string, error) {
	body := ev.Data[HeaderSize:]
	if fm.Checksum {
		body = body[:len(body)-4]
	}
	q := &replication.QueryEvent{}
	if err := safeDecode(q, body); err != nil {
		return "", fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if ev.Type() == replication.MARIADB_QUERY_COMPRESSED_EVENT {
		text, err := mysql.DecompressMariadbData(q.Query)
		if err != nil {
			return "", fmt.Errorf("%w: compressed query: %v", ErrCorrupt, err)
		}
		return string(text), nil
	}
	return string(q.Query), nil
}

// isKeyword reports whether q starts with keyword w (case-insensitive),
// followed by the end, a space or a semicolon.
func isKeyword(q, w string) bool {
	q = trimLeadingComments(q)
	if len(q) < len(w) || !strings.EqualFold(q[:len(w)], w) {
		return false
	}
	if len(q) == len(w) {
		return true
	}
	switch q[len(w)] {
	case ' ', '\t', '\n', '\r', ';', '/':
		return true
	}
	return false
}

// xaVerb returns the word after XA (START, END, PREPARE, COMMIT,
// ROLLBACK, RECOVER), upper case, or "" if q is not an XA statement.
func xaVerb(q string) string {
	if !isKeyword(q, "XA") {
		return ""
	}
	rest := trimLeadingComments(trimLeadingComments(q)[len("XA"):])
	return strings.ToUpper(firstWord(rest))
}

func isRollbackToSavepoint(q string) bool {
	q = trimLeadingComments(q)
	rest := trimLeadingComments(q[len("ROLLBACK"):])
	return isKeyword(rest, "TO")
}

func firstWord(q string) string {
	q = trimLeadingComments(q)
	for i, c := range q {
		if c == ' ' || c == '\t' || c == '\n' || c == ';' {
			return q[:i]
		}
	}
	return q
}

// trimLeadingComments drops white space and /* ... */ comments before the
// first keyword (servers prefix some statements with such comments).
func trimLeadingComments(q string) string {
	for {
		i := 0
		for i < len(q) && (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r') {
			i++
		}
		q = q[i:]
		if len(q) >= 2 && q[0] == '/' && q[1] == '*' && !(len(q) > 2 && q[2] == '!') {
			end := strings.Index(q[2:], "*/")
			if end < 0 {
				return q
			}
			q = q[end+4:]
			continue
		}
		return q
	}
}

// GTID decodes the transaction's GTID from its first event (zero when the
// transaction has none), without decoding the rest.
func (t *RawTxn) GTID() (GTID, error) {
	if len(t.Events) == 0 {
		return GTID{}, nil
	}
	ev := t.Events[0]
	body := ev.Data[HeaderSize:]
	if t.Format != nil && t.Format.Checksum {
		body = body[:len(body)-4]
	}
	switch ev.Type() {
	case replication.MARIADB_GTID_EVENT:
		// Read here, as go-mysql's MariadbGTIDEvent.Decode reads it (and
		// with its bounds), without allocating the event: every
		// transaction's GTID is read this way.
		if len(body) < 13 || body[12]&replication.BINLOG_MARIADB_FL_GROUP_COMMIT_ID != 0 && len(body) < 21 {
			return GTID{}, posErr(ev, fmt.Errorf("%w: GTID event of %d bytes", ErrCorrupt, len(ev.Data)))
		}
		return GTID{Flavor: FlavorMariaDB, Domain: binary.LittleEndian.Uint32(body[8:]), Server: ev.ServerID(),
			Seq: binary.LittleEndian.Uint64(body)}, nil
	case replication.GTID_EVENT, replication.GTID_TAGGED_LOG_EVENT:
		var e *replication.GTIDEvent
		if ev.Type() == replication.GTID_TAGGED_LOG_EVENT {
			te := &replication.GtidTaggedLogEvent{}
			if err := safeDecode(te, body); err != nil {
				return GTID{}, posErr(ev, fmt.Errorf("%w: %v", ErrCorrupt, err))
			}
			e = &te.GTIDEvent
		} else {
			e = &replication.GTIDEvent{}
			if err := safeDecode(e, body); err != nil {
				return GTID{}, posErr(ev, fmt.Errorf("%w: %v", ErrCorrupt, err))
			}
		}
		return mysqlGTID(e, ev.Type()), nil
	}
	return GTID{}, nil
}

func mariaGTID(e *replication.MariadbGTIDEvent, serverID uint32) GTID {
	return GTID{Flavor: FlavorMariaDB, Domain: e.GTID.DomainID, Server: serverID, Seq: e.GTID.SequenceNumber}
}

// mysqlGTID is the GTID of a MySQL GTID event; zero for an anonymous one.
func mysqlGTID(e *replication.GTIDEvent, typ replication.EventType) GTID {
	if typ == replication.ANONYMOUS_GTID_EVENT || e.GNO <= 0 {
		return GTID{}
	}
	g := GTID{Flavor: FlavorMySQL, Seq: uint64(e.GNO), Tag: e.Tag.String()}
	copy(g.SID[:], e.SID)
	return g
}
