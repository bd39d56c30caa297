package sqlgen

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/paraply/paraply/internal/schema"
)

// encoding is how values of a column are passed to the driver.
type encoding uint8

const (
	encInt     encoding = iota + 1 // int64, or uint64 for UNSIGNED values logged as negative
	encFloat                       // float64
	encBit                         // uint64
	encText                        // string in the connection's character set (utf8mb4)
	encBytes                       // []byte, sent as _binary'...'
	encPadded                      // []byte padded with 0x00 to the column's length
	encConvert                     // []byte, placeholder CONVERT(? USING cs)
	encEnum                        // int64 index
	encSet                         // int64 bitmask (uint64 if the 64th member is set)
	encJSON                        // MySQL JSON: string
	encYear                        // int64 1901..2155, or the string "0000"
)

// prepare derives how to pass values of the column, whose binary log type
// is tp with metadata meta, from its type and character set.
func (c *Column) prepare(tp byte, meta uint16) error {
	c.quoted = schema.QuoteIdent(c.Name)
	var length int
	c.Type, length = realType(tp, meta)
	c.ph, c.wherePh = "?", "?"
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY:
		c.enc, c.bits = encInt, 8
	case mysql.MYSQL_TYPE_SHORT:
		c.enc, c.bits = encInt, 16
	case mysql.MYSQL_TYPE_INT24:
		c.enc, c.bits = encInt, 24
	case mysql.MYSQL_TYPE_LONG:
		c.enc, c.bits = encInt, 32
	case mysql.MYSQL_TYPE_LONGLONG:
		c.enc, c.bits = encInt, 64
	case mysql.MYSQL_TYPE_YEAR:
		c.enc = encYear
	case mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE:
		c.enc = encFloat
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		c.enc, c.stamped = encText, true
	case mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL,
		mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		c.enc = encText
	case mysql.MYSQL_TYPE_BIT:
		c.enc = encBit
	case mysql.MYSQL_TYPE_ENUM:
		c.enc = encEnum
	case mysql.MYSQL_TYPE_SET:
		c.enc = encSet
	case mysql.MYSQL_TYPE_JSON:
		// MySQL's JSON type: a string compared with a JSON column is a JSON
		// string scalar, never equal to an object or array.
		c.enc, c.wherePh = encJSON, "CAST(? AS JSON)"
	case mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_VECTOR:
		c.enc = encBytes
	default:
		if !isString(c.Type) {
			return fmt.Errorf("column %s: binary log type %d is not supported", c.quoted, c.Type)
		}
		return c.prepareString(length)
	}
	return nil
}

// zeroTimestamp is how go-mysql prints a TIMESTAMP of second 0.
const zeroTimestamp = "0000-00-00 00:00:00"

// epochFraction reports whether s, a value of column c, is a TIMESTAMP in
// the epoch's first second with a fraction ('1970-01-01 00:00:00.000001'
// UTC), which go-mysql prints as "0000-00-00 00:00:00.000001": only second
// 0 without a fraction is the zero value.
func (c *Column) epochFraction(s string) bool {
	if c.Type != mysql.MYSQL_TYPE_TIMESTAMP2 || !strings.HasPrefix(s, zeroTimestamp+".") {
		return false
	}
	return strings.Trim(s[len(zeroTimestamp)+1:], "0") != ""
}

// prepareString handles CHAR, VARCHAR, TEXT and their binary kin by
// character set. length is a CHAR column's length in bytes.
func (c *Column) prepareString(length int) error {
	switch c.Charset {
	case "utf8mb4", "utf8mb3", "ascii":
		c.enc, c.exact = encText, "CAST(? AS BINARY)"
	case "binary", "":
		// "" is a fixed-length binary type without a character set:
		// MariaDB's UUID, INET4, INET6.
		c.enc = encBytes
		if c.Type == mysql.MYSQL_TYPE_STRING {
			// The server strips trailing 0x00 bytes from BINARY(n) values
			// in row images; a WHERE must compare the padded value.
			c.enc, c.size = encPadded, length
		}
	default:
		if !isName(c.Charset) || (c.Collation != "" && !isName(c.Collation)) {
			return fmt.Errorf("column %s: invalid character set %q or collation %q", c.quoted, c.Charset, c.Collation)
		}
		c.enc, c.exact = encConvert, "?"
		c.ph = "CONVERT(? USING " + c.Charset + ")"
		c.wherePh = c.ph
		if c.Collation != "" {
			c.wherePh += " COLLATE " + c.Collation
		}
	}
	return nil
}

