package schema

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/types"
)

// createTable applies CREATE TABLE (plain, LIKE, or ... SELECT).
func (a *applier) createTable(n *ast.CreateTableStmt) error {
	if n.TemporaryKeyword != ast.TemporaryNone {
		return nil // session-local; never shadows what other sessions replicate
	}
	name := a.tableName(n.Table)
	if n.IfNotExists && (a.c.tables[name] != nil || a.c.unknown[name]) {
		return nil
	}
	// A table the catalog lacks, in a database whose tables it may not all
	// know, may exist with another definition, which the server then kept.
	mayExist := (n.IfNotExists || a.ifNotExists) && !a.dump && !a.c.complete[name.Schema]
	if mayExist {
		defer a.unknown(name)
	}
	switch {
	case n.ReferTable != nil:
		return a.createLike(name, a.tableName(n.ReferTable))
	case n.Select != nil:
		// The columns come from the query's result; MariaDB and MySQL log
		// CREATE ... SELECT in row format as a plain CREATE TABLE anyway.
		a.unknown(name)
		return fmt.Errorf("%w: CREATE TABLE %s ... SELECT: columns come from a query", ErrUnparsed, name)
	}
	d := &draft{schema: name.Schema, name: name.Name}
	d.charset, d.collation = a.tableCharset(name.Schema, n.Options)
	if d.charset == unknownCharset || d.collation == unknownCharset {
		a.unknown(name)
		return fmt.Errorf("%w: CREATE TABLE %s: its default character set comes from a session setting the catalog cannot name", ErrUnparsed, name)
	}
	for _, def := range n.Cols {
		if err := a.addColumn(d, def, nil); err != nil {
			a.unknown(name)
			return err
		}
	}
	if err := a.addPeriod(d); err != nil {
		a.unknown(name)
		return err
	}
	for _, cons := range n.Constraints {
		if err := a.addConstraint(d, cons); err != nil {
			a.unknown(name)
			return err
		}
	}
	t, err := d.table()
	if err != nil {
		a.unknown(name)
		return err
	}
	a.c.remove(name)
	a.put(t)
	return nil
}

// createLike applies CREATE TABLE name LIKE src: columns and keys are
// copied, foreign keys are not (as on the server).
func (a *applier) createLike(name, src TableName) error {
	s := a.c.tables[src]
	if s == nil {
		a.unknown(name)
		if a.c.unknown[src] {
			return nil
		}
		return fmt.Errorf("%w: CREATE TABLE %s LIKE unknown table %s", ErrMismatch, name, src)
	}
	t := s.Clone()
	t.Schema, t.Name = name.Schema, name.Name
	t.ForeignKeys = nil
	a.c.remove(name)
	a.put(t)
	if a.c.unknown[src] {
		a.unknown(name) // a copy of an uncertain definition
	}
	return nil
}

// addPeriod applies the statement's application-time period, if any, to
// d: MariaDB makes its columns NOT NULL.
func (a *applier) addPeriod(d *draft) error {
	if a.period == nil {
		return nil
	}
	for _, c := range []string{a.period.start, a.period.end} {
		i := d.col(c)
		if i < 0 {
			return fmt.Errorf("%w: period %s of %s names unknown column %s", ErrMismatch, QuoteIdent(a.period.name), d.tableName(), QuoteIdent(c))
		}
		d.cols[i].Nullable = false
	}
	return nil
}

// tableCharset returns the default character set and collation of a table
// created in schema with the given options: the options' own, else the
// database's, else the server's.
func (a *applier) tableCharset(schema string, opts []*ast.TableOption) (charset, collation string) {
	for _, o := range opts {
		switch o.Tp {
		case ast.TableOptionCharset:
			if !o.Default || o.StrValue != "" {
				charset = normCharset(o.StrValue)
			}
		case ast.TableOptionCollate:
			collation = o.StrValue
		}
	}
	return a.resolveCharset(charset, collation, func() (string, string) { return a.c.schemaDefaults(schema) })
}

// resolveCharset applies MariaDB's rules to an explicit character set and
// collation (either may be empty): a collation implies its character set, a
// character set implies its default collation, and with neither the
// inherited pair applies.
func (a *applier) resolveCharset(charset, collation string, inherit func() (string, string)) (string, string) {
	charset = normCharset(charset)
	switch {
	case collation != "":
		if cs := charsetOf(collation); cs != "" {
			charset = cs
		} else if charset == "" {
			charset, _ = inherit()
		}
		return charset, fullCollation(collation, charset)
	case charset != "":
		return charset, a.c.defaultCollation(charset)
	}
	return inherit()
}

