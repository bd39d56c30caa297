package sqlgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/pingcap/tidb/pkg/parser/charset"

	"github.com/paraply/paraply/internal/schema"
)

// Table is what SQL generation needs about one table, checked against a
// table map event. It is immutable after NewTable and safe for concurrent
// use by several Batches.
type Table struct {
	// Name is the table's name as the table map spells it; statements
	// write to this table on the target.
	Name schema.TableName
	// Columns are in row-image order.
	Columns []Column
	// Key holds the columns that locate a row: the primary key, else the
	// first UNIQUE key whose columns are all NOT NULL, else nil, and then a
	// row is located by all its columns (the table is keyless).
	Key []int
	// Primary holds the primary key's columns, nil if there is none. It is
	// the fallback when a before image lacks a column of Key.
	Primary []int

	quoted string // `db`.`t`
	// compact is set when a Batch may compact and group the table's row
	// changes (see Compactable).
	compact bool
	// types and meta are the table map's, to check events against.
	types []byte
	meta  []uint16
	// insertAll is the INSERT shape for an after image carrying every column.
	insertAll insertShape
	key, pk   locator
}

// Column is one column of a Table.
type Column struct {
	Name string
	// Type is the column's type in the binary log (mysql.MYSQL_TYPE_*), with
	// ENUM and SET told apart from CHAR: it decides the Go type of the
	// values go-mysql decodes for it.
	Type     byte
	Unsigned bool
	// Charset is the column's character set ("binary" for binary strings,
	// "" for non-character columns); Collation is its collation.
	Charset, Collation string
	Nullable           bool
	// Generated is true for VIRTUAL and STORED generated columns: they are
	// never written, and never compared in a keyless WHERE. The hidden
	// hash column of a long unique key (schema.Table.HashColumns), which
	// the target computes and no statement may name, is one too.
	Generated bool

	quoted string // `name`
	enc    encoding
	// stamped: the column may be ON UPDATE CURRENT_TIMESTAMP (a TIMESTAMP
	// or DATETIME), which the target would set to its own clock on an
	// UPDATE that does not set it. Every UPDATE sets it, to the value the
	// source's after image has, whether it changed or not: the table map
	// does not say which columns have the clause, and an UPDATE in the
	// same second as the row's last change leaves it unchanged in the
	// image.
	stamped bool
	bits    uint8 // width of an integer column in bits, for the unsigned fix-up
	size    int   // byte length of a fixed-length binary column: values are padded to it
	// ph and wherePh are the placeholders for a value of the column in
	// VALUES and SET, and in WHERE.
	ph, wherePh string
	// exact, for a text column, is the placeholder of the byte-exact
	// comparison that a keyless WHERE adds, CAST(`c` AS BINARY) <=> exact:
	// the column's collation alone finds 'a', 'A' and 'a ' equal, and a
	// keyless table may hold all three.
	exact string
}

// insertShape is the column list and row placeholders of an INSERT.
type insertShape struct {
	cols   []int
	prefix string // INSERT INTO `db`.`t` (`a`,`b`) VALUES
	group  string // (?,?)
}

// locator is a WHERE condition that finds one row by key.
type locator struct {
	cols []int
	eq   string // `a`=? AND `b`=?
}

