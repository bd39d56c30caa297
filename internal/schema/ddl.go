package schema

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	// The parser builds literal values through a driver it does not ship;
	// test_driver is the self-contained one meant for using the parser alone.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Change tells what one DDL statement changed in a catalog.
type Change struct {
	// Tables lists, sorted, the tables created, altered, renamed (both
	// names), dropped or marked Unknown.
	Tables []TableName
	// Schemas lists, sorted, the databases created, altered or dropped.
	Schemas []string
}

// Empty reports whether nothing changed.
func (ch Change) Empty() bool { return len(ch.Tables) == 0 && len(ch.Schemas) == 0 }

// ApplyDDL updates the catalog for one statement from the binary log, run
// with currentSchema as the default database. It follows:
//
//   - CREATE [OR REPLACE] TABLE [IF NOT EXISTS], including ... LIKE; a
//     CREATE TABLE ... SELECT marks the table Unknown;
//   - ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS]: ADD/DROP/CHANGE/MODIFY/RENAME
//     COLUMN, ADD/DROP PRIMARY KEY, ADD/DROP UNIQUE (and other) keys, ADD/DROP
//     FOREIGN KEY, DROP CONSTRAINT, RENAME KEY, RENAME TO, [CONVERT TO]
//     CHARACTER SET / COLLATE; clauses that change no column or key (ENGINE,
//     ALGORITHM, LOCK, FORCE, partitioning, ...) are ignored;
//   - RENAME TABLE a TO b [, c TO d ...], across databases; foreign keys
//     that referenced a now reference b, as InnoDB does;
//   - DROP TABLE [IF EXISTS] a [, b ...]; CREATE [UNIQUE] INDEX; DROP INDEX;
//   - CREATE/ALTER/DROP DATABASE (the default character set is remembered);
//   - TRUNCATE, CREATE TEMPORARY TABLE, DROP TEMPORARY TABLE: no change.
//
// Statements that define no table (GRANT, CREATE USER, SET, views,
// triggers, routines, DML...) are no-ops. MariaDB syntax the TiDB parser
// lacks (WAIT n/NOWAIT, IF [NOT] EXISTS on more clauses, ALTER ONLINE,
// uuid/inet6 and spatial types, expression defaults, ...) is rewritten
// before parsing.
//
// If the statement cannot be understood, ApplyDDL returns an error wrapping
// ErrUnparsed and marks Unknown every table the statement may touch: those
// a conservative scan of its identifiers finds (names after TABLE, ON,
// REFERENCES, TO, LIKE, and names of known tables), or, if it finds none,
// every table of currentSchema. If the statement does not fit the catalog
// (altering a table it does not have, ...), the error wraps ErrMismatch and
// the tables involved are marked Unknown. The returned Change is valid even
// with an error.
func (c *Catalog) ApplyDDL(currentSchema, query string) (Change, error) {
	return c.ApplyDDLIn(Session{}, currentSchema, query)
}

// Session is what a DDL statement inherits from the session that ran it on
// the source: the collation IDs its query event carries (0: not carried).
type Session struct {
	// CollationServer is collation_server: a database created without a
	// character set gets it.
	CollationServer int
	// DefaultUTF8MB4 is MySQL 8's default_collation_for_utf8mb4: the
	// collation of CHARACTER SET utf8mb4 without COLLATE.
	DefaultUTF8MB4 int
}

// ApplyDDLIn is ApplyDDL with the settings of the statement's session on
// the source in force instead of the catalog's server defaults (see
// SetServerCollation). A collation ID the catalog does not know makes what
// inherits it Unknown rather than guessed.
func (c *Catalog) ApplyDDLIn(s Session, currentSchema, query string) (Change, error) {
	defer c.useSession(s)()
	a := newApplier(c, currentSchema)
	err := a.apply(cleanQuery(query))
	return a.change(), err
}

// applier applies statements to a catalog and records what changed.
type applier struct {
	c   *Catalog
	cur string // current database
	// What changed.
	tables  map[TableName]bool
	schemas map[string]bool
	// Per statement, what rewriteForParser took out.
	typeOverrides map[string]string // column (lower case) → real type
	ifExists      bool              // IF EXISTS the parser could not take
	ifNotExists   bool              // IF NOT EXISTS the parser could not take
	orReplace     bool              // CREATE OR REPLACE
	period        *period           // the application-time period of a CREATE TABLE
	// dump is set when the statements are a schema dump, which says what
	// exists: its IF NOT EXISTS never meets an unknown object.
	dump bool
}

func newApplier(c *Catalog, cur string) *applier {
	return &applier{c: c, cur: cur, tables: map[TableName]bool{}, schemas: map[string]bool{}}
}

