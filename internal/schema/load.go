package schema

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	driver "github.com/go-sql-driver/mysql"
)

// ErrNoTable is returned by LoadTable when the table does not exist.
var ErrNoTable = errors.New("schema: no such table")

// systemSchemas are left out by Load when no schema is named.
var systemSchemas = []any{"mysql", "information_schema", "performance_schema", "sys"}

// Load reads the tables of the named databases (all but mysql,
// information_schema, performance_schema and sys if none is named) from a
// live server's information_schema, with one query per information_schema
// table whatever the number of tables.
//
// Base tables are loaded; views and sequences are not. System-versioned
// tables, and tables with a unique key on an expression (MySQL 8), are
// loaded but marked Unknown: their keys are not modelled. MariaDB's
// WITHOUT OVERLAPS keys are told by their period (see loadPeriods).
func Load(ctx context.Context, db *sql.DB, schemas ...string) (*Catalog, error) {
	f := filter{cond: "%s NOT IN (?, ?, ?, ?)", args: systemSchemas}
	if len(schemas) > 0 {
		f = filter{cond: "%s IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(schemas)), ", ") + ")"}
		for _, s := range schemas {
			f.args = append(f.args, s)
		}
	}
	c, err := load(ctx, db, f)
	if err == nil {
		c.allSchemas = len(schemas) == 0
	}
	return c, err
}

// LoadTable reads one table from a live server, to refresh it in a catalog.
// It returns ErrNoTable if there is no such base table, and the table with
// an error wrapping ErrUnparsed if its keys are not modelled (see Load).
func LoadTable(ctx context.Context, db *sql.DB, schema, name string) (*Table, error) {
	f := filter{cond: "%s = ?", args: []any{schema}, table: name}
	c, err := load(ctx, db, f)
	if err != nil {
		return nil, err
	}
	t := c.Table(schema, name)
	if t == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoTable, TableName{schema, name})
	}
	if c.Unknown(schema, name) {
		return t, fmt.Errorf("%w: %s: keys not modelled", ErrUnparsed, t.TableName())
	}
	return t, nil
}

// filter selects the rows of an information_schema table: cond has a %s for
// the schema column; table, if set, also selects one table.
type filter struct {
	cond  string
	args  []any
	table string
}

// where returns the WHERE condition for a table whose schema column is
// schemaCol and table column tableCol ("" if it has none).
func (f filter) where(schemaCol, tableCol string) (string, []any) {
	cond, args := fmt.Sprintf(f.cond, schemaCol), slices.Clone(f.args)
	if f.table != "" && tableCol != "" {
		cond += " AND " + tableCol + " = ?"
		args = append(args, f.table)
	}
	return cond, args
}

// loader accumulates the rows of the information_schema queries.
type loader struct {
	c      *Catalog
	tables map[TableName]*Table
	// parts of each key in server order: table → key names, key → parts.
	keyOrder map[TableName][]string
	keyParts map[TableName]map[string][]keyPart
	fks      map[fkID]*loadedFK
	fkOrder  []fkID
	// periods holds the application-time periods of each table (MariaDB).
	periods map[TableName][]period
}

type keyPart struct {
	seq    int
	column sql.NullString
	prefix sql.NullInt64
}

type fkID struct {
	table TableName
	name  string
}

type loadedFK struct {
	parts    []fkPart
	ref      TableName
	onUpdate Action
	onDelete Action
}

type fkPart struct {
	seq           int
	column, refTo string
}

func load(ctx context.Context, db *sql.DB, f filter) (*Catalog, error) {
	l := &loader{c: NewCatalog(), tables: map[TableName]*Table{},
		keyOrder: map[TableName][]string{}, keyParts: map[TableName]map[string][]keyPart{}, fks: map[fkID]*loadedFK{},
		periods: map[TableName][]period{}}
	steps := []func(context.Context, *sql.DB, filter) error{l.loadServer, l.loadSchemas, l.loadTables, l.loadColumns, l.loadKeys,
		l.loadPeriods, l.loadFKColumns, l.loadFKRules, l.loadTriggers}
	for _, step := range steps {
		if err := step(ctx, db, f); err != nil {
			return nil, fmt.Errorf("schema: load: %w", err)
		}
	}
	l.finish()
	return l.c, nil
}

