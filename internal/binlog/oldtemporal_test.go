package binlog

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/paraply/paraply/internal/schema"
)

// The encoders below write values as MariaDB's sql/field.cc does
// (Field_timef's ancestors of 5.3: Field_time_hires, Field_datetime_hires,
// Field_timestamp_hires, and the 5.0 Field_time), independently of the
// decoding under test; TestOldValueServerBytes pins them to bytes a
// MariaDB 10.11 server wrote with mysql56_temporal_format=OFF.

// be is v's low n bytes, big-endian.
func be(v uint64, n int) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[8-n:]
}

// beValue reads b big-endian, as go-mysql reads a BIT column.
func beValue(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// secPartShift is MariaDB's sec_part_shift: C division, toward zero.
func secPartShift(x int64, digits int) int64 { return x / pow10[6-digits] }

func encodeTime(neg bool, h, m, s, usec int64, digits int) []byte {
	if digits == 0 {
		v := h*10000 + m*100 + s
		if neg {
			v = -v
		}
		u := uint32(v) & 0xffffff // int3store
		return []byte{byte(u), byte(u >> 8), byte(u >> 16)}
	}
	packed := ((h*60+m)*60+s)*1000000 + usec
	if neg {
		packed = -packed
	}
	zero := secPartShift((838*3600+59*60+59+1)*1000000, digits)
	return be(uint64(secPartShift(packed, digits)+zero), hiresTimeBytes[digits])
}

func encodeDatetime(y, mo, d, h, mi, s, usec int64, digits int) []byte {
	packed := (((((y*13+mo)*32+d)*24+h)*60+mi)*60+s)*1000000 + usec
	return be(uint64(secPartShift(packed, digits)), hiresDatetimeBytes[digits])
}

func encodeTimestamp(secs, usec int64, digits int) []byte {
	b := be(uint64(secs), 4) // mi_int4store
	return append(b, be(uint64(secPartShift(usec, digits)), timestampFracBytes[digits])...)
}

// TestOldValue decodes values of every precision, as encoded by the
// encoders, into go-mysql's text for the MySQL 5.6 formats.
func TestOldValue(t *testing.T) {
	type tc struct {
		tp     byte
		digits int
		stored []byte
		want   string
	}
	var cases []tc
	for digits := 0; digits <= 6; digits++ {
		frac := func(usec string) string { // usec as 6 digits, cut to the precision
			if digits == 0 {
				return ""
			}
			return "." + usec[:digits]
		}
		timeFrac := func(usec string) string { // TIME2 shows no all-zero fraction
			if strings.Trim(usec[:digits], "0") == "" {
				return ""
			}
			return frac(usec)
		}
		usec := func(u int64) int64 { return u / pow10[6-digits] * pow10[6-digits] }
		cases = append(cases,
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(false, 0, 0, 0, 0, digits), "00:00:00"},
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(false, 12, 34, 56, usec(789012), digits), "12:34:56" + timeFrac("789012")},
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(true, 12, 34, 56, usec(789012), digits), "-12:34:56" + timeFrac("789012")},
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(false, 838, 59, 59, usec(999999), digits), "838:59:59" + timeFrac("999999")},
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(true, 838, 59, 59, usec(999999), digits), "-838:59:59" + timeFrac("999999")},
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(true, 0, 0, 1, 0, digits), "-00:00:01"},
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(false, 100, 0, 0, usec(500000), digits), "100:00:00" + timeFrac("500000")},
		)
		if digits == 6 {
			cases = append(cases, tc{mysql.MYSQL_TYPE_TIME, 6, encodeTime(true, 0, 0, 0, 1, 6), "-00:00:00.000001"})
		}
		if digits == 0 {
			continue // DATETIME and TIMESTAMP of precision 0 are go-mysql's
		}
		cases = append(cases,
			tc{mysql.MYSQL_TYPE_TIME, digits, encodeTime(true, 0, 0, 0, usec(100000), digits), "-00:00:00" + timeFrac("100000")},
			tc{mysql.MYSQL_TYPE_DATETIME, digits, encodeDatetime(0, 0, 0, 0, 0, 0, 0, digits), "0000-00-00 00:00:00" + frac("000000")},
			tc{mysql.MYSQL_TYPE_DATETIME, digits, encodeDatetime(2000, 0, 0, 0, 0, 0, usec(500000), digits), "2000-00-00 00:00:00" + frac("500000")},
			tc{mysql.MYSQL_TYPE_DATETIME, digits, encodeDatetime(2024, 2, 29, 23, 59, 59, usec(987654), digits), "2024-02-29 23:59:59" + frac("987654")},
			tc{mysql.MYSQL_TYPE_DATETIME, digits, encodeDatetime(1000, 1, 1, 0, 0, 0, usec(1), digits), "1000-01-01 00:00:00" + frac("000000"[:6-len("1")]+"1")},
			tc{mysql.MYSQL_TYPE_DATETIME, digits, encodeDatetime(9999, 12, 31, 23, 59, 59, usec(999999), digits), "9999-12-31 23:59:59" + frac("999999")},
			tc{mysql.MYSQL_TYPE_TIMESTAMP, digits, encodeTimestamp(0, 0, digits), "0000-00-00 00:00:00" + frac("000000")},
			tc{mysql.MYSQL_TYPE_TIMESTAMP, digits, encodeTimestamp(1, usec(500000), digits), "1970-01-01 00:00:01" + frac("500000")},
			tc{mysql.MYSQL_TYPE_TIMESTAMP, digits, encodeTimestamp(2147483647, usec(999999), digits), "2038-01-19 03:14:07" + frac("999999")},
			tc{mysql.MYSQL_TYPE_TIMESTAMP, digits, encodeTimestamp(981173106, usec(7), digits), "2001-02-03 04:05:06" + frac("000007")},
		)
	}
	for _, c := range cases {
		if len(c.stored) != oldBytes(c.tp, c.digits) {
			t.Fatalf("%s(%d): encoded %d bytes, oldBytes says %d", oldTypeName(c.tp), c.digits, len(c.stored), oldBytes(c.tp, c.digits))
		}
		if got := oldValue(c.tp, c.digits, beValue(c.stored)); got != c.want {
			t.Errorf("%s(%d) %x: %q, want %q", oldTypeName(c.tp), c.digits, c.stored, got, c.want)
		}
	}
}

