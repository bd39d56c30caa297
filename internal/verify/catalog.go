package verify

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/checkpoint"
)

// column is one column of a table, as information_schema describes it.
type column struct {
	Name      string
	DataType  string // DATA_TYPE in lower case: "int", "varchar", ...
	Type      string // COLUMN_TYPE, normalized by normalizeType
	Nullable  bool
	Charset   string // "" for non-string and binary-string columns
	Collation string // "" likewise
	Generated string // "", "VIRTUAL" or "STORED"
	GenExpr   string
	Precision int64 // NUMERIC_PRECISION and NUMERIC_SCALE, for DECIMAL
	Scale     int64
}

// index is a unique key.
type index struct {
	Name    string
	Columns []string
	Type    string // INDEX_TYPE: BTREE, HASH (MariaDB's long unique), ...
}

// table is a base table with its columns in order and its unique keys.
type table struct {
	Name    TableName
	Columns []column
	Unique  []index // loaded on the source only
}

// column returns the column called name, or nil.
func (t *table) column(name string) *column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// chunkKey picks the key to walk the table by: the primary key, else the
// unique key with the fewest columns (then the first by name) whose columns
// are all NOT NULL. Long-unique HASH keys cannot be read in order and are
// skipped, and so are keys on expressions. It returns nil if there is none.
func (t *table) chunkKey() *index {
	var best *index
	for i := range t.Unique {
		ix := &t.Unique[i]
		if ix.Name == "PRIMARY" {
			return ix
		}
		if !t.usable(ix) {
			continue
		}
		if best == nil || len(ix.Columns) < len(best.Columns) ||
			len(ix.Columns) == len(best.Columns) && ix.Name < best.Name {
			best = ix
		}
	}
	return best
}

// usable reports whether ix may be used as a chunking key.
func (t *table) usable(ix *index) bool {
	if strings.EqualFold(ix.Type, "HASH") {
		return false
	}
	for _, name := range ix.Columns {
		c := t.column(name)
		if c == nil || c.Nullable {
			return false
		}
	}
	return len(ix.Columns) > 0
}

// catalog is the base tables of one server.
type catalog map[TableName]*table

// scope selects the schemas a catalog is read from: the named ones, or all
// but excludedSchemas if none is named; and the kinds of table
// (information_schema's TABLE_TYPE), BASE TABLE if none is named.
type scope struct {
	schemas []string
	types   []string
}

// typeWhere returns the condition on information_schema's TABLE_TYPE.
func (s scope) typeWhere() (string, []any) {
	types := s.types
	if len(types) == 0 {
		types = []string{"BASE TABLE"}
	}
	args := make([]any, len(types))
	for i, t := range types {
		args[i] = t
	}
	return "TABLE_TYPE IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(types)), ", ") + ")", args
}

// where returns the condition on information_schema's TABLE_SCHEMA column.
func (s scope) where() (string, []any) {
	names, op, more := s.schemas, "IN", ""
	if len(names) == 0 {
		names, op, more = excludedSchemas, "NOT IN", " AND "+checkpoint.BookkeepingSQL("TABLE_SCHEMA")
	}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	return "TABLE_SCHEMA " + op + " (" + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + ")" + more, args
}

// loadCatalog reads the base tables in scope from db's information_schema,
// with their unique keys if keys is set. It runs one query per
// information_schema table.
func loadCatalog(ctx context.Context, db *sql.DB, sc scope, keys bool) (catalog, error) {
	cond, args := sc.where()
	types, typeArgs := sc.typeWhere()
	cat := catalog{}
	err := query(ctx, db, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "+types+" AND "+cond, append(typeArgs, args...),
		cat.scanTable)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	err = query(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
		CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, GENERATION_EXPRESSION, NUMERIC_PRECISION, NUMERIC_SCALE
		FROM information_schema.COLUMNS WHERE `+cond+` ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`, args,
		cat.scanColumn)
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	if !keys {
		return cat, nil
	}
	err = query(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, COLUMN_NAME, INDEX_TYPE
		FROM information_schema.STATISTICS WHERE NON_UNIQUE = 0 AND `+cond+`
		ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`, args,
		cat.scanKey)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return cat, nil
}

// scanTable adds the base table of a row of information_schema.TABLES.
func (cat catalog) scanTable(r *sql.Rows) error {
	var n TableName
	if err := r.Scan(&n.Schema, &n.Name); err != nil {
		return err
	}
	cat[n] = &table{Name: n}
	return nil
}

