package verify

import (
	"fmt"
	"regexp"
	"strings"
)

// keyCol is how one key column is read, compared and shown.
type keyCol struct {
	name  string
	raw   string // SQL: the value as text that round-trips exactly through param
	disp  string // SQL: the value as shown; "" to show raw as 0x hex (binary strings)
	param string // SQL: a placeholder "?" holding raw, turned back into a value comparable with the column in index order
	bare  bool   // shown without quotes (numbers)
}

// charsetName guards the character set and collation names that go into SQL
// text: they come from information_schema, not from the user, but are
// checked anyway.
var charsetName = regexp.MustCompile(`^[a-z0-9_]+$`)

// newKeyCol returns how to handle key column c; see the package doc.
func newKeyCol(c *column) (keyCol, error) {
	q := quoteIdent(c.Name)
	k := keyCol{name: c.Name, raw: q, disp: q, param: "?"}
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		k.param, k.bare = "CAST(? AS SIGNED)", true
		if strings.Contains(c.Type, "unsigned") {
			k.param = "CAST(? AS UNSIGNED)"
		}
	case "decimal", "numeric":
		k.param, k.bare = fmt.Sprintf("CAST(? AS DECIMAL(%d, %d))", c.Precision, c.Scale), true
	case "float", "double", "real":
		k.raw, k.param, k.bare = "CAST("+q+" AS DOUBLE)", "CAST(? AS DOUBLE)", true
		k.disp = k.raw
	case "bit", "year":
		k.raw, k.param, k.bare = "("+q+" + 0)", "CAST(? AS UNSIGNED)", true
		k.disp = k.raw
	case "enum", "set":
		k.raw, k.param = "("+q+" + 0)", "CAST(? AS UNSIGNED)"
	case "date":
		k.param = "CAST(? AS DATE)"
	case "datetime":
		k.param = "CAST(? AS DATETIME(6))"
	case "time":
		k.param = "CAST(? AS TIME(6))"
	case "timestamp":
		k.raw, k.param = "UNIX_TIMESTAMP("+q+")", "FROM_UNIXTIME(CAST(? AS DECIMAL(20, 6)))"
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext",
		"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		k.raw = "HEX(" + q + ")"
		if c.Charset == "" || c.Charset == "binary" {
			k.disp, k.param = "", "UNHEX(?)"
			break
		}
		if !charsetName.MatchString(c.Charset) || !charsetName.MatchString(c.Collation) {
			return k, fmt.Errorf("key column %s: unexpected character set %q or collation %q", q, c.Charset, c.Collation)
		}
		k.param = "CONVERT(UNHEX(?) USING " + c.Charset + ") COLLATE " + c.Collation
	}
	return k, nil
}

// hashTerm is the term of column c in the row hash; see the package doc.
func hashTerm(c *column) string {
	q := quoteIdent(c.Name)
	switch c.DataType {
	case "char", "varchar", "binary", "varbinary", "enum", "set":
		return "HEX(" + q + ")"
	case "float":
		return "CAST(" + q + " AS DOUBLE)"
	case "timestamp":
		return "UNIX_TIMESTAMP(" + q + ")"
	case "bit":
		return "(" + q + " + 0)"
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint",
		"decimal", "numeric", "double", "real", "date", "datetime", "time", "year":
		return q
	}
	// TEXT, BLOB, JSON, geometry, and types this package does not know
	// (INET6, UUID, ...): the bytes the server returns, whatever their
	// length.
	return "MD5(" + q + ")"
}

// plan holds the SQL text for comparing one table. The queries that read
// the table take its quoted name on the side they run on (session.from):
// --rewrite-db gives it another schema on the target.
type plan struct {
	cols    []*column // the hashed columns: all but virtual generated ones
	hash    string    // the row hash, 32 hex digits
	key     []keyCol  // the chunking key; nil if the table has none
	keyName string
	orderBy string // " ORDER BY" the key columns, or ""
}

// newPlan builds the plan for t (the source's description).
func newPlan(t *table) (*plan, error) {
	p := &plan{}
	var terms, nulls []string
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Generated == "VIRTUAL" {
			continue
		}
		p.cols = append(p.cols, c)
		terms = append(terms, hashTerm(c))
		if c.Nullable {
			nulls = append(nulls, "ISNULL("+quoteIdent(c.Name)+")")
		}
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("%s has no stored columns", t.Name)
	}
	if len(nulls) > 0 {
		terms = append(terms, "CONCAT("+strings.Join(nulls, ", ")+")")
	}
	p.hash = "MD5(CONCAT_WS('#', " + strings.Join(terms, ", ") + "))"

	ix := t.chunkKey()
	if ix == nil {
		return p, nil
	}
	p.keyName = ix.Name
	order := make([]string, len(ix.Columns))
	for i, name := range ix.Columns {
		k, err := newKeyCol(t.column(name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		p.key = append(p.key, k)
		order[i] = quoteIdent(name)
	}
	p.orderBy = " ORDER BY " + strings.Join(order, ", ")
	return p, nil
}

// keyColumns names the columns a row is identified by in the report: the
// key's, or for a keyless table all hashed columns.
func (p *plan) keyColumns() []string {
	var names []string
	if p.key != nil {
		for _, k := range p.key {
			names = append(names, k.name)
		}
		return names
	}
	for _, c := range p.cols {
		names = append(names, c.Name)
	}
	return names
}

// keySelect is the select list of a key: the raw values, then the shown
// ones.
func (p *plan) keySelect() string {
	var b strings.Builder
	for i, k := range p.key {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k.raw)
	}
	for _, k := range p.key {
		b.WriteString(", ")
		if k.disp == "" {
			b.WriteString("NULL")
		} else {
			b.WriteString(k.disp)
		}
	}
	return b.String()
}