// TestOldValueServerBytes decodes values as a MariaDB 10.11 server stored
// them (read from its binary log), and checks that the encoders write
// them so.
func TestOldValueServerBytes(t *testing.T) {
	for _, c := range []struct {
		tp      byte
		digits  int
		stored  string
		want    string
		encoded []byte
	}{
		{mysql.MYSQL_TYPE_TIME, 1, "01d3c9c7", "12:34:56.7", encodeTime(false, 12, 34, 56, 700000, 1)},
		{mysql.MYSQL_TYPE_TIME, 1, "01cce05f", "-00:00:00.1", encodeTime(true, 0, 0, 0, 100000, 1)},
		{mysql.MYSQL_TYPE_TIME, 4, "0706145fbb", "-01:02:03.0405", encodeTime(true, 1, 2, 3, 40500, 4)},
		{mysql.MYSQL_TYPE_TIME, 6, "057e7bbcf7ff", "838:59:59.999999", encodeTime(false, 838, 59, 59, 999999, 6)},
		{mysql.MYSQL_TYPE_TIME, 0, "590a80", "-838:59:59", encodeTime(true, 838, 59, 59, 0, 0)},
		{mysql.MYSQL_TYPE_DATETIME, 1, "00a965ae41ff", "2024-02-29 23:59:59.9", encodeDatetime(2024, 2, 29, 23, 59, 59, 900000, 1)},
		{mysql.MYSQL_TYPE_DATETIME, 6, "04fcee3943bfffff", "9999-12-31 23:59:59.999999", encodeDatetime(9999, 12, 31, 23, 59, 59, 999999, 6)},
		{mysql.MYSQL_TYPE_TIMESTAMP, 3, "7fffffff03e7", "2038-01-19 03:14:07.999", encodeTimestamp(2147483647, 999000, 3)},
		{mysql.MYSQL_TYPE_TIMESTAMP, 6, "3a7b8372000007", "2001-02-03 04:05:06.000007", encodeTimestamp(981173106, 7, 6)},
	} {
		stored, _ := hex.DecodeString(c.stored)
		if got := oldValue(c.tp, c.digits, beValue(stored)); got != c.want {
			t.Errorf("%s(%d) %s: %q, want %q", oldTypeName(c.tp), c.digits, c.stored, got, c.want)
		}
		if hex.EncodeToString(c.encoded) != c.stored {
			t.Errorf("%s(%d) %q encodes as %x, the server wrote %s", oldTypeName(c.tp), c.digits, c.want, c.encoded, c.stored)
		}
	}
}