// isName reports whether s is a plain character set or collation name that
// can go into SQL unquoted.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

// value converts v, a value of column c as go-mysql decodes it, to what the
// driver is given for the column's placeholder. The result is nil, int64,
// uint64, float64, string or []byte: the types go-sql-driver interpolates.
// When v already has the right type it is returned as is (no allocation).
//
//	nil                               → nil (NULL)
//	int8/16/32/64                     → int64; UNSIGNED and negative (a table map
//	                                    without signedness) → uint64 of the column's width
//	uint8/16/32                       → int64; uint64 → uint64
//	YEAR int                          → int64, but 0 → "0000" (YEAR(2) reads 0 as 2000)
//	float32                           → float64(v), exact, so FLOAT <=> ? compares the stored value
//	float64                           → float64
//	BIT int64                         → uint64
//	ENUM int64                        → int64 index; SET int64 → int64 bitmask (uint64 if negative)
//	DECIMAL and temporal strings      → string
//	utf8mb4/utf8mb3/ascii string/[]byte → string
//	binary string/[]byte              → []byte; BINARY(n), UUID, INET6 padded with 0x00 to n
//	other character sets              → []byte (placeholder CONVERT(? USING cs))
//	GEOMETRY, VECTOR []byte           → []byte
//	MySQL JSON string/[]byte          → string; *replication.JsonDiff → ErrPartialJSON
func value(c *Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if x, ok := convert(c, v); ok {
		return x, nil
	}
	if _, ok := v.(*replication.JsonDiff); ok {
		return nil, fmt.Errorf("column %s: %w", c.quoted, ErrPartialJSON)
	}
	return nil, fmt.Errorf("column %s: %w: unexpected %T value for binary log type %d", c.quoted, ErrMismatch, v, c.Type)
}

// convert is value for a v of a type the column's encoding takes; false
// for any other type.
func convert(c *Column, v any) (any, bool) {
	switch c.enc {
	case encInt:
		return intValue(c, v)
	case encYear:
		// Decoded as 0 or 1901..2155. The number 0 is the year 2000 to a
		// YEAR(2) column; the string "0000" is 0000 to both kinds.
		if x, ok := intValue(c, v); ok && x == int64(0) {
			return "0000", true
		}
		return intValue(c, v)
	case encFloat:
		return floatValue(v)
	case encBit:
		if x, ok := v.(int64); ok {
			return uint64(x), true
		}
	case encEnum:
		if _, ok := v.(int64); ok {
			return v, true
		}
	case encSet:
		if x, ok := v.(int64); ok {
			if x < 0 {
				return uint64(x), true
			}
			return v, true
		}
	case encText, encJSON:
		return textValue(c, v)
	case encBytes, encConvert:
		return bytesValue(v)
	case encPadded:
		return paddedValue(c, v)
	}
	return nil, false
}

// intValue is convert for an integer column.
func intValue(c *Column, v any) (any, bool) {
	switch x := v.(type) {
	case int64:
		if x < 0 && c.Unsigned && c.bits > 0 {
			return c.unsigned(x), true
		}
		return v, true
	case int32:
		return c.signed(int64(x)), true
	case int16:
		return c.signed(int64(x)), true
	case int8:
		return c.signed(int64(x)), true
	case int:
		return c.signed(int64(x)), true
	case uint64:
		return v, true
	case uint32:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint8:
		return int64(x), true
	}
	return nil, false
}

// floatValue is convert for a FLOAT or DOUBLE column.
func floatValue(v any) (any, bool) {
	switch x := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(x), true
	}
	return nil, false
}

// textValue is convert for a column passed as a string. A partial JSON
// value is not one (value says why).
func textValue(c *Column, v any) (any, bool) {
	switch x := v.(type) {
	case string:
		if c.epochFraction(x) {
			// go-mysql prints a TIMESTAMP of second 0 as the zero
			// value, fraction kept; a fraction makes it the epoch's
			// first second (the applier's session is in UTC).
			return "1970-01-01 00:00:00" + x[len(zeroTimestamp):], true
		}
		return v, true
	case []byte:
		return string(x), true
	}
	return nil, false
}

// bytesValue is convert for a column passed as bytes.
func bytesValue(v any) (any, bool) {
	switch x := v.(type) {
	case []byte:
		return v, true
	case string:
		return []byte(x), true
	}
	return nil, false
}

