package sqlgen

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

func column(t *testing.T, c col) *Column {
	t.Helper()
	out := &Column{Name: c.name, Unsigned: c.unsigned, Charset: c.cs, Collation: c.co}
	if err := out.prepare(c.tp, c.meta); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestValue(t *testing.T) {
	var (
		tiny      = col{tp: mysql.MYSQL_TYPE_TINY}
		tinyU     = col{tp: mysql.MYSQL_TYPE_TINY, unsigned: true}
		short     = col{tp: mysql.MYSQL_TYPE_SHORT}
		shortU    = col{tp: mysql.MYSQL_TYPE_SHORT, unsigned: true}
		int24     = col{tp: mysql.MYSQL_TYPE_INT24}
		int24U    = col{tp: mysql.MYSQL_TYPE_INT24, unsigned: true}
		long      = col{tp: mysql.MYSQL_TYPE_LONG}
		longU     = col{tp: mysql.MYSQL_TYPE_LONG, unsigned: true}
		longlong  = col{tp: mysql.MYSQL_TYPE_LONGLONG}
		longlongU = col{tp: mysql.MYSQL_TYPE_LONGLONG, unsigned: true}
		year      = col{tp: mysql.MYSQL_TYPE_YEAR, unsigned: true}
		float     = col{tp: mysql.MYSQL_TYPE_FLOAT, meta: 4}
		double    = col{tp: mysql.MYSQL_TYPE_DOUBLE, meta: 8}
		bit       = col{tp: mysql.MYSQL_TYPE_BIT, meta: 0x0800}
		enum      = col{tp: mysql.MYSQL_TYPE_STRING, meta: 0xf701}
		set       = col{tp: mysql.MYSQL_TYPE_STRING, meta: 0xf808}
		decimal   = col{tp: mysql.MYSQL_TYPE_NEWDECIMAL, meta: 0x411e}
		datetime  = col{tp: mysql.MYSQL_TYPE_DATETIME2, meta: 6}
		varchar   = col{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 400, cs: "utf8mb4"}
		text      = col{tp: mysql.MYSQL_TYPE_BLOB, meta: 2, cs: "utf8mb3"}
		ascii     = col{tp: mysql.MYSQL_TYPE_STRING, meta: 0xfe0a, cs: "ascii"}
		varbinary = col{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 16, cs: "binary"}
		blob      = col{tp: mysql.MYSQL_TYPE_BLOB, meta: 2, cs: "binary"}
		binary4   = col{tp: mysql.MYSQL_TYPE_STRING, meta: 0xfe04, cs: "binary"}
		uuid      = col{tp: mysql.MYSQL_TYPE_STRING, meta: 0xfe10} // MariaDB UUID: no character set
		latin1    = col{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 100, cs: "latin1", co: "latin1_swedish_ci"}
		latin1T   = col{tp: mysql.MYSQL_TYPE_BLOB, meta: 2, cs: "latin1", co: "latin1_bin"}
		json      = col{tp: mysql.MYSQL_TYPE_JSON, meta: 4}
		geometry  = col{tp: mysql.MYSQL_TYPE_GEOMETRY, meta: 4}
	)
	f32 := float32(0.1)
	diff := &replication.JsonDiff{Op: replication.JsonDiffOperationReplace, Path: "$.a", Value: "1"}
	cases := []struct {
		name string
		col  col
		in   any
		want any
		err  error
	}{
		{"NULL", long, nil, nil, nil},
		{"NULL unsigned", longlongU, nil, nil, nil},

		{"tinyint", tiny, int8(-128), int64(-128), nil},
		{"tinyint unsigned decoded signed", tinyU, int8(-1), uint64(255), nil},
		{"tinyint unsigned decoded signed, top bit only", tinyU, int8(-128), uint64(128), nil},
		{"tinyint unsigned decoded signed, positive", tinyU, int8(127), int64(127), nil},
		{"tinyint unsigned decoded unsigned", tinyU, uint8(255), int64(255), nil},
		{"smallint", short, int16(-32768), int64(-32768), nil},
		{"smallint unsigned decoded signed", shortU, int16(-1), uint64(65535), nil},
		{"smallint unsigned decoded unsigned", shortU, uint16(65535), int64(65535), nil},
		{"mediumint", int24, int32(-8388608), int64(-8388608), nil},
		{"mediumint unsigned decoded signed", int24U, int32(-1), uint64(16777215), nil},
		{"mediumint unsigned decoded signed, top bit only", int24U, int32(-8388608), uint64(8388608), nil},
		{"mediumint unsigned decoded unsigned", int24U, uint32(16777215), int64(16777215), nil},
		{"int", long, int32(math.MinInt32), int64(math.MinInt32), nil},
		{"int unsigned decoded signed", longU, int32(-1), uint64(math.MaxUint32), nil},
		{"int unsigned decoded unsigned", longU, uint32(math.MaxUint32), int64(math.MaxUint32), nil},
		{"bigint", longlong, int64(math.MinInt64), int64(math.MinInt64), nil},
		{"bigint unsigned decoded signed", longlongU, int64(-1), uint64(math.MaxUint64), nil},
		{"bigint unsigned decoded signed, top bit only", longlongU, int64(math.MinInt64), uint64(1 << 63), nil},
		{"bigint unsigned decoded unsigned", longlongU, uint64(math.MaxUint64), uint64(math.MaxUint64), nil},
		{"year", year, int(2155), int64(2155), nil},
		{"year 0000", year, int(0), "0000", nil},

		{"float is widened exactly", float, f32, float64(f32), nil},
		{"float max", float, float32(math.MaxFloat32), float64(math.MaxFloat32), nil},
		{"double", double, 0.1, 0.1, nil},
		{"double smallest denormal", double, math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64, nil},

		{"bit", bit, int64(5), uint64(5), nil},
		{"bit(64) all ones", bit, int64(-1), uint64(math.MaxUint64), nil},
		{"enum index", enum, int64(2), int64(2), nil},
		{"enum error value", enum, int64(0), int64(0), nil},
		{"set bitmask", set, int64(5), int64(5), nil},
		{"set of 64 members, last set", set, int64(math.MinInt64), uint64(1 << 63), nil},

		{"decimal", decimal, "-12345.678900", "-12345.678900", nil},
		{"datetime", datetime, "0000-00-00 00:00:00.000000", "0000-00-00 00:00:00.000000", nil},
		{"varchar utf8mb4", varchar, "é😀", "é😀", nil},
		{"text utf8mb3 from bytes", text, []byte("é"), "é", nil},
		{"char ascii", ascii, "abc", "abc", nil},
		{"varbinary", varbinary, "\x00\xff", []byte{0, 0xff}, nil},
		{"blob", blob, []byte{0, 0xff}, []byte{0, 0xff}, nil},
		{"binary(4) padded", binary4, "a\x00 ", []byte("a\x00 \x00"), nil},
		{"binary(4) full", binary4, "abcd", []byte("abcd"), nil},
		{"binary(4) empty", binary4, "", []byte{0, 0, 0, 0}, nil},
		{"uuid all zero is logged empty", uuid, "", make([]byte, 16), nil},
		{"latin1 varchar", latin1, "\xe9\xff", []byte{0xe9, 0xff}, nil},
		{"latin1 text", latin1T, []byte{0xe9}, []byte{0xe9}, nil},
		{"mysql json", json, `{"a": 1}`, `{"a": 1}`, nil},
		{"mysql json from bytes", json, []byte(`[]`), `[]`, nil},
		{"mysql json diff", json, diff, nil, ErrPartialJSON},
		{"geometry", geometry, []byte{0, 0, 0, 0, 1}, []byte{0, 0, 0, 0, 1}, nil},

		{"string for an int", long, "1", nil, ErrMismatch},
		{"time.Time for a datetime", datetime, time.Unix(0, 0), nil, ErrMismatch},
		{"int for a varchar", varchar, int32(1), nil, ErrMismatch},
		{"json diff in a text column", text, diff, nil, ErrPartialJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := value(column(t, c.col), c.in)
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %T %#v, want %T %#v", got, got, c.want, c.want)
			}
		})
	}
}