// addColumn adds a column definition to d at position pos (nil: at the
// end), with the keys and foreign keys its options declare.
func (a *applier) addColumn(d *draft, def *ast.ColumnDef, pos *ast.ColumnPosition) error {
	col, err := a.column(d, def)
	if err != nil {
		return err
	}
	if d.col(col.Name) >= 0 {
		return fmt.Errorf("%w: %s already has column %s", ErrMismatch, d.tableName(), QuoteIdent(col.Name))
	}
	at, err := position(d, pos)
	if err != nil {
		return err
	}
	d.cols = append(d.cols[:at], append([]Column{col}, d.cols[at:]...)...)
	return a.columnKeys(d, def)
}

// position returns where a column goes in d.
func position(d *draft, pos *ast.ColumnPosition) (int, error) {
	if pos == nil {
		return len(d.cols), nil
	}
	switch pos.Tp {
	case ast.ColumnPositionFirst:
		return 0, nil
	case ast.ColumnPositionAfter:
		i := d.col(pos.RelativeColumn.Name.O)
		if i < 0 {
			return 0, fmt.Errorf("%w: %s has no column %s", ErrMismatch, d.tableName(), QuoteIdent(pos.RelativeColumn.Name.O))
		}
		return i + 1, nil
	}
	return len(d.cols), nil
}

// columnKeys adds the keys and foreign keys declared by a column's options
// (PRIMARY KEY, UNIQUE, REFERENCES: MariaDB creates a foreign key from a
// column-level REFERENCES, MySQL parses and ignores it).
func (a *applier) columnKeys(d *draft, def *ast.ColumnDef) error {
	name := def.Name.Name.O
	for _, o := range def.Options {
		switch o.Tp {
		case ast.ColumnOptionPrimaryKey:
			if err := d.addKey(draftKey{primary: true, cols: []string{name}, prefix: []int{0}}); err != nil {
				return err
			}
		case ast.ColumnOptionUniqKey:
			if err := d.addKey(draftKey{cols: []string{name}, prefix: []int{0}}); err != nil {
				return err
			}
		case ast.ColumnOptionReference:
			if o.Refer != nil && o.Refer.Table != nil && a.c.flavor == MariaDB {
				d.addFK(a.foreignKey(d, "", []string{name}, o.Refer))
			}
		}
	}
	return nil
}

// column converts a column definition, resolving its character set and
// collation against the table's defaults.
func (a *applier) column(d *draft, def *ast.ColumnDef) (Column, error) {
	ft := def.Tp
	col := Column{
		Name:     def.Name.Name.O,
		Unsigned: mysql.HasUnsignedFlag(ft.GetFlag()),
		Nullable: true,
	}
	override, overridden := a.typeOverrides[strings.ToLower(col.Name)]
	explicitCollation := ft.GetCollate()
	col.DefaultNull = true
	for _, o := range def.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull, ast.ColumnOptionPrimaryKey:
			col.Nullable = false
		case ast.ColumnOptionNull:
			col.Nullable = true
		case ast.ColumnOptionGenerated:
			col.Generated = true
			col.ConnectionID = col.ConnectionID || callsConnectionID(o.Expr)
		case ast.ColumnOptionAutoIncrement:
			col.AutoIncrement = true
		case ast.ColumnOptionDefaultValue:
			col.ConnectionID = col.ConnectionID || callsConnectionID(o.Expr)
			col.DefaultNull = isNull(o.Expr)
		case ast.ColumnOptionCollate:
			explicitCollation = o.StrValue
		}
	}
	tp := ft.GetType()
	cs := normCharset(ft.GetCharset())
	switch {
	case overridden:
		col.Type = override
		return col, nil
	case tp == mysql.TypeJSON && a.c.flavor == MySQL:
		col.Type = "json" // its own type, without a character set
		return col, nil
	case tp == mysql.TypeJSON:
		// MariaDB's JSON is LONGTEXT COLLATE utf8mb4_bin (and a CHECK).
		col.Type, col.Charset, col.Collation = "longtext", "utf8mb4", "utf8mb4_bin"
		return col, nil
	case tp == mysql.TypeGeometry:
		col.Type = "geometry"
		return col, nil
	case !isCharType(tp):
		col.Type = types.TypeStr(tp)
		if col.Type == "" {
			return col, fmt.Errorf("%w: column %s: unknown type %d", ErrUnparsed, QuoteIdent(col.Name), tp)
		}
		if isTemporal(col.Type) {
			// TIME without digits has decimal UnspecifiedLength (-1).
			col.Precision = max(ft.GetDecimal(), 0)
		}
		return col, nil
	}
	if cs == "binary" && explicitCollation == "" {
		explicitCollation = "binary"
	}
	cs, co := a.resolveCharset(cs, explicitCollation, func() (string, string) { return d.charset, d.collation })
	if mysql.HasBinaryFlag(ft.GetFlag()) && explicitCollation == "" {
		co = binCollation(cs) // CHAR(10) BINARY: the character set's _bin collation
	}
	col.Charset, col.Collation = cs, co
	col.Type = types.TypeToStr(tp, cs)
	if tp == mysql.TypeVarString {
		col.Type = "varchar"
		if cs == "binary" {
			col.Type = "varbinary"
		}
	}
	return col, nil
}