// NewTable checks def, the table's definition, against tm, the table map
// of a rows event, and prepares the statement fragments for the table.
//
// def may be nil: then the column names, signedness and character sets
// come from the table map, which has them only with binlog_row_metadata=FULL
// (else the error wraps ErrNoSchema). The table map knows neither unique
// keys nor generated columns: a table whose only key is UNIQUE is then
// handled as keyless (correct, but every row is a scan unless an index
// helps), and a generated column is written to (the target ignores the
// value with a warning, or fails in strict mode): give the schema for
// those. When both are given the column counts, the names (when the table
// map has them) and the types must agree, but for the hidden hash columns
// of long unique keys that the table map has after the table's own (see
// schema.Table.HashColumns); otherwise the error wraps ErrMismatch and
// names the first column that differs. Without def such a column cannot
// be told from a column of the table of that name: a table map that ends
// with columns named DB_ROW_HASH_n is refused (ErrNoSchema).
//
// The Table writes to the table the table map names.
func NewTable(def *schema.Table, tm *replication.TableMapEvent) (*Table, error) {
	name := schema.TableName{Schema: string(tm.Schema), Name: string(tm.Table)}
	n := int(tm.ColumnCount)
	if len(tm.ColumnType) != n || len(tm.ColumnMeta) != n {
		return nil, fmt.Errorf("sqlgen: %s: %w: table map with %d columns has %d types and %d metadata entries",
			name, ErrMismatch, n, len(tm.ColumnType), len(tm.ColumnMeta))
	}
	t := &Table{
		Name:    name,
		Columns: make([]Column, n),
		quoted:  name.String(),
		types:   slices.Clone(tm.ColumnType),
		meta:    slices.Clone(tm.ColumnMeta),
	}
	var err error
	if def != nil {
		err = t.fromSchema(def, tm)
	} else {
		err = t.fromTableMap(tm)
	}
	if err != nil {
		return nil, err
	}
	for i := range t.Columns {
		if err := t.Columns[i].prepare(tm.ColumnType[i], tm.ColumnMeta[i]); err != nil {
			return nil, fmt.Errorf("sqlgen: %s: %w", name, err)
		}
	}
	t.insertAll = t.insertShape(nil)
	t.key = t.locator(t.Key)
	t.pk = t.locator(t.Primary)
	return t, nil
}

// Catalog is the part of schema.Catalog that NewTableIn reads.
type Catalog interface {
	// Children lists the foreign keys whose parent is the table.
	Children(parent schema.TableName) []schema.ChildRef
	// UnknownTables lists the tables whose definition is uncertain.
	UnknownTables() []schema.TableName
}

// NewTableIn is NewTable for a table of catalog cat, in which def is the
// table's definition. Besides def it reads whether foreign keys of other
// tables reference the table, which decides, with def, whether a Batch may
// compact the table's row changes (see Compactable). While any table of
// the catalog is unknown, no table is compactable: an unknown table may be
// a child whose foreign key the catalog missed. Tables from NewTable are
// never compactable.
func NewTableIn(cat Catalog, def *schema.Table, tm *replication.TableMapEvent) (*Table, error) {
	t, err := NewTable(def, tm)
	if err != nil {
		return nil, err
	}
	if def != nil && cat != nil {
		t.compact = t.compactable(def) && len(cat.Children(t.Name)) == 0 && len(cat.UnknownTables()) == 0
	}
	return t, nil
}

// Compactable reports whether a Batch in compact mode may merge the
// changes of one row into one and group the changes of many rows into one
// statement (see Batch.Compact). It holds when the order of the table's
// row changes cannot matter beyond each row's own: the table has a primary
// key, no other unique key, and takes part in no foreign key, as parent or
// child, so that changes of different rows commute; and every primary key
// column compares exactly, byte for byte (integers, BIT, ENUM, SET, binary
// strings, UUID, INET, temporal types, whole columns, no prefix), so that
// two rows are the same row on the target exactly when their key values
// are equal here. A text key is not: under its collation 'a', 'A' and 'a '
// may be one key, so that a DELETE of 'a' and an INSERT of 'A' change one
// row, which compaction would take for two rows and could reorder.
//
// It assumes that the target has no triggers on the table (compaction
// changes which statements run, so triggers would fire differently; a
// native MariaDB replica does not run triggers for row events either,
// unless slave_run_triggers_for_rbr says so).
func (t *Table) Compactable() bool { return t.compact }