// value must not allocate when the decoded value already has the driver's
// type: the hot path passes most strings and int64s through.
func TestValueNoCopy(t *testing.T) {
	varchar := column(t, col{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 400, cs: "utf8mb4"})
	blob := column(t, col{tp: mysql.MYSQL_TYPE_BLOB, meta: 2, cs: "binary"})
	var s any = "some text"
	var b any = []byte("bytes")
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = value(varchar, s)
		_, _ = value(blob, b)
	})
	if allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
}

func TestPlaceholders(t *testing.T) {
	cases := []struct {
		col         col
		ph, wherePh string
	}{
		{col{tp: mysql.MYSQL_TYPE_LONG}, "?", "?"},
		{col{tp: mysql.MYSQL_TYPE_VARCHAR, cs: "utf8mb4", co: "utf8mb4_bin"}, "?", "?"},
		{col{tp: mysql.MYSQL_TYPE_VARCHAR, cs: "latin1", co: "latin1_swedish_ci"}, "CONVERT(? USING latin1)", "CONVERT(? USING latin1) COLLATE latin1_swedish_ci"},
		{col{tp: mysql.MYSQL_TYPE_BLOB, cs: "cp1251"}, "CONVERT(? USING cp1251)", "CONVERT(? USING cp1251)"},
		{col{tp: mysql.MYSQL_TYPE_JSON}, "?", "CAST(? AS JSON)"},
	}
	for _, c := range cases {
		got := column(t, c.col)
		if got.ph != c.ph || got.wherePh != c.wherePh {
			t.Errorf("%+v: got %q %q", c.col, got.ph, got.wherePh)
		}
	}
	bad := &Column{Name: "c", Charset: "latin1); DROP TABLE t; --"}
	if err := bad.prepare(mysql.MYSQL_TYPE_VARCHAR, 10); err == nil {
		t.Error("a character set name that is not a name was accepted")
	}
}

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{nil, nil, true},
		{nil, int32(0), false},
		{int32(0), nil, false},
		{int32(1), int32(1), true},
		{int32(1), int64(1), false},
		{uint64(1), uint64(1), true},
		{"a", "a", true},
		{"a", []byte("a"), false},
		{[]byte("a"), []byte("a"), true},
		{[]byte{}, []byte(nil), true},
		{float32(0.5), float32(0.5), true},
		{math.NaN(), math.NaN(), false},
		{int(2024), int(2024), true},
		{&replication.JsonDiff{}, &replication.JsonDiff{}, false},
	}
	for _, c := range cases {
		if got := equal(c.a, c.b); got != c.want {
			t.Errorf("equal(%#v, %#v) = %v", c.a, c.b, got)
		}
	}
}

