package applier

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"

	"github.com/paraply/paraply/internal/binlog"
)

// TestDecodeDecimal: the server's binary DECIMAL as User_var events carry
// it (bytes written by MariaDB 10.11 for SET @d = CAST(... AS DECIMAL)).
func TestDecodeDecimal(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want string
	}{
		// DECIMAL(20,6) 1234.567800: 5 integer digits in 3 bytes, 9 in 4,
		// 6 fraction digits in 3, the sign bit set; -1234.567800: every
		// byte inverted.
		{[]byte{20, 6, 0x80, 0x00, 0x00, 0x00, 0x00, 0x04, 0xd2, 0x08, 0xa9, 0xf8}, "1234.567800"},
		{[]byte{20, 6, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xfb, 0x2d, 0xf7, 0x56, 0x07}, "-1234.567800"},
		{[]byte{5, 2, 0x81, 0x2c, 0x07}, "300.07"},
		{[]byte{1, 0, 0x80}, "0"},
	} {
		got, _, _, err := decodeDecimal(c.b)
		if err != nil || got != c.want {
			t.Errorf("% x: %q, %v; want %q", c.b, got, err, c.want)
		}
	}
	if _, _, _, err := decodeDecimal([]byte{20, 6, 1}); err == nil {
		t.Error("a short DECIMAL decoded")
	}
}

// TestUserVarSQL: each type of user variable is set with its type, a
// string with its character set and collation.
func TestUserVarSQL(t *testing.T) {
	le := func(n uint64) []byte { b := make([]byte, 8); binary.LittleEndian.PutUint64(b, n); return b }
	for _, c := range []struct {
		v    binlog.UserVar
		q    string
		args []any
	}{
		{binlog.UserVar{Name: "s", Type: binlog.UserVarString, Collation: 31, Value: []byte("gr\xfc\xdfe")},
			"SET @`s` = CONVERT(? USING latin1) COLLATE latin1_german2_ci", []any{[]byte("gr\xfc\xdfe")}},
		{binlog.UserVar{Name: "g", Type: binlog.UserVarString, Collation: 63, Value: []byte{0, 0, 0, 0, 1}},
			"SET @`g` = CONVERT(? USING binary)", []any{[]byte{0, 0, 0, 0, 1}}},
		{binlog.UserVar{Name: "n", Type: binlog.UserVarInt, Value: le(uint64(math.MaxUint64))}, "SET @`n` = ?", []any{int64(-1)}},
		{binlog.UserVar{Name: "u", Type: binlog.UserVarInt, Value: le(uint64(math.MaxUint64)), Unsigned: true}, "SET @`u` = ?", []any{uint64(math.MaxUint64)}},
		{binlog.UserVar{Name: "f", Type: binlog.UserVarReal, Value: le(math.Float64bits(2.5e-3))}, "SET @`f` = ?", []any{2.5e-3}},
		{binlog.UserVar{Name: "d", Type: binlog.UserVarDecimal, Value: []byte{5, 2, 0x81, 0x2c, 0x07}}, "SET @`d` = CAST(? AS DECIMAL(5,2))", []any{"300.07"}},
		{binlog.UserVar{Name: "we`ird", Null: true}, "SET @`we``ird` = NULL", nil},
	} {
		q, args, err := userVarSQL(c.v, true)
		if err != nil || q != c.q || !reflect.DeepEqual(args, c.args) {
			t.Errorf("%+v: %q %v %v; want %q %v", c.v, q, args, err, c.q, c.args)
		}
	}
}

// TestLoadQuery: the file clause of a LOAD DATA the server logged is
// replaced by one reading paraply's copy, with the duplicate handling.
func TestLoadQuery(t *testing.T) {
	q := "LOAD DATA INFILE '/tmp/x.csv' REPLACE INTO TABLE t FIELDS TERMINATED BY ','"
	st := &binlog.Statement{Query: q, Load: &binlog.LoadData{FnStart: 9, FnEnd: 43, Dup: binlog.LoadDupReplace}}
	want := "LOAD DATA LOCAL INFILE 'Reader::f' REPLACE INTO TABLE t FIELDS TERMINATED BY ','"
	if got := loadQuery(st, "Reader::f"); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
