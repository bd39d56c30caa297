package schema

import (
	"slices"
	"strconv"
	"strings"
)

// TableName names a table. Schema and Name are kept exactly as the server
// spells them: MariaDB and MySQL on Linux (lower_case_table_names=0) compare
// both case-sensitively.
type TableName struct {
	Schema, Name string
}

// String returns the name quoted for SQL, as "`db`.`t`", with backticks
// inside the names doubled.
func (n TableName) String() string {
	return QuoteIdent(n.Schema) + "." + QuoteIdent(n.Name)
}

// Compare orders table names by schema, then name (byte-wise).
func (n TableName) Compare(o TableName) int {
	if c := strings.Compare(n.Schema, o.Schema); c != 0 {
		return c
	}
	return strings.Compare(n.Name, o.Name)
}

// QuoteIdent quotes an identifier with backticks, doubling backticks inside it.
func QuoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// Table is what replication needs to know about one table: its columns in
// row-image order, its primary and unique keys and the foreign keys in which
// it is the child.
//
// A *Table held by a Catalog is never modified: DDL replaces it with a new
// value, so a reader may keep using the pointer it got while the catalog
// moves on.
type Table struct {
	Schema, Name string
	Columns      []Column
	// Indexes holds the PRIMARY key first if there is one, then the UNIQUE
	// keys in the order the server lists them (SHOW CREATE TABLE). Non-unique
	// indexes are left out: they never decide whether two rows conflict.
	Indexes []Index
	// ForeignKeys holds the constraints in which this table is the child,
	// sorted by name as InnoDB lists them.
	ForeignKeys []ForeignKey
	// Charset and Collation are the table's defaults, the ones a column added
	// later without its own gets.
	Charset, Collation string
	// Triggers is set when the table has (or may have) triggers: a
	// statement that writes it writes other rows too. DROP TRIGGER does
	// not name its table, so it stays set until the table is recreated.
	Triggers bool
}

// TableName returns the table's qualified name.
func (t *Table) TableName() TableName { return TableName{t.Schema, t.Name} }

// PrimaryKey returns the PRIMARY key, or nil if the table has none.
func (t *Table) PrimaryKey() *Index {
	for i := range t.Indexes {
		if t.Indexes[i].Primary {
			return &t.Indexes[i]
		}
	}
	return nil
}