func (a *applier) change() Change {
	ch := Change{Tables: slices.Collect(maps.Keys(a.tables)), Schemas: slices.Sorted(maps.Keys(a.schemas))}
	slices.SortFunc(ch.Tables, TableName.Compare)
	return ch
}

func (a *applier) touch(n TableName) { a.tables[n] = true }

func (a *applier) put(t *Table) {
	a.c.Put(t)
	a.touch(t.TableName())
}

func (a *applier) unknown(n TableName) {
	a.c.markUnknown(n)
	a.touch(n)
}

func (a *applier) tableName(tn *ast.TableName) TableName {
	s := tn.Schema.O
	if s == "" {
		s = a.cur
	}
	return TableName{s, tn.Name.O}
}

// apply applies one cleaned statement.
func (a *applier) apply(text string) error {
	a.typeOverrides, a.ifExists, a.ifNotExists, a.orReplace, a.period = nil, false, false, false, nil
	toks := tokenize(text)
	if body, ok := setStatementBody(text, toks); ok {
		text, toks = body, tokenize(body)
	}
	a.trigger(toks)
	if !mayChangeTables(toks) {
		return nil
	}
	nodes, err := parseSQL(text)
	if err != nil {
		rw := rewriteForParser(text, toks)
		if rw.unsupported != "" {
			a.markScanned(toks)
			return fmt.Errorf("%w: %s", ErrUnparsed, rw.unsupported)
		}
		var err2 error
		if nodes, err2 = parseSQL(rw.text); err2 != nil {
			a.markScanned(toks)
			return fmt.Errorf("%w: %v", ErrUnparsed, err)
		}
		a.typeOverrides, a.ifExists, a.ifNotExists, a.orReplace, a.period = rw.types, rw.ifExists, rw.ifNotExists, rw.orReplace, rw.period
	}
	var errs []error
	for _, n := range nodes {
		if err := a.node(n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// markScanned marks Unknown the tables a statement that could not be
// understood may touch.
func (a *applier) markScanned(toks []token) {
	names := scanTables(toks, a.cur, a.c)
	if len(names) == 0 {
		for n := range a.c.tables {
			if n.Schema == a.cur {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		a.unknown(n)
	}
}

var parsers = sync.Pool{New: func() any { return parser.New() }}

// parseSQL parses text with a pooled TiDB parser (a parser is not safe for
// concurrent use). A panic inside the parser becomes an error.
func parseSQL(text string) (nodes []ast.StmtNode, err error) {
	p := parsers.Get().(*parser.Parser)
	defer func() {
		if r := recover(); r != nil {
			nodes, err = nil, fmt.Errorf("parser panic: %v", r)
			return // a parser that panicked is not put back
		}
		parsers.Put(p)
	}()
	nodes, _, err = p.Parse(text, "", "")
	// The slice is the parser's own and is reused by its next Parse.
	return slices.Clone(nodes), err
}

// node applies one parsed statement.
func (a *applier) node(n ast.StmtNode) error {
	switch n := n.(type) {
	case *ast.CreateTableStmt:
		return a.createTable(n)
	case *ast.AlterTableStmt:
		return a.alterTable(n)
	case *ast.RenameTableStmt:
		return a.renameTables(n)
	case *ast.DropTableStmt:
		if n.IsView || n.TemporaryKeyword != ast.TemporaryNone {
			return nil
		}
		for _, tn := range n.Tables {
			name := a.tableName(tn)
			if a.c.tables[name] != nil || a.c.unknown[name] {
				a.c.remove(name)
				a.touch(name)
			}
		}
	case *ast.CreateIndexStmt:
		return a.createIndex(n)
	case *ast.DropIndexStmt:
		return a.modify(a.tableName(n.Table), n.IfExists, func(d *draft) error {
			dropKey(d, n.IndexName)
			return nil
		})
	case *ast.CreateDatabaseStmt:
		a.createDatabase(n)
	case *ast.AlterDatabaseStmt:
		a.alterDatabase(n)
	case *ast.DropDatabaseStmt:
		name := n.Name.O
		for _, t := range a.c.dropSchema(name) {
			a.touch(t)
		}
		a.schemas[name] = true
	}
	return nil
}

func (a *applier) renameTables(n *ast.RenameTableStmt) error {
	var errs []error
	for _, tt := range n.TableToTables {
		from, to := a.tableName(tt.OldTable), a.tableName(tt.NewTable)
		wasUnknown := a.c.unknown[from] && a.c.tables[from] == nil
		if a.rename(from, to) {
			continue
		}
		switch {
		case wasUnknown:
			a.touch(from)
			a.unknown(to)
		case a.ifExists:
		default:
			a.unknown(to)
			errs = append(errs, fmt.Errorf("%w: RENAME TABLE of unknown table %s", ErrMismatch, from))
		}
	}
	return errors.Join(errs...)
}

// rename renames a table in the catalog and records the tables that
// changed; false if the catalog does not have from.
func (a *applier) rename(from, to TableName) bool {
	children, ok := a.c.rename(from, to)
	if ok {
		a.touch(from)
		a.touch(to)
		for _, n := range children {
			a.touch(n)
		}
	}
	return ok
}

func (a *applier) createIndex(n *ast.CreateIndexStmt) error {
	if n.KeyType != ast.IndexKeyTypeUnique {
		// A plain, FULLTEXT or SPATIAL index changes no key that matters,
		// but the table must be one the catalog knows.
		return a.modify(a.tableName(n.Table), false, func(*draft) error { return nil })
	}
	cons := &ast.Constraint{Tp: ast.ConstraintUniq, Name: n.IndexName, Keys: n.IndexPartSpecifications,
		Option: n.IndexOption, IfNotExists: n.IfNotExists}
	return a.modify(a.tableName(n.Table), false, func(d *draft) error { return a.addConstraint(d, cons) })
}

// modify applies f to a draft of table name and stores the result. A table
// the catalog does not have is marked Unknown (ErrMismatch), unless ifExists.
func (a *applier) modify(name TableName, ifExists bool, f func(d *draft) error) error {
	t := a.c.tables[name]
	if t == nil {
		if ifExists || a.ifExists {
			return nil
		}
		wasUnknown := a.c.unknown[name]
		a.unknown(name)
		if wasUnknown {
			return nil
		}
		return fmt.Errorf("%w: %s is not in the catalog", ErrMismatch, name)
	}
	wasUnknown := a.c.unknown[name]
	d := draftOf(t)
	err := f(d)
	var nt *Table
	if err == nil {
		nt, err = d.table()
	}
	if err != nil {
		a.unknown(name)
		return err
	}
	a.put(nt)
	if wasUnknown {
		a.c.markUnknown(name)
	}
	return nil
}

func (a *applier) createDatabase(n *ast.CreateDatabaseStmt) {
	name := n.Name.O
	if _, ok := a.c.schemas[name]; ok && n.IfNotExists {
		return
	}
	if n.IfNotExists && !a.c.allSchemas && !a.dump {
		// The database may exist with tables and a character set the
		// catalog does not know (the server then changed nothing): what
		// inherits its character set is Unknown.
		a.c.schemas[name] = Schema{Name: name, Charset: unknownCharset, Collation: unknownCharset}
		a.schemas[name] = true
		return
	}
	if a.orReplace {
		for _, t := range a.c.dropSchema(name) {
			a.touch(t)
		}
	}
	cs, co := a.databaseCharset(n.Options, func() (string, string) { return a.c.server.Charset, a.c.server.Collation })
	a.c.schemas[name] = Schema{Name: name, Charset: cs, Collation: co}
	a.c.complete[name] = true
	a.schemas[name] = true
}

func (a *applier) alterDatabase(n *ast.AlterDatabaseStmt) {
	name := n.Name.O
	if n.AlterDefaultDatabase || name == "" {
		name = a.cur
	}
	cs, co := a.databaseCharset(n.Options, func() (string, string) { return "", "" })
	if cs == "" {
		return // no character set change (ENCRYPTION, ...)
	}
	a.c.schemas[name] = Schema{Name: name, Charset: cs, Collation: co}
	a.schemas[name] = true
}

func (a *applier) databaseCharset(opts []*ast.DatabaseOption, inherit func() (string, string)) (string, string) {
	var cs, co string
	for _, o := range opts {
		switch o.Tp {
		case ast.DatabaseOptionCharset:
			cs = o.Value
		case ast.DatabaseOptionCollate:
			co = o.Value
		}
	}
	return a.resolveCharset(cs, co, inherit)
}

// trigger marks the table a CREATE TRIGGER statement (toks) fires on as
// having triggers.
func (a *applier) trigger(toks []token) {
	if len(toks) == 0 || !toks[0].is("CREATE") {
		return
	}
	i := skipModifiers(toks, 1)
	if i >= len(toks) || !toks[i].is("TRIGGER") {
		return
	}
	s, err := leadingSubjects(a.cur, toks)
	if err != nil {
		return
	}
	for _, n := range s.Tables {
		if t := a.c.Table(n.Schema, n.Name); t != nil && !t.Triggers {
			// Not a change of the table's definition (a.put): nothing
			// that builds on its columns and keys needs building again.
			c := t.Clone()
			c.Triggers = true
			a.c.Put(c)
		}
	}
}