// compare returns the condition key > b (after) or key <= b (!after), with
// its arguments. It is spelled a > x OR (a = x AND (b > y ...)) because
// MariaDB uses an index range for that but not for (a, b) > (x, y).
func (p *plan) compare(b []string, after bool) (string, []any) {
	op, last := "<", "<="
	if after {
		op, last = ">", ">"
	}
	var sb strings.Builder
	var args []any
	n := len(p.key)
	for i, k := range p.key {
		q := quoteIdent(k.name)
		if i == n-1 {
			sb.WriteString(q + " " + last + " " + k.param)
			args = append(args, b[i])
			break
		}
		sb.WriteString("(" + q + " " + op + " " + k.param + " OR (" + q + " = " + k.param + " AND ")
		args = append(args, b[i], b[i])
	}
	sb.WriteString(strings.Repeat("))", n-1))
	return sb.String(), args
}

// where returns the WHERE clause (with its leading space) of the chunk
// (lower, upper]; a nil bound is open.
func (p *plan) where(lower, upper []string) (string, []any) {
	var conds []string
	var args []any
	if lower != nil {
		c, a := p.compare(lower, true)
		conds, args = append(conds, c), append(args, a...)
	}
	if upper != nil {
		c, a := p.compare(upper, false)
		conds, args = append(conds, c), append(args, a...)
	}
	if conds == nil {
		return "", nil
	}
	return " WHERE (" + strings.Join(conds, ") AND (") + ")", args
}

// boundarySQL selects the key of the row ChunkSize rows after lower: its
// arguments are those of where(lower, nil), then the offset.
func (p *plan) boundarySQL(from, where string) string {
	return "SELECT " + p.keySelect() + " FROM " + from + where + p.orderBy + " LIMIT 1 OFFSET ?"
}

// checksumSQL selects the row count, the two hash aggregates and the number
// of rows whose hash is NULL (which must be 0), then pad.
func (p *plan) checksumSQL(from, where, pad string) string {
	return "SELECT COUNT(*), COALESCE(SUM(CAST(CONV(LEFT(h, 16), 16, 10) AS UNSIGNED)), 0), " +
		"BIT_XOR(CAST(CONV(RIGHT(h, 16), 16, 10) AS UNSIGNED)), COALESCE(SUM(h IS NULL), 0)" + pad +
		" FROM (SELECT " + p.hash + " AS h FROM " + from + where + ") AS chunk"
}

// sourceChunkSQL is the source's query for a chunk that has an upper bound:
// the checksum row of checksumSQL(where), padded with NULL keys, and the row
// of boundarySQL(nextWhere), the next chunk's upper bound, padded with NULL
// sums. One round trip does both, and the walk takes one per chunk on each
// side. Its arguments are where's, nextWhere's, then the offset.
func (p *plan) sourceChunkSQL(from, where, nextWhere string) string {
	nulls := strings.Repeat(", NULL", 2*len(p.key))
	return "(" + p.checksumSQL(from, where, nulls) + ") UNION ALL (SELECT NULL, NULL, NULL, NULL, " +
		p.keySelect() + " FROM " + from + nextWhere + p.orderBy + " LIMIT 1 OFFSET ?)"
}

// rowsSQL selects the key and hash of each row of a chunk, in key order.
func (p *plan) rowsSQL(from, where string) string {
	return "SELECT " + p.keySelect() + ", " + p.hash + " FROM " + from + where + p.orderBy
}

// groupsSQL selects each distinct row hash of a keyless table with its
// number of rows, in hash order (hex digits sort the same in any
// collation as in Go).
func (p *plan) groupsSQL(from string) string {
	return "SELECT h, COUNT(*) FROM (SELECT " + p.hash + " AS h FROM " + from + ") AS r GROUP BY h ORDER BY h"
}

// rowsByHashSQL selects the hash and the shown columns (see showExpr) of
// the rows of a keyless table whose hash is one of n placeholders.
func (p *plan) rowsByHashSQL(from string, n int) string {
	var sel strings.Builder
	for _, c := range p.cols {
		sel.WriteString(", " + showExpr(c))
	}
	return "SELECT " + p.hash + sel.String() + " FROM " + from +
		" WHERE " + p.hash + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// showExpr is how a column of a keyless table's row is selected for the
// report: bytes in hex, BIT as a number, anything else as text.
func showExpr(c *column) string {
	q := quoteIdent(c.Name)
	switch {
	case isBinary(c):
		return "HEX(" + q + ")"
	case c.DataType == "bit":
		return "(" + q + " + 0)"
	}
	return q
}

// isBinary reports whether c holds bytes, which are shown in hex.
func isBinary(c *column) bool {
	switch c.DataType {
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return true
	}
	return false
}

// isNumeric reports whether c's values are shown without quotes.
func isNumeric(c *column) bool {
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint",
		"decimal", "numeric", "float", "double", "real", "year", "bit":
		return true
	}
	return false
}
