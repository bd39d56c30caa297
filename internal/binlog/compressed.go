package binlog

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"fmt"
	"io"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// MariaDB 10.3 added compressed columns: BLOB, TEXT, VARCHAR and VARBINARY
// declared COMPRESSED (SHOW CREATE TABLE says "blob /*M!100301
// COMPRESSED*/"). The server keeps their values, and logs them in row
// images, in the form it stores them:
//
//   - the table map types such columns MYSQL_TYPE_BLOB_COMPRESSED (140) and
//     MYSQL_TYPE_VARCHAR_COMPRESSED (141), with BLOB's metadata (how many
//     bytes the length takes, 1 to 4) and VARCHAR's (the maximum length in
//     bytes, the header byte counted: 101 for a latin1 VARCHAR(100)), and
//     lists their collations in the optional metadata as any string
//     column's;
//   - a value is a length, as a BLOB's or a VARCHAR's, then nothing for
//     the empty string, else a header byte and the stored bytes. The high
//     four bits of the header are the method: 0, the value follows as it
//     is (it is shorter than column_compression_threshold, or did not
//     shrink); 8, zlib: the low three bits say how many bytes the
//     original length takes, big-endian, after the header, and a raw
//     deflate stream follows it if bit 3 is set
//     (column_compression_zlib_wrap=OFF, the default), a zlib stream if
//     not. Other methods are not defined.
//
// go-mysql knows neither type: it reads no metadata byte for them, which
// shifts the metadata of every later column, and refuses their values.
// The Decoder reads them as the types whose layout they share: tableMap
// gives go-mysql its private copy of the table map with BLOB and VARCHAR
// in their place (plainCompressed) and notes the columns
// (fullTableMap.compressed), whose values addRows then replaces by the
// ones they store, read as the source server reads them (decompressRows).
// Rows thus carry the table map with the plain types and the uncompressed
// values, and the rest of paraply handles the columns as the BLOB, TEXT
// or VARCHAR they hold: the SQL path writes the original bytes, which the
// target's column, compressed too, compresses itself, and the BINLOG path
// passes the events on as they came. A value that does not decompress is
// an error wrapping ErrCorrupt that names the table and the column.

// MariaDB's binary log types of compressed columns (its field.h), which
// go-mysql does not define.
const (
	typeBlobCompressed    = 140
	typeVarcharCompressed = 141
)

// zlibMethod is the method of a compressed value stored with zlib, the
// only one MariaDB defines (compression_methods in its field_comp.cc).
const zlibMethod = 8

// plainCompressed replaces, in data, a table map event, the types of the
// compressed columns by BLOB and VARCHAR, and returns the columns'
// indexes. Where the column types are not where they should be, data is
// left as it is: go-mysql's decoding then reports what is wrong.
func plainCompressed(data []byte) []int {
	_, _, tableAt, err := tableMapNames(data)
	if err != nil {
		return nil
	}
	p := tableAt + 1 + int(data[tableAt]) + 1 // the table name and its NUL
	count, n, ok := packedInt(data[p:])
	if !ok || count > uint64(len(data)-p-n) {
		return nil
	}
	types := data[p+n : p+n+int(count)]
	var cols []int
	for i, tp := range types {
		switch tp {
		case typeBlobCompressed:
			types[i] = mysql.MYSQL_TYPE_BLOB
		case typeVarcharCompressed:
			types[i] = mysql.MYSQL_TYPE_VARCHAR
		default:
			continue
		}
		cols = append(cols, i)
	}
	return cols
}

// decompressRows replaces the values of full's compressed columns in rows
// by the values they store.
func (full *fullTableMap) decompressRows(rows [][]any) error {
	for _, row := range rows {
		for _, c := range full.compressed {
			if c >= len(row) || row[c] == nil {
				continue
			}
			v, err := full.decompress(c, row[c])
			if err != nil {
				return fmt.Errorf("%w: %s %s: a compressed value that does not decompress: %w",
					ErrCorrupt, quoteName(full.schema, full.table), columnLabel(full.tm, c), err)
			}
			row[c] = v
		}
	}
	return nil
}

// decompress returns the value that v, the stored form of compressed
// column c as go-mysql decodes the plain type (BLOB: []byte, VARCHAR:
// string), stores, of the same Go type.
func (full *fullTableMap) decompress(c int, v any) (any, error) {
	meta := uint64(full.tm.ColumnMeta[c])
	switch x := v.(type) {
	case []byte:
		if meta < 1 || meta > 4 {
			return nil, fmt.Errorf("a BLOB length of %d bytes", meta)
		}
		return decompressStored(x, 1<<(8*meta)-1)
	case string:
		b, err := decompressStored([]byte(x), meta)
		return string(b), err
	}
	return nil, fmt.Errorf("decoded as %T", v)
}

// decompressStored returns the value that a compressed column of at most
// limit bytes stores as b (what follows the length in a row image), as
// MariaDB's Field_longstr::uncompress reads it: a zlib stream that ends
// before the original length its header gives is the shorter value, one
// that goes on past it an error.
func decompressStored(b []byte, limit uint64) ([]byte, error) {
	if len(b) == 0 {
		return b, nil // the empty string has no header
	}
	head := b[0]
	switch method := head >> 4; method {
	case 0:
		return b[1:], nil
	case zlibMethod:
	default:
		return nil, fmt.Errorf("header %#02x: compression method %d, not zlib (%d)", head, method, zlibMethod)
	}
	n := int(head & 7)
	if len(b) < 1+n {
		return nil, fmt.Errorf("%d bytes, too short for a header and the %d-byte length it announces", len(b), n)
	}
	var size uint64
	for _, x := range b[1 : 1+n] {
		size = size<<8 | uint64(x)
	}
	if size > limit {
		return nil, fmt.Errorf("an original length of %d bytes, more than the column's %d", size, limit)
	}
	stream := bytes.NewReader(b[1+n:])
	var r io.Reader
	if head&8 != 0 {
		r = flate.NewReader(stream)
	} else {
		zr, err := zlib.NewReader(stream)
		if err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		r = zr
	}
	// The length bounds the output; it is not trusted with an allocation.
	out := bytes.NewBuffer(make([]byte, 0, min(size, 1<<20)))
	got, err := io.Copy(out, io.LimitReader(r, int64(size)+1))
	if err != nil {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	if uint64(got) > size {
		return nil, fmt.Errorf("it inflates past the %d bytes its header gives", size)
	}
	return out.Bytes(), nil
}

// columnLabel names column i of tm in messages: "column 3 (`b`)", its
// name only with binlog_row_metadata=FULL.
func columnLabel(tm *replication.TableMapEvent, i int) string {
	col := "column " + strconv.Itoa(i+1)
	if i < len(tm.ColumnName) {
		// ColumnName, not ColumnNameString, which caches its result in
		// tm, shared by the Rows of other goroutines.
		col += " (" + quoteIdent(string(tm.ColumnName[i])) + ")"
	}
	return col
}
