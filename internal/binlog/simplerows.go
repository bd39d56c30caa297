package binlog

import (
	"encoding/binary"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-mysql-org/go-mysql/utils"
)

// go-mysql's RowsEvent.DecodeData builds, for every row image, a map of the
// table's unsigned columns and a slice of the columns the image skips, a
// large share of the preparer's row decoding on OLTP tables
// (docs/benchmark.md, "The measurements behind the defaults"). A table whose columns are all
// integers and strings (CHAR, VARCHAR, BINARY, VARBINARY), as many OLTP
// tables are, has its images read here instead, value by value with
// go-mysql's own functions, so the values are the ones DecodeData gives
// (TestSimpleRowsAsGoMySQL compares them on real binlogs). Any other
// column type, a compressed event, or bytes that do not add up, and
// DecodeData decodes the event (and reports what is wrong with it).
// SkippedColumns is left empty: nothing here reads it.

// simpleEvent reports whether events of type typ carry plain row images
// (not compressed, not partial JSON updates, not the v0 of MySQL 5.1.0-5.1.15).
func simpleEvent(typ replication.EventType) bool {
	switch typ {
	case replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2:
		return true
	}
	return false
}

// simpleColumn reports whether a column of type tp and metadata meta is an
// integer or a string whose value decodeSimple reads.
func simpleColumn(tp byte, meta uint16) bool {
	switch tp {
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		return true
	case mysql.MYSQL_TYPE_STRING:
		_, ok := stringLength(meta)
		return ok
	}
	return intWidth(tp) > 0
}

// intWidth is the bytes an integer of type tp takes; 0 for other types.
func intWidth(tp byte) int {
	switch tp {
	case mysql.MYSQL_TYPE_TINY:
		return 1
	case mysql.MYSQL_TYPE_SHORT:
		return 2
	case mysql.MYSQL_TYPE_INT24:
		return 3
	case mysql.MYSQL_TYPE_LONG:
		return 4
	case mysql.MYSQL_TYPE_LONGLONG:
		return 8
	}
	return 0
}

// stringLength is the maximum length in bytes of a STRING column from its
// metadata, which also holds its real type; false when that is not STRING
// (ENUM and SET are logged as STRING).
func stringLength(meta uint16) (int, bool) {
	if meta < 256 {
		return int(meta), true
	}
	b0, b1 := uint8(meta>>8), uint8(meta&0xFF)
	if b0&0x30 != 0x30 {
		// Lengths above 255 keep two of their bits in the type byte.
		return int(uint16(b1) | uint16((b0&0x30)^0x30)<<4), b0|0x30 == mysql.MYSQL_TYPE_STRING
	}
	return int(b1), b0 == mysql.MYSQL_TYPE_STRING
}

// decodeSimple decodes the rows of e, whose header ends at pos in data,
// if its table's columns are all simple; it reports whether it did.
func decodeSimple(e *replication.RowsEvent, pos int, data []byte) bool {
	// go-mysql's header may end past data (its bitmaps are sliced beyond
	// the event's length when the event is damaged): then no images.
	rows, ok := simpleRows(e.Table, int(e.ColumnCount), e.ColumnBitmap1, e.ColumnBitmap2,
		e.Type() == replication.EnumRowsEventTypeUpdate, data[min(pos, len(data)):], nil)
	if ok {
		e.Rows = rows
	}
	return ok
}

// simpleRows decodes the row images in data of a rows event on table t
// with n columns and the given column bitmaps (bitmap2 only for updates,
// whose after images follow their before images), if the table's columns
// are all simple; false if they are not or the bytes do not add up. With
// keep, only the columns it sets get their values (see ColumnsFunc).
func simpleRows(t *replication.TableMapEvent, n int, bitmap1, bitmap2 []byte, update bool, data []byte, keep []bool) ([][]any, bool) {
	if n > len(t.ColumnType) || n > len(t.ColumnMeta) || len(bitmap1) < (n+7)/8 {
		return nil, false
	}
	for i := range n {
		if !simpleColumn(t.ColumnType[i], t.ColumnMeta[i]) {
			return nil, false
		}
	}
	if update && len(bitmap2) < (n+7)/8 {
		return nil, false
	}
	rows := make([][]any, 0, 2)
	for pos := 0; pos < len(data); {
		row, m, ok := decodeSimpleImage(t, n, bitmap1, data[pos:], keep)
		if !ok {
			return nil, false
		}
		rows, pos = append(rows, row), pos+m
		if update {
			if row, m, ok = decodeSimpleImage(t, n, bitmap2, data[pos:], keep); !ok {
				return nil, false
			}
			rows, pos = append(rows, row), pos+m
		}
	}
	return rows, true
}

