package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// go-mysql (v1.16.0) turns most malformed rows events into errors or
// panics, which Decoder.parse recovers. Two kinds it cannot survive: a
// rows event whose images take no bytes makes it loop forever, and a JSON
// value whose offsets point back into itself makes it recurse until the
// stack overflows, a fatal error that no recover catches. Servers write
// neither; a damaged event, or one in a binlog without checksums, can hold
// either. rowsDecoder.decode, the parser's rows decoder (it also decodes
// the rows inside compressed transaction payloads), checks for both before
// the rows are decoded, by decodeSimple when the event's images are plain,
// else by go-mysql.

// errUnsafeRows wraps what rowsDecoder.decode rejects; Decoder.parse reports
// it as ErrCorrupt.
var errUnsafeRows = errors.New("rows event go-mysql cannot decode safely")

// rowsDecoder is a Decoder's rows decoder (go-mysql's RowsEventDecodeFunc,
// its decode method).
type rowsDecoder struct {
	// typ is the type of the event the Decoder parses: rows events inside
	// a compressed transaction payload see the payload's, and go to
	// go-mysql.
	typ replication.EventType
	// noSimple turns decodeSimple off, and with it the Decoder's own
	// reading of table maps and rows events (tests compare the two).
	noSimple bool
	// simple counts the events decodeSimple decoded, direct those of them
	// the Decoder decoded without go-mysql (fastRows).
	simple, direct int
	// precision gives the precision of old-format temporal columns, and
	// mysql is set when the events are a MySQL server's, which has none
	// (see oldtemporal.go).
	precision PrecisionFunc
	mysql     bool
	// columns, if set, says which columns the reader needs (SetColumns).
	columns ColumnsFunc
	// err is what decode returned last, for Decoder.parse: go-mysql's
	// parser keeps only its text.
	err error
}

func (r *rowsDecoder) decode(e *replication.RowsEvent, data []byte) error {
	r.err = r.decodeRows(e, data)
	return r.err
}

// decodeRows is decode, for the rows of any table: old-format columns are
// read as oldFormat plans.
func (r *rowsDecoder) decodeRows(e *replication.RowsEvent, data []byte) error {
	pos, err := e.DecodeHeader(data)
	if err != nil {
		return err
	}
	// A partial JSON update (type unknown here) starts every after image
	// with a value-options field, so it always makes progress.
	if pos < len(data) && e.Type() != replication.EnumRowsEventTypeUnknown &&
		!anyColumn(e.ColumnBitmap1, e.ColumnCount) && !anyColumn(e.ColumnBitmap2, e.ColumnCount) {
		return fmt.Errorf("%w: its column bitmaps select none of %d columns, so its rows take no bytes", errUnsafeRows, e.ColumnCount)
	}
	old, skip, err := r.oldFormat(e, pos, data)
	if err != nil || skip {
		return err // skip: no images (see PrecisionFunc)
	}
	if old != nil {
		orig := e.Table
		e.Table = old.tm
		defer func() {
			e.Table = orig // what the Rows refer to
			old.convertOld(e.Rows)
		}()
	}
	if err := r.decodeImages(e, pos, data); err != nil {
		// go-mysql's message names neither the table nor the column.
		return fmt.Errorf("rows of %s: %w", quoteName(string(e.Table.Schema), string(e.Table.Table)), err)
	}
	return nil
}

// decodeImages decodes the row images of e, whose header ends at pos.
func (r *rowsDecoder) decodeImages(e *replication.RowsEvent, pos int, data []byte) error {
	if err := checkJSONColumns(e, pos, data); err != nil {
		return err
	}
	if !r.noSimple && simpleEvent(r.typ) && decodeSimple(e, pos, data) {
		r.simple++
		return nil
	}
	return e.DecodeData(pos, data)
}

// cause returns err, the error of go-mysql's parser, as decode returned
// it if that wraps ErrCorrupt (go-mysql keeps only its text, cut short;
// parseWith reports the rest as ErrCorrupt), and forgets decode's error.
func (r *rowsDecoder) cause(err error) error {
	if err != nil && errors.Is(r.err, ErrCorrupt) {
		err = r.err
	}
	r.err = nil
	return err
}

// anyColumn reports whether bitmap has a bit set for one of n columns.
func anyColumn(bitmap []byte, n uint64) bool {
	for i := uint64(0); i < n && int(i>>3) < len(bitmap); i++ {
		if bitmap[i>>3]&(1<<(i&7)) != 0 {
			return true
		}
	}
	return false
}

