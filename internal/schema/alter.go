package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// alterTable applies ALTER TABLE: every clause to one draft, then the
// rename, if any, so that children follow the table to its new name.
func (a *applier) alterTable(n *ast.AlterTableStmt) error {
	name := a.tableName(n.Table)
	var renameTo *TableName
	for _, sp := range n.Specs {
		if sp.Tp == ast.AlterTableRenameTable {
			to := a.tableName(sp.NewTable)
			renameTo = &to
		}
	}
	var renamed [][2]string // column renames: [old, new]
	err := a.modify(name, false, func(d *draft) error {
		for _, sp := range n.Specs {
			switch sp.Tp {
			case ast.AlterTableRenameTable:
			case ast.AlterTableChangeColumn, ast.AlterTableRenameColumn:
				from, to, err := a.alterColumn(d, sp)
				if err != nil {
					return err
				}
				if from != "" && !strings.EqualFold(from, to) {
					renamed = append(renamed, [2]string{from, to})
				}
			default:
				if err := a.alterSpec(d, sp); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if a.c.tables[name] == nil {
		// Not in the catalog: modify marked it Unknown, unless IF EXISTS.
		if renameTo != nil && a.c.unknown[name] {
			delete(a.c.unknown, name)
			a.unknown(*renameTo)
		}
		return err
	}
	if err != nil {
		// The server did rename it: the Unknown mark goes along.
		if renameTo != nil && *renameTo != name {
			a.rename(name, *renameTo)
		}
		return err
	}
	for _, r := range renamed {
		a.renameParentColumn(name, r[0], r[1])
	}
	if renameTo != nil && *renameTo != name {
		a.rename(name, *renameTo)
	}
	return nil
}

// alterSpec applies one ALTER TABLE clause other than renames.
func (a *applier) alterSpec(d *draft, sp *ast.AlterTableSpec) error {
	switch sp.Tp {
	case ast.AlterTableOption:
		a.alterOptions(d, sp.Options)
	case ast.AlterTableAddColumns:
		for _, def := range sp.NewColumns {
			if (sp.IfNotExists || a.ifNotExists) && d.col(def.Name.Name.O) >= 0 {
				continue
			}
			if err := a.addColumn(d, def, sp.Position); err != nil {
				return err
			}
		}
		for _, cons := range sp.NewConstraints {
			if err := a.addConstraint(d, cons); err != nil {
				return err
			}
		}
	case ast.AlterTableAddConstraint:
		return a.addConstraint(d, sp.Constraint)
	case ast.AlterTableDropColumn:
		col := sp.OldColumnName.Name.O
		if d.col(col) < 0 {
			if sp.IfExists {
				return nil
			}
			return fmt.Errorf("%w: %s has no column %s", ErrMismatch, d.tableName(), QuoteIdent(col))
		}
		d.dropColumn(col)
	case ast.AlterTableDropPrimaryKey:
		if p := d.primary(); p >= 0 {
			d.keys = slices.Delete(d.keys, p, p+1)
		} else if !sp.IfExists {
			return fmt.Errorf("%w: %s has no primary key", ErrMismatch, d.tableName())
		}
	case ast.AlterTableDropIndex:
		dropKey(d, sp.Name)
	case ast.AlterTableDropForeignKey:
		if i := d.fk(sp.Name); i >= 0 {
			d.fks = slices.Delete(d.fks, i, i+1)
		}
	case ast.AlterTableDropCheck:
		// MariaDB's DROP CONSTRAINT drops a CHECK, a foreign key or a unique key.
		if sp.Constraint != nil {
			if i := d.fk(sp.Constraint.Name); i >= 0 {
				d.fks = slices.Delete(d.fks, i, i+1)
			} else {
				dropKey(d, sp.Constraint.Name)
			}
		}
	case ast.AlterTableModifyColumn:
		_, _, err := a.alterColumn(d, sp)
		return err
	case ast.AlterTableRenameIndex:
		if i := d.key(sp.FromKey.O); i >= 0 && !d.keys[i].primary {
			d.keys[i].name = sp.ToKey.O
		}
	case ast.AlterTableAlterColumn:
		alterDefault(d, sp)
	case ast.AlterTableLock, ast.AlterTableAlgorithm, ast.AlterTableForce,
		ast.AlterTableWriteable, ast.AlterTableEnableKeys, ast.AlterTableDisableKeys,
		ast.AlterTableAddPartitions, ast.AlterTableCoalescePartitions, ast.AlterTableDropPartition,
		ast.AlterTableTruncatePartition, ast.AlterTablePartition, ast.AlterTableRemovePartitioning,
		ast.AlterTableRebuildPartition, ast.AlterTableReorganizePartition, ast.AlterTableCheckPartitions,
		ast.AlterTableExchangePartition, ast.AlterTableOptimizePartition, ast.AlterTableRepairPartition,
		ast.AlterTableImportPartitionTablespace, ast.AlterTableDiscardPartitionTablespace,
		ast.AlterTableWithValidation, ast.AlterTableWithoutValidation,
		ast.AlterTableAlterCheck, ast.AlterTableImportTablespace, ast.AlterTableDiscardTablespace,
		ast.AlterTableIndexInvisible, ast.AlterTableOrderByColumns, ast.AlterTablePartitionOptions,
		ast.AlterTablePartitionAttributes, ast.AlterTableAttributes, ast.AlterTableCache,
		ast.AlterTableNoCache, ast.AlterTableSecondaryLoad, ast.AlterTableSecondaryUnload:
		// No column or key changes.
	default:
		return fmt.Errorf("%w: ALTER TABLE %s: clause %d is not modelled", ErrUnparsed, d.tableName(), sp.Tp)
	}
	return nil
}

// alterDefault applies ALTER COLUMN ... SET DEFAULT or DROP DEFAULT: what
// the catalog keeps of a default is whether it calls CONNECTION_ID() and
// whether it is NULL. A DROP DEFAULT leaves the first mark (a column
// marked without need only costs a SET) and leaves no default but NULL.
func alterDefault(d *draft, sp *ast.AlterTableSpec) {
	for _, def := range sp.NewColumns {
		i := d.col(def.Name.Name.O)
		if i < 0 {
			continue
		}
		d.cols[i].DefaultNull = true // DROP DEFAULT: no options
		for _, o := range def.Options {
			// The parser gives SET DEFAULT's expression an option of no type.
			if callsConnectionID(o.Expr) {
				d.cols[i].ConnectionID = true
			}
			d.cols[i].DefaultNull = isNull(o.Expr)
		}
	}
}

// dropKey drops the PRIMARY or UNIQUE key named name; other names are
// non-unique indexes the catalog does not keep.
func dropKey(d *draft, name string) {
	if i := d.key(name); i >= 0 {
		d.keys = slices.Delete(d.keys, i, i+1)
	}
}

// alterColumn applies CHANGE, MODIFY or RENAME COLUMN and returns the old
// and new name ("" if nothing happened).
func (a *applier) alterColumn(d *draft, sp *ast.AlterTableSpec) (from, to string, err error) {
	switch sp.Tp {
	case ast.AlterTableRenameColumn:
		from, to = sp.OldColumnName.Name.O, sp.NewColumnName.Name.O
		i := d.col(from)
		if i < 0 {
			return "", "", fmt.Errorf("%w: %s has no column %s", ErrMismatch, d.tableName(), QuoteIdent(from))
		}
		if !strings.EqualFold(from, to) && d.col(to) >= 0 {
			return "", "", fmt.Errorf("%w: %s already has column %s", ErrMismatch, d.tableName(), QuoteIdent(to))
		}
		d.cols[i].Name = to
		d.renameColumn(from, to)
		return from, to, nil
	case ast.AlterTableModifyColumn:
		from = sp.NewColumns[0].Name.Name.O
	default: // CHANGE
		from = sp.OldColumnName.Name.O
	}
	def := sp.NewColumns[0]
	to = def.Name.Name.O
	i := d.col(from)
	if i < 0 {
		if sp.IfExists {
			return "", "", nil
		}
		return "", "", fmt.Errorf("%w: %s has no column %s", ErrMismatch, d.tableName(), QuoteIdent(from))
	}
	if !strings.EqualFold(from, to) && d.col(to) >= 0 {
		return "", "", fmt.Errorf("%w: %s already has column %s", ErrMismatch, d.tableName(), QuoteIdent(to))
	}
	col, err := a.column(d, def)
	if err != nil {
		return "", "", err
	}
	d.cols = slices.Delete(d.cols, i, i+1)
	d.renameColumn(from, to)
	at := i
	if sp.Position != nil && sp.Position.Tp != ast.ColumnPositionNone {
		if at, err = position(d, sp.Position); err != nil {
			return "", "", err
		}
	}
	d.cols = slices.Insert(d.cols, at, col)
	return from, to, a.columnKeys(d, def)
}

// renameParentColumn renames a column of parent in the foreign keys of
// other tables that reference it, as MariaDB does when a referenced column
// is renamed.
func (a *applier) renameParentColumn(parent TableName, from, to string) {
	for _, child := range childTables(a.c.children[parent]) {
		t := a.c.tables[child]
		if t == nil || child == parent {
			continue
		}
		t = t.Clone()
		for i := range t.ForeignKeys {
			fk := &t.ForeignKeys[i]
			if fk.Ref != parent {
				continue
			}
			for j, c := range fk.RefColumns {
				if strings.EqualFold(c, from) {
					fk.RefColumns[j] = to
				}
			}
		}
		unknown := a.c.unknown[child]
		a.put(t)
		if unknown {
			a.c.markUnknown(child)
		}
	}
}

// alterOptions applies table options: only [DEFAULT] CHARACTER SET, COLLATE
// and CONVERT TO CHARACTER SET matter.
func (a *applier) alterOptions(d *draft, opts []*ast.TableOption) {
	var cs, co string
	convert := false
	for _, o := range opts {
		switch o.Tp {
		case ast.TableOptionCharset:
			cs = o.StrValue
			convert = convert || o.UintValue == ast.TableOptionCharsetWithConvertTo
		case ast.TableOptionCollate:
			co = o.StrValue
		}
	}
	if cs == "" && co == "" {
		return
	}
	cs, co = a.resolveCharset(cs, co, func() (string, string) { return a.c.schemaDefaults(d.schema) })
	d.charset, d.collation = cs, co
	if convert {
		convertColumns(d, cs, co)
	}
}

// convertColumns applies CONVERT TO CHARACTER SET to every character
// column; binary strings keep their type. A TEXT type grows by one size
// when the new character set has longer characters, as on the server, so
// that it holds as many characters.
func convertColumns(d *draft, cs, co string) {
	for i := range d.cols {
		col := &d.cols[i]
		if col.Charset == "" || col.Charset == "binary" {
			continue
		}
		if isLOB(col.Type) && charsets[cs].maxLen > charsets[col.Charset].maxLen {
			col.Type = map[string]string{"tinytext": "text", "text": "mediumtext", "mediumtext": "longtext", "longtext": "longtext"}[col.Type]
		}
		if cs == "binary" {
			col.Type = map[string]string{"char": "binary", "varchar": "varbinary", "tinytext": "tinyblob",
				"text": "blob", "mediumtext": "mediumblob", "longtext": "longblob", "enum": "enum", "set": "set"}[col.Type]
		}
		col.Charset, col.Collation = cs, co
	}
}