func TestConvertOldLeavesOthers(t *testing.T) {
	p := &oldTable{cols: []oldColumn{{index: 1, tp: mysql.MYSQL_TYPE_TIME, digits: 1}, {index: 3, tp: mysql.MYSQL_TYPE_TIME, digits: 0}}}
	rows := [][]any{
		{int32(1), int64(beValue(encodeTime(false, 1, 0, 0, 500000, 1))), "x", nil},
		{int32(2), nil, nil, int64(beValue(encodeTime(true, 1, 2, 3, 0, 0)))},
		{int32(3)}, // shorter than the columns: left alone
	}
	p.convertOld(rows)
	want := [][]any{{int32(1), "01:00:00.5", "x", nil}, {int32(2), nil, nil, "-01:02:03"}, {int32(3)}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got %#v, want %#v", rows, want)
	}
}

func TestOldVarcharLength(t *testing.T) {
	for _, c := range []struct {
		meta uint16 // as go-mysql holds it: the first byte low
		want int
		ok   bool
	}{
		{0x1efd, 30, true},
		{0xfffd, 255, true},
		{0x2ced, 300, true}, // 0xfd ^ (300&0x300)>>4, then 300&0xff
		{0x00fe, 0, true},
		{0x001e, 0, false}, // a VARCHAR's maximum length, 30
		{0x0100, 0, false},
	} {
		got, ok := oldVarcharLength(c.meta)
		if got != c.want || ok != c.ok {
			t.Errorf("%#04x: %d, %v; want %d, %v", c.meta, got, ok, c.want, c.ok)
		}
	}
}

// Events of a MariaDB 10.11 source (binlog_row_metadata=FULL), of
//
//	SET GLOBAL mysql56_temporal_format=OFF;
//	CREATE TABLE t1 (id INT PRIMARY KEY, a TIME(1), b TIME(4), c TIME(6), d TIME);
//	CREATE TABLE t2 (id INT PRIMARY KEY, a DATETIME(1), b DATETIME(6), c DATETIME,
//	  d TIMESTAMP(3) NULL, e TIMESTAMP NULL, f TIMESTAMP(6) NULL);
//
// and of the table vchar of std_data/vchar.frm (v varchar(30)/*old*/, c
// char(3), e enum('abc','def','ghi'), t text), with the rows the tests
// below want.
const (
	oldFDE      = "ece8096b0f01000000fc000000000100000100040031302e31312e31392d4d6172696144422d302b646562313275312d6c6f6700000000000000000000000000000000000000000000000013380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000041304000d0808080a0a0a01be1757aa"
	oldT1Map    = "ece8096b1301000000410000008402000000001200000000000100016f000274310005030b0b0b0b001e010100040b02696401610162016301640801004d5ccf76"
	oldT1Insert = "ece8096b17010000004a000000ce02000000001200000000000100051fe00a000000000000010e1098edff02bf3dde7bffffffffe40b00000001cce06002bf3dde7c00000000db8030da"
	oldT1Update = "ece8096b180100000050000000fd03000000001200000000000100051f1fe00a000000000000010e1098edff02bf3dde7bffffffffe00a00000001c648db0e1098edff02bf3dde7bff40420f757b078d"
	oldT2Map    = "ece8096b1301000000470000004505000000001900000000000100016f000274320007030c0c0c070707007e010100040f026964016101620163016401650166080100ac704f25"
	oldT2Insert = "ece8096b1701000000490000008e05000000001900000000000100077fa002000000000000000000007fb403f923600100000000000000000000000000000000000107a120f1ca83c8"
	oldT2Delete = "ece8096b19010000004d0000009d06000000001900000000000100077f800100000000a965ae41ff04fcee3943bfffff0040e59c301200007fffffff03e7010000003a7b837200000752db792c"
	vcharMap    = "24e7096b1301000000560000006602000000001b00000000000100016f000576636861720004fdfefefc07fd1efe03f701020f020108040801760163016501740a0108060d03036162630364656603676869e5eef723"
	vcharInsert = "24e7096b170100000040000000a602000000001b00000000000100040ff0036162630264650303006a6b6cf00361626301640307006a6b6c20202020a3fdb9a1"
	// vbin is std_data/bug19371.frm: a varbinary(255)/*old*/, b varchar(255)/*old*/.
	vbinMap = "29e9096b13010000003b0000004102000000002000000000000100016f00047662696e0002fdfd04fdfffdff0303023f08040401610162a7bec04d"
)

