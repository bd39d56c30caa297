package binlog

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// MariaDB 5.3 to 10.0 stored TIME(n), DATETIME(n) and TIMESTAMP(n) with
// n > 0 in formats of their own ("hires"), and servers since keep them in
// tables created then, or while mysql56_temporal_format=OFF. Their table
// map says TIME, DATETIME or TIMESTAMP (the type codes of the MySQL 5.0
// formats, which precision 0 columns still use) with no metadata, so the
// binary log does not say how many bytes their values take: go-mysql reads
// the 5.0 sizes, and a TIME(1) row (4 bytes) reads as two rows, or panics.
// MariaDB's replica takes the precision of its own column (its
// make_conversion_table_field passes the target column's decimals), and so
// does the Decoder, from a PrecisionFunc: rowsDecoder.decode reads such
// columns with a private copy of the table map that types them as BIT of
// their byte size (go-mysql reads BIT big-endian, as these formats are),
// and convertOld turns the numbers into the text go-mysql gives the
// MySQL 5.6 formats (TIME2, DATETIME2, TIMESTAMP2) of the same precision,
// so that nothing after the Decoder tells them apart. The 5.0 TIME
// format is read here too: go-mysql reads its signed value as unsigned.
//
// Where the precision is not known (no PrecisionFunc, or it does not know
// the table or gives a column no temporal precision), the rows are read
// as precision 0 only where they show that no other precision can be
// (zeroPrecision): no byte of the event says whether the column keeps
// fractional digits, and a wrong guess can decode to other rows without
// any error. Otherwise they are not decoded, and the error, which wraps
// ErrCorrupt (the event cannot be decoded), names the table and the
// column. Binary logs written by MySQL are the exception: MySQL has no
// such formats, so its old columns are read as the 5.0 formats they are.

// PrecisionFunc tells a Decoder the fractional seconds digits of the
// columns of a table, which the binary log leaves out for old-format
// temporal columns. digits holds one entry per column in row-image order
// (schema.Catalog.TemporalPrecision): the precision of a TIME, DATETIME or
// TIMESTAMP column, -1 for other columns; nil when the table is not
// known. skip reports that the table's rows are not used (a filter leaves
// them out): their images are then not decoded and their Rows carry none.
type PrecisionFunc func(schema, table string) (digits []int, skip bool)

// SetPrecision sets where the Decoder learns the precision of old-format
// temporal columns (nil: nowhere). f is called while Decode runs, for
// rows events on tables with such columns, in stream order.
func (d *Decoder) SetPrecision(f PrecisionFunc) { d.rowsDec.precision = f }

// SetPrecision is Decoder.SetPrecision for the Reader's decoder.
func (r *Reader) SetPrecision(f PrecisionFunc) { r.decoder.SetPrecision(f) }

// Byte sizes of the hires formats by precision (MariaDB's
// Type_handler_time::m_hires_bytes and its kin), and of a TIMESTAMP's
// fraction after its 4 bytes of seconds (m_sec_part_bytes).
var (
	hiresTimeBytes     = [7]int{3, 4, 4, 5, 5, 5, 6}
	hiresDatetimeBytes = [7]int{5, 6, 6, 7, 7, 7, 8}
	timestampFracBytes = [7]int{0, 1, 1, 2, 2, 3, 3}
)

// pow10 are the powers of ten up to 10^6.
var pow10 = [7]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

// oldColumn is an old-format temporal column that convertOld converts.
type oldColumn struct {
	index  int
	tp     byte // MYSQL_TYPE_TIME, _DATETIME or _TIMESTAMP
	digits int  // its precision
}

// oldTable is how the rows of a table with old-format temporal columns
// are decoded: with tm, the table map with those columns as BIT, then
// convertOld on cols.
type oldTable struct {
	tm   *replication.TableMapEvent
	cols []oldColumn
}