// addConstraint adds a table-level constraint: PRIMARY KEY, UNIQUE and
// FOREIGN KEY matter; plain, FULLTEXT and SPATIAL indexes and CHECK
// constraints do not.
func (a *applier) addConstraint(d *draft, cons *ast.Constraint) error {
	switch cons.Tp {
	case ast.ConstraintPrimaryKey, ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		k := draftKey{name: cons.Name, primary: cons.Tp == ast.ConstraintPrimaryKey}
		ifNotExists := cons.IfNotExists || a.ifNotExists
		if k.name != "" && d.key(k.name) >= 0 {
			if ifNotExists {
				return nil
			}
			return fmt.Errorf("%w: %s already has key %s", ErrMismatch, d.tableName(), QuoteIdent(k.name))
		}
		if k.primary && ifNotExists && d.primary() >= 0 {
			return nil
		}
		if cons.Option != nil && cons.Option.Tp == ast.IndexTypeHash {
			k.hash = true
		}
		for _, part := range cons.Keys {
			if part.Column == nil || part.Expr != nil {
				return fmt.Errorf("%w: unique key %s of %s is on an expression", ErrUnparsed, QuoteIdent(cons.Name), d.tableName())
			}
			if part.Length == overlapsMark {
				// p WITHOUT OVERLAPS (see rewriteForParser): the period's
				// end and start, as the server lists them.
				p := a.period
				if p == nil || !strings.EqualFold(p.name, part.Column.Name.O) {
					return fmt.Errorf("%w: key %s of %s is WITHOUT OVERLAPS of no period of the table", ErrUnparsed, QuoteIdent(cons.Name), d.tableName())
				}
				k.overlaps = true
				k.cols = append(k.cols, p.end, p.start)
				k.prefix = append(k.prefix, 0, 0)
				continue
			}
			k.cols = append(k.cols, part.Column.Name.O)
			k.prefix = append(k.prefix, max(part.Length, 0))
		}
		if len(k.cols) == 0 {
			return fmt.Errorf("%w: key without columns", ErrUnparsed)
		}
		return d.addKey(k)
	case ast.ConstraintForeignKey:
		if cons.Refer == nil || cons.Refer.Table == nil {
			return fmt.Errorf("%w: foreign key without REFERENCES", ErrUnparsed)
		}
		if cons.Name != "" && d.fk(cons.Name) >= 0 {
			if cons.IfNotExists || a.ifNotExists {
				return nil
			}
			return fmt.Errorf("%w: %s already has foreign key %s", ErrMismatch, d.tableName(), QuoteIdent(cons.Name))
		}
		var cols []string
		for _, part := range cons.Keys {
			if part.Column == nil {
				return fmt.Errorf("%w: foreign key on an expression", ErrUnparsed)
			}
			cols = append(cols, part.Column.Name.O)
		}
		d.addFK(a.foreignKey(d, cons.Name, cols, cons.Refer))
	}
	return nil
}

// foreignKey builds a foreign key of d. An unqualified parent lives in the
// child's database, whatever the current database is.
func (a *applier) foreignKey(d *draft, name string, cols []string, ref *ast.ReferenceDef) draftFK {
	f := draftFK{name: name, cols: cols, ref: TableName{ref.Table.Schema.O, ref.Table.Name.O}}
	if f.ref.Schema == "" {
		f.ref.Schema = d.schema
	}
	for _, part := range ref.IndexPartSpecifications {
		if part.Column != nil {
			f.refCols = append(f.refCols, part.Column.Name.O)
		}
	}
	f.onDelete, f.onUpdate = Restrict, Restrict
	if ref.OnDelete != nil {
		f.onDelete = referAction(ref.OnDelete.ReferOpt)
	}
	if ref.OnUpdate != nil {
		f.onUpdate = referAction(ref.OnUpdate.ReferOpt)
	}
	return f
}

func referAction(o ast.ReferOptionType) Action {
	switch o {
	case ast.ReferOptionCascade:
		return Cascade
	case ast.ReferOptionSetNull:
		return SetNull
	case ast.ReferOptionSetDefault:
		return SetDefault
	case ast.ReferOptionNoAction:
		return NoAction
	}
	return Restrict
}

// isCharType reports whether columns of type tp have a character set.
func isCharType(tp byte) bool {
	return types.IsTypeChar(tp) || types.IsTypeBlob(tp) || tp == mysql.TypeVarString ||
		tp == mysql.TypeEnum || tp == mysql.TypeSet
}