// vbinInsert inserts ('ab\0c  ', 'xyz  '), (NULL, REPEAT('q', 255)), (”, ”).
var vbinInsert = "29e9096b17010000003101000072030000000020000000000001000203fc066162006320200378797afd" +
	"ff" + strings.Repeat("71", 255) + "fc000028570f65"

// decodeHex decodes one transaction of the events given in hex under the
// format description oldFDE.
func decodeHex(t *testing.T, dec *Decoder, events ...string) (*Txn, error) {
	t.Helper()
	fm, err := ParseFormat(Event{Data: mustHex(t, oldFDE), Pos: Pos{File: "fixture", Offset: 4}})
	if err != nil {
		t.Fatal(err)
	}
	rt := &RawTxn{Format: fm}
	for i, e := range events {
		rt.Events = append(rt.Events, Event{Data: mustHex(t, e), Pos: Pos{File: "fixture", Offset: int64(100 * (i + 1))}})
	}
	return dec.Decode(rt)
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixturePrecision is the precision of the fixtures' columns.
func fixturePrecision(db, table string) ([]int, bool) {
	switch db + "." + table {
	case "o.t1":
		return []int{-1, 1, 4, 6, 0}, false
	case "o.t2":
		return []int{-1, 1, 6, 0, 3, 0, 6}, false
	}
	return nil, false
}

func TestDecodeOldTemporalRows(t *testing.T) {
	row10 := []any{int32(10), "-838:59:59.9", "838:59:59.9999", "-00:00:00.000001", "-00:00:01"}
	for _, c := range []struct {
		name   string
		events []string
		want   [][]any
	}{
		{"time insert", []string{oldT1Map, oldT1Insert}, [][]any{
			row10,
			{int32(11), "00:00:00", nil, "00:00:00", "00:00:00"},
		}},
		{"time update", []string{oldT1Map, oldT1Update}, [][]any{
			row10,
			{int32(10), "-12:00:00.5", "838:59:59.9999", "-00:00:00.000001", "100:00:00"},
		}},
		{"datetime and timestamp insert", []string{oldT2Map, oldT2Insert}, [][]any{
			{int32(2), "0000-00-00 00:00:00.0", "1000-01-01 00:00:00.000001", "0000-00-00 00:00:00", "0000-00-00 00:00:00.000", nil, "1970-01-01 00:00:01.500000"},
		}},
		{"datetime and timestamp delete", []string{oldT2Map, oldT2Delete}, [][]any{
			{int32(1), "2024-02-29 23:59:59.9", "9999-12-31 23:59:59.999999", "2000-00-00 00:00:00", "2038-01-19 03:14:07.999", "1970-01-01 00:00:01", "2001-02-03 04:05:06.000007"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, noSimple := range []bool{false, true} {
				dec := NewDecoder()
				dec.rowsDec.noSimple = noSimple
				dec.SetPrecision(fixturePrecision)
				txn, err := decodeHex(t, dec, c.events...)
				if err != nil {
					t.Fatal(err)
				}
				if len(txn.Rows) != 1 || !reflect.DeepEqual(txn.Rows[0].Images, c.want) {
					t.Fatalf("got %#v\nwant %#v", txn.Rows, c.want)
				}
				if tm := txn.Rows[0].Table; tm.ColumnType[1] == mysql.MYSQL_TYPE_BIT {
					t.Errorf("the Rows' table map is the private copy")
				}
			}
		})
	}
}

// TestOldTemporalUnknownPrecision: without the precision, the rows are
// not decoded, and the error names the table and the column; a table the
// PrecisionFunc skips has no images.
func TestOldTemporalUnknownPrecision(t *testing.T) {
	for _, c := range []struct {
		name      string
		precision PrecisionFunc
		events    []string
		want      []string
	}{
		{"no hook", nil, []string{oldT1Map, oldT1Insert}, []string{"`o`.`t1` column 2 (`a`)", "old-format TIME", "the table is not known"}},
		{"unknown table without old columns", fixturePrecision, []string{vcharMap, vcharInsert}, nil},
		{"not temporal", func(string, string) ([]int, bool) { return []int{-1, -1, 3, -1, -1, -1, -1}, false },
			[]string{oldT2Map, oldT2Delete}, []string{"`o`.`t2` column 2 (`a`)", "DATETIME", "no temporal column there"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dec := NewDecoder()
			if c.precision != nil {
				dec.SetPrecision(c.precision)
			}
			txn, err := decodeHex(t, dec, c.events...)
			if c.want == nil {
				if err != nil || len(txn.Rows) != 1 || len(txn.Rows[0].Images) == 0 {
					t.Fatalf("%v %v", err, txn)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v, want ErrCorrupt", err)
			}
			checkReaderError(t, "Decode", err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
		})
	}
	dec := NewDecoder()
	dec.SetPrecision(func(string, string) ([]int, bool) { return nil, true })
	txn, err := decodeHex(t, dec, oldT1Map, oldT1Insert)
	if err != nil || len(txn.Rows) != 1 || txn.Rows[0].Images != nil {
		t.Fatalf("skipped table: %v %#v", err, txn)
	}
}

// TestDecodeOldVarchar: a pre-5.0.3 VARCHAR column's rows decode on each
// of the Decoder's paths, and its metadata becomes the length.
func TestDecodeOldVarchar(t *testing.T) {
	for _, c := range []struct {
		name   string
		events []string
		want   [][]any
		direct bool // decoded by the Decoder's own reading of simple tables
	}{
		{"vchar", []string{vcharMap, vcharInsert}, [][]any{
			{"abc", "de", int64(3), []byte("jkl")},
			{"abc", "d", int64(3), []byte("jkl    ")},
		}, false},
		{"vbin", []string{vbinMap, vbinInsert}, [][]any{
			{"ab\x00c  ", "xyz"},
			{nil, strings.Repeat("q", 255)},
			{"", ""},
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, noSimple := range []bool{false, true} {
				dec := NewDecoder()
				dec.rowsDec.noSimple = noSimple
				for range 2 { // the second time, from the table maps kept
					txn, err := decodeHex(t, dec, c.events...)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(txn.Rows[0].Images, c.want) {
						t.Errorf("noSimple %v: %#v, want %#v", noSimple, txn.Rows[0].Images, c.want)
					}
					if m := txn.Rows[0].Table.ColumnMeta[0]; m != 30 && m != 255 {
						t.Errorf("metadata %d, want the length", m)
					}
				}
				if !noSimple && c.direct && dec.rowsDec.direct != 2 {
					t.Errorf("%d events decoded directly, want 2", dec.rowsDec.direct)
				}
			}
		})
	}
}

// TestOldTemporalSharedBinlog reads a MariaDB 10.0.17 binlog whose tables
// have TIMESTAMP(n) columns in the 5.3 format, with a catalog that follows
// its DDL (CREATE TABLE, CREATE TABLE ... LIKE), as analyze does.
func TestOldTemporalSharedBinlog(t *testing.T) {
	fr := NewFileReader(sharedPath("pingcap__tiflow/mysql-bin.000001"))
	defer fr.Close()
	r := NewReader(fr)
	cat := schema.NewCatalog()
	r.SetPrecision(cat.TemporalPrecision)
	var got []string
	for {
		txn, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range txn.Statements {
			if st.Kind == StmtDDL {
				if _, err := cat.ApplyDDL(st.Schema, st.Query); err != nil {
					t.Fatalf("%s: %v", st.Query, err)
				}
			}
		}
		for _, rows := range txn.Rows {
			if rows.Schema() != "steven" {
				continue
			}
			for _, img := range rows.Images {
				got = append(got, rows.Name()+" "+img[1].(string))
			}
		}
	}
	want := []string{
		"t 2022-05-16 14:53:10.000",
		"t1 2022-05-16 14:55:47",
		"t2 2022-05-16 14:56:37.0000",
		"t3 2022-05-18 03:04:55",
		"t3 2022-05-18 03:05:05",
		"t5 2022-05-18 03:07:06.0",
		"t6 2022-05-18 03:10:02.0000",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