// oldFormat plans the decoding of the rows of e, whose header ends at pos
// in data. It returns nil when go-mysql reads the table's columns right as
// they are; skip when the rows are not to be decoded (see PrecisionFunc);
// an error wrapping ErrCorrupt when a column's precision is not known and
// the rows do not show it is 0 (see zeroPrecision).
func (r *rowsDecoder) oldFormat(e *replication.RowsEvent, pos int, data []byte) (plan *oldTable, skip bool, err error) {
	tm := e.Table
	n := min(len(tm.ColumnType), len(tm.ColumnMeta), int(tm.ColumnCount))
	first := -1
	for i := range n {
		if isOldTemporal(tm.ColumnType[i]) {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, false, nil
	}
	var digits []int
	switch {
	case r.mysql:
		// MySQL writes only the 5.0 formats under these type codes,
		// whatever precision the target's column has.
		digits = make([]int, n)
	case r.precision != nil:
		digits, skip = r.precision(string(tm.Schema), string(tm.Table))
		if skip {
			return nil, true, nil
		}
	}
	plan = &oldTable{}
	var unknown []int
	for i := first; i < n; i++ {
		tp := tm.ColumnType[i]
		if !isOldTemporal(tp) {
			continue
		}
		d := -1
		if i < len(digits) {
			d = digits[i]
		}
		switch {
		case d < 0 || d > 6:
			unknown = append(unknown, i)
			d = 0 // if zeroPrecision says so
		case d == 0 && tp != mysql.MYSQL_TYPE_TIME:
			continue // the 5.0 DATETIME and TIMESTAMP, which go-mysql reads right
		}
		plan.cols = append(plan.cols, oldColumn{index: i, tp: tp, digits: d})
	}
	if len(unknown) > 0 {
		if i, ok := zeroPrecision(e, pos, data, unknown); !ok {
			return nil, false, unknownPrecision(tm, i, digits != nil)
		}
		plan.cols = slices.DeleteFunc(plan.cols, func(c oldColumn) bool {
			return c.digits == 0 && c.tp != mysql.MYSQL_TYPE_TIME
		})
	}
	if len(plan.cols) == 0 {
		return nil, false, nil
	}
	sizes := make(map[int]int, len(plan.cols))
	for _, c := range plan.cols {
		sizes[c.index] = oldBytes(c.tp, c.digits)
	}
	plan.tm = bitColumns(tm, sizes)
	return plan, false, nil
}

// bitColumns returns a copy of tm whose columns in sizes are BIT of the
// bytes it gives them.
func bitColumns(tm *replication.TableMapEvent, sizes map[int]int) *replication.TableMapEvent {
	cp := *tm
	cp.ColumnType = slices.Clone(tm.ColumnType)
	cp.ColumnMeta = slices.Clone(tm.ColumnMeta)
	for i, n := range sizes {
		// BIT's metadata is whole bytes << 8 | extra bits.
		cp.ColumnType[i] = mysql.MYSQL_TYPE_BIT
		cp.ColumnMeta[i] = uint16(n) << 8
	}
	return &cp
}

// maxTrials bounds the decodings zeroPrecision tries.
const maxTrials = 64

// zeroPrecision reports whether the rows of e (header ending at pos in
// data) show that the old-format temporal columns in cols, whose
// precision is not known, can be read as precision 0: the rows decode
// with their 5.0 sizes, and with no other combination of the sizes other
// precisions take (or with ones that decode to the same rows: the columns
// are NULL or left out of every image). The server wrote sizes that
// decode, so those are the 5.0 sizes, which only precision 0 takes for
// TIME and TIMESTAMP; a DATETIME(6) takes the 8 bytes of the 5.0
// DATETIME, so a DATETIME column must hold no value. Otherwise it returns
// the first column that stays in doubt.
func zeroPrecision(e *replication.RowsEvent, pos int, data []byte, cols []int) (int, bool) {
	tm := e.Table
	choices := make([][]int, len(cols)) // sizes by column, the 5.0 size first
	trials := 1
	for k, i := range cols {
		choices[k] = oldSizes(tm.ColumnType[i])
		trials *= len(choices[k])
	}
	if trials > maxTrials || hasJSON(tm) {
		// Too many to try; or JSON, whose values a wrong reading could
		// make go-mysql walk forever (see checkJSONColumns). MariaDB
		// logs JSON as text.
		return cols[0], false
	}
	// go-mysql slices values past the end of what it is given when the
	// bytes behind are there: a wrong size would read into the checksum.
	data = data[:len(data):len(data)]
	sizes := make(map[int]int, len(cols))
	decode := func(pick []int) ([][]any, bool) {
		for k, i := range cols {
			sizes[i] = choices[k][pick[k]]
		}
		orig := e.Table
		e.Table = bitColumns(orig, sizes)
		err := e.DecodeData(pos, data)
		rows := e.Rows
		e.Table, e.Rows, e.SkippedColumns = orig, nil, nil
		return rows, err == nil
	}
	pick := make([]int, len(cols))
	zero, ok := decode(pick)
	if !ok {
		return cols[0], false
	}
	for k, i := range cols {
		if tm.ColumnType[i] != mysql.MYSQL_TYPE_DATETIME {
			continue
		}
		for _, row := range zero {
			if i < len(row) && row[i] != nil {
				return cols[k], false
			}
		}
	}
	for next(pick, choices) {
		if rows, ok := decode(pick); ok && !reflect.DeepEqual(rows, zero) {
			for k := range pick {
				if pick[k] != 0 {
					return cols[k], false
				}
			}
		}
	}
	return 0, true
}

// next steps pick, one index into each of choices, to the next
// combination; false after the last.
func next(pick []int, choices [][]int) bool {
	for k := range pick {
		if pick[k]++; pick[k] < len(choices[k]) {
			return true
		}
		pick[k] = 0
	}
	return false
}

// oldSizes are the sizes a column of old type tp takes, at precision 0
// first, then the other sizes of its hires format.
func oldSizes(tp byte) []int {
	switch tp {
	case mysql.MYSQL_TYPE_TIME:
		return []int{3, 4, 5, 6}
	case mysql.MYSQL_TYPE_DATETIME:
		return []int{8, 6, 7} // DATETIME(6) takes 8 too
	}
	return []int{4, 5, 6, 7}
}

func hasJSON(tm *replication.TableMapEvent) bool {
	return slices.Contains(tm.ColumnType, mysql.MYSQL_TYPE_JSON)
}

func isOldTemporal(tp byte) bool {
	return tp == mysql.MYSQL_TYPE_TIME || tp == mysql.MYSQL_TYPE_DATETIME || tp == mysql.MYSQL_TYPE_TIMESTAMP
}

// oldBytes is the size of a value of type tp with precision digits, as
// oldFormat reads it (the 5.0 TIME's 3 bytes at precision 0; a DATETIME
// or TIMESTAMP of precision 0 is left to go-mysql).
func oldBytes(tp byte, digits int) int {
	switch tp {
	case mysql.MYSQL_TYPE_TIME:
		return hiresTimeBytes[digits]
	case mysql.MYSQL_TYPE_DATETIME:
		return hiresDatetimeBytes[digits]
	}
	return 4 + timestampFracBytes[digits]
}

// unknownPrecision is the error for column i of tm, whose precision is
// not known; known says whether the table is.
func unknownPrecision(tm *replication.TableMapEvent, i int, known bool) error {
	table := quoteName(string(tm.Schema), string(tm.Table))
	col := columnLabel(tm, i)
	why := "the table is not known"
	if known {
		why = "its table has no temporal column there"
	}
	// The shortest message that says what and why: a log line.
	return fmt.Errorf("%w: %s %s: an old-format %s (mysql56_temporal_format=OFF) whose precision the binary log does not give, and %s: "+
		"its rows cannot be decoded without the table's schema", ErrCorrupt, table, col, oldTypeName(tm.ColumnType[i]), why)
}

func oldTypeName(tp byte) string {
	switch tp {
	case mysql.MYSQL_TYPE_TIME:
		return "TIME"
	case mysql.MYSQL_TYPE_DATETIME:
		return "DATETIME"
	}
	return "TIMESTAMP"
}

// convertOld replaces the numbers the plan's BIT columns decoded to in
// rows by their temporal text. A value that is not such a number (NULL,
// a column the image leaves out) stays as it is.
func (p *oldTable) convertOld(rows [][]any) {
	for _, row := range rows {
		for _, c := range p.cols {
			if c.index >= len(row) {
				continue
			}
			v, ok := row[c.index].(int64)
			if !ok {
				continue
			}
			row[c.index] = oldValue(c.tp, c.digits, uint64(v))
		}
	}
}

// oldValue is the text of the stored value v (its bytes read big-endian)
// of an old-format column of type tp with precision digits, as go-mysql
// writes a MySQL 5.6 format value of the same precision.
func oldValue(tp byte, digits int, v uint64) string {
	switch tp {
	case mysql.MYSQL_TYPE_TIME:
		if digits == 0 {
			return oldTime0(v)
		}
		return hiresTime(digits, v)
	case mysql.MYSQL_TYPE_DATETIME:
		return hiresDatetime(digits, v)
	}
	return hiresTimestamp(digits, v)
}

// oldTime0 reads the 5.0 TIME: a signed little-endian 3-byte integer
// ±HHHMMSS (v holds the bytes big-endian).
func oldTime0(v uint64) string {
	le := int64(v>>16&0xff | v&0xff00 | (v&0xff)<<16)
	if le&0x800000 != 0 {
		le -= 1 << 24
	}
	sign := ""
	if le < 0 {
		sign, le = "-", -le
	}
	return fmt.Sprintf("%s%02d:%02d:%02d", sign, le/10000, le/100%100, le%100)
}

// hiresTime reads MariaDB 5.3's TIME(digits): the time in units of
// 10^-digits seconds, plus that of 838:59:59 and one second so that it is
// never negative (TIME_MAX_VALUE_SECONDS+1: sql_type.cc's zero point).
func hiresTime(digits int, v uint64) string {
	zero := (838*3600 + 59*60 + 59 + 1) * pow10[digits]
	x := int64(v) - zero
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	frac, secs := x%pow10[digits], x/pow10[digits]
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, secs/3600, secs/60%60, secs%60)
	if frac != 0 {
		// go-mysql's TIME2 shows digits only when they are not all 0.
		s += "." + fraction(frac, digits)
	}
	return s
}