// scanColumn adds the column of a row of information_schema.COLUMNS to
// its table, normalized for comparing; a view's is skipped.
func (cat catalog) scanColumn(r *sql.Rows) error {
	var (
		n                           TableName
		c                           column
		nullable, extra             string
		charset, collation, genExpr sql.NullString
		precision, scale            sql.NullInt64
	)
	if err := r.Scan(&n.Schema, &n.Name, &c.Name, &c.DataType, &c.Type, &nullable,
		&charset, &collation, &extra, &genExpr, &precision, &scale); err != nil {
		return err
	}
	t := cat[n]
	if t == nil {
		return nil // a view
	}
	c.DataType = strings.ToLower(c.DataType)
	c.Type = normalizeType(c.Type)
	c.Nullable = nullable == "YES"
	c.Charset, c.Collation = normalizeCharset(charset.String), normalizeCharset(collation.String)
	c.Generated = generatedKind(extra)
	if c.Generated != "" {
		c.GenExpr = genExpr.String
	}
	c.Precision, c.Scale = precision.Int64, scale.Int64
	t.Columns = append(t.Columns, c)
	return nil
}

// scanKey adds a row of information_schema.STATISTICS, one key part of a
// unique key, to its table's keys; rows come in key order.
func (cat catalog) scanKey(r *sql.Rows) error {
	var (
		n         TableName
		name, typ string
		col       sql.NullString
	)
	if err := r.Scan(&n.Schema, &n.Name, &name, &col, &typ); err != nil {
		return err
	}
	t := cat[n]
	if t == nil {
		return nil
	}
	if k := len(t.Unique); k == 0 || t.Unique[k-1].Name != name {
		t.Unique = append(t.Unique, index{Name: name, Type: typ})
	}
	ix := &t.Unique[len(t.Unique)-1]
	if !col.Valid { // MySQL functional key part: the key is unusable
		ix.Type = "EXPRESSION"
		return nil
	}
	ix.Columns = append(ix.Columns, col.String)
	return nil
}

// query runs q and calls scan for each row.
func query(ctx context.Context, db *sql.DB, q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// generatedKind reads a column's kind of generation from EXTRA.
func generatedKind(extra string) string {
	e := strings.ToUpper(extra)
	switch {
	case strings.Contains(e, "VIRTUAL GENERATED"):
		return "VIRTUAL"
	case strings.Contains(e, "STORED GENERATED"), strings.Contains(e, "PERSISTENT GENERATED"):
		return "STORED"
	}
	return ""
}

// intWidth matches the display width of an integer type, which MySQL 8
// no longer shows and which does not change what is stored.
var intWidth = regexp.MustCompile(`^(tinyint|smallint|mediumint|int|bigint|year)\(\d+\)`)

// normalizeType makes COLUMN_TYPE comparable across server versions.
func normalizeType(t string) string {
	return intWidth.ReplaceAllString(strings.ToLower(t), "$1")
}

// normalizeCharset spells utf8 as MariaDB 10.6 and MySQL 8 do, utf8mb3.
func normalizeCharset(s string) string {
	s = strings.ToLower(s)
	if s == "utf8" || strings.HasPrefix(s, "utf8_") {
		return "utf8mb3" + s[len("utf8"):]
	}
	return s
}

// compareColumns describes how the target's columns differ from the
// source's, or returns nil if they match.
func compareColumns(src, tgt *table) []string {
	var diffs []string
	for i := range src.Columns {
		sc := &src.Columns[i]
		tc := tgt.column(sc.Name)
		if tc == nil {
			diffs = append(diffs, fmt.Sprintf("column %s missing on target", quoteIdent(sc.Name)))
			continue
		}
		for _, a := range []struct{ what, s, t string }{
			{"type", sc.Type, tc.Type},
			{"nullability", nullability(sc.Nullable), nullability(tc.Nullable)},
			{"collation", sc.Collation, tc.Collation},
			{"generation", generation(sc), generation(tc)},
		} {
			if a.s != a.t {
				diffs = append(diffs, fmt.Sprintf("column %s: %s %s on source, %s on target", quoteIdent(sc.Name), a.what, orNone(a.s), orNone(a.t)))
			}
		}
	}
	for _, tc := range tgt.Columns {
		if src.column(tc.Name) == nil {
			diffs = append(diffs, fmt.Sprintf("extra column %s on target", quoteIdent(tc.Name)))
		}
	}
	if diffs == nil && !slices.EqualFunc(src.Columns, tgt.Columns, func(a, b column) bool { return a.Name == b.Name }) {
		diffs = append(diffs, fmt.Sprintf("column order differs: (%s) on source, (%s) on target", columnList(src), columnList(tgt)))
	}
	return diffs
}

func nullability(nullable bool) string {
	if nullable {
		return "NULL"
	}
	return "NOT NULL"
}

func generation(c *column) string {
	if c.Generated == "" {
		return ""
	}
	return c.Generated + " AS (" + c.GenExpr + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func columnList(t *table) string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = quoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}