// checkJSONColumns decodes the rows once with the table's JSON columns
// read as BLOBs (same length prefix, raw bytes) and checks that go-mysql's
// walk of each JSON value ends. In the after images of a partial update a
// value is a JSON diff or a whole document, depending on a bit this pass
// cannot see, so both readings must end.
func checkJSONColumns(e *replication.RowsEvent, pos int, data []byte) error {
	orig := e.Table
	n := 0
	for i, t := range orig.ColumnType {
		switch {
		case t == mysql.MYSQL_TYPE_JSON:
			n++
		case t == mysql.MYSQL_TYPE_STRING && i < len(orig.ColumnMeta) && orig.ColumnMeta[i] >= 256 &&
			byte(orig.ColumnMeta[i]>>8)|0x30 == mysql.MYSQL_TYPE_JSON:
			// go-mysql takes a STRING column's real type from its metadata,
			// where servers put ENUM, SET or STRING, never JSON.
			return fmt.Errorf("%w: the table map gives string column %d the real type JSON", errUnsafeRows, i)
		}
	}
	if n == 0 {
		return nil
	}
	blobs := *orig
	blobs.ColumnType = make([]byte, 0, len(orig.ColumnType)+n)
	for _, t := range orig.ColumnType {
		if t == mysql.MYSQL_TYPE_JSON {
			t = mysql.MYSQL_TYPE_BLOB
		}
		blobs.ColumnType = append(blobs.ColumnType, t)
	}
	// JsonColumnCount sizes a partial update's bitmap of JSON columns; it
	// counts every entry of ColumnType, the rows only the first
	// ColumnCount.
	for range n {
		blobs.ColumnType = append(blobs.ColumnType, mysql.MYSQL_TYPE_JSON)
	}
	e.Table = &blobs
	err := e.DecodeData(pos, data)
	e.Table = orig
	rows := e.Rows
	e.Rows, e.SkippedColumns = nil, nil
	if err != nil {
		// Read as BLOBs, JSON values take the bytes they take read as
		// JSON, unless their length prefix is not 1 to 4 bytes long, which
		// no server writes; the decode fails for the rest as it would have.
		return err
	}
	partial := e.Type() == replication.EnumRowsEventTypeUnknown
	for r, row := range rows {
		for i, v := range row {
			b, ok := v.([]byte)
			if !ok || i >= len(orig.ColumnType) || orig.ColumnType[i] != mysql.MYSQL_TYPE_JSON {
				continue
			}
			if !jsonWalkEnds(b) || (partial && r%2 == 1 && !jsonDiffWalkEnds(b)) {
				return fmt.Errorf("%w: the JSON value of column %d refers back into itself", errUnsafeRows, i)
			}
		}
	}
	return nil
}

// jsonDiffWalkEnds is jsonWalkEnds for the value of a partial update's
// JSON diff (operation, path, value), read as go-mysql reads it.
func jsonDiffWalkEnds(b []byte) bool {
	if len(b) < 1 || b[0] > byte(replication.JsonDiffOperationRemove) {
		return true // go-mysql rejects the operation
	}
	if replication.JsonDiffOperation(b[0]) == replication.JsonDiffOperationRemove {
		return true // no value
	}
	// Where go-mysql's reading panics (and the panic is recovered), the
	// walk ends.
	b = b[1:]
	pathLen, n, ok := packedInt(b)
	if !ok || uint64(len(b)-n) < pathLen {
		return true
	}
	b = b[n+int(pathLen):]
	valueLen, n, ok := packedInt(b)
	if !ok || uint64(len(b)-n) < valueLen {
		return true
	}
	return jsonWalkEnds(b[n : n+int(valueLen)])
}

// packedInt reads a length-encoded integer as mysql.LengthEncodedInt does;
// ok is false where that would read past b.
func packedInt(b []byte) (v uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	switch b[0] {
	case 0xfc:
		n = 3
	case 0xfd:
		n = 4
	case 0xfe:
		n = 9
	default:
		n = 1
	}
	if len(b) < n {
		return 0, 0, false
	}
	v, _, _ = mysql.LengthEncodedInt(b)
	return v, n, true
}

// jsonWalkEnds follows a MySQL binary JSON document the way go-mysql's
// decoder does and reports whether that walk ends. go-mysql follows the
// offset of every non-inline value without checking that it points past
// the container's header, so an offset of 0 recurses forever, and offsets
// shared between entries multiply the work. An intact document stores
// each value once, after its container's header, and nests at most 100
// deep (MySQL's limit), so its walk visits fewer containers than it has
// bytes.
func jsonWalkEnds(doc []byte) bool {
	if len(doc) < 1 {
		return true
	}
	budget := len(doc)
	var walk func(tp byte, d []byte, depth int) bool
	walk = func(tp byte, d []byte, depth int) bool {
		var small, object bool
		switch tp {
		case replication.JSONB_SMALL_OBJECT:
			small, object = true, true
		case replication.JSONB_LARGE_OBJECT:
			object = true
		case replication.JSONB_SMALL_ARRAY:
			small = true
		case replication.JSONB_LARGE_ARRAY:
		default:
			return true // a scalar: no offsets to follow
		}
		if budget--; budget < 0 || depth > 100 {
			return false
		}
		off := 4
		if small {
			off = 2
		}
		// From here on, where go-mysql stops with an error, so does the walk.
		if len(d) < 2*off {
			return true
		}
		count, size := jsonCount(d, small), jsonCount(d[off:], small)
		if len(d) < size {
			return true
		}
		keyEntry, valueEntry := off+2, off+1
		header := 2*off + count*valueEntry
		if object {
			header += count * keyEntry
		}
		if header > size {
			return true
		}
		entries := 2 * off
		if object {
			entries += count * keyEntry
		}
		for i := range count {
			entry := entries + i*valueEntry
			vt := d[entry]
			if jsonInline(vt, small) {
				continue
			}
			vo := jsonCount(d[entry+1:], small)
			if len(d) < vo {
				return true
			}
			if !walk(vt, d[vo:], depth+1) {
				return false
			}
		}
		return true
	}
	return walk(doc[0], doc[1:], 0)
}

func jsonCount(d []byte, small bool) int {
	if small {
		return int(binary.LittleEndian.Uint16(d))
	}
	return int(binary.LittleEndian.Uint32(d))
}

// jsonInline reports whether a value of type tp is stored in its entry.
func jsonInline(tp byte, small bool) bool {
	switch tp {
	case replication.JSONB_INT16, replication.JSONB_UINT16, replication.JSONB_LITERAL:
		return true
	case replication.JSONB_INT32, replication.JSONB_UINT32:
		return !small
	}
	return false
}
