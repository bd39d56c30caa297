package binlog

import (
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/replication"
)

// Most of a row-based transaction is table maps and rows events: a table
// map before every statement, then the statement's rows. go-mysql's parser
// allocates a header, an event and the event's fields for each, and
// decodes each table map again though its bytes repeat from one
// transaction to the next. The Decoder takes the common case itself:
//
//   - a table map whose bytes it decoded before (fullTableMaps) is looked
//     up, not parsed: it only notes it for the rows that follow (tables),
//     and for go-mysql's parser, which needs it only if one of those rows
//     events goes to go-mysql after all (lazy, see flushLazy);
//   - a rows event of the plain kinds (simpleEvent) on such a table, whose
//     header reads as expected and whose images are all simple columns
//     (simpleRows), is decoded here.
//
// Anything else, or anything that does not add up, goes to go-mysql, which
// decodes it or reports what is wrong with it. TestSimpleRowsAsGoMySQL and
// TestSimpleRowsDamagedAsGoMySQL compare both ways on real and damaged
// binlogs.

// event decodes one event into t.
func (d *Decoder) event(t *Txn, ev Event) error {
	typ := ev.Type()
	fast := !d.rowsDec.noSimple
	switch {
	case typ == replication.TABLE_MAP_EVENT && fast && d.cachedTableMap(ev):
		return nil
	case rowsEvent(typ):
		if fast {
			if ok, err := d.fastRows(t, ev); ok || err != nil {
				return err
			}
		}
		if err := d.knownTable(ev); err != nil {
			return err
		}
		fallthrough
	case typ == replication.TABLE_MAP_EVENT:
		if err := d.flushLazy(); err != nil {
			return err
		}
	}
	be, err := d.parse(ev)
	if err != nil {
		return err
	}
	return d.apply(t, be)
}

// rowsEvent reports whether events of type typ are rows events.
func rowsEvent(typ replication.EventType) bool {
	return rowsKind(typ) != replication.EnumRowsEventTypeUnknown
}

// cachedTableMap notes a table map decoded before, and reports whether it
// was.
func (d *Decoder) cachedTableMap(ev Event) bool {
	full, ok := d.maps[string(d.body(ev))]
	if !ok {
		return false
	}
	d.tables[full.tm.TableID] = full
	d.lazy = append(d.lazy, ev)
	return true
}

// flushLazy gives go-mysql's parser the table maps it has not seen, in
// their order, before it decodes a table map or rows event itself.
func (d *Decoder) flushLazy() error {
	for _, ev := range d.lazy {
		if _, err := d.tableMap(ev); err != nil {
			return posErr(ev, err)
		}
	}
	d.dropLazy()
	return nil
}

// dropLazy forgets the table maps go-mysql's parser has not seen: it does
// not need them once their statement ended.
func (d *Decoder) dropLazy() {
	clear(d.lazy) // they hold the events' bytes
	d.lazy = d.lazy[:0]
}

// knownTable checks that a rows event names a table mapped in its
// statement. go-mysql's parser would look in its own table maps, which
// miss the end of statements decoded here.
func (d *Decoder) knownTable(ev Event) error {
	n := d.tableIDLen(ev.Type())
	if len(ev.Data) < HeaderSize+n {
		return nil // go-mysql reports it
	}
	if id := readTableID(ev.Data[HeaderSize:], n); d.tables[id] == nil {
		return fmt.Errorf("%w: rows event for table id %d without a table map", ErrCorrupt, id)
	}
	return nil
}

// tableIDLen is the size of the table id in events of type typ: 4 bytes
// in the binlogs of MySQL 5.1.0-5.1.15, whose post-headers are 6 bytes.
func (d *Decoder) tableIDLen(typ replication.EventType) int {
	if lens := d.format.fde.EventTypeHeaderLengths; int(typ) > 0 && int(typ) <= len(lens) && lens[typ-1] == 6 {
		return 4
	}
	return tableIDLen
}

// fastRows decodes a rows event into t if it can (see above), and reports
// whether it did.
func (d *Decoder) fastRows(t *Txn, ev Event) (bool, error) {
	typ := ev.Type()
	if !simpleEvent(typ) || d.tableIDLen(typ) != tableIDLen || int(ev.Size()) != len(ev.Data) {
		return false, nil
	}
	h, ok := readRowsHeader(d.body(ev), typ)
	if !ok {
		return false, nil
	}
	ft := d.tables[h.tableID]
	if ft == nil || len(h.images) > 0 && !anyColumn(h.bitmap1, uint64(h.columns)) && !anyColumn(h.bitmap2, uint64(h.columns)) {
		return false, nil // go-mysql's path reports either
	}
	var keep []bool
	if f := d.rowsDec.columns; f != nil {
		keep = f(string(ft.tm.Schema), string(ft.tm.Table), h.columns)
	}
	images, ok := simpleRows(ft.tm, h.columns, h.bitmap1, h.bitmap2, h.update, h.images, keep)
	if !ok {
		return false, nil
	}
	d.rowsDec.simple++
	d.rowsDec.direct++
	return true, d.addRows(t, typ, ft.tm, ft, h, images)
}

// rowsHeader is what a rows event says before its row images.
type rowsHeader struct {
	tableID uint64
	flags   uint16
	columns int
	// bitmap1 selects the columns of the before images of updates and
	// deletes and of the after images of inserts; bitmap2 those of the
	// after images of updates.
	bitmap1, bitmap2 []byte
	update           bool
	images           []byte
}

// readRowsHeader reads the header of a rows event body (checksum cut) of
// a plain type, with a 6-byte table id, as go-mysql's DecodeHeader does.
// false if the bytes do not add up, or the event carries extra row data
// (MySQL's partition or NDB information), left to go-mysql.
func readRowsHeader(body []byte, typ replication.EventType) (rowsHeader, bool) {
	var h rowsHeader
	p := tableIDLen + 2
	if len(body) < p {
		return h, false
	}
	h.tableID = readTableID(body, tableIDLen)
	h.flags = binary.LittleEndian.Uint16(body[tableIDLen:])
	switch typ {
	case replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2:
		if len(body) < p+2 || binary.LittleEndian.Uint16(body[p:]) != 2 {
			return h, false
		}
		p += 2
	}
	columns, n, ok := packedInt(body[p:])
	if !ok || body[p] >= 0xfb || columns > uint64(len(body)) {
		return h, false
	}
	p += n
	h.columns = int(columns)
	size := (h.columns + 7) / 8
	h.update = rowsKind(typ) == replication.EnumRowsEventTypeUpdate
	if len(body) < p+size {
		return h, false
	}
	h.bitmap1, p = body[p:p+size], p+size
	if h.update {
		if len(body) < p+size {
			return h, false
		}
		h.bitmap2, p = body[p:p+size], p+size
	}
	h.images = body[p:]
	return h, true
}

// body is ev's body: what follows the header, the checksum cut.
func (d *Decoder) body(ev Event) []byte {
	body := ev.Data[HeaderSize:]
	return body[:max(0, len(body)-d.checksumLen())]
}