// Querier is what EachRow queries: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// EachRow runs q with args on db and calls scan for each row.
func EachRow(ctx context.Context, db Querier, q string, args []any, scan func(*sql.Rows) error) error {
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

// loadServer reads what DDL in the binary log inherits from the server: its
// flavor, its default collation (collation_server, which a database created
// without a character set gets) and, on MySQL 8, what utf8mb4 means without
// a collation.
func (l *loader) loadServer(ctx context.Context, db *sql.DB, _ filter) error {
	var version, collation string
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@collation_server").Scan(&version, &collation); err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(version), "mariadb") {
		l.c.SetFlavor(MySQL)
		var utf8 sql.NullString
		// MySQL 8.0.11 and later; older servers have no such variable.
		if db.QueryRowContext(ctx, "SELECT @@default_collation_for_utf8mb4").Scan(&utf8) == nil && utf8.Valid {
			l.c.SetCharsetDefault("utf8mb4", utf8.String)
		} else if !strings.HasPrefix(version, "8.") && !strings.HasPrefix(version, "9.") {
			l.c.SetCharsetDefault("utf8mb4", "utf8mb4_general_ci")
		}
	}
	l.c.SetServerCollation(collation)
	return nil
}

func (l *loader) loadSchemas(ctx context.Context, db *sql.DB, f filter) error {
	where, args := f.where("SCHEMA_NAME", "")
	return EachRow(ctx, db, `SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME
		FROM information_schema.SCHEMATA WHERE `+where, args, func(rows *sql.Rows) error {
		var s Schema
		if err := rows.Scan(&s.Name, &s.Charset, &s.Collation); err != nil {
			return err
		}
		s.Charset, s.Collation = normCharset(s.Charset), normCollation(s.Collation)
		l.c.schemas[s.Name] = s
		l.c.complete[s.Name] = f.table == ""
		return nil
	})
}

func (l *loader) loadTables(ctx context.Context, db *sql.DB, f filter) error {
	where, args := f.where("TABLE_SCHEMA", "TABLE_NAME")
	return EachRow(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, TABLE_COLLATION
		FROM information_schema.TABLES
		WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') AND `+where, args, func(rows *sql.Rows) error {
		var (
			t         Table
			typ       string
			collation sql.NullString
		)
		if err := rows.Scan(&t.Schema, &t.Name, &typ, &collation); err != nil {
			return err
		}
		t.Collation = normCollation(collation.String)
		t.Charset = charsetOf(t.Collation)
		l.tables[t.TableName()] = &t
		if typ != "BASE TABLE" {
			l.c.markUnknown(t.TableName())
		}
		return nil
	})
}

func (l *loader) loadColumns(ctx context.Context, db *sql.DB, f filter) error {
	type row struct {
		pos int
		col Column
	}
	cols := map[TableName][]row{}
	where, args := f.where("TABLE_SCHEMA", "TABLE_NAME")
	err := EachRow(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE,
			COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, IS_NULLABLE, EXTRA, DATETIME_PRECISION,
			CONCAT(IFNULL(COLUMN_DEFAULT, ''), ' ', IFNULL(GENERATION_EXPRESSION, '')) LIKE '%connection_id%',
			COLUMN_DEFAULT
		FROM information_schema.COLUMNS WHERE `+where, args, func(rows *sql.Rows) error {
		var (
			name                 TableName
			r                    row
			colType, null, extra string
			charset, collation   sql.NullString
			precision            sql.NullInt64
			dflt                 sql.NullString
		)
		if err := rows.Scan(&name.Schema, &name.Name, &r.col.Name, &r.pos, &r.col.Type, &colType,
			&charset, &collation, &null, &extra, &precision, &r.col.ConnectionID, &dflt); err != nil {
			return err
		}
		// MariaDB (10.2.7 and later) shows a default of NULL as the word
		// NULL, a string default quoted, and no default as NULL; MySQL
		// shows both of the first unquoted, so there only NULL says it.
		r.col.DefaultNull = !dflt.Valid || l.c.flavor == MariaDB && dflt.String == "NULL"
		r.col.Type = strings.ToLower(r.col.Type)
		if isTemporal(r.col.Type) {
			// An old-format column shows as "time(1) /* mariadb-5.3 */"
			// in COLUMN_TYPE; DATETIME_PRECISION has its digits all the same.
			r.col.Precision = int(precision.Int64)
		}
		r.col.Unsigned = strings.Contains(strings.ToLower(colType), "unsigned")
		r.col.Nullable = null == "YES"
		extra = strings.ToUpper(extra)
		r.col.Generated = strings.Contains(extra, "VIRTUAL") || strings.Contains(extra, "STORED") || strings.Contains(extra, "PERSISTENT")
		r.col.AutoIncrement = strings.Contains(extra, "AUTO_INCREMENT")
		r.col.Charset, r.col.Collation = normCharset(charset.String), normCollation(collation.String)
		if isBinaryType(r.col.Type) {
			r.col.Charset, r.col.Collation = "binary", "binary"
		}
		cols[name] = append(cols[name], r)
		return nil
	})
	for name, rs := range cols {
		t := l.tables[name]
		if t == nil {
			continue // a view
		}
		slices.SortFunc(rs, func(a, b row) int { return a.pos - b.pos })
		for _, r := range rs {
			t.Columns = append(t.Columns, r.col)
		}
	}
	return err
}

// isBinaryType reports whether information_schema reports a binary string
// type, whose character set it shows as NULL.
func isBinaryType(typ string) bool {
	switch typ {
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return true
	}
	return false
}

func (l *loader) loadKeys(ctx context.Context, db *sql.DB, f filter) error {
	where, args := f.where("TABLE_SCHEMA", "TABLE_NAME")
	// No ORDER BY: MariaDB lists keys in the table's key order, which is
	// the order SHOW CREATE TABLE (and so a dump) shows.
	return EachRow(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART
		FROM information_schema.STATISTICS WHERE NON_UNIQUE = 0 AND `+where, args, func(rows *sql.Rows) error {
		var (
			name TableName
			key  string
			p    keyPart
		)
		if err := rows.Scan(&name.Schema, &name.Name, &key, &p.seq, &p.column, &p.prefix); err != nil {
			return err
		}
		parts := l.keyParts[name]
		if parts == nil {
			parts = map[string][]keyPart{}
			l.keyParts[name] = parts
		}
		if _, seen := parts[key]; !seen {
			l.keyOrder[name] = append(l.keyOrder[name], key)
		}
		parts[key] = append(parts[key], p)
		return nil
	})
}