// hiresDatetime reads MariaDB 5.3's DATETIME(digits): the microseconds
// of pack_time (((((year*13+month)*32+day)*24+hour)*60+minute)*60+second)
// in units of 10^-digits seconds.
func hiresDatetime(digits int, v uint64) string {
	frac, t := v%uint64(pow10[digits]), v/uint64(pow10[digits])
	second, t := t%60, t/60
	minute, t := t%60, t/60
	hour, t := t%24, t/24
	day, t := t%32, t/32
	month, year := t%13, t/13
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%s", year, month, day, hour, minute, second, fraction(int64(frac), digits))
}

// hiresTimestamp reads MariaDB 5.3's TIMESTAMP(digits): 4 bytes of
// seconds since the epoch, then the fraction in units of 10^-digits
// seconds. The text is in UTC, as the Decoder's go-mysql gives
// TIMESTAMPs (NewDecoder), and all zeros for the zero timestamp.
func hiresTimestamp(digits int, v uint64) string {
	fb := 8 * timestampFracBytes[digits]
	secs, frac := v>>fb, int64(v&(1<<fb-1))
	if secs == 0 {
		return "0000-00-00 00:00:00." + fraction(frac, digits)
	}
	usec := frac * pow10[6-digits]
	return time.Unix(int64(secs), usec*1000).UTC().Format("2006-01-02 15:04:05." + "000000"[:digits])
}

// fraction writes frac, a count of 10^-digits seconds, with digits digits.
func fraction(frac int64, digits int) string {
	s := strconv.FormatInt(frac, 10)
	for len(s) < digits {
		s = "0" + s
	}
	return s
}

// quoteName is db.table quoted as SQL writes it, for messages.
func quoteName(db, table string) string { return quoteIdent(db) + "." + quoteIdent(table) }

// quoteIdent quotes an identifier with backticks, doubling those inside.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