// compactable checks what def says for Compactable.
func (t *Table) compactable(def *schema.Table) bool {
	pk := def.PrimaryKey()
	// A primary key WITHOUT OVERLAPS links rows whose keys differ: an
	// insert may need another row's delete to come first.
	if pk == nil || t.Primary == nil || len(def.Indexes) != 1 || len(def.ForeignKeys) != 0 || pk.WithoutOverlaps {
		return false
	}
	for j, i := range pk.Columns {
		if j < len(pk.Prefix) && pk.Prefix[j] != 0 {
			return false
		}
		if c := &t.Columns[i]; c.Generated || !c.exactKey() {
			return false
		}
	}
	return true
}

// exactKey reports whether two values of the column are equal on the
// server exactly when their converted values (see value) are equal here.
func (c *Column) exactKey() bool {
	switch c.enc {
	case encInt, encYear, encBit, encEnum, encSet, encBytes, encPadded:
		return true
	case encText:
		// Temporal values are decoded to one canonical string per value.
		// DECIMAL, also encText, is left out: nothing here relies on its
		// decoded text being canonical.
		return isTemporal(c.Type)
	}
	return false
}

// isTemporal reports whether tp is a date or time type.
func isTemporal(tp byte) bool {
	switch tp {
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2,
		mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return true
	}
	return false
}

// fromSchema fills the columns and keys from def.
func (t *Table) fromSchema(def *schema.Table, tm *replication.TableMapEvent) error {
	if def.Schema != t.Name.Schema || def.Name != t.Name.Name {
		return fmt.Errorf("sqlgen: %s: %w: the schema given is of %s", t.Name, ErrMismatch, def.TableName())
	}
	names := tm.ColumnNameString()
	hash, ok := def.HashColumns(names, tm.ColumnType)
	if !ok {
		return fmt.Errorf("sqlgen: %s: %w: the schema has %d columns, the binary log %d",
			t.Name, ErrMismatch, len(def.Columns), len(t.Columns))
	}
	if len(names) != len(t.Columns) {
		names = nil // MINIMAL metadata: no names to check
	}
	for i := len(def.Columns); i < len(def.Columns)+hash; i++ {
		t.Columns[i] = Column{Name: names[i], Nullable: true, Generated: true}
	}
	for i, dc := range def.Columns {
		if names != nil && !strings.EqualFold(names[i], dc.Name) {
			return fmt.Errorf("sqlgen: %s: %w: column %d is %s in the schema but %s in the binary log",
				t.Name, ErrMismatch, i+1, schema.QuoteIdent(dc.Name), schema.QuoteIdent(names[i]))
		}
		tp, _ := realType(tm.ColumnType[i], tm.ColumnMeta[i])
		if !compatible(dc.Type, tp) {
			return fmt.Errorf("sqlgen: %s: %w: column %s is %s in the schema but of binary log type %d",
				t.Name, ErrMismatch, schema.QuoteIdent(dc.Name), dc.Type, tp)
		}
		t.Columns[i] = Column{
			Name:      dc.Name,
			Unsigned:  dc.Unsigned,
			Charset:   normCharset(dc.Charset),
			Collation: dc.Collation,
			Nullable:  dc.Nullable,
			Generated: dc.Generated,
		}
	}
	for _, ix := range def.Indexes {
		if ix.Primary {
			t.Primary = slices.Clone(ix.Columns)
			t.Key = t.Primary
			return nil
		}
	}
	for _, ix := range def.Indexes {
		if !slices.ContainsFunc(ix.Columns, func(c int) bool { return def.Columns[c].Nullable }) {
			t.Key = slices.Clone(ix.Columns)
			return nil
		}
	}
	return nil
}