// loadPeriods reads the application-time periods of a MariaDB server's
// tables, which tell its WITHOUT OVERLAPS keys. information_schema before
// MariaDB 11.4 (PERIODS) names neither, but a period shows as a CHECK
// constraint `start` < `end` of its table, and a WITHOUT OVERLAPS key
// lists the period's end and start as its last two parts (see
// Index.WithoutOverlaps). A CHECK of the same shape that the user wrote,
// on a table with a unique key ending in the same two columns, reads as a
// period too: the key then keys rows more coarsely (Index.ConflictColumns),
// which costs parallelism, never correctness.
func (l *loader) loadPeriods(ctx context.Context, db *sql.DB, f filter) error {
	if l.c.flavor != MariaDB {
		return nil // MySQL has no periods, and no TABLE_NAME in CHECK_CONSTRAINTS
	}
	where, args := f.where("CONSTRAINT_SCHEMA", "TABLE_NAME")
	err := EachRow(ctx, db, `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE
		FROM information_schema.CHECK_CONSTRAINTS WHERE `+where, args, func(rows *sql.Rows) error {
		var (
			name               TableName
			constraint, clause string
		)
		if err := rows.Scan(&name.Schema, &name.Name, &constraint, &clause); err != nil {
			return err
		}
		if p, ok := periodCheck(constraint, clause); ok {
			l.periods[name] = append(l.periods[name], p)
		}
		return nil
	})
	if me := (*driver.MySQLError)(nil); errors.As(err, &me) && me.Number == 1109 { // ER_UNKNOWN_TABLE
		return nil // before MariaDB 10.3.10, which has no periods either
	}
	return err
}

// periodCheck reads the CHECK constraint of a period named name, whose
// clause has the form `start` < `end`.
func periodCheck(name, clause string) (period, bool) {
	toks := tokenize(clause)
	column := func(t token) bool { return t.kind == tokString || t.isName() }
	if len(toks) != 3 || !column(toks[0]) || !toks[1].isPunct("<") || !column(toks[2]) {
		return period{}, false
	}
	return period{name: name, start: toks[0].val, end: toks[2].val}, true
}

// withoutOverlaps reports whether ix, a key of t, is over one of t's
// periods (see loadPeriods).
func (l *loader) withoutOverlaps(t *Table, ix Index) bool {
	n := len(ix.Columns)
	if n < 3 || ix.Prefix[n-2] != 0 || ix.Prefix[n-1] != 0 {
		return false // a WITHOUT OVERLAPS key has a part besides the period
	}
	end, start := t.Columns[ix.Columns[n-2]].Name, t.Columns[ix.Columns[n-1]].Name
	for _, p := range l.periods[t.TableName()] {
		if strings.EqualFold(p.start, start) && strings.EqualFold(p.end, end) {
			return true
		}
	}
	return false
}

