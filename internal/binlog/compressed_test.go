package binlog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Events of a MariaDB 10.11.19 source (binlog_row_metadata=FULL, the
// format of oldFDE), of
//
//	CREATE TABLE z (id INT PRIMARY KEY, b BLOB COMPRESSED,
//	  t TEXT COMPRESSED CHARACTER SET utf8mb4,
//	  v VARCHAR(300) COMPRESSED CHARACTER SET utf8mb4,
//	  l VARCHAR(100) COMPRESSED CHARACTER SET latin1, tb TINYBLOB COMPRESSED,
//	  mt MEDIUMTEXT COMPRESSED CHARACTER SET latin1, lb LONGBLOB COMPRESSED);
//	INSERT INTO z VALUES (1, '', '', '', '', '', '', ''),
//	  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
//	  (3, 'x', 'é', 'short', 'ÿ', 'tb', 'mt', 'lb'),
//	  (4, REPEAT('abc', 100), REPEAT('é🙂', 60), REPEAT('ü', 300),
//	   REPEAT('ÿ', 100), REPEAT('z', 200), REPEAT('mediumtext ', 40),
//	   REPEAT('L', 70000));
//	SET SESSION column_compression_zlib_wrap = ON;
//	UPDATE z SET b = REPEAT('w', 500) WHERE id = 3;
//	SET SESSION column_compression_zlib_wrap = OFF;
//	INSERT INTO z (id, b) VALUES (5, CONCAT(UNHEX(SHA2('1',256)), ...,
//	  UNHEX(SHA2('7',256))));
//	DELETE FROM z WHERE id = 4;
//	CREATE TABLE s (id INT PRIMARY KEY,
//	  v VARCHAR(1000) COMPRESSED CHARACTER SET utf8mb4);
//	INSERT INTO s VALUES (1, REPEAT('ab', 400)), (2, 'short'), (3, NULL), (4, '');
//
// Row 4's long values are compressed (raw deflate), the update's with
// zlib's wrapping; the short ones, and row 5's 224 bytes that do not
// shrink, are stored as they are.
const (
	zMap = "5a0a0a6b13010000005e000000d004000000001800000000000100017a00017a0008038c8c8d8d8c8c8c090202b104650001" +
		"0304fe01010003073f2d2d083f083f0414026964016201740176016c027462026d74026c62080100300a65ec"
	zInsert = "5a0a0a6b170100000020010000f00500000000180000000000010008ff0001000000000000000000000000000000000000fe" +
		"02000000000300000002000078030000c3a906000073686f72740200ff03007462030000006d7403000000006c6200040000" +
		"000c008a012c4b4c4a4e1c45c4210010008a01683bbcf2c3fc994d8747491a93000d008a02583bbce7f0281c855487000889" +
		"64fbff9ff600000889c8abaa1a1e00001500008a01b8cb4d4dc92ccd2d49ad2851c81d650e1d26005a0000008b011170edc1" +
		"3101000000c2a082eb9fc7129e40010000000000000000000000000000000000000000000000000000000000000000000000" +
		"00000000000000000000000000000000000000000000000000000000000000006f03c2d9f400"
	zUpdate = "5a0a0a6b180100000085000000610700000000180000000000010008ffff000300000002000078030000c3a906000073686f" +
		"72740200ff03007462030000006d7403000000006c62000300000011008201f4789c2b2f1f05230d00007cefe86d030000c3" +
		"a906000073686f72740200ff03007462030000006d7403000000006c62958b3681"
	zInsertIncompressible = "5a0a0a6b170100000009010000e40900000000180000000000010008fffc05000000e100006b86b273ff34fce19d6b804eff" +
		"5a3f5747ada4eaa22f1d49c01e52ddb7875b4bd4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab" +
		"354e07408562bedb8b60ce05c1decfe3ad16b72230967de01f640b7e4729b49fce4b227777d4dd1fc61c6f884f48641d02b4" +
		"d121d3fd328cb08b5531fcacdabf8aef2d127de37b942baad06145e54b0c619a1f22327b2ebbcfbec78f5564afe39de7f6c0" +
		"11776e8db7cd330b54174fd76f7d0216b612387a5ffcfb81e6f09196837902699be42c8a8e46fbbb4501726517e86b22c56a" +
		"189f7625a6da49081b2451934651b9"
	zDelete = "5a0a0a6b1901000000dd000000990b00000000180000000000010008ff00040000000c008a012c4b4c4a4e1c45c421001000" +
		"8a01683bbcf2c3fc994d8747491a93000d008a02583bbce7f0281c85548700088964fbff9ff600000889c8abaa1a1e000015" +
		"00008a01b8cb4d4dc92ccd2d49ad2851c81d650e1d26005a0000008b011170edc13101000000c2a082eb9fc7129e40010000" +
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000006f0372651187"
	sMap = "5a0a0a6b13010000003c0000004a0d000000001900000000000100017a0001730002038d02a10f0201010002012d04050269" +
		"64017608010035f72c06"
	sInsert = "5a0a0a6b17010000004f000000990d0000000019000000000001000203fc010000000e008a03204b4c4a1c85a37014e28000" +
		"fc0200000006000073686f7274fe03000000fc04000000000038bce930"
)

// zRow3 and zRow4 are rows 3 and 4 of table z as the Decoder gives them:
// BLOB and TEXT values as []byte, VARCHAR values as strings.
var (
	zRow3 = []any{int32(3), []byte("x"), []byte("é"), "short", "\xff", []byte("tb"), []byte("mt"), []byte("lb")}
	zRow4 = []any{int32(4), []byte(strings.Repeat("abc", 100)), []byte(strings.Repeat("é🙂", 60)), strings.Repeat("ü", 300),
		strings.Repeat("\xff", 100), []byte(strings.Repeat("z", 200)), []byte(strings.Repeat("mediumtext ", 40)),
		[]byte(strings.Repeat("L", 70000))}
)

// incompressible is row 5's b: 224 bytes of SHA-256 digests.
func incompressible() []byte {
	var b []byte
	for _, s := range []string{"1", "2", "3", "4", "5", "6", "7"} {
		h := sha256.Sum256([]byte(s))
		b = append(b, h[:]...)
	}
	return b
}

// renderImages renders row images as renderValue writes values, which
// tells []byte from string and an empty value from NULL.
func renderImages(images [][]any) string {
	var b strings.Builder
	for _, img := range images {
		b.WriteString("(")
		for i, v := range img {
			if i > 0 {
				b.WriteString(", ")
			}
			renderValue(&b, v)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// TestDecodeCompressedColumns: the rows of tables with compressed columns
// decode to the values the source stores, on each of the Decoder's
// paths, from a table map decoded afresh and from one kept; the table map
// the Rows carry has the plain types, their metadata and the collations
// of its optional metadata.
func TestDecodeCompressedColumns(t *testing.T) {
	for _, c := range []struct {
		name   string
		events []string
		want   [][]any
		direct bool // decoded by the Decoder's own reading of simple tables
	}{
		{"insert", []string{zMap, zInsert}, [][]any{
			{int32(1), []byte{}, []byte{}, "", "", []byte{}, []byte{}, []byte{}},
			{int32(2), nil, nil, nil, nil, nil, nil, nil},
			zRow3, zRow4,
		}, false},
		{"update with zlib wrapping", []string{zMap, zUpdate}, [][]any{
			zRow3,
			append([]any{int32(3), []byte(strings.Repeat("w", 500))}, zRow3[2:]...),
		}, false},
		{"insert stored as is", []string{zMap, zInsertIncompressible}, [][]any{
			{int32(5), incompressible(), nil, nil, nil, nil, nil, nil},
		}, false},
		{"delete", []string{zMap, zDelete}, [][]any{zRow4}, false},
		{"varchar only", []string{sMap, sInsert}, [][]any{
			{int32(1), strings.Repeat("ab", 400)}, {int32(2), "short"}, {int32(3), nil}, {int32(4), ""},
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, noSimple := range []bool{false, true} {
				dec := NewDecoder()
				dec.rowsDec.noSimple = noSimple
				for range 2 { // the second time, from the table map kept
					txn, err := decodeHex(t, dec, c.events...)
					if err != nil {
						t.Fatalf("noSimple %v: %v", noSimple, err)
					}
					if len(txn.Rows) != 1 {
						t.Fatalf("noSimple %v: %d Rows, want 1", noSimple, len(txn.Rows))
					}
					if got, want := renderImages(txn.Rows[0].Images), renderImages(c.want); got != want {
						t.Errorf("noSimple %v: %s", noSimple, diffLine(want, got))
					}
				}
				if want := 0; !noSimple && c.direct {
					if want = 2; dec.rowsDec.direct != want {
						t.Errorf("%d events decoded directly, want %d", dec.rowsDec.direct, want)
					}
				}
			}
		})
	}
}

// TestCompressedTableMap: the Rows' table map types compressed columns as
// BLOB and VARCHAR, with the metadata the source wrote, and the optional
// metadata, which MariaDB writes for them as for any string column, lines
// up: every later column keeps its own.
func TestCompressedTableMap(t *testing.T) {
	txn, err := decodeHex(t, NewDecoder(), zMap, zInsert)
	if err != nil {
		t.Fatal(err)
	}
	tm := txn.Rows[0].Table
	blob, varchar := mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_VARCHAR
	if want := []byte{mysql.MYSQL_TYPE_LONG, blob, blob, varchar, varchar, blob, blob, blob}; !slices.Equal(tm.ColumnType, want) {
		t.Errorf("types %v, want %v", tm.ColumnType, want)
	}
	if want := []uint16{0, 2, 2, 1201, 101, 1, 3, 4}; !slices.Equal(tm.ColumnMeta, want) {
		t.Errorf("metadata %v, want %v", tm.ColumnMeta, want)
	}
	// binary 63, utf8mb4_general_ci 45, latin1_swedish_ci 8.
	if got, want := tm.CollationMap(), map[int]uint64{1: 63, 2: 45, 3: 45, 4: 8, 5: 63, 6: 8, 7: 63}; !maps.Equal(got, want) {
		t.Errorf("collations %v, want %v", got, want)
	}
	if got, want := tm.ColumnNameString(), []string{"id", "b", "t", "v", "l", "tb", "mt", "lb"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// TestCompressedValueDamaged: a value that does not decompress stops the
// decoding with an error wrapping ErrCorrupt that names the table and the
// column, on each of the Decoder's paths.
func TestCompressedValueDamaged(t *testing.T) {
	for _, c := range []struct {
		name   string
		events []string
		want   string
	}{
		// Row 4's b: its header says method 9.
		{"method", []string{zMap, strings.Replace(zInsert, "0c008a012c", "0c009a012c", 1)}, "`z`.`z` column 2 (`b`)"},
		// Row 1's v: its header says 799 bytes, its stream holds 800.
		{"length", []string{sMap, strings.Replace(sInsert, "0e008a0320", "0e008a031f", 1)}, "`z`.`s` column 2 (`v`)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.events[1] == zInsert || c.events[1] == sInsert {
				t.Fatal("the damage did not apply")
			}
			for _, noSimple := range []bool{false, true} {
				dec := NewDecoder()
				dec.rowsDec.noSimple = noSimple
				_, err := decodeHex(t, dec, c.events...)
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("noSimple %v: error %v, want ErrCorrupt", noSimple, err)
				}
				checkReaderError(t, "Decode", err)
				for _, w := range []string{c.want, "does not decompress"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("noSimple %v: the error does not say %q: %v", noSimple, w, err)
					}
				}
			}
		})
	}
}

// TestDecompressStored reads stored values the server wrote, and damaged
// ones.
func TestDecompressStored(t *testing.T) {
	const (
		abc  = "8a012c4b4c4a4e1c45c42100"           // REPEAT('abc', 100), raw deflate
		www  = "8201f4789c2b2f1f05230d00007cefe86d" // REPEAT('w', 500), zlib
		blob = 65535
	)
	for _, c := range []struct {
		name   string
		stored string
		limit  uint64
		want   string // "" with err set
		err    string
	}{
		{"empty", "", blob, "", ""},
		{"as is", "0078", blob, "x", ""},
		{"as is, empty", "00", blob, "", ""},
		{"raw deflate", abc, blob, strings.Repeat("abc", 100), ""},
		{"zlib", www, blob, strings.Repeat("w", 500), ""},
		{"at the column's limit", abc, 300, strings.Repeat("abc", 100), ""},
		// The server reads a stream that ends early as the shorter value.
		{"length above the stream's", "8a012d" + abc[6:], blob, strings.Repeat("abc", 100), ""},
		{"over the column's limit", abc, 299, "", "more than the column's 299"},
		{"length below the stream's", "8a012b" + abc[6:], blob, "", "inflates past the 299 bytes"},
		{"method 9", "9a" + abc[2:], blob, "", "compression method 9"},
		{"method 1", "1078", blob, "", "compression method 1"},
		{"cut length", "8c012c", blob, "", "too short"},
		{"cut stream", abc[:len(abc)-4], blob, "", "zlib: "},
		{"zlib checksum", www[:len(www)-2] + "6e", blob, "", "zlib: "},
		{"zlib header", "8201f4" + "0000" + www[10:], blob, "", "zlib: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			stored, err := hex.DecodeString(c.stored)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decompressStored(stored, c.limit)
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one saying %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err == "" && string(got) != c.want:
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
}
