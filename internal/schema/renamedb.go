package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// RenameDatabases returns query with the databases it names renamed:
// rename returns a database's new name and true, or false to keep it.
// Only names that are provably databases change, in the text itself
// (comments, spacing and everything else stay as written):
//
//   - the qualifier of a table, db.t, wherever the statement names one
//     (CREATE, ALTER, RENAME, DROP TABLE, LIKE, REFERENCES, the tables
//     a view or a CREATE ... SELECT reads) and of a function, db.f();
//   - the first part of a column named db.t.c;
//   - the database of CREATE, ALTER and DROP DATABASE.
//
// db.x can also be column x of a table or alias named db, so each such
// pair of names is checked against the TiDB parser's reading of the
// statement: renamed when every occurrence is a table (or function) name,
// kept when every one is a column's. Anything else is an error wrapping
// ErrUnparsed (the statement does not parse, an occurrence is ambiguous,
// or a qualifier comes where no name does, as in GRANT ON db.*): the
// caller must not run such a statement with the old names.
func RenameDatabases(query string, rename func(db string) (string, bool)) (string, error) {
	text, at := cleanQueryMapped(query)
	toks := tokenize(text)
	ed := &textEdit{query: query, at: at}
	qualifiers := map[[2]string][]token{} // db.x occurrences, by (db, x)
	for i, t := range toks {
		to, ok := renamed(t, rename)
		if !ok || i+1 >= len(toks) || !toks[i+1].isPunct(".") || (i > 0 && toks[i-1].isPunct(".")) {
			continue
		}
		switch {
		case i+2 >= len(toks) || !toks[i+2].isName():
			return "", fmt.Errorf("%w: %s.%s: database %q qualifies something other than a table or column name", ErrUnparsed, t.val, abbreviateToken(toks, i+2), t.val)
		case i+4 < len(toks) && toks[i+3].isPunct(".") && toks[i+4].isName():
			ed.replace(t, to) // db.t.c: only a database comes first
		default:
			k := [2]string{t.val, toks[i+2].val}
			qualifiers[k] = append(qualifiers[k], t)
		}
	}
	dbStmt := databaseStatement(toks)
	dbName, renameDB := dbStmt.name(), false
	if dbName.kind != tokPunct {
		_, renameDB = renamed(dbName, rename)
	}
	if len(qualifiers) == 0 && !renameDB && len(ed.edits) == 0 {
		return query, nil
	}
	refs, err := countReferences(text, toks)
	if err != nil {
		return "", err
	}
	for k, occ := range qualifiers {
		tables, cols := refs.tables[k], refs.columns[k]
		switch {
		case tables == len(occ) && cols == 0:
			to, _ := rename(k[0])
			for _, t := range occ {
				ed.replace(t, to)
			}
		case cols == len(occ) && tables == 0:
		default:
			return "", fmt.Errorf("%w: %s.%s is named %d times, %d as a table, %d as a column: cannot tell which to rename",
				ErrUnparsed, QuoteIdent(k[0]), QuoteIdent(k[1]), len(occ), tables, cols)
		}
	}
	if renameDB {
		if !slices.Contains(refs.databases, dbName.val) {
			return "", fmt.Errorf("%w: the parser does not read %q as the statement's database", ErrUnparsed, dbName.val)
		}
		to, _ := rename(dbName.val)
		ed.replace(dbName, to)
	}
	return ed.apply(), nil
}

// renamed is rename for a name token.
func renamed(t token, rename func(string) (string, bool)) (string, bool) {
	if !t.isName() {
		return "", false
	}
	return rename(t.val)
}

func abbreviateToken(toks []token, i int) string {
	if i < len(toks) {
		return toks[i].val
	}
	return ""
}

// references counts how the parser reads the qualified names of a
// statement.
type references struct {
	tables    map[[2]string]int // db.t as a table or db.f() as a function
	columns   map[[2]string]int // t.c as a column (t a table or alias)
	databases []string          // the database of a CREATE, ALTER, DROP DATABASE
}