// ColumnIndex returns the position of the column named name, compared
// case-insensitively as the server does, or -1 if there is none.
func (t *Table) ColumnIndex(name string) int {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// Index returns the PRIMARY or UNIQUE key named name (case-insensitive), or nil.
func (t *Table) Index(name string) *Index {
	for i := range t.Indexes {
		if strings.EqualFold(t.Indexes[i].Name, name) {
			return &t.Indexes[i]
		}
	}
	return nil
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	c := *t
	c.Columns = slices.Clone(t.Columns)
	c.Indexes = slices.Clone(t.Indexes)
	for i, ix := range c.Indexes {
		c.Indexes[i] = ix.clone()
	}
	c.ForeignKeys = slices.Clone(t.ForeignKeys)
	for i, fk := range c.ForeignKeys {
		c.ForeignKeys[i] = fk.clone()
	}
	return &c
}

// hashColumnPrefix starts the name of the hidden column MariaDB adds for
// a long unique key: DB_ROW_HASH_1, DB_ROW_HASH_2, ... (a number a column
// of the table already has is skipped).
const hashColumnPrefix = "DB_ROW_HASH_"

// typeLongLong is MYSQL_TYPE_LONGLONG, the binary log type of a hash
// column (BIGINT).
const typeLongLong = 8

// HashColumns returns how many columns a row image of t carries beyond
// t.Columns, given the binary log's column names (nil when the table map
// has none: binlog_row_metadata below FULL) and types, and false unless
// they are all hidden hash columns of long unique keys.
//
// MariaDB implements a UNIQUE key that the engine cannot index as it is
// (a whole BLOB or TEXT column, USING HASH, or longer than the engine's
// keys) with a hidden virtual BIGINT column holding a hash of the key's
// values, one per such key, after every other column of the table.
// Neither information_schema nor DDL shows it, and so t has no such
// column, but row images carry it. The server computes it: its replica
// never takes the value from the row, and rows conflict through the key's
// own columns, never through the hash. Without column names the extra
// columns cannot be told from columns the target lacks, and a column of
// the table may itself be named DB_ROW_HASH_1, so the extra ones must
// also be BIGINT and no more than t's unique keys that can be hashed.
func (t *Table) HashColumns(names []string, types []byte) (int, bool) {
	n := len(types) - len(t.Columns)
	switch {
	case n == 0:
		return 0, true
	case n < 0 || len(names) != len(types):
		return 0, false
	}
	hashable := 0
	for _, ix := range t.Indexes {
		if !ix.Primary && !ix.WithoutOverlaps {
			hashable++
		}
	}
	if n > hashable {
		return 0, false
	}
	for i := len(t.Columns); i < len(types); i++ {
		if types[i] != typeLongLong || !IsHashColumnName(names[i]) {
			return 0, false
		}
	}
	return n, true
}

// IsHashColumnName reports whether name is one MariaDB gives the hidden
// column of a long unique key (see Table.HashColumns): DB_ROW_HASH_
// followed by a number. A table's own column may have such a name too.
func IsHashColumnName(name string) bool {
	digits, ok := strings.CutPrefix(name, hashColumnPrefix)
	if !ok || digits == "" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// Column describes one column of a table.
type Column struct {
	Name string
	// Type is the lower-case base type as information_schema.COLUMNS.DATA_TYPE
	// shows it: "int", "bigint", "varchar", "char", "text", "blob",
	// "decimal", "datetime", "enum", "json", "uuid", ...
	Type     string
	Unsigned bool
	// Charset is "" for non-character columns and "binary" for binary,
	// varbinary and the blob types.
	Charset string
	// Collation is the column's collation, such as "utf8mb4_general_ci";
	// "binary" for binary strings, "" for non-character columns.
	Collation string
	Nullable  bool
	// Generated is true for VIRTUAL and STORED (PERSISTENT) generated columns.
	Generated bool
	// AutoIncrement is true for the table's AUTO_INCREMENT column: an
	// INSERT that gives it 0, NULL or nothing gets the next value, which a
	// statement-format statement's text does not tell (its INSERT_ID does).
	AutoIncrement bool
	// ConnectionID is true when the column's DEFAULT or generation
	// expression calls CONNECTION_ID() (see ReadsConnectionID).
	ConnectionID bool
	// DefaultNull is true when the column has no default but NULL: no
	// DEFAULT clause, DEFAULT NULL, or a default dropped. An INSERT that
	// leaves a nullable such column out stores NULL in it (see
	// LeftNull), which is what the statement's text then says of it.
	DefaultNull bool
	// Precision is the fractional seconds digits (0 to 6) of a TIME,
	// DATETIME or TIMESTAMP column, 0 for other columns. The binary log
	// does not carry it for MariaDB's old-format (5.3) temporal columns,
	// whose rows take more bytes the more digits they keep: the rows are
	// decoded with the precision the target's column has, as MariaDB's
	// own replica does (see TemporalPrecision).
	Precision int
}

// isTemporal reports whether columns of type typ (as Column.Type) have a
// fractional seconds precision.
func isTemporal(typ string) bool {
	return typ == "time" || typ == "datetime" || typ == "timestamp"
}

// TemporalPrecision returns, per column in row-image order, the
// precision of a TIME, DATETIME or TIMESTAMP column, and -1 for a column
// of any other type. It is what binlog.PrecisionFunc gives the decoder.
func (t *Table) TemporalPrecision() []int {
	out := make([]int, len(t.Columns))
	for i := range t.Columns {
		out[i] = -1
		if isTemporal(t.Columns[i].Type) {
			out[i] = t.Columns[i].Precision
		}
	}
	return out
}

// Index is a PRIMARY or UNIQUE key.
type Index struct {
	// Name is "PRIMARY" for the primary key.
	Name    string
	Primary bool
	// Columns holds the positions in Table.Columns of the key parts, in key order.
	Columns []int
	// Prefix holds, per key part, the prefix length in characters (bytes for
	// binary strings); 0 means the whole column.
	Prefix []int
	// WithoutOverlaps is set for a key over an application-time period,
	// MariaDB's UNIQUE (a, p WITHOUT OVERLAPS): its last two Columns are
	// the period's end and start, as information_schema lists them. Two
	// rows conflict when their other parts are equal and their periods
	// overlap, not only when every part is equal: values of the whole key
	// do not tell conflicting rows apart (ConflictColumns). The key still
	// finds one row: rows equal in the other parts have disjoint periods.
	WithoutOverlaps bool
}

// ConflictColumns returns the columns whose equal values make two rows
// conflict through the key, and their prefix lengths: every part, but for
// a WITHOUT OVERLAPS key the parts before the period, so that all rows
// whose periods may overlap share one value (every row of the table
// shares it when the period is the only other part).
func (ix *Index) ConflictColumns() (cols, prefix []int) {
	if ix.WithoutOverlaps && len(ix.Columns) >= 2 {
		n := len(ix.Columns) - 2
		return ix.Columns[:n:n], ix.Prefix[:n:n]
	}
	return ix.Columns, ix.Prefix
}

func (ix Index) clone() Index {
	ix.Columns = slices.Clone(ix.Columns)
	ix.Prefix = slices.Clone(ix.Prefix)
	return ix
}

// Action is a foreign key's referential action.
type Action int

// Referential actions. A constraint that names none gets Restrict, as
// MariaDB's information_schema reports it.
const (
	NoAction Action = iota
	Restrict
	Cascade
	SetNull
	SetDefault
)

// String returns the action as SQL spells it ("NO ACTION", "CASCADE", ...).
func (a Action) String() string {
	switch a {
	case NoAction:
		return "NO ACTION"
	case Restrict:
		return "RESTRICT"
	case Cascade:
		return "CASCADE"
	case SetNull:
		return "SET NULL"
	case SetDefault:
		return "SET DEFAULT"
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// Changes reports whether the engine itself changes child rows when the
// parent row changes (CASCADE, SET NULL, SET DEFAULT): such changes never
// appear in the binary log of the replica that applies them.
func (a Action) Changes() bool {
	return a == Cascade || a == SetNull || a == SetDefault
}

func parseAction(s string) Action {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CASCADE":
		return Cascade
	case "SET NULL":
		return SetNull
	case "SET DEFAULT":
		return SetDefault
	case "NO ACTION":
		return NoAction
	}
	return Restrict
}

// ForeignKey is a constraint in which the table holding it is the child.
type ForeignKey struct {
	Name string
	// Columns holds the positions of the child columns in Table.Columns.
	Columns []int
	// Ref is the parent table. It need not exist (foreign_key_checks=0).
	Ref TableName
	// RefColumns holds the parent's column names, as the constraint spells them.
	RefColumns []string
	OnDelete   Action
	OnUpdate   Action
}

func (fk ForeignKey) clone() ForeignKey {
	fk.Columns = slices.Clone(fk.Columns)
	fk.RefColumns = slices.Clone(fk.RefColumns)
	return fk
}

// Cascades reports whether a change of a parent row can make the engine
// change child rows through this constraint.
func (fk *ForeignKey) Cascades() bool {
	return fk.OnDelete.Changes() || fk.OnUpdate.Changes()
}

// ChildRef is a foreign key seen from its parent: the child table and its constraint.
type ChildRef struct {
	Child      TableName
	ForeignKey ForeignKey
}

// LeftNull reports whether an INSERT that leaves the column out stores
// NULL in it: a nullable column whose default is NULL, not generated.
// (A trigger may still set it; callers that rely on this treat tables
// with triggers apart.)
func (c *Column) LeftNull() bool {
	return c.Nullable && c.DefaultNull && !c.Generated
}