// paddedValue is convert for a BINARY(n) column, whose values the server
// logs without their trailing 0x00 bytes.
func paddedValue(c *Column, v any) (any, bool) {
	switch x := v.(type) {
	case []byte:
		if len(x) >= c.size {
			return v, true
		}
		return pad(x, c.size), true
	case string:
		return pad([]byte(x), c.size), true
	}
	return nil, false
}

// signed returns x, fixed up if the column is UNSIGNED.
func (c *Column) signed(x int64) any {
	if x < 0 && c.Unsigned && c.bits > 0 {
		return c.unsigned(x)
	}
	return x
}

// unsigned reinterprets x, a negative value decoded as signed from a table
// map without signedness, as the unsigned value of the column's width.
func (c *Column) unsigned(x int64) uint64 {
	u := uint64(x)
	if c.bits < 64 {
		u &= 1<<c.bits - 1
	}
	return u
}

func pad(b []byte, n int) []byte {
	p := make([]byte, n)
	copy(p, b)
	return p
}

// equal reports whether two decoded values of a column are the same value
// of the same type. Values of types equal does not know are never equal.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case int32:
		y, ok := b.(int32)
		return ok && x == y
	case int16:
		y, ok := b.(int16)
		return ok && x == y
	case int8:
		y, ok := b.(int8)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case uint64:
		y, ok := b.(uint64)
		return ok && x == y
	case uint32:
		y, ok := b.(uint32)
		return ok && x == y
	case uint16:
		y, ok := b.(uint16)
		return ok && x == y
	case uint8:
		y, ok := b.(uint8)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case float32:
		y, ok := b.(float32)
		return ok && x == y
	}
	return false
}

// Limits of Expect.Key.
const (
	keyValueMax = 40 // bytes of one value (hex digits count double)
	keyColsMax  = 4  // columns of a keyless row
)

// keyString renders columns cols of image img as "a=1,b='x'" for error
// messages; for a keyless table (cols nil) the first few columns present.
func (t *Table) keyString(cols []int, bm []byte, img []any) string {
	b := make([]byte, 0, 32)
	n := 0
	add := func(i int) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, t.Columns[i].Name...)
		b = append(b, '=')
		b = appendValue(b, &t.Columns[i], img[i])
	}
	if cols != nil {
		for _, i := range cols {
			add(i)
		}
		return string(b)
	}
	for i := range t.Columns {
		if n == keyColsMax {
			b = append(b, ",..."...)
			break
		}
		if present(bm, i) && !t.Columns[i].Generated {
			add(i)
		}
	}
	return string(b)
}

// appendValue renders v for humans: numbers as the column holds them
// (unsigned fix-up applied), text quoted, binary strings and text that is
// not UTF-8 as 0x hex (BINARY(n) padded), long values truncated. It boxes
// nothing: it runs for every statement.
func appendValue(b []byte, c *Column, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...)
	case int64:
		return c.appendInt(b, x)
	case int32:
		return c.appendInt(b, int64(x))
	case int16:
		return c.appendInt(b, int64(x))
	case int8:
		return c.appendInt(b, int64(x))
	case int:
		return c.appendInt(b, int64(x))
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10)
	case float32:
		return strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		return c.appendString(b, x)
	case []byte:
		return c.appendString(b, string(x))
	}
	return fmt.Appendf(b, "%v", v)
}

// appendInt renders an integer value of the column as the column holds it.
func (c *Column) appendInt(b []byte, x int64) []byte {
	switch {
	case x >= 0:
	case c.enc == encInt && c.Unsigned && c.bits > 0:
		return strconv.AppendUint(b, c.unsigned(x), 10)
	case c.enc == encBit || c.enc == encSet:
		return strconv.AppendUint(b, uint64(x), 10)
	}
	return strconv.AppendInt(b, x, 10)
}

// appendString renders a string value: quoted if it is text, else hex.
func (c *Column) appendString(b []byte, s string) []byte {
	if c.enc == encText || c.enc == encJSON || c.enc == encConvert && utf8.ValidString(s) {
		if len(s) > keyValueMax {
			return append(strconv.AppendQuote(b, s[:keyValueMax]), "..."...)
		}
		return strconv.AppendQuote(b, s)
	}
	b = append(b, "0x"...)
	n := len(s)
	if c.enc == encPadded {
		n = max(n, c.size) // the server logs BINARY(n) without its trailing 0x00
	}
	for i := 0; i < n && i < keyValueMax/2; i++ {
		var x byte
		if i < len(s) {
			x = s[i]
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&15])
	}
	if n > keyValueMax/2 {
		b = append(b, "..."...)
	}
	return b
}

const hexDigits = "0123456789abcdef"