// decodeSimpleImage decodes one row image of the columns set in bitmap and
// returns it with the bytes it took; with keep, the values of the columns
// keep does not set are only stepped over (left nil).
func decodeSimpleImage(t *replication.TableMapEvent, n int, bitmap, data []byte, keep []bool) ([]any, int, bool) {
	present := 0
	for i := range n {
		if bitSet(bitmap, i) {
			present++
		}
	}
	pos := (present + 7) / 8
	if pos > len(data) {
		return nil, 0, false
	}
	nulls := data[:pos]
	row := make([]any, n)
	// The signedness bitmap has a bit per integer column, images or not.
	k, integers := 0, 0
	for i := range n {
		tp := t.ColumnType[i]
		unsigned := false
		if intWidth(tp) > 0 {
			unsigned = bitSetMSB(t.SignednessBitmap, integers)
			integers++
		}
		if !bitSet(bitmap, i) {
			continue
		}
		null := bitSet(nulls, k)
		k++
		if null {
			continue
		}
		if keep != nil && (i >= len(keep) || !keep[i]) {
			m, ok := simpleLen(data[pos:], tp, t.ColumnMeta[i])
			if !ok {
				return nil, 0, false
			}
			pos += m
			continue
		}
		v, m, ok := simpleValue(data[pos:], tp, t.ColumnMeta[i], unsigned)
		if !ok {
			return nil, 0, false
		}
		row[i], pos = v, pos+m
	}
	return row, pos, true
}

// simpleValue decodes one integer or string as go-mysql's decodeValue
// does.
func simpleValue(data []byte, tp byte, meta uint16, unsigned bool) (any, int, bool) {
	switch tp {
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		return simpleString(data, int(meta))
	case mysql.MYSQL_TYPE_STRING:
		length, _ := stringLength(meta)
		return simpleString(data, length)
	}
	n := intWidth(tp)
	if n == 0 || len(data) < n {
		return nil, 0, false
	}
	return intValue(data, tp, unsigned), n, true
}

// simpleLen is the bytes simpleValue would read of data, without the
// value.
func simpleLen(data []byte, tp byte, meta uint16) (int, bool) {
	max := int(meta)
	switch tp {
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
	case mysql.MYSQL_TYPE_STRING:
		max, _ = stringLength(meta)
	default:
		n := intWidth(tp)
		return n, n > 0 && len(data) >= n
	}
	head, l, ok := stringSpan(data, max)
	return head + l, ok
}

// intValue is the integer at the start of data, of go-mysql's Go type for
// tp and signedness.
func intValue(data []byte, tp byte, unsigned bool) any {
	switch {
	case tp == mysql.MYSQL_TYPE_TINY && unsigned:
		return mysql.ParseBinaryUint8(data)
	case tp == mysql.MYSQL_TYPE_TINY:
		return mysql.ParseBinaryInt8(data)
	case tp == mysql.MYSQL_TYPE_SHORT && unsigned:
		return mysql.ParseBinaryUint16(data)
	case tp == mysql.MYSQL_TYPE_SHORT:
		return mysql.ParseBinaryInt16(data)
	case tp == mysql.MYSQL_TYPE_INT24 && unsigned:
		return mysql.ParseBinaryUint24(data)
	case tp == mysql.MYSQL_TYPE_INT24:
		return mysql.ParseBinaryInt24(data)
	case tp == mysql.MYSQL_TYPE_LONG && unsigned:
		return mysql.ParseBinaryUint32(data)
	case tp == mysql.MYSQL_TYPE_LONG:
		return mysql.ParseBinaryInt32(data)
	case unsigned:
		return mysql.ParseBinaryUint64(data)
	}
	return mysql.ParseBinaryInt64(data)
}

// simpleString reads a string of at most max bytes behind its length (one
// byte below 256, else two). Like go-mysql's, the string shares the
// event's bytes, which the transaction holds as long as its rows.
func simpleString(data []byte, max int) (any, int, bool) {
	head, l, ok := stringSpan(data, max)
	if !ok {
		return nil, 0, false
	}
	return utils.ByteSliceToString(data[head : head+l]), head + l, true
}

// stringSpan reads the length in front of a string of at most max bytes
// (one byte below 256, else two): the bytes it takes and the string's;
// false when data does not hold them.
func stringSpan(data []byte, max int) (head, l int, ok bool) {
	switch {
	case max < 256 && len(data) >= 1:
		head, l = 1, int(data[0])
	case max >= 256 && len(data) >= 2:
		head, l = 2, int(binary.LittleEndian.Uint16(data))
	default:
		return 0, 0, false
	}
	return head, l, head+l <= len(data)
}

// bitSet reports bit i of a bitmap whose bits go from the low end of each
// byte (column and null bitmaps).
func bitSet(bitmap []byte, i int) bool { return bitmap[i>>3]&(1<<(uint(i)&7)) != 0 }

// bitSetMSB reports bit i of a bitmap whose bits go from the high end of
// each byte (the table map's signedness); false past its end.
func bitSetMSB(bitmap []byte, i int) bool {
	return i>>3 < len(bitmap) && bitmap[i>>3]&(0x80>>(uint(i)&7)) != 0
}
