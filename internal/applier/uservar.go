package applier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// userVarSQL is the SET statement, and its arguments, that gives a
// session the user variable v as the source's statement read it: with its
// type, and a string with its character set and collation (MariaDB's
// User_var_log_event::do_apply_event).
func userVarSQL(v binlog.UserVar, mariadb bool) (string, []any, error) {
	set := "SET @" + schema.QuoteIdent(v.Name) + " = "
	if v.Null {
		return set + "NULL", nil, nil
	}
	switch v.Type {
	case binlog.UserVarString:
		f := schema.MySQL
		if mariadb {
			f = schema.MariaDB
		}
		co := schema.CollationByID(f, int(v.Collation))
		cs := schema.CharsetOfCollationID(f, int(v.Collation))
		if co == "" || cs == "" || !isName(co) || !isName(cs) {
			return "", nil, fmt.Errorf("unknown collation id %d", v.Collation)
		}
		if cs == "binary" {
			// A geometry, a BLOB's value, UNHEX(...): the server's
			// grammar takes no COLLATE binary after an expression, and
			// the binary character set has no other collation.
			return set + "CONVERT(? USING binary)", []any{v.Value}, nil
		}
		return set + "CONVERT(? USING " + cs + ") COLLATE " + co, []any{v.Value}, nil
	case binlog.UserVarReal:
		if len(v.Value) < 8 {
			return "", nil, errors.New("a REAL value of fewer than 8 bytes")
		}
		return set + "?", []any{math.Float64frombits(binary.LittleEndian.Uint64(v.Value))}, nil
	case binlog.UserVarInt:
		if len(v.Value) < 8 {
			return "", nil, errors.New("an INT value of fewer than 8 bytes")
		}
		n := binary.LittleEndian.Uint64(v.Value)
		if v.Unsigned {
			return set + "?", []any{n}, nil
		}
		return set + "?", []any{int64(n)}, nil
	case binlog.UserVarDecimal:
		d, prec, scale, err := decodeDecimal(v.Value)
		if err != nil {
			return "", nil, err
		}
		return set + fmt.Sprintf("CAST(? AS DECIMAL(%d,%d))", max(prec, 1), scale), []any{d}, nil
	}
	return "", nil, fmt.Errorf("a value of type %d", v.Type)
}

// isName reports whether s may go into SQL unquoted as a character set
// or collation name.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// digitsBytes is how many bytes a group of fewer than 9 decimal digits
// takes in the server's binary DECIMAL.
var digitsBytes = [10]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}

// decodeDecimal reads a User_var event's DECIMAL: precision (1 byte),
// scale (1 byte), then the server's binary form (decimal2bin): the
// integer digits and the fraction digits each in groups of 9 stored in 4
// bytes big-endian, a leading or trailing partial group in fewer, the
// sign bit of the first byte inverted, and every byte inverted for a
// negative value. It returns the value as text.
func decodeDecimal(b []byte) (string, int, int, error) {
	if len(b) < 2 {
		return "", 0, 0, errors.New("a DECIMAL value of fewer than 2 bytes")
	}
	prec, scale := int(b[0]), int(b[1])
	if scale > prec || prec > 65 {
		return "", 0, 0, fmt.Errorf("a DECIMAL(%d,%d)", prec, scale)
	}
	intg := prec - scale
	intg0, intgX := intg/9, intg%9
	frac0, fracX := scale/9, scale%9
	size := intg0*4 + digitsBytes[intgX] + frac0*4 + digitsBytes[fracX]
	data := b[2:]
	if len(data) < size {
		return "", 0, 0, fmt.Errorf("a DECIMAL(%d,%d) of %d bytes, want %d", prec, scale, len(data), size)
	}
	buf := append([]byte(nil), data[:size]...)
	neg := buf[0]&0x80 == 0
	buf[0] ^= 0x80
	if neg {
		for i := range buf {
			buf[i] = ^buf[i]
		}
	}
	read := func(n int) uint64 {
		var v uint64
		for _, c := range buf[:n] {
			v = v<<8 | uint64(c)
		}
		buf = buf[n:]
		return v
	}
	var s strings.Builder
	if neg {
		s.WriteByte('-')
	}
	var ip strings.Builder
	if intgX > 0 {
		ip.WriteString(strconv.FormatUint(read(digitsBytes[intgX]), 10))
	}
	for range intg0 {
		fmt.Fprintf(&ip, "%09d", read(4))
	}
	digits := strings.TrimLeft(ip.String(), "0")
	if digits == "" {
		digits = "0"
	}
	s.WriteString(digits)
	if scale > 0 {
		s.WriteByte('.')
		for range frac0 {
			fmt.Fprintf(&s, "%09d", read(4))
		}
		if fracX > 0 {
			fmt.Fprintf(&s, "%0*d", fracX, read(digitsBytes[fracX]))
		}
	}
	return s.String(), prec, scale, nil
}
