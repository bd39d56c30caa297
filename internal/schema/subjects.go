package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Subjects are what one statement changes, as replication filters ask
// it: the tables whose definition or rows it changes, and the databases
// it changes as such. Tables a statement only reads (CREATE TABLE ...
// LIKE, the SELECT of an INSERT, a foreign key's parent) are not its
// subjects, as MariaDB's filters do not count the tables a statement does
// not update.
type Subjects struct {
	// Tables are the tables (views and sequences included) the statement
	// creates, alters, renames (both names), drops or truncates, or
	// writes rows into; an unqualified name is in the statement's
	// current database.
	Tables []TableName
	// Databases are the databases the statement creates, alters or drops,
	// and those holding the stored programs (procedures, functions,
	// events; triggers when their table is not named) it creates, alters
	// or drops.
	Databases []string
}

// Empty reports whether the statement changes no table and no database
// (account management, GRANT, SET, FLUSH ...).
func (s Subjects) Empty() bool { return len(s.Tables) == 0 && len(s.Databases) == 0 }

// table adds tables named in a statement run in database cur.
func (s *Subjects) table(cur string, tns ...*ast.TableName) {
	for _, tn := range tns {
		if tn == nil {
			continue
		}
		n := TableName{Schema: tn.Schema.O, Name: tn.Name.O}
		if n.Schema == "" {
			n.Schema = cur
		}
		s.add(n)
	}
}

func (s *Subjects) add(n TableName) {
	if !slices.Contains(s.Tables, n) {
		s.Tables = append(s.Tables, n)
	}
}

func (s *Subjects) database(db string) {
	if !slices.Contains(s.Databases, db) {
		s.Databases = append(s.Databases, db)
	}
}

// StatementSubjects returns what query, run with currentSchema as the
// default database, changes: DDL, and DML in statement format (INSERT,
// REPLACE, UPDATE, DELETE, LOAD DATA; every table of a multi-table
// UPDATE, whose written tables only its SET clause tells). A statement it
// cannot read, or whose changes it cannot know (CALL, or SELECT and DO
// calling a function that writes), is an error wrapping ErrUnparsed:
// never a guess.
//
// The TiDB parser reads it (rewritten if need be, as ApplyDDL does);
// what the parser lacks (CREATE TRIGGER, EVENT, FUNCTION, and MariaDB
// syntax it rejects) is read from its leading words.
func StatementSubjects(currentSchema, query string) (Subjects, error) {
	r := readStatement(currentSchema, query)
	return r.subjects, r.subjectsErr
}

// subjectsOf is StatementSubjects of a parsed statement.
func subjectsOf(currentSchema string, p *parsedText) (Subjects, error) {
	text, toks, nodes, err := p.text, p.toks, p.nodes, p.err
	if err != nil {
		rw := rewriteForParser(text, toks)
		if nodes, err = parseSQL(rw.text); err != nil {
			return leadingSubjects(currentSchema, toks)
		}
	}
	var s Subjects
	for _, n := range nodes {
		if err := nodeSubjects(&s, currentSchema, n); err != nil {
			return Subjects{}, err
		}
	}
	return s, nil
}