// countReferences parses text (rewritten for the parser if need be) and
// counts its qualified names.
func countReferences(text string, toks []token) (*references, error) {
	if body, ok := setStatementBody(text, toks); ok {
		text, toks = body, tokenize(body)
	}
	nodes, err := parseSQL(text)
	if err != nil {
		if nodes, err = parseSQL(rewriteForParser(text, toks).text); err != nil {
			return nil, fmt.Errorf("%w: renaming its databases needs the statement parsed: %v", ErrUnparsed, err)
		}
	}
	v := &references{tables: map[[2]string]int{}, columns: map[[2]string]int{}}
	for _, n := range nodes {
		n.Accept(v)
	}
	return v, nil
}

// Enter implements ast.Visitor.
func (v *references) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.TableName:
		if n.Schema.O != "" {
			v.tables[[2]string{n.Schema.O, n.Name.O}]++
		}
	case *ast.FuncCallExpr:
		if n.Schema.O != "" {
			v.tables[[2]string{n.Schema.O, n.FnName.O}]++
		}
	case *ast.ColumnName:
		if n.Table.O != "" && n.Schema.O == "" {
			v.columns[[2]string{n.Table.O, n.Name.O}]++
		}
	case *ast.CreateDatabaseStmt:
		v.databases = append(v.databases, n.Name.O)
	case *ast.DropDatabaseStmt:
		v.databases = append(v.databases, n.Name.O)
	case *ast.AlterDatabaseStmt:
		v.databases = append(v.databases, n.Name.O)
	}
	return n, false
}

// Leave implements ast.Visitor.
func (v *references) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// dbStatement is where the name of a CREATE, ALTER or DROP DATABASE (or
// SCHEMA) statement is among its tokens.
type dbStatement struct {
	toks []token
	at   int // -1: not such a statement, or without a name
}

func databaseStatement(toks []token) dbStatement {
	d := dbStatement{toks: toks, at: -1}
	if len(toks) < 3 || !(toks[0].is("CREATE") || toks[0].is("ALTER") || toks[0].is("DROP")) {
		return d
	}
	i := skipWords(toks, 1, "OR", "REPLACE")
	if i < len(toks) && (toks[i].is("DATABASE") || toks[i].is("SCHEMA")) {
		if j := skipIfExists(toks, i+1); j < len(toks) && toks[j].isName() && !(j+1 < len(toks) && toks[j+1].isPunct("=")) {
			d.at = j
		}
	}
	return d
}

// name is the database name token, or a punctuation token if none.
func (d dbStatement) name() token {
	if d.at < 0 {
		return token{kind: tokPunct}
	}
	return d.toks[d.at]
}

// textEdit collects replacements of tokens of a cleaned statement in the
// statement as written.
type textEdit struct {
	query string
	at    []int // cleanQueryMapped's offsets
	edits []edit
}

type edit struct {
	start, end int // in query
	with       string
}

// replace replaces token t with the identifier name, quoted.
func (e *textEdit) replace(t token, name string) {
	e.edits = append(e.edits, edit{start: e.at[t.start], end: e.at[t.end-1] + 1, with: QuoteIdent(name)})
}

// insert inserts s after token t.
func (e *textEdit) insert(t token, s string) {
	end := e.at[t.end-1] + 1
	e.edits = append(e.edits, edit{start: end, end: end, with: s})
}

// apply returns the query with the edits made.
func (e *textEdit) apply() string {
	slices.SortFunc(e.edits, func(a, b edit) int { return a.start - b.start })
	var b strings.Builder
	last := 0
	for _, ed := range e.edits {
		b.WriteString(e.query[last:ed.start])
		b.WriteString(ed.with)
		last = ed.end
	}
	b.WriteString(e.query[last:])
	return b.String()
}

// DropTableIfExists returns query, a DROP [TEMPORARY] TABLE statement,
// with IF EXISTS added if it lacks it, and whether it is such a statement.
// MariaDB's replica runs DROP TABLE so by default
// (slave_ddl_exec_mode=IDEMPOTENT).
func DropTableIfExists(query string) (string, bool) {
	text, at := cleanQueryMapped(query)
	toks := tokenize(text)
	if len(toks) < 3 || !toks[0].is("DROP") {
		return query, false
	}
	i := skipWords(toks, 1, "TEMPORARY")
	if i >= len(toks) || !(toks[i].is("TABLE") || toks[i].is("TABLES")) {
		return query, false
	}
	if i+1 < len(toks) && toks[i+1].is("IF") {
		return query, true
	}
	ed := &textEdit{query: query, at: at}
	ed.insert(toks[i], " IF EXISTS")
	return ed.apply(), true
}