// fromTableMap fills the columns and keys from the table map's optional
// metadata (binlog_row_metadata=FULL).
func (t *Table) fromTableMap(tm *replication.TableMapEvent) error {
	names := tm.ColumnNameString()
	if len(names) != len(t.Columns) {
		return fmt.Errorf("sqlgen: %s: %w", t.Name, ErrNoSchema)
	}
	if n := len(names); n > 0 && tm.ColumnType[n-1] == mysql.MYSQL_TYPE_LONGLONG && schema.IsHashColumnName(names[n-1]) {
		// Written by name, a long unique key's hidden hash column would
		// fail; left out, a column of the table of that name would lose
		// its values.
		return fmt.Errorf("sqlgen: %s: %w: column %s may be the hidden hash column of a long unique key",
			t.Name, ErrNoSchema, schema.QuoteIdent(names[n-1]))
	}
	unsigned := tm.UnsignedMap()
	collations := tm.CollationMap()
	for i := range t.Columns {
		c := &t.Columns[i]
		c.Name = names[i]
		c.Unsigned = unsigned[i]
		_, c.Nullable = tm.Nullable(i)
		tp, _ := realType(tm.ColumnType[i], tm.ColumnMeta[i])
		if !isString(tp) {
			continue
		}
		id, ok := collations[i]
		if !ok {
			return fmt.Errorf("sqlgen: %s: %w: the table map has no collation for column %s",
				t.Name, ErrNoSchema, schema.QuoteIdent(c.Name))
		}
		co, err := charset.GetCollationByID(int(id))
		if err != nil || id >= 1<<16 {
			return fmt.Errorf("sqlgen: %s: column %s: unknown collation id %d: give the table's schema",
				t.Name, schema.QuoteIdent(c.Name), id)
		}
		c.Charset, c.Collation = normCharset(co.CharsetName), co.Name
	}
	for _, p := range tm.PrimaryKey {
		if p >= uint64(len(t.Columns)) {
			return fmt.Errorf("sqlgen: %s: %w: primary key column %d out of range", t.Name, ErrMismatch, p)
		}
		t.Primary = append(t.Primary, int(p))
	}
	t.Key = t.Primary
	return nil
}

// Matches reports whether tm describes the columns t was built from (same
// types and metadata). Add refuses events whose table map does not match.
func (t *Table) Matches(tm *replication.TableMapEvent) bool {
	return string(tm.Schema) == t.Name.Schema && string(tm.Table) == t.Name.Name &&
		slices.Equal(tm.ColumnType, t.types) && slices.Equal(tm.ColumnMeta, t.meta)
}

// insertShape returns the INSERT column list for an after image with
// column bitmap after (nil: every column): the columns present and not
// generated.
func (t *Table) insertShape(after []byte) insertShape {
	var s insertShape
	var cols, group strings.Builder
	cols.WriteString("INSERT INTO ")
	cols.WriteString(t.quoted)
	cols.WriteString(" (")
	group.WriteByte('(')
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Generated || !present(after, i) {
			continue
		}
		if len(s.cols) > 0 {
			cols.WriteByte(',')
			group.WriteByte(',')
		}
		s.cols = append(s.cols, i)
		cols.WriteString(c.quoted)
		group.WriteString(c.ph)
	}
	cols.WriteString(") VALUES ")
	group.WriteByte(')')
	s.prefix, s.group = cols.String(), group.String()
	return s
}

// locator returns the WHERE condition on the key columns cols.
func (t *Table) locator(cols []int) locator {
	if cols == nil {
		return locator{}
	}
	var b strings.Builder
	for j, i := range cols {
		if j > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(t.Columns[i].quoted)
		b.WriteByte('=')
		b.WriteString(t.Columns[i].wherePh)
	}
	return locator{cols: cols, eq: b.String()}
}