func TestKeyString(t *testing.T) {
	long := make([]byte, 100)
	for i := range long {
		long[i] = 'x'
	}
	tab := newTable(t, "db", "t", []col{
		intCol("id"),
		varcharCol("name"),
		{name: "bin", typ: "varbinary", tp: mysql.MYSQL_TYPE_VARCHAR, meta: 100, cs: "binary", co: "binary", nullable: true},
		latin1Col("l1"),
		{name: "f", typ: "float", tp: mysql.MYSQL_TYPE_FLOAT, meta: 4, nullable: true},
		{name: "u", typ: "bigint", tp: mysql.MYSQL_TYPE_LONGLONG, unsigned: true, nullable: true},
	})
	img := []any{int32(5), "it's \"q\"", []byte{0, 0xff}, "caf\xe9", float32(0.1), int64(-1)}
	cases := []struct {
		cols []int
		img  []any
		want string
	}{
		{[]int{0}, img, "id=5"},
		{[]int{0, 1}, img, `id=5,name="it's \"q\""`},
		{[]int{2, 3}, img, "bin=0x00ff,l1=0x636166e9"},
		{[]int{4, 5}, img, "f=0.1,u=18446744073709551615"},
		{[]int{1}, []any{nil, string(long), nil, nil, nil, nil}, `name="` + string(long[:keyValueMax]) + `"...`},
		{[]int{2}, []any{nil, nil, long, nil, nil, nil}, "bin=0x" + "78787878787878787878787878787878787878787878787878787878787878787878787878787878"[:keyValueMax] + "..."},
		{[]int{3}, []any{nil, nil, nil, "plain", nil, nil}, `l1="plain"`},
		{nil, img, `id=5,name="it's \"q\"",bin=0x00ff,l1=0x636166e9,...`},
	}
	for _, c := range cases {
		if got := tab.keyString(c.cols, nil, c.img); got != c.want {
			t.Errorf("%v: got %s\nwant %s", c.cols, got, c.want)
		}
	}
}
