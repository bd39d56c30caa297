package clone

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/paraply/paraply/internal/verify"
)

// How a value travels: the source session reads every column as text
// with character_set_results=binary, so that a string comes as the bytes
// stored in the column's own character set, never converted; the target
// session writes it with character_set_client=binary, as an escaped
// literal whose introducer names the column's character set (_latin1'…'),
// so that the server takes the bytes as they are in that set. Escaping in
// a binary client character set is byte by byte, and so safe for every
// character set, sjis and gbk included (their second bytes may be a
// backslash). A value is never converted on the way, and never doubled in
// size as hex would double it (a BLOB of 20 MB stays a statement of about
// 20 MB). Numbers and temporal values are the server's own text of them,
// which it reads back exactly: FLOAT is read as a DOUBLE (a FLOAT's own
// text has six digits), BIT, ENUM and SET as their number.

// kind is how a column's value is written.
type kind uint8

const (
	numberKind kind = iota // the text read, as it is
	quotedKind             // the text read, quoted: dates and times
	textKind               // quoted, with the column's character set as introducer
	bytesKind              // quoted, a binary string
)

// column is how one column is read and written.
type column struct {
	name    string // unquoted
	sel     string // the select expression
	kind    kind
	charset string // textKind's introducer
	// load is what LOAD DATA sets the column to from its field in user
	// variable @v: "" to load the field into the column as it is.
	load string
}

// charsetName guards the character set names that go into SQL text.
var charsetName = regexp.MustCompile(`^[a-z0-9_]+$`)

// newColumn returns how column c is copied.
func newColumn(c *verify.Column) (column, error) {
	q := quote(c.Name)
	col := column{name: c.Name, sel: q}
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric", "double", "real", "year":
		col.kind = numberKind
	case "float":
		col.kind, col.sel = numberKind, "CAST("+q+" AS DOUBLE)"
	case "bit", "enum", "set":
		// LOAD DATA would take the number for text (an ENUM's label).
		col.kind, col.sel, col.load = numberKind, "("+q+" + 0)", "CAST(@v AS UNSIGNED)"
	case "date", "datetime", "time", "timestamp":
		col.kind = quotedKind
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "json":
		col.kind, col.charset = textKind, c.Charset
		if c.Charset == "" || c.Charset == "binary" {
			col.kind = bytesKind
		}
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob",
		"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		col.kind = bytesKind
	default:
		// INET4, INET6, UUID and types paraply does not know: their text,
		// which the server parses back (as a binary string of 16 bytes an
		// INET6 would be taken for its binary form).
		col.kind, col.charset, col.load = textKind, "utf8mb4", "CONVERT(@v USING utf8mb4)"
	}
	if col.kind == textKind && !charsetName.MatchString(col.charset) {
		return col, fmt.Errorf("column %s: unexpected character set %q", q, col.charset)
	}
	return col, nil
}

// appendValue appends v, the text the source sent for column c (nil for
// NULL), as a literal.
func appendValue(b []byte, c *column, v []byte) []byte {
	if v == nil {
		return append(b, "NULL"...)
	}
	switch c.kind {
	case numberKind:
		return append(b, v...)
	case textKind:
		b = append(append(b, '_'), c.charset...)
	case bytesKind:
		b = append(b, "_binary"...)
	}
	b = append(b, '\'')
	b = appendEscaped(b, v, &literalEscapes)
	return append(b, '\'')
}

// escapes says, for each byte that is escaped, the letter that follows
// the backslash in its place.
type escapes [256]byte

var (
	// literalEscapes escape a single-quoted literal, as
	// mysql_real_escape_string does (without NO_BACKSLASH_ESCAPES, which
	// the target session does not set).
	literalEscapes = escapes{0: '0', '\n': 'n', '\r': 'r', '\\': '\\', '\'': '\'', 0x1a: 'Z'}
	// fieldEscapes escape a field of LOAD DATA's default format: the tab
	// and newline that end fields and lines, the backslash, and NUL.
	fieldEscapes = escapes{0: '0', '\t': 't', '\n': 'n', '\\': '\\'}
)

// appendEscaped appends v with the bytes esc names escaped.
func appendEscaped(b, v []byte, esc *escapes) []byte {
	for _, c := range v {
		if e := esc[c]; e != 0 {
			b = append(b, '\\', e)
			continue
		}
		b = append(b, c)
	}
	return b
}

// appendField appends v (nil for NULL) as a field of LOAD DATA's default
// format read in CHARACTER SET binary: \N for NULL.
func appendField(b, v []byte) []byte {
	if v == nil {
		return append(b, '\\', 'N')
	}
	return appendEscaped(b, v, &fieldEscapes)
}

// quote quotes an identifier with backticks.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// quoteTable is db.name, quoted.
func quoteTable(db, name string) string { return quote(db) + "." + quote(name) }

// inline returns q with each placeholder ? outside quoted identifiers and
// strings replaced by the next argument as an escaped string literal: the
// key bounds verify's Keys put in placeholders, for a query sent as text
// (the source session reads as text, without a prepared statement).
func inline(q string, args []any) string {
	var b strings.Builder
	n := 0
	var in byte // the quote character of the quoted part q is in, 0 if none
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case in != 0:
			if c == in {
				in = 0
			}
		case c == '`' || c == '\'' || c == '"':
			in = c
		case c == '?' && n < len(args):
			b.WriteByte('\'')
			b.Write(appendEscaped(nil, []byte(fmt.Sprint(args[n])), &literalEscapes))
			b.WriteByte('\'')
			n++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