// loadTriggers marks the tables that have triggers.
func (l *loader) loadTriggers(ctx context.Context, db *sql.DB, f filter) error {
	where, args := f.where("EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE")
	return EachRow(ctx, db, `SELECT DISTINCT EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS WHERE `+where, args,
		func(rows *sql.Rows) error {
			var name TableName
			if err := rows.Scan(&name.Schema, &name.Name); err != nil {
				return err
			}
			if t := l.tables[name]; t != nil {
				t.Triggers = true
			}
			return nil
		})
}

func (l *loader) loadFKColumns(ctx context.Context, db *sql.DB, f filter) error {
	where, args := f.where("TABLE_SCHEMA", "TABLE_NAME")
	return EachRow(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION,
			REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE REFERENCED_TABLE_NAME IS NOT NULL AND `+where, args, func(rows *sql.Rows) error {
		var (
			id  fkID
			p   fkPart
			ref TableName
		)
		if err := rows.Scan(&id.table.Schema, &id.table.Name, &id.name, &p.column, &p.seq,
			&ref.Schema, &ref.Name, &p.refTo); err != nil {
			return err
		}
		fk := l.fks[id]
		if fk == nil {
			fk = &loadedFK{ref: ref, onUpdate: Restrict, onDelete: Restrict}
			l.fks[id] = fk
			l.fkOrder = append(l.fkOrder, id)
		}
		fk.parts = append(fk.parts, p)
		return nil
	})
}

// loadFKRules reads the referential actions; a second query joined here
// rather than in SQL, because information_schema joins scan every table
// once per row on some servers.
func (l *loader) loadFKRules(ctx context.Context, db *sql.DB, f filter) error {
	where, args := f.where("CONSTRAINT_SCHEMA", "TABLE_NAME")
	return EachRow(ctx, db, `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE
		FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE `+where, args, func(rows *sql.Rows) error {
		var (
			id          fkID
			update, del string
		)
		if err := rows.Scan(&id.table.Schema, &id.table.Name, &id.name, &update, &del); err != nil {
			return err
		}
		if fk := l.fks[id]; fk != nil {
			fk.onUpdate, fk.onDelete = parseAction(update), parseAction(del)
		}
		return nil
	})
}

// finish resolves key and foreign key columns and stores the tables.
func (l *loader) finish() {
	for name, t := range l.tables {
		if !l.resolveKeys(t) {
			l.c.markUnknown(name)
		}
	}
	for _, id := range l.fkOrder {
		t := l.tables[id.table]
		if t == nil {
			continue
		}
		fk := l.fks[id]
		slices.SortFunc(fk.parts, func(a, b fkPart) int { return a.seq - b.seq })
		out := ForeignKey{Name: id.name, Ref: fk.ref, OnDelete: fk.onDelete, OnUpdate: fk.onUpdate}
		for _, p := range fk.parts {
			i := t.ColumnIndex(p.column)
			if i < 0 {
				break
			}
			out.Columns = append(out.Columns, i)
			out.RefColumns = append(out.RefColumns, p.refTo)
		}
		if len(out.Columns) != len(fk.parts) {
			l.c.markUnknown(id.table) // the table changed between two queries
			continue
		}
		t.ForeignKeys = append(t.ForeignKeys, out)
	}
	for name, t := range l.tables {
		slices.SortFunc(t.ForeignKeys, func(a, b ForeignKey) int { return cmp.Compare(a.Name, b.Name) })
		unknown := l.c.unknown[name]
		l.c.Put(t)
		if unknown {
			l.c.markUnknown(name)
		}
	}
}

// resolveKeys builds t.Indexes from the loaded key parts; false if a key
// is on an expression or names a column t does not have.
func (l *loader) resolveKeys(t *Table) bool {
	name := t.TableName()
	ok := true
	for _, key := range l.keyOrder[name] {
		parts := l.keyParts[name][key]
		slices.SortFunc(parts, func(a, b keyPart) int { return a.seq - b.seq })
		ix := Index{Name: key, Primary: key == "PRIMARY"}
		for _, p := range parts {
			i := -1
			if p.column.Valid {
				i = t.ColumnIndex(p.column.String)
			}
			if i < 0 {
				ok = false // MySQL 8 functional key part, or a column we missed
				break
			}
			ix.Columns = append(ix.Columns, i)
			ix.Prefix = append(ix.Prefix, int(p.prefix.Int64))
		}
		if len(ix.Columns) == len(parts) {
			ix.WithoutOverlaps = l.withoutOverlaps(t, ix)
			t.Indexes = append(t.Indexes, ix)
		}
	}
	sortIndexes(t, nil)
	return ok
}