// nodeSubjects adds what one parsed statement changes to s.
func nodeSubjects(s *Subjects, cur string, n ast.StmtNode) error {
	switch n := n.(type) {
	case *ast.CreateTableStmt:
		s.table(cur, n.Table)
	case *ast.AlterTableStmt:
		s.table(cur, n.Table)
		for _, spec := range n.Specs {
			if spec.Tp == ast.AlterTableRenameTable {
				s.table(cur, spec.NewTable)
			}
		}
	case *ast.RenameTableStmt:
		for _, tt := range n.TableToTables {
			s.table(cur, tt.OldTable, tt.NewTable)
		}
	case *ast.DropTableStmt:
		s.table(cur, n.Tables...)
	case *ast.TruncateTableStmt:
		s.table(cur, n.Table)
	case *ast.CreateIndexStmt:
		s.table(cur, n.Table)
	case *ast.DropIndexStmt:
		s.table(cur, n.Table)
	case *ast.CreateViewStmt:
		s.table(cur, n.ViewName)
	case *ast.CreateSequenceStmt:
		s.table(cur, n.Name)
	case *ast.AlterSequenceStmt:
		s.table(cur, n.Name)
	case *ast.DropSequenceStmt:
		s.table(cur, n.Sequences...)
	case *ast.AnalyzeTableStmt:
		s.table(cur, n.TableNames...)
	case *ast.OptimizeTableStmt:
		s.table(cur, n.Tables...)
	case *ast.CreateDatabaseStmt:
		s.database(n.Name.O)
	case *ast.DropDatabaseStmt:
		s.database(n.Name.O)
	case *ast.AlterDatabaseStmt:
		if n.AlterDefaultDatabase || n.Name.O == "" {
			s.database(cur)
		} else {
			s.database(n.Name.O)
		}
	case *ast.ProcedureInfo:
		s.database(programDatabase(cur, n.ProcedureName))
	case *ast.DropProcedureStmt:
		s.database(programDatabase(cur, n.ProcedureName))
	case *ast.InsertStmt:
		tableSources(s, cur, n.Table)
	case *ast.UpdateStmt:
		tableSources(s, cur, n.TableRefs)
	case *ast.DeleteStmt:
		if n.IsMultiTable && n.Tables != nil {
			for _, tn := range n.Tables.Tables {
				s.table(cur, deleted(tn, n.TableRefs))
			}
		} else {
			tableSources(s, cur, n.TableRefs)
		}
	case *ast.LoadDataStmt:
		s.table(cur, n.Table)
	case *ast.GrantStmt, *ast.RevokeStmt, *ast.GrantRoleStmt, *ast.RevokeRoleStmt, *ast.CreateUserStmt,
		*ast.AlterUserStmt, *ast.DropUserStmt, *ast.RenameUserStmt, *ast.SetPwdStmt, *ast.FlushStmt,
		*ast.SetStmt, *ast.SetRoleStmt, *ast.SetDefaultRoleStmt:
		// Accounts and session settings: no table, no database.
	default:
		return fmt.Errorf("%w: cannot tell what a %s changes", ErrUnparsed, strings.TrimPrefix(fmt.Sprintf("%T", n), "*ast."))
	}
	return nil
}

func programDatabase(cur string, tn *ast.TableName) string {
	if tn != nil && tn.Schema.O != "" {
		return tn.Schema.O
	}
	return cur
}

// tableSources adds every table a FROM-like clause joins.
func tableSources(s *Subjects, cur string, refs *ast.TableRefsClause) {
	eachSource(refs, func(tn *ast.TableName, _ ast.CIStr) { s.table(cur, tn) })
}

// eachSource calls f with each table a FROM-like clause joins, and its
// alias.
func eachSource(refs *ast.TableRefsClause, f func(tn *ast.TableName, alias ast.CIStr)) {
	if refs == nil {
		return
	}
	var walk func(r ast.ResultSetNode)
	walk = func(r ast.ResultSetNode) {
		switch r := r.(type) {
		case *ast.Join:
			walk(r.Left)
			walk(r.Right)
		case *ast.TableSource:
			if tn, ok := r.Source.(*ast.TableName); ok {
				f(tn, r.AsName)
			}
		}
	}
	walk(refs.TableRefs)
}

// deleted is the table a multi-table DELETE names tn in its list of
// tables to delete from: an alias, or a table, of its FROM clause.
func deleted(tn *ast.TableName, refs *ast.TableRefsClause) *ast.TableName {
	if tn.Schema.O != "" {
		return tn
	}
	out := tn
	eachSource(refs, func(src *ast.TableName, alias ast.CIStr) {
		if alias.O == tn.Name.O || (alias.O == "" && src.Name.O == tn.Name.O) {
			out = src
		}
	})
	return out
}