// find returns how to locate the rows of an image with column bitmap
// before: by the key if the image has all of its columns, else by the
// primary key, else (keyless tables only) by every column present.
// keyless is true in the last case.
func (t *Table) find(before []byte) (loc *locator, keyless bool, err error) {
	switch {
	case t.Key == nil:
		return nil, true, nil
	case allPresent(before, t.Key):
		return &t.key, false, nil
	case t.Primary != nil && allPresent(before, t.Primary):
		return &t.pk, false, nil
	}
	for _, i := range t.Key {
		if !present(before, i) {
			return nil, false, fmt.Errorf("%w: key column %s is missing", ErrNoKey, t.Columns[i].quoted)
		}
	}
	return nil, false, ErrNoKey
}

// present reports whether column i is in an image with column bitmap bm
// (nil: every column).
func present(bm []byte, i int) bool {
	return bm == nil || (i>>3 < len(bm) && bm[i>>3]&(1<<(uint(i)&7)) != 0)
}

func allPresent(bm []byte, cols []int) bool {
	for _, i := range cols {
		if !present(bm, i) {
			return false
		}
	}
	return true
}

// realType returns the type of a column as go-mysql decodes it: the table
// map logs ENUM, SET and CHAR all as MYSQL_TYPE_STRING, with the real type
// in the metadata. length is a CHAR or BINARY column's length in bytes.
func realType(tp byte, meta uint16) (real byte, length int) {
	if tp != mysql.MYSQL_TYPE_STRING {
		return tp, 0
	}
	if meta < 256 {
		return tp, int(meta)
	}
	b0, b1 := byte(meta>>8), byte(meta)
	if b0&0x30 != 0x30 { // lengths above 255 keep two bits in the type byte
		return b0 | 0x30, int(b1) | int((b0&0x30)^0x30)<<4
	}
	return b0, int(b1)
}

// isString reports whether values of binary log type tp are strings whose
// meaning depends on the column's character set.
func isString(tp byte) bool {
	switch tp {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_BLOB,
		mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		return true
	}
	return false
}

// compatible reports whether a column whose schema type (as
// information_schema.COLUMNS.DATA_TYPE or a dump spells it) is typ can be
// logged with binary log type tp. Types this package does not know are
// accepted.
func compatible(typ string, tp byte) bool {
	in := func(tps ...byte) bool { return slices.Contains(tps, tp) }
	switch strings.ToLower(typ) {
	case "tinyint", "bool", "boolean":
		return in(mysql.MYSQL_TYPE_TINY)
	case "smallint":
		return in(mysql.MYSQL_TYPE_SHORT)
	case "mediumint":
		return in(mysql.MYSQL_TYPE_INT24)
	case "int", "integer":
		return in(mysql.MYSQL_TYPE_LONG)
	case "bigint":
		return in(mysql.MYSQL_TYPE_LONGLONG)
	case "float":
		return in(mysql.MYSQL_TYPE_FLOAT)
	case "double", "real", "double precision":
		return in(mysql.MYSQL_TYPE_DOUBLE)
	case "decimal", "numeric", "fixed":
		return in(mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL)
	case "bit":
		return in(mysql.MYSQL_TYPE_BIT)
	case "year":
		return in(mysql.MYSQL_TYPE_YEAR)
	case "date":
		return in(mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE)
	case "time":
		return in(mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2)
	case "datetime":
		return in(mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2)
	case "timestamp":
		return in(mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2)
	case "char", "binary", "uuid", "inet4", "inet6":
		return in(mysql.MYSQL_TYPE_STRING)
	case "enum":
		return in(mysql.MYSQL_TYPE_ENUM)
	case "set":
		return in(mysql.MYSQL_TYPE_SET)
	case "varchar", "varbinary":
		return in(mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING)
	case "tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob":
		return in(mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB)
	case "json":
		return in(mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_BLOB)
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
		"geometrycollection", "geomcollection":
		return in(mysql.MYSQL_TYPE_GEOMETRY)
	}
	return true
}

// normCharset spells utf8 as the servers now report it, utf8mb3.
func normCharset(cs string) string {
	cs = strings.ToLower(cs)
	if cs == "utf8" {
		return "utf8mb3"
	}
	return cs
}
